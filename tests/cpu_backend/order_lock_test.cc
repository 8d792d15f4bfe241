// OrderLock (plugins/cpu/order_lock.h), the CPU device's order lock: exclusive holders exclude
// everyone, shared holders only exclusive ones, and a thread that waits long sleeps.
#include "order_lock.h"

#include <gtest/gtest.h>
#include <time.h>

#include <atomic>
#include <chrono>
#include <future>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <vector>

namespace infinirt::cpu {
namespace {

// Runs body on `count` threads that start together.
template <class Body>
void OnThreads(int count, Body body) {
  std::atomic<int> ready{0};
  std::vector<std::thread> threads;
  for (int t = 0; t < count; ++t) {
    threads.emplace_back([&, t] {
      ready.fetch_add(1);
      while (ready.load() < count) std::this_thread::yield();
      body(t);
    });
  }
  for (std::thread& thread : threads) thread.join();
}

// Increments by a separate load and store: without exclusion updates are lost.
TEST(OrderLock, ExclusiveHoldersExcludeEachOther) {
  OrderLock lock;
  std::atomic<long> counter{0};
  constexpr int kThreads = 4;
  constexpr int kIncrements = 200000;
  OnThreads(kThreads, [&](int) {
    for (int i = 0; i < kIncrements; ++i) {
      std::unique_lock<OrderLock> hold(lock);
      counter.store(counter.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
    }
  });
  EXPECT_EQ(counter.load(), long{kThreads} * kIncrements);
}

// Writers keep two values equal, writing one after the other; readers must never see them
// differ.
TEST(OrderLock, SharedHoldersNeverSeeAnExclusiveHoldersWorkHalfDone) {
  OrderLock lock;
  std::atomic<long> first{0}, second{0};
  std::atomic<long> torn{0};
  OnThreads(4, [&](int t) {
    for (int i = 0; i < 100000; ++i) {
      if (t % 2 == 0) {
        std::unique_lock<OrderLock> hold(lock);
        first.store(first.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
        second.store(second.load(std::memory_order_relaxed) + 1, std::memory_order_relaxed);
      } else {
        std::shared_lock<OrderLock> hold(lock);
        if (first.load(std::memory_order_relaxed) != second.load(std::memory_order_relaxed)) {
          torn.fetch_add(1);
        }
      }
    }
  });
  EXPECT_EQ(torn.load(), 0);
  EXPECT_EQ(first.load(), 200000);
}

// Two shared holders at once: the second gets the lock while the first still has it.
TEST(OrderLock, SharedHoldersShare) {
  OrderLock lock;
  std::promise<void> second_in;
  std::shared_lock<OrderLock> first(lock);
  auto second = std::async(std::launch::async, [&] {
    std::shared_lock<OrderLock> hold(lock);
    second_in.set_value();
  });
  EXPECT_EQ(second_in.get_future().wait_for(std::chrono::seconds(10)), std::future_status::ready);
  first.unlock();
  second.get();
}

double ThreadCpuMilliseconds() {
  struct timespec now {};
  clock_gettime(CLOCK_THREAD_CPUTIME_ID, &now);
  return now.tv_sec * 1e3 + now.tv_nsec / 1e6;
}

// A long exclusive hold: the waiter sleeps instead of spinning, then gets the lock.
TEST(OrderLock, WaiterOfALongHoldSleeps) {
  OrderLock lock;
  lock.lock();
  std::atomic<double> waiter_cpu_ms{-1};
  std::thread waiter([&] {
    const double before = ThreadCpuMilliseconds();
    std::unique_lock<OrderLock> hold(lock);
    waiter_cpu_ms = ThreadCpuMilliseconds() - before;
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(300));
  lock.unlock();
  waiter.join();
  EXPECT_GE(waiter_cpu_ms.load(), 0.0);
  EXPECT_LT(waiter_cpu_ms.load(), 100.0) << "the waiter spent its wait on the processor";
}

}  // namespace
}  // namespace infinirt::cpu
