// The public C API for streams: creation (with flags, a priority, or from a native stream) and
// destruction, synchronisation and queries, priorities and attributes, waits on events, host
// functions and native functions. Events are in api_event.cc.

#include <algorithm>
#include <iterator>

#include "api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

// Resolves a stream (special values included), applies capture's rules for synchronising or
// querying it, and calls the owning backend's entry on it. The entry is a template argument so
// that the call through the table compiles to a plain indirect call.
template <HandleEntry entry>
infinirtError_t CallOnStream(infinirtStream_t stream, bool synchronizes, const char* function) {
  Runtime& runtime = Runtime::Get();
  StreamTarget target;
  if (auto error = ResolveStream(runtime, stream, &target, function)) return error;
  if (auto error = runtime.captures().CheckStreamUse(target.ref, synchronizes)) return error;
  return BackendAnswer((target.backend->table.*entry)(target.local, target.stream), *target.backend,
                       function);
}

// A node maker for host functions recorded during stream capture.
auto HostNode(infinirtHostFn_t fn, void* user_data) {
  return [=](GraphData&, GraphNode* node) {
    node->desc.kind = INFINIRT_GRAPH_NODE_HOST;
    node->desc.params.host.fn = fn;
    node->desc.params.host.user_data = user_data;
    return infinirtSuccess;
  };
}

// A node maker for native functions recorded during stream capture. *data receives the node's
// data, for the caller to arm once the node is in the graph.
auto NativeFuncNode(infinirtNativeFn_t fn, void* user_data, infinirtNativeReleaseFn_t release,
                    std::shared_ptr<NativeFuncData>* data) {
  return [=](GraphData&, GraphNode* node) {
    node->desc.kind = INFINIRT_GRAPH_NODE_NATIVE;
    node->desc.params.native.fn = fn;
    node->desc.params.native.user_data = user_data;
    node->native = std::make_shared<NativeFuncData>(user_data, release);
    *data = node->native;
    return infinirtSuccess;
  };
}

// A created stream's record, or (*is_default) one of the default streams of the current device;
// any other value is an error (ContextIsDestroyed for a destroyed stream).
infinirtError_t StreamRecord(Runtime& runtime, infinirtStream_t stream, ObjectRecord* record,
                             bool* is_default, const char* function) {
  *is_default = !runtime.streams().Lookup(HandleValue(stream), record);
  if (!*is_default) return infinirtSuccess;
  StreamTarget target;
  return ResolveDefaultStream(runtime, stream, &target, function);
}

// The device's priority range, [0, 0] where its backend has none.
void PriorityRange(const Target& target, int* least, int* greatest) {
  *least = *greatest = 0;
  int backend_least = 0, backend_greatest = 0;
  if (target.backend->table.DeviceGetStreamPriorityRange(target.local, &backend_least,
                                                         &backend_greatest) == infinirtSuccess &&
      backend_greatest <= backend_least) {
    *least = backend_least;
    *greatest = backend_greatest;
  }
}

// The attributes a stream has (CUDA's cudaStreamAttributeXxx); the other launch attributes
// concern kernels.
constexpr infinirtLaunchAttributeID kStreamAttributes[] = {
    infinirtLaunchAttributeAccessPolicyWindow, infinirtLaunchAttributeSynchronizationPolicy,
    infinirtLaunchAttributeMemSyncDomainMap, infinirtLaunchAttributeMemSyncDomain,
    infinirtLaunchAttributePriority};

bool IsStreamAttribute(infinirtLaunchAttributeID attr) {
  return std::find(std::begin(kStreamAttributes), std::end(kStreamAttributes), attr) !=
         std::end(kStreamAttributes);
}

infinirtError_t CheckStreamAttribute(infinirtLaunchAttributeID attr, const char* function) {
  if (IsStreamAttribute(attr)) return infinirtSuccess;
  return Fail(infinirtErrorInvalidValue, "{}: {} is not a stream attribute", function,
              static_cast<int>(attr));
}

