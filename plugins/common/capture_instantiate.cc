#include "capture_instantiate.h"

namespace infinirt::plugin {
namespace {

bool CapturableAsIs(const infinirtPluginGraphNode& node) {
  // Event nodes have no capturable form (a record in a capture orders the capture itself);
  // kinds added after these are unknown here.
  if (node.kind == INFINIRT_GRAPH_NODE_EVENT_WAIT || node.kind > INFINIRT_GRAPH_NODE_NATIVE) {
    return false;
  }
  return node.kind != INFINIRT_GRAPH_NODE_MEMCPY ||
         node.params.copy.kind != infinirtMemcpyHostToHost;
}

infinirtError_t IssueNode(const infinirtPluginTable& self, int device,
                          const infinirtPluginGraphNode& node, infinirtPluginStream_t stream) {
  const auto& p = node.params;
  switch (node.kind) {
    case INFINIRT_GRAPH_NODE_MEMCPY:
      return self.MemcpyAsync(device, p.copy.dst, p.copy.src, p.copy.count, p.copy.kind, stream);
    case INFINIRT_GRAPH_NODE_MEMSET:
      return self.MemsetAsync(device, p.set.ptr, p.set.value, p.set.count, stream);
    case INFINIRT_GRAPH_NODE_HOST:
      return self.LaunchHostFunc(device, stream, p.host.fn, p.host.user_data);
    case INFINIRT_GRAPH_NODE_NATIVE: {
      // The function queues its work on the vendor stream under capture: the vendor records it.
      void* native = nullptr;
      if (auto error = self.StreamGetNativeHandle(device, stream, &native)) return error;
      return p.native.fn(native, p.native.user_data);
    }
    default:  // empty and memory nodes only order the others: list order already does
      return infinirtSuccess;
  }
}

}  // namespace

infinirtError_t InstantiateByCapture(const infinirtPluginTable& self, int device,
                                     const infinirtPluginGraphNode* nodes, size_t node_count,
                                     const VendorCapture& capture,
                                     infinirtPluginGraphExec_t* exec) {
  for (size_t i = 0; i < node_count; ++i) {
    if (!CapturableAsIs(nodes[i])) return infinirtErrorNotSupported;
  }
  infinirtPluginStream_t stream = nullptr;
  infinirtError_t error = self.StreamCreate(device, &stream, infinirtStreamNonBlocking);
  if (error != infinirtSuccess) return error;
  error = capture.begin(stream);
  if (error == infinirtSuccess) {
    for (size_t i = 0; i < node_count && error == infinirtSuccess; ++i) {
      error = IssueNode(self, device, nodes[i], stream);
    }
    const infinirtError_t ended = capture.end(stream, error == infinirtSuccess ? exec : nullptr);
    if (error == infinirtSuccess) error = ended;
  }
  self.StreamDestroy(device, stream);
  return error;
}

}  // namespace infinirt::plugin
