// The Ascend plugin's translation: InfiniRT's plugin entries as AscendCL (CANN) calls. What ACL
// lacks of CUDA's semantics the plugin adds, and its declarations say how
// (ascend_declarations.cc):
//   - aclInit once at Initialize; every host thread selects its device with aclrtSetDevice;
//   - CUDA's legacy-stream ordering over ACL's independent streams (ascend_order.cc);
//   - InfiniRT's per-thread default stream is a blocking ACL stream per thread;
//   - host-to-host MemcpyAsync completes before returning (the copy is done on the host);
//   - host functions run through a trampoline, so that blocking calls made from them answer
//     NotPermitted without reaching ACL (which forbids runtime calls in callbacks);
//   - destroying a stream or exec with pending work returns at once (ACL's calls would wait or
//     refuse): the plugin destroys it when its work is done;
//   - "not ready" comes in status out-parameters, with ACL_SUCCESS as the return value.
#include <cstring>
#include <memory>
#include <string>

#include "ascend_state.h"
#include "capture_instantiate.h"

namespace infinirt::ascend {
namespace {

// ---------------------------------------------------------------------------------------------
// Streams the entries receive

thread_local infinirtError_t t_per_thread_error = infinirtSuccess;

void* CreatePerThreadStream(int device) {
  Stream* stream = nullptr;
  if (!HasState()) return nullptr;
  t_per_thread_error = Bind(device);
  if (t_per_thread_error == infinirtSuccess) {
    t_per_thread_error = CreateStream(device, /*blocking=*/true, &stream);
  }
  return t_per_thread_error == infinirtSuccess ? stream : nullptr;
}

void DestroyPerThreadStream(int device, void* stream) {
  if (HasState() && Bind(device) == infinirtSuccess) {
    DestroyStream(static_cast<Stream*>(stream));
  }
}

plugin::PerThreadStreams g_per_thread_streams(CreatePerThreadStream, DestroyPerThreadStream);

// The plugin stream behind an entry's stream argument; nullptr for the legacy stream (the ACL
// default stream of the device's context).
infinirtError_t Resolve(int device, infinirtPluginStream_t handle, Stream** stream) {
  *stream = nullptr;
  if (handle == INFINIRT_PLUGIN_STREAM_LEGACY) return infinirtSuccess;
  if (handle == INFINIRT_PLUGIN_STREAM_PER_THREAD) {
    *stream = static_cast<Stream*>(g_per_thread_streams.Get(device));
    if (*stream != nullptr) return infinirtSuccess;
    return t_per_thread_error != infinirtSuccess ? t_per_thread_error : infinirtErrorUnknown;
  }
  *stream = static_cast<Stream*>(handle);
  return infinirtSuccess;
}

// ---------------------------------------------------------------------------------------------
// Host functions. CANN forbids runtime calls in a host function ("may cause errors or
// deadlock"); InfiniRT answers NotPermitted to the blocking ones. The trampoline marks the thread
// while the function runs, and the blocking entries refuse there before any ACL call.

#define REFUSE_IN_HOST_FUNCTION(what)                                                        \
  do {                                                                                       \
    if (plugin::InHostFunction()) return plugin::RefuseInHostFunction(TheState().log, what); \
  } while (0)

int VendorKind(enum infinirtMemcpyKind kind) {
  const int index = static_cast<int>(kind);
  return index >= 0 && index < 5 ? acl::kMemcpyKind[index] : -1;
}

}  // namespace

void StartPerThreadStreams() { g_per_thread_streams.NewEpoch(); }
void RetirePerThreadStreams() { g_per_thread_streams.Retire(); }

// Total memory of the current device: HBM, or DDR on parts without HBM (Atlas inference cards).
infinirtError_t ReadMemInfo(size_t* free_bytes, size_t* total_bytes) {
  if (const infinirtError_t e = ACL_CALL(aclrtGetMemInfo, acl::kHbmMem, free_bytes, total_bytes)) {
    return e;
  }
  if (*total_bytes != 0) return infinirtSuccess;
  return ACL_CALL(aclrtGetMemInfo, acl::kDdrMem, free_bytes, total_bytes);
}

int Capability(int device, int info) {
  int64_t value = 0;
  if (TheState().fn.aclGetDeviceCapability == nullptr) return 0;
  if (ACL_CALL(aclGetDeviceCapability, static_cast<uint32_t>(device), info, &value)) return 0;
  return static_cast<int>(value);
}

infinirtError_t AscendPlugin::GetDeviceProperties(int device, struct infinirtDeviceProp* prop) {
  if (const infinirtError_t e = Bind(device)) return e;
  std::memset(prop, 0, sizeof(*prop));
  const char* soc = TheState().fn.aclrtGetSocName ? TheState().fn.aclrtGetSocName() : nullptr;
  plugin::CopyText(prop->name, sizeof(prop->name),
                   soc != nullptr && *soc != '\0' ? soc : "Ascend NPU");
  prop->multiProcessorCount = Capability(device, acl::kDeviceInfoAiCoreNum);
  prop->l2CacheSize = Capability(device, acl::kDeviceInfoL2Size);
  int least = 0, greatest = 0;
  prop->streamPrioritiesSupported =
      TheState().fn.aclrtCreateStreamWithConfig != nullptr &&
      DeviceGetStreamPriorityRange(device, &least, &greatest) == infinirtSuccess &&
      least != greatest;
  size_t free_bytes = 0;
  if (TheState().fn.aclrtGetMemInfo != nullptr) ReadMemInfo(&free_bytes, &prop->totalGlobalMem);
  return infinirtSuccess;
}

// Peers: ACL's functions as they are (flags 0). The core keeps which access it enabled.
infinirtError_t AscendPlugin::DeviceCanAccessPeer(int device, int* can_access, int peer) {
  if (TheState().fn.aclrtDeviceCanAccessPeer == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  int32_t can = 0;
  if (const infinirtError_t e = ACL_CALL(aclrtDeviceCanAccessPeer, &can, device, peer)) return e;
  *can_access = can != 0;
  return infinirtSuccess;
}

infinirtError_t AscendPlugin::DeviceEnablePeerAccess(int device, int peer) {
  if (TheState().fn.aclrtDeviceEnablePeerAccess == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return ACL_CALL(aclrtDeviceEnablePeerAccess, peer, 0u);
}

infinirtError_t AscendPlugin::DeviceDisablePeerAccess(int device, int peer) {
  if (TheState().fn.aclrtDeviceDisablePeerAccess == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return ACL_CALL(aclrtDeviceDisablePeerAccess, peer);
}

infinirtError_t AscendPlugin::DeviceSynchronize(int device) {
  REFUSE_IN_HOST_FUNCTION("DeviceSynchronize");
  if (const infinirtError_t e = Bind(device)) return e;
  if (const infinirtError_t e = ACL_CALL(aclrtSynchronizeDevice)) return e;
  ReapRetired(device, false);
  return infinirtSuccess;
}

// The core has released the device's streams, events and allocations; what is left is CUDA's
// "wait for the device". aclrtResetDevice is not called: it would also destroy the context
// that other threads (and stream-ordered allocations, which survive a reset) still use.
infinirtError_t AscendPlugin::DeviceReset(int device) { return DeviceSynchronize(device); }

// ---------------------------------------------------------------------------------------------
// Entries: memory

infinirtError_t AscendPlugin::MemGetInfo(int device, size_t* free_bytes, size_t* total_bytes) {
  if (TheState().fn.aclrtGetMemInfo == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return ReadMemInfo(free_bytes, total_bytes);
}

infinirtError_t AscendPlugin::Malloc(int device, void** ptr, size_t size) {
  if (const infinirtError_t e = Bind(device)) return e;
  return ACL_CALL(aclrtMalloc, ptr, size, acl::kMallocHugeFirst);
}

// Free waits for the device first, as cudaFree does (S22).
infinirtError_t AscendPlugin::Free(int device, void* ptr) {
  REFUSE_IN_HOST_FUNCTION("Free");
  if (const infinirtError_t e = Bind(device)) return e;
  if (const infinirtError_t e = ACL_CALL(aclrtSynchronizeDevice)) return e;
  return ACL_CALL(aclrtFree, ptr);
}

infinirtError_t AscendPlugin::HostAlloc(int device, void** ptr, size_t size, unsigned int flags) {
  if (flags != 0) return infinirtErrorNotSupported;  // aclrtMallocHost has no flags
  if (const infinirtError_t e = Bind(device)) return e;
  if (const infinirtError_t e = ACL_CALL(aclrtMallocHost, ptr, size)) return e;
  std::lock_guard<std::mutex> lock(TheState().pinned_mutex);
  TheState().pinned[reinterpret_cast<uintptr_t>(*ptr)] = size;
  return infinirtSuccess;
}

infinirtError_t AscendPlugin::FreeHost(int device, void* ptr) {
  REFUSE_IN_HOST_FUNCTION("FreeHost");
  if (const infinirtError_t e = Bind(device)) return e;
  if (const infinirtError_t e = ACL_CALL(aclrtSynchronizeDevice)) return e;
  if (const infinirtError_t e = ACL_CALL(aclrtFreeHost, ptr)) return e;
  std::lock_guard<std::mutex> lock(TheState().pinned_mutex);
  TheState().pinned.erase(reinterpret_cast<uintptr_t>(ptr));
  return infinirtSuccess;
}

// ACL's stream-ordered allocator (aclrtMemPool*) is an experimental interface that needs a pool
// of fixed maximum size: the plugin keeps the order by waiting for the stream instead.
infinirtError_t AscendPlugin::MallocAsync(int device, void** ptr, size_t size,
                                          infinirtPluginStream_t handle) {
  REFUSE_IN_HOST_FUNCTION("MallocAsync");
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = Resolve(device, handle, &stream)) return e;
  if (const infinirtError_t e = SynchronizeTarget(device, stream)) return e;
  return ACL_CALL(aclrtMalloc, ptr, size, acl::kMallocHugeFirst);
}

infinirtError_t AscendPlugin::FreeAsync(int device, void* ptr, infinirtPluginStream_t handle) {
  REFUSE_IN_HOST_FUNCTION("FreeAsync");
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = Resolve(device, handle, &stream)) return e;
  if (const infinirtError_t e = SynchronizeTarget(device, stream)) return e;
  return ACL_CALL(aclrtFree, ptr);
}

// A synchronous copy is legacy-stream work in CUDA: it runs after the legacy stream and the
// blocking streams. aclrtMemcpy uses no stream, so the plugin waits for them first. destMax is
// the count: InfiniRT has no separate destination capacity.
infinirtError_t AscendPlugin::Memcpy(int device, void* dst, const void* src, size_t count,
                                     enum infinirtMemcpyKind kind) {
  REFUSE_IN_HOST_FUNCTION("Memcpy");
  if (const infinirtError_t e = Bind(device)) return e;
  if (const infinirtError_t e = SynchronizeLegacy(device)) return e;
  return ACL_CALL(aclrtMemcpy, dst, count, src, count, VendorKind(kind));
}

// Host-to-host copies complete before the call returns (the ABI's rule, as in CUDA): the plugin
// waits for the stream and copies on the host, so a refused wait (in a host function) leaves
// nothing enqueued.
infinirtError_t AscendPlugin::MemcpyAsync(int device, void* dst, const void* src, size_t count,
                                          enum infinirtMemcpyKind kind,
                                          infinirtPluginStream_t handle) {
  if (kind == infinirtMemcpyHostToHost) REFUSE_IN_HOST_FUNCTION("host-to-host MemcpyAsync");
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = Resolve(device, handle, &stream)) return e;
  if (kind == infinirtMemcpyHostToHost) {
    if (const infinirtError_t e = SynchronizeTarget(device, stream)) return e;
    std::memcpy(dst, src, count);
    return infinirtSuccess;
  }
  return Enqueue(device, stream, [&](void* acl_stream) {
    return ACL_CALL(aclrtMemcpyAsync, dst, count, src, count, VendorKind(kind), acl_stream);
  });
}

infinirtError_t AscendPlugin::Memset(int device, void* ptr, int value, size_t count) {
  REFUSE_IN_HOST_FUNCTION("Memset");
  if (const infinirtError_t e = Bind(device)) return e;
  if (const infinirtError_t e = SynchronizeLegacy(device)) return e;
  return ACL_CALL(aclrtMemset, ptr, count, value, count);
}

infinirtError_t AscendPlugin::MemsetAsync(int device, void* ptr, int value, size_t count,
                                          infinirtPluginStream_t handle) {
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = Resolve(device, handle, &stream)) return e;
  return Enqueue(device, stream, [&](void* acl_stream) {
    return ACL_CALL(aclrtMemsetAsync, ptr, count, value, count, acl_stream);
  });
}

// ---------------------------------------------------------------------------------------------
// Entries: streams and events

// aclrtCreateStream rather than aclrtCreateStreamWithConfig: the config's priority and flags
// (fast launch, persistent, ...) have no InfiniRT meaning, and aclrtCreateStream is in every
// CANN release. A blocking stream is the same ACL stream plus the plugin's legacy ordering.
infinirtError_t AscendPlugin::StreamCreate(int device, infinirtPluginStream_t* out,
                                           unsigned int flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  const bool blocking = (flags & infinirtStreamNonBlocking) == 0;
  if (const infinirtError_t e = CreateStream(device, blocking, &stream)) return e;
  *out = stream;
  return infinirtSuccess;
}

// ACL numbers stream priorities as CUDA does (lower runs first), from 0 up: the core has clamped
// the priority into the range ACL gave, so it is not negative.
infinirtError_t AscendPlugin::DeviceGetStreamPriorityRange(int device, int* least, int* greatest) {
  if (TheState().fn.aclrtDeviceGetStreamPriorityRange == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  int32_t acl_least = 0, acl_greatest = 0;
  if (const infinirtError_t e =
          ACL_CALL(aclrtDeviceGetStreamPriorityRange, &acl_least, &acl_greatest)) {
    return e;
  }
  *least = acl_least;
  *greatest = acl_greatest;
  return infinirtSuccess;
}

infinirtError_t AscendPlugin::StreamCreateWithPriority(int device, infinirtPluginStream_t* out,
                                                       unsigned int flags, int priority) {
  if (TheState().fn.aclrtCreateStreamWithConfig == nullptr || priority < 0) {
    return infinirtErrorNotSupported;
  }
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  const bool blocking = (flags & infinirtStreamNonBlocking) == 0;
  if (const infinirtError_t e =
          CreateStream(device, blocking, &stream, static_cast<uint32_t>(priority))) {
    return e;
  }
  *out = stream;
  return infinirtSuccess;
}

infinirtError_t AscendPlugin::StreamDestroy(int device, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return DestroyStream(static_cast<Stream*>(stream));
}

infinirtError_t AscendPlugin::StreamSynchronize(int device, infinirtPluginStream_t handle) {
  REFUSE_IN_HOST_FUNCTION("StreamSynchronize");
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = Resolve(device, handle, &stream)) return e;
  if (stream == nullptr) return SynchronizeLegacy(device);
  return ACL_CALL(aclrtSynchronizeStream, stream->acl);
}

infinirtError_t AscendPlugin::StreamQuery(int device, infinirtPluginStream_t handle) {
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = Resolve(device, handle, &stream)) return e;
  if (stream == nullptr) return QueryLegacy(device);
  return QueryStream(stream->acl);
}

