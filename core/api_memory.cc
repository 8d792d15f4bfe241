// The public C API for memory: allocation and freeing (device, managed, pinned host,
// stream-ordered, and graph-owned memory freed outside its graph), registered host memory, host
// memory's flags and device pointers, pointer attributes. Copies and sets are in
// api_memory_copy.cc, managed memory's prefetches and advice in api_memory_managed.cc, the memory
// pools of stream-ordered allocation in api_mem_pools.cc.
#include <algorithm>
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
                : kind == MemoryKind::kDevice || kind == MemoryKind::kStreamOrdered ||
                      kind == MemoryKind::kManaged;
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
  if (error != infinirtSuccess) {
    runtime.allocations().Add(*removed);
  } else if (removed->kind == MemoryKind::kManaged) {
    runtime.memory_hints().Forget(removed->base, removed->size);
  }
  return BackendAnswer(error, owner, function);
}

// Allocates through the backend (allocate), registers the allocation, and releases it again
// (release) when it cannot be registered: *out is set only when both succeed.
template <class Allocate, class Release>
infinirtError_t AllocateRegistered(Runtime& runtime, const Target& target, size_t size,
                                   MemoryKind kind, Allocate&& allocate, Release&& release,
                                   void** out, const char* function, unsigned int flags = 0) {
  void* pointer = nullptr;
  if (auto error = allocate(&pointer)) return BackendAnswer(error, *target.backend, function);
  if (pointer == nullptr) {
    return Fail(infinirtErrorMemoryAllocation, "{}: backend returned NULL", function);
  }
  if (auto error = RegisterAllocation(runtime, target, pointer, size, kind, 0, function, flags)) {
    release(pointer);
    return error;
  }
  *out = pointer;
  return infinirtSuccess;
}

// Node makers for stream-ordered memory recorded during capture.
auto AllocationNode(Runtime& runtime, const Target& target, size_t size, void** pointer_out,
                    const char* function) {
  return [&runtime, target, size, pointer_out, function](GraphData& graph, GraphNode* node) {
    return MakeAllocationNode(runtime, graph, target, size, node, pointer_out, function);
  };
}

auto FreeNode(Runtime& runtime, void* pointer, const char* function) {
  return [&runtime, pointer, function](GraphData& graph, GraphNode* node) {
    return MakeFreeNode(runtime, graph, pointer, node, function);
  };
}

// Why FreeAsync did not free: graph-owned memory (released from its live state instead),
// stream-ordered memory of another backend than the stream's, or no such allocation.
infinirtError_t FreeAsyncRefused(Runtime& runtime, void* pointer, const StreamTarget& target,
                                 const char* function) {
  if (auto released = ReleaseGraphMemory(runtime, pointer, function)) return *released;
  auto found = runtime.allocations().FindExact(reinterpret_cast<uintptr_t>(pointer));
  if (found && found->kind == MemoryKind::kStreamOrdered) {
    return Fail(infinirtErrorNotSupported,
                "{}: memory of backend '{}' cannot be freed on a stream of backend '{}'", function,
                runtime.backend(found->backend).name, target.backend->name);
  }
  return Fail(infinirtErrorInvalidValue,
              "{}: {} is not the start of a live stream-ordered allocation (unknown, interior, "
              "of another kind or already freed)",
              function, pointer);
}

// Stream-ordered memory from a pool of the stream's device: recorded as an allocation node while
// the stream captures (graph memory, whichever the pool), otherwise the backend's.
infinirtError_t AllocateFromPool(Runtime& runtime, const StreamTarget& target,
                                 const ObjectRecord& pool, size_t size, void** out,
                                 const char* function) {
  *out = nullptr;
  if (size == 0) return infinirtSuccess;
  void* pointer = nullptr;
  infinirtError_t captured;
  if (runtime.captures().Record(
          target.ref, AllocationNode(runtime, target, size, &pointer, function), &captured)) {
    if (captured == infinirtSuccess) *out = pointer;
    return captured;
  }
  const infinirtPluginTable& table = target.backend->table;
  const infinirtError_t allocated =
      IsDefaultPool(pool) ? table.MallocAsync(target.local, &pointer, size, target.stream)
                          : table.MallocFromPoolAsync(target.local, &pointer, size,
                                                      pool.plugin_handle, target.stream);
  if (allocated != infinirtSuccess) return BackendAnswer(allocated, *target.backend, function);
  if (pointer == nullptr) {
    return Fail(infinirtErrorMemoryAllocation, "{}: backend returned NULL", function);
  }
  if (auto error = RegisterAllocation(runtime, target, pointer, size, MemoryKind::kStreamOrdered, 0,
                                      function)) {
    table.FreeAsync(target.local, pointer, target.stream);
    return error;
  }
  *out = pointer;
  return infinirtSuccess;
}

}  // namespace

extern "C" {

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
    const infinirtPluginTable& table = target.backend->table;
    return AllocateRegistered(
        runtime, target, size, MemoryKind::kDevice,
        [&](void** pointer) { return table.Malloc(target.local, pointer, size); },
        [&](void* pointer) { table.Free(target.local, pointer); }, devPtr, function_name);
  });
}

