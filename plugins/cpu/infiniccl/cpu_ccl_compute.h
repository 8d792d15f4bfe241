// The data movement of the CPU collective engine, on host memory: what one matched operation does
// once every rank has reached it. Every rank's buffers are host memory (CPU devices).
#ifndef INFINIRT_PLUGINS_CPU_INFINICCL_CPU_CCL_COMPUTE_H_
#define INFINIRT_PLUGINS_CPU_INFINICCL_CPU_CCL_COMPUTE_H_

#include <cstddef>
#include <vector>

#include "infiniccl_backend.h"

namespace infiniccl_cpu {

// One rank's part of an operation.
struct Part {
  int rank = 0;
  const void* sendbuf = nullptr;
  void* recvbuf = nullptr;
};

// What the operation does; parts are in rank order (for Send/Recv: the sender, then the
// receiver).
struct Work {
  infinicclCallKind_t kind = INFINICCL_CALL_AllReduce;
  size_t count = 0;
  infiniDtype_t dtype = INFINI_DTYPE_F32;
  infinicclReduceOp_t op = INFINICCL_SUM;
  int root = 0;
  std::vector<Part> parts;
};

size_t ElementSize(infiniDtype_t dtype);

// Moves (and reduces) elements [begin, end) of an operation's per-rank count: of every buffer for
// AllReduce, Reduce, Broadcast and Send; of every rank's chunk for AllGather and ReduceScatter.
// Disjoint ranges may run at the same time. Safe in place: each block of elements is read from
// every source before any destination of it is written.
void Compute(const Work& work, size_t begin, size_t end);

// Elementwise op over several sources into several destinations (at element offsets), for a
// reducible dtype. AVG divides by the number of sources.
void Reduce(infiniDtype_t dtype, infinicclReduceOp_t op, const std::vector<const void*>& sources,
            size_t src_offset, const std::vector<void*>& destinations, size_t dst_offset,
            size_t count);

// AVG in steps, for engines that can only sum (Gloo): the dtype the sum is taken in (an integer's
// 64-bit accumulator, so that AVG matches Compute's; a float's own type), the elements widened to
// it, and the average stored from the sum.
infiniDtype_t SumDtype(infiniDtype_t dtype);
void Widen(infiniDtype_t dtype, const void* source, void* wide, size_t count);
void StoreAverage(infiniDtype_t dtype, const void* sum, void* destination, size_t count, int ranks);

}  // namespace infiniccl_cpu

#endif  // INFINIRT_PLUGINS_CPU_INFINICCL_CPU_CCL_COMPUTE_H_
