// The default memory pool's attributes: usage statistics that follow MallocAsync and FreeAsync,
// the release threshold (memory kept reserved across synchronisations), infinirtMemPoolTrimTo,
// resetting the high watermarks, and the values that cannot be set.
//
// CUDA's words, which the expectations follow: reserved memory is the pool's backing memory,
// in use or not; "when more than the release threshold bytes of memory are held by the memory
// pool, the allocator will try to release memory back to the OS on the next call to stream,
// event or context synchronize"; TrimTo "releases memory back to the OS until the pool contains
// fewer than minBytesToKeep reserved bytes, or there is no more memory that the allocator can
// safely release. [...] If the pool has less than minBytesToKeep reserved, the TrimTo operation
// is a no-op. Otherwise the pool will be guaranteed to have at least minBytesToKeep bytes
// reserved after the operation."
#include <gtest/gtest.h>

#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "infinirt.h"
#include "stream_ordered_support.h"

namespace infinirt::testing {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr uint64_t kKeepEverything = ~uint64_t{0};

using PoolAttributeTest = StreamOrderedTest;

TEST_F(PoolAttributeTest, TheDeviceReportsPoolsAndTheDefaultPoolIsOneHandle) {
  int device = -1;
  ASSERT_OK(infinirtGetDevice(&device));
  int supported = 0;
  ASSERT_OK(infinirtDeviceGetAttribute(&supported, infinirtDevAttrMemoryPoolsSupported, device));
  EXPECT_EQ(supported, 1);
  infinirtMemPool_t again = nullptr;
  ASSERT_OK(infinirtDeviceGetDefaultMemPool(&again, device));
  EXPECT_EQ(again, pool_.handle());
  EXPECT_NE(again, nullptr);
}

TEST_F(PoolAttributeTest, DefaultsAreThoseOfCuda) {
  EXPECT_EQ(pool_.GetFlag(infinirtMemPoolReuseFollowEventDependencies), 1);
  EXPECT_EQ(pool_.GetFlag(infinirtMemPoolReuseAllowOpportunistic), 1);
  EXPECT_EQ(pool_.GetFlag(infinirtMemPoolReuseAllowInternalDependencies), 1);
  EXPECT_EQ(pool_.Get(infinirtMemPoolAttrReleaseThreshold), 0u);
  EXPECT_EQ(pool_.used(), 0u) << "nothing is allocated at the start of a test";
  EXPECT_EQ(pool_.reserved(), 0u) << "the fixture trimmed the pool";
}

TEST_F(PoolAttributeTest, ReusePoliciesAndReleaseThresholdReadBackWhatWasSet) {
  for (infinirtMemPoolAttr attr :
       {infinirtMemPoolReuseFollowEventDependencies, infinirtMemPoolReuseAllowOpportunistic,
        infinirtMemPoolReuseAllowInternalDependencies}) {
    SCOPED_TRACE(::testing::Message() << "attribute " << attr);
    pool_.SetFlag(attr, 0);
    EXPECT_EQ(pool_.GetFlag(attr), 0);
    pool_.SetFlag(attr, 1);
    EXPECT_EQ(pool_.GetFlag(attr), 1);
  }
  for (uint64_t threshold : {uint64_t{4096}, uint64_t{1} << 40, kKeepEverything, uint64_t{0}}) {
    pool_.SetReleaseThreshold(threshold);
    EXPECT_EQ(pool_.Get(infinirtMemPoolAttrReleaseThreshold), threshold);
  }
}

TEST_F(PoolAttributeTest, UsedMemoryRisesOnMallocAsyncAndFallsOnFreeAsync) {
  const uint64_t used0 = pool_.used();
  void* first = AllocAsync(3 * kMiB, a_);
  const uint64_t used1 = pool_.used();
  EXPECT_GE(used1, used0 + 3 * kMiB);
  void* second = AllocAsync(1000, b_);
  const uint64_t used2 = pool_.used();
  EXPECT_GE(used2, used1 + 1000);
  EXPECT_GE(pool_.used_high(), used2);
  EXPECT_GE(pool_.reserved(), used2);
  ASSERT_OK(infinirtFreeAsync(first, a_));
  EXPECT_EQ(pool_.used(), used2 - (used1 - used0));
  ASSERT_OK(infinirtFreeAsync(second, b_));
  EXPECT_EQ(pool_.used(), used0);
  EXPECT_GE(pool_.used_high(), used2) << "the high watermark fell with the usage";
}

TEST_F(PoolAttributeTest, ReservedMemoryStaysAfterFreeAsyncUntilASynchronisation) {
  const uint64_t reserved0 = pool_.reserved();
  void* block = AllocAsync(2 * kMiB, a_);
  const uint64_t reserved1 = pool_.reserved();
  EXPECT_GE(reserved1, reserved0 + 2 * kMiB);
  ASSERT_OK(infinirtFreeAsync(block, a_));
  EXPECT_EQ(pool_.reserved(), reserved1) << "FreeAsync alone returned memory to the OS";
  EXPECT_GE(pool_.reserved_high(), reserved1);
  ASSERT_OK(infinirtStreamSynchronize(a_));
  EXPECT_EQ(pool_.reserved(), reserved0) << "threshold 0: a synchronisation releases it all";
  EXPECT_GE(pool_.reserved_high(), reserved1);
}

// Each kind of synchronisation releases what the threshold does not let the pool keep.
TEST_F(PoolAttributeTest, EverySynchronisingCallReleasesMemoryAboveTheThreshold) {
  infinirtEvent_t event = nullptr;
  ASSERT_OK(infinirtEventCreateWithFlags(&event, infinirtEventDisableTiming));
  const std::vector<std::pair<std::string, std::function<infinirtError_t()>>> synchronisations = {
      {"StreamSynchronize of the freeing stream", [&] { return infinirtStreamSynchronize(a_); }},
      {"StreamSynchronize of another stream", [&] { return infinirtStreamSynchronize(b_); }},
      {"StreamSynchronize of the legacy stream",
       [&] { return infinirtStreamSynchronize(nullptr); }},
      {"DeviceSynchronize", [&] { return infinirtDeviceSynchronize(); }},
      {"EventSynchronize of an event recorded after the free",
       [&] { return infinirtEventSynchronize(event); }},
  };
  const uint64_t reserved0 = pool_.reserved();
  for (const auto& [name, synchronise] : synchronisations) {
    SCOPED_TRACE(name);
    void* block = AllocAsync(kMiB, a_);
    ASSERT_OK(infinirtFreeAsync(block, a_));
    ASSERT_OK(infinirtEventRecord(event, a_));
    ASSERT_TRUE(WaitUntil([&] { return infinirtEventQuery(event) == infinirtSuccess; }));
    EXPECT_GT(pool_.reserved(), reserved0);
    EXPECT_OK(synchronise());
    EXPECT_EQ(pool_.reserved(), reserved0) << "the freed block is still reserved";
    pool_.TrimTo(0);
  }
  EXPECT_OK(infinirtEventDestroy(event));
}

TEST_F(PoolAttributeTest, AHighThresholdKeepsMemoryAcrossSynchronisationsUntilTrimTo) {
  pool_.SetReleaseThreshold(kKeepEverything);
  const uint64_t reserved0 = pool_.reserved();
  void* block = AllocAsync(2 * kMiB, a_);
  ASSERT_OK(infinirtFreeAsync(block, a_));
  ASSERT_OK(infinirtStreamSynchronize(a_));
  ASSERT_OK(infinirtDeviceSynchronize());
  EXPECT_GE(pool_.reserved(), reserved0 + 2 * kMiB) << "memory went back despite the threshold";
  EXPECT_EQ(pool_.used(), used_at_start_);
  pool_.TrimTo(0);
  EXPECT_EQ(pool_.reserved(), reserved0);
}

// Reserved memory counts blocks in use too: with 2 MiB in use and a 1 MiB threshold, the
// pool holds more than the threshold, so a synchronisation gives back the freed block.
TEST_F(PoolAttributeTest, TheThresholdComparesWithAllReservedMemory) {
  void* in_use = AllocAsync(2 * kMiB, a_);
  const uint64_t reserved_in_use = pool_.reserved();
  pool_.SetReleaseThreshold(kMiB);
  void* freed = AllocAsync(kMiB, a_);
  ASSERT_OK(infinirtFreeAsync(freed, a_));
  ASSERT_OK(infinirtStreamSynchronize(a_));
  EXPECT_EQ(pool_.reserved(), reserved_in_use)
      << "the pool holds more than the threshold after a synchronisation";
  ASSERT_OK(infinirtFreeAsync(in_use, a_));
}

TEST_F(PoolAttributeTest, AThresholdAboveTheFreedMemoryKeepsIt) {
  pool_.SetReleaseThreshold(4 * kMiB);
  void* freed = AllocAsync(2 * kMiB, a_);
  const uint64_t reserved1 = pool_.reserved();
  ASSERT_OK(infinirtFreeAsync(freed, a_));
  ASSERT_OK(infinirtStreamSynchronize(a_));
  EXPECT_EQ(pool_.reserved(), reserved1);
  pool_.TrimTo(0);
  EXPECT_EQ(pool_.reserved(), 0u);
}

TEST_F(PoolAttributeTest, TrimToKeepsAtLeastMinBytesToKeep) {
  pool_.SetReleaseThreshold(kKeepEverything);
  void* large = AllocAsync(2 * kMiB, a_);
  void* small = AllocAsync(1000, a_);
  ASSERT_OK(infinirtFreeAsync(large, a_));
  ASSERT_OK(infinirtFreeAsync(small, a_));
  ASSERT_OK(infinirtStreamSynchronize(a_));
  const uint64_t reserved = pool_.reserved();
  ASSERT_GE(reserved, 2 * kMiB + 1000);
  pool_.TrimTo(kMiB);
  EXPECT_GE(pool_.reserved(), kMiB) << "TrimTo released below minBytesToKeep";
  EXPECT_LE(pool_.reserved(), reserved);
  pool_.TrimTo(0);
  EXPECT_EQ(pool_.reserved(), 0u);
}

TEST_F(PoolAttributeTest, TrimToDoesNotReleaseMemoryInUseOrAwaitingItsFree) {
  void* in_use = AllocAsync(kMiB, a_);
  void* pending = AllocAsync(2 * kMiB, b_);
  Gate& gate = Block(b_);
  ASSERT_OK(infinirtFreeAsync(pending, b_));
  const uint64_t reserved = pool_.reserved();
  pool_.TrimTo(0);
  EXPECT_EQ(pool_.reserved(), reserved);
  ASSERT_OK(infinirtMemsetAsync(in_use, 0x3A, kMiB, a_));
  ASSERT_OK(infinirtMemcpyAsync(out_, in_use, kPinnedBytes, infinirtMemcpyDeviceToHost, a_));
  ASSERT_OK(infinirtStreamSynchronize(a_));
  EXPECT_TRUE(AllBytesAre(out_, kPinnedBytes, 0x3A));
  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(b_));
  ASSERT_OK(infinirtFreeAsync(in_use, a_));
  pool_.TrimTo(0);
  EXPECT_EQ(pool_.reserved(), 0u);
}

