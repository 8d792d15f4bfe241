// S12-S16: events: the unrecorded state, what a record captures, queries, elapsed time and
// destruction.
#include <chrono>

#include "conformance.h"

namespace infinirt::conformance {
namespace {

// ---------------------------------------------------------------------------------------------
// S12: before its first record, an event is an empty set of work.

TEST_F(Conformance, S12_UnrecordedEventIsComplete) {
  infinirtEvent_t event = NewEvent();
  infinirtStream_t stream = NewStream();
  infinirtEvent_t after_wait = NewEvent();

  EXPECT_EQ(infinirtEventQuery(event), infinirtSuccess);
  EXPECT_EQ(infinirtEventSynchronize(event), infinirtSuccess);
  // Waiting on it is a no-op: the work behind the wait runs.
  EXPECT_EQ(infinirtStreamWaitEvent(stream, event, 0), infinirtSuccess);
  EXPECT_EQ(infinirtStreamWaitEvent(nullptr, event, 0), infinirtSuccess);
  ASSERT_OK_OR_SKIP(infinirtEventRecord(after_wait, stream));
  EXPECT_TRUE(Completes(after_wait));
  EXPECT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S13: a record captures the stream's work at call time; recording again overwrites; a
// StreamWaitEvent uses the state at its call time.

TEST_F(Conformance, S13_RecordCapturesOnlyWorkIssuedBeforeIt) {
  infinirtStream_t stream = NewStream();
  infinirtEvent_t before = NewEvent();
  infinirtEvent_t after = NewEvent();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(infinirtEventRecord(before, stream));
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(after, stream));
  // Work issued after the record does not hold it back.
  EXPECT_TRUE(Completes(before));
  EXPECT_EQ(infinirtEventSynchronize(before), infinirtSuccess);
  EXPECT_TRUE(IsPending(after));
  gate.Open();
  EXPECT_EQ(infinirtEventSynchronize(after), infinirtSuccess);
}

TEST_F(Conformance, S13_ReRecordOverwritesThePreviousRecord) {
  infinirtStream_t held = NewStream();
  infinirtStream_t idle = NewStream();
  infinirtEvent_t event = NewEvent();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(held));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(event, held));
  EXPECT_TRUE(IsPending(event));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(event, idle));
  EXPECT_TRUE(Completes(event)) << "the event still waits for its previous record";
  EXPECT_EQ(infinirtEventSynchronize(event), infinirtSuccess);
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(infinirtStreamQuery(held), infinirtErrorNotReady);
  gate.Open();
}

TEST_F(Conformance, S13_StreamWaitEventIsNotAffectedByLaterReRecord) {
  infinirtStream_t held = NewStream();
  infinirtStream_t waiter = NewStream();
  infinirtStream_t idle = NewStream();
  infinirtStream_t late_waiter = NewStream();
  infinirtEvent_t event = NewEvent();
  infinirtEvent_t waiter_done = NewEvent();
  infinirtEvent_t late_waiter_done = NewEvent();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(held));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(event, held));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(waiter, event, 0));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(waiter_done, waiter));

  // Re-record on an idle stream: the event completes, but the earlier wait still refers to the
  // record on the held stream.
  ASSERT_OK_OR_SKIP(infinirtEventRecord(event, idle));
  EXPECT_TRUE(Completes(event));
  EXPECT_TRUE(HoldsFor([&] { return IsPending(waiter_done); }))
      << "a wait issued before the re-record was released by it";
  EXPECT_EQ(infinirtStreamQuery(waiter), infinirtErrorNotReady);

  // A wait issued after the re-record uses the new, complete record.
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(late_waiter, event, 0));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(late_waiter_done, late_waiter));
  EXPECT_TRUE(Completes(late_waiter_done));

  gate.Open();
  EXPECT_EQ(infinirtEventSynchronize(waiter_done), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S14: EventQuery is NotReady while the captured work is pending, Success after.

TEST_F(Conformance, S14_EventQueryIsNotReadyWhilePendingThenSuccess) {
  infinirtStream_t stream = NewStream();
  infinirtEvent_t event = NewEvent();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(event, stream));
  EXPECT_EQ(infinirtEventQuery(event), infinirtErrorNotReady);
  EXPECT_TRUE(gate.WaitEntered());
  EXPECT_EQ(infinirtEventQuery(event), infinirtErrorNotReady);

  DelayedOpen release(gate);
  EXPECT_EQ(infinirtEventSynchronize(event), infinirtSuccess);
  EXPECT_TRUE(release.started()) << "EventSynchronize returned before the recorded work";
  EXPECT_EQ(infinirtEventQuery(event), infinirtSuccess);
}

