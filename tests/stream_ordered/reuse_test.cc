// When the default pool may hand a freed block out again (plugins/cpu/memory_pool.h,
// docs/stream-ordered-memory.md):
//   - on the stream that freed it, at once: stream order puts the new use after the free;
//   - on another stream, only once ordering is established: the free has run
//     (infinirtMemPoolReuseAllowOpportunistic) or the allocating stream waited on an event
//     recorded after the free (infinirtMemPoolReuseFollowEventDependencies).
// A block is recognised by its address. So that the address tells, the release threshold is
// raised where a synchronisation would otherwise give the block back to the OS (whose
// allocator could hand out the same address again).
#include <gtest/gtest.h>

#include <cstdint>

#include "infinirt.h"
#include "stream_ordered_support.h"

namespace infinirt::testing {
namespace {

// Rounds to an 8 KiB block. The fixture empties the pool before each test, so a block of that
// class can only be one the test itself freed.
constexpr size_t kBytes = 8000;
constexpr uint64_t kKeepEverything = ~uint64_t{0};

using ReuseTest = StreamOrderedTest;

TEST_F(ReuseTest, SameStreamReusesAFreedBlockAtOnceWhileTheStreamIsBusy) {
  Gate& gate = Block(a_);
  void* first = AllocAsync(kBytes, a_);
  ASSERT_OK(infinirtMemsetAsync(first, 0x11, kBytes, a_));
  ASSERT_OK(infinirtFreeAsync(first, a_));
  void* second = AllocAsync(kBytes, a_);
  EXPECT_EQ(second, first) << "the same stream did not reuse the block it freed";
  EXPECT_TRUE(Busy(a_)) << "the free ran already: the test proves nothing";
  ASSERT_OK(infinirtMemsetAsync(second, 0x22, kBytes, a_));
  ASSERT_OK(infinirtMemcpyAsync(out_, second, kBytes, infinirtMemcpyDeviceToHost, a_));
  ASSERT_OK(infinirtFreeAsync(second, a_));
  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(a_));
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0x22)) << "work on the reused block ran out of order";
}

TEST_F(ReuseTest, SameStreamReuseNeedsNeitherReusePolicy) {
  pool_.SetFlag(infinirtMemPoolReuseAllowOpportunistic, 0);
  pool_.SetFlag(infinirtMemPoolReuseFollowEventDependencies, 0);
  Gate& gate = Block(a_);
  void* first = AllocAsync(kBytes, a_);
  ASSERT_OK(infinirtFreeAsync(first, a_));
  void* second = AllocAsync(kBytes, a_);
  EXPECT_EQ(second, first);
  EXPECT_TRUE(Busy(a_));
  ASSERT_OK(infinirtFreeAsync(second, a_));
  gate.Open();
}

TEST_F(ReuseTest, AnotherStreamDoesNotGetABlockWhoseFreeIsPending) {
  void* freed = AllocAsync(kBytes, a_);
  ASSERT_OK(infinirtStreamSynchronize(a_));
  Gate& gate = Block(a_);
  ASSERT_OK(infinirtFreeAsync(freed, a_));
  void* other = AllocAsync(kBytes, b_);
  EXPECT_NE(other, freed) << "stream b got a block that stream a may still be using";
  EXPECT_TRUE(Busy(a_));
  // The new block is usable on b while a is still held.
  ASSERT_OK(infinirtMemsetAsync(other, 0x33, kBytes, b_));
  ASSERT_OK(infinirtMemcpyAsync(out_, other, kBytes, infinirtMemcpyDeviceToHost, b_));
  ASSERT_OK(infinirtFreeAsync(other, b_));
  ASSERT_OK(infinirtStreamSynchronize(b_));
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0x33));
  EXPECT_TRUE(Busy(a_));
  gate.Open();
}

TEST_F(ReuseTest, AnotherStreamReusesTheBlockAfterTheFreeingStreamIsSynchronised) {
  pool_.SetReleaseThreshold(kKeepEverything);
  void* freed = AllocAsync(kBytes, a_);
  Gate& gate = Block(a_);
  ASSERT_OK(infinirtFreeAsync(freed, a_));
  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(a_));
  void* reused = AllocAsync(kBytes, b_);
  EXPECT_EQ(reused, freed);
  ASSERT_OK(infinirtFreeAsync(reused, b_));
}

