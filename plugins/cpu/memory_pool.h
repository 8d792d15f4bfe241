// The CPU device's pool for stream-ordered allocation (infinirtMallocAsync / FreeAsync).
//
// A freed block remembers where in which stream it was freed. A later allocation may reuse it
//   - on the same stream at once, with no synchronisation: the stream's order already puts the
//     new use after the free;
//   - on another stream once ordering is established: the free has run (opportunistic reuse),
//     or the allocating stream has waited on an event recorded after the free (event
//     dependencies), each switchable as CUDA's pool attributes.
// Memory held beyond the release threshold (default 0, as CUDA) goes back to the OS at the next
// synchronisation, and at infinirtMemPoolTrimTo.
#ifndef INFINIRT_PLUGINS_CPU_MEMORY_POOL_H_
#define INFINIRT_PLUGINS_CPU_MEMORY_POOL_H_

#include <atomic>
#include <cstddef>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <unordered_map>
#include <vector>

#include "engine.h"
#include "infinirt.h"
#include "shared_pool.h"

namespace infinirt::cpu {

class MemoryPool {
 public:
  // max_size: how much the pool may hold at once (0: as much as the host gives). arena: where
  // its blocks come from when other processes open them (shared_pool.h); else the heap.
  explicit MemoryPool(size_t max_size = 0, std::shared_ptr<SharedArena> arena = nullptr)
      : max_size_(max_size), arena_(std::move(arena)) {}
  ~MemoryPool();  // returns every block to the OS
  MemoryPool(const MemoryPool&) = delete;
  MemoryPool& operator=(const MemoryPool&) = delete;

  infinirtError_t Allocate(size_t size, Stream& stream, void** pointer);
  // The block is free from `point` on (the FreeAsync's place in its stream).
  infinirtError_t Free(void* pointer, StreamPoint point);

  // Synchronisation happened: release what the threshold does not let the pool keep.
  void ReleaseAboveThreshold();
  void TrimTo(size_t bytes_to_keep);

  infinirtError_t GetAttribute(enum infinirtMemPoolAttr attr, void* value);
  infinirtError_t SetAttribute(enum infinirtMemPoolAttr attr, const void* value);

  // Nothing allocated, and nothing pooled that queued work might still use.
  bool Drained();

  // Where other processes open the pool (null: they do not).
  const std::shared_ptr<SharedArena>& arena() const { return arena_; }
  // The export data of an allocation of a shareable pool, by its start; false when the pointer
  // is not the start of one of its allocations.
  bool ExportPointer(void* pointer, infinirtMemPoolPtrExportData* data);

  // What the program granted other devices (infinirtMemPoolSetAccess). The CPU's devices all
  // share the host's memory, so a grant changes no mapping; it is kept to be reported.
  void SetAccess(int device, enum infinirtMemAccessFlags flags);
  enum infinirtMemAccessFlags Access(int device);

 private:
  struct Block {
    void* pointer;
    size_t size;
    StreamPoint freed_at;
  };

  static size_t RoundUp(size_t size);
  void* NewBlock(size_t size);
  void ReleaseBlock(void* block, size_t size);
  bool Reusable(const Block& block, Stream& stream) const;
  void TrimToLocked(size_t bytes_to_keep);

  std::mutex mutex_;
  std::multimap<size_t, Block> free_blocks_;  // by size
  std::unordered_map<void*, size_t> in_use_;  // pointer -> rounded size
  // In free_blocks_; changed under mutex_, read without it by ReleaseAboveThreshold's fast path.
  std::atomic<size_t> pooled_bytes_{0};
  size_t used_bytes_ = 0;  // in in_use_
  size_t reserved_high_ = 0;
  size_t used_high_ = 0;
  uint64_t release_threshold_ = 0;
  bool follow_event_dependencies_ = true;
  bool allow_opportunistic_ = true;
  bool allow_internal_dependencies_ = true;  // accepted; the pool never adds dependencies
  const size_t max_size_;
  const std::shared_ptr<SharedArena> arena_;
  std::map<int, enum infinirtMemAccessFlags> access_;
};

// A device's pools of the program's own (infinirtMemPoolCreate): which pool each allocation came
// from, for FreeAsync, and the destroyed pools still holding memory, released once it is all
// freed and those frees have run. Also the allocations imported from other processes' pools
// (MemPoolImportPointer), each keeping its pool's mapping while it is imported.
class CreatedPools {
 public:
  void AddImport(void* pointer, std::shared_ptr<ImportedPool> pool);
  // The pool a pointer of this process came from: false when it is none of these pools'.
  bool FindAllocation(void* pointer, std::shared_ptr<MemoryPool>* pool);
  void Add(std::shared_ptr<MemoryPool> pool);
  // The pool leaves the live ones; it is released once drained.
  void Retire(const std::shared_ptr<MemoryPool>& pool);
  infinirtError_t Allocate(const std::shared_ptr<MemoryPool>& pool, size_t size, Stream& stream,
                           void** pointer);
  // True when the pointer came from one of these pools (*freed: that pool's answer).
  bool Free(void* pointer, const StreamPoint& point, infinirtError_t* freed);
  // At a synchronisation: each live pool releases above its threshold, drained retired pools go.
  void Synchronized();

 private:
  std::mutex mutex_;
  std::atomic<bool> any_{false};  // any live or retired pool: the fast path of Synchronized
  std::vector<std::shared_ptr<MemoryPool>> live_, retired_;
  std::unordered_map<void*, std::shared_ptr<MemoryPool>> allocations_;
  std::unordered_map<void*, std::shared_ptr<ImportedPool>> imports_;
};

}  // namespace infinirt::cpu

#endif  // INFINIRT_PLUGINS_CPU_MEMORY_POOL_H_
