// What the program has said about where managed (and pageable) memory should live: the advice of
// infinirtMemAdvise and the last location of infinirtMemPrefetchAsync, by page, as
// infinirtMemRangeGetAttribute reports them. The core keeps them for every backend (the calls go
// through it), so the answers are the same everywhere. Locations are the core's: flat device
// ordinals, the host, or a host NUMA node.
//
// The pages are held as runs: a map from the first address of each run to the hints of every page
// up to the next one, merged again where neighbours agree, so that advice over a large range costs
// a few entries rather than one per page.
#ifndef INFINIRT_CORE_MEMORY_HINTS_H_
#define INFINIRT_CORE_MEMORY_HINTS_H_

#include <cstddef>
#include <cstdint>
#include <map>
#include <mutex>
#include <set>

#include "infinirt.h"

namespace infinirt::core {

struct PageHints {
  bool read_mostly = false;
  infinirtMemLocation preferred{infinirtMemLocationTypeInvalid, 0};
  std::set<int> accessed_by;  // device ordinals
  infinirtMemLocation last_prefetch{infinirtMemLocationTypeInvalid, 0};

  bool operator==(const PageHints& other) const;
  bool operator!=(const PageHints& other) const { return !(*this == other); }
};

class MemoryHints {
 public:
  // `location` as the program gave it (a device location by flat ordinal). A range that runs
  // past the top of the address space ends at its top (the API refuses such ranges first).
  void Advise(uintptr_t begin, size_t count, enum infinirtMemoryAdvise advice,
              const infinirtMemLocation& location);
  void Prefetched(uintptr_t begin, size_t count, const infinirtMemLocation& location);
  // The memory went back (freed managed memory): its pages have no hints any more.
  void Forget(uintptr_t begin, size_t count);

  // The value infinirtMemRangeGetAttribute gives for the pages of [begin, begin + count), written
  // to data (data_size bytes, checked by the caller).
  void Query(uintptr_t begin, size_t count, enum infinirtMemRangeAttribute attribute, void* data,
             size_t data_size);

 private:
  using Runs = std::map<uintptr_t, PageHints>;
  template <class Change>
  void Change(uintptr_t begin, size_t count, Change&& change);
  // A run starts at `at` (splitting the run it falls in).
  Runs::iterator SplitAt(uintptr_t at);
  // Merges the runs from `first` to `last` (inclusive) with equal neighbours.
  void Merge(uintptr_t first, uintptr_t last);

  std::mutex mutex_;
  Runs runs_{{0, PageHints{}}};  // every page starts without hints
};

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_MEMORY_HINTS_H_