// After a reset a watermark covers only what happened since (CUDA leaves open whether it then
// reads 0 or the current value): it drops below the old peak and rises again with new use.
TEST_F(PoolAttributeTest, SettingAHighWatermarkToZeroResetsIt) {
  void* block = AllocAsync(2 * kMiB, a_);
  ASSERT_OK(infinirtFreeAsync(block, a_));
  ASSERT_OK(infinirtStreamSynchronize(a_));
  ASSERT_GE(pool_.used_high(), 2 * kMiB);
  ASSERT_GE(pool_.reserved_high(), 2 * kMiB);
  void* small = AllocAsync(1000, a_);
  uint64_t zero = 0;
  EXPECT_OK(infinirtMemPoolSetAttribute(pool_.handle(), infinirtMemPoolAttrUsedMemHigh, &zero));
  EXPECT_LE(pool_.used_high(), pool_.used());
  EXPECT_OK(infinirtMemPoolSetAttribute(pool_.handle(), infinirtMemPoolAttrReservedMemHigh, &zero));
  EXPECT_LE(pool_.reserved_high(), pool_.reserved());
  EXPECT_LT(pool_.reserved_high(), 2 * kMiB);
  void* more = AllocAsync(kMiB, a_);
  EXPECT_GE(pool_.used_high(), pool_.used());
  EXPECT_GE(pool_.reserved_high(), pool_.reserved());
  EXPECT_LT(pool_.used_high(), 2 * kMiB) << "the old peak came back";
  ASSERT_OK(infinirtFreeAsync(more, a_));
  ASSERT_OK(infinirtFreeAsync(small, a_));
}

