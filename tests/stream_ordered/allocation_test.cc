// infinirtMallocAsync / infinirtFreeAsync (S22, S24): the memory is usable by later work in the
// allocating stream, and by other streams once they are ordered after the allocation; bad
// pointers and sizes are rejected with CUDA's codes and leave live allocations alone;
// infinirtFree releases stream-ordered memory without synchronising.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "infinirt.h"
#include "stream_ordered_support.h"

#if defined(__SANITIZE_ADDRESS__)
#define STREAM_ORDERED_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define STREAM_ORDERED_ASAN 1
#endif
#endif

#ifdef STREAM_ORDERED_ASAN
// AddressSanitizer aborts on an impossible allocation by default; the huge-size test needs the
// allocator to report failure, as it does without the sanitizer.
extern "C" __attribute__((visibility("default"))) const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}
#endif

namespace infinirt::testing {
namespace {

constexpr size_t kBytes = 4096;

using AllocationTest = StreamOrderedTest;

// Copies a pattern host -> block -> second block -> host, all queued on `stream` with no
// synchronisation before the end, the blocks allocated and freed in the same stream.
void ExpectDataPathThroughStream(infinirtStream_t stream, const unsigned char* in,
                                 unsigned char* out, uint32_t seed) {
  SCOPED_TRACE(::testing::Message() << "stream " << static_cast<void*>(stream));
  const std::vector<unsigned char> expected = Pattern(seed, kBytes);
  std::memcpy(const_cast<unsigned char*>(in), expected.data(), kBytes);
  std::memset(out, 0, kBytes);
  void* first = nullptr;
  void* second = nullptr;
  ASSERT_OK(infinirtMallocAsync(&first, kBytes, stream));
  ASSERT_OK(infinirtMemcpyAsync(first, in, kBytes, infinirtMemcpyHostToDevice, stream));
  ASSERT_OK(infinirtMallocAsync(&second, kBytes, stream));
  ASSERT_OK(infinirtMemcpyAsync(second, first, kBytes, infinirtMemcpyDeviceToDevice, stream));
  ASSERT_OK(infinirtFreeAsync(first, stream));
  ASSERT_OK(infinirtMemcpyAsync(out, second, kBytes, infinirtMemcpyDeviceToHost, stream));
  ASSERT_OK(infinirtFreeAsync(second, stream));
  ASSERT_OK(infinirtStreamSynchronize(stream));
  EXPECT_EQ(std::memcmp(out, expected.data(), kBytes), 0);
}

TEST_F(AllocationTest, MemoryIsUsableByLaterWorkInTheAllocatingStream) {
  ExpectDataPathThroughStream(a_, in_, out_, 1);
  ExpectDataPathThroughStream(b_, in_, out_, 2);
  ExpectDataPathThroughStream(nullptr, in_, out_, 3);
  ExpectDataPathThroughStream(infinirtStreamLegacy, in_, out_, 4);
  ExpectDataPathThroughStream(infinirtStreamPerThread, in_, out_, 5);
}

TEST_F(AllocationTest, MallocAsyncReturnsAtOnceWhileTheStreamIsBusy) {
  const std::vector<unsigned char> expected = Pattern(6, kBytes);
  std::memcpy(in_, expected.data(), kBytes);
  Gate& gate = Block(a_);
  void* block = AllocAsync(kBytes, a_);
  ASSERT_OK(infinirtMemcpyAsync(block, in_, kBytes, infinirtMemcpyHostToDevice, a_));
  ASSERT_OK(infinirtMemcpyAsync(out_, block, kBytes, infinirtMemcpyDeviceToHost, a_));
  ASSERT_OK(infinirtFreeAsync(block, a_));
  EXPECT_TRUE(Busy(a_));
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0)) << "queued work ran before the gate opened";
  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(a_));
  EXPECT_EQ(std::memcmp(out_, expected.data(), kBytes), 0);
}

