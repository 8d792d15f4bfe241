// The CPU backend: a complete InfiniRT plugin whose "device" memory is host memory and whose
// streams run on a bounded pool of worker threads (engine.h). It is one device, or N
// (plugins.cpu.devices, INFINIRT_CPU_DEVICES), for multi-device programs on one host: each has its
// own streams, legacy stream, stream-ordered pool and memory accounting, and all share the pool
// of workers.
#include <stdlib.h>
#include <sys/mman.h>
#include <unistd.h>

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
#include "shared_memory.h"
#include "shared_pool.h"

namespace infinirt::cpu {
namespace {

constexpr char kName[] = "cpu";
constexpr int kMaxWorkerThreads = 256;
constexpr int kMaxDevices = 64;
// Asynchronous copies and sets up to this size run in the calling thread when their stream is
// idle (Device::TryRunInline): below it, handing the work to a worker costs the caller more than
// doing it (bench/: "InlineThreshold").
constexpr int64_t kDefaultInlineBytes = 16 << 10;
constexpr int64_t kMaxInlineBytes = int64_t{1} << 30;
// Host work (LaunchHostWork: InfiniOP's CPU operators) up to this size runs in the calling thread
// when its stream is idle. Its measure is not the caller's time in the call but the call's time
// to its result: handing work to a worker and waking the waiting thread afterwards costs tens of
// microseconds on a virtual machine, a few hundredths of an operator that touches 64 MiB (a
// millisecond or two). (ONNX Runtime and PyTorch run every CPU operator in the calling thread.)
constexpr int64_t kDefaultWorkInlineBytes = int64_t{64} << 20;

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

// One CPU device.
struct CpuDevice {
  std::shared_ptr<Device> engine;               // its streams and legacy-stream rules
  std::unique_ptr<MemoryPool> memory_pool;      // for MallocAsync
  std::unique_ptr<CreatedPools> created_pools;  // the program's own (MemPoolCreate)
  std::unique_ptr<SpareStreams> spare_streams;
  std::atomic<size_t> allocated{0};  // bytes Malloc handed out and Free has not taken back
  DeviceLimits limits;
};

struct PluginState {
  uint64_t epoch = 0;
  int worker_threads = 0;
  size_t inline_bytes = 0;
  size_t work_inline_bytes = 0;
  bool shareable_memory = false;  // Malloc gives memory other processes can open (shared_memory.h)
  int device_count = 1;
  std::unique_ptr<WorkerPool> pool;  // shared by every device
  std::vector<std::unique_ptr<CpuDevice>> devices;
};

PluginState* g_state = nullptr;
uint64_t g_epoch = 0;

// The core calls the entries with valid device indices only.
CpuDevice& Dev(int device) { return *g_state->devices[device]; }
Device& EngineOf(int device) { return *g_state->devices[device]->engine; }

plugin::PluginLog g_log(kName);

void Log(infinirtLogLevel_t level, const std::string& message) { g_log(level, message); }

// Blocking calls made from a host function would wait for the worker running them.
infinirtError_t RefuseOnWorker(const char* what) {
  Log(INFINIRT_LOG_DEBUG,
      std::string(what) + " called from a host function: not permitted (it would deadlock)");
  return infinirtErrorNotPermitted;
}

// The calling thread's per-thread default stream of a device, created on first use.
Stream& PerThreadStream(int device) {
  struct PerThread {
    uint64_t epoch = 0;
    std::vector<std::shared_ptr<Stream>> streams;  // by device
  };
  thread_local PerThread per_thread;
  if (per_thread.epoch != g_state->epoch) {
    per_thread.streams.assign(g_state->devices.size(), nullptr);
    per_thread.epoch = g_state->epoch;
  }
  std::shared_ptr<Stream>& stream = per_thread.streams[device];
  if (!stream) stream = EngineOf(device).CreateStream(Stream::Kind::kPerThread, false);
  return *stream;
}

// At a synchronisation, the pools give back what their release thresholds do not let them keep.
void ReleasePooledMemory(int device) {
  Dev(device).memory_pool->ReleaseAboveThreshold();
  Dev(device).created_pools->Synchronized();
}

// A pool of the program's own, as the plugin hands it out. An imported pool (another process's)
// has an empty pool of its own, which never allocates, for its attributes.
struct PoolHandle {
  std::shared_ptr<MemoryPool> pool;
  std::shared_ptr<ImportedPool> imported;
};

// The pool a plugin pool handle names: NULL is the device's default pool.
MemoryPool& PoolOf(int device, infinirtPluginMemPool_t pool) {
  return pool == nullptr ? *Dev(device).memory_pool : *static_cast<PoolHandle*>(pool)->pool;
}

// A stream attribute that was never set: no access policy window, the automatic
// synchronisation policy, the default domain, and the domain map 0 (default) and 1 (remote).
union infinirtLaunchAttributeValue DefaultStreamAttribute(enum infinirtLaunchAttributeID attr) {
  union infinirtLaunchAttributeValue value;
  std::memset(&value, 0, sizeof(value));
  if (attr == infinirtLaunchAttributeSynchronizationPolicy)
    value.syncPolicy = infinirtSyncPolicyAuto;
  if (attr == infinirtLaunchAttributeMemSyncDomainMap) value.memSyncDomainMap.remote = 1;
  return value;
}

// A stream of a device: the legacy and per-thread streams are the device's own.
Stream& StreamOf(int device, infinirtPluginStream_t handle) {
  if (handle == INFINIRT_PLUGIN_STREAM_LEGACY) return *EngineOf(device).legacy();
  if (handle == INFINIRT_PLUGIN_STREAM_PER_THREAD) return PerThreadStream(device);
  return *static_cast<StreamHandle*>(handle)->stream;
}

// Queues a copy or set of `bytes` on a stream: done in the caller when the stream is idle and the
// work small (at most `inline_limit`) or `synchronous` (a host-to-host copy, which CUDA makes
// synchronous: the caller waits for it anyway, so doing it is never slower), otherwise by the
// workers. Synchronous work returns done, and is refused inside a host function, where waiting is
// not allowed (`what` names it).
template <class Work>
infinirtError_t QueueWork(int device, infinirtPluginStream_t stream, bool synchronous, size_t bytes,
                          const char* what, Work work,
                          size_t inline_limit = g_state->inline_bytes) {
  if (synchronous && OnWorkerThread()) return RefuseOnWorker(what);
  Device& engine = EngineOf(device);
  Stream& target = StreamOf(device, stream);
  uint64_t seq;
  if ((synchronous || bytes <= inline_limit) && engine.TryRunInline(target, work, &seq)) {
    return infinirtSuccess;
  }
  seq = engine.Submit(target, {}, std::move(work));
  if (synchronous) target.WaitFor(seq);
  return infinirtSuccess;
}

// An event as the plugin hands it out: the engine's, and for an interprocess event the state it
// shares with other processes, with the shared number of this process's last record (whose
// completion the engine's event tells without a shared wait).
struct CpuEvent {
  explicit CpuEvent(unsigned int flags) : event(flags) {}
  Event event;
  std::shared_ptr<SharedEvent> shared;  // shared with the work that publishes its records
  std::atomic<uint32_t> local_record{0};
};

CpuEvent& CpuEventOf(infinirtPluginEvent_t handle) { return *static_cast<CpuEvent*>(handle); }
Event& EventOf(infinirtPluginEvent_t handle) { return CpuEventOf(handle).event; }

void LogRecorderEnded(const char* what) {
  Log(INFINIRT_LOG_WARN, std::string(what) +
                             ": the process that recorded the interprocess event ended before "
                             "the record completed; waiting no more");
}

// Publishes record `number` of an interprocess event once the stream reaches this point.
void PublishWhenReached(int device, Stream& stream, std::shared_ptr<SharedEvent> shared,
                        uint32_t number) {
  Device& engine = EngineOf(device);
  auto publish = [shared, number] { shared->Complete(number); };
  uint64_t seq;
  if (!engine.TryRunInline(stream, publish, &seq)) engine.Submit(stream, {}, publish);
}

// A stream's wait for a record another process made: a worker blocks until it completes.
infinirtError_t WaitForOtherProcess(int device, infinirtPluginStream_t stream, CpuEvent& event,
                                    uint32_t number) {
  if (event.shared->Reached(number)) return infinirtSuccess;
  std::shared_ptr<SharedEvent> shared = event.shared;
  EngineOf(device).Submit(StreamOf(device, stream), {}, [shared, number] {
    if (!shared->WaitFor(number)) LogRecorderEnded("StreamWaitEvent");
  });
  return infinirtSuccess;
}

// The shared record an interprocess event's wait or query is about: the last one made, in any
// process. *local: it is this process's, which the engine's event follows.
uint32_t SharedRecordToWaitFor(CpuEvent& event, bool* local) {
  const uint32_t number = event.shared->LastRecord();
  *local = number != 0 && number == event.local_record.load(std::memory_order_acquire);
  return number;
}

// The integer `key` of the plugin's config, in [min, max]; `fallback` when absent, or (with an
// error logged) when it is not such an integer.
int64_t IntegerFromConfig(const nlohmann::json& config, const char* key, int64_t min, int64_t max,
                          int64_t fallback, const char* meaning) {
  if (!config.is_object() || !config.contains(key)) return fallback;
  const auto& value = config[key];
  if (!value.is_number_integer() || value.get<int64_t>() < min || value.get<int64_t>() > max) {
    Log(INFINIRT_LOG_ERROR, std::string("config: plugins.cpu.") + key + " must be an integer in [" +
                                std::to_string(min) + ", " + std::to_string(max) + "] (" + meaning +
                                "); using " + std::to_string(fallback));
    return fallback;
  }
  return value.get<int64_t>();
}

// The boolean `key` of the plugin's config; `fallback` when absent, or (with an error logged)
// when it is not a boolean.
bool BooleanFromConfig(const nlohmann::json& config, const char* key, bool fallback,
                       const char* meaning) {
  if (!config.is_object() || !config.contains(key)) return fallback;
  const auto& value = config[key];
  if (!value.is_boolean()) {
    Log(INFINIRT_LOG_ERROR, std::string("config: plugins.cpu.") + key + " must be true or false (" +
                                meaning + "); using " + (fallback ? "true" : "false"));
    return fallback;
  }
  return value.get<bool>();
}

void ReadConfig(const char* config_json, PluginState* state) {
  const auto config = config_json == nullptr
                          ? nlohmann::json()
                          : nlohmann::json::parse(config_json, nullptr, /*allow_exceptions=*/false);
  const int automatic = std::clamp(static_cast<int>(std::thread::hardware_concurrency()), 4, 64);
  const int64_t threads =
      IntegerFromConfig(config, "worker_threads", 0, kMaxWorkerThreads, 0, "0 = automatic");
  state->worker_threads = threads == 0 ? automatic : static_cast<int>(threads);
  state->inline_bytes = static_cast<size_t>(IntegerFromConfig(
      config, "inline_bytes", 0, kMaxInlineBytes, kDefaultInlineBytes, "0 = never inline"));
  state->work_inline_bytes =
      static_cast<size_t>(IntegerFromConfig(config, "work_inline_bytes", 0, kMaxInlineBytes,
                                            kDefaultWorkInlineBytes, "0 = never inline"));
  state->device_count =
      static_cast<int>(IntegerFromConfig(config, "devices", 1, kMaxDevices, 1, "the CPU devices"));
  state->shareable_memory = BooleanFromConfig(config, "shareable_memory", false,
                                              "Malloc gives memory other processes can open");
}

size_t PageSize() {
  static const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  return page;
}

// Whether every page of [ptr, ptr + size) is mapped: mincore fails with ENOMEM on a range with
// an unmapped page.
bool AllPagesMapped(const void* ptr, size_t size) {
  const uintptr_t first = reinterpret_cast<uintptr_t>(ptr) & ~uintptr_t{PageSize() - 1};
  const uintptr_t end = reinterpret_cast<uintptr_t>(ptr) + size;
  const size_t pages = (end - first + PageSize() - 1) / PageSize();
  std::vector<unsigned char> residency(std::min<size_t>(pages, 4096));
  for (uintptr_t at = first; at < end; at += residency.size() * PageSize()) {
    const size_t length = std::min<uintptr_t>(end - at, residency.size() * PageSize());
    if (mincore(reinterpret_cast<void*>(at), length, residency.data()) != 0 && errno == ENOMEM) {
      return false;
    }
  }
  return true;
}

infinirtError_t AllocateAligned(void** ptr, size_t size) {
  void* memory = AllocateDeviceMemory(size);
  if (memory == nullptr) return infinirtErrorMemoryAllocation;
  *ptr = memory;
  return infinirtSuccess;
}

// Frees after the device's queued work is done, since that work may still use the memory
// (as cudaFree synchronises).
infinirtError_t FreeAfterSync(int device, void* ptr, const char* what) {
  if (OnWorkerThread()) return RefuseOnWorker(what);
  EngineOf(device).Synchronize();
  if (ptr != nullptr && IsSharedMemory(ptr)) {
    FreeSharedMemory(ptr);
  } else {
    FreeDeviceMemory(ptr);
  }
  return infinirtSuccess;
}

// Device memory for Malloc: shareable with other processes when the config says so, and where
// the memory cannot be had that way (past the descriptor limit, say), unshared.
infinirtError_t AllocateForMalloc(void** ptr, size_t size) {
  if (g_state->shareable_memory) {
    if (void* shared = AllocateSharedMemory(size)) {
      *ptr = shared;
      return infinirtSuccess;
    }
    Log(INFINIRT_LOG_DEBUG, "Malloc: no shareable memory for " + std::to_string(size) + " bytes (" +
                                std::strerror(errno) + "); giving unshared memory");
  }
  return AllocateAligned(ptr, size);
}

// A device's share of the host's memory: with N devices, each reports 1/N of it, less what it
// holds (Malloc and its stream-ordered pool), and never more than the host has available. One
// device reports the host's figures as they are.
void DeviceMemoryInfo(int device, size_t* free_bytes, size_t* total_bytes) {
  const MemoryInfo host = ReadMemoryInfo();
  if (g_state->device_count == 1) {
    *free_bytes = host.available;
    *total_bytes = host.total;
    return;
  }
  CpuDevice& d = Dev(device);
  uint64_t pooled = 0;
  d.memory_pool->GetAttribute(infinirtMemPoolAttrReservedMemCurrent, &pooled);
  const size_t share = host.total / static_cast<size_t>(g_state->device_count);
  const size_t held = d.allocated.load(std::memory_order_relaxed) + static_cast<size_t>(pooled);
  *total_bytes = share;
  *free_bytes = std::min(host.available, share > held ? share - held : 0);
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
    for (int i = 0; i < state->device_count; ++i) {
      auto device = std::make_unique<CpuDevice>();
      device->engine = std::make_shared<Device>(state->pool.get());
      device->engine->CreateLegacyStream();
      device->memory_pool = std::make_unique<MemoryPool>();
      device->created_pools = std::make_unique<CreatedPools>();
      device->spare_streams = std::make_unique<SpareStreams>();
      state->devices.push_back(std::move(device));
    }
    g_state = state.release();
    return infinirtSuccess;
  }