bool IsAccessProperty(infinirtAccessProperty property) {
  return property == infinirtAccessPropertyNormal || property == infinirtAccessPropertyStreaming ||
         property == infinirtAccessPropertyPersisting;
}

// A value for attr as CUDA accepts it; *value may then be adjusted (a priority clamped into the
// device's range).
infinirtError_t CheckAttributeValue(const Target& target, infinirtLaunchAttributeID attr,
                                    infinirtLaunchAttributeValue* value, const char* function) {
  switch (attr) {
    case infinirtLaunchAttributeAccessPolicyWindow: {
      const infinirtAccessPolicyWindow& window = value->accessPolicyWindow;
      // Written so that a NaN ratio fails too.
      if (!(window.hitRatio >= 0.0f && window.hitRatio <= 1.0f)) {
        return Fail(infinirtErrorInvalidValue, "{}: hitRatio {} is not in [0, 1]", function,
                    window.hitRatio);
      }
      if (!IsAccessProperty(window.hitProp) || !IsAccessProperty(window.missProp) ||
          window.missProp == infinirtAccessPropertyPersisting) {
        return Fail(infinirtErrorInvalidValue,
                    "{}: hitProp {} or missProp {} is not an access property (a miss cannot be "
                    "Persisting)",
                    function, static_cast<int>(window.hitProp), static_cast<int>(window.missProp));
      }
      return infinirtSuccess;
    }
    case infinirtLaunchAttributeSynchronizationPolicy:
      if (value->syncPolicy >= infinirtSyncPolicyAuto &&
          value->syncPolicy <= infinirtSyncPolicyBlockingSync) {
        return infinirtSuccess;
      }
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a synchronization policy", function,
                  static_cast<int>(value->syncPolicy));
    case infinirtLaunchAttributeMemSyncDomain:
      if (value->memSyncDomain == infinirtLaunchMemSyncDomainDefault ||
          value->memSyncDomain == infinirtLaunchMemSyncDomainRemote) {
        return infinirtSuccess;
      }
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a memory synchronization domain",
                  function, static_cast<int>(value->memSyncDomain));
    case infinirtLaunchAttributePriority: {
      int least = 0, greatest = 0;
      PriorityRange(target, &least, &greatest);
      value->priority = std::min(least, std::max(greatest, value->priority));  // as CUDA clamps
      return infinirtSuccess;
    }
    default:
      return infinirtSuccess;  // a domain map's ids are the device's to judge
  }
}

// infinirtStreamAddCallback's call, run as a host function.
struct StreamCallback {
  infinirtStreamCallback_t callback;
  infinirtStream_t stream;
  void* user_data;

  static void Run(void* self) {
    std::unique_ptr<StreamCallback> data(static_cast<StreamCallback*>(self));
    data->callback(data->stream, infinirtSuccess, data->user_data);
  }
};

// LaunchHostFunc, and LaunchHostWork when `bytes` is given: fn queued on the stream (or recorded
// into its capture as a host node). A backend without LaunchHostWork (every vendor's) queues the
// work as LaunchHostFunc does.
infinirtError_t QueueHostFunction(infinirtStream_t stream, infinirtHostFn_t fn, void* userData,
                                  const size_t* bytes, const char* function_name) {
  Runtime& runtime = Runtime::Get();
  StreamTarget target;
  if (auto error = ResolveStream(runtime, stream, &target, function_name)) return error;
  if (fn == nullptr) return Fail(infinirtErrorInvalidValue, "{}: fn is NULL", function_name);
  infinirtError_t captured;
  if (runtime.captures().Record(target.ref, HostNode(fn, userData), &captured)) return captured;
  if (bytes != nullptr) {
    const infinirtError_t queued =
        target.backend->table.LaunchHostWork(target.local, target.stream, fn, userData, *bytes);
    if (queued != infinirtErrorNotSupported) {
      return BackendAnswer(queued, *target.backend, function_name);
    }
  }
  return BackendAnswer(
      target.backend->table.LaunchHostFunc(target.local, target.stream, fn, userData),
      *target.backend, function_name);
}

}  // namespace

