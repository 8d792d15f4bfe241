#include "graph.h"

#include <algorithm>
#include <atomic>

#include "allocation_registry.h"
#include "backend.h"

namespace infinirt::core {

namespace {
std::atomic<uint64_t> g_graph_ids{0};
}  // namespace

GraphData::GraphData(Backend* backend, int backend_index, int device, int local_device,
                     AllocationRegistry* registry)
    : id_(++g_graph_ids),
      backend_(backend),
      backend_index_(backend_index),
      device_(device),
      local_device_(local_device),
      registry_(registry) {}

GraphData::~GraphData() {
  for (void* pointer : owned_memory_) {
    registry_->RemoveExact(reinterpret_cast<uintptr_t>(pointer), [](const Allocation& allocation) {
      return allocation.kind == MemoryKind::kGraph;
    });
    backend_->table.Free(local_device_, pointer);
  }
}

uint32_t GraphData::Add(GraphNode node) {
  nodes_.push_back(std::move(node));
  return static_cast<uint32_t>(nodes_.size() - 1);
}

uint32_t GraphData::AddSubgraph(const GraphData& child, const std::vector<uint32_t>& dependencies) {
  const uint32_t offset = static_cast<uint32_t>(nodes_.size());
  std::vector<bool> has_dependent(child.nodes_.size(), false);
  for (const GraphNode& node : child.nodes_) {
    GraphNode copy = node;
    if (copy.dependencies.empty()) {
      copy.dependencies = dependencies;
    } else {
      for (uint32_t& dependency : copy.dependencies) {
        has_dependent[dependency] = true;
        dependency += offset;
      }
    }
    nodes_.push_back(std::move(copy));
  }
  GraphNode join;
  for (uint32_t i = 0; i < child.nodes_.size(); ++i) {
    if (!has_dependent[i]) join.dependencies.push_back(offset + i);
  }
  if (child.nodes_.empty()) join.dependencies = dependencies;
  return Add(std::move(join));
}

bool GraphData::HasMemoryNodes() const {
  return std::any_of(nodes_.begin(), nodes_.end(), [](const GraphNode& node) {
    return node.kind() == INFINIRT_GRAPH_NODE_MEM_ALLOC ||
           node.kind() == INFINIRT_GRAPH_NODE_MEM_FREE;
  });
}

bool GraphData::HasNativeFuncNodes() const {
  return std::any_of(nodes_.begin(), nodes_.end(), [](const GraphNode& node) {
    return node.kind() == INFINIRT_GRAPH_NODE_NATIVE;
  });
}

std::vector<void*> GraphData::AllocationsLeftLive() const {
  std::vector<void*> live;
  for (const GraphNode& node : nodes_) {
    if (node.kind() == INFINIRT_GRAPH_NODE_MEM_ALLOC) live.push_back(node.desc.params.memory.ptr);
  }
  for (const GraphNode& node : nodes_) {
    if (node.kind() != INFINIRT_GRAPH_NODE_MEM_FREE) continue;
    live.erase(std::remove(live.begin(), live.end(), node.desc.params.memory.ptr), live.end());
  }
  return live;
}

std::vector<infinirtPluginGraphNode> GraphData::PluginNodes() const {
  std::vector<infinirtPluginGraphNode> nodes;
  nodes.reserve(nodes_.size());
  for (const GraphNode& node : nodes_) {
    infinirtPluginGraphNode plugin_node = node.desc;
    plugin_node.dependencies = node.dependencies.data();
    plugin_node.dependency_count = node.dependencies.size();
    nodes.push_back(plugin_node);
  }
  return nodes;
}

bool GraphMemory::Release(void* pointer) {
  std::lock_guard<std::mutex> lock(mutex_);
  return live_.erase(pointer) > 0;
}

bool GraphMemory::AnyLive(const std::vector<void*>& pointers) {
  std::lock_guard<std::mutex> lock(mutex_);
  return std::any_of(pointers.begin(), pointers.end(),
                     [&](void* pointer) { return live_.count(pointer) > 0; });
}

void GraphMemory::MarkLive(const std::vector<void*>& pointers) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.insert(pointers.begin(), pointers.end());
}

void GraphMemory::Release(const std::vector<void*>& pointers) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (void* pointer : pointers) live_.erase(pointer);
}

}  // namespace infinirt::core
