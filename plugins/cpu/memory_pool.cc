#include "memory_pool.h"

#include <stdlib.h>

#include <algorithm>
#include <vector>

#include "host_memory.h"

namespace infinirt::cpu {

namespace {
constexpr size_t kAlignment = kDeviceAlignment;
constexpr size_t kLargeGranule = size_t{1} << 20;
}  // namespace

MemoryPool::~MemoryPool() {
  for (auto& entry : free_blocks_) ReleaseBlock(entry.second.pointer, entry.first);
  for (auto& entry : in_use_) ReleaseBlock(entry.first, entry.second);
}

void* MemoryPool::NewBlock(size_t size) {
  return arena_ ? arena_->Allocate(size) : AllocateDeviceMemory(size);
}

void MemoryPool::ReleaseBlock(void* block, size_t size) {
  if (arena_) {
    arena_->Free(block, size);
  } else {
    FreeDeviceMemory(block);
  }
}

bool MemoryPool::ExportPointer(void* pointer, infinirtMemPoolPtrExportData* data) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = in_use_.find(pointer);
  if (!arena_ || found == in_use_.end()) return false;
  arena_->Export(pointer, found->second, data);
  return true;
}

// Small sizes round to a power of two (at least the alignment), large ones to whole MiB, so
// that freed blocks fit later requests of a similar size. 0 when the size cannot be rounded.
size_t MemoryPool::RoundUp(size_t size) {
  if (size > SIZE_MAX - kLargeGranule) return 0;
  if (size >= kLargeGranule) return (size + kLargeGranule - 1) / kLargeGranule * kLargeGranule;
  size_t rounded = kAlignment;
  while (rounded < size) rounded <<= 1;
  return rounded;
}

bool MemoryPool::Reusable(const Block& block, Stream& stream) const {
  if (block.freed_at.stream.get() == &stream) return true;
  if (allow_opportunistic_ && block.freed_at.Reached()) return true;
  return follow_event_dependencies_ && stream.HasWaitedFor(block.freed_at);
}

infinirtError_t MemoryPool::Allocate(size_t size, Stream& stream, void** pointer) {
  const size_t rounded = RoundUp(size);
  if (rounded == 0) return infinirtErrorMemoryAllocation;
  std::lock_guard<std::mutex> lock(mutex_);
  // A block of exactly this size class, reusable by this stream.
  auto range = free_blocks_.equal_range(rounded);
  for (auto it = range.first; it != range.second; ++it) {
    if (!Reusable(it->second, stream)) continue;
    *pointer = it->second.pointer;
    free_blocks_.erase(it);
    pooled_bytes_ -= rounded;
    in_use_[*pointer] = rounded;
    used_bytes_ += rounded;
    used_high_ = std::max(used_high_, used_bytes_);
    return infinirtSuccess;
  }
  if (max_size_ != 0 && used_bytes_ + pooled_bytes_ + rounded > max_size_) {
    TrimToLocked(0);  // room made of blocks others have finished with
    if (used_bytes_ + pooled_bytes_ + rounded > max_size_) return infinirtErrorMemoryAllocation;
  }
  void* memory = NewBlock(rounded);
  if (memory == nullptr) {
    // Give back what others have finished with, and try once more.
    TrimToLocked(0);
    memory = NewBlock(rounded);
    if (memory == nullptr) return infinirtErrorMemoryAllocation;
  }
  *pointer = memory;
  in_use_[memory] = rounded;
  used_bytes_ += rounded;
  used_high_ = std::max(used_high_, used_bytes_);
  reserved_high_ = std::max(reserved_high_, used_bytes_ + pooled_bytes_);
  return infinirtSuccess;
}

infinirtError_t MemoryPool::Free(void* pointer, StreamPoint point) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto it = in_use_.find(pointer);
  if (it == in_use_.end()) return infinirtErrorInvalidValue;
  const size_t size = it->second;
  in_use_.erase(it);
  used_bytes_ -= size;
  free_blocks_.emplace(size, Block{pointer, size, std::move(point)});
  pooled_bytes_ += size;
  return infinirtSuccess;
}

// The threshold bounds the memory the pool reserves (in use and free), as CUDA's does.
void MemoryPool::ReleaseAboveThreshold() {
  // Only free blocks are ever released; with none (most synchronisations), the lock is not
  // needed. A block freed by this thread before the call is counted already.
  if (pooled_bytes_.load(std::memory_order_relaxed) == 0) return;
  std::lock_guard<std::mutex> lock(mutex_);
  if (used_bytes_ + pooled_bytes_ > release_threshold_) TrimToLocked(release_threshold_);
}

void MemoryPool::TrimTo(size_t bytes_to_keep) {
  std::lock_guard<std::mutex> lock(mutex_);
  TrimToLocked(bytes_to_keep);
}

// Releases free blocks whose free has run (others may still be used by queued work), largest
// first, while the pool reserves more than bytes_to_keep, never going below it (CUDA's
// cudaMemPoolTrimTo guarantees at least minBytesToKeep stay reserved).
void MemoryPool::TrimToLocked(size_t bytes_to_keep) {
  for (auto it = free_blocks_.end(); it != free_blocks_.begin();) {
    --it;
    const size_t reserved = used_bytes_ + pooled_bytes_;
    if (reserved <= bytes_to_keep) return;
    if (!it->second.freed_at.Reached() || reserved - it->first < bytes_to_keep) continue;
    ReleaseBlock(it->second.pointer, it->first);
    pooled_bytes_ -= it->first;
    it = free_blocks_.erase(it);
  }
}

