// Unit tests of core/allocation_registry.h: AllocationRegistry. Addresses are made up: the registry
// only records ranges and never touches the memory.
#include "allocation_registry.h"

#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <optional>
#include <thread>
#include <vector>

namespace infinirt::core {
namespace {

constexpr uintptr_t kRegion = uintptr_t{1} << 24;  // the registry's 16 MiB regions

Allocation MakeAllocation(uintptr_t base, size_t size, MemoryKind kind = MemoryKind::kDevice,
                          int device = 0) {
  Allocation allocation;
  allocation.base = base;
  allocation.size = size;
  allocation.kind = kind;
  allocation.backend = 0;
  allocation.device = device;
  allocation.local_device = device;
  return allocation;
}

bool AcceptAny(const Allocation&) { return true; }
bool AcceptPinned(const Allocation& allocation) {
  return allocation.kind == MemoryKind::kPinnedHost;
}
bool AcceptDevice(const Allocation& allocation) {
  return allocation.kind != MemoryKind::kPinnedHost;
}

// The base of the allocation containing address, or 0 when none does.
uintptr_t BaseFound(const AllocationRegistry& registry, uintptr_t address) {
  const std::optional<Allocation> found = registry.Find(address);
  return found ? found->base : 0;
}

TEST(AllocationRegistryTest, FindsAnAllocationFromItsBaseAndEveryInteriorAddress) {
  AllocationRegistry registry;
  const uintptr_t base = 0x7f0000001000;
  ASSERT_TRUE(registry.Add(MakeAllocation(base, 1000, MemoryKind::kPinnedHost, 3)));
  for (uintptr_t offset = 0; offset < 1000; ++offset) {
    ASSERT_EQ(BaseFound(registry, base + offset), base) << "offset " << offset;
  }
  const auto found = registry.Find(base + 500);
  ASSERT_TRUE(found.has_value());
  EXPECT_EQ(found->size, 1000u);
  EXPECT_EQ(found->kind, MemoryKind::kPinnedHost);
  EXPECT_EQ(found->device, 3);
  EXPECT_TRUE(registry.FindExact(base).has_value());
  EXPECT_FALSE(registry.FindExact(base + 1).has_value()) << "FindExact is for bases only";
}

TEST(AllocationRegistryTest, OnePastTheEndAndOneBeforeTheBaseAreNotFound) {
  AllocationRegistry registry;
  const uintptr_t base = 0x600000000100;
  ASSERT_TRUE(registry.Add(MakeAllocation(base, 256)));
  EXPECT_EQ(BaseFound(registry, base + 256), 0u);
  EXPECT_EQ(BaseFound(registry, base - 1), 0u);
  EXPECT_EQ(BaseFound(registry, base + 255), base);
}

TEST(AllocationRegistryTest, AdjacentAllocationsAreToldApart) {
  AllocationRegistry registry;
  const uintptr_t first = 0x500000000000;
  ASSERT_TRUE(registry.Add(MakeAllocation(first, 512)));
  ASSERT_TRUE(registry.Add(MakeAllocation(first + 512, 512)));
  EXPECT_EQ(BaseFound(registry, first + 511), first);
  EXPECT_EQ(BaseFound(registry, first + 512), first + 512);
  EXPECT_EQ(BaseFound(registry, first + 1023), first + 512);
  EXPECT_EQ(BaseFound(registry, first + 1024), 0u);
}

TEST(AllocationRegistryTest, AddingTheSameBaseTwiceFails) {
  AllocationRegistry registry;
  ASSERT_TRUE(registry.Add(MakeAllocation(0x400000, 64)));
  EXPECT_FALSE(registry.Add(MakeAllocation(0x400000, 128)));
  EXPECT_EQ(registry.size(), 1u);
  EXPECT_EQ(registry.Find(0x400000)->size, 64u);
}

// Small allocations (under 4 KiB) are indexed by 4 KiB window: one that straddles two windows,
// or two regions (two shards), is found from both sides and removed from both; its neighbours
// in the same windows stay.
TEST(AllocationRegistryTest, SmallAllocationsAcrossWindowAndRegionBoundariesAreFoundEverywhere) {
  AllocationRegistry registry;
  constexpr uintptr_t kWindow = 4096;
  for (const uintptr_t boundary : {0x7000 * kRegion + 5 * kWindow, 0x7001 * kRegion}) {
    SCOPED_TRACE(::testing::Message() << std::hex << boundary);
    const uintptr_t straddling = boundary - 100;  // 200 bytes: 100 on each side
    ASSERT_TRUE(registry.Add(MakeAllocation(straddling, 200)));
    ASSERT_TRUE(registry.Add(MakeAllocation(straddling - 300, 300)));        // right before it
    ASSERT_TRUE(registry.Add(MakeAllocation(boundary + 100, kWindow - 1)));  // right after it
    for (uintptr_t address = straddling; address < straddling + 200; ++address) {
      ASSERT_EQ(BaseFound(registry, address), straddling) << std::hex << address;
    }
    EXPECT_EQ(BaseFound(registry, straddling - 1), straddling - 300);
    EXPECT_EQ(BaseFound(registry, boundary + 100), boundary + 100);
    EXPECT_EQ(BaseFound(registry, boundary + 100 + kWindow - 2), boundary + 100);
    EXPECT_EQ(BaseFound(registry, boundary + 100 + kWindow - 1), 0u);

    ASSERT_TRUE(registry.RemoveExact(straddling, AcceptAny).has_value());
    EXPECT_EQ(BaseFound(registry, boundary - 1), 0u);
    EXPECT_EQ(BaseFound(registry, boundary), 0u);
    EXPECT_EQ(BaseFound(registry, straddling - 1), straddling - 300);
    EXPECT_EQ(BaseFound(registry, boundary + 100), boundary + 100);
  }
  EXPECT_EQ(registry.size(), 4u);
}

// Many small allocations in one window (16-byte apart), mixed with a large one that covers the
// window's neighbours: each address finds its own.
TEST(AllocationRegistryTest, ManySmallAllocationsInOneWindowBesideALargeOne) {
  AllocationRegistry registry;
  const uintptr_t window = 0x6100 * kRegion + 7 * 4096;
  for (uintptr_t offset = 0; offset < 4096; offset += 16) {
    ASSERT_TRUE(registry.Add(MakeAllocation(window + offset, 8)));
  }
  ASSERT_TRUE(registry.Add(MakeAllocation(window + 4096, 3 * 4096)));  // large: the next windows
  for (uintptr_t offset = 0; offset < 4096; ++offset) {
    const uintptr_t expected = offset % 16 < 8 ? window + offset / 16 * 16 : 0;
    ASSERT_EQ(BaseFound(registry, window + offset), expected) << offset;
  }
  EXPECT_EQ(BaseFound(registry, window + 4096 + 5000), window + 4096);
  for (uintptr_t offset = 0; offset < 4096; offset += 32) {
    ASSERT_TRUE(registry.RemoveExact(window + offset, AcceptAny).has_value());
  }
  EXPECT_EQ(BaseFound(registry, window + 3), 0u);
  EXPECT_EQ(BaseFound(registry, window + 16 + 3), window + 16);
  EXPECT_EQ(registry.size(), 4096u / 32 + 1);
}

// An allocation over several 16 MiB regions, starting just before a region boundary, with
// small allocations around it (in regions whose shards it shares).
TEST(AllocationRegistryTest, AllocationSpanningSeveralRegionsIsFoundFromAnyInteriorAddress) {
  AllocationRegistry registry;
  const uintptr_t base = 0x3000 * kRegion - 4096;
  const size_t size = 5 * kRegion + 8192;
  const uintptr_t end = base + size;
  ASSERT_TRUE(registry.Add(MakeAllocation(base, size)));
  ASSERT_TRUE(registry.Add(MakeAllocation(base - 4096, 4096)));  // right before
  ASSERT_TRUE(registry.Add(MakeAllocation(end, 4096)));          // right after
  for (uintptr_t region = 1; region <= 70; ++region) {           // far away, sharing range shards
    ASSERT_TRUE(registry.Add(MakeAllocation(end + region * kRegion + 64, 64)));
  }
  for (uintptr_t boundary = (base / kRegion + 1) * kRegion; boundary < end; boundary += kRegion) {
    EXPECT_EQ(BaseFound(registry, boundary - 1), base) << std::hex << boundary;
    EXPECT_EQ(BaseFound(registry, boundary), base) << std::hex << boundary;
    if (boundary + kRegion / 2 < end) {
      EXPECT_EQ(BaseFound(registry, boundary + kRegion / 2), base) << std::hex << boundary;
    }
  }
  EXPECT_EQ(BaseFound(registry, base), base);
  EXPECT_EQ(BaseFound(registry, end - 1), base);
  EXPECT_EQ(BaseFound(registry, end), end);
  EXPECT_EQ(BaseFound(registry, base - 1), base - 4096);
  EXPECT_EQ(BaseFound(registry, end + 3 * kRegion + 63), 0u);
  EXPECT_EQ(BaseFound(registry, end + 3 * kRegion + 64), end + 3 * kRegion + 64);

  ASSERT_TRUE(registry.RemoveExact(base, AcceptAny).has_value());
  for (uintptr_t address = base; address < end; address += kRegion / 4) {
    EXPECT_EQ(BaseFound(registry, address), 0u) << std::hex << address;
  }
  EXPECT_EQ(BaseFound(registry, end), end);
}

// 2 GiB covers 128 regions: more regions than the registry has range shards.
TEST(AllocationRegistryTest, AllocationCoveringMoreRegionsThanShardsIsFoundEverywhere) {
  AllocationRegistry registry;
  const uintptr_t base = 0x100000000000;
  const size_t size = 128 * kRegion;
  ASSERT_TRUE(registry.Add(MakeAllocation(base, size)));
  for (uintptr_t address = base; address < base + size; address += kRegion / 2) {
    ASSERT_EQ(BaseFound(registry, address), base) << std::hex << address;
  }
  EXPECT_EQ(BaseFound(registry, base + size - 1), base);
  EXPECT_EQ(BaseFound(registry, base + size), 0u);
  ASSERT_TRUE(registry.RemoveExact(base, AcceptAny).has_value());
  for (uintptr_t address = base; address < base + size; address += kRegion / 2) {
    ASSERT_EQ(BaseFound(registry, address), 0u) << std::hex << address;
  }
}

TEST(AllocationRegistryTest, RemoveExactHonoursTheKindFilter) {
  AllocationRegistry registry;
  const uintptr_t device = 0x200000;
  const uintptr_t pinned = 0x300000;
  ASSERT_TRUE(registry.Add(MakeAllocation(device, 128, MemoryKind::kDevice)));
  ASSERT_TRUE(registry.Add(MakeAllocation(pinned, 128, MemoryKind::kPinnedHost)));

  EXPECT_FALSE(registry.RemoveExact(device, AcceptPinned).has_value());
  EXPECT_FALSE(registry.RemoveExact(pinned, AcceptDevice).has_value());
  EXPECT_EQ(BaseFound(registry, device + 1), device) << "a refused remove must keep it";
  EXPECT_EQ(BaseFound(registry, pinned + 1), pinned) << "a refused remove must keep it";

  const auto removed = registry.RemoveExact(device, AcceptDevice);
  ASSERT_TRUE(removed.has_value());
  EXPECT_EQ(removed->base, device);
  EXPECT_EQ(removed->kind, MemoryKind::kDevice);
  EXPECT_EQ(BaseFound(registry, device), 0u);
  EXPECT_EQ(BaseFound(registry, device + 1), 0u);
  EXPECT_EQ(registry.size(), 1u);
}

TEST(AllocationRegistryTest, SecondAndInteriorRemovesFindNothing) {
  AllocationRegistry registry;
  const uintptr_t base = 0x900000;
  ASSERT_TRUE(registry.Add(MakeAllocation(base, 4096)));
  EXPECT_FALSE(registry.RemoveExact(base + 1, AcceptAny).has_value()) << "interior address";
  EXPECT_TRUE(registry.RemoveExact(base, AcceptAny).has_value());
  EXPECT_FALSE(registry.RemoveExact(base, AcceptAny).has_value()) << "second remove";
  EXPECT_EQ(registry.size(), 0u);
  // The base can be registered again once removed.
  EXPECT_TRUE(registry.Add(MakeAllocation(base, 64)));
  EXPECT_EQ(BaseFound(registry, base + 63), base);
  EXPECT_EQ(BaseFound(registry, base + 64), 0u);
}

// 100,000 allocations of varied sizes with gaps between them: every base, last byte and gap
// answers correctly, before and after removing every other one.
TEST(AllocationRegistryTest, HundredThousandAllocationsAreAllFoundAndGapsAreNot) {
  constexpr int kCount = 100000;
  AllocationRegistry registry;
  std::vector<Allocation> all;
  all.reserve(kCount);
  uintptr_t next = 0x10000000;
  for (int i = 0; i < kCount; ++i) {
    const size_t size = 256 * (1 + i % 37) + (i % 5 == 0 ? 3 * kRegion : 0);
    all.push_back(
        MakeAllocation(next, size, i % 3 ? MemoryKind::kDevice : MemoryKind::kPinnedHost, i % 4));
    ASSERT_TRUE(registry.Add(all.back()));
    next += size + 256 * (1 + i % 3);  // a gap after each
  }
  EXPECT_EQ(registry.size(), static_cast<size_t>(kCount));
  for (const Allocation& a : all) {
    ASSERT_EQ(BaseFound(registry, a.base), a.base);
    ASSERT_EQ(BaseFound(registry, a.base + a.size / 2), a.base);
    ASSERT_EQ(BaseFound(registry, a.base + a.size - 1), a.base);
    ASSERT_EQ(BaseFound(registry, a.base + a.size), 0u) << "gap after " << std::hex << a.base;
  }
  for (int i = 0; i < kCount; i += 2) {
    ASSERT_TRUE(registry.RemoveExact(all[i].base, AcceptAny).has_value());
  }
  EXPECT_EQ(registry.size(), static_cast<size_t>(kCount / 2));
  for (int i = 0; i < kCount; ++i) {
    const Allocation& a = all[i];
    const uintptr_t expected = i % 2 ? a.base : 0;
    ASSERT_EQ(BaseFound(registry, a.base), expected) << i;
    ASSERT_EQ(BaseFound(registry, a.base + a.size - 1), expected) << i;
  }
  const auto pinned =
      registry.Snapshot([](const Allocation& a) { return a.kind == MemoryKind::kPinnedHost; });
  size_t expected_pinned = 0;
  for (int i = 1; i < kCount; i += 2) expected_pinned += all[i].kind == MemoryKind::kPinnedHost;
  EXPECT_EQ(pinned.size(), expected_pinned);
}

// 8 threads add, find and remove allocations in their own address ranges (some spanning
// regions), while all of them also read a shared set of allocations that never changes.
// Find keeps its last answers per thread; these check that a kept answer never outlives the
// state it was read from.

TEST(AllocationRegistryTest, AKeptAnswerIsDroppedWhenItsAllocationIsRemoved) {
  AllocationRegistry registry;
  ASSERT_TRUE(registry.Add(MakeAllocation(0x10000000, 4096)));
  EXPECT_EQ(BaseFound(registry, 0x10000010), 0x10000000u);
  EXPECT_EQ(BaseFound(registry, 0x10000010), 0x10000000u);  // the kept answer
  ASSERT_TRUE(registry.RemoveExact(0x10000000, AcceptAny));
  EXPECT_EQ(BaseFound(registry, 0x10000010), 0u);
}

TEST(AllocationRegistryTest, AKeptMissIsDroppedWhenAnAllocationArrivesThere) {
  AllocationRegistry registry;
  EXPECT_EQ(BaseFound(registry, 0x20000010), 0u);
  EXPECT_EQ(BaseFound(registry, 0x20000010), 0u);  // the kept miss
  ASSERT_TRUE(registry.Add(MakeAllocation(0x20000000, 64)));
  EXPECT_EQ(BaseFound(registry, 0x20000010), 0x20000000u);
}

TEST(AllocationRegistryTest, AnAllocationReplacedAtTheSameBaseIsFoundWithItsNewSize) {
  AllocationRegistry registry;
  ASSERT_TRUE(registry.Add(MakeAllocation(0x30000000, 8192)));
  ASSERT_TRUE(registry.Find(0x30000000));
  ASSERT_TRUE(registry.RemoveExact(0x30000000, AcceptAny));
  ASSERT_TRUE(registry.Add(MakeAllocation(0x30000000, 64, MemoryKind::kPinnedHost)));
  const std::optional<Allocation> found = registry.Find(0x30000000);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->size, 64u);
  EXPECT_EQ(found->kind, MemoryKind::kPinnedHost);
  EXPECT_EQ(BaseFound(registry, 0x30000000 + 4096), 0u);
}

TEST(AllocationRegistryTest, FindKeptPairAnswersBothAddresses) {
  AllocationRegistry registry;
  ASSERT_TRUE(registry.Add(MakeAllocation(0x31000000, 4096)));
  ASSERT_TRUE(registry.Add(MakeAllocation(0x32000000, 64, MemoryKind::kPinnedHost)));
  const Allocation* first = nullptr;
  const Allocation* second = nullptr;
  registry.FindKeptPair(0x31000010, 0x32000020, &first, &second);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(first->base, 0x31000000u);
  EXPECT_EQ(second->base, 0x32000000u);
  EXPECT_EQ(second->kind, MemoryKind::kPinnedHost);
  registry.FindKeptPair(0x33000000, 0x31000fff, &first, &second);
  EXPECT_EQ(first, nullptr);
  ASSERT_NE(second, nullptr);
  EXPECT_EQ(second->base, 0x31000000u);
  EXPECT_EQ(registry.FindKept(0x31001000), nullptr);  // one past the end
}

// A thread keeps a few answers and replaces them in turn; the second lookup of a pair must not
// replace the answer the first one returned, which the caller still reads.
TEST(AllocationRegistryTest, APairsSecondLookupNeverReplacesTheFirstsAnswer) {
  AllocationRegistry registry;
  const uintptr_t bases[] = {0x34000000, 0x35000000, 0x36000000, 0x37000000, 0x38000000};
  for (uintptr_t base : bases) ASSERT_TRUE(registry.Add(MakeAllocation(base, 4096)));
  std::thread([&] {  // a thread whose kept answers are all unused
    // Four answers fill every kept entry; the next to be replaced is the first one's.
    for (int i = 0; i < 4; ++i) ASSERT_EQ(BaseFound(registry, bases[i] + 8), bases[i]);
    const Allocation* first = nullptr;
    const Allocation* second = nullptr;
    registry.FindKeptPair(bases[0] + 16, bases[4] + 16, &first, &second);
    ASSERT_NE(first, nullptr);
    ASSERT_NE(second, nullptr);
    EXPECT_EQ(first->base, bases[0]);
    EXPECT_EQ(second->base, bases[4]);
  })
      .join();
}

// A removed large allocation's entry stays in its shard, dead, for the next allocation at the
// same address (allocation_registry.h): nothing may find it, and it must hide nothing.

std::vector<Allocation> Everything(const AllocationRegistry& registry) {
  return registry.Snapshot([](const Allocation&) { return true; });
}

void AllocateAndFree(AllocationRegistry& registry, uintptr_t base, size_t size) {
  ASSERT_TRUE(registry.Add(MakeAllocation(base, size)));
  ASSERT_TRUE(registry.RemoveExact(base, AcceptAny));
}

TEST(AllocationRegistryTest, ARemovedLargeAllocationIsFoundByNothing) {
  AllocationRegistry registry;
  const uintptr_t base = 0x40000000;
  ASSERT_NO_FATAL_FAILURE(AllocateAndFree(registry, base, 1 << 20));
  EXPECT_FALSE(registry.Find(base));
  EXPECT_FALSE(registry.Find(base + 4096));
  EXPECT_FALSE(registry.FindExact(base));
  EXPECT_FALSE(registry.RemoveExact(base, AcceptAny)) << "freed twice";
  EXPECT_TRUE(Everything(registry).empty());
  EXPECT_EQ(registry.size(), 0u);
}

TEST(AllocationRegistryTest, AllocationAtAFreedLargeAllocationsAddressTakesItsPlace) {
  AllocationRegistry registry;
  const uintptr_t base = 0x40000000;
  ASSERT_NO_FATAL_FAILURE(AllocateAndFree(registry, base, 1 << 20));
  ASSERT_TRUE(registry.Add(MakeAllocation(base, 64 << 10, MemoryKind::kStreamOrdered)));
  EXPECT_FALSE(registry.Add(MakeAllocation(base, 8192))) << "the base is taken again";
  const std::optional<Allocation> found = registry.Find(base + 4096);
  ASSERT_TRUE(found);
  EXPECT_EQ(found->size, 64u << 10);
  EXPECT_EQ(found->kind, MemoryKind::kStreamOrdered);
  EXPECT_FALSE(registry.Find(base + (64 << 10))) << "past the new, smaller allocation";
  EXPECT_EQ(Everything(registry).size(), 1u);
  EXPECT_EQ(registry.size(), 1u);
}

// Memory freed by a large allocation, partly reused by one that starts below it: an address in
// both ranges belongs to the live one.
TEST(AllocationRegistryTest, AFreedLargeAllocationHidesNoLiveOneOverlappingIt) {
  AllocationRegistry registry;
  const uintptr_t base = 0x40100000;
  ASSERT_NO_FATAL_FAILURE(AllocateAndFree(registry, base, 64 << 10));
  const uintptr_t below = base - (16 << 10);
  ASSERT_TRUE(registry.Add(MakeAllocation(below, 32 << 10)));
  EXPECT_EQ(BaseFound(registry, base + 8192), below);
  EXPECT_EQ(BaseFound(registry, base + (20 << 10)), 0u) << "past the live one, in the freed one";
}

// A small allocation at a freed large one's address; then a large one may not take it too.
TEST(AllocationRegistryTest, SmallAllocationAtAFreedLargeAllocationsAddressKeepsItsBase) {
  AllocationRegistry registry;
  const uintptr_t base = 0x40200000;
  ASSERT_NO_FATAL_FAILURE(AllocateAndFree(registry, base, 1 << 20));
  ASSERT_TRUE(registry.Add(MakeAllocation(base, 64)));
  EXPECT_FALSE(registry.Add(MakeAllocation(base, 1 << 20)));
  EXPECT_EQ(BaseFound(registry, base + 32), base);
  EXPECT_EQ(BaseFound(registry, base + 4096), 0u);
  ASSERT_TRUE(registry.RemoveExact(base, AcceptAny));
  EXPECT_TRUE(registry.Add(MakeAllocation(base, 1 << 20)));
  EXPECT_EQ(BaseFound(registry, base + 4096), base);
}

// Two large allocations freed in turn in one shard: the first's dead entry goes for good, and
// either address can be allocated again.
TEST(AllocationRegistryTest, LargeAllocationsFreedInTurnInOneShardCanBothBeReused) {
  AllocationRegistry registry;
  const uintptr_t first = 0x40300000;
  const uintptr_t second = first + (2 << 20);  // the same 16 MiB region, hence shard
  ASSERT_TRUE(registry.Add(MakeAllocation(first, 1 << 20)));
  ASSERT_TRUE(registry.Add(MakeAllocation(second, 1 << 20)));
  ASSERT_TRUE(registry.RemoveExact(first, AcceptAny));
  ASSERT_TRUE(registry.RemoveExact(second, AcceptAny));
  EXPECT_FALSE(registry.Find(first + 10));
  EXPECT_FALSE(registry.Find(second + 10));
  ASSERT_TRUE(registry.Add(MakeAllocation(first, 1 << 20)));
  ASSERT_TRUE(registry.Add(MakeAllocation(second, 1 << 20)));
  EXPECT_EQ(BaseFound(registry, first + 10), first);
  EXPECT_EQ(BaseFound(registry, second + 10), second);
  EXPECT_EQ(Everything(registry).size(), 2u);
}

// An allocation over several regions: its other shards' entries go when it is freed, and come
// back when the same address is allocated again.
TEST(AllocationRegistryTest, AFreedAllocationOverSeveralRegionsCanBeReallocated) {
  AllocationRegistry registry;
  const uintptr_t base = 7 * kRegion + 4096;
  const size_t size = 3 * kRegion;
  ASSERT_NO_FATAL_FAILURE(AllocateAndFree(registry, base, size));
  EXPECT_FALSE(registry.Find(base + 2 * kRegion));
  ASSERT_TRUE(registry.Add(MakeAllocation(base, size)));
  EXPECT_EQ(BaseFound(registry, base + 2 * kRegion), base);
  EXPECT_EQ(BaseFound(registry, base + size - 1), base);
}

TEST(AllocationRegistryTest, ARemovalByAnotherThreadDropsThisThreadsKeptAnswer) {
  AllocationRegistry registry;
  ASSERT_TRUE(registry.Add(MakeAllocation(0x40000000, 3 * kRegion)));  // over several shards
  const uintptr_t inside[] = {0x40000000 + 5, 0x40000000 + kRegion + 5, 0x40000000 + 2 * kRegion};
  for (uintptr_t address : inside) ASSERT_EQ(BaseFound(registry, address), 0x40000000u);
  std::thread([&] { EXPECT_TRUE(registry.RemoveExact(0x40000000, AcceptAny)); }).join();
  for (uintptr_t address : inside) EXPECT_EQ(BaseFound(registry, address), 0u) << address;
}

TEST(AllocationRegistryTest, AnswersKeptForAnEarlierRegistryAreNotTakenForALaterOne) {
  // The second registry is built in the first one's storage: same address, same shards.
  std::optional<AllocationRegistry> registry;
  registry.emplace();
  ASSERT_TRUE(registry->Add(MakeAllocation(0x50000000, 4096)));
  ASSERT_EQ(BaseFound(*registry, 0x50000000), 0x50000000u);
  registry.reset();
  registry.emplace();
  // One change in the same shard brings the new registry to the generation of the kept answer.
  ASSERT_TRUE(registry->Add(MakeAllocation(0x50000000 + 8192, 64)));
  EXPECT_EQ(BaseFound(*registry, 0x50000000), 0u);
}

TEST(AllocationRegistryTest, ConcurrentAddsRemovesAndFindsFromEightThreadsStayConsistent) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 200;
  constexpr int kBatch = 32;
  AllocationRegistry registry;
  std::vector<Allocation> shared;
  for (int i = 0; i < 256; ++i) {
    shared.push_back(MakeAllocation(0x40000000 + i * kRegion / 4, kRegion / 8));
    ASSERT_TRUE(registry.Add(shared.back()));
  }
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &registry, &shared, &failures] {
      const uintptr_t area = (static_cast<uintptr_t>(t) + 1) << 40;
      for (int round = 0; round < kRounds; ++round) {
        std::vector<Allocation> mine;
        for (int i = 0; i < kBatch; ++i) {
          const size_t size = i % 8 == 0 ? 2 * kRegion : 4096;
          mine.push_back(MakeAllocation(area + (round % 4) * 64 * kRegion + i * 3 * kRegion - 512,
                                        size, MemoryKind::kDevice, t));
          if (!registry.Add(mine.back())) failures.fetch_add(1);
        }
        for (const Allocation& a : mine) {
          if (BaseFound(registry, a.base + a.size - 1) != a.base) failures.fetch_add(1);
          if (BaseFound(registry, a.base + a.size / 2) != a.base) failures.fetch_add(1);
          const Allocation& other = shared[(round + t) % shared.size()];
          if (BaseFound(registry, other.base + 17) != other.base) failures.fetch_add(1);
        }
        for (const Allocation& a : mine) {
          const auto removed = registry.RemoveExact(a.base, AcceptDevice);
          if (!removed || removed->device != t) failures.fetch_add(1);
          if (BaseFound(registry, a.base + 1) != 0) failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(registry.size(), shared.size());
  for (const Allocation& a : shared) EXPECT_EQ(BaseFound(registry, a.base + a.size - 1), a.base);
}

}  // namespace
}  // namespace infinirt::core
