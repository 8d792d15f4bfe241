// The CUDA-family plugin: InfiniRT's plugin entries translated to a CUDA-shaped vendor runtime
// opened with dlopen (cuda_family.h). Built once per vendor with that vendor's spec.
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "capture_instantiate.h"
#include "cuda_family.h"
#include "cuda_family_api.h"
#include "infinirt_plugin.h"
#include "plugin_support.h"
#include "vendor_library.h"

namespace infinirt::cuda_family {
namespace {

using plugin::Guarded;

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
  // 3-argument form (exec, graph, flags = 0) on SysV x86-64 and AArch64: see
  // docs/vendor-runtimes.md. Used only where GraphInstantiateWithFlags is missing.
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

State* g_state = nullptr;

State& S() { return *g_state; }
void Log(infinirtLogLevel_t level, const std::string& message) { S().log(level, message); }

// ---------------------------------------------------------------------------------------------
// Errors

// The InfiniRT error for a vendor status: by name where the runtime can name it ("musaError
// NotReady" -> infinirtErrorNotReady), else by number for CUDA-numbered vendors.
infinirtError_t TranslateStatus(CF_ERROR status) {
  if (status == 0) return infinirtSuccess;
  if (S().fn.GetErrorName != nullptr) {
    const char* name = S().fn.GetErrorName(status);
    if (name != nullptr && std::strncmp(name, S().prefix.c_str(), S().prefix.size()) == 0) {
      const infinirtError_t error = plugin::ErrorFromSuffix(name + S().prefix.size());
      if (error != infinirtErrorUnknown) return error;
    }
  }
  if (S().spec.cuda_special_streams) {  // CUDA-numbered: the numbers are InfiniRT's too
    return plugin::ErrorFromNumber(status);
  }
  return infinirtErrorUnknown;
}

// "3 (cudaErrorInitializationError)", for messages.
std::string ErrorText(CF_ERROR status) {
  const char* name = S().fn.GetErrorName ? S().fn.GetErrorName(status) : nullptr;
  return std::to_string(status) + (name ? std::string(" (") + name + ")" : std::string());
}

// Translates and, for anything but success and "not ready", logs which vendor call failed.
infinirtError_t Check(const char* function, CF_ERROR status) {
  const infinirtError_t error = TranslateStatus(status);
  if (error != infinirtSuccess && error != infinirtErrorNotReady) {
    Log(INFINIRT_LOG_DEBUG, S().prefix + function + " returned " + ErrorText(status));
  }
  return error;
}

#define CF_CALL(name, ...) Check(#name, S().fn.name(__VA_ARGS__))

// Selects the device for the calling thread (vendor runtimes keep it per thread).
infinirtError_t Bind(int device) {
  const CF_ERROR status = S().binding.Bind(device, [](int d) { return S().fn.SetDevice(d); });
  return Check("SetDevice", status);
}

// ---------------------------------------------------------------------------------------------
// Streams, events, kinds

// Where the vendor has no per-thread default stream handle of CUDA's (plugin_support.h).
void* CreatePerThreadStream(int device) {
  void* stream = nullptr;
  if (g_state == nullptr || Bind(device) != infinirtSuccess) return nullptr;
  return S().fn.StreamCreateWithFlags(&stream, 0) == 0 ? stream : nullptr;
}

void DestroyPerThreadStream(int device, void* stream) {
  if (g_state != nullptr && Bind(device) == infinirtSuccess) S().fn.StreamDestroy(stream);
}

plugin::PerThreadStreams g_per_thread_streams(CreatePerThreadStream, DestroyPerThreadStream);

void* PerThreadStream(int device) { return g_per_thread_streams.Get(device); }

void* VendorStream(int device, infinirtPluginStream_t stream) {
  if (S().spec.cuda_special_streams) return stream;  // 0x1 and 0x2 are CUDA's too
  if (stream == INFINIRT_PLUGIN_STREAM_LEGACY) return nullptr;
  if (stream == INFINIRT_PLUGIN_STREAM_PER_THREAD) return PerThreadStream(device);
  return stream;
}

int VendorKind(enum infinirtMemcpyKind kind) {
  const int index = static_cast<int>(kind);
  return index >= 0 && index < 5 ? S().spec.enums.memcpy_kind[index] : -1;
}

unsigned int VendorEventFlags(unsigned int flags) {
  const CudaFamilyEnums& e = S().spec.enums;
  unsigned int vendor = 0;
  if (flags & infinirtEventBlockingSync) vendor |= e.event_blocking_sync;
  if (flags & infinirtEventDisableTiming) vendor |= e.event_disable_timing;
  if (flags & infinirtEventInterprocess) vendor |= e.event_interprocess;
  return vendor;
}

unsigned int VendorHostAllocFlags(unsigned int flags) {
  const CudaFamilyEnums& e = S().spec.enums;
  unsigned int vendor = 0;
  if (flags & infinirtHostAllocPortable) vendor |= e.host_alloc_portable;
  if (flags & infinirtHostAllocMapped) vendor |= e.host_alloc_mapped;
  if (flags & infinirtHostAllocWriteCombined) vendor |= e.host_alloc_write_combined;
  return vendor;
}

// ---------------------------------------------------------------------------------------------
// Loading the runtime

std::string PrefixFor(const std::string& library_path) {
  for (const PrefixRule& rule : S().spec.prefix_rules) {
    if (rule.library_part == nullptr) break;
    if (library_path.find(rule.library_part) != std::string::npos) return rule.prefix;
  }
  return S().spec.default_prefix;
}

template <class Pointer>
bool Resolve(const char* name, Pointer* pointer) {
  *pointer = reinterpret_cast<Pointer>(S().library.Symbol((S().prefix + name).c_str()));
  return *pointer != nullptr;
}

// Resolves every function; false (with the reason) when a required one is missing.
bool ResolveFunctions() {
  Functions& fn = S().fn;
  std::string missing;
#define CF_RESOLVE_REQUIRED_(name, params) \
  if (!Resolve(#name, &fn.name)) missing += (missing.empty() ? "" : ", ") + S().prefix + #name;
  CUDA_FAMILY_REQUIRED_FUNCTIONS(CF_RESOLVE_REQUIRED_)
#undef CF_RESOLVE_REQUIRED_
#define CF_RESOLVE_OPTIONAL_(name, params) Resolve(#name, &fn.name);
  CUDA_FAMILY_OPTIONAL_FUNCTIONS(CF_RESOLVE_OPTIONAL_)
#undef CF_RESOLVE_OPTIONAL_
  Resolve("GetErrorName", &fn.GetErrorName);
  S().properties_symbol = "GetDeviceProperties_v2";  // CUDA >= 12
  if (!Resolve(S().properties_symbol, &fn.GetDeviceProperties)) {
    S().properties_symbol = "GetDeviceProperties";
    Resolve(S().properties_symbol, &fn.GetDeviceProperties);
  }
  Resolve("GraphInstantiate", &fn.GraphInstantiate);
  if (!missing.empty()) {
    S().reason = S().library.path() + " lacks " + missing;
    return false;
  }
  return true;
}

void LoadRuntime(const char* config_json) {
  State& s = S();
  const plugin::CandidateList candidates =
      plugin::VendorCandidates(s.spec.vendor_key, config_json, s.log);
  if (!s.library.Open(candidates)) {
    s.reason = "vendor runtime not found: " +
               (s.library.attempts().empty() ? s.library.tried() : s.library.attempts());
    return;
  }
  s.prefix = PrefixFor(s.library.path());
  Log(INFINIRT_LOG_DEBUG, "opened " + s.library.path() + " (symbol prefix " + s.prefix + ")");
  if (!ResolveFunctions()) return;
  if (s.fn.RuntimeGetVersion != nullptr) s.fn.RuntimeGetVersion(&s.runtime_version);
  int count = 0;
  const CF_ERROR status = s.fn.GetDeviceCount(&count);
  if (TranslateStatus(status) == infinirtErrorNoDevice) {  // a working runtime, no device
    s.usable = true;
    s.reason = s.library.path() + " reports no devices (" + s.prefix +
               "GetDeviceCount: " + ErrorText(status) + ")";
    return;
  }
  if (status != 0) {  // the runtime is there but failed to initialise
    s.reason = s.prefix + "GetDeviceCount returned " + ErrorText(status);
    return;
  }
  s.usable = true;
  s.device_count = count;
  if (count == 0) s.reason = s.library.path() + " reports no devices";
}

// ---------------------------------------------------------------------------------------------
// Entries: lifecycle and devices

infinirtError_t Initialize(const infinirtPluginHost* host) {
  if (g_state != nullptr) return infinirtSuccess;
  auto state = std::make_unique<State>(ThisVendor());
  state->log.Attach(host);
  state->binding.Invalidate();
  g_per_thread_streams.NewEpoch();
  g_state = state.release();
  return Guarded(S().log, [&] {
    LoadRuntime(host ? host->config_json : nullptr);
    return infinirtSuccess;
  });
}

infinirtError_t Finalize() {
  g_per_thread_streams.Retire();
  delete g_state;  // the runtime library stays loaded (vendor_library.h)
  g_state = nullptr;
  return infinirtSuccess;
}

infinirtError_t GetInfo(infinirtPluginInfo* info) {
  const State& s = S();
  plugin::FillPluginInfo(s.library, s.usable, s.runtime_version, s.reason, info);
  return infinirtSuccess;
}

infinirtError_t GetDeviceCount(int* count) {
  *count = S().device_count;
  return infinirtSuccess;
}

infinirtError_t GetDeviceProperties(int device, struct infinirtDeviceProp* prop) {
  return Guarded(S().log, [&]() -> infinirtError_t {
    std::memset(prop, 0, sizeof(*prop));
    if (S().fn.GetDeviceProperties != nullptr) {
      alignas(64) static thread_local char buffer[16384];
      if (const infinirtError_t e = CF_CALL(GetDeviceProperties, buffer, device)) return e;
      plugin::CopyText(prop->name, sizeof(prop->name), std::string(buffer, strnlen(buffer, 255)));
    } else {
      plugin::CopyText(prop->name, sizeof(prop->name), std::string(S().spec.name) + " device");
    }
    auto attribute = [&](enum infinirtDeviceAttr attr, int* field) {
      if (S().fn.DeviceGetAttribute != nullptr) S().fn.DeviceGetAttribute(field, attr, device);
    };
    attribute(infinirtDevAttrComputeCapabilityMajor, &prop->major);
    attribute(infinirtDevAttrComputeCapabilityMinor, &prop->minor);
    attribute(infinirtDevAttrMultiProcessorCount, &prop->multiProcessorCount);
    attribute(infinirtDevAttrMaxThreadsPerBlock, &prop->maxThreadsPerBlock);
    attribute(infinirtDevAttrMaxThreadsPerMultiProcessor, &prop->maxThreadsPerMultiProcessor);
    attribute(infinirtDevAttrWarpSize, &prop->warpSize);
    attribute(infinirtDevAttrMaxRegistersPerBlock, &prop->regsPerBlock);
    attribute(infinirtDevAttrL2CacheSize, &prop->l2CacheSize);
    attribute(infinirtDevAttrGlobalMemoryBusWidth, &prop->memoryBusWidth);
    attribute(infinirtDevAttrAsyncEngineCount, &prop->asyncEngineCount);
    attribute(infinirtDevAttrConcurrentKernels, &prop->concurrentKernels);
    attribute(infinirtDevAttrUnifiedAddressing, &prop->unifiedAddressing);
    attribute(infinirtDevAttrMemoryPoolsSupported, &prop->memoryPoolsSupported);
    attribute(infinirtDevAttrPciBusId, &prop->pciBusID);
    attribute(infinirtDevAttrPciDeviceId, &prop->pciDeviceID);
    attribute(infinirtDevAttrPciDomainId, &prop->pciDomainID);
    size_t free_bytes = 0;
    if (S().fn.MemGetInfo != nullptr && Bind(device) == infinirtSuccess) {
      S().fn.MemGetInfo(&free_bytes, &prop->totalGlobalMem);
    }
    return infinirtSuccess;
  });
}

infinirtError_t DeviceGetAttribute(int device, int* value, enum infinirtDeviceAttr attr) {
  if (S().fn.DeviceGetAttribute == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(DeviceGetAttribute, value, static_cast<int>(attr), device);
}

infinirtError_t DriverGetVersion(int, int* version) {
  if (S().fn.DriverGetVersion == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(DriverGetVersion, version);
}

infinirtError_t DeviceSynchronize(int device) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(DeviceSynchronize);
}

infinirtError_t DeviceReset(int device) {
  if (S().fn.DeviceReset == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(DeviceReset);
}

// ---------------------------------------------------------------------------------------------
// Entries: memory

infinirtError_t MemGetInfo(int device, size_t* free_bytes, size_t* total_bytes) {
  if (S().fn.MemGetInfo == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(MemGetInfo, free_bytes, total_bytes);
}

infinirtError_t Malloc(int device, void** ptr, size_t size) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(Malloc, ptr, size);
}

infinirtError_t Free(int device, void* ptr) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(Free, ptr);
}

infinirtError_t HostAlloc(int device, void** ptr, size_t size, unsigned int flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (S().fn.HostAlloc != nullptr)
    return CF_CALL(HostAlloc, ptr, size, VendorHostAllocFlags(flags));
  if (flags != 0) return infinirtErrorNotSupported;
  return CF_CALL(MallocHost, ptr, size);
}

infinirtError_t FreeHost(int device, void* ptr) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(FreeHost, ptr);
}

// Without the vendor's stream-ordered allocator the plugin keeps the order by waiting for the
// stream: correct, not asynchronous.
infinirtError_t MallocAsync(int device, void** ptr, size_t size, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  void* vendor_stream = VendorStream(device, stream);
  if (S().fn.MallocAsync != nullptr) return CF_CALL(MallocAsync, ptr, size, vendor_stream);
  if (const infinirtError_t e = CF_CALL(StreamSynchronize, vendor_stream)) return e;
  return CF_CALL(Malloc, ptr, size);
}

infinirtError_t FreeAsync(int device, void* ptr, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  void* vendor_stream = VendorStream(device, stream);
  if (S().fn.FreeAsync != nullptr) return CF_CALL(FreeAsync, ptr, vendor_stream);
  if (const infinirtError_t e = CF_CALL(StreamSynchronize, vendor_stream)) return e;
  return CF_CALL(Free, ptr);
}

infinirtError_t Memcpy(int device, void* dst, const void* src, size_t count,
                       enum infinirtMemcpyKind kind) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(Memcpy, dst, src, count, VendorKind(kind));
}

// Host-to-host copies complete before the call returns (the ABI's rule, as in CUDA).
infinirtError_t MemcpyAsync(int device, void* dst, const void* src, size_t count,
                            enum infinirtMemcpyKind kind, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  void* vendor_stream = VendorStream(device, stream);
  const infinirtError_t e = CF_CALL(MemcpyAsync, dst, src, count, VendorKind(kind), vendor_stream);
  if (e != infinirtSuccess || kind != infinirtMemcpyHostToHost) return e;
  return CF_CALL(StreamSynchronize, vendor_stream);
}

infinirtError_t Memset(int device, void* ptr, int value, size_t count) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(Memset, ptr, value, count);
}

infinirtError_t MemsetAsync(int device, void* ptr, int value, size_t count,
                            infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(MemsetAsync, ptr, value, count, VendorStream(device, stream));
}

// ---------------------------------------------------------------------------------------------
// Entries: streams and events

infinirtError_t StreamCreate(int device, infinirtPluginStream_t* stream, unsigned int flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  const unsigned int vendor_flags =
      (flags & infinirtStreamNonBlocking) ? S().spec.enums.stream_non_blocking : 0;
  return CF_CALL(StreamCreateWithFlags, stream, vendor_flags);
}

infinirtError_t StreamDestroy(int device, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(StreamDestroy, stream);
}

infinirtError_t StreamSynchronize(int device, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(StreamSynchronize, VendorStream(device, stream));
}

infinirtError_t StreamQuery(int device, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(StreamQuery, VendorStream(device, stream));
}

infinirtError_t StreamWaitEvent(int device, infinirtPluginStream_t stream,
                                infinirtPluginEvent_t event, unsigned int) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(StreamWaitEvent, VendorStream(device, stream), event, 0u);  // all 3 arguments
}

infinirtError_t LaunchHostFunc(int device, infinirtPluginStream_t stream, infinirtHostFn_t fn,
                               void* user_data) {
  if (S().fn.LaunchHostFunc == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(LaunchHostFunc, VendorStream(device, stream), fn, user_data);
}

infinirtError_t EventCreate(int device, infinirtPluginEvent_t* event, unsigned int flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventCreateWithFlags, event, VendorEventFlags(flags));
}

infinirtError_t EventDestroy(int device, infinirtPluginEvent_t event) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventDestroy, event);
}

