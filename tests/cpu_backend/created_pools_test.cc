// The CPU backend's pools of the program's own, below the API: a destroyed pool stays while
// memory from it is allocated, and goes at the first synchronisation after that memory is freed
// and the free has run; until then queued work may still use its memory.
#include <gtest/gtest.h>

#include <atomic>
#include <memory>
#include <thread>

#include "engine.h"
#include "memory_pool.h"

namespace infinirt::cpu {
namespace {

class CreatedPoolsTest : public ::testing::Test {
 protected:
  CreatedPoolsTest() : workers_(1), device_(std::make_shared<Device>(&workers_)) {
    device_->CreateLegacyStream();
    stream_ = device_->CreateStream(Stream::Kind::kCreated, /*non_blocking=*/true);
  }
  ~CreatedPoolsTest() override { device_->Shutdown(); }

  // The stream's point after everything queued so far.
  StreamPoint Now() { return StreamPoint{stream_, stream_->last_enqueued()}; }

  WorkerPool workers_;
  std::shared_ptr<Device> device_;
  std::shared_ptr<Stream> stream_;
  CreatedPools pools_;
};

TEST_F(CreatedPoolsTest, ADestroyedPoolLastsUntilItsMemoryIsFreedAndTheFreeHasRun) {
  auto pool = std::make_shared<MemoryPool>();
  std::weak_ptr<MemoryPool> watch = pool;
  pools_.Add(pool);
  void* memory = nullptr;
  ASSERT_EQ(pools_.Allocate(pool, 4096, *stream_, &memory), infinirtSuccess);
  pools_.Retire(pool);
  pool.reset();
  pools_.Synchronized();
  EXPECT_FALSE(watch.expired()) << "released with memory still allocated";
  // Freed behind queued work that has not run: still not released.
  std::atomic<bool> open{false};
  const uint64_t busy = device_->Submit(*stream_, {}, [&open] {
    while (!open.load()) std::this_thread::yield();
  });
  infinirtError_t freed = infinirtErrorUnknown;
  ASSERT_TRUE(pools_.Free(memory, Now(), &freed));
  EXPECT_EQ(freed, infinirtSuccess);
  pools_.Synchronized();
  EXPECT_FALSE(watch.expired()) << "released while queued work may use its memory";
  open.store(true);
  stream_->WaitFor(busy);
  pools_.Synchronized();
  EXPECT_TRUE(watch.expired()) << "a drained, destroyed pool was kept";
}

TEST_F(CreatedPoolsTest, AnIdleDestroyedPoolGoesAtOnce) {
  auto pool = std::make_shared<MemoryPool>();
  std::weak_ptr<MemoryPool> watch = pool;
  pools_.Add(pool);
  pools_.Retire(pool);
  pool.reset();
  EXPECT_TRUE(watch.expired());
}

TEST_F(CreatedPoolsTest, MemoryOfNoCreatedPoolIsLeftToTheDefaultPool) {
  int local = 0;
  infinirtError_t freed = infinirtErrorUnknown;
  EXPECT_FALSE(pools_.Free(&local, Now(), &freed));
  EXPECT_EQ(freed, infinirtErrorUnknown);
}

TEST_F(CreatedPoolsTest, MaxSizeBoundsWhatAPoolHolds) {
  MemoryPool pool(size_t{2} << 20);
  void* first = nullptr;
  void* second = nullptr;
  ASSERT_EQ(pool.Allocate(size_t{1} << 20, *stream_, &first), infinirtSuccess);
  EXPECT_EQ(pool.Allocate(size_t{2} << 20, *stream_, &second), infinirtErrorMemoryAllocation);
  EXPECT_EQ(pool.Free(first, Now()), infinirtSuccess);
  // The freed block is reused or released to make room.
  EXPECT_EQ(pool.Allocate(size_t{2} << 20, *stream_, &second), infinirtSuccess);
  EXPECT_EQ(pool.Free(second, Now()), infinirtSuccess);
}

}  // namespace
}  // namespace infinirt::cpu
