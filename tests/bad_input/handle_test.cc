// Bad stream and event handles (destroyed, foreign, garbage, special values) and bad flags.
// Every function that takes a handle answers infinirtErrorInvalidResourceHandle for a handle
// that names no live object of its kind, without crashing and without doing any work.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "bad_input_support.h"
#include "infinirt.h"
#include "test_support.h"

namespace infinirt::testing {
namespace {

constexpr size_t kBytes = 64;

// A host function that a rejected LaunchHostFunc must never run.
std::atomic<int> g_forbidden_host_calls{0};
void ForbiddenHostFunction(void*) { g_forbidden_host_calls.fetch_add(1); }

struct Use {
  std::string name;
  std::function<infinirtError_t()> call;
};

template <class Handle>
Handle HandleFromValue(uintptr_t value) {
  return reinterpret_cast<Handle>(value);
}

// Values no handle of either kind can be: small integers, odd patterns, all ones, a stack
// address, and values shaped like handles whose slot does not exist.
std::vector<uintptr_t> GarbageValues(const void* stack_address) {
  return {0xdeadbeef,
          0x10,
          0x3,
          ~uintptr_t{0},
          reinterpret_cast<uintptr_t>(stack_address),
          uintptr_t{0xA1FFFFFFFFFFFFFF},
          uintptr_t{0xA2FFFFFFFFFFFFFF},
          uintptr_t{0xA10000000000FFFF}};  // (slot 0 generation 0 would be the first stream's)
}

class HandleTest : public BadInputTest {
 protected:
  void SetUp() override {
    BadInputTest::SetUp();
    g_forbidden_host_calls.store(0);
    ASSERT_OK(infinirtStreamCreate(&live_stream_));
    ASSERT_OK(infinirtEventCreate(&live_event_));
    ASSERT_OK(infinirtEventCreate(&scratch_event_));
    ASSERT_OK(infinirtMalloc(&device_, kBytes));
    ASSERT_OK(infinirtMallocHost(&pinned_, kBytes));
    ASSERT_OK(infinirtEventRecord(live_event_, live_stream_));
    ASSERT_OK(infinirtEventSynchronize(live_event_));
  }

  void TearDown() override {
    EXPECT_OK(infinirtDeviceSynchronize());
    EXPECT_EQ(g_forbidden_host_calls.load(), 0) << "a rejected LaunchHostFunc ran its function";
    EXPECT_OK(infinirtStreamDestroy(live_stream_));
    EXPECT_OK(infinirtEventDestroy(live_event_));
    EXPECT_OK(infinirtEventDestroy(scratch_event_));
    EXPECT_OK(infinirtFree(device_));
    EXPECT_OK(infinirtFreeHost(pinned_));
    BadInputTest::TearDown();
  }

  // Every function that takes a stream, called with `stream` and otherwise valid arguments.
  std::vector<Use> StreamUses(infinirtStream_t stream) {
    return {
        {"StreamSynchronize", [=] { return infinirtStreamSynchronize(stream); }},
        {"StreamQuery", [=] { return infinirtStreamQuery(stream); }},
        {"StreamWaitEvent", [=] { return infinirtStreamWaitEvent(stream, live_event_, 0); }},
        {"LaunchHostFunc",
         [=] { return infinirtLaunchHostFunc(stream, &ForbiddenHostFunction, nullptr); }},
        {"MemcpyAsync",
         [=] {
           return infinirtMemcpyAsync(device_, pinned_, kBytes, infinirtMemcpyHostToDevice, stream);
         }},
        {"MemcpyAsync of zero bytes",
         [=] {
           return infinirtMemcpyAsync(device_, pinned_, 0, infinirtMemcpyHostToDevice, stream);
         }},
        {"MemsetAsync", [=] { return infinirtMemsetAsync(device_, 0, kBytes, stream); }},
        {"MemsetAsync of zero bytes", [=] { return infinirtMemsetAsync(device_, 0, 0, stream); }},
        {"EventRecord", [=] { return infinirtEventRecord(scratch_event_, stream); }},
        {"StreamIsCapturing",
         [=] {
           infinirtStreamCaptureStatus status;
           return infinirtStreamIsCapturing(stream, &status);
         }},
        {"StreamGetCaptureInfo",
         [=] {
           infinirtStreamCaptureStatus status;
           return infinirtStreamGetCaptureInfo(stream, &status);
         }},
        {"StreamBeginCapture",
         [=] { return infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeRelaxed); }},
        {"StreamEndCapture",
         [=] {
           infinirtGraph_t graph = nullptr;
           return infinirtStreamEndCapture(stream, &graph);
         }},
        {"MallocAsync",
         [=] {
           void* pointer = nullptr;
           return infinirtMallocAsync(&pointer, kBytes, stream);
         }},
        {"FreeAsync", [=] { return infinirtFreeAsync(device_, stream); }},
        {"StreamDestroy", [=] { return infinirtStreamDestroy(stream); }},
    };
  }

