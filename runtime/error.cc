#include "infinirt/error.hpp"

namespace infinirt {

namespace {

std::string Describe(infinirtError_t code, const std::string& call) {
  return call + ": " + infinirtGetErrorName(code) + " (" + infinirtGetErrorString(code) + ")";
}

}  // namespace

Error::Error(infinirtError_t code, const std::string& call)
    : std::runtime_error(Describe(code, call)), code_(code) {}

namespace detail {

void ThrowError(infinirtError_t code, const std::string& call) {
  // The failed call also set the thread's last error; the exception reports it instead, so a
  // later infinirtGetLastError does not report it a second time.
  infinirtGetLastError();
  throw Error(code, call);
}

}  // namespace detail
}  // namespace infinirt
