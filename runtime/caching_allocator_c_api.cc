// The caching allocator's C functions (infinirt/caching_allocator.h): the pointers handed out are
// kept with their Memory in a table, so that Free and RecordStream find the block again.
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <new>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "caching_allocator.h"
#include "infinirt/caching_allocator.h"
#include "infinirt/error.hpp"
#include "runtime_log.h"
#include "scoped_device.h"

namespace infinirt::detail {
namespace {

struct Handed {
  std::mutex mutex;
  std::unordered_map<void*, std::shared_ptr<Memory>> memory;              // by pointer
  std::map<unsigned long long, std::shared_ptr<CachingAllocator>> pools;  // by pin owner
};

Handed& Table() {
  static Handed* table = new Handed;  // never destroyed: frees may come during exit
  return *table;
}

// The allocator's name for a stream: the legacy default stream's handle for null.
infinirtStream_t StreamKey(infinirtStream_t stream) {
  if (stream == infinirtStreamPerThread) {
    check(infinirtErrorNotSupported,
          "the per-thread default stream (a different stream per thread)");
  }
  return stream == nullptr ? infinirtStreamLegacy : stream;
}

// The device a stream belongs to (the current device for the legacy stream).
int StreamOrdinal(infinirtStream_t stream) {
  int ordinal = -1;
  check(infinirtStreamGetDevice(stream, &ordinal), "infinirtStreamGetDevice");
  return ordinal;
}

std::shared_ptr<CachingAllocator> AllocatorOf(infinirtStream_t stream) {
  const int ordinal = StreamOrdinal(stream);
  return CachingAllocator::For(Device::fromOrdinal(ordinal), ordinal);
}

std::shared_ptr<Memory> Find(void* pointer) {
  Handed& table = Table();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto found = table.memory.find(pointer);
  if (found == table.memory.end()) {
    check(infinirtErrorInvalidValue, "a pointer the caching allocator did not hand out");
  }
  return found->second;
}

void Require(bool condition, const char* what) {
  if (!condition) check(infinirtErrorInvalidValue, what);
}

// Removes an entry of one of the table's maps and returns its value (InvalidValue, saying
// `what`, when there is none).
template <class Map>
typename Map::mapped_type Take(Map Handed::*map, const typename Map::key_type& key,
                               const char* what) {
  Handed& table = Table();
  std::lock_guard<std::mutex> lock(table.mutex);
  auto found = (table.*map).find(key);
  Require(found != (table.*map).end(), what);
  typename Map::mapped_type value = std::move(found->second);
  (table.*map).erase(found);
  return value;
}

void CopyStat(const AllocatorStat& from, infinirtAllocatorStat* to) {
  *to = {from.current, from.peak, from.allocated, from.freed};
}

void CopyStats(const AllocatorStats& from, infinirtAllocatorStats* to) {
  CopyStat(from.allocated_bytes, &to->allocatedBytes);
  CopyStat(from.reserved_bytes, &to->reservedBytes);
  CopyStat(from.active_bytes, &to->activeBytes);
  CopyStat(from.inactive_split_bytes, &to->inactiveSplitBytes);
  CopyStat(from.requested_bytes, &to->requestedBytes);
  CopyStat(from.allocations, &to->allocations);
  CopyStat(from.segments, &to->segments);
  CopyStat(from.active_blocks, &to->activeBlocks);
  CopyStat(from.inactive_split_blocks, &to->inactiveSplitBlocks);
  to->cacheHits = from.cache_hits;
  to->cacheMisses = from.cache_misses;
  to->allocRetries = from.alloc_retries;
  to->ooms = from.ooms;
  to->deviceAllocs = from.device_allocs;
  to->deviceFrees = from.device_frees;
  to->keptBytes = from.kept_bytes;
}

// Runs body, turning what it throws into an error code (and a debug line).
template <class Body>
infinirtError_t Guarded(const char* function, Body body) noexcept {
  try {
    body();
    return infinirtSuccess;
  } catch (const Error& error) {
    Debug(std::string(function) + ": " + error.what());
    return error.code();
  } catch (const std::bad_alloc&) {
    Debug(std::string(function) + ": out of host memory");
    return infinirtErrorMemoryAllocation;
  } catch (const std::exception& error) {
    Debug(std::string(function) + ": " + error.what());
    return infinirtErrorUnknown;
  }
}

}  // namespace
}  // namespace infinirt::detail

using infinirt::detail::CopyStats;
using infinirt::detail::Guarded;
using infinirt::detail::Require;
using infinirt::detail::StreamKey;
using infinirt::detail::Table;

