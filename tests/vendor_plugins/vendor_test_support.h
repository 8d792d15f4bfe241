// Shared by the vendor plugin tests: the vendor backend loaded in this process and its table.
#ifndef INFINIRT_TESTS_VENDOR_PLUGINS_VENDOR_TEST_SUPPORT_H_
#define INFINIRT_TESTS_VENDOR_PLUGINS_VENDOR_TEST_SUPPORT_H_

#include <dlfcn.h>

#include <string>
#include <vector>

#include "infinirt.h"
#include "infinirt_plugin.h"

namespace infinirt::vendor_test {

struct VendorBackend {
  std::string name;
  std::string plugin_path;
  std::string runtime_library;
  infinirtBackendProp listing{};
  // The plugin's own table: the same instance the core uses (dlopen RTLD_NOLOAD).
  const infinirtPluginTable* table = nullptr;
};

// The listing of the backend called name (any status); listing.name is "" when there is none.
inline infinirtBackendProp BackendListing(const std::string& name) {
  int count = 0;
  infinirtGetBackendCount(&count);
  for (int i = 0; i < count; ++i) {
    infinirtBackendProp prop{};
    if (infinirtGetBackendProperties(&prop, i) == infinirtSuccess && name == prop.name) {
      return prop;
    }
  }
  return infinirtBackendProp{};
}

// The first loaded backend other than the CPU's, with its plugin table.
inline VendorBackend LoadedVendorBackend() {
  VendorBackend backend;
  infinirtInit();
  int count = 0;
  infinirtGetBackendCount(&count);
  for (int i = 0; i < count; ++i) {
    infinirtBackendProp prop{};
    if (infinirtGetBackendProperties(&prop, i) != infinirtSuccess) continue;
    if (prop.status != infinirtBackendLoaded || std::string(prop.name) == "cpu") continue;
    backend.name = prop.name;
    backend.plugin_path = prop.path;
    backend.runtime_library = prop.runtimeLibrary;
    backend.listing = prop;
    // Keeps a reference to the plugin for the test's lifetime (it is loaded already).
    void* plugin = dlopen(prop.path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
    if (plugin == nullptr) return VendorBackend{};
    auto get_table =
        reinterpret_cast<infinirtPluginGetTableFn>(dlsym(plugin, INFINIRT_PLUGIN_ENTRY_SYMBOL));
    backend.table = get_table ? get_table() : nullptr;
    if (backend.table == nullptr) return VendorBackend{};
    return backend;
  }
  return backend;
}

inline const std::vector<std::string>& PluginEntryNames() {
  static const std::vector<std::string> names = {
#define VENDOR_TEST_ENTRY_NAME_(name, params) #name,
      INFINIRT_PLUGIN_ENTRIES(VENDOR_TEST_ENTRY_NAME_)
#undef VENDOR_TEST_ENTRY_NAME_
  };
  return names;
}

}  // namespace infinirt::vendor_test

#endif  // INFINIRT_TESTS_VENDOR_PLUGINS_VENDOR_TEST_SUPPORT_H_
