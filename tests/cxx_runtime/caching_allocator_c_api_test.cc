// The caching allocator's C functions (infinirt/caching_allocator.h): the same caches as the C++
// layer's Runtimes, reached by pointer; stream-ordered reuse, recorded streams, pools for graph
// capture, statistics, and bad input answered with error codes.
#include <gtest/gtest.h>

#include "infinirt/caching_allocator.h"
#include "infinirt/runtime.hpp"
#include "test_support.h"

namespace infinirt {
namespace {

constexpr size_t kLarge = 4 << 20;  // a segment of its own

// A stream not ordered with the default one, or a plain one on a backend without those.
infinirtStream_t NewStream() {
  infinirtStream_t stream = nullptr;
  if (infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking) != infinirtSuccess) {
    infinirtGetLastError();
    EXPECT_OK(infinirtStreamCreate(&stream));
  }
  return stream;
}

class CachingAllocatorCApiTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(infinirtGetDevice(&ordinal));
    ASSERT_OK(infinirtCachingAllocatorFreeAll());  // nothing cached: addresses are predictable
  }
  void TearDown() override { EXPECT_OK(infinirtCachingAllocatorFreeAll()); }

  infinirtAllocatorStats Stats() const {
    infinirtAllocatorStats stats{};
    EXPECT_OK(infinirtCachingAllocatorGetStats(&stats, ordinal));
    return stats;
  }
  void* Allocate(size_t size, infinirtStream_t stream = nullptr) {
    void* pointer = nullptr;
    EXPECT_OK(infinirtCachingAllocatorMalloc(&pointer, size, stream));
    EXPECT_NE(pointer, nullptr);
    return pointer;
  }

  int ordinal = 0;
};

TEST_F(CachingAllocatorCApiTest, AllocatesThroughTheCxxLayersCacheAndCountsIt) {
  const infinirtAllocatorStats before = Stats();
  void* pointer = Allocate(1000);
  // Usable device memory.
  ASSERT_OK(infinirtMemset(pointer, 7, 1000));
  unsigned char byte = 0;
  ASSERT_OK(infinirtMemcpy(&byte, static_cast<char*>(pointer) + 999, 1, infinirtMemcpyDefault));
  EXPECT_EQ(byte, 7);
  const infinirtAllocatorStats during = Stats();
  EXPECT_EQ(during.allocatedBytes.current - before.allocatedBytes.current, 1024);  // rounded
  EXPECT_EQ(during.requestedBytes.current - before.requestedBytes.current, 1000);
  EXPECT_EQ(during.allocations.current - before.allocations.current, 1);
  // The C++ layer reports the same allocator.
  EXPECT_EQ(allocator::stats(Device::fromOrdinal(ordinal)).allocated_bytes.current,
            during.allocatedBytes.current);

  ASSERT_OK(infinirtCachingAllocatorFree(pointer));
  const infinirtAllocatorStats after = Stats();
  EXPECT_EQ(after.allocatedBytes.current, before.allocatedBytes.current);
  EXPECT_GT(after.reservedBytes.current, 0) << "the segment stays cached";
  EXPECT_EQ(Allocate(1000), pointer) << "reused at once for the same stream";
}

TEST_F(CachingAllocatorCApiTest, RecordedStreamsDelayReuseUntilTheirWorkPassesTheFree) {
  infinirtStream_t user = NewStream();
  testing::Gate gate;
  const infinirtError_t blocked = gate.Block(user);
  if (blocked == infinirtErrorNotSupported) GTEST_SKIP() << "no host functions on this backend";
  ASSERT_OK(blocked);
  void* pointer = Allocate(kLarge);
  ASSERT_OK(infinirtMemsetAsync(pointer, 1, kLarge, user));  // queued behind the gate
  ASSERT_OK(infinirtCachingAllocatorRecordStream(pointer, user));
  ASSERT_OK(infinirtCachingAllocatorFree(pointer));

  void* meanwhile = Allocate(kLarge);
  EXPECT_NE(meanwhile, pointer) << "reused while the recorded stream could still write it";
  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(user));
  EXPECT_EQ(Allocate(kLarge), pointer);
  EXPECT_FALSE(gate.timed_out());
  ASSERT_OK(infinirtStreamDestroy(user));
}

TEST_F(CachingAllocatorCApiTest, AStreamsBlocksServeOthersOnlyOnceItIsPastThem) {
  infinirtStream_t mine = NewStream();
  infinirtStream_t theirs = NewStream();
  testing::Gate gate;
  const infinirtError_t blocked = gate.Block(mine);
  if (blocked == infinirtErrorNotSupported) GTEST_SKIP() << "no host functions on this backend";
  ASSERT_OK(blocked);
  void* pointer = Allocate(kLarge, mine);
  ASSERT_OK(infinirtCachingAllocatorFree(pointer));
  EXPECT_NE(Allocate(kLarge, theirs), pointer) << "its stream has work queued before the free";
  gate.Open();
  // ReleaseStream waits for the stream and hands its blocks to every stream.
  ASSERT_OK(infinirtCachingAllocatorReleaseStream(mine));
  ASSERT_OK(infinirtStreamDestroy(mine));
  EXPECT_EQ(Allocate(kLarge, theirs), pointer);
  ASSERT_OK(infinirtStreamDestroy(theirs));
}

