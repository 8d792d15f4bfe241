// The public C API for changing executable graphs in place (GraphExecUpdate and the
// GraphExec*SetParams functions), uploading them, and instantiating with parameters.
//
// An exec runs a flattened copy of its graph (ExecData::graph). A change makes a new copy and
// puts it in place of the old one; launches already queued keep what they run. A backend that
// instantiated the old copy natively gets the new one instantiated in its place, and its first
// launch waits, through the exec's order event, for the latest launch of the old one: an exec
// never runs concurrently with itself.
#include <cstring>
#include <mutex>

#include "graph_api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

// Makes the next launch of a natively instantiated exec wait for its latest launch so far: the
// exec's order event is recorded on that launch's stream. Where that stream cannot be named any
// more (destroyed since, or another thread's per-thread stream), the device is synchronised
// instead.
infinirtError_t OrderAfterLatestLaunch(Runtime& runtime, Backend& backend, int local,
                                       ExecData& exec) {
  const infinirtPluginTable& table = backend.table;
  if (auto error = EnsureOrderEvent(table, local, exec)) return error;
  if (!LatestLaunchStreamNameable(runtime, exec)) return table.DeviceSynchronize(local);
  if (auto error = table.EventRecord(local, exec.order_event, exec.last_stream)) return error;
  exec.wait_order_event = true;  // a native launch waits for it
  exec.launched = true;          // and so does a replayed one
  return infinirtSuccess;
}

// Puts `flat` in place of the exec's graph. Called with exec.mutex held.
infinirtError_t ReplaceExecGraph(Runtime& runtime, const ObjectRecord& record, ExecData& exec,
                                 std::shared_ptr<GraphData> flat, const char* function) {
  std::vector<std::pair<uint64_t, void*>> events = EventsOf(*flat);
  if (auto error = CheckEventsLive(runtime, events, function)) return error;
  if (exec.native()) {
    Backend& backend = runtime.backend(record.backend);
    const int local = record.local_device;
    const std::vector<infinirtPluginGraphNode> nodes = flat->PluginNodes();
    void* fresh = nullptr;
    infinirtError_t error =
        backend.table.GraphInstantiate(local, &fresh, nodes.data(), nodes.size(), exec.flags);
    if (error == infinirtErrorNotSupported)
      fresh = nullptr;  // replayed from now on
    else if (error != infinirtSuccess)
      return BackendAnswer(error, backend, function);
    if (exec.launched_native) error = OrderAfterLatestLaunch(runtime, backend, local, exec);
    if (error == infinirtSuccess && fresh == nullptr) {
      error = EnsureOrderEvent(backend.table, local, exec);
    }
    if (error != infinirtSuccess) {
      if (fresh) backend.table.GraphExecDestroy(local, fresh);
      return BackendAnswer(error, backend, function);
    }
    backend.table.GraphExecDestroy(local, exec.plugin_exec);
    exec.plugin_exec = fresh;
  }
  UserObjectRefs references(flat->user_objects());  // the exec keeps the old ones too
  exec.user_objects.Take(&references);
  exec.graph = std::move(flat);
  exec.events = std::move(events);
  return infinirtSuccess;
}

infinirtError_t UpdateFailure(infinirtGraphExecUpdateResultInfo* info,
                              infinirtGraphExecUpdateResult result, infinirtGraphNode_t node,
                              infinirtGraphNode_t from, const char* function, const char* why) {
  if (info) *info = infinirtGraphExecUpdateResultInfo{result, node, from};
  return Fail(infinirtErrorGraphExecUpdateFailure, "{}: {}", function, why);
}

// The node of `graph` whose flattened nodes include position `position`, as a handle.
infinirtGraphNode_t NodeAt(const GraphData& graph, const GraphData::FlatSpans& spans,
                           uint32_t position) {
  for (const auto& [id, span] : spans) {
    if (span.first <= position && position <= span.last) return NodeHandle(graph.id(), id);
  }
  return nullptr;
}

