// What the benchmarks share: the CPU plugin loaded a second time, privately, for the
// "called directly through its plugin table" baselines, and the list of comparisons whose
// ratios the report prints.
#ifndef INFINIRT_BENCH_BENCH_SUPPORT_H_
#define INFINIRT_BENCH_BENCH_SUPPORT_H_

#include <string>
#include <vector>

#include "infinirt_plugin.h"

namespace infinirt::bench {

// The CPU plugin's table from a private copy of libinfinirt_cpu.so (copied to a temporary file,
// so that the dynamic loader maps a second instance, independent of the one the core loads),
// initialised. Null, with a message on stderr, if that fails.
const infinirtPluginTable* DirectCpuTable();

// A comparison the report prints: the median of `measured` over the median of `baseline`.
struct Comparison {
  std::string measured;  // benchmark name, as Google Benchmark reports it
  std::string baseline;
  std::string target;  // the target, in words, for the table
  enum Kind {
    kAddedNanoseconds,  // target on measured - baseline, in ns per iteration
    kTimeRatio,         // target on measured / baseline (times)
    kThroughputRatio    // target on baseline / measured (throughput)
  } kind;
  double limit;  // the target's number: at most (ns, time ratio) or at least (throughput)
};

const std::vector<Comparison>& Comparisons();

}  // namespace infinirt::bench

#endif  // INFINIRT_BENCH_BENCH_SUPPORT_H_
