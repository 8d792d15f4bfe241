// InfiniOP's operators on the CPU backend against what they are measured by: Gemm against the
// library it goes through (oneDNN where the backend is built with it, else OpenBLAS) and OpenBLAS,
// called directly on the same matrices, the memory-bound operators against std::memcpy
// of the bytes they move (their bandwidth), BF16/F16 Gemm against F32 Gemm. Each call is queued on
// an InfiniRT stream and waited for, as a program would. Comparisons in bench_support.cc.
#include <benchmark/benchmark.h>
#include <cblas.h>
#if INFINIRT_BENCH_HAS_ONEDNN
#include <oneapi/dnnl/dnnl.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <utility>
#include <vector>

#include "bench_support.h"
#include "infiniop.h"
#include "infinirt.h"

namespace infinirt::bench {
namespace {

constexpr size_t kMiB = size_t{1} << 20;
constexpr size_t kBandwidthBytes = 64 * kMiB;  // each tensor of the memory-bound operators

size_t SizeOf(infiniDtype_t dtype) {
  switch (dtype) {
    case INFINI_DTYPE_F64:
    case INFINI_DTYPE_I64:
      return 8;
    case INFINI_DTYPE_F32:
      return 4;
    default:
      return 2;  // F16, BF16
  }
}

// A tensor of device memory (host memory, on the CPU backend), filled with small values of its
// dtype (1.0 in F32; 0x3c00 is 1.0 in F16, 0x3f80 in BF16) so that no denormal slows anything.
class BenchTensor {
 public:
  BenchTensor(benchmark::State& state, infiniDtype_t dtype, std::vector<size_t> shape,
              std::vector<ptrdiff_t> strides = {})
      : shape_(std::move(shape)), strides_(std::move(strides)) {
    size_t elements = 1;
    for (size_t extent : shape_) elements *= extent;
    bytes_ = elements * SizeOf(dtype);
    Check(state,
          infinirtMalloc(&data_, bytes_) == infinirtSuccess ? infinirtSuccess
                                                            : infinirtErrorMemoryAllocation,
          "Malloc");
    if (data_ != nullptr) Fill(dtype);
    if (infiniopCreateTensorDescriptor(&desc_, shape_.size(), shape_.data(),
                                       strides_.empty() ? nullptr : strides_.data(),
                                       dtype) != INFINI_STATUS_SUCCESS) {
      state.SkipWithError("infiniopCreateTensorDescriptor failed");
    }
  }
  ~BenchTensor() {
    infiniopDestroyTensorDescriptor(desc_);
    infinirtFree(data_);
  }
  BenchTensor(const BenchTensor&) = delete;
  BenchTensor& operator=(const BenchTensor&) = delete;

  void* data() const { return data_; }
  infiniopTensorDescriptor_t desc() const { return desc_; }
  size_t bytes() const { return bytes_; }
  // An I64 tensor's elements set to `values`.
  void SetIndices(const std::vector<int64_t>& values) {
    std::memcpy(data_, values.data(), std::min(bytes_, values.size() * sizeof(int64_t)));
  }

 private:
  void Fill(infiniDtype_t dtype) {
    if (dtype == INFINI_DTYPE_I64) {
      std::memset(data_, 0, bytes_);
    } else if (dtype == INFINI_DTYPE_F32) {
      std::vector<float> ones(bytes_ / 4, 1.0f);
      std::memcpy(data_, ones.data(), bytes_);
    } else if (dtype == INFINI_DTYPE_F64) {
      std::vector<double> ones(bytes_ / 8, 1.0);
      std::memcpy(data_, ones.data(), bytes_);
    } else {
      std::vector<uint16_t> ones(bytes_ / 2, dtype == INFINI_DTYPE_F16 ? 0x3c00 : 0x3f80);
      std::memcpy(data_, ones.data(), bytes_);
    }
  }

  std::vector<size_t> shape_;
  std::vector<ptrdiff_t> strides_;
  size_t bytes_ = 0;
  void* data_ = nullptr;
  infiniopTensorDescriptor_t desc_ = nullptr;
};

// A handle and a stream on the CPU backend's device.
class OperatorBench {
 public:
  explicit OperatorBench(benchmark::State& state) {
    int cpu = -1;
    Check(state, infinirtDeviceGetOrdinal(&cpu, INFINI_DEVICE_CPU, 0), "DeviceGetOrdinal");
    Check(state, infinirtSetDevice(cpu), "SetDevice");
    if (infiniopCreateHandle(&handle_) != INFINI_STATUS_SUCCESS) {
      state.SkipWithError("infiniopCreateHandle failed");
    }
    Check(state, infinirtStreamCreate(&stream_), "StreamCreate");
  }
  ~OperatorBench() {
    infinirtStreamDestroy(stream_);
    infiniopDestroyHandle(handle_);
  }
  OperatorBench(const OperatorBench&) = delete;
  OperatorBench& operator=(const OperatorBench&) = delete;

