// A pool's blocks must outlive every copy that the program's stream order puts before their free,
// however the pool is asked to hand them out again or give them back meanwhile. Each of 1,000
// iterations allocates a block from a pool of the program's own (opportunistic reuse on, release
// threshold 0), fills it on one stream, reads it back on two streams at once (the second after an
// event), and frees it in stream order on a stream that follows both reads: the legacy stream,
// which follows every blocking stream implicitly, the second reading stream, or a blocking stream
// that follows the legacy stream's reads. While those copies are still in flight the pool is
// trimmed and a block of the same size is taken and overwritten on a non-blocking stream. Every
// copied-back byte is checked. A block released or handed out before its free was reached shows
// as wrong bytes, as a crash, or (under AddressSanitizer) as a use after free.
#include <gtest/gtest.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <string>
#include <vector>

#include "infinirt.h"
#include "stream_ordered_support.h"
#include "stress_support.h"

namespace infinirt::testing {
namespace {

constexpr int kIterations = 1000;
constexpr int kCheckEvery = 10;
// Larger than the CPU backend's inline threshold, so the copies go to its workers and are
// still running when the free, the trim and the reallocation are issued.
constexpr size_t kBytes = 256 * 1024;
constexpr unsigned char kOverwrite = 0xEE;

// Where each iteration frees its block; every choice is ordered after both reads.
enum class FreeOn { kLegacy, kSecondReader, kBlockingAfterLegacyReads };

FreeOn FreeFor(int iteration) { return static_cast<FreeOn>(iteration % 3); }

unsigned char ValueFor(int iteration) {
  const auto value = static_cast<unsigned char>(1 + iteration % 250);
  return value == kOverwrite ? 0x11 : value;
}

class PoolLifetime {
 public:
  bool SetUp() {
    infinirtMemPoolProps props;
    std::memset(&props, 0, sizeof props);
    props.allocType = infinirtMemAllocationTypePinned;
    props.location.type = infinirtMemLocationTypeDevice;
    int device = 0;
    if (!Call(infinirtGetDevice(&device), "GetDevice")) return false;
    props.location.id = device;
    const int on = 1;
    const uint64_t threshold = 0;
    return Call(infinirtMemPoolCreate(&pool_, &props), "MemPoolCreate") &&
           Call(infinirtMemPoolSetAttribute(pool_, infinirtMemPoolReuseAllowOpportunistic,
                                            const_cast<int*>(&on)),
                "MemPoolSetAttribute(opportunistic)") &&
           Call(infinirtMemPoolSetAttribute(pool_, infinirtMemPoolAttrReleaseThreshold,
                                            const_cast<uint64_t*>(&threshold)),
                "MemPoolSetAttribute(threshold)") &&
           Call(infinirtStreamCreate(&first_), "StreamCreate(first)") &&
           Call(infinirtStreamCreate(&second_), "StreamCreate(second)") &&
           Call(infinirtStreamCreateWithFlags(&other_, infinirtStreamNonBlocking),
                "StreamCreate(other)") &&
           Call(infinirtEventCreateWithFlags(&filled_, infinirtEventDisableTiming),
                "EventCreate(filled)") &&
           Call(infinirtEventCreateWithFlags(&read_, infinirtEventDisableTiming),
                "EventCreate(read)") &&
           Call(infinirtMallocHost(reinterpret_cast<void**>(&source_), kBytes),
                "MallocHost(source)") &&
           AllocateReadBack();
  }

  void TearDown() {
    Call(infinirtDeviceSynchronize(), "DeviceSynchronize");
    for (unsigned char* host : read_back_) Call(infinirtFreeHost(host), "FreeHost(read back)");
    Call(infinirtFreeHost(source_), "FreeHost(source)");
    Call(infinirtEventDestroy(filled_), "EventDestroy(filled)");
    Call(infinirtEventDestroy(read_), "EventDestroy(read)");
    Call(infinirtStreamDestroy(first_), "StreamDestroy(first)");
    Call(infinirtStreamDestroy(second_), "StreamDestroy(second)");
    Call(infinirtStreamDestroy(other_), "StreamDestroy(other)");
    Call(infinirtMemPoolDestroy(pool_), "MemPoolDestroy");
  }

