// The public C API for a graph's structure: dependencies added and removed, its nodes, roots and
// edges listed, a node's type and neighbours, clones, nodes destroyed, and the DOT printout.
// Nodes are made in api_graph_nodes.cc.
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

}  // namespace

extern "C" {

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
