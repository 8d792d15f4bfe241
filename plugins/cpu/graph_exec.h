// An executable graph on the CPU device: the captured nodes, run in their (topological) order
// as one operation of the launch stream, so a launch costs one enqueue whatever the node count.
// A launch waits for the previous launch of the same exec and for the events its wait nodes
// name (snapshotted at launch). A launch of a graph without host nodes whose copies and sets
// come to at most the caller's inline size runs in the caller, as a small copy would, when the
// stream is idle and everything it waits for is reached.
#ifndef INFINIRT_PLUGINS_CPU_GRAPH_EXEC_H_
#define INFINIRT_PLUGINS_CPU_GRAPH_EXEC_H_

#include <memory>
#include <mutex>
#include <vector>

#include "engine.h"
#include "infinirt_plugin.h"

namespace infinirt::cpu {

class GraphExec : public std::enable_shared_from_this<GraphExec> {
 public:
  GraphExec(const infinirtPluginGraphNode* nodes, size_t count);
  // inline_bytes: the size up to which copies and sets may run in the caller.
  void Launch(Device& device, Stream& stream, size_t inline_bytes);

 private:
  void Run() const;

  std::vector<infinirtPluginGraphNode> nodes_;  // dependency arrays not kept: order suffices
  bool has_host_nodes_ = false;
  size_t bytes_ = 0;  // copied and set by one launch
  std::mutex mutex_;
  std::shared_ptr<Stream> last_stream_;  // where the previous launch went
  uint64_t last_seq_ = 0;
};

struct GraphExecHandle {
  std::shared_ptr<GraphExec> exec;
};

}  // namespace infinirt::cpu

#endif  // INFINIRT_PLUGINS_CPU_GRAPH_EXEC_H_
