#include "graph.h"

#include <algorithm>
#include <atomic>
#include <functional>
#include <queue>
#include <unordered_map>

#include "allocation_registry.h"
#include "backend.h"

namespace infinirt::core {

namespace {

std::atomic<uint64_t> g_graph_ids{0};

// Node handles: a tag in the top bits, 28 bits of the graph's id, 32 bits of the node's id.
constexpr uint64_t kNodeHandleTag = uint64_t{0xB} << 60;
constexpr uint64_t kGraphIdBits = 0xFFFFFFF;

// Live graphs by the part of their id a node handle carries.
struct GraphDirectory {
  std::mutex mutex;
  std::unordered_map<uint64_t, GraphData*> graphs;
};

GraphDirectory& Directory() {
  static auto* directory = new GraphDirectory;  // never destroyed: graphs may outlive statics
  return *directory;
}

void Enlist(uint64_t id, GraphData* graph) {
  std::lock_guard<std::mutex> lock(Directory().mutex);
  Directory().graphs[id & kGraphIdBits] = graph;
}

void Delist(uint64_t id, GraphData* graph) {
  std::lock_guard<std::mutex> lock(Directory().mutex);
  auto found = Directory().graphs.find(id & kGraphIdBits);
  if (found != Directory().graphs.end() && found->second == graph) Directory().graphs.erase(found);
}

bool Contiguous(const GraphNode& node) {
  return node.memset_height <= 1 || node.memset_pitch == node.desc.params.set.count;
}

}  // namespace

enum infinirtGraphNodeType GraphNode::type() const {
  if (child) return infinirtGraphNodeTypeGraph;
  switch (desc.kind) {
    case INFINIRT_GRAPH_NODE_MEMCPY:
      return infinirtGraphNodeTypeMemcpy;
    case INFINIRT_GRAPH_NODE_MEMSET:
      return infinirtGraphNodeTypeMemset;
    case INFINIRT_GRAPH_NODE_HOST:
      return infinirtGraphNodeTypeHost;
    case INFINIRT_GRAPH_NODE_MEM_ALLOC:
      return infinirtGraphNodeTypeMemAlloc;
    case INFINIRT_GRAPH_NODE_MEM_FREE:
      return infinirtGraphNodeTypeMemFree;
    case INFINIRT_GRAPH_NODE_EVENT_WAIT:
      return infinirtGraphNodeTypeWaitEvent;
    case INFINIRT_GRAPH_NODE_EVENT_RECORD:
      return infinirtGraphNodeTypeEventRecord;
    case INFINIRT_GRAPH_NODE_NATIVE:
      return infinirtGraphNodeTypeKernel;  // device work the program supplied
    default:
      return infinirtGraphNodeTypeEmpty;
  }
}

infinirtMemsetParams GraphNode::memset_params() const {
  const auto& set = desc.params.set;
  infinirtMemsetParams params{};
  params.dst = set.ptr;
  params.elementSize = memset_element_size;
  params.value =
      memset_element_size == 1 ? static_cast<unsigned int>(set.value) & 0xFFu : memset_value;
  params.width = set.count / memset_element_size;
  params.height = memset_height;
  params.pitch = memset_given_pitch;
  return params;
}

void DescribeCopy(GraphNode* node, void* dst, const void* src, size_t count,
                  enum infinirtMemcpyKind kind) {
  node->desc.kind = INFINIRT_GRAPH_NODE_MEMCPY;
  node->desc.params.copy.dst = dst;
  node->desc.params.copy.src = src;
  node->desc.params.copy.count = count;
  node->desc.params.copy.kind = kind;
}

void DescribeSet(GraphNode* node, void* pointer, int value, size_t count) {
  node->desc.kind = INFINIRT_GRAPH_NODE_MEMSET;
  node->desc.params.set.ptr = pointer;
  node->desc.params.set.value = value;
  node->desc.params.set.count = count;
}

infinirtGraphNode_t NodeHandle(uint64_t graph_id, uint32_t node_id) {
  const uint64_t value = kNodeHandleTag | ((graph_id & kGraphIdBits) << 32) | node_id;
  return reinterpret_cast<infinirtGraphNode_t>(static_cast<uintptr_t>(value));
}

bool SplitNodeHandle(infinirtGraphNode_t handle, uint64_t* graph_id, uint32_t* node_id) {
  const uint64_t value = reinterpret_cast<uintptr_t>(handle);
  if ((value & (uint64_t{0xF} << 60)) != kNodeHandleTag) return false;
  *graph_id = (value >> 32) & kGraphIdBits;
  *node_id = static_cast<uint32_t>(value);
  return true;
}

GraphAllocations::~GraphAllocations() {
  for (void* pointer : memory_) {
    registry_->RemoveExact(reinterpret_cast<uintptr_t>(pointer), [](const Allocation& allocation) {
      return allocation.kind == MemoryKind::kGraph;
    });
    backend_->table.Free(local_device_, pointer);
  }
}

void GraphAllocations::Adopt(void* pointer) {
  std::lock_guard<std::mutex> lock(mutex_);
  memory_.push_back(pointer);
}

GraphData::GraphData(Backend* backend, int backend_index, int device, int local_device,
                     AllocationRegistry* registry)
    : id_(++g_graph_ids),
      backend_(backend),
      backend_index_(backend_index),
      device_(device),
      local_device_(local_device),
      allocations_(std::make_shared<GraphAllocations>(backend, local_device, registry, id_)) {
  Enlist(id_, this);
}

GraphData::GraphData(CloneOf clone)
    : id_(++g_graph_ids),
      backend_(clone.source->backend_),
      backend_index_(clone.source->backend_index_),
      device_(clone.source->device_),
      local_device_(clone.source->local_device_),
      allocations_(clone.source->allocations_),
      cloned_from_(clone.source->id_) {
  Enlist(id_, this);
}

GraphData::~GraphData() { Delist(id_, this); }

std::shared_ptr<GraphData> GraphData::Find(uint64_t id) {
  std::lock_guard<std::mutex> lock(Directory().mutex);
  auto found = Directory().graphs.find(id & kGraphIdBits);
  if (found == Directory().graphs.end()) return nullptr;
  return found->second->weak_from_this().lock();  // empty while it is being destroyed
}

uint32_t GraphData::Add(GraphNode node) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  // A capture's current nodes may have been removed by the program meanwhile.
  auto& deps = node.dependencies;
  deps.erase(std::remove_if(deps.begin(), deps.end(),
                            [this](uint32_t id) { return FindNode(id) == nullptr; }),
             deps.end());
  node.id = next_node_id_++;
  nodes_.push_back(std::move(node));
  return nodes_.back().id;
}