  // Every function that takes an event, called with `event` and otherwise valid arguments.
  std::vector<Use> EventUses(infinirtEvent_t event) {
    return {
        {"EventRecord", [=] { return infinirtEventRecord(event, live_stream_); }},
        {"EventRecord on the legacy stream", [=] { return infinirtEventRecord(event, nullptr); }},
        {"EventQuery", [=] { return infinirtEventQuery(event); }},
        {"EventSynchronize", [=] { return infinirtEventSynchronize(event); }},
        {"EventElapsedTime as start",
         [=] {
           float ms = 0;
           return infinirtEventElapsedTime(&ms, event, live_event_);
         }},
        {"EventElapsedTime as end",
         [=] {
           float ms = 0;
           return infinirtEventElapsedTime(&ms, live_event_, event);
         }},
        {"StreamWaitEvent", [=] { return infinirtStreamWaitEvent(live_stream_, event, 0); }},
        {"StreamWaitEvent on the per-thread stream",
         [=] { return infinirtStreamWaitEvent(infinirtStreamPerThread, event, 0); }},
        {"EventDestroy", [=] { return infinirtEventDestroy(event); }},
    };
  }

  // Destroyed streams answer ContextIsDestroyed (NVIDIA's answer), everything else
  // InvalidResourceHandle.
  static void ExpectAllRejected(const std::vector<Use>& uses, const std::string& what,
                                infinirtError_t expected = infinirtErrorInvalidResourceHandle) {
    for (const Use& use : uses) {
      SCOPED_TRACE(use.name + " with " + what);
      EXPECT_ANSWER(use.call(), expected);
    }
  }

  infinirtStream_t live_stream_ = nullptr;
  infinirtEvent_t live_event_ = nullptr;     // recorded and complete
  infinirtEvent_t scratch_event_ = nullptr;  // for EventRecord with bad streams
  void* device_ = nullptr;
  void* pinned_ = nullptr;
};

TEST_F(HandleTest, DestroyedStreamIsRejectedByEveryStreamFunction) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  ASSERT_OK(infinirtStreamDestroy(stream));
  ExpectAllRejected(StreamUses(stream), "a destroyed stream", infinirtErrorContextIsDestroyed);
}

TEST_F(HandleTest, DestroyedNonBlockingStreamIsRejectedByEveryStreamFunction) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking));
  ASSERT_OK(infinirtStreamDestroy(stream));
  ExpectAllRejected(StreamUses(stream), "a destroyed non-blocking stream",
                    infinirtErrorContextIsDestroyed);
}

TEST_F(HandleTest, DestroyedEventIsRejectedByEveryEventFunction) {
  infinirtEvent_t event = nullptr;
  ASSERT_OK(infinirtEventCreate(&event));
  ASSERT_OK(infinirtEventRecord(event, live_stream_));
  ASSERT_OK(infinirtEventDestroy(event));
  ExpectAllRejected(EventUses(event), "a destroyed event");
}

