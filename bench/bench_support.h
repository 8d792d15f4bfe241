// What the benchmarks share: the CPU plugin loaded a second time, privately, for the
// "called directly through its plugin table" baselines, and the list of comparisons whose
// ratios the report prints.
#ifndef INFINIRT_BENCH_BENCH_SUPPORT_H_
#define INFINIRT_BENCH_BENCH_SUPPORT_H_

#include <benchmark/benchmark.h>

#include <string>
#include <vector>

#include "infinirt.h"
#include "infinirt_plugin.h"

namespace infinirt::bench {

// The CPU plugin's table from a private copy of libinfinirt_cpu.so (copied to a temporary file,
// so that the dynamic loader maps a second instance, independent of the one the core loads),
// initialised. Null, with a message on stderr, if that fails.
const infinirtPluginTable* DirectCpuTable();

// A comparison the report prints: the median of `measured` over the median of `baseline`.
struct Comparison {
  std::string measured;  // benchmark name, as Google Benchmark reports it
  std::string baseline;  // empty for kAtMostNanoseconds
  std::string target;    // the target, in words, for the table
  enum Kind {
    kAddedNanoseconds,  // target on measured - baseline, in ns per iteration
    kTimeRatio,         // target on measured / baseline (times)
    kThroughputRatio,   // target on baseline / measured (throughput)
    kAtMostNanoseconds  // target on measured alone, in ns per iteration (no baseline)
  } kind;
  double limit;  // the target's number: at most (ns, time ratio) or at least (throughput)
};

const std::vector<Comparison>& Comparisons();

// Benchmarks of the public API on device 0, whatever its backend (runtime_bench.cc): a query of
// an idle stream, of a completed event, a synchronous copy of state.range(0) bytes in `kind`'s
// direction, and a 64-byte MemcpyAsync to the device with the StreamSynchronize after it.
void ApiStreamQuery(benchmark::State& state);
void ApiEventQuery(benchmark::State& state);
void ApiMemcpy(benchmark::State& state, infinirtMemcpyKind kind);
void ApiRoundTrip(benchmark::State& state);

// Skips the running benchmark, naming the call and its error, unless error is success.
inline void Check(benchmark::State& state, infinirtError_t error, const char* what) {
  if (error != infinirtSuccess) {
    state.SkipWithError((std::string(what) + ": " + infinirtGetErrorName(error)).c_str());
  }
}

// Registers fn under name, measuring wall-clock time (the work of a stream runs on other threads).
template <class Fn>
benchmark::internal::Benchmark* Register(const std::string& name, Fn fn) {
  return benchmark::RegisterBenchmark(name.c_str(), fn)->UseRealTime();
}

}  // namespace infinirt::bench

#endif  // INFINIRT_BENCH_BENCH_SUPPORT_H_
