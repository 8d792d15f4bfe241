// The public C API for building graphs node by node: a graph created, each kind of node added,
// a node's parameters read and changed (its edges, listings and clones are in
// api_graph_structure.cc). Captured and built graphs are the same objects (graph.h): nodes can be
// added to a captured graph and a built one can be launched into a capture.
#include <utility>

#include "graph_api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

// The steps every infinirtGraphAdd*Node shares: the graph and the dependencies are checked,
// then make_node fills the node (and may refuse), then it joins the graph. make_node runs
// without the graph's lock, which a child-graph node's maker takes on the child.
template <class MakeNode>
infinirtError_t AddNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                        const infinirtGraphNode_t* pDependencies, size_t numDependencies,
                        const char* function, MakeNode&& make_node) {
  Runtime& runtime = Runtime::Get();
  std::shared_ptr<GraphData> data;
  if (auto error = ResolveGraph(runtime, graph, &data, function)) return error;
  if (pGraphNode == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: pGraphNode is NULL", function);
  }
  GraphNode node;
  {
    std::lock_guard<std::recursive_mutex> lock(data->mutex());
    if (auto error = ResolveDependencies(*data, pDependencies, numDependencies, &node.dependencies,
                                         function)) {
      return error;
    }
  }
  if (auto error = make_node(runtime, *data, &node)) return error;
  *pGraphNode = NodeHandle(data->id(), data->Add(std::move(node)));
  return infinirtSuccess;
}

// A node of one type, for the functions that read or change a node's parameters.
template <class Use>
infinirtError_t WithNodeOfType(infinirtGraphNode_t handle, enum infinirtGraphNodeType type,
                               const char* function, Use&& use) {
  std::shared_ptr<GraphData> graph;
  uint32_t id = 0;
  if (auto error = ResolveNode(handle, &graph, &id, function)) return error;
  std::lock_guard<std::recursive_mutex> lock(graph->mutex());
  GraphNode* node = graph->FindNode(id);
  if (node == nullptr || node->type() != type) {
    return Fail(infinirtErrorInvalidValue, "{}: the node is not of type {}", function,
                static_cast<int>(type));
  }
  return use(*graph, *node);
}

infinirtError_t MakeEventNode(Runtime& runtime, const GraphData& graph, infinirtEvent_t event,
                              bool record, GraphNode* node, const char* function) {
  if (event == nullptr) return Fail(infinirtErrorInvalidValue, "{}: event is NULL", function);
  ObjectRecord found;
  if (auto error = ResolveObject(runtime.events(), event, "event", &found, function)) return error;
  if (found.device != graph.device()) {
    return Fail(infinirtErrorInvalidValue,
                "{}: the event belongs to device {} and the graph to device {}", function,
                found.device, graph.device());
  }
  node->event = HandleValue(event);
  if (record) {
    node->desc.kind = INFINIRT_GRAPH_NODE_EVENT_RECORD;
    node->desc.params.record.event = found.plugin_handle;
  } else {
    node->desc.kind = INFINIRT_GRAPH_NODE_EVENT_WAIT;
    node->desc.params.wait.event = found.plugin_handle;
  }
  return infinirtSuccess;
}

// The node holds a copy of the child graph as it is at the call (so a graph may be added as a
// child of itself); the copy is checked for cycles when the parent is instantiated, as NVIDIA's
// runtime does.
infinirtError_t MakeChildNode(Runtime& runtime, const GraphData& graph, infinirtGraph_t child,
                              GraphNode* node, const char* function) {
  std::shared_ptr<GraphData> source;
  if (auto error = ResolveGraph(runtime, child, &source, function)) return error;
  if (source->device() != graph.device()) {
    return Fail(infinirtErrorInvalidValue,
                "{}: the child graph belongs to device {} and the graph to device {}", function,
                source->device(), graph.device());
  }
  if (source->HasMemoryNodes()) {
    return Fail(infinirtErrorNotSupported,
                "{}: a child graph cannot hold memory allocation or free nodes", function);
  }
  node->child = source->Clone();
  return infinirtSuccess;
}

