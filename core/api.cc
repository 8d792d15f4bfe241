// The public C API (include/infinirt.h): validation, routing to the owning backend, and the
// per-thread last error. Every function body runs inside Guard, which turns a stray C++
// exception into an error code and records failures as the thread's last error.
#include <cstring>
#include <new>

#include "infinirt.h"
#include "infinirt_plugin.h"
#include "log.h"
#include "runtime.h"

using infinirt::core::Allocation;
using infinirt::core::Backend;
using infinirt::core::Fail;
using infinirt::core::HandleTable;
using infinirt::core::Log;
using infinirt::core::MemoryKind;
using infinirt::core::ObjectRecord;
using infinirt::core::Runtime;

namespace {

thread_local infinirtError_t tls_last_error = infinirtSuccess;

// The calling thread's current device, valid for the runtime it was set in: after
// infinirtFinalize every thread starts again from device 0, as in a fresh process.
struct CurrentDevice {
  uint64_t runtime_generation = 0;
  int ordinal = 0;
};
thread_local CurrentDevice tls_current_device;

int CurrentOrdinal(const Runtime& runtime) {
  if (tls_current_device.runtime_generation != runtime.generation()) {
    tls_current_device = CurrentDevice{runtime.generation(), 0};
  }
  return tls_current_device.ordinal;
}

// Runs an API function's body, handing it the function's name for log lines (inside a lambda,
// __func__ would say "operator()"). NotReady answers a query; it is not a failure and does not
// become the last error.
template <class Body>
infinirtError_t Guard(const char* function, Body&& body) {
  infinirtError_t error;
  try {
    error = body(function);
  } catch (const infinirt::core::RuntimeUnloading&) {
    error =
        Fail(infinirtErrorCudartUnloading, "{}: the runtime has been torn down at exit", function);
  } catch (const std::bad_alloc&) {
    error = Fail(infinirtErrorMemoryAllocation, "{}: out of host memory", function);
  } catch (const std::exception& exception) {
    Log().error("{}: internal error: {}", function, exception.what());
    error = infinirtErrorUnknown;
  } catch (...) {
    Log().error("{}: internal error", function);
    error = infinirtErrorUnknown;
  }
  if (error != infinirtSuccess && error != infinirtErrorNotReady) tls_last_error = error;
  return error;
}

// A device resolved to its backend.
struct Target {
  Backend* backend = nullptr;
  int backend_index = -1;
  int device = -1;  // flat ordinal
  int local = -1;   // the backend's own index
};

struct StreamTarget : Target {
  void* stream = nullptr;  // the plugin's handle, or one of the special values
};

infinirtError_t DeviceTarget(Runtime& runtime, int device, Target* target, const char* function) {
  const auto& devices = runtime.devices();
  if (devices.empty()) return Fail(infinirtErrorNoDevice, "{}: no device is available", function);
  if (device < 0 || device >= static_cast<int>(devices.size())) {
    return Fail(infinirtErrorInvalidDevice, "{}: device {} is not in [0, {})", function, device,
                devices.size());
  }
  target->backend_index = devices[device].backend;
  target->backend = &runtime.backend(target->backend_index);
  target->device = device;
  target->local = devices[device].local_device;
  return infinirtSuccess;
}

infinirtError_t CurrentTarget(Runtime& runtime, Target* target, const char* function) {
  return DeviceTarget(runtime, CurrentOrdinal(runtime), target, function);
}

Target TargetOf(Runtime& runtime, const ObjectRecord& record) {
  Target target;
  target.backend_index = record.backend;
  target.backend = &runtime.backend(record.backend);
  target.device = record.device;
  target.local = record.local_device;
  return target;
}

Target TargetOf(Runtime& runtime, const Allocation& allocation) {
  Target target;
  target.backend_index = allocation.backend;
  target.backend = &runtime.backend(allocation.backend);
  target.device = allocation.device;
  target.local = allocation.local_device;
  return target;
}

uint64_t HandleValue(const void* handle) { return reinterpret_cast<uintptr_t>(handle); }

infinirtError_t ResolveStream(Runtime& runtime, infinirtStream_t stream, StreamTarget* target,
                              const char* function) {
  const uint64_t value = HandleValue(stream);
  if (value == 0 || value == HandleValue(infinirtStreamLegacy) ||
      value == HandleValue(infinirtStreamPerThread)) {
    if (infinirtError_t error = CurrentTarget(runtime, target, function)) return error;
    target->stream = value == HandleValue(infinirtStreamPerThread)
                         ? INFINIRT_PLUGIN_STREAM_PER_THREAD
                         : INFINIRT_PLUGIN_STREAM_LEGACY;
    return infinirtSuccess;
  }
  ObjectRecord record;
  if (!runtime.streams().Lookup(value, &record)) {
    return Fail(infinirtErrorInvalidResourceHandle, "{}: {} is not a live stream", function,
                static_cast<const void*>(stream));
  }
  static_cast<Target&>(*target) = TargetOf(runtime, record);
  target->stream = record.plugin_handle;
  return infinirtSuccess;
}

infinirtError_t ResolveObject(HandleTable& table, const void* handle, const char* what,
                              ObjectRecord* record, const char* function) {
  if (!table.Lookup(HandleValue(handle), record)) {
    return Fail(infinirtErrorInvalidResourceHandle, "{}: {} is not a live {}", function, handle,
                what);
  }
  return infinirtSuccess;
}

// A plugin entry that takes (device, handle) and nothing else.
using HandleEntry = infinirtError_t (*infinirtPluginTable::*)(int, void*);

// Resolves a stream (special values included) and calls the owning backend's entry on it.
infinirtError_t CallOnStream(infinirtStream_t stream, HandleEntry entry, const char* function) {
  StreamTarget target;
  if (auto error = ResolveStream(Runtime::Get(), stream, &target, function)) return error;
  return (target.backend->table.*entry)(target.local, target.stream);
}

// Resolves an event and calls the owning backend's entry on it.
infinirtError_t CallOnEvent(infinirtEvent_t event, HandleEntry entry, const char* function) {
  Runtime& runtime = Runtime::Get();
  ObjectRecord record;
  if (auto error = ResolveObject(runtime.events(), event, "event", &record, function)) {
    return error;
  }
  return (runtime.backend(record.backend).table.*entry)(record.local_device, record.plugin_handle);
}

// Registers a new object and hands out its handle; destroys the plugin object if the table
// is full.
template <class Handle, class DestroyEntry>
infinirtError_t Publish(HandleTable& table, const Target& target, void* plugin_handle,
                        unsigned int flags, Handle* out, DestroyEntry destroy,
                        const char* function) {
  ObjectRecord record;
  record.backend = target.backend_index;
  record.device = target.device;
  record.local_device = target.local;
  record.plugin_handle = plugin_handle;
  record.flags = flags;
  const uint64_t value = table.Insert(record);
  if (value == 0) {
    destroy(target.local, plugin_handle);
    return Fail(infinirtErrorMemoryAllocation, "{}: too many live objects", function);
  }
  *out = reinterpret_cast<Handle>(static_cast<uintptr_t>(value));
  return infinirtSuccess;
}

infinirtError_t RegisterAllocation(Runtime& runtime, const Target& target, void* pointer,
                                   size_t size, MemoryKind kind, const char* function) {
  Allocation allocation;
  allocation.base = reinterpret_cast<uintptr_t>(pointer);
  allocation.size = size;
  allocation.kind = kind;
  allocation.backend = target.backend_index;
  allocation.device = target.device;
  allocation.local_device = target.local;
  if (!runtime.allocations().Add(allocation)) {
    Log().error("{}: backend '{}' returned {} which is already allocated", function,
                target.backend->name, pointer);
    return infinirtErrorUnknown;
  }
  return infinirtSuccess;
}

// Where the bytes of a copy or memset live.
struct Span {
  std::optional<Allocation> allocation;
  bool on_device() const { return allocation && allocation->IsDeviceMemory(); }
};

infinirtError_t LookUpSpan(Runtime& runtime, const void* pointer, size_t count, const char* role,
                           Span* span, const char* function) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  span->allocation = runtime.allocations().Find(address);
  if (span->allocation) {
    const uintptr_t end = span->allocation->base + span->allocation->size;
    if (count > end - address) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: {} bytes at {} ({}) run past the end of its {}-byte allocation", function,
                  count, pointer, role, span->allocation->size);
    }
  }
  return infinirtSuccess;
}

