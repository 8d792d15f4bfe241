// S29-S37: beginning and ending a capture, recording instead of running, the operations that
// capture prohibits in each mode (and the invalidation they cause), fork/join, merge and
// isolation, the thread that may end a capture, the order of work around a capture; also
// StreamGetCaptureInfo and destroying a stream that takes part in a capture.
#include <array>
#include <cstring>
#include <functional>
#include <string>

#include "capture_support.h"

namespace infinirt::conformance {
namespace {

// Ends a capture that must fail with `expected`; checks that no graph comes back and that the
// stream no longer captures.
void ExpectEndCaptureFails(infinirtStream_t stream, infinirtError_t expected) {
  infinirtGraph_t graph = Garbage<infinirtGraph_t>();
  EXPECT_EQ(infinirtStreamEndCapture(stream, &graph), expected);
  EXPECT_EQ(graph, nullptr) << "a failed EndCapture must return a NULL graph";
  if (graph != nullptr && graph != Garbage<infinirtGraph_t>()) infinirtGraphDestroy(graph);
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusNone) << "the capture did not end";
  infinirtGetLastError();
}

// ---------------------------------------------------------------------------------------------
// S29: where a capture can begin and end, and the arguments BeginCapture/EndCapture accept.

TEST_F(Capture, S29_BeginCaptureOnLegacyStreamIsUnsupported) {
  static_assert(infinirtErrorStreamCaptureUnsupported == 900, "CUDA's value");
  for (infinirtStreamCaptureMode mode : kCaptureModes) {
    SCOPED_TRACE(ModeName(mode));
    EXPECT_EQ(infinirtStreamBeginCapture(nullptr, mode), infinirtErrorStreamCaptureUnsupported);
    EXPECT_EQ(infinirtStreamBeginCapture(infinirtStreamLegacy, mode),
              infinirtErrorStreamCaptureUnsupported);
  }
  // Nothing began: the legacy stream works and the device can be synchronised.
  EXPECT_EQ(StatusOf(nullptr), infinirtStreamCaptureStatusNone);
  EXPECT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
}

TEST_F(Capture, S29_BeginCaptureOnCapturingStreamIsIllegalState) {
  static_assert(infinirtErrorIllegalState == 401, "CUDA's value");
  infinirtStream_t origin = NewCaptureStream();
  infinirtStream_t joined = NewCaptureStream();
  infinirtEvent_t fork = NewEvent();
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(origin, infinirtStreamCaptureModeGlobal));
  for (infinirtStreamCaptureMode mode : kCaptureModes) {
    EXPECT_EQ(infinirtStreamBeginCapture(origin, mode), infinirtErrorIllegalState)
        << ModeName(mode);
  }
  // A stream that joined the capture through an event also takes part in it.
  ASSERT_OK_OR_SKIP(infinirtEventRecord(fork, origin));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(joined, fork, 0));
  EXPECT_EQ(infinirtStreamBeginCapture(joined, infinirtStreamCaptureModeGlobal),
            infinirtErrorIllegalState);
  // The refused calls left the capture intact.
  EXPECT_EQ(StatusOf(origin), infinirtStreamCaptureStatusActive);
  EXPECT_NE(EndCapture(origin), nullptr);
}

TEST_F(Capture, S29_BeginCaptureRejectsUnknownMode) {
  infinirtStream_t stream = NewCaptureStream();
  for (int mode : {3, -1, 0x100}) {
    EXPECT_EQ(infinirtStreamBeginCapture(stream, static_cast<infinirtStreamCaptureMode>(mode)),
              infinirtErrorInvalidValue)
        << mode;
    EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusNone);
  }
}

TEST_F(Capture, S29_EndCaptureOnNonCapturingStreamIsIllegalState) {
  infinirtStream_t stream = NewCaptureStream();
  infinirtGraph_t graph = nullptr;
  EXPECT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtErrorIllegalState);
  EXPECT_EQ(graph, nullptr);
  // Also after a capture of the stream has ended (end without begin).
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  EndCapture(stream);
  graph = nullptr;
  EXPECT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtErrorIllegalState);
  EXPECT_EQ(graph, nullptr);
}

TEST_F(Capture, S29_EndCaptureWithNullGraphIsInvalidValue) {
  infinirtStream_t stream = NewCaptureStream();
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  EXPECT_EQ(infinirtStreamEndCapture(stream, nullptr), infinirtErrorInvalidValue);
  // The rejected call did not end the capture; a proper one does.
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusActive);
  EXPECT_NE(EndCapture(stream), nullptr);
  EXPECT_EQ(infinirtStreamEndCapture(nullptr, nullptr), infinirtErrorInvalidValue);
}

TEST_F(Capture, S29_PerThreadStreamCanCapture) {
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  ASSERT_OK_OR_SKIP(
      infinirtStreamBeginCapture(infinirtStreamPerThread, infinirtStreamCaptureModeGlobal));
  EXPECT_EQ(StatusOf(infinirtStreamPerThread), infinirtStreamCaptureStatusActive);
  // Another thread's per-thread stream is another stream: it does not capture.
  int other_status = -1;
  ScopedThread([&] { other_status = StatusOf(infinirtStreamPerThread); }).Join();
  EXPECT_EQ(other_status, infinirtStreamCaptureStatusNone);
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(infinirtStreamPerThread, CountRun, &runs));
  infinirtGraph_t graph = EndCapture(infinirtStreamPerThread);
  EXPECT_EQ(StatusOf(infinirtStreamPerThread), infinirtStreamCaptureStatusNone);
  infinirtGraphExec_t exec = Instantiate(graph);
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, infinirtStreamPerThread));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(infinirtStreamPerThread));
  EXPECT_EQ(runs.load(), 1);
}

