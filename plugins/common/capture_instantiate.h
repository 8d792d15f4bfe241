// Native graphs for vendors whose runtime has stream capture: the core hands GraphInstantiate
// a list of nodes (in dependency order); the plugin replays them on a private stream while the
// vendor runtime captures it, and instantiates what the runtime captured. The nodes run in
// list order, one after another: a valid order, without the branch concurrency of the graph.
#ifndef INFINIRT_PLUGINS_COMMON_CAPTURE_INSTANTIATE_H_
#define INFINIRT_PLUGINS_COMMON_CAPTURE_INSTANTIATE_H_

#include <cstddef>
#include <functional>

#include "infinirt_plugin.h"

namespace infinirt::plugin {

struct VendorCapture {
  // Starts capturing a stream the plugin created.
  std::function<infinirtError_t(infinirtPluginStream_t stream)> begin;
  // Ends the capture; with exec non-null, instantiates what was captured into *exec.
  // Always releases the captured graph.
  std::function<infinirtError_t(infinirtPluginStream_t stream, infinirtPluginGraphExec_t* exec)>
      end;
};

// Creates a non-blocking stream with self.StreamCreate, begins the capture, issues every node
// through self's asynchronous entries, ends the capture and destroys the stream. Answers
// NotSupported, without an exec, for nodes a vendor capture cannot hold the way InfiniRT means
// them (host-to-host copies, which the plugin entries run at once, and waits on events
// recorded outside the graph); the core then replays the graph node by node.
infinirtError_t InstantiateByCapture(const infinirtPluginTable& self, int device,
                                     const infinirtPluginGraphNode* nodes, size_t node_count,
                                     const VendorCapture& capture, infinirtPluginGraphExec_t* exec);

}  // namespace infinirt::plugin

#endif  // INFINIRT_PLUGINS_COMMON_CAPTURE_INSTANTIATE_H_
