// The caching allocator a device's runtimes share (one per device and process): device memory is
// taken from the device in segments and handed out in blocks, which go back to a cache when their
// Memory is released and are handed out again without a call to the device. The design follows
// PyTorch's CUDA caching allocator:
//
// - Sizes are rounded up to 512 bytes. Requests below 1 MiB are small: their blocks are carved
//   from 2 MiB segments. Larger ones get a segment of their own (rounded up to 2 MiB), which may
//   be split later for another large request.
// - A block is handed out for a stream. Released, it is reused at once for that stream (stream
//   order makes that safe), and for another stream only once its stream has no work left (then
//   everything queued before the release is done). Work on other streams that uses the memory
//   is declared with Memory::recordStream: the block then waits for an event in each of those
//   streams, recorded at the release, before it is reused at all.
// - A released block is merged with free neighbours of its segment for the same stream.
// - When the device has no memory left, every cached segment nobody uses is released and the
//   allocation tried once more.
// - Pin mode: while a stream records a graph, blocks allocated for it belong to that graph until
//   it is destroyed: released meanwhile, they are kept from every other allocation, so the
//   graph's replays can keep using their addresses.
//
// - Each runtime has a front cache (front_cache.h): blocks its stream released, taken again by
//   its next allocations of the same size without the allocator's lock.
//
// Thread-safe: one lock per allocator (and one per front cache). Allocators live until the
// process exits: the Memory they hand out refers to them by plain pointer.
#ifndef INFINIRT_RUNTIME_CACHING_ALLOCATOR_H_
#define INFINIRT_RUNTIME_CACHING_ALLOCATOR_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <vector>

#include "alloc_config.h"
#include "front_cache.h"
#include "infinirt.h"
#include "infinirt/allocator.hpp"
#include "infinirt/device.hpp"
#include "infinirt/memory.hpp"

namespace infinirt::detail {

// A piece of a segment: handed out, or free in the cache.
// alignas: blocks handed out to different threads never share a cache line (the fast path
// writes into the block: its requested size and its Memory's control block).
struct alignas(64) Block {
  std::byte* ptr = nullptr;
  size_t size = 0;
  size_t requested = 0;               // while allocated: the size asked for
  infinirtStream_t stream = nullptr;  // the stream it serves; null: none (any may take it)
  bool small = false;                 // which pool
  bool allocated = false;
  Block* prev = nullptr;  // neighbours within the segment, in address order
  Block* next = nullptr;
  std::vector<infinirtStream_t> uses;     // other streams using it (recordStream)
  std::vector<infinirtEvent_t> awaiting;  // released: events to pass before reuse
  uint64_t pin_owner = 0;                 // pin mode: the graph it belongs to (0: none)
  bool held = false;                      // released, but kept for its pin owner
  bool in_cache = false;                  // free in a pool, and so available
  // The front cache its release may go to (null: none), and that cache's generation then.
  FrontCache* front = nullptr;
  uint64_t front_generation = 0;
  // While handed out: the shared_ptr's control block with the Memory in it (see Hand).
  alignas(std::max_align_t) unsigned char memory_storage[128];

  bool split() const { return prev != nullptr || next != nullptr; }
};

template <class T>
class InBlock;

class CachingAllocator : private Memory::Owner {
 public:
  // Settings from INFINIRT_ALLOC_CONF; when it is malformed, every Allocate throws the problem
  // (the rest of the runtime works).
  CachingAllocator(Device device, int ordinal);
  ~CachingAllocator();
  CachingAllocator(const CachingAllocator&) = delete;
  CachingAllocator& operator=(const CachingAllocator&) = delete;

  // The allocator of a device, made at its first use; the same object for every runtime of the
  // device.
  static std::shared_ptr<CachingAllocator> For(Device device, int ordinal);
  // The allocator of a device if it has one, else null.
  static std::shared_ptr<CachingAllocator> Existing(Device device);

  // Device memory for work on `stream`; size > 0. `front`: the front cache of the stream's
  // runtime (its release may go there, and the allocation may come from it), or null.
  std::shared_ptr<Memory> Allocate(size_t size, infinirtStream_t stream, FrontCache* front);
  // Memory from a front cache, without the allocator's lock; null when the cache has no block of
  // the size, or when taking it could raise a statistic above its folded value (see
  // front_cache.h): then Allocate.
  std::shared_ptr<Memory> AllocateFromFront(FrontCache* front, size_t size);

  // A runtime's front cache for its stream, and its end (its blocks go back to the pools).
  FrontCache* OpenFront(infinirtStream_t stream);
  void CloseFront(FrontCache* front);
  // Pinned host memory: not cached (infinirtMallocHost and infinirtFreeHost each time).
  std::shared_ptr<Memory> AllocatePinnedHost(size_t size);

  // The stream's work is done and the stream goes: its blocks may serve any stream.
  void StreamGone(infinirtStream_t stream);

  // Pin mode for a stream (a graph recording); ReleasePinned when the graph goes, which also
  // ends the pin mode of any stream still recording for that owner.
  void BeginPin(infinirtStream_t stream, uint64_t owner);
  // A pin owner no one in the process has used.
  static uint64_t NewPinOwner();
  void EndPin(infinirtStream_t stream);
  void ReleasePinned(uint64_t owner);

