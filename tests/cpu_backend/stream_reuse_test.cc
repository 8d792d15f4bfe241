// The CPU backend reuses the objects of streams destroyed idle: a stream created afterwards must
// behave as a new one, with its own flags and none of the old stream's history.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <thread>

#include "infinirt.h"
#include "test_support.h"

namespace infinirt::testing {
namespace {

// The default pool with opportunistic reuse off and every free block kept across
// synchronisations: a block is then reused only by a stream ordered after its release. Restored
// afterwards, whatever the test's outcome.
class StrictPoolTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(infinirtDeviceGetDefaultMemPool(&pool_, 0));
    int off = 0;
    ASSERT_OK(infinirtMemPoolSetAttribute(pool_, infinirtMemPoolReuseAllowOpportunistic, &off));
    uint64_t keep_all = UINT64_MAX;
    ASSERT_OK(infinirtMemPoolSetAttribute(pool_, infinirtMemPoolAttrReleaseThreshold, &keep_all));
  }
  void TearDown() override {
    int on = 1;
    EXPECT_OK(infinirtMemPoolSetAttribute(pool_, infinirtMemPoolReuseAllowOpportunistic, &on));
    uint64_t keep_none = 0;
    EXPECT_OK(infinirtMemPoolSetAttribute(pool_, infinirtMemPoolAttrReleaseThreshold, &keep_none));
  }

 private:
  infinirtMemPool_t pool_ = nullptr;
};

// A wait noted by a destroyed stream (it waited for an event recorded after a FreeAsync) must
// not let the next stream reuse that memory: only the stream that waited may, and with
// opportunistic reuse off nothing else does.
TEST_F(StrictPoolTest, ANewStreamDoesNotInheritTheWaitsOfADestroyedOne) {
  infinirtStream_t freeing = nullptr, waiting = nullptr;
  ASSERT_OK(infinirtStreamCreateWithFlags(&freeing, infinirtStreamNonBlocking));
  void* block = nullptr;
  ASSERT_OK(infinirtMallocAsync(&block, 1 << 16, freeing));
  ASSERT_OK(infinirtFreeAsync(block, freeing));
  infinirtEvent_t after_free = nullptr;
  ASSERT_OK(infinirtEventCreate(&after_free));
  ASSERT_OK(infinirtEventRecord(after_free, freeing));
  ASSERT_OK(infinirtStreamSynchronize(freeing));

  // The control: a stream that waited for the event reuses the block.
  ASSERT_OK(infinirtStreamCreateWithFlags(&waiting, infinirtStreamNonBlocking));
  ASSERT_OK(infinirtStreamWaitEvent(waiting, after_free, 0));
  void* reused = nullptr;
  ASSERT_OK(infinirtMallocAsync(&reused, 1 << 16, waiting));
  EXPECT_EQ(reused, block);
  ASSERT_OK(infinirtFreeAsync(reused, freeing));
  ASSERT_OK(infinirtEventRecord(after_free, freeing));
  ASSERT_OK(infinirtStreamSynchronize(freeing));
  ASSERT_OK(infinirtStreamWaitEvent(waiting, after_free, 0));
  ASSERT_OK(infinirtStreamSynchronize(waiting));
  ASSERT_OK(infinirtStreamDestroy(waiting));

  // The stream created next (the same flags: the destroyed one's object, if reused) has waited
  // for nothing.
  infinirtStream_t next = nullptr;
  ASSERT_OK(infinirtStreamCreateWithFlags(&next, infinirtStreamNonBlocking));
  void* fresh = nullptr;
  ASSERT_OK(infinirtMallocAsync(&fresh, 1 << 16, next));
  EXPECT_NE(fresh, block) << "the new stream reused memory on the old stream's wait";
  ASSERT_OK(infinirtFreeAsync(fresh, next));
  ASSERT_OK(infinirtStreamSynchronize(next));

  infinirtEventDestroy(after_free);
  infinirtStreamDestroy(next);
  infinirtStreamDestroy(freeing);
}

