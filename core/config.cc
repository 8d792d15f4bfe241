#include "config.h"

#include <sys/stat.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <sstream>

#include "env.h"
#include "log.h"

namespace infinirt::core {

namespace {

using nlohmann::json;

// Line and column (1-based) of a byte offset, for parse error messages.
std::pair<size_t, size_t> LineAndColumn(const std::string& text, size_t offset) {
  size_t line = 1, column = 1;
  for (size_t i = 0; i < offset && i < text.size(); ++i) {
    if (text[i] == '\n') {
      ++line;
      column = 1;
    } else {
      ++column;
    }
  }
  return {line, column};
}

// Reads a whole file; false with the reason (strerror's text, or "is a directory": an ifstream
// opens a directory and then reads nothing, which would be reported as invalid JSON).
bool ReadFile(const std::string& path, std::string* text, std::string* why_not) {
  struct stat info {};
  if (stat(path.c_str(), &info) != 0) {
    *why_not = std::strerror(errno);
    return false;
  }
  if (S_ISDIR(info.st_mode)) {
    *why_not = "is a directory, not a file";
    return false;
  }
  std::ifstream file(path);
  if (!file) {
    *why_not = std::strerror(errno);
    return false;
  }
  std::stringstream contents;
  contents << file.rdbuf();
  *text = contents.str();
  return true;
}

std::optional<std::vector<std::string>> StringList(const json& value) {
  if (!value.is_array()) return std::nullopt;
  std::vector<std::string> items;
  for (const json& item : value) {
    if (!item.is_string()) return std::nullopt;
    items.push_back(item.get<std::string>());
  }
  return items;
}

}  // namespace

Config ParseConfig(const std::string& text, const std::string& source_name,
                   ConfigProblems* problems) {
  Config config;
  config.source = source_name;
  json root;
  try {
    root = json::parse(text, nullptr, /*allow_exceptions=*/true, /*ignore_comments=*/true);
  } catch (const json::parse_error& error) {
    const auto [line, column] = LineAndColumn(text, error.byte == 0 ? 0 : error.byte - 1);
    // nlohmann's message starts with "[json.exception.parse_error.101] parse error at line..";
    // keep only the part after the last ": " which says what was wrong.
    std::string what = error.what();
    const size_t colon = what.rfind(": ");
    if (colon != std::string::npos) what = what.substr(colon + 2);
    problems->errors.push_back(source_name + ":" + std::to_string(line) + ":" +
                               std::to_string(column) + ": not valid JSON (" + what +
                               "); using the defaults");
    config.source.clear();
    return config;
  } catch (const json::exception& error) {
    // Not a syntax error but a value JSON allows and nlohmann cannot hold, such as a number
    // beyond a double's range (out_of_range.406); it carries no position.
    std::string what = error.what();
    const size_t bracket = what.find("] ");
    if (bracket != std::string::npos) what = what.substr(bracket + 2);
    problems->errors.push_back(source_name + ": not usable JSON (" + what +
                               "); using the defaults");
    config.source.clear();
    return config;
  }
  if (!root.is_object()) {
    problems->errors.push_back(source_name +
                               ": the top level must be a JSON object; using the defaults");
    config.source.clear();
    return config;
  }
  auto bad_key = [&](const std::string& key, const char* expected) {
    problems->errors.push_back(source_name + ": key '" + key + "' must be " + expected +
                               "; using its default");
  };
  for (const auto& [key, value] : root.items()) {
    if (key == "log_level") {
      if (value.is_string()) {
        config.log_level = value.get<std::string>();
      } else {
        bad_key(key, "a string (off/error/warn/info/debug/trace)");
      }
    } else if (key == "backends") {
      if (auto list = StringList(value)) {
        config.backends = *list;
      } else {
        bad_key(key, "an array of backend names");
      }
    } else if (key == "plugin_search_paths") {
      if (auto list = StringList(value)) {
        config.plugin_search_paths = *list;
      } else {
        bad_key(key, "an array of directory paths");
      }
    } else if (key == "visible_devices") {
      if (value.is_string()) {
        config.visible_devices = value.get<std::string>();
      } else {
        bad_key(key, "a string like \"0,2\"");
      }
    } else if (key == "plugins") {
      if (value.is_object()) {
        for (const auto& [name, section] : value.items()) {
          if (section.is_object()) {
            config.plugins[name] = section;
          } else {
            bad_key("plugins." + name, "an object");
          }
        }
      } else {
        bad_key(key, "an object with one section per plugin");
      }
    } else if (key.rfind("_", 0) != 0) {  // keys starting with "_" are comments
      problems->warnings.push_back(source_name + ": unknown key '" + key + "' ignored");
    }
  }
  return config;
}

Config LoadConfig(const std::string& library_dir) {
  std::vector<std::string> candidates;
  const auto from_env = GetEnv(EnvVar::INFINIRT_CONFIG);
  if (from_env && !from_env->empty()) {
    candidates.push_back(*from_env);
  } else if (!library_dir.empty()) {
    // As for plugins (loader_discovery.cc): the file of this installation, not the one of the
    // installation the build was configured for, which a relocated install is not.
    candidates.push_back(library_dir + "/../share/infinirt/infinirt.json");
  } else {
    candidates.push_back(INFINIRT_INSTALL_CONFIG_FILE);
  }
  for (const std::string& path : candidates) {
    std::string text, why_not;
    if (!ReadFile(path, &text, &why_not)) {
      if (from_env) {
        Log().error("INFINIRT_CONFIG={}: {}; using the defaults", path, why_not);
      } else {
        Log().debug("config: no file at {} ({})", path, why_not);
      }
      continue;
    }
    ConfigProblems problems;
    Config config = ParseConfig(text, path, &problems);
    for (const std::string& problem : problems.errors) Log().error("config: {}", problem);
    for (const std::string& problem : problems.warnings) Log().warn("config: {}", problem);
    Log().debug("config: read {}", path);
    return config;
  }
  return Config{};
}

}  // namespace infinirt::core
