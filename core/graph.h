// Graphs and executable graphs are core objects: stream capture happens in the core, for every
// backend alike, and records the captured work here. A plugin instantiates the node list
// natively (GraphInstantiate) or the core replays the nodes through the plugin's asynchronous
// entries at each launch.
#ifndef INFINIRT_CORE_GRAPH_H_
#define INFINIRT_CORE_GRAPH_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>
#include <unordered_set>
#include <vector>

#include "infinirt.h"
#include "infinirt_plugin.h"
#include "user_objects.h"

namespace infinirt::core {

struct Backend;
class AllocationRegistry;

// The data of a native-function node (infinirtLaunchNativeFunc), shared by the graphs holding the
// node (a child graph launched into a capture is copied into it). It is released, by the caller's
// function, with the last of them, once armed: the recording call arms it only on success, so that
// on failure the caller still owns the data.
class NativeFuncData {
 public:
  NativeFuncData(void* user_data, infinirtNativeReleaseFn_t release)
      : user_data_(user_data), release_(release) {}
  ~NativeFuncData() {
    if (armed_.load(std::memory_order_acquire) && release_ != nullptr) release_(user_data_);
  }
  NativeFuncData(const NativeFuncData&) = delete;
  NativeFuncData& operator=(const NativeFuncData&) = delete;
  void Arm() { armed_.store(true, std::memory_order_release); }

 private:
  void* const user_data_;
  const infinirtNativeReleaseFn_t release_;
  std::atomic<bool> armed_{false};
};

// Memory that a graph's allocation nodes made (MallocAsync during capture,
// infinirtGraphAddMemAllocNode). Its addresses are fixed when the node is made, so a graph, its
// clones and the execs made from any of them share it; the last of them to go releases it. As in
// CUDA, at most one exec may exist at a time for graphs sharing memory nodes.
class GraphAllocations {
 public:
  GraphAllocations(Backend* backend, int local_device, AllocationRegistry* registry, uint64_t owner)
      : backend_(backend), local_device_(local_device), registry_(registry), owner_(owner) {}
  ~GraphAllocations();  // unregisters and frees the memory
  GraphAllocations(const GraphAllocations&) = delete;
  GraphAllocations& operator=(const GraphAllocations&) = delete;

  // The owner recorded with each allocation in the registry (the id of the graph that made it).
  uint64_t owner() const { return owner_; }
  void Adopt(void* pointer);

  std::mutex& exec_mutex() { return exec_mutex_; }
  int live_execs = 0;

 private:
  Backend* const backend_;
  const int local_device_;
  AllocationRegistry* const registry_;
  const uint64_t owner_;
  std::mutex mutex_;
  std::vector<void*> memory_;
  std::mutex exec_mutex_;
};

class GraphData;

// One row of a copy: a one-dimensional copy.
struct CopyRow {
  void* dst;
  const void* src;
  size_t count;
};

struct GraphNode {
  uint32_t id = 0;                     // stable within its graph (and kept by clones)
  infinirtPluginGraphNode desc{};      // kind and parameters (its dependency fields unused here)
  std::vector<uint32_t> dependencies;  // ids of nodes of the same graph
  std::shared_ptr<NativeFuncData> native;  // native-function nodes only
  std::shared_ptr<const GraphData> child;  // child-graph nodes: a copy of the child graph
  uint64_t event = 0;                      // event nodes: the event's handle
  // Memset nodes: the shape asked for; rows that are not contiguous become one plugin node each
  // when the graph is instantiated. desc.params.set holds the first row.
  size_t memset_pitch = 0;        // from a row to the next (a row's bytes for one row)
  size_t memset_given_pitch = 0;  // as the program gave it, reported back as it was
  size_t memset_height = 1;
  unsigned int memset_element_size = 1;
  unsigned int memset_value = 0;  // as given, for elements wider than a byte
  // The element's bytes differ: plugins get it as INFINIRT_GRAPH_NODE_MEMSET_ELEMENTS (of
  // memset_value), not as a memset of bytes.
  bool memset_elements = false;
  // Copy nodes made from 3-D parameters (infinirtGraphAddMemcpyNode): the parameters as given
  // (the kind resolved), and where the rows are not one contiguous copy, each row's copy (one
  // plugin node each when the graph is instantiated). desc.params.copy holds the first row.
  bool copy_3d = false;
  infinirtMemcpy3DParms copy_params{};
  std::vector<CopyRow> copy_rows;

