#include "caching_allocator.h"

#include <algorithm>
#include <atomic>
#include <cstdio>
#include <functional>
#include <sstream>
#include <utility>

#include "infinirt/error.hpp"
#include "runtime_log.h"
#include "scoped_device.h"

namespace infinirt::detail {

namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kMinBlockSize = 512;       // sizes are rounded up to this
constexpr size_t kSmallSize = kMiB;         // requests below it are small
constexpr size_t kSmallSegment = 2 * kMiB;  // small blocks are carved from segments of this
constexpr size_t kRoundLarge = 2 * kMiB;    // large segments are multiples of this
constexpr size_t kLargeBuffer = 20 * kMiB;  // see Fits
constexpr int kOtherStreamProbes = 8;       // free blocks of other streams looked at per request
constexpr size_t kLargestRequest = SIZE_MAX - kRoundLarge;  // rounding cannot overflow below it

size_t RoundUp(size_t size, size_t unit) { return (size + unit - 1) / unit * unit; }

std::string Bytes(int64_t bytes) {
  char text[32];
  const double value = static_cast<double>(bytes);
  if (bytes >= static_cast<int64_t>(kMiB)) {
    std::snprintf(text, sizeof text, "%.1f MiB", value / kMiB);
  } else if (bytes >= 1024) {
    std::snprintf(text, sizeof text, "%.1f KiB", value / 1024);
  } else {
    std::snprintf(text, sizeof text, "%lld B", static_cast<long long>(bytes));
  }
  return text;
}

// Whether everything queued on a stream so far is done (null: no stream, nothing pending).
bool StreamPassed(infinirtStream_t stream) {
  if (stream == nullptr) return true;
  const infinirtError_t status = infinirtStreamQuery(stream);
  if (status == infinirtSuccess) return true;
  if (status != infinirtErrorNotReady) infinirtGetLastError();  // a stream destroyed meanwhile
  return false;
}

// Calls body with the thread's capture mode relaxed: a segment may be taken from the device while
// a graph is being recorded (pin mode), which a global capture would refuse.
template <class Body>
auto WithRelaxedCapture(Body body) {
  infinirtStreamCaptureMode mode = infinirtStreamCaptureModeRelaxed;
  const bool exchanged = infinirtThreadExchangeStreamCaptureMode(&mode) == infinirtSuccess;
  auto result = body();
  if (exchanged) infinirtThreadExchangeStreamCaptureMode(&mode);
  return result;
}

std::mutex& AllocatorsMutex() {
  static std::mutex mutex;
  return mutex;
}

// Never destroyed: memory released at process exit may still reach its allocator.
std::map<Device, std::shared_ptr<CachingAllocator>>& Allocators() {
  static auto* allocators = new std::map<Device, std::shared_ptr<CachingAllocator>>();
  return *allocators;
}

}  // namespace

bool CachingAllocator::ByStreamSize::operator()(const Block* a, const Block* b) const {
  if (a->stream != b->stream) return std::less<infinirtStream_t>()(a->stream, b->stream);
  if (a->size != b->size) return a->size < b->size;
  return std::less<std::byte*>()(a->ptr, b->ptr);
}

bool CachingAllocator::BySize::operator()(const Block* a, const Block* b) const {
  if (a->size != b->size) return a->size < b->size;
  return std::less<std::byte*>()(a->ptr, b->ptr);
}

CachingAllocator::CachingAllocator(Device device, int ordinal)
    : device_(device), ordinal_(ordinal) {
  try {
    config_ = AllocConfig::FromEnvironment();
  } catch (const Error&) {
    config_malformed_ = true;
  }
  if (config_.garbage_collection_threshold > 0) {
    ScopedDevice on_device(ordinal_);
    size_t free_bytes = 0, total = 0;
    if (infinirtMemGetInfo(&free_bytes, &total) == infinirtSuccess) {
      device_total_ = total;
    } else {
      infinirtGetLastError();
      Warn("garbage_collection_threshold: the device's memory size is unknown; no collection");
    }
  }
}

CachingAllocator::~CachingAllocator() {
  ReleaseCachedSegments();
  for (FrontCache* front : open_fronts_) delete front;
  for (FrontCache* front : closed_fronts_) delete front;
  for (infinirtEvent_t event : spare_events_) infinirtEventDestroy(event);
  for (Block* block : spare_blocks_) delete block;
}