  static infinirtError_t Finalize() {
    if (g_state == nullptr) return infinirtSuccess;
    std::unique_ptr<PluginState> state(g_state);
    for (auto& device : state->devices) {
      device->spare_streams.reset();
      device->engine->Shutdown();
      device->memory_pool.reset();
      device->created_pools.reset();
    }
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
    *count = g_state->device_count;
    return infinirtSuccess;
  }

  static infinirtError_t GetDeviceProperties(int device, struct infinirtDeviceProp* prop) {
    FillDeviceProperties(device, g_state->device_count, prop);
    return infinirtSuccess;
  }

  static infinirtError_t DeviceGetAttribute(int device, int* value, enum infinirtDeviceAttr attr) {
    *value = DeviceAttributeValue(attr, DeviceFacts{device, g_state->worker_threads});
    return infinirtSuccess;
  }

  static infinirtError_t DriverGetVersion(int, int* version) {
    *version = INFINIRT_CUDA_API_VERSION;
    return infinirtSuccess;
  }

  static infinirtError_t DeviceSynchronize(int device) {
    if (OnWorkerThread()) return RefuseOnWorker("DeviceSynchronize");
    EngineOf(device).Synchronize();
    ReleasePooledMemory(device);
    return infinirtSuccess;
  }

  static infinirtError_t DeviceReset(int device) {
    // The core has already released the device's streams, events and allocations.
    return DeviceSynchronize(device);
  }