infinirtError_t EventRecord(int device, infinirtPluginEvent_t event,
                            infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventRecord, event, VendorStream(device, stream));
}

infinirtError_t EventQuery(int device, infinirtPluginEvent_t event) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventQuery, event);
}

infinirtError_t EventSynchronize(int device, infinirtPluginEvent_t event) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventSynchronize, event);
}

infinirtError_t EventElapsedTime(int device, float* ms, infinirtPluginEvent_t start,
                                 infinirtPluginEvent_t end) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventElapsedTime, ms, start, end);
}

// ---------------------------------------------------------------------------------------------
// Entries: graphs, built by capturing the nodes with the vendor's own stream capture

bool HasNativeGraphs() {
  const Functions& fn = S().fn;
  return fn.StreamBeginCapture && fn.StreamEndCapture && fn.GraphLaunch && fn.GraphExecDestroy &&
         fn.GraphDestroy && (fn.GraphInstantiateWithFlags || fn.GraphInstantiate);
}

infinirtError_t InstantiateVendorGraph(void* graph, void** exec) {
  if (S().fn.GraphInstantiateWithFlags != nullptr) {
    return CF_CALL(GraphInstantiateWithFlags, exec, graph, 0ull);
  }
  return CF_CALL(GraphInstantiate, exec, graph, nullptr, nullptr, 0);
}