TEST_F(PoolAttributeTest, SettingAHighWatermarkToNonZeroIsInvalidValue) {
  void* block = AllocAsync(kMiB, a_);
  const uint64_t used_high = pool_.used_high();
  const uint64_t reserved_high = pool_.reserved_high();
  for (uint64_t value : {uint64_t{1}, uint64_t{kMiB}, kKeepEverything}) {
    SCOPED_TRACE(::testing::Message() << "value " << value);
    EXPECT_FAILS_WITH(
        infinirtErrorInvalidValue,
        infinirtMemPoolSetAttribute(pool_.handle(), infinirtMemPoolAttrUsedMemHigh, &value));
    EXPECT_FAILS_WITH(
        infinirtErrorInvalidValue,
        infinirtMemPoolSetAttribute(pool_.handle(), infinirtMemPoolAttrReservedMemHigh, &value));
  }
  EXPECT_EQ(pool_.used_high(), used_high);
  EXPECT_EQ(pool_.reserved_high(), reserved_high);
  ASSERT_OK(infinirtFreeAsync(block, a_));
}

TEST_F(PoolAttributeTest, CurrentUsageCannotBeSet) {
  for (uint64_t value : {uint64_t{0}, uint64_t{4096}}) {
    SCOPED_TRACE(::testing::Message() << "value " << value);
    EXPECT_FAILS_WITH(
        infinirtErrorInvalidValue,
        infinirtMemPoolSetAttribute(pool_.handle(), infinirtMemPoolAttrUsedMemCurrent, &value));
    EXPECT_FAILS_WITH(
        infinirtErrorInvalidValue,
        infinirtMemPoolSetAttribute(pool_.handle(), infinirtMemPoolAttrReservedMemCurrent, &value));
  }
  EXPECT_EQ(pool_.used(), 0u);
  EXPECT_EQ(pool_.reserved(), 0u);
}