  static infinirtError_t MemGetInfo(int device, size_t* free_bytes, size_t* total_bytes) {
    DeviceMemoryInfo(device, free_bytes, total_bytes);
    return infinirtSuccess;
  }

  static infinirtError_t Malloc(int device, void** ptr, size_t size) {
    if (const infinirtError_t error = AllocateForMalloc(ptr, size)) return error;
    Dev(device).allocated.fetch_add(DeviceMemorySize(*ptr), std::memory_order_relaxed);
    return infinirtSuccess;
  }

  static infinirtError_t Free(int device, void* ptr) {
    const size_t size = DeviceMemorySize(ptr);
    if (const infinirtError_t error = FreeAfterSync(device, ptr, "Free")) return error;
    Dev(device).allocated.fetch_sub(size, std::memory_order_relaxed);
    return infinirtSuccess;
  }

  // Host memory is what the CPU device computes on: every host allocation is "pinned".
  static infinirtError_t HostAlloc(int, void** ptr, size_t size, unsigned int) {
    return AllocateAligned(ptr, size);
  }

  static infinirtError_t FreeHost(int device, void* ptr) {
    return FreeAfterSync(device, ptr, "FreeHost");
  }

  // Registering the program's host memory: the CPU device computes on host memory, so there is
  // nothing to lock or map, and its address is the device's. A range with pages that are not
  // mapped is refused, as a GPU driver's pinning refuses it.
  static infinirtError_t HostRegister(int, void* ptr, size_t size, unsigned int) {
    if (!AllPagesMapped(ptr, size)) {
      Log(INFINIRT_LOG_DEBUG, "HostRegister: the range has pages that are not mapped");
      return infinirtErrorInvalidValue;
    }
    return infinirtSuccess;
  }
  static infinirtError_t HostUnregister(int device, void*) {
    // The work queued before may still use the memory, which goes back to the program.
    return DeviceSynchronize(device);
  }
  static infinirtError_t HostGetDevicePointer(int, void** device_ptr, void* host_ptr) {
    *device_ptr = host_ptr;
    return infinirtSuccess;
  }