enum infinirtMemcpyKind InferKind(const Span& dst, const Span& src) {
  if (src.on_device()) {
    return dst.on_device() ? infinirtMemcpyDeviceToDevice : infinirtMemcpyDeviceToHost;
  }
  return dst.on_device() ? infinirtMemcpyHostToDevice : infinirtMemcpyHostToHost;
}

// Validates a copy and finds the backend that performs it: the stream's for an asynchronous
// copy, otherwise the owner of the device memory involved, otherwise the current device.
infinirtError_t RouteCopy(Runtime& runtime, void* dst, const void* src, size_t count,
                          enum infinirtMemcpyKind kind, const StreamTarget* stream, Target* target,
                          enum infinirtMemcpyKind* resolved_kind, const char* function) {
  if (static_cast<unsigned>(kind) > static_cast<unsigned>(infinirtMemcpyDefault)) {
    return Fail(infinirtErrorInvalidMemcpyDirection, "{}: {} is not a memcpy kind", function,
                static_cast<int>(kind));
  }
  if (dst == nullptr || src == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: {} pointer is NULL", function,
                dst == nullptr ? "destination" : "source");
  }
  Span dst_span, src_span;
  if (auto e = LookUpSpan(runtime, dst, count, "destination", &dst_span, function)) return e;
  if (auto e = LookUpSpan(runtime, src, count, "source", &src_span, function)) return e;
  const Span* device_sides[] = {&dst_span, &src_span};
  for (const Span* side : device_sides) {
    if (!side->on_device()) continue;
    const int owner = side->allocation->backend;
    const int performer = stream ? stream->backend_index
                                 : (dst_span.on_device() ? dst_span.allocation->backend : owner);
    if (owner != performer) {
      return Fail(infinirtErrorNotSupported,
                  "{}: copies between devices of different backends are not supported yet",
                  function);
    }
  }
  if (stream) {
    *target = *stream;
  } else if (dst_span.on_device()) {
    *target = TargetOf(runtime, *dst_span.allocation);
  } else if (src_span.on_device()) {
    *target = TargetOf(runtime, *src_span.allocation);
  } else if (auto error = CurrentTarget(runtime, target, function)) {
    return error;
  }
  *resolved_kind = kind == infinirtMemcpyDefault ? InferKind(dst_span, src_span) : kind;
  return infinirtSuccess;
}

