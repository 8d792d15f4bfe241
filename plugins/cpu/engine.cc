#include "engine.h"

#include <algorithm>
#include <chrono>
#include <thread>

namespace infinirt::cpu {

namespace {

std::atomic<uint64_t> g_stream_ids{0};

// Stream identities, unique in the process. Each thread takes them in blocks: recycling a spare
// stream takes a new one on every StreamCreate, and one atomic increment in the process was a
// tenth of a StreamCreate + StreamDestroy pair. Initial-exec, as tls_on_worker (engine.h).
constexpr uint64_t kStreamIdBlock = 1024;
struct StreamIdBlock {
  uint64_t next = 0;
  uint64_t end = 0;  // next == end: take a new block
};
thread_local StreamIdBlock tls_stream_ids __attribute__((tls_model("initial-exec")));

uint64_t NextStreamId() {
  StreamIdBlock& block = tls_stream_ids;
  if (__builtin_expect(block.next == block.end, 0)) {
    block.next = g_stream_ids.fetch_add(kStreamIdBlock, std::memory_order_relaxed) + 1;
    block.end = block.next + kStreamIdBlock;
  }
  return block.next++;
}

// Operations a worker runs from one stream before letting other streams have a turn.
constexpr int kRunBudget = 64;

inline void SpinWaitHint() {
#if defined(__x86_64__) || defined(__i386__)
  __builtin_ia32_pause();
#elif defined(__aarch64__)
  asm volatile("yield");
#endif
}

// How long an idle worker looks for more work before it sleeps (WorkerPool::SpinForWork).
constexpr std::chrono::microseconds kSpinTime{50};
// How long a worker that emptied a stream's queue waits for the stream's next operation before
// giving the stream up (Stream::RunSome).
constexpr std::chrono::microseconds kStreamSpinTime{20};

// Spins until done() or the time is up; returns done(). Each round pauses the core briefly
// (the spin-wait hint) and every 64th yields it, so a thread waiting for this core runs soon.
template <class Done>
bool SpinUntil(Done done, std::chrono::microseconds time) {
  const auto deadline = std::chrono::steady_clock::now() + time;
  for (unsigned round = 1; !done(); ++round) {
    if (std::chrono::steady_clock::now() >= deadline) return false;
    if (round % 64 == 0) {
      std::this_thread::yield();
    } else {
      SpinWaitHint();
    }
  }
  return true;
}

}  // namespace

int64_t NowNanoseconds() {
  return std::chrono::duration_cast<std::chrono::nanoseconds>(
             std::chrono::steady_clock::now().time_since_epoch())
      .count();
}

bool StreamPoint::Reached() const { return stream->completed() >= seq; }

// ---------------------------------------------------------------------------------------------
// WorkerPool

WorkerPool::WorkerPool(int threads)
    : size_(threads),
      spin_below_(std::max(1, static_cast<int>(std::thread::hardware_concurrency()) - 1)) {}

// Once. When a thread cannot be created, the workers already started stay; if none could
// start, the error propagates and the next call tries again.
void WorkerPool::StartWorkers() {
  std::lock_guard<std::mutex> lock(start_mutex_);
  if (started_.load(std::memory_order_relaxed)) return;
  threads_.reserve(size_);
  while (static_cast<int>(threads_.size()) < size_) {
    try {
      threads_.emplace_back([this] { WorkerLoop(); });
    } catch (...) {
      if (threads_.empty()) throw;
      break;
    }
  }
  started_.store(true, std::memory_order_release);
}

WorkerPool::~WorkerPool() {
  {
    std::lock_guard<std::mutex> lock(mutex_);
    stopping_ = true;
  }
  ready_cv_.notify_all();
  std::lock_guard<std::mutex> start_lock(start_mutex_);
  for (std::thread& thread : threads_) thread.join();
}

void WorkerPool::Schedule(std::shared_ptr<Stream> stream) {
  bool wake;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    const int level = kLeastStreamPriority - stream->priority();  // 0: the least priority
    ready_[level].push_back(std::move(stream));
    const size_t ready = ready_count_.load(std::memory_order_relaxed) + 1;
    ready_count_.store(ready, std::memory_order_release);
    // A spinning worker takes the first ready stream without being woken; more need sleepers.
    wake = !spinning_ || ready > 1;
  }
  if (wake) ready_cv_.notify_one();
}

void WorkerPool::WorkerLoop() {
  detail::tls_on_worker = true;
  while (std::shared_ptr<Stream> stream = TakeReady()) {
    stream->RunSome();
    running_.fetch_sub(1, std::memory_order_relaxed);
  }
}