  static infinirtError_t DeviceGetLimit(int device, enum infinirtLimit limit, size_t* value) {
    return Dev(device).limits.Get(limit, value);
  }
  static infinirtError_t DeviceSetLimit(int device, enum infinirtLimit limit, size_t value) {
    return Dev(device).limits.Set(limit, value);
  }

  // Managed memory is device memory, which on the CPU is the host's already: there is nothing to
  // move or advise.
  // Page-aligned, as NVIDIA's managed memory is (it migrates by pages).
  static infinirtError_t MallocManaged(int device, void** ptr, size_t size, unsigned int) {
    void* memory = AllocateDeviceMemory(size, PageSize());
    if (memory == nullptr) return infinirtErrorMemoryAllocation;
    *ptr = memory;
    Dev(device).allocated.fetch_add(size, std::memory_order_relaxed);
    return infinirtSuccess;
  }
  static infinirtError_t MemPrefetchAsync(int, const void*, size_t, struct infinirtMemLocation,
                                          infinirtPluginStream_t) {
    return infinirtSuccess;
  }
  static infinirtError_t MemAdvise(int, const void*, size_t, enum infinirtMemoryAdvise,
                                   struct infinirtMemLocation) {
    return infinirtSuccess;
  }

  // Every CPU device computes on the host's memory: each reaches the others' memory, enabled
  // or not, with the processor's own atomics.
  static infinirtError_t DeviceCanAccessPeer(int, int* can_access, int) {
    *can_access = 1;
    return infinirtSuccess;
  }
  static infinirtError_t DeviceEnablePeerAccess(int, int) { return infinirtSuccess; }
  static infinirtError_t DeviceDisablePeerAccess(int, int) { return infinirtSuccess; }
  static infinirtError_t DeviceGetP2PAttribute(int, int* value, enum infinirtDeviceP2PAttr attr,
                                               int) {
    *value = attr == infinirtDevP2PAttrAccessSupported ||
             attr == infinirtDevP2PAttrNativeAtomicSupported;
    return infinirtSuccess;
  }

  // The split of cache and scratch memory is the processor's, fixed: a preference is accepted
  // and changes nothing, as CUDA does on devices whose split is fixed.
  static infinirtError_t DeviceGetCacheConfig(int, enum infinirtFuncCache* config) {
    *config = infinirtFuncCachePreferNone;
    return infinirtSuccess;
  }
  static infinirtError_t DeviceSetCacheConfig(int, enum infinirtFuncCache) {
    return infinirtSuccess;
  }

  static infinirtError_t Memcpy(int device, void* dst, const void* src, size_t count,
                                enum infinirtMemcpyKind) {
    if (OnWorkerThread()) return RefuseOnWorker("Memcpy");
    EngineOf(device).RunOnLegacyAndWait([=] { std::memmove(dst, src, count); },
                                        count <= g_state->inline_bytes);
    return infinirtSuccess;
  }

