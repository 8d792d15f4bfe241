// The Cambricon plugin: InfiniRT's plugin entries translated to CNRT (libcnrt.so, opened with
// dlopen; cnrt_api.h). Streams are CNRT queues, events are notifiers, graphs are TaskTopos
// made by queue capture. What CNRT lacks is emulated or answered NotSupported, as its
// declarations say (cambricon_declarations.cc).
//
// Translation rules (docs/vendor-runtimes.md):
//   - CNRT's current device is per host thread: every entry binds its device first.
//   - Copy directions are CNRT's (host-to-device is 0), never CUDA's.
//   - The asynchronous copy takes the queue BEFORE the direction; a queue wait takes the
//     notifier first; the elapsed time comes out through the last argument.
//   - "Not ready" is cnrtErrorBusy (documented) or cnrtErrorNotReady (accepted as well).
//   - The legacy stream is CNRT's NULL queue; per-thread streams are plugin-made queues.
//   - Host functions run through a trampoline that marks the thread, so that the blocking
//     entries refuse (NotPermitted) instead of calling CNRT from a host function, which CNRT
//     forbids and which would wait for the very queue that runs the function.
#include <cstring>
#include <memory>
#include <string>
#include <utility>

#include "cambricon_internal.h"
#include "capture_instantiate.h"