TEST_F(Conformance, S14_EventOnLegacyStreamCoversBlockingStreams) {
  infinirtStream_t blocking = NewStream();
  infinirtEvent_t event = NewEvent();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(blocking));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(event, nullptr));
  EXPECT_EQ(infinirtEventQuery(event), infinirtErrorNotReady);
  gate.Open();
  EXPECT_EQ(infinirtEventSynchronize(event), infinirtSuccess);
  EXPECT_EQ(infinirtEventQuery(event), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S15: EventElapsedTime.

void BusyWait20Ms(void*) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::milliseconds(20);
  while (std::chrono::steady_clock::now() < end) {
  }
}

TEST_F(Conformance, S15_ElapsedTimeRejectsInvalidArguments) {
  infinirtStream_t stream = NewStream();
  infinirtEvent_t start = NewEvent();
  infinirtEvent_t end = NewEvent();
  infinirtEvent_t unrecorded = NewEvent();
  infinirtEvent_t untimed = NewEvent(infinirtEventDisableTiming);
  infinirtEvent_t pending = NewEvent();
  ASSERT_OK_OR_SKIP(infinirtEventRecord(start, stream));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(untimed, stream));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(end, stream));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  float ms = -1.0f;

  EXPECT_EQ(infinirtEventElapsedTime(nullptr, start, end), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtEventElapsedTime(&ms, unrecorded, end), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtEventElapsedTime(&ms, start, unrecorded), infinirtErrorInvalidResourceHandle);
  // DisableTiming: even when recorded and complete.
  EXPECT_EQ(infinirtEventQuery(untimed), infinirtSuccess);
  EXPECT_EQ(infinirtEventElapsedTime(&ms, untimed, end), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtEventElapsedTime(&ms, start, untimed), infinirtErrorInvalidResourceHandle);

  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(pending, stream));
  EXPECT_EQ(infinirtEventElapsedTime(&ms, start, pending), infinirtErrorNotReady);
  EXPECT_EQ(infinirtEventElapsedTime(&ms, pending, end), infinirtErrorNotReady);
  gate.Open();
  EXPECT_EQ(infinirtEventSynchronize(pending), infinirtSuccess);
  EXPECT_EQ(infinirtEventElapsedTime(&ms, start, pending), infinirtSuccess);
}

TEST_F(Conformance, S15_ElapsedTimeMeasuresTheWorkBetweenTwoRecords) {
  infinirtStream_t stream = NewStream();
  infinirtEvent_t start = NewEvent();
  infinirtEvent_t end = NewEvent();
  ASSERT_OK_OR_SKIP(infinirtEventRecord(start, stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, BusyWait20Ms, nullptr));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(end, stream));
  ASSERT_OK_OR_SKIP(infinirtEventSynchronize(end));

  float ms = -1.0f;
  ASSERT_OK_OR_SKIP(infinirtEventElapsedTime(&ms, start, end));
  EXPECT_GE(ms, 19.9f);  // 20 ms busy, with room for float rounding
  EXPECT_LT(ms, 20000.0f);
  float zero = -1.0f;
  ASSERT_OK_OR_SKIP(infinirtEventElapsedTime(&zero, start, start));
  EXPECT_EQ(zero, 0.0f);
}

TEST_F(Conformance, S15_ElapsedTimeAcrossDevicesIsInvalidResourceHandle) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices";
  infinirtEvent_t first = NewEvent();
  ASSERT_OK_OR_SKIP(infinirtEventRecord(first, nullptr));
  ASSERT_OK_OR_SKIP(infinirtSetDevice(1));
  infinirtEvent_t second = NewEvent();
  ASSERT_OK_OR_SKIP(infinirtEventRecord(second, nullptr));
  ASSERT_OK_OR_SKIP(infinirtDeviceSynchronize());
  ASSERT_OK_OR_SKIP(infinirtSetDevice(0));
  ASSERT_OK_OR_SKIP(infinirtDeviceSynchronize());
  float ms = 0;
  EXPECT_EQ(infinirtEventElapsedTime(&ms, first, second), infinirtErrorInvalidResourceHandle);
}

// ---------------------------------------------------------------------------------------------
// S16: EventDestroy on a pending event returns at once; the stream goes on.

TEST_F(Conformance, S16_EventDestroyOnPendingEventReturnsImmediately) {
  infinirtStream_t stream = NewStream();
  infinirtEvent_t event = NewEvent();
  auto& ran = Keep<std::atomic<bool>>(false);
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(event, stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, SetFlag, &ran));

  EXPECT_EQ(infinirtEventDestroy(event), infinirtSuccess);
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  EXPECT_EQ(infinirtEventQuery(event), infinirtErrorInvalidResourceHandle);

  gate.Open();
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_TRUE(ran.load());
  // Later work on the stream is fine.
  infinirtEvent_t later = NewEvent();
  ASSERT_OK_OR_SKIP(infinirtEventRecord(later, stream));
  EXPECT_EQ(infinirtEventSynchronize(later), infinirtSuccess);
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtSuccess);
}

}  // namespace
}  // namespace infinirt::conformance