  static infinirtError_t MemcpyAsync(int device, void* dst, const void* src, size_t count,
                                     enum infinirtMemcpyKind kind, infinirtPluginStream_t stream) {
    return QueueWork(device, stream, kind == infinirtMemcpyHostToHost, count,
                     "host-to-host MemcpyAsync", [=] { std::memmove(dst, src, count); });
  }

  static infinirtError_t Memcpy2DAsync(int device, void* dst, size_t dpitch, const void* src,
                                       size_t spitch, size_t width, size_t height,
                                       enum infinirtMemcpyKind kind,
                                       infinirtPluginStream_t stream) {
    return QueueWork(device, stream, kind == infinirtMemcpyHostToHost, width * height,
                     "host-to-host Memcpy2DAsync", [=] {
                       auto* to = static_cast<unsigned char*>(dst);
                       auto* from = static_cast<const unsigned char*>(src);
                       for (size_t row = 0; row < height; ++row) {
                         std::memmove(to + row * dpitch, from + row * spitch, width);
                       }
                     });
  }

  static infinirtError_t Memset(int device, void* ptr, int value, size_t count) {
    if (OnWorkerThread()) return RefuseOnWorker("Memset");
    EngineOf(device).RunOnLegacyAndWait([=] { std::memset(ptr, value, count); },
                                        count <= g_state->inline_bytes);
    return infinirtSuccess;
  }

  static infinirtError_t MemsetAsync(int device, void* ptr, int value, size_t count,
                                     infinirtPluginStream_t stream) {
    return QueueWork(device, stream, /*synchronous=*/false, count, "MemsetAsync",
                     [=] { std::memset(ptr, value, count); });
  }

  static infinirtError_t MemsetElementsAsync(int device, void* ptr, unsigned int value,
                                             unsigned int element_size, size_t count,
                                             infinirtPluginStream_t stream) {
    if (element_size != 2 && element_size != 4) return infinirtErrorInvalidValue;
    return QueueWork(device, stream, /*synchronous=*/false, count * element_size,
                     "MemsetElementsAsync", [=] { FillElements(ptr, value, element_size, count); });
  }

  static infinirtError_t Memset2DAsync(int device, void* ptr, size_t pitch, int value, size_t width,
                                       size_t height, infinirtPluginStream_t stream) {
    return QueueWork(device, stream, /*synchronous=*/false, width * height, "Memset2DAsync", [=] {
      auto* rows = static_cast<unsigned char*>(ptr);
      for (size_t row = 0; row < height; ++row) {
        std::memset(rows + row * pitch, value, width);
      }
    });
  }

  static infinirtError_t StreamCreate(int device, infinirtPluginStream_t* stream,
                                      unsigned int flags) {
    return StreamCreateWithPriority(device, stream, flags, kLeastStreamPriority);
  }

  // Priorities are the worker pool's order of picking ready streams (engine.h).
  static infinirtError_t DeviceGetStreamPriorityRange(int, int* least, int* greatest) {
    *least = kLeastStreamPriority;
    *greatest = kGreatestStreamPriority;
    return infinirtSuccess;
  }

  static infinirtError_t StreamCreateWithPriority(int device, infinirtPluginStream_t* stream,
                                                  unsigned int flags, int priority) {
    const bool non_blocking = (flags & infinirtStreamNonBlocking) != 0;
    StreamHandle* handle = Dev(device).spare_streams->Take(non_blocking);
    if (handle == nullptr) {
      auto made = std::make_unique<StreamHandle>();
      made->stream = EngineOf(device).CreateStream(Stream::Kind::kCreated, non_blocking);
      handle = made.release();
    }
    handle->stream->set_priority(
        std::min(kLeastStreamPriority, std::max(kGreatestStreamPriority, priority)));
    *stream = handle;
    return infinirtSuccess;
  }

  // The priority is the worker pool's; the other stream attributes are hints for a GPU's cache
  // and host waits, kept and given back (a host thread's wait does not change with them).
  static infinirtError_t StreamGetAttribute(int device, infinirtPluginStream_t stream,
                                            enum infinirtLaunchAttributeID attr,
                                            union infinirtLaunchAttributeValue* value) {
    Stream& target = StreamOf(device, stream);
    if (attr == infinirtLaunchAttributePriority) {
      value->priority = target.priority();
      return infinirtSuccess;
    }
    Stream::KeptValue kept;
    if (target.Kept(attr, &kept)) {
      static_assert(sizeof(kept) == sizeof(*value));
      std::memcpy(value, kept.data(), sizeof(*value));
    } else {
      *value = DefaultStreamAttribute(attr);
    }
    return infinirtSuccess;
  }

  static infinirtError_t StreamSetAttribute(int device, infinirtPluginStream_t stream,
                                            enum infinirtLaunchAttributeID attr,
                                            const union infinirtLaunchAttributeValue* value) {
    Stream& target = StreamOf(device, stream);
    if (attr == infinirtLaunchAttributePriority) {
      // Clamped here too: the pool indexes its queues by priority.
      target.set_priority(
          std::min(kLeastStreamPriority, std::max(kGreatestStreamPriority, value->priority)));
      return infinirtSuccess;
    }
    Stream::KeptValue kept;
    std::memcpy(kept.data(), value, sizeof(*value));
    target.Keep(attr, kept);
    return infinirtSuccess;
  }

  // Queued work still runs: the engine holds the stream until it is done.
  static infinirtError_t StreamDestroy(int device, infinirtPluginStream_t stream) {
    auto* handle = static_cast<StreamHandle*>(stream);
    if (!Dev(device).spare_streams->Keep(handle)) delete handle;
    return infinirtSuccess;
  }

