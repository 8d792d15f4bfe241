// The public C API for errors: the thread's last error, and the names and descriptions of
// error codes.

#include "api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

constexpr char kUnrecognizedError[] = "unrecognized error code";

const char* ErrorName(infinirtError_t error) {
  switch (error) {
#define INFINIRT_NAME_CASE_(name, value, description) \
  case infinirt##name:                                \
    return "infinirt" #name;
    INFINIRT_ERROR_LIST(INFINIRT_NAME_CASE_)
#undef INFINIRT_NAME_CASE_
  }
  return nullptr;
}

const char* ErrorDescription(infinirtError_t error) {
  switch (error) {
#define INFINIRT_STRING_CASE_(name, value, description) \
  case infinirt##name:                                  \
    return description;
    INFINIRT_ERROR_LIST(INFINIRT_STRING_CASE_)
#undef INFINIRT_STRING_CASE_
  }
  return nullptr;
}

}  // namespace

extern "C" {

// ------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtGetLastError(void) {
  const infinirtError_t error = LastError();
  LastError() = infinirtSuccess;
  return error;
}

infinirtError_t infinirtPeekAtLastError(void) { return LastError(); }

const char* infinirtGetErrorName(infinirtError_t error) {
  const char* name = ErrorName(error);
  return name ? name : kUnrecognizedError;
}

const char* infinirtGetErrorString(infinirtError_t error) {
  const char* description = ErrorDescription(error);
  return description ? description : kUnrecognizedError;
}

}  // extern "C"
