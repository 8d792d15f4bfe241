// 8 threads, each on its own streams, allocate and free stream-ordered memory 10,000 times
// each with no synchronisation in between (but every 100th iteration): blocks of varied sizes
// are filled (MemsetAsync or MemcpyAsync), copied back into a ring of pinned slots and freed,
// some on a second stream after an event wait, while a longer-lived block stays allocated over
// several iterations. At every synchronisation all copied bytes are checked, so a block handed
// out twice, or reused before its last use ran, shows as wrong data. At the end the pool's
// statistics balance: nothing in use, and nothing reserved after a synchronisation with the
// default release threshold 0.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "infinirt.h"
#include "stream_ordered_support.h"
#include "stress_support.h"

namespace infinirt::testing {
namespace {

constexpr int kThreads = 8;
constexpr uint32_t kIterations = 10000;
constexpr uint32_t kSyncEvery = 100;
constexpr size_t kSlotBytes = 2048;  // at most this much of each block is copied back
constexpr size_t kSlots = 128;       // copies between two synchronisations: 100 + 13
constexpr size_t kSourceBytes = 80 * 1024;
constexpr size_t kLargestCopiedBlock = 65539;
constexpr double kTimeBudgetSeconds = 120.0;

// Sizes across the pool's classes: tiny, around the 256-byte alignment, pages, and blocks
// over a MiB (rounded to whole MiB).
constexpr size_t kSizes[] = {1,    24,   255,   256,   257,
                             1000, 4096, 6000,  16384, kLargestCopiedBlock,
                             777,  3000, 12345, 40000, (size_t{1} << 20) + 17};

size_t SizeFor(int thread, uint32_t iteration) {
  const uint32_t mixed = iteration * 2654435761u + static_cast<uint32_t>(thread) * 40503u;
  const size_t index = (mixed >> 16) % (sizeof(kSizes) / sizeof(kSizes[0]));
  // The largest size only now and then: a MiB memset per iteration would dominate the run.
  if (kSizes[index] > kLargestCopiedBlock && iteration % 16 != 0) return kSizes[index % 7];
  return kSizes[index];
}

unsigned char FillValue(int thread, uint32_t iteration) {
  return static_cast<unsigned char>(1 + (thread * 31 + iteration * 7) % 255);
}

// What a pinned slot must hold after the next synchronisation.
struct Expectation {
  const unsigned char* slot;
  size_t bytes;
  const unsigned char* source;  // the bytes expected, or NULL for `value` everywhere
  unsigned char value;
  uint32_t iteration;
  const char* what;
};

class Worker {
 public:
  Worker(int thread, FailureLog* log) : thread_(thread), log_(log) {}

  void Run() {
    if (!SetUp()) return;
    for (uint32_t i = 0; i < kIterations; ++i) {
      if (!Iterate(i)) break;
      if (i % kSyncEvery == kSyncEvery - 1 && !SynchroniseAndVerify(i)) break;
    }
    if (lingering_ != nullptr)
      Call(infinirtFreeAsync(lingering_, main_), "FreeAsync(lingering)", 0);
    SynchroniseAndVerify(kIterations);
    TearDown();
  }

  uint64_t checked_bytes() const { return checked_bytes_; }

 private:
  bool Call(infinirtError_t error, const char* call, uint32_t iteration) {
    return CallOk(error, call,
                  "thread " + std::to_string(thread_) + " iteration " + std::to_string(iteration),
                  log_);
  }

  bool SetUp() {
    const unsigned int flags = thread_ % 2 ? infinirtStreamNonBlocking : infinirtStreamDefault;
    bool ok = Call(infinirtStreamCreateWithFlags(&main_, flags), "StreamCreate(main)", 0) &&
              Call(infinirtStreamCreateWithFlags(&side_, infinirtStreamNonBlocking),
                   "StreamCreate(side)", 0) &&
              Call(infinirtEventCreateWithFlags(&handoff_, infinirtEventDisableTiming),
                   "EventCreate", 0) &&
              Call(infinirtMallocHost(reinterpret_cast<void**>(&source_), kSourceBytes),
                   "MallocHost(source)", 0) &&
              Call(infinirtMallocHost(reinterpret_cast<void**>(&slots_), kSlots * kSlotBytes),
                   "MallocHost(slots)", 0);
    if (!ok) return false;
    const std::vector<unsigned char> pattern = Pattern(1000 + thread_, kSourceBytes);
    std::copy(pattern.begin(), pattern.end(), source_);
    return true;
  }

