// The CPU backend: a complete InfiniRT plugin whose "device" memory is host memory and whose
// streams run on a bounded pool of worker threads (engine.h).
#include <stdlib.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <memory>
#include <new>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>
#include <vector>

#include "device_info.h"
#include "engine.h"
#include "graph_exec.h"
#include "host_memory.h"
#include "infinirt_plugin.h"
#include "memory_pool.h"
#include "plugin_table_builder.h"

namespace infinirt::cpu {
namespace {

constexpr char kName[] = "cpu";
constexpr int kMaxWorkerThreads = 256;
// Asynchronous copies and sets up to this size run in the calling thread when their stream is
// idle (Device::TryRunInline): below it, handing the work to a worker costs the caller more than
// doing it (bench/: "InlineThreshold").
constexpr int64_t kDefaultInlineBytes = 16 << 10;
constexpr int64_t kMaxInlineBytes = int64_t{1} << 30;

struct StreamHandle {
  std::shared_ptr<Stream> stream;
};

// Streams destroyed idle, with nothing else referring to them, kept for the next StreamCreate
// of the same flags: creating a stream is then taking one from here, not building its queue,
// locks and registration again.
class SpareStreams {
 public:
  static constexpr size_t kMaxPerKind = 64;
  ~SpareStreams() {
    for (auto& spares : by_blocking_) {
      for (StreamHandle* handle : spares) delete handle;
    }
  }
  StreamHandle* Take(bool non_blocking) {
    std::lock_guard<SpinLock> lock(lock_);
    auto& spares = by_blocking_[non_blocking];
    if (spares.empty()) return nullptr;
    StreamHandle* handle = spares.back();
    spares.pop_back();
    return handle;
  }
  // False (the caller destroys the stream) when the stream may still be used or there are
  // enough spares.
  bool Keep(StreamHandle* handle) {
    Stream& stream = *handle->stream;
    if (handle->stream.use_count() != 1 || !stream.Idle()) return false;
    // The last other owner (a worker, an event's record) released it with a release
    // decrement; this orders what it did before the stream's reuse.
    std::atomic_thread_fence(std::memory_order_acquire);
    const bool non_blocking = !stream.blocking();
    std::lock_guard<SpinLock> lock(lock_);
    auto& spares = by_blocking_[non_blocking];
    if (spares.size() >= kMaxPerKind) return false;
    if (spares.capacity() == 0) spares.reserve(kMaxPerKind);
    stream.Recycle();
    spares.push_back(handle);
    return true;
  }

 private:
  // Held for a push or a pop: cheaper than a mutex, uncontended (half the cost of the pair).
  class SpinLock {
   public:
    void lock() {
      while (locked_.exchange(true, std::memory_order_acquire)) std::this_thread::yield();
    }
    void unlock() { locked_.store(false, std::memory_order_release); }

   private:
    std::atomic<bool> locked_{false};
  };

