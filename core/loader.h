// Plugin discovery and loading (DESIGN.md section 3).
//
// Search order: INFINIRT_PLUGIN_PATH (colon-separated directories or files) when set, replacing
// everything else; otherwise the directory infinirt/ beside libinfinirt.so, the installed plugin
// directory, then the config file's plugin_search_paths. Relative and empty entries are ignored
// (the current directory is never searched). In a directory, files named libinfinirt_<name>.so
// are taken in name order. Files are de-duplicated by real path, backends by name. A plugin that
// fails in any way is reported in the listing and skipped.
#ifndef INFINIRT_CORE_LOADER_H_
#define INFINIRT_CORE_LOADER_H_

#include <memory>
#include <string>
#include <vector>

#include "backend.h"
#include "config.h"
#include "infinirt.h"

namespace infinirt::core {

struct LoadResult {
  std::vector<std::unique_ptr<Backend>> backends;  // loaded, in load order
  std::vector<infinirtBackendProp> listing;        // every plugin considered
  std::vector<int> listing_of_backend;             // listing index of each loaded backend
  std::vector<std::string> searched;               // what was searched, for messages
};

// The directory holding libinfinirt.so (found with dladdr), or "".
std::string LibraryDirectory();

LoadResult LoadPlugins(const Config& config, const std::string& library_dir);

// The backend names InfiniRT knows (one per device type), for "not found" entries.
const std::vector<std::string>& KnownBackendNames();

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_LOADER_H_
