// The CPU backend's execution engine: streams are in-order queues of operations, run by a
// bounded pool of worker threads. A stream is a unit of scheduling (a "strand"): at most one
// worker runs it at a time, so its operations run in issue order, and 10,000 streams share the
// same few threads.
//
// An operation may wait for points in other streams (event waits, the legacy default stream's
// implicit synchronisation). A stream whose next operation waits does not hold a worker: it
// parks, and the stream it waits for reschedules it when it reaches the point.
//
// Small work on an idle stream does not go through a worker at all: Device::TryRunInline runs
// it in the calling thread, in stream order (the stream counts it as pending while it runs), when
// nothing it must follow is pending. A hand-off to a worker and the wait for it cost
// microseconds (a futex wake-up each way); a 64-byte copy costs nanoseconds.
//
// Stream capture happens in the core, before a call reaches this engine; stream-ordered
// allocation is an operation like any other.
#ifndef INFINIRT_PLUGINS_CPU_ENGINE_H_
#define INFINIRT_PLUGINS_CPU_ENGINE_H_

#include <array>
#include <atomic>
#include <condition_variable>
#include <cstdint>
#include <deque>
#include <functional>
#include <map>
#include <memory>
#include <mutex>
#include <shared_mutex>
#include <thread>
#include <utility>
#include <vector>

#include "order_lock.h"

namespace infinirt::cpu {

class Stream;
class Device;

using Task = std::function<void()>;

// A point in a stream's order: reached once the stream has completed its operation `seq`.
struct StreamPoint {
  std::shared_ptr<Stream> stream;
  uint64_t seq = 0;
  bool Reached() const;
};

namespace detail {
// Set on the engine's worker threads. Initial-exec: read at a fixed offset from the thread
// pointer, where a TLS descriptor costs a call in every copy, set and record that asks; it takes
// one byte of the static TLS space glibc keeps for libraries loaded with dlopen.
inline thread_local bool tls_on_worker __attribute__((tls_model("initial-exec"))) = false;
}  // namespace detail

// True on the engine's worker threads, where blocking calls would wait on themselves.
inline bool OnWorkerThread() { return detail::tls_on_worker; }

// Runs work, containing any exception it throws: a C++ host function that throws must not
// unwind through the engine (CUDA leaves this undefined; the stream goes on with its next
// operation).
template <class Work>
void RunContained(Work& work) noexcept {
  try {
    work();
  } catch (...) {
  }
}

// Runs a task (none: nothing), containing any exception it throws.
inline void RunGuarded(const Task& work) {
  if (work) RunContained(work);
}

// Stream priorities as CUDA numbers them, lower first: 0 (the least, every stream's unless set)
// to -5. The pool picks ready streams of a higher priority first.
constexpr int kLeastStreamPriority = 0;
constexpr int kGreatestStreamPriority = -5;
constexpr int kStreamPriorityLevels = kLeastStreamPriority - kGreatestStreamPriority + 1;

// The workers start with the first work queued, not with the pool: initialisation stays
// cheap (starting 4 threads is most of the CPU backend's start-up time), and a process that
// never issues work to the CPU backend never has its threads.
class WorkerPool {
 public:
  explicit WorkerPool(int threads);
  ~WorkerPool();  // stops and joins the workers
  WorkerPool(const WorkerPool&) = delete;
  WorkerPool& operator=(const WorkerPool&) = delete;

  // Starts the workers unless they run. Called before any work is queued, so that a thread
  // that cannot be created fails that call (std::system_error) with nothing queued.
  void EnsureStarted() {
    if (!started_.load(std::memory_order_acquire)) StartWorkers();
  }
  void Schedule(std::shared_ptr<Stream> stream);
  // Whether a worker running a stream may spin for more of its work: no other worker runs.
  bool MaySpinInStream() const { return running_.load(std::memory_order_relaxed) <= spin_below_; }