// Whether an exec may take `flat` (the flattened form of the graph to update it from): the
// same nodes in the same order with the same edges, copies in the same direction and unchanged
// memory nodes. Other parameters may change. The results are NVIDIA's runtime's: a node of
// another type changes the topology.
infinirtError_t CheckUpdatable(const GraphData& current, const GraphData& flat,
                               const GraphData& graph, const GraphData::FlatSpans& spans,
                               infinirtGraphExecUpdateResultInfo* info, const char* function) {
  const auto& old_nodes = current.nodes();
  const auto& new_nodes = flat.nodes();
  if (old_nodes.size() != new_nodes.size()) {
    return UpdateFailure(info, infinirtGraphExecUpdateErrorTopologyChanged, nullptr, nullptr,
                         function, "the graph has other nodes than the exec");
  }
  for (uint32_t i = 0; i < new_nodes.size(); ++i) {
    const GraphNode& was = old_nodes[i];
    const GraphNode& now = new_nodes[i];
    // Named only on failure: finding a position's node scans every node's span.
    auto at = [&] { return NodeAt(graph, spans, i); };
    if (was.kind() != now.kind()) {
      return UpdateFailure(info, infinirtGraphExecUpdateErrorTopologyChanged, at(), nullptr,
                           function, "a node has another type than the exec's");
    }
    if (now.kind() == INFINIRT_GRAPH_NODE_MEMCPY &&
        was.desc.params.copy.kind != now.desc.params.copy.kind) {
      return UpdateFailure(info, infinirtGraphExecUpdateErrorParametersChanged, at(), nullptr,
                           function, "a copy node copies in another direction than the exec's");
    }
    if (was.dependencies != now.dependencies) {
      return UpdateFailure(info, infinirtGraphExecUpdateErrorTopologyChanged, at(), nullptr,
                           function, "a node has other dependencies than the exec's");
    }
    const bool memory =
        now.kind() == INFINIRT_GRAPH_NODE_MEM_ALLOC || now.kind() == INFINIRT_GRAPH_NODE_MEM_FREE;
    if (memory && std::memcmp(&was.desc.params.memory, &now.desc.params.memory,
                              sizeof(now.desc.params.memory)) != 0) {
      return UpdateFailure(info, infinirtGraphExecUpdateErrorParametersChanged, at(), nullptr,
                           function, "memory nodes cannot change");
    }
  }
  return infinirtSuccess;
}

// Locks an exec and finds the positions of one node of its source graph in the exec's copy.
template <class Change>
infinirtError_t ChangeExecNode(infinirtGraphExec_t graphExec, infinirtGraphNode_t node,
                               const char* function, Change&& change) {
  Runtime& runtime = Runtime::Get();
  ObjectRecord record;
  if (auto error = ResolveExec(runtime, graphExec, &record, function)) return error;
  std::shared_ptr<GraphData> graph;
  uint32_t id = 0;
  if (auto error = ResolveNode(node, &graph, &id, function)) return error;
  auto* exec = static_cast<ExecData*>(record.plugin_handle);
  std::lock_guard<std::mutex> lock(exec->mutex);
  auto span = exec->spans.find(id);
  if (graph->id() != exec->source_graph || span == exec->spans.end()) {
    return Fail(infinirtErrorInvalidValue,
                "{}: the node is not one of the graph the exec was instantiated from", function);
  }
  std::shared_ptr<GraphData> copy = exec->graph->Clone();
  auto& nodes = copy->mutable_nodes();
  if (auto error = change(*copy, nodes, span->second)) return error;
  return ReplaceExecGraph(runtime, record, *exec, std::move(copy), function);
}

}  // namespace