  infiniopHandle_t handle() const { return handle_; }
  infinirtStream_t stream() const { return stream_; }

  // Runs `call` (which queues one operator call on the stream) and waits, once per iteration.
  template <class Call>
  void Measure(benchmark::State& state, Call call) {
    for (auto _ : state) {
      if (call() != INFINI_STATUS_SUCCESS) {
        state.SkipWithError("the operator failed");
        break;
      }
      infinirtStreamSynchronize(stream_);
    }
  }

 private:
  infiniopHandle_t handle_ = nullptr;
  infinirtStream_t stream_ = nullptr;
};

void SetFlops(benchmark::State& state, size_t n) {
  const double flops = 2.0 * static_cast<double>(n) * n * n;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
}

// --- Gemm ----------------------------------------------------------------------------------

// c = a @ b, n x n x n, row-major, through infiniopGemm.
void InfiniopGemm(benchmark::State& state, infiniDtype_t dtype) {
  const size_t n = static_cast<size_t>(state.range(0));
  OperatorBench bench(state);
  BenchTensor c(state, dtype, {n, n}), a(state, dtype, {n, n}), b(state, dtype, {n, n});
  infiniopGemmDescriptor_t desc = nullptr;
  if (infiniopCreateGemmDescriptor(bench.handle(), &desc, c.desc(), a.desc(), b.desc()) !=
      INFINI_STATUS_SUCCESS) {
    state.SkipWithError("infiniopCreateGemmDescriptor failed");
    return;
  }
  bench.Measure(state, [&] {
    return infiniopGemm(desc, nullptr, 0, c.data(), a.data(), b.data(), 1.0f, 0.0f, bench.stream());
  });
  SetFlops(state, n);
  infiniopDestroyGemmDescriptor(desc);
}

// The same product with cblas_sgemm called directly, on the same kind of buffers.
void OpenBlasSgemm(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  BenchTensor c(state, INFINI_DTYPE_F32, {n, n}), a(state, INFINI_DTYPE_F32, {n, n}),
      b(state, INFINI_DTYPE_F32, {n, n});
  const int size = static_cast<int>(n);
  for (auto _ : state) {
    cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, size, size, size, 1.0f,
                static_cast<const float*>(a.data()), size, static_cast<const float*>(b.data()),
                size, 0.0f, static_cast<float*>(c.data()), size);
    benchmark::ClobberMemory();
  }
  SetFlops(state, n);
}

#if INFINIRT_BENCH_HAS_ONEDNN
// The same product with oneDNN's dnnl_sgemm called directly: the library the CPU backend's F32
// Gemm goes through when it is built with oneDNN.
void OneDnnSgemm(benchmark::State& state) {
  const size_t n = static_cast<size_t>(state.range(0));
  BenchTensor c(state, INFINI_DTYPE_F32, {n, n}), a(state, INFINI_DTYPE_F32, {n, n}),
      b(state, INFINI_DTYPE_F32, {n, n});
  const auto size = static_cast<dnnl_dim_t>(n);
  for (auto _ : state) {
    if (dnnl_sgemm('N', 'N', size, size, size, 1.0f, static_cast<const float*>(a.data()), size,
                   static_cast<const float*>(b.data()), size, 0.0f, static_cast<float*>(c.data()),
                   size) != dnnl_success) {
      state.SkipWithError("dnnl_sgemm failed");
      break;
    }
    benchmark::ClobberMemory();
  }
  SetFlops(state, n);
}
#endif

// --- Memory-bound operators -----------------------------------------------------------------

// Add, Mul or SwiGLU on three F32 tensors of 64 MiB: 192 MiB moved per call.
template <class Create, class Run, class Destroy>
void Elementwise(benchmark::State& state, Create create, Run run, Destroy destroy) {
  const size_t elements = kBandwidthBytes / 4;
  OperatorBench bench(state);
  BenchTensor c(state, INFINI_DTYPE_F32, {elements}), a(state, INFINI_DTYPE_F32, {elements}),
      b(state, INFINI_DTYPE_F32, {elements});
  auto desc = create(bench.handle(), c, a, b);
  if (desc == nullptr) {
    state.SkipWithError("creating the descriptor failed");
    return;
  }
  bench.Measure(state, [&] { return run(desc, c, a, b, bench.stream()); });
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 3 * kBandwidthBytes));
  destroy(desc);
}