// ---------------------------------------------------------------------------------------------
// S30: captured work is recorded, not executed, until the graph is launched.

TEST_F(Capture, S30_CapturedWorkDoesNotRunUntilLaunch) {
  infinirtStream_t stream = NewCaptureStream();
  unsigned char* source = NewPinnedMemory(kBytes, 0x5A);
  unsigned char* target = NewPinnedMemory(kBytes, 0);
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(source, nullptr);
  ASSERT_NE(target, nullptr);
  ASSERT_NE(device, nullptr);
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);

  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(
      infinirtMemcpyAsync(device, source, kBytes, infinirtMemcpyHostToDevice, stream));
  ASSERT_OK_OR_SKIP(
      infinirtMemcpyAsync(target, device, kBytes, infinirtMemcpyDeviceToHost, stream));
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(source, 0x11, 1, stream));  // after the copies
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
  EXPECT_TRUE(HoldsFor([&] { return runs.load() == 0 && AllBytesAre(target, kBytes, 0); }))
      << "captured work ran during the capture";
  EXPECT_EQ(source[0], 0x5A);

  infinirtGraph_t graph = EndCapture(stream);
  infinirtGraphExec_t exec = Instantiate(graph);
  EXPECT_EQ(runs.load(), 0) << "ending the capture or instantiating ran captured work";
  EXPECT_TRUE(AllBytesAre(target, kBytes, 0));
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(target, kBytes, 0)) << "the stream ran captured work";

  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(runs.load(), 1);
  EXPECT_TRUE(AllBytesAre(target, kBytes, 0x5A));
  EXPECT_EQ(source[0], 0x11);
}

// ---------------------------------------------------------------------------------------------
// S31: in every mode, synchronising or querying a capturing stream, synchronising the device,
// and synchronising or querying an event recorded in the capture fail, and invalidate the
// capture (S34: EndCapture then returns StreamCaptureInvalidated and no graph).

TEST_F(Capture, S31_SynchronizingOrQueryingTheCapturingStreamIsUnsupportedInEveryMode) {
  infinirtStream_t stream = NewCaptureStream();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  struct Operation {
    const char* name;
    std::function<infinirtError_t()> call;
  };
  const Operation operations[] = {
      {"StreamSynchronize", [&] { return infinirtStreamSynchronize(stream); }},
      {"StreamQuery", [&] { return infinirtStreamQuery(stream); }},
      {"DeviceSynchronize", [] { return infinirtDeviceSynchronize(); }},
  };
  for (infinirtStreamCaptureMode mode : kCaptureModes) {
    for (const Operation& operation : operations) {
      SCOPED_TRACE(std::string(ModeName(mode)) + " " + operation.name);
      ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, mode));
      ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
      EXPECT_EQ(operation.call(), infinirtErrorStreamCaptureUnsupported);
      EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
      ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);
      // Out of capture the stream is usable again (S34).
      EXPECT_EQ(infinirtStreamQuery(stream), infinirtSuccess);
    }
  }
  EXPECT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  EXPECT_EQ(runs.load(), 0) << "work of an invalidated capture ran";
}

TEST_F(Capture, S31_SynchronizingOrQueryingACapturedEventIsCapturedEventInEveryMode) {
  static_assert(infinirtErrorCapturedEvent == 907, "CUDA's value");
  infinirtStream_t stream = NewCaptureStream();
  infinirtEvent_t event = NewEvent();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  for (infinirtStreamCaptureMode mode : kCaptureModes) {
    for (bool synchronize : {false, true}) {
      SCOPED_TRACE(std::string(ModeName(mode)) + (synchronize ? " EventSynchronize" : " Query"));
      ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, mode));
      ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
      ASSERT_OK_OR_SKIP(infinirtEventRecord(event, stream));
      EXPECT_EQ(synchronize ? infinirtEventSynchronize(event) : infinirtEventQuery(event),
                infinirtErrorCapturedEvent);
      EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
      ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);
      EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    }
  }
  EXPECT_EQ(runs.load(), 0) << "work of an invalidated capture ran";
}

// ---------------------------------------------------------------------------------------------
// S32: unsafe calls in Global/ThreadLocal captures; the legacy stream while a blocking stream
// captures.

TEST_F(Capture, S32_MallocIsUnsupportedInGlobalAndThreadLocalCaptureButAllowedInRelaxed) {
  infinirtStream_t stream = NewCaptureStream();
  for (infinirtStreamCaptureMode mode :
       {infinirtStreamCaptureModeGlobal, infinirtStreamCaptureModeThreadLocal}) {
    SCOPED_TRACE(ModeName(mode));
    ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, mode));
    void* memory = Garbage<void*>();
    EXPECT_EQ(infinirtMalloc(&memory, kBytes), infinirtErrorStreamCaptureUnsupported);
    EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
    ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);
  }

  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeRelaxed));
  void* memory = nullptr;
  EXPECT_EQ(infinirtMalloc(&memory, kBytes), infinirtSuccess);
  EXPECT_NE(memory, nullptr);
  EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusActive);
  EXPECT_NE(EndCapture(stream), nullptr);
}

// Querying an event recorded outside the capture is refused, and invalidates the capture, only
// while the calling thread captures in Global mode (NVIDIA's runtime's answer).
TEST_F(Capture, S32_EventQueryIsUnsupportedDuringTheThreadsGlobalCaptureOnly) {
  infinirtStream_t stream = NewCaptureStream();
  infinirtEvent_t event = NewEvent();
  ASSERT_EQ(infinirtEventRecord(event, NewStream()), infinirtSuccess);
  ASSERT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  EXPECT_EQ(infinirtEventQuery(event), infinirtErrorStreamCaptureUnsupported);
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
  ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);
  for (infinirtStreamCaptureMode mode :
       {infinirtStreamCaptureModeThreadLocal, infinirtStreamCaptureModeRelaxed}) {
    SCOPED_TRACE(ModeName(mode));
    ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, mode));
    EXPECT_EQ(infinirtEventQuery(event), infinirtSuccess);
    EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusActive);
    EXPECT_NE(EndCapture(stream), nullptr);
  }
}

