// A runtime's front cache: the blocks its stream released, kept by exact size for the stream's
// next allocations of that size, taken and given back under the cache's own lock instead of the
// device's. A model's steady state allocates and releases the same few sizes on the same stream;
// with the front cache those pairs never touch the shared pools nor wait for another thread.
//
// The allocator treats a block in a front cache as still handed out: it is not in the pools,
// does not merge, and its segment is not releasable. The allocator gives the blocks back to the
// pools (drains the caches) before it takes a new segment from the device for any runtime,
// before it releases its cache to the device (emptyCache, out of memory, garbage collection),
// and when the runtime goes.
//
// Statistics stay exact without a shared counter per allocation: each cache counts the changes
// it made since the allocator last folded them into its own statistics, and an allocation goes
// through the front only while it takes back no more than the cache has released since that
// fold (each change then at most zero). Every total the front moves is therefore never above
// the allocator's value, which only changes under the device's lock after folding every cache
// in: the allocator's peaks are exact (in an order of the threads' operations consistent with
// when each began and ended).
#ifndef INFINIRT_RUNTIME_FRONT_CACHE_H_
#define INFINIRT_RUNTIME_FRONT_CACHE_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <thread>

#include "infinirt.h"

namespace infinirt::detail {

struct Block;

// A lock held for a few instructions and almost never contended (its runtime's thread takes it;
// another thread only to release memory there or when the allocator folds or drains).
class SpinLock {
 public:
  void lock() {
    while (locked_.exchange(true, std::memory_order_acquire)) {
      while (locked_.load(std::memory_order_relaxed)) std::this_thread::yield();
    }
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  std::atomic<bool> locked_{false};
};

// The statistics an allocation through the front moves (all up by an allocation, down by a
// release), as changes since the last fold: blocks (allocations, active blocks), bytes
// (allocated and active bytes) and requested bytes.
struct FrontCounts {
  enum Stat { kBlocks, kBytes, kRequested, kStats };
  struct Change {
    int64_t amount[kStats];
  };
  static Change Of(size_t block_size, size_t requested) {
    return {{1, static_cast<int64_t>(block_size), static_cast<int64_t>(requested)}};
  }

  // Whether an allocation of this change leaves every net change at most zero.
  bool FitsBelowFold(const Change& change) const {
    for (int stat = 0; stat < kStats; ++stat) {
      if (net[stat] + change.amount[stat] > 0) return false;
    }
    return true;
  }
  void Allocated(const Change& change) {
    for (int stat = 0; stat < kStats; ++stat) {
      net[stat] += change.amount[stat];
      added[stat] += change.amount[stat];
    }
    ++hits;
  }
  void Released(const Change& change) {
    for (int stat = 0; stat < kStats; ++stat) {
      net[stat] -= change.amount[stat];
      taken[stat] += change.amount[stat];
    }
  }

  int64_t net[kStats] = {};
  int64_t added[kStats] = {};
  int64_t taken[kStats] = {};
  int64_t hits = 0;
};

// alignas: two runtimes' caches never share a cache line.
struct alignas(64) FrontCache {
  static constexpr int kBins = 8;   // distinct sizes kept
  static constexpr int kDepth = 4;  // blocks kept per size
  static constexpr size_t kLargestBlock = size_t{16} << 20;
  static constexpr size_t kMostBytes = size_t{64} << 20;

  struct Bin {
    size_t size = 0;  // the requests its blocks serve, rounded (a block may be larger)
    int count = 0;
    Block* blocks[kDepth] = {};
  };

  // (Defined in caching_allocator.h, where Block is complete.)
  // Takes a kept block for a request of `rounded` bytes (rounded up as the allocator does), or
  // null. Blocks are kept by the request they last served: the same request takes the same
  // block again (the block may be larger than the request, as the allocator had handed it).
  Block* Take(size_t rounded);
  // Keeps a released block that served a request of `rounded` bytes if there is room for it;
  // false if not.
  bool Keep(Block* block, size_t rounded);
  // Moves every kept block to `out` (room for kBins * kDepth); returns how many.
  int TakeAll(Block** out);

  SpinLock lock;
  // The rest under the lock (and written only while the allocator's lock is held as well, except
  // the bins and counts, which the runtime's allocations and releases change).
  bool open = false;
  uint64_t generation = 0;  // changes when the cache is closed: blocks of older ones go back
  infinirtStream_t stream = nullptr;
  Bin bins[kBins];
  size_t bytes = 0;  // in kept blocks
  FrontCounts counts;
};

}  // namespace infinirt::detail

#endif  // INFINIRT_RUNTIME_FRONT_CACHE_H_
