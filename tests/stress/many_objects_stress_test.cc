// 10,000 live streams and 10,000 live events at once. The CPU backend runs streams on a fixed
// pool of worker threads, so the process's thread count must not grow with them, and the work
// must finish in bounded time with the right results.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "infinirt.h"
#include "stress_support.h"
#include "test_support.h"

namespace infinirt::testing {
namespace {

constexpr int kObjects = 10000;
constexpr size_t kSlice = 64;  // bytes of device memory each stream sets
constexpr int kThreadSlack = 300;
constexpr double kTimeBudgetSeconds = 60.0;

unsigned char SliceValue(int i) { return static_cast<unsigned char>(1 + i % 251); }

class ManyObjectsStress : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(infinirtInit());
    threads_before_ = ProcessThreadCount();
    ASSERT_GT(threads_before_, 0);
    ASSERT_OK(infinirtMalloc(&device_, kObjects * kSlice));
    ASSERT_OK(infinirtMallocHost(reinterpret_cast<void**>(&result_), kObjects * kSlice));
  }

  void TearDown() override {
    EXPECT_OK(infinirtFree(device_));
    EXPECT_OK(infinirtFreeHost(result_));
  }

  // Half of the streams are blocking, half non-blocking; every event keeps timing except a
  // quarter.
  void CreateAll() {
    streams_.assign(kObjects, nullptr);
    events_.assign(kObjects, nullptr);
    for (int i = 0; i < kObjects; ++i) {
      const unsigned int stream_flags = i % 2 ? infinirtStreamNonBlocking : infinirtStreamDefault;
      ASSERT_OK(infinirtStreamCreateWithFlags(&streams_[i], stream_flags));
      const unsigned int event_flags = i % 4 == 3 ? infinirtEventDisableTiming : 0;
      ASSERT_OK(infinirtEventCreateWithFlags(&events_[i], event_flags));
    }
  }

  void DestroyAll() {
    for (int i = 0; i < kObjects; ++i) {
      EXPECT_OK(infinirtStreamDestroy(streams_[i]));
      EXPECT_OK(infinirtEventDestroy(events_[i]));
    }
  }

  unsigned char* slice(int i) { return static_cast<unsigned char*>(device_) + i * kSlice; }

  // The index of the first slice of the result that does not hold `value(i)`, or kObjects.
  template <class Value>
  int FirstWrongSlice(Value value) {
    EXPECT_OK(infinirtMemcpy(result_, device_, kObjects * kSlice, infinirtMemcpyDeviceToHost));
    for (int i = 0; i < kObjects; ++i) {
      for (size_t b = 0; b < kSlice; ++b) {
        if (result_[i * kSlice + b] != value(i)) return i;
      }
    }
    return kObjects;
  }

  void ExpectThreadsBounded(const char* when) {
    const int now = ProcessThreadCount();
    EXPECT_LE(std::abs(now - threads_before_), kThreadSlack)
        << when << ": " << threads_before_ << " threads before, " << now << " now";
  }

  int threads_before_ = 0;
  void* device_ = nullptr;
  unsigned char* result_ = nullptr;
  std::vector<infinirtStream_t> streams_;
  std::vector<infinirtEvent_t> events_;
};

TEST_F(ManyObjectsStress, TenThousandStreamsAndEventsRunWithABoundedNumberOfThreads) {
  Stopwatch stopwatch;
  CreateAll();
  ASSERT_FALSE(HasFatalFailure());
  ExpectThreadsBounded("after creating every stream and event");
  for (int i = 0; i < kObjects; ++i) {
    ASSERT_OK(infinirtMemsetAsync(slice(i), SliceValue(i), kSlice, streams_[i]));
    ASSERT_OK(infinirtEventRecord(events_[i], streams_[i]));
  }
  ExpectThreadsBounded("with work queued on every stream");
  for (int i = 0; i < kObjects; ++i) {
    ASSERT_OK(infinirtEventSynchronize(events_[i]));
    ASSERT_OK(infinirtEventQuery(events_[i]));
  }
  // Elapsed time between two completed timing events of different streams is defined.
  float ms = -1;
  EXPECT_OK(infinirtEventElapsedTime(&ms, events_[0], events_[kObjects - 2]));
  ASSERT_OK(infinirtDeviceSynchronize());
  for (int i = 0; i < kObjects; ++i) ASSERT_OK(infinirtStreamQuery(streams_[i]));
  EXPECT_EQ(FirstWrongSlice(SliceValue), kObjects);
  ExpectThreadsBounded("after the work");
  DestroyAll();
  ExpectThreadsBounded("after destroying everything");
  const double seconds = stopwatch.Seconds();
  EXPECT_LT(seconds, kTimeBudgetSeconds);
  std::printf("10,000 streams + 10,000 events: %.2f s; threads before %d, after %d\n", seconds,
              threads_before_, ProcessThreadCount());
}