TEST_F(Capture, S32_LegacyStreamUseWhileABlockingStreamCapturesIsImplicitInEveryMode) {
  static_assert(infinirtErrorStreamCaptureImplicit == 906, "CUDA's value");
  infinirtStream_t stream = NewCaptureStream();  // blocking
  unsigned char* pinned = NewPinnedMemory(kBytes, 0x21);
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(pinned, nullptr);
  ASSERT_NE(device, nullptr);
  ASSERT_OK_OR_SKIP(infinirtMemset(device, 0x43, kBytes));
  infinirtEvent_t event = NewEvent();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  infinirtGraphExec_t exec = CounterExec(&runs);
  struct Operation {
    const char* name;
    std::function<infinirtError_t()> call;
  };
  const Operation operations[] = {
      {"LaunchHostFunc on NULL", [&] { return infinirtLaunchHostFunc(nullptr, CountRun, &runs); }},
      {"EventRecord on NULL", [&] { return infinirtEventRecord(event, nullptr); }},
      {"StreamQuery(NULL)", [] { return infinirtStreamQuery(nullptr); }},
      {"StreamSynchronize(NULL)", [] { return infinirtStreamSynchronize(nullptr); }},
      {"GraphLaunch on NULL", [&] { return infinirtGraphLaunch(exec, nullptr); }},
      {"MemcpyAsync on NULL",
       [&] {
         return infinirtMemcpyAsync(pinned, device, kBytes, infinirtMemcpyDeviceToHost, nullptr);
       }},
      {"MemsetAsync on infinirtStreamLegacy",
       [&] { return infinirtMemsetAsync(device, 0x65, kBytes, infinirtStreamLegacy); }},
      {"Memcpy",
       [&] { return infinirtMemcpy(pinned, device, kBytes, infinirtMemcpyDeviceToHost); }},
      {"Memset", [&] { return infinirtMemset(device, 0x65, kBytes); }},
  };
  for (infinirtStreamCaptureMode mode : kCaptureModes) {
    for (const Operation& operation : operations) {
      SCOPED_TRACE(std::string(ModeName(mode)) + " " + operation.name);
      ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, mode));
      EXPECT_EQ(operation.call(), infinirtErrorStreamCaptureImplicit);
      EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
      ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);
    }
  }
  // None of the refused operations ran.
  EXPECT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(pinned, kBytes, 0x21));
  EXPECT_TRUE(AllBytesAre(ReadBack(device, kBytes).data(), kBytes, 0x43));
  EXPECT_EQ(runs.load(), 0);
}

// A wait enqueued in the legacy stream is a use of the legacy stream too, whether or not the
// event stands for captured work.
TEST_F(Capture, S32_LegacyStreamWaitingOnAnEventWhileABlockingStreamCapturesIsImplicit) {
  infinirtStream_t stream = NewCaptureStream();
  infinirtStream_t other = NewStream();
  infinirtEvent_t uncaptured = NewEvent();
  infinirtEvent_t captured = NewEvent();
  ASSERT_OK_OR_SKIP(infinirtEventRecord(uncaptured, other));
  for (bool in_capture : {true, false}) {
    SCOPED_TRACE(in_capture ? "event recorded in the capture" : "event recorded outside");
    ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
    ASSERT_OK_OR_SKIP(infinirtEventRecord(captured, stream));
    EXPECT_EQ(infinirtStreamWaitEvent(nullptr, in_capture ? captured : uncaptured, 0),
              infinirtErrorStreamCaptureImplicit);
    EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
    ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);
  }
}

// The per-thread default stream is blocking (S4): it conflicts with the legacy stream as well.
TEST_F(Capture, S32_LegacyStreamUseWhileThePerThreadStreamCapturesIsImplicit) {
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_OK_OR_SKIP(
      infinirtStreamBeginCapture(infinirtStreamPerThread, infinirtStreamCaptureModeRelaxed));
  EXPECT_EQ(infinirtMemsetAsync(device, 0, kBytes, nullptr), infinirtErrorStreamCaptureImplicit);
  EXPECT_EQ(StatusOf(infinirtStreamPerThread), infinirtStreamCaptureStatusInvalidated);
  ExpectEndCaptureFails(infinirtStreamPerThread, infinirtErrorStreamCaptureInvalidated);
}

TEST_F(Capture, S32_LegacyStreamIsUsableWhileOnlyANonBlockingStreamCaptures) {
  REQUIRE_NON_BLOCKING_STREAMS();
  infinirtStream_t stream = NewCaptureStream(infinirtStreamNonBlocking);
  unsigned char* pinned = NewPinnedMemory(kBytes, 0);
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(pinned, nullptr);
  ASSERT_NE(device, nullptr);

  // Relaxed: synchronous legacy-stream calls are allowed too.
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeRelaxed));
  EXPECT_EQ(StatusOf(nullptr), infinirtStreamCaptureStatusNone);
  EXPECT_EQ(infinirtMemset(device, 0x17, kBytes), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpy(pinned, device, kBytes, infinirtMemcpyDeviceToHost), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(pinned, kBytes, 0x17));
  EXPECT_EQ(infinirtMemsetAsync(device, 0x18, kBytes, nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(pinned, device, kBytes, infinirtMemcpyDeviceToHost, nullptr),
            infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(pinned, kBytes, 0x18)) << "legacy work was captured or lost";
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusActive);
  EXPECT_NE(EndCapture(stream), nullptr);

  // Global: asynchronous legacy-stream work is no unsafe call and does not touch the capture.
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  EXPECT_EQ(infinirtMemsetAsync(device, 0x19, kBytes, nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(pinned, device, kBytes, infinirtMemcpyDeviceToHost, nullptr),
            infinirtSuccess);
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusActive);
  EXPECT_NE(EndCapture(stream), nullptr);
  EXPECT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(pinned, kBytes, 0x19));
}

