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
#include <unordered_set>
#include <vector>

#include "infinirt_plugin.h"

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

struct GraphNode {
  infinirtPluginGraphNode desc{};      // kind and parameters (its dependency fields unused here)
  std::vector<uint32_t> dependencies;  // indices of earlier nodes
  std::shared_ptr<NativeFuncData> native;  // native-function nodes only

  infinirtPluginGraphNodeKind_t kind() const { return desc.kind; }
};

// A captured graph. It owns the memory of its allocation nodes (MallocAsync during capture),
// which lives as long as the graph or any exec made from it.
class GraphData {
 public:
  GraphData(Backend* backend, int backend_index, int device, int local_device,
            AllocationRegistry* registry);
  ~GraphData();  // releases the owned memory (unregistering it first)
  GraphData(const GraphData&) = delete;
  GraphData& operator=(const GraphData&) = delete;

  uint64_t id() const { return id_; }
  int backend_index() const { return backend_index_; }
  Backend& backend() const { return *backend_; }
  int device() const { return device_; }
  int local_device() const { return local_device_; }

  // Appends a node; returns its index.
  uint32_t Add(GraphNode node);
  // Appends the nodes of another graph, their roots depending on `dependencies`; returns the
  // index of an empty node that depends on all of them.
  uint32_t AddSubgraph(const GraphData& child, const std::vector<uint32_t>& dependencies);
  void AdoptAllocation(void* pointer) { owned_memory_.push_back(pointer); }

  const std::vector<GraphNode>& nodes() const { return nodes_; }
  bool HasMemoryNodes() const;
  bool HasNativeFuncNodes() const;
  // Memory allocated by the graph and not released by one of its own free nodes: live after
  // a launch until the program frees it (relaunching then is an error: docs/cuda-semantics.md S38).
  std::vector<void*> AllocationsLeftLive() const;

  // The node list in the plugin ABI's form; valid while this graph is unchanged.
  std::vector<infinirtPluginGraphNode> PluginNodes() const;

  // At most one exec may exist at a time for a graph with memory nodes (as CUDA).
  std::mutex& exec_mutex() { return exec_mutex_; }
  int live_execs = 0;

 private:
  const uint64_t id_;
  Backend* const backend_;
  const int backend_index_;
  const int device_;
  const int local_device_;
  AllocationRegistry* const registry_;
  std::vector<GraphNode> nodes_;
  std::vector<void*> owned_memory_;
  std::mutex exec_mutex_;
};

// What a graph handle's record points to.
struct GraphHolder {
  std::shared_ptr<GraphData> graph;
};

// An executable graph.
struct ExecData {
  std::shared_ptr<GraphData> graph;  // keeps the nodes and their memory alive
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
