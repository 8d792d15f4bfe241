// The benchmarks, each beside its baseline (bench_support.cc lists the pairs). Everything runs
// on the CPU backend; every benchmark measures wall-clock time, since the work of a stream
// runs on the backend's worker threads.
#include <benchmark/benchmark.h>
#include <dlfcn.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <chrono>
#include <condition_variable>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <functional>
#include <mutex>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "bench_support.h"
#include "infinirt.h"

// bench/trivial_export.c, in a shared library of its own.
extern "C" int infinirt_bench_trivial(int* value);

namespace infinirt::bench {

// The public-API halves of pairs that bench/cudart_bench.cc runs too (bench_support.h).

void ApiStreamQuery(benchmark::State& state) {
  infinirtStream_t stream = nullptr;
  Check(state, infinirtStreamCreate(&stream), "StreamCreate");
  for (auto _ : state) benchmark::DoNotOptimize(infinirtStreamQuery(stream));
  infinirtStreamDestroy(stream);
}

void ApiEventQuery(benchmark::State& state) {
  infinirtEvent_t event = nullptr;
  Check(state, infinirtEventCreate(&event), "EventCreate");
  infinirtEventRecord(event, nullptr);
  infinirtEventSynchronize(event);
  for (auto _ : state) benchmark::DoNotOptimize(infinirtEventQuery(event));
  infinirtEventDestroy(event);
}

namespace {

// The buffers of the copy benchmarks: a host vector, then device memory on device 0 allocated
// after it, each filled. Every copy benchmark makes them the same way, so that its buffers sit
// alike (see StdMemcpy).
struct CopyBuffers {
  CopyBuffers(benchmark::State& state, size_t count) : bytes(count), host(count, 1) {
    Check(state, infinirtMalloc(&device, count), "Malloc");
    if (device != nullptr) infinirtMemset(device, 2, count);
  }
  ~CopyBuffers() { infinirtFree(device); }
  CopyBuffers(const CopyBuffers&) = delete;
  CopyBuffers& operator=(const CopyBuffers&) = delete;

  void* to(infinirtMemcpyKind kind) {
    return kind == infinirtMemcpyHostToDevice ? device : host.data();
  }
  const void* from(infinirtMemcpyKind kind) {
    return kind == infinirtMemcpyHostToDevice ? host.data() : device;
  }

  const size_t bytes;
  std::vector<char> host;
  void* device = nullptr;
};

}  // namespace

void ApiMemcpy(benchmark::State& state, infinirtMemcpyKind kind) {
  CopyBuffers buffers(state, static_cast<size_t>(state.range(0)));
  void* to = buffers.to(kind);
  const void* from = buffers.from(kind);
  for (auto _ : state) {
    infinirtMemcpy(to, from, buffers.bytes, kind);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buffers.bytes));
}

void ApiRoundTrip(benchmark::State& state) {
  infinirtStream_t stream = nullptr;
  void* device = nullptr;
  char host[64] = {};
  Check(state, infinirtStreamCreate(&stream), "StreamCreate");
  Check(state, infinirtMalloc(&device, sizeof host), "Malloc");
  for (auto _ : state) {
    infinirtMemcpyAsync(device, host, sizeof host, infinirtMemcpyHostToDevice, stream);
    infinirtStreamSynchronize(stream);
  }
  infinirtFree(device);
  infinirtStreamDestroy(stream);
}