TEST_F(Capture, S32_IsCapturingOnLegacyStreamWhileABlockingStreamCapturesIsImplicit) {
  infinirtStream_t stream = NewCaptureStream();
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  for (infinirtStream_t legacy : {static_cast<infinirtStream_t>(nullptr), infinirtStreamLegacy}) {
    infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusNone;
    EXPECT_EQ(infinirtStreamIsCapturing(legacy, &status), infinirtErrorStreamCaptureImplicit);
  }
  // Asking does not invalidate the capture.
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusActive);
  EXPECT_NE(EndCapture(stream), nullptr);
  EXPECT_EQ(StatusOf(nullptr), infinirtStreamCaptureStatusNone);
}

// ---------------------------------------------------------------------------------------------
// S33: the scope of the capture modes across threads, and
// infinirtThreadExchangeStreamCaptureMode.

TEST_F(Capture, S33_GlobalCaptureRefusesAnotherThreadsUnsafeCallAndIsInvalidated) {
  infinirtStream_t stream = NewCaptureStream();
  infinirtStream_t other = NewStream();
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  infinirtError_t result = infinirtSuccess;
  ScopedThread([&] { result = infinirtStreamSynchronize(other); }).Join();
  EXPECT_EQ(result, infinirtErrorStreamCaptureUnsupported);
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
  ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);
}

TEST_F(Capture, S33_ThreadLocalOrRelaxedCaptureDoesNotRestrictOtherThreads) {
  infinirtStream_t stream = NewCaptureStream();
  infinirtStream_t other = NewStream();
  for (infinirtStreamCaptureMode mode :
       {infinirtStreamCaptureModeThreadLocal, infinirtStreamCaptureModeRelaxed}) {
    SCOPED_TRACE(ModeName(mode));
    ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, mode));
    infinirtError_t synchronized = infinirtErrorUnknown;
    infinirtError_t allocated = infinirtErrorUnknown;
    ScopedThread([&] {
      synchronized = infinirtStreamSynchronize(other);
      void* memory = nullptr;
      allocated = infinirtMalloc(&memory, kBytes);
      infinirtFree(memory);
    }).Join();
    EXPECT_EQ(synchronized, infinirtSuccess);
    EXPECT_EQ(allocated, infinirtSuccess);
    EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusActive);
    EXPECT_NE(EndCapture(stream), nullptr);
  }
}

TEST_F(Capture, S33_ExchangeStreamCaptureModeSwapsThePerThreadMode) {
  infinirtStreamCaptureMode mode = infinirtStreamCaptureModeRelaxed;
  ASSERT_OK_OR_SKIP(infinirtThreadExchangeStreamCaptureMode(&mode));
  EXPECT_EQ(mode, infinirtStreamCaptureModeGlobal) << "the default mode is Global";
  mode = infinirtStreamCaptureModeThreadLocal;
  ASSERT_OK_OR_SKIP(infinirtThreadExchangeStreamCaptureMode(&mode));
  EXPECT_EQ(mode, infinirtStreamCaptureModeRelaxed);

  // The mode is per thread: another thread starts in Global and its change stays its own.
  infinirtStreamCaptureMode seen = infinirtStreamCaptureModeRelaxed;
  ScopedThread([&] {
    infinirtThreadExchangeStreamCaptureMode(&seen);  // sets Relaxed, returns the old mode
  }).Join();
  EXPECT_EQ(seen, infinirtStreamCaptureModeGlobal);

  // Rejected arguments leave the mode alone.
  infinirtStreamCaptureMode invalid = static_cast<infinirtStreamCaptureMode>(3);
  EXPECT_EQ(infinirtThreadExchangeStreamCaptureMode(&invalid), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtThreadExchangeStreamCaptureMode(nullptr), infinirtErrorInvalidValue);
  mode = infinirtStreamCaptureModeGlobal;
  ASSERT_OK_OR_SKIP(infinirtThreadExchangeStreamCaptureMode(&mode));
  EXPECT_EQ(mode, infinirtStreamCaptureModeThreadLocal);
}

TEST_F(Capture, S33_ThreadInRelaxedOrThreadLocalModeMayMakeUnsafeCallsDuringGlobalCapture) {
  infinirtStream_t stream = NewCaptureStream();
  infinirtStream_t other = NewStream();
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  for (infinirtStreamCaptureMode thread_mode :
       {infinirtStreamCaptureModeRelaxed, infinirtStreamCaptureModeThreadLocal}) {
    SCOPED_TRACE(ModeName(thread_mode));
    infinirtError_t synchronized = infinirtErrorUnknown;
    infinirtError_t allocated = infinirtErrorUnknown;
    ScopedThread([&] {
      ScopedThreadMode scoped(thread_mode);
      synchronized = infinirtStreamSynchronize(other);
      void* memory = nullptr;
      allocated = infinirtMalloc(&memory, kBytes);
      infinirtFree(memory);
    }).Join();
    EXPECT_EQ(synchronized, infinirtSuccess);
    EXPECT_EQ(allocated, infinirtSuccess);
    EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusActive);
  }
  // The capturing thread itself in Relaxed mode is not restricted either.
  {
    ScopedThreadMode relaxed(infinirtStreamCaptureModeRelaxed);
    EXPECT_EQ(infinirtStreamSynchronize(other), infinirtSuccess);
  }
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusActive);
  EXPECT_NE(EndCapture(stream), nullptr);
}

