// The public C API for stream capture and graphs. Capture
// itself is the core's (capture.h); graphs are core objects (graph.h) that a plugin
// instantiates natively or that the core replays through the plugin's asynchronous entries.
#include <cstring>
#include <memory>

#include "graph_api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

bool IsCaptureMode(enum infinirtStreamCaptureMode mode) {
  return mode == infinirtStreamCaptureModeGlobal || mode == infinirtStreamCaptureModeThreadLocal ||
         mode == infinirtStreamCaptureModeRelaxed;
}

constexpr unsigned long long kKnownInstantiateFlags =
    infinirtGraphInstantiateFlagAutoFreeOnLaunch | infinirtGraphInstantiateFlagUpload |
    infinirtGraphInstantiateFlagDeviceLaunch | infinirtGraphInstantiateFlagUseNodePriority;

// Nodes a capture is to continue after: nodes of its graph, with plain edges.
infinirtError_t ResolveCaptureDependencies(const GraphData& graph,
                                           const infinirtGraphNode_t* dependencies,
                                           const infinirtGraphEdgeData* edge_data, size_t count,
                                           std::vector<uint32_t>* nodes, const char* function) {
  for (size_t i = 0; edge_data != nullptr && i < count; ++i) {
    if (!IsDefaultEdge(edge_data[i])) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: dependency {} has edge data; InfiniRT's edges are plain dependencies",
                  function, i);
    }
  }
  std::lock_guard<std::recursive_mutex> lock(graph.mutex());
  return ResolveDependencies(graph, dependencies, count, nodes, function);
}

// A host-to-host copy node, replayed as a host function: the plugin's MemcpyAsync would copy at
// once (host-to-host copies are synchronous), not in stream order. The function owns its
// parameters, since the exec may be destroyed while the launch is pending.
struct HostCopy {
  void* dst;
  const void* src;
  size_t count;
};

void RunHostCopy(void* data) {
  std::unique_ptr<HostCopy> copy(static_cast<HostCopy*>(data));
  std::memcpy(copy->dst, copy->src, copy->count);
}

infinirtError_t ReplayHostCopy(const infinirtPluginTable& table, int local, void* stream, void* dst,
                               const void* src, size_t count) {
  auto copy = std::make_unique<HostCopy>(HostCopy{dst, src, count});
  const infinirtError_t error = table.LaunchHostFunc(local, stream, RunHostCopy, copy.get());
  if (error == infinirtSuccess) copy.release();  // RunHostCopy frees it
  return error;
}

// A native-function node, replayed: its function queues the work on the launch stream's vendor
// stream.
infinirtError_t ReplayNativeFunc(const infinirtPluginTable& table, int local, void* stream,
                                 const infinirtPluginGraphNode& node) {
  void* native = nullptr;
  if (auto error = table.StreamGetNativeHandle(local, stream, &native)) return error;
  return node.params.native.fn(native, node.params.native.user_data);
}

// Runs a graph's nodes, in order, through the plugin's ordinary asynchronous entries: how a
// backend without native graphs launches one. The exec's order event keeps launches of the same
// exec in order even when they go to different streams.
infinirtError_t Replay(Backend& backend, int local, ExecData& exec, void* stream) {
  const infinirtPluginTable& table = backend.table;
  if (exec.launched) {
    if (auto error = table.StreamWaitEvent(local, stream, exec.order_event, 0)) return error;
  }
  for (const GraphNode& node : exec.graph->nodes()) {
    const auto& p = node.desc.params;
    infinirtError_t error = infinirtSuccess;
    switch (node.kind()) {
      case INFINIRT_GRAPH_NODE_MEMCPY:
        error = p.copy.kind == infinirtMemcpyHostToHost
                    ? ReplayHostCopy(table, local, stream, p.copy.dst, p.copy.src, p.copy.count)
                    : table.MemcpyAsync(local, p.copy.dst, p.copy.src, p.copy.count, p.copy.kind,
                                        stream);
        break;
      case INFINIRT_GRAPH_NODE_MEMSET:
        error = node.memset_elements
                    ? table.MemsetElementsAsync(local, p.set.ptr, node.memset_value,
                                                node.memset_element_size,
                                                p.set.count / node.memset_element_size, stream)
                    : table.MemsetAsync(local, p.set.ptr, p.set.value, p.set.count, stream);
        break;
      case INFINIRT_GRAPH_NODE_HOST:
        error = table.LaunchHostFunc(local, stream, p.host.fn, p.host.user_data);
        break;
      case INFINIRT_GRAPH_NODE_EVENT_WAIT:
        error = table.StreamWaitEvent(local, stream, p.wait.event, 0);
        break;
      case INFINIRT_GRAPH_NODE_EVENT_RECORD:
        error = table.EventRecord(local, p.record.event, stream);
        break;
      case INFINIRT_GRAPH_NODE_NATIVE:
        error = ReplayNativeFunc(table, local, stream, node.desc);
        break;
      default:  // empty, allocation and free nodes only order the others
        break;
    }
    if (error != infinirtSuccess) return error;
  }
  if (auto error = table.EventRecord(local, exec.order_event, stream)) return error;
  exec.launched = true;
  return infinirtSuccess;
}

