// The public C API for building graphs node by node and inspecting them. Captured and built
// graphs are the same objects (graph.h): nodes can be added to a captured graph and a built one
// can be launched into a capture.
#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstring>
#include <set>
#include <string>
#include <utility>

#include "graph_api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

constexpr unsigned int kKnownDotFlags =
    infinirtGraphDebugDotFlagsVerbose | infinirtGraphDebugDotFlagsKernelNodeParams |
    infinirtGraphDebugDotFlagsMemcpyNodeParams | infinirtGraphDebugDotFlagsMemsetNodeParams |
    infinirtGraphDebugDotFlagsHostNodeParams | infinirtGraphDebugDotFlagsEventNodeParams |
    infinirtGraphDebugDotFlagsExtSemasSignalNodeParams |
    infinirtGraphDebugDotFlagsExtSemasWaitNodeParams |
    infinirtGraphDebugDotFlagsKernelNodeAttributes | infinirtGraphDebugDotFlagsHandles |
    infinirtGraphDebugDotFlagsConditionalNodeParams;

// The steps every infinirtGraphAdd*Node shares: the graph and the dependencies are checked,
// then make_node fills the node (and may refuse), then it joins the graph. make_node runs
// without the graph's lock, which a child-graph node's maker takes on the child.
template <class MakeNode>
infinirtError_t AddNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                        const infinirtGraphNode_t* pDependencies, size_t numDependencies,
                        const char* function, MakeNode&& make_node) {
  Runtime& runtime = Runtime::Get();
  std::shared_ptr<GraphData> data;
  if (auto error = ResolveGraph(runtime, graph, &data, function)) return error;
  if (pGraphNode == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: pGraphNode is NULL", function);
  }
  GraphNode node;
  {
    std::lock_guard<std::recursive_mutex> lock(data->mutex());
    if (auto error = ResolveDependencies(*data, pDependencies, numDependencies, &node.dependencies,
                                         function)) {
      return error;
    }
  }
  if (auto error = make_node(runtime, *data, &node)) return error;
  *pGraphNode = NodeHandle(data->id(), data->Add(std::move(node)));
  return infinirtSuccess;
}

// A node of one type, for the functions that read or change a node's parameters.
template <class Use>
infinirtError_t WithNodeOfType(infinirtGraphNode_t handle, enum infinirtGraphNodeType type,
                               const char* function, Use&& use) {
  std::shared_ptr<GraphData> graph;
  uint32_t id = 0;
  if (auto error = ResolveNode(handle, &graph, &id, function)) return error;
  std::lock_guard<std::recursive_mutex> lock(graph->mutex());
  GraphNode* node = graph->FindNode(id);
  if (node == nullptr || node->type() != type) {
    return Fail(infinirtErrorInvalidValue, "{}: the node is not of type {}", function,
                static_cast<int>(type));
  }
  return use(*graph, *node);
}

// The listing convention of infinirtGraphGetNodes and its kind: a NULL array asks for the count;
// otherwise up to *count entries are written, a longer array's remainder is set to NULL, and
// *count says how many were written.
void WriteNodeList(const std::vector<infinirtGraphNode_t>& all, infinirtGraphNode_t* out,
                   infinirtGraphEdgeData* edge_data, size_t* count) {
  if (out == nullptr) {
    *count = all.size();
    return;
  }
  const size_t written = std::min(*count, all.size());
  for (size_t i = 0; i < *count; ++i) {
    out[i] = i < written ? all[i] : nullptr;
    if (edge_data) edge_data[i] = infinirtGraphEdgeData{};
  }
  *count = written;
}

infinirtError_t MakeEventNode(Runtime& runtime, const GraphData& graph, infinirtEvent_t event,
                              bool record, GraphNode* node, const char* function) {
  if (event == nullptr) return Fail(infinirtErrorInvalidValue, "{}: event is NULL", function);
  ObjectRecord found;
  if (auto error = ResolveObject(runtime.events(), event, "event", &found, function)) return error;
  if (found.device != graph.device()) {
    return Fail(infinirtErrorInvalidValue,
                "{}: the event belongs to device {} and the graph to device {}", function,
                found.device, graph.device());
  }
  node->event = HandleValue(event);
  if (record) {
    node->desc.kind = INFINIRT_GRAPH_NODE_EVENT_RECORD;
    node->desc.params.record.event = found.plugin_handle;
  } else {
    node->desc.kind = INFINIRT_GRAPH_NODE_EVENT_WAIT;
    node->desc.params.wait.event = found.plugin_handle;
  }
  return infinirtSuccess;
}