std::shared_ptr<CachingAllocator> CachingAllocator::For(Device device, int ordinal) {
  std::lock_guard<std::mutex> lock(AllocatorsMutex());
  std::shared_ptr<CachingAllocator>& allocator = Allocators()[device];
  if (!allocator) allocator = std::make_shared<CachingAllocator>(device, ordinal);
  return allocator;
}

std::shared_ptr<CachingAllocator> CachingAllocator::Existing(Device device) {
  std::lock_guard<std::mutex> lock(AllocatorsMutex());
  auto found = Allocators().find(device);
  return found == Allocators().end() ? nullptr : found->second;
}

// --- The cache ---------------------------------------------------------------------------------

namespace {

constexpr size_t kSpareNodes = 64;  // per index and pool
constexpr size_t kSpareBlocks = 256;

// Inserts a value into a set through a spare node when there is one.
template <class Set>
void InsertWithSpare(Set& set, std::vector<typename Set::node_type>& spares,
                     typename Set::value_type value) {
  if (spares.empty()) {
    set.insert(value);
    return;
  }
  typename Set::node_type node = std::move(spares.back());
  spares.pop_back();
  node.value() = value;
  set.insert(std::move(node));
}

// Erases a value from a set, keeping its node as a spare (up to kSpareNodes).
template <class Set>
void EraseToSpare(Set& set, std::vector<typename Set::node_type>& spares,
                  typename Set::value_type value) {
  typename Set::node_type node = set.extract(value);
  if (node && spares.size() < kSpareNodes) spares.push_back(std::move(node));
}

}  // namespace

Block* CachingAllocator::NewBlock() {
  if (spare_blocks_.empty()) return new Block;
  Block* block = spare_blocks_.back();
  spare_blocks_.pop_back();
  return block;
}

void CachingAllocator::DropBlock(Block* block) {
  if (spare_blocks_.size() >= kSpareBlocks) {
    delete block;
    return;
  }
  // As new, keeping the vectors' capacity.
  std::vector<infinirtStream_t> uses = std::move(block->uses);
  std::vector<infinirtEvent_t> awaiting = std::move(block->awaiting);
  uses.clear();
  awaiting.clear();
  *block = Block();
  block->uses = std::move(uses);
  block->awaiting = std::move(awaiting);
  spare_blocks_.push_back(block);
}

void CachingAllocator::Insert(Block* block) {
  Pool& pool = PoolOf(block->small);
  InsertWithSpare(pool.blocks, pool.spare_block_nodes, block);
  InsertWithSpare(pool.by_size, pool.spare_size_nodes, block);
  block->in_cache = true;
  if (block->split()) {
    Count(stats_.inactive_split_bytes, static_cast<int64_t>(block->size));
    Count(stats_.inactive_split_blocks, 1);
  }
}

void CachingAllocator::Erase(Block* block) {
  Pool& pool = PoolOf(block->small);
  EraseToSpare(pool.blocks, pool.spare_block_nodes, block);
  EraseToSpare(pool.by_size, pool.spare_size_nodes, block);
  block->in_cache = false;
  if (block->split()) {
    Count(stats_.inactive_split_bytes, -static_cast<int64_t>(block->size));
    Count(stats_.inactive_split_blocks, -1);
  }
}

// PyTorch's rule for max_split_size: a block above it (never split) serves only requests of at
// least that size, and not ones so much smaller that most of the block would sit unused.
bool CachingAllocator::Fits(const Block* block, size_t rounded) const {
  if (block->size < rounded) return false;
  const size_t limit = config_.max_split_size;
  if (rounded < limit && block->size >= limit) return false;
  if (rounded >= limit && block->size >= rounded + kLargeBuffer) return false;
  return true;
}

Block* CachingAllocator::TakeCached(size_t rounded, infinirtStream_t stream) {
  Pool& pool = PoolOf(rounded < kSmallSize);
  // The best fit among the stream's own blocks, then among blocks no stream has work on.
  for (infinirtStream_t owner : {stream, static_cast<infinirtStream_t>(nullptr)}) {
    Block key;
    key.stream = owner;
    key.size = rounded;
    auto found = pool.blocks.lower_bound(&key);
    if (found != pool.blocks.end() && (*found)->stream == owner && Fits(*found, rounded)) {
      Block* block = *found;
      Erase(block);
      block->stream = stream;
      return block;
    }
    if (stream == nullptr) break;
  }
  return TakeFromOtherStream(pool, rounded, stream);
}