TEST_F(HandleTest, DestroyedHandlesStayInvalidAfterNewObjectsReuseTheirSlots) {
  infinirtStream_t old_stream = nullptr;
  infinirtEvent_t old_event = nullptr;
  ASSERT_OK(infinirtStreamCreate(&old_stream));
  ASSERT_OK(infinirtEventCreate(&old_event));
  ASSERT_OK(infinirtStreamDestroy(old_stream));
  ASSERT_OK(infinirtEventDestroy(old_event));
  std::vector<infinirtStream_t> streams(16);
  std::vector<infinirtEvent_t> events(16);
  for (auto& stream : streams) ASSERT_OK(infinirtStreamCreate(&stream));
  for (auto& event : events) ASSERT_OK(infinirtEventCreate(&event));
  ExpectAllRejected(StreamUses(old_stream), "a destroyed stream whose slot was reused",
                    infinirtErrorContextIsDestroyed);
  ExpectAllRejected(EventUses(old_event), "a destroyed event whose slot was reused");
  for (size_t i = 0; i < streams.size(); ++i) {
    EXPECT_OK(infinirtEventRecord(events[i], streams[i]));
    EXPECT_OK(infinirtEventSynchronize(events[i]));
    EXPECT_OK(infinirtStreamDestroy(streams[i]));
    EXPECT_OK(infinirtEventDestroy(events[i]));
  }
}

TEST_F(HandleTest, StreamWhoseDestructionIsPendingIsRejectedAtOnceButItsWorkCompletes) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  Gate gate;
  ASSERT_OK(gate.Block(stream));
  ASSERT_OK(infinirtMemsetAsync(device_, 0x3C, kBytes, stream));
  ASSERT_OK(infinirtStreamDestroy(stream));
  // The usability check frees memory, which waits for all queued work: check it after the gate
  // opens.
  EXPECT_EQ(ErrorText(infinirtStreamQuery(stream)), ErrorText(infinirtErrorContextIsDestroyed));
  EXPECT_EQ(ErrorText(infinirtGetLastError()), ErrorText(infinirtErrorContextIsDestroyed));
  const infinirtError_t memset_answer = infinirtMemsetAsync(device_, 0, kBytes, stream);
  gate.Open();
  EXPECT_ANSWER(memset_answer, infinirtErrorContextIsDestroyed);
  ASSERT_OK(infinirtDeviceSynchronize());
  EXPECT_FALSE(gate.timed_out());
  unsigned char bytes[kBytes];
  ASSERT_OK(infinirtMemcpy(bytes, device_, kBytes, infinirtMemcpyDeviceToHost));
  for (unsigned char byte : bytes) ASSERT_EQ(byte, 0x3C);
}

TEST_F(HandleTest, EventPassedAsStreamIsRejectedByEveryStreamFunction) {
  ExpectAllRejected(StreamUses(reinterpret_cast<infinirtStream_t>(live_event_)),
                    "a live event passed as a stream");
  EXPECT_OK(infinirtEventQuery(live_event_));
}

TEST_F(HandleTest, StreamPassedAsEventIsRejectedByEveryEventFunction) {
  ExpectAllRejected(EventUses(reinterpret_cast<infinirtEvent_t>(live_stream_)),
                    "a live stream passed as an event");
  EXPECT_OK(infinirtStreamQuery(live_stream_));
}

TEST_F(HandleTest, GarbageStreamValuesAreRejectedWithoutCrashing) {
  int on_stack = 0;
  for (uintptr_t value : GarbageValues(&on_stack)) {
    ExpectAllRejected(StreamUses(HandleFromValue<infinirtStream_t>(value)),
                      "stream value " + std::to_string(value));
  }
  EXPECT_EQ(on_stack, 0);
}