// A launch of a plugin's own exec, after the latest launch of the plugin exec it replaced, if it
// replaced one (api_graph_exec.cc).
infinirtError_t LaunchNative(const StreamTarget& target, ExecData& exec) {
  const infinirtPluginTable& table = target.backend->table;
  if (exec.wait_order_event) {
    if (auto error = table.StreamWaitEvent(target.local, target.stream, exec.order_event, 0)) {
      return error;
    }
    exec.wait_order_event = false;
  }
  if (auto error = table.GraphLaunch(target.local, exec.plugin_exec, target.stream)) return error;
  exec.launched_native = true;
  return infinirtSuccess;
}

}  // namespace

extern "C" {

// ------------------------------------------------------------------------------------------
// Stream capture
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtStreamBeginCapture(infinirtStream_t stream,
                                           enum infinirtStreamCaptureMode mode) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function)) return error;
    if (!target.ref.legacy && !IsCaptureMode(mode)) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a capture mode", function,
                  static_cast<int>(mode));
    }
    auto graph = std::make_shared<GraphData>(target.backend, target.backend_index, target.device,
                                             target.local, &runtime.allocations());
    return runtime.captures().Begin(target.ref, mode, std::move(graph));
  });
}

infinirtError_t infinirtStreamBeginCaptureToGraph(infinirtStream_t stream, infinirtGraph_t graph,
                                                  const infinirtGraphNode_t* dependencies,
                                                  const infinirtGraphEdgeData* dependencyData,
                                                  size_t numDependencies,
                                                  enum infinirtStreamCaptureMode mode) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function)) return error;
    std::shared_ptr<GraphData> data;
    if (auto error = ResolveGraph(runtime, graph, &data, function)) return error;
    if (!IsCaptureMode(mode)) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a capture mode", function,
                  static_cast<int>(mode));
    }
    if (data->device() != target.device) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: the graph belongs to device {} and the stream to device {}", function,
                  data->device(), target.device);
    }
    std::vector<uint32_t> after;
    if (auto error = ResolveCaptureDependencies(*data, dependencies, dependencyData,
                                                numDependencies, &after, function)) {
      return error;
    }
    return runtime.captures().Begin(target.ref, mode, std::move(data), HandleValue(graph),
                                    std::move(after));
  });
}

infinirtError_t infinirtStreamEndCapture(infinirtStream_t stream, infinirtGraph_t* pGraph) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function)) return error;
    if (pGraph == nullptr) return Fail(infinirtErrorInvalidValue, "{}: pGraph is NULL", function);
    *pGraph = nullptr;
    Captures::Ended ended;
    const infinirtError_t error = runtime.captures().End(target.ref, &ended);
    if (!ended.graph) {
      if (ended.graph_handle && !ended.programs_graph) {
        runtime.RetireGraphHandle(ended.graph_handle);
      }
      return error;
    }
    ObjectRecord record;
    uint64_t handle = ended.graph_handle;
    if (handle == 0 || !runtime.graphs().Lookup(handle, &record)) {
      handle = PublishGraph(runtime, ended.graph);
      if (handle == 0) return Fail(infinirtErrorMemoryAllocation, "{}: too many graphs", function);
    }
    *pGraph = reinterpret_cast<infinirtGraph_t>(static_cast<uintptr_t>(handle));
    return infinirtSuccess;
  });
}

