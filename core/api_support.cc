#include "api_support.h"

#include <algorithm>

namespace infinirt::core::api {

infinirtError_t DeviceTarget(Runtime& runtime, int device, Target* target, const char* function) {
  const auto& devices = runtime.devices();
  if (devices.empty()) {
    return Fail(infinirtErrorNoDevice, "{}: no device is available: {}", function,
                runtime.no_device_reason());
  }
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

Target TargetOf(Runtime& runtime, const Allocation& allocation) {
  Target target;
  target.backend_index = allocation.backend;
  target.backend = &runtime.backend(allocation.backend);
  target.device = allocation.device;
  target.local = allocation.local_device;
  return target;
}

infinirtError_t ResolveDefaultStream(Runtime& runtime, infinirtStream_t stream,
                                     StreamTarget* target, const char* function) {
  const uint64_t value = HandleValue(stream);
  if (value != 0 && value != HandleValue(infinirtStreamLegacy) &&
      value != HandleValue(infinirtStreamPerThread)) {
    return DeadStream(runtime, stream, function);
  }
  if (infinirtError_t error = CurrentTarget(runtime, target, function)) return error;
  const bool per_thread = value == HandleValue(infinirtStreamPerThread);
  target->stream = per_thread ? INFINIRT_PLUGIN_STREAM_PER_THREAD : INFINIRT_PLUGIN_STREAM_LEGACY;
  target->ref = StreamRef{};
  target->ref.legacy = !per_thread;
  target->ref.per_thread = per_thread;
  target->ref.device = target->device;
  return infinirtSuccess;
}

void LogUnexplainedFailure(infinirtError_t error, const char* function) {
  Log().debug("{}: failed with {} ({})", function, infinirtGetErrorName(error),
              infinirtGetErrorString(error));
}

infinirtError_t LogBackendRefusal(infinirtError_t answer, const Backend& backend,
                                  const char* function, const char* meaning) {
  return Fail(answer, "{}: backend '{}' answered {} ({}){}{}", function, backend.name,
              infinirtGetErrorName(answer), infinirtGetErrorString(answer), meaning ? ": " : "",
              meaning ? meaning : "");
}

infinirtError_t DeadStream(Runtime& runtime, const void* stream, const char* function) {
  if (runtime.streams().WasLive(HandleValue(stream))) {
    return Fail(infinirtErrorContextIsDestroyed, "{}: stream {} was destroyed", function, stream);
  }
  return InvalidHandle(stream, "stream", function);
}

infinirtError_t InvalidHandle(const void* handle, const char* what, const char* function) {
  return Fail(infinirtErrorInvalidResourceHandle, "{}: {} is not a live {}", function, handle,
              what);
}

infinirtError_t StaleOrInvalidHandle(const HandleTable& table, const void* handle, const char* what,
                                     const char* function) {
  if (table.WasLive(HandleValue(handle))) {
    return Fail(infinirtErrorInvalidValue, "{}: {} {} was destroyed", function, what, handle);
  }
  return InvalidHandle(handle, what, function);
}

infinirtError_t RestoreRefused(HandleTable& table, uint64_t handle, const ObjectRecord& record,
                               infinirtError_t error, const char* function) {
  if (!table.Restore(handle, record)) {
    Log().error("{}: the backend refused the destruction and the handle could not be restored",
                function);
  }
  return Fail(error, "{}: the backend refused: {}", function, infinirtGetErrorName(error));
}

infinirtError_t RefuseInCapture(Runtime& runtime, const StreamTarget& target, const char* what,
                                const char* why, const char* function) {
  infinirtError_t captured;
  if (!runtime.captures().RefuseUncapturable(target.ref, what, &captured)) return infinirtSuccess;
  return Fail(captured, "{}: {}", function, why);
}

infinirtError_t MakeAllocationNode(Runtime& runtime, GraphData& graph, const Target& target,
                                   size_t size, GraphNode* node, void** pointer_out,
                                   const char* function) {
  void* pointer = nullptr;
  if (auto error = target.backend->table.Malloc(target.local, &pointer, size)) {
    return BackendAnswer(error, *target.backend, function);
  }
  if (auto error = RegisterAllocation(runtime, target, pointer, size, MemoryKind::kGraph,
                                      graph.allocations().owner(), function)) {
    target.backend->table.Free(target.local, pointer);
    return error;
  }
  graph.allocations().Adopt(pointer);
  node->desc.kind = INFINIRT_GRAPH_NODE_MEM_ALLOC;
  node->desc.params.memory.ptr = pointer;
  node->desc.params.memory.size = size;
  *pointer_out = pointer;
  return infinirtSuccess;
}

infinirtError_t MakeFreeNode(Runtime& runtime, GraphData& graph, void* pointer, GraphNode* node,
                             const char* function) {
  auto allocation = runtime.allocations().FindExact(reinterpret_cast<uintptr_t>(pointer));
  if (!allocation) {
    return Fail(infinirtErrorInvalidValue, "{}: {} is not a live allocation", function, pointer);
  }
  if (allocation->kind != MemoryKind::kGraph || allocation->owner != graph.allocations().owner()) {
    return Fail(infinirtErrorNotSupported,
                "{}: a graph can free only memory that its own allocation nodes made", function);
  }
  std::lock_guard<std::recursive_mutex> lock(graph.mutex());
  const bool freed_before =
      std::any_of(graph.nodes().begin(), graph.nodes().end(), [&](const GraphNode& other) {
        return other.kind() == INFINIRT_GRAPH_NODE_MEM_FREE &&
               other.desc.params.memory.ptr == pointer;
      });
  if (freed_before) {
    return Fail(infinirtErrorInvalidValue, "{}: {} is already freed in this graph", function,
                pointer);
  }
  node->desc.kind = INFINIRT_GRAPH_NODE_MEM_FREE;
  node->desc.params.memory.ptr = pointer;
  node->desc.params.memory.size = allocation->size;
  return infinirtSuccess;
}

uint64_t PublishGraph(Runtime& runtime, const std::shared_ptr<GraphData>& graph) {
  ObjectRecord record;
  record.backend = graph->backend_index();
  record.device = graph->device();
  record.local_device = graph->local_device();
  auto* holder = new GraphHolder{graph};
  record.plugin_handle = holder;
  const uint64_t handle = runtime.graphs().Insert(record);
  if (handle == 0) delete holder;
  return handle;
}

infinirtError_t ResolveGraph(Runtime& runtime, infinirtGraph_t graph,
                             std::shared_ptr<GraphData>* data, const char* function) {
  if (graph == nullptr) return Fail(infinirtErrorInvalidValue, "{}: graph is NULL", function);
  ObjectRecord record;
  if (auto error = ResolveObject(runtime.graphs(), graph, "graph", &record, function)) {
    return error;
  }
  *data = static_cast<GraphHolder*>(record.plugin_handle)->graph;
  return infinirtSuccess;
}

infinirtError_t RegisterAllocation(Runtime& runtime, const Target& target, void* pointer,
                                   size_t size, MemoryKind kind, uint64_t owner,
                                   const char* function, unsigned int flags) {
  if (size > UINTPTR_MAX - reinterpret_cast<uintptr_t>(pointer)) {
    return FailVisibly(infinirtErrorMemoryAllocation,
                       "{}: backend '{}' returned {} for {} bytes, which wraps around the address "
                       "space",
                       function, target.backend->name, pointer, size);
  }
  Allocation allocation;
  allocation.owner = owner;
  allocation.base = reinterpret_cast<uintptr_t>(pointer);
  allocation.size = size;
  allocation.kind = kind;
  allocation.backend = target.backend_index;
  allocation.device = target.device;
  allocation.local_device = target.local;
  allocation.flags = flags;
  if (!runtime.allocations().Add(allocation)) {
    return FailVisibly(infinirtErrorUnknown,
                       "{}: backend '{}' returned {} which is already allocated", function,
                       target.backend->name, pointer);
  }
  return infinirtSuccess;
}

namespace {

// A copy's or memset's side is the allocation holding its bytes, or null for host memory that
// InfiniRT did not allocate. True when `count` bytes from `pointer` run past its end.
bool RunsPastEnd(const Allocation* allocation, const void* pointer, size_t count) {
  return allocation != nullptr &&
         count > allocation->base + allocation->size - reinterpret_cast<uintptr_t>(pointer);
}

// Out of line: the formatting of the message would otherwise weigh on every copy's route.
__attribute__((noinline, cold)) infinirtError_t RefusePastEnd(const Allocation& allocation,
                                                              const void* pointer, size_t count,
                                                              const char* role,
                                                              const char* function) {
  return Fail(infinirtErrorInvalidValue,
              "{}: {} bytes at {} ({}) run past the end of its {}-byte allocation", function, count,
              pointer, role, allocation.size);
}

// The allocation when it is device memory (not pinned host memory), else null.
const Allocation* DeviceSide(const Allocation* allocation) {
  return allocation != nullptr && allocation->IsDeviceMemory() ? allocation : nullptr;
}

enum infinirtMemcpyKind InferKind(const Allocation* dst_device, const Allocation* src_device) {
  if (src_device) return dst_device ? infinirtMemcpyDeviceToDevice : infinirtMemcpyDeviceToHost;
  return dst_device ? infinirtMemcpyHostToDevice : infinirtMemcpyHostToHost;
}

}  // namespace

infinirtError_t RouteCopy(Runtime& runtime, void* dst, const void* src, size_t count,
                          enum infinirtMemcpyKind kind, const StreamTarget* stream, Target* target,
                          enum infinirtMemcpyKind* resolved_kind, CrossBackendCopy* cross,
                          const char* function) {
  if (static_cast<unsigned>(kind) > static_cast<unsigned>(infinirtMemcpyDefault)) {
    return Fail(infinirtErrorInvalidMemcpyDirection, "{}: {} is not a memcpy kind", function,
                static_cast<int>(kind));
  }
  if (dst == nullptr || src == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: {} pointer is NULL", function,
                dst == nullptr ? "destination" : "source");
  }
  // Both valid until this thread's next lookup; everything needed is copied out below.
  const Allocation* to;
  const Allocation* from;
  runtime.allocations().FindKeptPair(reinterpret_cast<uintptr_t>(dst),
                                     reinterpret_cast<uintptr_t>(src), &to, &from);
  if (RunsPastEnd(to, dst, count)) return RefusePastEnd(*to, dst, count, "destination", function);
  if (RunsPastEnd(from, src, count)) return RefusePastEnd(*from, src, count, "source", function);
  const Allocation* dst_device = DeviceSide(to);
  const Allocation* src_device = DeviceSide(from);
  // The backend that performs the copy: the stream's, else the destination's when it is device
  // memory, else the source's. Device memory of any other backend makes it a staged copy.
  const int performer = stream       ? stream->backend_index
                        : dst_device ? dst_device->backend
                        : src_device ? src_device->backend
                                     : -1;
  *cross = CrossBackendCopy{};
  cross->needed = (dst_device && dst_device->backend != performer) ||
                  (src_device && src_device->backend != performer);
  if (cross->needed) {
    if (src_device) cross->source = TargetOf(runtime, *src_device);
    if (dst_device) cross->destination = TargetOf(runtime, *dst_device);
    *resolved_kind = InferKind(dst_device, src_device);
    return infinirtSuccess;
  }
  if (stream) {
    *target = *stream;
  } else if (dst_device || src_device) {
    *target = TargetOf(runtime, dst_device ? *dst_device : *src_device);
  } else if (auto error = CurrentTarget(runtime, target, function)) {
    return error;
  }
  *resolved_kind = kind == infinirtMemcpyDefault ? InferKind(dst_device, src_device) : kind;
  return infinirtSuccess;
}

namespace {

constexpr size_t kStagingChunk = size_t{4} << 20;

// Host memory pinned by one backend, freed at scope exit.
class StagingBuffer {
 public:
  StagingBuffer(const Target& owner, size_t size) : owner_(owner) {
    error_ = owner_.backend->table.HostAlloc(owner_.local, &memory_, size, 0);
  }
  ~StagingBuffer() {
    if (error_ == infinirtSuccess) owner_.backend->table.FreeHost(owner_.local, memory_);
  }
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;
  infinirtError_t error() const { return error_; }
  void* data() const { return memory_; }

