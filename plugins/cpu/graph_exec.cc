#include "graph_exec.h"

#include <algorithm>
#include <cstring>

#include "host_memory.h"

namespace infinirt::cpu {

GraphExec::GraphExec(const infinirtPluginGraphNode* nodes, size_t count)
    : nodes_(nodes, nodes + count) {
  for (auto& node : nodes_) {
    node.dependencies = nullptr;
    node.dependency_count = 0;
    if (node.kind == INFINIRT_GRAPH_NODE_HOST) has_host_nodes_ = true;
    if (node.kind == INFINIRT_GRAPH_NODE_MEMCPY) bytes_ += node.params.copy.count;
    if (node.kind == INFINIRT_GRAPH_NODE_MEMSET) bytes_ += node.params.set.count;
    if (node.kind == INFINIRT_GRAPH_NODE_MEMSET_ELEMENTS) {
      bytes_ += node.params.elements.count * node.params.elements.element_size;
    }
  }
}

void GraphExec::Launch(Device& device, Stream& stream, size_t inline_bytes) {
  std::lock_guard<std::mutex> lock(mutex_);
  std::vector<StreamPoint> waits;
  if (last_stream_) waits.push_back(StreamPoint{last_stream_, last_seq_});
  for (const auto& node : nodes_) {
    if (node.kind != INFINIRT_GRAPH_NODE_EVENT_WAIT) continue;
    if (auto record = static_cast<Event*>(node.params.wait.event)->last()) {
      waits.push_back(record->point);
    }
  }
  const bool may_inline =
      !has_host_nodes_ && bytes_ <= inline_bytes &&
      std::all_of(waits.begin(), waits.end(), [](const StreamPoint& p) { return p.Reached(); });
  if (!may_inline || !device.TryRunInline(
                         stream, [this] { Run(); }, &last_seq_)) {
    auto self = shared_from_this();
    last_seq_ = device.Submit(stream, std::move(waits), [self] { self->Run(); });
  }
  last_stream_ = stream.shared_from_this();
}

void GraphExec::Run() const {
  for (const auto& node : nodes_) {
    const auto& p = node.params;
    switch (node.kind) {
      case INFINIRT_GRAPH_NODE_MEMCPY:
        std::memmove(p.copy.dst, p.copy.src, p.copy.count);
        break;
      case INFINIRT_GRAPH_NODE_MEMSET:
        std::memset(p.set.ptr, p.set.value, p.set.count);
        break;
      case INFINIRT_GRAPH_NODE_MEMSET_ELEMENTS:
        FillElements(p.elements.ptr, p.elements.value, p.elements.element_size, p.elements.count);
        break;
      case INFINIRT_GRAPH_NODE_HOST:
        RunGuarded([&] { p.host.fn(p.host.user_data); });
        break;
      default:  // empty, memory and wait nodes: ordering only (waits are taken at launch)
        break;
    }
  }
}

}  // namespace infinirt::cpu