// A block another stream released is reused once that stream has no work left: its work before
// the release is then done.
Block* CachingAllocator::TakeFromOtherStream(Pool& pool, size_t rounded, infinirtStream_t stream) {
  Block key;
  key.size = rounded;
  int probes = 0;
  for (auto it = pool.by_size.lower_bound(&key);
       it != pool.by_size.end() && probes < kOtherStreamProbes; ++it) {
    Block* block = *it;
    if (block->stream == stream || block->stream == nullptr) continue;  // looked at already
    if (!Fits(block, rounded)) break;  // larger ones do not fit either
    // A stream recording a graph cannot be queried (the query would end the capture).
    if (pinning_.count(block->stream) != 0) continue;
    ++probes;
    if (!StreamPassed(block->stream)) continue;
    Erase(block);
    block->stream = stream;
    return block;
  }
  return nullptr;
}

Block* CachingAllocator::NewSegment(size_t rounded, bool small, infinirtStream_t stream,
                                    infinirtError_t* error) {
  const size_t size = small ? kSmallSegment : RoundUp(rounded, kRoundLarge);
  CollectGarbageFor(size);
  void* data = nullptr;
  {
    ScopedDevice on_device(ordinal_);
    *error = WithRelaxedCapture([&] { return infinirtMalloc(&data, size); });
  }
  if (*error != infinirtSuccess) {
    infinirtGetLastError();
    return nullptr;
  }
  Block* block = NewBlock();
  block->ptr = static_cast<std::byte*>(data);
  block->size = size;
  block->stream = stream;
  block->small = small;
  segments_.insert(block);
  Count(stats_.reserved_bytes, static_cast<int64_t>(size));
  Count(stats_.segments, 1);
  ++stats_.device_allocs;
  return block;
}

// Keeps the first `rounded` bytes of a block taken from the cache and returns the rest to it,
// when the rest is worth keeping apart.
Block* CachingAllocator::SplitOff(Block* block, size_t rounded) {
  const size_t remaining = block->size - rounded;
  const bool worth = block->small ? remaining >= kMinBlockSize
                                  : remaining > kSmallSize && block->size < config_.max_split_size;
  if (!worth) return block;
  Block* rest = NewBlock();
  rest->ptr = block->ptr + rounded;
  rest->size = remaining;
  rest->stream = block->stream;
  rest->small = block->small;
  rest->prev = block;
  rest->next = block->next;
  if (block->next != nullptr) block->next->prev = rest;
  block->next = rest;
  block->size = rounded;
  Insert(rest);
  return block;
}

// --- Allocation and release --------------------------------------------------------------------

std::shared_ptr<Memory> CachingAllocator::Allocate(size_t size, infinirtStream_t stream,
                                                   FrontCache* front) {
  auto call = [&] {
    return "allocateMemory(size=" + std::to_string(size) + ") on " + device_.toString();
  };
  if (size == 0) check(infinirtErrorInvalidValue, call);
  if (config_malformed_) AllocConfig::FromEnvironment();  // throws what is wrong with it
  std::unique_lock<std::mutex> lock(mutex_);
  if (size > kLargestRequest) ThrowOutOfMemory(size, infinirtErrorMemoryAllocation);
  ProcessAwaiting();
  // The statistics below go up: every front cache's changes are folded in first (front_cache.h).
  FoldFrontCounts();
  const size_t rounded = RoundUp(size, kMinBlockSize);
  Block* block = front != nullptr ? TakeFromFront(front, rounded) : nullptr;
  if (block == nullptr) block = TakeCached(rounded, stream);
  if (block == nullptr && !open_fronts_.empty()) {
    // Before the device is asked for more, the blocks the runtimes keep go back to the pools,
    // where they merge with their free neighbours and may serve this request.
    DrainFronts();
    block = TakeCached(rounded, stream);
  }
  if (block != nullptr) {
    ++stats_.cache_hits;
  } else {
    const bool small = rounded < kSmallSize;
    infinirtError_t error = infinirtSuccess;
    block = NewSegment(rounded, small, stream, &error);
    if (block == nullptr && error == infinirtErrorMemoryAllocation) {
      ++stats_.alloc_retries;
      ReleaseCachedSegments();
      block = NewSegment(rounded, small, stream, &error);
    }
    if (block == nullptr) ThrowOutOfMemory(size, error);
    ++stats_.cache_misses;
  }
  block = SplitOff(block, rounded);
  block->allocated = true;
  block->requested = size;
  auto pinning = pinning_.find(stream);
  block->pin_owner = pinning == pinning_.end() ? 0 : pinning->second;
  // A pinned block goes back the usual way (its graph may keep it).
  block->front = block->pin_owner == 0 ? front : nullptr;
  block->front_generation = front != nullptr ? front->generation : 0;
  const auto bytes = static_cast<int64_t>(block->size);
  Count(stats_.allocations, 1);
  Count(stats_.allocated_bytes, bytes);
  Count(stats_.active_bytes, bytes);
  Count(stats_.active_blocks, 1);
  Count(stats_.requested_bytes, static_cast<int64_t>(size));
  lock.unlock();
  return Hand(block);
}