infinirtError_t MemoryPool::GetAttribute(enum infinirtMemPoolAttr attr, void* value) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto as_int = static_cast<int*>(value);
  auto as_u64 = static_cast<uint64_t*>(value);
  switch (attr) {
    case infinirtMemPoolReuseFollowEventDependencies:
      *as_int = follow_event_dependencies_;
      return infinirtSuccess;
    case infinirtMemPoolReuseAllowOpportunistic:
      *as_int = allow_opportunistic_;
      return infinirtSuccess;
    case infinirtMemPoolReuseAllowInternalDependencies:
      *as_int = allow_internal_dependencies_;
      return infinirtSuccess;
    case infinirtMemPoolAttrReleaseThreshold:
      *as_u64 = release_threshold_;
      return infinirtSuccess;
    case infinirtMemPoolAttrReservedMemCurrent:
      *as_u64 = used_bytes_ + pooled_bytes_;
      return infinirtSuccess;
    case infinirtMemPoolAttrReservedMemHigh:
      *as_u64 = reserved_high_;
      return infinirtSuccess;
    case infinirtMemPoolAttrUsedMemCurrent:
      *as_u64 = used_bytes_;
      return infinirtSuccess;
    case infinirtMemPoolAttrUsedMemHigh:
      *as_u64 = used_high_;
      return infinirtSuccess;
  }
  return infinirtErrorInvalidValue;
}

infinirtError_t MemoryPool::SetAttribute(enum infinirtMemPoolAttr attr, const void* value) {
  std::lock_guard<std::mutex> lock(mutex_);
  const int as_int = *static_cast<const int*>(value);
  switch (attr) {
    case infinirtMemPoolReuseFollowEventDependencies:
      follow_event_dependencies_ = as_int != 0;
      return infinirtSuccess;
    case infinirtMemPoolReuseAllowOpportunistic:
      allow_opportunistic_ = as_int != 0;
      return infinirtSuccess;
    case infinirtMemPoolReuseAllowInternalDependencies:
      allow_internal_dependencies_ = as_int != 0;
      return infinirtSuccess;
    case infinirtMemPoolAttrReleaseThreshold:
      release_threshold_ = *static_cast<const uint64_t*>(value);
      return infinirtSuccess;
    case infinirtMemPoolAttrReservedMemHigh:  // reset (the core allows only 0)
      reserved_high_ = used_bytes_ + pooled_bytes_;
      return infinirtSuccess;
    case infinirtMemPoolAttrUsedMemHigh:
      used_high_ = used_bytes_;
      return infinirtSuccess;
    default:
      return infinirtErrorInvalidValue;
  }
}

bool MemoryPool::Drained() {
  std::lock_guard<std::mutex> lock(mutex_);
  TrimToLocked(0);
  return in_use_.empty() && free_blocks_.empty();
}

void MemoryPool::SetAccess(int device, enum infinirtMemAccessFlags flags) {
  std::lock_guard<std::mutex> lock(mutex_);
  access_[device] = flags;
}

enum infinirtMemAccessFlags MemoryPool::Access(int device) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = access_.find(device);
  return found == access_.end() ? infinirtMemAccessFlagsProtNone : found->second;
}

void CreatedPools::Add(std::shared_ptr<MemoryPool> pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_.push_back(std::move(pool));
  any_.store(true, std::memory_order_relaxed);
}

void CreatedPools::Retire(const std::shared_ptr<MemoryPool>& pool) {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.erase(std::remove(live_.begin(), live_.end(), pool), live_.end());
    retired_.push_back(pool);
  }
  Synchronized();  // an idle pool goes at once
}

infinirtError_t CreatedPools::Allocate(const std::shared_ptr<MemoryPool>& pool, size_t size,
                                       Stream& stream, void** pointer) {
  if (const infinirtError_t error = pool->Allocate(size, stream, pointer)) return error;
  std::lock_guard<std::mutex> lock(mutex_);
  allocations_[*pointer] = pool;
  return infinirtSuccess;
}

bool CreatedPools::Free(void* pointer, const StreamPoint& point, infinirtError_t* freed) {
  std::shared_ptr<MemoryPool> pool;
  std::shared_ptr<ImportedPool> imported;  // released after the lock
  {
    std::lock_guard<std::mutex> lock(mutex_);
    auto found = allocations_.find(pointer);
    if (found == allocations_.end()) {
      // Imported memory goes back to its owner process, which frees it: nothing to do here but
      // forget it (the mapping stays while the pool is imported).
      auto import = imports_.find(pointer);
      if (import == imports_.end()) return false;
      imported = std::move(import->second);
      imports_.erase(import);
      *freed = infinirtSuccess;
      return true;
    }
    pool = std::move(found->second);
    allocations_.erase(found);
  }
  *freed = pool->Free(pointer, point);
  return true;
}

void CreatedPools::AddImport(void* pointer, std::shared_ptr<ImportedPool> pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  imports_[pointer] = std::move(pool);
}

bool CreatedPools::FindAllocation(void* pointer, std::shared_ptr<MemoryPool>* pool) {
  std::lock_guard<std::mutex> lock(mutex_);
  auto found = allocations_.find(pointer);
  if (found == allocations_.end()) return false;
  *pool = found->second;
  return true;
}

void CreatedPools::Synchronized() {
  if (!any_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& pool : live_) pool->ReleaseAboveThreshold();
  retired_.erase(
      std::remove_if(retired_.begin(), retired_.end(),
                     [](const std::shared_ptr<MemoryPool>& pool) { return pool->Drained(); }),
      retired_.end());
  any_.store(!live_.empty() || !retired_.empty(), std::memory_order_relaxed);
}

}  // namespace infinirt::cpu