namespace infinirt::cambricon {
namespace {

// ---------------------------------------------------------------------------------------------
// Host functions

infinirtError_t RefuseInHostFunction(const char* entry) {
  return plugin::RefuseInHostFunction(TheState().log, entry);
}

// ---------------------------------------------------------------------------------------------
// Queues, directions, flags

// CNRT has no per-thread default queue handle that every version knows (cnrtQueuePerThread is
// 6.14.1's): each host thread gets a queue of its own per device instead, which is what the
// per-thread default stream is (plugin_support.h).
void* CreatePerThreadQueue(int device) {
  void* queue = nullptr;
  if (g_state == nullptr || Bind(device) != infinirtSuccess) return nullptr;
  return TheState().fn.QueueCreate(&queue) == cnrt::kSuccess ? queue : nullptr;
}

void DestroyPerThreadQueue(int device, void* queue) {
  if (g_state != nullptr && Bind(device) == infinirtSuccess) TheState().fn.QueueDestroy(queue);
}

plugin::PerThreadStreams g_per_thread_queues(CreatePerThreadQueue, DestroyPerThreadQueue);

// The CNRT queue for an InfiniRT stream: the legacy stream is the NULL queue (the legacy
// queue since CNDrv 3), the per-thread stream this thread's own queue.
infinirtError_t VendorQueue(int device, infinirtPluginStream_t stream, void** queue) {
  *queue = stream;
  if (stream == INFINIRT_PLUGIN_STREAM_LEGACY) *queue = nullptr;
  if (stream != INFINIRT_PLUGIN_STREAM_PER_THREAD) return infinirtSuccess;
  *queue = g_per_thread_queues.Get(device);
  if (*queue != nullptr) return infinirtSuccess;
  Log(INFINIRT_LOG_DEBUG, "cnrtQueueCreate failed for the per-thread stream");
  return infinirtErrorUnknown;
}

// Binds the device and finds the queue: the start of every entry that takes a stream.
infinirtError_t BindQueue(int device, infinirtPluginStream_t stream, void** queue) {
  if (const infinirtError_t e = Bind(device)) return e;
  return VendorQueue(device, stream, queue);
}

int VendorDirection(enum infinirtMemcpyKind kind) {
  switch (kind) {
    case infinirtMemcpyHostToHost:
      return cnrt::kMemcpyHostToHost;
    case infinirtMemcpyHostToDevice:
      return cnrt::kMemcpyHostToDev;
    case infinirtMemcpyDeviceToHost:
      return cnrt::kMemcpyDevToHost;
    case infinirtMemcpyDeviceToDevice:
      return cnrt::kMemcpyDevToDev;
    default:  // the core resolves infinirtMemcpyDefault; CNRT's own inference otherwise
      return cnrt::kMemcpyNoDirection;
  }
}

// CNRT has no blocking-sync notifier (host waits spin or block device-wide, as
// cnrtSetDeviceFlag says), so infinirtEventBlockingSync changes nothing but how the host waits.
unsigned int VendorNotifierFlags(unsigned int flags) {
  unsigned int vendor = cnrt::kNotifierDefault;
  if (flags & infinirtEventDisableTiming) vendor |= cnrt::kNotifierDisableTimingSw;
  // CNRT requires DISABLE_TIMING_ALL with INTERPROCESS (InfiniRT requires DisableTiming).
  if (flags & infinirtEventInterprocess) {
    vendor |= cnrt::kNotifierInterprocess | cnrt::kNotifierDisableTimingAll;
  }
  return vendor;
}

}  // namespace

void StartPerThreadQueues() { g_per_thread_queues.NewEpoch(); }
void RetirePerThreadQueues() { g_per_thread_queues.Retire(); }

// CUDA device attributes that CNRT answers under its own number.
struct AttributePair {
  enum infinirtDeviceAttr infinirt;
  int cnrt;
};
constexpr AttributePair kAttributes[] = {
    {infinirtDevAttrComputeCapabilityMajor, cnrt::kAttrComputeCapabilityMajor},
    {infinirtDevAttrComputeCapabilityMinor, cnrt::kAttrComputeCapabilityMinor},
    {infinirtDevAttrClockRate, cnrt::kAttrIpuClockRate},  // kHz, as CUDA's
    {infinirtDevAttrMemoryClockRate, cnrt::kAttrMemClockRate},
    {infinirtDevAttrEccEnabled, cnrt::kAttrEccEnable},
    {infinirtDevAttrGlobalMemoryBusWidth, cnrt::kAttrGmemBusWidth},
    {infinirtDevAttrL2CacheSize, cnrt::kAttrMaxL2CacheSize},
    {infinirtDevAttrPciBusId, cnrt::kAttrPciBusID},
    {infinirtDevAttrPciDeviceId, cnrt::kAttrPciDeviceID},
    {infinirtDevAttrPciDomainId, cnrt::kAttrPciDomainID},
    {infinirtDevAttrStreamPrioritiesSupported, cnrt::kAttrSupportQueuePriorities},
};

int CnrtAttribute(int device, int attr, int* value) {
  return TheState().fn.DeviceGetAttribute(value, attr, device);
}

// A CUDA attribute from CNRT's: mapped one to one, derived (the multiprocessors are the MLU
// cores: clusters times cores per cluster), or NotSupported.
infinirtError_t VendorAttribute(int device, int* value, enum infinirtDeviceAttr attr) {
  if (attr == infinirtDevAttrMemoryPoolsSupported) {  // the stream-ordered allocator's presence
    *value = TheState().fn.MemAllocAsync && TheState().fn.MemFreeAsync ? 1 : 0;
    return infinirtSuccess;
  }
  if (TheState().fn.DeviceGetAttribute == nullptr) return infinirtErrorNotSupported;
  if (attr == infinirtDevAttrMultiProcessorCount) {
    int clusters = 0, cores = 0;
    if (auto e = Check("cnrtDeviceGetAttribute",
                       CnrtAttribute(device, cnrt::kAttrClusterCount, &clusters))) {
      return e;
    }
    if (auto e = Check("cnrtDeviceGetAttribute",
                       CnrtAttribute(device, cnrt::kAttrMcorePerCluster, &cores))) {
      return e;
    }
    *value = clusters * cores;
    return infinirtSuccess;
  }
  if (attr == infinirtDevAttrComputeMode) {
    // cnrtAttrComputeMode is in CNRT 6.14.1's header, not in 6.0.2's, where its number may
    // name nothing or another attribute.
    if (RuntimeOlderThan(6, 14)) return infinirtErrorNotSupported;
    int mode = 0;
    if (auto e =
            Check("cnrtDeviceGetAttribute", CnrtAttribute(device, cnrt::kAttrComputeMode, &mode))) {
      return e;
    }
    constexpr int kCudaComputeModeExclusiveProcess = 3;
    *value = mode == cnrt::kComputeModeExclusiveProcess ? kCudaComputeModeExclusiveProcess : 0;
    return infinirtSuccess;
  }
  for (const AttributePair& pair : kAttributes) {
    if (pair.infinirt == attr) {
      return Check("cnrtDeviceGetAttribute", CnrtAttribute(device, pair.cnrt, value));
    }
  }
  return infinirtErrorNotSupported;
}

infinirtError_t CambriconPlugin::DeviceGetAttribute(int device, int* value,
                                                    enum infinirtDeviceAttr attr) {
  if (TheState().fn.DeviceGetAttribute == nullptr && attr != infinirtDevAttrMemoryPoolsSupported) {
    return infinirtErrorNotSupported;
  }
  return VendorAttribute(device, value, attr);
}

void FillName(int device, struct infinirtDeviceProp* prop) {
  alignas(64) static thread_local char buffer[16384];  // larger than any cnrtDeviceProp_t
  if (TheState().fn.get_device_properties != nullptr &&
      Check(TheState().properties_symbol, TheState().fn.get_device_properties(buffer, device)) ==
          infinirtSuccess) {
    plugin::CopyText(prop->name, sizeof(prop->name), std::string(buffer, strnlen(buffer, 255)));
    return;
  }
  plugin::CopyText(prop->name, sizeof(prop->name), "Cambricon MLU " + std::to_string(device));
}

infinirtError_t CambriconPlugin::GetDeviceProperties(int device, struct infinirtDeviceProp* prop) {
  FillName(device, prop);
  auto attribute = [&](enum infinirtDeviceAttr attr, int* field) {
    VendorAttribute(device, field, attr);  // unanswered attributes stay 0
  };
  attribute(infinirtDevAttrComputeCapabilityMajor, &prop->major);
  attribute(infinirtDevAttrComputeCapabilityMinor, &prop->minor);
  attribute(infinirtDevAttrMultiProcessorCount, &prop->multiProcessorCount);
  attribute(infinirtDevAttrEccEnabled, &prop->ECCEnabled);
  attribute(infinirtDevAttrPciBusId, &prop->pciBusID);
  attribute(infinirtDevAttrPciDeviceId, &prop->pciDeviceID);
  attribute(infinirtDevAttrPciDomainId, &prop->pciDomainID);
  attribute(infinirtDevAttrGlobalMemoryBusWidth, &prop->memoryBusWidth);
  attribute(infinirtDevAttrL2CacheSize, &prop->l2CacheSize);
  attribute(infinirtDevAttrStreamPrioritiesSupported, &prop->streamPrioritiesSupported);
  attribute(infinirtDevAttrMemoryPoolsSupported, &prop->memoryPoolsSupported);
  size_t free_bytes = 0;
  if (TheState().fn.MemGetInfo != nullptr && Bind(device) == infinirtSuccess) {
    CNRT_CALL(MemGetInfo, &free_bytes, &prop->totalGlobalMem);
  }
  return infinirtSuccess;
}

infinirtError_t CambriconPlugin::DriverGetVersion(int device, int* version) {
  if (TheState().fn.DriverGetVersion == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  int major = 0, minor = 0, patch = 0;
  if (const infinirtError_t e = CNRT_CALL(DriverGetVersion, &major, &minor, &patch)) return e;
  *version = VersionNumber(major, minor);
  return infinirtSuccess;
}

infinirtError_t CambriconPlugin::DeviceSynchronize(int device) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("DeviceSynchronize");
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(SyncDevice);
}

infinirtError_t CambriconPlugin::DeviceReset(int device) {
  if (TheState().fn.DeviceReset == nullptr) return infinirtErrorNotSupported;
  if (plugin::InHostFunction()) return RefuseInHostFunction("DeviceReset");
  if (const infinirtError_t e = Bind(device)) return e;
  const infinirtError_t error = CNRT_CALL(DeviceReset);
  // The reset destroyed the device's queues, the per-thread ones too: every thread makes new
  // ones (the other devices' per-thread queues are forgotten, not destroyed), and selects its
  // device again.
  g_per_thread_queues.NewEpoch();
  TheState().binding.Invalidate();
  return error;
}

// ---------------------------------------------------------------------------------------------
// Entries: memory

infinirtError_t CambriconPlugin::MemGetInfo(int device, size_t* free_bytes, size_t* total_bytes) {
  if (TheState().fn.MemGetInfo == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(MemGetInfo, free_bytes, total_bytes);
}

infinirtError_t CambriconPlugin::Malloc(int device, void** ptr, size_t size) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(Malloc, ptr, size);
}

// Waits for the device first: CUDA's Free does (S22), and CNRT does not document that cnrtFree
// waits for the work that may still use the memory.
infinirtError_t CambriconPlugin::Free(int device, void* ptr) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("Free");
  if (const infinirtError_t e = Bind(device)) return e;
  if (const infinirtError_t e = CNRT_CALL(SyncDevice)) return e;
  return CNRT_CALL(Free, ptr);
}