std::shared_ptr<Memory> CachingAllocator::AllocateFromFront(FrontCache* front, size_t size) {
  if (size == 0 || size > kLargestRequest) return nullptr;  // Allocate says what is wrong
  const size_t rounded = RoundUp(size, kMinBlockSize);
  Block* block = nullptr;
  {
    std::lock_guard<SpinLock> lock(front->lock);
    block = front->Take(rounded);
    if (block == nullptr) return nullptr;
    const FrontCounts::Change change = FrontCounts::Of(block->size, size);
    if (!front->counts.FitsBelowFold(change)) {
      front->Keep(block, rounded);  // back where it was taken from: there is room
      return nullptr;
    }
    front->counts.Allocated(change);
    block->requested = size;
  }
  return Hand(block);  // outside the lock: nobody else reaches the block meanwhile
}

Block* CachingAllocator::TakeFromFront(FrontCache* front, size_t rounded) {
  std::lock_guard<SpinLock> lock(front->lock);
  return front->Take(rounded);
}

// The allocator of a handed-out block's shared_ptr: its control block, with the Memory in it,
// lives in the block's own storage, and the block is released when that storage is, which is
// once the Memory and every weak_ptr to it are gone. No heap allocation per Memory.
template <class T>
class InBlock {
 public:
  using value_type = T;
  InBlock(CachingAllocator* owner, Block* block) : owner_(owner), block_(block) {}
  template <class U>
  InBlock(const InBlock<U>& other) : owner_(other.owner_), block_(other.block_) {}

  T* allocate(size_t count) {
    static_assert(sizeof(T) <= sizeof(Block::memory_storage) &&
                  alignof(T) <= alignof(std::max_align_t));
    if (count != 1) throw std::bad_alloc();  // never asked: shared_ptr takes one
    return reinterpret_cast<T*>(block_->memory_storage);
  }
  void deallocate(T*, size_t) noexcept { owner_->Release(block_); }

  template <class U>
  bool operator==(const InBlock<U>& other) const {
    return block_ == other.block_;
  }
  template <class U>
  bool operator!=(const InBlock<U>& other) const {
    return block_ != other.block_;
  }

 private:
  template <class U>
  friend class InBlock;
  CachingAllocator* owner_;
  Block* block_;
};

std::shared_ptr<Memory> CachingAllocator::Hand(Block* block) {
  Memory::Owner* owner = this;
  return std::allocate_shared<Memory>(InBlock<Memory>(this, block), block->ptr, block->requested,
                                      device_, owner, block);
}

// The block is released with its Memory's storage (InBlock), not here.
void CachingAllocator::release(std::byte*, void*) noexcept {}

void CachingAllocator::recordStream(void* token, infinirtStream_t stream) {
  RecordUse(static_cast<Block*>(token), stream);
}

void CachingAllocator::RecordUse(Block* block, infinirtStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  if (!block->allocated || stream == block->stream) return;
  if (std::find(block->uses.begin(), block->uses.end(), stream) == block->uses.end()) {
    block->uses.push_back(stream);
  }
}

infinirtEvent_t CachingAllocator::TakeEvent() {
  if (!spare_events_.empty()) {
    infinirtEvent_t event = spare_events_.back();
    spare_events_.pop_back();
    return event;
  }
  ScopedDevice on_device(ordinal_);
  infinirtEvent_t event = nullptr;
  check(infinirtEventCreateWithFlags(&event, infinirtEventDisableTiming),
        [&] { return "infinirtEventCreateWithFlags for the allocator of " + device_.toString(); });
  return event;
}