// Stream i waits for event i-1 and then copies slice i-1 into slice i: a chain of 10,000
// cross-stream dependencies, queued while its head is held, so every stream parks before the
// chain runs. Every slice ends up with the head's value only if each copy ran after the previous.
TEST_F(ManyObjectsStress, ChainOfTenThousandCrossStreamEventWaitsRunsInOrder) {
  Stopwatch stopwatch;
  CreateAll();
  ASSERT_FALSE(HasFatalFailure());
  constexpr unsigned char kHead = 0xA5;
  ASSERT_OK(infinirtMemset(device_, 0, kObjects * kSlice));
  Gate gate;
  ASSERT_OK(gate.Block(streams_[0]));
  ASSERT_OK(infinirtMemsetAsync(slice(0), kHead, kSlice, streams_[0]));
  ASSERT_OK(infinirtEventRecord(events_[0], streams_[0]));
  for (int i = 1; i < kObjects; ++i) {
    ASSERT_OK(infinirtStreamWaitEvent(streams_[i], events_[i - 1], 0));
    ASSERT_OK(infinirtMemcpyAsync(slice(i), slice(i - 1), kSlice, infinirtMemcpyDeviceToDevice,
                                  streams_[i]));
    ASSERT_OK(infinirtEventRecord(events_[i], streams_[i]));
  }
  EXPECT_EQ(infinirtStreamQuery(streams_[kObjects - 1]), infinirtErrorNotReady);
  EXPECT_EQ(infinirtEventQuery(events_[kObjects - 1]), infinirtErrorNotReady);
  ExpectThreadsBounded("with 10,000 parked streams");
  gate.Open();
  ASSERT_OK(infinirtEventSynchronize(events_[kObjects - 1]));
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(FirstWrongSlice([](int) { return kHead; }), kObjects);
  DestroyAll();
  ExpectThreadsBounded("after destroying everything");
  const double seconds = stopwatch.Seconds();
  EXPECT_LT(seconds, kTimeBudgetSeconds);
  std::printf("chain of 10,000 event waits: %.2f s\n", seconds);
}

// Every stream and event is destroyed while its work is still held back; destruction returns
// at once, and the queued work still runs to completion afterwards.
TEST_F(ManyObjectsStress, TenThousandStreamsDestroyedWithPendingWorkStillComplete) {
  Stopwatch stopwatch;
  CreateAll();
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_OK(infinirtMemset(device_, 0, kObjects * kSlice));
  infinirtEvent_t held = nullptr;
  ASSERT_OK(infinirtEventCreate(&held));
  infinirtStream_t holder = nullptr;
  ASSERT_OK(infinirtStreamCreateWithFlags(&holder, infinirtStreamNonBlocking));
  Gate gate;
  ASSERT_OK(gate.Block(holder));
  ASSERT_OK(infinirtEventRecord(held, holder));
  for (int i = 0; i < kObjects; ++i) {
    ASSERT_OK(infinirtStreamWaitEvent(streams_[i], held, 0));
    ASSERT_OK(infinirtMemsetAsync(slice(i), SliceValue(i), kSlice, streams_[i]));
    ASSERT_OK(infinirtEventRecord(events_[i], streams_[i]));
  }
  DestroyAll();
  EXPECT_EQ(infinirtEventQuery(held), infinirtErrorNotReady) << "the work was not held back";
  ExpectThreadsBounded("with 10,000 destroyed streams still holding work");
  gate.Open();
  ASSERT_OK(infinirtDeviceSynchronize());
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(FirstWrongSlice(SliceValue), kObjects);
  EXPECT_OK(infinirtStreamDestroy(holder));
  EXPECT_OK(infinirtEventDestroy(held));
  ExpectThreadsBounded("after the work");
  const double seconds = stopwatch.Seconds();
  EXPECT_LT(seconds, kTimeBudgetSeconds);
  std::printf("10,000 streams destroyed with pending work: %.2f s\n", seconds);
}

}  // namespace
}  // namespace infinirt::testing
