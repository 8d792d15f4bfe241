// Stream-ordered allocation during capture (S24, S38, docs/capture-and-graphs.md):
// MallocAsync and FreeAsync become allocation and free nodes; the pointer MallocAsync returns
// during capture is what the graph's work uses at every launch. Memory a graph allocates and
// does not free stays live after a launch until the program frees it, and relaunching before
// then is infinirtErrorInvalidValue unless the exec was instantiated with
// infinirtGraphInstantiateFlagAutoFreeOnLaunch. A graph with memory nodes has one exec at a
// time. FreeAsync during capture accepts only memory allocated by the same capture.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <vector>

#include "infinirt.h"
#include "stream_ordered_support.h"

namespace infinirt::testing {
namespace {

constexpr size_t kBytes = 4096;

class GraphMemoryTest : public StreamOrderedTest {
 protected:
  void TearDown() override {
    for (infinirtGraphExec_t exec : execs_) EXPECT_OK(infinirtGraphExecDestroy(exec));
    for (infinirtGraph_t graph : graphs_) EXPECT_OK(infinirtGraphDestroy(graph));
    StreamOrderedTest::TearDown();
  }

  void BeginCapture() {
    ASSERT_OK(infinirtStreamBeginCapture(a_, infinirtStreamCaptureModeGlobal));
  }

  // Ends the capture of a_; the graph is destroyed at the end of the test.
  infinirtGraph_t EndCapture() {
    infinirtGraph_t graph = nullptr;
    EXPECT_OK(infinirtStreamEndCapture(a_, &graph));
    EXPECT_NE(graph, nullptr);
    if (graph != nullptr) graphs_.push_back(graph);
    return graph;
  }

  // The exec is destroyed at the end of the test unless the test destroys it (Forget).
  infinirtGraphExec_t Instantiate(infinirtGraph_t graph, unsigned long long flags = 0) {
    infinirtGraphExec_t exec = nullptr;
    EXPECT_OK(infinirtGraphInstantiate(&exec, graph, flags));
    EXPECT_NE(exec, nullptr);
    if (exec != nullptr) execs_.push_back(exec);
    return exec;
  }
  void DestroyExec(infinirtGraphExec_t exec) {
    EXPECT_OK(infinirtGraphExecDestroy(exec));
    execs_.erase(std::remove(execs_.begin(), execs_.end(), exec), execs_.end());
  }

  // Launches on a_ and waits; the launch must succeed.
  void LaunchAndWait(infinirtGraphExec_t exec) {
    ASSERT_OK(infinirtGraphLaunch(exec, a_));
    ASSERT_OK(infinirtStreamSynchronize(a_));
  }

  // Captures: allocate kBytes, copy in_ into it, copy it to out_, and free it if asked.
  infinirtGraph_t CaptureCopyThroughGraphMemory(bool free_in_graph, void** memory) {
    BeginCapture();
    *memory = nullptr;
    EXPECT_OK(infinirtMallocAsync(memory, kBytes, a_));
    EXPECT_NE(*memory, nullptr);
    EXPECT_OK(infinirtMemcpyAsync(*memory, in_, kBytes, infinirtMemcpyHostToDevice, a_));
    EXPECT_OK(infinirtMemcpyAsync(out_, *memory, kBytes, infinirtMemcpyDeviceToHost, a_));
    if (free_in_graph) {
      EXPECT_OK(infinirtFreeAsync(*memory, a_));
    }
    return EndCapture();
  }

  // Fills in_ with the pattern of seed and clears out_.
  std::vector<unsigned char> NewInput(uint32_t seed) {
    std::vector<unsigned char> pattern = Pattern(seed, kBytes);
    std::memcpy(in_, pattern.data(), kBytes);
    std::memset(out_, 0, kBytes);
    return pattern;
  }

  bool OutputIs(const std::vector<unsigned char>& expected) const {
    return std::memcmp(out_, expected.data(), kBytes) == 0;
  }

  std::vector<infinirtGraph_t> graphs_;
  std::vector<infinirtGraphExec_t> execs_;
};

TEST_F(GraphMemoryTest, AllocationAndFreeNodesCarryTheDataPathAtEveryLaunch) {
  BeginCapture();
  void* memory = nullptr;
  ASSERT_OK(infinirtMallocAsync(&memory, kBytes, a_));
  ASSERT_NE(memory, nullptr);
  auto* bytes = static_cast<unsigned char*>(memory);
  ASSERT_OK(infinirtMemcpyAsync(memory, in_, kBytes, infinirtMemcpyHostToDevice, a_));
  ASSERT_OK(infinirtMemsetAsync(bytes + kBytes / 4, 0x5A, kBytes / 2, a_));
  ASSERT_OK(infinirtMemcpyAsync(out_, memory, kBytes, infinirtMemcpyDeviceToHost, a_));
  ASSERT_OK(infinirtFreeAsync(memory, a_));
  infinirtGraph_t graph = EndCapture();
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0)) << "captured work ran during the capture";
  infinirtGraphExec_t exec = Instantiate(graph);
  for (uint32_t launch = 1; launch <= 3; ++launch) {
    SCOPED_TRACE(::testing::Message() << "launch " << launch);
    std::vector<unsigned char> expected = NewInput(launch);
    std::memset(expected.data() + kBytes / 4, 0x5A, kBytes / 2);
    LaunchAndWait(exec);
    EXPECT_TRUE(OutputIs(expected));
  }
}