infinirtError_t MakeGraphAllocationNode(Runtime& runtime, GraphData& graph,
                                        infinirtMemAllocNodeParams* params, GraphNode* node,
                                        const char* function) {
  if (params == nullptr) return Fail(infinirtErrorInvalidValue, "{}: nodeParams is NULL", function);
  const infinirtMemPoolProps& props = params->poolProps;
  if (props.allocType != infinirtMemAllocationTypePinned ||
      props.location.type != infinirtMemLocationTypeDevice || props.location.id != graph.device() ||
      props.handleTypes != infinirtMemHandleTypeNone) {
    return Fail(infinirtErrorInvalidValue,
                "{}: poolProps must ask for pinned memory of the graph's device {}, without "
                "export handles",
                function, graph.device());
  }
  if (params->bytesize == 0) return Fail(infinirtErrorInvalidValue, "{}: bytesize is 0", function);
  if (params->accessDescCount > 0 && params->accessDescs == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: accessDescs is NULL", function);
  }
  // At most one descriptor per device (NVIDIA's runtime refuses more).
  if (params->accessDescCount > runtime.devices().size()) {
    return Fail(infinirtErrorInvalidValue, "{}: {} access descriptors for {} devices", function,
                params->accessDescCount, runtime.devices().size());
  }
  for (size_t i = 0; i < params->accessDescCount; ++i) {
    const infinirtMemAccessDesc& access = params->accessDescs[i];
    if (access.location.type != infinirtMemLocationTypeDevice) {
      return Fail(infinirtErrorInvalidValue, "{}: accessDescs[{}] is not a device", function, i);
    }
    if (access.location.id != graph.device()) {
      return Fail(infinirtErrorNotSupported,
                  "{}: graph memory is accessible to its own device only", function);
    }
  }
  return MakeAllocationNode(runtime, graph, GraphTarget(runtime, graph), params->bytesize, node,
                            &params->dptr, function);
}

infinirtError_t GetEventOfNode(infinirtGraphNode_t node, enum infinirtGraphNodeType type,
                               infinirtEvent_t* event_out, const char* function) {
  if (event_out == nullptr)
    return Fail(infinirtErrorInvalidValue, "{}: event_out is NULL", function);
  return WithNodeOfType(node, type, function, [&](GraphData&, GraphNode& found) {
    *event_out = reinterpret_cast<infinirtEvent_t>(static_cast<uintptr_t>(found.event));
    return infinirtSuccess;
  });
}

}  // namespace

extern "C" {

infinirtError_t infinirtGraphCreate(infinirtGraph_t* pGraph, unsigned int flags) {
  return Guard(__func__, [&](const char* function) {
    if (pGraph == nullptr) return Fail(infinirtErrorInvalidValue, "{}: pGraph is NULL", function);
    if (flags != 0) return Fail(infinirtErrorInvalidValue, "{}: flags must be 0", function);
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function)) return error;
    auto graph = std::make_shared<GraphData>(target.backend, target.backend_index, target.device,
                                             target.local, &runtime.allocations());
    const uint64_t handle = PublishGraph(runtime, graph);
    if (handle == 0) return Fail(infinirtErrorMemoryAllocation, "{}: too many graphs", function);
    *pGraph = reinterpret_cast<infinirtGraph_t>(static_cast<uintptr_t>(handle));
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphAddEmptyNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                          const infinirtGraphNode_t* pDependencies,
                                          size_t numDependencies) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [](Runtime&, GraphData&, GraphNode*) { return infinirtSuccess; });
  });
}

