#include "infinirt/graph.hpp"

#include <algorithm>
#include <utility>

#include "caching_allocator.h"
#include "infinirt/error.hpp"
#include "runtime_log.h"

namespace infinirt {

Graph::Graph(infinirtGraph_t graph, infinirtGraphExec_t exec, infinirtStream_t stream,
             std::vector<std::shared_ptr<GraphOperator>> operators,
             std::shared_ptr<detail::CachingAllocator> allocator, uint64_t pin_owner)
    : graph_(graph),
      exec_(exec),
      stream_(stream),
      operators_(std::move(operators)),
      allocator_(std::move(allocator)),
      pin_owner_(pin_owner) {}

Graph::~Graph() { destroy(); }

void Graph::execute() { execute(stream_); }

void Graph::execute(infinirtStream_t stream) {
  // After destroy() the handle is stale, and the C API answers InvalidValue (as NVIDIA's runtime
  // does for an exec destroyed before).
  INFINIRT_CHECK(infinirtGraphLaunch(exec_, stream));
  if (std::find(launched_on_.begin(), launched_on_.end(), stream) == launched_on_.end()) {
    launched_on_.push_back(stream);
  }
}

void Graph::destroy() noexcept {
  if (destroyed_) return;
  destroyed_ = true;
  // A replay may still be running: the graph's memory is released once it is done. A stream
  // destroyed meanwhile (the recording runtime's thread exited) was waited for when it went.
  for (infinirtStream_t stream : launched_on_) {
    const infinirtError_t status = infinirtStreamSynchronize(stream);
    if (status == infinirtErrorInvalidResourceHandle) {
      infinirtGetLastError();
      continue;
    }
    ReportIfFailed(status, "infinirtStreamSynchronize in ~Graph");
  }
  ReportIfFailed(infinirtGraphExecDestroy(exec_), "infinirtGraphExecDestroy in ~Graph");
  ReportIfFailed(infinirtGraphDestroy(graph_), "infinirtGraphDestroy in ~Graph");
  try {
    allocator_->ReleasePinned(pin_owner_);
  } catch (const std::exception& error) {
    Warn(error.what());
  }
  operators_.clear();
}

}  // namespace infinirt
