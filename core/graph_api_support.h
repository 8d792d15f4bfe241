// What the graph functions of the C API share (api_graph.cc, api_graph_nodes.cc,
// api_graph_structure.cc, api_graph_exec.cc): resolving nodes and execs, and making the nodes that
// both a graph and an exec's update can hold, with the same checks.
#ifndef INFINIRT_CORE_GRAPH_API_SUPPORT_H_
#define INFINIRT_CORE_GRAPH_API_SUPPORT_H_

#include <memory>
#include <utility>
#include <vector>

#include "api_support.h"

namespace infinirt::core::api {

// The device a graph belongs to, as the copy and memset checks want it.
StreamTarget GraphTarget(Runtime& runtime, const GraphData& graph);

// A node handle's graph and node id; InvalidValue for NULL, a destroyed node or graph, garbage.
infinirtError_t ResolveNode(infinirtGraphNode_t handle, std::shared_ptr<GraphData>* graph,
                            uint32_t* id, const char* function);

// The id of a node that must belong to `graph` (InvalidValue otherwise).
infinirtError_t NodeOfGraph(const GraphData& graph, infinirtGraphNode_t handle, uint32_t* id,
                            const char* function);
// Dependencies given as handles: nodes of `graph`, each once.
infinirtError_t ResolveDependencies(const GraphData& graph, const infinirtGraphNode_t* handles,
                                    size_t count, std::vector<uint32_t>* ids, const char* function);
// Edge data as InfiniRT has it: all zero (a plain dependency).
bool IsDefaultEdge(const infinirtGraphEdgeData& edge);

// A live exec, or InvalidValue (NULL) / InvalidResourceHandle.
infinirtError_t ResolveExec(Runtime& runtime, infinirtGraphExec_t exec, ObjectRecord* record,
                            const char* function);

// GraphInstantiate's work; with_params: for GraphInstantiateWithParams, the only one taking the
// Upload flag.
infinirtError_t InstantiateGraph(infinirtGraphExec_t* pGraphExec, infinirtGraph_t graph,
                                 unsigned long long flags, bool with_params, const char* function);

// A live exec and a stream of its device (InvalidValue for a stream of another device), for
// GraphLaunch and GraphUpload: an exec destroyed before is InvalidValue there (NVIDIA's answer).
infinirtError_t ResolveExecOnStream(Runtime& runtime, infinirtGraphExec_t exec,
                                    infinirtStream_t stream, ObjectRecord* record,
                                    StreamTarget* target, const char* function);

// The events of a graph's event nodes: handle and plugin event.
std::vector<std::pair<uint64_t, void*>> EventsOf(const GraphData& graph);
// An event destroyed since its node was made fails instantiation, updates and launches, rather
// than reaching the plugin.
infinirtError_t CheckEventsLive(Runtime& runtime,
                                const std::vector<std::pair<uint64_t, void*>>& events,
                                const char* function);

// The exec's order event (what a launch waits for to follow an earlier one), made once.
infinirtError_t EnsureOrderEvent(const infinirtPluginTable& table, int local, ExecData& exec);

// Whether the stream of an exec's latest launch can still be named: a live stream (the same
// one), or the legacy stream; not another thread's per-thread stream.
bool LatestLaunchStreamNameable(Runtime& runtime, const ExecData& exec);

// An exec is being destroyed: its user object references are released once its launches are
// done (by a host function queued after the latest one), at once if it never ran.
void ReleaseUserObjectsAfterLaunches(Runtime& runtime, const ObjectRecord& record, ExecData& exec);

// Node makers, checked as the stream calls check the same work on a stream of the graph's
// device.
infinirtError_t MakeCopyNode(Runtime& runtime, const GraphData& graph, void* dst, const void* src,
                             size_t count, enum infinirtMemcpyKind kind, GraphNode* node,
                             const char* function);
// A copy node from 3-D parameters (linear memory only): checked as Memcpy3DAsync checks them, its
// rows routed as their first one (they lie in the same allocations).
infinirtError_t MakeCopy3DNode(Runtime& runtime, const GraphData& graph,
                               const infinirtMemcpy3DParms* params, GraphNode* node,
                               const char* function);
// The rows of a checked 3-D copy of linear memory (one where both boxes are contiguous);
// InvalidValue for an empty extent (api_memory_2d.cc).
infinirtError_t RowsOf3DCopy(const infinirtMemcpy3DParms* p, std::vector<CopyRow>* rows,
                             const char* function);
infinirtError_t MakeSetNode(Runtime& runtime, const GraphData& graph,
                            const infinirtMemsetParams* params, GraphNode* node,
                            const char* function);
infinirtError_t MakeHostNode(const infinirtHostNodeParams* params, GraphNode* node,
                             const char* function);

}  // namespace infinirt::core::api

#endif  // INFINIRT_CORE_GRAPH_API_SUPPORT_H_