// cnrtHostMalloc takes no flags: portable, mapped and write-combined memory are not offered.
infinirtError_t CambriconPlugin::HostAlloc(int device, void** ptr, size_t size,
                                           unsigned int flags) {
  if (flags != infinirtHostAllocDefault) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(HostMalloc, ptr, size);
}

infinirtError_t CambriconPlugin::FreeHost(int device, void* ptr) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("FreeHost");
  if (const infinirtError_t e = Bind(device)) return e;
  if (const infinirtError_t e = CNRT_CALL(SyncDevice)) return e;
  return CNRT_CALL(FreeHost, ptr);
}

// Without CNRT's queue-ordered allocator (as in CNRT 6.0.2) the plugin keeps the order by waiting
// for the queue: correct, not asynchronous.
infinirtError_t CambriconPlugin::MallocAsync(int device, void** ptr, size_t size,
                                             infinirtPluginStream_t stream) {
  void* queue = nullptr;
  if (const infinirtError_t e = BindQueue(device, stream, &queue)) return e;
  if (TheState().fn.MemAllocAsync != nullptr) return CNRT_CALL(MemAllocAsync, ptr, size, queue);
  if (plugin::InHostFunction()) return RefuseInHostFunction("MallocAsync");
  if (const infinirtError_t e = CNRT_CALL(QueueSync, queue)) return e;
  return CNRT_CALL(Malloc, ptr, size);
}

