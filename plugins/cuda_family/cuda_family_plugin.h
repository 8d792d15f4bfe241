// The CUDA-family plugin's parts: its state (the vendor runtime it opened and the functions it
// resolved), the helpers its files share, and the plugin struct whose static members are the
// entries. The files:
//   cuda_family_loading.cc       opening the runtime, Initialize, Finalize, GetInfo
//   cuda_family_translation.cc   every other entry, translated to the vendor's calls
//   cuda_family_declarations.cc  what each entry does with which vendor function (GetSupport)
//   cuda_family_table.cc         the plugin table (plugin_table_builder.h)
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_CUDA_FAMILY_PLUGIN_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_CUDA_FAMILY_PLUGIN_H_

#include <optional>
#include <string>

#include "cuda_family.h"
#include "cuda_family_api.h"
#include "infinirt_plugin.h"
#include "plugin_support.h"
#include "plugin_table_builder.h"
#include "vendor_library.h"

namespace infinirt::cuda_family {

// The resolved vendor functions: one pointer per entry of the lists in cuda_family_api.h.
struct Functions {
#define CF_POINTER_(name, params) CF_ERROR(*name) params = nullptr;
  CUDA_FAMILY_REQUIRED_FUNCTIONS(CF_POINTER_)
  CUDA_FAMILY_OPTIONAL_FUNCTIONS(CF_POINTER_)
#undef CF_POINTER_
  const char* (*GetErrorName)(CF_ERROR error) = nullptr;
  // cudaGetDeviceProperties(_v2): the struct's layout varies between versions; only its first
  // field, the name, is read, from a buffer larger than any version of the struct.
  CF_ERROR (*GetDeviceProperties)(void* prop, int device) = nullptr;
  // Called as the 5-argument form (exec, graph, NULL, NULL, 0), which is also correct for the
  // 3-argument form (exec, graph, flags = 0) under the SysV x86-64 and AArch64 calling
  // conventions: the extra arguments travel in registers the 3-argument callee never reads.
  // Used only where GraphInstantiateWithFlags is missing.
  CF_ERROR(*GraphInstantiate)
  (CF_EXEC* exec, CF_GRAPH graph, void* error_node, char* log, size_t log_size) = nullptr;
};

struct State {
  explicit State(const CudaFamilySpec& vendor) : spec(vendor), log(vendor.name) {}
  const CudaFamilySpec& spec;
  plugin::PluginLog log;
  plugin::VendorLibrary library;
  std::string prefix;
  Functions fn;
  bool usable = false;
  int device_count = 0;
  int runtime_version = -1;
  std::string reason;
  plugin::ThreadDeviceBinding binding;
  const char* properties_symbol = "GetDeviceProperties";  // the name that resolved
};

// The state between Initialize and Finalize; nullptr outside.
extern State* g_state;
inline State& TheState() { return *g_state; }
inline void Log(infinirtLogLevel_t level, const std::string& message) {
  TheState().log(level, message);
}

// The InfiniRT error for a vendor status; for anything but success and "not ready", logs
// which vendor call failed.
infinirtError_t TranslateStatus(CF_ERROR status);
std::string ErrorText(CF_ERROR status);  // "3 (cudaErrorInitializationError)"
infinirtError_t Check(const char* function, CF_ERROR status);
#define CF_CALL(name, ...) Check(#name, TheState().fn.name(__VA_ARGS__))

// Opens the vendor runtime and counts its devices; the reason in the state when it cannot.
void LoadRuntime(const char* config_json);
// Starts and ends the per-thread default streams' epochs (cuda_family_translation.cc).
void StartPerThreadStreams();
void RetirePerThreadStreams();
// Whether the runtime has what graphs need (stream capture, instantiate, launch).
bool HasNativeGraphs();

// The entries (plugin_table_builder.h finds them by name).
struct CudaFamilyPlugin {
  static infinirtError_t Initialize(const infinirtPluginHost* host);
  static infinirtError_t Finalize();
  static infinirtError_t GetInfo(infinirtPluginInfo* info);
  static infinirtError_t GetDeviceCount(int* count);
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
  static infinirtError_t GraphInstantiate(int device, infinirtPluginGraphExec_t* exec,
                                          const infinirtPluginGraphNode* nodes, size_t node_count,
                                          unsigned long long flags);
  static infinirtError_t GraphLaunch(int device, infinirtPluginGraphExec_t exec,
                                     infinirtPluginStream_t stream);
  static infinirtError_t GraphExecDestroy(int device, infinirtPluginGraphExec_t exec);
  // The memory-pool attributes are left out: no vendor function of the lists serves them.

  // Support declarations (cuda_family_declarations.cc).
  static std::optional<plugin::Declaration> Declare(infinirtPluginEntry_t entry);
  static std::string VendorFunctionName(const char* function);  // with the vendor's prefix

  static const plugin::PluginLog& GuardLog();
};

}  // namespace infinirt::cuda_family

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_CUDA_FAMILY_PLUGIN_H_
