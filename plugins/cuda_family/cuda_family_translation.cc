// The CUDA-family plugin's translation: every entry but the lifecycle ones, as calls of the
// vendor's CUDA-shaped runtime (cuda_family.h).
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "capture_instantiate.h"
#include "cuda_family_plugin.h"

namespace infinirt::cuda_family {

// ---------------------------------------------------------------------------------------------
// Errors

// The InfiniRT error for a vendor status: by name where the runtime can name it ("musaError
// NotReady" -> infinirtErrorNotReady), else by number for CUDA-numbered vendors.
infinirtError_t TranslateStatus(CF_ERROR status) {
  if (status == 0) return infinirtSuccess;
  if (TheState().fn.GetErrorName != nullptr) {
    const char* name = TheState().fn.GetErrorName(status);
    if (name != nullptr &&
        std::strncmp(name, TheState().prefix.c_str(), TheState().prefix.size()) == 0) {
      const infinirtError_t error = plugin::ErrorFromSuffix(name + TheState().prefix.size());
      if (error != infinirtErrorUnknown) return error;
    }
  }
  if (TheState().spec.cuda_error_numbers) return plugin::ErrorFromNumber(status);  // = CUDA's
  return infinirtErrorUnknown;
}

// "3 (cudaErrorInitializationError)", for messages.
std::string ErrorText(CF_ERROR status) {
  const char* name = TheState().fn.GetErrorName ? TheState().fn.GetErrorName(status) : nullptr;
  return std::to_string(status) + (name ? std::string(" (") + name + ")" : std::string());
}

// Translates and, for anything but success and "not ready", logs which vendor call failed.
infinirtError_t Check(const char* function, CF_ERROR status) {
  const infinirtError_t error = TranslateStatus(status);
  if (error != infinirtSuccess && error != infinirtErrorNotReady) {
    Log(INFINIRT_LOG_DEBUG, TheState().prefix + function + " returned " + ErrorText(status));
  }
  return error;
}

namespace {

// Selects the device for the calling thread (vendor runtimes keep it per thread).
infinirtError_t Bind(int device) {
  const CF_ERROR status =
      TheState().binding.Bind(device, [](int d) { return TheState().fn.SetDevice(d); });
  return Check("SetDevice", status);
}

infinirtError_t RefuseInHostFunction(const char* entry) {
  return plugin::RefuseInHostFunction(TheState().log, entry);
}

// Set while GraphInstantiate replays nodes into a vendor capture on this thread: the host calls
// of host nodes go here, owned by the exec, instead of deleting themselves after one run.
thread_local std::vector<std::unique_ptr<plugin::HostCall>>* t_graph_host_calls = nullptr;

// ---------------------------------------------------------------------------------------------
// Streams, events, kinds

// Where the vendor has no per-thread default stream handle of CUDA's (plugin_support.h).
void* CreatePerThreadStream(int device) {
  void* stream = nullptr;
  if (g_state == nullptr || Bind(device) != infinirtSuccess) return nullptr;
  return TheState().fn.StreamCreateWithFlags(&stream, 0) == 0 ? stream : nullptr;
}

void DestroyPerThreadStream(int device, void* stream) {
  if (g_state != nullptr && Bind(device) == infinirtSuccess) TheState().fn.StreamDestroy(stream);
}

plugin::PerThreadStreams g_per_thread_streams(CreatePerThreadStream, DestroyPerThreadStream);

void* PerThreadStream(int device) { return g_per_thread_streams.Get(device); }

void* VendorStream(int device, infinirtPluginStream_t stream) {
  if (TheState().spec.cuda_special_streams) return stream;  // the runtime knows 0x1 and 0x2
  if (stream == INFINIRT_PLUGIN_STREAM_LEGACY) return nullptr;
  if (stream == INFINIRT_PLUGIN_STREAM_PER_THREAD) return PerThreadStream(device);
  return stream;
}

int VendorKind(enum infinirtMemcpyKind kind) {
  const int index = static_cast<int>(kind);
  return index >= 0 && index < 5 ? TheState().spec.enums.memcpy_kind[index] : -1;
}

unsigned int VendorEventFlags(unsigned int flags) {
  const CudaFamilyEnums& e = TheState().spec.enums;
  unsigned int vendor = 0;
  if (flags & infinirtEventBlockingSync) vendor |= e.event_blocking_sync;
  if (flags & infinirtEventDisableTiming) vendor |= e.event_disable_timing;
  if (flags & infinirtEventInterprocess) vendor |= e.event_interprocess;
  return vendor;
}

unsigned int VendorHostAllocFlags(unsigned int flags) {
  const CudaFamilyEnums& e = TheState().spec.enums;
  unsigned int vendor = 0;
  if (flags & infinirtHostAllocPortable) vendor |= e.host_alloc_portable;
  if (flags & infinirtHostAllocMapped) vendor |= e.host_alloc_mapped;
  if (flags & infinirtHostAllocWriteCombined) vendor |= e.host_alloc_write_combined;
  return vendor;
}
}  // namespace

void StartPerThreadStreams() { g_per_thread_streams.NewEpoch(); }
void RetirePerThreadStreams() { g_per_thread_streams.Retire(); }

// ---------------------------------------------------------------------------------------------
// Entries: devices

infinirtError_t CudaFamilyPlugin::GetDeviceProperties(int device, struct infinirtDeviceProp* prop) {
  std::memset(prop, 0, sizeof(*prop));
  // The fields that device attributes answer are the core's (it asks DeviceGetAttribute). Only
  // the name is read from the vendor's structure: its layout differs between vendors and
  // versions, but every one begins with the name.
  if (TheState().fn.GetDeviceProperties != nullptr) {
    alignas(64) static thread_local char buffer[kVendorPropertiesBytes];
    if (const infinirtError_t e = CF_CALL(GetDeviceProperties, buffer, device)) return e;
    plugin::CopyText(prop->name, sizeof(prop->name), std::string(buffer, strnlen(buffer, 255)));
  } else {
    plugin::CopyText(prop->name, sizeof(prop->name), std::string(TheState().spec.name) + " device");
  }
  size_t free_bytes = 0;
  if (TheState().fn.MemGetInfo != nullptr && Bind(device) == infinirtSuccess) {
    TheState().fn.MemGetInfo(&free_bytes, &prop->totalGlobalMem);
  }
  return infinirtSuccess;
}

infinirtError_t CudaFamilyPlugin::DeviceGetAttribute(int device, int* value,
                                                     enum infinirtDeviceAttr attr) {
  if (TheState().fn.DeviceGetAttribute == nullptr) return infinirtErrorNotSupported;
  if (!TheState().attribute_problem.empty()) return infinirtErrorNotSupported;  // not CUDA's
  return CF_CALL(DeviceGetAttribute, value, static_cast<int>(attr), device);
}

infinirtError_t CudaFamilyPlugin::DriverGetVersion(int, int* version) {
  if (TheState().fn.DriverGetVersion == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(DriverGetVersion, version);
}

infinirtError_t CudaFamilyPlugin::DeviceSynchronize(int device) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("DeviceSynchronize");
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(DeviceSynchronize);
}

infinirtError_t CudaFamilyPlugin::DeviceReset(int device) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("DeviceReset");
  if (TheState().fn.DeviceReset == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(DeviceReset);
}

// ---------------------------------------------------------------------------------------------
// Entries: memory

infinirtError_t CudaFamilyPlugin::MemGetInfo(int device, size_t* free_bytes, size_t* total_bytes) {
  if (TheState().fn.MemGetInfo == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(MemGetInfo, free_bytes, total_bytes);
}

infinirtError_t CudaFamilyPlugin::Malloc(int device, void** ptr, size_t size) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(Malloc, ptr, size);
}

infinirtError_t CudaFamilyPlugin::Free(int device, void* ptr) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("Free");
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(Free, ptr);
}

