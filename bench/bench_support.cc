#include "bench_support.h"

#include <dlfcn.h>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

// The benchmark of the library the CPU backend's F32 Gemm calls (bench/infiniop_bench.cc).
#if INFINIRT_BENCH_HAS_ONEDNN
#define INFINIRT_BENCH_F32_GEMM_LIBRARY "InfiniOP/oneDNN/dnnl_sgemm"
#else
#define INFINIRT_BENCH_F32_GEMM_LIBRARY "InfiniOP/OpenBLAS/cblas_sgemm"
#endif

namespace infinirt::bench {

namespace {

// Copies a file; false on failure.
bool CopyFile(const std::string& from, const std::string& to) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary);
  out << in.rdbuf();
  return in.good() && out.good();
}

const infinirtPluginTable* LoadDirectCpuTable() {
  char path[] = "/tmp/infinirt_bench_cpu_XXXXXX";
  const int fd = mkstemp(path);
  if (fd < 0) return nullptr;
  close(fd);
  if (!CopyFile(INFINIRT_BENCH_CPU_PLUGIN, path)) {
    std::fprintf(stderr, "bench: cannot copy %s\n", INFINIRT_BENCH_CPU_PLUGIN);
    return nullptr;
  }
  void* library = dlopen(path, RTLD_NOW | RTLD_LOCAL);
  unlink(path);  // the mapping stays; the file is not needed any more
  if (library == nullptr) {
    std::fprintf(stderr, "bench: dlopen: %s\n", dlerror());
    return nullptr;
  }
  auto get_table =
      reinterpret_cast<infinirtPluginGetTableFn>(dlsym(library, INFINIRT_PLUGIN_ENTRY_SYMBOL));
  const infinirtPluginTable* table = get_table ? get_table() : nullptr;
  if (table == nullptr || table->Initialize(nullptr) != infinirtSuccess) {
    std::fprintf(stderr, "bench: the CPU plugin's table is unusable\n");
    return nullptr;
  }
  return table;
}

}  // namespace

const infinirtPluginTable* DirectCpuTable() {
  static const infinirtPluginTable* const table = LoadDirectCpuTable();
  return table;
}

