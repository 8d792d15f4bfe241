// The CPU engine built without Gloo: no communicators across processes, said as such.
#include "gloo_comm.h"

namespace infiniccl_cpu {

infiniStatus_t GlooCommInitRank(int, int, int, long, const infinicclBackendStore*,
                                infinicclBackendComm_t*, char* why, size_t why_size) {
  Say(why, why_size,
      "this libinfiniccl_cpu.so was built without Gloo (libgloo-dev): no communicators across "
      "processes");
  return INFINI_STATUS_NOT_IMPLEMENTED;
}

// Never called: no communicator across processes is ever made.
infiniStatus_t GlooIssue(const std::vector<Noted>&, char*, size_t) {
  return INFINI_STATUS_INTERNAL_ERROR;
}
infiniStatus_t GlooRelease(CommBase*, bool) { return INFINI_STATUS_INTERNAL_ERROR; }
infiniStatus_t GlooAsyncError(CommBase*, infiniStatus_t*, char*, size_t) {
  return INFINI_STATUS_INTERNAL_ERROR;
}

}  // namespace infiniccl_cpu