TEST_F(Capture, S33_RelaxedThreadModeStillRefusesOperationsThatConflictWithCapture) {
  infinirtStream_t stream = NewCaptureStream();
  infinirtEvent_t event = NewEvent();
  ScopedThreadMode relaxed(infinirtStreamCaptureModeRelaxed);
  struct Operation {
    const char* name;
    std::function<infinirtError_t()> call;
    infinirtError_t expected;
  };
  const Operation operations[] = {
      {"EventQuery", [&] { return infinirtEventQuery(event); }, infinirtErrorCapturedEvent},
      {"EventSynchronize", [&] { return infinirtEventSynchronize(event); },
       infinirtErrorCapturedEvent},
      {"StreamQuery", [&] { return infinirtStreamQuery(stream); },
       infinirtErrorStreamCaptureUnsupported},
      {"StreamSynchronize", [&] { return infinirtStreamSynchronize(stream); },
       infinirtErrorStreamCaptureUnsupported},
      {"DeviceSynchronize", [] { return infinirtDeviceSynchronize(); },
       infinirtErrorStreamCaptureUnsupported},
  };
  for (const Operation& operation : operations) {
    SCOPED_TRACE(operation.name);
    ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
    ASSERT_OK_OR_SKIP(infinirtEventRecord(event, stream));
    EXPECT_EQ(operation.call(), operation.expected);
    EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
    ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);
  }
}

// ---------------------------------------------------------------------------------------------
// S34: an invalidated capture refuses further work, ends with StreamCaptureInvalidated and no
// graph, and leaves the stream usable.

TEST_F(Capture, S34_InvalidatedCaptureRefusesWorkAndEndsWithInvalidated) {
  static_assert(infinirtErrorStreamCaptureInvalidated == 901, "CUDA's value");
  infinirtStream_t stream = NewCaptureStream();
  infinirtEvent_t event = NewEvent();
  unsigned char* pinned = NewPinnedMemory(kBytes, 0);
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(pinned, nullptr);
  ASSERT_NE(device, nullptr);
  std::atomic<int>& captured_runs = Keep<std::atomic<int>>(0);
  std::atomic<int>& later_runs = Keep<std::atomic<int>>(0);

  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &captured_runs));
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorStreamCaptureUnsupported);
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
  EXPECT_EQ(infinirtLaunchHostFunc(stream, CountRun, &captured_runs),
            infinirtErrorStreamCaptureInvalidated);
  EXPECT_EQ(infinirtMemsetAsync(device, 1, kBytes, stream), infinirtErrorStreamCaptureInvalidated);
  EXPECT_EQ(infinirtEventRecord(event, stream), infinirtErrorStreamCaptureInvalidated);
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
  ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);

  // The stream runs work again, and nothing of the invalidated capture ever runs.
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0x33, kBytes, stream));
  ASSERT_OK_OR_SKIP(
      infinirtMemcpyAsync(pinned, device, kBytes, infinirtMemcpyDeviceToHost, stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &later_runs));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(later_runs.load(), 1);
  EXPECT_EQ(captured_runs.load(), 0);
  EXPECT_TRUE(AllBytesAre(pinned, kBytes, 0x33));
  // And it can capture again.
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  EXPECT_NE(EndCapture(stream), nullptr);
}

// Launching a graph is work issued to the stream like any other (S38: capturable); into an
// invalidated capture it is refused and must not run.
TEST_F(Capture, S34_GraphLaunchIntoAnInvalidatedCaptureIsRefusedAndDoesNotRun) {
  infinirtStream_t stream = NewCaptureStream();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  infinirtGraphExec_t exec = CounterExec(&runs);
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorStreamCaptureUnsupported);
  ASSERT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
  EXPECT_EQ(infinirtGraphLaunch(exec, stream), infinirtErrorStreamCaptureInvalidated);
  ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(runs.load(), 0) << "the exec ran while its stream was in (invalidated) capture";
}

// The graph that StreamGetCaptureInfo showed is destroyed by an EndCapture that fails.
TEST_F(Capture, S34_GraphOfAFailedCaptureIsGone) {
  infinirtStream_t stream = NewCaptureStream();
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  infinirtStreamCaptureStatus status;
  infinirtGraph_t graph = nullptr;
  ASSERT_OK_OR_SKIP(infinirtStreamGetCaptureInfo(stream, &status, nullptr, &graph));
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorStreamCaptureUnsupported);
  ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);
  infinirtGraphExec_t exec = nullptr;
  EXPECT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtErrorInvalidResourceHandle);
}

// ---------------------------------------------------------------------------------------------
// S35: fork/join through events, isolation from uncaptured work, no merging of captures.

