// The public C API (include/infinirt.h): validation, routing to the owning backend, and the
// per-thread last error. Every function body runs inside Guard, which turns a stray C++
// exception into an error code and records failures as the thread's last error.
#include <cstring>
#include <new>

#include "api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

// Free and FreeHost. Free also accepts stream-ordered memory (freed at once, as cudaFree does,
// without waiting) and graph-owned memory (released from its live state, see GraphMemory).
infinirtError_t FreeRegistered(void* pointer, bool host, const char* function) {
  if (pointer == nullptr) return infinirtSuccess;
  Runtime& runtime = Runtime::Get();
  if (auto error = runtime.captures().CheckUnsafeCall()) return error;
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  auto accept = [host](const Allocation& allocation) {
    const MemoryKind kind = allocation.kind;
    return host ? kind == MemoryKind::kPinnedHost
                : kind == MemoryKind::kDevice || kind == MemoryKind::kStreamOrdered;
  };
  auto removed = runtime.allocations().RemoveExact(address, accept);
  if (!removed) {
    if (!host) {
      if (auto released = ReleaseGraphMemory(runtime, pointer, function)) return *released;
    }
    return Fail(infinirtErrorInvalidValue,
                "{}: {} is not the start of a live {} allocation (unknown, interior, of another "
                "kind or already freed)",
                function, pointer, host ? "pinned host" : "device");
  }
  Backend& owner = runtime.backend(removed->backend);
  infinirtError_t error;
  if (host) {
    error = owner.table.FreeHost(removed->local_device, pointer);
  } else if (removed->kind == MemoryKind::kStreamOrdered) {
    error = owner.table.FreeAsync(removed->local_device, pointer, INFINIRT_PLUGIN_STREAM_LEGACY);
  } else {
    error = owner.table.Free(removed->local_device, pointer);
  }
  // A refused free has no effect: the allocation stays live and can be freed later.
  if (error != infinirtSuccess) runtime.allocations().Add(*removed);
  return BackendAnswer(error, owner, function);
}

// A plugin entry that takes (device, handle) and nothing else.
using HandleEntry = infinirtError_t (*infinirtPluginTable::*)(int, void*);

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

// The same for an event.
template <HandleEntry entry>
infinirtError_t CallOnEvent(infinirtEvent_t event, bool synchronizes, const char* function) {
  Runtime& runtime = Runtime::Get();
  ObjectRecord record;
  if (auto error = ResolveObject(runtime.events(), event, "event", &record, function)) {
    return error;
  }
  if (auto error = runtime.captures().CheckEventUse(HandleValue(event), synchronizes)) {
    return error;
  }
  Backend& owner = runtime.backend(record.backend);
  return BackendAnswer((owner.table.*entry)(record.local_device, record.plugin_handle), owner,
                       function);
}

// Creates a stream or event on the current device and hands out its handle.
using CreateEntry = infinirtError_t (*infinirtPluginTable::*)(int, void**, unsigned int);
template <class Handle>
infinirtError_t CreateOnCurrentDevice(Runtime& runtime, HandleTable& table, CreateEntry create,
                                      HandleEntry destroy, unsigned int flags, Handle* out,
                                      const char* function) {
  Target target;
  if (auto error = CurrentTarget(runtime, &target, function)) return error;
  void* object = nullptr;
  if (auto error = (target.backend->table.*create)(target.local, &object, flags)) {
    return BackendAnswer(error, *target.backend, function);
  }
  return Publish(table, target, object, flags, out, target.backend->table.*destroy, function);
}

// The plugin refused to destroy an object whose handle was just removed: the handle becomes
// live again, so that the refused call has no effect and the program can retry.
infinirtError_t RestoreRefused(HandleTable& table, uint64_t handle, const ObjectRecord& record,
                               infinirtError_t error, const char* function) {
  if (!table.Restore(handle, record)) {
    Log().error("{}: the backend refused the destruction and the handle could not be restored",
                function);
  }
  return Fail(error, "{}: the backend refused: {}", function, infinirtGetErrorName(error));
}

// Node makers for work recorded during stream capture.
auto CopyNode(void* dst, const void* src, size_t count, enum infinirtMemcpyKind kind) {
  return [=](GraphData&, GraphNode* node) {
    node->desc.kind = INFINIRT_GRAPH_NODE_MEMCPY;
    node->desc.params.copy.dst = dst;
    node->desc.params.copy.src = src;
    node->desc.params.copy.count = count;
    node->desc.params.copy.kind = kind;
    return infinirtSuccess;
  };
}

