#include "allocation_registry.h"

#include <algorithm>
#include <bitset>
#include <mutex>

namespace infinirt::core {

namespace {

bool BaseBelow(const Allocation& allocation, uintptr_t base) { return allocation.base < base; }

}  // namespace

template <class Visit>
void AllocationRegistry::ForEachOtherShard(const Allocation& allocation, Visit visit) {
  const uintptr_t first = allocation.base >> kRegionShift;
  const uintptr_t last = LastByte(allocation) >> kRegionShift;
  std::bitset<kShards> seen;
  seen[ShardOfRegion(first)] = true;
  for (uintptr_t region = first; region != last && !seen.all();) {
    const size_t shard = ShardOfRegion(++region);
    if (!seen[shard]) {
      seen[shard] = true;
      visit(shards_[shard]);
    }
  }
}

void AllocationRegistry::IndexLocked(Shard& shard, const Allocation& allocation) {
  if (!IsSmall(allocation)) {
    shard.large_by_base.emplace(allocation.base, allocation);
    return;
  }
  // A small allocation overlaps one or two windows, possibly of two regions (two shards).
  const uintptr_t last = LastByte(allocation) >> kWindowShift;
  for (uintptr_t window = allocation.base >> kWindowShift; window <= last; ++window) {
    if (&shards_[ShardOf(window << kWindowShift)] != &shard) continue;
    std::vector<Allocation>& list = shard.small_by_window[window];
    list.insert(std::lower_bound(list.begin(), list.end(), allocation.base, BaseBelow), allocation);
  }
}

void AllocationRegistry::UnindexLocked(Shard& shard, const Allocation& allocation) {
  if (!IsSmall(allocation)) {
    shard.large_by_base.erase(allocation.base);
    return;
  }
  const uintptr_t last = LastByte(allocation) >> kWindowShift;
  for (uintptr_t window = allocation.base >> kWindowShift; window <= last; ++window) {
    auto found = shard.small_by_window.find(window);
    if (found == shard.small_by_window.end()) continue;  // a window of another shard
    std::vector<Allocation>& list = found->second;
    auto it = std::lower_bound(list.begin(), list.end(), allocation.base, BaseBelow);
    if (it != list.end() && it->base == allocation.base) list.erase(it);
    if (list.empty()) shard.small_by_window.erase(found);
  }
}

std::optional<Allocation> AllocationRegistry::FindInRangesLocked(const Shard& shard,
                                                                 uintptr_t address) {
  auto window = shard.small_by_window.find(address >> kWindowShift);
  if (window != shard.small_by_window.end()) {
    const std::vector<Allocation>& list = window->second;
    auto after = std::upper_bound(
        list.begin(), list.end(), address,
        [](uintptr_t value, const Allocation& allocation) { return value < allocation.base; });
    if (after != list.begin() && std::prev(after)->Contains(address)) return *std::prev(after);
  }
  auto after = shard.large_by_base.upper_bound(address);
  if (after == shard.large_by_base.begin()) return std::nullopt;
  --after;
  if (!after->second.Contains(address)) return std::nullopt;
  return after->second;
}

bool AllocationRegistry::Add(const Allocation& allocation) {
  {
    Shard& shard = shards_[ShardOf(allocation.base)];
    std::lock_guard<std::mutex> lock(shard.mutex);
    if (!shard.by_exact_base.emplace(allocation.base, allocation).second) return false;
    IndexLocked(shard, allocation);
  }
  ForEachOtherShard(allocation, [&](Shard& shard) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    IndexLocked(shard, allocation);
  });
  return true;
}

std::optional<Allocation> AllocationRegistry::RemoveExact(
    uintptr_t base, const std::function<bool(const Allocation&)>& accept) {
  Allocation removed;
  {
    Shard& shard = shards_[ShardOf(base)];
    std::lock_guard<std::mutex> lock(shard.mutex);
    auto it = shard.by_exact_base.find(base);
    if (it == shard.by_exact_base.end() || !accept(it->second)) return std::nullopt;
    removed = it->second;
    shard.by_exact_base.erase(it);
    UnindexLocked(shard, removed);
  }
  ForEachOtherShard(removed, [&](Shard& shard) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    UnindexLocked(shard, removed);
  });
  return removed;
}

std::optional<Allocation> AllocationRegistry::FindExact(uintptr_t base) const {
  const Shard& shard = shards_[ShardOf(base)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto it = shard.by_exact_base.find(base);
  if (it == shard.by_exact_base.end()) return std::nullopt;
  return it->second;
}

std::optional<Allocation> AllocationRegistry::Find(uintptr_t address) const {
  const Shard& shard = shards_[ShardOf(address)];
  std::lock_guard<std::mutex> lock(shard.mutex);
  auto exact = shard.by_exact_base.find(address);
  if (exact != shard.by_exact_base.end()) return exact->second;
  return FindInRangesLocked(shard, address);
}

std::vector<Allocation> AllocationRegistry::Snapshot(
    const std::function<bool(const Allocation&)>& predicate) const {
  std::vector<Allocation> result;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    for (const auto& entry : shard.by_exact_base) {
      if (predicate(entry.second)) result.push_back(entry.second);
    }
  }
  return result;
}

size_t AllocationRegistry::size() const {
  size_t total = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<std::mutex> lock(shard.mutex);
    total += shard.by_exact_base.size();
  }
  return total;
}

}  // namespace infinirt::core