  SpinLock lock_;
  std::vector<StreamHandle*> by_blocking_[2];  // [non_blocking]
};

struct PluginState {
  uint64_t epoch = 0;
  int worker_threads = 0;
  size_t inline_bytes = 0;
  std::unique_ptr<WorkerPool> pool;
  std::shared_ptr<Device> device;           // the CPU is one device
  std::unique_ptr<MemoryPool> memory_pool;  // for MallocAsync
  std::unique_ptr<SpareStreams> spare_streams;
};

PluginState* g_state = nullptr;
uint64_t g_epoch = 0;

plugin::PluginLog g_log(kName);

void Log(infinirtLogLevel_t level, const std::string& message) { g_log(level, message); }

// Blocking calls made from a host function would wait for the worker running them.
infinirtError_t RefuseOnWorker(const char* what) {
  Log(INFINIRT_LOG_DEBUG,
      std::string(what) + " called from a host function: not permitted (it would deadlock)");
  return infinirtErrorNotPermitted;
}

// The calling thread's per-thread default stream, created on first use.
Stream& PerThreadStream() {
  struct PerThread {
    uint64_t epoch = 0;
    std::shared_ptr<Stream> stream;
  };
  thread_local PerThread per_thread;
  if (per_thread.epoch != g_state->epoch || !per_thread.stream) {
    per_thread.stream = g_state->device->CreateStream(Stream::Kind::kPerThread, false);
    per_thread.epoch = g_state->epoch;
  }
  return *per_thread.stream;
}

Stream& StreamOf(infinirtPluginStream_t handle) {
  if (handle == INFINIRT_PLUGIN_STREAM_LEGACY) return *g_state->device->legacy();
  if (handle == INFINIRT_PLUGIN_STREAM_PER_THREAD) return PerThreadStream();
  return *static_cast<StreamHandle*>(handle)->stream;
}

Event& EventOf(infinirtPluginEvent_t handle) { return *static_cast<Event*>(handle); }

// The integer `key` of the plugin's config, in [0, max]; `fallback` when absent, or (with an
// error logged) when it is not such an integer.
int64_t IntegerFromConfig(const nlohmann::json& config, const char* key, int64_t max,
                          int64_t fallback, const char* meaning) {
  if (!config.is_object() || !config.contains(key)) return fallback;
  const auto& value = config[key];
  if (!value.is_number_integer() || value.get<int64_t>() < 0 || value.get<int64_t>() > max) {
    Log(INFINIRT_LOG_ERROR, std::string("config: plugins.cpu.") + key +
                                " must be an integer in [0, " + std::to_string(max) + "] (" +
                                meaning + "); using " + std::to_string(fallback));
    return fallback;
  }
  return value.get<int64_t>();
}

void ReadConfig(const char* config_json, PluginState* state) {
  const auto config = config_json == nullptr
                          ? nlohmann::json()
                          : nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  const int automatic = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 4, 64);
  const int64_t threads =
      IntegerFromConfig(config, "worker_threads", kMaxWorkerThreads, 0, "0 = automatic");
  state->worker_threads = threads == 0 ? automatic : static_cast<int>(threads);
  state->inline_bytes = static_cast<size_t>(IntegerFromConfig(
      config, "inline_bytes", kMaxInlineBytes, kDefaultInlineBytes, "0 = never inline"));
}

infinirtError_t AllocateAligned(void** ptr, size_t size) {
  void* memory = AllocateDeviceMemory(size);
  if (memory == nullptr) return infinirtErrorMemoryAllocation;
  *ptr = memory;
  return infinirtSuccess;
}

// Frees after the device's queued work is done, since that work may still use the memory
// (as cudaFree synchronises).
infinirtError_t FreeAfterSync(void* ptr, const char* what) {
  if (OnWorkerThread()) return RefuseOnWorker(what);
  g_state->device->Synchronize();
  FreeDeviceMemory(ptr);
  return infinirtSuccess;
}

// ---------------------------------------------------------------------------------------------
// The entries

// Every entry the CPU backend implements, as a static member: plugin_table_builder.h makes the
// table from them, each in the one guard.
struct CpuPlugin {
  static infinirtError_t Initialize(const infinirtPluginHost* host) {
    g_log.Attach(host);
    auto state = std::make_unique<PluginState>();
    state->epoch = ++g_epoch;
    ReadConfig(host ? host->config_json : nullptr, state.get());
    state->pool = std::make_unique<WorkerPool>(state->worker_threads);
    state->device = std::make_shared<Device>(state->pool.get());
    state->device->CreateLegacyStream();
    state->memory_pool = std::make_unique<MemoryPool>();
    state->spare_streams = std::make_unique<SpareStreams>();
    g_state = state.release();
    return infinirtSuccess;
  }