void Add(benchmark::State& state) {
  Elementwise(
      state,
      [](infiniopHandle_t h, BenchTensor& c, BenchTensor& a, BenchTensor& b) {
        infiniopAddDescriptor_t d = nullptr;
        infiniopCreateAddDescriptor(h, &d, c.desc(), a.desc(), b.desc());
        return d;
      },
      [](infiniopAddDescriptor_t d, BenchTensor& c, BenchTensor& a, BenchTensor& b,
         infinirtStream_t s) {
        return infiniopAdd(d, nullptr, 0, c.data(), a.data(), b.data(), s);
      },
      [](infiniopAddDescriptor_t d) { infiniopDestroyAddDescriptor(d); });
}

void SwiGLU(benchmark::State& state) {
  Elementwise(
      state,
      [](infiniopHandle_t h, BenchTensor& c, BenchTensor& a, BenchTensor& b) {
        infiniopSwiGLUDescriptor_t d = nullptr;
        infiniopCreateSwiGLUDescriptor(h, &d, c.desc(), a.desc(), b.desc());
        return d;
      },
      [](infiniopSwiGLUDescriptor_t d, BenchTensor& c, BenchTensor& a, BenchTensor& b,
         infinirtStream_t s) {
        return infiniopSwiGLU(d, nullptr, 0, c.data(), a.data(), b.data(), s);
      },
      [](infiniopSwiGLUDescriptor_t d) { infiniopDestroySwiGLUDescriptor(d); });
}

// RMSNorm over 4096 rows of 4096 F32 (64 MiB in, 64 MiB out; the weights stay in cache).
void RMSNorm(benchmark::State& state) {
  constexpr size_t kRows = 4096, kDim = kBandwidthBytes / 4 / kRows;
  OperatorBench bench(state);
  BenchTensor y(state, INFINI_DTYPE_F32, {kRows, kDim}), x(state, INFINI_DTYPE_F32, {kRows, kDim}),
      w(state, INFINI_DTYPE_F32, {kDim});
  infiniopRMSNormDescriptor_t desc = nullptr;
  if (infiniopCreateRMSNormDescriptor(bench.handle(), &desc, y.desc(), x.desc(), w.desc(), 1e-6f) !=
      INFINI_STATUS_SUCCESS) {
    state.SkipWithError("infiniopCreateRMSNormDescriptor failed");
    return;
  }
  bench.Measure(state, [&] {
    return infiniopRMSNorm(desc, nullptr, 0, y.data(), x.data(), w.data(), bench.stream());
  });
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * kBandwidthBytes));
  infiniopDestroyRMSNormDescriptor(desc);
}

// Rearrange as a transpose: a 4096 x 4096 F32 matrix read by columns into a row-major one.
void RearrangeTranspose(benchmark::State& state) {
  constexpr size_t kSide = 4096;
  OperatorBench bench(state);
  BenchTensor dst(state, INFINI_DTYPE_F32, {kSide, kSide}),
      src(state, INFINI_DTYPE_F32, {kSide, kSide}, {1, static_cast<ptrdiff_t>(kSide)});
  infiniopRearrangeDescriptor_t desc = nullptr;
  if (infiniopCreateRearrangeDescriptor(bench.handle(), &desc, dst.desc(), src.desc()) !=
      INFINI_STATUS_SUCCESS) {
    state.SkipWithError("infiniopCreateRearrangeDescriptor failed");
    return;
  }
  bench.Measure(state,
                [&] { return infiniopRearrange(desc, dst.data(), src.data(), bench.stream()); });
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * kBandwidthBytes));
  infiniopDestroyRearrangeDescriptor(desc);
}

// --- Attention -----------------------------------------------------------------------------

// An LLM layer's attention sizes: 32 heads of 128 (as many KV heads: every byte of the cache is
// read), a decode step over 4096 cached tokens in blocks of 16, a prefill of 512 tokens.
constexpr size_t kHeads = 32, kHeadSize = 128, kCachedTokens = 4096, kBlockSize = 16;
constexpr size_t kPrefillTokens = 512;