auto SetNode(void* pointer, int value, size_t count) {
  return [=](GraphData&, GraphNode* node) {
    node->desc.kind = INFINIRT_GRAPH_NODE_MEMSET;
    node->desc.params.set.ptr = pointer;
    node->desc.params.set.value = value;
    node->desc.params.set.count = count;
    return infinirtSuccess;
  };
}

auto HostNode(infinirtHostFn_t fn, void* user_data) {
  return [=](GraphData&, GraphNode* node) {
    node->desc.kind = INFINIRT_GRAPH_NODE_HOST;
    node->desc.params.host.fn = fn;
    node->desc.params.host.user_data = user_data;
    return infinirtSuccess;
  };
}

const char* ErrorName(infinirtError_t error) {
  switch (error) {
#define INFINIRT_NAME_CASE_(name, value, description) \
  case infinirt##name:                                \
    return "infinirt" #name;
    INFINIRT_ERROR_LIST(INFINIRT_NAME_CASE_)
#undef INFINIRT_NAME_CASE_
  }
  return nullptr;
}

const char* ErrorDescription(infinirtError_t error) {
  switch (error) {
#define INFINIRT_STRING_CASE_(name, value, description) \
  case infinirt##name:                                  \
    return description;
    INFINIRT_ERROR_LIST(INFINIRT_STRING_CASE_)
#undef INFINIRT_STRING_CASE_
  }
  return nullptr;
}

bool IsDeviceAttribute(int attribute) {
  switch (attribute) {
#define INFINIRT_ATTR_CASE_(name, value) case value:
    INFINIRT_DEVICE_ATTR_LIST(INFINIRT_ATTR_CASE_)
#undef INFINIRT_ATTR_CASE_
    return true;
  }
  return false;
}

constexpr char kUnrecognizedError[] = "unrecognized error code";

}  // namespace

extern "C" {

// ------------------------------------------------------------------------------------------
// Device management
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtGetDeviceCount(int* count) {
  return Guard(__func__, [&](const char* function_name) {
    if (count == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: count is NULL", function_name);
    const Runtime& runtime = Runtime::Get();
    *count = static_cast<int>(runtime.devices().size());
    if (runtime.devices().empty()) {
      return Fail(infinirtErrorNoDevice, "{}: no device is available: {}", function_name,
                  runtime.no_device_reason());
    }
    return infinirtSuccess;
  });
}

infinirtError_t infinirtSetDevice(int device) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = DeviceTarget(runtime, device, &target, function_name)) return error;
    SetCurrentOrdinal(runtime, device);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGetDevice(int* device) {
  return Guard(__func__, [&](const char* function_name) {
    if (device == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: device is NULL", function_name);
    Runtime& runtime = Runtime::Get();
    if (runtime.devices().empty()) {
      return Fail(infinirtErrorNoDevice, "{}: no device is available: {}", function_name,
                  runtime.no_device_reason());
    }
    *device = CurrentOrdinal(runtime);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceSynchronize(void) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    if (auto error = runtime.captures().CheckDeviceSynchronize(target.device)) return error;
    return BackendAnswer(target.backend->table.DeviceSynchronize(target.local), *target.backend,
                         function_name);
  });
}

infinirtError_t infinirtDeviceReset(void) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    if (auto error = runtime.captures().CheckUnsafeCall()) return error;
    if (auto error = runtime.ReleaseDeviceObjects(target.device)) {
      return BackendAnswer(error, *target.backend, function_name,
                           "while waiting for the device's work, which a reset does first");
    }
    return BackendAnswer(target.backend->table.DeviceReset(target.local), *target.backend,
                         function_name);
  });
}

