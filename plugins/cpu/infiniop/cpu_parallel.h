// Parallel loops for the CPU operator backend: an operator's call, run as a host function on its
// stream's worker thread, splits its rows across that thread and a pool of helper threads (one per
// further hardware thread), and returns once every part is done, so the call still occupies its
// place in stream order and nothing else.
#ifndef INFINIOP_CPU_PARALLEL_H_
#define INFINIOP_CPU_PARALLEL_H_

#include <stddef.h>

#include <functional>

namespace infinirt::infiniop_cpu {

// Calls body(begin, end) over consecutive ranges covering [0, count), in parallel where the work
// is worth it: at least `grain` items per thread (a call below 2 * grain runs on the caller
// alone). Returns when every range is done. A call made while the pool serves another (streams
// of other threads) runs on its caller alone rather than waiting.
void ParallelFor(size_t count, size_t grain, const std::function<void(size_t, size_t)>& body);

// The threads ParallelFor may use, the caller included (INFINIOP_CPU_THREADS, else the hardware
// threads the process may run on).
size_t ParallelThreads();

}  // namespace infinirt::infiniop_cpu

#endif  // INFINIOP_CPU_PARALLEL_H_