infinirtError_t infinirtMallocManaged(void** devPtr, size_t size, unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    if (devPtr == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function_name);
    if (flags != infinirtMemAttachGlobal && flags != infinirtMemAttachHost) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: flags {:#x} is neither infinirtMemAttachGlobal nor infinirtMemAttachHost",
                  function_name, flags);
    }
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    if (auto error = runtime.captures().CheckUnsafeCall()) return error;
    *devPtr = nullptr;
    if (size == 0) return infinirtSuccess;  // NULL, as NVIDIA's runtime gives
    const infinirtPluginTable& table = target.backend->table;
    return AllocateRegistered(
        runtime, target, size, MemoryKind::kManaged,
        [&](void** pointer) { return table.MallocManaged(target.local, pointer, size, flags); },
        [&](void* pointer) { table.Free(target.local, pointer); }, devPtr, function_name);
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
    const infinirtPluginTable& table = target.backend->table;
    return AllocateRegistered(
        runtime, target, size, MemoryKind::kPinnedHost,
        [&](void** pointer) { return table.HostAlloc(target.local, pointer, size, flags); },
        [&](void* pointer) { table.FreeHost(target.local, pointer); }, pHost, function_name, flags);
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

infinirtError_t infinirtHostRegister(void* ptr, size_t size, unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    if (ptr == nullptr) return Fail(infinirtErrorInvalidValue, "{}: ptr is NULL", function_name);
    if (size == 0) return Fail(infinirtErrorInvalidValue, "{}: size is 0", function_name);
    constexpr unsigned int kKnownFlags = infinirtHostRegisterPortable | infinirtHostRegisterMapped |
                                         infinirtHostRegisterIoMemory |
                                         infinirtHostRegisterReadOnly;
    if (flags & ~kKnownFlags) {
      return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function_name, flags);
    }
    if (flags & infinirtHostRegisterIoMemory) {
      return Fail(infinirtErrorNotSupported, "{}: I/O memory cannot be registered", function_name);
    }
    const uintptr_t base = reinterpret_cast<uintptr_t>(ptr);
    if (size > UINTPTR_MAX - base) {
      return Fail(infinirtErrorInvalidValue, "{}: {} bytes at {} wrap around the address space",
                  function_name, size, ptr);
    }
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    if (auto error = runtime.captures().CheckUnsafeCall()) return error;
    // A range that overlaps memory InfiniRT knows: pinned or registered already, or device
    // memory (which is not the program's to register).
    const auto overlapping = runtime.allocations().Snapshot([&](const Allocation& allocation) {
      return allocation.base < base + size && base < allocation.base + allocation.size;
    });
    if (!overlapping.empty()) {
      const Allocation& known = overlapping.front();
      return Fail(known.IsDeviceMemory() ? infinirtErrorInvalidValue
                                         : infinirtErrorHostMemoryAlreadyRegistered,
                  "{}: [{}, +{}) overlaps {} memory at {:#x} ({} bytes)", function_name, ptr, size,
                  known.IsDeviceMemory() ? "device" : "pinned or registered host", known.base,
                  known.size);
    }
    const infinirtPluginTable& table = target.backend->table;
    if (auto error = table.HostRegister(target.local, ptr, size, flags)) {
      return BackendAnswer(error, *target.backend, function_name);
    }
    if (auto error = RegisterAllocation(runtime, target, ptr, size, MemoryKind::kRegisteredHost, 0,
                                        function_name, flags)) {
      table.HostUnregister(target.local, ptr);
      return error;
    }
    return infinirtSuccess;
  });
}

infinirtError_t infinirtHostUnregister(void* ptr) {
  return Guard(__func__, [&](const char* function_name) {
    if (ptr == nullptr) return Fail(infinirtErrorInvalidValue, "{}: ptr is NULL", function_name);
    Runtime& runtime = Runtime::Get();
    if (auto error = runtime.captures().CheckUnsafeCall()) return error;
    auto removed = runtime.allocations().RemoveExact(
        reinterpret_cast<uintptr_t>(ptr),
        [](const Allocation& a) { return a.kind == MemoryKind::kRegisteredHost; });
    if (!removed) {
      return Fail(infinirtErrorHostMemoryNotRegistered,
                  "{}: {} is not the start of a range infinirtHostRegister registered",
                  function_name, ptr);
    }
    Backend& owner = runtime.backend(removed->backend);
    const infinirtError_t error = owner.table.HostUnregister(removed->local_device, ptr);
    if (error != infinirtSuccess) runtime.allocations().Add(*removed);  // no effect
    return BackendAnswer(error, owner, function_name);
  });
}

infinirtError_t infinirtHostGetDevicePointer(void** pDevice, void* pHost, unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    if (pDevice == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pDevice is NULL", function_name);
    }
    if (flags != 0) {
      return Fail(infinirtErrorInvalidValue, "{}: flags must be 0, not {:#x}", function_name,
                  flags);
    }
    Runtime& runtime = Runtime::Get();
    auto allocation = runtime.allocations().Find(reinterpret_cast<uintptr_t>(pHost));
    if (!allocation || allocation->IsDeviceMemory()) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not in pinned or registered host memory",
                  function_name, pHost);
    }
    Backend& owner = runtime.backend(allocation->backend);
    return BackendAnswer(owner.table.HostGetDevicePointer(allocation->local_device, pDevice, pHost),
                         owner, function_name);
  });
}

