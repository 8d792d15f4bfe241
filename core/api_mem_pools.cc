// The public C API for memory pools: the devices' default and current pools, pools of the
// program's own, their attributes and which devices reach their memory. Allocation from them
// (MallocAsync, MallocFromPoolAsync) is with the rest of memory, in api_memory.cc.

#include <vector>

#include "api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace infinirt::core::api {

infinirtError_t ResolvePool(Runtime& runtime, infinirtMemPool_t pool, ObjectRecord* record,
                            const char* function) {
  if (pool == nullptr) return Fail(infinirtErrorInvalidValue, "{}: memPool is NULL", function);
  return ResolveObject(runtime.mem_pools(), pool, "memory pool", record, function);
}

}  // namespace infinirt::core::api

namespace {

// A device's default pool or its current one (which_pool), handed out as a handle.
infinirtError_t GetDevicePool(infinirtMemPool_t* memPool, int device,
                              uint64_t (Runtime::*which_pool)(int), const char* function_name) {
  return Guard(function_name, [&](const char* function) {
    if (memPool == nullptr) return Fail(infinirtErrorInvalidValue, "{}: memPool is NULL", function);
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = DeviceTarget(runtime, device, &target, function)) return error;
    const uint64_t handle = (runtime.*which_pool)(device);
    if (handle == 0) return Fail(infinirtErrorMemoryAllocation, "{}: no pool handle", function);
    *memPool = reinterpret_cast<infinirtMemPool_t>(static_cast<uintptr_t>(handle));
    return infinirtSuccess;
  });
}

bool IsPoolAttribute(enum infinirtMemPoolAttr attr) {
  const int value = static_cast<int>(attr);
  return value >= infinirtMemPoolReuseFollowEventDependencies &&
         value <= infinirtMemPoolAttrUsedMemHigh;
}

// A pool's attribute entry: the device-level one for a default pool, the pool's otherwise.
infinirtError_t PoolAttribute(Backend& owner, const ObjectRecord& pool, bool set,
                              enum infinirtMemPoolAttr attr, void* value) {
  const infinirtPluginTable& table = owner.table;
  if (IsDefaultPool(pool)) {
    return set ? table.MemPoolSetAttribute(pool.local_device, attr, value)
               : table.MemPoolGetAttribute(pool.local_device, attr, value);
  }
  return set ? table.PoolSetAttribute(pool.local_device, pool.plugin_handle, attr, value)
             : table.PoolGetAttribute(pool.local_device, pool.plugin_handle, attr, value);
}

constexpr unsigned int kKnownHandleTypes =
    infinirtMemHandleTypePosixFileDescriptor | infinirtMemHandleTypeWin32 |
    infinirtMemHandleTypeWin32Kmt | infinirtMemHandleTypeFabric;

// The handles other processes could open a pool by: none, or POSIX file descriptors (the backend
// says whether it makes them); Windows and fabric handles are NotSupported, unknown bits
// InvalidValue.
infinirtError_t CheckHandleType(enum infinirtMemAllocationHandleType types, const char* function) {
  const auto bits = static_cast<unsigned int>(types);
  if (bits & ~kKnownHandleTypes) {
    return Fail(infinirtErrorInvalidValue, "{}: unknown handle types {:#x}", function, bits);
  }
  if (bits & ~static_cast<unsigned int>(infinirtMemHandleTypePosixFileDescriptor)) {
    return Fail(infinirtErrorNotSupported,
                "{}: only POSIX file descriptors can share a pool (handle types {:#x})", function,
                bits);
  }
  return infinirtSuccess;
}

// A pool location's device. A location that names no device is InvalidValue, as NVIDIA's
// runtime answers in MemPoolCreate and MemPoolGetAccess (their documented codes have no
// InvalidDevice).
infinirtError_t LocationTarget(Runtime& runtime, int id, Target* target, const char* function) {
  if (id < 0 || id >= static_cast<int>(runtime.devices().size())) {
    return Fail(infinirtErrorInvalidValue, "{}: location id {} names no device", function, id);
  }
  return DeviceTarget(runtime, id, target, function);
}

// The properties of a pool to create, as the backend of its device sees them (*target).
infinirtError_t CheckPoolProps(Runtime& runtime, const infinirtMemPoolProps& props, Target* target,
                               infinirtMemPoolProps* local, const char* function) {
  if (props.allocType == infinirtMemAllocationTypeManaged) {
    return Fail(infinirtErrorNotSupported, "{}: pools of managed memory are not supported",
                function);
  }
  if (props.allocType != infinirtMemAllocationTypePinned) {
    return Fail(infinirtErrorInvalidValue, "{}: allocType {} is not Pinned", function,
                static_cast<int>(props.allocType));
  }
  if (auto error = CheckHandleType(props.handleTypes, function)) return error;
  switch (props.location.type) {
    case infinirtMemLocationTypeDevice:
      break;
    case infinirtMemLocationTypeHost:
    case infinirtMemLocationTypeHostNuma:
      return Fail(infinirtErrorNotSupported, "{}: pools of host memory are not supported",
                  function);
    default:
      return Fail(infinirtErrorInvalidValue, "{}: location type {} is not a device", function,
                  static_cast<int>(props.location.type));
  }
  if (auto error = LocationTarget(runtime, props.location.id, target, function)) return error;
  *local = props;
  local->location.id = target->local;
  return infinirtSuccess;
}