// Validates a memset: the memory must be a known allocation the performing backend can reach.
infinirtError_t RouteMemset(Runtime& runtime, void* pointer, size_t count,
                            const StreamTarget* stream, Target* target, const char* function) {
  if (pointer == nullptr) return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function);
  Span span;
  if (auto e = LookUpSpan(runtime, pointer, count, "memset target", &span, function)) return e;
  if (!span.allocation) {
    return Fail(infinirtErrorInvalidValue, "{}: {} was not allocated by InfiniRT", function,
                pointer);
  }
  if (stream) {
    if (span.on_device() && span.allocation->backend != stream->backend_index) {
      return Fail(infinirtErrorNotSupported,
                  "{}: memory of backend '{}' cannot be set from a stream of backend '{}'",
                  function, runtime.backend(span.allocation->backend).name, stream->backend->name);
    }
    *target = *stream;
  } else {
    *target = TargetOf(runtime, *span.allocation);
  }
  return infinirtSuccess;
}

infinirtError_t FreeRegistered(void* pointer, bool host, const char* function) {
  if (pointer == nullptr) return infinirtSuccess;
  Runtime& runtime = Runtime::Get();
  auto accept = [host](MemoryKind kind) {
    return host ? kind == MemoryKind::kPinnedHost : kind != MemoryKind::kPinnedHost;
  };
  auto removed = runtime.allocations().RemoveExact(reinterpret_cast<uintptr_t>(pointer), accept);
  if (!removed) {
    return Fail(infinirtErrorInvalidValue,
                "{}: {} is not the start of a live {} allocation (unknown, interior, of another "
                "kind or already freed)",
                function, pointer, host ? "pinned host" : "device");
  }
  Backend& owner = runtime.backend(removed->backend);
  const infinirtError_t error = host ? owner.table.FreeHost(removed->local_device, pointer)
                                     : owner.table.Free(removed->local_device, pointer);
  // A refused free has no effect: the allocation stays live and can be freed later.
  if (error != infinirtSuccess) runtime.allocations().Add(*removed);
  return error;
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
    const size_t devices = Runtime::Get().devices().size();
    *count = static_cast<int>(devices);
    if (devices == 0)
      return Fail(infinirtErrorNoDevice, "{}: no device is available", function_name);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtSetDevice(int device) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = DeviceTarget(runtime, device, &target, function_name)) return error;
    tls_current_device = CurrentDevice{runtime.generation(), device};
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGetDevice(int* device) {
  return Guard(__func__, [&](const char* function_name) {
    if (device == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: device is NULL", function_name);
    Runtime& runtime = Runtime::Get();
    if (runtime.devices().empty()) {
      return Fail(infinirtErrorNoDevice, "{}: no device is available", function_name);
    }
    *device = CurrentOrdinal(runtime);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceSynchronize(void) {
  return Guard(__func__, [&](const char* function_name) {
    Target target;
    if (auto error = CurrentTarget(Runtime::Get(), &target, function_name)) return error;
    return target.backend->table.DeviceSynchronize(target.local);
  });
}

infinirtError_t infinirtDeviceReset(void) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    if (auto error = runtime.ReleaseDeviceObjects(target.device)) return error;
    return target.backend->table.DeviceReset(target.local);
  });
}

infinirtError_t infinirtGetDeviceProperties(struct infinirtDeviceProp* prop, int device) {
  return Guard(__func__, [&](const char* function_name) {
    if (prop == nullptr) return Fail(infinirtErrorInvalidValue, "{}: prop is NULL", function_name);
    Target target;
    if (auto error = DeviceTarget(Runtime::Get(), device, &target, function_name)) return error;
    std::memset(prop, 0, sizeof(*prop));
    if (auto error = target.backend->table.GetDeviceProperties(target.local, prop)) return error;
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
    return target.backend->table.DeviceGetAttribute(target.local, value, attr);
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
    return target.backend->table.DriverGetVersion(target.local, driverVersion);
  });
}

// ------------------------------------------------------------------------------------------
// Errors
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtGetLastError(void) {
  const infinirtError_t error = tls_last_error;
  tls_last_error = infinirtSuccess;
  return error;
}

infinirtError_t infinirtPeekAtLastError(void) { return tls_last_error; }

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
    *devPtr = nullptr;
    if (size == 0) return infinirtSuccess;
    void* pointer = nullptr;
    if (auto error = target.backend->table.Malloc(target.local, &pointer, size)) return error;
    if (pointer == nullptr) {
      return Fail(infinirtErrorMemoryAllocation, "{}: backend returned NULL", function_name);
    }
    if (auto error = RegisterAllocation(runtime, target, pointer, size, MemoryKind::kDevice,
                                        function_name)) {
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
    *pHost = nullptr;
    if (size == 0) return infinirtSuccess;
    void* pointer = nullptr;
    if (auto error = target.backend->table.HostAlloc(target.local, &pointer, size, flags)) {
      return error;
    }
    if (pointer == nullptr) {
      return Fail(infinirtErrorMemoryAllocation, "{}: backend returned NULL", function_name);
    }
    if (auto error = RegisterAllocation(runtime, target, pointer, size, MemoryKind::kPinnedHost,
                                        function_name)) {
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

infinirtError_t infinirtMallocAsync(void** devPtr, size_t size, infinirtStream_t hStream) {
  return Guard(__func__, [&](const char* function_name) {
    (void)devPtr, (void)size, (void)hStream;
    return Fail(infinirtErrorNotSupported, "{}: stream-ordered allocation is not supported yet",
                function_name);
  });
}

infinirtError_t infinirtFreeAsync(void* devPtr, infinirtStream_t hStream) {
  return Guard(__func__, [&](const char* function_name) {
    (void)devPtr, (void)hStream;
    return Fail(infinirtErrorNotSupported, "{}: stream-ordered allocation is not supported yet",
                function_name);
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
    return target.backend->table.MemGetInfo(target.local, free, total);
  });
}

infinirtError_t infinirtMemcpy(void* dst, const void* src, size_t count,
                               enum infinirtMemcpyKind kind) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    if (count == 0 && static_cast<unsigned>(kind) <= infinirtMemcpyDefault) return infinirtSuccess;
    Target target;
    enum infinirtMemcpyKind resolved;
    if (auto error =
            RouteCopy(runtime, dst, src, count, kind, nullptr, &target, &resolved, function_name)) {
      return error;
    }
    return target.backend->table.Memcpy(target.local, dst, src, count, resolved);
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
    if (auto error = RouteCopy(runtime, dst, src, count, kind, &stream_target, &target, &resolved,
                               function_name)) {
      return error;
    }
    // A host-to-host copy is synchronous with respect to the host (CUDA); the plugin ABI makes
    // that the plugin's job, since only it can refuse before enqueuing (in a host function).
    return stream_target.backend->table.MemcpyAsync(stream_target.local, dst, src, count, resolved,
                                                    stream_target.stream);
  });
}