  infinirtPluginGraphNodeKind_t kind() const { return desc.kind; }
  enum infinirtGraphNodeType type() const;
  // A memset node's parameters as the program gives them (infinirtGraphMemsetNodeGetParams).
  infinirtMemsetParams memset_params() const;
};

// The copy and memset nodes that capture and the node API both make.
void DescribeCopy(GraphNode* node, void* dst, const void* src, size_t count,
                  enum infinirtMemcpyKind kind);
void DescribeSet(GraphNode* node, void* pointer, int value, size_t count);

// Node handles name a graph (by its id) and one of its nodes (by the node's id).
infinirtGraphNode_t NodeHandle(uint64_t graph_id, uint32_t node_id);
// Splits a node handle; false when the value is not one.
bool SplitNodeHandle(infinirtGraphNode_t handle, uint64_t* graph_id, uint32_t* node_id);

// A graph: captured, built node by node, or both. Nodes keep the order they were added in;
// dependencies may point either way (infinirtGraphAddDependencies), and Flatten puts them in
// an executable order. Every method locks the graph (recursively, since node makers run while
// a caller holds it).
class GraphData : public std::enable_shared_from_this<GraphData> {
 public:
  GraphData(Backend* backend, int backend_index, int device, int local_device,
            AllocationRegistry* registry);
  ~GraphData();
  GraphData(const GraphData&) = delete;
  GraphData& operator=(const GraphData&) = delete;

  // A live graph by its id (the part a node handle carries); null when it is gone.
  static std::shared_ptr<GraphData> Find(uint64_t id);

  uint64_t id() const { return id_; }
  int backend_index() const { return backend_index_; }
  Backend& backend() const { return *backend_; }
  int device() const { return device_; }
  int local_device() const { return local_device_; }
  GraphAllocations& allocations() const { return *allocations_; }
  std::recursive_mutex& mutex() const { return mutex_; }
  // The user objects the graph holds references to (infinirtGraphRetainUserObject); copies of
  // the graph (clones, child-graph nodes, execs' copies) hold references of their own. Changed
  // with mutex() held.
  UserObjectRefs& user_objects() { return user_objects_; }
  // The id of the graph this one is a clone of; 0 for an original.
  uint64_t cloned_from() const { return cloned_from_; }

  // Appends a node, giving it the next id; returns the id.
  uint32_t Add(GraphNode node);
  // The node with this id, or null. Valid until the graph changes.
  GraphNode* FindNode(uint32_t id);
  const GraphNode* FindNode(uint32_t id) const;
  // Removes a node and every edge to and from it.
  void Remove(uint32_t id);
  // A copy with the same nodes and node ids, sharing the allocations.
  std::shared_ptr<GraphData> Clone() const;
  // What an exec runs: a copy whose nodes come in an order where each follows its dependencies,
  // child graphs inlined and memsets split into rows, node ids equal to positions. Fails with
  // InvalidValue when the dependencies form a cycle.
  // *spans, when given, receives where each node of this graph went in the copy.
  struct FlatSpan {
    uint32_t first;  // its first node in the copy
    uint32_t last;   // the node standing for its completion
  };
  using FlatSpans = std::unordered_map<uint32_t, FlatSpan>;
  infinirtError_t Flatten(std::shared_ptr<GraphData>* flat, FlatSpans* spans = nullptr) const;
  // For changing a copy (Clone) of a flattened graph before it replaces an exec's.
  std::vector<GraphNode>& mutable_nodes() { return nodes_; }

