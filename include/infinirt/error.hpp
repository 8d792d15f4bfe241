// Errors of the C++ runtime layer: every failing C call becomes an infinirt::Error.
#ifndef INFINIRT_ERROR_HPP_
#define INFINIRT_ERROR_HPP_

#include <stdexcept>
#include <string>
#include <type_traits>

#include "infinirt.h"
#include "infinirt/export.hpp"

namespace infinirt {

// A failed call: the C API's error code, its name and a message that names the call and its
// arguments, e.g. "infinirtMalloc(size=1048576) on nvidia:0: infinirtErrorMemoryAllocation (out
// of memory)".
class INFINIRT_CXX_API Error : public std::runtime_error {
 public:
  Error(infinirtError_t code, const std::string& call);
  infinirtError_t code() const noexcept { return code_; }
  // The code's name, "infinirtErrorMemoryAllocation".
  const char* name() const noexcept { return infinirtGetErrorName(code_); }

 private:
  infinirtError_t code_;
};

namespace detail {
// Clears the thread's last error (the C API's infinirtGetLastError, which the failed call set)
// and throws; out of line, so that check() stays a compare and a branch.
[[noreturn]] INFINIRT_CXX_API void ThrowError(infinirtError_t code, const std::string& call);
}  // namespace detail

// The one check: throws infinirt::Error unless `code` is infinirtSuccess. `call` says what was
// called: a string, or a function returning one (called only on failure, so that describing
// the arguments costs nothing on success).
template <class Call>
inline void check(infinirtError_t code, Call&& call) {
  if (__builtin_expect(code == infinirtSuccess, 1)) return;
  if constexpr (std::is_invocable_v<Call>) {
    detail::ThrowError(code, std::string(call()));
  } else {
    detail::ThrowError(code, std::string(call));
  }
}

}  // namespace infinirt

// Checks a C call, naming it as written: INFINIRT_CHECK(infinirtMalloc(&data, size)).
#define INFINIRT_CHECK(call) ::infinirt::check((call), #call)

#endif  // INFINIRT_ERROR_HPP_
