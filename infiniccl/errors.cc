// Statuses as text, and the calling thread's last error (NCCL's ncclGetLastError).
#include <strings.h>

#include <cstdio>
#include <cstdlib>
#include <string>

#include "infiniccl_internal.h"

namespace infiniccl {

namespace {

thread_local std::string t_last_error;

bool DebugLogging() {
  static const bool debug = [] {
    const char* level = secure_getenv("INFINIRT_LOG_LEVEL");
    return level != nullptr && (strcasecmp(level, "debug") == 0 || strcasecmp(level, "trace") == 0);
  }();
  return debug;
}

}  // namespace

infiniStatus_t Fail(infiniStatus_t status, const std::string& why) {
  t_last_error = why;
  if (DebugLogging()) std::fprintf(stderr, "[infiniccl] [debug] %s\n", why.c_str());
  return status;
}

long TimeoutMs() {
  constexpr long kDefault = 300000;
  const char* text = secure_getenv("INFINICCL_TIMEOUT_MS");
  if (text == nullptr || *text == '\0') return kDefault;
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (*end != '\0' || value <= 0) {
    std::fprintf(stderr,
                 "[infiniccl] [error] INFINICCL_TIMEOUT_MS=%s is not a positive number of "
                 "milliseconds; using %ld\n",
                 text, kDefault);
    return kDefault;
  }
  return value;
}

}  // namespace infiniccl

extern "C" {

const char* infinicclGetErrorString(infiniStatus_t status) {
  switch (status) {
#define INFINICCL_STATUS_TEXT_(name, value, description) \
  case INFINI_STATUS_##name:                             \
    return description;
    INFINIRT_STATUS_LIST(INFINICCL_STATUS_TEXT_)
#undef INFINICCL_STATUS_TEXT_
    default:
      return "unknown status";
  }
}

const char* infinicclGetLastError(infinicclComm_t) { return infiniccl::t_last_error.c_str(); }

}  // extern "C"