infinirtError_t CambriconPlugin::FreeAsync(int device, void* ptr, infinirtPluginStream_t stream) {
  void* queue = nullptr;
  if (const infinirtError_t e = BindQueue(device, stream, &queue)) return e;
  if (TheState().fn.MemFreeAsync != nullptr) return CNRT_CALL(MemFreeAsync, ptr, queue);
  if (plugin::InHostFunction()) return RefuseInHostFunction("FreeAsync");
  if (const infinirtError_t e = CNRT_CALL(QueueSync, queue)) return e;
  return CNRT_CALL(Free, ptr);
}

infinirtError_t CambriconPlugin::Memcpy(int device, void* dst, const void* src, size_t count,
                                        enum infinirtMemcpyKind kind) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("Memcpy");
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(Memcpy, dst, const_cast<void*>(src), count, VendorDirection(kind));
}

// CNRT's asynchronous copy has no host-to-host direction (6.14.1): the plugin waits for the
// queue and copies synchronously, which also makes the copy complete on return as the ABI
// requires. The others go to the copy with the queue before the direction.
infinirtError_t CambriconPlugin::MemcpyAsync(int device, void* dst, const void* src, size_t count,
                                             enum infinirtMemcpyKind kind,
                                             infinirtPluginStream_t stream) {
  if (kind == infinirtMemcpyHostToHost && plugin::InHostFunction()) {
    return RefuseInHostFunction("host-to-host MemcpyAsync");  // before anything is enqueued
  }
  void* queue = nullptr;
  if (const infinirtError_t e = BindQueue(device, stream, &queue)) return e;
  void* source = const_cast<void*>(src);  // CNRT's prototypes take a non-const source
  if (kind == infinirtMemcpyHostToHost) {
    if (const infinirtError_t e = CNRT_CALL(QueueSync, queue)) return e;
    return CNRT_CALL(Memcpy, dst, source, count, cnrt::kMemcpyHostToHost);
  }
  return Check(TheState().memcpy_async_symbol,
               TheState().fn.memcpy_async(dst, source, count, queue, VendorDirection(kind)));
}

