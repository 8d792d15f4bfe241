// Integers that are not enumerators, passed where the API takes an enumeration: memcpy kinds,
// device attributes, device types, capture modes and memory pool attributes. The calls are made
// from C (raw_enum_calls.c), where any int is a valid argument, and must be rejected with the
// documented code, not crash or abort. Kept in an executable of its own, so a sanitizer abort
// here cannot hide the other tests.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <vector>

#include "bad_input_support.h"
#include "infinirt.h"
#include "raw_enum_calls.h"

namespace infinirt::testing {
namespace {

constexpr size_t kSize = 256;

// 5 is just past infinirtMemcpyDefault; 100 and -1 lie outside the enumeration's range.
const int kBadKinds[] = {5, 100, -1};

class EnumValueTest : public BadInputTest {
 protected:
  void SetUp() override {
    BadInputTest::SetUp();
    ASSERT_OK(infinirtStreamCreate(&stream_));
    ASSERT_OK(infinirtMalloc(&device_, kSize));
    ASSERT_OK(infinirtMallocHost(reinterpret_cast<void**>(&pinned_), kSize));
    std::memcpy(pinned_, Pattern(3, kSize).data(), kSize);
    ASSERT_OK(infinirtMemcpy(device_, Pattern(1, kSize).data(), kSize, infinirtMemcpyHostToDevice));
  }

  void TearDown() override {
    EXPECT_OK(infinirtStreamDestroy(stream_));
    EXPECT_OK(infinirtFree(device_));
    EXPECT_OK(infinirtFreeHost(pinned_));
    BadInputTest::TearDown();
  }

  void ExpectBuffersUntouched() {
    ASSERT_OK(infinirtStreamSynchronize(stream_));
    std::vector<unsigned char> device(kSize);
    EXPECT_OK(infinirtMemcpy(device.data(), device_, kSize, infinirtMemcpyDeviceToHost));
    EXPECT_EQ(device, Pattern(1, kSize)) << "the device buffer changed";
    EXPECT_EQ(std::memcmp(pinned_, Pattern(3, kSize).data(), kSize), 0)
        << "the pinned buffer changed";
    EXPECT_EQ(host_, Pattern(4, kSize)) << "the pageable buffer changed";
  }

