// Stream capture, implemented once in the core for every backend: while a stream captures, the
// work issued to it is recorded into a graph instead of reaching the plugin, with CUDA's rules
// (statements S29-S39 of docs/cuda-semantics.md):
//   - fork/join: a stream that waits on an event recorded in a capturing stream joins that
//     capture; EndCapture fails with StreamCaptureUnjoined if a joined stream's work is not
//     joined back into the origin stream;
//   - modes: an unsafe call (one that may synchronise implicitly or is not stream-ordered) is
//     refused with StreamCaptureUnsupported when the calling thread has a non-relaxed capture,
//     or (in the thread's Global mode) when any thread has a Global capture;
//   - prohibited operations (synchronising or querying a capturing stream or a captured event,
//     using the legacy stream while a blocking stream captures, cross-capture merges, waits on
//     uncaptured work) fail and invalidate the capture; EndCapture of an invalidated capture
//     returns StreamCaptureInvalidated and no graph.
// Every check starts with Active(), one atomic load, so programs that never capture pay nothing.
#ifndef INFINIRT_CORE_CAPTURE_H_
#define INFINIRT_CORE_CAPTURE_H_

#include <atomic>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <thread>
#include <unordered_map>
#include <vector>

#include "graph.h"
#include "infinirt.h"

namespace infinirt::core {

// A stream as capture sees it.
struct StreamRef {
  uint64_t handle = 0;      // a created stream's handle value; 0 for the default streams
  bool legacy = false;      // the legacy default stream (NULL or infinirtStreamLegacy)
  bool per_thread = false;  // the calling thread's per-thread default stream
  bool blocking = true;     // synchronises with the legacy stream
  int device = -1;          // flat ordinal
};

// What StreamGetCaptureInfo reports.
struct CaptureInfo {
  infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusNone;
  unsigned long long id = 0;
  std::shared_ptr<GraphData> graph;
  uint64_t graph_handle = 0;  // 0 when none was handed out yet
  const infinirtGraphNode_t* dependencies = nullptr;
  const infinirtGraphEdgeData* edge_data = nullptr;
  size_t dependency_count = 0;
};

class Captures {
 public:
  // Hot path: false when no capture exists anywhere in the process.
  bool Active() const { return active_.load(std::memory_order_acquire) > 0; }

  // Begins a capture into `graph`: a new one, or the program's (infinirtStreamBeginCaptureToGraph:
  // graph_handle is its handle, and the first captured node depends on `dependencies`).
  infinirtError_t Begin(const StreamRef& stream, infinirtStreamCaptureMode mode,
                        std::shared_ptr<GraphData> graph, uint64_t graph_handle = 0,
                        std::vector<uint32_t> dependencies = {});

  // infinirtStreamUpdateCaptureDependencies: the nodes the next node of a capturing stream
  // depends on become (replace) or gain those `resolve` gives, a callable that checks the
  // handles against the capture's graph (under the lock).
  using DependencyResolver =
      std::function<infinirtError_t(const GraphData& graph, std::vector<uint32_t>* nodes)>;
  infinirtError_t UpdateDependencies(const StreamRef& stream, const DependencyResolver& resolve,
                                     bool replace);

  struct Ended {
    std::shared_ptr<GraphData> graph;  // null unless the capture succeeded
    uint64_t graph_handle = 0;         // a handle handed out during the capture, if any
    bool programs_graph = false;       // graph_handle is the program's, to keep on failure
  };
  // Ends a capture begun on `stream`. Whatever the outcome, the capture is over unless the
  // error is IllegalState (not capturing) or StreamCaptureWrongThread.
  infinirtError_t End(const StreamRef& stream, Ended* ended);

  // Status of a stream, and the capture's details when it captures. Asking about the legacy
  // stream while a blocking stream captures answers StreamCaptureImplicit (not invalidating).
  // publish_graph is called (under the lock) to hand out a graph handle when none exists.
  infinirtError_t Query(
      const StreamRef& stream, CaptureInfo* info,
      const std::function<uint64_t(const std::shared_ptr<GraphData>&)>* publish_graph);

  // Records work issued to a stream. Returns false, doing nothing, when the stream takes part
  // in no capture; otherwise *error says how it went. make_node, any callable, fills the node
  // (it may fail, e.g. an allocation); it runs under the lock and only for a live capture, and
  // becomes a NodeMaker only when a capture exists, so that work outside capture allocates
  // nothing.
  using NodeMaker = std::function<infinirtError_t(GraphData& graph, GraphNode* node)>;
  template <class MakeNode>
  bool Record(const StreamRef& stream, MakeNode&& make_node, infinirtError_t* error) {
    if (!Active()) return false;
    return RecordInCapture(stream, NodeMaker(std::forward<MakeNode>(make_node)), error);
  }
  // Work that cannot be captured, issued to a stream: returns false when the stream takes part
  // in no capture; otherwise the capture is invalidated and *error is
  // StreamCaptureUnsupported (as CUDA answers for an operation a capture cannot hold).
  bool RefuseUncapturable(const StreamRef& stream, const char* what, infinirtError_t* error);
  // Records a launch of another graph into the capture, as a child-graph node (a graph with
  // memory nodes is refused).
  bool RecordSubgraph(const StreamRef& stream, std::shared_ptr<const GraphData> child,
                      infinirtError_t* error);

