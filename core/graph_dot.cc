// A graph in Graphviz's DOT language (infinirtGraphDebugDotPrint): one box per node, labelled
// with its type and, as the flags ask, its parameters; one arrow per dependency; a child graph
// as a cluster of its own nodes, entered from the child-graph node.
#include <spdlog/fmt/fmt.h>

#include <string>

#include "graph.h"

namespace infinirt::core {

namespace {

const char* TypeName(enum infinirtGraphNodeType type) {
  switch (type) {
    case infinirtGraphNodeTypeKernel:
      return "Kernel (native function)";
    case infinirtGraphNodeTypeMemcpy:
      return "Memcpy";
    case infinirtGraphNodeTypeMemset:
      return "Memset";
    case infinirtGraphNodeTypeHost:
      return "Host";
    case infinirtGraphNodeTypeGraph:
      return "Graph";
    case infinirtGraphNodeTypeWaitEvent:
      return "WaitEvent";
    case infinirtGraphNodeTypeEventRecord:
      return "EventRecord";
    case infinirtGraphNodeTypeMemAlloc:
      return "MemAlloc";
    case infinirtGraphNodeTypeMemFree:
      return "MemFree";
    default:
      return "Empty";
  }
}

bool Wants(unsigned int flags, unsigned int flag) {
  return (flags & (infinirtGraphDebugDotFlagsVerbose | flag)) != 0;
}

// The parameter lines of a node's label, as the flags ask.
std::string Details(const GraphNode& node, unsigned int flags) {
  const auto& p = node.desc.params;
  switch (node.type()) {
    case infinirtGraphNodeTypeMemcpy:
      if (!Wants(flags, infinirtGraphDebugDotFlagsMemcpyNodeParams)) return "";
      return fmt::format("\\ndst {} src {}\\ncount {} kind {}", p.copy.dst, p.copy.src,
                         p.copy.count, static_cast<int>(p.copy.kind));
    case infinirtGraphNodeTypeMemset: {
      if (!Wants(flags, infinirtGraphDebugDotFlagsMemsetNodeParams)) return "";
      const infinirtMemsetParams set = node.memset_params();
      return fmt::format("\\ndst {} value {:#x}\\nelementSize {} width {} height {} pitch {}",
                         set.dst, set.value, set.elementSize, set.width, set.height, set.pitch);
    }
    case infinirtGraphNodeTypeHost:
      if (!Wants(flags, infinirtGraphDebugDotFlagsHostNodeParams)) return "";
      return fmt::format("\\nfn {} userData {}", reinterpret_cast<void*>(p.host.fn),
                         p.host.user_data);
    case infinirtGraphNodeTypeWaitEvent:
    case infinirtGraphNodeTypeEventRecord:
      if (!Wants(flags, infinirtGraphDebugDotFlagsEventNodeParams)) return "";
      return fmt::format("\\nevent {:#x}", node.event);
    case infinirtGraphNodeTypeMemAlloc:
    case infinirtGraphNodeTypeMemFree:
      if (!(flags & infinirtGraphDebugDotFlagsVerbose)) return "";
      return fmt::format("\\nptr {} bytesize {}", p.memory.ptr, p.memory.size);
    default:
      return "";
  }
}

void AppendGraph(const GraphData& graph, const std::string& prefix, unsigned int flags,
                 std::string* dot) {
  for (const GraphNode& node : graph.nodes()) {
    const std::string name = fmt::format("{}n{}", prefix, node.id);
    std::string label = fmt::format("{}: {}", node.id, TypeName(node.type()));
    label += Details(node, flags);
    if (flags & (infinirtGraphDebugDotFlagsVerbose | infinirtGraphDebugDotFlagsHandles)) {
      label += fmt::format("\\nhandle {}", static_cast<void*>(NodeHandle(graph.id(), node.id)));
    }
    *dot += fmt::format("  \"{}\" [label=\"{}\"];\n", name, label);
    for (uint32_t dependency : node.dependencies) {
      *dot += fmt::format("  \"{}n{}\" -> \"{}\";\n", prefix, dependency, name);
    }
    if (!node.child) continue;
    const std::string inner = name + "_";
    *dot += fmt::format("  subgraph \"cluster_{}\" {{\n  label=\"child graph of node {}\";\n", name,
                        node.id);
    AppendGraph(*node.child, inner, flags, dot);
    *dot += "  }\n";
    for (const GraphNode& child_node : node.child->nodes()) {
      if (child_node.dependencies.empty()) {
        *dot += fmt::format("  \"{}\" -> \"{}n{}\" [style=dashed];\n", name, inner, child_node.id);
      }
    }
  }
}

}  // namespace

std::string DotOf(const GraphData& graph, unsigned int flags) {
  std::lock_guard<std::recursive_mutex> lock(graph.mutex());
  std::string dot =
      fmt::format("digraph \"infinirt_graph_{}\" {{\n  node [shape=box];\n", graph.id());
  AppendGraph(graph, "", flags, &dot);
  dot += "}\n";
  return dot;
}

}  // namespace infinirt::core