namespace {

// --- Dispatch: the public API against the plugin's own entry ---------------------------------

void ApiGetDevice(benchmark::State& state) {
  int device = 0;
  for (auto _ : state) benchmark::DoNotOptimize(infinirtGetDevice(&device));
}

void TrivialExportedCall(benchmark::State& state) {
  int value = 1;
  for (auto _ : state) benchmark::DoNotOptimize(infinirt_bench_trivial(&value));
}

void DirectGetDeviceCount(benchmark::State& state) {
  const infinirtPluginTable* table = DirectCpuTable();
  if (table == nullptr) return state.SkipWithError("no direct CPU plugin");
  int count = 0;
  for (auto _ : state) benchmark::DoNotOptimize(table->GetDeviceCount(&count));
}

void DirectStreamQuery(benchmark::State& state) {
  const infinirtPluginTable* table = DirectCpuTable();
  if (table == nullptr) return state.SkipWithError("no direct CPU plugin");
  infinirtPluginStream_t stream = nullptr;
  table->StreamCreate(0, &stream, 0);
  for (auto _ : state) benchmark::DoNotOptimize(table->StreamQuery(0, stream));
  table->StreamDestroy(0, stream);
}

void DirectEventQuery(benchmark::State& state) {
  const infinirtPluginTable* table = DirectCpuTable();
  if (table == nullptr) return state.SkipWithError("no direct CPU plugin");
  infinirtPluginEvent_t event = nullptr;
  table->EventCreate(0, &event, 0);
  table->EventRecord(0, event, INFINIRT_PLUGIN_STREAM_LEGACY);
  table->EventSynchronize(0, event);
  for (auto _ : state) benchmark::DoNotOptimize(table->EventQuery(0, event));
  table->EventDestroy(0, event);
}

// --- Synchronous copies against std::memcpy -------------------------------------------------

// The same bytes as ApiMemcpy's host-to-device copy: a vector, and CPU device memory allocated
// after it, as there, so that both copy between buffers placed alike. How the two buffers sit
// relative to each other (their distance modulo 4 KiB, above all) moves a 4 KiB memcpy by 20 ns
// or more, which a baseline in buffers of its own added to or took from the difference.
void StdMemcpy(benchmark::State& state) {
  CopyBuffers buffers(state, static_cast<size_t>(state.range(0)));
  void* to = buffers.to(infinirtMemcpyHostToDevice);
  const void* from = buffers.from(infinirtMemcpyHostToDevice);
  for (auto _ : state) {
    std::memcpy(to, from, buffers.bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * buffers.bytes));
}

// --- Synchronous sets against std::memset ---------------------------------------------------

void ApiMemset(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  void* device = nullptr;
  Check(state, infinirtMalloc(&device, bytes), "Malloc");
  for (auto _ : state) {
    infinirtMemset(device, 1, bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  infinirtFree(device);
}

// The same bytes as ApiMemset's: CPU device memory (see StdMemcpy).
void StdMemset(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  void* to = nullptr;
  Check(state, infinirtMalloc(&to, bytes), "Malloc");
  for (auto _ : state) {
    std::memset(to, 1, bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  infinirtFree(to);
}

// --- What a 4 KiB copy or set adds, measured in pairs ------------------------------------------

// What a synchronous call adds to the C library's same work on the same buffers, measured in
// pairs: each iteration times a batch of InfiniRT calls, then a batch of the C library's, back to
// back, and reports the difference per call as its (manual) time; 0 when the C library's batch
// was the slower. On a shared machine the speed of both moves from run to run by more than the
// difference, so two benchmarks measured apart could not resolve it: the same build's difference
// ranged from 7 to 89 ns over ten runs, where the pairs of one run agree within a few ns.
template <class Api, class Libc>
void AddedCost(benchmark::State& state, Api api, Libc libc) {
  constexpr int kBatch = 256;
  using Clock = std::chrono::steady_clock;
  for (auto _ : state) {
    const Clock::time_point start = Clock::now();
    for (int i = 0; i < kBatch; ++i) {
      api();
      benchmark::ClobberMemory();
    }
    const Clock::time_point middle = Clock::now();
    for (int i = 0; i < kBatch; ++i) {
      libc();
      benchmark::ClobberMemory();
    }
    const Clock::time_point end = Clock::now();
    const std::chrono::duration<double> added = (middle - start) - (end - middle);
    state.SetIterationTime(std::max(0.0, added.count() / kBatch));
  }
}

void AddedByMemcpy(benchmark::State& state, infinirtMemcpyKind kind) {
  CopyBuffers buffers(state, static_cast<size_t>(state.range(0)));
  void* to = buffers.to(kind);
  const void* from = buffers.from(kind);
  const size_t bytes = buffers.bytes;
  AddedCost(
      state, [&] { infinirtMemcpy(to, from, bytes, kind); }, [&] { std::memcpy(to, from, bytes); });
}

void AddedByMemset(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  void* device = nullptr;
  Check(state, infinirtMalloc(&device, bytes), "Malloc");
  AddedCost(
      state, [&] { infinirtMemset(device, 1, bytes); }, [&] { std::memset(device, 1, bytes); });
  infinirtFree(device);
}

// --- A small asynchronous copy and the wait for it, against a plain hand-off -----------------

// A worker thread that runs one job at a time, handed over with a mutex and a condition
// variable, and says it is done the same way.
class HandOff {
 public:
  HandOff() : worker_([this] { Loop(); }) {}
  ~HandOff() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    cv_.notify_all();
    worker_.join();
  }
  void RunAndWait(std::function<void()> job) {
    std::unique_lock<std::mutex> lock(mutex_);
    job_ = std::move(job);
    ++posted_;
    cv_.notify_all();
    cv_.wait(lock, [&] { return done_ == posted_; });
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      cv_.wait(lock, [&] { return stopping_ || done_ != posted_; });
      if (stopping_) return;
      job_();
      ++done_;
      cv_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::function<void()> job_;
  uint64_t posted_ = 0, done_ = 0;
  bool stopping_ = false;
  std::thread worker_;
};

void HandOffRoundTrip(benchmark::State& state) {
  HandOff hand_off;
  char from[64] = {}, to[64];
  for (auto _ : state) hand_off.RunAndWait([&] { std::memcpy(to, from, sizeof from); });
  benchmark::DoNotOptimize(to);
}

// A stream fed many small copies one by one by a thread that then synchronises once.
constexpr int kFedCopies = 10000;

void ApiFeedCopies(benchmark::State& state) {
  infinirtStream_t stream = nullptr;
  void* device = nullptr;
  char host[64] = {};
  Check(state, infinirtStreamCreate(&stream), "StreamCreate");
  Check(state, infinirtMalloc(&device, sizeof host * kFedCopies), "Malloc");
  for (auto _ : state) {
    for (int i = 0; i < kFedCopies; ++i) {
      infinirtMemcpyAsync(static_cast<char*>(device) + sizeof host * i, host, sizeof host,
                          infinirtMemcpyHostToDevice, stream);
    }
    infinirtStreamSynchronize(stream);
  }
  state.SetItemsProcessed(state.iterations() * kFedCopies);
  infinirtFree(device);
  infinirtStreamDestroy(stream);
}

// The runtime initialised again with a configuration of its own (INFINIRT_CONFIG) for the scope
// of a benchmark, then again without.
class ScopedConfig {
 public:
  explicit ScopedConfig(const std::string& json) {
    char path[] = "/tmp/infinirt_bench_config_XXXXXX";
    const int fd = mkstemp(path);
    ok_ = fd >= 0 && write(fd, json.data(), json.size()) == static_cast<ssize_t>(json.size());
    if (fd >= 0) close(fd);
    path_ = path;
    infinirtFinalize();
    setenv("INFINIRT_CONFIG", path_.c_str(), 1);
    ok_ = ok_ && infinirtInit() == infinirtSuccess;
  }
  ~ScopedConfig() {
    infinirtFinalize();
    unsetenv("INFINIRT_CONFIG");
    unlink(path_.c_str());
    infinirtInit();
  }
  bool ok() const { return ok_; }

 private:
  std::string path_;
  bool ok_ = false;
};

// Where handing a copy to a worker starts to pay: the caller's time in MemcpyAsync of
// state.range(0) bytes on an idle stream, done by the caller (inline_bytes: the largest) or
// handed to a worker (inline_bytes: 0). The synchronisation after each copy is not timed.
void InlineThreshold(benchmark::State& state, bool in_caller) {
  ScopedConfig config(std::string(R"({"plugins": {"cpu": {"inline_bytes": )") +
                      (in_caller ? "1073741824" : "0") + "}}}");
  if (!config.ok()) return state.SkipWithError("cannot initialise with the configuration");
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<char> host(bytes, 1);
  void* device = nullptr;
  infinirtStream_t stream = nullptr;
  Check(state, infinirtStreamCreate(&stream), "StreamCreate");
  Check(state, infinirtMalloc(&device, bytes), "Malloc");
  for (auto _ : state) {
    const auto start = std::chrono::steady_clock::now();
    infinirtMemcpyAsync(device, host.data(), bytes, infinirtMemcpyHostToDevice, stream);
    const auto issued = std::chrono::steady_clock::now();
    infinirtStreamSynchronize(stream);
    state.SetIterationTime(std::chrono::duration<double>(issued - start).count());
  }
  infinirtFree(device);
  infinirtStreamDestroy(stream);
}

// --- Host functions against a plain thread pool ---------------------------------------------

constexpr int kHostFunctions = 1000;

void CountCall(void* counter) {
  static_cast<std::atomic<int>*>(counter)->fetch_add(1, std::memory_order_relaxed);
}

void ApiHostFunctions(benchmark::State& state) {
  const int stream_count = static_cast<int>(state.range(0));
  std::vector<infinirtStream_t> streams(stream_count);
  for (auto& stream : streams) Check(state, infinirtStreamCreate(&stream), "StreamCreate");
  std::atomic<int> calls{0};
  for (auto _ : state) {
    for (int i = 0; i < kHostFunctions; ++i) {
      infinirtLaunchHostFunc(streams[i % stream_count], CountCall, &calls);
    }
    for (auto& stream : streams) infinirtStreamSynchronize(stream);
  }
  state.SetItemsProcessed(state.iterations() * kHostFunctions);
  for (auto& stream : streams) infinirtStreamDestroy(stream);
}

// A plain pool: one queue under a mutex, a fixed number of workers, a counter to wait on.
class ThreadPool {
 public:
  explicit ThreadPool(int workers) {
    for (int i = 0; i < workers; ++i) threads_.emplace_back([this] { Loop(); });
  }
  ~ThreadPool() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    ready_.notify_all();
    for (auto& thread : threads_) thread.join();
  }
  void Post(std::function<void()> task) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      tasks_.push_back(std::move(task));
      ++pending_;
    }
    ready_.notify_one();
  }
  void WaitIdle() {
    std::unique_lock<std::mutex> lock(mutex_);
    idle_.wait(lock, [&] { return pending_ == 0; });
  }

 private:
  void Loop() {
    std::unique_lock<std::mutex> lock(mutex_);
    for (;;) {
      ready_.wait(lock, [&] { return stopping_ || !tasks_.empty(); });
      if (stopping_) return;
      std::function<void()> task = std::move(tasks_.front());
      tasks_.pop_front();
      lock.unlock();
      task();
      lock.lock();
      if (--pending_ == 0) idle_.notify_all();
    }
  }
  std::mutex mutex_;
  std::condition_variable ready_, idle_;
  std::deque<std::function<void()>> tasks_;
  int pending_ = 0;
  bool stopping_ = false;
  std::vector<std::thread> threads_;
};

void PoolHostFunctions(benchmark::State& state) {
  // As many workers as the CPU backend's pool has by default: max(4, hardware threads).
  const int workers = std::max(4, static_cast<int>(std::thread::hardware_concurrency()));
  ThreadPool pool(workers);
  std::atomic<int> calls{0};
  for (auto _ : state) {
    for (int i = 0; i < kHostFunctions; ++i) pool.Post([&calls] { CountCall(&calls); });
    pool.WaitIdle();
  }
  state.SetItemsProcessed(state.iterations() * kHostFunctions);
}

// --- Events ---------------------------------------------------------------------------------

void ApiEventRecordSynchronize(benchmark::State& state) {
  infinirtStream_t stream = nullptr;
  infinirtEvent_t event = nullptr;
  Check(state, infinirtStreamCreate(&stream), "StreamCreate");
  Check(state, infinirtEventCreate(&event), "EventCreate");
  for (auto _ : state) {
    infinirtEventRecord(event, stream);
    infinirtEventSynchronize(event);
  }
  infinirtEventDestroy(event);
  infinirtStreamDestroy(stream);
}

// --- Streams --------------------------------------------------------------------------------

void ApiStreamCreateDestroy(benchmark::State& state) {
  for (auto _ : state) {
    infinirtStream_t stream = nullptr;
    infinirtStreamCreate(&stream);
    infinirtStreamDestroy(stream);
  }
}

// --- Stream-ordered memory against Malloc/Free, and both against glibc ----------------------

constexpr size_t kPoolBlock = 1 << 20;

void LibcMallocFree(benchmark::State& state) {
  for (auto _ : state) {
    void* memory = std::malloc(kPoolBlock);
    benchmark::DoNotOptimize(memory);
    std::free(memory);
  }
}

void ApiMallocFreeAsync(benchmark::State& state) {
  infinirtStream_t stream = nullptr;
  Check(state, infinirtStreamCreate(&stream), "StreamCreate");
  for (auto _ : state) {
    void* memory = nullptr;
    infinirtMallocAsync(&memory, kPoolBlock, stream);
    infinirtFreeAsync(memory, stream);
  }
  infinirtStreamSynchronize(stream);
  infinirtStreamDestroy(stream);
}

void ApiMallocFree(benchmark::State& state) {
  for (auto _ : state) {
    void* memory = nullptr;
    infinirtMalloc(&memory, kPoolBlock);
    infinirtFree(memory);
  }
}

// Malloc, writing the whole block once (what a program does with new memory) and Free: with
// shareable memory (INFINIRT_CPU_SHAREABLE_MEMORY=1) every block is new pages, which the first
// write faults in, where glibc hands the same warm block back.
void ApiMallocWriteFree(benchmark::State& state) {
  for (auto _ : state) {
    void* memory = nullptr;
    infinirtMalloc(&memory, kPoolBlock);
    infinirtMemset(memory, 1, kPoolBlock);
    infinirtFree(memory);
  }
}

// --- The registry with few and many live allocations ----------------------------------------

// Holds `count` live 64-byte allocations for the benchmark's duration.
class LiveAllocations {
 public:
  explicit LiveAllocations(size_t count) : pointers_(count) {
    for (void*& pointer : pointers_) infinirtMalloc(&pointer, 64);
  }
  ~LiveAllocations() {
    for (void* pointer : pointers_) infinirtFree(pointer);
  }
  void* middle() const { return pointers_[pointers_.size() / 2]; }

 private:
  std::vector<void*> pointers_;
};

void RegistryMallocFree(benchmark::State& state) {
  LiveAllocations live(static_cast<size_t>(state.range(0)));
  for (auto _ : state) {
    void* memory = nullptr;
    infinirtMalloc(&memory, 64);
    infinirtFree(memory);
  }
}

void RegistryPointerAttributes(benchmark::State& state) {
  LiveAllocations live(static_cast<size_t>(state.range(0)));
  void* interior = static_cast<char*>(live.middle()) + 10;
  infinirtPointerAttributes attributes{};
  for (auto _ : state) {
    benchmark::DoNotOptimize(infinirtPointerGetAttributes(&attributes, interior));
  }
}

// --- Start-up: infinirtInit against dlopen of the same plugin files -------------------------

// The CPU plugin and every vendor plugin of the build (INFINIRT_BENCH_VENDORS, from the
// vendor plugins of config/vendors.json, through cmake/InfiniRTVendors.cmake).
std::vector<std::string> PluginFiles() {
  std::vector<std::string> files;
  std::istringstream vendors(std::string("cpu,") + INFINIRT_BENCH_VENDORS);
  for (std::string name; std::getline(vendors, name, ',');) {
    files.push_back(std::string(INFINIRT_BENCH_PLUGIN_DIR) + "/libinfinirt_" + name + ".so");
  }
  return files;
}

void ApiInit(benchmark::State& state) {
  for (auto _ : state) {
    Check(state, infinirtInit(), "Init");
    state.PauseTiming();
    infinirtFinalize();
    state.ResumeTiming();
  }
}

void DlopenPlugins(benchmark::State& state) {
  infinirtFinalize();  // none of the files stays mapped by the core
  const std::vector<std::string> files = PluginFiles();
  std::vector<void*> handles(files.size());
  for (auto _ : state) {
    for (size_t i = 0; i < files.size(); ++i) {
      handles[i] = dlopen(files[i].c_str(), RTLD_NOW | RTLD_LOCAL);
      if (handles[i] == nullptr) return state.SkipWithError(dlerror());
    }
    state.PauseTiming();
    for (void* handle : handles) dlclose(handle);
    state.ResumeTiming();
  }
}

// --- 2D copies: a pitched copy against the same rows copied one by one ------------------------

constexpr size_t kRowBytes = 64;
constexpr size_t kPitch = 128;

// Device memory of `rows` rows of kPitch bytes and a host buffer as large, on a stream.
struct Plane {
  infinirtStream_t stream = nullptr;
  void* device = nullptr;
  std::vector<char> host;
  Plane(benchmark::State& state, size_t rows) : host(rows * kPitch) {
    Check(state, infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking), "StreamCreate");
    Check(state, infinirtMalloc(&device, rows * kPitch), "Malloc");
  }
  ~Plane() {
    infinirtFree(device);
    infinirtStreamDestroy(stream);
  }
};

void ApiMemcpy2DAsync(benchmark::State& state) {
  const auto rows = static_cast<size_t>(state.range(0));
  Plane plane(state, rows);
  for (auto _ : state) {
    infinirtMemcpy2DAsync(plane.device, kPitch, plane.host.data(), kPitch, kRowBytes, rows,
                          infinirtMemcpyHostToDevice, plane.stream);
    infinirtStreamSynchronize(plane.stream);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * rows * kRowBytes));
}