  static infinirtError_t Finalize() {
    if (g_state == nullptr) return infinirtSuccess;
    std::unique_ptr<PluginState> state(g_state);
    state->spare_streams.reset();
    state->device->Shutdown();
    state->memory_pool.reset();
    state->pool.reset();  // joins the workers
    g_state = nullptr;
    g_log.Detach();
    return infinirtSuccess;
  }

  static infinirtError_t GetInfo(infinirtPluginInfo* info) {
    info->runtime_version = -1;  // built in: no vendor runtime
    std::snprintf(info->runtime_library, sizeof(info->runtime_library), "(built in)");
    info->runtime_missing = 0;
    return infinirtSuccess;
  }

  static infinirtError_t GetDeviceCount(int* count) {
    *count = 1;
    return infinirtSuccess;
  }

  static infinirtError_t GetDeviceProperties(int, struct infinirtDeviceProp* prop) {
    FillDeviceProperties(g_state->worker_threads, prop);
    return infinirtSuccess;
  }

  static infinirtError_t DeviceGetAttribute(int, int* value, enum infinirtDeviceAttr attr) {
    *value = DeviceAttributeValue(attr, g_state->worker_threads);
    return infinirtSuccess;
  }

  static infinirtError_t DriverGetVersion(int, int* version) {
    *version = INFINIRT_CUDA_API_VERSION;
    return infinirtSuccess;
  }

  static infinirtError_t DeviceSynchronize(int) {
    if (OnWorkerThread()) return RefuseOnWorker("DeviceSynchronize");
    g_state->device->Synchronize();
    g_state->memory_pool->ReleaseAboveThreshold();
    return infinirtSuccess;
  }

  static infinirtError_t DeviceReset(int) {
    // The core has already released the device's streams, events and allocations.
    return DeviceSynchronize(0);
  }

  static infinirtError_t MemGetInfo(int, size_t* free_bytes, size_t* total_bytes) {
    const MemoryInfo info = ReadMemoryInfo();
    *free_bytes = info.available;
    *total_bytes = info.total;
    return infinirtSuccess;
  }

  static infinirtError_t Malloc(int, void** ptr, size_t size) { return AllocateAligned(ptr, size); }

  static infinirtError_t Free(int, void* ptr) { return FreeAfterSync(ptr, "Free"); }

  // Host memory is what the CPU device computes on: every host allocation is "pinned".
  static infinirtError_t HostAlloc(int, void** ptr, size_t size, unsigned int) {
    return AllocateAligned(ptr, size);
  }

  static infinirtError_t FreeHost(int, void* ptr) { return FreeAfterSync(ptr, "FreeHost"); }

  static infinirtError_t Memcpy(int, void* dst, const void* src, size_t count,
                                enum infinirtMemcpyKind) {
    if (OnWorkerThread()) return RefuseOnWorker("Memcpy");
    g_state->device->RunOnLegacyAndWait([=] { std::memmove(dst, src, count); },
                                        count <= g_state->inline_bytes);
    return infinirtSuccess;
  }

  static infinirtError_t MemcpyAsync(int, void* dst, const void* src, size_t count,
                                     enum infinirtMemcpyKind kind, infinirtPluginStream_t stream) {
    const bool synchronous = kind == infinirtMemcpyHostToHost;  // as CUDA
    if (synchronous && OnWorkerThread()) return RefuseOnWorker("host-to-host MemcpyAsync");
    Stream& target = StreamOf(stream);
    auto copy = [=] { std::memmove(dst, src, count); };
    uint64_t seq;
    // A synchronous copy makes the caller wait anyway: doing it is never slower.
    if ((synchronous || count <= g_state->inline_bytes) &&
        g_state->device->TryRunInline(target, copy, &seq)) {
      return infinirtSuccess;
    }
    seq = g_state->device->Submit(target, {}, copy);
    if (synchronous) target.WaitFor(seq);
    return infinirtSuccess;
  }

