#include "env.h"

#include <stdlib.h>

#include <mutex>
#include <set>

#include "log.h"

namespace infinirt::core {

namespace {

void WarnOnceIgnored(const char* name) {
  static std::mutex mutex;
  // Never destroyed: a thread may still read the environment while the process exits.
  static std::set<std::string>& warned = *new std::set<std::string>;
  {
    std::lock_guard<std::mutex> lock(mutex);
    if (!warned.insert(name).second) return;
  }
  Log().warn(
      "{} is set but ignored: the process runs setuid/setgid or with raised capabilities "
      "(AT_SECURE), where InfiniRT takes no setting from the environment",
      name);
}

}  // namespace

const char* NameOf(EnvVar variable) {
  switch (variable) {
#define INFINIRT_ENV_NAME_CASE_(name, syntax, meaning) \
  case EnvVar::name:                                   \
    return #name;
    INFINIRT_CORE_ENVIRONMENT(INFINIRT_ENV_NAME_CASE_)
#undef INFINIRT_ENV_NAME_CASE_
  }
  return "";
}

std::optional<std::string> GetEnvWithoutWarning(EnvVar variable) {
  const char* value = secure_getenv(NameOf(variable));
  if (value == nullptr) return std::nullopt;
  return std::string(value);
}

std::optional<std::string> GetEnv(EnvVar variable) {
  std::optional<std::string> value = GetEnvWithoutWarning(variable);
  // secure_getenv hides a variable that getenv sees only when the kernel started the process
  // with AT_SECURE set.
  if (!value && getenv(NameOf(variable)) != nullptr) WarnOnceIgnored(NameOf(variable));
  return value;
}

std::vector<std::string> SplitList(const std::string& text, char separator) {
  std::vector<std::string> items;
  size_t start = 0;
  while (start <= text.size()) {
    size_t end = text.find(separator, start);
    if (end == std::string::npos) end = text.size();
    std::string item = text.substr(start, end - start);
    const size_t first = item.find_first_not_of(" \t");
    const size_t last = item.find_last_not_of(" \t");
    if (first != std::string::npos) items.push_back(item.substr(first, last - first + 1));
    start = end + 1;
  }
  return items;
}

std::string ToLower(std::string text) {
  for (char& c : text) {
    if (c >= 'A' && c <= 'Z') c = static_cast<char>(c - 'A' + 'a');
  }
  return text;
}

}  // namespace infinirt::core
