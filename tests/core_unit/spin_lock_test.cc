// SpinLock (core/spin_lock.h): mutual exclusion under contention, through every stage of its
// wait (spinning, yielding, sleeping), and try_lock.
#include "spin_lock.h"

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <mutex>
#include <thread>
#include <vector>

namespace infinirt::core {
namespace {

TEST(SpinLock, TryLockFailsWhileHeld) {
  SpinLock lock;
  ASSERT_TRUE(lock.try_lock());
  EXPECT_FALSE(lock.try_lock());
  lock.unlock();
  EXPECT_TRUE(lock.try_lock());
  lock.unlock();
}

// Threads increment a counter under the lock by a separate load and store (relaxed atomics, so
// that the compiler keeps every one); without exclusion updates would be lost.
TEST(SpinLock, ExcludesUnderContention) {
  SpinLock lock;
  std::atomic<long> counter{0};
  constexpr int kThreads = 4;
  constexpr int kIncrements = 500000;
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < kThreads; ++t) {
    threads.emplace_back([&] {
      ready.fetch_add(1);
      while (ready.load() < kThreads) std::this_thread::yield();  // all start together
      for (int i = 0; i < kIncrements; ++i) {
        std::lock_guard<SpinLock> guard(lock);
        counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(counter.load(), long{kThreads} * kIncrements);
}

// A hold long enough that the waiter goes through spinning and yielding to sleeping: it still
// gets the lock once, after the holder lets go, and sees what the holder wrote.
TEST(SpinLock, WaiterOfALongHoldGetsTheLockAfterIt) {
  SpinLock lock;
  int written = 0;
  lock.lock();
  std::thread waiter([&] {
    std::lock_guard<SpinLock> guard(lock);
    EXPECT_EQ(written, 1);
    written = 2;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));
  written = 1;
  lock.unlock();
  waiter.join();
  EXPECT_EQ(written, 2);
}

}  // namespace
}  // namespace infinirt::core