TEST_F(AllocationTest, MemoryIsDeviceMemoryAlignedTo256Bytes) {
  for (size_t size : {size_t{1}, size_t{255}, size_t{257}, size_t{5000}, size_t{3} << 20}) {
    void* block = AllocAsync(size, a_);
    EXPECT_EQ(reinterpret_cast<uintptr_t>(block) % 256, 0u) << size << " bytes";
    infinirtPointerAttributes attributes{};
    ASSERT_OK(infinirtPointerGetAttributes(&attributes, block));
    EXPECT_EQ(attributes.type, infinirtMemoryTypeDevice) << size << " bytes";
    EXPECT_EQ(attributes.devicePointer, block);
    ASSERT_OK(infinirtMemsetAsync(block, 0x7E, size, a_));
    ASSERT_OK(infinirtFreeAsync(block, a_));
  }
}

TEST_F(AllocationTest, AnotherStreamUsesTheMemoryAfterWaitingOnAnEvent) {
  infinirtEvent_t written = nullptr;
  ASSERT_OK(infinirtEventCreateWithFlags(&written, infinirtEventDisableTiming));
  Gate& gate = Block(a_);
  void* block = AllocAsync(kBytes, a_);
  ASSERT_OK(infinirtMemsetAsync(block, 0x5D, kBytes, a_));
  ASSERT_OK(infinirtEventRecord(written, a_));
  ASSERT_OK(infinirtStreamWaitEvent(b_, written, 0));
  ASSERT_OK(infinirtMemcpyAsync(out_, block, kBytes, infinirtMemcpyDeviceToHost, b_));
  ASSERT_OK(infinirtFreeAsync(block, b_));
  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(b_));
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0x5D));
  EXPECT_OK(infinirtEventDestroy(written));
}

TEST_F(AllocationTest, ZeroBytesSucceedWithNull) {
  void* block = reinterpret_cast<void*>(uintptr_t{0x100});
  EXPECT_OK(infinirtMallocAsync(&block, 0, a_));
  EXPECT_EQ(block, nullptr);
  EXPECT_EQ(pool_.used(), used_at_start_);
}

TEST_F(AllocationTest, NullOutputIsInvalidValue) {
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtMallocAsync(nullptr, kBytes, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtMallocAsync(nullptr, kBytes, nullptr));
  EXPECT_EQ(pool_.used(), used_at_start_);
}

// Sizes no host can provide, including ones that overflow when rounded up to a block size.
TEST_F(AllocationTest, HugeSizeIsMemoryAllocationAndTheRuntimeStaysUsable) {
  constexpr size_t kMax = std::numeric_limits<size_t>::max();
  for (size_t size : {size_t{1} << 62, kMax / 2 + 1, kMax - (size_t{1} << 20) + 2, kMax}) {
    SCOPED_TRACE(::testing::Message() << "size " << size);
    void* block = nullptr;
    const infinirtError_t error = infinirtMallocAsync(&block, size, a_);
    EXPECT_FAILS_WITH(infinirtErrorMemoryAllocation, error);
    if (error == infinirtSuccess) {
      EXPECT_OK(infinirtFreeAsync(block, a_));
    }
  }
  EXPECT_EQ(pool_.used(), used_at_start_);
  ExpectDataPathThroughStream(a_, in_, out_, 7);
}

