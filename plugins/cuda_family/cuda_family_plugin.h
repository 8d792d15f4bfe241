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
#include "vendor_plugin.h"

namespace infinirt::cuda_family {

// The resolved vendor functions: one pointer per entry of the lists in cuda_family_api.h.
// Bytes of a buffer the vendor's properties struct is read into: more than any version of it
// (CUDA 13's is 1008).
constexpr size_t kVendorPropertiesBytes = 16384;

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
  // <prefix>MallocHost, called with a third argument, flags = 0, always. MACA's mcMallocHost
  // takes flags; CUDA's cudaMallocHost does not. Passing it is right for both: under the SysV
  // x86-64 and AArch64 calling conventions a two-argument callee never reads the register the
  // third argument travels in, while a three-argument one called with two would read whatever
  // that register held as its flags.
  CF_ERROR (*MallocHostWithFlags)(void** ptr, size_t size, unsigned int flags) = nullptr;
  // The managed memory hints in the form before CUDA 13, with a device number (the host is -1,
  // cudaCpuDeviceId) instead of a location. ChooseManagedHintForms sets them, and MemPrefetchAsync
  // and MemAdvise of the list to the location forms or NULL.
  CF_ERROR (*MemPrefetchAsyncToDevice)
  (const void* ptr, size_t count, int device, CF_STREAM stream) = nullptr;
  CF_ERROR (*MemAdviseForDevice)(const void* ptr, size_t count, int advice, int device) = nullptr;
};