infinirtError_t CudaFamilyPlugin::HostAlloc(int device, void** ptr, size_t size,
                                            unsigned int flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.HostAlloc != nullptr)
    return CF_CALL(HostAlloc, ptr, size, VendorHostAllocFlags(flags));
  if (flags != 0) return infinirtErrorNotSupported;
  return Check("MallocHost", TheState().fn.MallocHostWithFlags(ptr, size, 0u));
}

infinirtError_t CudaFamilyPlugin::FreeHost(int device, void* ptr) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("FreeHost");
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(FreeHost, ptr);
}

// Host registration: the flags are CUDA's numbers, which the family shares.
infinirtError_t CudaFamilyPlugin::HostRegister(int device, void* ptr, size_t size,
                                               unsigned int flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.HostRegister == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(HostRegister, ptr, size, flags);
}

infinirtError_t CudaFamilyPlugin::HostUnregister(int device, void* ptr) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("HostUnregister");
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.HostUnregister == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(HostUnregister, ptr);
}

infinirtError_t CudaFamilyPlugin::HostGetDevicePointer(int device, void** device_ptr,
                                                       void* host_ptr) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.HostGetDevicePointer == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(HostGetDevicePointer, device_ptr, host_ptr, 0);
}

// ---------------------------------------------------------------------------------------------
// Managed memory hints: CUDA 13's form with a location where the runtime has it
// (ChooseManagedHintForms), else the older one with a device number.

namespace {

// The device number of the older form: the device, or -1 (cudaCpuDeviceId) for the host; false
// for a location it cannot express (a NUMA node).
bool DeviceNumberOf(const struct infinirtMemLocation& location, int* number) {
  if (location.type == infinirtMemLocationTypeDevice) {
    *number = location.id;
    return true;
  }
  if (location.type == infinirtMemLocationTypeHost) {
    *number = infinirtCpuDeviceId;
    return true;
  }
  return false;
}

infinirtError_t RefuseLocation(const char* function) {
  Log(INFINIRT_LOG_DEBUG, std::string(function) +
                              ": the runtime's form takes a device number, which cannot name "
                              "this location");
  return infinirtErrorNotSupported;
}

}  // namespace

infinirtError_t CudaFamilyPlugin::MemPrefetchAsync(int device, const void* ptr, size_t count,
                                                   struct infinirtMemLocation location,
                                                   infinirtPluginStream_t stream) {
  const Functions& fn = TheState().fn;
  if (fn.MemPrefetchAsync == nullptr && fn.MemPrefetchAsyncToDevice == nullptr) {
    return infinirtErrorNotSupported;
  }
  if (const infinirtError_t e = Bind(device)) return e;
  void* vendor_stream = VendorStream(device, stream);
  if (fn.MemPrefetchAsync != nullptr) {
    return Check(TheState().prefetch_symbol,
                 fn.MemPrefetchAsync(ptr, count, location, 0, vendor_stream));
  }
  int number = 0;
  if (!DeviceNumberOf(location, &number)) return RefuseLocation("MemPrefetchAsync");
  return Check("MemPrefetchAsync", fn.MemPrefetchAsyncToDevice(ptr, count, number, vendor_stream));
}

