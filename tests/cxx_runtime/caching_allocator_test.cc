// The caching allocator behind Runtime::allocateMemory: reuse on the same stream, no reuse by
// another stream before it is ordered after the release, recordStream, splitting and merging,
// out of memory, statistics under threads.
#include <gtest/gtest.h>
#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <random>
#include <thread>
#include <vector>

#include "error_of.h"
#include "infinirt/runtime.hpp"
#include "test_support.h"

namespace infinirt {
namespace {

using testing::ErrorOf;

class CachingAllocatorTest : public ::testing::Test {
 protected:
  Runtime* runtime = context::getRuntime();
  Device device = runtime->device();

  AllocatorStats Stats() const { return allocator::stats(device); }
};

// Fills a block with one byte value, and checks it: memset and memcmp over reused host buffers,
// cheap under the sanitizers (unlike loops over bytes, or fresh buffers each time).
unsigned char* HostBuffer(int which, size_t size) {
  static std::vector<unsigned char> buffers[2];
  if (buffers[which].size() < size) buffers[which].resize(size);
  return buffers[which].data();
}
void Fill(Runtime* runtime, Memory& memory, unsigned char seed) {
  unsigned char* bytes = HostBuffer(0, memory.size());
  std::memset(bytes, seed, memory.size());
  runtime->memcpyH2D(memory.data(), bytes, memory.size(), /*async=*/false);
}
bool Holds(Runtime* runtime, Memory& memory, unsigned char seed) {
  unsigned char* expected = HostBuffer(0, memory.size());
  unsigned char* found = HostBuffer(1, memory.size());
  std::memset(expected, seed, memory.size());
  runtime->memcpyD2H(found, memory.data(), memory.size());
  return std::memcmp(found, expected, memory.size()) == 0;
}

TEST_F(CachingAllocatorTest, AReleasedBlockIsReusedAtOnceOnTheSameStream) {
  // An empty cache: no free neighbour merges with the block when it is released.
  allocator::emptyCache(device);
  std::shared_ptr<Memory> first = runtime->allocateMemory(4096);
  std::byte* address = first->data();
  const AllocatorStats before = Stats();
  first.reset();
  std::shared_ptr<Memory> second = runtime->allocateMemory(4000);  // rounds to the same size
  EXPECT_EQ(second->data(), address);
  EXPECT_EQ(second->size(), 4000u);
  const AllocatorStats after = Stats();
  EXPECT_EQ(after.cache_hits, before.cache_hits + 1);
  EXPECT_EQ(after.device_allocs, before.device_allocs);
}

TEST_F(CachingAllocatorTest, SmallRequestsShareASegmentAndLargeOnesGetTheirOwn) {
  allocator::emptyCache(device);
  const AllocatorStats before = Stats();
  std::vector<std::shared_ptr<Memory>> small;
  for (int i = 0; i < 16; ++i) small.push_back(runtime->allocateMemory(64 << 10));  // 1 MiB
  EXPECT_EQ(Stats().device_allocs, before.device_allocs + 1);  // one 2 MiB segment
  EXPECT_EQ(Stats().reserved_bytes.current, before.reserved_bytes.current + (2 << 20));
  std::shared_ptr<Memory> large = runtime->allocateMemory(3 << 20);
  EXPECT_EQ(Stats().device_allocs, before.device_allocs + 2);
  EXPECT_EQ(Stats().reserved_bytes.current, before.reserved_bytes.current + (2 << 20) + (4 << 20));
}

TEST_F(CachingAllocatorTest, SplittingAndMergingKeepTheDataOfLiveBlocks) {
  allocator::emptyCache(device);  // also takes back what this thread's runtime kept
  // On a thread of its own: when it exits, its runtime goes, and so do the blocks that runtime
  // kept for its stream (which stay apart from their neighbours until then).
  std::thread worker([] {
    Runtime* mine = context::getRuntime();
    std::mt19937 random(7);
    std::vector<std::pair<std::shared_ptr<Memory>, unsigned char>> live;
    for (int round = 0; round < 400; ++round) {
      if (!live.empty() && random() % 3 == 0) {
        const size_t victim = random() % live.size();
        ASSERT_TRUE(Holds(mine, *live[victim].first, live[victim].second)) << "round " << round;
        live.erase(live.begin() + static_cast<std::ptrdiff_t>(victim));
        continue;
      }
      const size_t size = random() % 2 ? 1 + random() % 200000 : (1 << 20) + random() % (2 << 20);
      auto memory = mine->allocateMemory(size);
      const auto seed = static_cast<unsigned char>(round);
      Fill(mine, *memory, seed);
      live.emplace_back(std::move(memory), seed);
    }
    for (auto& [memory, seed] : live) EXPECT_TRUE(Holds(mine, *memory, seed));
    live.clear();
    EXPECT_GT(allocator::stats(mine->device()).kept_bytes, 0);
  });
  worker.join();
  // Everything released: every segment is one free block again.
  const AllocatorStats stats = Stats();
  EXPECT_EQ(stats.kept_bytes, 0);
  EXPECT_EQ(stats.inactive_split_blocks.current, 0);
  EXPECT_EQ(stats.inactive_split_bytes.current, 0);
  EXPECT_GT(stats.inactive_split_bytes.peak, 0);  // there were split segments
}

TEST_F(CachingAllocatorTest, AnotherStreamReusesABlockOnlyAfterTheReleasingStreamPassedIt) {
  // Large blocks (a segment each) and an empty cache: the only block another stream could reuse
  // is the one released here.
  constexpr size_t kSize = 4 << 20;
  allocator::emptyCache(device);
  testing::Gate gate;
  const infinirtError_t blocked = gate.Block(runtime->stream());
  if (blocked == infinirtErrorNotSupported) GTEST_SKIP() << "no host functions on this backend";
  ASSERT_EQ(blocked, infinirtSuccess);
  std::shared_ptr<Memory> mine = runtime->allocateMemory(kSize);
  std::byte* address = mine->data();
  runtime->memcpyD2D(mine->data(), mine->data(), 4096);  // queued behind the gate
  mine.reset();  // released while this stream still has work that uses it

  std::shared_ptr<Memory> theirs;
  std::byte* their_second = nullptr;
  std::thread other([&] {  // its own runtime and stream
    Runtime* their_runtime = context::getRuntime();
    theirs = their_runtime->allocateMemory(kSize);
    EXPECT_NE(theirs->data(), address) << "reused before the releasing stream passed the release";
    gate.Open();
    runtime->syncStream();  // the releasing stream is now past the release
    their_second = their_runtime->allocateMemory(kSize)->data();
  });
  other.join();
  EXPECT_EQ(their_second, address) << "not reused once the releasing stream passed the release";
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(CachingAllocatorTest, RecordStreamDelaysReuseUntilThatStreamPassesTheRelease) {
  constexpr size_t kSize = 4 << 20;  // a segment each, in an emptied cache (as above)
  allocator::emptyCache(device);
  Stream user;  // another stream of this device that uses the memory
  testing::Gate gate;
  const infinirtError_t blocked = gate.Block(user.get());
  if (blocked == infinirtErrorNotSupported) GTEST_SKIP() << "no host functions on this backend";
  ASSERT_EQ(blocked, infinirtSuccess);
  std::shared_ptr<Memory> memory = runtime->allocateMemory(kSize);
  std::byte* address = memory->data();
  ASSERT_EQ(infinirtMemsetAsync(memory->data(), 1, kSize, user.get()), infinirtSuccess);
  memory->recordStream(user.get());
  memory->recordStream(runtime->stream());  // its own stream: nothing to do
  memory.reset();
  EXPECT_EQ(Stats().kept_bytes, 0) << "kept for the runtime's stream alone";
  EXPECT_EQ(Stats().active_bytes.current - Stats().allocated_bytes.current,
            static_cast<int64_t>(kSize));

  std::shared_ptr<Memory> meanwhile = runtime->allocateMemory(kSize);
  EXPECT_NE(meanwhile->data(), address) << "reused while the recorded stream could still use it";
  gate.Open();
  user.synchronize();
  std::shared_ptr<Memory> after = runtime->allocateMemory(kSize);
  EXPECT_EQ(after->data(), address);
  EXPECT_FALSE(gate.timed_out());
}

// A recorded stream destroyed before the memory is released cannot take an event: the release
// waits for the device instead, and the block is reusable at once.
TEST_F(CachingAllocatorTest, ARecordedStreamDestroyedBeforeTheReleaseDoesNotHoldTheBlock) {
  constexpr size_t kSize = 4 << 20;  // a segment of its own, in an emptied cache
  allocator::emptyCache(device);
  std::shared_ptr<Memory> memory = runtime->allocateMemory(kSize);
  std::byte* address = memory->data();
  {
    Stream user;
    ASSERT_EQ(infinirtMemsetAsync(memory->data(), 3, kSize, user.get()), infinirtSuccess);
    memory->recordStream(user.get());
  }  // the stream is destroyed here
  memory.reset();
  EXPECT_EQ(infinirtGetLastError(), infinirtSuccess);
  EXPECT_EQ(Stats().active_bytes.current, Stats().allocated_bytes.current);
  EXPECT_EQ(runtime->allocateMemory(kSize)->data(), address);
}

TEST_F(CachingAllocatorTest, ARequestBeyondTheDeviceFailsAfterReleasingTheCache) {
  // More than any address space holds (so no overcommitting kernel grants it either).
  const size_t beyond = size_t{1} << 60;
  runtime->allocateMemory(3 << 20).reset();  // something cached
  ASSERT_GT(Stats().reserved_bytes.current, Stats().allocated_bytes.current);
  const AllocatorStats before = Stats();
  try {
    runtime->allocateMemory(beyond);
    FAIL() << "no infinirt::Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), infinirtErrorMemoryAllocation);
    EXPECT_NE(std::string(error.what()).find("after releasing the cache"), std::string::npos)
        << error.what();
  }
  const AllocatorStats after = Stats();
  EXPECT_EQ(after.alloc_retries, before.alloc_retries + 1);
  EXPECT_EQ(after.ooms, before.ooms + 1);
  EXPECT_EQ(after.reserved_bytes.current - after.allocated_bytes.current,
            after.inactive_split_bytes.current)
      << "the cache was not released";
  EXPECT_EQ(infinirtGetLastError(), infinirtSuccess);
  EXPECT_NE(runtime->allocateMemory(4096)->data(), nullptr);  // still usable
}

TEST_F(CachingAllocatorTest, ARequestThatFitsOnlyWithoutTheCacheSucceedsThroughTheRetry) {
  if (INFINIRT_TEST_UNDER_SANITIZER) {
    GTEST_SKIP() << "limits the address space, which the sanitizers reserve in bulk";
  }
  if (device.type() != INFINI_DEVICE_CPU) {
    GTEST_SKIP() << "device memory is host memory only on the CPU backend";
  }
  // Device memory is host memory here: cap the process's address space at what it uses now
  // plus 768 MiB, so that a 512 MiB request fits only once a cached 512 MiB block is gone.
  allocator::emptyCache(device);
  std::shared_ptr<Memory> warm = runtime->allocateMemory(4096);  // the small pool's segment
  rlimit old_limit{};
  ASSERT_EQ(getrlimit(RLIMIT_AS, &old_limit), 0);
  std::ifstream status("/proc/self/status");
  size_t used_kib = 0;
  for (std::string line; std::getline(status, line);) {
    if (line.rfind("VmSize:", 0) == 0) used_kib = std::stoul(line.substr(7));
  }
  ASSERT_GT(used_kib, 0u);
  rlimit capped = old_limit;
  capped.rlim_cur = used_kib * 1024 + (size_t{768} << 20);
  ASSERT_EQ(setrlimit(RLIMIT_AS, &capped), 0);
  const AllocatorStats before = Stats();
  infinirtError_t result = infinirtSuccess;
  std::byte* second = nullptr;
  {
    std::shared_ptr<Memory> first = runtime->allocateMemory(512 << 20);
    first.reset();  // cached: 512 MiB reserved
    // 700 MiB: the 512 MiB block cannot serve it, and both do not fit under the cap.
    result = ErrorOf([&] { second = runtime->allocateMemory(700 << 20)->data(); });
  }
  setrlimit(RLIMIT_AS, &old_limit);
  EXPECT_EQ(result, infinirtSuccess);
  EXPECT_NE(second, nullptr);
  const AllocatorStats after = Stats();
  EXPECT_EQ(after.alloc_retries, before.alloc_retries + 1);
  EXPECT_EQ(after.ooms, before.ooms);
}

TEST_F(CachingAllocatorTest, StatisticsBalanceAfterEightThreadsOfRandomAllocations) {
  const AllocatorStats before = Stats();
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([t] {
      Runtime* mine = context::getRuntime();
      std::mt19937 random(static_cast<unsigned>(t));
      std::vector<std::shared_ptr<Memory>> live;
      for (int i = 0; i < 10000; ++i) {
        if (!live.empty() && random() % 2 == 0) {
          live.erase(live.begin() + static_cast<std::ptrdiff_t>(random() % live.size()));
        } else {
          const size_t size =
              random() % 8 == 0 ? (1 << 20) + random() % (1 << 20) : 1 + random() % 65536;
          live.push_back(mine->allocateMemory(size));
          if (i % 64 == 0) mine->memcpyH2D(live.back()->data(), &i, sizeof i);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  const AllocatorStats after = Stats();
  EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current);
  EXPECT_EQ(after.requested_bytes.current, before.requested_bytes.current);
  EXPECT_EQ(after.active_bytes.current, before.active_bytes.current);
  EXPECT_EQ(after.allocations.current, before.allocations.current);
  EXPECT_EQ(after.active_blocks.current, before.active_blocks.current);
  EXPECT_GT(after.allocations.allocated, before.allocations.allocated + 30000);
  EXPECT_EQ(after.allocations.allocated - before.allocations.allocated,
            after.allocations.freed - before.allocations.freed);
  EXPECT_LE(after.allocated_bytes.peak, after.reserved_bytes.peak);
}

// --- What a runtime keeps for its own stream (its front cache) ---------------------------------

TEST_F(CachingAllocatorTest, AKeptBlockServesTheNextRequestOfItsSizeWithExactStatistics) {
  allocator::emptyCache(device);
  allocator::resetPeakStats(device);
  const AllocatorStats before = Stats();
  std::byte* address = runtime->allocateMemory(4096)->data();
  for (int i = 0; i < 100; ++i) {
    std::shared_ptr<Memory> memory = runtime->allocateMemory(3900 + i);  // all round to 4 KiB
    ASSERT_EQ(memory->data(), address);
    EXPECT_EQ(memory->size(), static_cast<size_t>(3900 + i));
  }
  std::shared_ptr<Memory> larger = runtime->allocateMemory(8192);
  const AllocatorStats after = Stats();
  EXPECT_EQ(after.kept_bytes, 4096);
  EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current + 8192);
  EXPECT_EQ(after.requested_bytes.current, before.requested_bytes.current + 8192);
  EXPECT_EQ(after.active_blocks.current, before.active_blocks.current + 1);
  // 4 KiB and 8 KiB were never handed out at once: the peak is the 8 KiB alone.
  EXPECT_EQ(after.allocated_bytes.peak, before.allocated_bytes.current + 8192);
  EXPECT_EQ(after.allocations.allocated, before.allocations.allocated + 102);
  EXPECT_EQ(after.allocations.freed, before.allocations.freed + 101);
  EXPECT_EQ(after.allocated_bytes.freed, before.allocated_bytes.freed + 101 * 4096);
  EXPECT_EQ(after.cache_hits + after.cache_misses, before.cache_hits + before.cache_misses + 102);
}

TEST_F(CachingAllocatorTest, ARuntimeKeepsAFewBlocksPerSizeAndTheRestGoBackToTheCache) {
  allocator::emptyCache(device);
  {
    std::vector<std::shared_ptr<Memory>> many;
    for (int i = 0; i < 10; ++i) many.push_back(runtime->allocateMemory(64 << 10));
  }
  EXPECT_EQ(Stats().kept_bytes, 4 * (64 << 10));
  EXPECT_GT(Stats().inactive_split_bytes.current, 0);  // the other six, in the cache
  allocator::emptyCache(device);
  EXPECT_EQ(Stats().kept_bytes, 0);
  EXPECT_EQ(Stats().reserved_bytes.current, Stats().allocated_bytes.current);
}

// Two threads take turns allocating and releasing 4 MiB (each kept by its runtime in between):
// never both at once, so the peak is 4 MiB, although each runtime's counts are its own.
TEST_F(CachingAllocatorTest, PeaksStayExactWhileRuntimesOfSeveralThreadsKeepBlocks) {
  constexpr size_t kSize = 4 << 20;
  constexpr int kRounds = 10;
  allocator::emptyCache(device);
  allocator::resetPeakStats(device);
  const AllocatorStats before = Stats();
  std::atomic<int> turn{0};
  auto take_turns = [&](int me) {
    Runtime* mine = context::getRuntime();
    for (int round = 0; round < kRounds; ++round) {
      ASSERT_TRUE(testing::WaitUntil([&] { return turn.load() == 2 * round + me; }));
      mine->allocateMemory(kSize).reset();
      turn.fetch_add(1);
    }
  };
  std::thread first(take_turns, 0), second(take_turns, 1);
  first.join();
  second.join();
  const AllocatorStats after = Stats();
  EXPECT_EQ(after.allocated_bytes.peak, before.allocated_bytes.current + kSize);
  EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current);
  EXPECT_EQ(after.allocations.allocated, before.allocations.allocated + 2 * kRounds);
}

TEST_F(CachingAllocatorTest, MemoryReleasedOnAnotherThreadGoesBackToItsRuntime) {
  std::shared_ptr<Memory> memory = runtime->allocateMemory(64 << 10);
  std::byte* address = memory->data();
  const AllocatorStats before = Stats();
  std::thread([&] { memory.reset(); }).join();
  const AllocatorStats after = Stats();
  EXPECT_EQ(after.allocated_bytes.current, before.allocated_bytes.current - (64 << 10));
  EXPECT_EQ(runtime->allocateMemory(64 << 10)->data(), address);
}

// The Memory and its shared_ptr bookkeeping live in the block's own storage: a weak_ptr that
// outlives the Memory keeps the block from reuse until it goes too.
TEST_F(CachingAllocatorTest, AWeakPointerKeepsTheBlockFromReuseUntilItGoes) {
  std::shared_ptr<Memory> memory = runtime->allocateMemory(4096);
  std::byte* address = memory->data();
  std::weak_ptr<Memory> watcher = memory;
  memory.reset();
  EXPECT_TRUE(watcher.expired());
  std::shared_ptr<Memory> meanwhile = runtime->allocateMemory(4096);
  EXPECT_NE(meanwhile->data(), address);
  watcher.reset();
  EXPECT_EQ(runtime->allocateMemory(4096)->data(), address);
}

// Threads with runtimes of their own fill a segment with blocks for their streams and release
// them while every stream is alive: the blocks stay apart (each waits for its own stream).
// Then: with `empty_while_alive`, emptyCache gives the segment back at once (every block of it
// is free); otherwise the threads exit, their streams go, and the blocks merge again.
void FillASegmentFromFourThreads(Runtime* runtime, bool empty_while_alive) {
  const Device device = runtime->device();
  allocator::emptyCache(device);
  const AllocatorStats before = allocator::stats(device);
  constexpr int kThreads = 4;
  std::atomic<int> allocated{0}, released{0};
  std::atomic<bool> exit{false};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      {
        std::vector<std::shared_ptr<Memory>> mine;
        for (int i = 0; i < 10; ++i) mine.push_back(context::getRuntime()->allocateMemory(8192));
        allocated.fetch_add(1);
        testing::WaitUntil([&] { return allocated.load() == kThreads; });  // interleaved
      }
      released.fetch_add(1);
      testing::WaitUntil([&] { return exit.load(); });
    });
  }
  ASSERT_TRUE(testing::WaitUntil([&] { return released.load() == kThreads; }));
  EXPECT_GT(allocator::stats(device).inactive_split_blocks.current, 1)
      << "the streams' blocks were merged while the streams could still use them";
  if (empty_while_alive) allocator::emptyCache(device);
  exit.store(true);
  for (std::thread& thread : threads) thread.join();
  if (!empty_while_alive) {
    EXPECT_EQ(allocator::stats(device).inactive_split_blocks.current, 0)
        << allocator::summary(device);
    allocator::emptyCache(device);
  }
  EXPECT_EQ(allocator::stats(device).reserved_bytes.current, before.reserved_bytes.current)
      << allocator::summary(device);
}

TEST_F(CachingAllocatorTest, BlocksOfStreamsThatWentMergeAgain) {
  FillASegmentFromFourThreads(runtime, /*empty_while_alive=*/false);
}

TEST_F(CachingAllocatorTest, EmptyCacheReleasesASegmentOfFreeBlocksOfSeveralStreams) {
  FillASegmentFromFourThreads(runtime, /*empty_while_alive=*/true);
}

TEST_F(CachingAllocatorTest, EmptyCacheReleasesWhatNobodyUsesAndTheSummarySaysSo) {
  std::shared_ptr<Memory> kept = runtime->allocateMemory(5 << 20);
  runtime->allocateMemory(9 << 20).reset();
  allocator::emptyCache(device);
  const AllocatorStats stats = Stats();
  EXPECT_EQ(stats.reserved_bytes.current - stats.allocated_bytes.current,
            stats.inactive_split_bytes.current);  // only free parts of used segments remain
  const std::string summary = allocator::summary(device);
  EXPECT_NE(summary.find(device.toString()), std::string::npos) << summary;
  EXPECT_NE(summary.find("reserved"), std::string::npos) << summary;
  allocator::resetPeakStats(device);
  EXPECT_EQ(Stats().allocated_bytes.peak, Stats().allocated_bytes.current);
  EXPECT_EQ(allocator::stats(Device(INFINI_DEVICE_CPU, 999)).allocations.allocated, 0);
}

}  // namespace
}  // namespace infinirt
