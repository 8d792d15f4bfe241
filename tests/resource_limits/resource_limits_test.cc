// Resource limits: a request larger than memory fails with infinirtErrorMemoryAllocation and
// leaves the runtime usable; the allocation registry's memory stays bounded with 100,000 live
// allocations and does not grow over 1,000,000 allocate/free cycles.
//
// The process's heap in use is read from the allocator (glibc's mallinfo2, or the sanitizer's
// own allocator under AddressSanitizer and ThreadSanitizer). The test links the core's objects so
// that it can read the registry's size too.
#include <gtest/gtest.h>
#include <malloc.h>

#include <cstdint>
#include <cstdlib>
#include <vector>

#include "infinirt.h"
#include "allocation_registry.h"
#include "runtime.h"

#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INFINIRT_SANITIZER_ALLOCATOR 1
// Every sanitizer runtime exports it (sanitizer/allocator_interface.h, which GCC does not ship).
extern "C" size_t __sanitizer_get_current_allocated_bytes(void);
#endif

namespace {

using infinirt::core::Allocation;
using infinirt::core::AllocationRegistry;
using infinirt::core::Runtime;

// Bytes of heap in use by the whole process. Under a sanitizer, glibc's malloc is not the one
// in use, so its counts would say nothing: ask the sanitizer's allocator.
size_t HeapInUse() {
#if defined(INFINIRT_SANITIZER_ALLOCATOR)
  return __sanitizer_get_current_allocated_bytes();
#else
  const struct mallinfo2 info = mallinfo2();
  return info.uordblks + info.hblkhd;
#endif
}

size_t RegistrySize() { return Runtime::Get().allocations().size(); }

// --- Requests larger than memory ----------------------------------------------------------

TEST(ResourceLimits, RequestsLargerThanMemoryFailWithMemoryAllocationAndTheRuntimeGoesOn) {
  for (const size_t size : {size_t{1} << 50, SIZE_MAX - 4096, SIZE_MAX}) {
    SCOPED_TRACE(size);
    void* pointer = nullptr;
    EXPECT_EQ(infinirtMalloc(&pointer, size), infinirtErrorMemoryAllocation);
    EXPECT_EQ(infinirtGetLastError(), infinirtErrorMemoryAllocation);
    EXPECT_EQ(infinirtMallocHost(&pointer, size), infinirtErrorMemoryAllocation);
    EXPECT_EQ(infinirtMallocAsync(&pointer, size, nullptr), infinirtErrorMemoryAllocation);
    EXPECT_EQ(infinirtGetLastError(), infinirtErrorMemoryAllocation);
  }
  EXPECT_EQ(RegistrySize(), 0u);
  void* small = nullptr;
  ASSERT_EQ(infinirtMalloc(&small, 4096), infinirtSuccess);
  EXPECT_EQ(infinirtMemset(small, 1, 4096), infinirtSuccess);
  EXPECT_EQ(infinirtFree(small), infinirtSuccess);
}

// Run by the CTest entry resource_limits_ulimit_test under `ulimit -v` (an address space of
// 4 GiB): allocating 256 MiB blocks must fail cleanly before the limit, and everything works
// again once they are freed.
TEST(ResourceLimits, UnderUlimitAllocationRunsOutCleanly) {
  if (!std::getenv("RESOURCE_LIMITS_UNDER_ULIMIT")) {
    GTEST_SKIP() << "run by the CTest entry resource_limits_ulimit_test, under ulimit -v";
  }
  constexpr size_t kBlock = size_t{256} << 20;
  std::vector<void*> blocks;
  infinirtError_t error = infinirtSuccess;
  while (blocks.size() < 64) {  // 16 GiB: more than the limit allows
    void* block = nullptr;
    error = infinirtMalloc(&block, kBlock);
    if (error != infinirtSuccess) break;
    blocks.push_back(block);
  }
  EXPECT_EQ(error, infinirtErrorMemoryAllocation);
  EXPECT_LT(blocks.size(), 16u) << "the limit did not apply";
  EXPECT_EQ(RegistrySize(), blocks.size());
  for (void* block : blocks) EXPECT_EQ(infinirtFree(block), infinirtSuccess);
  void* again = nullptr;
  ASSERT_EQ(infinirtMalloc(&again, kBlock), infinirtSuccess) << "usable again after freeing";
  EXPECT_EQ(infinirtMemset(again, 0, kBlock), infinirtSuccess);
  EXPECT_EQ(infinirtFree(again), infinirtSuccess);
  EXPECT_EQ(RegistrySize(), 0u);
}

// --- The registry's memory -----------------------------------------------------------------

Allocation AllocationAt(uintptr_t base, size_t size) {
  Allocation allocation;
  allocation.base = base;
  allocation.size = size;
  allocation.backend = 0;
  allocation.device = 0;
  allocation.local_device = 0;
  return allocation;
}

constexpr uintptr_t kBase = uintptr_t{1} << 40;

TEST(RegistryMemory, AHundredThousandLiveAllocationsCostABoundedAmountEach) {
  constexpr size_t kLive = 100000;
  AllocationRegistry registry;
  const size_t before = HeapInUse();
  for (size_t i = 0; i < kLive; ++i) {
    ASSERT_TRUE(registry.Add(AllocationAt(kBase + i * 4096, 1024)));
  }
  const size_t per_allocation = (HeapInUse() - before) / kLive;
  // Two index entries (a hash node, and a window's list or a tree node) of about 100 bytes
  // each, plus buckets.
  EXPECT_LE(per_allocation, 400u);
  for (size_t i = 0; i < kLive; ++i) {
    ASSERT_TRUE(registry.RemoveExact(kBase + i * 4096, [](auto) { return true; }));
  }
  EXPECT_EQ(registry.size(), 0u);
  // What stays is the bucket arrays of the two hash maps (exact bases, small allocations'
  // windows), sized for the peak: about 8 bytes per entry each.
  EXPECT_LE(HeapInUse() - before, kLive * 24);
}

TEST(RegistryMemory, AMillionAddRemoveCyclesDoNotGrowIt) {
  AllocationRegistry registry;
  auto cycle = [&](size_t i) {
    const uintptr_t base = kBase + (i % 4096) * 65536;
    ASSERT_TRUE(registry.Add(AllocationAt(base, 65536)));
    ASSERT_TRUE(registry.RemoveExact(base, [](auto) { return true; }));
  };
  for (size_t i = 0; i < 10000; ++i) cycle(i);  // the maps reach their working size
  const size_t before = HeapInUse();
  for (size_t i = 0; i < 1000000; ++i) cycle(i);
  EXPECT_LE(HeapInUse(), before + 4096);
  EXPECT_EQ(registry.size(), 0u);
}

// The same through the public API on the CPU backend: what InfiniRT holds for an allocation
// (registry entries, the backend's own block) is all returned by infinirtFree.
TEST(RegistryMemory, AMillionMallocFreeCyclesThroughTheApiDoNotGrowTheHeap) {
  auto cycle = [](size_t size) {
    void* pointer = nullptr;
    ASSERT_EQ(infinirtMalloc(&pointer, size), infinirtSuccess);
    ASSERT_EQ(infinirtFree(pointer), infinirtSuccess);
  };
  for (size_t i = 0; i < 10000; ++i) cycle(64 + i % 4096);
  const size_t before = HeapInUse();
  for (size_t i = 0; i < 1000000; ++i) cycle(64 + i % 4096);
  EXPECT_LE(HeapInUse(), before + 64 * 1024);
  EXPECT_EQ(RegistrySize(), 0u);
}

TEST(RegistryMemory, AHundredThousandLiveApiAllocationsAreAllFoundAndFreed) {
  constexpr size_t kLive = 100000;
  std::vector<void*> pointers(kLive);
  for (void*& pointer : pointers) ASSERT_EQ(infinirtMalloc(&pointer, 64), infinirtSuccess);
  EXPECT_EQ(RegistrySize(), kLive);
  for (size_t i = 0; i < kLive; i += 997) {
    infinirtPointerAttributes attributes{};
    void* interior = static_cast<char*>(pointers[i]) + 10;
    ASSERT_EQ(infinirtPointerGetAttributes(&attributes, interior), infinirtSuccess);
    EXPECT_EQ(attributes.type, infinirtMemoryTypeDevice);
    EXPECT_EQ(attributes.devicePointer, interior);
  }
  for (void* pointer : pointers) ASSERT_EQ(infinirtFree(pointer), infinirtSuccess);
  EXPECT_EQ(RegistrySize(), 0u);
}

}  // namespace