extern "C" {

// ------------------------------------------------------------------------------------------
// Streams
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtStreamCreateWithFlags(infinirtStream_t* pStream, unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    if (pStream == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: pStream is NULL", function_name);
    if (flags & ~static_cast<unsigned int>(infinirtStreamNonBlocking)) {
      return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function_name, flags);
    }
    Runtime& runtime = Runtime::Get();
    return CreateOnCurrentDevice(runtime, runtime.streams(), &infinirtPluginTable::StreamCreate,
                                 &infinirtPluginTable::StreamDestroy, flags, pStream,
                                 function_name);
  });
}

infinirtError_t infinirtStreamCreate(infinirtStream_t* pStream) {
  return infinirtStreamCreateWithFlags(pStream, infinirtStreamDefault);
}

infinirtError_t infinirtStreamCreateFromNativeHandle(infinirtStream_t* pStream, int device,
                                                     void* nativeStream) {
  return Guard(__func__, [&](const char* function_name) {
    if (pStream == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pStream is NULL", function_name);
    }
    const void* special[] = {nullptr, infinirtStreamLegacy, infinirtStreamPerThread};
    for (const void* value : special) {
      if (nativeStream == value) {
        return Fail(infinirtErrorInvalidValue, "{}: {} is a default stream, not a stream to adopt",
                    function_name, nativeStream);
      }
    }
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = DeviceTarget(runtime, device, &target, function_name)) return error;
    infinirtPluginStream_t adopted = nullptr;
    unsigned int flags = 0;
    const infinirtPluginTable& table = target.backend->table;
    if (auto error = table.StreamAdopt(target.local, nativeStream, &adopted, &flags)) {
      return BackendAnswer(error, *target.backend, function_name);
    }
    flags = (flags & infinirtStreamNonBlocking) | kStreamAdopted;
    return Publish(runtime.streams(), target, adopted, flags, pStream, table.StreamRelease,
                   function_name);
  });
}

infinirtError_t infinirtStreamDestroy(infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (!runtime.streams().Remove(HandleValue(stream), &record)) {
      return DeadStream(runtime, stream, function_name);
    }
    const infinirtPluginTable& table = runtime.backend(record.backend).table;
    const auto end = (record.flags & kStreamAdopted) ? table.StreamRelease : table.StreamDestroy;
    if (auto e = end(record.local_device, record.plugin_handle)) {
      return RestoreRefused(runtime.streams(), HandleValue(stream), record, e, function_name);
    }
    StreamRef ref;
    ref.handle = HandleValue(stream);
    ref.blocking = !(record.flags & infinirtStreamNonBlocking);
    ref.device = record.device;
    std::vector<uint64_t> retired;
    runtime.captures().StreamDestroyed(ref, &retired);
    for (uint64_t graph : retired) runtime.RetireGraphHandle(graph);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtStreamSynchronize(infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    return CallOnStream<&infinirtPluginTable::StreamSynchronize>(stream, /*synchronizes=*/true,
                                                                 function_name);
  });
}

infinirtError_t infinirtStreamQuery(infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    return CallOnStream<&infinirtPluginTable::StreamQuery>(stream, /*synchronizes=*/false,
                                                           function_name);
  });
}