// Decode: one query per head attends to the 4096 cached keys and values through
// PagedAttention, which reads K and V once (2 x 64 MiB in F32, 2 x 32 MiB in BF16).
void DecodeAttention(benchmark::State& state, infiniDtype_t dtype) {
  constexpr size_t kBlocks = kCachedTokens / kBlockSize;
  OperatorBench bench(state);
  BenchTensor out(state, dtype, {1, kHeads, kHeadSize}), q(state, dtype, {1, kHeads, kHeadSize}),
      k_cache(state, dtype, {kBlocks, kHeads, kBlockSize, kHeadSize}),
      v_cache(state, dtype, {kBlocks, kHeads, kBlockSize, kHeadSize}),
      block_tables(state, INFINI_DTYPE_I64, {1, kBlocks}), seq_lens(state, INFINI_DTYPE_I64, {1});
  std::vector<int64_t> blocks(kBlocks);
  for (size_t b = 0; b < kBlocks; ++b) blocks[b] = static_cast<int64_t>(b);
  block_tables.SetIndices(blocks);
  seq_lens.SetIndices({static_cast<int64_t>(kCachedTokens)});
  infiniopPagedAttentionDescriptor_t desc = nullptr;
  if (infiniopCreatePagedAttentionDescriptor(
          bench.handle(), &desc, out.desc(), q.desc(), k_cache.desc(), v_cache.desc(),
          block_tables.desc(), seq_lens.desc(), nullptr,
          1.0f / std::sqrt(static_cast<float>(kHeadSize))) != INFINI_STATUS_SUCCESS) {
    state.SkipWithError("infiniopCreatePagedAttentionDescriptor failed");
    return;
  }
  size_t workspace_size = 0;
  infiniopGetPagedAttentionWorkspaceSize(desc, &workspace_size);
  std::vector<char> workspace(std::max<size_t>(workspace_size, 1));
  bench.Measure(state, [&] {
    return infiniopPagedAttention(desc, workspace.data(), workspace_size, out.data(), q.data(),
                                  k_cache.data(), v_cache.data(), block_tables.data(),
                                  seq_lens.data(), nullptr, bench.stream());
  });
  state.SetBytesProcessed(
      static_cast<int64_t>(state.iterations() * (k_cache.bytes() + v_cache.bytes())));
  infiniopDestroyPagedAttentionDescriptor(desc);
}

// Prefill: FlashAttention of 512 queries over 512 keys, 32 heads of 128, F32, not causal:
// 4 x 512 x 512 x 128 x 32 = 4.29 GFLOP (the products q k^T and p v).
void PrefillAttention(benchmark::State& state) {
  OperatorBench bench(state);
  const std::vector<size_t> shape = {1, kHeads, kPrefillTokens, kHeadSize};
  BenchTensor out(state, INFINI_DTYPE_F32, shape), q(state, INFINI_DTYPE_F32, shape),
      k(state, INFINI_DTYPE_F32, shape), v(state, INFINI_DTYPE_F32, shape),
      total_kv_len(state, INFINI_DTYPE_I64, {1});
  total_kv_len.SetIndices({static_cast<int64_t>(kPrefillTokens)});
  infiniopFlashAttentionDescriptor_t desc = nullptr;
  if (infiniopCreateFlashAttentionDescriptor(
          bench.handle(), &desc, out.desc(), q.desc(), k.desc(), v.desc(), total_kv_len.desc(),
          1.0f / std::sqrt(static_cast<float>(kHeadSize)), 0) != INFINI_STATUS_SUCCESS) {
    state.SkipWithError("infiniopCreateFlashAttentionDescriptor failed");
    return;
  }
  size_t workspace_size = 0;
  infiniopGetFlashAttentionWorkspaceSize(desc, &workspace_size);
  std::vector<char> workspace(std::max<size_t>(workspace_size, 1));
  bench.Measure(state, [&] {
    return infiniopFlashAttention(desc, workspace.data(), workspace_size, out.data(), q.data(),
                                  k.data(), v.data(), total_kv_len.data(), bench.stream());
  });
  const double flops = 4.0 * kPrefillTokens * kPrefillTokens * kHeadSize * kHeads;
  state.counters["GFLOP/s"] =
      benchmark::Counter(flops * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  infiniopDestroyFlashAttentionDescriptor(desc);
}

// A F32 Gemm of as many FLOPs as the prefill: [2048, 1024] @ [1024, 1024].
void PrefillSizedGemm(benchmark::State& state) {
  constexpr size_t kM = 2048, kK = 1024, kN = 1024;
  OperatorBench bench(state);
  BenchTensor c(state, INFINI_DTYPE_F32, {kM, kN}), a(state, INFINI_DTYPE_F32, {kM, kK}),
      b(state, INFINI_DTYPE_F32, {kK, kN});
  infiniopGemmDescriptor_t desc = nullptr;
  if (infiniopCreateGemmDescriptor(bench.handle(), &desc, c.desc(), a.desc(), b.desc()) !=
      INFINI_STATUS_SUCCESS) {
    state.SkipWithError("infiniopCreateGemmDescriptor failed");
    return;
  }
  bench.Measure(state, [&] {
    return infiniopGemm(desc, nullptr, 0, c.data(), a.data(), b.data(), 1.0f, 0.0f, bench.stream());
  });
  state.counters["GFLOP/s"] =
      benchmark::Counter(2.0 * kM * kK * kN * 1e-9, benchmark::Counter::kIsIterationInvariantRate);
  infiniopDestroyGemmDescriptor(desc);
}

// std::memcpy of state.range(0) bytes: it moves twice that (read and written), the bandwidth an
// operator moving as many bytes is measured against.
void MemcpyBaseline(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<char> from(bytes, 1), to(bytes, 0);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * 2 * bytes));
}

