#include "allocation_registry.h"

#include <algorithm>
#include <bitset>
#include <mutex>
#include <type_traits>

#include "thread_state.h"

namespace infinirt::core {

namespace registry_detail {

// One answer of Find kept by a thread: for addresses in [first, end), at one generation of one
// shard of one registry, the allocation found (or none: then the range is the one address).
struct KeptAnswer {
  uint64_t registry = 0;  // 0: unused
  size_t shard = 0;
  uint64_t generation = 0;
  uintptr_t first = 0;
  uintptr_t end = 0;
  bool found = false;
  Allocation allocation;  // when found

  bool Answers(uint64_t in_registry, size_t in_shard, uint64_t at_generation,
               uintptr_t address) const {
    return registry == in_registry && shard == in_shard && generation == at_generation &&
           address - first < end - first;
  }
  const Allocation* answer() const { return found ? &allocation : nullptr; }
};

// A copy reads two pointers, a memset one; a few entries cover a loop over a handful of buffers.
struct KeptAnswers {
  static constexpr unsigned kCount = 4;
  KeptAnswer entries[kCount];
  unsigned next = 0;  // replaced next, round robin
};

}  // namespace registry_detail

namespace {

using registry_detail::KeptAnswer;
using registry_detail::KeptAnswers;

bool BaseBelow(const Allocation& allocation, uintptr_t base) { return allocation.base < base; }

std::atomic<uint64_t> registries_made{0};

static_assert(std::is_trivially_destructible_v<KeptAnswers>,
              "no destructor may run before the thread's last lookup (a TLS destructor's)");

// The storage of each thread's kept answers, reached once per thread (a TLS descriptor call);
// after that through the initial-exec block (tls_thread_state).
thread_local KeptAnswers kept_answers_storage;

__attribute__((noinline)) KeptAnswers& AttachKeptAnswers() {
  tls_thread_state.kept_registry_answers = &kept_answers_storage;
  return kept_answers_storage;
}

KeptAnswers& ThisThreadsKeptAnswers() {
  void* kept = tls_thread_state.kept_registry_answers;
  if (__builtin_expect(kept != nullptr, 1)) return *static_cast<KeptAnswers*>(kept);
  return AttachKeptAnswers();
}

}  // namespace

AllocationRegistry::AllocationRegistry() : instance_(++registries_made) {}

template <class Map>
void AllocationRegistry::EraseKeeping(Map& map, std::vector<typename Map::node_type>& spares,
                                      typename Map::iterator position) {
  typename Map::node_type node = map.extract(position);
  if (spares.size() >= kSpareNodes) return;  // the node is freed here
  if constexpr (std::is_same_v<typename Map::mapped_type, std::vector<Allocation>>) {
    // An empty window list; a spare keeps room for a few entries, not a crowded window's.
    if (node.mapped().capacity() > 16) node.mapped().shrink_to_fit();
  }
  if (spares.capacity() == 0) spares.reserve(kSpareNodes);
  spares.push_back(std::move(node));
}

template <class Map>
typename Map::mapped_type& AllocationRegistry::InsertAt(
    Map& map, std::vector<typename Map::node_type>& spares, typename Map::const_iterator hint,
    uintptr_t key) {
  if (spares.empty()) return map.try_emplace(hint, key)->second;
  typename Map::node_type node = std::move(spares.back());
  spares.pop_back();
  node.key() = key;
  return map.insert(hint, std::move(node))->second;
}

template <class Map>
typename Map::mapped_type& AllocationRegistry::FindOrInsert(
    Map& map, std::vector<typename Map::node_type>& spares, uintptr_t key) {
  auto found = map.find(key);
  if (found != map.end()) return found->second;
  return InsertAt(map, spares, found, key);
}

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

void AllocationRegistry::EraseLargeLocked(Shard& shard, LargeMap::iterator entry) {
  if (IsDead(shard, entry)) shard.has_dead = false;
  EraseKeeping(shard.large_by_base, shard.spare_large, entry);
}

void AllocationRegistry::KeepDeadLocked(Shard& shard, LargeMap::iterator entry) {
  if (shard.has_dead) EraseLargeLocked(shard, shard.dead);
  shard.dead = entry;
  shard.has_dead = true;
}

void AllocationRegistry::IndexLocked(Shard& shard, const Allocation& allocation) {
  if (!IsSmall(allocation)) {
    // (Another shard's entries never share a base with its dead one: that base is in one of the
    // shard's own regions. Should one, it is alive from here on.)
    if (shard.has_dead && shard.dead->first == allocation.base) shard.has_dead = false;
    FindOrInsert(shard.large_by_base, shard.spare_large, allocation.base) = allocation;
    return;
  }
  // A small allocation overlaps one or two windows, possibly of two regions (two shards).
  const uintptr_t last = LastByte(allocation) >> kWindowShift;
  for (uintptr_t window = allocation.base >> kWindowShift; window <= last; ++window) {
    if (&shards_[ShardOf(window << kWindowShift)] != &shard) continue;
    std::vector<Allocation>& list =
        FindOrInsert(shard.small_by_window, shard.spare_windows, window);
    list.insert(std::lower_bound(list.begin(), list.end(), allocation.base, BaseBelow), allocation);
  }
}

void AllocationRegistry::UnindexLocked(Shard& shard, const Allocation& allocation) {
  if (!IsSmall(allocation)) {
    auto found = shard.large_by_base.find(allocation.base);
    if (found != shard.large_by_base.end()) EraseLargeLocked(shard, found);
    return;
  }
  const uintptr_t last = LastByte(allocation) >> kWindowShift;
  for (uintptr_t window = allocation.base >> kWindowShift; window <= last; ++window) {
    auto found = shard.small_by_window.find(window);
    if (found == shard.small_by_window.end()) continue;  // a window of another shard
    std::vector<Allocation>& list = found->second;
    auto it = std::lower_bound(list.begin(), list.end(), allocation.base, BaseBelow);
    if (it != list.end() && it->base == allocation.base) list.erase(it);
    if (list.empty()) EraseKeeping(shard.small_by_window, shard.spare_windows, found);
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
  // Past the dead entry, the entry before it is the only other candidate: live allocations do
  // not overlap, so no live base lies between it and the address.
  if (IsDead(shard, after)) {
    if (after == shard.large_by_base.begin()) return std::nullopt;
    --after;
  }
  if (!after->second.Contains(address)) return std::nullopt;
  return after->second;
}

const Allocation* AllocationRegistry::FindSmallBaseLocked(const Shard& shard, uintptr_t base) {
  auto window = shard.small_by_window.find(base >> kWindowShift);
  if (window == shard.small_by_window.end()) return nullptr;
  const std::vector<Allocation>& list = window->second;
  auto it = std::lower_bound(list.begin(), list.end(), base, BaseBelow);
  return it != list.end() && it->base == base ? &*it : nullptr;
}

const Allocation* AllocationRegistry::FindBaseLocked(const Shard& shard, uintptr_t base) {
  if (const Allocation* small = FindSmallBaseLocked(shard, base)) return small;
  auto large = shard.large_by_base.find(base);
  return large == shard.large_by_base.end() || IsDead(shard, large) ? nullptr : &large->second;
}

bool AllocationRegistry::AddToBaseShardLocked(Shard& shard, const Allocation& allocation) {
  if (!IsSmall(allocation)) {
    if (FindSmallBaseLocked(shard, allocation.base) != nullptr) return false;
    // One search of the ordered map both refuses a taken base and places the new entry.
    auto at = shard.large_by_base.lower_bound(allocation.base);
    if (at != shard.large_by_base.end() && at->first == allocation.base) {
      if (!IsDead(shard, at)) return false;
      at->second = allocation;  // the freed allocation's entry, alive again
      shard.has_dead = false;
      return true;
    }
    InsertAt(shard.large_by_base, shard.spare_large, at, allocation.base) = allocation;
    return true;
  }
  if (FindBaseLocked(shard, allocation.base) != nullptr) return false;
  IndexLocked(shard, allocation);
  return true;
}

bool AllocationRegistry::Add(const Allocation& allocation) {
  {
    Shard& shard = shards_[ShardOf(allocation.base)];
    std::lock_guard<SpinLock> lock(shard.lock);
    if (!AddToBaseShardLocked(shard, allocation)) return false;
    ++shard.based_here;
    ChangedLocked(shard);
  }
  ForEachOtherShard(allocation, [&](Shard& shard) {
    std::lock_guard<SpinLock> lock(shard.lock);
    IndexLocked(shard, allocation);
    ChangedLocked(shard);
  });
  return true;
}

std::optional<Allocation> AllocationRegistry::RemoveExact(
    uintptr_t base, const std::function<bool(const Allocation&)>& accept) {
  Allocation removed;
  {
    Shard& shard = shards_[ShardOf(base)];
    std::lock_guard<SpinLock> lock(shard.lock);
    if (const Allocation* small = FindSmallBaseLocked(shard, base)) {
      if (!accept(*small)) return std::nullopt;
      removed = *small;
      UnindexLocked(shard, removed);
    } else {
      // A large allocation's entry is left dead where it was found (KeepDeadLocked).
      auto found = shard.large_by_base.find(base);
      if (found == shard.large_by_base.end() || IsDead(shard, found) || !accept(found->second)) {
        return std::nullopt;
      }
      removed = found->second;
      KeepDeadLocked(shard, found);
    }
    --shard.based_here;
    ChangedLocked(shard);
  }
  ForEachOtherShard(removed, [&](Shard& shard) {
    std::lock_guard<SpinLock> lock(shard.lock);
    UnindexLocked(shard, removed);
    ChangedLocked(shard);
  });
  return removed;
}

std::optional<Allocation> AllocationRegistry::FindExact(uintptr_t base) const {
  const Shard& shard = shards_[ShardOf(base)];
  std::lock_guard<SpinLock> lock(shard.lock);
  const Allocation* found = FindBaseLocked(shard, base);
  if (found == nullptr) return std::nullopt;
  return *found;
}

// Inlined into its three callers: the kept answers' hit path is a handful of compares.
__attribute__((always_inline)) inline const KeptAnswer& AllocationRegistry::LookUp(
    KeptAnswers& kept, uintptr_t address, const KeptAnswer* keep) const {
  const size_t index = ShardOf(address);
  // Acquire: a generation seen here was stored after the index change it stands for.
  const uint64_t now = shards_[index].generation.load(std::memory_order_acquire);
  for (const KeptAnswer& answer : kept.entries) {
    if (answer.Answers(instance_, index, now, address)) return answer;
  }
  return LookUpLocked(kept, index, address, keep);
}

__attribute__((noinline)) const KeptAnswer& AllocationRegistry::LookUpLocked(
    KeptAnswers& kept, size_t index, uintptr_t address, const KeptAnswer* keep) const {
  if (&kept.entries[kept.next] == keep) kept.next = (kept.next + 1) % KeptAnswers::kCount;
  KeptAnswer& fresh = kept.entries[kept.next];
  kept.next = (kept.next + 1) % KeptAnswers::kCount;
  const Shard& shard = shards_[index];
  std::optional<Allocation> result;
  uint64_t generation;
  {
    std::lock_guard<SpinLock> lock(shard.lock);
    result = FindInRangesLocked(shard, address);
    generation = shard.generation.load(std::memory_order_relaxed);
  }
  fresh.registry = instance_;
  fresh.shard = index;
  fresh.generation = generation;
  fresh.found = result.has_value();
  if (result) fresh.allocation = *result;
  fresh.first = result ? result->base : address;
  fresh.end = result ? result->base + result->size : address + 1;
  return fresh;
}

bool AllocationRegistry::Find(uintptr_t address, Allocation* found) const {
  const KeptAnswer& answer = LookUp(ThisThreadsKeptAnswers(), address, nullptr);
  if (answer.found) *found = answer.allocation;
  return answer.found;
}

const Allocation* AllocationRegistry::FindKept(uintptr_t address) const {
  return LookUp(ThisThreadsKeptAnswers(), address, nullptr).answer();
}

void AllocationRegistry::FindKeptPair(uintptr_t first, uintptr_t second,
                                      const Allocation** first_found,
                                      const Allocation** second_found) const {
  KeptAnswers& kept = ThisThreadsKeptAnswers();
  const KeptAnswer& first_answer = LookUp(kept, first, nullptr);
  *first_found = first_answer.answer();
  *second_found = LookUp(kept, second, &first_answer).answer();
}

std::vector<Allocation> AllocationRegistry::Snapshot(
    const std::function<bool(const Allocation&)>& predicate) const {
  std::vector<Allocation> result;
  for (const Shard& shard : shards_) {
    std::lock_guard<SpinLock> lock(shard.lock);
    // Each allocation once: from its large entry, or from the window of its base, in the shard
    // of its base.
    for (auto entry = shard.large_by_base.begin(); entry != shard.large_by_base.end(); ++entry) {
      const Allocation& allocation = entry->second;
      if (!IsDead(shard, entry) && CountsHere(shard, allocation) && predicate(allocation)) {
        result.push_back(allocation);
      }
    }
    for (const auto& [window, list] : shard.small_by_window) {
      for (const Allocation& allocation : list) {
        if ((allocation.base >> kWindowShift) == window && predicate(allocation)) {
          result.push_back(allocation);
        }
      }
    }
  }
  return result;
}

size_t AllocationRegistry::size() const {
  size_t total = 0;
  for (const Shard& shard : shards_) {
    std::lock_guard<SpinLock> lock(shard.lock);
    total += shard.based_here;
  }
  return total;
}

}  // namespace infinirt::core