  infinirtStream_t stream_ = nullptr;
  void* device_ = nullptr;
  unsigned char* pinned_ = nullptr;
  std::vector<unsigned char> host_ = Pattern(4, kSize);
};

TEST_F(EnumValueTest, MemcpyRejectsKindsThatAreNotMemcpyKinds) {
  for (int kind : kBadKinds) {
    SCOPED_TRACE(::testing::Message() << "kind " << kind);
    EXPECT_ANSWER(RawKindMemcpy(device_, host_.data(), kSize, kind),
                  infinirtErrorInvalidMemcpyDirection);
    EXPECT_ANSWER(RawKindMemcpy(host_.data(), device_, kSize, kind),
                  infinirtErrorInvalidMemcpyDirection);
    ExpectBuffersUntouched();
  }
}

TEST_F(EnumValueTest, MemcpyAsyncRejectsKindsThatAreNotMemcpyKinds) {
  for (int kind : kBadKinds) {
    SCOPED_TRACE(::testing::Message() << "kind " << kind);
    EXPECT_ANSWER(RawKindMemcpyAsync(device_, pinned_, kSize, kind, stream_),
                  infinirtErrorInvalidMemcpyDirection);
    EXPECT_ANSWER(RawKindMemcpyAsync(pinned_, device_, kSize, kind, nullptr),
                  infinirtErrorInvalidMemcpyDirection);
    EXPECT_ANSWER(RawKindMemcpyAsync(device_, host_.data(), kSize, kind, infinirtStreamPerThread),
                  infinirtErrorInvalidMemcpyDirection);
    ExpectBuffersUntouched();
  }
}

// 0, 44 and 92 lie inside the enumeration's range but name no attribute; 148 is one past the
// last attribute; 9999 and -1 are outside the range.
TEST_F(EnumValueTest, DeviceGetAttributeRejectsValuesThatAreNotAttributes) {
  for (int attribute : {0, 44, 92, 148, 9999, -1}) {
    SCOPED_TRACE(::testing::Message() << "attribute " << attribute);
    int value = -7;
    EXPECT_ANSWER(RawDeviceGetAttribute(&value, attribute, 0), infinirtErrorInvalidValue);
  }
  int warp_size = 0;
  EXPECT_ANSWER(RawDeviceGetAttribute(&warp_size, infinirtDevAttrWarpSize, 0), infinirtSuccess);
  EXPECT_GT(warp_size, 0);
}

TEST_F(EnumValueTest, DeviceGetOrdinalRejectsValuesThatAreNotDeviceTypes) {
  for (int type : {static_cast<int>(INFINI_DEVICE_TYPE_COUNT), 15, -1, 1000}) {
    SCOPED_TRACE(::testing::Message() << "device type " << type);
    int device = -7;
    EXPECT_ANSWER(RawDeviceGetOrdinal(&device, type, 0), infinirtErrorInvalidValue);
  }
}

// Capture modes are 0, 1 and 2.
const int kBadCaptureModes[] = {3, 100, -1};

TEST_F(EnumValueTest, StreamBeginCaptureRejectsValuesThatAreNotCaptureModes) {
  for (int mode : kBadCaptureModes) {
    SCOPED_TRACE(::testing::Message() << "mode " << mode);
    EXPECT_ANSWER(RawStreamBeginCapture(stream_, mode), infinirtErrorInvalidValue);
    infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusActive;
    EXPECT_OK(infinirtStreamIsCapturing(stream_, &status));
    EXPECT_EQ(status, infinirtStreamCaptureStatusNone) << "a refused capture began";
  }
}

TEST_F(EnumValueTest, ThreadExchangeStreamCaptureModeRejectsValuesThatAreNotModes) {
  for (int mode : kBadCaptureModes) {
    SCOPED_TRACE(::testing::Message() << "mode " << mode);
    int exchanged = mode;
    EXPECT_ANSWER(RawThreadExchangeStreamCaptureMode(&exchanged), infinirtErrorInvalidValue);
    EXPECT_EQ(exchanged, mode) << "a refused exchange wrote the mode";
  }
  // The thread's mode is still the default, Global.
  int mode = infinirtStreamCaptureModeRelaxed;
  EXPECT_ANSWER(RawThreadExchangeStreamCaptureMode(&mode), infinirtSuccess);
  EXPECT_EQ(mode, infinirtStreamCaptureModeGlobal);
  EXPECT_ANSWER(RawThreadExchangeStreamCaptureMode(&mode), infinirtSuccess);
  EXPECT_EQ(mode, infinirtStreamCaptureModeRelaxed);
}

// Pool attributes are 1 to 8.
TEST_F(EnumValueTest, MemPoolAttributesRejectValuesThatAreNotPoolAttributes) {
  infinirtMemPool_t pool = nullptr;
  ASSERT_OK(infinirtDeviceGetDefaultMemPool(&pool, 0));
  for (int attribute : {0, 9, 100, -1}) {
    SCOPED_TRACE(::testing::Message() << "attribute " << attribute);
    uint64_t value = 0;
    EXPECT_ANSWER(RawMemPoolGetAttribute(pool, attribute, &value), infinirtErrorInvalidValue);
    EXPECT_ANSWER(RawMemPoolSetAttribute(pool, attribute, &value), infinirtErrorInvalidValue);
  }
  uint64_t threshold = 1;
  EXPECT_ANSWER(RawMemPoolGetAttribute(pool, infinirtMemPoolAttrReleaseThreshold, &threshold),
                infinirtSuccess);
  EXPECT_EQ(threshold, 0u);
}

}  // namespace
}  // namespace infinirt::testing