infinirtError_t AscendPlugin::StreamWaitEvent(int device, infinirtPluginStream_t handle,
                                              infinirtPluginEvent_t event, unsigned int) {
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = Resolve(device, handle, &stream)) return e;
  return Enqueue(device, stream, [&](void* acl_stream) {
    return ACL_CALL(aclrtStreamWaitEvent, acl_stream, event);  // ACL's wait has no flags
  });
}

// The ACL stream behind an InfiniRT stream: the plugin stream's own, NULL (ACL's default stream)
// for the legacy stream. Work the caller queues on it bypasses the plugin, so the legacy
// ordering is prepared around it first (PrepareForeignWork).
infinirtError_t AscendPlugin::StreamGetNativeHandle(int device, infinirtPluginStream_t handle,
                                                    void** native_stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = Resolve(device, handle, &stream)) return e;
  if (const infinirtError_t e = PrepareForeignWork(device, stream)) return e;
  *native_stream = stream != nullptr ? stream->acl : nullptr;
  return infinirtSuccess;
}

infinirtError_t AscendPlugin::StreamAdopt(int device, void* native_stream,
                                          infinirtPluginStream_t* out, unsigned int* flags) {
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = AdoptStream(device, native_stream, &stream)) return e;
  *flags = stream->blocking ? 0u : static_cast<unsigned int>(infinirtStreamNonBlocking);
  *out = stream;
  return infinirtSuccess;
}

