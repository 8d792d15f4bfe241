// Environment variables, read the safe way: secure_getenv returns nothing in a process that runs
// with AT_SECURE (setuid or setgid, or raised file capabilities), so a variable that chooses code
// to load (INFINIRT_PLUGIN_PATH, INFINIRT_CONFIG, INFINIRT_BACKENDS,
// INFINIRT_ALLOW_INSECURE_PLUGINS) cannot be abused there. Every InfiniRT variable is read this
// way, INFINIRT_LOG_LEVEL included: debug and trace logs print paths and addresses that would
// help an attack on a privileged program, and the default level (warn) still shows the warnings
// below.
#ifndef INFINIRT_CORE_ENV_H_
#define INFINIRT_CORE_ENV_H_

#include <optional>
#include <string>
#include <vector>

#include "env_variables.h"

namespace infinirt::core {

// The variables the core reads (env_variables.h): GetEnv takes nothing else, so that the list
// infinirt-info --help prints is complete.
enum class EnvVar {
#define INFINIRT_ENV_ENUMERATOR_(name, syntax, meaning) name,
  INFINIRT_CORE_ENVIRONMENT(INFINIRT_ENV_ENUMERATOR_)
#undef INFINIRT_ENV_ENUMERATOR_
};

// "INFINIRT_PLUGIN_PATH" for EnvVar::INFINIRT_PLUGIN_PATH.
const char* NameOf(EnvVar variable);

// The variable's value, or nullopt when it is unset or ignored. A variable that is set but
// ignored because of AT_SECURE is named in one warning, once per process.
std::optional<std::string> GetEnv(EnvVar variable);

// GetEnv without the warning, for the logger's own level: it is read while the logger is being
// created, so it cannot log. ResetLogLevel reads it again through GetEnv.
std::optional<std::string> GetEnvWithoutWarning(EnvVar variable);

// Splits on a separator, dropping empty items and surrounding blanks.
std::vector<std::string> SplitList(const std::string& text, char separator);

// ASCII lower case: the keywords of InfiniRT's variables and config keys (log levels, backend
// names) are compared in lower case, so that DEBUG, Debug and debug are one level.
std::string ToLower(std::string text);

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_ENV_H_