 private:
  void StartWorkers();
  void WorkerLoop();
  // The next ready stream, waiting for one; null once the pool stops.
  std::shared_ptr<Stream> TakeReady();
  // One idle worker at a time looks for work for a short while before it sleeps, so that a
  // stream fed item by item does not pay a futex wake-up (in Schedule) and a sleep per item,
  // and only while a core is free for it: a spinner that takes the core of the thread feeding
  // the work, or of the worker running it, slows both. Returns once work is ready or the time
  // is up.
  void SpinForWork();

  const int size_;
  std::atomic<bool> started_{false};
  std::mutex start_mutex_;  // held while starting the workers
  std::mutex mutex_;
  std::condition_variable ready_cv_;
  // Ready streams by priority (index 0: the least), each in the order they became ready.
  std::deque<std::shared_ptr<Stream>> ready_[kStreamPriorityLevels];
  std::atomic<size_t> ready_count_{0};  // streams in ready_, read without mutex_ while spinning
  bool spinning_ = false;               // a worker is in SpinForWork (under mutex_)
  std::atomic<int> running_{0};         // workers running a stream
  // A worker spins only while fewer than this many run streams: the rest of the cores are left
  // to the threads that queue the work (hardware threads - 1, at least 1).
  const int spin_below_;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

class Stream : public std::enable_shared_from_this<Stream> {
 public:
  enum class Kind { kLegacy, kPerThread, kCreated };

  Stream(std::shared_ptr<Device> device, Kind kind, bool non_blocking);
  ~Stream();
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  Kind kind() const { return kind_; }
  int priority() const { return priority_.load(std::memory_order_relaxed); }
  // Takes effect the next time the stream becomes ready.
  void set_priority(int priority) { priority_.store(priority, std::memory_order_relaxed); }

  // Values a program gave the stream that the engine only keeps to give back (a GPU's cache
  // and synchronisation hints), by key. A recycled stream has none.
  using KeptValue = std::array<unsigned char, 64>;
  void Keep(int key, const KeptValue& value);
  bool Kept(int key, KeptValue* value) const;
  // Unique over the process's lifetime (unlike the object's address); a recycled stream gets a
  // new one.
  uint64_t id() const { return id_.load(std::memory_order_relaxed); }
  // Makes a stream that is idle and referred to by nothing else a new stream of the same kind
  // and flags (a new id, no dependencies noted), for reuse by StreamCreate. Its sequence numbers
  // go on from where they were, so no point of its past can be mistaken for a later one.
  void Recycle();

  // Stream-ordered dependencies this stream has taken on others (StreamWaitEvent), so that
  // memory freed in another stream before such a point may be reused here (memory_pool.h).
  void NoteWaitedFor(const StreamPoint& point);
  bool HasWaitedFor(const StreamPoint& point);
  // Blocking streams (created without NonBlocking, and per-thread streams) synchronise
  // implicitly with the legacy default stream.
  bool blocking() const { return kind_ != Kind::kLegacy && !non_blocking_; }
  Device& device() { return *device_; }

  uint64_t last_enqueued() const { return last_enqueued_.load(std::memory_order_acquire); }
  uint64_t completed() const { return completed_.load(std::memory_order_acquire); }
  bool Idle() const { return completed() == last_enqueued(); }

  // Appends an operation; returns its sequence number. Call through Device::Submit, which adds
  // the legacy-stream ordering.
  uint64_t Enqueue(std::vector<StreamPoint> waits, Task work);

  // Lets the calling thread run the stream's next operation itself: when the stream is idle,
  // reserves the next sequence number, makes the caller the stream's runner and returns true.
  // The caller then does the work and calls FinishInline(*seq). Call through
  // Device::TryRunInline, which adds the legacy-stream ordering.
  bool BeginInline(uint64_t* seq);
  void FinishInline(uint64_t seq);

  // Blocks the calling host thread until the stream has completed operation seq.
  void WaitFor(uint64_t seq);

  // Worker side: runs ready operations, then yields or parks.
  void RunSome();

  // Arranges for waiter to be rescheduled when this stream completes seq. False when seq is
  // already complete (nothing registered).
  bool AddWaiter(uint64_t seq, std::shared_ptr<Stream> waiter);