// The advice values are CUDA's in the family. Read-mostly advice names no location; the older
// form is then given device 0, which it ignores.
infinirtError_t CudaFamilyPlugin::MemAdvise(int device, const void* ptr, size_t count,
                                            enum infinirtMemoryAdvise advice,
                                            struct infinirtMemLocation location) {
  const Functions& fn = TheState().fn;
  if (fn.MemAdvise == nullptr && fn.MemAdviseForDevice == nullptr) {
    return infinirtErrorNotSupported;
  }
  if (const infinirtError_t e = Bind(device)) return e;
  const int vendor_advice = static_cast<int>(advice);
  if (fn.MemAdvise != nullptr) {
    return Check(TheState().advise_symbol, fn.MemAdvise(ptr, count, vendor_advice, location));
  }
  const bool read_mostly =
      advice == infinirtMemAdviseSetReadMostly || advice == infinirtMemAdviseUnsetReadMostly;
  int number = 0;
  if (!read_mostly && !DeviceNumberOf(location, &number)) return RefuseLocation("MemAdvise");
  return Check("MemAdvise", fn.MemAdviseForDevice(ptr, count, vendor_advice, number));
}

// ---------------------------------------------------------------------------------------------
// Interprocess sharing: the handles are 64 opaque bytes, as InfiniRT's, and pass unchanged.

namespace {

// The size of the memory the runtime mapped at `base`, from the driver's cuMemGetAddressRange
// (CUDA 12.0's form, through the runtime's GetDriverEntryPointByVersion): the runtime API has no
// call that tells it. 0 where it cannot be had.
size_t MappedSize(void* base) {
  using AddressRange = int (*)(unsigned long long* base, size_t* size, unsigned long long ptr);
  void* function = nullptr;
  int found = 0;  // cudaDriverEntryPointSuccess
  constexpr unsigned int kCuda12 = 12000;
  if (TheState().fn.GetDriverEntryPointByVersion("cuMemGetAddressRange", &function, kCuda12,
                                                 /*cudaEnableDefault=*/0, &found) != 0 ||
      found != 0 || function == nullptr) {
    Log(INFINIRT_LOG_DEBUG, "the driver has no cuMemGetAddressRange for the runtime to give");
    return 0;
  }
  unsigned long long start = 0;
  size_t size = 0;
  const auto address = static_cast<unsigned long long>(reinterpret_cast<uintptr_t>(base));
  if (reinterpret_cast<AddressRange>(function)(&start, &size, address) != 0 || start != address) {
    return 0;
  }
  return size;
}

// As declared: memory is opened only where the driver tells the size of what was mapped.
bool OpensIpcMemory() {
  const Functions& fn = TheState().fn;
  return fn.IpcOpenMemHandle != nullptr && fn.GetDriverEntryPointByVersion != nullptr &&
         NamedAsCuda();
}

// The same for allocations imported from another process's pool.
bool ImportsPoolMemory() {
  const Functions& fn = TheState().fn;
  return fn.MemPoolImportPointer != nullptr && fn.GetDriverEntryPointByVersion != nullptr &&
         NamedAsCuda();
}

}  // namespace

infinirtError_t CudaFamilyPlugin::IpcGetMemHandle(int device, infinirtIpcMemHandle_t* handle,
                                                  void* ptr) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.IpcGetMemHandle == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(IpcGetMemHandle, handle, ptr);
}

infinirtError_t CudaFamilyPlugin::IpcOpenMemHandle(int device, void** ptr, size_t* size,
                                                   const infinirtIpcMemHandle_t* handle,
                                                   unsigned int flags) {
  if (!OpensIpcMemory()) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  if (const infinirtError_t e = CF_CALL(IpcOpenMemHandle, ptr, *handle, flags)) return e;
  *size = MappedSize(*ptr);  // 0: the core closes it again and answers NotSupported
  return infinirtSuccess;
}

infinirtError_t CudaFamilyPlugin::IpcCloseMemHandle(int device, void* ptr) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("IpcCloseMemHandle");
  if (!OpensIpcMemory() || TheState().fn.IpcCloseMemHandle == nullptr) {
    return infinirtErrorNotSupported;
  }
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(IpcCloseMemHandle, ptr);
}

infinirtError_t CudaFamilyPlugin::IpcGetEventHandle(int device, infinirtIpcEventHandle_t* handle,
                                                    infinirtPluginEvent_t event) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.IpcGetEventHandle == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(IpcGetEventHandle, handle, event);
}

infinirtError_t CudaFamilyPlugin::IpcOpenEventHandle(int device, infinirtPluginEvent_t* event,
                                                     const infinirtIpcEventHandle_t* handle) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.IpcOpenEventHandle == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(IpcOpenEventHandle, event, *handle);
}

