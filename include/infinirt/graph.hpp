// Graph recording: operators run once under stream capture, then replayed as one graph.
#ifndef INFINIRT_GRAPH_HPP_
#define INFINIRT_GRAPH_HPP_

#include <cstdint>
#include <memory>
#include <vector>

#include "infinirt.h"
#include "infinirt/export.hpp"

namespace infinirt {

namespace detail {
class CachingAllocator;
}  // namespace detail

// Something that issues work on a stream: an operator, a layer. While a Runtime records a graph,
// each operator added runs once, its work captured instead of done.
class GraphOperator {
 public:
  virtual ~GraphOperator() = default;
  virtual void run(infinirtStream_t stream) = 0;
};

// A recorded, instantiated graph (Runtime::stopGraphRecording). It keeps its operators alive,
// and the memory allocated while it was recorded stays reserved for it until it is destroyed.
class INFINIRT_CXX_API Graph {
 public:
  ~Graph();
  Graph(const Graph&) = delete;
  Graph& operator=(const Graph&) = delete;

  // Launches the graph on the stream of the runtime that recorded it.
  void execute();
  // Launches it on another stream (of the same device).
  void execute(infinirtStream_t stream);
  // Releases the graph now (the destructor does otherwise). Executing it afterwards is an
  // infinirt::Error (InvalidValue, the C API's answer for a destroyed exec).
  void destroy() noexcept;

  infinirtGraph_t graph() const { return graph_; }
  infinirtGraphExec_t exec() const { return exec_; }
  size_t operatorCount() const { return operators_.size(); }

 private:
  friend class Runtime;
  Graph(infinirtGraph_t graph, infinirtGraphExec_t exec, infinirtStream_t stream,
        std::vector<std::shared_ptr<GraphOperator>> operators,
        std::shared_ptr<detail::CachingAllocator> allocator, uint64_t pin_owner);

  infinirtGraph_t graph_;
  infinirtGraphExec_t exec_;
  infinirtStream_t stream_;
  std::vector<std::shared_ptr<GraphOperator>> operators_;
  std::shared_ptr<detail::CachingAllocator> allocator_;
  uint64_t pin_owner_;
  std::vector<infinirtStream_t> launched_on_;  // waited for before the graph's memory goes
  bool destroyed_ = false;
};

}  // namespace infinirt

#endif  // INFINIRT_GRAPH_HPP_