infinirtError_t infinirtGraphAddHostNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                         const infinirtGraphNode_t* pDependencies,
                                         size_t numDependencies,
                                         const struct infinirtHostNodeParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime&, GraphData&, GraphNode* node) {
                     return MakeHostNode(pNodeParams, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddMemcpyNode1D(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                             const infinirtGraphNode_t* pDependencies,
                                             size_t numDependencies, void* dst, const void* src,
                                             size_t count, enum infinirtMemcpyKind kind) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeCopyNode(runtime, data, dst, src, count, kind, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddMemcpyNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                           const infinirtGraphNode_t* pDependencies,
                                           size_t numDependencies,
                                           const struct infinirtMemcpy3DParms* pCopyParams) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeCopy3DNode(runtime, data, pCopyParams, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddMemsetNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                           const infinirtGraphNode_t* pDependencies,
                                           size_t numDependencies,
                                           const struct infinirtMemsetParams* pMemsetParams) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeSetNode(runtime, data, pMemsetParams, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddEventRecordNode(infinirtGraphNode_t* pGraphNode,
                                                infinirtGraph_t graph,
                                                const infinirtGraphNode_t* pDependencies,
                                                size_t numDependencies, infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeEventNode(runtime, data, event, true, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddEventWaitNode(infinirtGraphNode_t* pGraphNode,
                                              infinirtGraph_t graph,
                                              const infinirtGraphNode_t* pDependencies,
                                              size_t numDependencies, infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeEventNode(runtime, data, event, false, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddChildGraphNode(infinirtGraphNode_t* pGraphNode,
                                               infinirtGraph_t graph,
                                               const infinirtGraphNode_t* pDependencies,
                                               size_t numDependencies, infinirtGraph_t childGraph) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeChildNode(runtime, data, childGraph, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddMemAllocNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                             const infinirtGraphNode_t* pDependencies,
                                             size_t numDependencies,
                                             struct infinirtMemAllocNodeParams* nodeParams) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     return MakeGraphAllocationNode(runtime, data, nodeParams, node, function);
                   });
  });
}

infinirtError_t infinirtGraphAddMemFreeNode(infinirtGraphNode_t* pGraphNode, infinirtGraph_t graph,
                                            const infinirtGraphNode_t* pDependencies,
                                            size_t numDependencies, void* dptr) {
  return Guard(__func__, [&](const char* function) {
    return AddNode(pGraphNode, graph, pDependencies, numDependencies, function,
                   [&](Runtime& runtime, GraphData& data, GraphNode* node) {
                     if (dptr == nullptr) {
                       return Fail(infinirtErrorInvalidValue, "{}: dptr is NULL", function);
                     }
                     return MakeFreeNode(runtime, data, dptr, node, function);
                   });
  });
}

infinirtError_t infinirtGraphHostNodeGetParams(infinirtGraphNode_t node,
                                               struct infinirtHostNodeParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    if (pNodeParams == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pNodeParams is NULL", function);
    }
    return WithNodeOfType(node, infinirtGraphNodeTypeHost, function,
                          [&](GraphData&, GraphNode& found) {
                            pNodeParams->fn = found.desc.params.host.fn;
                            pNodeParams->userData = found.desc.params.host.user_data;
                            return infinirtSuccess;
                          });
  });
}

infinirtError_t infinirtGraphHostNodeSetParams(infinirtGraphNode_t node,
                                               const struct infinirtHostNodeParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    return WithNodeOfType(node, infinirtGraphNodeTypeHost, function,
                          [&](GraphData&, GraphNode& found) {
                            GraphNode changed = found;
                            if (auto error = MakeHostNode(pNodeParams, &changed, function))
                              return error;
                            found.desc = changed.desc;
                            return infinirtSuccess;
                          });
  });
}

infinirtError_t infinirtGraphMemcpyNodeGetParams(infinirtGraphNode_t node,
                                                 struct infinirtMemcpy3DParms* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    if (pNodeParams == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pNodeParams is NULL", function);
    }
    return WithNodeOfType(
        node, infinirtGraphNodeTypeMemcpy, function, [&](GraphData&, GraphNode& found) {
          if (found.copy_3d) {
            *pNodeParams = found.copy_params;
            return infinirtSuccess;
          }
          const auto& copy = found.desc.params.copy;
          *pNodeParams = infinirtMemcpy3DParms{};
          pNodeParams->srcPtr =
              make_infinirtPitchedPtr(const_cast<void*>(copy.src), copy.count, copy.count, 1);
          pNodeParams->dstPtr = make_infinirtPitchedPtr(copy.dst, copy.count, copy.count, 1);
          pNodeParams->extent = make_infinirtExtent(copy.count, 1, 1);
          pNodeParams->kind = copy.kind;
          return infinirtSuccess;
        });
  });
}