// Limits and the cache split: the family numbers cudaLimit and cudaFuncCache as CUDA does, so
// the values pass unchanged.
infinirtError_t CudaFamilyPlugin::DeviceGetLimit(int device, enum infinirtLimit limit,
                                                 size_t* value) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.DeviceGetLimit == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(DeviceGetLimit, value, static_cast<int>(limit));
}

infinirtError_t CudaFamilyPlugin::DeviceSetLimit(int device, enum infinirtLimit limit,
                                                 size_t value) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.DeviceSetLimit == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(DeviceSetLimit, static_cast<int>(limit), value);
}

infinirtError_t CudaFamilyPlugin::DeviceGetCacheConfig(int device, enum infinirtFuncCache* config) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.DeviceGetCacheConfig == nullptr) return infinirtErrorNotSupported;
  int vendor = 0;
  if (const infinirtError_t e = CF_CALL(DeviceGetCacheConfig, &vendor)) return e;
  if (vendor < infinirtFuncCachePreferNone || vendor > infinirtFuncCachePreferEqual) {
    TheState().log(INFINIRT_LOG_DEBUG, "DeviceGetCacheConfig answered " + std::to_string(vendor) +
                                           ", which is no cache configuration");
    return infinirtErrorUnknown;
  }
  *config = static_cast<enum infinirtFuncCache>(vendor);
  return infinirtSuccess;
}

infinirtError_t CudaFamilyPlugin::DeviceSetCacheConfig(int device, enum infinirtFuncCache config) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.DeviceSetCacheConfig == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(DeviceSetCacheConfig, static_cast<int>(config));
}

infinirtError_t CudaFamilyPlugin::MallocManaged(int device, void** ptr, size_t size,
                                                unsigned int flags) {
  if (TheState().fn.MallocManaged == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(MallocManaged, ptr, size, flags);
}

// Peers. The core keeps which access it enabled; the runtime's own answer that access is already
// enabled (or not enabled) means another library of the process changed it, which leaves it as
// asked.
infinirtError_t CudaFamilyPlugin::DeviceCanAccessPeer(int device, int* can_access, int peer) {
  if (TheState().fn.DeviceCanAccessPeer == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(DeviceCanAccessPeer, can_access, device, peer);
}

infinirtError_t CudaFamilyPlugin::DeviceEnablePeerAccess(int device, int peer) {
  if (TheState().fn.DeviceEnablePeerAccess == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  const infinirtError_t e = CF_CALL(DeviceEnablePeerAccess, peer, 0u);
  return e == infinirtErrorPeerAccessAlreadyEnabled ? infinirtSuccess : e;
}

infinirtError_t CudaFamilyPlugin::DeviceDisablePeerAccess(int device, int peer) {
  if (TheState().fn.DeviceDisablePeerAccess == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  const infinirtError_t e = CF_CALL(DeviceDisablePeerAccess, peer);
  return e == infinirtErrorPeerAccessNotEnabled ? infinirtSuccess : e;
}

// The attribute ids and the value union are CUDA's; the stream may be a default one.
infinirtError_t CudaFamilyPlugin::StreamGetAttribute(int device, infinirtPluginStream_t stream,
                                                     enum infinirtLaunchAttributeID attr,
                                                     union infinirtLaunchAttributeValue* value) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.StreamGetAttribute == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(StreamGetAttribute, VendorStream(device, stream), static_cast<int>(attr), value);
}

infinirtError_t CudaFamilyPlugin::StreamSetAttribute(
    int device, infinirtPluginStream_t stream, enum infinirtLaunchAttributeID attr,
    const union infinirtLaunchAttributeValue* value) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.StreamSetAttribute == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(StreamSetAttribute, VendorStream(device, stream), static_cast<int>(attr), value);
}

infinirtError_t CudaFamilyPlugin::DeviceGetP2PAttribute(int device, int* value,
                                                        enum infinirtDeviceP2PAttr attr, int peer) {
  if (TheState().fn.DeviceGetP2PAttribute == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(DeviceGetP2PAttribute, value, static_cast<int>(attr), device, peer);
}

// Without the vendor's stream-ordered allocator the plugin keeps the order by waiting for the
// stream: correct, not asynchronous.
infinirtError_t CudaFamilyPlugin::MallocAsync(int device, void** ptr, size_t size,
                                              infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  void* vendor_stream = VendorStream(device, stream);
  if (TheState().fn.MallocAsync != nullptr) return CF_CALL(MallocAsync, ptr, size, vendor_stream);
  if (plugin::InHostFunction()) return RefuseInHostFunction("MallocAsync");
  if (const infinirtError_t e = CF_CALL(StreamSynchronize, vendor_stream)) return e;
  return CF_CALL(Malloc, ptr, size);
}

infinirtError_t CudaFamilyPlugin::FreeAsync(int device, void* ptr, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  void* vendor_stream = VendorStream(device, stream);
  if (TheState().fn.FreeAsync != nullptr) return CF_CALL(FreeAsync, ptr, vendor_stream);
  if (plugin::InHostFunction()) return RefuseInHostFunction("FreeAsync");
  if (const infinirtError_t e = CF_CALL(StreamSynchronize, vendor_stream)) return e;
  return CF_CALL(Free, ptr);
}

// ---------------------------------------------------------------------------------------------
// Entries: memory pools. The properties, access descriptors and locations have CUDA's layout,
// and name devices by the vendor's indices, which are the plugin's.

namespace {

// The pool an entry names: the device's default pool for NULL.
infinirtError_t VendorPool(int device, infinirtPluginMemPool_t pool, void** vendor_pool) {
  if (pool != nullptr) {
    *vendor_pool = pool;
    return infinirtSuccess;
  }
  if (TheState().fn.DeviceGetDefaultMemPool == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(DeviceGetDefaultMemPool, vendor_pool, device);
}

}  // namespace

infinirtError_t CudaFamilyPlugin::MemPoolGetAttribute(int device, enum infinirtMemPoolAttr attr,
                                                      void* value) {
  return PoolGetAttribute(device, nullptr, attr, value);
}

infinirtError_t CudaFamilyPlugin::MemPoolSetAttribute(int device, enum infinirtMemPoolAttr attr,
                                                      void* value) {
  return PoolSetAttribute(device, nullptr, attr, value);
}

infinirtError_t CudaFamilyPlugin::MemPoolTrimTo(int device, size_t min_bytes_to_keep) {
  return PoolTrimTo(device, nullptr, min_bytes_to_keep);
}

// A pool other processes open (props->handleTypes) only where its allocations can be imported
// too (ImportsPoolMemory): half a way to share is none.
infinirtError_t CudaFamilyPlugin::MemPoolCreate(int device, infinirtPluginMemPool_t* pool,
                                                const struct infinirtMemPoolProps* props) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.MemPoolCreate == nullptr) return infinirtErrorNotSupported;
  if (props->handleTypes != infinirtMemHandleTypeNone && !ImportsPoolMemory()) {
    return infinirtErrorNotSupported;
  }
  return CF_CALL(MemPoolCreate, pool, props);
}

infinirtError_t CudaFamilyPlugin::MemPoolDestroy(int device, infinirtPluginMemPool_t pool) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.MemPoolDestroy == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(MemPoolDestroy, pool);
}

infinirtError_t CudaFamilyPlugin::MallocFromPoolAsync(int device, void** ptr, size_t size,
                                                      infinirtPluginMemPool_t pool,
                                                      infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.MallocFromPoolAsync == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(MallocFromPoolAsync, ptr, size, pool, VendorStream(device, stream));
}

infinirtError_t CudaFamilyPlugin::PoolGetAttribute(int device, infinirtPluginMemPool_t pool,
                                                   enum infinirtMemPoolAttr attr, void* value) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.MemPoolGetAttribute == nullptr) return infinirtErrorNotSupported;
  void* vendor_pool = nullptr;
  if (const infinirtError_t e = VendorPool(device, pool, &vendor_pool)) return e;
  return CF_CALL(MemPoolGetAttribute, vendor_pool, static_cast<int>(attr), value);
}

