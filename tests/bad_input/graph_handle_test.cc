// Bad graph, exec and memory pool handles (NULL, garbage, destroyed, a live handle of another
// kind) and bad instantiation flags. NULL is infinirtErrorInvalidValue, as in CUDA; any other
// handle that names no live object of its kind is infinirtErrorInvalidResourceHandle. A refused
// launch runs nothing.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <vector>

#include "bad_input_support.h"
#include "infinirt.h"

namespace infinirt::testing {
namespace {

std::atomic<int> g_graph_runs{0};
void CountGraphRun(void*) { g_graph_runs.fetch_add(1); }

// Values no handle can be: small integers, odd patterns, all ones, a stack address.
std::vector<uintptr_t> GarbageValues(const void* stack_address) {
  return {0xdeadbeef,
          0x10,
          0x3,
          ~uintptr_t{0},
          reinterpret_cast<uintptr_t>(stack_address),
          uintptr_t{0xB0FFFFFFFFFFFFFF}};
}

template <class Handle>
Handle As(const void* handle) {
  return reinterpret_cast<Handle>(const_cast<void*>(handle));
}

template <class Handle>
Handle FromValue(uintptr_t value) {
  return reinterpret_cast<Handle>(value);
}

class GraphHandleTest : public BadInputTest {
 protected:
  void SetUp() override {
    BadInputTest::SetUp();
    g_graph_runs.store(0);
    ASSERT_OK(infinirtStreamCreate(&stream_));
    ASSERT_OK(infinirtEventCreate(&event_));
    graph_ = CaptureCountingGraph();
    ASSERT_NE(graph_, nullptr);
    ASSERT_OK(infinirtGraphInstantiate(&exec_, graph_, 0));
    ASSERT_OK(infinirtDeviceGetDefaultMemPool(&pool_, 0));
  }

  void TearDown() override {
    EXPECT_OK(infinirtDeviceSynchronize());
    EXPECT_EQ(g_graph_runs.load(), expected_runs_) << "a refused launch ran the graph";
    EXPECT_OK(infinirtGraphExecDestroy(exec_));
    EXPECT_OK(infinirtGraphDestroy(graph_));
    EXPECT_OK(infinirtEventDestroy(event_));
    EXPECT_OK(infinirtStreamDestroy(stream_));
    BadInputTest::TearDown();
  }

  // A graph of one host function counting its runs.
  infinirtGraph_t CaptureCountingGraph() {
    EXPECT_OK(infinirtStreamBeginCapture(stream_, infinirtStreamCaptureModeGlobal));
    EXPECT_OK(infinirtLaunchHostFunc(stream_, &CountGraphRun, nullptr));
    infinirtGraph_t graph = nullptr;
    EXPECT_OK(infinirtStreamEndCapture(stream_, &graph));
    return graph;
  }

  infinirtGraph_t DestroyedGraph() {
    infinirtGraph_t graph = CaptureCountingGraph();
    EXPECT_OK(infinirtGraphDestroy(graph));
    return graph;
  }

  infinirtGraphExec_t DestroyedExec() {
    infinirtGraphExec_t exec = nullptr;
    EXPECT_OK(infinirtGraphInstantiate(&exec, graph_, 0));
    EXPECT_OK(infinirtGraphExecDestroy(exec));
    return exec;
  }

  // Every function taking a graph answers `expected` for it.
  static void ExpectGraphRejected(infinirtGraph_t graph, infinirtError_t expected,
                                  const std::string& what) {
    SCOPED_TRACE("graph: " + what);
    infinirtGraphExec_t exec = nullptr;
    EXPECT_ANSWER(infinirtGraphInstantiate(&exec, graph, 0), expected);
    EXPECT_ANSWER(infinirtGraphInstantiateWithFlags(&exec, graph, 0), expected);
    EXPECT_EQ(exec, nullptr);
    EXPECT_ANSWER(infinirtGraphDestroy(graph), expected);
  }

  // Every function taking an exec answers `expected` for it.
  void ExpectExecRejected(infinirtGraphExec_t exec, infinirtError_t expected,
                          const std::string& what) {
    SCOPED_TRACE("exec: " + what);
    EXPECT_ANSWER(infinirtGraphLaunch(exec, stream_), expected);
    EXPECT_ANSWER(infinirtGraphLaunch(exec, nullptr), expected);
    EXPECT_ANSWER(infinirtGraphExecDestroy(exec), expected);
  }

  // Every function taking a pool answers `expected` for it.
  static void ExpectPoolRejected(infinirtMemPool_t pool, infinirtError_t expected,
                                 const std::string& what) {
    SCOPED_TRACE("pool: " + what);
    uint64_t value = 0;
    EXPECT_ANSWER(infinirtMemPoolGetAttribute(pool, infinirtMemPoolAttrUsedMemCurrent, &value),
                  expected);
    EXPECT_ANSWER(infinirtMemPoolSetAttribute(pool, infinirtMemPoolAttrReleaseThreshold, &value),
                  expected);
    EXPECT_ANSWER(infinirtMemPoolTrimTo(pool, 0), expected);
  }

