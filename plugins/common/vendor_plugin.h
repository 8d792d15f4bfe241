// What every vendor plugin (CUDA family, Ascend, Cambricon) has in common around its
// translation: the state of the vendor runtime it opened, and the entries answered from that
// state alone.
#ifndef INFINIRT_PLUGINS_COMMON_VENDOR_PLUGIN_H_
#define INFINIRT_PLUGINS_COMMON_VENDOR_PLUGIN_H_

#include <string>

#include "infinirt_plugin.h"
#include "plugin_support.h"
#include "vendor_library.h"

namespace infinirt::plugin {

// The vendor runtime as a plugin found it. A plugin's state derives from it.
struct VendorRuntimeState {
  explicit VendorRuntimeState(const char* plugin_name) : log(plugin_name) {}
  PluginLog log;
  VendorLibrary library;
  bool usable = false;  // opened, with every required function, and initialised
  int device_count = 0;
  int runtime_version = -1;
  // Why the plugin has no devices, if it has none; with devices, what it refuses that its
  // runtime may have (the listing shows it), or nothing.
  std::string reason;
  ThreadDeviceBinding binding;

  // Opens the first candidate that loads; false, with the reason, when none does.
  bool OpenRuntime(const CandidateList& candidates) {
    if (library.Open(candidates, log)) return true;
    reason = "vendor runtime not found: " +
             (library.attempts().empty() ? library.tried() : library.attempts());
    return false;
  }
};

// The entries answered from the state, for a plugin struct that derives from this one.
// Derived::Current() is the state between Initialize and Finalize (nullptr outside);
// Derived::Name() the plugin's name.
template <class Derived>
struct VendorPluginBase {
  static infinirtError_t GetInfo(infinirtPluginInfo* info) {
    const VendorRuntimeState& s = *Derived::Current();
    FillPluginInfo(s.library, s.usable, s.runtime_version, s.reason, info);
    return infinirtSuccess;
  }
  static infinirtError_t GetDeviceCount(int* count) {
    *count = Derived::Current()->device_count;
    return infinirtSuccess;
  }
  // Where the table's guard reports an escaping exception: the state's log, silent outside.
  static const PluginLog& GuardLog() {
    static const PluginLog silent(Derived::Name());
    const VendorRuntimeState* state = Derived::Current();
    return state != nullptr ? state->log : silent;
  }
};

}  // namespace infinirt::plugin

#endif  // INFINIRT_PLUGINS_COMMON_VENDOR_PLUGIN_H_