TEST_F(CachingAllocatorCApiTest, APinnedPoolKeepsItsFreedBlocksUntilReleased) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  unsigned long long pool = 0;
  ASSERT_OK(infinirtCachingAllocatorBeginPin(stream, &pool));
  EXPECT_NE(pool, 0u);
  void* pointer = Allocate(kLarge, stream);
  ASSERT_OK(infinirtCachingAllocatorFree(pointer));
  ASSERT_OK(infinirtCachingAllocatorEndPin(stream));
  EXPECT_NE(Allocate(kLarge, stream), pointer) << "a graph's replays may still use it";
  ASSERT_OK(infinirtCachingAllocatorReleasePool(pool));
  EXPECT_EQ(Allocate(kLarge, stream), pointer);
  EXPECT_EQ(infinirtCachingAllocatorReleasePool(pool), infinirtErrorInvalidValue)
      << "released twice";
  ASSERT_OK(infinirtCachingAllocatorReleaseStream(stream));
  ASSERT_OK(infinirtStreamDestroy(stream));
}

TEST_F(CachingAllocatorCApiTest, EmptyCacheAndPeaksAndFreeAll) {
  void* first = Allocate(kLarge);
  void* second = Allocate(kLarge);
  ASSERT_OK(infinirtCachingAllocatorFree(first));
  EXPECT_EQ(Stats().reservedBytes.current, static_cast<long long>(2 * kLarge));
  ASSERT_OK(infinirtCachingAllocatorEmptyCache(ordinal));
  EXPECT_EQ(Stats().reservedBytes.current, static_cast<long long>(kLarge)) << "one still used";
  EXPECT_EQ(Stats().allocatedBytes.peak, static_cast<long long>(2 * kLarge));
  ASSERT_OK(infinirtCachingAllocatorResetPeakStats(ordinal));
  EXPECT_EQ(Stats().allocatedBytes.peak, static_cast<long long>(kLarge));

  ASSERT_OK(infinirtCachingAllocatorFreeAll());
  const infinirtAllocatorStats stats = Stats();
  EXPECT_EQ(stats.allocatedBytes.current, 0);
  EXPECT_EQ(stats.reservedBytes.current, 0);
  EXPECT_EQ(infinirtCachingAllocatorFree(second), infinirtErrorInvalidValue)
      << "FreeAll freed it already";
}

TEST_F(CachingAllocatorCApiTest, BadInputGetsAnErrorCode) {
  void* pointer = nullptr;
  infinirtAllocatorStats stats{};
  unsigned long long pool = 0;
  EXPECT_EQ(infinirtCachingAllocatorMalloc(nullptr, 16, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtCachingAllocatorMalloc(&pointer, 0, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtCachingAllocatorMalloc(&pointer, 16, infinirtStreamPerThread),
            infinirtErrorNotSupported);
  EXPECT_EQ(infinirtCachingAllocatorMalloc(&pointer, size_t{1} << 62, nullptr),
            infinirtErrorMemoryAllocation);
  EXPECT_EQ(pointer, nullptr);
  EXPECT_OK(infinirtCachingAllocatorFree(nullptr));  // as infinirtFree(NULL)
  int on_stack = 0;
  EXPECT_EQ(infinirtCachingAllocatorFree(&on_stack), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtCachingAllocatorRecordStream(&on_stack, nullptr), infinirtErrorInvalidValue);
  void* allocated = Allocate(64);
  ASSERT_OK(infinirtCachingAllocatorFree(allocated));
  EXPECT_EQ(infinirtCachingAllocatorFree(allocated), infinirtErrorInvalidValue) << "twice";
  EXPECT_EQ(infinirtCachingAllocatorReleaseStream(nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtCachingAllocatorReleaseStream(infinirtStreamLegacy), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtCachingAllocatorBeginPin(nullptr, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtCachingAllocatorBeginPin(infinirtStreamPerThread, &pool),
            infinirtErrorNotSupported);
  EXPECT_EQ(infinirtCachingAllocatorReleasePool(12345), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtCachingAllocatorGetStats(nullptr, ordinal), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtCachingAllocatorGetStats(&stats, 9999), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtCachingAllocatorGetStats(&stats, -1), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtCachingAllocatorEmptyCache(9999), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtCachingAllocatorResetPeakStats(-1), infinirtErrorInvalidDevice);
  // A destroyed stream.
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  ASSERT_OK(infinirtStreamDestroy(stream));
  EXPECT_NE(infinirtCachingAllocatorMalloc(&pointer, 16, stream), infinirtSuccess);
  infinirtGetLastError();
}

}  // namespace
}  // namespace infinirt