infinirtError_t CudaFamilyPlugin::PoolSetAttribute(int device, infinirtPluginMemPool_t pool,
                                                   enum infinirtMemPoolAttr attr, void* value) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.MemPoolSetAttribute == nullptr) return infinirtErrorNotSupported;
  void* vendor_pool = nullptr;
  if (const infinirtError_t e = VendorPool(device, pool, &vendor_pool)) return e;
  return CF_CALL(MemPoolSetAttribute, vendor_pool, static_cast<int>(attr), value);
}

infinirtError_t CudaFamilyPlugin::PoolTrimTo(int device, infinirtPluginMemPool_t pool,
                                             size_t min_bytes_to_keep) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.MemPoolTrimTo == nullptr) return infinirtErrorNotSupported;
  void* vendor_pool = nullptr;
  if (const infinirtError_t e = VendorPool(device, pool, &vendor_pool)) return e;
  return CF_CALL(MemPoolTrimTo, vendor_pool, min_bytes_to_keep);
}

infinirtError_t CudaFamilyPlugin::MemPoolSetAccess(int device, infinirtPluginMemPool_t pool,
                                                   const struct infinirtMemAccessDesc* descs,
                                                   size_t count) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.MemPoolSetAccess == nullptr) return infinirtErrorNotSupported;
  void* vendor_pool = nullptr;
  if (const infinirtError_t e = VendorPool(device, pool, &vendor_pool)) return e;
  return CF_CALL(MemPoolSetAccess, vendor_pool, descs, count);
}

infinirtError_t CudaFamilyPlugin::MemPoolGetAccess(int device, enum infinirtMemAccessFlags* flags,
                                                   infinirtPluginMemPool_t pool,
                                                   const struct infinirtMemLocation* location) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.MemPoolGetAccess == nullptr) return infinirtErrorNotSupported;
  void* vendor_pool = nullptr;
  if (const infinirtError_t e = VendorPool(device, pool, &vendor_pool)) return e;
  infinirtMemLocation asked = *location;  // the vendor's prototype takes a mutable location
  return CF_CALL(MemPoolGetAccess, flags, vendor_pool, &asked);
}

// Pools other processes open: the handle, the pool and the export data pass unchanged; an
// imported allocation's size comes from the driver, as opened IPC memory's does. Where it cannot
// (ImportsPoolMemory), none of the four is used.
infinirtError_t CudaFamilyPlugin::MemPoolExportToShareableHandle(
    int device, void* handle, infinirtPluginMemPool_t pool,
    enum infinirtMemAllocationHandleType type, unsigned int flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.MemPoolExportToShareableHandle == nullptr || !ImportsPoolMemory()) {
    return infinirtErrorNotSupported;
  }
  void* vendor_pool = nullptr;
  if (const infinirtError_t e = VendorPool(device, pool, &vendor_pool)) return e;
  return CF_CALL(MemPoolExportToShareableHandle, handle, vendor_pool, static_cast<int>(type),
                 flags);
}