infinirtError_t infinirtMemset(void* devPtr, int value, size_t count) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    if (count == 0) return infinirtSuccess;
    Target target;
    if (auto error = RouteMemset(runtime, devPtr, count, nullptr, &target, function_name))
      return error;
    return target.backend->table.Memset(target.local, devPtr, value, count);
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
    return stream_target.backend->table.MemsetAsync(stream_target.local, devPtr, value, count,
                                                    stream_target.stream);
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
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    void* plugin_stream = nullptr;
    if (auto error = target.backend->table.StreamCreate(target.local, &plugin_stream, flags)) {
      return error;
    }
    return Publish(runtime.streams(), target, plugin_stream, flags, pStream,
                   target.backend->table.StreamDestroy, function_name);
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
      return Fail(infinirtErrorInvalidResourceHandle, "{}: {} is not a live stream", function_name,
                  static_cast<void*>(stream));
    }
    return runtime.backend(record.backend)
        .table.StreamDestroy(record.local_device, record.plugin_handle);
  });
}

infinirtError_t infinirtStreamSynchronize(infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    return CallOnStream(stream, &infinirtPluginTable::StreamSynchronize, function_name);
  });
}

infinirtError_t infinirtStreamQuery(infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    return CallOnStream(stream, &infinirtPluginTable::StreamQuery, function_name);
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
      return Fail(infinirtErrorNotSupported,
                  "{}: waiting on an event of another backend is not supported yet", function_name);
    }
    return target.backend->table.StreamWaitEvent(target.local, target.stream,
                                                 event_record.plugin_handle, flags);
  });
}