TEST_F(PoolAttributeTest, NullPoolAndNullValueAreInvalidValue) {
  uint64_t value = 0;
  EXPECT_FAILS_WITH(
      infinirtErrorInvalidValue,
      infinirtMemPoolGetAttribute(nullptr, infinirtMemPoolAttrUsedMemCurrent, &value));
  EXPECT_FAILS_WITH(
      infinirtErrorInvalidValue,
      infinirtMemPoolSetAttribute(nullptr, infinirtMemPoolAttrReleaseThreshold, &value));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtMemPoolTrimTo(nullptr, 0));
  EXPECT_FAILS_WITH(
      infinirtErrorInvalidValue,
      infinirtMemPoolGetAttribute(pool_.handle(), infinirtMemPoolAttrUsedMemCurrent, nullptr));
  EXPECT_FAILS_WITH(
      infinirtErrorInvalidValue,
      infinirtMemPoolSetAttribute(pool_.handle(), infinirtMemPoolAttrReleaseThreshold, nullptr));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtDeviceGetDefaultMemPool(nullptr, 0));
}

TEST_F(PoolAttributeTest, GarbagePoolHandlesAreInvalidResourceHandle) {
  int on_stack = 0;
  const std::vector<infinirtMemPool_t> garbage = {
      reinterpret_cast<infinirtMemPool_t>(uintptr_t{0xdeadbeef}),
      reinterpret_cast<infinirtMemPool_t>(~uintptr_t{0}),
      reinterpret_cast<infinirtMemPool_t>(&on_stack),
      reinterpret_cast<infinirtMemPool_t>(a_),  // a live stream is no pool
  };
  for (infinirtMemPool_t pool : garbage) {
    SCOPED_TRACE(::testing::Message() << "pool " << static_cast<void*>(pool));
    uint64_t value = 0;
    EXPECT_FAILS_WITH(
        infinirtErrorInvalidResourceHandle,
        infinirtMemPoolGetAttribute(pool, infinirtMemPoolAttrReleaseThreshold, &value));
    EXPECT_FAILS_WITH(
        infinirtErrorInvalidResourceHandle,
        infinirtMemPoolSetAttribute(pool, infinirtMemPoolAttrReleaseThreshold, &value));
    EXPECT_FAILS_WITH(infinirtErrorInvalidResourceHandle, infinirtMemPoolTrimTo(pool, 0));
  }
  EXPECT_EQ(on_stack, 0);
  EXPECT_EQ(pool_.Get(infinirtMemPoolAttrReleaseThreshold), 0u);
}

TEST_F(PoolAttributeTest, DefaultPoolOfABadDeviceIsInvalidDevice) {
  int count = 0;
  ASSERT_OK(infinirtGetDeviceCount(&count));
  for (int device : {-1, -2, count, count + 1, 1 << 30}) {
    SCOPED_TRACE(::testing::Message() << "device " << device);
    infinirtMemPool_t pool = nullptr;
    EXPECT_FAILS_WITH(infinirtErrorInvalidDevice, infinirtDeviceGetDefaultMemPool(&pool, device));
    EXPECT_EQ(pool, nullptr);
  }
}

}  // namespace
}  // namespace infinirt::testing