std::shared_ptr<Stream> WorkerPool::TakeReady() {
  std::unique_lock<std::mutex> lock(mutex_);
  bool spun = false;  // one spin per wake-up, then sleep
  for (;;) {
    if (ready_count_.load(std::memory_order_relaxed) != 0) {
      // The highest priority first; within one, the stream ready longest.
      for (int level = kStreamPriorityLevels - 1; level >= 0; --level) {
        if (ready_[level].empty()) continue;
        std::shared_ptr<Stream> stream = std::move(ready_[level].front());
        ready_[level].pop_front();
        ready_count_.store(ready_count_.load(std::memory_order_relaxed) - 1,
                           std::memory_order_relaxed);
        running_.fetch_add(1, std::memory_order_relaxed);
        return stream;
      }
    }
    if (stopping_) return nullptr;
    if (!spun && !spinning_ && running_.load(std::memory_order_relaxed) < spin_below_) {
      spinning_ = spun = true;
      lock.unlock();
      SpinForWork();
      lock.lock();
      spinning_ = false;  // under mutex_: Schedule sees either this or a waiting worker
      continue;
    }
    ready_cv_.wait(lock);
    spun = false;
  }
}

void WorkerPool::SpinForWork() {
  // SpinUntil yields the core now and then to any thread that wants it (on a 2-core machine,
  // often the one about to queue the work).
  SpinUntil([this] { return ready_count_.load(std::memory_order_acquire) != 0; }, kSpinTime);
}

// ---------------------------------------------------------------------------------------------
// Stream

Stream::Stream(std::shared_ptr<Device> device, Kind kind, bool non_blocking)
    : device_(std::move(device)), id_(NextStreamId()), kind_(kind), non_blocking_(non_blocking) {}

void Stream::NoteWaitedFor(const StreamPoint& point) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (auto& [stream, seq] : waited_for_) {
    if (stream == point.stream->id()) {
      seq = std::max(seq, point.seq);
      return;
    }
  }
  waited_for_.emplace_back(point.stream->id(), point.seq);
  has_waited_.store(true, std::memory_order_relaxed);
}

bool Stream::HasWaitedFor(const StreamPoint& point) {
  std::lock_guard<std::mutex> lock(mutex_);
  for (const auto& [stream, seq] : waited_for_) {
    if (stream == point.stream->id()) return seq >= point.seq;
  }
  return false;
}

Stream::~Stream() { device_->Unregister(this); }

void Stream::Keep(int key, const KeptValue& value) {
  std::lock_guard<std::mutex> lock(kept_mutex_);
  kept_[key] = value;
}

bool Stream::Kept(int key, KeptValue* value) const {
  std::lock_guard<std::mutex> lock(kept_mutex_);
  auto found = kept_.find(key);
  if (found == kept_.end()) return false;
  *value = found->second;
  return true;
}

void Stream::Recycle() {
  id_.store(NextStreamId(), std::memory_order_relaxed);
  {
    std::lock_guard<std::mutex> lock(kept_mutex_);
    kept_.clear();
  }
  // Nothing else refers to the stream, so no NoteWaitedFor runs meanwhile.
  if (!has_waited_.load(std::memory_order_relaxed)) return;
  std::lock_guard<std::mutex> lock(mutex_);
  waited_for_.clear();
  has_waited_.store(false, std::memory_order_relaxed);
}

void Stream::ScheduleLocked() {
  scheduled_ = true;
  device_->pool().Schedule(shared_from_this());
}

uint64_t Stream::Enqueue(std::vector<StreamPoint> waits, Task work) {
  device_->pool().EnsureStarted();
  std::lock_guard<std::mutex> lock(mutex_);
  const uint64_t seq = last_enqueued_.load(std::memory_order_relaxed) + 1;
  queue_.push_back(Operation{seq, std::move(waits), std::move(work)});
  if (completed() == seq - 1) device_->CountBusy(blocking());
  last_enqueued_.store(seq, std::memory_order_release);
  if (!scheduled_ && !parked_) ScheduleLocked();
  return seq;
}

bool Stream::BeginInline(uint64_t* seq) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!queue_.empty() || scheduled_ || parked_) return false;
  scheduled_ = true;
  *seq = last_enqueued_.load(std::memory_order_relaxed) + 1;
  if (completed() == *seq - 1) device_->CountBusy(blocking());
  last_enqueued_.store(*seq, std::memory_order_release);
  return true;
}

void Stream::FinishInline(uint64_t seq) {
  Completion completion;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completion = CompleteLocked(seq);
    // Work queued meanwhile waited for this operation; it goes to a worker now.
    if (queue_.empty()) {
      scheduled_ = false;
    } else {
      ScheduleLocked();
    }
  }
  Announce(std::move(completion));
}

void Stream::WaitFor(uint64_t seq) {
  if (completed() >= seq) return;
  std::unique_lock<std::mutex> lock(mutex_);
  while (completed() < seq) {
    wake_at_ = std::min(wake_at_, seq);  // renewed after every wake-up: Announce resets it
    completed_cv_.wait(lock);
  }
}

