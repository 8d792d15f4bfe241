// The caching allocator of each device (the one a device's Runtimes share): its statistics, a
// summary, and releasing what it caches.
#ifndef INFINIRT_ALLOCATOR_HPP_
#define INFINIRT_ALLOCATOR_HPP_

#include <cstdint>
#include <string>

#include "infinirt/device.hpp"
#include "infinirt/export.hpp"

namespace infinirt {

// One statistic: its value now, its highest value since the last resetPeakStats, and the
// totals added to it and taken from it.
struct AllocatorStat {
  int64_t current = 0;
  int64_t peak = 0;
  int64_t allocated = 0;
  int64_t freed = 0;
};

// The statistics of torch.cuda.memory_stats, for one device. Bytes are those of blocks (sizes
// rounded up to 512 bytes), except requested_bytes (the sizes asked for).
struct AllocatorStats {
  AllocatorStat allocated_bytes;       // in blocks handed out and not yet released
  AllocatorStat reserved_bytes;        // in segments taken from the device (cached or not)
  AllocatorStat active_bytes;          // allocated, or released but still in use by a stream
  AllocatorStat inactive_split_bytes;  // free blocks within segments that are split
  AllocatorStat requested_bytes;       // asked for by the allocations counted above
  AllocatorStat allocations;           // blocks handed out
  AllocatorStat segments;              // segments taken from the device
  AllocatorStat active_blocks;
  AllocatorStat inactive_split_blocks;
  int64_t cache_hits = 0;     // allocations served from cached blocks
  int64_t cache_misses = 0;   // allocations that took a new segment from the device
  int64_t alloc_retries = 0;  // allocations that released the cache and tried again
  int64_t ooms = 0;           // allocations that failed even then
  int64_t device_allocs = 0;  // segments taken (infinirtMalloc calls)
  int64_t device_frees = 0;   // segments released (infinirtFree calls)
  // In released blocks each runtime keeps for its own stream's next allocations of the same size
  // (outside the shared cache; back to it before any new segment is taken, on emptyCache, when
  // memory runs short and when the runtime goes).
  int64_t kept_bytes = 0;
};

namespace allocator {

// The statistics of a device's caching allocator (all zero before its first allocation).
INFINIRT_CXX_API AllocatorStats stats(Device device);
// Sets every peak to its current value.
INFINIRT_CXX_API void resetPeakStats(Device device);
// Releases to the device every cached segment nobody uses (blocks handed out stay).
INFINIRT_CXX_API void emptyCache(Device device);
// A few lines for people: the statistics above, current and peak.
INFINIRT_CXX_API std::string summary(Device device);

}  // namespace allocator
}  // namespace infinirt

#endif  // INFINIRT_ALLOCATOR_HPP_
