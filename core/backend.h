// A loaded plugin: its library handle, its complete entry table, and what it reported.
#ifndef INFINIRT_CORE_BACKEND_H_
#define INFINIRT_CORE_BACKEND_H_

#include <string>
#include <vector>

#include "infinirt_plugin.h"

namespace infinirt::core {

struct Backend {
  std::string name;
  infiniDevice_t device_type = INFINI_DEVICE_TYPE_COUNT;
  std::string path;             // real path of the plugin file
  void* library = nullptr;      // dlopen handle
  infinirtPluginTable table{};  // complete: missing entries answer NotSupported
  std::vector<std::string> missing_entries;
  std::string config_json = "{}";  // the plugin's config section
  infinirtPluginHost host{};       // handed to Initialize; points into this object
  infinirtPluginInfo info{};       // what GetInfo reported
  int device_count = 0;            // devices the plugin has (before visibility filter)
  bool initialized = false;
  // At process exit the library stays mapped: code that runs later (thread-local destructors,
  // a straggling thread) may still belong to it, and unmapping gains nothing then.
  bool keep_loaded = false;

  Backend() = default;
  Backend(const Backend&) = delete;
  Backend& operator=(const Backend&) = delete;
  ~Backend();  // finalizes the plugin if initialized, then dlcloses it (unless keep_loaded)
};

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_BACKEND_H_