void CachingAllocator::Release(Block* block) {
  if (!KeepInFront(block)) ReleaseToPools(block);
}

// A released block goes to the front cache it was handed out for, if that cache is still its
// runtime's, no other stream used it, and there is room.
bool CachingAllocator::KeepInFront(Block* block) {
  FrontCache* front = block->front;
  if (front == nullptr || !block->uses.empty()) return false;
  std::lock_guard<SpinLock> lock(front->lock);
  if (!front->open || front->generation != block->front_generation) return false;
  if (!front->Keep(block, RoundUp(block->requested, kMinBlockSize))) return false;
  front->counts.Released(FrontCounts::Of(block->size, block->requested));
  return true;
}

void CachingAllocator::ReleaseToPools(Block* block) {
  try {
    std::lock_guard<std::mutex> lock(mutex_);
    block->allocated = false;
    Count(stats_.allocations, -1);
    Count(stats_.allocated_bytes, -static_cast<int64_t>(block->size));
    Count(stats_.requested_bytes, -static_cast<int64_t>(block->requested));
    // Work queued on the other streams that use the block must pass this point first: an event
    // in each. A stream that cannot take one any more (destroyed meanwhile) cannot be told
    // apart: the whole device is waited for instead, and no event is needed.
    for (infinirtStream_t stream : block->uses) {
      infinirtEvent_t event = TakeEvent();
      if (infinirtEventRecord(event, stream) == infinirtSuccess) {
        block->awaiting.push_back(event);
        continue;
      }
      infinirtGetLastError();
      spare_events_.push_back(event);
      spare_events_.insert(spare_events_.end(), block->awaiting.begin(), block->awaiting.end());
      block->awaiting.clear();
      ScopedDevice on_device(ordinal_);
      ReportIfFailed(infinirtDeviceSynchronize(), "infinirtDeviceSynchronize (allocator)");
      break;
    }
    block->uses.clear();
    if (!block->awaiting.empty()) {
      awaiting_.push_back(block);
      return;
    }
    Settle(block);
  } catch (const std::exception& error) {
    // Not returned to the cache: the block stays reserved and is never reused (nor can
    // emptyCache release its segment), which is safe.
    Warn((std::string("a block could not be returned to the cache: ") + error.what()).c_str());
  }
}

// A released block nothing waits on any more: kept for its graph, or back in the cache.
void CachingAllocator::Settle(Block* block) {
  if (block->pin_owner != 0 && live_pins_.count(block->pin_owner) != 0) {
    block->held = true;
    held_[block->pin_owner].push_back(block);
    return;
  }
  block->pin_owner = 0;
  Count(stats_.active_bytes, -static_cast<int64_t>(block->size));
  Count(stats_.active_blocks, -1);
  ReturnToCache(block);
}

void CachingAllocator::ReturnToCache(Block* block) { Insert(MergeWithNeighbours(block)); }

Block* CachingAllocator::MergeWithNeighbours(Block* block) {
  for (Block* neighbour : {block->prev, block->next}) {
    if (neighbour == nullptr || !neighbour->in_cache) continue;
    // Blocks of different streams stay apart, unless one has no stream (no pending work).
    if (neighbour->stream != block->stream && neighbour->stream != nullptr &&
        block->stream != nullptr) {
      continue;
    }
    Erase(neighbour);
    if (block->stream == nullptr) block->stream = neighbour->stream;
    if (neighbour == block->prev) {
      block->ptr = neighbour->ptr;
      block->prev = neighbour->prev;
      if (block->prev != nullptr) block->prev->next = block;
      if (segments_.erase(neighbour) != 0) segments_.insert(block);  // the segment's first block
    } else {
      block->next = neighbour->next;
      if (block->next != nullptr) block->next->prev = block;
    }
    block->size += neighbour->size;
    DropBlock(neighbour);
  }
  return block;
}

void CachingAllocator::ProcessAwaiting() {
  for (size_t i = 0; i < awaiting_.size();) {
    Block* block = awaiting_[i];
    auto& events = block->awaiting;
    for (size_t e = 0; e < events.size();) {
      const infinirtError_t status = infinirtEventQuery(events[e]);
      if (status == infinirtErrorNotReady) {
        ++e;
        continue;
      }
      if (status != infinirtSuccess) infinirtGetLastError();
      spare_events_.push_back(events[e]);
      events.erase(events.begin() + static_cast<std::ptrdiff_t>(e));
    }
    if (!events.empty()) {
      ++i;
      continue;
    }
    awaiting_.erase(awaiting_.begin() + static_cast<std::ptrdiff_t>(i));
    Settle(block);
  }
}

