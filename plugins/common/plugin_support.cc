#include "plugin_support.h"

#include <algorithm>
#include <cstring>
#include <unordered_map>

namespace infinirt::plugin {

infinirtError_t ErrorFromSuffix(const std::string& suffix) {
  static const std::unordered_map<std::string, infinirtError_t> errors = {
#define INFINIRT_ERROR_BY_NAME_(name, value, text) {#name, static_cast<infinirtError_t>(value)},
      INFINIRT_ERROR_LIST(INFINIRT_ERROR_BY_NAME_)
#undef INFINIRT_ERROR_BY_NAME_
  };
  const auto found = errors.find(suffix);
  return found == errors.end() ? infinirtErrorUnknown : found->second;
}

infinirtError_t ErrorFromNumber(int value) {
  switch (value) {
#define INFINIRT_ERROR_CASE_(name, number, text) \
  case number:                                   \
    return static_cast<infinirtError_t>(number);
    INFINIRT_ERROR_LIST(INFINIRT_ERROR_CASE_)
#undef INFINIRT_ERROR_CASE_
    default:
      return infinirtErrorUnknown;
  }
}

void CopyText(char* buffer, size_t size, const std::string& text) {
  if (size == 0) return;
  const size_t length = std::min(size - 1, text.size());
  std::memcpy(buffer, text.data(), length);
  buffer[length] = '\0';
}

}  // namespace infinirt::plugin