// A stream is told apart from every other by its identity, which threads take in blocks. A wait
// for a point of one stream must count for that stream only, however the two streams came to be:
// here each was made (and remade from a recycled object) on a thread of its own, so that a
// scheme numbering each thread's streams from the same start would give both the same identity.
TEST_F(StrictPoolTest, AWaitForAStreamMadeOnOneThreadDoesNotCountForOneMadeOnAnother) {
  // A stream made on a new thread from a spare object (one is made spare just before), destroyed
  // there (recycled with the thread's first identity) and made again from the same object.
  auto stream_of_a_new_thread = [] {
    infinirtStream_t stream = nullptr;
    EXPECT_EQ(infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking), infinirtSuccess);
    EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
    std::thread([&] {
      EXPECT_EQ(infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking), infinirtSuccess);
      EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
      EXPECT_EQ(infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking), infinirtSuccess);
    }).join();
    return stream;
  };
  infinirtStream_t freeing = stream_of_a_new_thread();
  infinirtStream_t other = stream_of_a_new_thread();
  ASSERT_NE(freeing, nullptr);
  ASSERT_NE(other, nullptr);

  void* block = nullptr;
  ASSERT_OK(infinirtMallocAsync(&block, 1 << 16, freeing));
  ASSERT_OK(infinirtFreeAsync(block, freeing));
  ASSERT_OK(infinirtStreamSynchronize(freeing));
  // The other stream goes further in its own order than the free did in the freeing stream's
  // (whatever either object did before it was recycled: the tests before this one are short).
  void* scratch = nullptr;
  ASSERT_OK(infinirtMalloc(&scratch, 64));
  for (int i = 0; i < 4000; ++i) ASSERT_OK(infinirtMemsetAsync(scratch, i, 64, other));
  infinirtEvent_t other_done = nullptr;
  ASSERT_OK(infinirtEventCreate(&other_done));
  ASSERT_OK(infinirtEventRecord(other_done, other));
  ASSERT_OK(infinirtStreamSynchronize(other));

  infinirtStream_t waiting = nullptr;
  ASSERT_OK(infinirtStreamCreateWithFlags(&waiting, infinirtStreamNonBlocking));
  ASSERT_OK(infinirtStreamWaitEvent(waiting, other_done, 0));
  void* next = nullptr;
  ASSERT_OK(infinirtMallocAsync(&next, 1 << 16, waiting));
  EXPECT_NE(next, block) << "a wait for one stream counted for another";

  ASSERT_OK(infinirtFreeAsync(next, waiting));
  ASSERT_OK(infinirtStreamSynchronize(waiting));
  infinirtEventDestroy(other_done);
  infinirtFree(scratch);
  infinirtStreamDestroy(waiting);
  infinirtStreamDestroy(other);
  infinirtStreamDestroy(freeing);
}

// A blocking stream created after a non-blocking one was destroyed waits for the legacy stream.
TEST(StreamReuseTest, ANewStreamHasTheFlagsItWasCreatedWith) {
  for (int round = 0; round < 3; ++round) {
    infinirtStream_t non_blocking = nullptr;
    ASSERT_OK(infinirtStreamCreateWithFlags(&non_blocking, infinirtStreamNonBlocking));
    ASSERT_OK(infinirtStreamDestroy(non_blocking));
    infinirtStream_t blocking = nullptr;
    ASSERT_OK(infinirtStreamCreate(&blocking));

    Gate gate;
    ASSERT_OK(gate.Block(nullptr));  // the legacy stream
    char from[64], to[64] = {};
    std::memset(from, 5, sizeof from);
    ASSERT_OK(infinirtMemcpyAsync(to, from, sizeof to, infinirtMemcpyHostToDevice, blocking));
    EXPECT_EQ(infinirtStreamQuery(blocking), infinirtErrorNotReady)
        << "a blocking stream did not wait for the legacy stream";
    gate.Open();
    ASSERT_OK(infinirtStreamSynchronize(blocking));
    EXPECT_EQ(std::memcmp(to, from, sizeof to), 0);
    ASSERT_OK(infinirtStreamDestroy(blocking));
  }
}

// A stream destroyed with work pending is not reused before that work is done, and the work runs.
TEST(StreamReuseTest, AStreamDestroyedBusyFinishesItsWork) {
  infinirtStream_t busy = nullptr;
  ASSERT_OK(infinirtStreamCreateWithFlags(&busy, infinirtStreamNonBlocking));
  Gate gate;
  ASSERT_OK(gate.Block(busy));
  char from[64], to[64] = {};
  std::memset(from, 3, sizeof from);
  ASSERT_OK(infinirtMemcpyAsync(to, from, sizeof to, infinirtMemcpyHostToDevice, busy));
  ASSERT_OK(infinirtStreamDestroy(busy));
  infinirtStream_t next = nullptr;
  ASSERT_OK(infinirtStreamCreateWithFlags(&next, infinirtStreamNonBlocking));
  EXPECT_OK(infinirtStreamQuery(next)) << "the new stream inherited pending work";
  gate.Open();
  ASSERT_OK(infinirtDeviceSynchronize());
  EXPECT_EQ(std::memcmp(to, from, sizeof to), 0);
  infinirtStreamDestroy(next);
}

}  // namespace
}  // namespace infinirt::testing