 private:
  struct Operation {
    uint64_t seq;
    std::vector<StreamPoint> waits;
    Task work;
  };
  struct Waiter {
    uint64_t seq;
    std::shared_ptr<Stream> stream;
  };

  // What completing a point leaves to do once mutex_ is released (Announce).
  struct Completion {
    std::vector<Waiter> released;  // streams to reschedule
    bool notify = false;           // a host thread waits for this point
    bool empty() const { return released.empty() && !notify; }
  };
  // Marks seq complete, with mutex_ held.
  Completion CompleteLocked(uint64_t seq);
  // Wakes the host threads and reschedules the streams a completion released (mutex_ not held).
  void Announce(Completion completion);
  void Complete(uint64_t seq);
  void Wake();
  void ScheduleLocked();
  // Returns true when every wait of the front operation is reached; otherwise registers for a
  // wake-up and returns false. Called by the stream's single runner, without mutex_ held.
  bool FrontReady();

  const std::shared_ptr<Device> device_;
  std::atomic<uint64_t> id_;
  const Kind kind_;
  const bool non_blocking_;
  std::atomic<int> priority_{kLeastStreamPriority};
  mutable std::mutex kept_mutex_;
  std::map<int, KeptValue> kept_;

  std::mutex mutex_;
  std::condition_variable completed_cv_;
  std::deque<Operation> queue_;
  std::vector<Waiter> waiters_;
  bool scheduled_ = false;  // queued in the pool or being run (exactly one runner)
  bool parked_ = false;     // the front operation waits; a waiter is registered
  bool woken_ = false;      // a wake-up arrived while the runner was checking waits
  // The smallest point a host thread waits for in WaitFor (none: the maximum): completions
  // before it wake nobody, so a thread waiting for the last of 1,000 operations is woken once,
  // not 1,000 times.
  uint64_t wake_at_ = UINT64_MAX;
  std::atomic<uint64_t> last_enqueued_{0};
  std::atomic<uint64_t> completed_{0};
  std::vector<std::pair<uint64_t, uint64_t>> waited_for_;  // (stream id, seq), under mutex_
  std::atomic<bool> has_waited_{false};  // waited_for_ is not empty (Recycle skips the lock)
};

// A device's streams and the legacy default stream's ordering rules.
class Device : public std::enable_shared_from_this<Device> {
 public:
  explicit Device(WorkerPool* pool);
  void CreateLegacyStream();

  WorkerPool& pool() { return *pool_; }
  // Waits for all work, then drops the legacy stream (which refers back to the device).
  void Shutdown();
  const std::shared_ptr<Stream>& legacy() { return legacy_; }

  std::shared_ptr<Stream> CreateStream(Stream::Kind kind, bool non_blocking);

  // Enqueues work on a stream with CUDA's legacy default stream semantics: work on the legacy
  // stream waits for all prior work in blocking streams, and work in a blocking stream waits
  // for all prior work in the legacy stream. Returns the operation's sequence number.
  uint64_t Submit(Stream& stream, std::vector<StreamPoint> waits, Task work);

  // Runs work in the calling thread, in stream order, if nothing the stream must follow is
  // pending: the stream is idle and, for the legacy stream, no blocking stream has pending work
  // (for a blocking stream, the legacy stream is idle). Sets *seq to the operation's sequence
  // number and returns true; returns false, having done nothing, otherwise. The work must not
  // block on the engine; host functions never run this way (they may wait for what the caller
  // does next).
  template <class Work>
  bool TryRunInline(Stream& stream, Work&& work, uint64_t* seq);

  // Runs work in order on the legacy stream and returns when it is done (synchronous copies).
  // Small work (a few microseconds at most) on an idle device runs under the exclusive order
  // lock instead of taking a place in the legacy stream: nothing can be enqueued behind it
  // meanwhile, so it needs none, and the stream's bookkeeping was a third of a 4 KiB Memcpy.
  template <class Work>
  void RunOnLegacyAndWait(Work&& work, bool small) {
    if (small) {
      std::unique_lock<OrderLock> order(order_lock_);
      if (blocking_busy_.load(std::memory_order_acquire) == 0 && legacy_->Idle()) {
        RunContained(work);
        return;
      }
    }
    uint64_t seq;
    if (TryRunInline(*legacy_, work, &seq)) return;
    legacy_->WaitFor(Submit(*legacy_, {}, Task(std::forward<Work>(work))));
  }