// Releases the plugin's parts (once the stream is idle); the ACL stream stays its maker's.
infinirtError_t AscendPlugin::StreamRelease(int device, infinirtPluginStream_t stream) {
  if (const infinirtError_t e = Bind(device)) return e;
  return DestroyStream(static_cast<Stream*>(stream));
}

infinirtError_t AscendPlugin::LaunchHostFunc(int device, infinirtPluginStream_t handle,
                                             infinirtHostFn_t fn, void* user_data) {
  if (TheState().fn.aclrtLaunchHostFunc == nullptr) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = Resolve(device, handle, &stream)) return e;
  const bool captured = stream != nullptr && stream->capturing;
  auto call = std::make_unique<HostCall>(HostCall{fn, user_data, !captured});
  HostCall* raw = call.get();
  if (const infinirtError_t e = Enqueue(device, stream, [&](void* acl_stream) {
        return ACL_CALL(aclrtLaunchHostFunc, acl_stream, &HostCall::Run, raw);
      })) {
    return e;
  }
  if (captured) {
    stream->captured_calls.push_back(std::move(call));
  } else {
    call.release();  // frees itself once run
  }
  return infinirtSuccess;
}

// ACL_EVENT_SYNC makes the event waitable (aclrtStreamWaitEvent); ACL_EVENT_TIME_LINE gives
// it timestamps, so DisableTiming leaves it out. BlockingSync only changes how a host thread
// waits in CUDA, and ACL has no such choice: the flag is accepted and the wait is ACL's own.
// Interprocess events need IPC functions that InfiniRT does not offer.
infinirtError_t AscendPlugin::EventCreate(int device, infinirtPluginEvent_t* event,
                                          unsigned int flags) {
  if (flags & infinirtEventInterprocess) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  uint32_t vendor_flags = acl::kEventSync;
  if (!(flags & infinirtEventDisableTiming)) vendor_flags |= acl::kEventTimeLine;
  return CreateEvent(event, vendor_flags);
}

