// What the C++ layer says without throwing: failures in destructors, and warnings. The core's
// logger is internal to libinfinirt.so, so these go to standard error, under the same
// INFINIRT_LOG_LEVEL (a warning is shown at "warn" and below, as the core's default is).
#ifndef INFINIRT_RUNTIME_RUNTIME_LOG_H_
#define INFINIRT_RUNTIME_RUNTIME_LOG_H_

#include <string>

#include "infinirt.h"

namespace infinirt {

// A debug line, shown when INFINIRT_LOG_LEVEL is "debug" or "trace".
void Debug(const std::string& message);
// A warning, unless INFINIRT_LOG_LEVEL silences warnings ("error" or "off").
void Warn(const char* message);
// A failed release in a destructor, which must not throw: reported as an error, unless
// INFINIRT_LOG_LEVEL is "off". The thread's last error is cleared.
void ReportIfFailed(infinirtError_t code, const char* what) noexcept;

}  // namespace infinirt

#endif  // INFINIRT_RUNTIME_RUNTIME_LOG_H_
