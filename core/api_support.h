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
#include "thread_state.h"

namespace infinirt::core::api {

inline infinirtError_t& LastError() { return tls_thread_state.last_error; }

inline int CurrentOrdinal(const Runtime& runtime) {
  ThreadState& state = tls_thread_state;
  if (state.current_ordinal_generation != runtime.generation()) {
    state.current_ordinal_generation = runtime.generation();
    state.current_ordinal = runtime.first_device();
  }
  return state.current_ordinal;
}

inline void SetCurrentOrdinal(const Runtime& runtime, int device) {
  tls_thread_state.current_ordinal_generation = runtime.generation();
  tls_thread_state.current_ordinal = device;
}

// The debug line for a failed call whose path logged nothing: a safety net, since every path
// that rejects a call is meant to say why (Fail, BackendAnswer).
void LogUnexplainedFailure(infinirtError_t error, const char* function);

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
    error = FailVisibly(infinirtErrorUnknown, "{}: internal error: {}", function, exception.what());
  } catch (...) {
    error = FailVisibly(infinirtErrorUnknown, "{}: internal error", function);
  }
  if (error != infinirtSuccess) {
    if (error != infinirtErrorNotReady) {
      if (!tls_failure_logged) LogUnexplainedFailure(error, function);
      LastError() = error;
    }
    tls_failure_logged = false;
  }
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
Target TargetOf(Runtime& runtime, const Allocation& allocation);
// Inline: ResolveStream uses it on nearly every call.
inline Target TargetOf(Runtime& runtime, const ObjectRecord& record) {
  Target target;
  target.backend_index = record.backend;
  target.backend = &runtime.backend(record.backend);
  target.device = record.device;
  target.local = record.local_device;
  return target;
}

inline uint64_t HandleValue(const void* handle) { return reinterpret_cast<uintptr_t>(handle); }

// The default streams (NULL, infinirtStreamLegacy, infinirtStreamPerThread) on the current
// device; anything else is an invalid handle.
infinirtError_t ResolveDefaultStream(Runtime& runtime, infinirtStream_t stream,
                                     StreamTarget* target, const char* function);

// NULL and infinirtStreamLegacy (the legacy stream), infinirtStreamPerThread, or a live stream.
// Inline, since nearly every call resolves a stream: a created stream costs one table lookup.
inline infinirtError_t ResolveStream(Runtime& runtime, infinirtStream_t stream,
                                     StreamTarget* target, const char* function) {
  const uint64_t value = HandleValue(stream);
  ObjectRecord record;
  if (!runtime.streams().Lookup(value, &record)) {
    return ResolveDefaultStream(runtime, stream, target, function);
  }
  static_cast<Target&>(*target) = TargetOf(runtime, record);
  target->stream = record.plugin_handle;
  target->ref = StreamRef{};
  target->ref.handle = value;
  target->ref.blocking = !(record.flags & infinirtStreamNonBlocking);
  target->ref.device = record.device;
  return infinirtSuccess;
}
// A backend's answer, passed on. A failure is logged at debug, naming the backend and its
// answer, and `meaning` when given: what CUDA documents the answer to mean for this call (the
// core's own checks passed, so the backend is the one refusing). NotReady answers a query and
// is not logged.
infinirtError_t LogBackendRefusal(infinirtError_t answer, const Backend& backend,
                                  const char* function, const char* meaning);
inline infinirtError_t BackendAnswer(infinirtError_t answer, const Backend& backend,
                                     const char* function, const char* meaning = nullptr) {
  if (answer == infinirtSuccess || answer == infinirtErrorNotReady) return answer;
  return LogBackendRefusal(answer, backend, function, meaning);
}

// InvalidResourceHandle, with the log line "<function>: <handle> is not a live <what>".
infinirtError_t InvalidHandle(const void* handle, const char* what, const char* function);
// For the calls where NVIDIA's runtime answers InvalidValue for a handle destroyed before
// (GraphLaunch, GraphUpload, MemPoolDestroy): that for a stale handle of the table, and
// InvalidResourceHandle for one that never was.
infinirtError_t StaleOrInvalidHandle(const HandleTable& table, const void* handle, const char* what,
                                     const char* function);
// What a call answers for a stream value that names no live stream: ContextIsDestroyed for a
// stream destroyed since (as NVIDIA's runtime answers), InvalidResourceHandle for anything else.
infinirtError_t DeadStream(Runtime& runtime, const void* stream, const char* function);
// A live object of a table, or InvalidResourceHandle.
inline infinirtError_t ResolveObject(HandleTable& table, const void* handle, const char* what,
                                     ObjectRecord* record, const char* function) {
  if (table.Lookup(HandleValue(handle), record)) return infinirtSuccess;
  return InvalidHandle(handle, what, function);
}