  // The device counts its busy streams (those with an operation not yet complete), by kind, so
  // that "is anything pending?" costs one load, not a walk over the streams. A stream reports
  // its transitions, under its own lock: counting them rather than operations keeps a stream
  // fed faster than it runs off these shared counters.
  void CountBusy(bool blocking) {
    busy_.fetch_add(1, std::memory_order_relaxed);
    if (blocking) blocking_busy_.fetch_add(1, std::memory_order_relaxed);
  }
  void CountIdle(bool blocking) {
    if (blocking) blocking_busy_.fetch_sub(1, std::memory_order_release);
    busy_.fetch_sub(1, std::memory_order_release);
  }

  // The point of a stream after which everything queued before it is done, counting what the
  // stream's next operation would follow implicitly: for the legacy stream, the work pending in
  // every blocking stream; for a blocking stream, the legacy stream's. Where such work is
  // pending an empty operation marks the point (it waits for that work, as a real operation
  // would); otherwise it is the stream's last operation.
  StreamPoint PointAfterQueued(Stream& stream);

  // True when the stream has no pending work; for the legacy stream, also every blocking one.
  bool StreamIdle(Stream& stream);
  // Waits for all prior work in a stream (for the legacy stream, also every blocking one).
  void SynchronizeStream(Stream& stream);
  // Waits for all prior work in every stream of the device.
  void Synchronize();

  // Called by Stream's destructor.
  void Unregister(Stream* stream);
  size_t stream_count();

 private:
  std::vector<std::shared_ptr<Stream>> LiveStreams(bool blocking_only);
  std::vector<StreamPoint> BusyBlockingPoints();

  WorkerPool* const pool_;
  std::shared_ptr<Stream> legacy_;
  std::atomic<uint64_t> busy_{0};           // busy streams, of every kind
  std::atomic<uint64_t> blocking_busy_{0};  // busy blocking streams
  // Shared by enqueues on blocking streams, exclusive for enqueues on the legacy stream, so
  // the two kinds of dependency are always computed from a consistent order (never a cycle).
  OrderLock order_lock_;
  std::mutex streams_mutex_;
  std::vector<Stream*> streams_;  // every live stream but the legacy one
};

// An event: the last point recorded into it, with the time that point was reached.
class Event {
 public:
  explicit Event(unsigned int flags) : flags_(flags) {}
  unsigned int flags() const { return flags_; }

  struct RecordPoint {
    StreamPoint point;
    std::atomic<int64_t> reached_ns{0};
  };

  void Record(Device& device, Stream& stream);
  // The last record, or null if the event was never recorded.
  std::shared_ptr<RecordPoint> last() const;

 private:
  const unsigned int flags_;
  mutable std::mutex mutex_;
  std::shared_ptr<RecordPoint> last_;
};

int64_t NowNanoseconds();

template <class Work>
bool Device::TryRunInline(Stream& stream, Work&& work, uint64_t* seq) {
  if (stream.kind() == Stream::Kind::kLegacy) {
    // Exclusive, as Submit on the legacy stream: no blocking stream enqueues meanwhile.
    std::unique_lock<OrderLock> order(order_lock_);
    if (blocking_busy_.load(std::memory_order_acquire) != 0 || !stream.BeginInline(seq)) {
      return false;
    }
  } else if (stream.blocking()) {
    std::shared_lock<OrderLock> order(order_lock_);
    if (!legacy_->Idle() || !stream.BeginInline(seq)) return false;
  } else if (!stream.BeginInline(seq)) {
    return false;
  }
  // From here the stream counts the operation as pending: work enqueued on it, or on a stream
  // that must follow it, waits until FinishInline.
  RunContained(work);
  stream.FinishInline(*seq);
  return true;
}

}  // namespace infinirt::cpu

#endif  // INFINIRT_PLUGINS_CPU_ENGINE_H_
