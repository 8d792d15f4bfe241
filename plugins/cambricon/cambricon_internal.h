// What the Cambricon plugin's sources share: the resolved CNRT functions, the plugin's state,
// error translation and the plugin struct whose static members are the entries.
#ifndef INFINIRT_PLUGINS_CAMBRICON_CAMBRICON_INTERNAL_H_
#define INFINIRT_PLUGINS_CAMBRICON_CAMBRICON_INTERNAL_H_

#include <optional>
#include <string>

#include "cnrt_api.h"
#include "infinirt_plugin.h"
#include "plugin_support.h"
#include "plugin_table_builder.h"
#include "vendor_library.h"
#include "vendor_plugin.h"

namespace infinirt::cambricon {

constexpr char kPluginName[] = "cambricon";
constexpr char kVendorKey[] = "cambricon";  // its row of config/vendors.json

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

struct State : plugin::VendorRuntimeState {
  State() : VendorRuntimeState(kPluginName) {}
  Functions fn;
  const char* memcpy_async_symbol = "cnrtMemcpyAsync_V3";  // the names that resolved
  const char* properties_symbol = "cnrtGetDeviceProperties_V3";
};

// Set between Initialize and Finalize.
extern State* g_state;
inline State& TheState() { return *g_state; }

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

inline void Log(infinirtLogLevel_t level, const std::string& message) {
  TheState().log(level, message);
}

// CUDA-style version number from CNRT's three parts: 6.14.1 -> 6140.
inline int VersionNumber(int major, int minor) { return major * 1000 + minor * 10; }

// Whether the loaded CNRT is known to be older than major.minor (an unknown version is not).
inline bool RuntimeOlderThan(int major, int minor) {
  const int version = TheState().runtime_version;
  return version > 0 && version < VersionNumber(major, minor);
}

// cambricon_errors.cc: the InfiniRT error for a CNRT status (Unknown for codes it has none
// for); Check also logs, at debug, which call failed for anything but success and not ready.
infinirtError_t TranslateStatus(int status);
std::string ErrorText(int status);  // "632013 (cnrtErrorMemcpyDirectionInvalid)"
infinirtError_t Check(const char* function, int status);
#define CNRT_CALL(name, ...) Check("cnrt" #name, TheState().fn.name(__VA_ARGS__))
// Selects the device for the calling thread (CNRT keeps it per host thread).
infinirtError_t Bind(int device);

// cambricon_translation.cc: start and end the per-thread queues' epochs.
void StartPerThreadQueues();
void RetirePerThreadQueues();

// The entries (plugin_table_builder.h finds them by name).
struct CambriconPlugin : plugin::VendorPluginBase<CambriconPlugin> {
  // cambricon_loading.cc
  INFINIRT_PLUGIN_ENTRY(Initialize);
  INFINIRT_PLUGIN_ENTRY(Finalize);
  // cambricon_translation.cc
  INFINIRT_PLUGIN_ENTRY(GetDeviceProperties);
  INFINIRT_PLUGIN_ENTRY(DeviceGetAttribute);
  INFINIRT_PLUGIN_ENTRY(DriverGetVersion);
  INFINIRT_PLUGIN_ENTRY(DeviceSynchronize);
  INFINIRT_PLUGIN_ENTRY(DeviceReset);
  INFINIRT_PLUGIN_ENTRY(MemGetInfo);
  INFINIRT_PLUGIN_ENTRY(Malloc);
  INFINIRT_PLUGIN_ENTRY(Free);
  INFINIRT_PLUGIN_ENTRY(HostAlloc);
  INFINIRT_PLUGIN_ENTRY(FreeHost);
  INFINIRT_PLUGIN_ENTRY(MallocAsync);
  INFINIRT_PLUGIN_ENTRY(FreeAsync);
  INFINIRT_PLUGIN_ENTRY(Memcpy);
  INFINIRT_PLUGIN_ENTRY(MemcpyAsync);
  INFINIRT_PLUGIN_ENTRY(Memset);
  INFINIRT_PLUGIN_ENTRY(MemsetAsync);
  INFINIRT_PLUGIN_ENTRY(StreamCreate);
  INFINIRT_PLUGIN_ENTRY(DeviceGetStreamPriorityRange);
  INFINIRT_PLUGIN_ENTRY(StreamCreateWithPriority);
  INFINIRT_PLUGIN_ENTRY(StreamDestroy);
  INFINIRT_PLUGIN_ENTRY(StreamSynchronize);
  INFINIRT_PLUGIN_ENTRY(StreamQuery);
  INFINIRT_PLUGIN_ENTRY(StreamWaitEvent);
  INFINIRT_PLUGIN_ENTRY(StreamGetNativeHandle);
  INFINIRT_PLUGIN_ENTRY(StreamAdopt);
  INFINIRT_PLUGIN_ENTRY(StreamRelease);
  INFINIRT_PLUGIN_ENTRY(LaunchHostFunc);
  INFINIRT_PLUGIN_ENTRY(EventCreate);
  INFINIRT_PLUGIN_ENTRY(EventDestroy);
  INFINIRT_PLUGIN_ENTRY(EventRecord);
  INFINIRT_PLUGIN_ENTRY(EventQuery);
  INFINIRT_PLUGIN_ENTRY(EventSynchronize);
  INFINIRT_PLUGIN_ENTRY(EventElapsedTime);
  INFINIRT_PLUGIN_ENTRY(EventGetNativeHandle);
  INFINIRT_PLUGIN_ENTRY(MemPoolGetAttribute);
  INFINIRT_PLUGIN_ENTRY(MemPoolSetAttribute);
  INFINIRT_PLUGIN_ENTRY(MemPoolTrimTo);
  INFINIRT_PLUGIN_ENTRY(GraphInstantiate);
  INFINIRT_PLUGIN_ENTRY(GraphLaunch);
  INFINIRT_PLUGIN_ENTRY(GraphExecDestroy);

  // cambricon_declarations.cc
  static std::optional<plugin::Declaration> Declare(infinirtPluginEntry_t entry);

  // For VendorPluginBase, which answers GetInfo and GetDeviceCount and gives the guard its log.
  static const plugin::VendorRuntimeState* Current() { return g_state; }
  static const char* Name() { return kPluginName; }
};

}  // namespace infinirt::cambricon

#endif  // INFINIRT_PLUGINS_CAMBRICON_CAMBRICON_INTERNAL_H_