// Registers a new object and hands out its handle; on failure calls destroy(local, handle).
template <class Handle, class Destroy>
infinirtError_t Publish(HandleTable& table, const Target& target, void* object, unsigned int flags,
                        Handle* out, Destroy destroy, const char* function, int priority = 0) {
  ObjectRecord record;
  record.backend = target.backend_index;
  record.device = target.device;
  record.local_device = target.local;
  record.plugin_handle = object;
  record.flags = flags;
  record.priority = priority;
  const uint64_t value = table.Insert(record);
  if (value == 0) {
    destroy(target.local, object);
    return Fail(infinirtErrorMemoryAllocation, "{}: too many live objects", function);
  }
  *out = reinterpret_cast<Handle>(static_cast<uintptr_t>(value));
  return infinirtSuccess;
}

// A plugin entry that takes (device, handle) and nothing else.
using HandleEntry = infinirtError_t (*infinirtPluginTable::*)(int, void*);

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
                               infinirtError_t error, const char* function);

// Work that a capture cannot hold, issued to `stream`: when the stream captures, the capture is
// invalidated and the answer is StreamCaptureUnsupported, saying `why`.
infinirtError_t RefuseInCapture(Runtime& runtime, const StreamTarget& target, const char* what,
                                const char* why, const char* function);

// A memory pool's record. The devices' default pools have no plugin handle (the plugin's
// MemPool* entries serve them); the program's own pools have the plugin's.
infinirtError_t ResolvePool(Runtime& runtime, infinirtMemPool_t pool, ObjectRecord* record,
                            const char* function);
inline bool IsDefaultPool(const ObjectRecord& pool) { return pool.plugin_handle == nullptr; }

// `flags`: HostAlloc's or HostRegister's, for HostGetFlags.
infinirtError_t RegisterAllocation(Runtime& runtime, const Target& target, void* pointer,
                                   size_t size, MemoryKind kind, uint64_t owner,
                                   const char* function, unsigned int flags = 0);

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

// A device-to-host copy into pageable memory (host memory InfiniRT neither allocated nor
// registered) returns only once it is done, as NVIDIA's runtime's does. CopyWaitingIfPageable
// issues such a copy (issue: the backend call) between two synchronisations of its stream: the
// first refuses the call before anything is queued where the stream cannot be waited for (a host
// function), the second waits for the copy. Other copies are issued as they are.
bool IntoPageableHost(Runtime& runtime, const void* dst, enum infinirtMemcpyKind resolved_kind);
template <class Issue>
infinirtError_t CopyWaitingIfPageable(const StreamTarget& target, bool into_pageable,
                                      Issue&& issue) {
  const infinirtPluginTable& table = target.backend->table;
  if (!into_pageable) return issue();
  if (auto error = table.StreamSynchronize(target.local, target.stream)) return error;
  if (auto error = issue()) return error;
  return table.StreamSynchronize(target.local, target.stream);
}

// Performs a cross-backend copy synchronously: after the stream's prior work (when a stream is
// given), src is read by its owner into host memory (pinned memory of that backend, in chunks)
// and written by dst's owner, each with its synchronous Memcpy, which orders after the legacy
// stream work of its device.
infinirtError_t StagedCopy(Runtime& runtime, void* dst, const void* src, size_t count,
                           const CrossBackendCopy& cross, const StreamTarget* stream);

// Validates a memset: the memory must be a known allocation the performing backend can reach.
infinirtError_t RouteMemset(Runtime& runtime, void* pointer, size_t count,
                            const StreamTarget* stream, Target* target, const char* function);

// An allocation node: memory of `size` bytes allocated now on target's device, owned by the
// graph's allocations (graph.h), its address in *pointer_out.
infinirtError_t MakeAllocationNode(Runtime& runtime, GraphData& graph, const Target& target,
                                   size_t size, GraphNode* node, void** pointer_out,
                                   const char* function);
// A free node, for memory that one of this graph's allocation nodes made and that no free node
// of the graph releases yet.
infinirtError_t MakeFreeNode(Runtime& runtime, GraphData& graph, void* pointer, GraphNode* node,
                             const char* function);

// Hands out a handle for a graph; 0 when the table is full.
uint64_t PublishGraph(Runtime& runtime, const std::shared_ptr<GraphData>& graph);
// A live graph, or InvalidValue (NULL) / InvalidResourceHandle.
infinirtError_t ResolveGraph(Runtime& runtime, infinirtGraph_t graph,
                             std::shared_ptr<GraphData>* data, const char* function);

}  // namespace infinirt::core::api

#endif  // INFINIRT_CORE_API_SUPPORT_H_