// The memory type CNRT reports for a pointer (cnrtMemType_t), or -1 when it cannot tell.
int MemTypeOf(const void* ptr) {
  if (TheState().fn.PointerGetAttributes == nullptr) return -1;
  alignas(64) unsigned char attributes[256] = {};  // larger than cnrtPointerAttributes_t
  if (TheState().fn.PointerGetAttributes(attributes, ptr) != cnrt::kSuccess) return -1;
  int type = cnrt::kMemTypeUnregistered;  // the first field
  std::memcpy(&type, attributes, sizeof(type));
  return type;
}

// InfiniRT lets memsets reach page-locked host memory, as CUDA does, and the core hands the
// plugin only that or this backend's device memory; CNRT's memset takes device addresses. So
// memory that CNRT's memset refuses and that CNRT does not call device memory is host memory,
// which the plugin sets on the host.
bool IsHostMemsetRefusal(int status, const void* ptr) {
  if (status != cnrt::kErrorArgsInvalid) return false;
  const int type = MemTypeOf(ptr);
  return type == cnrt::kMemTypeHost || type == cnrt::kMemTypeUnregistered;
}

struct HostMemset {
  void* ptr;
  int value;
  size_t count;
};

void RunHostMemset(void* data) {
  std::unique_ptr<HostMemset> set(static_cast<HostMemset*>(data));
  std::memset(set->ptr, set->value, set->count);
}

// Sets host memory in queue order, from a host function.
infinirtError_t HostMemsetAsync(void* queue, void* ptr, int value, size_t count) {
  if (TheState().fn.InvokeHostFunc == nullptr) return infinirtErrorNotSupported;
  auto set = std::make_unique<HostMemset>(HostMemset{ptr, value, count});
  const infinirtError_t error = CNRT_CALL(InvokeHostFunc, queue, RunHostMemset, set.get());
  if (error == infinirtSuccess) set.release();  // RunHostMemset owns it now
  return error;
}

infinirtError_t CambriconPlugin::Memset(int device, void* ptr, int value, size_t count) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("Memset");
  if (const infinirtError_t e = Bind(device)) return e;
  const int status = TheState().fn.Memset(ptr, value, count);
  if (!IsHostMemsetRefusal(status, ptr)) return Check("cnrtMemset", status);
  // Host memory: set after the device's work, which a synchronous memset is ordered after.
  if (const infinirtError_t e = CNRT_CALL(SyncDevice)) return e;
  std::memset(ptr, value, count);
  return infinirtSuccess;
}

infinirtError_t CambriconPlugin::MemsetAsync(int device, void* ptr, int value, size_t count,
                                             infinirtPluginStream_t stream) {
  void* queue = nullptr;
  if (const infinirtError_t e = BindQueue(device, stream, &queue)) return e;
  const int status = TheState().fn.MemsetAsync(ptr, value, count, queue);
  if (!IsHostMemsetRefusal(status, ptr)) return Check("cnrtMemsetAsync", status);
  return HostMemsetAsync(queue, ptr, value, count);
}

// The memory-pool entries act on the device's default pool, whose attributes CNRT numbers as
// CUDA does (cnrtMemPoolAttr_t 1..8, same value types).
template <class Body>
infinirtError_t WithDefaultPool(int device, Body&& body) {
  if (!HasMemPools(TheState().fn)) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  void* pool = nullptr;
  if (const infinirtError_t e = CNRT_CALL(DeviceGetDefaultMemPool, &pool, device)) return e;
  return body(pool);
}

infinirtError_t CambriconPlugin::MemPoolGetAttribute(int device, enum infinirtMemPoolAttr attr,
                                                     void* value) {
  return WithDefaultPool(device, [&](void* pool) {
    return CNRT_CALL(MemPoolGetAttribute, pool, static_cast<int>(attr), value);
  });
}

infinirtError_t CambriconPlugin::MemPoolSetAttribute(int device, enum infinirtMemPoolAttr attr,
                                                     void* value) {
  return WithDefaultPool(device, [&](void* pool) {
    return CNRT_CALL(MemPoolSetAttribute, pool, static_cast<int>(attr), value);
  });
}

