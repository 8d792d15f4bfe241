#include "registry.h"

#include <bitset>
#include <mutex>

namespace infinirt::core {

template <class Visit>
void AllocationRegistry::ForEachRangeShard(const Allocation& allocation, Visit visit) {
  const uintptr_t first = allocation.base >> kRegionShift;
  const uintptr_t last =
      (allocation.base + (allocation.size ? allocation.size - 1 : 0)) >> kRegionShift;
  std::bitset<kShards> seen;
  for (uintptr_t region = first;; ++region) {
    const size_t shard = RangeShardOf(region);
    if (!seen[shard]) {
      seen[shard] = true;
      visit(ranges_[shard]);
    }
    if (region == last || seen.all()) break;
  }
}

bool AllocationRegistry::Add(const Allocation& allocation) {
  {
    ExactShard& shard = exact_[ExactShardOf(allocation.base)];
    std::lock_guard<std::mutex> lock(shard.mutex);
    if (!shard.by_base.emplace(allocation.base, allocation).second) return false;
  }
  ForEachRangeShard(allocation, [&](RangeShard& shard) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.by_base.emplace(allocation.base, allocation);
  });
  return true;
}

std::optional<Allocation> AllocationRegistry::RemoveExact(
    uintptr_t base, const std::function<bool(const Allocation&)>& accept) {
  Allocation removed;
  {
    ExactShard& shard = exact_[ExactShardOf(base)];
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto it = shard.by_base.find(base);
    if (it == shard.by_base.end() || !accept(it->second)) return std::nullopt;
    removed = it->second;
    shard.by_base.erase(it);
  }
  ForEachRangeShard(removed, [&](RangeShard& shard) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    shard.by_base.erase(removed.base);
  });
  return removed;
}

std::optional<Allocation> AllocationRegistry::FindExact(uintptr_t base) const {
  const ExactShard& shard = exact_[ExactShardOf(base)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto it = shard.by_base.find(base);
  if (it == shard.by_base.end()) return std::nullopt;
  return it->second;
}

std::optional<Allocation> AllocationRegistry::Find(uintptr_t address) const {
  if (auto exact = FindExact(address)) return exact;
  const RangeShard& shard = ranges_[RangeShardOf(address >> kRegionShift)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto it = shard.by_base.upper_bound(address);
  if (it == shard.by_base.begin()) return std::nullopt;
  --it;
  if (!it->second.Contains(address)) return std::nullopt;
  return it->second;
}

std::vector<Allocation> AllocationRegistry::Snapshot(
    const std::function<bool(const Allocation&)>& predicate) const {
  std::vector<Allocation> result;
  for (const ExactShard& shard : exact_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    for (const auto& entry : shard.by_base) {
      if (predicate(entry.second)) result.push_back(entry.second);
    }
  }
  return result;
}

size_t AllocationRegistry::size() const {
  size_t total = 0;
  for (const ExactShard& shard : exact_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    total += shard.by_base.size();
  }
  return total;
}

}  // namespace infinirt::core
