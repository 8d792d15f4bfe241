// The CPU engine's communicators across processes and hosts: Gloo over TCP moves the data, and
// the rendezvous is the store libinfiniccl lends (infinicclBackendStore).
//
// Each rank has a stream of its own on its device; a call (or a group's calls) becomes, on it: a
// wait for the point the caller's stream has reached, then, for a device whose memory is not host
// memory, copies of the inputs to pinned host memory; a host function that runs the Gloo
// operations; the copies of the outputs back; and an event the caller's stream waits for. The
// stream serialises the communicator's operations in call order, the order Gloo needs on every
// rank. A failure (a rank died, the timeout passed) is kept: every later call of the rank fails
// with it, and the work queued after it is skipped.
#ifndef INFINIRT_PLUGINS_CPU_INFINICCL_GLOO_COMM_H_
#define INFINIRT_PLUGINS_CPU_INFINICCL_GLOO_COMM_H_

#include <vector>

#include "cpu_ccl_comm.h"

namespace infiniccl_cpu {

infiniStatus_t GlooCommInitRank(int nranks, int rank, int ordinal, long timeout_ms,
                                const infinicclBackendStore* store, infinicclBackendComm_t* comm,
                                char* why, size_t why_size);

// Queues calls of communicators across processes (a group's, in call order, or one).
infiniStatus_t GlooIssue(const std::vector<Noted>& calls, char* why, size_t why_size);

// Releases a rank: after its queued work (CommDestroy), or after closing its connections so that
// its waiting work fails at once (CommAbort).
infiniStatus_t GlooRelease(CommBase* comm, bool abort);

infiniStatus_t GlooAsyncError(CommBase* comm, infiniStatus_t* status, char* why, size_t why_size);

}  // namespace infiniccl_cpu

#endif  // INFINIRT_PLUGINS_CPU_INFINICCL_GLOO_COMM_H_