// --- Front caches -------------------------------------------------------------------------------

FrontCache* CachingAllocator::OpenFront(infinirtStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  open_fronts_.reserve(open_fronts_.size() + 1);  // nothing below throws after the new cache
  FrontCache* front = nullptr;
  if (closed_fronts_.empty()) {
    front = new FrontCache;
  } else {
    front = closed_fronts_.back();
    closed_fronts_.pop_back();
  }
  {
    std::lock_guard<SpinLock> front_lock(front->lock);
    front->open = true;
    front->stream = stream;
  }
  open_fronts_.push_back(front);
  return front;
}

void CachingAllocator::CloseFront(FrontCache* front) {
  std::lock_guard<std::mutex> lock(mutex_);
  DrainFront(front);
  {
    // Blocks still handed out for it go back to the pools when released (their generation is
    // older), also after another runtime opened the cache again.
    std::lock_guard<SpinLock> front_lock(front->lock);
    FoldCounts(front);
    front->open = false;
    ++front->generation;
    front->stream = nullptr;
  }
  open_fronts_.erase(std::find(open_fronts_.begin(), open_fronts_.end(), front));
  closed_fronts_.push_back(front);  // cannot throw: its room was reserved when it was opened
}

// Under the allocator's lock and the cache's: its changes into the statistics.
void CachingAllocator::FoldCounts(FrontCache* front) {
  FrontCounts& counts = front->counts;
  auto fold = [&](AllocatorStat& stat, FrontCounts::Stat from) {
    stat.current += counts.net[from];
    stat.allocated += counts.added[from];
    stat.freed += counts.taken[from];
  };
  fold(stats_.allocations, FrontCounts::kBlocks);
  fold(stats_.active_blocks, FrontCounts::kBlocks);
  fold(stats_.allocated_bytes, FrontCounts::kBytes);
  fold(stats_.active_bytes, FrontCounts::kBytes);
  fold(stats_.requested_bytes, FrontCounts::kRequested);
  stats_.cache_hits += counts.hits;
  counts = FrontCounts();
}

// Under the allocator's lock: every open front cache's changes into the statistics.
void CachingAllocator::FoldFrontCounts() {
  for (FrontCache* front : open_fronts_) {
    std::lock_guard<SpinLock> front_lock(front->lock);
    FoldCounts(front);
  }
}

// Under the allocator's lock: a front cache's blocks back to the pools. Their release has been
// counted already (in the cache's counts).
void CachingAllocator::DrainFront(FrontCache* front) {
  Block* blocks[FrontCache::kBins * FrontCache::kDepth];
  int count = 0;
  {
    std::lock_guard<SpinLock> front_lock(front->lock);
    count = front->TakeAll(blocks);
  }
  for (int i = 0; i < count; ++i) {
    blocks[i]->allocated = false;
    ReturnToCache(blocks[i]);
  }
}

void CachingAllocator::DrainFronts() {
  for (FrontCache* front : open_fronts_) DrainFront(front);
}

// --- Releasing the cache -----------------------------------------------------------------------

size_t CachingAllocator::ReleaseCachedSegments() {
  DrainFronts();
  ProcessAwaiting();
  size_t released = 0;
  for (auto it = segments_.begin(); it != segments_.end();) {
    Block* segment = *it;
    // Releasable when every block of it is free in the cache (for whatever streams).
    bool unused = true;
    size_t size = 0;
    for (Block* block = segment; block != nullptr; block = block->next) {
      unused = unused && block->in_cache;
      size += block->size;
    }
    if (!unused) {
      ++it;
      continue;
    }
    for (Block* block = segment; block != nullptr;) {
      Block* next = block->next;
      Erase(block);
      if (block != segment) DropBlock(block);
      block = next;
    }
    // infinirtFree waits for the device's work, which may still use a block released before it.
    ReportIfFailed(infinirtFree(segment->ptr), "infinirtFree (allocator)");
    Count(stats_.reserved_bytes, -static_cast<int64_t>(size));
    Count(stats_.segments, -1);
    ++stats_.device_frees;
    released += size;
    DropBlock(segment);
    it = segments_.erase(it);
  }
  return released;
}