// The node holds a copy of the child graph as it is at the call (so a graph may be added as a
// child of itself); the copy is checked for cycles when the parent is instantiated, as NVIDIA's
// runtime does.
infinirtError_t MakeChildNode(Runtime& runtime, const GraphData& graph, infinirtGraph_t child,
                              GraphNode* node, const char* function) {
  std::shared_ptr<GraphData> source;
  if (auto error = ResolveGraph(runtime, child, &source, function)) return error;
  if (source->device() != graph.device()) {
    return Fail(infinirtErrorInvalidValue,
                "{}: the child graph belongs to device {} and the graph to device {}", function,
                source->device(), graph.device());
  }
  if (source->HasMemoryNodes()) {
    return Fail(infinirtErrorNotSupported,
                "{}: a child graph cannot hold memory allocation or free nodes", function);
  }
  node->child = source->Clone();
  return infinirtSuccess;
}

infinirtError_t MakeGraphAllocationNode(Runtime& runtime, GraphData& graph,
                                        infinirtMemAllocNodeParams* params, GraphNode* node,
                                        const char* function) {
  if (params == nullptr) return Fail(infinirtErrorInvalidValue, "{}: nodeParams is NULL", function);
  const infinirtMemPoolProps& props = params->poolProps;
  if (props.allocType != infinirtMemAllocationTypePinned ||
      props.location.type != infinirtMemLocationTypeDevice || props.location.id != graph.device() ||
      props.handleTypes != infinirtMemHandleTypeNone) {
    return Fail(infinirtErrorInvalidValue,
                "{}: poolProps must ask for pinned memory of the graph's device {}, without "
                "export handles",
                function, graph.device());
  }
  if (params->bytesize == 0) return Fail(infinirtErrorInvalidValue, "{}: bytesize is 0", function);
  if (params->accessDescCount > 0 && params->accessDescs == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: accessDescs is NULL", function);
  }
  // At most one descriptor per device (NVIDIA's runtime refuses more).
  if (params->accessDescCount > runtime.devices().size()) {
    return Fail(infinirtErrorInvalidValue, "{}: {} access descriptors for {} devices", function,
                params->accessDescCount, runtime.devices().size());
  }
  for (size_t i = 0; i < params->accessDescCount; ++i) {
    const infinirtMemAccessDesc& access = params->accessDescs[i];
    if (access.location.type != infinirtMemLocationTypeDevice) {
      return Fail(infinirtErrorInvalidValue, "{}: accessDescs[{}] is not a device", function, i);
    }
    if (access.location.id != graph.device()) {
      return Fail(infinirtErrorNotSupported,
                  "{}: graph memory is accessible to its own device only", function);
    }
  }
  return MakeAllocationNode(runtime, graph, GraphTarget(runtime, graph), params->bytesize, node,
                            &params->dptr, function);
}

// The edges of a graph, in node order, each as (from, to) node ids.
std::vector<std::pair<uint32_t, uint32_t>> EdgesOf(const GraphData& graph) {
  std::vector<std::pair<uint32_t, uint32_t>> edges;
  for (const GraphNode& node : graph.nodes()) {
    for (uint32_t dependency : node.dependencies) edges.emplace_back(dependency, node.id);
  }
  return edges;
}

bool HasEdge(const GraphData& graph, uint32_t from, uint32_t to) {
  const auto& deps = graph.FindNode(to)->dependencies;
  return std::find(deps.begin(), deps.end(), from) != deps.end();
}

