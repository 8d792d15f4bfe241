// The device's order lock (engine.h): shared by enqueues on blocking streams, exclusive for the
// legacy stream's enqueues and for small synchronous copies and sets run in place. Every
// synchronous 4 KiB Memcpy and Memset takes it exclusively, where glibc's rwlock (lock and
// unlock) was a quarter of what a 4 KiB Memset adds to memset. Uncontended, this one is a
// compare-exchange to lock and an exchange and a load to unlock (a reader: a compare-exchange,
// and a subtraction). A thread that cannot have it
// spins briefly, then sleeps on a condition variable: an exclusive hold can last as long as a
// copy below the inline threshold, which a configuration may raise.
#ifndef INFINIRT_PLUGINS_CPU_ORDER_LOCK_H_
#define INFINIRT_PLUGINS_CPU_ORDER_LOCK_H_

#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <mutex>

namespace infinirt::cpu {

class OrderLock {
 public:
  void lock() {
    uint32_t expected = 0;
    if (__builtin_expect(
            state_.compare_exchange_strong(expected, kWriter, std::memory_order_acquire,
                                           std::memory_order_relaxed),
            1)) {
      return;
    }
    Wait([this] { return TryLock(); });
  }
  void unlock() {
    state_.exchange(0, std::memory_order_seq_cst);
    WakeWaiters();
  }

  void lock_shared() {
    if (__builtin_expect(TryLockShared(), 1)) return;
    Wait([this] { return TryLockShared(); });
  }
  void unlock_shared() {
    if (state_.fetch_sub(1, std::memory_order_seq_cst) == 1) WakeWaiters();
  }

 private:
  static constexpr uint32_t kWriter = 0x80000000u;
  static constexpr int kSpins = 100;

  // Sequentially consistent, as the release in unlock and the waiters' count: a waiter counts
  // itself, then tries; a releasing thread releases, then looks for waiters. In one total order
  // of the four, either the try sees the release or the release sees the waiter.
  bool TryLock() {
    uint32_t expected = 0;
    return state_.compare_exchange_strong(expected, kWriter, std::memory_order_seq_cst);
  }
  bool TryLockShared() {
    uint32_t state = state_.load(std::memory_order_seq_cst);
    while ((state & kWriter) == 0) {
      if (state_.compare_exchange_weak(state, state + 1, std::memory_order_seq_cst)) return true;
    }
    return false;
  }

  // Waits until acquire() succeeds: a short spin, then sleeps. A waiter counts itself under the
  // mutex before it tries again, and a releasing thread that sees a waiter notifies under the
  // same mutex, so no wake-up falls between a failed try and the wait.
  template <class Acquire>
  __attribute__((noinline)) void Wait(Acquire acquire) {
    for (int i = 0; i < kSpins; ++i) {
#if defined(__x86_64__) || defined(__i386__)
      __builtin_ia32_pause();
#elif defined(__aarch64__)
      asm volatile("yield");
#endif
      if (acquire()) return;
    }
    std::unique_lock<std::mutex> lock(mutex_);
    waiters_.fetch_add(1, std::memory_order_seq_cst);
    released_.wait(lock, acquire);
    waiters_.fetch_sub(1, std::memory_order_relaxed);
  }

  void WakeWaiters() {
    if (__builtin_expect(waiters_.load(std::memory_order_seq_cst) == 0, 1)) return;
    std::lock_guard<std::mutex> lock(mutex_);
    released_.notify_all();
  }

  std::atomic<uint32_t> state_{0};  // kWriter, or the number of shared holders
  std::atomic<int> waiters_{0};
  std::mutex mutex_;
  std::condition_variable released_;
};

}  // namespace infinirt::cpu

#endif  // INFINIRT_PLUGINS_CPU_ORDER_LOCK_H_
