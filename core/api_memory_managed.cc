// The public C API for managed memory's hints: prefetches, advice, and the range attributes that
// report them (memory_hints.h). They concern memory of infinirtMallocManaged and, where the
// device reaches it, pageable memory InfiniRT did not allocate. Managed memory is allocated and
// freed with the rest of memory (api_memory.cc).
#include "api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

// count bytes from ptr, all within one infinirtMallocManaged allocation.
infinirtError_t ManagedRange(Runtime& runtime, const void* ptr, size_t count,
                             Allocation* allocation, const char* function) {
  if (ptr == nullptr) return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function);
  auto found = runtime.allocations().Find(reinterpret_cast<uintptr_t>(ptr));
  if (!found || found->kind != MemoryKind::kManaged) {
    return Fail(infinirtErrorInvalidValue, "{}: {} is not managed memory (infinirtMallocManaged)",
                function, ptr);
  }
  if (count > found->base + found->size - reinterpret_cast<uintptr_t>(ptr)) {
    return Fail(infinirtErrorInvalidValue, "{}: {} bytes from {} run past its allocation", function,
                count, ptr);
  }
  *allocation = *found;
  return infinirtSuccess;
}

// Whether a device reaches count bytes from ptr of memory InfiniRT did not allocate (its
// infinirtDevAttrPageableMemoryAccess is 1); InvalidValue for such memory where it does not, and
// for a range that wraps around the address space.
infinirtError_t CheckReachesPageableMemory(const Target& target, const void* ptr, size_t count,
                                           const char* function) {
  if (count - 1 > UINTPTR_MAX - reinterpret_cast<uintptr_t>(ptr)) {
    return Fail(infinirtErrorInvalidValue, "{}: {} bytes from {} wrap around the address space",
                function, count, ptr);
  }
  int pageable = 0;
  if (target.backend->table.DeviceGetAttribute(
          target.local, &pageable, infinirtDevAttrPageableMemoryAccess) == infinirtSuccess &&
      pageable == 1) {
    return infinirtSuccess;
  }
  return Fail(infinirtErrorInvalidValue,
              "{}: {} is not managed memory (infinirtMallocManaged), and device {} does not "
              "reach pageable memory",
              function, ptr, target.device);
}

// Advice about memory InfiniRT did not allocate (malloc'd, mmap'd): taken, as NVIDIA's runtime
// takes it, where the device it concerns (the location's, else the current one) reaches pageable
// memory (its infinirtDevAttrPageableMemoryAccess is 1), and passed to that device's backend.
infinirtError_t AdvisePageable(Runtime& runtime, const void* ptr, size_t count,
                               enum infinirtMemoryAdvise advice, infinirtMemLocation location,
                               bool needs_location, const char* function) {
  const bool on_device = needs_location && location.type == infinirtMemLocationTypeDevice;
  Target target;
  if (auto error = on_device ? DeviceTarget(runtime, location.id, &target, function)
                             : CurrentTarget(runtime, &target, function)) {
    return error;
  }
  if (auto error = CheckReachesPageableMemory(target, ptr, count, function)) return error;
  infinirtMemLocation local = location;
  if (on_device) local.id = target.local;
  const infinirtError_t answer =
      target.backend->table.MemAdvise(target.local, ptr, count, advice, local);
  if (answer == infinirtSuccess) {
    runtime.memory_hints().Advise(reinterpret_cast<uintptr_t>(ptr), count, advice, location);
  }
  return BackendAnswer(answer, *target.backend, function);
}

// The range MemRangeGetAttribute asks about: within one managed allocation, or memory InfiniRT
// did not allocate where the current device reaches pageable memory.
infinirtError_t CheckHintedRange(Runtime& runtime, const void* ptr, size_t count,
                                 const char* function) {
  if (ptr == nullptr) return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function);
  if (count == 0) return Fail(infinirtErrorInvalidValue, "{}: count is 0", function);
  if (runtime.allocations().Find(reinterpret_cast<uintptr_t>(ptr))) {
    Allocation memory;
    return ManagedRange(runtime, ptr, count, &memory, function);
  }
  Target target;
  if (auto error = CurrentTarget(runtime, &target, function)) return error;
  return CheckReachesPageableMemory(target, ptr, count, function);
}

// data_size as the attribute's value takes it: a 32-bit integer (or location type), or for
// AccessedBy a non-empty array of them.
infinirtError_t CheckRangeAttribute(enum infinirtMemRangeAttribute attribute, void* data,
                                    size_t data_size, const char* function) {
  if (attribute < infinirtMemRangeAttributeReadMostly ||
      attribute > infinirtMemRangeAttributeLastPrefetchLocationId) {
    return Fail(infinirtErrorInvalidValue, "{}: {} is no range attribute", function,
                static_cast<int>(attribute));
  }
  if (data == nullptr) return Fail(infinirtErrorInvalidValue, "{}: data is NULL", function);
  const bool fits = attribute == infinirtMemRangeAttributeAccessedBy
                        ? data_size != 0 && data_size % sizeof(int) == 0
                        : data_size == sizeof(int);
  if (!fits) {
    return Fail(infinirtErrorInvalidValue, "{}: {} bytes do not hold attribute {}", function,
                data_size, static_cast<int>(attribute));
  }
  return infinirtSuccess;
}

