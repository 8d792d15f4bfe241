#include "graph_api_support.h"

#include <algorithm>

#include "plugin_table.h"

namespace infinirt::core::api {

StreamTarget GraphTarget(Runtime& runtime, const GraphData& graph) {
  StreamTarget target;
  target.backend = &runtime.backend(graph.backend_index());
  target.backend_index = graph.backend_index();
  target.device = graph.device();
  target.local = graph.local_device();
  return target;
}

infinirtError_t ResolveNode(infinirtGraphNode_t handle, std::shared_ptr<GraphData>* graph,
                            uint32_t* id, const char* function) {
  if (handle == nullptr) return Fail(infinirtErrorInvalidValue, "{}: node is NULL", function);
  uint64_t graph_id = 0;
  if (SplitNodeHandle(handle, &graph_id, id)) *graph = GraphData::Find(graph_id);
  if (!*graph || (*graph)->FindNode(*id) == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: {} is not a node of a live graph", function,
                static_cast<const void*>(handle));
  }
  return infinirtSuccess;
}

namespace {

// A region that starts in memory InfiniRT does not know and ends in an allocation it does: it
// starts before that allocation (NVIDIA's runtime refuses such a copy node).
bool StartsBeforeAnAllocation(Runtime& runtime, const void* start, size_t count) {
  const auto first = reinterpret_cast<uintptr_t>(start);
  uintptr_t last = 0;
  if (__builtin_add_overflow(first, count - 1, &last)) return false;
  return !runtime.allocations().Find(first) && runtime.allocations().Find(last);
}

}  // namespace

// The checks NVIDIA's runtime makes of a copy node (on top of those of MemcpyAsync): something to
// copy, and neither region starting before the allocation it runs into.
infinirtError_t MakeCopyNode(Runtime& runtime, const GraphData& graph, void* dst, const void* src,
                             size_t count, enum infinirtMemcpyKind kind, GraphNode* node,
                             const char* function) {
  if (count == 0) return Fail(infinirtErrorInvalidValue, "{}: count is 0", function);
  for (const void* start : {static_cast<const void*>(dst), src}) {
    if (start != nullptr && StartsBeforeAnAllocation(runtime, start, count)) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: {} starts before the allocation its {} bytes run into", function, start,
                  count);
    }
  }
  const StreamTarget on_graph = GraphTarget(runtime, graph);
  Target target;
  enum infinirtMemcpyKind resolved = kind;
  CrossBackendCopy cross;
  if (auto error = RouteCopy(runtime, dst, src, count, kind, &on_graph, &target, &resolved, &cross,
                             function)) {
    return error;
  }
  if (cross.needed) {
    return Fail(infinirtErrorNotSupported,
                "{}: a graph cannot hold a copy with device memory of another backend", function);
  }
  DescribeCopy(node, dst, src, count, resolved);
  node->copy_3d = false;
  node->copy_rows.clear();
  return infinirtSuccess;
}

infinirtError_t MakeCopy3DNode(Runtime& runtime, const GraphData& graph,
                               const infinirtMemcpy3DParms* params, GraphNode* node,
                               const char* function) {
  if (params == nullptr)
    return Fail(infinirtErrorInvalidValue, "{}: the parameters are NULL", function);
  std::vector<CopyRow> rows;
  if (auto error = RowsOf3DCopy(params, &rows, function)) return error;
  const CopyRow& first = rows.front();
  if (auto error = MakeCopyNode(runtime, graph, first.dst, first.src, first.count, params->kind,
                                node, function)) {
    return error;
  }
  node->copy_3d = true;
  node->copy_params = *params;
  node->copy_params.kind = node->desc.params.copy.kind;
  if (rows.size() > 1) node->copy_rows = std::move(rows);
  return infinirtSuccess;
}