TEST_F(HandleTest, GarbageEventValuesAreRejectedWithoutCrashing) {
  int on_stack = 0;
  std::vector<uintptr_t> values = GarbageValues(&on_stack);
  values.push_back(0);  // NULL is no event
  for (uintptr_t value : values) {
    ExpectAllRejected(EventUses(HandleFromValue<infinirtEvent_t>(value)),
                      "event value " + std::to_string(value));
  }
  EXPECT_EQ(on_stack, 0);
}

TEST_F(HandleTest, DestroyingTheSpecialStreamsIsRejectedAndTheyKeepWorking) {
  const infinirtStream_t special[] = {nullptr, infinirtStreamLegacy, infinirtStreamPerThread};
  for (infinirtStream_t stream : special) {
    SCOPED_TRACE(::testing::Message() << "stream " << static_cast<void*>(stream));
    EXPECT_ANSWER(infinirtStreamDestroy(stream), infinirtErrorInvalidResourceHandle);
  }
  for (infinirtStream_t stream : special) {
    SCOPED_TRACE(::testing::Message() << "stream " << static_cast<void*>(stream));
    EXPECT_OK(infinirtMemsetAsync(device_, 0x11, kBytes, stream));
    EXPECT_OK(infinirtMemcpyAsync(pinned_, device_, kBytes, infinirtMemcpyDeviceToHost, stream));
    EXPECT_OK(infinirtStreamSynchronize(stream));
    EXPECT_EQ(static_cast<unsigned char*>(pinned_)[kBytes - 1], 0x11);
  }
}

TEST_F(HandleTest, DestroyingANullEventIsRejected) {
  EXPECT_ANSWER(infinirtEventDestroy(nullptr), infinirtErrorInvalidResourceHandle);
}

TEST_F(HandleTest, SecondDestroyIsRejected) {
  infinirtStream_t stream = nullptr;
  infinirtEvent_t event = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  ASSERT_OK(infinirtEventCreate(&event));
  EXPECT_ANSWER(infinirtStreamDestroy(stream), infinirtSuccess);
  EXPECT_ANSWER(infinirtStreamDestroy(stream), infinirtErrorContextIsDestroyed);
  EXPECT_ANSWER(infinirtEventDestroy(event), infinirtSuccess);
  EXPECT_ANSWER(infinirtEventDestroy(event), infinirtErrorInvalidResourceHandle);
}

TEST_F(HandleTest, StreamCreateWithFlagsRejectsUnknownFlags) {
  for (unsigned int flags : {0x2u, 0x3u, 0x100u, 0xFFu, 0xFFFFFFFFu}) {
    SCOPED_TRACE(::testing::Message() << "flags 0x" << std::hex << flags);
    infinirtStream_t stream = nullptr;
    EXPECT_ANSWER(infinirtStreamCreateWithFlags(&stream, flags), infinirtErrorInvalidValue);
  }
}

TEST_F(HandleTest, EventCreateWithFlagsRejectsUnknownFlagsAndInterprocessWithTiming) {
  const unsigned int bad_flags[] = {0x8u, 0x10u, 0xFFFFFFFFu, infinirtEventInterprocess,
                                    infinirtEventInterprocess | infinirtEventBlockingSync};
  for (unsigned int flags : bad_flags) {
    SCOPED_TRACE(::testing::Message() << "flags 0x" << std::hex << flags);
    infinirtEvent_t event = nullptr;
    EXPECT_ANSWER(infinirtEventCreateWithFlags(&event, flags), infinirtErrorInvalidValue);
  }
  infinirtEvent_t event = nullptr;
  EXPECT_ANSWER(
      infinirtEventCreateWithFlags(&event, infinirtEventInterprocess | infinirtEventDisableTiming),
      infinirtSuccess);
  EXPECT_OK(infinirtEventDestroy(event));
}

