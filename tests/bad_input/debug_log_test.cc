// Every rejected call leaves a log line at debug level that names the function and the
// problem (the scenario runs with INFINIRT_LOG_LEVEL=debug), and none at the default level.
#include <gtest/gtest.h>

#include <cstddef>
#include <string>

#include "infinirt.h"

namespace {

std::string StderrOf(void (*calls)()) {
  testing::internal::CaptureStderr();
  calls();
  return testing::internal::GetCapturedStderr();
}

void RejectedCalls() {
  infinirtMalloc(nullptr, 16);
  infinirtSetDevice(-1);
  infinirtStreamDestroy(nullptr);
  infinirtMemcpy(nullptr, nullptr, 1, static_cast<infinirtMemcpyKind>(7));
}

TEST(DebugLog, EveryRejectedCallLogsWhy) {
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  const std::string log = StderrOf(RejectedCalls);
  EXPECT_NE(log.find("[infinirt] [debug] infinirtMalloc: devPtr is NULL"), std::string::npos)
      << log;
  EXPECT_NE(log.find("[infinirt] [debug] infinirtSetDevice: device -1 is not in [0, "),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("[infinirt] [debug] infinirtStreamDestroy: "), std::string::npos) << log;
  EXPECT_NE(log.find("is not a live stream"), std::string::npos) << log;
  EXPECT_NE(log.find("[infinirt] [debug] infinirtMemcpy: 7 is not a memcpy kind"),
            std::string::npos)
      << log;
  infinirtGetLastError();
}

// Calls the core passes on and the backend refuses; they logged nothing before.
void CallsTheBackendRefuses() {
  infinirtEvent_t start = nullptr, end = nullptr;
  infinirtEventCreate(&start);
  infinirtEventCreate(&end);
  float ms = 0;
  infinirtEventElapsedTime(&ms, start, end);  // neither was recorded
  void* pointer = nullptr;
  infinirtMalloc(&pointer, size_t{1} << 62);  // more than the address space
  infinirtEventDestroy(start);
  infinirtEventDestroy(end);
}

TEST(DebugLog, CallsTheBackendRefusesLogTheBackendAndItsAnswer) {
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  const std::string log = StderrOf(CallsTheBackendRefuses);
  EXPECT_NE(log.find("[infinirt] [debug] infinirtEventElapsedTime: backend 'cpu' answered "
                     "infinirtErrorInvalidResourceHandle (invalid resource handle): the start or "
                     "the end event was never recorded"),
            std::string::npos)
      << log;
  EXPECT_NE(log.find("[infinirt] [debug] infinirtMalloc: backend 'cpu' answered "
                     "infinirtErrorMemoryAllocation (out of memory)"),
            std::string::npos)
      << log;
  infinirtGetLastError();
}

// The core tells an untimed event from an unrecorded one itself.
void ElapsedTimeOfAnUntimedEvent() {
  infinirtEvent_t timed = nullptr, untimed = nullptr;
  infinirtEventCreate(&timed);
  infinirtEventCreateWithFlags(&untimed, infinirtEventDisableTiming);
  infinirtEventRecord(timed, nullptr);
  infinirtEventRecord(untimed, nullptr);
  infinirtEventSynchronize(untimed);
  float ms = 0;
  infinirtEventElapsedTime(&ms, timed, untimed);
  infinirtEventDestroy(timed);
  infinirtEventDestroy(untimed);
}

TEST(DebugLog, ElapsedTimeNamesTheEventCreatedWithoutTiming) {
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  const std::string log = StderrOf(ElapsedTimeOfAnUntimedEvent);
  EXPECT_NE(log.find("[infinirt] [debug] infinirtEventElapsedTime: the end event was created "
                     "with infinirtEventDisableTiming"),
            std::string::npos)
      << log;
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidResourceHandle);
}

}  // namespace
