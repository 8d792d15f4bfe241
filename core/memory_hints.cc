#include "memory_hints.h"

#include <unistd.h>

#include <algorithm>
#include <cstring>
#include <iterator>
#include <vector>

namespace infinirt::core {

namespace {

uintptr_t PageSize() {
  static const auto page = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Locations compare by type and, where the type has one, id.
infinirtMemLocation Normalized(infinirtMemLocation location) {
  if (location.type != infinirtMemLocationTypeDevice &&
      location.type != infinirtMemLocationTypeHostNuma) {
    location.id = 0;
  }
  return location;
}

bool SameLocation(const infinirtMemLocation& a, const infinirtMemLocation& b) {
  return a.type == b.type && a.id == b.id;
}

// A location as the device-id attributes give it: a device's ordinal, infinirtCpuDeviceId for
// the host (any NUMA node), infinirtInvalidDeviceId for none.
int AsDeviceId(const infinirtMemLocation& location) {
  switch (location.type) {
    case infinirtMemLocationTypeDevice:
      return location.id;
    case infinirtMemLocationTypeHost:
    case infinirtMemLocationTypeHostNuma:
    case infinirtMemLocationTypeHostNumaCurrent:
      return infinirtCpuDeviceId;
    default:
      return infinirtInvalidDeviceId;
  }
}

// The location every run of [first, last) shares, or none (type Invalid) where they differ.
template <class Runs, class Field>
infinirtMemLocation CommonLocation(typename Runs::iterator first, typename Runs::iterator last,
                                   Field field) {
  const infinirtMemLocation common = field(first->second);
  for (auto it = std::next(first); it != last; ++it) {
    if (!SameLocation(field(it->second), common)) {
      return infinirtMemLocation{infinirtMemLocationTypeInvalid, 0};
    }
  }
  return common;
}

void WriteInt(void* data, int value) { std::memcpy(data, &value, sizeof value); }

uintptr_t FirstPage(uintptr_t begin) { return begin & ~(PageSize() - 1); }

// The start of the page holding the range's last byte (count > 0); a range that runs past the
// top of the address space ends at its top.
uintptr_t LastPage(uintptr_t begin, size_t count) {
  uintptr_t last = 0;
  if (__builtin_add_overflow(begin, count - 1, &last)) last = UINTPTR_MAX;
  return last & ~(PageSize() - 1);
}

}  // namespace

bool PageHints::operator==(const PageHints& other) const {
  return read_mostly == other.read_mostly && SameLocation(preferred, other.preferred) &&
         accessed_by == other.accessed_by && SameLocation(last_prefetch, other.last_prefetch);
}

MemoryHints::Runs::iterator MemoryHints::SplitAt(uintptr_t at) {
  auto next = runs_.upper_bound(at);
  auto containing = std::prev(next);  // runs_ always has a run at 0
  if (containing->first == at) return containing;
  return runs_.emplace_hint(next, at, containing->second);
}

void MemoryHints::Merge(uintptr_t first, uintptr_t last) {
  auto it = runs_.find(first);
  if (it != runs_.begin()) --it;
  while (it != runs_.end() && it->first <= last) {
    auto next = std::next(it);
    if (next != runs_.end() && next->second == it->second) {
      runs_.erase(next);
    } else {
      it = next;
    }
  }
}

// Advice and prefetches take whole pages, as a GPU's do: the range is widened to its pages.
// `end` 0 stands for the top of the address space (the last page's end wraps to 0).
template <class ChangeFn>
void MemoryHints::Change(uintptr_t begin, size_t count, ChangeFn&& change) {
  if (count == 0) return;
  const uintptr_t first = FirstPage(begin);
  const uintptr_t end = LastPage(begin, count) + PageSize();
  std::lock_guard<std::mutex> lock(mutex_);
  auto from = SplitAt(first);
  auto to = end == 0 ? runs_.end() : SplitAt(end);  // end 0: the range reaches the top
  for (auto it = from; it != to; ++it) change(it->second);
  Merge(first, end == 0 ? UINTPTR_MAX : end);
}

void MemoryHints::Advise(uintptr_t begin, size_t count, enum infinirtMemoryAdvise advice,
                         const infinirtMemLocation& location) {
  const infinirtMemLocation where = Normalized(location);
  const int device = AsDeviceId(where);
  Change(begin, count, [&](PageHints& hints) {
    switch (advice) {
      case infinirtMemAdviseSetReadMostly:
        hints.read_mostly = true;
        break;
      case infinirtMemAdviseUnsetReadMostly:
        hints.read_mostly = false;
        break;
      case infinirtMemAdviseSetPreferredLocation:
        hints.preferred = where;
        break;
      case infinirtMemAdviseUnsetPreferredLocation:
        hints.preferred = infinirtMemLocation{infinirtMemLocationTypeInvalid, 0};
        break;
      case infinirtMemAdviseSetAccessedBy:
        hints.accessed_by.insert(device);
        break;
      case infinirtMemAdviseUnsetAccessedBy:
        hints.accessed_by.erase(device);
        break;
    }
  });
}

void MemoryHints::Prefetched(uintptr_t begin, size_t count, const infinirtMemLocation& location) {
  const infinirtMemLocation where = Normalized(location);
  Change(begin, count, [&](PageHints& hints) { hints.last_prefetch = where; });
}

void MemoryHints::Forget(uintptr_t begin, size_t count) {
  Change(begin, count, [](PageHints& hints) { hints = PageHints{}; });
}

void MemoryHints::Query(uintptr_t begin, size_t count, enum infinirtMemRangeAttribute attribute,
                        void* data, size_t data_size) {
  const uintptr_t first = FirstPage(begin);
  const uintptr_t last = LastPage(begin, count == 0 ? 1 : count);
  std::lock_guard<std::mutex> lock(mutex_);
  auto from = std::prev(runs_.upper_bound(first));
  auto to = runs_.upper_bound(last);
  auto preferred = [](const PageHints& hints) { return hints.preferred; };
  auto prefetched = [](const PageHints& hints) { return hints.last_prefetch; };
  switch (attribute) {
    case infinirtMemRangeAttributeReadMostly:
      WriteInt(data, std::all_of(from, to, [](const auto& run) { return run.second.read_mostly; }));
      return;
    case infinirtMemRangeAttributePreferredLocation:
      WriteInt(data, AsDeviceId(CommonLocation<Runs>(from, to, preferred)));
      return;
    case infinirtMemRangeAttributePreferredLocationType:
      WriteInt(data, CommonLocation<Runs>(from, to, preferred).type);
      return;
    case infinirtMemRangeAttributePreferredLocationId:
      WriteInt(data, CommonLocation<Runs>(from, to, preferred).id);
      return;
    case infinirtMemRangeAttributeLastPrefetchLocation:
      WriteInt(data, AsDeviceId(CommonLocation<Runs>(from, to, prefetched)));
      return;
    case infinirtMemRangeAttributeLastPrefetchLocationType:
      WriteInt(data, CommonLocation<Runs>(from, to, prefetched).type);
      return;
    case infinirtMemRangeAttributeLastPrefetchLocationId:
      WriteInt(data, CommonLocation<Runs>(from, to, prefetched).id);
      return;
    case infinirtMemRangeAttributeAccessedBy: {
      // The devices advised for every page of the range; the rest of data is
      // infinirtInvalidDeviceId.
      std::set<int> common = from->second.accessed_by;
      for (auto it = std::next(from); it != to; ++it) {
        std::set<int> both;
        std::set_intersection(common.begin(), common.end(), it->second.accessed_by.begin(),
                              it->second.accessed_by.end(), std::inserter(both, both.end()));
        common.swap(both);
      }
      std::vector<int> ids(data_size / sizeof(int), infinirtInvalidDeviceId);
      std::copy_n(common.begin(), std::min(common.size(), ids.size()), ids.begin());
      std::memcpy(data, ids.data(), ids.size() * sizeof(int));
      return;
    }
  }
}

}  // namespace infinirt::core
