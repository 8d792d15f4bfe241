// The row-wise model operators' kernel bodies: LayerNorm, AddRMSNorm, Softmax and LogSoftmax (a
// block per line), SiluAndMul and Embedding (a thread per element). Included by infiniop_kernels.cu
// after its element types, reductions and helpers; the lines are family_kernel_abi.h's LineLayout,
// made by family_plans_model.cc. The semantics are the CPU's (cpu_model_operators.cc): F16 and
// BF16 compute in float, F64 in double, each output element rounded once.
//
// In place (an output that is an input, with the same layout) works for the block-per-line
// kernels: every read of a line's earlier passes is done before the block reduction's barrier,
// and the last pass reads each element in the thread that then writes it.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_MODEL_KERNELS_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_MODEL_KERNELS_H_

#include "kernels/index_math.h"

namespace infinirt::infiniop_cuda_family::kernels {

// Element j of a line whose elements are `step` apart.
__device__ inline int64_t At(uint64_t j, int64_t step) { return static_cast<int64_t>(j) * step; }

// A tensor's line `line`: its buffer, offset to the line's first element.
template <class S>
__device__ S* LineStart(void* buffer, const LineLayout& lines, uint64_t line, int tensor) {
  return static_cast<S*>(buffer) + LineOffset(lines, line, tensor);
}

// --- LayerNorm ---------------------------------------------------------------------------------

// Per line: the mean, then the biased variance about it (two passes, as the CPU), then
// standardization = (x - mean) / std and output = standardization * weight + bias; the std
// deviation (sqrt(variance + eps)) is written by thread 0.
template <class Type>
__device__ void LayerNorm(const LayerNormArgs& args) {
  using V = typename Type::Value;
  using S = typename Type::Storage;
  __shared__ V scratch[kWarpSize];
  const LineLayout& lines = args.lines;
  const uint64_t n = lines.length;
  const int64_t out_step = lines.steps[0], standardized_step = lines.steps[1];
  const int64_t x_step = lines.steps[3];
  const S* weight = static_cast<const S*>(args.call.buffers[4]);
  const S* bias = args.has_bias ? static_cast<const S*>(args.call.buffers[5]) : nullptr;
  for (uint64_t line = blockIdx.x; line < lines.count; line += gridDim.x) {
    S* out = LineStart<S>(args.call.buffers[0], lines, line, 0);
    S* standardized = LineStart<S>(args.call.buffers[1], lines, line, 1);
    S* deviation = LineStart<S>(args.call.buffers[2], lines, line, 2);
    const S* x = LineStart<S>(args.call.buffers[3], lines, line, 3);
    V sum = 0;
    for (uint64_t j = threadIdx.x; j < n; j += blockDim.x) sum += Type::Load(x[At(j, x_step)]);
    const V mean = BlockReduce(sum, SumOp(), V(0), scratch) / static_cast<V>(n);
    V squares = 0;
    for (uint64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const V centred = Type::Load(x[At(j, x_step)]) - mean;
      squares += Mul(centred, centred);
    }
    const V variance = BlockReduce(squares, SumOp(), V(0), scratch) / static_cast<V>(n);
    const V std_deviation = Sqrt(variance + static_cast<V>(args.eps));
    const V inverse = V(1) / std_deviation;
    if (threadIdx.x == 0) *deviation = Type::Store(std_deviation);
    for (uint64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const V normalized = Mul(Type::Load(x[At(j, x_step)]) - mean, inverse);
      const V shift = bias != nullptr ? Type::Load(bias[At(j, args.bias_step)]) : V(0);
      const V scaled = Mul(normalized, Type::Load(weight[At(j, args.weight_step)]));
      standardized[At(j, standardized_step)] = Type::Store(normalized);
      out[At(j, out_step)] = Type::Store(scaled + shift);
    }
  }
}

// --- AddRMSNorm --------------------------------------------------------------------------------

// Per line: s = a + b (in the value type, never rounded to the storage for y), the sum of s^2,
// then residual_out = s and y = s * w / sqrt(mean(s^2) + epsilon). s is computed again in the
// last pass rather than kept: the thread that reads a_j and b_j writes residual_j and y_j, so
// residual_out or y may be a or b.
template <class X, class W>
__device__ void AddRMSNorm(const AddRMSNormArgs& args) {
  using V = typename X::Value;
  using S = typename X::Storage;
  __shared__ V scratch[kWarpSize];
  const LineLayout& lines = args.lines;
  const uint64_t n = lines.length;
  const auto* weight = static_cast<const typename W::Storage*>(args.call.buffers[4]);
  for (uint64_t line = blockIdx.x; line < lines.count; line += gridDim.x) {
    S* y = LineStart<S>(args.call.buffers[0], lines, line, 0);
    S* residual = LineStart<S>(args.call.buffers[1], lines, line, 1);
    const S* a = LineStart<S>(args.call.buffers[2], lines, line, 2);
    const S* b = LineStart<S>(args.call.buffers[3], lines, line, 3);
    V squares = 0;
    for (uint64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const V s = X::Load(a[At(j, lines.steps[2])]) + X::Load(b[At(j, lines.steps[3])]);
      squares += Mul(s, s);
    }
    squares = BlockReduce(squares, SumOp(), V(0), scratch);
    const V rms = V(1) / Sqrt(squares / static_cast<V>(n) + static_cast<V>(args.epsilon));
    for (uint64_t j = threadIdx.x; j < n; j += blockDim.x) {
      const V s = X::Load(a[At(j, lines.steps[2])]) + X::Load(b[At(j, lines.steps[3])]);
      const V w = static_cast<V>(W::Load(weight[At(j, args.weight_step)]));
      residual[At(j, lines.steps[1])] = X::Store(s);
      y[At(j, lines.steps[0])] = X::Store(Mul(Mul(s, w), rms));
    }
  }
}

// --- Softmax, LogSoftmax -----------------------------------------------------------------------

// Per line: the max (std::max's rule: a NaN is never taken), the sum of exp(x - max), then
// y = exp(x - max) * (1 / sum), or for the log form y = x - (max + log(sum)). exp is computed
// again for the output rather than kept, as on the CPU.
template <class Type, bool kLog>
__device__ void Softmax(const LineArgs& args) {
  using V = typename Type::Value;
  using S = typename Type::Storage;
  __shared__ V scratch[kWarpSize];
  const LineLayout& lines = args.lines;
  const uint64_t n = lines.length;
  const int64_t y_step = lines.steps[0], x_step = lines.steps[1];
  for (uint64_t line = blockIdx.x; line < lines.count; line += gridDim.x) {
    S* y = LineStart<S>(args.call.buffers[0], lines, line, 0);
    const S* x = LineStart<S>(args.call.buffers[1], lines, line, 1);
    V max = -Infinity<V>();
    for (uint64_t j = threadIdx.x; j < n; j += blockDim.x) {
      max = MaxOp()(max, Type::Load(x[At(j, x_step)]));
    }
    max = BlockReduce(max, MaxOp(), -Infinity<V>(), scratch);
    V sum = 0;
    for (uint64_t j = threadIdx.x; j < n; j += blockDim.x) {
      sum += Exp(Type::Load(x[At(j, x_step)]) - max);
    }
    sum = BlockReduce(sum, SumOp(), V(0), scratch);
    if constexpr (kLog) {
      const V shift = max + Log(sum);
      for (uint64_t j = threadIdx.x; j < n; j += blockDim.x) {
        y[At(j, y_step)] = Type::Store(Type::Load(x[At(j, x_step)]) - shift);
      }
    } else {
      const V inverse = V(1) / sum;
      for (uint64_t j = threadIdx.x; j < n; j += blockDim.x) {
        y[At(j, y_step)] = Type::Store(Mul(Exp(Type::Load(x[At(j, x_step)]) - max), inverse));
      }
    }
  }
}

// --- SiluAndMul --------------------------------------------------------------------------------

// y_j = silu(x_j) * x_{j + d} along each line (d: y's length), a thread per element of y:
// gate / (1 + exp(-gate)) * up, as the CPU computes it.
template <class Type>
__device__ void SiluAndMul(const LineArgs& args) {
  using V = typename Type::Value;
  using S = typename Type::Storage;
  const LineLayout& lines = args.lines;
  const uint64_t n = lines.length;
  const uint64_t elements = lines.count * n;
  for (uint64_t e = FirstIndex(); e < elements; e += GridStride()) {
    const uint64_t line = e / n;
    const uint64_t j = e - line * n;
    S* y = LineStart<S>(args.call.buffers[0], lines, line, 0);
    const S* x = LineStart<S>(args.call.buffers[1], lines, line, 1);
    const V gate = Type::Load(x[At(j, lines.steps[1])]);
    const V up = Type::Load(x[At(j + n, lines.steps[1])]);
    y[At(j, lines.steps[0])] = Type::Store(Mul(gate / (V(1) + Exp(-gate)), up));
  }
}

// --- Embedding ---------------------------------------------------------------------------------

// output[line, j] = weight[input[line], j], a thread per element of the output: the weight's
// element copied as it is stored; an index outside [0, vocab) gives NaN (the queued work cannot
// report it; no valid row is made of NaN).
template <class Type>
__device__ void Embedding(const EmbeddingArgs& args) {
  using V = typename Type::Value;
  using S = typename Type::Storage;
  const LineLayout& lines = args.lines;
  const uint64_t dim = lines.length;
  const uint64_t elements = lines.count * dim;
  const S* weight = static_cast<const S*>(args.call.buffers[2]);
  for (uint64_t e = FirstIndex(); e < elements; e += GridStride()) {
    const uint64_t line = e / dim;
    const uint64_t j = e - line * dim;
    S* out = LineStart<S>(args.call.buffers[0], lines, line, 0) + At(j, lines.steps[0]);
    const int64_t index =
        LoadIndex(args.call.buffers[1], args.index_dtype, LineOffset(lines, line, 1));
    if (index < 0 || static_cast<uint64_t>(index) >= args.vocab) {
      *out = Type::Store(QuietNaN<V>());
    } else {
      *out = weight[index * args.weight_strides[0] + At(j, args.weight_strides[1])];
    }
  }
}

}  // namespace infinirt::infiniop_cuda_family::kernels

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_MODEL_KERNELS_H_
