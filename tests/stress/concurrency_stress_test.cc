// Concurrency: infinirtInit racing from 16 threads; many threads creating, using and destroying
// streams, events, graphs and allocations at once; a capture in one thread while others work.
// CI runs these (with the whole suite) under ThreadSanitizer: scripts/test.sh --tsan.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "infinirt.h"
#include "stress_support.h"
#include "test_support.h"

namespace {

using infinirt::testing::FailureLog;

// Starts `count` threads that wait on one flag, so that their first calls really race.
template <class Body>
void RunTogether(int count, Body body) {
  std::atomic<bool> go{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < count; ++t) {
    threads.emplace_back([&, t] {
      while (!go.load()) std::this_thread::yield();
      body(t);
    });
  }
  go = true;
  for (auto& thread : threads) thread.join();
}

TEST(Concurrency, InitRacingFromSixteenThreadsInitialisesOnce) {
  for (int round = 0; round < 10; ++round) {
    ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
    std::atomic<int> failures{0};
    std::vector<int> counts(16, -1);
    RunTogether(16, [&](int t) {
      if (infinirtInit() != infinirtSuccess) failures.fetch_add(1);
      if (infinirtGetDeviceCount(&counts[t]) != infinirtSuccess) failures.fetch_add(1);
    });
    EXPECT_EQ(failures.load(), 0);
    for (int count : counts) EXPECT_EQ(count, counts[0]);
    int backends = 0;
    ASSERT_EQ(infinirtGetBackendCount(&backends), infinirtSuccess);
    int loaded = 0;
    for (int i = 0; i < backends; ++i) {
      infinirtBackendProp prop{};
      ASSERT_EQ(infinirtGetBackendProperties(&prop, i), infinirtSuccess);
      loaded += prop.status == infinirtBackendLoaded && std::string(prop.name) == "cpu";
    }
    EXPECT_EQ(loaded, 1) << "one runtime, the CPU backend loaded once";
  }
}

void CountRun(void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }

// One thread's cycle: a stream, an event, memory, a copy ordered through the event into a second
// stream, and a graph captured in this thread and launched three times; everything destroyed.
bool ObjectCycle(int thread, int iteration, FailureLog* log) {
  const std::string where = "thread " + std::to_string(thread) + " #" + std::to_string(iteration);
  constexpr size_t kBytes = 1024;
  infinirtStream_t first = nullptr, second = nullptr;
  infinirtEvent_t written = nullptr;
  infinirtGraph_t graph = nullptr;
  infinirtGraphExec_t exec = nullptr;
  void* device = nullptr;
  unsigned char in[kBytes], out[kBytes];
  infinirt::testing::FillStressPattern(in, kBytes, thread, iteration);
  std::atomic<int> runs{0};
  bool ok =
      STRESS_CALL(infinirtStreamCreateWithFlags(&first, infinirtStreamNonBlocking), where, log) &&
      STRESS_CALL(infinirtStreamCreateWithFlags(&second, infinirtStreamNonBlocking), where, log) &&
      STRESS_CALL(infinirtEventCreateWithFlags(&written, infinirtEventDisableTiming), where, log) &&
      STRESS_CALL(infinirtMalloc(&device, kBytes), where, log) &&
      STRESS_CALL(infinirtMemcpyAsync(device, in, kBytes, infinirtMemcpyHostToDevice, first), where,
                  log) &&
      STRESS_CALL(infinirtEventRecord(written, first), where, log) &&
      STRESS_CALL(infinirtStreamWaitEvent(second, written, 0), where, log) &&
      STRESS_CALL(infinirtMemcpyAsync(out, device, kBytes, infinirtMemcpyDeviceToHost, second),
                  where, log) &&
      STRESS_CALL(infinirtStreamSynchronize(second), where, log) &&
      STRESS_CALL(infinirtStreamBeginCapture(first, infinirtStreamCaptureModeThreadLocal), where,
                  log) &&
      STRESS_CALL(infinirtMemsetAsync(device, thread, kBytes, first), where, log) &&
      STRESS_CALL(infinirtLaunchHostFunc(first, CountRun, &runs), where, log) &&
      STRESS_CALL(infinirtStreamEndCapture(first, &graph), where, log) &&
      STRESS_CALL(infinirtGraphInstantiate(&exec, graph, 0), where, log);
  for (int launch = 0; ok && launch < 3; ++launch) {
    ok = STRESS_CALL(infinirtGraphLaunch(exec, launch % 2 ? first : second), where, log);
  }
  // Not DeviceSynchronize: it is refused while any stream of the device captures (as in CUDA),
  // and other threads capture all the time here.
  ok = ok && STRESS_CALL(infinirtStreamSynchronize(first), where, log) &&
       STRESS_CALL(infinirtStreamSynchronize(second), where, log);
  if (ok && std::memcmp(in, out, kBytes) != 0) {
    log->Record(where + ": the copy through the event arrived wrong");
    ok = false;
  }
  if (ok && runs.load() != 3) {
    log->Record(where + ": the graph's host function ran " + std::to_string(runs.load()) + "x");
    ok = false;
  }
  if (exec) ok &= STRESS_CALL(infinirtGraphExecDestroy(exec), where, log);
  if (graph) ok &= STRESS_CALL(infinirtGraphDestroy(graph), where, log);
  if (device) ok &= STRESS_CALL(infinirtFree(device), where, log);
  if (written) ok &= STRESS_CALL(infinirtEventDestroy(written), where, log);
  if (second) ok &= STRESS_CALL(infinirtStreamDestroy(second), where, log);
  if (first) ok &= STRESS_CALL(infinirtStreamDestroy(first), where, log);
  return ok;
}

TEST(Concurrency, EightThreadsCreateUseAndDestroyStreamsEventsGraphsAndMemory) {
  FailureLog log;
  RunTogether(8, [&](int t) {
    // Each thread captures in ThreadLocal mode and works in Relaxed mode, so that one
    // thread's capture does not refuse another thread's allocations (as in CUDA).
    infinirtStreamCaptureMode mode = infinirtStreamCaptureModeRelaxed;
    infinirtThreadExchangeStreamCaptureMode(&mode);
    for (int i = 0; i < 100 && ObjectCycle(t, i, &log); ++i) {
    }
  });
  EXPECT_EQ(log.count(), 0) << log.first();
}

TEST(Concurrency, AGlobalCaptureInOneThreadWhileRelaxedThreadsAllocateAndCopy) {
  FailureLog log;
  std::atomic<bool> capturing_done{false};
  std::atomic<int> captures{0};
  RunTogether(5, [&](int t) {
    if (t == 0) {  // the capturing thread
      infinirtStream_t stream = nullptr;
      if (!STRESS_CALL(infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking),
                       "capturer", &log)) {
        capturing_done = true;
        return;
      }
      std::atomic<int> runs{0};
      for (int i = 0; i < 200; ++i) {
        infinirtGraph_t graph = nullptr;
        const bool ok =
            STRESS_CALL(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal),
                        "capturer", &log) &&
            STRESS_CALL(infinirtLaunchHostFunc(stream, CountRun, &runs), "capturer", &log) &&
            STRESS_CALL(infinirtStreamEndCapture(stream, &graph), "capturer", &log);
        if (graph) infinirtGraphDestroy(graph);
        if (!ok) break;
        captures.fetch_add(1);
      }
      infinirtStreamDestroy(stream);
      capturing_done = true;
      return;
    }
    infinirtStreamCaptureMode mode = infinirtStreamCaptureModeRelaxed;
    infinirtThreadExchangeStreamCaptureMode(&mode);
    for (int i = 0; !capturing_done.load() || i < 10; ++i) {
      void* device = nullptr;
      unsigned char in[256], out[256];
      infinirt::testing::FillStressPattern(in, sizeof in, t, i);
      const std::string where = "worker " + std::to_string(t);
      if (!STRESS_CALL(infinirtMalloc(&device, sizeof in), where, &log)) break;
      STRESS_CALL(infinirtMemcpy(device, in, sizeof in, infinirtMemcpyHostToDevice), where, &log);
      STRESS_CALL(infinirtMemcpy(out, device, sizeof in, infinirtMemcpyDeviceToHost), where, &log);
      if (std::memcmp(in, out, sizeof in) != 0) log.Record(where + ": data arrived wrong");
      STRESS_CALL(infinirtFree(device), where, &log);
    }
  });
  EXPECT_EQ(log.count(), 0) << log.first();
  EXPECT_EQ(captures.load(), 200);
}

}  // namespace