infinirtError_t infinirtGetDeviceProperties(struct infinirtDeviceProp* prop, int device) {
  return Guard(__func__, [&](const char* function_name) {
    if (prop == nullptr) return Fail(infinirtErrorInvalidValue, "{}: prop is NULL", function_name);
    Target target;
    if (auto error = DeviceTarget(Runtime::Get(), device, &target, function_name)) return error;
    std::memset(prop, 0, sizeof(*prop));
    if (auto error = target.backend->table.GetDeviceProperties(target.local, prop)) {
      return BackendAnswer(error, *target.backend, function_name);
    }
    prop->deviceType = target.backend->device_type;
    prop->vendorDeviceIndex = target.local;
    std::snprintf(prop->backendName, sizeof(prop->backendName), "%s", target.backend->name.c_str());
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceGetAttribute(int* value, enum infinirtDeviceAttr attr, int device) {
  return Guard(__func__, [&](const char* function_name) {
    if (value == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: value is NULL", function_name);
    Target target;
    if (auto error = DeviceTarget(Runtime::Get(), device, &target, function_name)) return error;
    if (!IsDeviceAttribute(static_cast<int>(attr))) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a device attribute", function_name,
                  static_cast<int>(attr));
    }
    return BackendAnswer(target.backend->table.DeviceGetAttribute(target.local, value, attr),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtRuntimeGetVersion(int* runtimeVersion) {
  return Guard(__func__, [&](const char* function_name) {
    if (runtimeVersion == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: runtimeVersion is NULL", function_name);
    }
    *runtimeVersion = INFINIRT_CUDA_API_VERSION;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDriverGetVersion(int* driverVersion) {
  return Guard(__func__, [&](const char* function_name) {
    if (driverVersion == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: driverVersion is NULL", function_name);
    }
    Runtime& runtime = Runtime::Get();
    // As CUDA without a driver: 0, and success.
    *driverVersion = 0;
    if (runtime.devices().empty()) return infinirtSuccess;
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    return BackendAnswer(target.backend->table.DriverGetVersion(target.local, driverVersion),
                         *target.backend, function_name);
  });
}

// ------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtGetLastError(void) {
  const infinirtError_t error = LastError();
  LastError() = infinirtSuccess;
  return error;
}

infinirtError_t infinirtPeekAtLastError(void) { return LastError(); }

const char* infinirtGetErrorName(infinirtError_t error) {
  const char* name = ErrorName(error);
  return name ? name : kUnrecognizedError;
}

const char* infinirtGetErrorString(infinirtError_t error) {
  const char* description = ErrorDescription(error);
  return description ? description : kUnrecognizedError;
}

// ------------------------------------------------------------------------------------------
// Memory
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtMalloc(void** devPtr, size_t size) {
  return Guard(__func__, [&](const char* function_name) {
    if (devPtr == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function_name);
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    if (auto error = runtime.captures().CheckUnsafeCall()) return error;
    *devPtr = nullptr;
    if (size == 0) return infinirtSuccess;
    void* pointer = nullptr;
    if (auto error = target.backend->table.Malloc(target.local, &pointer, size)) {
      return BackendAnswer(error, *target.backend, function_name);
    }
    if (pointer == nullptr) {
      return Fail(infinirtErrorMemoryAllocation, "{}: backend returned NULL", function_name);
    }
    if (auto error = RegisterAllocation(runtime, target, pointer, size, MemoryKind::kDevice, 0,
                                        function_name)) {
      target.backend->table.Free(target.local, pointer);
      return error;
    }
    *devPtr = pointer;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtFree(void* devPtr) {
  return Guard(__func__, [&](const char* function_name) {
    return FreeRegistered(devPtr, /*host=*/false, function_name);
  });
}

infinirtError_t infinirtHostAlloc(void** pHost, size_t size, unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    if (pHost == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: pHost is NULL", function_name);
    constexpr unsigned int kKnownFlags =
        infinirtHostAllocPortable | infinirtHostAllocMapped | infinirtHostAllocWriteCombined;
    if (flags & ~kKnownFlags) {
      return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function_name, flags);
    }
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    if (auto error = runtime.captures().CheckUnsafeCall()) return error;
    *pHost = nullptr;
    if (size == 0) return infinirtSuccess;
    void* pointer = nullptr;
    if (auto error = target.backend->table.HostAlloc(target.local, &pointer, size, flags)) {
      return BackendAnswer(error, *target.backend, function_name);
    }
    if (pointer == nullptr) {
      return Fail(infinirtErrorMemoryAllocation, "{}: backend returned NULL", function_name);
    }
    if (auto error = RegisterAllocation(runtime, target, pointer, size, MemoryKind::kPinnedHost, 0,
                                        function_name)) {
      target.backend->table.FreeHost(target.local, pointer);
      return error;
    }
    *pHost = pointer;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtMallocHost(void** ptr, size_t size) {
  return infinirtHostAlloc(ptr, size, infinirtHostAllocDefault);
}

infinirtError_t infinirtFreeHost(void* ptr) {
  return Guard(__func__, [&](const char* function_name) {
    return FreeRegistered(ptr, /*host=*/true, function_name);
  });
}

infinirtError_t infinirtMemGetInfo(size_t* free, size_t* total) {
  return Guard(__func__, [&](const char* function_name) {
    if (free == nullptr || total == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is NULL", function_name,
                  free == nullptr ? "free" : "total");
    }
    Target target;
    if (auto error = CurrentTarget(Runtime::Get(), &target, function_name)) return error;
    return BackendAnswer(target.backend->table.MemGetInfo(target.local, free, total),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtMemcpy(void* dst, const void* src, size_t count,
                               enum infinirtMemcpyKind kind) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    if (count == 0 && static_cast<unsigned>(kind) <= infinirtMemcpyDefault) return infinirtSuccess;
    Target target;
    enum infinirtMemcpyKind resolved;
    CrossBackendCopy cross;
    if (auto error = RouteCopy(runtime, dst, src, count, kind, nullptr, &target, &resolved, &cross,
                               function_name)) {
      return error;
    }
    if (cross.needed) {
      for (const auto& side : {cross.source, cross.destination}) {
        if (!side) continue;
        if (auto error = runtime.captures().CheckLegacyUse(side->device)) return error;
      }
      if (auto error = runtime.captures().CheckUnsafeCall()) return error;
      return StagedCopy(runtime, dst, src, count, cross, nullptr);
    }
    if (auto error = runtime.captures().CheckLegacyUse(target.device)) return error;
    if (auto error = runtime.captures().CheckUnsafeCall()) return error;
    return BackendAnswer(target.backend->table.Memcpy(target.local, dst, src, count, resolved),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtMemcpyAsync(void* dst, const void* src, size_t count,
                                    enum infinirtMemcpyKind kind, infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    StreamTarget stream_target;
    if (auto error = ResolveStream(runtime, stream, &stream_target, function_name)) return error;
    if (count == 0 && static_cast<unsigned>(kind) <= infinirtMemcpyDefault) return infinirtSuccess;
    Target target;
    enum infinirtMemcpyKind resolved;
    CrossBackendCopy cross;
    if (auto error = RouteCopy(runtime, dst, src, count, kind, &stream_target, &target, &resolved,
                               &cross, function_name)) {
      return error;
    }
    if (cross.needed) {
      infinirtError_t captured;
      if (runtime.captures().RefuseUncapturable(
              stream_target.ref, "a copy between backends (the host stages it)", &captured)) {
        return Fail(captured, "{}: a copy between backends cannot be captured", function_name);
      }
      return StagedCopy(runtime, dst, src, count, cross, &stream_target);
    }
    infinirtError_t captured;
    if (runtime.captures().Record(stream_target.ref, CopyNode(dst, src, count, resolved),
                                  &captured)) {
      return captured;
    }
    // A host-to-host copy is synchronous with respect to the host (CUDA); the plugin ABI makes
    // that the plugin's job, since only it can refuse before enqueuing (in a host function).
    return BackendAnswer(stream_target.backend->table.MemcpyAsync(
                             stream_target.local, dst, src, count, resolved, stream_target.stream),
                         *stream_target.backend, function_name);
  });
}

infinirtError_t infinirtMemset(void* devPtr, int value, size_t count) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    if (count == 0) return infinirtSuccess;
    Target target;
    if (auto error = RouteMemset(runtime, devPtr, count, nullptr, &target, function_name)) {
      return error;
    }
    if (auto error = runtime.captures().CheckLegacyUse(target.device)) return error;
    if (auto error = runtime.captures().CheckUnsafeCall()) return error;
    return BackendAnswer(target.backend->table.Memset(target.local, devPtr, value, count),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtMemsetAsync(void* devPtr, int value, size_t count,
                                    infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    StreamTarget stream_target;
    if (auto error = ResolveStream(runtime, stream, &stream_target, function_name)) return error;
    if (count == 0) return infinirtSuccess;
    Target target;
    if (auto error = RouteMemset(runtime, devPtr, count, &stream_target, &target, function_name)) {
      return error;
    }
    infinirtError_t captured;
    if (runtime.captures().Record(stream_target.ref, SetNode(devPtr, value, count), &captured)) {
      return captured;
    }
    return BackendAnswer(stream_target.backend->table.MemsetAsync(
                             stream_target.local, devPtr, value, count, stream_target.stream),
                         *stream_target.backend, function_name);
  });
}

infinirtError_t infinirtPointerGetAttributes(struct infinirtPointerAttributes* attributes,
                                             const void* ptr) {
  return Guard(__func__, [&](const char* function_name) {
    if (attributes == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: attributes is NULL", function_name);
    }
    if (ptr == nullptr) return Fail(infinirtErrorInvalidValue, "{}: ptr is NULL", function_name);
    std::memset(attributes, 0, sizeof(*attributes));
    auto allocation = Runtime::Get().allocations().Find(reinterpret_cast<uintptr_t>(ptr));
    if (!allocation) {
      attributes->type = infinirtMemoryTypeUnregistered;
      attributes->device = infinirtInvalidDeviceId;
      return infinirtSuccess;
    }
    void* pointer = const_cast<void*>(ptr);
    attributes->device = allocation->device;
    attributes->devicePointer = pointer;
    if (allocation->kind == MemoryKind::kPinnedHost) {
      attributes->type = infinirtMemoryTypeHost;
      attributes->hostPointer = pointer;
    } else {
      attributes->type = infinirtMemoryTypeDevice;
    }
    return infinirtSuccess;
  });
}

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

infinirtError_t infinirtStreamDestroy(infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (!runtime.streams().Remove(HandleValue(stream), &record)) {
      return InvalidHandle(stream, "stream", function_name);
    }
    if (auto e = runtime.backend(record.backend)
                     .table.StreamDestroy(record.local_device, record.plugin_handle)) {
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
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function_name)) return error;
    if (fn == nullptr) return Fail(infinirtErrorInvalidValue, "{}: fn is NULL", function_name);
    infinirtError_t captured;
    if (runtime.captures().Record(target.ref, HostNode(fn, userData), &captured)) return captured;
    return BackendAnswer(
        target.backend->table.LaunchHostFunc(target.local, target.stream, fn, userData),
        *target.backend, function_name);
  });
}

// ------------------------------------------------------------------------------------------
// Events
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtEventCreateWithFlags(infinirtEvent_t* event, unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    if (event == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: event is NULL", function_name);
    constexpr unsigned int kKnownFlags =
        infinirtEventBlockingSync | infinirtEventDisableTiming | infinirtEventInterprocess;
    if (flags & ~kKnownFlags) {
      return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function_name, flags);
    }
    if ((flags & infinirtEventInterprocess) && !(flags & infinirtEventDisableTiming)) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: infinirtEventInterprocess requires infinirtEventDisableTiming",
                  function_name);
    }
    Runtime& runtime = Runtime::Get();
    return CreateOnCurrentDevice(runtime, runtime.events(), &infinirtPluginTable::EventCreate,
                                 &infinirtPluginTable::EventDestroy, flags, event, function_name);
  });
}

infinirtError_t infinirtEventCreate(infinirtEvent_t* event) {
  return infinirtEventCreateWithFlags(event, infinirtEventDefault);
}

infinirtError_t infinirtEventRecord(infinirtEvent_t event, infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolveObject(runtime.events(), event, "event", &record, function_name)) {
      return error;
    }
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function_name)) return error;
    if (target.device != record.device) {
      return Fail(infinirtErrorInvalidResourceHandle,
                  "{}: the event belongs to device {} and the stream to device {}", function_name,
                  record.device, target.device);
    }
    infinirtError_t captured;
    if (runtime.captures().RecordEvent(target.ref, HandleValue(event), &captured)) {
      return captured;
    }
    runtime.captures().ForgetEvent(HandleValue(event));  // it stands for real work again
    return BackendAnswer(
        target.backend->table.EventRecord(target.local, record.plugin_handle, target.stream),
        *target.backend, function_name);
  });
}

infinirtError_t infinirtEventQuery(infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function_name) {
    return CallOnEvent<&infinirtPluginTable::EventQuery>(event, /*synchronizes=*/false,
                                                         function_name);
  });
}