TEST_F(Capture, S35_WaitingOnACapturedEventJoinsTheCapture) {
  infinirtStream_t origin = NewCaptureStream();
  infinirtStream_t side = NewCaptureStream();
  infinirtEvent_t fork = NewEvent();
  infinirtEvent_t join = NewEvent();
  auto& log = Keep<OrderLog>();
  auto& marks = Keep<std::array<Mark, 3>>();
  for (int i = 0; i < 3; ++i) marks[i] = Mark{&log, i};

  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(origin, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(origin, AppendMark, &marks[0]));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(fork, origin));
  EXPECT_EQ(StatusOf(side), infinirtStreamCaptureStatusNone);
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(side, fork, 0));
  EXPECT_EQ(StatusOf(side), infinirtStreamCaptureStatusActive) << "the stream did not join";
  EXPECT_EQ(CaptureIdOf(side), CaptureIdOf(origin));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(side, AppendMark, &marks[1]));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(join, side));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(origin, join, 0));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(origin, AppendMark, &marks[2]));
  EXPECT_TRUE(HoldsFor([&] { return log.next.load() == 0; })) << "captured work ran";

  infinirtGraph_t graph = EndCapture(origin);
  EXPECT_EQ(StatusOf(side), infinirtStreamCaptureStatusNone) << "the joined stream still captures";
  EXPECT_EQ(StatusOf(origin), infinirtStreamCaptureStatusNone);
  infinirtGraphExec_t exec = Instantiate(graph);
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, origin));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(origin));
  ASSERT_EQ(log.next.load(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(log.slots[i], i);
}

TEST_F(Capture, S35_EndingWithAnUnjoinedForkIsUnjoined) {
  static_assert(infinirtErrorStreamCaptureUnjoined == 904, "CUDA's value");
  infinirtStream_t origin = NewCaptureStream();
  infinirtStream_t side = NewCaptureStream();
  infinirtEvent_t fork = NewEvent();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(origin, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(fork, origin));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(side, fork, 0));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(side, CountRun, &runs));
  ExpectEndCaptureFails(origin, infinirtErrorStreamCaptureUnjoined);
  // The whole capture is over, the forked stream included, and nothing of it ran.
  EXPECT_EQ(StatusOf(side), infinirtStreamCaptureStatusNone);
  EXPECT_EQ(infinirtStreamSynchronize(side), infinirtSuccess);
  EXPECT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  EXPECT_EQ(runs.load(), 0);
}

TEST_F(Capture, S35_EndingTheCaptureInAJoinedStreamIsUnmatched) {
  static_assert(infinirtErrorStreamCaptureUnmatched == 903, "CUDA's value");
  infinirtStream_t origin = NewCaptureStream();
  infinirtStream_t side = NewCaptureStream();
  infinirtEvent_t fork = NewEvent();
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(origin, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(fork, origin));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(side, fork, 0));
  infinirtGraph_t graph = Garbage<infinirtGraph_t>();
  EXPECT_EQ(infinirtStreamEndCapture(side, &graph), infinirtErrorStreamCaptureUnmatched);
  EXPECT_EQ(graph, nullptr);
  // The capture is invalidated (core/capture.cc, Captures::End) and ends in its origin.
  EXPECT_EQ(StatusOf(origin), infinirtStreamCaptureStatusInvalidated);
  ExpectEndCaptureFails(origin, infinirtErrorStreamCaptureInvalidated);
  EXPECT_EQ(StatusOf(side), infinirtStreamCaptureStatusNone);
}

TEST_F(Capture, S35_WaitingOnUncapturedWorkWithoutWaitExternalIsIsolation) {
  static_assert(infinirtErrorStreamCaptureIsolation == 905, "CUDA's value");
  infinirtStream_t stream = NewCaptureStream();
  infinirtStream_t other = NewStream();
  infinirtEvent_t outside = NewEvent();
  ASSERT_OK_OR_SKIP(infinirtEventRecord(outside, other));
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  EXPECT_EQ(infinirtStreamWaitEvent(stream, outside, infinirtEventWaitDefault),
            infinirtErrorStreamCaptureIsolation);
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusInvalidated);
  ExpectEndCaptureFails(stream, infinirtErrorStreamCaptureInvalidated);
}

TEST_F(Capture, S35_ExternalWaitOnUncapturedWorkBecomesAWaitOfEveryLaunch) {
  infinirtStream_t stream = NewCaptureStream();
  infinirtStream_t other = NewStream();
  infinirtEvent_t outside = NewEvent();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  ASSERT_OK_OR_SKIP(infinirtEventRecord(outside, other));
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(stream, outside, infinirtEventWaitExternal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
  infinirtGraphExec_t exec = Instantiate(EndCapture(stream));

  // The launch waits for the event's work as recorded when the graph is launched.
  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(other));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(outside, other));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  EXPECT_TRUE(HoldsFor([&] { return runs.load() == 0; })) << "the launch ignored the wait node";
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(runs.load(), 1);
}

TEST_F(Capture, S35_WaitingOnAnEventOfAnotherCaptureIsMerge) {
  static_assert(infinirtErrorStreamCaptureMerge == 902, "CUDA's value");
  infinirtStream_t first = NewCaptureStream();
  infinirtStream_t second = NewCaptureStream();
  infinirtEvent_t event = NewEvent();
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(first, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(second, infinirtStreamCaptureModeGlobal));
  EXPECT_NE(CaptureIdOf(first), CaptureIdOf(second));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(event, first));
  EXPECT_EQ(infinirtStreamWaitEvent(second, event, 0), infinirtErrorStreamCaptureMerge);
  // The waiting capture is invalidated; the other is not joined by the refused wait.
  EXPECT_EQ(StatusOf(second), infinirtStreamCaptureStatusInvalidated);
  ExpectEndCaptureFails(second, infinirtErrorStreamCaptureInvalidated);
  infinirtGraph_t graph = nullptr;
  const infinirtError_t error = infinirtStreamEndCapture(first, &graph);
  Own(graph);
  EXPECT_TRUE(error == infinirtSuccess || error == infinirtErrorStreamCaptureInvalidated)
      << infinirtGetErrorName(error);
  EXPECT_EQ(StatusOf(first), infinirtStreamCaptureStatusNone);
  infinirtGetLastError();
}

// ---------------------------------------------------------------------------------------------
// S36: the thread that may end a capture.