extern "C" {

infinirtError_t infinirtGraphExecUpdate(infinirtGraphExec_t hGraphExec, infinirtGraph_t hGraph,
                                        infinirtGraphExecUpdateResultInfo* resultInfo) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolveExec(runtime, hGraphExec, &record, function)) return error;
    std::shared_ptr<GraphData> graph;
    if (auto error = ResolveGraph(runtime, hGraph, &graph, function)) return error;
    if (resultInfo) *resultInfo = infinirtGraphExecUpdateResultInfo{};
    auto* exec = static_cast<ExecData*>(record.plugin_handle);
    if (graph->device() != record.device) {
      return UpdateFailure(resultInfo, infinirtGraphExecUpdateError, nullptr, nullptr, function,
                           "the graph belongs to another device than the exec");
    }
    std::lock_guard<std::mutex> lock(exec->mutex);
    // Another number of nodes is no update at all (NVIDIA's runtime reports NotSupported).
    if (graph->node_count() != exec->spans.size()) {
      return UpdateFailure(resultInfo, infinirtGraphExecUpdateErrorNotSupported, nullptr, nullptr,
                           function, "the graph has another number of nodes than the exec's");
    }
    std::shared_ptr<GraphData> flat;
    GraphData::FlatSpans spans;
    if (graph->Flatten(&flat, &spans) != infinirtSuccess) {
      return UpdateFailure(resultInfo, infinirtGraphExecUpdateErrorTopologyChanged, nullptr,
                           nullptr, function, "the graph's dependencies form a cycle");
    }
    if (auto error = CheckUpdatable(*exec->graph, *flat, *graph, spans, resultInfo, function)) {
      return error;
    }
    return ReplaceExecGraph(runtime, record, *exec, std::move(flat), function);
  });
}

infinirtError_t infinirtGraphExecHostNodeSetParams(
    infinirtGraphExec_t hGraphExec, infinirtGraphNode_t node,
    const struct infinirtHostNodeParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    return ChangeExecNode(
        hGraphExec, node, function,
        [&](GraphData&, std::vector<GraphNode>& nodes, GraphData::FlatSpan span) {
          GraphNode& host = nodes[span.first];
          if (span.first != span.last || host.kind() != INFINIRT_GRAPH_NODE_HOST) {
            return Fail(infinirtErrorInvalidValue, "{}: not a host node", function);
          }
          return MakeHostNode(pNodeParams, &host, function);
        });
  });
}

infinirtError_t infinirtGraphExecMemcpyNodeSetParams1D(infinirtGraphExec_t hGraphExec,
                                                       infinirtGraphNode_t node, void* dst,
                                                       const void* src, size_t count,
                                                       enum infinirtMemcpyKind kind) {
  return Guard(__func__, [&](const char* function) {
    return ChangeExecNode(
        hGraphExec, node, function,
        [&](GraphData& copy, std::vector<GraphNode>& nodes, GraphData::FlatSpan span) {
          GraphNode& target = nodes[span.first];
          if (span.first != span.last || target.kind() != INFINIRT_GRAPH_NODE_MEMCPY) {
            return Fail(infinirtErrorInvalidValue, "{}: not a memcpy node", function);
          }
          const enum infinirtMemcpyKind direction = target.desc.params.copy.kind;
          if (auto error =
                  MakeCopyNode(Runtime::Get(), copy, dst, src, count, kind, &target, function)) {
            return error;
          }
          if (target.desc.params.copy.kind != direction) {  // NVIDIA's runtime refuses it too
            return Fail(infinirtErrorInvalidValue,
                        "{}: an exec's copy node cannot change its direction", function);
          }
          return infinirtSuccess;
        });
  });
}

// The exec's copy keeps its shape and direction (NVIDIA's runtime refuses a new direction): the
// same number of rows, each row's addresses and size replaced.
infinirtError_t infinirtGraphExecMemcpyNodeSetParams(
    infinirtGraphExec_t hGraphExec, infinirtGraphNode_t node,
    const struct infinirtMemcpy3DParms* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    return ChangeExecNode(
        hGraphExec, node, function,
        [&](GraphData& copy, std::vector<GraphNode>& nodes, GraphData::FlatSpan span) {
          GraphNode& first = nodes[span.first];
          if (first.kind() != INFINIRT_GRAPH_NODE_MEMCPY) {
            return Fail(infinirtErrorInvalidValue, "{}: not a memcpy node", function);
          }
          GraphNode changed;
          if (auto error = MakeCopy3DNode(Runtime::Get(), copy, pNodeParams, &changed, function)) {
            return error;
          }
          if (changed.desc.params.copy.kind != first.desc.params.copy.kind) {
            return Fail(infinirtErrorInvalidValue,
                        "{}: an exec's copy node cannot change its direction", function);
          }
          std::vector<CopyRow> rows = changed.copy_rows;
          if (rows.empty()) {
            const auto& one = changed.desc.params.copy;
            rows.push_back(CopyRow{one.dst, one.src, one.count});
          }
          const size_t old_rows = span.first == span.last ? 1 : span.last - span.first;
          if (rows.size() != old_rows) {
            return Fail(infinirtErrorInvalidValue, "{}: {} rows where the exec's copy has {}",
                        function, rows.size(), old_rows);
          }
          for (size_t row = 0; row < rows.size(); ++row) {
            auto& target = nodes[span.first + row].desc.params.copy;
            target.dst = rows[row].dst;
            target.src = rows[row].src;
            target.count = rows[row].count;
          }
          return infinirtSuccess;
        });
  });
}