  static infinirtError_t StreamSynchronize(int device, infinirtPluginStream_t stream) {
    if (OnWorkerThread()) return RefuseOnWorker("StreamSynchronize");
    EngineOf(device).SynchronizeStream(StreamOf(device, stream));
    ReleasePooledMemory(device);
    return infinirtSuccess;
  }

  static infinirtError_t StreamQuery(int device, infinirtPluginStream_t stream) {
    return EngineOf(device).StreamIdle(StreamOf(device, stream)) ? infinirtSuccess
                                                                 : infinirtErrorNotReady;
  }

  // The event may be another device's: a stream waits on any stream's point.
  static infinirtError_t StreamWaitEvent(int device, infinirtPluginStream_t stream,
                                         infinirtPluginEvent_t event, unsigned int) {
    CpuEvent& waited = CpuEventOf(event);
    if (waited.shared) {
      bool local;
      const uint32_t number = SharedRecordToWaitFor(waited, &local);
      if (!local) return WaitForOtherProcess(device, stream, waited, number);
    }
    // The wait uses the event's state now; recording it again later does not change it.
    auto record = waited.event.last();
    if (!record) return infinirtSuccess;  // never recorded: nothing to wait for
    Device& engine = EngineOf(device);
    Stream& waiting = StreamOf(device, stream);
    // A wait for a point already reached, on an idle stream, is done at once.
    uint64_t seq;
    if (!record->point.Reached() || !engine.TryRunInline(
                                        waiting, [] {}, &seq)) {
      engine.Submit(waiting, {record->point}, Task());
    }
    waiting.NoteWaitedFor(record->point);
    return infinirtSuccess;
  }

  static infinirtError_t LaunchHostFunc(int device, infinirtPluginStream_t stream,
                                        infinirtHostFn_t fn, void* user_data) {
    EngineOf(device).Submit(StreamOf(device, stream), {}, [fn, user_data] { fn(user_data); });
    return infinirtSuccess;
  }

  // Small host work on an idle stream runs in the caller, as small copies do.
  static infinirtError_t LaunchHostWork(int device, infinirtPluginStream_t stream,
                                        infinirtHostFn_t fn, void* user_data, size_t bytes) {
    return QueueWork(
        device, stream, /*synchronous=*/false, bytes, "LaunchHostWork",
        [fn, user_data] { fn(user_data); }, g_state->work_inline_bytes);
  }

  static infinirtError_t EventCreate(int, infinirtPluginEvent_t* event, unsigned int flags) {
    auto created = std::make_unique<CpuEvent>(flags);
    if (flags & infinirtEventInterprocess) {
      created->shared.reset(SharedEvent::Create());
      if (!created->shared) {
        Log(INFINIRT_LOG_DEBUG, std::string("EventCreate: no shared page for an interprocess "
                                            "event: ") +
                                    std::strerror(errno));
        return infinirtErrorMemoryAllocation;
      }
    }
    *event = created.release();
    return infinirtSuccess;
  }

  // A pending record still completes; its timestamp is simply dropped.
  static infinirtError_t EventDestroy(int, infinirtPluginEvent_t event) {
    delete static_cast<CpuEvent*>(event);
    return infinirtSuccess;
  }

  // An interprocess event's record also takes a shared number, published when the stream
  // reaches it.
  static infinirtError_t EventRecord(int device, infinirtPluginEvent_t event,
                                     infinirtPluginStream_t stream) {
    CpuEvent& recorded = CpuEventOf(event);
    Stream& target = StreamOf(device, stream);
    recorded.event.Record(EngineOf(device), target);
    if (recorded.shared) {
      const uint32_t number = recorded.shared->BeginRecord();
      recorded.local_record.store(number, std::memory_order_release);
      PublishWhenReached(device, target, recorded.shared, number);
    }
    return infinirtSuccess;
  }

  static infinirtError_t EventQuery(int, infinirtPluginEvent_t event) {
    CpuEvent& queried = CpuEventOf(event);
    if (queried.shared) {
      bool local;
      const uint32_t number = SharedRecordToWaitFor(queried, &local);
      if (!local) return queried.shared->Reached(number) ? infinirtSuccess : infinirtErrorNotReady;
    }
    auto record = queried.event.last();
    return !record || record->point.Reached() ? infinirtSuccess : infinirtErrorNotReady;
  }