TEST_F(Capture, S36_EndingANonRelaxedCaptureFromAnotherThreadIsWrongThread) {
  static_assert(infinirtErrorStreamCaptureWrongThread == 908, "CUDA's value");
  infinirtStream_t stream = NewCaptureStream();
  for (infinirtStreamCaptureMode mode :
       {infinirtStreamCaptureModeGlobal, infinirtStreamCaptureModeThreadLocal}) {
    SCOPED_TRACE(ModeName(mode));
    ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, mode));
    infinirtError_t result = infinirtSuccess;
    infinirtGraph_t graph = nullptr;
    ScopedThread([&] { result = infinirtStreamEndCapture(stream, &graph); }).Join();
    EXPECT_EQ(result, infinirtErrorStreamCaptureWrongThread);
    EXPECT_EQ(graph, nullptr);
    // The capture goes on, and the thread that began it ends it normally.
    EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusActive);
    EXPECT_NE(EndCapture(stream), nullptr);
  }
}

TEST_F(Capture, S36_ARelaxedCaptureMayBeEndedFromAnotherThread) {
  infinirtStream_t stream = NewCaptureStream();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeRelaxed));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
  infinirtError_t result = infinirtErrorUnknown;
  infinirtGraph_t graph = nullptr;
  ScopedThread([&] { result = infinirtStreamEndCapture(stream, &graph); }).Join();
  Own(graph);
  EXPECT_EQ(result, infinirtSuccess);
  ASSERT_NE(graph, nullptr);
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusNone);
  infinirtGraphExec_t exec = Instantiate(graph);
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(runs.load(), 1);
}

// ---------------------------------------------------------------------------------------------
// S37: leaving capture mode severs nothing: the first work after the capture runs after the
// last work before it.

TEST_F(Capture, S37_WorkAfterCaptureRunsAfterWorkBeforeCapture) {
  infinirtStream_t stream = NewCaptureStream();
  auto& log = Keep<OrderLog>();
  auto& before = Keep<Mark>(Mark{&log, 1});
  auto& captured = Keep<Mark>(Mark{&log, 99});
  auto& after = Keep<Mark>(Mark{&log, 2});
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, AppendMark, &before));
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, AppendMark, &captured));
  EndCapture(stream);
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, AppendMark, &after));

  EXPECT_TRUE(HoldsFor([&] { return log.next.load() == 0; }))
      << "work issued after the capture ran before the work issued before it";
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  ASSERT_EQ(log.next.load(), 2) << "captured work ran, or stream work was lost";
  EXPECT_EQ(log.slots[0], 1);
  EXPECT_EQ(log.slots[1], 2);
}

// ---------------------------------------------------------------------------------------------
// infinirtStreamGetCaptureInfo (CUDA 13 form): status, id, graph and current dependencies.

TEST_F(Capture, CaptureInfo_ReportsStatusIdGraphAndDependencies) {
  infinirtStream_t stream = NewCaptureStream();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusInvalidated;
  unsigned long long id = 12345;
  ASSERT_OK_OR_SKIP(infinirtStreamGetCaptureInfo(stream, &status, &id));
  EXPECT_EQ(status, infinirtStreamCaptureStatusNone);

  unsigned long long ids[2] = {0, 0};
  infinirtGraph_t graphs[2] = {nullptr, nullptr};
  for (int round = 0; round < 2; ++round) {
    SCOPED_TRACE(round);
    ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
    infinirtGraph_t graph = nullptr;
    const infinirtGraphNode_t* dependencies = nullptr;
    const infinirtGraphEdgeData* edges = nullptr;
    size_t count = 99;
    ASSERT_OK_OR_SKIP(infinirtStreamGetCaptureInfo(stream, &status, &ids[round], &graph,
                                                   &dependencies, &edges, &count));
    EXPECT_EQ(status, infinirtStreamCaptureStatusActive);
    EXPECT_NE(ids[round], 0u);
    EXPECT_NE(graph, nullptr);
    EXPECT_EQ(count, 0u) << "a fresh capture has no dependencies";

    ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
    ASSERT_OK_OR_SKIP(infinirtStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &dependencies,
                                                   &edges, &count));
    ASSERT_EQ(count, 1u);
    ASSERT_NE(dependencies, nullptr);
    const infinirtGraphNode_t first = dependencies[0];
    EXPECT_NE(first, nullptr);
    EXPECT_NE(edges, nullptr);

    ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
    infinirtGraph_t same = nullptr;
    ASSERT_OK_OR_SKIP(
        infinirtStreamGetCaptureInfo(stream, &status, &id, &same, &dependencies, nullptr, &count));
    EXPECT_EQ(id, ids[round]) << "the id changed during the capture";
    EXPECT_EQ(same, graph);
    ASSERT_EQ(count, 1u) << "a linear stream depends on its last node only";
    EXPECT_NE(dependencies[0], first);

    graphs[round] = EndCapture(stream);
    EXPECT_EQ(graphs[round], graph) << "EndCapture returned another graph than GetCaptureInfo";
    ASSERT_OK_OR_SKIP(infinirtStreamGetCaptureInfo(stream, &status, &id));
    EXPECT_EQ(status, infinirtStreamCaptureStatusNone);
  }
  EXPECT_NE(ids[0], ids[1]) << "two captures got the same id";
  EXPECT_NE(graphs[0], graphs[1]);
  // The handle is a real graph: it instantiates and runs both captured nodes.
  infinirtGraphExec_t exec = Instantiate(graphs[1]);
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(runs.load(), 2);
}

