#include "capture.h"

#include <algorithm>
#include <unordered_set>

#include "log.h"

namespace infinirt::core {

namespace {

thread_local infinirtStreamCaptureMode tls_thread_mode = infinirtStreamCaptureModeGlobal;

void AppendUnique(std::vector<uint32_t>* into, const std::vector<uint32_t>& nodes) {
  for (uint32_t node : nodes) {
    if (std::find(into->begin(), into->end(), node) == into->end()) into->push_back(node);
  }
}

}  // namespace

size_t Captures::KeyHash::operator()(const Key& key) const {
  return std::hash<uint64_t>()(key.handle) ^ (std::hash<std::thread::id>()(key.thread) << 1) ^
         (static_cast<size_t>(key.device) << 7);
}

Captures::Key Captures::KeyOf(const StreamRef& stream) {
  Key key;
  if (stream.per_thread) {
    key.handle = 2;
    key.thread = std::this_thread::get_id();
    key.device = stream.device;
  } else {
    key.handle = stream.handle;
  }
  return key;
}

std::shared_ptr<Captures::Sequence> Captures::SequenceOfLocked(const Key& key) const {
  auto it = members_.find(key);
  return it == members_.end() ? nullptr : it->second;
}

std::vector<std::shared_ptr<Captures::Sequence>> Captures::BlockingCapturesLocked(
    int device) const {
  std::vector<std::shared_ptr<Sequence>> found;
  for (const auto& sequence : sequences_) {
    if (sequence->device != device) continue;
    const bool any_blocking = std::any_of(sequence->blocking.begin(), sequence->blocking.end(),
                                          [](const auto& member) { return member.second; });
    if (any_blocking) found.push_back(sequence);
  }
  return found;
}

void Captures::InvalidateLocked(Sequence& sequence, const char* why) {
  if (!sequence.invalidated) {
    Log().debug("capture {}: invalidated ({})", sequence.id, why);
  }
  sequence.invalidated = true;
}

bool Captures::LegacyConflictLocked(int device, const char* what, infinirtError_t* error) {
  auto conflicting = BlockingCapturesLocked(device);
  if (conflicting.empty()) return false;
  for (auto& sequence : conflicting) InvalidateLocked(*sequence, "legacy stream used");
  *error = Fail(infinirtErrorStreamCaptureImplicit,
                "{} uses the legacy stream while a blocking stream of the device captures", what);
  return true;
}

Captures::Destination Captures::RouteLocked(const StreamRef& stream, const char* what,
                                            std::shared_ptr<Sequence>* sequence,
                                            infinirtError_t* error) {
  if (stream.legacy) {
    return LegacyConflictLocked(stream.device, what, error) ? Destination::kRefused
                                                            : Destination::kRun;
  }
  *sequence = SequenceOfLocked(KeyOf(stream));
  if (!*sequence) return Destination::kRun;
  if ((*sequence)->invalidated) {
    *error = Fail(infinirtErrorStreamCaptureInvalidated,
                  "{}: capture {} was invalidated; end it with infinirtStreamEndCapture", what,
                  (*sequence)->id);
    return Destination::kRefused;
  }
  return Destination::kCapture;
}

void Captures::RemoveLocked(const std::shared_ptr<Sequence>& sequence,
                            std::vector<std::shared_ptr<GraphData>>* released) {
  released->push_back(std::move(sequence->graph));
  for (const auto& member : sequence->tails) members_.erase(member.first);
  for (auto it = events_.begin(); it != events_.end();) {
    it = it->second.sequence == sequence ? events_.erase(it) : std::next(it);
  }
  sequences_.erase(std::remove(sequences_.begin(), sequences_.end(), sequence), sequences_.end());
  active_.fetch_sub(1, std::memory_order_acq_rel);
}

infinirtError_t Captures::Begin(const StreamRef& stream, infinirtStreamCaptureMode mode,
                                std::shared_ptr<GraphData> graph, uint64_t graph_handle,
                                std::vector<uint32_t> dependencies) {
  if (stream.legacy) {
    return Fail(infinirtErrorStreamCaptureUnsupported,
                "infinirtStreamBeginCapture: the legacy default stream cannot capture");
  }
  std::lock_guard<std::mutex> lock(mutex_);
  const Key key = KeyOf(stream);
  if (SequenceOfLocked(key)) {
    return Fail(infinirtErrorIllegalState,
                "infinirtStreamBeginCapture: the stream already takes part in a capture");
  }
  auto sequence = std::make_shared<Sequence>();
  sequence->id = ++next_id_;
  sequence->device = stream.device;
  sequence->mode = mode;
  sequence->owner = std::this_thread::get_id();
  sequence->origin = key;
  sequence->origin_blocking = stream.blocking;
  sequence->graph = std::move(graph);
  sequence->graph_handle = graph_handle;
  sequence->programs_graph = graph_handle != 0;
  sequence->tails[key] = std::move(dependencies);
  sequence->blocking[key] = stream.blocking;
  members_[key] = sequence;
  sequences_.push_back(sequence);
  active_.fetch_add(1, std::memory_order_acq_rel);
  return infinirtSuccess;
}

bool Captures::JoinedBackLocked(const Sequence& sequence) const {
  // Every member's last nodes must be ancestors of (or among) the origin's last nodes. Nodes
  // are named by id: the program may have removed some from its own graph meanwhile.
  const GraphData& graph = *sequence.graph;
  std::lock_guard<std::recursive_mutex> graph_lock(graph.mutex());
  std::unordered_set<uint32_t> reached;
  std::vector<uint32_t> pending = sequence.tails.at(sequence.origin);
  while (!pending.empty()) {
    const uint32_t node = pending.back();
    pending.pop_back();
    const GraphNode* found = graph.FindNode(node);
    if (found == nullptr || !reached.insert(node).second) continue;
    for (uint32_t dependency : found->dependencies) pending.push_back(dependency);
  }
  for (const auto& [member, tail] : sequence.tails) {
    for (uint32_t node : tail) {
      if (reached.count(node) == 0 && graph.FindNode(node) != nullptr) return false;
    }
  }
  return true;
}

infinirtError_t Captures::End(const StreamRef& stream, Ended* ended) {
  std::vector<std::shared_ptr<GraphData>> released;  // dropped after the lock
  std::lock_guard<std::mutex> lock(mutex_);
  const Key key = KeyOf(stream);
  std::shared_ptr<Sequence> sequence = stream.legacy ? nullptr : SequenceOfLocked(key);
  if (!sequence) {
    return Fail(infinirtErrorIllegalState, "infinirtStreamEndCapture: the stream is not capturing");
  }
  if (!(sequence->origin == key)) {
    InvalidateLocked(*sequence, "EndCapture on a joined stream");
    return Fail(infinirtErrorStreamCaptureUnmatched,
                "infinirtStreamEndCapture: the capture was begun in another stream");
  }
  if (sequence->mode != infinirtStreamCaptureModeRelaxed &&
      sequence->owner != std::this_thread::get_id()) {
    return Fail(infinirtErrorStreamCaptureWrongThread,
                "infinirtStreamEndCapture: a non-relaxed capture must be ended by the thread "
                "that began it");
  }
  ended->graph_handle = sequence->graph_handle;
  ended->programs_graph = sequence->programs_graph;
  const bool invalidated = sequence->invalidated;
  const bool joined = invalidated || JoinedBackLocked(*sequence);
  RemoveLocked(sequence, &released);
  if (invalidated) {
    return Fail(infinirtErrorStreamCaptureInvalidated,
                "infinirtStreamEndCapture: the capture was invalidated by an earlier error");
  }
  if (!joined) {
    return Fail(infinirtErrorStreamCaptureUnjoined,
                "infinirtStreamEndCapture: a stream forked into the capture was not joined back");
  }
  ended->graph = std::move(released.back());
  return infinirtSuccess;
}

infinirtError_t Captures::Query(
    const StreamRef& stream, CaptureInfo* info,
    const std::function<uint64_t(const std::shared_ptr<GraphData>&)>* publish_graph) {
  *info = CaptureInfo{};
  if (!Active()) return infinirtSuccess;
  std::lock_guard<std::mutex> lock(mutex_);
  if (stream.legacy) {
    if (!BlockingCapturesLocked(stream.device).empty()) {
      return Fail(infinirtErrorStreamCaptureImplicit,
                  "a blocking stream captures: the legacy stream cannot be used");
    }
    return infinirtSuccess;
  }
  const Key key = KeyOf(stream);
  auto sequence = SequenceOfLocked(key);
  if (!sequence) return infinirtSuccess;
  info->status = sequence->invalidated ? infinirtStreamCaptureStatusInvalidated
                                       : infinirtStreamCaptureStatusActive;
  info->id = sequence->id;
  info->graph = sequence->graph;
  if (publish_graph && sequence->graph_handle == 0) {
    sequence->graph_handle = (*publish_graph)(sequence->graph);
  }
  info->graph_handle = sequence->graph_handle;
  const std::vector<uint32_t>& tail = sequence->tails[key];
  auto& nodes = sequence->info_nodes[key];
  auto& edges = sequence->info_edges[key];
  nodes.clear();
  for (uint32_t node : tail) nodes.push_back(NodeHandle(sequence->graph->id(), node));
  edges.assign(tail.size(), infinirtGraphEdgeData{});
  info->dependencies = nodes.data();
  info->edge_data = edges.data();
  info->dependency_count = tail.size();
  return infinirtSuccess;
}

infinirtError_t Captures::UpdateDependencies(const StreamRef& stream,
                                             const DependencyResolver& resolve, bool replace) {
  std::lock_guard<std::mutex> lock(mutex_);
  const Key key = KeyOf(stream);
  std::shared_ptr<Sequence> sequence = stream.legacy ? nullptr : SequenceOfLocked(key);
  if (!sequence) {
    return Fail(infinirtErrorIllegalState,
                "infinirtStreamUpdateCaptureDependencies: the stream is not capturing");
  }
  if (sequence->invalidated) {
    return Fail(infinirtErrorStreamCaptureInvalidated, "capture {} was invalidated", sequence->id);
  }
  std::vector<uint32_t> nodes;
  if (auto error = resolve(*sequence->graph, &nodes)) return error;
  std::vector<uint32_t>& tail = sequence->tails[key];
  if (replace) tail.clear();
  AppendUnique(&tail, nodes);
  return infinirtSuccess;
}

bool Captures::RecordInCapture(const StreamRef& stream, const NodeMaker& make_node,
                               infinirtError_t* error) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<Sequence> sequence;
  switch (RouteLocked(stream, "work issued to a stream", &sequence, error)) {
    case Destination::kRun:
      return false;
    case Destination::kRefused:
      return true;
    case Destination::kCapture:
      break;
  }
  const Key key = KeyOf(stream);
  GraphNode node;
  node.dependencies = sequence->tails[key];
  *error = make_node(*sequence->graph, &node);
  if (*error != infinirtSuccess) return true;
  sequence->tails[key] = {sequence->graph->Add(std::move(node))};
  return true;
}