// Opportunistic reuse: the free has run, though no host call synchronised with it.
TEST_F(ReuseTest, AnotherStreamReusesTheBlockOnceTheFreeHasRun) {
  void* freed = AllocAsync(kBytes, a_);
  Gate& gate = Block(a_);
  ASSERT_OK(infinirtFreeAsync(freed, a_));
  gate.Open();
  ASSERT_TRUE(WaitUntil([&] { return infinirtStreamQuery(a_) == infinirtSuccess; }));
  void* reused = AllocAsync(kBytes, b_);
  EXPECT_EQ(reused, freed);
  ASSERT_OK(infinirtFreeAsync(reused, b_));
}

TEST_F(ReuseTest, OpportunisticReuseOffKeepsACompletedFreeFromAnotherStream) {
  pool_.SetFlag(infinirtMemPoolReuseAllowOpportunistic, 0);
  ASSERT_EQ(pool_.GetFlag(infinirtMemPoolReuseAllowOpportunistic), 0);
  void* freed = AllocAsync(kBytes, a_);
  Gate& gate = Block(a_);
  ASSERT_OK(infinirtFreeAsync(freed, a_));
  gate.Open();
  ASSERT_TRUE(WaitUntil([&] { return infinirtStreamQuery(a_) == infinirtSuccess; }));
  void* other = AllocAsync(kBytes, b_);
  EXPECT_NE(other, freed) << "reused with infinirtMemPoolReuseAllowOpportunistic off";
  ASSERT_OK(infinirtFreeAsync(other, b_));
}

// Event dependency: b waits on an event recorded after the free, so b's later work runs after
// everything a did with the block, although a has not even reached the free yet.
TEST_F(ReuseTest, AnotherStreamReusesTheBlockAfterWaitingOnAnEventRecordedAfterTheFree) {
  infinirtEvent_t after_free = nullptr;
  ASSERT_OK(infinirtEventCreateWithFlags(&after_free, infinirtEventDisableTiming));
  void* freed = AllocAsync(kBytes, a_);
  Gate& gate = Block(a_);
  ASSERT_OK(infinirtMemsetAsync(freed, 0xA1, kBytes, a_));
  ASSERT_OK(infinirtFreeAsync(freed, a_));
  ASSERT_OK(infinirtEventRecord(after_free, a_));
  ASSERT_OK(infinirtStreamWaitEvent(b_, after_free, 0));
  void* reused = AllocAsync(kBytes, b_);
  EXPECT_EQ(reused, freed) << "the event dependency was not followed";
  EXPECT_TRUE(Busy(a_));
  ASSERT_OK(infinirtMemsetAsync(reused, 0xB2, kBytes, b_));
  ASSERT_OK(infinirtMemcpyAsync(out_, reused, kBytes, infinirtMemcpyDeviceToHost, b_));
  ASSERT_OK(infinirtFreeAsync(reused, b_));
  EXPECT_TRUE(Busy(b_)) << "b did not wait for the event";
  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(b_));
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0xB2)) << "a's write to the block ran after b's";
  EXPECT_OK(infinirtEventDestroy(after_free));
}

TEST_F(ReuseTest, EventDependenciesStillApplyWithOpportunisticReuseOff) {
  pool_.SetFlag(infinirtMemPoolReuseAllowOpportunistic, 0);
  infinirtEvent_t after_free = nullptr;
  ASSERT_OK(infinirtEventCreateWithFlags(&after_free, infinirtEventDisableTiming));
  void* freed = AllocAsync(kBytes, a_);
  Gate& gate = Block(a_);
  ASSERT_OK(infinirtFreeAsync(freed, a_));
  ASSERT_OK(infinirtEventRecord(after_free, a_));
  ASSERT_OK(infinirtStreamWaitEvent(b_, after_free, 0));
  void* reused = AllocAsync(kBytes, b_);
  EXPECT_EQ(reused, freed);
  ASSERT_OK(infinirtFreeAsync(reused, b_));
  gate.Open();
  EXPECT_OK(infinirtEventDestroy(after_free));
}

TEST_F(ReuseTest, FollowEventDependenciesOffIgnoresTheEvent) {
  pool_.SetFlag(infinirtMemPoolReuseFollowEventDependencies, 0);
  ASSERT_EQ(pool_.GetFlag(infinirtMemPoolReuseFollowEventDependencies), 0);
  infinirtEvent_t after_free = nullptr;
  ASSERT_OK(infinirtEventCreateWithFlags(&after_free, infinirtEventDisableTiming));
  void* freed = AllocAsync(kBytes, a_);
  Gate& gate = Block(a_);
  ASSERT_OK(infinirtFreeAsync(freed, a_));
  ASSERT_OK(infinirtEventRecord(after_free, a_));
  ASSERT_OK(infinirtStreamWaitEvent(b_, after_free, 0));
  void* other = AllocAsync(kBytes, b_);
  EXPECT_NE(other, freed) << "reused with infinirtMemPoolReuseFollowEventDependencies off";
  ASSERT_OK(infinirtFreeAsync(other, b_));
  gate.Open();
  EXPECT_OK(infinirtEventDestroy(after_free));
}