GraphNode* GraphData::FindNode(uint32_t id) {
  return const_cast<GraphNode*>(static_cast<const GraphData*>(this)->FindNode(id));
}

const GraphNode* GraphData::FindNode(uint32_t id) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  // Ids increase along the list; without removals a node's id is its position.
  if (id < nodes_.size() && nodes_[id].id == id) return &nodes_[id];
  auto found =
      std::lower_bound(nodes_.begin(), nodes_.end(), id,
                       [](const GraphNode& node, uint32_t wanted) { return node.id < wanted; });
  return found != nodes_.end() && found->id == id ? &*found : nullptr;
}

void GraphData::Remove(uint32_t id) {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  nodes_.erase(std::remove_if(nodes_.begin(), nodes_.end(),
                              [id](const GraphNode& node) { return node.id == id; }),
               nodes_.end());
  for (GraphNode& node : nodes_) {
    auto& deps = node.dependencies;
    deps.erase(std::remove(deps.begin(), deps.end(), id), deps.end());
  }
}

std::shared_ptr<GraphData> GraphData::Clone() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  std::shared_ptr<GraphData> copy(new GraphData(CloneOf{this}));
  copy->nodes_ = nodes_;
  copy->next_node_id_ = next_node_id_;
  UserObjectRefs references(user_objects_);
  copy->user_objects_.Take(&references);
  return copy;
}

// Kahn's algorithm, taking the earliest-added ready node first so that a graph whose edges all
// point backwards (every captured graph) keeps its order.
bool GraphData::TopologicalOrder(std::vector<size_t>* order) const {
  std::unordered_map<uint32_t, size_t> position;
  for (size_t i = 0; i < nodes_.size(); ++i) position[nodes_[i].id] = i;
  std::vector<size_t> waiting(nodes_.size());
  std::vector<std::vector<size_t>> dependents(nodes_.size());
  for (size_t i = 0; i < nodes_.size(); ++i) {
    waiting[i] = nodes_[i].dependencies.size();
    for (uint32_t dependency : nodes_[i].dependencies) {
      dependents[position.at(dependency)].push_back(i);
    }
  }
  std::priority_queue<size_t, std::vector<size_t>, std::greater<size_t>> ready;
  for (size_t i = 0; i < nodes_.size(); ++i) {
    if (waiting[i] == 0) ready.push(i);
  }
  order->clear();
  while (!ready.empty()) {
    const size_t next = ready.top();
    ready.pop();
    order->push_back(next);
    for (size_t dependent : dependents[next]) {
      if (--waiting[dependent] == 0) ready.push(dependent);
    }
  }
  return order->size() == nodes_.size();
}