// The edges named by infinirtGraphAddDependencies / RemoveDependencies, checked before any
// changes: both ends in the graph, default edge data, and each edge present (to remove) or absent
// (to add) and named once.
infinirtError_t ResolveEdges(const GraphData& graph, const infinirtGraphNode_t* from,
                             const infinirtGraphNode_t* to, const infinirtGraphEdgeData* edge_data,
                             size_t count, bool adding,
                             std::vector<std::pair<uint32_t, uint32_t>>* edges,
                             const char* function) {
  if (count > 0 && (from == nullptr || to == nullptr)) {
    return Fail(infinirtErrorInvalidValue, "{}: from or to is NULL", function);
  }
  std::set<std::pair<uint32_t, uint32_t>> seen;
  for (size_t i = 0; i < count; ++i) {
    uint32_t source = 0;
    uint32_t target = 0;
    if (auto error = NodeOfGraph(graph, from[i], &source, function)) return error;
    if (auto error = NodeOfGraph(graph, to[i], &target, function)) return error;
    if (source == target) {
      return Fail(infinirtErrorInvalidValue, "{}: edge {} joins a node to itself", function, i);
    }
    if (edge_data && !IsDefaultEdge(edge_data[i])) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: edge {} has edge data; InfiniRT's edges are plain dependencies", function,
                  i);
    }
    if (HasEdge(graph, source, target) != !adding || !seen.insert({source, target}).second) {
      return Fail(infinirtErrorInvalidValue, "{}: edge {} {}", function, i,
                  adding ? "exists already" : "does not exist");
    }
    edges->emplace_back(source, target);
  }
  return infinirtSuccess;
}

infinirtError_t ListEdges(infinirtGraph_t graph, infinirtGraphNode_t* from, infinirtGraphNode_t* to,
                          infinirtGraphEdgeData* edgeData, size_t* numEdges, const char* function) {
  Runtime& runtime = Runtime::Get();
  std::shared_ptr<GraphData> data;
  if (auto error = ResolveGraph(runtime, graph, &data, function)) return error;
  if (numEdges == nullptr) return Fail(infinirtErrorInvalidValue, "{}: numEdges is NULL", function);
  if ((from == nullptr) != (to == nullptr) || (edgeData != nullptr && from == nullptr)) {
    return Fail(infinirtErrorInvalidValue, "{}: from, to and edgeData go together", function);
  }
  std::lock_guard<std::recursive_mutex> lock(data->mutex());
  const auto edges = EdgesOf(*data);
  std::vector<infinirtGraphNode_t> sources;
  std::vector<infinirtGraphNode_t> targets;
  for (const auto& [source, target] : edges) {
    sources.push_back(NodeHandle(data->id(), source));
    targets.push_back(NodeHandle(data->id(), target));
  }
  size_t count = *numEdges;
  WriteNodeList(sources, from, edgeData, &count);
  WriteNodeList(targets, to, nullptr, numEdges);
  return infinirtSuccess;
}

// Dependencies (upstream) or dependents (downstream) of a node.
infinirtError_t ListNeighbours(infinirtGraphNode_t node, infinirtGraphNode_t* out,
                               infinirtGraphEdgeData* edgeData, size_t* count, bool upstream,
                               const char* function) {
  std::shared_ptr<GraphData> graph;
  uint32_t id = 0;
  if (auto error = ResolveNode(node, &graph, &id, function)) return error;
  if (count == nullptr) return Fail(infinirtErrorInvalidValue, "{}: count is NULL", function);
  if (edgeData != nullptr && out == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: edgeData needs the node array as well", function);
  }
  std::lock_guard<std::recursive_mutex> lock(graph->mutex());
  std::vector<infinirtGraphNode_t> neighbours;
  if (upstream) {
    for (uint32_t dependency : graph->FindNode(id)->dependencies) {
      neighbours.push_back(NodeHandle(graph->id(), dependency));
    }
  } else {
    for (const GraphNode& other : graph->nodes()) {
      const auto& deps = other.dependencies;
      if (std::find(deps.begin(), deps.end(), id) != deps.end()) {
        neighbours.push_back(NodeHandle(graph->id(), other.id));
      }
    }
  }
  WriteNodeList(neighbours, out, edgeData, count);
  return infinirtSuccess;
}

infinirtError_t GetEventOfNode(infinirtGraphNode_t node, enum infinirtGraphNodeType type,
                               infinirtEvent_t* event_out, const char* function) {
  if (event_out == nullptr)
    return Fail(infinirtErrorInvalidValue, "{}: event_out is NULL", function);
  return WithNodeOfType(node, type, function, [&](GraphData&, GraphNode& found) {
    *event_out = reinterpret_cast<infinirtEvent_t>(static_cast<uintptr_t>(found.event));
    return infinirtSuccess;
  });
}

}  // namespace