  const std::vector<GraphNode>& nodes() const { return nodes_; }
  size_t node_count() const {
    std::lock_guard<std::recursive_mutex> lock(mutex_);
    return nodes_.size();
  }
  bool HasMemoryNodes() const;
  // Memory allocated by the graph and not released by one of its own free nodes: live after
  // a launch until the program frees it (relaunching then is an error: docs/cuda-semantics.md S38).
  std::vector<void*> AllocationsLeftLive() const;

  // The node list in the plugin ABI's form, for a flattened graph; valid while it is unchanged.
  std::vector<infinirtPluginGraphNode> PluginNodes() const;

 private:
  struct CloneOf {
    const GraphData* source;
  };
  explicit GraphData(CloneOf clone);
  // Appends the nodes of node (a child graph inlined from its flattened form flat_child, a memset
  // split) to *flat, depending on `dependencies`; returns the position that stands for node's
  // completion.
  uint32_t AppendFlattened(const GraphNode& node, const GraphData* flat_child,
                           const std::vector<uint32_t>& dependencies,
                           std::vector<GraphNode>* flat) const;
  bool TopologicalOrder(std::vector<size_t>* order) const;

  const uint64_t id_;
  Backend* const backend_;
  const int backend_index_;
  const int device_;
  const int local_device_;
  std::shared_ptr<GraphAllocations> allocations_;
  const uint64_t cloned_from_ = 0;
  mutable std::recursive_mutex mutex_;
  std::vector<GraphNode> nodes_;  // in increasing id order
  UserObjectRefs user_objects_;
  uint32_t next_node_id_ = 0;
};

// The graph in Graphviz's DOT language, with the details infinirtGraphDebugDotFlags ask for.
std::string DotOf(const GraphData& graph, unsigned int flags);

// What a graph handle's record points to.
struct GraphHolder {
  std::shared_ptr<GraphData> graph;
};

// An executable graph.
struct ExecData {
  std::shared_ptr<GraphData> graph;  // a flattened copy; keeps its memory alive
  // Event nodes' events, checked at each launch: a destroyed event fails the launch instead of
  // reaching the plugin.
  std::vector<std::pair<uint64_t, void*>> events;
  uint64_t source_graph = 0;   // the graph instantiated (its id), for the exec's node updates
  GraphData::FlatSpans spans;  // where that graph's nodes are in `graph`
  // The stream of the latest launch: a replaced plugin exec (GraphExecUpdate) is ordered after
  // it, and the exec's user objects are released after it.
  void* last_stream = nullptr;
  uint64_t last_stream_handle = 0;  // 0 for the default streams
  bool last_stream_per_thread = false;
  bool launched_native = false;
  bool wait_order_event = false;  // native: the next launch first waits for order_event
  // References to the graph's user objects, released once the exec is destroyed and its
  // launches are done.
  UserObjectRefs user_objects;
  unsigned long long flags = 0;
  void* plugin_exec = nullptr;  // native: the plugin's exec
  void* order_event = nullptr;  // replayed: a plugin event recorded after every launch
  bool launched = false;        // replayed: order_event holds the previous launch
  std::mutex mutex;             // serialises launches of this exec

  bool native() const { return plugin_exec != nullptr; }
};

// Which graph-owned memory is live: made live by a launch and not yet released, by a free node
// of the graph or by the program (infinirtFree / infinirtFreeAsync). Relaunching an exec while
// memory it allocates is still live is an error unless it was instantiated with
// infinirtGraphInstantiateFlagAutoFreeOnLaunch (S38 of docs/cuda-semantics.md).
class GraphMemory {
 public:
  bool Release(void* pointer);  // false when it was not live
  bool AnyLive(const std::vector<void*>& pointers);
  void MarkLive(const std::vector<void*>& pointers);
  void Release(const std::vector<void*>& pointers);

 private:
  std::mutex mutex_;
  std::unordered_set<void*> live_;
};

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_GRAPH_H_
