// The allocation registry: every allocation made through InfiniRT, keyed by address range.
//
// Two indexes, each split into shards with their own lock so that threads do not
// serialise on one lock:
//   - exact base addresses in hash maps (Free, FreeHost, and lookups of base pointers: O(1));
//   - address ranges in ordered maps, sharded by 16 MiB region (interior pointers). An
//     allocation is entered in the shard of every region it overlaps, so the region of any
//     address it contains finds it. Live allocations never overlap, so the greatest base at or
//     below an address is the only candidate.
#ifndef INFINIRT_CORE_REGISTRY_H_
#define INFINIRT_CORE_REGISTRY_H_

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <map>
#include <mutex>
#include <optional>
#include <unordered_map>
#include <vector>

namespace infinirt::core {

enum class MemoryKind {
  kDevice,         // infinirtMalloc
  kPinnedHost,     // infinirtMallocHost / infinirtHostAlloc
  kStreamOrdered,  // infinirtMallocAsync
  kGraph           // infinirtMallocAsync during capture: owned by the graph (owner = graph id)
};

struct Allocation {
  uintptr_t base = 0;
  size_t size = 0;
  MemoryKind kind = MemoryKind::kDevice;
  int backend = -1;       // index in Runtime::backends()
  int device = -1;        // flat ordinal
  int local_device = -1;  // the backend's own device index
  uint64_t owner = 0;     // kGraph: the id of the graph that owns the memory

  bool Contains(uintptr_t address) const { return address - base < size; }
  bool IsDeviceMemory() const { return kind != MemoryKind::kPinnedHost; }
};

class AllocationRegistry {
 public:
  // False when an allocation with this base is already registered (a plugin bug).
  bool Add(const Allocation& allocation);

  // Removes the allocation whose base is exactly this address, if `accept` accepts it.
  std::optional<Allocation> RemoveExact(uintptr_t base,
                                        const std::function<bool(const Allocation&)>& accept);

  std::optional<Allocation> FindExact(uintptr_t base) const;

  // The allocation containing an address (base or interior).
  std::optional<Allocation> Find(uintptr_t address) const;

  // Every allocation matching a predicate (for device reset and finalize).
  std::vector<Allocation> Snapshot(const std::function<bool(const Allocation&)>& predicate) const;

  size_t size() const;

 private:
  static constexpr int kShards = 64;
  static constexpr int kRegionShift = 24;  // 16 MiB regions
  static_assert(kShards == 64, "the shard hashes keep the top 6 bits");

  struct ExactShard {
    mutable std::mutex mutex;
    std::unordered_map<uintptr_t, Allocation> by_base;
  };
  struct RangeShard {
    mutable std::mutex mutex;
    std::map<uintptr_t, Allocation> by_base;
  };

  static size_t ExactShardOf(uintptr_t base) { return (base >> 8) * 0x9E3779B97F4A7C15ull >> 58; }
  static size_t RangeShardOf(uintptr_t region) { return (region * 0x9E3779B97F4A7C15ull) >> 58; }

  // Calls visit(shard) once for each distinct range shard an allocation overlaps.
  template <class Visit>
  void ForEachRangeShard(const Allocation& allocation, Visit visit);

  std::array<ExactShard, kShards> exact_;
  std::array<RangeShard, kShards> ranges_;
};

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_REGISTRY_H_