infinirtError_t infinirtStreamIsCapturing(infinirtStream_t stream,
                                          enum infinirtStreamCaptureStatus* pCaptureStatus) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function)) return error;
    if (pCaptureStatus == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pCaptureStatus is NULL", function);
    }
    CaptureInfo info;
    if (auto error = runtime.captures().Query(target.ref, &info, nullptr)) return error;
    *pCaptureStatus = info.status;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtStreamGetCaptureInfo(infinirtStream_t stream,
                                             enum infinirtStreamCaptureStatus* captureStatus_out,
                                             unsigned long long* id_out, infinirtGraph_t* graph_out,
                                             const infinirtGraphNode_t** dependencies_out,
                                             const infinirtGraphEdgeData** edgeData_out,
                                             size_t* numDependencies_out) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function)) return error;
    if (captureStatus_out == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: captureStatus_out is NULL", function);
    }
    if (edgeData_out != nullptr && dependencies_out == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: edgeData_out needs dependencies_out as well",
                  function);
    }
    const std::function<uint64_t(const std::shared_ptr<GraphData>&)> publish =
        [&runtime](const std::shared_ptr<GraphData>& graph) {
          return PublishGraph(runtime, graph);
        };
    CaptureInfo info;
    if (auto error = runtime.captures().Query(target.ref, &info, graph_out ? &publish : nullptr)) {
      return error;
    }
    *captureStatus_out = info.status;
    if (id_out) *id_out = info.id;
    if (graph_out) {
      *graph_out = reinterpret_cast<infinirtGraph_t>(static_cast<uintptr_t>(info.graph_handle));
    }
    if (dependencies_out) *dependencies_out = info.dependencies;
    if (edgeData_out) *edgeData_out = info.edge_data;
    if (numDependencies_out) *numDependencies_out = info.dependency_count;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtStreamUpdateCaptureDependencies(infinirtStream_t stream,
                                                        infinirtGraphNode_t* dependencies,
                                                        const infinirtGraphEdgeData* dependencyData,
                                                        size_t numDependencies,
                                                        unsigned int flags) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function)) return error;
    if (flags != infinirtStreamAddCaptureDependencies &&
        flags != infinirtStreamSetCaptureDependencies) {
      return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function, flags);
    }
    const Captures::DependencyResolver resolve = [&](const GraphData& graph,
                                                     std::vector<uint32_t>* nodes) {
      return ResolveCaptureDependencies(graph, dependencies, dependencyData, numDependencies, nodes,
                                        function);
    };
    return runtime.captures().UpdateDependencies(target.ref, resolve,
                                                 flags == infinirtStreamSetCaptureDependencies);
  });
}

infinirtError_t infinirtThreadExchangeStreamCaptureMode(enum infinirtStreamCaptureMode* mode) {
  return Guard(__func__, [&](const char* function) {
    if (mode == nullptr) return Fail(infinirtErrorInvalidValue, "{}: mode is NULL", function);
    if (!IsCaptureMode(*mode)) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a capture mode", function,
                  static_cast<int>(*mode));
    }
    *mode = Captures::ExchangeThreadMode(*mode);
    return infinirtSuccess;
  });
}

// ------------------------------------------------------------------------------------------
// Graphs
// ------------------------------------------------------------------------------------------

}  // extern "C"

namespace infinirt::core::api {

infinirtError_t InstantiateGraph(infinirtGraphExec_t* pGraphExec, infinirtGraph_t graph,
                                 unsigned long long flags, bool with_params, const char* function) {
  if (pGraphExec == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: pGraphExec is NULL", function);
  }
  Runtime& runtime = Runtime::Get();
  std::shared_ptr<GraphData> source;
  if (auto error = ResolveGraph(runtime, graph, &source, function)) return error;
  if (flags & ~kKnownInstantiateFlags) {
    return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function, flags);
  }
  if (flags & infinirtGraphInstantiateFlagDeviceLaunch) {
    return Fail(infinirtErrorNotSupported, "{}: graphs cannot be launched from a device", function);
  }
  // Upload names a stream, which only GraphInstantiateWithParams gives (NVIDIA's runtime refuses
  // the flag elsewhere).
  if ((flags & infinirtGraphInstantiateFlagUpload) && !with_params) {
    return Fail(infinirtErrorInvalidValue,
                "{}: the Upload flag is for infinirtGraphInstantiateWithParams", function);
  }
  std::shared_ptr<GraphData> data;
  GraphData::FlatSpans spans;
  if (source->Flatten(&data, &spans) != infinirtSuccess) {
    return Fail(infinirtErrorInvalidValue, "{}: the graph's dependencies form a cycle", function);
  }
  std::vector<std::pair<uint64_t, void*>> events = EventsOf(*data);
  if (auto error = CheckEventsLive(runtime, events, function)) return error;
  {
    std::lock_guard<std::mutex> lock(data->allocations().exec_mutex());
    if (data->HasMemoryNodes() && data->allocations().live_execs > 0) {
      return Fail(infinirtErrorNotSupported,
                  "{}: a graph with memory nodes can have only one exec at a time", function);
    }
    ++data->allocations().live_execs;
  }
  auto exec = std::make_unique<ExecData>();
  exec->graph = data;
  exec->events = std::move(events);
  exec->source_graph = source->id();
  UserObjectRefs references(data->user_objects());
  exec->user_objects.Take(&references);
  exec->spans = std::move(spans);
  exec->flags = flags;
  Backend& backend = data->backend();
  const int local = data->local_device();
  const std::vector<infinirtPluginGraphNode> nodes = data->PluginNodes();
  infinirtError_t error =
      backend.table.GraphInstantiate(local, &exec->plugin_exec, nodes.data(), nodes.size(), flags);
  if (error == infinirtErrorNotSupported) {
    // No native graphs: launches replay the nodes, ordered by an event of the exec's own.
    exec->plugin_exec = nullptr;
    error = EnsureOrderEvent(backend.table, local, *exec);
  }
  ObjectRecord exec_record;
  exec_record.backend = data->backend_index();
  exec_record.device = data->device();
  exec_record.local_device = data->local_device();
  exec_record.flags = static_cast<unsigned int>(flags);
  exec_record.plugin_handle = exec.get();
  uint64_t handle = 0;
  if (error == infinirtSuccess) {
    handle = runtime.graph_execs().Insert(exec_record);
    if (handle == 0) error = Fail(infinirtErrorMemoryAllocation, "{}: too many execs", function);
  } else {
    error = BackendAnswer(error, backend, function);
  }
  if (error != infinirtSuccess) {
    runtime.DestroyExec(exec_record);  // undoes the count and whatever the plugin made
    exec.release();
    return error;
  }
  exec.release();
  *pGraphExec = reinterpret_cast<infinirtGraphExec_t>(static_cast<uintptr_t>(handle));
  return infinirtSuccess;
}

}  // namespace infinirt::core::api