infinirtError_t AscendPlugin::EventDestroy(int device, infinirtPluginEvent_t event) {
  if (const infinirtError_t e = Bind(device)) return e;
  return ACL_CALL(aclrtDestroyEvent, event);
}

infinirtError_t AscendPlugin::EventRecord(int device, infinirtPluginEvent_t event,
                                          infinirtPluginStream_t handle) {
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = Resolve(device, handle, &stream)) return e;
  return Enqueue(device, stream,
                 [&](void* acl_stream) { return ACL_CALL(aclrtRecordEvent, event, acl_stream); });
}

// aclrtQueryEventStatus, not the deprecated aclrtQueryEvent whose status values are inverted.
infinirtError_t AscendPlugin::EventQuery(int device, infinirtPluginEvent_t event) {
  if (const infinirtError_t e = Bind(device)) return e;
  int status = acl::kEventRecordedNotReady;
  if (const infinirtError_t e = ACL_CALL(aclrtQueryEventStatus, event, &status)) return e;
  if (status == acl::kEventRecordedComplete) return infinirtSuccess;
  if (status == acl::kEventRecordedNotReady) return infinirtErrorNotReady;
  Log(INFINIRT_LOG_DEBUG, "aclrtQueryEventStatus gave status " + std::to_string(status));
  return infinirtErrorUnknown;
}

