// Shared by the stream-ordered allocation tests: error checks that print names, the default
// memory pool's attributes, and a fixture that starts every test from an empty pool with the
// default attributes and checks that the test gave back everything it allocated.
//
// Streams are held busy only by a Gate (test_support.h). The fixture owns the gates, so a
// spinning host function never outlives its gate, even when an assertion ends a test early.
#ifndef INFINIRT_TESTS_STREAM_ORDERED_STREAM_ORDERED_SUPPORT_H_
#define INFINIRT_TESTS_STREAM_ORDERED_STREAM_ORDERED_SUPPORT_H_

#include <gtest/gtest.h>

#include <cstddef>
#include <cstdint>
#include <cstring>
#include <list>
#include <string>
#include <vector>

#include "infinirt.h"
#include "test_support.h"

namespace infinirt::testing {

// Checks the answer of a call that must fail, and that the failure became (and is cleared from)
// the thread's last error.
inline void CheckFailure(infinirtError_t actual, infinirtError_t expected, const char* call) {
  EXPECT_EQ(ErrorText(actual), ErrorText(expected)) << call;
  EXPECT_EQ(ErrorText(infinirtGetLastError()), ErrorText(expected)) << "last error after " << call;
}
#define EXPECT_FAILS_WITH(expected, call) \
  ::infinirt::testing::CheckFailure((call), (expected), #call)

// Bytes of a test pattern; seed tells patterns apart.
inline std::vector<unsigned char> Pattern(uint32_t seed, size_t size) {
  std::vector<unsigned char> bytes(size);
  for (size_t i = 0; i < size; ++i) {
    uint32_t x = seed * 2654435761u + static_cast<uint32_t>(i) * 40503u;
    x ^= x >> 15;
    bytes[i] = static_cast<unsigned char>(x * 2246822519u >> 24);
  }
  return bytes;
}

inline bool AllBytesAre(const void* memory, size_t size, unsigned char value) {
  const auto* bytes = static_cast<const unsigned char*>(memory);
  for (size_t i = 0; i < size; ++i) {
    if (bytes[i] != value) return false;
  }
  return true;
}

// The current device's default memory pool.
class Pool {
 public:
  Pool() {
    int device = 0;
    EXPECT_OK(infinirtGetDevice(&device));
    EXPECT_OK(infinirtDeviceGetDefaultMemPool(&pool_, device));
  }

  infinirtMemPool_t handle() const { return pool_; }

  uint64_t Get(infinirtMemPoolAttr attr) const {
    uint64_t value = ~uint64_t{0};
    EXPECT_OK(infinirtMemPoolGetAttribute(pool_, attr, &value)) << "attribute " << attr;
    return value;
  }
  uint64_t used() const { return Get(infinirtMemPoolAttrUsedMemCurrent); }
  uint64_t reserved() const { return Get(infinirtMemPoolAttrReservedMemCurrent); }
  uint64_t used_high() const { return Get(infinirtMemPoolAttrUsedMemHigh); }
  uint64_t reserved_high() const { return Get(infinirtMemPoolAttrReservedMemHigh); }

  // The reuse policies are ints.
  int GetFlag(infinirtMemPoolAttr attr) const {
    int value = -1;
    EXPECT_OK(infinirtMemPoolGetAttribute(pool_, attr, &value)) << "attribute " << attr;
    return value;
  }
  void SetFlag(infinirtMemPoolAttr attr, int value) const {
    EXPECT_OK(infinirtMemPoolSetAttribute(pool_, attr, &value)) << "attribute " << attr;
  }
  void SetReleaseThreshold(uint64_t bytes) const {
    EXPECT_OK(infinirtMemPoolSetAttribute(pool_, infinirtMemPoolAttrReleaseThreshold, &bytes));
  }
  void TrimTo(size_t bytes) const { EXPECT_OK(infinirtMemPoolTrimTo(pool_, bytes)); }

  // CUDA's defaults: both reuse policies on, release threshold 0.
  void RestoreDefaults() const {
    SetFlag(infinirtMemPoolReuseFollowEventDependencies, 1);
    SetFlag(infinirtMemPoolReuseAllowOpportunistic, 1);
    SetFlag(infinirtMemPoolReuseAllowInternalDependencies, 1);
    SetReleaseThreshold(0);
  }

 private:
  infinirtMemPool_t pool_ = nullptr;
};

// Every test starts with no queued work, the pool's default attributes and nothing kept in the
// pool; at the end, everything the test allocated must have gone back (used memory as before).
class StreamOrderedTest : public ::testing::Test {
 protected:
  static constexpr size_t kPinnedBytes = 64 * 1024;

  void SetUp() override {
    ASSERT_OK(infinirtInit());
    infinirtGetLastError();
    ASSERT_OK(infinirtDeviceSynchronize());
    pool_.RestoreDefaults();
    pool_.TrimTo(0);
    used_at_start_ = pool_.used();
    ASSERT_OK(infinirtStreamCreate(&a_));
    ASSERT_OK(infinirtStreamCreateWithFlags(&b_, infinirtStreamNonBlocking));
    ASSERT_OK(infinirtMallocHost(reinterpret_cast<void**>(&in_), kPinnedBytes));
    ASSERT_OK(infinirtMallocHost(reinterpret_cast<void**>(&out_), kPinnedBytes));
    std::memset(in_, 0, kPinnedBytes);
    std::memset(out_, 0, kPinnedBytes);
  }

  void TearDown() override {
    for (Gate& gate : gates_) gate.Open();
    EXPECT_OK(infinirtDeviceSynchronize());
    for (Gate& gate : gates_) EXPECT_FALSE(gate.timed_out()) << "a gate was never opened";
    EXPECT_OK(infinirtStreamDestroy(a_));
    EXPECT_OK(infinirtStreamDestroy(b_));
    EXPECT_OK(infinirtFreeHost(in_));
    EXPECT_OK(infinirtFreeHost(out_));
    EXPECT_EQ(pool_.used(), used_at_start_) << "the test left stream-ordered memory allocated";
    pool_.RestoreDefaults();
    pool_.TrimTo(0);
    EXPECT_EQ(ErrorText(infinirtGetLastError()), ErrorText(infinirtSuccess))
        << "a test left an error behind";
  }

  // A gate that lives until the end of the test.
  Gate& NewGate() { return gates_.emplace_back(); }

  // Holds `stream` busy until the returned gate opens.
  Gate& Block(infinirtStream_t stream) {
    Gate& gate = NewGate();
    EXPECT_OK(gate.Block(stream));
    return gate;
  }

  static bool Busy(infinirtStream_t stream) {
    return infinirtStreamQuery(stream) == infinirtErrorNotReady;
  }

  // MallocAsync that must succeed; NULL (and a failure) otherwise.
  static void* AllocAsync(size_t size, infinirtStream_t stream) {
    void* pointer = nullptr;
    EXPECT_OK(infinirtMallocAsync(&pointer, size, stream)) << size << " bytes";
    EXPECT_NE(pointer, nullptr);
    return pointer;
  }

  Pool pool_;
  uint64_t used_at_start_ = 0;
  infinirtStream_t a_ = nullptr;  // blocking
  infinirtStream_t b_ = nullptr;  // non-blocking
  unsigned char* in_ = nullptr;   // pinned
  unsigned char* out_ = nullptr;  // pinned

 private:
  std::list<Gate> gates_;
};

}  // namespace infinirt::testing

#endif  // INFINIRT_TESTS_STREAM_ORDERED_STREAM_ORDERED_SUPPORT_H_