  void TearDown() {
    Call(infinirtStreamDestroy(main_), "StreamDestroy(main)", kIterations);
    Call(infinirtStreamDestroy(side_), "StreamDestroy(side)", kIterations);
    Call(infinirtEventDestroy(handoff_), "EventDestroy", kIterations);
    Call(infinirtFreeHost(source_), "FreeHost(source)", kIterations);
    Call(infinirtFreeHost(slots_), "FreeHost(slots)", kIterations);
  }

  unsigned char* NextSlot() { return slots_ + (next_slot_++ % kSlots) * kSlotBytes; }

  // Queues a copy of `bytes` from `block` into the next slot and remembers what it must hold.
  bool CopyBack(const unsigned char* block, size_t bytes, const unsigned char* source,
                unsigned char value, uint32_t iteration, const char* what) {
    unsigned char* slot = NextSlot();
    expected_.push_back({slot, bytes, source, value, iteration, what});
    return Call(infinirtMemcpyAsync(slot, block, bytes, infinirtMemcpyDeviceToHost, main_),
                "MemcpyAsync(slot, block)", iteration);
  }

  bool Iterate(uint32_t i) {
    const size_t size = SizeFor(thread_, i);
    unsigned char* block = nullptr;
    if (!Call(infinirtMallocAsync(reinterpret_cast<void**>(&block), size, main_), "MallocAsync",
              i)) {
      return false;
    }
    // Fill it, then copy its last bytes back.
    const size_t tail = std::min(size, kSlotBytes);
    const bool copy_in = i % 3 == 0 && size <= kLargestCopiedBlock;
    const unsigned char* source = nullptr;
    const unsigned char value = FillValue(thread_, i);
    bool ok;
    if (copy_in) {
      const unsigned char* from = source_ + (i * 37) % (kSourceBytes - kLargestCopiedBlock);
      source = from + size - tail;
      ok = Call(infinirtMemcpyAsync(block, from, size, infinirtMemcpyHostToDevice, main_),
                "MemcpyAsync(block, source)", i);
    } else {
      ok = Call(infinirtMemsetAsync(block, value, size, main_), "MemsetAsync(block)", i);
    }
    ok = ok && CopyBack(block + size - tail, tail, source, value, i, "block");
    // Every tenth block is freed on the side stream, ordered after the copy by an event.
    if (i % 10 == 7) {
      ok = ok && Call(infinirtEventRecord(handoff_, main_), "EventRecord", i) &&
           Call(infinirtStreamWaitEvent(side_, handoff_, 0), "StreamWaitEvent", i) &&
           Call(infinirtFreeAsync(block, side_), "FreeAsync(block, side)", i);
    } else {
      ok = ok && Call(infinirtFreeAsync(block, main_), "FreeAsync(block)", i);
    }
    return ok && Linger(i);
  }

  // A block allocated at iteration 8k and checked and freed at 8k+5: other blocks come and go
  // meanwhile, and none of them may share its memory.
  bool Linger(uint32_t i) {
    const size_t size = 512 + (i / 8 % 5) * 700;
    if (i % 8 == 0 && lingering_ == nullptr) {
      lingering_size_ = size;
      lingering_value_ = static_cast<unsigned char>(255 - FillValue(thread_, i));
      return Call(infinirtMallocAsync(reinterpret_cast<void**>(&lingering_), size, main_),
                  "MallocAsync(lingering)", i) &&
             Call(infinirtMemsetAsync(lingering_, lingering_value_, size, main_),
                  "MemsetAsync(lingering)", i);
    }
    if (i % 8 == 5 && lingering_ != nullptr) {
      const bool ok = CopyBack(lingering_, std::min(lingering_size_, kSlotBytes), nullptr,
                               lingering_value_, i, "lingering block") &&
                      Call(infinirtFreeAsync(lingering_, main_), "FreeAsync(lingering)", i);
      lingering_ = nullptr;
      return ok;
    }
    return true;
  }

