// A lock for the core's short critical sections: a handle table's insertion or removal, a change
// to one shard of the allocation registry. Uncontended, locking is one atomic exchange and
// unlocking a plain store: 3.2 ns the pair on the machine of docs/performance.md, against
// 10.4 ns for a pthread mutex, and streams and allocations take two such pairs each way. A
// waiter spins briefly, then yields, then sleeps between attempts, so that a long hold (a
// snapshot of every handle) costs the waiters little processor time.
#ifndef INFINIRT_CORE_SPIN_LOCK_H_
#define INFINIRT_CORE_SPIN_LOCK_H_

#include <atomic>
#include <chrono>
#include <thread>

namespace infinirt::core {

class SpinLock {
 public:
  void lock() {
    if (__builtin_expect(!locked_.exchange(true, std::memory_order_acquire), 1)) return;
    LockContended();
  }
  bool try_lock() {
    return !locked_.load(std::memory_order_relaxed) &&
           !locked_.exchange(true, std::memory_order_acquire);
  }
  void unlock() { locked_.store(false, std::memory_order_release); }

 private:
  __attribute__((noinline)) void LockContended() {
    for (int attempt = 0;; ++attempt) {
      while (locked_.load(std::memory_order_relaxed)) Wait(attempt++);
      if (!locked_.exchange(true, std::memory_order_acquire)) return;
    }
  }

  static void Wait(int attempt) {
    constexpr int kSpins = 64;
    constexpr int kYields = 64;
    if (attempt < kSpins) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
    } else if (attempt < kSpins + kYields) {
      std::this_thread::yield();
    } else {
      std::this_thread::sleep_for(std::chrono::microseconds(20));
    }
  }

  std::atomic<bool> locked_{false};
};

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_SPIN_LOCK_H_