infinirtError_t AscendPlugin::EventSynchronize(int device, infinirtPluginEvent_t event) {
  REFUSE_IN_HOST_FUNCTION("EventSynchronize");
  if (const infinirtError_t e = Bind(device)) return e;
  return ACL_CALL(aclrtSynchronizeEvent, event);
}

infinirtError_t AscendPlugin::EventElapsedTime(int device, float* ms, infinirtPluginEvent_t start,
                                               infinirtPluginEvent_t end) {
  if (const infinirtError_t e = Bind(device)) return e;
  return ACL_CALL(aclrtEventElapsedTime, ms, start, end);
}

// The plugin's events are ACL events as they are.
infinirtError_t AscendPlugin::EventGetNativeHandle(int, infinirtPluginEvent_t event,
                                                   void** native_event) {
  *native_event = event;
  return infinirtSuccess;
}

// ---------------------------------------------------------------------------------------------
// Entries: graphs, through ACL's stream capture into a model run instance (aclmdlRI), which is
// already executable: the exec is the aclmdlRI.

bool IsPinned(const void* p, size_t count) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(p);
  std::lock_guard<std::mutex> lock(TheState().pinned_mutex);
  auto after = TheState().pinned.upper_bound(address);
  if (after == TheState().pinned.begin()) return false;
  const auto& [base, size] = *std::prev(after);
  return address - base < size && count <= size - (address - base);
}