namespace {

// The byte a memset of elementSize-byte elements of `value` writes, when every byte of the
// element is the same; plugins set bytes.
bool UniformByte(unsigned int value, unsigned int element_size, int* byte) {
  const unsigned int low = value & 0xFFu;
  for (unsigned int i = 1; i < element_size; ++i) {
    if (((value >> (8 * i)) & 0xFFu) != low) return false;
  }
  *byte = static_cast<int>(low);
  return true;
}

}  // namespace

infinirtError_t MakeSetNode(Runtime& runtime, const GraphData& graph,
                            const infinirtMemsetParams* params, GraphNode* node,
                            const char* function) {
  if (params == nullptr) return Fail(infinirtErrorInvalidValue, "{}: params is NULL", function);
  const unsigned int size = params->elementSize;
  if (size != 1 && size != 2 && size != 4) {
    return Fail(infinirtErrorInvalidValue, "{}: elementSize {} is not 1, 2 or 4", function, size);
  }
  if (params->width == 0 || params->height == 0) {
    return Fail(infinirtErrorInvalidValue, "{}: the region is empty", function);
  }
  const size_t row_bytes = params->width * size;
  if (params->width > SIZE_MAX / size ||
      (params->height > 1 && (params->pitch < row_bytes ||
                              params->height - 1 > (SIZE_MAX - row_bytes) / params->pitch))) {
    return Fail(infinirtErrorInvalidValue, "{}: pitch {} does not hold rows of {} bytes", function,
                params->pitch, row_bytes);
  }
  int byte = 0;
  const bool elements = !UniformByte(params->value, size, &byte);
  if (elements && !Provides(graph.backend().table.MemsetElementsAsync)) {
    return Fail(infinirtErrorNotSupported,
                "{}: value {:#x} repeats no single byte, and this backend sets bytes only",
                function, params->value);
  }
  const size_t span =
      params->height > 1 ? params->pitch * (params->height - 1) + row_bytes : row_bytes;
  const StreamTarget on_graph = GraphTarget(runtime, graph);
  Target target;
  if (auto error = RouteMemset(runtime, params->dst, span, &on_graph, &target, function)) {
    return error;
  }
  DescribeSet(node, params->dst, byte, row_bytes);
  node->memset_pitch = params->height > 1 ? params->pitch : row_bytes;
  node->memset_given_pitch = params->pitch;
  node->memset_height = params->height;
  node->memset_element_size = size;
  node->memset_value = params->value;
  node->memset_elements = elements;
  return infinirtSuccess;
}

infinirtError_t MakeHostNode(const infinirtHostNodeParams* params, GraphNode* node,
                             const char* function) {
  if (params == nullptr || params->fn == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: the host function is NULL", function);
  }
  node->desc.kind = INFINIRT_GRAPH_NODE_HOST;
  node->desc.params.host.fn = params->fn;
  node->desc.params.host.user_data = params->userData;
  return infinirtSuccess;
}

infinirtError_t NodeOfGraph(const GraphData& graph, infinirtGraphNode_t handle, uint32_t* id,
                            const char* function) {
  uint64_t graph_id = 0;
  if (handle == nullptr || !SplitNodeHandle(handle, &graph_id, id) ||
      NodeHandle(graph.id(), *id) != handle || graph.FindNode(*id) == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: {} is not a node of this graph", function,
                static_cast<const void*>(handle));
  }
  return infinirtSuccess;
}

infinirtError_t ResolveDependencies(const GraphData& graph, const infinirtGraphNode_t* handles,
                                    size_t count, std::vector<uint32_t>* ids,
                                    const char* function) {
  if (count > 0 && handles == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: pDependencies is NULL with {} dependencies",
                function, count);
  }
  for (size_t i = 0; i < count; ++i) {
    uint32_t id = 0;
    if (auto error = NodeOfGraph(graph, handles[i], &id, function)) return error;
    if (std::find(ids->begin(), ids->end(), id) != ids->end()) {
      return Fail(infinirtErrorInvalidValue, "{}: dependency {} is listed twice", function, i);
    }
    ids->push_back(id);
  }
  return infinirtSuccess;
}

