// Bad arguments to the memory functions: NULL and unknown pointers, copies and memsets that run
// past the end of an allocation, bad frees, bad flags and zero sizes. (Copy kinds that are not
// kinds: enum_value_test.cc.)
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <vector>

#include "bad_input_support.h"
#include "infinirt.h"

namespace infinirt::testing {
namespace {

constexpr size_t kSize = 256;

// Holds two device buffers, a pinned buffer and a pageable host buffer, all filled with known
// patterns, and checks that rejected calls changed none of them.
class MemoryArgumentTest : public BadInputTest {
 protected:
  void SetUp() override {
    BadInputTest::SetUp();
    ASSERT_OK(infinirtStreamCreate(&stream_));
    ASSERT_OK(infinirtMalloc(&device_, kSize));
    ASSERT_OK(infinirtMalloc(&neighbour_, kSize));
    ASSERT_OK(infinirtMallocHost(reinterpret_cast<void**>(&pinned_), kSize));
    host_ = Pattern(4, 2 * kSize);
    std::memcpy(pinned_, Pattern(3, kSize).data(), kSize);
    ASSERT_OK(infinirtMemcpy(device_, Pattern(1, kSize).data(), kSize, infinirtMemcpyHostToDevice));
    ASSERT_OK(
        infinirtMemcpy(neighbour_, Pattern(2, kSize).data(), kSize, infinirtMemcpyHostToDevice));
  }

  void TearDown() override {
    EXPECT_OK(infinirtStreamDestroy(stream_));
    EXPECT_OK(infinirtFree(device_));
    EXPECT_OK(infinirtFree(neighbour_));
    EXPECT_OK(infinirtFreeHost(pinned_));
    BadInputTest::TearDown();
  }

  static std::vector<unsigned char> ReadDevice(const void* device) {
    std::vector<unsigned char> bytes(kSize);
    EXPECT_OK(infinirtMemcpy(bytes.data(), device, kSize, infinirtMemcpyDeviceToHost));
    return bytes;
  }

  void ExpectAllBuffersUntouched() {
    ASSERT_OK(infinirtStreamSynchronize(stream_));
    EXPECT_EQ(ReadDevice(device_), Pattern(1, kSize)) << "the target allocation changed";
    EXPECT_EQ(ReadDevice(neighbour_), Pattern(2, kSize)) << "a neighbouring allocation changed";
    EXPECT_EQ(std::memcmp(pinned_, Pattern(3, kSize).data(), kSize), 0)
        << "the pinned buffer changed";
    EXPECT_EQ(host_, Pattern(4, 2 * kSize)) << "the pageable host buffer changed";
  }

  unsigned char* device_bytes() { return static_cast<unsigned char*>(device_); }