void CachingAllocator::CollectGarbageFor(size_t segment_size) {
  if (config_.garbage_collection_threshold <= 0 || device_total_ == 0) return;
  const double limit = config_.garbage_collection_threshold * static_cast<double>(device_total_);
  if (static_cast<double>(stats_.reserved_bytes.current) + static_cast<double>(segment_size) >
      limit) {
    ReleaseCachedSegments();
  }
}

void CachingAllocator::EmptyCache() {
  std::lock_guard<std::mutex> lock(mutex_);
  ReleaseCachedSegments();
}

void CachingAllocator::ReleaseSpareEvents() {
  std::lock_guard<std::mutex> lock(mutex_);
  for (infinirtEvent_t event : spare_events_) {
    ReportIfFailed(infinirtEventDestroy(event), "infinirtEventDestroy (allocator)");
  }
  spare_events_.clear();
}

void CachingAllocator::ThrowOutOfMemory(size_t size, infinirtError_t error) {
  if (error == infinirtErrorMemoryAllocation) ++stats_.ooms;
  check(error, [&] {
    return "allocateMemory(size=" + std::to_string(size) + ") on " + device_.toString() +
           ", after releasing the cache: " + Bytes(stats_.allocated_bytes.current) +
           " allocated, " + Bytes(stats_.reserved_bytes.current) + " reserved in " +
           std::to_string(stats_.segments.current) + " segments";
  });
  __builtin_unreachable();
}

// --- Streams and pin mode ----------------------------------------------------------------------

// Calls visit(block) for every block of every segment.
template <class Visit>
void CachingAllocator::ForEachBlock(Visit visit) {
  for (Block* segment : segments_) {
    for (Block* block = segment; block != nullptr;) {
      Block* next = block->next;
      visit(block);
      block = next;
    }
  }
}

void CachingAllocator::StreamGone(infinirtStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  pinning_.erase(stream);
  // Its free blocks are taken out, then put back one by one, merging with free neighbours of
  // any stream now that nothing is pending on them.
  std::vector<Block*> freed;
  ForEachBlock([&](Block* block) {
    if (block->stream != stream) return;
    if (block->in_cache) {
      Erase(block);  // before its key (the stream) changes
      freed.push_back(block);
    }
    block->stream = nullptr;
  });
  for (Block* block : freed) ReturnToCache(block);
}

uint64_t CachingAllocator::NewPinOwner() {
  static std::atomic<uint64_t> owners{0};
  return ++owners;
}

void CachingAllocator::BeginPin(infinirtStream_t stream, uint64_t owner) {
  std::lock_guard<std::mutex> lock(mutex_);
  pinning_[stream] = owner;
  live_pins_.insert(owner);
}

void CachingAllocator::EndPin(infinirtStream_t stream) {
  std::lock_guard<std::mutex> lock(mutex_);
  pinning_.erase(stream);
}

void CachingAllocator::ReleasePinned(uint64_t owner) {
  std::lock_guard<std::mutex> lock(mutex_);
  live_pins_.erase(owner);
  for (auto it = pinning_.begin(); it != pinning_.end();) {
    it = it->second == owner ? pinning_.erase(it) : std::next(it);
  }
  auto held = held_.find(owner);
  std::vector<Block*> blocks;
  if (held != held_.end()) {
    blocks = std::move(held->second);
    held_.erase(held);
  }
  // Blocks still handed out (or awaiting events) are released the usual way later.
  ForEachBlock([&](Block* block) {
    if (block->pin_owner == owner && !block->held) block->pin_owner = 0;
  });
  for (Block* block : blocks) {
    block->held = false;
    Settle(block);
  }
}

// --- Pinned host memory ------------------------------------------------------------------------

namespace {

// Pinned host memory is not cached: released with infinirtFreeHost.
class PinnedHostOwner final : public Memory::Owner {
 public:
  static PinnedHostOwner instance;
  void release(std::byte* data, void*) noexcept override {
    ReportIfFailed(infinirtFreeHost(data), "infinirtFreeHost");
  }
  void recordStream(void*, infinirtStream_t) override {}  // its release waits for the device
};

PinnedHostOwner PinnedHostOwner::instance;

}  // namespace