bool IsDefaultEdge(const infinirtGraphEdgeData& edge) {
  const infinirtGraphEdgeData zero{};
  return std::memcmp(&edge, &zero, sizeof(edge)) == 0;
}

infinirtError_t ResolveExec(Runtime& runtime, infinirtGraphExec_t exec, ObjectRecord* record,
                            const char* function) {
  if (exec == nullptr) return Fail(infinirtErrorInvalidValue, "{}: graphExec is NULL", function);
  return ResolveObject(runtime.graph_execs(), exec, "graph exec", record, function);
}

infinirtError_t ResolveExecOnStream(Runtime& runtime, infinirtGraphExec_t exec,
                                    infinirtStream_t stream, ObjectRecord* record,
                                    StreamTarget* target, const char* function) {
  if (exec == nullptr) return Fail(infinirtErrorInvalidValue, "{}: graphExec is NULL", function);
  if (!runtime.graph_execs().Lookup(HandleValue(exec), record)) {
    return StaleOrInvalidHandle(runtime.graph_execs(), exec, "graph exec", function);
  }
  if (auto error = ResolveStream(runtime, stream, target, function)) return error;
  if (target->device != record->device) {
    return Fail(infinirtErrorInvalidValue,
                "{}: the exec belongs to device {} and the stream to device {}", function,
                record->device, target->device);
  }
  return infinirtSuccess;
}

std::vector<std::pair<uint64_t, void*>> EventsOf(const GraphData& graph) {
  std::vector<std::pair<uint64_t, void*>> events;
  for (const GraphNode& node : graph.nodes()) {
    if (node.kind() == INFINIRT_GRAPH_NODE_EVENT_WAIT) {
      events.emplace_back(node.event, node.desc.params.wait.event);
    } else if (node.kind() == INFINIRT_GRAPH_NODE_EVENT_RECORD) {
      events.emplace_back(node.event, node.desc.params.record.event);
    }
  }
  return events;
}

infinirtError_t CheckEventsLive(Runtime& runtime,
                                const std::vector<std::pair<uint64_t, void*>>& events,
                                const char* function) {
  for (const auto& [handle, plugin_event] : events) {
    ObjectRecord record;
    if (!runtime.events().Lookup(handle, &record) || record.plugin_handle != plugin_event) {
      return Fail(infinirtErrorInvalidResourceHandle,
                  "{}: event {:#x} of an event node was destroyed", function, handle);
    }
  }
  return infinirtSuccess;
}

infinirtError_t EnsureOrderEvent(const infinirtPluginTable& table, int local, ExecData& exec) {
  if (exec.order_event != nullptr) return infinirtSuccess;
  return table.EventCreate(local, &exec.order_event, infinirtEventDisableTiming);
}

bool LatestLaunchStreamNameable(Runtime& runtime, const ExecData& exec) {
  if (exec.last_stream_per_thread) return false;
  if (exec.last_stream_handle == 0) return true;  // the legacy stream
  ObjectRecord record;
  return runtime.streams().Lookup(exec.last_stream_handle, &record) &&
         record.plugin_handle == exec.last_stream;
}

namespace {

void ReleaseReferences(void* references) { delete static_cast<UserObjectRefs*>(references); }

}  // namespace

void ReleaseUserObjectsAfterLaunches(Runtime& runtime, const ObjectRecord& record, ExecData& exec) {
  if (exec.user_objects.empty() || !(exec.launched || exec.launched_native)) return;
  const infinirtPluginTable& table = runtime.backend(record.backend).table;
  auto references = std::make_unique<UserObjectRefs>();
  references->Take(&exec.user_objects);
  if (LatestLaunchStreamNameable(runtime, exec) &&
      table.LaunchHostFunc(record.local_device, exec.last_stream, ReleaseReferences,
                           references.get()) == infinirtSuccess) {
    references.release();  // ReleaseReferences deletes them
    return;
  }
  table.DeviceSynchronize(record.local_device);  // then released here
}

}  // namespace infinirt::core::api
