#include "alloc_config.h"

#include <cerrno>
#include <cstdlib>
#include <optional>

#include "infinirt/error.hpp"

namespace infinirt::detail {

namespace {

constexpr char kVariable[] = "INFINIRT_ALLOC_CONF";
constexpr size_t kMiB = size_t{1} << 20;

[[noreturn]] void Refuse(const std::string& problem) {
  check(infinirtErrorInvalidValue, std::string(kVariable) + ": " + problem);
  __builtin_unreachable();
}

std::string Trim(const std::string& text) {
  const size_t first = text.find_first_not_of(" \t");
  if (first == std::string::npos) return "";
  return text.substr(first, text.find_last_not_of(" \t") - first + 1);
}

size_t ParseMiB(const std::string& key, const std::string& value) {
  errno = 0;
  char* end = nullptr;
  const unsigned long long mib = std::strtoull(value.c_str(), &end, 10);
  if (value.empty() || value[0] == '-' || *end != '\0' || errno == ERANGE || mib == 0 ||
      mib > SIZE_MAX / kMiB) {
    Refuse(key + " must be a whole number of MiB above 0, not '" + value + "'");
  }
  return static_cast<size_t>(mib) * kMiB;
}

double ParseFraction(const std::string& key, const std::string& value) {
  errno = 0;
  char* end = nullptr;
  const double fraction = std::strtod(value.c_str(), &end);
  if (value.empty() || *end != '\0' || errno == ERANGE || !(fraction > 0 && fraction < 1)) {
    Refuse(key + " must be a fraction between 0 and 1 (exclusive), not '" + value + "'");
  }
  return fraction;
}

bool ParseSwitch(const std::string& key, const std::string& value) {
  if (value == "off" || value == "false" || value == "0") return false;
  if (value == "on" || value == "true" || value == "1") return true;
  Refuse(key + " must be on or off, not '" + value + "'");
}

void Apply(AllocConfig* config, const std::string& key, const std::string& value) {
  if (key == "max_split_size_mb") {
    config->max_split_size = ParseMiB(key, value);
  } else if (key == "garbage_collection_threshold") {
    config->garbage_collection_threshold = ParseFraction(key, value);
  } else if (key == "expandable") {
    if (ParseSwitch(key, value)) {
      check(infinirtErrorNotSupported, std::string(kVariable) +
                                           ": expandable:on (segments that grow in place) is not "
                                           "supported; use off");
    }
    config->expandable = false;
  } else {
    Refuse("unknown key '" + key +
           "' (known: max_split_size_mb, garbage_collection_threshold, expandable)");
  }
}

}  // namespace

AllocConfig AllocConfig::Parse(const std::string& text) {
  AllocConfig config;
  size_t start = 0;
  while (start <= text.size()) {
    size_t comma = text.find(',', start);
    if (comma == std::string::npos) comma = text.size();
    const std::string item = Trim(text.substr(start, comma - start));
    start = comma + 1;
    if (item.empty()) continue;
    const size_t separator = item.find_first_of(":=");
    if (separator == std::string::npos) Refuse("'" + item + "' is not key:value");
    Apply(&config, Trim(item.substr(0, separator)), Trim(item.substr(separator + 1)));
  }
  return config;
}

const AllocConfig& AllocConfig::FromEnvironment() {
  // Parsed once; a malformed value is parsed (and refused) again at every use.
  static const std::optional<AllocConfig> parsed = []() -> std::optional<AllocConfig> {
    try {
      const char* text = secure_getenv(kVariable);  // as the core reads its variables
      return Parse(text != nullptr ? text : "");
    } catch (const Error&) {
      return std::nullopt;
    }
  }();
  if (parsed) return *parsed;
  const char* text = secure_getenv(kVariable);
  Parse(text != nullptr ? text : "");  // throws the problem
  Refuse("the setting changed while the program ran");
}

}  // namespace infinirt::detail