  bool SynchroniseAndVerify(uint32_t iteration) {
    if (!Call(infinirtStreamSynchronize(main_), "StreamSynchronize(main)", iteration) ||
        !Call(infinirtStreamSynchronize(side_), "StreamSynchronize(side)", iteration)) {
      return false;
    }
    bool ok = true;
    for (const Expectation& expected : expected_) {
      for (size_t b = 0; b < expected.bytes; ++b) {
        const unsigned char want = expected.source ? expected.source[b] : expected.value;
        if (expected.slot[b] != want) {
          log_->Record("thread " + std::to_string(thread_) + " iteration " +
                       std::to_string(expected.iteration) + ": " + expected.what + " byte " +
                       std::to_string(b) + " is " + std::to_string(expected.slot[b]) +
                       ", expected " + std::to_string(want));
          ok = false;
          break;
        }
      }
      checked_bytes_ += expected.bytes;
    }
    expected_.clear();
    next_slot_ = 0;
    return ok;
  }

  const int thread_;
  FailureLog* const log_;
  infinirtStream_t main_ = nullptr;
  infinirtStream_t side_ = nullptr;
  infinirtEvent_t handoff_ = nullptr;
  unsigned char* source_ = nullptr;  // pinned, never written after set-up
  unsigned char* slots_ = nullptr;   // pinned ring
  size_t next_slot_ = 0;
  std::vector<Expectation> expected_;
  unsigned char* lingering_ = nullptr;
  size_t lingering_size_ = 0;
  unsigned char lingering_value_ = 0;
  uint64_t checked_bytes_ = 0;
};

TEST(StreamOrderedStress, EightThreadsAllocateAndFreeWithoutLosingAnything) {
  ASSERT_OK(infinirtInit());
  ASSERT_OK(infinirtDeviceSynchronize());
  Pool pool;
  pool.RestoreDefaults();
  pool.TrimTo(0);
  ASSERT_EQ(pool.used(), 0u);
  ASSERT_EQ(pool.reserved(), 0u);

  FailureLog log;
  std::vector<std::unique_ptr<Worker>> workers;
  for (int t = 0; t < kThreads; ++t) workers.push_back(std::make_unique<Worker>(t, &log));
  const Stopwatch stopwatch;
  std::vector<std::thread> threads;
  for (auto& worker : workers) threads.emplace_back([&worker] { worker->Run(); });
  for (std::thread& thread : threads) thread.join();
  const double seconds = stopwatch.Seconds();

  uint64_t checked = 0;
  for (const auto& worker : workers) checked += worker->checked_bytes();
  std::printf("%d threads x %u iterations in %.2f s; %llu bytes checked\n", kThreads, kIterations,
              seconds, static_cast<unsigned long long>(checked));
  EXPECT_EQ(log.count(), 0) << log.count() << " failures; the first: " << log.first();
  EXPECT_GT(checked, uint64_t{kThreads} * kIterations);
  EXPECT_LT(seconds, kTimeBudgetSeconds);

  // Every stream was synchronised by its thread: the statistics balance.
  EXPECT_EQ(pool.used(), 0u) << "stream-ordered memory still counted as in use";
  EXPECT_GT(pool.used_high(), 0u);
  EXPECT_GE(pool.reserved_high(), pool.used_high());
  ASSERT_OK(infinirtDeviceSynchronize());
  EXPECT_EQ(pool.reserved(), 0u) << "threshold 0: a synchronisation must release everything";
  EXPECT_EQ(ErrorText(infinirtGetLastError()), ErrorText(infinirtSuccess));
}

}  // namespace
}  // namespace infinirt::testing