TEST_F(GraphMemoryTest, MemoryLeftLiveByALaunchIsUsableOutsideTheGraph) {
  void* memory = nullptr;
  infinirtGraph_t graph = CaptureCopyThroughGraphMemory(/*free_in_graph=*/false, &memory);
  infinirtGraphExec_t exec = Instantiate(graph);
  const std::vector<unsigned char> expected = NewInput(11);
  LaunchAndWait(exec);
  EXPECT_TRUE(OutputIs(expected));
  // The allocation outlives the launch: later stream work reads and writes it.
  std::memset(out_, 0, kBytes);
  ASSERT_OK(infinirtMemcpyAsync(out_, memory, kBytes, infinirtMemcpyDeviceToHost, b_));
  ASSERT_OK(infinirtStreamSynchronize(b_));
  EXPECT_TRUE(OutputIs(expected));
  ASSERT_OK(infinirtMemsetAsync(memory, 0x6B, kBytes, b_));
  ASSERT_OK(infinirtMemcpyAsync(out_, memory, kBytes, infinirtMemcpyDeviceToHost, b_));
  ASSERT_OK(infinirtStreamSynchronize(b_));
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0x6B));
  EXPECT_OK(infinirtFreeAsync(memory, b_));
}

TEST_F(GraphMemoryTest, RelaunchBeforeTheProgramFreesTheMemoryIsInvalidValue) {
  void* memory = nullptr;
  infinirtGraph_t graph = CaptureCopyThroughGraphMemory(/*free_in_graph=*/false, &memory);
  infinirtGraphExec_t exec = Instantiate(graph);
  const std::vector<unsigned char> first = NewInput(21);
  LaunchAndWait(exec);
  EXPECT_TRUE(OutputIs(first));
  NewInput(22);
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtGraphLaunch(exec, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtGraphLaunch(exec, b_));
  ASSERT_OK(infinirtDeviceSynchronize());
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0)) << "a refused launch ran";
  EXPECT_OK(infinirtFreeAsync(memory, a_));
}

TEST_F(GraphMemoryTest, FreeAsyncOfTheGraphsMemoryAllowsTheNextLaunch) {
  void* memory = nullptr;
  infinirtGraph_t graph = CaptureCopyThroughGraphMemory(/*free_in_graph=*/false, &memory);
  infinirtGraphExec_t exec = Instantiate(graph);
  for (uint32_t launch = 1; launch <= 3; ++launch) {
    SCOPED_TRACE(::testing::Message() << "launch " << launch);
    const std::vector<unsigned char> expected = NewInput(30 + launch);
    LaunchAndWait(exec);
    EXPECT_TRUE(OutputIs(expected));
    EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtGraphLaunch(exec, a_));
    EXPECT_OK(infinirtFreeAsync(memory, a_));
  }
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(memory, a_));
}

TEST_F(GraphMemoryTest, FreeOfTheGraphsMemoryAllowsTheNextLaunch) {
  void* memory = nullptr;
  infinirtGraph_t graph = CaptureCopyThroughGraphMemory(/*free_in_graph=*/false, &memory);
  infinirtGraphExec_t exec = Instantiate(graph);
  for (uint32_t launch = 1; launch <= 3; ++launch) {
    SCOPED_TRACE(::testing::Message() << "launch " << launch);
    const std::vector<unsigned char> expected = NewInput(40 + launch);
    LaunchAndWait(exec);
    EXPECT_TRUE(OutputIs(expected));
    EXPECT_OK(infinirtFree(memory));
  }
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFree(memory));
}

TEST_F(GraphMemoryTest, GraphMemoryIsNotLiveBeforeTheFirstLaunch) {
  void* memory = nullptr;
  infinirtGraph_t graph = CaptureCopyThroughGraphMemory(/*free_in_graph=*/false, &memory);
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(memory, a_));
  infinirtGraphExec_t exec = Instantiate(graph);
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFree(memory));
  NewInput(50);
  LaunchAndWait(exec);
  EXPECT_OK(infinirtFreeAsync(memory, a_));
}

