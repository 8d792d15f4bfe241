// Fixture and helpers of the stream capture and graph tests (capture_test.cc, graph_test.cc):
// statements S29-S39 of docs/cuda-semantics.md.
//
// The fixture owns the graphs and execs a test makes and, in TearDown, ends every capture a
// failed test left running (a capture left open would make the next tests' unsafe calls fail),
// before the Conformance fixture opens the gates and waits for the device. Graphs and execs are
// destroyed after that wait, when no launch is pending any more.
#ifndef INFINIRT_TESTS_CONFORMANCE_CAPTURE_SUPPORT_H_
#define INFINIRT_TESTS_CONFORMANCE_CAPTURE_SUPPORT_H_

#include <atomic>
#include <cstdint>
#include <vector>

#include "conformance.h"

namespace infinirt::conformance {

constexpr infinirtStreamCaptureMode kCaptureModes[] = {infinirtStreamCaptureModeGlobal,
                                                       infinirtStreamCaptureModeThreadLocal,
                                                       infinirtStreamCaptureModeRelaxed};

inline const char* ModeName(infinirtStreamCaptureMode mode) {
  switch (mode) {
    case infinirtStreamCaptureModeGlobal:
      return "Global";
    case infinirtStreamCaptureModeThreadLocal:
      return "ThreadLocal";
    case infinirtStreamCaptureModeRelaxed:
      return "Relaxed";
  }
  return "?";
}

// A value no runtime hands out, to see that an out parameter was written.
template <class Handle>
Handle Garbage() {
  return reinterpret_cast<Handle>(static_cast<uintptr_t>(0xDEADBEEF0));
}

// The stream's capture status; Invalidated + 100 (never a real status) when the call fails.
inline int StatusOf(infinirtStream_t stream) {
  infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusNone;
  const infinirtError_t error = infinirtStreamIsCapturing(stream, &status);
  EXPECT_EQ(error, infinirtSuccess) << infinirtGetErrorName(error);
  return error == infinirtSuccess ? static_cast<int>(status) : 100 + static_cast<int>(error);
}

// The capture id of a stream (0 when it does not capture).
inline unsigned long long CaptureIdOf(infinirtStream_t stream) {
  infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusNone;
  unsigned long long id = 0;
  EXPECT_EQ(infinirtStreamGetCaptureInfo(stream, &status, &id), infinirtSuccess);
  return id;
}

// Sets the calling thread's capture mode, and restores the previous one when destroyed.
class ScopedThreadMode {
 public:
  explicit ScopedThreadMode(infinirtStreamCaptureMode mode) : previous_(mode) {
    EXPECT_EQ(infinirtThreadExchangeStreamCaptureMode(&previous_), infinirtSuccess);
  }
  ~ScopedThreadMode() { infinirtThreadExchangeStreamCaptureMode(&previous_); }
  ScopedThreadMode(const ScopedThreadMode&) = delete;
  ScopedThreadMode& operator=(const ScopedThreadMode&) = delete;

 private:
  infinirtStreamCaptureMode previous_;
};

// Host function: counts its runs.
inline void CountRun(void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }

class Capture : public Conformance {
 protected:
  void TearDown() override {
    for (infinirtStream_t stream : capture_streams_) EndLeftoverCapture(stream);
    Conformance::TearDown();
    for (infinirtGraphExec_t exec : execs_) infinirtGraphExecDestroy(exec);
    for (infinirtGraph_t graph : graphs_) infinirtGraphDestroy(graph);
    infinirtGetLastError();
  }

  // A stream that may capture: TearDown ends a capture it left running.
  infinirtStream_t NewCaptureStream(unsigned int flags = infinirtStreamDefault) {
    infinirtStream_t stream = NewStream(flags);
    capture_streams_.push_back(stream);
    return stream;
  }

  // Ends a capture that must succeed; the graph (nullptr on failure) is owned by the fixture.
  infinirtGraph_t EndCapture(infinirtStream_t stream) {
    infinirtGraph_t graph = nullptr;
    const infinirtError_t error = infinirtStreamEndCapture(stream, &graph);
    EXPECT_EQ(error, infinirtSuccess) << infinirtGetErrorName(error);
    EXPECT_NE(graph, nullptr);
    return Own(graph);
  }

  infinirtGraph_t Own(infinirtGraph_t graph) {
    if (graph != nullptr) graphs_.push_back(graph);
    return graph;
  }

  // Instantiates a graph (flags 0); the exec is owned by the fixture.
  infinirtGraphExec_t Instantiate(infinirtGraph_t graph) {
    infinirtGraphExec_t exec = nullptr;
    const infinirtError_t error = infinirtGraphInstantiate(&exec, graph, 0);
    EXPECT_EQ(error, infinirtSuccess) << infinirtGetErrorName(error);
    return Own(exec);
  }

  infinirtGraphExec_t Own(infinirtGraphExec_t exec) {
    if (exec != nullptr) execs_.push_back(exec);
    return exec;
  }

  // Captures `count` runs of CountRun(counter) on `stream` into a graph and instantiates it.
  infinirtGraphExec_t CounterExec(std::atomic<int>* counter, int count = 1) {
    infinirtStream_t stream = NewCaptureStream();
    EXPECT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), infinirtSuccess);
    for (int i = 0; i < count; ++i) {
      EXPECT_EQ(infinirtLaunchHostFunc(stream, CountRun, counter), infinirtSuccess);
    }
    return Instantiate(EndCapture(stream));
  }

 private:
  static void EndLeftoverCapture(infinirtStream_t stream) {
    infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusNone;
    if (infinirtStreamIsCapturing(stream, &status) != infinirtSuccess ||
        status == infinirtStreamCaptureStatusNone) {
      return;
    }
    infinirtGraph_t graph = nullptr;
    const infinirtError_t error = infinirtStreamEndCapture(stream, &graph);
    if (graph != nullptr) infinirtGraphDestroy(graph);
    // Not the origin, or begun by another thread: destroying the stream ends its part.
    if (error == infinirtErrorStreamCaptureUnmatched ||
        error == infinirtErrorStreamCaptureWrongThread) {
      infinirtStreamDestroy(stream);
    }
  }

  std::vector<infinirtStream_t> capture_streams_;
  std::vector<infinirtGraph_t> graphs_;
  std::vector<infinirtGraphExec_t> execs_;
};

}  // namespace infinirt::conformance

#endif  // INFINIRT_TESTS_CONFORMANCE_CAPTURE_SUPPORT_H_