// An access descriptor's device, checked, as the pool's backend numbers it. A location naming no
// device is InvalidDevice for SetAccess and InvalidValue for GetAccess (NVIDIA's answers):
// unknown_device_error says which.
infinirtError_t AccessDevice(Runtime& runtime, const ObjectRecord& pool,
                             const infinirtMemLocation& location, int* local,
                             infinirtError_t unknown_device_error, const char* function) {
  if (location.type != infinirtMemLocationTypeDevice) {
    return Fail(infinirtErrorInvalidValue, "{}: location type {} is not a device", function,
                static_cast<int>(location.type));
  }
  Target target;
  const infinirtError_t found = unknown_device_error == infinirtErrorInvalidValue
                                    ? LocationTarget(runtime, location.id, &target, function)
                                    : DeviceTarget(runtime, location.id, &target, function);
  if (found != infinirtSuccess) return found;
  if (target.backend_index != pool.backend) {
    return Fail(infinirtErrorInvalidValue,
                "{}: device {} is of another backend than the pool's; backends share no memory",
                function, location.id);
  }
  *local = target.local;
  return infinirtSuccess;
}

}  // namespace

extern "C" {

infinirtError_t infinirtDeviceGetDefaultMemPool(infinirtMemPool_t* memPool, int device) {
  return GetDevicePool(memPool, device, &Runtime::MemPoolHandle, __func__);
}

infinirtError_t infinirtDeviceGetMemPool(infinirtMemPool_t* memPool, int device) {
  return GetDevicePool(memPool, device, &Runtime::CurrentMemPool, __func__);
}

infinirtError_t infinirtDeviceSetMemPool(int device, infinirtMemPool_t memPool) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = DeviceTarget(runtime, device, &target, function)) return error;
    ObjectRecord record;
    if (auto error = ResolvePool(runtime, memPool, &record, function)) return error;
    if (record.device != device) {
      return Fail(infinirtErrorInvalidValue, "{}: the pool belongs to device {}, not {}", function,
                  record.device, device);
    }
    if (record.flags & kPoolImported) {
      return Fail(infinirtErrorInvalidValue, "{}: an imported pool makes no allocations", function);
    }
    runtime.SetCurrentMemPool(device, reinterpret_cast<uintptr_t>(memPool));
    return infinirtSuccess;
  });
}

infinirtError_t infinirtMemPoolGetAttribute(infinirtMemPool_t memPool,
                                            enum infinirtMemPoolAttr attr, void* value) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolvePool(runtime, memPool, &record, function)) return error;
    if (value == nullptr) return Fail(infinirtErrorInvalidValue, "{}: value is NULL", function);
    if (!IsPoolAttribute(attr)) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a pool attribute", function,
                  static_cast<int>(attr));
    }
    Backend& owner = runtime.backend(record.backend);
    return BackendAnswer(PoolAttribute(owner, record, /*set=*/false, attr, value), owner, function);
  });
}

infinirtError_t infinirtMemPoolSetAttribute(infinirtMemPool_t memPool,
                                            enum infinirtMemPoolAttr attr, void* value) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolvePool(runtime, memPool, &record, function)) return error;
    if (value == nullptr) return Fail(infinirtErrorInvalidValue, "{}: value is NULL", function);
    switch (attr) {
      case infinirtMemPoolReuseFollowEventDependencies:
      case infinirtMemPoolReuseAllowOpportunistic:
      case infinirtMemPoolReuseAllowInternalDependencies:
      case infinirtMemPoolAttrReleaseThreshold:
        break;
      case infinirtMemPoolAttrReservedMemHigh:
      case infinirtMemPoolAttrUsedMemHigh:
        if (*static_cast<const uint64_t*>(value) != 0) {
          return Fail(infinirtErrorInvalidValue, "{}: a high watermark can only be reset to 0",
                      function);
        }
        break;
      default:
        return Fail(infinirtErrorInvalidValue, "{}: attribute {} cannot be set", function,
                    static_cast<int>(attr));
    }
    Backend& owner = runtime.backend(record.backend);
    return BackendAnswer(PoolAttribute(owner, record, /*set=*/true, attr, value), owner, function);
  });
}