infinirtError_t EndCapture(infinirtPluginStream_t stream, infinirtPluginGraphExec_t* exec) {
  void* graph = nullptr;
  infinirtError_t error = CF_CALL(StreamEndCapture, stream, &graph);
  if (error == infinirtSuccess && exec != nullptr) error = InstantiateVendorGraph(graph, exec);
  if (graph != nullptr) S().fn.GraphDestroy(graph);
  return error;
}

infinirtError_t GraphInstantiate(int device, infinirtPluginGraphExec_t* exec,
                                 const infinirtPluginGraphNode* nodes, size_t node_count,
                                 unsigned long long) {
  if (!HasNativeGraphs()) return infinirtErrorNotSupported;  // the core replays the nodes
  return Guarded(S().log, [&] {
    plugin::VendorCapture capture;
    capture.begin = [](infinirtPluginStream_t stream) {
      return CF_CALL(StreamBeginCapture, stream, S().spec.enums.capture_mode_relaxed);
    };
    capture.end = EndCapture;
    return plugin::InstantiateByCapture(*infinirtPluginGetTable(), device, nodes, node_count,
                                        capture, exec);
  });
}

infinirtError_t GraphLaunch(int device, infinirtPluginGraphExec_t exec,
                            infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(GraphLaunch, exec, VendorStream(device, stream));
}