extern "C" {

infinirtError_t infinirtGraphInstantiate(infinirtGraphExec_t* pGraphExec, infinirtGraph_t graph,
                                         unsigned long long flags) {
  return Guard(__func__, [&](const char* function) {
    return InstantiateGraph(pGraphExec, graph, flags, /*with_params=*/false, function);
  });
}

infinirtError_t infinirtGraphInstantiateWithFlags(infinirtGraphExec_t* pGraphExec,
                                                  infinirtGraph_t graph, unsigned long long flags) {
  return infinirtGraphInstantiate(pGraphExec, graph, flags);
}

infinirtError_t infinirtGraphLaunch(infinirtGraphExec_t graphExec, infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    StreamTarget target;
    if (auto error = ResolveExecOnStream(runtime, graphExec, stream, &record, &target, function)) {
      return error;
    }
    auto* exec = static_cast<ExecData*>(record.plugin_handle);
    // Held throughout: an update (api_graph_exec.cc) replaces exec->graph under it.
    std::lock_guard<std::mutex> lock(exec->mutex);
    const GraphData& graph = *exec->graph;
    if (auto error = CheckEventsLive(runtime, exec->events, function)) return error;
    if (runtime.captures().Active()) {
      if (target.ref.legacy) {
        if (auto error = runtime.captures().CheckLegacyUse(target.device)) return error;
      } else {
        infinirtError_t captured;
        if (runtime.captures().RecordSubgraph(target.ref, exec->graph, &captured)) return captured;
      }
    }
    const std::vector<void*> left_live = graph.AllocationsLeftLive();
    if (runtime.graph_memory().AnyLive(left_live)) {
      if (!(exec->flags & infinirtGraphInstantiateFlagAutoFreeOnLaunch)) {
        return Fail(infinirtErrorInvalidValue,
                    "{}: memory the previous launch allocated is still live; free it first or "
                    "instantiate with infinirtGraphInstantiateFlagAutoFreeOnLaunch",
                    function);
      }
      runtime.graph_memory().Release(left_live);
    }
    const infinirtError_t error = exec->native()
                                      ? LaunchNative(target, *exec)
                                      : Replay(*target.backend, target.local, *exec, target.stream);
    if (error == infinirtSuccess) {
      runtime.graph_memory().MarkLive(left_live);
      exec->last_stream = target.stream;
      exec->last_stream_handle = target.ref.handle;
      exec->last_stream_per_thread = target.ref.per_thread;
    }
    return BackendAnswer(error, *target.backend, function);
  });
}

infinirtError_t infinirtGraphExecDestroy(infinirtGraphExec_t graphExec) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    if (graphExec == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: graphExec is NULL", function);
    }
    ObjectRecord record;
    if (!runtime.graph_execs().Remove(HandleValue(graphExec), &record)) {
      return InvalidHandle(graphExec, "graph exec", function);
    }
    auto* exec = static_cast<ExecData*>(record.plugin_handle);
    {
      std::lock_guard<std::mutex> lock(exec->mutex);  // after a launch still being issued
      ReleaseUserObjectsAfterLaunches(runtime, record, *exec);
    }
    runtime.DestroyExec(record);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphDestroy(infinirtGraph_t graph) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    if (graph == nullptr) return Fail(infinirtErrorInvalidValue, "{}: graph is NULL", function);
    ObjectRecord record;
    if (!runtime.graphs().Remove(HandleValue(graph), &record)) {
      return InvalidHandle(graph, "graph", function);
    }
    // Execs made from it keep what they need: launching them afterwards still works.
    runtime.DestroyGraph(record);
    return infinirtSuccess;
  });
}

}  // extern "C"