infinirtError_t infinirtMemPoolTrimTo(infinirtMemPool_t memPool, size_t minBytesToKeep) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolvePool(runtime, memPool, &record, function)) return error;
    Backend& owner = runtime.backend(record.backend);
    const infinirtError_t trimmed =
        IsDefaultPool(record)
            ? owner.table.MemPoolTrimTo(record.local_device, minBytesToKeep)
            : owner.table.PoolTrimTo(record.local_device, record.plugin_handle, minBytesToKeep);
    return BackendAnswer(trimmed, owner, function);
  });
}

infinirtError_t infinirtMemPoolCreate(infinirtMemPool_t* memPool,
                                      const struct infinirtMemPoolProps* poolProps) {
  return Guard(__func__, [&](const char* function) {
    if (memPool == nullptr || poolProps == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: memPool or poolProps is NULL", function);
    }
    Runtime& runtime = Runtime::Get();
    Target target;
    infinirtMemPoolProps local;
    if (auto error = CheckPoolProps(runtime, *poolProps, &target, &local, function)) return error;
    const infinirtPluginTable& table = target.backend->table;
    void* pool = nullptr;
    if (auto error = table.MemPoolCreate(target.local, &pool, &local)) {
      return BackendAnswer(error, *target.backend, function);
    }
    return Publish(runtime.mem_pools(), target, pool, 0, memPool, table.MemPoolDestroy, function);
  });
}

// Memory still allocated from the pool stays usable; the backend releases the pool after it.
infinirtError_t infinirtMemPoolDestroy(infinirtMemPool_t memPool) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    if (memPool == nullptr) return Fail(infinirtErrorInvalidValue, "{}: memPool is NULL", function);
    ObjectRecord record;
    if (!runtime.mem_pools().Lookup(HandleValue(memPool), &record)) {
      return StaleOrInvalidHandle(runtime.mem_pools(), memPool, "memory pool", function);
    }
    if (IsDefaultPool(record)) {
      return Fail(infinirtErrorInvalidValue, "{}: a device's default pool cannot be destroyed",
                  function);
    }
    const uint64_t handle = HandleValue(memPool);
    if (!runtime.mem_pools().Remove(handle, &record)) {
      return InvalidHandle(memPool, "memory pool", function);
    }
    // Destroying a device's current pool makes its default pool current again.
    if (runtime.CurrentMemPool(record.device) == handle) {
      runtime.SetCurrentMemPool(record.device, 0);
    }
    Backend& owner = runtime.backend(record.backend);
    return BackendAnswer(owner.table.MemPoolDestroy(record.local_device, record.plugin_handle),
                         owner, function);
  });
}

infinirtError_t infinirtMemPoolExportToShareableHandle(
    void* shareableHandle, infinirtMemPool_t memPool,
    enum infinirtMemAllocationHandleType handleType, unsigned int flags) {
  return Guard(__func__, [&](const char* function) {
    if (shareableHandle == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: shareableHandle is NULL", function);
    }
    if (flags != 0) return Fail(infinirtErrorInvalidValue, "{}: flags must be 0", function);
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolvePool(runtime, memPool, &record, function)) return error;
    if (IsDefaultPool(record) || (record.flags & kPoolImported)) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: a device's default pool and an imported pool cannot be exported", function);
    }
    Backend& owner = runtime.backend(record.backend);
    return BackendAnswer(
        owner.table.MemPoolExportToShareableHandle(record.local_device, shareableHandle,
                                                   record.plugin_handle, handleType, flags),
        owner, function);
  });
}

// The pool is the current device's: it imports the allocations other processes export from
// theirs.
infinirtError_t infinirtMemPoolImportFromShareableHandle(
    infinirtMemPool_t* memPool, void* shareableHandle,
    enum infinirtMemAllocationHandleType handleType, unsigned int flags) {
  return Guard(__func__, [&](const char* function) {
    if (memPool == nullptr) return Fail(infinirtErrorInvalidValue, "{}: memPool is NULL", function);
    if (flags != 0) return Fail(infinirtErrorInvalidValue, "{}: flags must be 0", function);
    if (handleType == infinirtMemHandleTypeNone) {
      return Fail(infinirtErrorInvalidValue, "{}: no handle type", function);
    }
    if (auto error = CheckHandleType(handleType, function)) return error;
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function)) return error;
    const infinirtPluginTable& table = target.backend->table;
    void* pool = nullptr;
    if (auto error = table.MemPoolImportFromShareableHandle(target.local, &pool, shareableHandle,
                                                            handleType, flags)) {
      return BackendAnswer(error, *target.backend, function);
    }
    return Publish(runtime.mem_pools(), target, pool, kPoolImported, memPool, table.MemPoolDestroy,
                   function);
  });
}