uint32_t GraphData::AppendFlattened(const GraphNode& node, const GraphData* flat_child,
                                    const std::vector<uint32_t>& dependencies,
                                    std::vector<GraphNode>* flat) const {
  auto append = [flat](GraphNode copy) {
    copy.id = static_cast<uint32_t>(flat->size());
    flat->push_back(std::move(copy));
    return flat->back().id;
  };
  GraphNode join;  // an empty node standing for the completion of several
  if (flat_child) {
    const uint32_t offset = static_cast<uint32_t>(flat->size());
    std::vector<bool> has_dependent(flat_child->nodes_.size(), false);
    for (const GraphNode& inner : flat_child->nodes_) {
      GraphNode copy = inner;
      if (copy.dependencies.empty())
        copy.dependencies = dependencies;
      else {
        for (uint32_t& dependency : copy.dependencies) {
          has_dependent[dependency] = true;
          dependency += offset;
        }
      }
      append(std::move(copy));
    }
    for (uint32_t i = 0; i < has_dependent.size(); ++i) {
      if (!has_dependent[i]) join.dependencies.push_back(offset + i);
    }
    if (has_dependent.empty()) join.dependencies = dependencies;
    return append(std::move(join));
  }
  if (node.kind() == INFINIRT_GRAPH_NODE_MEMCPY && node.copy_rows.size() > 1) {
    for (const CopyRow& row : node.copy_rows) {
      GraphNode row_node;
      DescribeCopy(&row_node, row.dst, row.src, row.count, node.desc.params.copy.kind);
      row_node.dependencies = dependencies;
      join.dependencies.push_back(append(std::move(row_node)));
    }
    return append(std::move(join));
  }
  if (node.kind() == INFINIRT_GRAPH_NODE_MEMSET && !Contiguous(node)) {
    for (size_t row = 0; row < node.memset_height; ++row) {
      GraphNode row_node;
      row_node.desc = node.desc;
      row_node.memset_pitch = node.memset_pitch;
      row_node.memset_element_size = node.memset_element_size;
      row_node.memset_value = node.memset_value;
      row_node.memset_elements = node.memset_elements;
      row_node.desc.params.set.ptr =
          static_cast<char*>(node.desc.params.set.ptr) + row * node.memset_pitch;
      row_node.dependencies = dependencies;
      join.dependencies.push_back(append(std::move(row_node)));
    }
    return append(std::move(join));
  }
  GraphNode copy = node;
  copy.dependencies = dependencies;
  if (copy.kind() == INFINIRT_GRAPH_NODE_MEMSET) {
    copy.desc.params.set.count *= std::max<size_t>(1, node.memset_height);  // contiguous rows
    copy.memset_height = 1;
  }
  return append(std::move(copy));
}

infinirtError_t GraphData::Flatten(std::shared_ptr<GraphData>* flat, FlatSpans* spans) const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  std::vector<size_t> order;
  if (!TopologicalOrder(&order)) return infinirtErrorInvalidValue;
  std::shared_ptr<GraphData> result(new GraphData(CloneOf{this}));
  UserObjectRefs references(user_objects_);
  result->user_objects_.Take(&references);
  std::unordered_map<uint32_t, uint32_t> completion;  // node id -> flat position
  for (size_t index : order) {
    const GraphNode& node = nodes_[index];
    // A child graph node holds the child as it was copied; its own cycles show here.
    std::shared_ptr<GraphData> flat_child;
    if (node.child) {
      if (node.child->Flatten(&flat_child) != infinirtSuccess) return infinirtErrorInvalidValue;
      UserObjectRefs inner(flat_child->user_objects_);
      result->user_objects_.Take(&inner);
    }
    std::vector<uint32_t> dependencies;
    for (uint32_t dependency : node.dependencies) dependencies.push_back(completion.at(dependency));
    const auto first = static_cast<uint32_t>(result->nodes_.size());
    completion[node.id] = AppendFlattened(node, flat_child.get(), dependencies, &result->nodes_);
    if (spans) (*spans)[node.id] = FlatSpan{first, completion[node.id]};
  }
  result->next_node_id_ = static_cast<uint32_t>(result->nodes_.size());
  *flat = std::move(result);
  return infinirtSuccess;
}

bool GraphData::HasMemoryNodes() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  return std::any_of(nodes_.begin(), nodes_.end(), [](const GraphNode& node) {
    return node.kind() == INFINIRT_GRAPH_NODE_MEM_ALLOC ||
           node.kind() == INFINIRT_GRAPH_NODE_MEM_FREE;
  });
}

std::vector<void*> GraphData::AllocationsLeftLive() const {
  std::lock_guard<std::recursive_mutex> lock(mutex_);
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
  std::lock_guard<std::recursive_mutex> lock(mutex_);
  std::vector<infinirtPluginGraphNode> nodes;
  nodes.reserve(nodes_.size());
  for (const GraphNode& node : nodes_) {
    infinirtPluginGraphNode plugin_node = node.desc;
    if (node.kind() == INFINIRT_GRAPH_NODE_MEMSET && node.memset_elements) {
      const auto& set = node.desc.params.set;
      plugin_node.kind = INFINIRT_GRAPH_NODE_MEMSET_ELEMENTS;
      plugin_node.params.elements.ptr = set.ptr;
      plugin_node.params.elements.value = node.memset_value;
      plugin_node.params.elements.element_size = node.memset_element_size;
      plugin_node.params.elements.count = set.count / node.memset_element_size;
    }
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