infinirtError_t infinirtGraphMemcpyNodeSetParams1D(infinirtGraphNode_t node, void* dst,
                                                   const void* src, size_t count,
                                                   enum infinirtMemcpyKind kind) {
  return Guard(__func__, [&](const char* function) {
    return WithNodeOfType(
        node, infinirtGraphNodeTypeMemcpy, function, [&](GraphData& graph, GraphNode& found) {
          GraphNode changed = found;
          if (auto error =
                  MakeCopyNode(Runtime::Get(), graph, dst, src, count, kind, &changed, function)) {
            return error;
          }
          found = std::move(changed);
          return infinirtSuccess;
        });
  });
}

infinirtError_t infinirtGraphMemcpyNodeSetParams(infinirtGraphNode_t node,
                                                 const struct infinirtMemcpy3DParms* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    return WithNodeOfType(
        node, infinirtGraphNodeTypeMemcpy, function, [&](GraphData& graph, GraphNode& found) {
          GraphNode changed = found;
          if (auto error = MakeCopy3DNode(Runtime::Get(), graph, pNodeParams, &changed, function)) {
            return error;
          }
          found = std::move(changed);
          return infinirtSuccess;
        });
  });
}

infinirtError_t infinirtGraphMemsetNodeGetParams(infinirtGraphNode_t node,
                                                 struct infinirtMemsetParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    if (pNodeParams == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pNodeParams is NULL", function);
    }
    return WithNodeOfType(node, infinirtGraphNodeTypeMemset, function,
                          [&](GraphData&, GraphNode& found) {
                            *pNodeParams = found.memset_params();
                            return infinirtSuccess;
                          });
  });
}

infinirtError_t infinirtGraphMemsetNodeSetParams(infinirtGraphNode_t node,
                                                 const struct infinirtMemsetParams* pNodeParams) {
  return Guard(__func__, [&](const char* function) {
    return WithNodeOfType(
        node, infinirtGraphNodeTypeMemset, function, [&](GraphData& graph, GraphNode& found) {
          GraphNode changed = found;
          if (auto error = MakeSetNode(Runtime::Get(), graph, pNodeParams, &changed, function)) {
            return error;
          }
          found = std::move(changed);
          return infinirtSuccess;
        });
  });
}

infinirtError_t infinirtGraphEventRecordNodeGetEvent(infinirtGraphNode_t node,
                                                     infinirtEvent_t* event_out) {
  return Guard(__func__, [&](const char* function) {
    return GetEventOfNode(node, infinirtGraphNodeTypeEventRecord, event_out, function);
  });
}

infinirtError_t infinirtGraphEventWaitNodeGetEvent(infinirtGraphNode_t node,
                                                   infinirtEvent_t* event_out) {
  return Guard(__func__, [&](const char* function) {
    return GetEventOfNode(node, infinirtGraphNodeTypeWaitEvent, event_out, function);
  });
}

infinirtError_t infinirtGraphMemAllocNodeGetParams(infinirtGraphNode_t node,
                                                   struct infinirtMemAllocNodeParams* params_out) {
  return Guard(__func__, [&](const char* function) {
    if (params_out == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: params_out is NULL", function);
    }
    return WithNodeOfType(node, infinirtGraphNodeTypeMemAlloc, function,
                          [&](GraphData& graph, GraphNode& found) {
                            *params_out = infinirtMemAllocNodeParams{};
                            params_out->poolProps.allocType = infinirtMemAllocationTypePinned;
                            params_out->poolProps.location.type = infinirtMemLocationTypeDevice;
                            params_out->poolProps.location.id = graph.device();
                            params_out->bytesize = found.desc.params.memory.size;
                            params_out->dptr = found.desc.params.memory.ptr;
                            return infinirtSuccess;
                          });
  });
}

infinirtError_t infinirtGraphMemFreeNodeGetParams(infinirtGraphNode_t node, void* dptr_out) {
  return Guard(__func__, [&](const char* function) {
    if (dptr_out == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: dptr_out is NULL", function);
    return WithNodeOfType(node, infinirtGraphNodeTypeMemFree, function,
                          [&](GraphData&, GraphNode& found) {
                            *static_cast<void**>(dptr_out) = found.desc.params.memory.ptr;
                            return infinirtSuccess;
                          });
  });
}

}  // extern "C"