// A location as the memory's backend knows it: a device of that backend by its own index, or the
// host (NUMA node ids as they are).
infinirtError_t BackendLocation(Runtime& runtime, const infinirtMemLocation& location,
                                const Allocation& memory, infinirtMemLocation* local,
                                const char* function) {
  *local = location;
  switch (location.type) {
    case infinirtMemLocationTypeHost:
    case infinirtMemLocationTypeHostNuma:
    case infinirtMemLocationTypeHostNumaCurrent:
      return infinirtSuccess;
    case infinirtMemLocationTypeDevice: {
      Target target;
      if (auto error = DeviceTarget(runtime, location.id, &target, function)) return error;
      if (target.backend_index != memory.backend) {
        return Fail(infinirtErrorInvalidValue,
                    "{}: device {} is of another backend than the memory's", function, location.id);
      }
      local->id = target.local;
      return infinirtSuccess;
    }
    default:
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a memory location type", function,
                  static_cast<int>(location.type));
  }
}

}  // namespace

extern "C" {

infinirtError_t infinirtMemPrefetchAsync(const void* devPtr, size_t count,
                                         struct infinirtMemLocation location, unsigned int flags,
                                         infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function_name)) return error;
    if (flags != 0) {
      return Fail(infinirtErrorInvalidValue, "{}: flags must be 0, not {:#x}", function_name,
                  flags);
    }
    if (count == 0) return Fail(infinirtErrorInvalidValue, "{}: count is 0", function_name);
    Allocation memory;
    if (auto error = ManagedRange(runtime, devPtr, count, &memory, function_name)) return error;
    infinirtMemLocation local;
    if (auto error = BackendLocation(runtime, location, memory, &local, function_name)) {
      return error;
    }
    if (target.backend_index != memory.backend) {
      return Fail(infinirtErrorInvalidValue, "{}: the stream is of another backend than the memory",
                  function_name);
    }
    if (auto error = runtime.captures().CheckStreamUse(target.ref, false)) return error;
    // A prefetch moves no data a program sees: captured, it is a hint the graph can do without.
    infinirtStreamCaptureStatus capture = infinirtStreamCaptureStatusNone;
    if (auto error = infinirtStreamIsCapturing(stream, &capture)) return error;
    if (capture != infinirtStreamCaptureStatusNone) return infinirtSuccess;
    const infinirtError_t answer =
        target.backend->table.MemPrefetchAsync(target.local, devPtr, count, local, target.stream);
    if (answer == infinirtSuccess) {
      runtime.memory_hints().Prefetched(reinterpret_cast<uintptr_t>(devPtr), count, location);
    }
    return BackendAnswer(answer, *target.backend, function_name);
  });
}

infinirtError_t infinirtMemAdvise(const void* devPtr, size_t count,
                                  enum infinirtMemoryAdvise advice,
                                  struct infinirtMemLocation location) {
  return Guard(__func__, [&](const char* function_name) {
    if (advice < infinirtMemAdviseSetReadMostly || advice > infinirtMemAdviseUnsetAccessedBy) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is no advice", function_name,
                  static_cast<int>(advice));
    }
    if (devPtr == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function_name);
    if (count == 0) return Fail(infinirtErrorInvalidValue, "{}: count is 0", function_name);
    Runtime& runtime = Runtime::Get();
    // Read-mostly advice names no location (CUDA ignores it).
    const bool needs_location =
        advice != infinirtMemAdviseSetReadMostly && advice != infinirtMemAdviseUnsetReadMostly;
    if (!runtime.allocations().Find(reinterpret_cast<uintptr_t>(devPtr))) {
      return AdvisePageable(runtime, devPtr, count, advice, location, needs_location,
                            function_name);
    }
    Allocation memory;
    if (auto error = ManagedRange(runtime, devPtr, count, &memory, function_name)) return error;
    infinirtMemLocation local = location;
    if (needs_location) {
      if (auto error = BackendLocation(runtime, location, memory, &local, function_name)) {
        return error;
      }
    }
    Backend& owner = runtime.backend(memory.backend);
    const infinirtError_t answer =
        owner.table.MemAdvise(memory.local_device, devPtr, count, advice, local);
    if (answer == infinirtSuccess) {
      runtime.memory_hints().Advise(reinterpret_cast<uintptr_t>(devPtr), count, advice, location);
    }
    return BackendAnswer(answer, owner, function_name);
  });
}

infinirtError_t infinirtMemRangeGetAttribute(void* data, size_t dataSize,
                                             enum infinirtMemRangeAttribute attribute,
                                             const void* devPtr, size_t count) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    if (auto error = CheckRangeAttribute(attribute, data, dataSize, function_name)) return error;
    if (auto error = CheckHintedRange(runtime, devPtr, count, function_name)) return error;
    runtime.memory_hints().Query(reinterpret_cast<uintptr_t>(devPtr), count, attribute, data,
                                 dataSize);
    return infinirtSuccess;
  });
}

// Every attribute is checked before any is written.
infinirtError_t infinirtMemRangeGetAttributes(void** data, size_t* dataSizes,
                                              enum infinirtMemRangeAttribute* attributes,
                                              size_t numAttributes, const void* devPtr,
                                              size_t count) {
  return Guard(__func__, [&](const char* function_name) {
    if (numAttributes == 0) {
      return Fail(infinirtErrorInvalidValue, "{}: numAttributes is 0", function_name);
    }
    if (data == nullptr || dataSizes == nullptr || attributes == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: data, dataSizes or attributes is NULL",
                  function_name);
    }
    Runtime& runtime = Runtime::Get();
    for (size_t i = 0; i < numAttributes; ++i) {
      if (auto error = CheckRangeAttribute(attributes[i], data[i], dataSizes[i], function_name)) {
        return error;
      }
    }
    if (auto error = CheckHintedRange(runtime, devPtr, count, function_name)) return error;
    for (size_t i = 0; i < numAttributes; ++i) {
      runtime.memory_hints().Query(reinterpret_cast<uintptr_t>(devPtr), count, attributes[i],
                                   data[i], dataSizes[i]);
    }
    return infinirtSuccess;
  });
}

}  // extern "C"
