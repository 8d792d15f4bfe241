// The C++ runtime layer's benchmarks, each beside its baseline (bench_support.cc lists the
// pairs): the caching allocator against the C API's allocations, two threads against one, and a
// recorded graph against issuing its work.
#include <benchmark/benchmark.h>

#include <chrono>
#include <memory>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "infinirt/runtime.hpp"

namespace infinirt::bench {
namespace {

// --- One allocation and its release, on one stream ---------------------------------------------

void CachedAllocateFree(benchmark::State& state) {
  Runtime* runtime = context::getRuntime();
  const auto size = static_cast<size_t>(state.range(0));
  runtime->allocateMemory(size).reset();  // the first one takes a segment from the device
  for (auto _ : state) {
    std::shared_ptr<Memory> memory = runtime->allocateMemory(size);
    benchmark::DoNotOptimize(memory->data());
  }
}

void MallocFree(benchmark::State& state) {
  const auto size = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* memory = nullptr;
    Check(state, infinirtMalloc(&memory, size), "Malloc");
    benchmark::DoNotOptimize(memory);
    infinirtFree(memory);
  }
}

void MallocFreeAsync(benchmark::State& state) {
  infinirtStream_t stream = context::getRuntime()->stream();
  const auto size = static_cast<size_t>(state.range(0));
  for (auto _ : state) {
    void* memory = nullptr;
    Check(state, infinirtMallocAsync(&memory, size, stream), "MallocAsync");
    benchmark::DoNotOptimize(memory);
    infinirtFreeAsync(memory, stream);
  }
  infinirtStreamSynchronize(stream);
}

// --- Two threads on one device, each with its runtime ------------------------------------------

// Time per allocate + free pair of `threads` threads doing 100,000 pairs each, each on its own
// runtime (and stream): the shared allocator should let them run side by side.
void ThreadsAllocateFree(benchmark::State& state) {
  const auto threads = static_cast<int>(state.range(0));
  constexpr int kPairs = 100000;
  for (auto _ : state) {
    std::vector<std::thread> workers;
    const auto start = std::chrono::steady_clock::now();
    for (int t = 0; t < threads; ++t) {
      workers.emplace_back([] {
        Runtime* runtime = context::getRuntime();
        for (int i = 0; i < kPairs; ++i) {
          std::shared_ptr<Memory> memory = runtime->allocateMemory(4096);
          benchmark::DoNotOptimize(memory->data());
        }
      });
    }
    for (std::thread& worker : workers) worker.join();
    const std::chrono::duration<double> elapsed = std::chrono::steady_clock::now() - start;
    state.SetIterationTime(elapsed.count() / (static_cast<double>(threads) * kPairs));
  }
}

// --- A recorded graph of 100 copies against issuing them ---------------------------------------

constexpr int kCopies = 100;
constexpr size_t kCopyBytes = 64;

class HundredCopies : public GraphOperator {
 public:
  HundredCopies(Memory& from, Memory& to) : from_(from), to_(to) {}
  void run(infinirtStream_t stream) override {
    for (int i = 0; i < kCopies; ++i) {
      infinirtMemcpyAsync(to_.data() + i * kCopyBytes, from_.data() + i * kCopyBytes, kCopyBytes,
                          infinirtMemcpyDeviceToDevice, stream);
    }
  }

 private:
  Memory& from_;
  Memory& to_;
};

void ExecuteRecordedCopies(benchmark::State& state) {
  Runtime* runtime = context::getRuntime();
  auto from = runtime->allocateMemory(kCopies * kCopyBytes);
  auto to = runtime->allocateMemory(kCopies * kCopyBytes);
  runtime->startGraphRecording();
  runtime->addGraphOperator(std::make_shared<HundredCopies>(*from, *to));
  std::shared_ptr<Graph> graph = runtime->stopGraphRecording();
  for (auto _ : state) {
    graph->execute();
    runtime->syncStream();
  }
}

void IssueCopies(benchmark::State& state) {
  Runtime* runtime = context::getRuntime();
  auto from = runtime->allocateMemory(kCopies * kCopyBytes);
  auto to = runtime->allocateMemory(kCopies * kCopyBytes);
  HundredCopies copies(*from, *to);
  for (auto _ : state) {
    copies.run(runtime->stream());
    runtime->syncStream();
  }
}

const bool registered = [] {
  for (int64_t bytes : {int64_t{4096}, int64_t{1} << 20}) {
    Register("Allocator/Cached/allocate+free", CachedAllocateFree)->Arg(bytes);
    Register("Allocator/Malloc+Free", MallocFree)->Arg(bytes);
    Register("Allocator/MallocAsync+FreeAsync", MallocFreeAsync)->Arg(bytes);
  }
  for (int64_t threads : {1, 2}) {
    benchmark::RegisterBenchmark("Allocator/Threads/allocate+free", ThreadsAllocateFree)
        ->Arg(threads)
        ->ArgName("threads")
        ->UseManualTime()
        ->Iterations(3);
  }
  Register("Graph/CxxExecute100Copies", ExecuteRecordedCopies)->Unit(benchmark::kMicrosecond);
  Register("Graph/CxxIssue100Copies", IssueCopies)->Unit(benchmark::kMicrosecond);
  return true;
}();

}  // namespace
}  // namespace infinirt::bench