infinirtError_t CudaFamilyPlugin::MemPoolImportFromShareableHandle(
    int device, infinirtPluginMemPool_t* pool, void* handle,
    enum infinirtMemAllocationHandleType type, unsigned int flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.MemPoolImportFromShareableHandle == nullptr || !ImportsPoolMemory()) {
    return infinirtErrorNotSupported;
  }
  return CF_CALL(MemPoolImportFromShareableHandle, pool, handle, static_cast<int>(type), flags);
}

infinirtError_t CudaFamilyPlugin::MemPoolExportPointer(int device,
                                                       struct infinirtMemPoolPtrExportData* data,
                                                       void* ptr) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.MemPoolExportPointer == nullptr || !ImportsPoolMemory()) {
    return infinirtErrorNotSupported;
  }
  return CF_CALL(MemPoolExportPointer, data, ptr);
}

infinirtError_t CudaFamilyPlugin::MemPoolImportPointer(int device, void** ptr, size_t* size,
                                                       infinirtPluginMemPool_t pool,
                                                       struct infinirtMemPoolPtrExportData* data) {
  if (!ImportsPoolMemory()) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  if (const infinirtError_t e = CF_CALL(MemPoolImportPointer, ptr, pool, data)) return e;
  *size = MappedSize(*ptr);  // 0: the core frees it again and answers NotSupported
  return infinirtSuccess;
}

infinirtError_t CudaFamilyPlugin::Memcpy(int device, void* dst, const void* src, size_t count,
                                         enum infinirtMemcpyKind kind) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("Memcpy");
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(Memcpy, dst, src, count, VendorKind(kind));
}

// Host-to-host copies complete before the call returns (the ABI's rule, as in CUDA).
infinirtError_t CudaFamilyPlugin::MemcpyAsync(int device, void* dst, const void* src, size_t count,
                                              enum infinirtMemcpyKind kind,
                                              infinirtPluginStream_t stream) {
  if (kind == infinirtMemcpyHostToHost && plugin::InHostFunction()) {
    return RefuseInHostFunction("host-to-host MemcpyAsync");
  }
  if (const infinirtError_t e = Bind(device)) return e;
  void* vendor_stream = VendorStream(device, stream);
  const infinirtError_t e = CF_CALL(MemcpyAsync, dst, src, count, VendorKind(kind), vendor_stream);
  if (e != infinirtSuccess || kind != infinirtMemcpyHostToHost) return e;
  return CF_CALL(StreamSynchronize, vendor_stream);
}

// A host-to-host plane is left to the core, which copies it row by row, each row synchronous.
infinirtError_t CudaFamilyPlugin::Memcpy2DAsync(int device, void* dst, size_t dpitch,
                                                const void* src, size_t spitch, size_t width,
                                                size_t height, enum infinirtMemcpyKind kind,
                                                infinirtPluginStream_t stream) {
  if (TheState().fn.Memcpy2DAsync == nullptr || kind == infinirtMemcpyHostToHost) {
    return infinirtErrorNotSupported;
  }
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(Memcpy2DAsync, dst, dpitch, src, spitch, width, height, VendorKind(kind),
                 VendorStream(device, stream));
}

infinirtError_t CudaFamilyPlugin::Memset2DAsync(int device, void* ptr, size_t pitch, int value,
                                                size_t width, size_t height,
                                                infinirtPluginStream_t stream) {
  if (TheState().fn.Memset2DAsync == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(Memset2DAsync, ptr, pitch, value, width, height, VendorStream(device, stream));
}

infinirtError_t CudaFamilyPlugin::Memset(int device, void* ptr, int value, size_t count) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("Memset");
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(Memset, ptr, value, count);
}

infinirtError_t CudaFamilyPlugin::MemsetAsync(int device, void* ptr, int value, size_t count,
                                              infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(MemsetAsync, ptr, value, count, VendorStream(device, stream));
}

// ---------------------------------------------------------------------------------------------
// Entries: streams and events

infinirtError_t CudaFamilyPlugin::StreamCreate(int device, infinirtPluginStream_t* stream,
                                               unsigned int flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  const unsigned int vendor_flags =
      (flags & infinirtStreamNonBlocking) ? TheState().spec.enums.stream_non_blocking : 0;
  return CF_CALL(StreamCreateWithFlags, stream, vendor_flags);
}

infinirtError_t CudaFamilyPlugin::DeviceGetStreamPriorityRange(int device, int* least,
                                                               int* greatest) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.DeviceGetStreamPriorityRange == nullptr) return infinirtErrorNotSupported;
  return CF_CALL(DeviceGetStreamPriorityRange, least, greatest);
}

infinirtError_t CudaFamilyPlugin::StreamCreateWithPriority(int device,
                                                           infinirtPluginStream_t* stream,
                                                           unsigned int flags, int priority) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (TheState().fn.StreamCreateWithPriority == nullptr) return infinirtErrorNotSupported;
  const unsigned int vendor_flags =
      (flags & infinirtStreamNonBlocking) ? TheState().spec.enums.stream_non_blocking : 0;
  return CF_CALL(StreamCreateWithPriority, stream, vendor_flags, priority);
}

