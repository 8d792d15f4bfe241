// What the public API functions share: the guard every body runs in, the per-thread state
// (last error, current device), handle and stream resolution, and the validation and routing of
// copies and memsets.
#ifndef INFINIRT_CORE_API_SUPPORT_H_
#define INFINIRT_CORE_API_SUPPORT_H_

#include <new>
#include <optional>

#include "capture.h"
#include "infinirt.h"
#include "infinirt_plugin.h"
#include "log.h"
#include "runtime.h"

namespace infinirt::core::api {

// The calling thread's last error (infinirtGetLastError).
infinirtError_t& LastError();

// The calling thread's current device, valid for the runtime it was set in: after
// infinirtFinalize every thread starts again from device 0, as in a fresh process.
int CurrentOrdinal(const Runtime& runtime);
void SetCurrentOrdinal(const Runtime& runtime, int device);

// Runs an API function's body, handing it the function's name for log lines (inside a lambda,
// __func__ would say "operator()"). NotReady answers a query; it is not a failure and does not
// become the last error. No exception leaves.
template <class Body>
infinirtError_t Guard(const char* function, Body&& body) {
  infinirtError_t error;
  try {
    error = body(function);
  } catch (const RuntimeUnloading&) {
    error =
        Fail(infinirtErrorCudartUnloading, "{}: the runtime has been torn down at exit", function);
  } catch (const RuntimeForked&) {
    error = Fail(infinirtErrorInitializationError,
                 "{}: this process was forked from one that had initialised InfiniRT; a child "
                 "cannot use its parent's runtime (exec a new program, or initialise after fork)",
                 function);
  } catch (const std::bad_alloc&) {
    error = Fail(infinirtErrorMemoryAllocation, "{}: out of host memory", function);
  } catch (const std::exception& exception) {
    Log().error("{}: internal error: {}", function, exception.what());
    error = infinirtErrorUnknown;
  } catch (...) {
    Log().error("{}: internal error", function);
    error = infinirtErrorUnknown;
  }
  if (error != infinirtSuccess && error != infinirtErrorNotReady) LastError() = error;
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
  StreamRef ref;           // the stream as capture sees it
};

infinirtError_t DeviceTarget(Runtime& runtime, int device, Target* target, const char* function);
infinirtError_t CurrentTarget(Runtime& runtime, Target* target, const char* function);
Target TargetOf(Runtime& runtime, const ObjectRecord& record);
Target TargetOf(Runtime& runtime, const Allocation& allocation);

inline uint64_t HandleValue(const void* handle) { return reinterpret_cast<uintptr_t>(handle); }

// NULL and infinirtStreamLegacy (the legacy stream), infinirtStreamPerThread, or a live stream.
infinirtError_t ResolveStream(Runtime& runtime, infinirtStream_t stream, StreamTarget* target,
                              const char* function);
infinirtError_t ResolveObject(HandleTable& table, const void* handle, const char* what,
                              ObjectRecord* record, const char* function);

// Registers a new object and hands out its handle; on failure calls destroy(local, handle).
template <class Handle, class Destroy>
infinirtError_t Publish(HandleTable& table, const Target& target, void* object, unsigned int flags,
                        Handle* out, Destroy destroy, const char* function) {
  ObjectRecord record;
  record.backend = target.backend_index;
  record.device = target.device;
  record.local_device = target.local;
  record.plugin_handle = object;
  record.flags = flags;
  const uint64_t value = table.Insert(record);
  if (value == 0) {
    destroy(target.local, object);
    return Fail(infinirtErrorMemoryAllocation, "{}: too many live objects", function);
  }
  *out = reinterpret_cast<Handle>(static_cast<uintptr_t>(value));
  return infinirtSuccess;
}

infinirtError_t RegisterAllocation(Runtime& runtime, const Target& target, void* pointer,
                                   size_t size, MemoryKind kind, uint64_t owner,
                                   const char* function);

// Freeing graph-owned memory (Free or FreeAsync of memory a graph launch allocated) ends its
// live state rather than freeing it (graph.h). Returns nullopt when the pointer is not graph
// memory, otherwise the outcome.
std::optional<infinirtError_t> ReleaseGraphMemory(Runtime& runtime, void* pointer,
                                                  const char* function);

// A copy that device memory of another backend than the performing one takes part in. No
// backend can do it alone: the core stages it through host memory (StagedCopy).
struct CrossBackendCopy {
  bool needed = false;
  std::optional<Target> source;       // the backend owning src, when src is device memory
  std::optional<Target> destination;  // the backend owning dst, when dst is device memory
};

// Validates a copy and finds the backend that performs it: the stream's for an asynchronous
// copy, otherwise the owner of the device memory involved, otherwise the current device. A
// copy across backends is reported in *cross instead.
infinirtError_t RouteCopy(Runtime& runtime, void* dst, const void* src, size_t count,
                          enum infinirtMemcpyKind kind, const StreamTarget* stream, Target* target,
                          enum infinirtMemcpyKind* resolved_kind, CrossBackendCopy* cross,
                          const char* function);

// Performs a cross-backend copy synchronously: after the stream's prior work (when a stream is
// given), src is read by its owner into host memory (pinned memory of that backend, in chunks)
// and written by dst's owner, each with its synchronous Memcpy, which orders after the legacy
// stream work of its device.
infinirtError_t StagedCopy(Runtime& runtime, void* dst, const void* src, size_t count,
                           const CrossBackendCopy& cross, const StreamTarget* stream);

// Validates a memset: the memory must be a known allocation the performing backend can reach.
infinirtError_t RouteMemset(Runtime& runtime, void* pointer, size_t count,
                            const StreamTarget* stream, Target* target, const char* function);

}  // namespace infinirt::core::api

#endif  // INFINIRT_CORE_API_SUPPORT_H_
