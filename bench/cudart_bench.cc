// InfiniRT over the NVIDIA plugin against the CUDA Runtime called directly, on a machine with an
// NVIDIA GPU: what the core and the plugin add to a real device's calls. libcudart is opened
// with dlopen, so nothing here needs the CUDA Toolkit to build; the pairs register only where
// it opens, and the InfiniRT side skips itself unless device 0 is an NVIDIA device (run with
// INFINIRT_BACKENDS=nvidia).
#include <benchmark/benchmark.h>
#include <dlfcn.h>

#include <cstddef>
#include <string>
#include <vector>

#include "bench_support.h"
#include "infinirt.h"

namespace infinirt::bench {
namespace {

// The few libcudart functions the baselines call, with CUDA's prototypes (opaque handles as
// void*; cudaMemcpyKind 1 is host to device).
struct Cudart {
  int (*StreamCreate)(void** stream);
  int (*StreamDestroy)(void* stream);
  int (*StreamQuery)(void* stream);
  int (*StreamSynchronize)(void* stream);
  int (*EventCreate)(void** event);
  int (*EventDestroy)(void* event);
  int (*EventRecord)(void* event, void* stream);
  int (*EventSynchronize)(void* event);
  int (*EventQuery)(void* event);
  int (*Malloc)(void** pointer, size_t bytes);
  int (*Free)(void* pointer);
  int (*Memcpy)(void* to, const void* from, size_t bytes, int kind);
  int (*MemcpyAsync)(void* to, const void* from, size_t bytes, int kind, void* stream);
};
constexpr int kHostToDevice = 1;

template <class F>
bool Resolve(void* library, const char* name, F* function) {
  *function = reinterpret_cast<F>(dlsym(library, name));
  return *function != nullptr;
}

// libcudart's functions, or null where it cannot be opened (never closed: CUDA's own teardown
// runs at exit).
const Cudart* OpenCudart() {
  static const Cudart* const cudart = []() -> const Cudart* {
    void* library = nullptr;
    for (const char* name : {"libcudart.so.13", "libcudart.so.12", "libcudart.so",
                             "/usr/local/cuda/lib64/libcudart.so"}) {
      if ((library = dlopen(name, RTLD_NOW | RTLD_LOCAL)) != nullptr) break;
    }
    if (library == nullptr) return nullptr;
    static Cudart fn;
    const bool complete = Resolve(library, "cudaStreamCreate", &fn.StreamCreate) &&
                          Resolve(library, "cudaStreamDestroy", &fn.StreamDestroy) &&
                          Resolve(library, "cudaStreamQuery", &fn.StreamQuery) &&
                          Resolve(library, "cudaStreamSynchronize", &fn.StreamSynchronize) &&
                          Resolve(library, "cudaEventCreate", &fn.EventCreate) &&
                          Resolve(library, "cudaEventDestroy", &fn.EventDestroy) &&
                          Resolve(library, "cudaEventRecord", &fn.EventRecord) &&
                          Resolve(library, "cudaEventSynchronize", &fn.EventSynchronize) &&
                          Resolve(library, "cudaEventQuery", &fn.EventQuery) &&
                          Resolve(library, "cudaMalloc", &fn.Malloc) &&
                          Resolve(library, "cudaFree", &fn.Free) &&
                          Resolve(library, "cudaMemcpy", &fn.Memcpy) &&
                          Resolve(library, "cudaMemcpyAsync", &fn.MemcpyAsync);
    return complete ? &fn : nullptr;
  }();
  return cudart;
}

// Whether InfiniRT's device 0 is an NVIDIA GPU; skips the benchmark otherwise.
bool OnNvidia(benchmark::State& state) {
  infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
  if (infinirtDeviceGetType(&type, 0) == infinirtSuccess && type == INFINI_DEVICE_NVIDIA) {
    return true;
  }
  state.SkipWithError("device 0 is not NVIDIA (run with INFINIRT_BACKENDS=nvidia)");
  return false;
}

// The InfiniRT side: the public-API benchmarks of runtime_bench.cc, on an NVIDIA device 0.
template <void (*Benchmark)(benchmark::State&)>
void OnNvidiaOnly(benchmark::State& state) {
  if (OnNvidia(state)) Benchmark(state);
}

void ApiMemcpyHostToDevice(benchmark::State& state) {
  ApiMemcpy(state, infinirtMemcpyHostToDevice);
}

void CudartStreamQuery(benchmark::State& state) {
  const Cudart& cuda = *OpenCudart();
  void* stream = nullptr;
  if (cuda.StreamCreate(&stream) != 0) return state.SkipWithError("no CUDA device");
  for (auto _ : state) benchmark::DoNotOptimize(cuda.StreamQuery(stream));
  cuda.StreamDestroy(stream);
}

void CudartEventQuery(benchmark::State& state) {
  const Cudart& cuda = *OpenCudart();
  void* event = nullptr;
  if (cuda.EventCreate(&event) != 0) return state.SkipWithError("no CUDA device");
  cuda.EventRecord(event, nullptr);
  cuda.EventSynchronize(event);
  for (auto _ : state) benchmark::DoNotOptimize(cuda.EventQuery(event));
  cuda.EventDestroy(event);
}

void CudartRoundTrip(benchmark::State& state) {
  const Cudart& cuda = *OpenCudart();
  void* stream = nullptr;
  void* device = nullptr;
  char host[64] = {};
  if (cuda.StreamCreate(&stream) != 0) return state.SkipWithError("no CUDA device");
  cuda.Malloc(&device, sizeof host);
  for (auto _ : state) {
    cuda.MemcpyAsync(device, host, sizeof host, kHostToDevice, stream);
    cuda.StreamSynchronize(stream);
  }
  cuda.Free(device);
  cuda.StreamDestroy(stream);
}

void CudartMemcpy(benchmark::State& state) {
  const Cudart& cuda = *OpenCudart();
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<char> host(bytes, 1);
  void* device = nullptr;
  if (cuda.Malloc(&device, bytes) != 0) return state.SkipWithError("no CUDA device");
  for (auto _ : state) cuda.Memcpy(device, host.data(), bytes, kHostToDevice);
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
  cuda.Free(device);
}

// Only where libcudart opens, so that a machine without CUDA lists none of them.
const bool registered = [] {
  if (OpenCudart() == nullptr) return false;
  Register("CUDA/StreamQuery/api", OnNvidiaOnly<ApiStreamQuery>);
  Register("CUDA/StreamQuery/libcudart", CudartStreamQuery);
  Register("CUDA/EventQuery/api", OnNvidiaOnly<ApiEventQuery>);
  Register("CUDA/EventQuery/libcudart", CudartEventQuery);
  Register("CUDA/MemcpyAsync64+StreamSynchronize/api", OnNvidiaOnly<ApiRoundTrip>);
  Register("CUDA/MemcpyAsync64+StreamSynchronize/libcudart", CudartRoundTrip);
  Register("CUDA/MemcpyHostToDevice/api", OnNvidiaOnly<ApiMemcpyHostToDevice>)
      ->Arg(int64_t{64} << 20);
  Register("CUDA/MemcpyHostToDevice/libcudart", CudartMemcpy)->Arg(int64_t{64} << 20);
  return true;
}();

}  // namespace
}  // namespace infinirt::bench
