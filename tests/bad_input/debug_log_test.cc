// Every rejected call leaves a log line at debug level that names the function and the
// problem (the scenario runs with INFINIRT_LOG_LEVEL=debug), and none at the default level.
#include <gtest/gtest.h>

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

}  // namespace