bool Stream::AddWaiter(uint64_t seq, std::shared_ptr<Stream> waiter) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (completed() >= seq) return false;
  waiters_.push_back(Waiter{seq, std::move(waiter)});
  return true;
}

void Stream::Wake() {
  std::lock_guard<std::mutex> lock(mutex_);
  if (parked_) {
    parked_ = false;
    ScheduleLocked();
  } else {
    woken_ = true;  // the runner is checking waits right now: make it check again
  }
}

Stream::Completion Stream::CompleteLocked(uint64_t seq) {
  completed_.store(seq, std::memory_order_release);
  if (seq == last_enqueued_.load(std::memory_order_relaxed)) device_->CountIdle(blocking());
  Completion completion;
  if (seq >= wake_at_) {
    completion.notify = true;
    wake_at_ = UINT64_MAX;
  }
  if (waiters_.empty()) return completion;
  auto reached = std::partition(waiters_.begin(), waiters_.end(),
                                [&](const Waiter& waiter) { return waiter.seq > seq; });
  std::move(reached, waiters_.end(), std::back_inserter(completion.released));
  waiters_.erase(reached, waiters_.end());
  return completion;
}

void Stream::Announce(Completion completion) {
  if (completion.notify) completed_cv_.notify_all();
  for (Waiter& waiter : completion.released) waiter.stream->Wake();
}

void Stream::Complete(uint64_t seq) {
  Completion completion;
  {
    std::lock_guard<std::mutex> lock(mutex_);
    completion = CompleteLocked(seq);
  }
  Announce(std::move(completion));
}

bool Stream::FrontReady() {
  for (;;) {
    StreamPoint pending;
    {
      std::lock_guard<std::mutex> lock(mutex_);
      woken_ = false;
      std::vector<StreamPoint>& waits = queue_.front().waits;
      while (!waits.empty() && waits.back().Reached()) waits.pop_back();
      if (waits.empty()) return true;
      pending = waits.back();
    }
    // Register outside our own lock: the other stream's lock is never taken while ours is held.
    if (!pending.stream->AddWaiter(pending.seq, shared_from_this())) continue;
    std::lock_guard<std::mutex> lock(mutex_);
    if (woken_) continue;  // reached between the check and the registration
    parked_ = true;
    scheduled_ = false;
    return false;
  }
}

// One lock acquisition per operation in the common case (no waits, nobody to wake): the
// completion of one operation and the removal of the next share it.
void Stream::RunSome() {
  std::unique_lock<std::mutex> lock(mutex_);
  bool spun = false;
  for (int budget = 0; budget < kRunBudget; ++budget) {
    if (queue_.empty()) {
      // A stream fed operation by operation: wait a moment for the next one, still the
      // stream's runner, instead of going through the pool again for each.
      if (!spun && device_->pool().MaySpinInStream()) {
        spun = true;
        const uint64_t last = last_enqueued_.load(std::memory_order_relaxed);
        lock.unlock();
        SpinUntil([&] { return last_enqueued() != last; }, kStreamSpinTime);
        lock.lock();
        --budget;
        continue;
      }
      scheduled_ = false;
      return;
    }
    if (!queue_.front().waits.empty()) {
      lock.unlock();
      if (!FrontReady()) return;  // parked; a completion elsewhere reschedules us
      lock.lock();
    }
    Operation operation = std::move(queue_.front());
    queue_.pop_front();
    spun = false;  // the stream is being fed: wait for it again when it runs dry
    lock.unlock();
    RunGuarded(operation.work);
    operation.work = nullptr;  // what the task holds goes outside the lock
    lock.lock();
    Completion completion = CompleteLocked(operation.seq);
    if (!completion.empty()) {
      lock.unlock();
      Announce(std::move(completion));
      lock.lock();
    }
  }
  // Budget spent: give other streams a turn.
  if (queue_.empty()) {
    scheduled_ = false;
  } else {
    ScheduleLocked();
  }
}

// ---------------------------------------------------------------------------------------------
// Device

Device::Device(WorkerPool* pool) : pool_(pool) {}

void Device::Shutdown() {
  Synchronize();
  legacy_.reset();
}

void Device::CreateLegacyStream() {
  legacy_ = std::make_shared<Stream>(shared_from_this(), Stream::Kind::kLegacy, false);
}

std::shared_ptr<Stream> Device::CreateStream(Stream::Kind kind, bool non_blocking) {
  auto stream = std::make_shared<Stream>(shared_from_this(), kind, non_blocking);
  std::lock_guard<std::mutex> lock(streams_mutex_);
  streams_.push_back(stream.get());
  return stream;
}