TEST_F(GraphMemoryTest, AutoFreeOnLaunchAllowsRelaunchingWithoutFreeing) {
  void* memory = nullptr;
  infinirtGraph_t graph = CaptureCopyThroughGraphMemory(/*free_in_graph=*/false, &memory);
  infinirtGraphExec_t exec = Instantiate(graph, infinirtGraphInstantiateFlagAutoFreeOnLaunch);
  for (uint32_t launch = 1; launch <= 4; ++launch) {
    SCOPED_TRACE(::testing::Message() << "launch " << launch);
    const std::vector<unsigned char> expected = NewInput(60 + launch);
    LaunchAndWait(exec);
    EXPECT_TRUE(OutputIs(expected));
  }
  // Launches queued back to back, without waiting in between.
  const std::vector<unsigned char> expected = NewInput(65);
  for (int launch = 0; launch < 3; ++launch) ASSERT_OK(infinirtGraphLaunch(exec, a_));
  ASSERT_OK(infinirtStreamSynchronize(a_));
  EXPECT_TRUE(OutputIs(expected));
  EXPECT_OK(infinirtFreeAsync(memory, a_));
}

TEST_F(GraphMemoryTest, AGraphThatFreesItsMemoryCanBeRelaunchedFreely) {
  void* memory = nullptr;
  infinirtGraph_t graph = CaptureCopyThroughGraphMemory(/*free_in_graph=*/true, &memory);
  infinirtGraphExec_t exec = Instantiate(graph);
  const std::vector<unsigned char> expected = NewInput(70);
  for (int launch = 0; launch < 3; ++launch) ASSERT_OK(infinirtGraphLaunch(exec, a_));
  ASSERT_OK(infinirtStreamSynchronize(a_));
  EXPECT_TRUE(OutputIs(expected));
  // The graph freed it: the program has nothing to free.
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(memory, a_));
}

TEST_F(GraphMemoryTest, AGraphWithMemoryNodesHasOneExecAtATime) {
  void* memory = nullptr;
  infinirtGraph_t graph = CaptureCopyThroughGraphMemory(/*free_in_graph=*/true, &memory);
  infinirtGraphExec_t first = Instantiate(graph);
  infinirtGraphExec_t second = nullptr;
  // NotSupported, as NVIDIA's runtime answers.
  EXPECT_FAILS_WITH(infinirtErrorNotSupported, infinirtGraphInstantiate(&second, graph, 0));
  EXPECT_FAILS_WITH(
      infinirtErrorNotSupported,
      infinirtGraphInstantiate(&second, graph, infinirtGraphInstantiateFlagAutoFreeOnLaunch));
  EXPECT_FAILS_WITH(infinirtErrorNotSupported,
                    infinirtGraphInstantiateWithFlags(&second, graph, 0));
  NewInput(80);
  LaunchAndWait(first);  // the refused instantiations did not harm the first exec
  DestroyExec(first);
  second = Instantiate(graph);
  const std::vector<unsigned char> expected = NewInput(81);
  LaunchAndWait(second);
  EXPECT_TRUE(OutputIs(expected));
}

TEST_F(GraphMemoryTest, AGraphWithoutMemoryNodesCanHaveManyExecs) {
  void* device = nullptr;
  ASSERT_OK(infinirtMalloc(&device, kBytes));
  BeginCapture();
  ASSERT_OK(infinirtMemcpyAsync(device, in_, kBytes, infinirtMemcpyHostToDevice, a_));
  ASSERT_OK(infinirtMemcpyAsync(out_, device, kBytes, infinirtMemcpyDeviceToHost, a_));
  infinirtGraph_t graph = EndCapture();
  infinirtGraphExec_t first = Instantiate(graph);
  infinirtGraphExec_t second = Instantiate(graph);
  const std::vector<unsigned char> expected = NewInput(90);
  LaunchAndWait(first);
  EXPECT_TRUE(OutputIs(expected));
  std::memset(out_, 0, kBytes);
  LaunchAndWait(second);
  EXPECT_TRUE(OutputIs(expected));
  EXPECT_OK(infinirtFree(device));
}

TEST_F(GraphMemoryTest, ExecsKeepGraphMemoryAfterTheGraphIsDestroyed) {
  void* memory = nullptr;
  infinirtGraph_t graph = CaptureCopyThroughGraphMemory(/*free_in_graph=*/true, &memory);
  infinirtGraphExec_t exec = Instantiate(graph);
  EXPECT_OK(infinirtGraphDestroy(graph));
  graphs_.clear();
  const std::vector<unsigned char> expected = NewInput(100);
  LaunchAndWait(exec);
  EXPECT_TRUE(OutputIs(expected));
}