infinirtError_t infinirtLaunchHostFunc(infinirtStream_t stream, infinirtHostFn_t fn,
                                       void* userData) {
  return Guard(__func__, [&](const char* function_name) {
    StreamTarget target;
    if (auto error = ResolveStream(Runtime::Get(), stream, &target, function_name)) return error;
    if (fn == nullptr) return Fail(infinirtErrorInvalidValue, "{}: fn is NULL", function_name);
    return target.backend->table.LaunchHostFunc(target.local, target.stream, fn, userData);
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
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    void* plugin_event = nullptr;
    if (auto error = target.backend->table.EventCreate(target.local, &plugin_event, flags)) {
      return error;
    }
    return Publish(runtime.events(), target, plugin_event, flags, event,
                   target.backend->table.EventDestroy, function_name);
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
    return target.backend->table.EventRecord(target.local, record.plugin_handle, target.stream);
  });
}

infinirtError_t infinirtEventQuery(infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function_name) {
    return CallOnEvent(event, &infinirtPluginTable::EventQuery, function_name);
  });
}

infinirtError_t infinirtEventSynchronize(infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function_name) {
    return CallOnEvent(event, &infinirtPluginTable::EventSynchronize, function_name);
  });
}

infinirtError_t infinirtEventDestroy(infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (!runtime.events().Remove(HandleValue(event), &record)) {
      return Fail(infinirtErrorInvalidResourceHandle, "{}: {} is not a live event", function_name,
                  static_cast<void*>(event));
    }
    return runtime.backend(record.backend)
        .table.EventDestroy(record.local_device, record.plugin_handle);
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
    return runtime.backend(first.backend)
        .table.EventElapsedTime(first.local_device, ms, first.plugin_handle, last.plugin_handle);
  });
}