  infinirtStream_t stream_ = nullptr;
  infinirtEvent_t event_ = nullptr;
  infinirtGraph_t graph_ = nullptr;
  infinirtGraphExec_t exec_ = nullptr;
  infinirtMemPool_t pool_ = nullptr;
  int expected_runs_ = 0;
};

TEST_F(GraphHandleTest, NullHandlesAreInvalidValue) {
  ExpectGraphRejected(nullptr, infinirtErrorInvalidValue, "NULL");
  ExpectExecRejected(nullptr, infinirtErrorInvalidValue, "NULL");
  ExpectPoolRejected(nullptr, infinirtErrorInvalidValue, "NULL");
}

TEST_F(GraphHandleTest, GarbageHandlesAreInvalidResourceHandle) {
  int on_stack = 0;
  for (uintptr_t value : GarbageValues(&on_stack)) {
    const std::string what = "value " + std::to_string(value);
    ExpectGraphRejected(FromValue<infinirtGraph_t>(value), infinirtErrorInvalidResourceHandle,
                        what);
    ExpectExecRejected(FromValue<infinirtGraphExec_t>(value), infinirtErrorInvalidResourceHandle,
                       what);
    ExpectPoolRejected(FromValue<infinirtMemPool_t>(value), infinirtErrorInvalidResourceHandle,
                       what);
  }
  EXPECT_EQ(on_stack, 0);
}

// A destroyed exec is InvalidResourceHandle to GraphExecDestroy but InvalidValue to GraphLaunch
// and GraphUpload: NVIDIA's runtime's answers.
TEST_F(GraphHandleTest, DestroyedGraphsAndExecsAreRefused) {
  ExpectGraphRejected(DestroyedGraph(), infinirtErrorInvalidResourceHandle, "destroyed");
  const infinirtGraphExec_t exec = DestroyedExec();
  SCOPED_TRACE("exec: destroyed");
  EXPECT_ANSWER(infinirtGraphLaunch(exec, stream_), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtGraphLaunch(exec, nullptr), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtGraphUpload(exec, stream_), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtGraphExecDestroy(exec), infinirtErrorInvalidResourceHandle);
}

TEST_F(GraphHandleTest, LiveHandlesOfAnotherKindAreInvalidResourceHandle) {
  ExpectGraphRejected(As<infinirtGraph_t>(exec_), infinirtErrorInvalidResourceHandle, "an exec");
  ExpectGraphRejected(As<infinirtGraph_t>(stream_), infinirtErrorInvalidResourceHandle, "a stream");
  ExpectGraphRejected(As<infinirtGraph_t>(pool_), infinirtErrorInvalidResourceHandle, "a pool");
  ExpectExecRejected(As<infinirtGraphExec_t>(graph_), infinirtErrorInvalidResourceHandle,
                     "a graph");
  ExpectExecRejected(As<infinirtGraphExec_t>(event_), infinirtErrorInvalidResourceHandle,
                     "an event");
  ExpectPoolRejected(As<infinirtMemPool_t>(stream_), infinirtErrorInvalidResourceHandle,
                     "a stream");
  ExpectPoolRejected(As<infinirtMemPool_t>(graph_), infinirtErrorInvalidResourceHandle, "a graph");
  // The live objects still work.
  ASSERT_OK(infinirtGraphLaunch(exec_, stream_));
  ASSERT_OK(infinirtStreamSynchronize(stream_));
  expected_runs_ = 1;
}

TEST_F(GraphHandleTest, SecondDestroyIsInvalidResourceHandle) {
  infinirtGraph_t graph = CaptureCountingGraph();
  infinirtGraphExec_t exec = nullptr;
  ASSERT_OK(infinirtGraphInstantiate(&exec, graph, 0));
  EXPECT_ANSWER(infinirtGraphExecDestroy(exec), infinirtSuccess);
  EXPECT_ANSWER(infinirtGraphExecDestroy(exec), infinirtErrorInvalidResourceHandle);
  EXPECT_ANSWER(infinirtGraphDestroy(graph), infinirtSuccess);
  EXPECT_ANSWER(infinirtGraphDestroy(graph), infinirtErrorInvalidResourceHandle);
}

TEST_F(GraphHandleTest, LaunchOnABadStreamIsInvalidResourceHandle) {
  infinirtStream_t destroyed = nullptr;
  ASSERT_OK(infinirtStreamCreate(&destroyed));
  ASSERT_OK(infinirtStreamDestroy(destroyed));
  // A destroyed stream: ContextIsDestroyed, as NVIDIA answers; the rest never were streams.
  EXPECT_ANSWER(infinirtGraphLaunch(exec_, destroyed), infinirtErrorContextIsDestroyed);
  int on_stack = 0;
  std::vector<infinirtStream_t> streams = {As<infinirtStream_t>(event_),
                                           As<infinirtStream_t>(exec_)};
  for (uintptr_t value : GarbageValues(&on_stack)) {
    streams.push_back(FromValue<infinirtStream_t>(value));
  }
  for (infinirtStream_t stream : streams) {
    SCOPED_TRACE(::testing::Message() << "stream " << static_cast<void*>(stream));
    EXPECT_ANSWER(infinirtGraphLaunch(exec_, stream), infinirtErrorInvalidResourceHandle);
  }
  EXPECT_EQ(on_stack, 0);
}

TEST_F(GraphHandleTest, UnknownInstantiateFlagsAreInvalidValue) {
  for (unsigned long long flags : {0x10ull, 0x100ull, 0x8000000000000000ull, ~0ull}) {
    SCOPED_TRACE(::testing::Message() << "flags 0x" << std::hex << flags);
    infinirtGraphExec_t exec = nullptr;
    EXPECT_ANSWER(infinirtGraphInstantiate(&exec, graph_, flags), infinirtErrorInvalidValue);
    EXPECT_ANSWER(infinirtGraphInstantiateWithFlags(&exec, graph_, flags),
                  infinirtErrorInvalidValue);
    EXPECT_EQ(exec, nullptr);
  }
  // Upload is for GraphInstantiateWithParams only (NVIDIA's runtime refuses it here too).
  for (unsigned long long flags :
       {static_cast<unsigned long long>(infinirtGraphInstantiateFlagUpload),
        static_cast<unsigned long long>(infinirtGraphInstantiateFlagUpload |
                                        infinirtGraphInstantiateFlagUseNodePriority)}) {
    SCOPED_TRACE(::testing::Message() << "flags 0x" << std::hex << flags);
    infinirtGraphExec_t exec = nullptr;
    EXPECT_ANSWER(infinirtGraphInstantiate(&exec, graph_, flags), infinirtErrorInvalidValue);
    EXPECT_ANSWER(infinirtGraphInstantiateWithFlags(&exec, graph_, flags),
                  infinirtErrorInvalidValue);
    EXPECT_EQ(exec, nullptr);
  }
  // Every other known flag but DeviceLaunch is accepted.
  for (unsigned long long flags :
       {0ull, static_cast<unsigned long long>(infinirtGraphInstantiateFlagAutoFreeOnLaunch),
        static_cast<unsigned long long>(infinirtGraphInstantiateFlagUseNodePriority)}) {
    SCOPED_TRACE(::testing::Message() << "flags 0x" << std::hex << flags);
    infinirtGraphExec_t exec = nullptr;
    EXPECT_ANSWER(infinirtGraphInstantiate(&exec, graph_, flags), infinirtSuccess);
    EXPECT_OK(infinirtGraphExecDestroy(exec));
  }
}

TEST_F(GraphHandleTest, StreamOrderedFunctionsRejectBadStreams) {
  infinirtStream_t destroyed = nullptr;
  ASSERT_OK(infinirtStreamCreate(&destroyed));
  ASSERT_OK(infinirtStreamDestroy(destroyed));
  void* device = nullptr;
  ASSERT_OK(infinirtMallocAsync(&device, 256, stream_));
  int on_stack = 0;
  std::vector<infinirtStream_t> streams = {destroyed, As<infinirtStream_t>(event_)};
  for (uintptr_t value : GarbageValues(&on_stack)) {
    streams.push_back(FromValue<infinirtStream_t>(value));
  }
  for (infinirtStream_t stream : streams) {
    SCOPED_TRACE(::testing::Message() << "stream " << static_cast<void*>(stream));
    const infinirtError_t rejected =  // a destroyed stream: NVIDIA's answer
        stream == destroyed ? infinirtErrorContextIsDestroyed : infinirtErrorInvalidResourceHandle;
    void* pointer = nullptr;
    EXPECT_ANSWER(infinirtMallocAsync(&pointer, 256, stream), rejected);
    EXPECT_EQ(pointer, nullptr);
    EXPECT_ANSWER(infinirtFreeAsync(device, stream), rejected);
    EXPECT_ANSWER(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), rejected);
    infinirtGraph_t graph = nullptr;
    EXPECT_ANSWER(infinirtStreamEndCapture(stream, &graph), rejected);
    infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusNone;
    EXPECT_ANSWER(infinirtStreamGetCaptureInfo(stream, &status), rejected);
  }
  // The allocation survived every refused FreeAsync.
  EXPECT_ANSWER(infinirtFreeAsync(device, stream_), infinirtSuccess);
  EXPECT_EQ(on_stack, 0);
}

}  // namespace
}  // namespace infinirt::testing
