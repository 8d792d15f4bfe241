// The per-thread variants of infinirt.h's INFINIRT_PER_THREAD_STREAM_FUNCTIONS, which programs
// compiled with INFINIRT_API_PER_THREAD_DEFAULT_STREAM call: the stream 0 is the calling thread's
// per-thread default stream, and the synchronous copies and memsets run in that stream. Each
// forwards to the ordinary function, so the two never differ in anything else.

// The C declarations only: the C++ overloads (MallocAsync of a T**) would make decltype of a
// name ambiguous.
#define INFINIRT_NO_CXX_OVERLOADS
#include "infinirt.h"

// The variants' declarations, from the ordinary functions' types: a definition below with
// other parameters than its function's does not compile.
extern "C" {
#define INFINIRT_DECLARE_VARIANT_(name, variant) \
  INFINIRT_API decltype(infinirt##name) infinirt##name##_##variant;
INFINIRT_PER_THREAD_STREAM_FUNCTIONS(INFINIRT_DECLARE_VARIANT_)
#undef INFINIRT_DECLARE_VARIANT_
}

namespace {

// 0 is the per-thread stream; every other stream (infinirtStreamLegacy included) is itself.
infinirtStream_t PerThread(infinirtStream_t stream) {
  return stream == nullptr ? infinirtStreamPerThread : stream;
}

// A synchronous copy or memset: queued in the per-thread stream, then waited for there.
infinirtError_t WaitForPerThread(infinirtError_t queued) {
  if (queued != infinirtSuccess) return queued;
  return infinirtStreamSynchronize(infinirtStreamPerThread);
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// _ptds: the synchronous copies and memsets.

infinirtError_t infinirtMemcpy_ptds(void* dst, const void* src, size_t count,
                                    enum infinirtMemcpyKind kind) {
  return WaitForPerThread(infinirtMemcpyAsync(dst, src, count, kind, infinirtStreamPerThread));
}

infinirtError_t infinirtMemcpy2D_ptds(void* dst, size_t dpitch, const void* src, size_t spitch,
                                      size_t width, size_t height, enum infinirtMemcpyKind kind) {
  return WaitForPerThread(infinirtMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind,
                                                infinirtStreamPerThread));
}

infinirtError_t infinirtMemcpy3D_ptds(const struct infinirtMemcpy3DParms* p) {
  return WaitForPerThread(infinirtMemcpy3DAsync(p, infinirtStreamPerThread));
}

infinirtError_t infinirtMemset_ptds(void* devPtr, int value, size_t count) {
  return WaitForPerThread(infinirtMemsetAsync(devPtr, value, count, infinirtStreamPerThread));
}

infinirtError_t infinirtMemset2D_ptds(void* devPtr, size_t pitch, int value, size_t width,
                                      size_t height) {
  return WaitForPerThread(
      infinirtMemset2DAsync(devPtr, pitch, value, width, height, infinirtStreamPerThread));
}

infinirtError_t infinirtMemset3D_ptds(struct infinirtPitchedPtr pitchedDevPtr, int value,
                                      struct infinirtExtent extent) {
  return WaitForPerThread(
      infinirtMemset3DAsync(pitchedDevPtr, value, extent, infinirtStreamPerThread));
}

// ---------------------------------------------------------------------------------------------
// _ptsz: the functions that take a stream.

infinirtError_t infinirtGraphInstantiateWithParams_ptsz(
    infinirtGraphExec_t* pGraphExec, infinirtGraph_t graph,
    infinirtGraphInstantiateParams* instantiateParams) {
  if (instantiateParams == nullptr) {
    return infinirtGraphInstantiateWithParams(pGraphExec, graph, instantiateParams);
  }
  // The upload stream is inside the parameters, which report back through the same structure.
  infinirtGraphInstantiateParams params = *instantiateParams;
  params.uploadStream = PerThread(params.uploadStream);
  const infinirtError_t result = infinirtGraphInstantiateWithParams(pGraphExec, graph, &params);
  instantiateParams->errNode_out = params.errNode_out;
  instantiateParams->result_out = params.result_out;
  return result;
}

infinirtError_t infinirtGraphUpload_ptsz(infinirtGraphExec_t graphExec, infinirtStream_t stream) {
  return infinirtGraphUpload(graphExec, PerThread(stream));
}

infinirtError_t infinirtGraphLaunch_ptsz(infinirtGraphExec_t graphExec, infinirtStream_t stream) {
  return infinirtGraphLaunch(graphExec, PerThread(stream));
}

infinirtError_t infinirtStreamBeginCapture_ptsz(infinirtStream_t stream,
                                                enum infinirtStreamCaptureMode mode) {
  return infinirtStreamBeginCapture(PerThread(stream), mode);
}

infinirtError_t infinirtStreamBeginCaptureToGraph_ptsz(infinirtStream_t stream,
                                                       infinirtGraph_t graph,
                                                       const infinirtGraphNode_t* dependencies,
                                                       const infinirtGraphEdgeData* dependencyData,
                                                       size_t numDependencies,
                                                       enum infinirtStreamCaptureMode mode) {
  return infinirtStreamBeginCaptureToGraph(PerThread(stream), graph, dependencies, dependencyData,
                                           numDependencies, mode);
}

infinirtError_t infinirtStreamEndCapture_ptsz(infinirtStream_t stream, infinirtGraph_t* pGraph) {
  return infinirtStreamEndCapture(PerThread(stream), pGraph);
}

infinirtError_t infinirtStreamGetCaptureInfo_ptsz(
    infinirtStream_t stream, enum infinirtStreamCaptureStatus* captureStatus_out,
    unsigned long long* id_out, infinirtGraph_t* graph_out,
    const infinirtGraphNode_t** dependencies_out, const infinirtGraphEdgeData** edgeData_out,
    size_t* numDependencies_out) {
  return infinirtStreamGetCaptureInfo(PerThread(stream), captureStatus_out, id_out, graph_out,
                                      dependencies_out, edgeData_out, numDependencies_out);
}

infinirtError_t infinirtStreamUpdateCaptureDependencies_ptsz(
    infinirtStream_t stream, infinirtGraphNode_t* dependencies,
    const infinirtGraphEdgeData* dependencyData, size_t numDependencies, unsigned int flags) {
  return infinirtStreamUpdateCaptureDependencies(PerThread(stream), dependencies, dependencyData,
                                                 numDependencies, flags);
}

infinirtError_t infinirtStreamIsCapturing_ptsz(infinirtStream_t stream,
                                               enum infinirtStreamCaptureStatus* pCaptureStatus) {
  return infinirtStreamIsCapturing(PerThread(stream), pCaptureStatus);
}

infinirtError_t infinirtMemcpyAsync_ptsz(void* dst, const void* src, size_t count,
                                         enum infinirtMemcpyKind kind, infinirtStream_t stream) {
  return infinirtMemcpyAsync(dst, src, count, kind, PerThread(stream));
}

infinirtError_t infinirtMemcpy2DAsync_ptsz(void* dst, size_t dpitch, const void* src, size_t spitch,
                                           size_t width, size_t height,
                                           enum infinirtMemcpyKind kind, infinirtStream_t stream) {
  return infinirtMemcpy2DAsync(dst, dpitch, src, spitch, width, height, kind, PerThread(stream));
}

infinirtError_t infinirtMemcpy3DAsync_ptsz(const struct infinirtMemcpy3DParms* p,
                                           infinirtStream_t stream) {
  return infinirtMemcpy3DAsync(p, PerThread(stream));
}

infinirtError_t infinirtMemsetAsync_ptsz(void* devPtr, int value, size_t count,
                                         infinirtStream_t stream) {
  return infinirtMemsetAsync(devPtr, value, count, PerThread(stream));
}

infinirtError_t infinirtMemset2DAsync_ptsz(void* devPtr, size_t pitch, int value, size_t width,
                                           size_t height, infinirtStream_t stream) {
  return infinirtMemset2DAsync(devPtr, pitch, value, width, height, PerThread(stream));
}

infinirtError_t infinirtMemset3DAsync_ptsz(struct infinirtPitchedPtr pitchedDevPtr, int value,
                                           struct infinirtExtent extent, infinirtStream_t stream) {
  return infinirtMemset3DAsync(pitchedDevPtr, value, extent, PerThread(stream));
}

infinirtError_t infinirtStreamQuery_ptsz(infinirtStream_t stream) {
  return infinirtStreamQuery(PerThread(stream));
}

infinirtError_t infinirtStreamGetDevice_ptsz(infinirtStream_t hStream, int* device) {
  return infinirtStreamGetDevice(PerThread(hStream), device);
}

infinirtError_t infinirtStreamGetFlags_ptsz(infinirtStream_t hStream, unsigned int* flags) {
  return infinirtStreamGetFlags(PerThread(hStream), flags);
}

infinirtError_t infinirtStreamGetId_ptsz(infinirtStream_t hStream, unsigned long long* streamId) {
  return infinirtStreamGetId(PerThread(hStream), streamId);
}

infinirtError_t infinirtStreamGetPriority_ptsz(infinirtStream_t hStream, int* priority) {
  return infinirtStreamGetPriority(PerThread(hStream), priority);
}

infinirtError_t infinirtEventRecord_ptsz(infinirtEvent_t event, infinirtStream_t stream) {
  return infinirtEventRecord(event, PerThread(stream));
}

infinirtError_t infinirtEventRecordWithFlags_ptsz(infinirtEvent_t event, infinirtStream_t stream,
                                                  unsigned int flags) {
  return infinirtEventRecordWithFlags(event, PerThread(stream), flags);
}

infinirtError_t infinirtStreamWaitEvent_ptsz(infinirtStream_t stream, infinirtEvent_t event,
                                             unsigned int flags) {
  return infinirtStreamWaitEvent(PerThread(stream), event, flags);
}

infinirtError_t infinirtStreamAddCallback_ptsz(infinirtStream_t stream,
                                               infinirtStreamCallback_t callback, void* userData,
                                               unsigned int flags) {
  return infinirtStreamAddCallback(PerThread(stream), callback, userData, flags);
}

infinirtError_t infinirtStreamSynchronize_ptsz(infinirtStream_t stream) {
  return infinirtStreamSynchronize(PerThread(stream));
}

infinirtError_t infinirtLaunchHostFunc_ptsz(infinirtStream_t stream, infinirtHostFn_t fn,
                                            void* userData) {
  return infinirtLaunchHostFunc(PerThread(stream), fn, userData);
}

infinirtError_t infinirtMemPrefetchAsync_ptsz(const void* devPtr, size_t count,
                                              struct infinirtMemLocation location,
                                              unsigned int flags, infinirtStream_t stream) {
  return infinirtMemPrefetchAsync(devPtr, count, location, flags, PerThread(stream));
}

infinirtError_t infinirtStreamCopyAttributes_ptsz(infinirtStream_t dst, infinirtStream_t src) {
  return infinirtStreamCopyAttributes(PerThread(dst), PerThread(src));
}

infinirtError_t infinirtStreamGetAttribute_ptsz(infinirtStream_t hStream, infinirtStreamAttrID attr,
                                                infinirtStreamAttrValue* value_out) {
  return infinirtStreamGetAttribute(PerThread(hStream), attr, value_out);
}

infinirtError_t infinirtStreamSetAttribute_ptsz(infinirtStream_t hStream, infinirtStreamAttrID attr,
                                                const infinirtStreamAttrValue* value) {
  return infinirtStreamSetAttribute(PerThread(hStream), attr, value);
}

infinirtError_t infinirtMallocAsync_ptsz(void** devPtr, size_t size, infinirtStream_t hStream) {
  return infinirtMallocAsync(devPtr, size, PerThread(hStream));
}

infinirtError_t infinirtFreeAsync_ptsz(void* devPtr, infinirtStream_t hStream) {
  return infinirtFreeAsync(devPtr, PerThread(hStream));
}

infinirtError_t infinirtMallocFromPoolAsync_ptsz(void** ptr, size_t size, infinirtMemPool_t memPool,
                                                 infinirtStream_t stream) {
  return infinirtMallocFromPoolAsync(ptr, size, memPool, PerThread(stream));
}

infinirtError_t infinirtStreamGetNativeHandle_ptsz(void** nativeStream, infinirtStream_t stream) {
  return infinirtStreamGetNativeHandle(nativeStream, PerThread(stream));
}

infinirtError_t infinirtLaunchNativeFunc_ptsz(infinirtStream_t stream, infinirtNativeFn_t fn,
                                              void* userData, infinirtNativeReleaseFn_t release) {
  return infinirtLaunchNativeFunc(PerThread(stream), fn, userData, release);
}