void Device::Unregister(Stream* stream) {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  auto it = std::find(streams_.begin(), streams_.end(), stream);
  if (it != streams_.end()) {
    *it = streams_.back();
    streams_.pop_back();
  }
}

size_t Device::stream_count() {
  std::lock_guard<std::mutex> lock(streams_mutex_);
  return streams_.size();
}

std::vector<std::shared_ptr<Stream>> Device::LiveStreams(bool blocking_only) {
  for (;;) {
    std::vector<std::shared_ptr<Stream>> live;
    bool dying = false;
    {
      std::lock_guard<std::mutex> lock(streams_mutex_);
      live.reserve(streams_.size());
      for (Stream* stream : streams_) {
        if (blocking_only && !stream->blocking()) continue;
        if (auto owned = stream->weak_from_this().lock()) {
          live.push_back(std::move(owned));
        } else {
          dying = true;
        }
      }
    }
    // A stream without an owner is being destroyed: its destructor waits for streams_mutex_ to
    // unregister it. Its work is done, but a failed weak_ptr lock does not order that work
    // before the caller's next steps (Synchronize, then free the memory it used); the
    // destructor's unlock of streams_mutex_ does. So let it unregister, and look again.
    if (!dying) return live;
    std::this_thread::yield();
  }
}

std::vector<StreamPoint> Device::BusyBlockingPoints() {
  std::vector<StreamPoint> points;
  if (blocking_busy_.load(std::memory_order_acquire) == 0) return points;
  for (auto& stream : LiveStreams(/*blocking_only=*/true)) {
    const uint64_t last = stream->last_enqueued();
    if (stream->completed() < last) points.push_back(StreamPoint{std::move(stream), last});
  }
  return points;
}

uint64_t Device::Submit(Stream& stream, std::vector<StreamPoint> waits, Task work) {
  if (stream.kind() == Stream::Kind::kLegacy) {
    std::unique_lock<OrderLock> order(order_lock_);
    for (StreamPoint& point : BusyBlockingPoints()) waits.push_back(std::move(point));
    return stream.Enqueue(std::move(waits), std::move(work));
  }
  if (stream.blocking()) {
    std::shared_lock<OrderLock> order(order_lock_);
    const uint64_t legacy_last = legacy_->last_enqueued();
    if (legacy_->completed() < legacy_last) waits.push_back(StreamPoint{legacy_, legacy_last});
    return stream.Enqueue(std::move(waits), std::move(work));
  }
  return stream.Enqueue(std::move(waits), std::move(work));
}

StreamPoint Device::PointAfterQueued(Stream& stream) {
  const bool implicit_work_pending = stream.kind() == Stream::Kind::kLegacy
                                         ? blocking_busy_.load(std::memory_order_acquire) != 0
                                         : stream.blocking() && !legacy_->Idle();
  const uint64_t seq = implicit_work_pending ? Submit(stream, {}, Task()) : stream.last_enqueued();
  return StreamPoint{stream.shared_from_this(), seq};
}

bool Device::StreamIdle(Stream& stream) {
  if (!stream.Idle()) return false;
  return stream.kind() != Stream::Kind::kLegacy ||
         blocking_busy_.load(std::memory_order_acquire) == 0;
}

void Device::SynchronizeStream(Stream& stream) {
  if (stream.kind() == Stream::Kind::kLegacy) {
    if (StreamIdle(stream)) return;
    // An empty operation on the legacy stream completes after all prior work in every
    // blocking stream: waiting for it is waiting for all of them.
    stream.WaitFor(Submit(stream, {}, Task()));
    return;
  }
  stream.WaitFor(stream.last_enqueued());
}

void Device::Synchronize() {
  if (busy_.load(std::memory_order_acquire) == 0) return;
  auto streams = LiveStreams(/*blocking_only=*/false);
  streams.push_back(legacy_);
  for (const auto& stream : streams) stream->WaitFor(stream->last_enqueued());
}

// ---------------------------------------------------------------------------------------------
// Event

void Event::Record(Device& device, Stream& stream) {
  auto record = std::make_shared<RecordPoint>();
  uint64_t seq;
  RecordPoint* inline_record = record.get();
  if (!device.TryRunInline(
          stream, [inline_record] { inline_record->reached_ns.store(NowNanoseconds()); }, &seq)) {
    std::weak_ptr<RecordPoint> weak = record;
    seq = device.Submit(stream, {}, [weak] {
      if (auto target = weak.lock()) target->reached_ns.store(NowNanoseconds());
    });
  }
  record->point = StreamPoint{stream.shared_from_this(), seq};
  std::lock_guard<std::mutex> lock(mutex_);
  last_ = std::move(record);
}

std::shared_ptr<Event::RecordPoint> Event::last() const {
  std::lock_guard<std::mutex> lock(mutex_);
  return last_;
}

}  // namespace infinirt::cpu
