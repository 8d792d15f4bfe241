// Guard, which every API function body runs in: a failed call whose path logged nothing still
// leaves a debug line naming the function and the error, and a path that logged why gets no
// second line.
#include <gtest/gtest.h>

#include <string>

#include "api_support.h"
#include "log.h"

namespace infinirt::core::api {
namespace {

// What Guard logs while running body, at debug level.
template <class Body>
std::string LogOfGuard(Body body, infinirtError_t* answer) {
  EXPECT_TRUE(SetLogLevel("debug"));
  testing::internal::CaptureStderr();
  *answer = Guard("probe", body);
  const std::string log = testing::internal::GetCapturedStderr();
  SetLogLevel("warn");
  return log;
}

size_t CountOf(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

TEST(Guard, FailureThatLoggedNothingGetsAGenericDebugLine) {
  infinirtError_t answer;
  const std::string log =
      LogOfGuard([](const char*) { return infinirtErrorLaunchFailure; }, &answer);
  EXPECT_EQ(answer, infinirtErrorLaunchFailure);
  EXPECT_EQ(CountOf(log,
                    "[infinirt] [debug] probe: failed with infinirtErrorLaunchFailure "
                    "(launch failed)"),
            1u)
      << log;
}

TEST(Guard, FailureThatLoggedWhyGetsNoSecondLine) {
  infinirtError_t answer;
  const std::string log = LogOfGuard(
      [](const char* function) {
        return Fail(infinirtErrorInvalidValue, "{}: the reason itself", function);
      },
      &answer);
  EXPECT_EQ(answer, infinirtErrorInvalidValue);
  EXPECT_EQ(CountOf(log, "[debug]"), 1u) << log;
  EXPECT_EQ(CountOf(log, "probe: the reason itself"), 1u) << log;
}

// The flag that says "logged" is cleared after each failed call, so that it cannot hide the
// next call's missing reason.
TEST(Guard, ALoggedFailureDoesNotExplainTheNextOne) {
  infinirtError_t answer;
  LogOfGuard([](const char*) { return Fail(infinirtErrorInvalidValue, "first"); }, &answer);
  const std::string log = LogOfGuard([](const char*) { return infinirtErrorUnknown; }, &answer);
  EXPECT_EQ(CountOf(log, "probe: failed with infinirtErrorUnknown"), 1u) << log;
}

TEST(Guard, SuccessAndNotReadyLogNothing) {
  for (infinirtError_t result : {infinirtSuccess, infinirtErrorNotReady}) {
    infinirtError_t answer;
    const std::string log = LogOfGuard([result](const char*) { return result; }, &answer);
    EXPECT_EQ(answer, result);
    EXPECT_EQ(log, "");
  }
}

}  // namespace
}  // namespace infinirt::core::api
