// Logging for the core: one spdlog logger named "infinirt" writing to stderr. Plugins log through
// PluginLog, which the core hands them in the host table.
#ifndef INFINIRT_CORE_LOG_H_
#define INFINIRT_CORE_LOG_H_

#include <spdlog/spdlog.h>

#include <string>

#include "infinirt.h"
#include "infinirt_plugin.h"

namespace infinirt::core {

// The core's logger; created on first use with the level from INFINIRT_LOG_LEVEL (default warn).
spdlog::logger& Log();

// Applies a level name (off/error/warn/info/debug/trace, in any case). Returns false for an
// unknown name.
bool SetLogLevel(const std::string& level_name);

// Back to the default level (warn), then INFINIRT_LOG_LEVEL if set. Called at every
// initialisation, so a level set by an earlier initialisation does not outlive it.
void ResetLogLevel();

// The callback handed to plugins.
void PluginLog(infinirtLogLevel_t level, const char* plugin, const char* message);

// Whether a failure has been logged on this thread since the last failed API call ended. Fail
// and FailVisibly set it; Guard (api_support.h) clears it after each failed call and, when a
// failed call logged nothing, logs a line for it, so that no rejection goes unexplained. (Cleared
// only after failures, so that successful calls pay nothing for it.)
inline thread_local bool tls_failure_logged = false;

// Logs why a call failed, at debug level, and returns the error: the single path for
// rejecting bad input, so every rejection leaves a log line.
template <class... Args>
infinirtError_t Fail(infinirtError_t error, spdlog::format_string_t<Args...> format,
                     Args&&... args) {
  tls_failure_logged = true;
  Log().debug(format, std::forward<Args>(args)...);
  return error;
}

// Fail at error level, for a failure that is not the caller's doing (a backend misbehaved), so
// that it shows without debug logging.
template <class... Args>
infinirtError_t FailVisibly(infinirtError_t error, spdlog::format_string_t<Args...> format,
                            Args&&... args) {
  tls_failure_logged = true;
  Log().error(format, std::forward<Args>(args)...);
  return error;
}

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_LOG_H_