struct State : plugin::VendorRuntimeState {
  explicit State(const CudaFamilySpec& vendor) : VendorRuntimeState(vendor.name), spec(vendor) {}
  const CudaFamilySpec& spec;
  std::string prefix;
  Functions fn;
  const char* properties_symbol = "GetDeviceProperties";  // the name that resolved
  // The names of the managed memory hints in use ("MemPrefetchAsync_v2", ...), for GetSupport.
  const char* prefetch_symbol = "MemPrefetchAsync";
  const char* advise_symbol = "MemAdvise";
  // Set when the attribute numbering self-check found the runtime's attribute numbers are not
  // CUDA's (the evidence): DeviceGetAttribute then answers NotSupported.
  std::string attribute_problem;
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

// Whether the vendor names its functions as CUDA does (cudaMalloc; its driver's then
// cuMemGetAddressRange), so that CUDA's facts about functions of one name hold for its.
inline bool NamedAsCuda() {
  const bool opened = g_state != nullptr && !TheState().prefix.empty();
  return (opened ? TheState().prefix : std::string(ThisVendor().default_prefix)) == "cuda";
}

// Opens the vendor runtime and counts its devices; the reason in the state when it cannot.
void LoadRuntime(const char* config_json);
// Starts and ends the per-thread default streams' epochs (cuda_family_translation.cc).
void StartPerThreadStreams();
void RetirePerThreadStreams();
// Whether the runtime has what graphs need (stream capture, instantiate, launch).
bool HasNativeGraphs();
// Waits for the launches of destroyed execs that were still pending, and frees what their host
// nodes ran (before Finalize lets go of the runtime).
void FreePendingExecs();

// The entries (plugin_table_builder.h finds them by name).
struct CudaFamilyPlugin : plugin::VendorPluginBase<CudaFamilyPlugin> {
  INFINIRT_PLUGIN_ENTRY(Initialize);
  INFINIRT_PLUGIN_ENTRY(Finalize);
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
  INFINIRT_PLUGIN_ENTRY(StreamDestroy);
  INFINIRT_PLUGIN_ENTRY(StreamSynchronize);
  INFINIRT_PLUGIN_ENTRY(StreamQuery);
  INFINIRT_PLUGIN_ENTRY(StreamWaitEvent);
  INFINIRT_PLUGIN_ENTRY(LaunchHostFunc);
  INFINIRT_PLUGIN_ENTRY(EventCreate);
  INFINIRT_PLUGIN_ENTRY(EventDestroy);
  INFINIRT_PLUGIN_ENTRY(EventRecord);
  INFINIRT_PLUGIN_ENTRY(EventQuery);
  INFINIRT_PLUGIN_ENTRY(EventSynchronize);
  INFINIRT_PLUGIN_ENTRY(EventElapsedTime);
  INFINIRT_PLUGIN_ENTRY(GraphInstantiate);
  INFINIRT_PLUGIN_ENTRY(GraphLaunch);
  INFINIRT_PLUGIN_ENTRY(GraphExecDestroy);
  INFINIRT_PLUGIN_ENTRY(StreamGetNativeHandle);
  INFINIRT_PLUGIN_ENTRY(EventGetNativeHandle);
  INFINIRT_PLUGIN_ENTRY(StreamAdopt);
  INFINIRT_PLUGIN_ENTRY(StreamRelease);
  INFINIRT_PLUGIN_ENTRY(DeviceGetStreamPriorityRange);
  INFINIRT_PLUGIN_ENTRY(StreamCreateWithPriority);
  INFINIRT_PLUGIN_ENTRY(HostRegister);
  INFINIRT_PLUGIN_ENTRY(HostUnregister);
  INFINIRT_PLUGIN_ENTRY(HostGetDevicePointer);
  INFINIRT_PLUGIN_ENTRY(DeviceGetLimit);
  INFINIRT_PLUGIN_ENTRY(DeviceSetLimit);
  INFINIRT_PLUGIN_ENTRY(DeviceGetCacheConfig);
  INFINIRT_PLUGIN_ENTRY(DeviceSetCacheConfig);
  INFINIRT_PLUGIN_ENTRY(DeviceCanAccessPeer);
  INFINIRT_PLUGIN_ENTRY(DeviceEnablePeerAccess);
  INFINIRT_PLUGIN_ENTRY(DeviceDisablePeerAccess);
  INFINIRT_PLUGIN_ENTRY(DeviceGetP2PAttribute);
  INFINIRT_PLUGIN_ENTRY(MallocManaged);
  INFINIRT_PLUGIN_ENTRY(MemPrefetchAsync);
  INFINIRT_PLUGIN_ENTRY(MemAdvise);
  INFINIRT_PLUGIN_ENTRY(StreamGetAttribute);
  INFINIRT_PLUGIN_ENTRY(StreamSetAttribute);
  INFINIRT_PLUGIN_ENTRY(MemPoolGetAttribute);
  INFINIRT_PLUGIN_ENTRY(MemPoolSetAttribute);
  INFINIRT_PLUGIN_ENTRY(MemPoolTrimTo);
  INFINIRT_PLUGIN_ENTRY(MemPoolCreate);
  INFINIRT_PLUGIN_ENTRY(MemPoolDestroy);
  INFINIRT_PLUGIN_ENTRY(MallocFromPoolAsync);
  INFINIRT_PLUGIN_ENTRY(PoolGetAttribute);
  INFINIRT_PLUGIN_ENTRY(PoolSetAttribute);
  INFINIRT_PLUGIN_ENTRY(PoolTrimTo);
  INFINIRT_PLUGIN_ENTRY(MemPoolSetAccess);
  INFINIRT_PLUGIN_ENTRY(MemPoolGetAccess);
  INFINIRT_PLUGIN_ENTRY(Memcpy2DAsync);
  INFINIRT_PLUGIN_ENTRY(Memset2DAsync);
  INFINIRT_PLUGIN_ENTRY(IpcGetMemHandle);
  INFINIRT_PLUGIN_ENTRY(IpcOpenMemHandle);
  INFINIRT_PLUGIN_ENTRY(IpcCloseMemHandle);
  INFINIRT_PLUGIN_ENTRY(IpcGetEventHandle);
  INFINIRT_PLUGIN_ENTRY(IpcOpenEventHandle);
  INFINIRT_PLUGIN_ENTRY(MemPoolExportToShareableHandle);
  INFINIRT_PLUGIN_ENTRY(MemPoolImportFromShareableHandle);
  INFINIRT_PLUGIN_ENTRY(MemPoolExportPointer);
  INFINIRT_PLUGIN_ENTRY(MemPoolImportPointer);

  // Support declarations (cuda_family_declarations.cc).
  static std::optional<plugin::Declaration> Declare(infinirtPluginEntry_t entry);
  static std::string VendorFunctionName(const char* function);  // with the vendor's prefix

  // For VendorPluginBase, which answers GetInfo and GetDeviceCount and gives the guard its log.
  static const plugin::VendorRuntimeState* Current() { return g_state; }
  static const char* Name() { return ThisVendor().name; }
};

}  // namespace infinirt::cuda_family

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_CUDA_FAMILY_PLUGIN_H_