  bool Iterate(int i) {
    iteration_ = i;
    // The source changes only once the previous iteration's fill has run.
    if (!Call(infinirtStreamSynchronize(Filler(i - 1)), "StreamSynchronize(filler)")) return false;
    std::memset(source_, ValueFor(i), kBytes);
    const int slot = i % kCheckEvery;
    unsigned char* block = nullptr;
    infinirtStream_t filler = Filler(i);
    infinirtStream_t reader = FreeFor(i) == FreeOn::kBlockingAfterLegacyReads ? filler : second_;
    bool ok =
        Call(infinirtMallocFromPoolAsync(reinterpret_cast<void**>(&block), kBytes, pool_, filler),
             "MallocFromPoolAsync") &&
        Call(infinirtMemcpyAsync(block, source_, kBytes, infinirtMemcpyHostToDevice, filler),
             "MemcpyAsync(fill)") &&
        Call(infinirtEventRecord(filled_, filler), "EventRecord(filled)") &&
        Call(infinirtStreamWaitEvent(reader, filled_, 0), "StreamWaitEvent(filled)") &&
        // Two reads at once: one on the filling stream, one on the reading stream.
        Call(infinirtMemcpyAsync(read_back_[2 * slot], block, kBytes, infinirtMemcpyDeviceToHost,
                                 filler),
             "MemcpyAsync(read 1)") &&
        Call(infinirtMemcpyAsync(read_back_[2 * slot + 1], block, kBytes,
                                 infinirtMemcpyDeviceToHost, reader),
             "MemcpyAsync(read 2)") &&
        Free(block, i);
    if (!ok) return false;
    expected_[slot] = ValueFor(i);
    // Meanwhile: give back what the pool may, and take the same size on an unrelated stream.
    unsigned char* again = nullptr;
    ok = Call(infinirtMemPoolTrimTo(pool_, 0), "MemPoolTrimTo") &&
         Call(infinirtMallocFromPoolAsync(reinterpret_cast<void**>(&again), kBytes, pool_, other_),
              "MallocFromPoolAsync(again)") &&
         Call(infinirtMemsetAsync(again, kOverwrite, kBytes, other_), "MemsetAsync(again)") &&
         Call(infinirtFreeAsync(again, other_), "FreeAsync(again)");
    if (!ok) return false;
    return slot != kCheckEvery - 1 || Check();
  }

  bool Check() {
    if (!Call(infinirtDeviceSynchronize(), "DeviceSynchronize")) return false;
    for (int slot = 0; slot < kCheckEvery; ++slot) {
      for (int copy = 0; copy < 2; ++copy) {
        const unsigned char* bytes = read_back_[2 * slot + copy];
        for (size_t k = 0; k < kBytes; ++k) {
          if (bytes[k] != expected_[slot]) {
            log_.Record("iteration " + std::to_string(iteration_ - kCheckEvery + 1 + slot) +
                        ", read " + std::to_string(copy + 1) + ": byte " + std::to_string(k) +
                        " is " + std::to_string(bytes[k]) + ", not " +
                        std::to_string(expected_[slot]));
            return false;
          }
        }
        checked_bytes_ += kBytes;
      }
    }
    return true;
  }

  const FailureLog& log() const { return log_; }
  uint64_t checked_bytes() const { return checked_bytes_; }

 private:
  // The legacy stream fills where a blocking stream frees after the legacy stream's reads.
  infinirtStream_t Filler(int iteration) const {
    if (iteration < 0) return first_;
    return FreeFor(iteration) == FreeOn::kBlockingAfterLegacyReads ? infinirtStreamLegacy : first_;
  }

  bool Free(void* block, int i) {
    switch (FreeFor(i)) {
      case FreeOn::kLegacy:  // follows first_ and second_, both blocking
        return Call(infinirtFreeAsync(block, infinirtStreamLegacy), "FreeAsync(legacy)");
      case FreeOn::kSecondReader:  // joins the first reader through an event
        return Call(infinirtEventRecord(read_, first_), "EventRecord(read)") &&
               Call(infinirtStreamWaitEvent(second_, read_, 0), "StreamWaitEvent(read)") &&
               Call(infinirtFreeAsync(block, second_), "FreeAsync(second)");
      case FreeOn::kBlockingAfterLegacyReads:  // first_ follows the legacy stream's reads
        return Call(infinirtFreeAsync(block, first_), "FreeAsync(first)");
    }
    return false;
  }

  bool AllocateReadBack() {
    for (unsigned char*& host : read_back_) {
      if (!Call(infinirtMallocHost(reinterpret_cast<void**>(&host), kBytes), "MallocHost")) {
        return false;
      }
    }
    return true;
  }

  bool Call(infinirtError_t error, const char* call) {
    return CallOk(error, call, "iteration " + std::to_string(iteration_), &log_);
  }

  FailureLog log_;
  int iteration_ = 0;
  infinirtMemPool_t pool_ = nullptr;
  infinirtStream_t first_ = nullptr, second_ = nullptr;  // blocking
  infinirtStream_t other_ = nullptr;                     // non-blocking
  infinirtEvent_t filled_ = nullptr, read_ = nullptr;
  unsigned char* source_ = nullptr;
  unsigned char* read_back_[2 * kCheckEvery] = {};
  unsigned char expected_[kCheckEvery] = {};
  uint64_t checked_bytes_ = 0;
};

TEST(PoolLifetimeStress, BlocksOutliveTheCopiesOrderedBeforeTheirFree) {
  ASSERT_OK(infinirtInit());
  PoolLifetime test;
  const bool set_up = test.SetUp();
  int done = 0;
  for (; set_up && done < kIterations; ++done) {
    if (!test.Iterate(done)) break;
  }
  test.TearDown();
  std::printf("%d iterations; %llu bytes checked\n", done,
              static_cast<unsigned long long>(test.checked_bytes()));
  EXPECT_EQ(test.log().count(), 0)
      << test.log().count() << " failures; the first: " << test.log().first();
  EXPECT_EQ(done, kIterations);
  EXPECT_EQ(test.checked_bytes(), uint64_t{kIterations} * 2 * kBytes);
  EXPECT_EQ(ErrorText(infinirtGetLastError()), ErrorText(infinirtSuccess));
}

}  // namespace
}  // namespace infinirt::testing