  infinirtStream_t stream_ = nullptr;
  void* device_ = nullptr;
  void* neighbour_ = nullptr;
  unsigned char* pinned_ = nullptr;
  std::vector<unsigned char> host_;
};

TEST_F(MemoryArgumentTest, CopiesRejectNullDestinationOrSource) {
  EXPECT_ANSWER(infinirtMemcpy(nullptr, host_.data(), kSize, infinirtMemcpyHostToDevice),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpy(device_, nullptr, kSize, infinirtMemcpyHostToDevice),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpy(nullptr, nullptr, kSize, infinirtMemcpyDefault),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpyAsync(nullptr, device_, kSize, infinirtMemcpyDeviceToHost, stream_),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpyAsync(pinned_, nullptr, kSize, infinirtMemcpyDeviceToHost, stream_),
                infinirtErrorInvalidValue);
  ExpectAllBuffersUntouched();
}

TEST_F(MemoryArgumentTest, MemsetsRejectNullPointer) {
  EXPECT_ANSWER(infinirtMemset(nullptr, 0, kSize), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemsetAsync(nullptr, 0, kSize, stream_), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemsetAsync(nullptr, 0, kSize, nullptr), infinirtErrorInvalidValue);
}

TEST_F(MemoryArgumentTest, MemcpyRejectsRangesPastTheEndOfAnAllocation) {
  unsigned char* host = host_.data();
  EXPECT_ANSWER(infinirtMemcpy(device_, host, kSize + 1, infinirtMemcpyHostToDevice),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpy(device_bytes() + kSize - 8, host, 16, infinirtMemcpyHostToDevice),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpy(device_bytes() + kSize - 1, host, 2, infinirtMemcpyDefault),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpy(host, device_bytes() + 8, kSize, infinirtMemcpyDeviceToHost),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpy(neighbour_, device_, kSize + 64, infinirtMemcpyDeviceToDevice),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpy(pinned_ + 1, host, kSize, infinirtMemcpyHostToHost),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpy(device_, host, SIZE_MAX, infinirtMemcpyHostToDevice),
                infinirtErrorInvalidValue);
  ExpectAllBuffersUntouched();
}

TEST_F(MemoryArgumentTest, MemcpyAsyncRejectsRangesPastTheEndOfAnAllocation) {
  EXPECT_ANSWER(
      infinirtMemcpyAsync(device_, pinned_, kSize + 1, infinirtMemcpyHostToDevice, stream_),
      infinirtErrorInvalidValue);
  EXPECT_ANSWER(
      infinirtMemcpyAsync(pinned_, device_bytes() + 1, kSize, infinirtMemcpyDeviceToHost, stream_),
      infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpyAsync(device_bytes() + kSize / 2, neighbour_, kSize,
                                    infinirtMemcpyDefault, nullptr),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemcpyAsync(host_.data(), device_, 2 * kSize, infinirtMemcpyDeviceToHost,
                                    infinirtStreamPerThread),
                infinirtErrorInvalidValue);
  ExpectAllBuffersUntouched();
}

TEST_F(MemoryArgumentTest, MemsetsRejectRangesPastTheEndOfAnAllocation) {
  EXPECT_ANSWER(infinirtMemset(device_, 0xEE, kSize + 1), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemset(device_bytes() + 1, 0xEE, kSize), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemset(pinned_ + kSize - 4, 0xEE, 5), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemset(device_, 0xEE, SIZE_MAX), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemsetAsync(device_bytes() + kSize - 1, 0xEE, 2, stream_),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemsetAsync(device_, 0xEE, 2 * kSize, nullptr), infinirtErrorInvalidValue);
  ExpectAllBuffersUntouched();
}

TEST_F(MemoryArgumentTest, MemsetsRejectMemoryInfiniRtDidNotAllocate) {
  unsigned char on_stack[64];
  std::memset(on_stack, 0x5A, sizeof(on_stack));
  std::vector<unsigned char> on_heap(64, 0x5A);
  EXPECT_ANSWER(infinirtMemset(on_stack, 0, sizeof(on_stack)), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemset(on_heap.data(), 0, on_heap.size()), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemsetAsync(on_stack, 0, sizeof(on_stack), stream_),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemsetAsync(on_heap.data(), 0, on_heap.size(), infinirtStreamLegacy),
                infinirtErrorInvalidValue);
  ASSERT_OK(infinirtDeviceSynchronize());
  for (unsigned char byte : on_stack) ASSERT_EQ(byte, 0x5A);
  for (unsigned char byte : on_heap) ASSERT_EQ(byte, 0x5A);
  ExpectAllBuffersUntouched();
}

TEST_F(MemoryArgumentTest, FreeRejectsPointersThatAreNotLiveDeviceAllocations) {
  void* doomed = nullptr;
  ASSERT_OK(infinirtMalloc(&doomed, kSize));
  ASSERT_OK(infinirtFree(doomed));
  int on_stack = 0;
  void* on_heap = std::malloc(64);
  EXPECT_ANSWER(infinirtFree(doomed), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtFree(&on_stack), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtFree(on_heap), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtFree(device_bytes() + 1), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtFree(device_bytes() + kSize / 2), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtFree(pinned_), infinirtErrorInvalidValue);
  std::free(on_heap);
  // The allocations an interior or wrong-kind free pointed into are still alive and intact.
  ExpectAllBuffersUntouched();
}

TEST_F(MemoryArgumentTest, FreeHostRejectsPointersThatAreNotLivePinnedAllocations) {
  void* doomed = nullptr;
  ASSERT_OK(infinirtMallocHost(&doomed, kSize));
  ASSERT_OK(infinirtFreeHost(doomed));
  int on_stack = 0;
  EXPECT_ANSWER(infinirtFreeHost(doomed), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtFreeHost(&on_stack), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtFreeHost(pinned_ + 16), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtFreeHost(device_), infinirtErrorInvalidValue);
  ExpectAllBuffersUntouched();
}

TEST_F(MemoryArgumentTest, FreeingNullSucceeds) {
  EXPECT_ANSWER(infinirtFree(nullptr), infinirtSuccess);
  EXPECT_ANSWER(infinirtFreeHost(nullptr), infinirtSuccess);
}

TEST_F(MemoryArgumentTest, HostAllocRejectsUnknownFlags) {
  for (unsigned int flags : {0x8u, 0x10u, 0x80000000u, 0xFFFFFFFFu}) {
    SCOPED_TRACE(::testing::Message() << "flags " << std::hex << flags);
    void* pointer = nullptr;
    EXPECT_ANSWER(infinirtHostAlloc(&pointer, 64, flags), infinirtErrorInvalidValue);
    EXPECT_EQ(pointer, nullptr);
  }
  void* pointer = nullptr;
  const unsigned int all_known =
      infinirtHostAllocPortable | infinirtHostAllocMapped | infinirtHostAllocWriteCombined;
  EXPECT_ANSWER(infinirtHostAlloc(&pointer, 64, all_known), infinirtSuccess);
  EXPECT_OK(infinirtFreeHost(pointer));
}

TEST_F(MemoryArgumentTest, ZeroByteAllocationsSucceedWithNull) {
  int marker = 0;
  void* const sentinel = &marker;
  void* pointer = sentinel;
  EXPECT_ANSWER(infinirtMalloc(&pointer, 0), infinirtSuccess);
  EXPECT_EQ(pointer, nullptr);
  pointer = sentinel;
  EXPECT_ANSWER(infinirtMallocHost(&pointer, 0), infinirtSuccess);
  EXPECT_EQ(pointer, nullptr);
  pointer = sentinel;
  EXPECT_ANSWER(infinirtHostAlloc(&pointer, 0, infinirtHostAllocPortable), infinirtSuccess);
  EXPECT_EQ(pointer, nullptr);
  // Freeing what a zero-byte allocation returned is freeing NULL.
  EXPECT_ANSWER(infinirtFree(nullptr), infinirtSuccess);
}

TEST_F(MemoryArgumentTest, ZeroByteCopiesAndMemsetsSucceedAndChangeNothing) {
  unsigned char* host = host_.data();
  EXPECT_ANSWER(infinirtMemcpy(device_, host, 0, infinirtMemcpyHostToDevice), infinirtSuccess);
  EXPECT_ANSWER(infinirtMemcpy(host, device_, 0, infinirtMemcpyDeviceToHost), infinirtSuccess);
  EXPECT_ANSWER(infinirtMemcpy(neighbour_, device_, 0, infinirtMemcpyDefault), infinirtSuccess);
  EXPECT_ANSWER(infinirtMemcpyAsync(device_, pinned_, 0, infinirtMemcpyHostToDevice, stream_),
                infinirtSuccess);
  EXPECT_ANSWER(infinirtMemcpyAsync(pinned_, device_, 0, infinirtMemcpyDeviceToHost, nullptr),
                infinirtSuccess);
  EXPECT_ANSWER(infinirtMemset(device_, 0xEE, 0), infinirtSuccess);
  EXPECT_ANSWER(infinirtMemsetAsync(device_, 0xEE, 0, stream_), infinirtSuccess);
  EXPECT_ANSWER(infinirtMemsetAsync(pinned_, 0xEE, 0, infinirtStreamPerThread), infinirtSuccess);
  // Zero bytes at the very end of an allocation are not past it.
  EXPECT_ANSWER(infinirtMemset(device_bytes() + kSize, 0xEE, 0), infinirtSuccess);
  ExpectAllBuffersUntouched();
}

}  // namespace
}  // namespace infinirt::testing