infinirtError_t GraphExecDestroy(int device, infinirtPluginGraphExec_t exec) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(GraphExecDestroy, exec);
}

// ---------------------------------------------------------------------------------------------
// Support declarations (the support matrix). They describe the runtime that is loaded; with
// none loaded, a runtime that has every function of the lists.

struct Declaration {
  infinirtPluginSupportLevel_t level;
  std::vector<const char*> functions;  // names after the prefix
  std::string note;
};

bool Has(void* function) { return g_state == nullptr || !S().library.is_open() || function; }
template <class Pointer>
bool Has(Pointer function) {
  return Has(reinterpret_cast<void*>(function));
}

Declaration Native(std::vector<const char*> functions, std::string note = "") {
  return {INFINIRT_SUPPORT_NATIVE, std::move(functions), std::move(note)};
}
Declaration Emulated(std::vector<const char*> functions, std::string note) {
  return {INFINIRT_SUPPORT_EMULATED, std::move(functions), std::move(note)};
}
Declaration None(std::string note) { return {INFINIRT_SUPPORT_NONE, {}, std::move(note)}; }

// The vendor function behind an optional entry, or NotSupported when the runtime lacks it.
Declaration NativeIfPresent(bool present, const char* function) {
  if (present) return Native({function});
  return None(std::string("the runtime lacks ") + function);
}