  // EventRecord on a capturing stream: the event now stands for the stream's position in the
  // capture. Returns false when the stream does not capture.
  bool RecordEvent(const StreamRef& stream, uint64_t event, infinirtError_t* error);
  // The event was recorded outside capture, or destroyed: it no longer stands for captured work.
  void ForgetEvent(uint64_t event);
  // StreamWaitEvent: joins or forks captures. Returns false when neither the stream nor the
  // event takes part in a capture.
  bool WaitEvent(const StreamRef& stream, uint64_t event, void* plugin_event, unsigned int flags,
                 infinirtError_t* error);

  // Checks for operations that capture restricts; each returns Success or the error (and
  // invalidates the captures concerned). The frequent ones are inline: with no capture they
  // cost one load.
  infinirtError_t CheckStreamUse(const StreamRef& stream, bool synchronizes) {
    return Active() ? CheckStreamUseInCapture(stream, synchronizes) : infinirtSuccess;
  }
  infinirtError_t CheckEventUse(uint64_t event, bool synchronizes) {
    return Active() ? CheckEventUseInCapture(event, synchronizes) : infinirtSuccess;
  }
  infinirtError_t CheckUnsafeCall() {
    return Active() ? CheckUnsafeCallInCapture() : infinirtSuccess;
  }
  infinirtError_t CheckDeviceSynchronize(int device);
  infinirtError_t CheckLegacyUse(int device) {
    return Active() ? CheckLegacyUseInCapture(device) : infinirtSuccess;
  }

  // A stream is destroyed: a capture it joined is invalidated; one it began is discarded.
  // Graph handles handed out for discarded captures are appended to *retired.
  void StreamDestroyed(const StreamRef& stream, std::vector<uint64_t>* retired);
  // Device reset and finalize: every capture on the device is discarded.
  void DiscardDevice(int device, std::vector<uint64_t>* retired);

  // The calling thread's capture mode (infinirtThreadExchangeStreamCaptureMode).
  static infinirtStreamCaptureMode ExchangeThreadMode(infinirtStreamCaptureMode mode);

 private:
  bool RecordInCapture(const StreamRef& stream, const NodeMaker& make_node, infinirtError_t* error);
  infinirtError_t CheckStreamUseInCapture(const StreamRef& stream, bool synchronizes);
  infinirtError_t CheckEventUseInCapture(uint64_t event, bool synchronizes);
  infinirtError_t CheckQueryLocked();
  infinirtError_t CheckUnsafeCallInCapture();
  infinirtError_t CheckLegacyUseInCapture(int device);
  struct Key {
    uint64_t handle = 0;
    std::thread::id thread;  // per-thread default streams only
    int device = -1;         // per-thread default streams only
    bool operator==(const Key& other) const {
      return handle == other.handle && thread == other.thread && device == other.device;
    }
  };
  struct KeyHash {
    size_t operator()(const Key& key) const;
  };
  struct Sequence {
    uint64_t id = 0;
    int device = -1;
    infinirtStreamCaptureMode mode = infinirtStreamCaptureModeGlobal;
    std::thread::id owner;
    Key origin;
    bool origin_blocking = true;
    bool invalidated = false;
    std::shared_ptr<GraphData> graph;
    uint64_t graph_handle = 0;
    bool programs_graph = false;  // the program's graph: its handle is never retired here
    // Members (origin and joined streams) and the nodes the next node of each depends on.
    std::unordered_map<Key, std::vector<uint32_t>, KeyHash> tails;
    std::unordered_map<Key, bool, KeyHash> blocking;  // whether each member is blocking
    // StreamGetCaptureInfo's arrays, per stream, valid until its next call on that stream.
    std::unordered_map<Key, std::vector<infinirtGraphNode_t>, KeyHash> info_nodes;
    std::unordered_map<Key, std::vector<infinirtGraphEdgeData>, KeyHash> info_edges;
  };
  struct CapturedEvent {
    std::shared_ptr<Sequence> sequence;
    std::vector<uint32_t> nodes;
  };

  static Key KeyOf(const StreamRef& stream);
  std::shared_ptr<Sequence> SequenceOfLocked(const Key& key) const;
  // Blocking captures on a device: what using its legacy stream conflicts with.
  std::vector<std::shared_ptr<Sequence>> BlockingCapturesLocked(int device) const;
  void InvalidateLocked(Sequence& sequence, const char* why);
  // Using the legacy stream while a blocking stream of the device captures: invalidates those
  // captures, sets *error (StreamCaptureImplicit) and returns true. False when nothing conflicts.
  bool LegacyConflictLocked(int device, const char* what, infinirtError_t* error);
  // Where work issued to a stream goes: kRun (no capture), kRefused (*error says why: a legacy
  // conflict or an invalidated capture) or kCapture (into *sequence).
  enum class Destination { kRun, kRefused, kCapture };
  Destination RouteLocked(const StreamRef& stream, const char* what,
                          std::shared_ptr<Sequence>* sequence, infinirtError_t* error);
  // Ends a capture. Its graph moves to *released, for the caller to drop after unlocking:
  // destroying a graph frees its memory, which may wait for the device, and host functions
  // running meanwhile may call into capture.
  void RemoveLocked(const std::shared_ptr<Sequence>& sequence,
                    std::vector<std::shared_ptr<GraphData>>* released);
  bool JoinedBackLocked(const Sequence& sequence) const;
  infinirtError_t CheckUnsafeCallLocked();

  std::atomic<int> active_{0};
  mutable std::mutex mutex_;
  std::vector<std::shared_ptr<Sequence>> sequences_;
  std::unordered_map<Key, std::shared_ptr<Sequence>, KeyHash> members_;
  std::unordered_map<uint64_t, CapturedEvent> events_;
  uint64_t next_id_ = 0;
};

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_CAPTURE_H_
