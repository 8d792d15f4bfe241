// A worker that runs out of work looks for more for a short while, then sleeps: an idle CPU
// backend costs no CPU time, however busy it was a moment before.
#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <thread>
#include <vector>

#include "infinirt.h"
#include "test_support.h"

namespace infinirt::testing {
namespace {

double ProcessCpuSeconds() {
  timespec now{};
  clock_gettime(CLOCK_PROCESS_CPUTIME_ID, &now);
  return static_cast<double>(now.tv_sec) + static_cast<double>(now.tv_nsec) * 1e-9;
}

void Count(void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }

TEST(IdleWorkersTest, AfterABurstOfWorkTheWorkersSleep) {
  std::vector<infinirtStream_t> streams(8);
  for (auto& stream : streams) ASSERT_OK(infinirtStreamCreate(&stream));
  std::atomic<int> calls{0};
  for (int i = 0; i < 1000; ++i) {
    ASSERT_OK(infinirtLaunchHostFunc(streams[i % streams.size()], Count, &calls));
  }
  for (auto& stream : streams) ASSERT_OK(infinirtStreamSynchronize(stream));
  EXPECT_EQ(calls.load(), 1000);

  // Workers spin for microseconds at most; this sleep outlasts that by far.
  std::this_thread::sleep_for(std::chrono::milliseconds(20));
  const double before = ProcessCpuSeconds();
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  const double spent = ProcessCpuSeconds() - before;
  // A worker spinning the whole time would spend 0.3 s; sleeping ones spend next to nothing
  // (the margin is for sanitizers' own threads).
  EXPECT_LT(spent, 0.05) << "the process used " << spent << " s of CPU while idle";
  for (auto& stream : streams) ASSERT_OK(infinirtStreamDestroy(stream));
}

}  // namespace
}  // namespace infinirt::testing
