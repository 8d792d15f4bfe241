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

// The variants that forward their arguments, generated from the list
// (tests/tools/per_thread_variants.cc).
#include "api_per_thread_forwarders.inc"

// The one variant whose stream is not a parameter.
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