// ACL captures copies with a host side only from and to aclrtMallocHost memory (CANN's capture
// guide); graphs with other copies are replayed by the core.
bool Capturable(const infinirtPluginGraphNode* nodes, size_t node_count) {
  for (size_t i = 0; i < node_count; ++i) {
    if (nodes[i].kind != INFINIRT_GRAPH_NODE_MEMCPY) continue;
    const auto& copy = nodes[i].params.copy;
    if (copy.kind == infinirtMemcpyHostToDevice && !IsPinned(copy.src, copy.count)) return false;
    if (copy.kind == infinirtMemcpyDeviceToHost && !IsPinned(copy.dst, copy.count)) return false;
  }
  return true;
}

infinirtError_t BeginCapture(infinirtPluginStream_t handle) {
  Stream* stream = static_cast<Stream*>(handle);
  const infinirtError_t e = ACL_CALL(aclmdlRICaptureBegin, stream->acl, acl::kCaptureModeRelaxed);
  stream->capturing = e == infinirtSuccess;
  return e;
}

infinirtError_t EndCapture(infinirtPluginStream_t handle, infinirtPluginGraphExec_t* exec) {
  Stream* stream = static_cast<Stream*>(handle);
  void* acl_stream = stream->acl;
  stream->capturing = false;
  int status = acl::kCaptureStatusActive;
  void* building = nullptr;
  const infinirtError_t info = ACL_CALL(aclmdlRICaptureGetInfo, acl_stream, &status, &building);
  void* model = nullptr;
  infinirtError_t error = ACL_CALL(aclmdlRICaptureEnd, acl_stream, &model);
  if (error == infinirtSuccess && info == infinirtSuccess && status != acl::kCaptureStatusActive) {
    error = infinirtErrorStreamCaptureInvalidated;
  }
  auto made = std::make_unique<Exec>();
  made->model = model;
  made->host_calls = std::move(stream->captured_calls);  // freed with the exec, or now
  stream->captured_calls.clear();
  if (error == infinirtSuccess && exec != nullptr) {
    error = CreateEvent(&made->done, acl::kEventSync);
  }
  if (error != infinirtSuccess || exec == nullptr) {
    if (model != nullptr) ACL_CALL(aclmdlRIDestroy, model);
    return error;
  }
  *exec = made.release();
  return infinirtSuccess;
}