const bool registered = [] {
  for (int64_t n : {int64_t{1024}, int64_t{4096}}) {
    Register("InfiniOP/Gemm/F32", [](benchmark::State& s) { InfiniopGemm(s, INFINI_DTYPE_F32); })
        ->Arg(n)
        ->Unit(benchmark::kMillisecond);
    Register("InfiniOP/OpenBLAS/cblas_sgemm", OpenBlasSgemm)->Arg(n)->Unit(benchmark::kMillisecond);
#if INFINIRT_BENCH_HAS_ONEDNN
    Register("InfiniOP/oneDNN/dnnl_sgemm", OneDnnSgemm)->Arg(n)->Unit(benchmark::kMillisecond);
#endif
  }
  for (const auto& [name, dtype] :
       {std::pair{"F32", INFINI_DTYPE_F32}, std::pair{"BF16", INFINI_DTYPE_BF16},
        std::pair{"F16", INFINI_DTYPE_F16}}) {
    const infiniDtype_t type = dtype;
    Register(std::string("InfiniOP/Gemm/") + name,
             [type](benchmark::State& s) { InfiniopGemm(s, type); })
        ->Arg(2048)
        ->Unit(benchmark::kMillisecond);
  }
  // Add and SwiGLU move 3 x 64 MiB (memcpy of 96 MiB moves as much); RMSNorm and the transpose
  // 2 x 64 MiB (memcpy of 64 MiB).
  Register("InfiniOP/Add/F32/64MiB", Add)->Unit(benchmark::kMillisecond);
  Register("InfiniOP/SwiGLU/F32/64MiB", SwiGLU)->Unit(benchmark::kMillisecond);
  Register("InfiniOP/std::memcpy", MemcpyBaseline)
      ->Arg(static_cast<int64_t>(3 * kBandwidthBytes / 2))
      ->Unit(benchmark::kMillisecond);
  Register("InfiniOP/RMSNorm/F32/64MiB", RMSNorm)->Unit(benchmark::kMillisecond);
  Register("InfiniOP/Rearrange/F32/64MiB/transpose", RearrangeTranspose)
      ->Unit(benchmark::kMillisecond);
  Register("InfiniOP/std::memcpy", MemcpyBaseline)
      ->Arg(static_cast<int64_t>(kBandwidthBytes))
      ->Unit(benchmark::kMillisecond);
  // Decode attention reads K and V once: 128 MiB in F32 (against memcpy of 128 MiB), 64 MiB in
  // BF16 (against memcpy of 64 MiB, registered above).
  Register("InfiniOP/PagedAttention/decode/F32", [](benchmark::State& s) {
    DecodeAttention(s, INFINI_DTYPE_F32);
  })->Unit(benchmark::kMillisecond);
  Register("InfiniOP/PagedAttention/decode/BF16", [](benchmark::State& s) {
    DecodeAttention(s, INFINI_DTYPE_BF16);
  })->Unit(benchmark::kMillisecond);
  Register("InfiniOP/std::memcpy", MemcpyBaseline)
      ->Arg(static_cast<int64_t>(2 * kBandwidthBytes))
      ->Unit(benchmark::kMillisecond);
  Register("InfiniOP/FlashAttention/prefill/F32", PrefillAttention)->Unit(benchmark::kMillisecond);
  Register("InfiniOP/Gemm/F32/2048x1024x1024", PrefillSizedGemm)->Unit(benchmark::kMillisecond);
  return true;
}();

}  // namespace
}  // namespace infinirt::bench
