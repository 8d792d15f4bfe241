// Stream capture, graphs and stream-ordered allocation are declared but not implemented yet;
// README.md documents that they answer infinirtErrorNotSupported. They must say so honestly
// (never a silent success), record the error, touch nothing and leave the runtime usable.
#include <gtest/gtest.h>

#include "bad_input_support.h"
#include "infinirt.h"

namespace infinirt::testing {
namespace {

class NotSupportedTest : public BadInputTest {
 protected:
  void SetUp() override {
    BadInputTest::SetUp();
    ASSERT_OK(infinirtStreamCreate(&stream_));
  }
  void TearDown() override {
    EXPECT_OK(infinirtStreamDestroy(stream_));
    BadInputTest::TearDown();
  }
  infinirtStream_t stream_ = nullptr;
};

TEST_F(NotSupportedTest, StreamCaptureAnswersNotSupportedAndLeavesTheStreamUncaptured) {
  EXPECT_ANSWER(infinirtStreamBeginCapture(stream_, infinirtStreamCaptureModeGlobal),
                infinirtErrorNotSupported);
  EXPECT_ANSWER(infinirtStreamBeginCapture(stream_, infinirtStreamCaptureModeRelaxed),
                infinirtErrorNotSupported);
  infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusActive;
  EXPECT_ANSWER(infinirtStreamIsCapturing(stream_, &status), infinirtSuccess);
  EXPECT_EQ(status, infinirtStreamCaptureStatusNone);
  infinirtGraph_t graph = nullptr;
  EXPECT_ANSWER(infinirtStreamEndCapture(stream_, &graph), infinirtErrorNotSupported);
  EXPECT_EQ(graph, nullptr);
}

TEST_F(NotSupportedTest, GraphFunctionsAnswerNotSupported) {
  infinirtGraphExec_t exec = nullptr;
  EXPECT_ANSWER(infinirtGraphInstantiate(&exec, nullptr, 0), infinirtErrorNotSupported);
  EXPECT_ANSWER(infinirtGraphInstantiateWithFlags(&exec, nullptr,
                                                  infinirtGraphInstantiateFlagAutoFreeOnLaunch),
                infinirtErrorNotSupported);
  EXPECT_EQ(exec, nullptr);
  EXPECT_ANSWER(infinirtGraphLaunch(nullptr, stream_), infinirtErrorNotSupported);
  EXPECT_ANSWER(infinirtGraphExecDestroy(nullptr), infinirtErrorNotSupported);
  EXPECT_ANSWER(infinirtGraphDestroy(nullptr), infinirtErrorNotSupported);
}

TEST_F(NotSupportedTest, MallocAsyncAnswersNotSupportedAndReturnsNoPointer) {
  void* pointer = nullptr;
  EXPECT_ANSWER(infinirtMallocAsync(&pointer, 256, stream_), infinirtErrorNotSupported);
  EXPECT_EQ(pointer, nullptr);
  EXPECT_ANSWER(infinirtMallocAsync(&pointer, 256, nullptr), infinirtErrorNotSupported);
  EXPECT_EQ(pointer, nullptr);
}

TEST_F(NotSupportedTest, FreeAsyncAnswersNotSupportedAndKeepsTheAllocation) {
  void* device = nullptr;
  ASSERT_OK(infinirtMalloc(&device, 256));
  EXPECT_ANSWER(infinirtFreeAsync(device, stream_), infinirtErrorNotSupported);
  EXPECT_OK(infinirtMemset(device, 0x7F, 256));
  EXPECT_OK(infinirtFree(device));
}

}  // namespace
}  // namespace infinirt::testing
