// Unit tests of core/handles.h: HandleCodec and HandleTable.
#include <gtest/gtest.h>

#include <atomic>
#include <cstdint>
#include <string>
#include <thread>
#include <unordered_set>
#include <vector>

#include "handles.h"

namespace infinirt::core {
namespace {

constexpr uint32_t kChunk = 4096;  // slots per chunk in HandleTable

ObjectRecord RecordWith(int tag) {
  ObjectRecord record;
  record.backend = tag % 7;
  record.device = tag;
  record.local_device = tag + 1;
  record.plugin_handle = reinterpret_cast<void*>(static_cast<uintptr_t>(0x1000 + tag));
  record.flags = static_cast<unsigned int>(tag) * 3u;
  return record;
}

void ExpectSameRecord(const ObjectRecord& actual, const ObjectRecord& expected) {
  EXPECT_EQ(actual.backend, expected.backend);
  EXPECT_EQ(actual.device, expected.device);
  EXPECT_EQ(actual.local_device, expected.local_device);
  EXPECT_EQ(actual.plugin_handle, expected.plugin_handle);
  EXPECT_EQ(actual.flags, expected.flags);
}

bool Validates(const HandleTable& table, uint64_t value) {
  ObjectRecord record;
  return table.Lookup(value, &record);
}

TEST(HandleCodecTest, EncodeRoundTripsKindGenerationAndIndex) {
  const uint64_t value = HandleCodec::Encode(HandleKind::kEvent, 0xCAFEBABE, 0x123456);
  EXPECT_TRUE(HandleCodec::HasKind(value, HandleKind::kEvent));
  EXPECT_FALSE(HandleCodec::HasKind(value, HandleKind::kStream));
  EXPECT_EQ(HandleCodec::Generation(value), 0xCAFEBABEu);
  EXPECT_EQ(HandleCodec::Index(value), 0x123456u);
}

TEST(HandleTableTest, InsertedRecordIsFoundByItsHandle) {
  HandleTable table(HandleKind::kStream);
  const ObjectRecord expected = RecordWith(5);
  const uint64_t handle = table.Insert(expected);
  ASSERT_NE(handle, 0u);
  ObjectRecord found;
  ASSERT_TRUE(table.Lookup(handle, &found));
  ExpectSameRecord(found, expected);
  EXPECT_EQ(table.live_count(), 1u);
}

TEST(HandleTableTest, RemoveReturnsTheRecordAndTheHandleNoLongerValidates) {
  HandleTable table(HandleKind::kStream);
  const ObjectRecord expected = RecordWith(9);
  const uint64_t handle = table.Insert(expected);
  ObjectRecord removed;
  ASSERT_TRUE(table.Remove(handle, &removed));
  ExpectSameRecord(removed, expected);
  EXPECT_FALSE(Validates(table, handle));
  EXPECT_FALSE(table.Remove(handle, &removed)) << "second remove of the same handle";
  EXPECT_EQ(table.live_count(), 0u);
}

TEST(HandleTableTest, RemovedHandleNeverValidatesAgainAfterItsSlotIsReused) {
  HandleTable table(HandleKind::kEvent);
  std::vector<uint64_t> dead;
  uint64_t handle = table.Insert(RecordWith(0));
  for (int round = 1; round <= 2000; ++round) {
    ObjectRecord removed;
    ASSERT_TRUE(table.Remove(handle, &removed));
    dead.push_back(handle);
    handle = table.Insert(RecordWith(round));
    ASSERT_EQ(HandleCodec::Index(handle), HandleCodec::Index(dead.back()))
        << "the freed slot should be reused";
    ASSERT_NE(handle, dead.back());
  }
  for (uint64_t old : dead) EXPECT_FALSE(Validates(table, old)) << std::hex << old;
  ObjectRecord found;
  ASSERT_TRUE(table.Lookup(handle, &found));
  ExpectSameRecord(found, RecordWith(2000));
}

TEST(HandleTableTest, RestoreMakesARemovedHandleLiveAgainWithTheSameValue) {
  HandleTable table(HandleKind::kStream);
  const uint64_t handle = table.Insert(RecordWith(5));
  ObjectRecord removed;
  ASSERT_TRUE(table.Remove(handle, &removed));
  ASSERT_TRUE(table.Restore(handle, removed));
  ObjectRecord found;
  ASSERT_TRUE(table.Lookup(handle, &found));
  ExpectSameRecord(found, RecordWith(5));
  EXPECT_EQ(table.live_count(), 1u);
  EXPECT_FALSE(table.Restore(handle, removed)) << "a live handle is not restored twice";
  // The slot is no longer free: the next insert takes another one.
  const uint64_t other = table.Insert(RecordWith(6));
  EXPECT_NE(HandleCodec::Index(other), HandleCodec::Index(handle));
}

TEST(HandleTableTest, RestoreFailsOnceTheSlotWasReused) {
  HandleTable table(HandleKind::kEvent);
  const uint64_t handle = table.Insert(RecordWith(1));
  ObjectRecord removed;
  ASSERT_TRUE(table.Remove(handle, &removed));
  const uint64_t reuse = table.Insert(RecordWith(2));
  ASSERT_EQ(HandleCodec::Index(reuse), HandleCodec::Index(handle));
  EXPECT_FALSE(table.Restore(handle, removed));
  EXPECT_FALSE(Validates(table, handle));
  EXPECT_TRUE(Validates(table, reuse));
  EXPECT_FALSE(table.Restore(HandleCodec::Encode(HandleKind::kStream, 1, 0), removed))
      << "another kind";
}

TEST(HandleTableTest, HandlesOfAnotherKindAreRejected) {
  HandleTable streams(HandleKind::kStream);
  HandleTable events(HandleKind::kEvent);
  const uint64_t stream = streams.Insert(RecordWith(1));
  const uint64_t event = events.Insert(RecordWith(2));
  EXPECT_FALSE(Validates(streams, event));
  EXPECT_FALSE(Validates(events, stream));
  // Same slot and generation as a live stream, but marked as another kind.
  const uint32_t generation = HandleCodec::Generation(stream);
  const uint32_t index = HandleCodec::Index(stream);
  for (HandleKind other : {HandleKind::kEvent, HandleKind::kGraph, HandleKind::kGraphExec}) {
    EXPECT_FALSE(Validates(streams, HandleCodec::Encode(other, generation, index)));
  }
  ObjectRecord removed;
  EXPECT_FALSE(streams.Remove(event, &removed)) << "removing a handle of another kind";
  EXPECT_TRUE(Validates(events, event));
}

TEST(HandleTableTest, GarbageValuesAreRejected) {
  HandleTable table(HandleKind::kStream);
  const uint64_t live = table.Insert(RecordWith(3));
  int on_stack = 0;
  const uint32_t generation = HandleCodec::Generation(live);
  const uint32_t index = HandleCodec::Index(live);
  const uint64_t garbage[] = {
      0,
      1,
      2,
      0xdeadbeef,
      0x10,
      ~uint64_t{0},
      reinterpret_cast<uintptr_t>(&on_stack),
      live & ~(uint64_t{0xF} << 60),                                    // marker cleared
      HandleCodec::Encode(HandleKind::kStream, generation, index + 1),  // slot never used
      HandleCodec::Encode(HandleKind::kStream, generation, HandleCodec::kIndexMask),
      HandleCodec::Encode(HandleKind::kStream, generation + 1, index),  // future generation
      HandleCodec::Encode(HandleKind::kStream, generation - 1, index),  // past generation
      HandleCodec::Encode(HandleKind::kStream, 0, index),
      live ^ (uint64_t{1} << 59),  // another kind bit
  };
  for (uint64_t value : garbage) {
    EXPECT_FALSE(Validates(table, value)) << std::hex << value;
    ObjectRecord removed;
    EXPECT_FALSE(table.Remove(value, &removed)) << std::hex << value;
  }
  EXPECT_TRUE(Validates(table, live));
  EXPECT_EQ(table.live_count(), 1u);
}

TEST(HandleTableTest, NeverProducesTheValuesOfNullAndTheSpecialStreams) {
  for (HandleKind kind :
       {HandleKind::kStream, HandleKind::kEvent, HandleKind::kGraph, HandleKind::kGraphExec}) {
    HandleTable table(kind);
    std::vector<uint64_t> handles;
    for (int i = 0; i < 3 * static_cast<int>(kChunk); ++i) {
      const uint64_t handle = table.Insert(RecordWith(i));
      ASSERT_GT(handle, 2u) << "insert " << i;
      ASSERT_TRUE(HandleCodec::HasKind(handle, kind));
      handles.push_back(handle);
      if (i % 3 == 0) {  // churn, so reused slots are covered as well
        ObjectRecord removed;
        ASSERT_TRUE(table.Remove(handles[i / 2], &removed));
        handles[i / 2] = 0;
      }
    }
  }
}

TEST(HandleTableTest, ManyInsertsBeyondOneChunkAllStayValid) {
  constexpr int kCount = 3 * kChunk + 17;
  HandleTable table(HandleKind::kGraph);
  std::vector<uint64_t> handles;
  std::unordered_set<uint64_t> distinct;
  for (int i = 0; i < kCount; ++i) {
    handles.push_back(table.Insert(RecordWith(i)));
    ASSERT_NE(handles.back(), 0u);
    ASSERT_TRUE(distinct.insert(handles.back()).second) << "duplicate handle at " << i;
  }
  EXPECT_EQ(table.live_count(), static_cast<size_t>(kCount));
  for (int i = 0; i < kCount; ++i) {
    ObjectRecord found;
    ASSERT_TRUE(table.Lookup(handles[i], &found)) << i;
    ASSERT_EQ(found.device, i);
  }
  for (int i = 0; i < kCount; i += 2) {
    ObjectRecord removed;
    ASSERT_TRUE(table.Remove(handles[i], &removed));
    ASSERT_EQ(removed.device, i);
  }
  for (int i = 0; i < kCount; ++i) ASSERT_EQ(Validates(table, handles[i]), i % 2 == 1) << i;
  EXPECT_EQ(table.live_count(), static_cast<size_t>(kCount / 2));
  const auto odd_live =
      table.Snapshot([](const ObjectRecord& record) { return record.device % 4 == 1; });
  for (const auto& [handle, record] : odd_live) {
    EXPECT_EQ(handle, handles[record.device]);
    EXPECT_EQ(record.device % 4, 1);
  }
  EXPECT_EQ(odd_live.size(), static_cast<size_t>((kCount + 2) / 4));
}

// Threads insert, look up and remove their own objects concurrently. Each thread only looks
// up handles it owns (using a handle while another thread destroys it is a caller race), but
// the slots are shared, so freed slots are reused across threads all the time.
TEST(HandleTableTest, ConcurrentInsertsAndRemovesFromSeveralThreadsStayConsistent) {
  constexpr int kThreads = 8;
  constexpr int kRounds = 300;
  constexpr int kBatch = 64;
  HandleTable table(HandleKind::kStream);
  std::atomic<int> failures{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([t, &table, &failures] {
      std::vector<uint64_t> dead;
      for (int round = 0; round < kRounds; ++round) {
        uint64_t live[kBatch];
        for (int i = 0; i < kBatch; ++i) {
          live[i] = table.Insert(RecordWith(t * 1000000 + round * kBatch + i));
        }
        for (int i = 0; i < kBatch; ++i) {
          ObjectRecord found;
          if (!table.Lookup(live[i], &found) || found.device != t * 1000000 + round * kBatch + i) {
            failures.fetch_add(1);
          }
        }
        for (int i = 0; i < kBatch; ++i) {
          ObjectRecord removed;
          if (!table.Remove(live[i], &removed)) failures.fetch_add(1);
          dead.push_back(live[i]);
        }
        // Handles this thread destroyed stay dead while other threads reuse their slots.
        for (size_t i = dead.size() > 256 ? dead.size() - 256 : 0; i < dead.size(); ++i) {
          if (Validates(table, dead[i])) failures.fetch_add(1);
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(failures.load(), 0);
  EXPECT_EQ(table.live_count(), 0u);
}

}  // namespace
}  // namespace infinirt::core