// The event stands for a point before a's last use of the block: waiting on it orders nothing
// after the free.
TEST_F(ReuseTest, AnEventRecordedBeforeTheLastUseDoesNotAllowReuse) {
  infinirtEvent_t before_use = nullptr;
  ASSERT_OK(infinirtEventCreateWithFlags(&before_use, infinirtEventDisableTiming));
  void* freed = AllocAsync(kBytes, a_);
  Gate& gate = Block(a_);
  ASSERT_OK(infinirtEventRecord(before_use, a_));
  ASSERT_OK(infinirtMemsetAsync(freed, 0xC3, kBytes, a_));
  ASSERT_OK(infinirtFreeAsync(freed, a_));
  ASSERT_OK(infinirtStreamWaitEvent(b_, before_use, 0));
  void* other = AllocAsync(kBytes, b_);
  EXPECT_NE(other, freed) << "b got a block that a's pending memset still writes";
  ASSERT_OK(infinirtFreeAsync(other, b_));
  gate.Open();
  EXPECT_OK(infinirtEventDestroy(before_use));
}

// A FreeAsync on the legacy stream follows the work pending in every blocking stream (the legacy
// stream's implicit ordering), so the block is not free until that work has run: another stream
// must not get it, nor may TrimTo release it, while a copy on a blocking stream still reads it.
TEST_F(ReuseTest, FreeAsyncOnTheLegacyStreamWaitsForWorkPendingInBlockingStreams) {
  void* freed = AllocAsync(kBytes, a_);
  ASSERT_OK(infinirtStreamSynchronize(a_));
  Gate& gate = Block(a_);
  ASSERT_OK(infinirtMemsetAsync(freed, 0x4D, kBytes, a_));
  ASSERT_OK(infinirtMemcpyAsync(out_, freed, kBytes, infinirtMemcpyDeviceToHost, a_));
  ASSERT_OK(infinirtFreeAsync(freed, infinirtStreamLegacy));
  const uint64_t reserved = pool_.reserved();
  pool_.TrimTo(0);
  EXPECT_EQ(pool_.reserved(), reserved) << "TrimTo released a block that a's copy still reads";
  void* other = AllocAsync(kBytes, b_);
  EXPECT_NE(other, freed) << "b got a block that a's pending copy still reads";
  ASSERT_OK(infinirtMemsetAsync(other, 0x5E, kBytes, b_));
  ASSERT_OK(infinirtFreeAsync(other, b_));
  ASSERT_OK(infinirtStreamSynchronize(b_));
  EXPECT_TRUE(Busy(a_)) << "the gate opened early: the test proves nothing";
  gate.Open();
  ASSERT_OK(infinirtDeviceSynchronize());
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0x4D)) << "a's copy read a block handed out again";
}

// The other direction: a FreeAsync on a blocking stream follows the legacy stream's pending work.
TEST_F(ReuseTest, FreeAsyncOnABlockingStreamWaitsForWorkPendingInTheLegacyStream) {
  void* freed = AllocAsync(kBytes, a_);
  ASSERT_OK(infinirtStreamSynchronize(a_));
  Gate& gate = Block(infinirtStreamLegacy);
  ASSERT_OK(infinirtMemsetAsync(freed, 0x6F, kBytes, infinirtStreamLegacy));
  ASSERT_OK(
      infinirtMemcpyAsync(out_, freed, kBytes, infinirtMemcpyDeviceToHost, infinirtStreamLegacy));
  ASSERT_OK(infinirtFreeAsync(freed, a_));
  const uint64_t reserved = pool_.reserved();
  pool_.TrimTo(0);
  EXPECT_EQ(pool_.reserved(), reserved) << "TrimTo released a block the legacy stream still reads";
  void* other = AllocAsync(kBytes, b_);
  EXPECT_NE(other, freed) << "b got a block that the legacy stream's pending copy still reads";
  ASSERT_OK(infinirtMemsetAsync(other, 0x70, kBytes, b_));
  ASSERT_OK(infinirtFreeAsync(other, b_));
  ASSERT_OK(infinirtStreamSynchronize(b_));
  EXPECT_TRUE(Busy(infinirtStreamLegacy)) << "the gate opened early: the test proves nothing";
  gate.Open();
  ASSERT_OK(infinirtDeviceSynchronize());
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0x6F)) << "the legacy stream's copy read a reused block";
}

}  // namespace
}  // namespace infinirt::testing