infinirtError_t infinirtEventSynchronize(infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function_name) {
    return CallOnEvent<&infinirtPluginTable::EventSynchronize>(event, /*synchronizes=*/true,
                                                               function_name);
  });
}

infinirtError_t infinirtEventDestroy(infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (!runtime.events().Remove(HandleValue(event), &record)) {
      return InvalidHandle(event, "event", function_name);
    }
    if (auto e = runtime.backend(record.backend)
                     .table.EventDestroy(record.local_device, record.plugin_handle)) {
      return RestoreRefused(runtime.events(), HandleValue(event), record, e, function_name);
    }
    runtime.captures().ForgetEvent(HandleValue(event));
    return infinirtSuccess;
  });
}

infinirtError_t infinirtEventElapsedTime(float* ms, infinirtEvent_t start, infinirtEvent_t end) {
  return Guard(__func__, [&](const char* function_name) {
    if (ms == nullptr) return Fail(infinirtErrorInvalidValue, "{}: ms is NULL", function_name);
    Runtime& runtime = Runtime::Get();
    ObjectRecord first, last;
    if (auto e = ResolveObject(runtime.events(), start, "event", &first, function_name)) {
      return e;
    }
    if (auto e = ResolveObject(runtime.events(), end, "event", &last, function_name)) {
      return e;
    }
    if (first.device != last.device) {
      return Fail(infinirtErrorInvalidResourceHandle,
                  "{}: the events belong to different devices ({} and {})", function_name,
                  first.device, last.device);
    }
    for (const ObjectRecord* event : {&first, &last}) {
      if (event->flags & infinirtEventDisableTiming) {
        return Fail(infinirtErrorInvalidResourceHandle,
                    "{}: the {} event was created with infinirtEventDisableTiming", function_name,
                    event == &first ? "start" : "end");
      }
    }
    if (auto e = runtime.captures().CheckEventUse(HandleValue(start), false)) return e;
    if (auto e = runtime.captures().CheckEventUse(HandleValue(end), false)) return e;
    Backend& owner = runtime.backend(first.backend);
    const infinirtError_t answer = owner.table.EventElapsedTime(
        first.local_device, ms, first.plugin_handle, last.plugin_handle);
    // Both events exist, are timed and are on one device: CUDA answers InvalidResourceHandle
    // then only for an event that was never recorded.
    return BackendAnswer(answer, owner, function_name,
                         answer == infinirtErrorInvalidResourceHandle
                             ? "the start or the end event was never recorded"
                             : nullptr);
  });
}

