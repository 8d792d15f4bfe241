// The configuration file (JSON). Found at INFINIRT_CONFIG, else share/infinirt/infinirt.json
// beside the library's lib/ directory (the installed copy, as configured at build time, only
// when the library cannot find its own directory). A file that cannot be read or
// parsed is reported with its name, line and column, and the defaults apply; a key of the wrong
// type is reported by name and keeps its default; an unknown key is a warning.
#ifndef INFINIRT_CORE_CONFIG_H_
#define INFINIRT_CORE_CONFIG_H_

#include <nlohmann/json.hpp>
#include <optional>
#include <string>
#include <vector>

namespace infinirt::core {

struct Config {
  std::string source;                            // the file read, or "" for built-in defaults
  std::optional<std::string> log_level;          // overridden by INFINIRT_LOG_LEVEL
  std::vector<std::string> backends;             // overridden by INFINIRT_BACKENDS; empty = all
  std::vector<std::string> plugin_search_paths;  // searched after the default directories
  std::optional<std::string> visible_devices;    // overridden by INFINIRT_VISIBLE_DEVICES
  nlohmann::json plugins = nlohmann::json::object();  // per-plugin sections, by plugin name
};

// What is wrong with a config file, as complete messages naming it.
struct ConfigProblems {
  std::vector<std::string> errors;    // unusable text or values: the defaults apply instead
  std::vector<std::string> warnings;  // ignored and harmless: an unknown key (a typo, or a key
                                      // of a newer InfiniRT)
};

// Parses config text. Problems are appended to *problems as complete messages naming
// source_name; the returned config holds every value that was valid.
Config ParseConfig(const std::string& text, const std::string& source_name,
                   ConfigProblems* problems);

// Finds, reads and parses the configuration; logs problems; never fails.
Config LoadConfig(const std::string& library_dir);

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_CONFIG_H_
