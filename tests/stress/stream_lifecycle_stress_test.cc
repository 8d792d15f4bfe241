// 8 threads x 1,000 iterations of a whole stream lifecycle: create a stream, allocate device and
// pinned memory, copy a pattern unique to (thread, iteration) there and back through the stream,
// verify every byte, release everything. No call may fail and no byte may be wrong.
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

constexpr int kThreads = 8;
constexpr int kIterations = 1000;
constexpr int kThreadSlack = 300;

// Sizes vary with thread and iteration, from 1 byte to a little over 4 KiB.
size_t SizeOf(int thread, int iteration) {
  return 1 + static_cast<size_t>(iteration * 263 + thread * 71) % 4500;
}

// One iteration; false (with the failure logged) when anything went wrong.
bool RoundTrip(int thread, int iteration, FailureLog* log) {
  const std::string where =
      "thread " + std::to_string(thread) + " iteration " + std::to_string(iteration);
  const size_t size = SizeOf(thread, iteration);
  infinirtStream_t stream = nullptr;
  void* device = nullptr;
  unsigned char* pinned = nullptr;  // [0, size): source, [size, 2 size): destination
  if (!STRESS_CALL(infinirtStreamCreate(&stream), where, log)) return false;
  bool ok =
      STRESS_CALL(infinirtMalloc(&device, size), where, log) &&
      STRESS_CALL(infinirtMallocHost(reinterpret_cast<void**>(&pinned), 2 * size), where, log);
  if (ok) {
    FillStressPattern(pinned, size, thread, iteration);
    std::memset(pinned + size, static_cast<unsigned char>(~pinned[0]), size);
    ok = STRESS_CALL(infinirtMemcpyAsync(device, pinned, size, infinirtMemcpyHostToDevice, stream),
                     where, log) &&
         STRESS_CALL(
             infinirtMemcpyAsync(pinned + size, device, size, infinirtMemcpyDeviceToHost, stream),
             where, log) &&
         STRESS_CALL(infinirtStreamSynchronize(stream), where, log);
  }
  if (ok) {
    const size_t mismatch = FirstPatternMismatch(pinned + size, size, thread, iteration);
    if (mismatch != size) {
      log->Record(where + ": byte " + std::to_string(mismatch) + " of " + std::to_string(size) +
                  " came back wrong");
      ok = false;
    }
  }
  ok = STRESS_CALL(infinirtFreeHost(pinned), where, log) && ok;
  ok = STRESS_CALL(infinirtFree(device), where, log) && ok;
  ok = STRESS_CALL(infinirtStreamDestroy(stream), where, log) && ok;
  return ok;
}

TEST(StreamLifecycleStress, EightThreadsRunAThousandVerifiedRoundTripsEach) {
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  const int threads_before = ProcessThreadCount();
  FailureLog log;
  std::atomic<int> completed{0};
  Stopwatch stopwatch;
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &log, &completed] {
      for (int i = 0; i < kIterations; ++i) {
        if (!RoundTrip(t, i, &log)) return;
        completed.fetch_add(1);
      }
      if (infinirtPeekAtLastError() != infinirtSuccess) {
        log.Record("thread " + std::to_string(t) + " ended with last error " +
                   infinirtGetErrorName(infinirtPeekAtLastError()));
      }
    });
  }
  const int threads_during = ProcessThreadCount();
  for (std::thread& thread : threads) thread.join();
  const double seconds = stopwatch.Seconds();

  EXPECT_EQ(log.count(), 0) << "first failure: " << log.first();
  EXPECT_EQ(completed.load(), kThreads * kIterations);
  // The runtime's own threads do not grow with the streams created: only the test's 8.
  EXPECT_LE(threads_during - threads_before, kThreads + kThreadSlack);
  EXPECT_LE(ProcessThreadCount() - threads_before, kThreadSlack);
  RecordProperty("seconds", std::to_string(seconds));
  std::printf("%d round trips in %.2f s; threads before %d, during %d\n", completed.load(), seconds,
              threads_before, threads_during);
}

}  // namespace
}  // namespace infinirt::testing
