// Environment variables, read the safe way: secure_getenv returns nothing in setuid/setgid
// processes, so a variable that chooses code to load cannot be abused there.
#ifndef INFINIRT_CORE_ENV_H_
#define INFINIRT_CORE_ENV_H_

#include <optional>
#include <string>
#include <vector>

namespace infinirt::core {

std::optional<std::string> GetEnv(const char* name);

// Splits on a separator, dropping empty items and surrounding blanks.
std::vector<std::string> SplitList(const std::string& text, char separator);

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_ENV_H_
