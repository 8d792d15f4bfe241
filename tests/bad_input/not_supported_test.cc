// What InfiniRT documents as not supported (docs/differences-from-cuda.md) must
// say so honestly with infinirtErrorNotSupported (never a silent success), record the error,
// change nothing and leave the runtime usable:
//   - graphs launched from a device (infinirtGraphInstantiateFlagDeviceLaunch);
//   - launching a graph with memory nodes into another capture;
//   - FreeAsync during capture of memory the capture did not allocate.
// Stream capture, graphs and stream-ordered allocation themselves are supported: they are
// tested in tests/conformance and tests/stream_ordered.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>

#include "bad_input_support.h"
#include "infinirt.h"

namespace infinirt::testing {
namespace {

constexpr size_t kBytes = 256;

std::atomic<int> g_host_calls{0};
void CountHostCall(void*) { g_host_calls.fetch_add(1); }

class NotSupportedTest : public BadInputTest {
 protected:
  void SetUp() override {
    BadInputTest::SetUp();
    g_host_calls.store(0);
    ASSERT_OK(infinirtStreamCreate(&stream_));
    ASSERT_OK(infinirtStreamCreate(&other_));
  }
  void TearDown() override {
    EXPECT_OK(infinirtDeviceSynchronize());
    EXPECT_OK(infinirtStreamDestroy(stream_));
    EXPECT_OK(infinirtStreamDestroy(other_));
    BadInputTest::TearDown();
  }

  // A graph of one host function that counts its calls.
  infinirtGraph_t CaptureHostCall() {
    EXPECT_OK(infinirtStreamBeginCapture(stream_, infinirtStreamCaptureModeGlobal));
    EXPECT_OK(infinirtLaunchHostFunc(stream_, &CountHostCall, nullptr));
    infinirtGraph_t graph = nullptr;
    EXPECT_OK(infinirtStreamEndCapture(stream_, &graph));
    return graph;
  }

  // A graph that allocates, sets and frees memory of its own.
  infinirtGraph_t CaptureGraphWithMemoryNodes() {
    EXPECT_OK(infinirtStreamBeginCapture(stream_, infinirtStreamCaptureModeGlobal));
    void* memory = nullptr;
    EXPECT_OK(infinirtMallocAsync(&memory, kBytes, stream_));
    EXPECT_OK(infinirtMemsetAsync(memory, 0x2F, kBytes, stream_));
    EXPECT_OK(infinirtFreeAsync(memory, stream_));
    infinirtGraph_t graph = nullptr;
    EXPECT_OK(infinirtStreamEndCapture(stream_, &graph));
    return graph;
  }