infinirtError_t AscendPlugin::GraphInstantiate(int device, infinirtPluginGraphExec_t* exec,
                                               const infinirtPluginGraphNode* nodes,
                                               size_t node_count, unsigned long long) {
  // Without capture, or for nodes ACL cannot capture, the core replays the nodes.
  if (!HasNativeGraphs() || !Capturable(nodes, node_count)) return infinirtErrorNotSupported;
  plugin::VendorCapture capture;
  capture.begin = BeginCapture;
  capture.end = EndCapture;
  return plugin::InstantiateByCapture(*infinirtPluginGetTable(), device, nodes, node_count, capture,
                                      exec);
}

// Each launch waits for the previous launch of the same exec, whichever stream ran it.
infinirtError_t AscendPlugin::GraphLaunch(int device, infinirtPluginGraphExec_t handle,
                                          infinirtPluginStream_t stream_handle) {
  if (!HasNativeGraphs()) return infinirtErrorNotSupported;  // no exec of the plugin's exists
  if (const infinirtError_t e = Bind(device)) return e;
  Stream* stream = nullptr;
  if (const infinirtError_t e = Resolve(device, stream_handle, &stream)) return e;
  Exec* exec = static_cast<Exec*>(handle);
  return Enqueue(device, stream, [&](void* acl_stream) -> infinirtError_t {
    if (exec->launched) {
      if (const infinirtError_t e = ACL_CALL(aclrtStreamWaitEvent, acl_stream, exec->done)) {
        return e;
      }
    }
    if (const infinirtError_t e = ACL_CALL(aclmdlRIExecuteAsync, exec->model, acl_stream)) {
      return e;
    }
    exec->launched = true;
    return ACL_CALL(aclrtRecordEvent, exec->done, acl_stream);
  });
}

infinirtError_t AscendPlugin::GraphExecDestroy(int device, infinirtPluginGraphExec_t exec) {
  if (!HasNativeGraphs()) return infinirtErrorNotSupported;
  if (const infinirtError_t e = Bind(device)) return e;
  return DestroyExec(device, static_cast<Exec*>(exec));
}

infinirtError_t Bind(int device) {
  const AclError status =
      TheState().binding.Bind(device, [](int d) { return TheState().fn.aclrtSetDevice(d); });
  return Check("aclrtSetDevice", status);
}

infinirtError_t CreateEvent(void** event, uint32_t flags) {
  if (TheState().fn.aclrtCreateEventExWithFlag != nullptr) {
    return ACL_CALL(aclrtCreateEventExWithFlag, event, flags);
  }
  return ACL_CALL(aclrtCreateEventWithFlag, event, flags);
}

const char* EventCreateFunction() {
  const bool ex =
      !HasState() || !TheState().library.is_open() || TheState().fn.aclrtCreateEventExWithFlag;
  return ex ? "aclrtCreateEventExWithFlag" : "aclrtCreateEventWithFlag";
}

bool HasNativeGraphs() {
  const Functions& fn = TheState().fn;
  return fn.aclmdlRICaptureBegin && fn.aclmdlRICaptureGetInfo && fn.aclmdlRICaptureEnd &&
         fn.aclmdlRIExecuteAsync && fn.aclmdlRIDestroy;
}

}  // namespace infinirt::ascend