  static infinirtError_t Memset(int, void* ptr, int value, size_t count) {
    if (OnWorkerThread()) return RefuseOnWorker("Memset");
    g_state->device->RunOnLegacyAndWait([=] { std::memset(ptr, value, count); },
                                        count <= g_state->inline_bytes);
    return infinirtSuccess;
  }

  static infinirtError_t MemsetAsync(int, void* ptr, int value, size_t count,
                                     infinirtPluginStream_t stream) {
    Stream& target = StreamOf(stream);
    auto set = [=] { std::memset(ptr, value, count); };
    uint64_t seq;
    if (count <= g_state->inline_bytes && g_state->device->TryRunInline(target, set, &seq)) {
      return infinirtSuccess;
    }
    g_state->device->Submit(target, {}, set);
    return infinirtSuccess;
  }

  static infinirtError_t StreamCreate(int, infinirtPluginStream_t* stream, unsigned int flags) {
    const bool non_blocking = (flags & infinirtStreamNonBlocking) != 0;
    if (StreamHandle* spare = g_state->spare_streams->Take(non_blocking)) {
      *stream = spare;
      return infinirtSuccess;
    }
    auto handle = std::make_unique<StreamHandle>();
    handle->stream = g_state->device->CreateStream(Stream::Kind::kCreated, non_blocking);
    *stream = handle.release();
    return infinirtSuccess;
  }

  // Queued work still runs: the engine holds the stream until it is done.
  static infinirtError_t StreamDestroy(int, infinirtPluginStream_t stream) {
    auto* handle = static_cast<StreamHandle*>(stream);
    if (!g_state->spare_streams->Keep(handle)) delete handle;
    return infinirtSuccess;
  }

  static infinirtError_t StreamSynchronize(int, infinirtPluginStream_t stream) {
    if (OnWorkerThread()) return RefuseOnWorker("StreamSynchronize");
    g_state->device->SynchronizeStream(StreamOf(stream));
    g_state->memory_pool->ReleaseAboveThreshold();
    return infinirtSuccess;
  }

  static infinirtError_t StreamQuery(int, infinirtPluginStream_t stream) {
    return g_state->device->StreamIdle(StreamOf(stream)) ? infinirtSuccess : infinirtErrorNotReady;
  }

  static infinirtError_t StreamWaitEvent(int, infinirtPluginStream_t stream,
                                         infinirtPluginEvent_t event, unsigned int) {
    // The wait uses the event's state now; recording it again later does not change it.
    auto record = EventOf(event).last();
    if (!record) return infinirtSuccess;  // never recorded: nothing to wait for
    Stream& waiting = StreamOf(stream);
    // A wait for a point already reached, on an idle stream, is done at once.
    uint64_t seq;
    if (!record->point.Reached() || !g_state->device->TryRunInline(
                                        waiting, [] {}, &seq)) {
      g_state->device->Submit(waiting, {record->point}, Task());
    }
    waiting.NoteWaitedFor(record->point);
    return infinirtSuccess;
  }

  static infinirtError_t LaunchHostFunc(int, infinirtPluginStream_t stream, infinirtHostFn_t fn,
                                        void* user_data) {
    g_state->device->Submit(StreamOf(stream), {}, [fn, user_data] { fn(user_data); });
    return infinirtSuccess;
  }

  static infinirtError_t EventCreate(int, infinirtPluginEvent_t* event, unsigned int flags) {
    *event = new Event(flags);
    return infinirtSuccess;
  }

  // A pending record still completes; its timestamp is simply dropped.
  static infinirtError_t EventDestroy(int, infinirtPluginEvent_t event) {
    delete static_cast<Event*>(event);
    return infinirtSuccess;
  }

  static infinirtError_t EventRecord(int, infinirtPluginEvent_t event,
                                     infinirtPluginStream_t stream) {
    EventOf(event).Record(*g_state->device, StreamOf(stream));
    return infinirtSuccess;
  }

