// Plugin discovery and loading (docs/architecture.md#discovery-and-trust).
//
// Search order: INFINIRT_PLUGIN_PATH (colon-separated directories or files) when set, replacing
// everything else; otherwise the directory infinirt/ beside libinfinirt.so, then the config
// file's plugin_search_paths. The installed plugin directory (as configured at build time) is
// searched only when the library cannot find its own directory: a relocated installation must
// not load another installation's plugins. Relative and empty entries are ignored
// (the current directory is never searched). In a directory, files named libinfinirt_<name>.so
// are taken in name order. Files are de-duplicated by real path, backends by name. A plugin that
// fails in any way is reported in the listing and skipped.
//
// Before dlopen, every plugin file is checked (plugin_trust.h, elf_check.h): a file or directory
// that another user could change is refused (infinirtBackendInsecure; a searched directory is
// skipped as a whole) unless INFINIRT_ALLOW_INSECURE_PLUGINS=1, and a file whose ELF headers do
// not fit this process, or that is truncated, is rejected (infinirtBackendDlopenFailed). The
// checks examine descriptors of the real path and of its directory; dlopen then opens the real
// path again. It does not load through /proc/self/fd/N, which would close the gap between the
// two, because the dynamic loader would take /proc/self/fd for the plugin's $ORIGIN (breaking
// plugins that find their own libraries through RUNPATH $ORIGIN) and debuggers would see that
// name. Replacing the file in the gap needs write access to its directory, which the checks
// refuse, or to a directory above it.
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

// infinirtOpenExtensionLibrary: the first file named file_name in the plugins' search plan, opened
// after the plugins' checks. prop holds the outcome (as a listing entry).
infinirtError_t OpenExtensionLibrary(const Config& config, const std::string& library_dir,
                                     const std::string& file_name, void** handle,
                                     infinirtBackendProp* prop);

// The plugin names of the device types (INFINIRT_DEVICE_TYPES), indexed by device type: the
// backends the listing reports even when no file of theirs is found.
const std::vector<std::string>& KnownBackendNames();

// Whether this build of InfiniRT makes the plugin of that device type's name. A device type
// without one (Kunlun, for now) is listed as infinirtBackendNotBuilt, not as not found.
bool PluginIsBuilt(const std::string& name);

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_LOADER_H_