TEST_F(HandleTest, StreamWaitEventRejectsUnknownFlags) {
  for (unsigned int flags : {0x2u, 0x3u, 0x80000000u}) {
    SCOPED_TRACE(::testing::Message() << "flags 0x" << std::hex << flags);
    EXPECT_ANSWER(infinirtStreamWaitEvent(live_stream_, live_event_, flags),
                  infinirtErrorInvalidValue);
    EXPECT_ANSWER(infinirtStreamWaitEvent(nullptr, live_event_, flags), infinirtErrorInvalidValue);
  }
  EXPECT_ANSWER(infinirtStreamWaitEvent(live_stream_, live_event_, infinirtEventWaitExternal),
                infinirtSuccess);
}

TEST_F(HandleTest, LaunchHostFuncRejectsNullFunctionOnEveryKindOfStream) {
  for (infinirtStream_t stream : {live_stream_, static_cast<infinirtStream_t>(nullptr),
                                  infinirtStreamLegacy, infinirtStreamPerThread}) {
    SCOPED_TRACE(::testing::Message() << "stream " << static_cast<void*>(stream));
    int user_data = 0;
    EXPECT_ANSWER(infinirtLaunchHostFunc(stream, nullptr, &user_data), infinirtErrorInvalidValue);
  }
}

TEST_F(HandleTest, EventElapsedTimeRejectsEventsWithoutTimestamps) {
  infinirtEvent_t never_recorded = nullptr;
  infinirtEvent_t untimed = nullptr;
  ASSERT_OK(infinirtEventCreate(&never_recorded));
  ASSERT_OK(infinirtEventCreateWithFlags(&untimed, infinirtEventDisableTiming));
  ASSERT_OK(infinirtEventRecord(untimed, live_stream_));
  ASSERT_OK(infinirtEventSynchronize(untimed));
  float ms = 0;
  EXPECT_ANSWER(infinirtEventElapsedTime(&ms, never_recorded, live_event_),
                infinirtErrorInvalidResourceHandle);
  EXPECT_ANSWER(infinirtEventElapsedTime(&ms, live_event_, never_recorded),
                infinirtErrorInvalidResourceHandle);
  EXPECT_ANSWER(infinirtEventElapsedTime(&ms, untimed, live_event_),
                infinirtErrorInvalidResourceHandle);
  EXPECT_ANSWER(infinirtEventElapsedTime(&ms, live_event_, untimed),
                infinirtErrorInvalidResourceHandle);
  EXPECT_OK(infinirtEventDestroy(never_recorded));
  EXPECT_OK(infinirtEventDestroy(untimed));
}

// NotReady answers a question; it is not an error and must not become the last error.
TEST_F(HandleTest, QueriesOfPendingWorkAnswerNotReadyWithoutRecordingIt) {
  infinirtEvent_t pending = nullptr;
  ASSERT_OK(infinirtEventCreate(&pending));
  Gate gate;
  ASSERT_OK(gate.Block(live_stream_));
  ASSERT_OK(infinirtEventRecord(pending, live_stream_));
  // The usability check frees memory, which waits for all queued work: check it after the gate
  // opens.
  float ms = 0;
  EXPECT_EQ(ErrorText(infinirtStreamQuery(live_stream_)), ErrorText(infinirtErrorNotReady));
  EXPECT_EQ(ErrorText(infinirtEventQuery(pending)), ErrorText(infinirtErrorNotReady));
  const infinirtError_t elapsed = infinirtEventElapsedTime(&ms, live_event_, pending);
  EXPECT_EQ(ErrorText(infinirtPeekAtLastError()), ErrorText(infinirtSuccess));
  gate.Open();
  EXPECT_ANSWER(elapsed, infinirtErrorNotReady);
  EXPECT_ANSWER(infinirtEventSynchronize(pending), infinirtSuccess);
  EXPECT_FALSE(gate.timed_out());
  EXPECT_OK(infinirtEventDestroy(pending));
}

}  // namespace
}  // namespace infinirt::testing