infinirtError_t infinirtStreamGetDevice(infinirtStream_t hStream, int* device) {
  return Guard(__func__, [&](const char* function_name) {
    if (device == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: device is NULL", function_name);
    }
    StreamTarget target;
    if (auto error = ResolveStream(Runtime::Get(), hStream, &target, function_name)) return error;
    *device = target.device;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceGetStreamPriorityRange(int* leastPriority, int* greatestPriority) {
  return Guard(__func__, [&](const char* function_name) {
    Target target;
    if (auto error = CurrentTarget(Runtime::Get(), &target, function_name)) return error;
    int least = 0, greatest = 0;
    PriorityRange(target, &least, &greatest);
    // Either output may be NULL, as in CUDA.
    if (leastPriority != nullptr) *leastPriority = least;
    if (greatestPriority != nullptr) *greatestPriority = greatest;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtStreamCreateWithPriority(infinirtStream_t* pStream, unsigned int flags,
                                                 int priority) {
  return Guard(__func__, [&](const char* function_name) {
    if (pStream == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: pStream is NULL", function_name);
    if (flags & ~static_cast<unsigned int>(infinirtStreamNonBlocking)) {
      return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function_name, flags);
    }
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    int least = 0, greatest = 0;
    PriorityRange(target, &least, &greatest);
    // Out of range is clamped, as CUDA does.
    const int clamped = std::min(least, std::max(greatest, priority));
    const infinirtPluginTable& table = target.backend->table;
    void* stream = nullptr;
    // A backend without priorities (range [0, 0]) creates an ordinary stream.
    const infinirtError_t created =
        least == greatest ? table.StreamCreate(target.local, &stream, flags)
                          : table.StreamCreateWithPriority(target.local, &stream, flags, clamped);
    if (created != infinirtSuccess) return BackendAnswer(created, *target.backend, function_name);
    return Publish(runtime.streams(), target, stream, flags, pStream, table.StreamDestroy,
                   function_name, clamped);
  });
}

infinirtError_t infinirtStreamGetPriority(infinirtStream_t hStream, int* priority) {
  return Guard(__func__, [&](const char* function_name) {
    if (priority == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: priority is NULL", function_name);
    }
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, hStream, &target, function_name)) return error;
    // The stream's priority now (StreamSetAttribute may have changed it), where the backend
    // tells; otherwise the one it was created with (the default streams': 0). A runtime older
    // than the priority attribute refuses to tell, which is no error of the program's.
    infinirtLaunchAttributeValue value{};
    if (target.backend->table.StreamGetAttribute(target.local, target.stream,
                                                 infinirtLaunchAttributePriority,
                                                 &value) == infinirtSuccess) {
      *priority = value.priority;
      return infinirtSuccess;
    }
    ObjectRecord record;
    *priority = runtime.streams().Lookup(HandleValue(hStream), &record) ? record.priority : 0;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtStreamGetFlags(infinirtStream_t hStream, unsigned int* flags) {
  return Guard(__func__, [&](const char* function_name) {
    if (flags == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: flags is NULL", function_name);
    ObjectRecord record;
    bool is_default = false;
    if (auto error = StreamRecord(Runtime::Get(), hStream, &record, &is_default, function_name)) {
      return error;
    }
    *flags = is_default ? infinirtStreamDefault : (record.flags & infinirtStreamNonBlocking);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtStreamGetId(infinirtStream_t hStream, unsigned long long* streamId) {
  return Guard(__func__, [&](const char* function_name) {
    if (streamId == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: streamId is NULL", function_name);
    }
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    bool is_default = false;
    if (auto error = StreamRecord(runtime, hStream, &record, &is_default, function_name)) {
      return error;
    }
    const uint64_t value = HandleValue(hStream);
    if (!is_default) {
      // The handle's slot and generation: a handle is never issued twice.
      *streamId = (uint64_t{HandleCodec::Generation(value)} << HandleCodec::kIndexBits |
                   HandleCodec::Index(value)) +
                  1;
    } else if (value == HandleValue(infinirtStreamPerThread)) {
      // One per thread and device, apart from every created stream's.
      static std::atomic<uint64_t> threads{0};
      thread_local const uint64_t thread_number = ++threads;
      int device = 0;
      infinirtGetDevice(&device);
      *streamId = (uint64_t{1} << 63) | (thread_number << 16) | static_cast<uint64_t>(device);
    } else {
      *streamId = 0;  // the legacy stream
    }
    return infinirtSuccess;
  });
}

infinirtError_t infinirtStreamGetAttribute(infinirtStream_t hStream, infinirtStreamAttrID attr,
                                           infinirtStreamAttrValue* value_out) {
  return Guard(__func__, [&](const char* function_name) {
    StreamTarget target;
    if (auto error = ResolveStream(Runtime::Get(), hStream, &target, function_name)) return error;
    if (auto error = CheckStreamAttribute(attr, function_name)) return error;
    if (value_out == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: value_out is NULL", function_name);
    }
    infinirtLaunchAttributeValue value{};  // the bytes beyond the member are zero
    if (auto error =
            target.backend->table.StreamGetAttribute(target.local, target.stream, attr, &value)) {
      return BackendAnswer(error, *target.backend, function_name);
    }
    *value_out = value;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtStreamSetAttribute(infinirtStream_t hStream, infinirtStreamAttrID attr,
                                           const infinirtStreamAttrValue* value) {
  return Guard(__func__, [&](const char* function_name) {
    StreamTarget target;
    if (auto error = ResolveStream(Runtime::Get(), hStream, &target, function_name)) return error;
    if (auto error = CheckStreamAttribute(attr, function_name)) return error;
    if (value == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: value is NULL", function_name);
    infinirtLaunchAttributeValue checked = *value;
    if (auto error = CheckAttributeValue(target, attr, &checked, function_name)) return error;
    return BackendAnswer(
        target.backend->table.StreamSetAttribute(target.local, target.stream, attr, &checked),
        *target.backend, function_name);
  });
}

// Every attribute is read before any is written, so that a refused read changes nothing.
infinirtError_t infinirtStreamCopyAttributes(infinirtStream_t dst, infinirtStream_t src) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    StreamTarget to, from;
    if (auto error = ResolveStream(runtime, dst, &to, function_name)) return error;
    if (auto error = ResolveStream(runtime, src, &from, function_name)) return error;
    if (to.device != from.device) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: the streams belong to devices {} and {}; both must be on one device",
                  function_name, to.device, from.device);
    }
    const infinirtPluginTable& table = to.backend->table;
    constexpr size_t kCount = std::size(kStreamAttributes);
    infinirtLaunchAttributeValue values[kCount] = {};
    for (size_t i = 0; i < kCount; ++i) {
      if (auto error =
              table.StreamGetAttribute(from.local, from.stream, kStreamAttributes[i], &values[i])) {
        return BackendAnswer(error, *from.backend, function_name);
      }
    }
    for (size_t i = 0; i < kCount; ++i) {
      if (auto error =
              table.StreamSetAttribute(to.local, to.stream, kStreamAttributes[i], &values[i])) {
        return BackendAnswer(error, *to.backend, function_name);
      }
    }
    return infinirtSuccess;
  });
}

infinirtError_t infinirtStreamAddCallback(infinirtStream_t stream,
                                          infinirtStreamCallback_t callback, void* userData,
                                          unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function_name)) return error;
    if (callback == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: callback is NULL", function_name);
    }
    if (flags != 0) {
      return Fail(infinirtErrorInvalidValue, "{}: flags must be 0, not {:#x}", function_name,
                  flags);
    }
    if (auto error =
            RefuseInCapture(runtime, target, "a stream callback",
                            "callbacks cannot be captured (LaunchHostFunc can)", function_name)) {
      return error;
    }
    auto data = std::make_unique<StreamCallback>(StreamCallback{callback, stream, userData});
    const infinirtError_t launched = target.backend->table.LaunchHostFunc(
        target.local, target.stream, &StreamCallback::Run, data.get());
    if (launched == infinirtSuccess) data.release();  // Run deletes it
    return BackendAnswer(launched, *target.backend, function_name);
  });
}

infinirtError_t infinirtStreamGetNativeHandle(void** nativeStream, infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    if (nativeStream == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: nativeStream is NULL", function_name);
    }
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function_name)) return error;
    // Work queued on the vendor's stream would run now instead of being recorded.
    if (auto error =
            RefuseInCapture(runtime, target, "work on the vendor's own stream",
                            "the stream is capturing; work on its vendor stream cannot be captured",
                            function_name)) {
      return error;
    }
    const infinirtError_t answer =
        target.backend->table.StreamGetNativeHandle(target.local, target.stream, nativeStream);
    return BackendAnswer(answer, *target.backend, function_name);
  });
}

infinirtError_t infinirtStreamWaitEvent(infinirtStream_t stream, infinirtEvent_t event,
                                        unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function_name)) return error;
    ObjectRecord event_record;
    if (auto error =
            ResolveObject(runtime.events(), event, "event", &event_record, function_name)) {
      return error;
    }
    if (flags & ~static_cast<unsigned int>(infinirtEventWaitExternal)) {
      return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function_name, flags);
    }
    if (event_record.backend != target.backend_index) {
      // No backend can wait on another's event: the host waits for it, which keeps the order
      // (work issued to the stream afterwards starts after the event), without asynchrony.
      infinirtError_t captured;
      if (runtime.captures().RefuseUncapturable(target.ref, "a wait on an event of another backend",
                                                &captured)) {
        return Fail(captured, "{}: a wait on an event of another backend cannot be captured",
                    function_name);
      }
      Backend& owner = runtime.backend(event_record.backend);
      return BackendAnswer(
          owner.table.EventSynchronize(event_record.local_device, event_record.plugin_handle),
          owner, function_name);
    }
    infinirtError_t captured;
    if (runtime.captures().WaitEvent(target.ref, HandleValue(event), event_record.plugin_handle,
                                     flags, &captured)) {
      return captured;
    }
    return BackendAnswer(target.backend->table.StreamWaitEvent(target.local, target.stream,
                                                               event_record.plugin_handle, flags),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtLaunchHostFunc(infinirtStream_t stream, infinirtHostFn_t fn,
                                       void* userData) {
  return Guard(__func__, [&](const char* function_name) {
    return QueueHostFunction(stream, fn, userData, nullptr, function_name);
  });
}

infinirtError_t infinirtLaunchHostWork(infinirtStream_t stream, infinirtHostFn_t fn, void* userData,
                                       size_t bytes) {
  return Guard(__func__, [&](const char* function_name) {
    return QueueHostFunction(stream, fn, userData, &bytes, function_name);
  });
}

infinirtError_t infinirtLaunchNativeFunc(infinirtStream_t stream, infinirtNativeFn_t fn,
                                         void* userData, infinirtNativeReleaseFn_t release) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function_name)) return error;
    if (fn == nullptr) return Fail(infinirtErrorInvalidValue, "{}: fn is NULL", function_name);
    // Asked whether capturing or not, so that a backend without vendor streams refuses alike.
    void* native = nullptr;
    const infinirtError_t found =
        target.backend->table.StreamGetNativeHandle(target.local, target.stream, &native);
    if (found != infinirtSuccess) return BackendAnswer(found, *target.backend, function_name);
    std::shared_ptr<NativeFuncData> recorded;
    infinirtError_t captured;
    if (runtime.captures().Record(target.ref, NativeFuncNode(fn, userData, release, &recorded),
                                  &captured)) {
      if (captured == infinirtSuccess) recorded->Arm();
      return captured;
    }
    if (const infinirtError_t failed = fn(native, userData)) {
      return Fail(failed, "{}: the function failed: {}", function_name,
                  infinirtGetErrorName(failed));
    }
    if (release != nullptr) release(userData);
    return infinirtSuccess;
  });
}

}  // extern "C"
