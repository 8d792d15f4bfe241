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
struct CambriconPlugin {
  // cambricon_loading.cc
  static infinirtError_t Initialize(const infinirtPluginHost* host);
  static infinirtError_t Finalize();
  static infinirtError_t GetInfo(infinirtPluginInfo* info);
  static infinirtError_t GetDeviceCount(int* count);
  // cambricon_translation.cc
  static infinirtError_t GetDeviceProperties(int device, struct infinirtDeviceProp* prop);
  static infinirtError_t DeviceGetAttribute(int device, int* value, enum infinirtDeviceAttr attr);
  static infinirtError_t DriverGetVersion(int device, int* version);
  static infinirtError_t DeviceSynchronize(int device);
  static infinirtError_t DeviceReset(int device);
  static infinirtError_t MemGetInfo(int device, size_t* free_bytes, size_t* total_bytes);
  static infinirtError_t Malloc(int device, void** ptr, size_t size);
  static infinirtError_t Free(int device, void* ptr);
  static infinirtError_t HostAlloc(int device, void** ptr, size_t size, unsigned int flags);
  static infinirtError_t FreeHost(int device, void* ptr);
  static infinirtError_t MallocAsync(int device, void** ptr, size_t size,
                                     infinirtPluginStream_t stream);
  static infinirtError_t FreeAsync(int device, void* ptr, infinirtPluginStream_t stream);
  static infinirtError_t Memcpy(int device, void* dst, const void* src, size_t count,
                                enum infinirtMemcpyKind kind);
  static infinirtError_t MemcpyAsync(int device, void* dst, const void* src, size_t count,
                                     enum infinirtMemcpyKind kind, infinirtPluginStream_t stream);
  static infinirtError_t Memset(int device, void* ptr, int value, size_t count);
  static infinirtError_t MemsetAsync(int device, void* ptr, int value, size_t count,
                                     infinirtPluginStream_t stream);
  static infinirtError_t StreamCreate(int device, infinirtPluginStream_t* stream,
                                      unsigned int flags);
  static infinirtError_t StreamDestroy(int device, infinirtPluginStream_t stream);
  static infinirtError_t StreamSynchronize(int device, infinirtPluginStream_t stream);
  static infinirtError_t StreamQuery(int device, infinirtPluginStream_t stream);
  static infinirtError_t StreamWaitEvent(int device, infinirtPluginStream_t stream,
                                         infinirtPluginEvent_t event, unsigned int flags);
  static infinirtError_t LaunchHostFunc(int device, infinirtPluginStream_t stream,
                                        infinirtHostFn_t fn, void* user_data);
  static infinirtError_t EventCreate(int device, infinirtPluginEvent_t* event, unsigned int flags);
  static infinirtError_t EventDestroy(int device, infinirtPluginEvent_t event);
  static infinirtError_t EventRecord(int device, infinirtPluginEvent_t event,
                                     infinirtPluginStream_t stream);
  static infinirtError_t EventQuery(int device, infinirtPluginEvent_t event);
  static infinirtError_t EventSynchronize(int device, infinirtPluginEvent_t event);
  static infinirtError_t EventElapsedTime(int device, float* ms, infinirtPluginEvent_t start,
                                          infinirtPluginEvent_t end);
  static infinirtError_t MemPoolGetAttribute(int device, enum infinirtMemPoolAttr attr,
                                             void* value);
  static infinirtError_t MemPoolSetAttribute(int device, enum infinirtMemPoolAttr attr,
                                             void* value);
  static infinirtError_t MemPoolTrimTo(int device, size_t min_bytes_to_keep);
  static infinirtError_t GraphInstantiate(int device, infinirtPluginGraphExec_t* exec,
                                          const infinirtPluginGraphNode* nodes, size_t node_count,
                                          unsigned long long flags);
  static infinirtError_t GraphLaunch(int device, infinirtPluginGraphExec_t exec,
                                     infinirtPluginStream_t stream);
  static infinirtError_t GraphExecDestroy(int device, infinirtPluginGraphExec_t exec);

  // cambricon_declarations.cc
  static std::optional<plugin::Declaration> Declare(infinirtPluginEntry_t entry);

  static const plugin::PluginLog& GuardLog();
};

}  // namespace infinirt::cambricon

#endif  // INFINIRT_PLUGINS_CAMBRICON_CAMBRICON_INTERNAL_H_