  void EmptyCache();
  // Destroys the events kept for recordStream's next uses (made again when needed).
  void ReleaseSpareEvents();
  AllocatorStats Stats();
  void ResetPeakStats();
  std::string Summary();

 private:
  // Pools order their free blocks by stream, then size, then address: the best fit for a stream
  // is one lower_bound away. by_size_ holds the same blocks by size only, for other streams.
  struct ByStreamSize {
    bool operator()(const Block* a, const Block* b) const;
  };
  struct BySize {
    bool operator()(const Block* a, const Block* b) const;
  };
  struct Pool {
    std::set<Block*, ByStreamSize> blocks;
    std::set<Block*, BySize> by_size;
    // Nodes of erased entries, kept for the next insertions: a block released and taken again
    // would otherwise allocate and free two tree nodes each time.
    std::vector<decltype(blocks)::node_type> spare_block_nodes;
    std::vector<decltype(by_size)::node_type> spare_size_nodes;
  };

  Pool& PoolOf(bool small) { return small ? small_pool_ : large_pool_; }
  // Block objects, reused: splitting and merging make and drop one per allocation.
  Block* NewBlock();
  void DropBlock(Block* block);
  void Insert(Block* block);
  void Erase(Block* block);

  Block* TakeFromFront(FrontCache* front, size_t rounded);
  Block* TakeCached(size_t rounded, infinirtStream_t stream);
  Block* TakeFromOtherStream(Pool& pool, size_t rounded, infinirtStream_t stream);
  bool Fits(const Block* block, size_t rounded) const;
  Block* NewSegment(size_t rounded, bool small, infinirtStream_t stream, infinirtError_t* error);
  Block* SplitOff(Block* block, size_t rounded);
  void Release(Block* block);
  bool KeepInFront(Block* block);
  void ReleaseToPools(Block* block);
  void FoldCounts(FrontCache* front);
  void FoldFrontCounts();
  void DrainFront(FrontCache* front);
  void DrainFronts();
  void Settle(Block* block);
  void ReturnToCache(Block* block);
  Block* MergeWithNeighbours(Block* block);
  void ProcessAwaiting();
  size_t ReleaseCachedSegments();
  void CollectGarbageFor(size_t segment_size);
  infinirtEvent_t TakeEvent();
  void RecordUse(Block* block, infinirtStream_t stream);
  std::shared_ptr<Memory> Hand(Block* block);
  template <class T>
  friend class InBlock;
  // Memory::Owner: the token is the block.
  void release(std::byte* data, void* token) noexcept override;
  void recordStream(void* token, infinirtStream_t stream) override;
  [[noreturn]] void ThrowOutOfMemory(size_t size, infinirtError_t error);
  template <class Visit>
  void ForEachBlock(Visit visit);

  // Statistics, under the lock.
  void Count(AllocatorStat& stat, int64_t amount);
  void CountSplitChange(Block* block, int direction);

  const Device device_;
  const int ordinal_;
  AllocConfig config_;
  bool config_malformed_ = false;
  size_t device_total_ = 0;  // the device's memory (for the garbage collection threshold)

  mutable std::mutex mutex_;
  Pool small_pool_;
  Pool large_pool_;
  std::set<Block*> segments_;     // the first block of each segment
  std::vector<Block*> awaiting_;  // released blocks waiting for events
  std::vector<infinirtEvent_t> spare_events_;
  std::vector<Block*> spare_blocks_;
  std::map<infinirtStream_t, uint64_t> pinning_;  // stream -> owner, while recording
  std::set<uint64_t> live_pins_;
  std::map<uint64_t, std::vector<Block*>> held_;  // owner -> blocks released and kept
  std::vector<FrontCache*> open_fronts_;          // the runtimes' (never deleted: see Block::front)
  std::vector<FrontCache*> closed_fronts_;        // for the next runtimes
  AllocatorStats stats_;
};

// --- FrontCache (front_cache.h), here where Block is complete: on every allocation's path ---

inline Block* FrontCache::Take(size_t rounded) {
  for (Bin& bin : bins) {
    if (bin.size != rounded || bin.count == 0) continue;
    Block* block = bin.blocks[--bin.count];
    bytes -= block->size;
    return block;
  }
  return nullptr;
}

inline bool FrontCache::Keep(Block* block, size_t rounded) {
  const size_t size = block->size;
  if (size > kLargestBlock || bytes + size > kMostBytes) return false;
  Bin* empty = nullptr;
  for (Bin& bin : bins) {
    if (bin.size == rounded) {
      if (bin.count == kDepth) return false;
      empty = &bin;
      break;
    }
    if (bin.count == 0 && empty == nullptr) empty = &bin;
  }
  if (empty == nullptr) return false;
  empty->size = rounded;
  empty->blocks[empty->count++] = block;
  bytes += size;
  return true;
}

inline int FrontCache::TakeAll(Block** out) {
  int taken = 0;
  for (Bin& bin : bins) {
    while (bin.count > 0) out[taken++] = bin.blocks[--bin.count];
  }
  bytes = 0;
  return taken;
}

}  // namespace infinirt::detail

#endif  // INFINIRT_RUNTIME_CACHING_ALLOCATOR_H_