void ApiRowByRowMemcpyAsync(benchmark::State& state) {
  const auto rows = static_cast<size_t>(state.range(0));
  Plane plane(state, rows);
  for (auto _ : state) {
    for (size_t row = 0; row < rows; ++row) {
      infinirtMemcpyAsync(static_cast<char*>(plane.device) + row * kPitch,
                          plane.host.data() + row * kPitch, kRowBytes, infinirtMemcpyHostToDevice,
                          plane.stream);
    }
    infinirtStreamSynchronize(plane.stream);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * rows * kRowBytes));
}

void ApiMemset2DAsync(benchmark::State& state) {
  const auto rows = static_cast<size_t>(state.range(0));
  Plane plane(state, rows);
  for (auto _ : state) {
    infinirtMemset2DAsync(plane.device, kPitch, 7, kRowBytes, rows, plane.stream);
    infinirtStreamSynchronize(plane.stream);
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * rows * kRowBytes));
}

// --- A captured graph of 100 operations against issuing them ---------------------------------

constexpr int kGraphNodes = 100;

void IssueOperations(infinirtStream_t stream, char* device) {
  for (int i = 0; i < kGraphNodes; ++i) infinirtMemsetAsync(device + 64 * i, i, 64, stream);
}

void ApiGraphLaunch(benchmark::State& state) {
  infinirtStream_t stream = nullptr;
  void* device = nullptr;
  infinirtGraph_t graph = nullptr;
  infinirtGraphExec_t exec = nullptr;
  Check(state, infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking), "StreamCreate");
  Check(state, infinirtMalloc(&device, 64 * kGraphNodes), "Malloc");
  infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal);
  IssueOperations(stream, static_cast<char*>(device));
  Check(state, infinirtStreamEndCapture(stream, &graph), "EndCapture");
  Check(state, infinirtGraphInstantiate(&exec, graph, 0), "GraphInstantiate");
  for (auto _ : state) {
    infinirtGraphLaunch(exec, stream);
    infinirtStreamSynchronize(stream);
  }
  infinirtGraphExecDestroy(exec);
  infinirtGraphDestroy(graph);
  infinirtFree(device);
  infinirtStreamDestroy(stream);
}

