// The allocation registry: every allocation made through InfiniRT, keyed by address range.
//
// The address space is cut into 16 MiB regions, and regions are spread over 64 shards, each
// with one lock and two indexes, so that no lookup grows with the number of allocations:
//   - allocations smaller than 4 KiB by 4 KiB window, in a hash map of windows, each holding
//     the few allocations overlapping it sorted by base (an interior pointer of a small
//     allocation: a hash lookup and a search among a handful);
//   - larger allocations in an ordered map, in the shard of every region they overlap, so the
//     region of any address such an allocation contains finds it (there are few of them: they
//     take at least 4 KiB each).
// Live allocations never overlap, so in either index the greatest base at or below an address
// is the only candidate; a base address (Free) is found the same way, in the shard of its
// region. An allocation within one region (all but the largest) is added, removed and found
// under a single lock. The nodes of removed entries are kept for the next insertions (a few per
// shard), so a Malloc + Free pair allocates nothing of its own: the heap calls for index nodes
// were a third of the pair's cost. The large allocation last freed in a shard even keeps its
// entry, dead, so that the next allocation at the same address (glibc returns the address just
// freed) changes no map at all.
//
// Find answers are also kept per thread, a few of them, each with the generation of its shard:
// every change to a shard's indexes moves that generation on (under the shard's lock), so an
// answer is reused only while nothing it depends on has changed, and a copy loop over the same
// buffers looks each pointer up once instead of taking a lock per call.
#ifndef INFINIRT_CORE_ALLOCATION_REGISTRY_H_
#define INFINIRT_CORE_ALLOCATION_REGISTRY_H_

#include <array>
#include <atomic>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

#include "spin_lock.h"

namespace infinirt::core {

namespace registry_detail {
struct KeptAnswer;
struct KeptAnswers;
}  // namespace registry_detail

enum class MemoryKind {
  kDevice,          // infinirtMalloc
  kPinnedHost,      // infinirtMallocHost / infinirtHostAlloc
  kRegisteredHost,  // the program's host memory, infinirtHostRegister
  kStreamOrdered,   // infinirtMallocAsync
  kGraph,           // infinirtMallocAsync during capture: owned by the graph (owner = graph id)
  kManaged,         // infinirtMallocManaged: device memory the host uses too
  kIpcOpened        // another process's device memory, infinirtIpcOpenMemHandle
};

struct Allocation {
  uintptr_t base = 0;
  size_t size = 0;
  MemoryKind kind = MemoryKind::kDevice;
  int backend = -1;        // index in Runtime::backends()
  int device = -1;         // flat ordinal
  int local_device = -1;   // the backend's own device index
  uint64_t owner = 0;      // kGraph: the id of the graph that owns the memory
  unsigned int flags = 0;  // kPinnedHost: HostAlloc's flags; kRegisteredHost: HostRegister's

  bool Contains(uintptr_t address) const { return address - base < size; }
  bool IsDeviceMemory() const {
    return kind != MemoryKind::kPinnedHost && kind != MemoryKind::kRegisteredHost;
  }
};

class AllocationRegistry {
 public:
  AllocationRegistry();

  // False when an allocation with this base is already registered (a plugin bug). Sizes are
  // above 0: the API registers no allocation of 0 bytes (Find would not find it).
  bool Add(const Allocation& allocation);

  // Removes the allocation whose base is exactly this address, if `accept` accepts it.
  std::optional<Allocation> RemoveExact(uintptr_t base,
                                        const std::function<bool(const Allocation&)>& accept);

  std::optional<Allocation> FindExact(uintptr_t base) const;

  // The allocation containing an address (base or interior).
  std::optional<Allocation> Find(uintptr_t address) const {
    Allocation found;
    return Find(address, &found) ? std::optional<Allocation>(found) : std::nullopt;
  }
  // The same, written to *found; false (and *found untouched) when no allocation contains it.
  // The copy and route paths use this form: a returned optional was stored and then reloaded
  // in pieces of another size, a store-forwarding stall on every lookup.
  bool Find(uintptr_t address, Allocation* found) const;

  // The allocation containing an address, or null, as the calling thread keeps the answer: the
  // pointer stays valid until the thread's next lookup in any registry. The route of a memset
  // reads what it needs at once, and copying the allocation out was a measurable part of it.
  const Allocation* FindKept(uintptr_t address) const;
  // The same for two addresses at once (a copy's destination and source): both pointers stay
  // valid until the thread's next lookup.
  void FindKeptPair(uintptr_t first, uintptr_t second, const Allocation** first_found,
                    const Allocation** second_found) const;

  // Every allocation matching a predicate (for device reset and finalize).
  std::vector<Allocation> Snapshot(const std::function<bool(const Allocation&)>& predicate) const;

  size_t size() const;

 private:
  static constexpr int kShards = 64;
  static constexpr int kRegionShift = 24;  // 16 MiB regions
  static constexpr int kWindowShift = 12;  // 4 KiB windows
  static_assert(kShards == 64, "the shard hash keeps the top 6 bits");