bool Captures::RefuseUncapturable(const StreamRef& stream, const char* what,
                                  infinirtError_t* error) {
  if (!Active()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<Sequence> sequence;
  switch (RouteLocked(stream, what, &sequence, error)) {
    case Destination::kRun:
      return false;
    case Destination::kRefused:
      return true;
    case Destination::kCapture:
      break;
  }
  InvalidateLocked(*sequence, what);
  *error = infinirtErrorStreamCaptureUnsupported;
  return true;
}

bool Captures::RecordSubgraph(const StreamRef& stream, std::shared_ptr<const GraphData> child,
                              infinirtError_t* error) {
  if (!Active()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<Sequence> sequence;
  switch (RouteLocked(stream, "infinirtGraphLaunch", &sequence, error)) {
    case Destination::kRun:
      return false;
    case Destination::kRefused:
      return true;
    case Destination::kCapture:
      break;
  }
  if (child->HasMemoryNodes()) {
    *error = Fail(infinirtErrorNotSupported,
                  "a graph with memory nodes cannot be launched into a capture");
    return true;
  }
  // As CUDA, the launch becomes a child-graph node holding the exec's graph.
  const Key key = KeyOf(stream);
  GraphNode node;
  node.child = std::move(child);
  node.dependencies = sequence->tails[key];
  sequence->tails[key] = {sequence->graph->Add(std::move(node))};
  *error = infinirtSuccess;
  return true;
}

bool Captures::RecordEvent(const StreamRef& stream, uint64_t event, infinirtError_t* error) {
  if (!Active()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  std::shared_ptr<Sequence> sequence;
  switch (RouteLocked(stream, "infinirtEventRecord", &sequence, error)) {
    case Destination::kRun:
      return false;
    case Destination::kRefused:
      return true;
    case Destination::kCapture:
      break;
  }
  events_[event] = CapturedEvent{sequence, sequence->tails[KeyOf(stream)]};
  *error = infinirtSuccess;
  return true;
}

void Captures::ForgetEvent(uint64_t event) {
  if (!Active()) return;
  std::lock_guard<std::mutex> lock(mutex_);
  events_.erase(event);
}

bool Captures::WaitEvent(const StreamRef& stream, uint64_t event, void* plugin_event,
                         unsigned int flags, infinirtError_t* error) {
  if (!Active()) return false;
  std::lock_guard<std::mutex> lock(mutex_);
  const Key key = KeyOf(stream);
  auto mine = stream.legacy ? nullptr : SequenceOfLocked(key);
  auto captured = events_.find(event);
  if (captured != events_.end()) {
    auto& theirs = captured->second.sequence;
    if (stream.legacy) {
      InvalidateLocked(*theirs, "the legacy stream waited on a captured event");
      *error = Fail(infinirtErrorStreamCaptureImplicit,
                    "infinirtStreamWaitEvent: the legacy stream cannot join a capture");
      return true;
    }
    if (theirs->invalidated) {
      *error = Fail(infinirtErrorStreamCaptureInvalidated,
                    "infinirtStreamWaitEvent: the event's capture was invalidated");
      return true;
    }
    if (!mine) {
      if (stream.device != theirs->device) {
        *error = Fail(infinirtErrorNotSupported,
                      "infinirtStreamWaitEvent: a capture cannot span devices");
        return true;
      }
      theirs->tails[key] = captured->second.nodes;  // fork: the stream joins the capture
      theirs->blocking[key] = stream.blocking;
      members_[key] = theirs;
      *error = infinirtSuccess;
      return true;
    }
    if (mine != theirs) {
      InvalidateLocked(*mine, "merge of two captures");
      *error = Fail(infinirtErrorStreamCaptureMerge,
                    "infinirtStreamWaitEvent: the event belongs to another capture");
      return true;
    }
    AppendUnique(&mine->tails[key], captured->second.nodes);  // join
    *error = infinirtSuccess;
    return true;
  }
  if (stream.legacy) return LegacyConflictLocked(stream.device, "infinirtStreamWaitEvent", error);
  if (!mine) return false;
  if (mine->invalidated) {
    *error = Fail(infinirtErrorStreamCaptureInvalidated, "capture {} was invalidated", mine->id);
    return true;
  }
  if (!(flags & infinirtEventWaitExternal)) {
    InvalidateLocked(*mine, "dependency on uncaptured work");
    *error = Fail(infinirtErrorStreamCaptureIsolation,
                  "infinirtStreamWaitEvent: a capturing stream may wait on an event recorded "
                  "outside the capture only with infinirtEventWaitExternal");
    return true;
  }
  GraphNode node;
  node.desc.kind = INFINIRT_GRAPH_NODE_EVENT_WAIT;
  node.desc.params.wait.event = plugin_event;
  node.event = event;
  node.dependencies = mine->tails[key];
  mine->tails[key] = {mine->graph->Add(std::move(node))};
  *error = infinirtSuccess;
  return true;
}

infinirtError_t Captures::CheckStreamUseInCapture(const StreamRef& stream, bool synchronizes) {
  std::lock_guard<std::mutex> lock(mutex_);
  infinirtError_t error;
  if (stream.legacy) {
    if (LegacyConflictLocked(stream.device, "synchronising or querying", &error)) return error;
  } else if (auto sequence = SequenceOfLocked(KeyOf(stream))) {
    InvalidateLocked(*sequence, "a capturing stream was synchronised or queried");
    return Fail(infinirtErrorStreamCaptureUnsupported,
                "a capturing stream cannot be synchronised or queried");
  }
  return synchronizes ? CheckUnsafeCallLocked() : infinirtSuccess;
}

infinirtError_t Captures::CheckEventUseInCapture(uint64_t event, bool synchronizes) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto captured = events_.find(event);
  if (captured != events_.end()) {
    InvalidateLocked(*captured->second.sequence, "a captured event was synchronised or queried");
    return Fail(infinirtErrorCapturedEvent,
                "an event recorded during capture cannot be synchronised or queried");
  }
  return synchronizes ? CheckUnsafeCallLocked() : CheckQueryLocked();
}

// A query of an uncaptured event is refused only while the calling thread itself has a capture
// in Global mode (NVIDIA's runtime's answer), and invalidates that capture.
infinirtError_t Captures::CheckQueryLocked() {
  const std::thread::id self = std::this_thread::get_id();
  bool prohibited = false;
  for (auto& sequence : sequences_) {
    if (sequence->owner != self || sequence->mode != infinirtStreamCaptureModeGlobal) continue;
    InvalidateLocked(*sequence, "an event was queried during a Global-mode capture");
    prohibited = true;
  }
  if (prohibited) {
    return Fail(infinirtErrorStreamCaptureUnsupported,
                "an event query is not permitted while this thread captures in Global mode");
  }
  return infinirtSuccess;
}

infinirtError_t Captures::CheckDeviceSynchronize(int device) {
  if (!Active()) return infinirtSuccess;
  std::lock_guard<std::mutex> lock(mutex_);
  bool capturing = false;
  for (auto& sequence : sequences_) {
    if (sequence->device != device) continue;
    InvalidateLocked(*sequence, "the device was synchronised");
    capturing = true;
  }
  if (capturing) {
    return Fail(infinirtErrorStreamCaptureUnsupported,
                "infinirtDeviceSynchronize: a stream of the device is capturing");
  }
  return CheckUnsafeCallLocked();
}

infinirtError_t Captures::CheckLegacyUseInCapture(int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  infinirtError_t error;
  return LegacyConflictLocked(device, "a synchronous call", &error) ? error : infinirtSuccess;
}

infinirtError_t Captures::CheckUnsafeCallInCapture() {
  std::lock_guard<std::mutex> lock(mutex_);
  return CheckUnsafeCallLocked();
}

infinirtError_t Captures::CheckUnsafeCallLocked() {
  const infinirtStreamCaptureMode mode = tls_thread_mode;
  if (mode == infinirtStreamCaptureModeRelaxed) return infinirtSuccess;
  const std::thread::id self = std::this_thread::get_id();
  bool prohibited = false;
  for (auto& sequence : sequences_) {
    const bool own = sequence->owner == self && sequence->mode != infinirtStreamCaptureModeRelaxed;
    const bool global = mode == infinirtStreamCaptureModeGlobal &&
                        sequence->mode == infinirtStreamCaptureModeGlobal;
    if (own || global) {
      InvalidateLocked(*sequence, "a potentially unsafe call was made");
      prohibited = true;
    }
  }
  if (prohibited) {
    return Fail(infinirtErrorStreamCaptureUnsupported,
                "a potentially unsafe call (one that may synchronise or is not stream-ordered) is "
                "not permitted while capturing in this mode");
  }
  return infinirtSuccess;
}

void Captures::StreamDestroyed(const StreamRef& stream, std::vector<uint64_t>* retired) {
  if (!Active()) return;
  std::vector<std::shared_ptr<GraphData>> released;  // dropped after the lock
  std::lock_guard<std::mutex> lock(mutex_);
  const Key key = KeyOf(stream);
  auto sequence = SequenceOfLocked(key);
  if (!sequence) return;
  if (sequence->origin == key) {
    if (sequence->graph_handle && !sequence->programs_graph) {
      retired->push_back(sequence->graph_handle);
    }
    RemoveLocked(sequence, &released);
    return;
  }
  InvalidateLocked(*sequence, "a joined stream was destroyed");
  sequence->tails.erase(key);
  sequence->blocking.erase(key);
  members_.erase(key);
}

void Captures::DiscardDevice(int device, std::vector<uint64_t>* retired) {
  if (!Active()) return;
  std::vector<std::shared_ptr<GraphData>> released;  // dropped after the lock
  std::lock_guard<std::mutex> lock(mutex_);
  const auto all = sequences_;
  for (const auto& sequence : all) {
    if (sequence->device != device) continue;
    if (sequence->graph_handle && !sequence->programs_graph) {
      retired->push_back(sequence->graph_handle);
    }
    RemoveLocked(sequence, &released);
  }
}

infinirtStreamCaptureMode Captures::ExchangeThreadMode(infinirtStreamCaptureMode mode) {
  const infinirtStreamCaptureMode previous = tls_thread_mode;
  tls_thread_mode = mode;
  return previous;
}

}  // namespace infinirt::core