infinirtError_t CambriconPlugin::MemPoolTrimTo(int device, size_t min_bytes_to_keep) {
  return WithDefaultPool(
      device, [&](void* pool) { return CNRT_CALL(MemPoolTrimTo, pool, min_bytes_to_keep); });
}

// ---------------------------------------------------------------------------------------------
// Entries: streams and events

// CNRT queues take no flags (cnrtQueueCreateWithPriority's are reserved) and, where the NULL
// queue is the legacy queue, synchronise with it: a non-blocking queue cannot be had.
infinirtError_t CambriconPlugin::StreamCreate(int device, infinirtPluginStream_t* stream,
                                              unsigned int flags) {
  if (flags & infinirtStreamNonBlocking) {
    Log(INFINIRT_LOG_DEBUG, "CNRT has no non-blocking queue");
    return infinirtErrorNotSupported;
  }
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(QueueCreate, stream);
}

// CNRT numbers queue priorities as CUDA does (lower runs first; its range is [7, 0]).
infinirtError_t CambriconPlugin::DeviceGetStreamPriorityRange(int device, int* least,
                                                              int* greatest) {
  if (TheState().fn.DeviceGetQueuePriorityRange == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(DeviceGetQueuePriorityRange, least, greatest);
}

infinirtError_t CambriconPlugin::StreamCreateWithPriority(int device,
                                                          infinirtPluginStream_t* stream,
                                                          unsigned int flags, int priority) {
  if (TheState().fn.QueueCreateWithPriority == nullptr) return infinirtErrorNotSupported;
  if (flags & infinirtStreamNonBlocking) {
    Log(INFINIRT_LOG_DEBUG, "CNRT has no non-blocking queue");
    return infinirtErrorNotSupported;
  }
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(QueueCreateWithPriority, stream, 0u, priority);
}

infinirtError_t CambriconPlugin::StreamDestroy(int device, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(QueueDestroy, stream);
}

infinirtError_t CambriconPlugin::StreamSynchronize(int device, infinirtPluginStream_t stream) {
  if (plugin::InHostFunction()) return RefuseInHostFunction("StreamSynchronize");
  void* queue = nullptr;
  if (const infinirtError_t e = BindQueue(device, stream, &queue)) return e;
  return CNRT_CALL(QueueSync, queue);
}

infinirtError_t CambriconPlugin::StreamQuery(int device, infinirtPluginStream_t stream) {
  void* queue = nullptr;
  if (const infinirtError_t e = BindQueue(device, stream, &queue)) return e;
  return CNRT_CALL(QueueQuery, queue);  // busy -> NotReady (TranslateStatus)
}

infinirtError_t CambriconPlugin::StreamWaitEvent(int device, infinirtPluginStream_t stream,
                                                 infinirtPluginEvent_t event, unsigned int) {
  void* queue = nullptr;
  if (const infinirtError_t e = BindQueue(device, stream, &queue)) return e;
  return CNRT_CALL(QueueWaitNotifier, event, queue, 0u);  // notifier first; flag 0
}

// The plugin's streams are CNRT queues as they are: the legacy stream's is the NULL queue.
infinirtError_t CambriconPlugin::StreamGetNativeHandle(int device, infinirtPluginStream_t stream,
                                                       void** native_stream) {
  return BindQueue(device, stream, native_stream);
}

// Another library's queue becomes a plugin stream as it is. CNRT queues always synchronise with
// the legacy (NULL) queue, so it is blocking. CNRT cannot tell a queue's device: cnrtQueueQuery,
// with the device bound, refuses a handle CNRT does not know.
infinirtError_t CambriconPlugin::StreamAdopt(int device, void* native_stream,
                                             infinirtPluginStream_t* stream, unsigned int* flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  const infinirtError_t state = CNRT_CALL(QueueQuery, native_stream);
  if (state != infinirtSuccess && state != infinirtErrorNotReady) return state;
  *flags = 0;
  *stream = native_stream;
  return infinirtSuccess;
}

// Nothing of the plugin's to free, and the queue is its maker's.
infinirtError_t CambriconPlugin::StreamRelease(int, infinirtPluginStream_t) {
  return infinirtSuccess;
}

infinirtError_t CambriconPlugin::LaunchHostFunc(int device, infinirtPluginStream_t stream,
                                                infinirtHostFn_t fn, void* user_data) {
  if (TheState().fn.InvokeHostFunc == nullptr) return infinirtErrorNotSupported;
  void* queue = nullptr;
  if (const infinirtError_t e = BindQueue(device, stream, &queue)) return e;
  auto call = std::make_unique<plugin::HostCall>(plugin::HostCall{fn, user_data, true});
  const infinirtError_t error =
      CNRT_CALL(InvokeHostFunc, queue, &plugin::HostCall::Run, call.get());
  if (error == infinirtSuccess) call.release();  // deletes itself once run
  return error;
}

infinirtError_t CambriconPlugin::EventCreate(int device, infinirtPluginEvent_t* event,
                                             unsigned int flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  // CNRT before 6.14 has neither the INTERPROCESS notifier flag nor the DISABLE_TIMING_ALL that
  // must come with it, and refuses them as an invalid argument: a valid request it cannot serve.
  if ((flags & infinirtEventInterprocess) && RuntimeOlderThan(6, 14)) {
    Log(INFINIRT_LOG_DEBUG, "EventCreate: CNRT has interprocess notifiers since 6.14.1");
    return infinirtErrorNotSupported;
  }
  const unsigned int vendor_flags = VendorNotifierFlags(flags);
  if (TheState().fn.NotifierCreateWithFlags != nullptr) {
    return CNRT_CALL(NotifierCreateWithFlags, event, vendor_flags);
  }
  if (vendor_flags != cnrt::kNotifierDefault) return infinirtErrorNotSupported;
  return CNRT_CALL(NotifierCreate, event);
}

// The plugin's events are CNRT notifiers as they are.
infinirtError_t CambriconPlugin::EventGetNativeHandle(int, infinirtPluginEvent_t event,
                                                      void** native_event) {
  *native_event = event;
  return infinirtSuccess;
}

infinirtError_t CambriconPlugin::EventDestroy(int device, infinirtPluginEvent_t event) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(NotifierDestroy, event);
}