  static infinirtError_t EventQuery(int, infinirtPluginEvent_t event) {
    auto record = EventOf(event).last();
    return !record || record->point.Reached() ? infinirtSuccess : infinirtErrorNotReady;
  }

  static infinirtError_t EventSynchronize(int, infinirtPluginEvent_t event) {
    auto record = EventOf(event).last();
    if (record && !record->point.Reached()) {
      if (OnWorkerThread()) return RefuseOnWorker("EventSynchronize");
      record->point.stream->WaitFor(record->point.seq);
    }
    // Like every synchronisation, it lets the pool release memory above its threshold.
    g_state->memory_pool->ReleaseAboveThreshold();
    return infinirtSuccess;
  }

  static infinirtError_t EventElapsedTime(int, float* ms, infinirtPluginEvent_t start,
                                          infinirtPluginEvent_t end) {
    Event& first = EventOf(start);
    Event& last = EventOf(end);
    if ((first.flags() | last.flags()) & infinirtEventDisableTiming) {
      return infinirtErrorInvalidResourceHandle;
    }
    auto first_record = first.last();
    auto last_record = last.last();
    if (!first_record || !last_record) return infinirtErrorInvalidResourceHandle;
    if (!first_record->point.Reached() || !last_record->point.Reached()) {
      return infinirtErrorNotReady;
    }
    const int64_t nanoseconds = last_record->reached_ns.load() - first_record->reached_ns.load();
    *ms = static_cast<float>(static_cast<double>(nanoseconds) / 1e6);
    return infinirtSuccess;
  }

  static infinirtError_t MallocAsync(int, void** ptr, size_t size, infinirtPluginStream_t stream) {
    return g_state->memory_pool->Allocate(size, StreamOf(stream), ptr);
  }

  // The block is free once the stream has done everything enqueued on it so far.
  static infinirtError_t FreeAsync(int, void* ptr, infinirtPluginStream_t stream) {
    Stream& freeing = StreamOf(stream);
    return g_state->memory_pool->Free(
        ptr, StreamPoint{freeing.shared_from_this(), freeing.last_enqueued()});
  }

  static infinirtError_t MemPoolGetAttribute(int, enum infinirtMemPoolAttr attr, void* value) {
    return g_state->memory_pool->GetAttribute(attr, value);
  }

  static infinirtError_t MemPoolSetAttribute(int, enum infinirtMemPoolAttr attr, void* value) {
    return g_state->memory_pool->SetAttribute(attr, value);
  }

  static infinirtError_t MemPoolTrimTo(int, size_t min_bytes_to_keep) {
    g_state->memory_pool->TrimTo(min_bytes_to_keep);
    return infinirtSuccess;
  }

  static infinirtError_t GraphInstantiate(int, infinirtPluginGraphExec_t* exec,
                                          const infinirtPluginGraphNode* nodes, size_t node_count,
                                          unsigned long long) {
    *exec = new GraphExecHandle{std::make_shared<GraphExec>(nodes, node_count)};
    return infinirtSuccess;
  }

  static infinirtError_t GraphLaunch(int, infinirtPluginGraphExec_t exec,
                                     infinirtPluginStream_t stream) {
    static_cast<GraphExecHandle*>(exec)->exec->Launch(*g_state->device, StreamOf(stream),
                                                      g_state->inline_bytes);
    return infinirtSuccess;
  }

  // A launch still queued keeps what it runs alive.
  static infinirtError_t GraphExecDestroy(int, infinirtPluginGraphExec_t exec) {
    delete static_cast<GraphExecHandle*>(exec);
    return infinirtSuccess;
  }

  static const plugin::PluginLog& GuardLog() { return g_log; }
};

}  // namespace
}  // namespace infinirt::cpu

INFINIRT_DEFINE_PLUGIN_TABLE(
    infinirt::plugin::MakePluginTable<infinirt::cpu::CpuPlugin>("cpu", INFINI_DEVICE_CPU))
