// Validated handles. A handle given to the user is not a pointer: it encodes a slot index, the
// slot's generation and the kind of object, so checking one is a bounds test and two compares,
// and a destroyed, foreign (another kind) or garbage value is rejected without dereferencing it.
#ifndef INFINIRT_CORE_HANDLES_H_
#define INFINIRT_CORE_HANDLES_H_

#include <atomic>
#include <cstdint>
#include <memory>
#include <mutex>
#include <vector>

#include "spin_lock.h"

namespace infinirt::core {

enum class HandleKind : uint64_t {
  kStream = 1,
  kEvent = 2,
  kGraph = 3,
  kGraphExec = 4,
  kMemPool = 5
};

// What the core remembers about a stream, event, graph or graph exec.
struct ObjectRecord {
  int backend = -1;       // index in Runtime::backends()
  int device = -1;        // flat ordinal
  int local_device = -1;  // the backend's own device index
  void* plugin_handle = nullptr;
  unsigned int flags = 0;
  int priority = 0;  // a stream's (infinirtStreamCreateWithPriority)
};

// A stream record's flags: the public ones (infinirtStreamNonBlocking) and, in the top bit, the
// core's mark of a stream adopted from a vendor handle (StreamCreateFromNativeHandle), which is
// ended with the plugin's StreamRelease instead of StreamDestroy.
constexpr unsigned int kStreamAdopted = 0x80000000u;
// A pool record's flag: a pool imported from another process (MemPoolImportFromShareableHandle),
// which only imports allocations.
constexpr unsigned int kPoolImported = 0x1u;

// Layout of a handle value (64 bits):
//   [63:60] 0xA marker, so no handle is 0, 1 or 2 (the special stream values)
//   [59:56] kind   [55:24] generation (32 bits)   [23:0] slot index
class HandleCodec {
 public:
  static constexpr uint64_t kIndexBits = 24;
  static constexpr uint64_t kIndexMask = (uint64_t{1} << kIndexBits) - 1;
  static constexpr uint64_t kMarker = uint64_t{0xA} << 60;

  static uint64_t Encode(HandleKind kind, uint32_t generation, uint32_t index) {
    return kMarker | (static_cast<uint64_t>(kind) << 56) |
           (static_cast<uint64_t>(generation) << kIndexBits) | index;
  }
  static bool HasKind(uint64_t value, HandleKind kind) {
    return (value >> 56) == ((kMarker >> 56) | static_cast<uint64_t>(kind));
  }
  static uint32_t Index(uint64_t value) { return static_cast<uint32_t>(value & kIndexMask); }
  static uint32_t Generation(uint64_t value) { return static_cast<uint32_t>(value >> kIndexBits); }
};

// A table of live objects of one kind. Slots live in fixed chunks that never move, so lookups
// take no lock. Creation and destruction take a spin lock (spin_lock.h).
//
// Using a handle while another thread destroys it is a race in the caller's program (as in
// CUDA); a handle destroyed before use is always rejected.
class HandleTable {
 public:
  explicit HandleTable(HandleKind kind);
  ~HandleTable();
  HandleTable(const HandleTable&) = delete;
  HandleTable& operator=(const HandleTable&) = delete;

  // Returns the new handle value, or 0 when the table is full. Inline: the caller's record is
  // then copied field by field as it was made, where a copy in another function reloaded the
  // fields just stored in 16-byte pieces (a store-forwarding stall each).
  uint64_t Insert(const ObjectRecord& record) {
    std::lock_guard<SpinLock> lock(lock_);
    uint32_t index;
    if (!free_slots_.empty()) {
      index = free_slots_.back();
      free_slots_.pop_back();
    } else if (!GrowLocked(&index)) {
      return 0;
    }
    Slot& slot = chunks_[index >> kChunkBits][index & (kChunkSize - 1)];
    slot.record = record;
    const uint32_t generation =
        static_cast<uint32_t>(slot.state.load(std::memory_order_relaxed) >> 1);
    slot.state.store((uint64_t{generation} << 1) | 1u, std::memory_order_release);
    ++live_;
    return HandleCodec::Encode(kind_, generation, index);
  }

  // Hot path: true and *record filled when value names a live object of this table's kind.
  bool Lookup(uint64_t value, ObjectRecord* record) const {
    if (!HandleCodec::HasKind(value, kind_)) return false;
    const uint32_t index = HandleCodec::Index(value);
    if (index >= capacity_.load(std::memory_order_acquire)) return false;
    const Slot& slot = chunks_[index >> kChunkBits][index & (kChunkSize - 1)];
    const uint64_t live_state = (uint64_t{HandleCodec::Generation(value)} << 1) | 1u;
    if (slot.state.load(std::memory_order_acquire) != live_state) return false;
    *record = slot.record;
    return true;
  }

  // True when value named an object of this table that has been destroyed since (its slot has
  // moved past the value's generation): a stale handle rather than one that never was.
  bool WasLive(uint64_t value) const {
    if (!HandleCodec::HasKind(value, kind_)) return false;
    const uint32_t index = HandleCodec::Index(value);
    if (index >= capacity_.load(std::memory_order_acquire)) return false;
    const Slot& slot = chunks_[index >> kChunkBits][index & (kChunkSize - 1)];
    const uint32_t now = static_cast<uint32_t>(slot.state.load(std::memory_order_acquire) >> 1);
    // Generations only grow (wrapping at 2^32): the value's is behind the slot's.
    return static_cast<int32_t>(now - HandleCodec::Generation(value)) > 0;
  }

  // Removes a live object; false when value is not live.
  bool Remove(uint64_t value, ObjectRecord* record);

  // Makes a handle just removed live again, with the same value, when destroying its object
  // failed (a refused call has no effect). False when its slot has been reused meanwhile.
  bool Restore(uint64_t value, const ObjectRecord& record);

  // The live objects matching a predicate, as (handle, record) pairs.
  template <class Predicate>
  std::vector<std::pair<uint64_t, ObjectRecord>> Snapshot(Predicate predicate) const {
    std::lock_guard<SpinLock> lock(lock_);
    std::vector<std::pair<uint64_t, ObjectRecord>> result;
    const uint32_t capacity = capacity_.load(std::memory_order_relaxed);
    for (uint32_t index = 0; index < capacity; ++index) {
      const Slot& slot = chunks_[index >> kChunkBits][index & (kChunkSize - 1)];
      const uint64_t state = slot.state.load(std::memory_order_relaxed);
      if ((state & 1u) && predicate(slot.record)) {
        result.emplace_back(HandleCodec::Encode(kind_, static_cast<uint32_t>(state >> 1), index),
                            slot.record);
      }
    }
    return result;
  }

  size_t live_count() const;

 private:
  // A never-used slot for Insert (a new chunk of them when needed); false when the table is full.
  bool GrowLocked(uint32_t* index);

  static constexpr uint32_t kChunkBits = 12;
  static constexpr uint32_t kChunkSize = 1u << kChunkBits;
  static constexpr uint32_t kMaxChunks = (1u << HandleCodec::kIndexBits) / kChunkSize;

  struct Slot {
    // (generation << 1) | live
    std::atomic<uint64_t> state{0};
    ObjectRecord record;
  };

  const HandleKind kind_;
  mutable SpinLock lock_;
  std::unique_ptr<Slot[]> chunks_[kMaxChunks];
  std::atomic<uint32_t> capacity_{0};
  std::vector<uint32_t> free_slots_;
  size_t live_ = 0;
};

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_HANDLES_H_