infinirtError_t CambriconPlugin::EventRecord(int device, infinirtPluginEvent_t event,
                                             infinirtPluginStream_t stream) {
  void* queue = nullptr;
  if (const infinirtError_t e = BindQueue(device, stream, &queue)) return e;
  return CNRT_CALL(PlaceNotifier, event, queue);
}

infinirtError_t CambriconPlugin::EventQuery(int device, infinirtPluginEvent_t event) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(QueryNotifier, event);  // busy -> NotReady (TranslateStatus)
}

// From a host function only a complete event may be waited for (it needs no wait).
infinirtError_t CambriconPlugin::EventSynchronize(int device, infinirtPluginEvent_t event) {
  if (const infinirtError_t e = Bind(device)) return e;
  if (plugin::InHostFunction()) {
    const infinirtError_t state = CNRT_CALL(QueryNotifier, event);
    return state == infinirtErrorNotReady ? RefuseInHostFunction("EventSynchronize") : state;
  }
  return CNRT_CALL(WaitNotifier, event);
}

infinirtError_t CambriconPlugin::EventElapsedTime(int device, float* ms,
                                                  infinirtPluginEvent_t start,
                                                  infinirtPluginEvent_t end) {
  if (const infinirtError_t e = Bind(device)) return e;
  const int status = TheState().fn.NotifierElapsedTime(start, end, ms);  // ms last
  // cnrt.h: a notifier without timing gives cnrtErrorArgsInvalid, one never placed
  // cnrtErrorCndrvFuncCall; CUDA answers InvalidResourceHandle for both.
  if (status == cnrt::kErrorArgsInvalid || status == cnrt::kErrorCndrvFuncCall) {
    Log(INFINIRT_LOG_DEBUG, "cnrtNotifierElapsedTime returned " + ErrorText(status));
    return infinirtErrorInvalidResourceHandle;
  }
  return Check("cnrtNotifierElapsedTime", status);  // busy -> NotReady
}