  using WindowMap = std::unordered_map<uintptr_t, std::vector<Allocation>>;
  using LargeMap = std::map<uintptr_t, Allocation>;
  static constexpr size_t kSpareNodes = 16;  // per map and shard

  struct Shard {
    mutable SpinLock lock;
    // Moved on, under the lock, by every change to the indexes below; read without it by Find.
    std::atomic<uint64_t> generation{0};
    // Window index -> the small allocations overlapping that window, by base.
    WindowMap small_by_window;
    LargeMap large_by_base;                           // large ones overlapping its regions
    size_t based_here = 0;                            // allocations whose base is in its regions
    std::vector<WindowMap::node_type> spare_windows;  // each keeps its vector's capacity
    std::vector<LargeMap::node_type> spare_large;
    // The large allocation last removed from this shard (its base's), left in large_by_base as
    // a dead entry for the next allocation at the same address: freeing and allocating the
    // same address again is the common case, and the map's erasure, insertion and rebalancing
    // were half of a Malloc + Free pair. Every search skips it; at most one per shard.
    LargeMap::iterator dead;
    bool has_dead = false;
  };

  static bool IsDead(const Shard& shard, LargeMap::const_iterator entry) {
    return shard.has_dead && entry == LargeMap::const_iterator(shard.dead);
  }
  // Erases a large entry (the dead one too), keeping its node as a spare.
  static void EraseLargeLocked(Shard& shard, LargeMap::iterator entry);
  // Leaves a removed large allocation's entry in place, dead (erasing the previous dead one).
  static void KeepDeadLocked(Shard& shard, LargeMap::iterator entry);

  // Erases an entry, keeping its node as a spare (up to kSpareNodes).
  template <class Map>
  static void EraseKeeping(Map& map, std::vector<typename Map::node_type>& spares,
                           typename Map::iterator position);
  // A new entry for key, placed by hint, from a spare node if there is one.
  template <class Map>
  static typename Map::mapped_type& InsertAt(Map& map, std::vector<typename Map::node_type>& spares,
                                             typename Map::const_iterator hint, uintptr_t key);
  // The entry for key, created (by InsertAt) when absent.
  template <class Map>
  static typename Map::mapped_type& FindOrInsert(Map& map,
                                                 std::vector<typename Map::node_type>& spares,
                                                 uintptr_t key);

  static bool IsSmall(const Allocation& allocation) {
    return allocation.size < (uintptr_t{1} << kWindowShift);
  }
  static uintptr_t LastByte(const Allocation& allocation) {
    return allocation.base + (allocation.size ? allocation.size - 1 : 0);
  }
  static size_t ShardOfRegion(uintptr_t region) { return (region * 0x9E3779B97F4A7C15ull) >> 58; }
  static size_t ShardOf(uintptr_t address) { return ShardOfRegion(address >> kRegionShift); }

  // Calls visit(shard) once for each distinct shard an allocation overlaps, except the shard of
  // its base.
  template <class Visit>
  void ForEachOtherShard(const Allocation& allocation, Visit visit);
  // Enters an allocation in (removes it from) the range indexes of one shard, whose lock is
  // held: the windows of that shard it overlaps, or the shard's large map.
  void IndexLocked(Shard& shard, const Allocation& allocation);
  void UnindexLocked(Shard& shard, const Allocation& allocation);
  static std::optional<Allocation> FindInRangesLocked(const Shard& shard, uintptr_t address);
  // This thread's kept answer for an address: a kept one if still current, else a fresh one,
  // which replaces any entry but `keep` (an answer the caller still reads).
  const registry_detail::KeptAnswer& LookUp(registry_detail::KeptAnswers& kept, uintptr_t address,
                                            const registry_detail::KeptAnswer* keep) const;
  const registry_detail::KeptAnswer& LookUpLocked(registry_detail::KeptAnswers& kept, size_t index,
                                                  uintptr_t address,
                                                  const registry_detail::KeptAnswer* keep) const;
  // The allocation whose base is exactly `base`, in the shard of base's region.
  static const Allocation* FindBaseLocked(const Shard& shard, uintptr_t base);
  // The same among the small allocations only.
  static const Allocation* FindSmallBaseLocked(const Shard& shard, uintptr_t base);
  // Add's part in the shard of the allocation's base: false when the base is taken.
  bool AddToBaseShardLocked(Shard& shard, const Allocation& allocation);
  // Whether this shard holds the entry that counts an allocation once (Snapshot).
  bool CountsHere(const Shard& shard, const Allocation& allocation) const {
    return &shards_[ShardOf(allocation.base)] == &shard;
  }

  // Marks the shard's answers kept by Find as stale; the shard's lock is held.
  static void ChangedLocked(Shard& shard) {
    shard.generation.store(shard.generation.load(std::memory_order_relaxed) + 1,
                           std::memory_order_release);
  }

  // Unique per registry in the process, so that answers a thread kept for an earlier registry
  // (one destroyed by infinirtFinalize, say) are never taken for this one's.
  const uint64_t instance_;
  std::array<Shard, kShards> shards_;
};

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_ALLOCATION_REGISTRY_H_
