/* The C++ runtime layer's caching allocator for C callers (libinfinirt_runtime.so): device memory
 * from the same per-device caches the Runtimes of the C++ layer use, their statistics and their
 * release. Bindings that cannot call C++ (the Python package) reach the allocator through these.
 *
 * Memory is allocated for a stream, as with PyTorch's caching allocator: once freed, it is reused
 * at once by later allocations for the same stream (stream order makes that safe) and by other
 * streams only once the stream has no work left. Work queued on any other stream that uses the
 * memory must be declared with infinirtCachingAllocatorRecordStream before the memory is freed.
 * The null stream is the legacy default stream; infinirtStreamPerThread is refused
 * (infinirtErrorNotSupported): one handle would stand for a different stream in every thread.
 *
 * Every function returns infinirtErrorInvalidValue for a null out-pointer or a pointer these
 * functions did not hand out (with a line at log level debug); unlike the runtime's own functions
 * they leave the thread's last error (infinirtGetLastError) alone. Thread-safe. */
#ifndef INFINIRT_CACHING_ALLOCATOR_H_
#define INFINIRT_CACHING_ALLOCATOR_H_

#include <stddef.h>

#include "infinirt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* One statistic: its value now, its highest value since the last reset of the peaks, and the
 * totals added to it and taken from it. */
typedef struct infinirtAllocatorStat {
  long long current;
  long long peak;
  long long allocated;
  long long freed;
} infinirtAllocatorStat;

/* The statistics of a device's allocator, as PyTorch's memory_stats names them (camelCase here).
 * Bytes are those of blocks (requests rounded up to 512 bytes), except requestedBytes.
 * X(field): fields of type infinirtAllocatorStat; then plain counters. */
#define INFINIRT_ALLOCATOR_STATS(X)                                                        \
  X(allocatedBytes)     /* in blocks handed out and not yet freed */                       \
  X(reservedBytes)      /* in segments taken from the device, cached or not */             \
  X(activeBytes)        /* handed out, or freed but still used by another stream's work */ \
  X(inactiveSplitBytes) /* free blocks within split segments */                            \
  X(requestedBytes)     /* asked for by the allocations counted in allocatedBytes */       \
  X(allocations)                                                                           \
  X(segments)                                                                              \
  X(activeBlocks)                                                                          \
  X(inactiveSplitBlocks)
#define INFINIRT_ALLOCATOR_COUNTERS(X)                                      \
  X(cacheHits)    /* allocations served from cached blocks */               \
  X(cacheMisses)  /* allocations that took a new segment from the device */ \
  X(allocRetries) /* allocations that released the cache and tried again */ \
  X(ooms)         /* allocations that failed even then */                   \
  X(deviceAllocs) /* segments taken (infinirtMalloc) */                     \
  X(deviceFrees)  /* segments released (infinirtFree) */                    \
  X(keptBytes)    /* freed blocks the C++ runtimes keep for their own streams */

#define INFINIRT_ALLOCATOR_STAT_FIELD_(name) infinirtAllocatorStat name;
#define INFINIRT_ALLOCATOR_COUNTER_FIELD_(name) long long name;
typedef struct infinirtAllocatorStats {
  INFINIRT_ALLOCATOR_STATS(INFINIRT_ALLOCATOR_STAT_FIELD_)
  INFINIRT_ALLOCATOR_COUNTERS(INFINIRT_ALLOCATOR_COUNTER_FIELD_)
} infinirtAllocatorStats;
#undef INFINIRT_ALLOCATOR_STAT_FIELD_
#undef INFINIRT_ALLOCATOR_COUNTER_FIELD_

/* The functions: X(return type, name after "infinirtCachingAllocator", parameter list). */
#define INFINIRT_CACHING_ALLOCATOR_FUNCTIONS(X)                                                  \
  /* size (> 0) bytes of the stream's device (the current device for the null stream), for work  \
     on that stream. */                                                                          \
  X(infinirtError_t, Malloc, (void** devPtr, size_t size, infinirtStream_t stream))              \
  /* Gives the memory back to the cache (the device keeps it until EmptyCache). */               \
  X(infinirtError_t, Free, (void* devPtr))                                                       \
  /* Work queued on `stream` uses the memory: it is reused only after that work, as queued when  \
     the memory is freed, is done. */                                                            \
  X(infinirtError_t, RecordStream, (void* devPtr, infinirtStream_t stream))                      \
  /* Before destroying a stream memory was allocated for: waits for the stream's work, then lets \
     the stream's cached blocks serve any stream. */                                             \
  X(infinirtError_t, ReleaseStream, (infinirtStream_t stream))                                   \
  /* Graph capture: memory allocated for `stream` until EndPin belongs to the graph being        \
     captured (`*pool`, a new number): freed meanwhile, it is kept from every other allocation   \
     until ReleasePool, so that the graph's replays can keep using its addresses. Capture on the \
     stream must not query other streams' allocations: pinning also tells the allocator not to   \
     query this stream. */                                                                       \
  X(infinirtError_t, BeginPin, (infinirtStream_t stream, unsigned long long* pool))              \
  X(infinirtError_t, EndPin, (infinirtStream_t stream))                                          \
  X(infinirtError_t, ReleasePool, (unsigned long long pool))                                     \
  /* The statistics of a device (all zero before its first allocation), setting every peak to    \
     its current value, and releasing to the device every cached segment nobody uses. */         \
  X(infinirtError_t, GetStats, (infinirtAllocatorStats * stats, int device))                     \
  X(infinirtError_t, ResetPeakStats, (int device))                                               \
  X(infinirtError_t, EmptyCache, (int device))                                                   \
  /* Before infinirtFinalize: frees every allocation these functions handed out (their pointers  \
     are no longer valid) and empties every device's cache. Memory of the C++ layer's Runtimes   \
     must be released by then as well. */                                                        \
  X(infinirtError_t, FreeAll, (void))

#define INFINIRT_CACHING_ALLOCATOR_DECLARE_(ret, name, params) \
  __attribute__((visibility("default"))) ret infinirtCachingAllocator##name params;
INFINIRT_CACHING_ALLOCATOR_FUNCTIONS(INFINIRT_CACHING_ALLOCATOR_DECLARE_)
#undef INFINIRT_CACHING_ALLOCATOR_DECLARE_

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* INFINIRT_CACHING_ALLOCATOR_H_ */