// ---------------------------------------------------------------------------------------------
// Entries: graphs, built by capturing the nodes with CNRT's queue capture

// Nodes CNRT's capture holds as InfiniRT means them. Not captured: host functions (their
// trampoline record is freed after one run, and a graph runs many times), memsets of host
// memory (set by host functions too), and copies with host memory that CNRT does not call
// page-locked (CNRT's programming guide: captured copies must use page-locked host memory).
bool CapturableByCnrt(const infinirtPluginGraphNode* nodes, size_t count) {
  for (size_t i = 0; i < count; ++i) {
    const infinirtPluginGraphNode& node = nodes[i];
    if (node.kind == INFINIRT_GRAPH_NODE_HOST) return false;
    if (node.kind == INFINIRT_GRAPH_NODE_MEMSET) {
      if (MemTypeOf(node.params.set.ptr) != cnrt::kMemTypeDevice) return false;
    }
    if (node.kind != INFINIRT_GRAPH_NODE_MEMCPY) continue;
    const auto& copy = node.params.copy;
    if (copy.kind == infinirtMemcpyHostToDevice && MemTypeOf(copy.src) != cnrt::kMemTypeHost) {
      return false;
    }
    if (copy.kind == infinirtMemcpyDeviceToHost && MemTypeOf(copy.dst) != cnrt::kMemTypeHost) {
      return false;
    }
  }
  return true;
}

// The private queue a graph is captured on. InstantiateByCapture asks for a non-blocking
// stream so that no other work meets the capture; CNRT has none, but nothing but the capture
// ever enters this queue, and captured work does not run.
infinirtError_t CreateCaptureQueue(int device, infinirtPluginStream_t* stream, unsigned int) {
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(QueueCreate, stream);
}

infinirtError_t BeginCapture(infinirtPluginStream_t queue) {
  return CNRT_CALL(QueueBeginCapture, queue, cnrt::kQueueCaptureModeRelaxed);
}

infinirtError_t EndCapture(infinirtPluginStream_t queue, infinirtPluginGraphExec_t* exec) {
  void* topo = nullptr;
  infinirtError_t error = CNRT_CALL(QueueEndCapture, queue, &topo);
  if (error == infinirtSuccess && exec != nullptr) {
    error = CNRT_CALL(TaskTopoInstantiate, exec, topo, nullptr, nullptr, 0);  // all 5 arguments
  }
  if (topo != nullptr) CNRT_CALL(TaskTopoDestroy, topo);  // the entity keeps what it needs
  return error;
}

infinirtError_t CambriconPlugin::GraphInstantiate(int device, infinirtPluginGraphExec_t* exec,
                                                  const infinirtPluginGraphNode* nodes,
                                                  size_t node_count, unsigned long long) {
  if (!HasNativeGraphs(TheState().fn))
    return infinirtErrorNotSupported;  // the core replays the nodes
  if (const infinirtError_t e = Bind(device)) return e;
  if (!CapturableByCnrt(nodes, node_count)) return infinirtErrorNotSupported;
  infinirtPluginTable self = *infinirtPluginGetTable();
  self.StreamCreate = CreateCaptureQueue;
  plugin::VendorCapture capture;
  capture.begin = BeginCapture;
  capture.end = EndCapture;
  return plugin::InstantiateByCapture(self, device, nodes, node_count, capture, exec);
}

infinirtError_t CambriconPlugin::GraphLaunch(int device, infinirtPluginGraphExec_t exec,
                                             infinirtPluginStream_t stream) {
  if (!HasNativeGraphs(TheState().fn)) return infinirtErrorNotSupported;
  void* queue = nullptr;
  if (const infinirtError_t e = BindQueue(device, stream, &queue)) return e;
  return CNRT_CALL(TaskTopoEntityInvoke, exec, queue);
}

infinirtError_t CambriconPlugin::GraphExecDestroy(int device, infinirtPluginGraphExec_t exec) {
  if (!HasNativeGraphs(TheState().fn)) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return CNRT_CALL(TaskTopoEntityDestroy, exec);
}

}  // namespace infinirt::cambricon