  static infinirtError_t EventSynchronize(int device, infinirtPluginEvent_t event) {
    CpuEvent& waited = CpuEventOf(event);
    if (waited.shared) {
      bool local;
      const uint32_t number = SharedRecordToWaitFor(waited, &local);
      if (!local) {
        if (!waited.shared->Reached(number)) {
          if (OnWorkerThread()) return RefuseOnWorker("EventSynchronize");
          if (!waited.shared->WaitFor(number)) LogRecorderEnded("EventSynchronize");
        }
        ReleasePooledMemory(device);
        return infinirtSuccess;
      }
    }
    auto record = waited.event.last();
    if (record && !record->point.Reached()) {
      if (OnWorkerThread()) return RefuseOnWorker("EventSynchronize");
      record->point.stream->WaitFor(record->point.seq);
    }
    // Like every synchronisation, it lets the pool release memory above its threshold.
    ReleasePooledMemory(device);
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

  // Interprocess sharing (shared_memory.h): memory Malloc made shareable, and events created
  // with infinirtEventInterprocess.
  static infinirtError_t IpcGetMemHandle(int, infinirtIpcMemHandle_t* handle, void* ptr) {
    if (!IsSharedMemory(ptr)) {
      Log(INFINIRT_LOG_DEBUG,
          "IpcGetMemHandle: the memory is not shareable; the CPU backend's Malloc gives memory "
          "other processes can open when plugins.cpu.shareable_memory is true "
          "(INFINIRT_CPU_SHAREABLE_MEMORY=1)");
      return infinirtErrorNotSupported;
    }
    ExportSharedMemory(ptr, handle);
    return infinirtSuccess;
  }
  static infinirtError_t IpcOpenMemHandle(int, void** ptr, size_t* size,
                                          const infinirtIpcMemHandle_t* handle, unsigned int) {
    std::string why;
    const infinirtError_t error = OpenSharedMemory(*handle, ptr, size, &why);
    if (error != infinirtSuccess) Log(INFINIRT_LOG_DEBUG, "IpcOpenMemHandle: " + why);
    return error;
  }
  // The device's queued work may still use the memory.
  static infinirtError_t IpcCloseMemHandle(int device, void* ptr) {
    if (OnWorkerThread()) return RefuseOnWorker("IpcCloseMemHandle");
    EngineOf(device).Synchronize();
    return CloseSharedMemory(ptr) ? infinirtSuccess : infinirtErrorInvalidValue;
  }
  static infinirtError_t IpcGetEventHandle(int, infinirtIpcEventHandle_t* handle,
                                           infinirtPluginEvent_t event) {
    CpuEvent& exported = CpuEventOf(event);
    if (!exported.shared) return infinirtErrorInvalidResourceHandle;
    exported.shared->Export(handle);
    return infinirtSuccess;
  }
  static infinirtError_t IpcOpenEventHandle(int, infinirtPluginEvent_t* event,
                                            const infinirtIpcEventHandle_t* handle) {
    SharedEvent* shared = nullptr;
    std::string why;
    if (const infinirtError_t error = SharedEvent::Open(*handle, &shared, &why)) {
      Log(INFINIRT_LOG_DEBUG, "IpcOpenEventHandle: " + why);
      return error;
    }
    auto opened =
        std::make_unique<CpuEvent>(infinirtEventInterprocess | infinirtEventDisableTiming);
    opened->shared.reset(shared);
    *event = opened.release();
    return infinirtSuccess;
  }

  static infinirtError_t MallocAsync(int device, void** ptr, size_t size,
                                     infinirtPluginStream_t stream) {
    return Dev(device).memory_pool->Allocate(size, StreamOf(device, stream), ptr);
  }

  // The block is free once the stream has done everything enqueued on it so far, and what it
  // follows implicitly (the legacy stream's ordering with the blocking streams): a copy queued
  // on a blocking stream before a FreeAsync on the legacy stream still uses the block.
  static infinirtError_t FreeAsync(int device, void* ptr, infinirtPluginStream_t stream) {
    StreamPoint point = EngineOf(device).PointAfterQueued(StreamOf(device, stream));
    infinirtError_t freed;
    if (Dev(device).created_pools->Free(ptr, point, &freed)) return freed;
    return Dev(device).memory_pool->Free(ptr, std::move(point));
  }

  // The pool's own device always has access; maxSize bounds what it holds. A pool other
  // processes open takes its blocks from a shared file (shared_pool.h).
  static infinirtError_t MemPoolCreate(int device, infinirtPluginMemPool_t* pool,
                                       const struct infinirtMemPoolProps* props) {
    std::shared_ptr<SharedArena> arena;
    if (props->handleTypes == infinirtMemHandleTypePosixFileDescriptor) {
      arena = SharedArena::Create(props->maxSize);
      if (!arena) return infinirtErrorMemoryAllocation;
    } else if (props->handleTypes != infinirtMemHandleTypeNone) {
      return infinirtErrorNotSupported;
    }
    auto handle = std::make_unique<PoolHandle>();
    handle->pool = std::make_shared<MemoryPool>(props->maxSize, std::move(arena));
    handle->pool->SetAccess(device, infinirtMemAccessFlagsProtReadWrite);
    Dev(device).created_pools->Add(handle->pool);
    *pool = handle.release();
    return infinirtSuccess;
  }

  // An imported pool's mapping goes once the work queued before is done (it may use imported
  // memory) and no allocation of it is imported any more.
  static infinirtError_t MemPoolDestroy(int device, infinirtPluginMemPool_t pool) {
    auto* handle = static_cast<PoolHandle*>(pool);
    if (handle->imported) {
      if (OnWorkerThread()) return RefuseOnWorker("MemPoolDestroy");
      EngineOf(device).Synchronize();
    }
    std::unique_ptr<PoolHandle> owned(handle);
    Dev(device).created_pools->Retire(owned->pool);
    return infinirtSuccess;
  }

  static infinirtError_t MemPoolExportToShareableHandle(int, void* shareable,
                                                        infinirtPluginMemPool_t pool,
                                                        enum infinirtMemAllocationHandleType type,
                                                        unsigned int) {
    const auto* handle = static_cast<PoolHandle*>(pool);
    if (handle == nullptr || !handle->pool->arena() ||
        type != infinirtMemHandleTypePosixFileDescriptor) {
      return infinirtErrorInvalidValue;  // not a pool other processes open, in that way
    }
    const int fd = handle->pool->arena()->DuplicateDescriptor();
    if (fd < 0) return infinirtErrorMemoryAllocation;
    *static_cast<int*>(shareable) = fd;
    return infinirtSuccess;
  }

  static infinirtError_t MemPoolImportFromShareableHandle(int device, infinirtPluginMemPool_t* pool,
                                                          void* shareable,
                                                          enum infinirtMemAllocationHandleType type,
                                                          unsigned int) {
    if (type != infinirtMemHandleTypePosixFileDescriptor) return infinirtErrorNotSupported;
    const auto fd = static_cast<int>(reinterpret_cast<intptr_t>(shareable));
    auto handle = std::make_unique<PoolHandle>();
    std::string why;
    if (const infinirtError_t error = ImportedPool::Open(fd, &handle->imported, &why)) {
      Log(INFINIRT_LOG_DEBUG, "MemPoolImportFromShareableHandle: " + why);
      return error;
    }
    handle->pool = std::make_shared<MemoryPool>();
    Dev(device).created_pools->Add(handle->pool);
    *pool = handle.release();
    return infinirtSuccess;
  }

  static infinirtError_t MemPoolExportPointer(int device, struct infinirtMemPoolPtrExportData* data,
                                              void* ptr) {
    std::shared_ptr<MemoryPool> pool;
    if (!Dev(device).created_pools->FindAllocation(ptr, &pool) || !pool->ExportPointer(ptr, data)) {
      return infinirtErrorInvalidValue;  // not an allocation of a shareable pool
    }
    return infinirtSuccess;
  }

  static infinirtError_t MemPoolImportPointer(int device, void** ptr, size_t* size,
                                              infinirtPluginMemPool_t pool,
                                              struct infinirtMemPoolPtrExportData* data) {
    const auto* handle = static_cast<PoolHandle*>(pool);
    if (!handle->imported) return infinirtErrorInvalidValue;  // not an imported pool
    if (const infinirtError_t error = handle->imported->Import(*data, ptr, size)) return error;
    Dev(device).created_pools->AddImport(*ptr, handle->imported);
    return infinirtSuccess;
  }

  static infinirtError_t MallocFromPoolAsync(int device, void** ptr, size_t size,
                                             infinirtPluginMemPool_t pool,
                                             infinirtPluginStream_t stream) {
    return Dev(device).created_pools->Allocate(static_cast<PoolHandle*>(pool)->pool, size,
                                               StreamOf(device, stream), ptr);
  }

  static infinirtError_t PoolGetAttribute(int device, infinirtPluginMemPool_t pool,
                                          enum infinirtMemPoolAttr attr, void* value) {
    return PoolOf(device, pool).GetAttribute(attr, value);
  }

  static infinirtError_t PoolSetAttribute(int device, infinirtPluginMemPool_t pool,
                                          enum infinirtMemPoolAttr attr, void* value) {
    return PoolOf(device, pool).SetAttribute(attr, value);
  }

  static infinirtError_t PoolTrimTo(int device, infinirtPluginMemPool_t pool,
                                    size_t min_bytes_to_keep) {
    PoolOf(device, pool).TrimTo(min_bytes_to_keep);
    return infinirtSuccess;
  }

  // Every device of the backend can reach every pool (host memory); the grants are kept.
  static infinirtError_t MemPoolSetAccess(int device, infinirtPluginMemPool_t pool,
                                          const struct infinirtMemAccessDesc* descs, size_t count) {
    MemoryPool& target = PoolOf(device, pool);
    for (size_t i = 0; i < count; ++i) target.SetAccess(descs[i].location.id, descs[i].flags);
    return infinirtSuccess;
  }

  static infinirtError_t MemPoolGetAccess(int device, enum infinirtMemAccessFlags* flags,
                                          infinirtPluginMemPool_t pool,
                                          const struct infinirtMemLocation* location) {
    *flags = location->id == device ? infinirtMemAccessFlagsProtReadWrite
                                    : PoolOf(device, pool).Access(location->id);
    return infinirtSuccess;
  }

  static infinirtError_t MemPoolGetAttribute(int device, enum infinirtMemPoolAttr attr,
                                             void* value) {
    return Dev(device).memory_pool->GetAttribute(attr, value);
  }

  static infinirtError_t MemPoolSetAttribute(int device, enum infinirtMemPoolAttr attr,
                                             void* value) {
    return Dev(device).memory_pool->SetAttribute(attr, value);
  }

  static infinirtError_t MemPoolTrimTo(int device, size_t min_bytes_to_keep) {
    Dev(device).memory_pool->TrimTo(min_bytes_to_keep);
    return infinirtSuccess;
  }

  static infinirtError_t GraphInstantiate(int, infinirtPluginGraphExec_t* exec,
                                          const infinirtPluginGraphNode* nodes, size_t node_count,
                                          unsigned long long) {
    // Event records are replayed by the core, which records them in stream order.
    for (size_t i = 0; i < node_count; ++i) {
      if (nodes[i].kind > INFINIRT_GRAPH_NODE_NATIVE &&
          nodes[i].kind != INFINIRT_GRAPH_NODE_MEMSET_ELEMENTS) {
        return infinirtErrorNotSupported;
      }
    }
    *exec = new GraphExecHandle{std::make_shared<GraphExec>(nodes, node_count)};
    return infinirtSuccess;
  }

  static infinirtError_t GraphLaunch(int device, infinirtPluginGraphExec_t exec,
                                     infinirtPluginStream_t stream) {
    static_cast<GraphExecHandle*>(exec)->exec->Launch(EngineOf(device), StreamOf(device, stream),
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