 private:
  Target owner_;
  void* memory_ = nullptr;
  infinirtError_t error_;
};

}  // namespace

bool IntoPageableHost(Runtime& runtime, const void* dst, enum infinirtMemcpyKind resolved_kind) {
  return resolved_kind == infinirtMemcpyDeviceToHost &&
         !runtime.allocations().Find(reinterpret_cast<uintptr_t>(dst));
}

infinirtError_t StagedCopy(Runtime&, void* dst, const void* src, size_t count,
                           const CrossBackendCopy& cross, const StreamTarget* stream) {
  if (stream) {
    if (auto e = stream->backend->table.StreamSynchronize(stream->local, stream->stream)) return e;
  }
  if (!cross.source) {  // host to device
    const Target& to = *cross.destination;
    return to.backend->table.Memcpy(to.local, dst, src, count, infinirtMemcpyHostToDevice);
  }
  const Target& from = *cross.source;
  if (!cross.destination) {  // device to host
    return from.backend->table.Memcpy(from.local, dst, src, count, infinirtMemcpyDeviceToHost);
  }
  const Target& to = *cross.destination;
  StagingBuffer staging(from, std::min(count, kStagingChunk));
  if (staging.error()) return staging.error();
  for (size_t done = 0; done < count; done += kStagingChunk) {
    const size_t chunk = std::min(kStagingChunk, count - done);
    const auto* source = static_cast<const unsigned char*>(src) + done;
    auto* target = static_cast<unsigned char*>(dst) + done;
    if (auto e = from.backend->table.Memcpy(from.local, staging.data(), source, chunk,
                                            infinirtMemcpyDeviceToHost)) {
      return e;
    }
    if (auto e = to.backend->table.Memcpy(to.local, target, staging.data(), chunk,
                                          infinirtMemcpyHostToDevice)) {
      return e;
    }
  }
  return infinirtSuccess;
}

infinirtError_t RouteMemset(Runtime& runtime, void* pointer, size_t count,
                            const StreamTarget* stream, Target* target, const char* function) {
  if (pointer == nullptr) return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function);
  // Valid until this thread's next lookup; everything needed is copied out below.
  const Allocation* span = runtime.allocations().FindKept(reinterpret_cast<uintptr_t>(pointer));
  if (RunsPastEnd(span, pointer, count)) {
    return RefusePastEnd(*span, pointer, count, "memset target", function);
  }
  if (span == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: {} was not allocated by InfiniRT", function,
                pointer);
  }
  if (stream) {
    if (span->IsDeviceMemory() && span->backend != stream->backend_index) {
      return Fail(infinirtErrorNotSupported,
                  "{}: memory of backend '{}' cannot be set from a stream of backend '{}'",
                  function, runtime.backend(span->backend).name, stream->backend->name);
    }
    *target = *stream;
  } else {
    *target = TargetOf(runtime, *span);
  }
  return infinirtSuccess;
}

std::optional<infinirtError_t> ReleaseGraphMemory(Runtime& runtime, void* pointer,
                                                  const char* function) {
  auto found = runtime.allocations().FindExact(reinterpret_cast<uintptr_t>(pointer));
  if (!found || found->kind != MemoryKind::kGraph) return std::nullopt;
  if (runtime.graph_memory().Release(pointer)) return infinirtSuccess;
  return Fail(infinirtErrorInvalidValue, "{}: graph memory {} is not live (already freed)",
              function, pointer);
}

}  // namespace infinirt::core::api
