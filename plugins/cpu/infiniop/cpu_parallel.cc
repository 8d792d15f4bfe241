// The CPU operator backend's pool of helper threads (cpu_parallel.h). The helpers are made on the
// first parallel call and live until the process exits (the pool is never destroyed: a host
// function may run during exit); between calls they sleep on a condition variable.
#include "cpu_parallel.h"

#include <sched.h>
#include <stdlib.h>

#include <algorithm>
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
    {
      std::lock_guard<std::mutex> lock(mutex_);
      job_ = &part;
      parts_ = parts;
      pending_ = parts - 1;
      ++generation_;
    }
    wake_.notify_all();
    part(0);
    std::unique_lock<std::mutex> lock(mutex_);
    done_.wait(lock, [&] { return pending_ == 0; });
    job_ = nullptr;
    return true;
  }

 private:
  // Helper `index` (1-based) runs part `index` of each job that has one.
  void Serve(size_t index) {
    size_t seen = 0;
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      wake_.wait(lock, [&] { return generation_ != seen; });
      seen = generation_;
      if (index >= parts_) continue;
      const std::function<void(size_t)>* job = job_;
      lock.unlock();
      (*job)(index);
      lock.lock();
      if (--pending_ == 0) done_.notify_one();
    }
  }

  std::mutex busy_;  // held by the caller of the job in progress
  std::mutex mutex_;
  std::condition_variable wake_;
  std::condition_variable done_;
  const std::function<void(size_t)>* job_ = nullptr;
  size_t parts_ = 0;
  size_t pending_ = 0;
  size_t generation_ = 0;
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