infinirtError_t CudaFamilyPlugin::StreamDestroy(int device, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(StreamDestroy, stream);
}

infinirtError_t CudaFamilyPlugin::EventGetNativeHandle(int, infinirtPluginEvent_t event,
                                                       void** native_event) {
  *native_event = event;  // the plugin's event is the vendor's
  return infinirtSuccess;
}

// Another library's stream becomes a plugin stream as it is (the plugin's streams are the
// vendor's handles). Its flags and device are read where the runtime offers the functions; a
// handle the runtime does not know is refused by them with the vendor's error.
infinirtError_t CudaFamilyPlugin::StreamAdopt(int device, void* native_stream,
                                              infinirtPluginStream_t* stream, unsigned int* flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  const Functions& fn = TheState().fn;
  unsigned int vendor_flags = 0;  // blocking, where the runtime cannot tell
  if (fn.StreamGetFlags != nullptr) {
    if (const infinirtError_t e = CF_CALL(StreamGetFlags, native_stream, &vendor_flags)) return e;
  }
  if (fn.StreamGetDevice != nullptr) {
    int owner = -1;
    if (const infinirtError_t e = CF_CALL(StreamGetDevice, native_stream, &owner)) return e;
    if (owner != device) {
      TheState().log(INFINIRT_LOG_DEBUG, "StreamAdopt: the stream belongs to device " +
                                             std::to_string(owner) + ", not " +
                                             std::to_string(device));
      return infinirtErrorInvalidValue;
    }
  }
  *flags =
      (vendor_flags & TheState().spec.enums.stream_non_blocking) ? infinirtStreamNonBlocking : 0;
  *stream = native_stream;
  return infinirtSuccess;
}

// Nothing of the plugin's to free, and the vendor stream is its maker's.
infinirtError_t CudaFamilyPlugin::StreamRelease(int, infinirtPluginStream_t) {
  return infinirtSuccess;
}

infinirtError_t CudaFamilyPlugin::StreamGetNativeHandle(int device, infinirtPluginStream_t stream,
                                                        void** native_stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  void* vendor_stream = VendorStream(device, stream);
  // The per-thread stream is made on first use; a null answer then means it could not be.
  if (stream == INFINIRT_PLUGIN_STREAM_PER_THREAD && !TheState().spec.cuda_special_streams &&
      vendor_stream == nullptr) {
    return infinirtErrorMemoryAllocation;
  }
  *native_stream = vendor_stream;
  return infinirtSuccess;
}

infinirtError_t CudaFamilyPlugin::StreamSynchronize(int device, infinirtPluginStream_t stream) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("StreamSynchronize");
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(StreamSynchronize, VendorStream(device, stream));
}

infinirtError_t CudaFamilyPlugin::StreamQuery(int device, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(StreamQuery, VendorStream(device, stream));
}

infinirtError_t CudaFamilyPlugin::StreamWaitEvent(int device, infinirtPluginStream_t stream,
                                                  infinirtPluginEvent_t event, unsigned int) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(StreamWaitEvent, VendorStream(device, stream), event, 0u);  // all 3 arguments
}

infinirtError_t CudaFamilyPlugin::LaunchHostFunc(int device, infinirtPluginStream_t stream,
                                                 infinirtHostFn_t fn, void* user_data) {
  if (TheState().fn.LaunchHostFunc == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  const bool for_graph = t_graph_host_calls != nullptr;
  auto call = std::make_unique<plugin::HostCall>(plugin::HostCall{fn, user_data, !for_graph});
  if (const infinirtError_t e = CF_CALL(LaunchHostFunc, VendorStream(device, stream),
                                        &plugin::HostCall::Run, call.get())) {
    return e;
  }
  if (for_graph) {
    t_graph_host_calls->push_back(std::move(call));
  } else {
    call.release();  // deletes itself once run
  }
  return infinirtSuccess;
}

infinirtError_t CudaFamilyPlugin::EventCreate(int device, infinirtPluginEvent_t* event,
                                              unsigned int flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventCreateWithFlags, event, VendorEventFlags(flags));
}

infinirtError_t CudaFamilyPlugin::EventDestroy(int device, infinirtPluginEvent_t event) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventDestroy, event);
}

infinirtError_t CudaFamilyPlugin::EventRecord(int device, infinirtPluginEvent_t event,
                                              infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventRecord, event, VendorStream(device, stream));
}

infinirtError_t CudaFamilyPlugin::EventQuery(int device, infinirtPluginEvent_t event) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventQuery, event);
}

infinirtError_t CudaFamilyPlugin::EventSynchronize(int device, infinirtPluginEvent_t event) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("EventSynchronize");
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventSynchronize, event);
}

infinirtError_t CudaFamilyPlugin::EventElapsedTime(int device, float* ms,
                                                   infinirtPluginEvent_t start,
                                                   infinirtPluginEvent_t end) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CF_CALL(EventElapsedTime, ms, start, end);
}
// ---------------------------------------------------------------------------------------------
// Entries: graphs, built by capturing the nodes with the vendor's own stream capture