// ------------------------------------------------------------------------------------------
// Stream capture and graphs
// ------------------------------------------------------------------------------------------

namespace {
infinirtError_t GraphsNotSupported(const char* function) {
  return Fail(infinirtErrorNotSupported, "{}: stream capture and graphs are not supported yet",
              function);
}
}  // namespace

infinirtError_t infinirtStreamBeginCapture(infinirtStream_t stream,
                                           enum infinirtStreamCaptureMode mode) {
  return Guard(__func__, [&](const char* function_name) {
    (void)stream, (void)mode;
    return GraphsNotSupported(function_name);
  });
}

infinirtError_t infinirtStreamEndCapture(infinirtStream_t stream, infinirtGraph_t* pGraph) {
  return Guard(__func__, [&](const char* function_name) {
    (void)stream, (void)pGraph;
    return GraphsNotSupported(function_name);
  });
}

infinirtError_t infinirtStreamIsCapturing(infinirtStream_t stream,
                                          enum infinirtStreamCaptureStatus* pCaptureStatus) {
  return Guard(__func__, [&](const char* function_name) {
    StreamTarget target;
    if (auto error = ResolveStream(Runtime::Get(), stream, &target, function_name)) return error;
    if (pCaptureStatus == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pCaptureStatus is NULL", function_name);
    }
    return target.backend->table.StreamIsCapturing(target.local, target.stream, pCaptureStatus);
  });
}

infinirtError_t infinirtGraphInstantiate(infinirtGraphExec_t* pGraphExec, infinirtGraph_t graph,
                                         unsigned long long flags) {
  return Guard(__func__, [&](const char* function_name) {
    (void)pGraphExec, (void)graph, (void)flags;
    return GraphsNotSupported(function_name);
  });
}

infinirtError_t infinirtGraphInstantiateWithFlags(infinirtGraphExec_t* pGraphExec,
                                                  infinirtGraph_t graph, unsigned long long flags) {
  return infinirtGraphInstantiate(pGraphExec, graph, flags);
}

infinirtError_t infinirtGraphLaunch(infinirtGraphExec_t graphExec, infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    (void)graphExec, (void)stream;
    return GraphsNotSupported(function_name);
  });
}

infinirtError_t infinirtGraphExecDestroy(infinirtGraphExec_t graphExec) {
  return Guard(__func__, [&](const char* function_name) {
    (void)graphExec;
    return GraphsNotSupported(function_name);
  });
}

infinirtError_t infinirtGraphDestroy(infinirtGraph_t graph) {
  return Guard(__func__, [&](const char* function_name) {
    (void)graph;
    return GraphsNotSupported(function_name);
  });
}

// ------------------------------------------------------------------------------------------
// Extensions
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtInit(void) {
  return Guard(__func__, [&](const char* function_name) {
    if (Runtime::Get().devices().empty()) {
      return Fail(infinirtErrorNoDevice, "{}: no backend contributed a device", function_name);
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