// ------------------------------------------------------------------------------------------
// Extensions
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtInit(void) {
  return Guard(__func__, [&](const char* function_name) {
    const Runtime& runtime = Runtime::Get();
    if (runtime.devices().empty()) {
      return Fail(infinirtErrorNoDevice, "{}: no device is available: {}", function_name,
                  runtime.no_device_reason());
    }
    return infinirtSuccess;
  });
}

infinirtError_t infinirtFinalize(void) {
  return Guard(__func__, [&](const char*) {
    Runtime::Finalize();
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGetAllDeviceCount(int* count_array) {
  return Guard(__func__, [&](const char* function_name) {
    if (count_array == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: count_array is NULL", function_name);
    }
    for (int type = 0; type < INFINI_DEVICE_TYPE_COUNT; ++type) count_array[type] = 0;
    for (const auto& device : Runtime::Get().devices()) ++count_array[device.type];
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceGetType(infiniDevice_t* type, int device) {
  return Guard(__func__, [&](const char* function_name) {
    if (type == nullptr) return Fail(infinirtErrorInvalidValue, "{}: type is NULL", function_name);
    Target target;
    if (auto error = DeviceTarget(Runtime::Get(), device, &target, function_name)) return error;
    *type = target.backend->device_type;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceGetOrdinal(int* device, infiniDevice_t type, int index) {
  return Guard(__func__, [&](const char* function_name) {
    if (device == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: device is NULL", function_name);
    if (static_cast<int>(type) < 0 || type >= INFINI_DEVICE_TYPE_COUNT) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a device type", function_name,
                  static_cast<int>(type));
    }
    const auto& devices = Runtime::Get().devices();
    int seen = 0;
    for (size_t ordinal = 0; ordinal < devices.size(); ++ordinal) {
      if (devices[ordinal].type != type) continue;
      if (seen++ == index) {
        *device = static_cast<int>(ordinal);
        return infinirtSuccess;
      }
    }
    return Fail(infinirtErrorInvalidDevice, "{}: there is no device {} of type {}", function_name,
                index, static_cast<int>(type));
  });
}

infinirtError_t infinirtGetBackendCount(int* count) {
  return Guard(__func__, [&](const char* function_name) {
    if (count == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: count is NULL", function_name);
    *count = static_cast<int>(Runtime::Get().listing().size());
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGetBackendProperties(infinirtBackendProp* prop, int index) {
  return Guard(__func__, [&](const char* function_name) {
    if (prop == nullptr) return Fail(infinirtErrorInvalidValue, "{}: prop is NULL", function_name);
    const auto& listing = Runtime::Get().listing();
    if (index < 0 || index >= static_cast<int>(listing.size())) {
      return Fail(infinirtErrorInvalidValue, "{}: backend index {} is not in [0, {})",
                  function_name, index, listing.size());
    }
    *prop = listing[index];
    return infinirtSuccess;
  });
}

}  // extern "C"
