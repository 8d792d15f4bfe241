// MemoryHints (core/memory_hints.h): the runs of pages advice and prefetches leave, including
// ranges at the very top of the address space, where a range's end wraps around.
#include "memory_hints.h"

#include <gtest/gtest.h>
#include <unistd.h>

#include <cstdint>
#include <vector>

namespace infinirt::core {
namespace {

const uintptr_t kPage = static_cast<uintptr_t>(sysconf(_SC_PAGESIZE));

int ReadMostly(MemoryHints& hints, uintptr_t begin, size_t count) {
  int value = -1;
  hints.Query(begin, count, infinirtMemRangeAttributeReadMostly, &value, sizeof value);
  return value;
}

int Preferred(MemoryHints& hints, uintptr_t begin, size_t count) {
  int value = 0;
  hints.Query(begin, count, infinirtMemRangeAttributePreferredLocation, &value, sizeof value);
  return value;
}

const infinirtMemLocation kDevice0{infinirtMemLocationTypeDevice, 0};

TEST(MemoryHints, AdviceCoversWholePagesAndOnlyThem) {
  MemoryHints hints;
  const uintptr_t base = 100 * kPage;
  hints.Advise(base + kPage + 10, 20, infinirtMemAdviseSetReadMostly, kDevice0);  // page 101
  EXPECT_EQ(ReadMostly(hints, base + kPage, kPage), 1);
  EXPECT_EQ(ReadMostly(hints, base + kPage + kPage - 1, 1), 1) << "the whole page";
  EXPECT_EQ(ReadMostly(hints, base, kPage), 0);
  EXPECT_EQ(ReadMostly(hints, base + 2 * kPage, 1), 0);
  EXPECT_EQ(ReadMostly(hints, base, 3 * kPage), 0) << "not every page of the range";
}

TEST(MemoryHints, ForgettingMergesTheRunsBack) {
  MemoryHints hints;
  const uintptr_t base = 1000 * kPage;
  for (uintptr_t page = 0; page < 8; page += 2) {
    hints.Advise(base + page * kPage, kPage, infinirtMemAdviseSetPreferredLocation, kDevice0);
  }
  EXPECT_EQ(Preferred(hints, base, kPage), 0);
  EXPECT_EQ(Preferred(hints, base, 2 * kPage), infinirtInvalidDeviceId);
  hints.Forget(base, 8 * kPage);
  EXPECT_EQ(Preferred(hints, base, 8 * kPage), infinirtInvalidDeviceId);
  EXPECT_EQ(ReadMostly(hints, base, 8 * kPage), 0);
}

// A range up to (or past) the top of the address space: its end wraps to 0. It must neither
// read past the runs nor lose them.
TEST(MemoryHints, RangesAtTheTopOfTheAddressSpace) {
  MemoryHints hints;
  const uintptr_t top_page = UINTPTR_MAX & ~(kPage - 1);
  hints.Advise(top_page, kPage, infinirtMemAdviseSetReadMostly, kDevice0);
  EXPECT_EQ(ReadMostly(hints, top_page, kPage), 1);
  EXPECT_EQ(ReadMostly(hints, top_page - kPage, kPage), 0);
  hints.Advise(top_page - kPage, SIZE_MAX, infinirtMemAdviseSetReadMostly, kDevice0);
  EXPECT_EQ(ReadMostly(hints, top_page - kPage, SIZE_MAX), 1);
  hints.Prefetched(top_page + 100, SIZE_MAX, kDevice0);
  int prefetched = 0;
  hints.Query(top_page, SIZE_MAX, infinirtMemRangeAttributeLastPrefetchLocation, &prefetched,
              sizeof prefetched);
  EXPECT_EQ(prefetched, 0);
  hints.Forget(0, SIZE_MAX);
  EXPECT_EQ(ReadMostly(hints, top_page - kPage, 2 * kPage), 0);
  EXPECT_EQ(ReadMostly(hints, 0, kPage), 0);
}

TEST(MemoryHints, AccessedByIsWhatEveryPageHasPaddedWithInvalidIds) {
  MemoryHints hints;
  const uintptr_t base = 5000 * kPage;
  hints.Advise(base, 2 * kPage, infinirtMemAdviseSetAccessedBy, kDevice0);
  hints.Advise(base, kPage, infinirtMemAdviseSetAccessedBy, {infinirtMemLocationTypeDevice, 3});
  std::vector<int> ids(3, 7);
  hints.Query(base, 2 * kPage, infinirtMemRangeAttributeAccessedBy, ids.data(),
              ids.size() * sizeof(int));
  EXPECT_EQ(ids, (std::vector<int>{0, infinirtInvalidDeviceId, infinirtInvalidDeviceId}));
  ids.assign(3, 7);
  hints.Query(base, kPage, infinirtMemRangeAttributeAccessedBy, ids.data(), 2 * sizeof(int));
  EXPECT_EQ(ids, (std::vector<int>{0, 3, 7})) << "both devices, nothing past the size given";
}

}  // namespace
}  // namespace infinirt::core
