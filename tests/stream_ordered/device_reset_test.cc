// S24: infinirtDeviceReset destroys the device's streams, events and infinirtMalloc memory, but
// not stream-ordered allocations: they keep their contents and are freed later with
// infinirtFreeAsync (or infinirtFree). An executable of its own, since a reset destroys every
// object of the process's device.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "infinirt.h"
#include "stream_ordered_support.h"

namespace infinirt::testing {
namespace {

constexpr size_t kBytes = 4096;

// Allocates a block on a new stream and fills it with the pattern of `seed`.
void* FilledBlock(infinirtStream_t stream, uint32_t seed) {
  const std::vector<unsigned char> pattern = Pattern(seed, kBytes);
  void* block = nullptr;
  EXPECT_OK(infinirtMallocAsync(&block, kBytes, stream));
  EXPECT_OK(infinirtMemcpyAsync(block, pattern.data(), kBytes, infinirtMemcpyHostToDevice, stream));
  EXPECT_OK(infinirtStreamSynchronize(stream));
  return block;
}

void ExpectBlockHolds(const void* block, uint32_t seed) {
  std::vector<unsigned char> bytes(kBytes);
  ASSERT_OK(infinirtMemcpy(bytes.data(), block, kBytes, infinirtMemcpyDeviceToHost));
  EXPECT_EQ(bytes, Pattern(seed, kBytes)) << "the block's contents changed";
}

TEST(DeviceResetTest, StreamOrderedAllocationsSurviveAResetAndCanBeFreedAfterIt) {
  ASSERT_OK(infinirtInit());
  Pool pool;
  pool.TrimTo(0);
  const uint64_t used_before = pool.used();
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  void* kept = FilledBlock(stream, 1);
  void* freed_with_free = FilledBlock(stream, 2);
  void* device = nullptr;
  ASSERT_OK(infinirtMalloc(&device, kBytes));

  ASSERT_OK(infinirtDeviceReset());

  // What the reset destroys is gone ...
  EXPECT_FAILS_WITH(infinirtErrorContextIsDestroyed, infinirtStreamQuery(stream));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFree(device));
  // ... the stream-ordered blocks are not.
  Pool after_reset;
  EXPECT_GE(after_reset.used(), used_before + 2 * kBytes);
  infinirtPointerAttributes attributes{};
  ASSERT_OK(infinirtPointerGetAttributes(&attributes, kept));
  EXPECT_EQ(attributes.type, infinirtMemoryTypeDevice);
  ExpectBlockHolds(kept, 1);
  ExpectBlockHolds(freed_with_free, 2);

  infinirtStream_t new_stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&new_stream));
  EXPECT_OK(infinirtFreeAsync(kept, new_stream));
  EXPECT_OK(infinirtFree(freed_with_free));
  EXPECT_FAILS_WITH(infinirtErrorInvalidValue, infinirtFreeAsync(kept, new_stream));
  ASSERT_OK(infinirtStreamSynchronize(new_stream));
  EXPECT_EQ(after_reset.used(), used_before);
  EXPECT_OK(infinirtStreamDestroy(new_stream));
}

TEST(DeviceResetTest, FreeAsyncOnTheLegacyStreamAfterAReset) {
  ASSERT_OK(infinirtInit());
  void* block = FilledBlock(nullptr, 3);
  ASSERT_OK(infinirtDeviceReset());
  ExpectBlockHolds(block, 3);
  EXPECT_OK(infinirtFreeAsync(block, nullptr));
  EXPECT_OK(infinirtDeviceSynchronize());
  EXPECT_EQ(ErrorText(infinirtGetLastError()), ErrorText(infinirtSuccess));
}

}  // namespace
}  // namespace infinirt::testing