TEST_F(Capture, CaptureInfo_JoiningTwoForksGivesTwoDependencies) {
  infinirtStream_t origin = NewCaptureStream();
  infinirtStream_t left = NewCaptureStream();
  infinirtStream_t right = NewCaptureStream();
  infinirtEvent_t fork = NewEvent();
  infinirtEvent_t left_done = NewEvent();
  infinirtEvent_t right_done = NewEvent();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  infinirtStreamCaptureStatus status;
  const infinirtGraphNode_t* dependencies = nullptr;
  size_t count = 0;

  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(origin, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(fork, origin));
  infinirtGraphNode_t tails[2] = {nullptr, nullptr};
  infinirtStream_t sides[2] = {left, right};
  infinirtEvent_t done[2] = {left_done, right_done};
  for (int i = 0; i < 2; ++i) {
    ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(sides[i], fork, 0));
    ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(sides[i], CountRun, &runs));
    ASSERT_OK_OR_SKIP(infinirtStreamGetCaptureInfo(sides[i], &status, nullptr, nullptr,
                                                   &dependencies, nullptr, &count));
    EXPECT_EQ(status, infinirtStreamCaptureStatusActive);
    ASSERT_EQ(count, 1u);
    tails[i] = dependencies[0];
    ASSERT_OK_OR_SKIP(infinirtEventRecord(done[i], sides[i]));
  }
  EXPECT_NE(tails[0], tails[1]);
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(origin, left_done, 0));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(origin, right_done, 0));
  ASSERT_OK_OR_SKIP(infinirtStreamGetCaptureInfo(origin, &status, nullptr, nullptr, &dependencies,
                                                 nullptr, &count));
  ASSERT_EQ(count, 2u) << "after the joins the origin depends on both branches";
  EXPECT_TRUE((dependencies[0] == tails[0] && dependencies[1] == tails[1]) ||
              (dependencies[0] == tails[1] && dependencies[1] == tails[0]));
  EXPECT_NE(EndCapture(origin), nullptr);
}

TEST_F(Capture, CaptureInfo_RejectsNullStatusAndEdgeDataWithoutDependencies) {
  infinirtStream_t stream = NewCaptureStream();
  infinirtStreamCaptureStatus status;
  const infinirtGraphNode_t* dependencies = nullptr;
  const infinirtGraphEdgeData* edges = nullptr;
  size_t count = 0;
  for (bool capturing : {false, true}) {
    SCOPED_TRACE(capturing ? "capturing" : "not capturing");
    if (capturing) {
      ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
    }
    EXPECT_EQ(infinirtStreamGetCaptureInfo(stream, nullptr), infinirtErrorInvalidValue);
    EXPECT_EQ(
        infinirtStreamGetCaptureInfo(stream, &status, nullptr, nullptr, nullptr, &edges, &count),
        infinirtErrorInvalidValue);
    EXPECT_EQ(infinirtStreamGetCaptureInfo(stream, &status, nullptr, nullptr, &dependencies, &edges,
                                           &count),
              infinirtSuccess);
  }
  // The refused calls did not invalidate the capture.
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusActive);
  EXPECT_NE(EndCapture(stream), nullptr);
}

// ---------------------------------------------------------------------------------------------
// InfiniRT (core/capture.cc, Captures::StreamDestroyed): destroying the stream that began a
// capture discards the capture; destroying a joined stream invalidates it.

TEST_F(Capture, StreamDestroyedDuringCapture_DestroyingTheOriginDiscardsTheCapture) {
  infinirtStream_t origin = NewCaptureStream();
  infinirtStream_t side = NewCaptureStream();
  infinirtEvent_t fork = NewEvent();
  std::atomic<int>& captured_runs = Keep<std::atomic<int>>(0);
  std::atomic<int>& later_runs = Keep<std::atomic<int>>(0);
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(origin, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(origin, CountRun, &captured_runs));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(fork, origin));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(side, fork, 0));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(side, CountRun, &captured_runs));
  infinirtStreamCaptureStatus status;
  infinirtGraph_t graph = nullptr;
  ASSERT_OK_OR_SKIP(infinirtStreamGetCaptureInfo(origin, &status, nullptr, &graph));
  ASSERT_NE(graph, nullptr);

  ASSERT_OK_OR_SKIP(infinirtStreamDestroy(origin));
  EXPECT_EQ(StatusOf(side), infinirtStreamCaptureStatusNone) << "the joined stream still captures";
  // The graph handle of the discarded capture is gone.
  infinirtGraphExec_t exec = nullptr;
  EXPECT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtErrorInvalidResourceHandle);
  infinirtGetLastError();

  // No capture is left: unsafe calls work, the former member runs work, the device syncs.
  void* memory = nullptr;
  EXPECT_EQ(infinirtMalloc(&memory, kBytes), infinirtSuccess);
  EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(side, CountRun, &later_runs));
  EXPECT_EQ(infinirtStreamSynchronize(side), infinirtSuccess);
  EXPECT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  EXPECT_EQ(later_runs.load(), 1);
  EXPECT_EQ(captured_runs.load(), 0);
  // The event recorded in the discarded capture stands for no work.
  EXPECT_EQ(infinirtEventQuery(fork), infinirtSuccess);
}

TEST_F(Capture, StreamDestroyedDuringCapture_DestroyingAJoinedStreamInvalidatesTheCapture) {
  infinirtStream_t origin = NewCaptureStream();
  infinirtStream_t side = NewCaptureStream();
  infinirtEvent_t fork = NewEvent();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(origin, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(fork, origin));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(side, fork, 0));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(side, CountRun, &runs));
  ASSERT_OK_OR_SKIP(infinirtStreamDestroy(side));
  EXPECT_EQ(StatusOf(origin), infinirtStreamCaptureStatusInvalidated);
  ExpectEndCaptureFails(origin, infinirtErrorStreamCaptureInvalidated);
  EXPECT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  EXPECT_EQ(runs.load(), 0);
}

}  // namespace
}  // namespace infinirt::conformance