infinirtError_t infinirtHostGetFlags(unsigned int* pFlags, void* pHost) {
  return Guard(__func__, [&](const char* function_name) {
    if (pFlags == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pFlags is NULL", function_name);
    }
    auto allocation = Runtime::Get().allocations().Find(reinterpret_cast<uintptr_t>(pHost));
    if (!allocation || allocation->IsDeviceMemory()) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not in pinned or registered host memory",
                  function_name, pHost);
    }
    // Unified addressing maps every pinned or registered range into the devices' address space:
    // NVIDIA's runtime reports each as mapped, whatever flags made it.
    *pFlags = allocation->flags | infinirtHostAllocMapped;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtMemGetInfo(size_t* free, size_t* total) {
  return Guard(__func__, [&](const char* function_name) {
    // One output may be NULL, as NVIDIA's runtime allows: the other is filled.
    if (free == nullptr && total == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: free and total are both NULL", function_name);
    }
    Target target;
    if (auto error = CurrentTarget(Runtime::Get(), &target, function_name)) return error;
    size_t free_bytes = 0, total_bytes = 0;
    const infinirtError_t answer =
        target.backend->table.MemGetInfo(target.local, &free_bytes, &total_bytes);
    if (answer == infinirtSuccess) {
      if (free != nullptr) *free = free_bytes;
      if (total != nullptr) *total = total_bytes;
    }
    return BackendAnswer(answer, *target.backend, function_name);
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
    if (!allocation->IsDeviceMemory()) {  // pinned or registered host memory
      attributes->type = infinirtMemoryTypeHost;
      attributes->hostPointer = pointer;
    } else if (allocation->kind == MemoryKind::kManaged) {
      attributes->type = infinirtMemoryTypeManaged;
      attributes->hostPointer = pointer;
    } else {
      attributes->type = infinirtMemoryTypeDevice;
    }
    return infinirtSuccess;
  });
}

// ------------------------------------------------------------------------------------------
// Stream-ordered memory and memory pools
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtMallocAsync(void** devPtr, size_t size, infinirtStream_t hStream) {
  return Guard(__func__, [&](const char* function) {
    if (devPtr == nullptr) return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function);
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, hStream, &target, function)) return error;
    // The device's current pool (DeviceSetMemPool), its default one unless the program chose.
    ObjectRecord pool;  // without a plugin handle: the default pool
    if (runtime.AnyChosenMemPool() &&
        !runtime.mem_pools().Lookup(runtime.CurrentMemPool(target.device), &pool)) {
      return Fail(infinirtErrorMemoryAllocation, "{}: no pool handle", function);
    }
    return AllocateFromPool(runtime, target, pool, size, devPtr, function);
  });
}

infinirtError_t infinirtMallocFromPoolAsync(void** ptr, size_t size, infinirtMemPool_t memPool,
                                            infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function) {
    if (ptr == nullptr) return Fail(infinirtErrorInvalidValue, "{}: ptr is NULL", function);
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function)) return error;
    ObjectRecord pool;
    if (auto error = ResolvePool(runtime, memPool, &pool, function)) return error;
    if (pool.device != target.device) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: the pool is device {}'s and the stream device {}'s; they must be one",
                  function, pool.device, target.device);
    }
    if (pool.flags & kPoolImported) {
      return Fail(infinirtErrorInvalidValue, "{}: an imported pool makes no allocations", function);
    }
    return AllocateFromPool(runtime, target, pool, size, ptr, function);
  });
}

infinirtError_t infinirtFreeAsync(void* devPtr, infinirtStream_t hStream) {
  return Guard(__func__, [&](const char* function) {
    if (devPtr == nullptr) return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function);
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, hStream, &target, function)) return error;
    infinirtError_t captured;
    if (runtime.captures().Record(target.ref, FreeNode(runtime, devPtr, function), &captured)) {
      return captured;
    }
    const uintptr_t address = reinterpret_cast<uintptr_t>(devPtr);
    auto removed =
        runtime.allocations().RemoveExact(address, [&target](const Allocation& allocation) {
          return (allocation.kind == MemoryKind::kStreamOrdered ||
                  allocation.kind == MemoryKind::kDevice) &&
                 allocation.backend == target.backend_index;
        });
    if (!removed) return FreeAsyncRefused(runtime, devPtr, target, function);
    // Memory of infinirtMalloc, as NVIDIA's runtime accepts it: freed after the stream's work
    // (the backend's Free waits for the device, which includes it), so the call blocks.
    const infinirtError_t error =
        removed->kind == MemoryKind::kDevice
            ? target.backend->table.Free(removed->local_device, devPtr)
            : target.backend->table.FreeAsync(target.local, devPtr, target.stream);
    if (error != infinirtSuccess) runtime.allocations().Add(*removed);
    return BackendAnswer(error, *target.backend, function);
  });
}

}  // extern "C"
