// Many threads use their per-thread default stream and the legacy default stream at once.
// Per-thread streams are blocking streams: legacy-stream work waits for their earlier work and
// their later work waits for the legacy stream's. Each iteration depends on that order:
//   H2D copy (per-thread) -> memset of the first half (legacy) -> D2H copy (per-thread)
// so the result is "memset value, then the rest of the pattern" only if the order held.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "infinirt.h"
#include "stress_support.h"
#include "test_support.h"

namespace infinirt::testing {
namespace {

constexpr int kThreads = 16;
constexpr int kIterations = 250;
constexpr size_t kBytes = 2048;

unsigned char MemsetValue(int thread, int iteration) {
  return static_cast<unsigned char>(thread * 37 + iteration * 11 + 1);
}

// The legacy stream under both of its names.
infinirtStream_t LegacyName(int iteration) {
  return iteration % 2 ? infinirtStreamLegacy : static_cast<infinirtStream_t>(nullptr);
}

std::string Where(int thread, int iteration) {
  return "thread " + std::to_string(thread) + " iteration " + std::to_string(iteration);
}

// Checks dst = [value x half][pattern from half on]; logs and returns false otherwise.
bool CheckOrderedResult(const unsigned char* dst, int thread, int iteration, FailureLog* log) {
  const unsigned char value = MemsetValue(thread, iteration);
  for (size_t i = 0; i < kBytes; ++i) {
    const unsigned char expected = i < kBytes / 2 ? value : StressByte(thread, iteration, i);
    if (dst[i] != expected) {
      log->Record(Where(thread, iteration) + ": byte " + std::to_string(i) + " is " +
                  std::to_string(dst[i]) + ", expected " + std::to_string(expected) +
                  (i < kBytes / 2 ? " (the legacy memset)" : " (the per-thread copy)"));
      return false;
    }
  }
  return true;
}

// One iteration of the ordered sequence, asynchronous on both default streams.
bool AsyncIteration(int thread, int iteration, void* device, unsigned char* src, unsigned char* dst,
                    FailureLog* log) {
  const std::string where = Where(thread, iteration);
  FillStressPattern(src, kBytes, thread, iteration);
  std::memset(dst, 0, kBytes);
  const bool ok = STRESS_CALL(infinirtMemcpyAsync(device, src, kBytes, infinirtMemcpyHostToDevice,
                                                  infinirtStreamPerThread),
                              where, log) &&
                  STRESS_CALL(infinirtMemsetAsync(device, MemsetValue(thread, iteration),
                                                  kBytes / 2, LegacyName(iteration)),
                              where, log) &&
                  STRESS_CALL(infinirtMemcpyAsync(dst, device, kBytes, infinirtMemcpyDeviceToHost,
                                                  infinirtStreamPerThread),
                              where, log) &&
                  STRESS_CALL(infinirtStreamSynchronize(infinirtStreamPerThread), where, log);
  return ok && CheckOrderedResult(dst, thread, iteration, log);
}

// The same sequence with the synchronous calls, which run on the legacy stream.
bool SyncIteration(int thread, int iteration, void* device, unsigned char* src, unsigned char* dst,
                   FailureLog* log) {
  const std::string where = Where(thread, iteration);
  FillStressPattern(src, kBytes, thread, iteration);
  std::memset(dst, 0, kBytes);
  const bool ok =
      STRESS_CALL(infinirtMemcpyAsync(device, src, kBytes, infinirtMemcpyHostToDevice,
                                      infinirtStreamPerThread),
                  where, log) &&
      STRESS_CALL(infinirtMemset(device, MemsetValue(thread, iteration), kBytes / 2), where, log) &&
      STRESS_CALL(infinirtMemcpy(dst, device, kBytes, infinirtMemcpyDeviceToHost), where, log);
  return ok && CheckOrderedResult(dst, thread, iteration, log);
}

void RunThread(int thread, FailureLog* log, std::atomic<int>* completed) {
  const std::string where = "thread " + std::to_string(thread);
  void* device = nullptr;
  unsigned char* pinned = nullptr;
  if (!STRESS_CALL(infinirtMalloc(&device, kBytes), where, log)) return;
  if (STRESS_CALL(infinirtMallocHost(reinterpret_cast<void**>(&pinned), 2 * kBytes), where, log)) {
    for (int i = 0; i < kIterations; ++i) {
      const bool ok = i % 4 == 3 ? SyncIteration(thread, i, device, pinned, pinned + kBytes, log)
                                 : AsyncIteration(thread, i, device, pinned, pinned + kBytes, log);
      if (!ok) break;
      completed->fetch_add(1);
    }
  }
  STRESS_CALL(infinirtFreeHost(pinned), where, log);
  STRESS_CALL(infinirtFree(device), where, log);
}

TEST(DefaultStreamsStress, ManyThreadsMixPerThreadAndLegacyStreamsInOrder) {
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  FailureLog log;
  std::atomic<int> completed{0};
  Stopwatch stopwatch;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) threads.emplace_back(RunThread, t, &log, &completed);
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(log.count(), 0) << "first failure: " << log.first();
  EXPECT_EQ(completed.load(), kThreads * kIterations);
  std::printf("%d ordered iterations on default streams in %.2f s\n", completed.load(),
              stopwatch.Seconds());
}

// A thread that leaves work queued on its per-thread stream and exits: the work still runs,
// and the device synchronisation waits for it.
TEST(DefaultStreamsStress, PerThreadStreamWorkCompletesAfterItsThreadExits) {
  constexpr int kExitingThreads = 32;
  void* device = nullptr;
  ASSERT_EQ(infinirtMalloc(&device, kExitingThreads * kBytes), infinirtSuccess);
  ASSERT_EQ(infinirtMemset(device, 0, kExitingThreads * kBytes), infinirtSuccess);
  Gate gate;
  ASSERT_EQ(gate.Block(nullptr), infinirtSuccess);  // per-thread streams wait for the legacy one
  FailureLog log;
  std::vector<std::thread> threads;
  for (int t = 0; t < kExitingThreads; ++t) {
    threads.emplace_back([t, device, &log] {
      unsigned char* slice = static_cast<unsigned char*>(device) + t * kBytes;
      STRESS_CALL(infinirtMemsetAsync(slice, t + 1, kBytes, infinirtStreamPerThread),
                  "thread " + std::to_string(t), &log);
    });
  }
  for (std::thread& thread : threads) thread.join();
  gate.Open();
  ASSERT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(log.count(), 0) << "first failure: " << log.first();
  std::vector<unsigned char> result(kExitingThreads * kBytes);
  ASSERT_EQ(infinirtMemcpy(result.data(), device, result.size(), infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  for (int t = 0; t < kExitingThreads; ++t) {
    for (size_t b = 0; b < kBytes; ++b) {
      ASSERT_EQ(result[t * kBytes + b], t + 1) << "thread " << t << " byte " << b;
    }
  }
  EXPECT_EQ(infinirtFree(device), infinirtSuccess);
}

}  // namespace
}  // namespace infinirt::testing