void ApiIssueOperations(benchmark::State& state) {
  infinirtStream_t stream = nullptr;
  void* device = nullptr;
  Check(state, infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking), "StreamCreate");
  Check(state, infinirtMalloc(&device, 64 * kGraphNodes), "Malloc");
  for (auto _ : state) {
    IssueOperations(stream, static_cast<char*>(device));
    infinirtStreamSynchronize(stream);
  }
  infinirtFree(device);
  infinirtStreamDestroy(stream);
}

// Registered in the order of docs/performance.md's table; each benchmark beside its baseline.
const bool registered = [] {
  Register("Dispatch/GetDevice/api", ApiGetDevice);
  Register("Dispatch/TrivialExportedCall", TrivialExportedCall);
  Register("Dispatch/GetDeviceCount/direct", DirectGetDeviceCount);
  Register("Dispatch/StreamQuery/api", ApiStreamQuery);
  Register("Dispatch/StreamQuery/direct", DirectStreamQuery);
  Register("Dispatch/EventQuery/api", ApiEventQuery);
  Register("Dispatch/EventQuery/direct", DirectEventQuery);
  for (int64_t bytes : {int64_t{4096}, int64_t{1} << 20, int64_t{64} << 20}) {
    Register("Memcpy/HostToDevice", [](benchmark::State& s) {
      ApiMemcpy(s, infinirtMemcpyHostToDevice);
    })->Arg(bytes);
    Register("Memcpy/DeviceToHost", [](benchmark::State& s) {
      ApiMemcpy(s, infinirtMemcpyDeviceToHost);
    })->Arg(bytes);
    Register("Memcpy/std::memcpy", StdMemcpy)->Arg(bytes);
  }
  Register("Memset/api", ApiMemset)->Arg(4096);
  Register("Memset/std::memset", StdMemset)->Arg(4096);
  // Manual time (the difference), a fixed count of pairs: 2,000 batches take about 0.1 s.
  benchmark::RegisterBenchmark(
      "Added/Memcpy/HostToDevice",
      [](benchmark::State& s) { AddedByMemcpy(s, infinirtMemcpyHostToDevice); })
      ->Arg(4096)
      ->UseManualTime()
      ->Iterations(2000);
  benchmark::RegisterBenchmark(
      "Added/Memcpy/DeviceToHost",
      [](benchmark::State& s) { AddedByMemcpy(s, infinirtMemcpyDeviceToHost); })
      ->Arg(4096)
      ->UseManualTime()
      ->Iterations(2000);
  benchmark::RegisterBenchmark("Added/Memset", AddedByMemset)
      ->Arg(4096)
      ->UseManualTime()
      ->Iterations(2000);
  Register("RoundTrip/MemcpyAsync64+StreamSynchronize", ApiRoundTrip);
  Register("RoundTrip/mutex+condvar", HandOffRoundTrip);
  for (int64_t streams : {1, 8}) {
    Register("HostFunc/LaunchHostFunc", ApiHostFunctions)->Arg(streams)->ArgName("streams");
    Register("HostFunc/ThreadPool", PoolHostFunctions)->Arg(streams)->ArgName("streams");
  }
  Register("Feed/MemcpyAsync64x10000+StreamSynchronize", ApiFeedCopies)
      ->Unit(benchmark::kMicrosecond);
  for (int64_t bytes : {4 << 10, 16 << 10, 64 << 10, 256 << 10, 1 << 20}) {
    // The caller's time alone: manual time, not Register's real time.
    benchmark::RegisterBenchmark("InlineThreshold/MemcpyAsync/in_caller",
                                 [](benchmark::State& s) { InlineThreshold(s, true); })
        ->Arg(bytes)
        ->UseManualTime();
    benchmark::RegisterBenchmark("InlineThreshold/MemcpyAsync/to_worker",
                                 [](benchmark::State& s) { InlineThreshold(s, false); })
        ->Arg(bytes)
        ->UseManualTime();
  }
  Register("Event/Record+Synchronize", ApiEventRecordSynchronize);
  Register("Stream/Create+Destroy", ApiStreamCreateDestroy);
  Register("StreamOrdered/MallocAsync+FreeAsync", ApiMallocFreeAsync);
  Register("StreamOrdered/Malloc+Free", ApiMallocFree);
  Register("StreamOrdered/malloc+free(glibc)", LibcMallocFree);
  Register("StreamOrdered/Malloc+Memset+Free", ApiMallocWriteFree);
  for (int64_t live : {int64_t{10}, int64_t{1000000}}) {
    Register("Registry/Malloc+Free", RegistryMallocFree)->Arg(live)->ArgName("live");
    Register("Registry/PointerGetAttributes", RegistryPointerAttributes)
        ->Arg(live)
        ->ArgName("live");
  }
  Register("Init/infinirtInit", ApiInit)->Unit(benchmark::kMillisecond);
  Register("Init/dlopen", DlopenPlugins)->Unit(benchmark::kMillisecond);
  Register("Graph/Launch100Nodes", ApiGraphLaunch)->Unit(benchmark::kMicrosecond);
  Register("Graph/Issue100Operations", ApiIssueOperations)->Unit(benchmark::kMicrosecond);
  for (int64_t rows : {16, 1024}) {
    Register("Copy2D/Memcpy2DAsync", ApiMemcpy2DAsync)->Arg(rows)->ArgName("rows");
    Register("Copy2D/MemcpyAsync_row_by_row", ApiRowByRowMemcpyAsync)->Arg(rows)->ArgName("rows");
    Register("Copy2D/Memset2DAsync", ApiMemset2DAsync)->Arg(rows)->ArgName("rows");
  }
  return true;
}();

}  // namespace
}  // namespace infinirt::bench
