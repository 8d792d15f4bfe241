// The CPU operator backend's pool of helper threads (cpu_parallel.h). The helpers are made on the
// first parallel call and live until the process exits (the pool is never destroyed: a host
// function may run during exit); between calls they spin for a moment, then sleep on a condition
// variable.
#include "cpu_parallel.h"

#include <sched.h>
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <mutex>
#include <thread>
#include <vector>

namespace infinirt::infiniop_cpu {

namespace {

size_t ThreadsFromEnvironment() {
  if (const char* text = secure_getenv("INFINIOP_CPU_THREADS")) {
    char* end = nullptr;
    const long value = std::strtol(text, &end, 10);
    if (end != text && *end == '\0' && value >= 1 && value <= 1024) {
      return static_cast<size_t>(value);
    }
  }
  cpu_set_t allowed;
  if (sched_getaffinity(0, sizeof allowed, &allowed) == 0) {
    return std::max(1, CPU_COUNT(&allowed));
  }
  return std::max(1u, std::thread::hardware_concurrency());
}

// How long a helper that finished a part looks for the next job before it sleeps, and how long
// a job's caller, its own part done, looks for the helpers' end before it sleeps. A model's calls
// come a few microseconds apart, and a sleeping thread takes tens to wake on a virtual machine:
// without the spin, each call's second half would start that much after its first (measured on
// 2 cores: Relu of 512 x 4096 floats took 1.55 times ONNX Runtime's time, whose helpers spin too;
// with it 1.1).
constexpr std::chrono::microseconds kHelperSpin{200};
constexpr std::chrono::microseconds kJoinSpin{200};

// Whether ready() turned true within `time`, polled with the processor's spin-wait hint and, every
// 64th poll, a yield of the core to a thread that wants it (with as many threads as cores, often
// the one about to post the work waited for).
template <class Ready>
bool SpinFor(std::chrono::microseconds time, Ready ready) {
  const auto deadline = std::chrono::steady_clock::now() + time;
  for (unsigned poll = 1; !ready(); ++poll) {
    if (poll % 64 == 0) {
      if (std::chrono::steady_clock::now() >= deadline) return false;
      std::this_thread::yield();
    }
#if defined(__x86_64__) || defined(__i386__)
    __builtin_ia32_pause();
#elif defined(__aarch64__)
    asm volatile("yield");
#endif
  }
  return true;
}

class Pool {
 public:
  explicit Pool(size_t helpers) {
    for (size_t i = 0; i < helpers; ++i) {
      std::thread([this, i] { Serve(i + 1); }).detach();
    }
    helpers_ = helpers;
  }

  size_t helpers() const { return helpers_; }

  // Runs parts 1..parts-1 of a job on helpers and part 0 on the caller; false, doing nothing,
  // when another job holds the pool.
  bool TryRun(size_t parts, const std::function<void(size_t)>& part) {
    std::unique_lock<std::mutex> busy(busy_, std::try_to_lock);
    if (!busy.owns_lock()) return false;
    bool wake;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &part;
      parts_ = parts;
      pending_.store(parts - 1, std::memory_order_relaxed);
      generation_.store(generation_.load(std::memory_order_relaxed) + 1, std::memory_order_release);
      wake = sleepers_ > 0;  // the others are spinning, and see the generation change
    }
    if (wake) wake_.notify_all();
    part(0);
    const auto joined = [this] { return pending_.load(std::memory_order_acquire) == 0; };
    if (!SpinFor(kJoinSpin, joined)) {
      std::unique_lock<std::mutex> lock(mutex_);
      done_.wait(lock, joined);
    }
    return true;
  }

 private:
  // Helper `index` (1-based) runs part `index` of each job that has one.
  void Serve(size_t index) {
    size_t seen = 0;
    for (;;) {
      const auto posted = [&] { return generation_.load(std::memory_order_acquire) != seen; };
      if (!SpinFor(kHelperSpin, posted)) {
        std::unique_lock<std::mutex> lock(mutex_);
        ++sleepers_;
        wake_.wait(lock, posted);
        --sleepers_;
      }
      const std::function<void(size_t)>* job;
      size_t parts;
      {
        std::lock_guard<std::mutex> lock(mutex_);  // the job's fields, as TryRun posted them
        seen = generation_.load(std::memory_order_relaxed);
        job = job_;
        parts = parts_;
      }
      if (index >= parts) continue;
      (*job)(index);
      if (pending_.fetch_sub(1, std::memory_order_acq_rel) == 1) {
        std::lock_guard<std::mutex> lock(mutex_);  // a caller between its check and its wait
        done_.notify_one();
      }
    }
  }

  std::mutex busy_;  // held by the caller of the job in progress
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t parts_ = 0;
  size_t sleepers_ = 0;  // helpers waiting on wake_
  std::atomic<size_t> pending_{0};
  std::atomic<size_t> generation_{0};
  size_t helpers_ = 0;
};

Pool& ThePool() {
  static Pool* pool = new Pool(ParallelThreads() - 1);
  return *pool;
}

}  // namespace

size_t ParallelThreads() {
  static const size_t threads = ThreadsFromEnvironment();
  return threads;
}

void ParallelFor(size_t count, size_t grain, const std::function<void(size_t, size_t)>& body) {
  const size_t threads = std::min(ParallelThreads(), grain > 0 ? count / grain : count);
  if (threads < 2) {
    if (count > 0) body(0, count);
    return;
  }
  // Ranges as even as the count allows: part p covers [p * count / threads, (p+1) * count /
  // threads).
  const std::function<void(size_t)> part = [&](size_t p) {
    const size_t begin = p * count / threads, end = (p + 1) * count / threads;
    if (begin < end) body(begin, end);
  };
  if (!ThePool().TryRun(threads, part)) body(0, count);
}

}  // namespace infinirt::infiniop_cpu