// The start of an allocation from a pool other processes open.
infinirtError_t infinirtMemPoolExportPointer(struct infinirtMemPoolPtrExportData* exportData,
                                             void* ptr) {
  return Guard(__func__, [&](const char* function) {
    if (exportData == nullptr || ptr == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: exportData or ptr is NULL", function);
    }
    Runtime& runtime = Runtime::Get();
    auto found = runtime.allocations().Find(reinterpret_cast<uintptr_t>(ptr));
    if (!found || found->kind != MemoryKind::kStreamOrdered ||
        found->base != reinterpret_cast<uintptr_t>(ptr)) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not the start of a pool's allocation",
                  function, ptr);
    }
    Backend& owner = runtime.backend(found->backend);
    return BackendAnswer(owner.table.MemPoolExportPointer(found->local_device, exportData, ptr),
                         owner, function);
  });
}

// Imported memory is registered as stream-ordered memory: Free and FreeAsync release it.
infinirtError_t infinirtMemPoolImportPointer(void** ptr, infinirtMemPool_t memPool,
                                             struct infinirtMemPoolPtrExportData* exportData) {
  return Guard(__func__, [&](const char* function) {
    if (ptr == nullptr || exportData == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: ptr or exportData is NULL", function);
    }
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolvePool(runtime, memPool, &record, function)) return error;
    if (!(record.flags & kPoolImported)) {
      return Fail(infinirtErrorInvalidValue, "{}: the pool was not imported", function);
    }
    Backend& owner = runtime.backend(record.backend);
    void* pointer = nullptr;
    size_t size = 0;
    if (auto error = owner.table.MemPoolImportPointer(record.local_device, &pointer, &size,
                                                      record.plugin_handle, exportData)) {
      return BackendAnswer(error, owner, function);
    }
    if (size == 0) {  // the registry needs the size; copies could not be routed without it
      owner.table.FreeAsync(record.local_device, pointer, INFINIRT_PLUGIN_STREAM_LEGACY);
      return Fail(infinirtErrorNotSupported, "{}: the backend cannot tell the imported size",
                  function);
    }
    if (auto error = RegisterAllocation(runtime, TargetOf(runtime, record), pointer, size,
                                        MemoryKind::kStreamOrdered, 0, function)) {
      owner.table.FreeAsync(record.local_device, pointer, INFINIRT_PLUGIN_STREAM_LEGACY);
      return error;
    }
    *ptr = pointer;
    return infinirtSuccess;
  });
}

// Every descriptor is checked before any is applied.
infinirtError_t infinirtMemPoolSetAccess(infinirtMemPool_t memPool,
                                         const struct infinirtMemAccessDesc* descList,
                                         size_t count) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolvePool(runtime, memPool, &record, function)) return error;
    if (count != 0 && descList == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: descList is NULL", function);
    }
    std::vector<infinirtMemAccessDesc> local(descList, descList + count);
    for (infinirtMemAccessDesc& desc : local) {
      if (auto error = AccessDevice(runtime, record, desc.location, &desc.location.id,
                                    infinirtErrorInvalidDevice, function)) {
        return error;
      }
      if (desc.flags != infinirtMemAccessFlagsProtNone &&
          desc.flags != infinirtMemAccessFlagsProtReadWrite) {
        return Fail(infinirtErrorInvalidValue, "{}: access flags {} are not None or ReadWrite",
                    function, static_cast<int>(desc.flags));
      }
      if (desc.location.id == record.local_device &&
          desc.flags != infinirtMemAccessFlagsProtReadWrite) {
        return Fail(infinirtErrorInvalidValue,
                    "{}: the pool's own device keeps its access to the pool", function);
      }
    }
    Backend& owner = runtime.backend(record.backend);
    return BackendAnswer(owner.table.MemPoolSetAccess(record.local_device, record.plugin_handle,
                                                      local.data(), local.size()),
                         owner, function);
  });
}

infinirtError_t infinirtMemPoolGetAccess(enum infinirtMemAccessFlags* flags,
                                         infinirtMemPool_t memPool,
                                         struct infinirtMemLocation* location) {
  return Guard(__func__, [&](const char* function) {
    if (flags == nullptr || location == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: flags or location is NULL", function);
    }
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolvePool(runtime, memPool, &record, function)) return error;
    infinirtMemLocation local = *location;
    if (auto error = AccessDevice(runtime, record, *location, &local.id, infinirtErrorInvalidValue,
                                  function)) {
      return error;
    }
    Backend& owner = runtime.backend(record.backend);
    return BackendAnswer(
        owner.table.MemPoolGetAccess(record.local_device, flags, record.plugin_handle, &local),
        owner, function);
  });
}

}  // extern "C"