infinirtError_t infinirtGraphExecMemsetNodeSetParams(
    infinirtGraphExec_t hGraphExec, infinirtGraphNode_t node,
    const struct infinirtMemsetParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    return ChangeExecNode(
        hGraphExec, node, function,
        [&](GraphData& copy, std::vector<GraphNode>& nodes, GraphData::FlatSpan span) {
          GraphNode changed;
          if (auto error = MakeSetNode(Runtime::Get(), copy, pNodeParams, &changed, function)) {
            return error;
          }
          // The node's shape stays: its rows are the nodes from span.first on.
          const bool one_node = span.first == span.last;
          const size_t rows = one_node ? 1 : span.last - span.first;
          GraphNode& first = nodes[span.first];
          const size_t bytes =
              one_node ? first.desc.params.set.count : first.desc.params.set.count * rows;
          const bool same_shape =
              first.kind() == INFINIRT_GRAPH_NODE_MEMSET &&
              (one_node ? changed.desc.params.set.count * changed.memset_height == bytes &&
                              (changed.memset_height == 1 ||
                               changed.memset_pitch == changed.desc.params.set.count)
                        : changed.memset_height == rows &&
                              changed.desc.params.set.count == first.desc.params.set.count &&
                              changed.memset_pitch == first.memset_pitch);
          if (!same_shape) {
            return Fail(infinirtErrorInvalidValue,
                        "{}: not a memset node of the same width, height and pitch", function);
          }
          for (size_t row = 0; row < rows; ++row) {
            GraphNode& target = nodes[span.first + row];
            auto& set = target.desc.params.set;
            set.ptr = static_cast<char*>(changed.desc.params.set.ptr) + row * changed.memset_pitch;
            set.value = changed.desc.params.set.value;
            target.memset_element_size = changed.memset_element_size;
            target.memset_value = changed.memset_value;
            target.memset_elements = changed.memset_elements;
          }
          return infinirtSuccess;
        });
  });
}

infinirtError_t infinirtGraphUpload(infinirtGraphExec_t graphExec, infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    StreamTarget target;
    if (auto error = ResolveExecOnStream(runtime, graphExec, stream, &record, &target, function)) {
      return error;
    }
    // Nothing to upload: every backend's exec is ready to launch once instantiated.
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphInstantiateWithParams(infinirtGraphExec_t* pGraphExec,
                                                   infinirtGraph_t graph,
                                                   infinirtGraphInstantiateParams* params) {
  return Guard(__func__, [&](const char* function) {
    if (params == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: instantiateParams is NULL", function);
    }
    params->errNode_out = nullptr;
    params->result_out = infinirtGraphInstantiateError;
    if (params->flags & infinirtGraphInstantiateFlagUpload) {
      Runtime& runtime = Runtime::Get();
      StreamTarget target;
      if (auto error = ResolveStream(runtime, params->uploadStream, &target, function)) {
        return error;
      }
    }
    const infinirtError_t error =
        InstantiateGraph(pGraphExec, graph, params->flags, /*with_params=*/true, function);
    if (error == infinirtSuccess) {
      params->result_out = infinirtGraphInstantiateSuccess;
    } else {
      std::shared_ptr<GraphData> data;
      std::shared_ptr<GraphData> flat;
      if (ResolveGraph(Runtime::Get(), graph, &data, function) == infinirtSuccess &&
          data->Flatten(&flat) != infinirtSuccess) {
        params->result_out = infinirtGraphInstantiateInvalidStructure;
      }
    }
    return error;
  });
}

}  // extern "C"