std::shared_ptr<Memory> CachingAllocator::AllocatePinnedHost(size_t size) {
  auto call = [&] {
    return "infinirtMallocHost(size=" + std::to_string(size) + ") on " + device_.toString();
  };
  if (size == 0) check(infinirtErrorInvalidValue, call);
  if (device_.type() == INFINI_DEVICE_CPU) {
    static std::once_flag warned;
    std::call_once(warned, [] {
      Warn(
          "allocatePinnedHostMemory on a CPU device: the memory is ordinary host memory "
          "(nothing to pin)");
    });
  }
  void* data = nullptr;
  {
    ScopedDevice on_device(ordinal_);
    check(infinirtMallocHost(&data, size), call);
  }
  try {
    return std::make_shared<Memory>(static_cast<std::byte*>(data), size, device_,
                                    &PinnedHostOwner::instance, nullptr, /*pinned=*/true);
  } catch (...) {
    ReportIfFailed(infinirtFreeHost(data), "infinirtFreeHost");
    throw;
  }
}

// --- Statistics --------------------------------------------------------------------------------

void CachingAllocator::Count(AllocatorStat& stat, int64_t amount) {
  stat.current += amount;
  if (amount > 0) {
    stat.allocated += amount;
  } else {
    stat.freed -= amount;
  }
  stat.peak = std::max(stat.peak, stat.current);
}

AllocatorStats CachingAllocator::Stats() {
  std::lock_guard<std::mutex> lock(mutex_);
  FoldFrontCounts();
  AllocatorStats stats = stats_;
  for (FrontCache* front : open_fronts_) {
    std::lock_guard<SpinLock> front_lock(front->lock);
    stats.kept_bytes += static_cast<int64_t>(front->bytes);
  }
  return stats;
}

void CachingAllocator::ResetPeakStats() {
  std::lock_guard<std::mutex> lock(mutex_);
  FoldFrontCounts();
  for (AllocatorStat* stat :
       {&stats_.allocated_bytes, &stats_.reserved_bytes, &stats_.active_bytes,
        &stats_.inactive_split_bytes, &stats_.requested_bytes, &stats_.allocations,
        &stats_.segments, &stats_.active_blocks, &stats_.inactive_split_blocks}) {
    stat->peak = stat->current;
  }
}

std::string CachingAllocator::Summary() {
  const AllocatorStats stats = Stats();
  std::ostringstream out;
  out << "caching allocator of " << device_ << "\n";
  auto bytes_row = [&](const char* name, const AllocatorStat& stat) {
    out << "  " << name << ": " << Bytes(stat.current) << " (peak " << Bytes(stat.peak) << ")\n";
  };
  auto count_row = [&](const char* name, const AllocatorStat& stat) {
    out << "  " << name << ": " << stat.current << " (peak " << stat.peak << ")\n";
  };
  bytes_row("allocated", stats.allocated_bytes);
  bytes_row("reserved", stats.reserved_bytes);
  bytes_row("active", stats.active_bytes);
  bytes_row("inactive split", stats.inactive_split_bytes);
  out << "  kept by runtimes for their streams: " << Bytes(stats.kept_bytes) << "\n";
  bytes_row("requested", stats.requested_bytes);
  count_row("allocations", stats.allocations);
  count_row("segments", stats.segments);
  out << "  cache hits " << stats.cache_hits << ", misses " << stats.cache_misses << ", retries "
      << stats.alloc_retries << ", out of memory " << stats.ooms << ", device allocations "
      << stats.device_allocs << ", device frees " << stats.device_frees << "\n";
  return out.str();
}

}  // namespace infinirt::detail

// --- The public functions (allocator.hpp) ------------------------------------------------------

namespace infinirt::allocator {

AllocatorStats stats(Device device) {
  auto allocator = detail::CachingAllocator::Existing(device);
  return allocator ? allocator->Stats() : AllocatorStats{};
}

void resetPeakStats(Device device) {
  if (auto allocator = detail::CachingAllocator::Existing(device)) allocator->ResetPeakStats();
}

void emptyCache(Device device) {
  if (auto allocator = detail::CachingAllocator::Existing(device)) allocator->EmptyCache();
}

std::string summary(Device device) {
  auto allocator = detail::CachingAllocator::Existing(device);
  return allocator ? allocator->Summary()
                   : "caching allocator of " + device.toString() + ": nothing allocated yet\n";
}

}  // namespace infinirt::allocator