bool Declare(const std::string& entry, Declaration* out) {
  const Functions& fn = g_state ? S().fn : Functions{};
  if (entry == "GetDeviceCount")
    *out = Native({"GetDeviceCount"}, "counted at initialisation");
  else if (entry == "GetDeviceProperties") {
    *out = Native({g_state ? S().properties_symbol : "GetDeviceProperties", "DeviceGetAttribute",
                   "MemGetInfo"},
                  "the name from GetDeviceProperties(_v2), the numbers from attributes");
  } else if (entry == "DeviceGetAttribute")
    *out = NativeIfPresent(Has(fn.DeviceGetAttribute), "DeviceGetAttribute");
  else if (entry == "DriverGetVersion")
    *out = NativeIfPresent(Has(fn.DriverGetVersion), "DriverGetVersion");
  else if (entry == "DeviceSynchronize")
    *out = Native({"DeviceSynchronize"});
  else if (entry == "DeviceReset")
    *out = NativeIfPresent(Has(fn.DeviceReset), "DeviceReset");
  else if (entry == "MemGetInfo")
    *out = NativeIfPresent(Has(fn.MemGetInfo), "MemGetInfo");
  else if (entry == "Malloc")
    *out = Native({"Malloc"});
  else if (entry == "Free")
    *out = Native({"Free"});
  else if (entry == "HostAlloc") {
    *out = Has(fn.HostAlloc) ? Native({"HostAlloc"}, "MallocHost where HostAlloc is missing")
                             : Native({"MallocHost"}, "only flags 0: the runtime lacks HostAlloc");
  } else if (entry == "FreeHost")
    *out = Native({"FreeHost"});
  else if (entry == "MallocAsync" || entry == "FreeAsync") {
    const bool is_malloc = entry == "MallocAsync";
    const char* function = is_malloc ? "MallocAsync" : "FreeAsync";
    const char* fallback = is_malloc ? "Malloc" : "Free";
    const std::string note = std::string("where the runtime lacks ") + function +
                             ", emulated: waits for the stream (StreamSynchronize), then " +
                             fallback;
    if (Has(is_malloc ? reinterpret_cast<void*>(fn.MallocAsync)
                      : reinterpret_cast<void*>(fn.FreeAsync))) {
      *out = Native({function}, note);
    } else {
      *out = Emulated({"StreamSynchronize", fallback}, note);
    }
  } else if (entry == "Memcpy")
    *out = Native({"Memcpy"});
  else if (entry == "MemcpyAsync")
    *out = Native({"MemcpyAsync"}, "host-to-host copies then wait with StreamSynchronize");
  else if (entry == "Memset")
    *out = Native({"Memset"});
  else if (entry == "MemsetAsync")
    *out = Native({"MemsetAsync"});
  else if (entry == "StreamCreate")
    *out = Native({"StreamCreateWithFlags"});
  else if (entry == "StreamDestroy")
    *out = Native({"StreamDestroy"});
  else if (entry == "StreamSynchronize")
    *out = Native({"StreamSynchronize"});
  else if (entry == "StreamQuery")
    *out = Native({"StreamQuery"});
  else if (entry == "StreamWaitEvent")
    *out = Native({"StreamWaitEvent"}, "always 3 arguments, flags 0");
  else if (entry == "LaunchHostFunc")
    *out = NativeIfPresent(Has(fn.LaunchHostFunc), "LaunchHostFunc");
  else if (entry == "EventCreate")
    *out = Native({"EventCreateWithFlags"});
  else if (entry == "EventDestroy")
    *out = Native({"EventDestroy"});
  else if (entry == "EventRecord")
    *out = Native({"EventRecord"});
  else if (entry == "EventQuery")
    *out = Native({"EventQuery"}, "not ready recognised by error name");
  else if (entry == "EventSynchronize")
    *out = Native({"EventSynchronize"});
  else if (entry == "EventElapsedTime")
    *out = Native({"EventElapsedTime"});
  else if (entry == "MemPoolGetAttribute" || entry == "MemPoolSetAttribute" ||
           entry == "MemPoolTrimTo") {
    *out = None("the vendor's memory pools are not wired");
  } else if (entry == "GraphInstantiate") {
    if (g_state != nullptr && S().library.is_open() && !HasNativeGraphs()) {
      *out = None("the runtime lacks stream capture or graphs: the core replays graphs");
    } else {
      const bool with_flags = Has(fn.GraphInstantiateWithFlags);
      *out = Native({"StreamBeginCapture", "StreamEndCapture",
                     with_flags ? "GraphInstantiateWithFlags" : "GraphInstantiate", "GraphDestroy"},
                    "nodes captured in order on a private stream (relaxed mode); "
                    "GraphInstantiate, called as the 5-argument form, where "
                    "GraphInstantiateWithFlags is missing; graphs with host-to-host copies or "
                    "event waits are replayed by the core");
    }
  } else if (entry == "GraphLaunch")
    *out = NativeIfPresent(Has(fn.GraphLaunch), "GraphLaunch");
  else if (entry == "GraphExecDestroy")
    *out = NativeIfPresent(Has(fn.GraphExecDestroy), "GraphExecDestroy");
  else
    return false;
  return true;
}