extern "C" {

infinirtError_t infinirtCachingAllocatorMalloc(void** devPtr, size_t size,
                                               infinirtStream_t stream) {
  return Guarded(__func__, [&] {
    Require(devPtr != nullptr, "devPtr is null");
    Require(size > 0, "size is 0");
    const infinirtStream_t key = StreamKey(stream);
    auto memory = infinirt::detail::AllocatorOf(stream)->Allocate(size, key, nullptr);
    void* pointer = memory->data();
    {
      auto& table = Table();
      std::lock_guard<std::mutex> lock(table.mutex);
      table.memory.emplace(pointer, std::move(memory));
    }
    *devPtr = pointer;
  });
}

infinirtError_t infinirtCachingAllocatorFree(void* devPtr) {
  return Guarded(__func__, [&] {
    if (devPtr == nullptr) return;  // as infinirtFree(NULL)
    // Released at the end of the statement, outside the table's lock (the release takes the
    // allocator's).
    infinirt::detail::Take(&infinirt::detail::Handed::memory, devPtr,
                           "a pointer the caching allocator did not hand out");
  });
}

infinirtError_t infinirtCachingAllocatorRecordStream(void* devPtr, infinirtStream_t stream) {
  return Guarded(__func__, [&] {
    const infinirtStream_t key = StreamKey(stream);
    infinirt::detail::Find(devPtr)->recordStream(key);
  });
}

infinirtError_t infinirtCachingAllocatorReleaseStream(infinirtStream_t stream) {
  return Guarded(__func__, [&] {
    Require(
        stream != nullptr && stream != infinirtStreamLegacy && stream != infinirtStreamPerThread,
        "the default streams are never destroyed");
    const int ordinal = infinirt::detail::StreamOrdinal(stream);
    auto allocator =
        infinirt::detail::CachingAllocator::Existing(infinirt::Device::fromOrdinal(ordinal));
    if (!allocator) return;  // nothing was ever allocated on the device
    INFINIRT_CHECK(infinirtStreamSynchronize(stream));
    allocator->StreamGone(stream);
  });
}

infinirtError_t infinirtCachingAllocatorBeginPin(infinirtStream_t stream,
                                                 unsigned long long* pool) {
  return Guarded(__func__, [&] {
    Require(pool != nullptr, "pool is null");
    const infinirtStream_t key = StreamKey(stream);
    auto allocator = infinirt::detail::AllocatorOf(stream);
    const uint64_t owner = infinirt::detail::CachingAllocator::NewPinOwner();
    {
      auto& table = Table();
      std::lock_guard<std::mutex> lock(table.mutex);
      table.pools.emplace(owner, allocator);
    }
    allocator->BeginPin(key, owner);
    *pool = owner;
  });
}

infinirtError_t infinirtCachingAllocatorEndPin(infinirtStream_t stream) {
  return Guarded(__func__, [&] {
    const infinirtStream_t key = StreamKey(stream);
    infinirt::detail::AllocatorOf(stream)->EndPin(key);
  });
}

infinirtError_t infinirtCachingAllocatorReleasePool(unsigned long long pool) {
  return Guarded(__func__, [&] {
    infinirt::detail::Take(&infinirt::detail::Handed::pools, pool,
                           "a pool BeginPin did not hand out (or released)")
        ->ReleasePinned(pool);
  });
}

infinirtError_t infinirtCachingAllocatorGetStats(infinirtAllocatorStats* stats, int device) {
  return Guarded(__func__, [&] {
    Require(stats != nullptr, "stats is null");
    CopyStats(infinirt::allocator::stats(infinirt::Device::fromOrdinal(device)), stats);
  });
}

infinirtError_t infinirtCachingAllocatorResetPeakStats(int device) {
  return Guarded(__func__, [&] {
    infinirt::allocator::resetPeakStats(infinirt::Device::fromOrdinal(device));
  });
}

infinirtError_t infinirtCachingAllocatorEmptyCache(int device) {
  return Guarded(__func__,
                 [&] { infinirt::allocator::emptyCache(infinirt::Device::fromOrdinal(device)); });
}

infinirtError_t infinirtCachingAllocatorFreeAll(void) {
  return Guarded(__func__, [&] {
    std::unordered_map<void*, std::shared_ptr<infinirt::Memory>> memory;
    std::map<unsigned long long, std::shared_ptr<infinirt::detail::CachingAllocator>> pools;
    {
      auto& table = Table();
      std::lock_guard<std::mutex> lock(table.mutex);
      memory.swap(table.memory);
      pools.swap(table.pools);
    }
    for (auto& [owner, allocator] : pools) allocator->ReleasePinned(owner);
    memory.clear();
    int count = 0;
    INFINIRT_CHECK(infinirtGetDeviceCount(&count));
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      auto allocator =
          infinirt::detail::CachingAllocator::Existing(infinirt::Device::fromOrdinal(ordinal));
      if (!allocator) continue;
      {
        // The work that used the memory ends first: then every block is back in the cache.
        infinirt::detail::ScopedDevice on_device(ordinal);
        INFINIRT_CHECK(infinirtDeviceSynchronize());
      }
      allocator->EmptyCache();
      allocator->ReleaseSpareEvents();  // their handles end with infinirtFinalize
    }
  });
}

}  // extern "C"