bool HasNativeGraphs() {
  const Functions& fn = TheState().fn;
  return fn.StreamBeginCapture && fn.StreamEndCapture && fn.GraphLaunch && fn.GraphExecDestroy &&
         fn.GraphDestroy && (fn.GraphInstantiateWithFlags || fn.GraphInstantiate);
}

namespace {

infinirtError_t InstantiateVendorGraph(void* graph, void** exec) {
  if (TheState().fn.GraphInstantiateWithFlags != nullptr) {
    return CF_CALL(GraphInstantiateWithFlags, exec, graph, 0ull);
  }
  return CF_CALL(GraphInstantiate, exec, graph, nullptr, nullptr, 0);
}

infinirtError_t EndCapture(infinirtPluginStream_t stream, infinirtPluginGraphExec_t* exec) {
  void* graph = nullptr;
  infinirtError_t error = CF_CALL(StreamEndCapture, stream, &graph);
  if (error == infinirtSuccess && exec != nullptr) error = InstantiateVendorGraph(graph, exec);
  if (graph != nullptr) TheState().fn.GraphDestroy(graph);
  return error;
}

}  // namespace

namespace {

// The exec handed to the core: the vendor's, and the host calls its host nodes run. With host
// calls, each launch records `launched` after itself: the calls are freed only once the launches
// that may run them are complete.
struct Exec {
  void* vendor = nullptr;
  std::vector<std::unique_ptr<plugin::HostCall>> host_calls;
  void* launched = nullptr;  // an event without timing; only where host_calls is not empty
};

// Execs destroyed while a launch was pending: CUDA frees its own part when the launches
// complete, and the host calls wait here until then.
std::mutex g_pending_mutex;
std::vector<std::unique_ptr<Exec>> g_pending;

void FreeHostCalls(std::unique_ptr<Exec> exec) {
  if (exec->launched != nullptr) TheState().fn.EventDestroy(exec->launched);
}

// Frees the pending execs whose launches are complete; with wait, all of them, after waiting.
void FreeCompletedExecs(bool wait) {
  std::lock_guard<std::mutex> lock(g_pending_mutex);
  auto pending = g_pending.begin();
  while (pending != g_pending.end()) {
    void* launched = (*pending)->launched;
    if (wait) {
      TheState().fn.EventSynchronize(launched);
    } else if (TranslateStatus(TheState().fn.EventQuery(launched)) == infinirtErrorNotReady) {
      ++pending;
      continue;
    }
    FreeHostCalls(std::move(*pending));
    pending = g_pending.erase(pending);
  }
}

}  // namespace

void FreePendingExecs() { FreeCompletedExecs(true); }

infinirtError_t CudaFamilyPlugin::GraphInstantiate(int device, infinirtPluginGraphExec_t* exec,
                                                   const infinirtPluginGraphNode* nodes,
                                                   size_t node_count, unsigned long long) {
  if (!HasNativeGraphs()) return infinirtErrorNotSupported;  // the core replays the nodes
  FreeCompletedExecs(false);
  plugin::VendorCapture capture;
  capture.begin = [](infinirtPluginStream_t stream) {
    return CF_CALL(StreamBeginCapture, stream, TheState().spec.enums.capture_mode_relaxed);
  };
  capture.end = EndCapture;
  auto made = std::make_unique<Exec>();
  t_graph_host_calls = &made->host_calls;
  infinirtError_t error = plugin::InstantiateByCapture(*infinirtPluginGetTable(), device, nodes,
                                                       node_count, capture, &made->vendor);
  t_graph_host_calls = nullptr;
  if (error == infinirtSuccess && !made->host_calls.empty()) {
    error =
        CF_CALL(EventCreateWithFlags, &made->launched, TheState().spec.enums.event_disable_timing);
  }
  if (error != infinirtSuccess) {
    if (made->vendor != nullptr) TheState().fn.GraphExecDestroy(made->vendor);
    FreeHostCalls(std::move(made));  // never launched
    return error;
  }
  *exec = made.release();
  return infinirtSuccess;
}

infinirtError_t CudaFamilyPlugin::GraphLaunch(int device, infinirtPluginGraphExec_t handle,
                                              infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  const Exec& exec = *static_cast<const Exec*>(handle);
  void* vendor_stream = VendorStream(device, stream);
  if (const infinirtError_t e = CF_CALL(GraphLaunch, exec.vendor, vendor_stream)) return e;
  if (exec.launched == nullptr) return infinirtSuccess;
  return CF_CALL(EventRecord, exec.launched, vendor_stream);
}

infinirtError_t CudaFamilyPlugin::GraphExecDestroy(int device, infinirtPluginGraphExec_t handle) {
  if (const infinirtError_t e = Bind(device)) return e;
  std::unique_ptr<Exec> exec(static_cast<Exec*>(handle));
  if (const infinirtError_t e = CF_CALL(GraphExecDestroy, exec->vendor)) {
    exec.release();  // still the vendor's: the core may try again
    return e;
  }
  FreeCompletedExecs(false);
  if (exec->launched != nullptr &&
      TranslateStatus(TheState().fn.EventQuery(exec->launched)) == infinirtErrorNotReady) {
    std::lock_guard<std::mutex> lock(g_pending_mutex);
    g_pending.push_back(std::move(exec));
    return infinirtSuccess;
  }
  FreeHostCalls(std::move(exec));
  return infinirtSuccess;
}

}  // namespace infinirt::cuda_family
