// Everything the core derives from the one list of plugin entry points
// (INFINIRT_PLUGIN_ENTRIES in infinirt_plugin.h): the NotSupported defaults, the entry names,
// and the copy of a plugin's table that reads only what its struct_size covers.
#ifndef INFINIRT_CORE_PLUGIN_TABLE_H_
#define INFINIRT_CORE_PLUGIN_TABLE_H_

#include <cstddef>
#include <cstring>
#include <string>
#include <type_traits>
#include <vector>

#include "infinirt_plugin.h"

namespace infinirt::core {

// The default for an entry a plugin does not provide: answers NotSupported, whatever the
// parameters. One instantiation per entry signature.
template <class Function>
struct UnsupportedEntry;
template <class... Args>
struct UnsupportedEntry<infinirtError_t(Args...)> {
  static infinirtError_t Call(Args...) { return infinirtErrorNotSupported; }
};

#define INFINIRT_ENTRY_TYPE_(name) std::remove_pointer_t<decltype(infinirtPluginTable::name)>

// A table whose every entry answers NotSupported.
inline infinirtPluginTable UnsupportedTable() {
  infinirtPluginTable table{};
  table.struct_size = sizeof(infinirtPluginTable);
  table.abi_major = INFINIRT_PLUGIN_ABI_MAJOR;
  table.abi_minor = INFINIRT_PLUGIN_ABI_MINOR;
#define INFINIRT_SET_DEFAULT_(name, params) \
  table.name = &UnsupportedEntry<INFINIRT_ENTRY_TYPE_(name)>::Call;
  INFINIRT_PLUGIN_ENTRIES(INFINIRT_SET_DEFAULT_)
#undef INFINIRT_SET_DEFAULT_
  return table;
}

// Whether a completed table's entry is the plugin's own rather than the core's NotSupported
// default.
template <class Function>
bool Provides(Function* entry) {
  return entry != &UnsupportedEntry<Function>::Call;
}

inline const std::vector<std::string>& PluginEntryNames() {
  static const std::vector<std::string> names = {
#define INFINIRT_ENTRY_NAME_(name, params) #name,
      INFINIRT_PLUGIN_ENTRIES(INFINIRT_ENTRY_NAME_)
#undef INFINIRT_ENTRY_NAME_
  };
  return names;
}

// Copies the entries of a plugin's table that its struct_size covers and that are not NULL;
// every other entry keeps its NotSupported default. Names of the missing entries are appended
// to *missing. The header fields are copied as they are.
inline infinirtPluginTable CompleteTable(const infinirtPluginTable& plugin,
                                         std::vector<std::string>* missing) {
  infinirtPluginTable table = UnsupportedTable();
  table.abi_major = plugin.abi_major;
  table.abi_minor = plugin.abi_minor;
  table.name = plugin.name;
  table.device_type = plugin.device_type;
  const size_t covered = plugin.struct_size;
#define INFINIRT_COPY_ENTRY_(name, params)                                    \
  if (offsetof(infinirtPluginTable, name) + sizeof(plugin.name) <= covered && \
      plugin.name != nullptr) {                                               \
    table.name = plugin.name;                                                 \
  } else {                                                                    \
    missing->push_back(#name);                                                \
  }
  INFINIRT_PLUGIN_ENTRIES(INFINIRT_COPY_ENTRY_)
#undef INFINIRT_COPY_ENTRY_
  return table;
}

#undef INFINIRT_ENTRY_TYPE_

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_PLUGIN_TABLE_H_