// Memory not allocated by the capture itself (stream-ordered memory from before the capture,
// infinirtMalloc memory, another graph's memory) cannot be freed by a captured FreeAsync.
TEST_F(GraphMemoryTest, FreeAsyncDuringCaptureOfMemoryFromOutsideIsNotSupported) {
  void* stream_ordered = AllocAsync(kBytes, a_);
  ASSERT_OK(infinirtMemsetAsync(stream_ordered, 0x4C, kBytes, a_));
  void* device = nullptr;
  ASSERT_OK(infinirtMalloc(&device, kBytes));
  void* other_graph_memory = nullptr;
  CaptureCopyThroughGraphMemory(/*free_in_graph=*/false, &other_graph_memory);
  ASSERT_OK(infinirtStreamSynchronize(a_));

  BeginCapture();
  const infinirtError_t stream_ordered_answer = infinirtFreeAsync(stream_ordered, a_);
  const infinirtError_t device_answer = infinirtFreeAsync(device, a_);
  const infinirtError_t other_graph_answer = infinirtFreeAsync(other_graph_memory, a_);
  infinirtGraph_t graph = nullptr;
  const infinirtError_t end_answer = infinirtStreamEndCapture(a_, &graph);
  if (graph != nullptr) graphs_.push_back(graph);
  infinirtGetLastError();
  EXPECT_EQ(ErrorText(stream_ordered_answer), ErrorText(infinirtErrorNotSupported));
  EXPECT_EQ(ErrorText(device_answer), ErrorText(infinirtErrorNotSupported));
  EXPECT_EQ(ErrorText(other_graph_answer), ErrorText(infinirtErrorNotSupported));
  EXPECT_TRUE(end_answer == infinirtSuccess || end_answer == infinirtErrorStreamCaptureInvalidated)
      << ErrorText(end_answer);

  // Nothing was freed.
  ASSERT_OK(infinirtMemcpyAsync(out_, stream_ordered, kBytes, infinirtMemcpyDeviceToHost, a_));
  ASSERT_OK(infinirtStreamSynchronize(a_));
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0x4C));
  EXPECT_OK(infinirtFreeAsync(stream_ordered, a_));
  EXPECT_OK(infinirtFree(device));
}

TEST_F(GraphMemoryTest, FreeAsyncDuringCaptureRejectsUnknownAndTwiceFreedPointers) {
  int on_stack = 0;
  BeginCapture();
  void* memory = nullptr;
  ASSERT_OK(infinirtMallocAsync(&memory, kBytes, a_));
  const infinirtError_t unknown_answer = infinirtFreeAsync(&on_stack, a_);
  const infinirtError_t interior_answer =
      infinirtFreeAsync(static_cast<unsigned char*>(memory) + 1, a_);
  const infinirtError_t first_answer = infinirtFreeAsync(memory, a_);
  const infinirtError_t second_answer = infinirtFreeAsync(memory, a_);
  infinirtGraph_t graph = nullptr;
  const infinirtError_t end_answer = infinirtStreamEndCapture(a_, &graph);
  if (graph != nullptr) graphs_.push_back(graph);
  infinirtGetLastError();
  EXPECT_EQ(ErrorText(unknown_answer), ErrorText(infinirtErrorInvalidValue));
  EXPECT_EQ(ErrorText(interior_answer), ErrorText(infinirtErrorInvalidValue));
  EXPECT_EQ(ErrorText(first_answer), ErrorText(infinirtSuccess));
  EXPECT_EQ(ErrorText(second_answer), ErrorText(infinirtErrorInvalidValue));
  EXPECT_TRUE(end_answer == infinirtSuccess || end_answer == infinirtErrorStreamCaptureInvalidated)
      << ErrorText(end_answer);
  EXPECT_EQ(on_stack, 0);
}

TEST_F(GraphMemoryTest, GraphMemoryIsGoneOnceTheGraphAndItsExecsAreDestroyed) {
  void* memory = nullptr;
  infinirtGraph_t graph = CaptureCopyThroughGraphMemory(/*free_in_graph=*/false, &memory);
  infinirtGraphExec_t exec = Instantiate(graph);
  NewInput(110);
  LaunchAndWait(exec);
  DestroyExec(exec);
  EXPECT_OK(infinirtGraphDestroy(graph));
  graphs_.clear();
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(memory, a_));
  infinirtPointerAttributes attributes{};
  ASSERT_OK(infinirtPointerGetAttributes(&attributes, memory));
  EXPECT_NE(attributes.type, infinirtMemoryTypeDevice) << "the graph's memory is still registered";
}

}  // namespace
}  // namespace infinirt::testing