infinirtError_t GetSupport(const char* entry, infinirtPluginSupport* support) {
  static const plugin::PluginLog silent(ThisVendor().name);
  return Guarded(g_state ? S().log : silent, [&] {
    Declaration declaration;
    if (entry == nullptr || support == nullptr || !Declare(entry, &declaration)) {
      return infinirtErrorInvalidValue;
    }
    const std::string prefix =
        g_state && !S().prefix.empty() ? S().prefix : ThisVendor().default_prefix;
    std::string functions;
    for (const char* function : declaration.functions) {
      functions += (functions.empty() ? "" : ", ") + prefix + function;
    }
    support->level = declaration.level;
    plugin::CopyText(support->vendor_functions, sizeof(support->vendor_functions), functions);
    plugin::CopyText(support->note, sizeof(support->note), declaration.note);
    return infinirtSuccess;
  });
}

infinirtPluginTable MakeTable() {
  const CudaFamilySpec& spec = ThisVendor();
  infinirtPluginTable table{};
  table.struct_size = sizeof(infinirtPluginTable);
  table.abi_major = INFINIRT_PLUGIN_ABI_MAJOR;
  table.abi_minor = INFINIRT_PLUGIN_ABI_MINOR;
  table.name = spec.name;
  table.device_type = spec.device_type;
  // Every entry but the memory-pool attributes, which no vendor function of the list serves.
#define CF_SET_ENTRY_(name, params) table.name = name;
  CF_SET_ENTRY_(Initialize, _)
  CF_SET_ENTRY_(Finalize, _)
  CF_SET_ENTRY_(GetInfo, _)
  CF_SET_ENTRY_(GetDeviceCount, _)
  CF_SET_ENTRY_(GetDeviceProperties, _)
  CF_SET_ENTRY_(DeviceGetAttribute, _)
  CF_SET_ENTRY_(DriverGetVersion, _)
  CF_SET_ENTRY_(DeviceSynchronize, _)
  CF_SET_ENTRY_(DeviceReset, _)
  CF_SET_ENTRY_(MemGetInfo, _)
  CF_SET_ENTRY_(Malloc, _)
  CF_SET_ENTRY_(Free, _)
  CF_SET_ENTRY_(HostAlloc, _)
  CF_SET_ENTRY_(FreeHost, _)
  CF_SET_ENTRY_(MallocAsync, _)
  CF_SET_ENTRY_(FreeAsync, _)
  CF_SET_ENTRY_(Memcpy, _)
  CF_SET_ENTRY_(MemcpyAsync, _)
  CF_SET_ENTRY_(Memset, _)
  CF_SET_ENTRY_(MemsetAsync, _)
  CF_SET_ENTRY_(StreamCreate, _)
  CF_SET_ENTRY_(StreamDestroy, _)
  CF_SET_ENTRY_(StreamSynchronize, _)
  CF_SET_ENTRY_(StreamQuery, _)
  CF_SET_ENTRY_(StreamWaitEvent, _)
  CF_SET_ENTRY_(LaunchHostFunc, _)
  CF_SET_ENTRY_(EventCreate, _)
  CF_SET_ENTRY_(EventDestroy, _)
  CF_SET_ENTRY_(EventRecord, _)
  CF_SET_ENTRY_(EventQuery, _)
  CF_SET_ENTRY_(EventSynchronize, _)
  CF_SET_ENTRY_(EventElapsedTime, _)
  CF_SET_ENTRY_(GraphInstantiate, _)
  CF_SET_ENTRY_(GraphLaunch, _)
  CF_SET_ENTRY_(GraphExecDestroy, _)
  CF_SET_ENTRY_(GetSupport, _)
#undef CF_SET_ENTRY_
  return table;
}

}  // namespace
}  // namespace infinirt::cuda_family

extern "C" const infinirtPluginTable* infinirtPluginGetTable(void) {
  static const infinirtPluginTable table = infinirt::cuda_family::MakeTable();
  return &table;
}