extern "C" {

infinirtError_t infinirtGraphCreate(infinirtGraph_t* pGraph, unsigned int flags) {
  return Guard(__func__, [&](const char* function) {
    if (pGraph == nullptr) return Fail(infinirtErrorInvalidValue, "{}: pGraph is NULL", function);
    if (flags != 0) return Fail(infinirtErrorInvalidValue, "{}: flags must be 0", function);
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function)) return error;
    auto graph = std::make_shared<GraphData>(target.backend, target.backend_index, target.device,
                                             target.local, &runtime.allocations());
    const uint64_t handle = PublishGraph(runtime, graph);
    if (handle == 0) return Fail(infinirtErrorMemoryAllocation, "{}: too many graphs", function);
    *pGraph = reinterpret_cast<infinirtGraph_t>(static_cast<uintptr_t>(handle));
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphAddEmptyNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                          const infinirtGraphNode_t* pDependencies,
                                          size_t numDependencies) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [](Runtime&, GraphData&, GraphNode*) { return infinirtSuccess; });
  });
}

infinirtError_t infinirtGraphAddHostNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                         const infinirtGraphNode_t* pDependencies,
                                         size_t numDependencies,
                                         const struct infinirtHostNodeParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime&, GraphData&, GraphNode* node) {
                     return MakeHostNode(pNodeParams, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddMemcpyNode1D(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                             const infinirtGraphNode_t* pDependencies,
                                             size_t numDependencies, void* dst, const void* src,
                                             size_t count, enum infinirtMemcpyKind kind) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeCopyNode(runtime, data, dst, src, count, kind, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddMemcpyNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                           const infinirtGraphNode_t* pDependencies,
                                           size_t numDependencies,
                                           const struct infinirtMemcpy3DParms* pCopyParams) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeCopy3DNode(runtime, data, pCopyParams, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddMemsetNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                           const infinirtGraphNode_t* pDependencies,
                                           size_t numDependencies,
                                           const struct infinirtMemsetParams* pMemsetParams) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeSetNode(runtime, data, pMemsetParams, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddEventRecordNode(infinirtGraphNode_t* pGraphNode,
                                                infinirtGraph_t graph,
                                                const infinirtGraphNode_t* pDependencies,
                                                size_t numDependencies, infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeEventNode(runtime, data, event, true, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddEventWaitNode(infinirtGraphNode_t* pGraphNode,
                                              infinirtGraph_t graph,
                                              const infinirtGraphNode_t* pDependencies,
                                              size_t numDependencies, infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeEventNode(runtime, data, event, false, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddChildGraphNode(infinirtGraphNode_t* pGraphNode,
                                               infinirtGraph_t graph,
                                               const infinirtGraphNode_t* pDependencies,
                                               size_t numDependencies, infinirtGraph_t childGraph) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeChildNode(runtime, data, childGraph, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddMemAllocNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                             const infinirtGraphNode_t* pDependencies,
                                             size_t numDependencies,
                                             struct infinirtMemAllocNodeParams* nodeParams) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeGraphAllocationNode(runtime, data, nodeParams, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddMemFreeNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                            const infinirtGraphNode_t* pDependencies,
                                            size_t numDependencies, void* dptr) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     if (dptr == nullptr) {
                       return Fail(infinirtErrorInvalidValue, "{}: dptr is NULL", function);
                     }
                     return MakeFreeNode(runtime, data, dptr, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddDependencies(infinirtGraph_t graph, const infinirtGraphNode_t* from,
                                             const infinirtGraphNode_t* to,
                                             const infinirtGraphEdgeData* edgeData,
                                             size_t numDependencies) {
  return Guard(__func__, [&](const char* function) {
    std::shared_ptr<GraphData> data;
    if (auto error = ResolveGraph(Runtime::Get(), graph, &data, function)) return error;
    std::lock_guard<std::recursive_mutex> lock(data->mutex());
    std::vector<std::pair<uint32_t, uint32_t>> edges;
    if (auto error =
            ResolveEdges(*data, from, to, edgeData, numDependencies, true, &edges, function)) {
      return error;
    }
    for (const auto& [source, target] : edges) {
      data->FindNode(target)->dependencies.push_back(source);
    }
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphRemoveDependencies(infinirtGraph_t graph,
                                                const infinirtGraphNode_t* from,
                                                const infinirtGraphNode_t* to,
                                                const infinirtGraphEdgeData* edgeData,
                                                size_t numDependencies) {
  return Guard(__func__, [&](const char* function) {
    std::shared_ptr<GraphData> data;
    if (auto error = ResolveGraph(Runtime::Get(), graph, &data, function)) return error;
    std::lock_guard<std::recursive_mutex> lock(data->mutex());
    if (data->HasMemoryNodes()) {  // NVIDIA's runtime refuses it too
      return Fail(infinirtErrorNotSupported,
                  "{}: dependencies cannot be removed from a graph with memory nodes", function);
    }
    std::vector<std::pair<uint32_t, uint32_t>> edges;
    if (auto error =
            ResolveEdges(*data, from, to, edgeData, numDependencies, false, &edges, function)) {
      return error;
    }
    for (const auto& [source, target] : edges) {
      auto& deps = data->FindNode(target)->dependencies;
      deps.erase(std::find(deps.begin(), deps.end(), source));
    }
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphGetNodes(infinirtGraph_t graph, infinirtGraphNode_t* nodes,
                                      size_t* numNodes) {
  return Guard(__func__, [&](const char* function) {
    std::shared_ptr<GraphData> data;
    if (auto error = ResolveGraph(Runtime::Get(), graph, &data, function)) return error;
    if (numNodes == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: numNodes is NULL", function);
    std::lock_guard<std::recursive_mutex> lock(data->mutex());
    std::vector<infinirtGraphNode_t> all;
    for (const GraphNode& node : data->nodes()) all.push_back(NodeHandle(data->id(), node.id));
    WriteNodeList(all, nodes, nullptr, numNodes);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphGetRootNodes(infinirtGraph_t graph, infinirtGraphNode_t* pRootNodes,
                                          size_t* pNumRootNodes) {
  return Guard(__func__, [&](const char* function) {
    std::shared_ptr<GraphData> data;
    if (auto error = ResolveGraph(Runtime::Get(), graph, &data, function)) return error;
    if (pNumRootNodes == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pNumRootNodes is NULL", function);
    }
    std::lock_guard<std::recursive_mutex> lock(data->mutex());
    std::vector<infinirtGraphNode_t> roots;
    for (const GraphNode& node : data->nodes()) {
      if (node.dependencies.empty()) roots.push_back(NodeHandle(data->id(), node.id));
    }
    WriteNodeList(roots, pRootNodes, nullptr, pNumRootNodes);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphGetEdges(infinirtGraph_t graph, infinirtGraphNode_t* from,
                                      infinirtGraphNode_t* to, infinirtGraphEdgeData* edgeData,
                                      size_t* numEdges) {
  return Guard(__func__, [&](const char* function) {
    return ListEdges(graph, from, to, edgeData, numEdges, function);
  });
}

infinirtError_t infinirtGraphNodeGetType(infinirtGraphNode_t node,
                                         enum infinirtGraphNodeType* pType) {
  return Guard(__func__, [&](const char* function) {
    std::shared_ptr<GraphData> graph;
    uint32_t id = 0;
    if (auto error = ResolveNode(node, &graph, &id, function)) return error;
    if (pType == nullptr) return Fail(infinirtErrorInvalidValue, "{}: pType is NULL", function);
    std::lock_guard<std::recursive_mutex> lock(graph->mutex());
    *pType = graph->FindNode(id)->type();
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphNodeGetDependencies(infinirtGraphNode_t node,
                                                 infinirtGraphNode_t* pDependencies,
                                                 infinirtGraphEdgeData* edgeData,
                                                 size_t* pNumDependencies) {
  return Guard(__func__, [&](const char* function) {
    return ListNeighbours(node, pDependencies, edgeData, pNumDependencies, true, function);
  });
}

infinirtError_t infinirtGraphNodeGetDependentNodes(infinirtGraphNode_t node,
                                                   infinirtGraphNode_t* pDependentNodes,
                                                   infinirtGraphEdgeData* edgeData,
                                                   size_t* pNumDependentNodes) {
  return Guard(__func__, [&](const char* function) {
    return ListNeighbours(node, pDependentNodes, edgeData, pNumDependentNodes, false, function);
  });
}

infinirtError_t infinirtGraphClone(infinirtGraph_t* pGraphClone, infinirtGraph_t originalGraph) {
  return Guard(__func__, [&](const char* function) {
    if (pGraphClone == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pGraphClone is NULL", function);
    }
    Runtime& runtime = Runtime::Get();
    std::shared_ptr<GraphData> original;
    if (auto error = ResolveGraph(runtime, originalGraph, &original, function)) return error;
    if (original->HasMemoryNodes()) {  // NVIDIA's runtime refuses it too
      return Fail(infinirtErrorNotSupported, "{}: a graph with memory nodes cannot be cloned",
                  function);
    }
    const uint64_t handle = PublishGraph(runtime, original->Clone());
    if (handle == 0) return Fail(infinirtErrorMemoryAllocation, "{}: too many graphs", function);
    *pGraphClone = reinterpret_cast<infinirtGraph_t>(static_cast<uintptr_t>(handle));
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphNodeFindInClone(infinirtGraphNode_t* pNode,
                                             infinirtGraphNode_t originalNode,
                                             infinirtGraph_t clonedGraph) {
  return Guard(__func__, [&](const char* function) {
    if (pNode == nullptr) return Fail(infinirtErrorInvalidValue, "{}: pNode is NULL", function);
    std::shared_ptr<GraphData> original;
    uint32_t id = 0;
    if (auto error = ResolveNode(originalNode, &original, &id, function)) return error;
    std::shared_ptr<GraphData> clone;
    if (auto error = ResolveGraph(Runtime::Get(), clonedGraph, &clone, function)) return error;
    if (clone->cloned_from() != original->id() || clone->FindNode(id) == nullptr) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: the graph is not a clone of the node's graph, or lost the node", function);
    }
    *pNode = NodeHandle(clone->id(), id);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphDestroyNode(infinirtGraphNode_t node) {
  return Guard(__func__, [&](const char* function) {
    std::shared_ptr<GraphData> graph;
    uint32_t id = 0;
    if (auto error = ResolveNode(node, &graph, &id, function)) return error;
    graph->Remove(id);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphHostNodeGetParams(infinirtGraphNode_t node,
                                               struct infinirtHostNodeParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    if (pNodeParams == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pNodeParams is NULL", function);
    }
    return WithNodeOfType(node, infinirtGraphNodeTypeHost, function,
                          [&](GraphData&, GraphNode& found) {
                            pNodeParams->fn = found.desc.params.host.fn;
                            pNodeParams->userData = found.desc.params.host.user_data;
                            return infinirtSuccess;
                          });
  });
}

infinirtError_t infinirtGraphHostNodeSetParams(infinirtGraphNode_t node,
                                               const struct infinirtHostNodeParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    return WithNodeOfType(node, infinirtGraphNodeTypeHost, function,
                          [&](GraphData&, GraphNode& found) {
                            GraphNode changed = found;
                            if (auto error = MakeHostNode(pNodeParams, &changed, function))
                              return error;
                            found.desc = changed.desc;
                            return infinirtSuccess;
                          });
  });
}

infinirtError_t infinirtGraphMemcpyNodeGetParams(infinirtGraphNode_t node,
                                                 struct infinirtMemcpy3DParms* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    if (pNodeParams == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pNodeParams is NULL", function);
    }
    return WithNodeOfType(
        node, infinirtGraphNodeTypeMemcpy, function, [&](GraphData&, GraphNode& found) {
          if (found.copy_3d) {
            *pNodeParams = found.copy_params;
            return infinirtSuccess;
          }
          const auto& copy = found.desc.params.copy;
          *pNodeParams = infinirtMemcpy3DParms{};
          pNodeParams->srcPtr =
              make_infinirtPitchedPtr(const_cast<void*>(copy.src), copy.count, copy.count, 1);
          pNodeParams->dstPtr = make_infinirtPitchedPtr(copy.dst, copy.count, copy.count, 1);
          pNodeParams->extent = make_infinirtExtent(copy.count, 1, 1);
          pNodeParams->kind = copy.kind;
          return infinirtSuccess;
        });
  });
}

infinirtError_t infinirtGraphMemcpyNodeSetParams1D(infinirtGraphNode_t node, void* dst,
                                                   const void* src, size_t count,
                                                   enum infinirtMemcpyKind kind) {
  return Guard(__func__, [&](const char* function) {
    return WithNodeOfType(
        node, infinirtGraphNodeTypeMemcpy, function, [&](GraphData& graph, GraphNode& found) {
          GraphNode changed = found;
          if (auto error =
                  MakeCopyNode(Runtime::Get(), graph, dst, src, count, kind, &changed, function)) {
            return error;
          }
          found = std::move(changed);
          return infinirtSuccess;
        });
  });
}

infinirtError_t infinirtGraphMemcpyNodeSetParams(infinirtGraphNode_t node,
                                                 const struct infinirtMemcpy3DParms* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    return WithNodeOfType(
        node, infinirtGraphNodeTypeMemcpy, function, [&](GraphData& graph, GraphNode& found) {
          GraphNode changed = found;
          if (auto error = MakeCopy3DNode(Runtime::Get(), graph, pNodeParams, &changed, function)) {
            return error;
          }
          found = std::move(changed);
          return infinirtSuccess;
        });
  });
}

infinirtError_t infinirtGraphMemsetNodeGetParams(infinirtGraphNode_t node,
                                                 struct infinirtMemsetParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    if (pNodeParams == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pNodeParams is NULL", function);
    }
    return WithNodeOfType(node, infinirtGraphNodeTypeMemset, function,
                          [&](GraphData&, GraphNode& found) {
                            *pNodeParams = found.memset_params();
                            return infinirtSuccess;
                          });
  });
}

infinirtError_t infinirtGraphMemsetNodeSetParams(infinirtGraphNode_t node,
                                                 const struct infinirtMemsetParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    return WithNodeOfType(
        node, infinirtGraphNodeTypeMemset, function, [&](GraphData& graph, GraphNode& found) {
          GraphNode changed = found;
          if (auto error = MakeSetNode(Runtime::Get(), graph, pNodeParams, &changed, function)) {
            return error;
          }
          found = std::move(changed);
          return infinirtSuccess;
        });
  });
}

infinirtError_t infinirtGraphEventRecordNodeGetEvent(infinirtGraphNode_t node,
                                                     infinirtEvent_t* event_out) {
  return Guard(__func__, [&](const char* function) {
    return GetEventOfNode(node, infinirtGraphNodeTypeEventRecord, event_out, function);
  });
}

infinirtError_t infinirtGraphEventWaitNodeGetEvent(infinirtGraphNode_t node,
                                                   infinirtEvent_t* event_out) {
  return Guard(__func__, [&](const char* function) {
    return GetEventOfNode(node, infinirtGraphNodeTypeWaitEvent, event_out, function);
  });
}

infinirtError_t infinirtGraphMemAllocNodeGetParams(infinirtGraphNode_t node,
                                                   struct infinirtMemAllocNodeParams* params_out) {
  return Guard(__func__, [&](const char* function) {
    if (params_out == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: params_out is NULL", function);
    }
    return WithNodeOfType(node, infinirtGraphNodeTypeMemAlloc, function,
                          [&](GraphData& graph, GraphNode& found) {
                            *params_out = infinirtMemAllocNodeParams{};
                            params_out->poolProps.allocType = infinirtMemAllocationTypePinned;
                            params_out->poolProps.location.type = infinirtMemLocationTypeDevice;
                            params_out->poolProps.location.id = graph.device();
                            params_out->bytesize = found.desc.params.memory.size;
                            params_out->dptr = found.desc.params.memory.ptr;
                            return infinirtSuccess;
                          });
  });
}

infinirtError_t infinirtGraphMemFreeNodeGetParams(infinirtGraphNode_t node, void* dptr_out) {
  return Guard(__func__, [&](const char* function) {
    if (dptr_out == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: dptr_out is NULL", function);
    return WithNodeOfType(node, infinirtGraphNodeTypeMemFree, function,
                          [&](GraphData&, GraphNode& found) {
                            *static_cast<void**>(dptr_out) = found.desc.params.memory.ptr;
                            return infinirtSuccess;
                          });
  });
}

infinirtError_t infinirtGraphDebugDotPrint(infinirtGraph_t graph, const char* path,
                                           unsigned int flags) {
  return Guard(__func__, [&](const char* function) {
    std::shared_ptr<GraphData> data;
    if (auto error = ResolveGraph(Runtime::Get(), graph, &data, function)) return error;
    if (path == nullptr) return Fail(infinirtErrorInvalidValue, "{}: path is NULL", function);
    // Unknown flag bits are ignored, as NVIDIA's runtime ignores them.
    if (flags & ~kKnownDotFlags) Log().debug("{}: ignoring unknown flags {:#x}", function, flags);
    const std::string dot = DotOf(*data, flags & kKnownDotFlags);
    std::FILE* file = std::fopen(path, "w");
    if (file == nullptr) {
      return Fail(infinirtErrorOperatingSystem, "{}: cannot open {}: {}", function, path,
                  std::strerror(errno));
    }
    const bool written = std::fwrite(dot.data(), 1, dot.size(), file) == dot.size();
    if (std::fclose(file) != 0 || !written) {
      return Fail(infinirtErrorOperatingSystem, "{}: cannot write {}", function, path);
    }
    return infinirtSuccess;
  });
}

}  // extern "C"