// The block may be larger inside the pool, but the allocation is what was asked for.
TEST_F(AllocationTest, CopiesAndMemsetsPastTheEndOfTheAllocationAreInvalidValue) {
  constexpr size_t kOdd = 1000;  // the pool hands out a 1024-byte block
  auto* block = static_cast<unsigned char*>(AllocAsync(kOdd, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtMemsetAsync(block, 0, kOdd + 1, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue,
                    infinirtMemcpyAsync(block + 1, in_, kOdd, infinirtMemcpyHostToDevice, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue,
                    infinirtMemcpyAsync(out_, block, kOdd + 24, infinirtMemcpyDeviceToHost, a_));
  EXPECT_OK(infinirtMemsetAsync(block, 0x0F, kOdd, a_));
  EXPECT_OK(infinirtFreeAsync(block, a_));
}

TEST_F(AllocationTest, FreeAsyncOfNullIsInvalidValue) {
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(nullptr, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(nullptr, nullptr));
}

TEST_F(AllocationTest, FreeAsyncOfMemoryItDidNotAllocateIsInvalidValue) {
  int on_stack = 0;
  void* heap = std::malloc(64);
  void* device = nullptr;
  ASSERT_OK(infinirtMalloc(&device, kBytes));
  ASSERT_OK(infinirtMemset(device, 0x42, kBytes));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(&on_stack, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(heap, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(in_, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue,
                    infinirtFreeAsync(static_cast<char*>(device) + 64, a_));  // interior
  // The infinirtMalloc memory is still live, and FreeAsync takes it (as NVIDIA's runtime does).
  ASSERT_OK(infinirtMemcpy(out_, device, kBytes, infinirtMemcpyDeviceToHost));
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0x42));
  EXPECT_OK(infinirtFreeAsync(device, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFree(device));
  std::free(heap);
}

TEST_F(AllocationTest, FreeAsyncOfAnInteriorPointerIsInvalidValueAndKeepsTheBlock) {
  auto* block = static_cast<unsigned char*>(AllocAsync(kBytes, a_));
  ASSERT_OK(infinirtMemsetAsync(block, 0x24, kBytes, a_));
  for (size_t offset : {size_t{1}, size_t{256}, kBytes - 1}) {
    EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(block + offset, a_));
  }
  ASSERT_OK(infinirtMemcpyAsync(out_, block, kBytes, infinirtMemcpyDeviceToHost, a_));
  ASSERT_OK(infinirtStreamSynchronize(a_));
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0x24));
  EXPECT_OK(infinirtFreeAsync(block, a_));
}

TEST_F(AllocationTest, SecondFreeAsyncIsInvalidValue) {
  void* block = AllocAsync(kBytes, a_);
  ASSERT_OK(infinirtFreeAsync(block, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(block, a_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(block, b_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFree(block));
}

// S22: infinirtFree of stream-ordered memory does not synchronise (the caller has made sure
// the memory is no longer in use); with a stream held busy it must return at once.
TEST_F(AllocationTest, FreeReleasesStreamOrderedMemoryWithoutSynchronising) {
  void* block = AllocAsync(kBytes, b_);
  ASSERT_OK(infinirtMemsetAsync(block, 0x66, kBytes, b_));
  ASSERT_OK(infinirtStreamSynchronize(b_));
  const uint64_t used_with_block = pool_.used();
  Gate& gate = Block(a_);
  EXPECT_OK(infinirtFree(block));
  EXPECT_TRUE(Busy(a_)) << "infinirtFree waited for the device";
  EXPECT_FALSE(gate.timed_out());
  EXPECT_LT(pool_.used(), used_with_block);
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(block, b_));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFree(block));
  gate.Open();
}

TEST_F(AllocationTest, FreeAsyncOnAnotherStreamThanTheAllocation) {
  void* block = AllocAsync(kBytes, a_);
  ASSERT_OK(infinirtMemsetAsync(block, 0x19, kBytes, a_));
  ASSERT_OK(infinirtMemcpyAsync(out_, block, kBytes, infinirtMemcpyDeviceToHost, a_));
  ASSERT_OK(infinirtStreamSynchronize(a_));
  EXPECT_OK(infinirtFreeAsync(block, b_));
  ASSERT_OK(infinirtStreamSynchronize(b_));
  EXPECT_TRUE(AllBytesAre(out_, kBytes, 0x19));
}

}  // namespace
}  // namespace infinirt::testing
