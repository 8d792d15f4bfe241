#include "handles.h"

#include <algorithm>
#include <iterator>

namespace infinirt::core {

namespace {

// Fresh slots start at generations drawn from one process-wide counter, so a handle kept
// across infinirtFinalize does not match the slot that reuses its index afterwards.
std::atomic<uint32_t> g_generation_seed{1};

}  // namespace

HandleTable::HandleTable(HandleKind kind) : kind_(kind) {}

HandleTable::~HandleTable() = default;

bool HandleTable::GrowLocked(uint32_t* index) {
  *index = capacity_.load(std::memory_order_relaxed);
  if (*index >= kMaxChunks * kChunkSize) return false;
  if ((*index & (kChunkSize - 1)) == 0) {
    chunks_[*index >> kChunkBits] = std::make_unique<Slot[]>(kChunkSize);
    Slot* chunk = chunks_[*index >> kChunkBits].get();
    for (uint32_t i = 0; i < kChunkSize; ++i) {
      const uint32_t generation = g_generation_seed.fetch_add(1, std::memory_order_relaxed);
      chunk[i].state.store(uint64_t{generation} << 1, std::memory_order_relaxed);
    }
  }
  capacity_.store(*index + 1, std::memory_order_release);
  return true;
}

bool HandleTable::Remove(uint64_t value, ObjectRecord* record) {
  std::lock_guard<SpinLock> lock(lock_);
  if (!Lookup(value, record)) return false;
  const uint32_t index = HandleCodec::Index(value);
  Slot& slot = chunks_[index >> kChunkBits][index & (kChunkSize - 1)];
  // The next generation, not live: every handle naming the old one is dead from now on.
  const uint32_t next_generation = HandleCodec::Generation(value) + 1;
  slot.state.store(uint64_t{next_generation} << 1, std::memory_order_release);
  free_slots_.push_back(index);
  --live_;
  return true;
}

bool HandleTable::Restore(uint64_t value, const ObjectRecord& record) {
  std::lock_guard<SpinLock> lock(lock_);
  const uint32_t index = HandleCodec::Index(value);
  if (!HandleCodec::HasKind(value, kind_) || index >= capacity_.load(std::memory_order_relaxed)) {
    return false;
  }
  Slot& slot = chunks_[index >> kChunkBits][index & (kChunkSize - 1)];
  const uint32_t generation = HandleCodec::Generation(value);
  // Removed and not reused: the slot is free at the next generation, and still on the free list.
  if (slot.state.load(std::memory_order_relaxed) != uint64_t{generation + 1} << 1) return false;
  auto free_entry = std::find(free_slots_.rbegin(), free_slots_.rend(), index);
  if (free_entry == free_slots_.rend()) return false;
  free_slots_.erase(std::next(free_entry).base());
  slot.record = record;
  slot.state.store((uint64_t{generation} << 1) | 1u, std::memory_order_release);
  ++live_;
  return true;
}

size_t HandleTable::live_count() const {
  std::lock_guard<SpinLock> lock(lock_);
  return live_;
}

}  // namespace infinirt::core
