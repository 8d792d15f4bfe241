// What the Cambricon plugin's sources share: the resolved CNRT functions and the plugin's state.
#ifndef INFINIRT_PLUGINS_CAMBRICON_CAMBRICON_INTERNAL_H_
#define INFINIRT_PLUGINS_CAMBRICON_CAMBRICON_INTERNAL_H_

#include <string>

#include "cnrt_api.h"
#include "infinirt_plugin.h"
#include "plugin_support.h"
#include "vendor_library.h"

namespace infinirt::cambricon {

constexpr char kPluginName[] = "cambricon";
constexpr char kVendorKey[] = "cambricon";  // of config/vendor_runtimes.json

// One pointer per entry of CNRT_FUNCTIONS, and the variants the plugin chose.
struct Functions {
#define CNRT_POINTER_(requirement, name, params) int(*name) params = nullptr;
  CNRT_FUNCTIONS(CNRT_POINTER_)
#undef CNRT_POINTER_
  const char* (*GetErrorName)(int error) = nullptr;  // for messages only
  // cnrtMemcpyAsync_V3, else _V2, else cnrtMemcpyAsync: one prototype for all three.
  int (*memcpy_async)(void* dst, void* src, size_t bytes, void* queue, int dir) = nullptr;
  // cnrtGetDeviceProperties_V3, else _V2, else the unversioned symbol; only the first field of
  // cnrtDeviceProp_t, the name, is read (its layout changes between versions).
  int (*get_device_properties)(void* prop, int device) = nullptr;
};

struct State {
  plugin::PluginLog log{kPluginName};
  plugin::VendorLibrary library;
  Functions fn;
  const char* memcpy_async_symbol = "cnrtMemcpyAsync_V3";  // the names that resolved
  const char* properties_symbol = "cnrtGetDeviceProperties_V3";
  bool usable = false;  // the runtime opened, has every required function and initialised
  int device_count = 0;
  int runtime_version = -1;
  std::string reason;
  plugin::ThreadDeviceBinding binding;
};

// Set between Initialize and Finalize.
extern State* g_state;
inline State& S() { return *g_state; }

// Native graphs need the whole capture and TaskTopo family.
inline bool HasNativeGraphs(const Functions& fn) {
  return fn.QueueBeginCapture && fn.QueueEndCapture && fn.TaskTopoInstantiate &&
         fn.TaskTopoDestroy && fn.TaskTopoEntityInvoke && fn.TaskTopoEntityDestroy;
}

// The memory-pool entries go through the device's default pool.
inline bool HasMemPools(const Functions& fn) {
  return fn.DeviceGetDefaultMemPool && fn.MemPoolGetAttribute && fn.MemPoolSetAttribute &&
         fn.MemPoolTrimTo;
}

// The GetSupport entry (cambricon_support.cc).
infinirtError_t GetSupport(const char* entry, infinirtPluginSupport* support);

}  // namespace infinirt::cambricon

#endif  // INFINIRT_PLUGINS_CAMBRICON_CAMBRICON_INTERNAL_H_