  infinirtStream_t stream_ = nullptr;
  infinirtStream_t other_ = nullptr;
};

TEST_F(NotSupportedTest, DeviceLaunchGraphsAreNotSupportedAndCreateNoExec) {
  infinirtGraph_t graph = CaptureHostCall();
  ASSERT_NE(graph, nullptr);
  for (unsigned long long flags :
       {static_cast<unsigned long long>(infinirtGraphInstantiateFlagDeviceLaunch),
        static_cast<unsigned long long>(infinirtGraphInstantiateFlagDeviceLaunch |
                                        infinirtGraphInstantiateFlagAutoFreeOnLaunch),
        static_cast<unsigned long long>(infinirtGraphInstantiateFlagDeviceLaunch |
                                        infinirtGraphInstantiateFlagUpload)}) {
    SCOPED_TRACE(::testing::Message() << "flags " << flags);
    infinirtGraphExec_t exec = nullptr;
    EXPECT_ANSWER(infinirtGraphInstantiate(&exec, graph, flags), infinirtErrorNotSupported);
    EXPECT_EQ(exec, nullptr);
    EXPECT_ANSWER(infinirtGraphInstantiateWithFlags(&exec, graph, flags),
                  infinirtErrorNotSupported);
    EXPECT_EQ(exec, nullptr);
  }
  // The graph itself is fine: without the flag it instantiates and runs.
  infinirtGraphExec_t exec = nullptr;
  ASSERT_OK(infinirtGraphInstantiate(&exec, graph, 0));
  ASSERT_OK(infinirtGraphLaunch(exec, stream_));
  ASSERT_OK(infinirtStreamSynchronize(stream_));
  EXPECT_EQ(g_host_calls.load(), 1);
  EXPECT_OK(infinirtGraphExecDestroy(exec));
  EXPECT_OK(infinirtGraphDestroy(graph));
}

TEST_F(NotSupportedTest, DeviceLaunchGraphWithMemoryNodesLeavesRoomForItsOneExec) {
  infinirtGraph_t graph = CaptureGraphWithMemoryNodes();
  ASSERT_NE(graph, nullptr);
  infinirtGraphExec_t exec = nullptr;
  EXPECT_ANSWER(infinirtGraphInstantiate(&exec, graph, infinirtGraphInstantiateFlagDeviceLaunch),
                infinirtErrorNotSupported);
  // The refused instantiation does not count as the graph's one exec.
  EXPECT_ANSWER(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  EXPECT_OK(infinirtGraphLaunch(exec, stream_));
  EXPECT_OK(infinirtStreamSynchronize(stream_));
  EXPECT_OK(infinirtGraphExecDestroy(exec));
  EXPECT_OK(infinirtGraphDestroy(graph));
}

// The launch is refused; the capture it was issued to goes on and ends normally.
TEST_F(NotSupportedTest, LaunchingAGraphWithMemoryNodesIntoACaptureIsNotSupported) {
  infinirtGraph_t graph = CaptureGraphWithMemoryNodes();
  ASSERT_NE(graph, nullptr);
  infinirtGraphExec_t exec = nullptr;
  ASSERT_OK(infinirtGraphInstantiate(&exec, graph, 0));
  ASSERT_OK(infinirtStreamBeginCapture(other_, infinirtStreamCaptureModeGlobal));
  const infinirtError_t answer = infinirtGraphLaunch(exec, other_);
  infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusNone;
  EXPECT_OK(infinirtStreamIsCapturing(other_, &status));
  EXPECT_EQ(status, infinirtStreamCaptureStatusActive);
  infinirtGraph_t outer = nullptr;
  EXPECT_OK(infinirtStreamEndCapture(other_, &outer));
  EXPECT_ANSWER(answer, infinirtErrorNotSupported);
  // Outside a capture the exec launches.
  EXPECT_OK(infinirtGraphLaunch(exec, other_));
  EXPECT_OK(infinirtStreamSynchronize(other_));
  EXPECT_OK(infinirtGraphDestroy(outer));
  EXPECT_OK(infinirtGraphExecDestroy(exec));
  EXPECT_OK(infinirtGraphDestroy(graph));
}

TEST_F(NotSupportedTest, FreeAsyncDuringCaptureOfMemoryAllocatedOutsideIsNotSupported) {
  void* stream_ordered = nullptr;
  ASSERT_OK(infinirtMallocAsync(&stream_ordered, kBytes, stream_));
  ASSERT_OK(infinirtMemsetAsync(stream_ordered, 0x71, kBytes, stream_));
  ASSERT_OK(infinirtStreamSynchronize(stream_));
  ASSERT_OK(infinirtStreamBeginCapture(stream_, infinirtStreamCaptureModeGlobal));
  const infinirtError_t answer = infinirtFreeAsync(stream_ordered, stream_);
  infinirtGraph_t graph = nullptr;
  const infinirtError_t end_answer = infinirtStreamEndCapture(stream_, &graph);
  EXPECT_TRUE(end_answer == infinirtSuccess || end_answer == infinirtErrorStreamCaptureInvalidated)
      << ErrorText(end_answer);
  if (end_answer == infinirtSuccess) {
    EXPECT_ANSWER(answer, infinirtErrorNotSupported);
  } else {
    EXPECT_EQ(ErrorText(answer), ErrorText(infinirtErrorNotSupported));
    infinirtGetLastError();
  }
  if (graph != nullptr) {
    EXPECT_OK(infinirtGraphDestroy(graph));
  }
  // The memory was not freed.
  unsigned char bytes[kBytes];
  ASSERT_OK(
      infinirtMemcpyAsync(bytes, stream_ordered, kBytes, infinirtMemcpyDeviceToHost, stream_));
  ASSERT_OK(infinirtStreamSynchronize(stream_));
  for (unsigned char byte : bytes) ASSERT_EQ(byte, 0x71);
  EXPECT_OK(infinirtFreeAsync(stream_ordered, stream_));
}

}  // namespace
}  // namespace infinirt::testing