const std::vector<Comparison>& Comparisons() {
  using C = Comparison;
  static const std::vector<Comparison> comparisons = {
    {"Dispatch/GetDevice/api", "Dispatch/TrivialExportedCall", "<= 1 ns added",
     C::kAddedNanoseconds, 1},
    {"Dispatch/StreamQuery/api", "Dispatch/StreamQuery/direct", "<= 2 ns added",
     C::kAddedNanoseconds, 2},
    {"Dispatch/EventQuery/api", "Dispatch/EventQuery/direct", "<= 2 ns added", C::kAddedNanoseconds,
     2},
    // Measured in pairs on the same buffers (AddedCost in runtime_bench.cc): the time reported
    // is what InfiniRT adds to std::memcpy / std::memset.
    {"Added/Memcpy/HostToDevice/4096", "", "<= 40 ns added", C::kAtMostNanoseconds, 40},
    {"Added/Memcpy/DeviceToHost/4096", "", "<= 40 ns added", C::kAtMostNanoseconds, 40},
    {"Added/Memset/4096", "", "<= 40 ns added", C::kAtMostNanoseconds, 40},
    {"Memcpy/HostToDevice/1048576", "Memcpy/std::memcpy/1048576", ">= 0.95x throughput",
     C::kThroughputRatio, 0.95},
    {"Memcpy/DeviceToHost/1048576", "Memcpy/std::memcpy/1048576", ">= 0.95x throughput",
     C::kThroughputRatio, 0.95},
    {"Memcpy/HostToDevice/67108864", "Memcpy/std::memcpy/67108864", ">= 0.95x throughput",
     C::kThroughputRatio, 0.95},
    {"Memcpy/DeviceToHost/67108864", "Memcpy/std::memcpy/67108864", ">= 0.95x throughput",
     C::kThroughputRatio, 0.95},
    {"RoundTrip/MemcpyAsync64+StreamSynchronize", "", "<= 1 us", C::kAtMostNanoseconds, 1000},
    {"HostFunc/LaunchHostFunc/streams:1", "HostFunc/ThreadPool/streams:1", ">= 0.9x throughput",
     C::kThroughputRatio, 0.9},
    {"HostFunc/LaunchHostFunc/streams:8", "HostFunc/ThreadPool/streams:8", ">= 0.9x throughput",
     C::kThroughputRatio, 0.9},
    {"Event/Record+Synchronize", "", "<= 300 ns", C::kAtMostNanoseconds, 300},
    {"Stream/Create+Destroy", "", "<= 40 ns", C::kAtMostNanoseconds, 40},
    {"StreamOrdered/Malloc+Free", "StreamOrdered/malloc+free(glibc)", "<= 60 ns added",
     C::kAddedNanoseconds, 60},
    {"StreamOrdered/MallocAsync+FreeAsync", "StreamOrdered/Malloc+Free", ">= 5x faster",
     C::kThroughputRatio, 5},
    {"Registry/Malloc+Free/live:1000000", "Registry/Malloc+Free/live:10", "<= 2x time",
     C::kTimeRatio, 2},
    {"Registry/PointerGetAttributes/live:1000000", "Registry/PointerGetAttributes/live:10",
     "<= 2x time", C::kTimeRatio, 2},
    {"Init/infinirtInit", "Init/dlopen", "<= 1.5x time (and < 5 ms)", C::kTimeRatio, 1.5},
    {"Graph/Launch100Nodes", "Graph/Issue100Operations", "<= 1.0x time", C::kTimeRatio, 1.0},
    // The C++ runtime layer (bench/cxx_runtime_bench.cc).
    {"Allocator/Cached/allocate+free/4096", "", "< 40 ns", C::kAtMostNanoseconds, 40},
    {"Allocator/Cached/allocate+free/1048576", "", "< 40 ns", C::kAtMostNanoseconds, 40},
    {"Allocator/Cached/allocate+free/4096", "Allocator/Malloc+Free/4096", ">= 3x faster",
     C::kThroughputRatio, 3},
    {"Allocator/Cached/allocate+free/1048576", "Allocator/Malloc+Free/1048576", ">= 3x faster",
     C::kThroughputRatio, 3},
    {"Allocator/Threads/allocate+free/threads:2", "Allocator/Threads/allocate+free/threads:1",
     ">= 1.7x throughput", C::kThroughputRatio, 1.7},
    {"Graph/CxxExecute100Copies", "Graph/CxxIssue100Copies", "<= 1.0x time", C::kTimeRatio, 1.0},
    // InfiniOP on the CPU backend (bench/infiniop_bench.cc).
    // F32 Gemm goes through oneDNN where the CPU backend has it (then OpenBLAS is reported
    // beside it), otherwise through OpenBLAS: the target is against the library it calls.
    {"InfiniOP/Gemm/F32/1024", INFINIRT_BENCH_F32_GEMM_LIBRARY "/1024", ">= 0.95x throughput",
     C::kThroughputRatio, 0.95},
    {"InfiniOP/Gemm/F32/4096", INFINIRT_BENCH_F32_GEMM_LIBRARY "/4096", ">= 0.95x throughput",
     C::kThroughputRatio, 0.95},
#if INFINIRT_BENCH_HAS_ONEDNN
    {"InfiniOP/Gemm/F32/1024", "InfiniOP/OpenBLAS/cblas_sgemm/1024", "reported",
     C::kThroughputRatio, 0},
    {"InfiniOP/Gemm/F32/4096", "InfiniOP/OpenBLAS/cblas_sgemm/4096", "reported",
     C::kThroughputRatio, 0},
#endif
    {"InfiniOP/Gemm/BF16/2048", "InfiniOP/Gemm/F32/2048", "reported (F32's throughput = 1)",
     C::kThroughputRatio, 0},
    {"InfiniOP/Gemm/F16/2048", "InfiniOP/Gemm/F32/2048", "reported (F32's throughput = 1)",
     C::kThroughputRatio, 0},
    {"InfiniOP/Add/F32/64MiB", "InfiniOP/std::memcpy/100663296", ">= 0.6x bandwidth",
     C::kThroughputRatio, 0.6},
    {"InfiniOP/SwiGLU/F32/64MiB", "InfiniOP/std::memcpy/100663296", ">= 0.6x bandwidth",
     C::kThroughputRatio, 0.6},
    {"InfiniOP/RMSNorm/F32/64MiB", "InfiniOP/std::memcpy/67108864", ">= 0.6x bandwidth",
     C::kThroughputRatio, 0.6},
    {"InfiniOP/Rearrange/F32/64MiB/transpose", "InfiniOP/std::memcpy/67108864", ">= 0.6x bandwidth",
     C::kThroughputRatio, 0.6},
    // Decode attention reads K and V once: against memcpy of those bytes (which also writes
    // them). Prefill's FLOP rate against a F32 Gemm of as many FLOPs.
    {"InfiniOP/PagedAttention/decode/F32", "InfiniOP/std::memcpy/134217728", ">= 0.8x bandwidth",
     C::kThroughputRatio, 0.8},
    {"InfiniOP/PagedAttention/decode/BF16", "InfiniOP/std::memcpy/67108864", ">= 0.8x bandwidth",
     C::kThroughputRatio, 0.8},
    {"InfiniOP/FlashAttention/prefill/F32", "InfiniOP/Gemm/F32/2048x1024x1024",
     ">= 0.5x Gemm's FLOP rate", C::kThroughputRatio, 0.5},
    // InfiniCCL's AllReduce on CPU devices of one process (bench/infiniccl_bench.cc): busbw against
    // memcpy's bandwidth, through memcpy of busbw's bytes.
    {"InfiniCCL/AllReduce/F32/2ranks/16MiB", "InfiniCCL/std::memcpy/16777216", ">= 0.5x bandwidth",
     C::kThroughputRatio, 0.5},
    {"InfiniCCL/AllReduce/F32/2ranks/64MiB", "InfiniCCL/std::memcpy/67108864", ">= 0.5x bandwidth",
     C::kThroughputRatio, 0.5},
    {"InfiniCCL/AllReduce/F32/4ranks/16MiB", "InfiniCCL/std::memcpy/25165824", ">= 0.5x bandwidth",
     C::kThroughputRatio, 0.5},
    {"InfiniCCL/AllReduce/F32/4ranks/64MiB", "InfiniCCL/std::memcpy/100663296", ">= 0.5x bandwidth",
     C::kThroughputRatio, 0.5},
    // On an NVIDIA GPU only (bench/cudart_bench.cc): InfiniRT against libcudart called directly.
    {"CUDA/StreamQuery/api", "CUDA/StreamQuery/libcudart", "<= 100 ns added", C::kAddedNanoseconds,
     100},
    {"CUDA/EventQuery/api", "CUDA/EventQuery/libcudart", "<= 100 ns added", C::kAddedNanoseconds,
     100},
    {"CUDA/MemcpyAsync64+StreamSynchronize/api", "CUDA/MemcpyAsync64+StreamSynchronize/libcudart",
     "<= 1.1x time", C::kTimeRatio, 1.1},
    {"CUDA/MemcpyHostToDevice/api/67108864", "CUDA/MemcpyHostToDevice/libcudart/67108864",
     ">= 0.95x throughput", C::kThroughputRatio, 0.95},
  };
  return comparisons;
}

}  // namespace infinirt::bench
