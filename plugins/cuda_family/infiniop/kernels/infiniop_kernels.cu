// The NVIDIA operator backend's CUDA kernels, in this one source and the headers it includes (nvcc
// compiles one source into the fatbin): the elementwise operators of
// kernels/elementwise_operators.h, Rearrange, RMSNorm, CausalSoftmax, RoPE and RandomSample here;
// LayerNorm, AddRMSNorm, Softmax, LogSoftmax, SiluAndMul and Embedding in kernels/model_kernels.h;
// KVCaching, PagedCaching, PagedAttention, PagedAttentionPrefill, FlashAttention and Attention in
// kernels/attention_kernels.h; DequantizeAWQ and I8Gemm in kernels/quantized_kernels.h; TopK,
// Topksoftmax and Topkrouter in kernels/routing_kernels.h. Each
// kernel is extern "C" and takes one argument struct of family_kernel_abi.h by value, its
// KernelCall first; family_plans.cc (and family_plans_model.cc, family_plans_attention.cc) make
// the plans that launch them (and say which kernel each dtype combination uses).
//
// The semantics are the CPU backend's (plugins/cpu/infiniop/): F16 and BF16 compute in float, F32
// in float, F64 in double, integers wrap; each output element is rounded once, with the CPU's
// conversions (round to nearest even, the same NaN bits). Strides are in elements and may be 0 or
// negative; every index and offset is 64-bit where a count may pass 2^31.
#include <cuda_fp16.h>
#include <stdint.h>

#include <type_traits>
#include <utility>

#include "family_kernel_abi.h"
#include "infinicore.h"

namespace infinirt::infiniop_cuda_family::kernels {

constexpr unsigned kFullMask = 0xffffffffu;
constexpr int kWarpSize = 32;

// --- Element types: storage, the value computed with, and the conversions ---------------------

__device__ inline uint16_t FloatToHalfBits(float value) {
  const uint32_t bits = __float_as_uint(value);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {  // a NaN, with the CPU's bits: quiet, the top of its payload
    return static_cast<uint16_t>(((bits >> 16) & 0x8000u) | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  return __half_as_ushort(__float2half_rn(value));  // round to nearest even, overflow to inf
}

__device__ inline uint16_t FloatToBf16Bits(float value) {
  const uint32_t bits = __float_as_uint(value);
  // A NaN is truncated (and made quiet): rounding could carry its payload into infinity.
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

struct F16 {
  using Storage = uint16_t;
  using Value = float;
  __device__ static float Load(uint16_t bits) { return __half2float(__ushort_as_half(bits)); }
  __device__ static uint16_t Store(float value) { return FloatToHalfBits(value); }
};

struct BF16 {
  using Storage = uint16_t;
  using Value = float;
  __device__ static float Load(uint16_t bits) {
    return __uint_as_float(static_cast<uint32_t>(bits) << 16);
  }
  __device__ static uint16_t Store(float value) { return FloatToBf16Bits(value); }
};

struct F32 {
  using Storage = float;
  using Value = float;
  __device__ static float Load(float value) { return value; }
  __device__ static float Store(float value) { return value; }
};

struct F64 {
  using Storage = double;
  using Value = double;
  __device__ static double Load(double value) { return value; }
  __device__ static double Store(double value) { return value; }
};

// Signed integers compute in the unsigned type of their width, so that overflow wraps.
struct I32 {
  using Storage = int32_t;
  using Value = uint32_t;
  __device__ static uint32_t Load(int32_t value) { return static_cast<uint32_t>(value); }
  __device__ static int32_t Store(uint32_t value) { return static_cast<int32_t>(value); }
};

struct I64 {
  using Storage = int64_t;
  using Value = uint64_t;
  __device__ static uint64_t Load(int64_t value) { return static_cast<uint64_t>(value); }
  __device__ static int64_t Store(uint64_t value) { return static_cast<int64_t>(value); }
};

// Products rounded on their own (never fused into an add), as the CPU computes them.
__device__ inline float Mul(float a, float b) { return __fmul_rn(a, b); }
__device__ inline double Mul(double a, double b) { return __dmul_rn(a, b); }
__device__ inline float Exp(float x) { return expf(x); }
__device__ inline double Exp(double x) { return exp(x); }
__device__ inline float Erfc(float x) { return erfcf(x); }
__device__ inline double Erfc(double x) { return erfc(x); }
__device__ inline float Sqrt(float x) { return sqrtf(x); }
__device__ inline double Sqrt(double x) { return sqrt(x); }
__device__ inline float Log(float x) { return logf(x); }
__device__ inline double Log(double x) { return log(x); }

template <class V>
__device__ V Infinity();
template <>
__device__ inline float Infinity<float>() {
  return __int_as_float(0x7f800000);
}
template <>
__device__ inline double Infinity<double>() {
  return __longlong_as_double(0x7ff0000000000000ll);
}

// The quiet NaN the CPU stores (std::numeric_limits<V>::quiet_NaN()).
template <class V>
__device__ V QuietNaN();
template <>
__device__ inline float QuietNaN<float>() {
  return __int_as_float(0x7fc00000);
}
template <>
__device__ inline double QuietNaN<double>() {
  return __longlong_as_double(0x7ff8000000000000ll);
}

// An index tensor's element `offset` (in elements), I32 or I64 (the plans refuse the others), as
// int64.
__device__ inline int64_t LoadIndex(const void* base, int32_t dtype, int64_t offset) {
  return dtype == INFINI_DTYPE_I32 ? static_cast<int64_t>(static_cast<const int32_t*>(base)[offset])
                                   : static_cast<const int64_t*>(base)[offset];
}

// --- Reductions --------------------------------------------------------------------------------

struct SumOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return a + b;
  }
};

// std::max's rule: a NaN in b is never taken.
struct MaxOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return a < b ? b : a;
  }
};

struct MinOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return b < a ? b : a;
  }
};

template <class V, class Op>
__device__ V WarpReduce(V value, Op op) {
  for (int mask = kWarpSize / 2; mask > 0; mask >>= 1) {
    value = op(value, __shfl_xor_sync(kFullMask, value, mask));
  }
  return value;
}

// The reduction of every thread's value, returned to every thread (blockDim.x a multiple of 32).
// scratch: 32 values of shared memory, free to reuse once this returns.
template <class V, class Op>
__device__ V BlockReduce(V value, Op op, V identity, V* scratch) {
  const int warp = threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  value = WarpReduce(value, op);
  __syncthreads();  // the previous call's readers of scratch are done
  if (lane == 0) scratch[warp] = value;
  __syncthreads();
  value = lane < warps ? scratch[lane] : identity;
  return WarpReduce(value, op);  // every warp reduces the partial results itself
}

// --- Elementwise: the binary operators' table, and Rearrange --------------------------------

}  // namespace infinirt::infiniop_cuda_family::kernels

// Here, not at the top: its functors use the helpers above.
#include "kernels/elementwise_operators.h"

namespace infinirt::infiniop_cuda_family::kernels {

// The element offsets of linear index `index` (row-major over the merged shape) in the first N
// tensors. The loop is unrolled over kMaxDims so that the arguments are read at fixed places.
template <int N, class Index>
__device__ void OffsetsOf(const ElementwiseArgs& args, Index index, int64_t (&offsets)[N]) {
#pragma unroll
  for (int t = 0; t < N; ++t) offsets[t] = 0;
#pragma unroll
  for (int d = kMaxDims - 1; d >= 0; --d) {
    if (d < args.ndim) {
      const Index size = static_cast<Index>(args.shape[d]);
      const Index next = index / size;
      const int64_t coordinate = static_cast<int64_t>(index - next * size);
      index = next;
#pragma unroll
      for (int t = 0; t < N; ++t) offsets[t] += coordinate * args.strides[t][d];
    }
  }
}

__device__ inline uint64_t FirstIndex() {
  return static_cast<uint64_t>(blockIdx.x) * blockDim.x + threadIdx.x;
}

__device__ inline uint64_t GridStride() { return static_cast<uint64_t>(gridDim.x) * blockDim.x; }

// An elementwise functor for a call: made from the call when it reads its parameters (MulScalar's
// alpha).
template <class Op>
__device__ Op MakeOp(const KernelCall& call) {
  if constexpr (std::is_constructible_v<Op, const KernelCall&>) {
    return Op(call);
  } else {
    return Op{};
  }
}

// out = op(in...) elementwise over the strided layout, inputs I + 1 (Index: 32-bit where the
// count allows).
template <class Type, class Op, class Index, size_t... I>
__device__ void ComputeStrided(const ElementwiseArgs& args, std::index_sequence<I...>) {
  using S = typename Type::Storage;
  constexpr int kTensors = sizeof...(I) + 1;
  S* out = static_cast<S*>(args.call.buffers[0]);
  const Op op = MakeOp<Op>(args.call);
  for (uint64_t i = FirstIndex(); i < args.elements; i += GridStride()) {
    int64_t offsets[kTensors];
    OffsetsOf<kTensors>(args, static_cast<Index>(i), offsets);
    out[offsets[0]] = Type::Store(
        op(Type::Load(static_cast<const S*>(args.call.buffers[I + 1])[offsets[I + 1]])...));
  }
}

template <class Type, class Op, size_t... I>
__device__ void ComputeContiguous(const ElementwiseArgs& args, std::index_sequence<I...>) {
  using S = typename Type::Storage;
  S* out = static_cast<S*>(args.call.buffers[0]);
  const Op op = MakeOp<Op>(args.call);
  for (uint64_t i = FirstIndex(); i < args.elements; i += GridStride()) {
    out[i] = Type::Store(op(Type::Load(static_cast<const S*>(args.call.buffers[I + 1])[i])...));
  }
}

// An elementwise operator of kInputs inputs: out = op(in...).
template <class Type, class Op, size_t kInputs>
__device__ void Compute(const ElementwiseArgs& args) {
  const auto inputs = std::make_index_sequence<kInputs>{};
  if (args.ndim == 0) {  // all contiguous: one flat loop
    ComputeContiguous<Type, Op>(args, inputs);
  } else if (args.elements <= UINT32_MAX) {
    ComputeStrided<Type, Op, uint32_t>(args, inputs);
  } else {
    ComputeStrided<Type, Op, uint64_t>(args, inputs);
  }
}

// Rearrange's elements: raw bytes of each size (16 bytes as two 8-byte words: only the element
// size's alignment is assumed).
struct Bytes16 {
  uint64_t low;
  uint64_t high;
};

template <class E, class Index>
__device__ void CopyStrided(const ElementwiseArgs& args) {
  E* dst = static_cast<E*>(args.call.buffers[0]);
  const E* src = static_cast<const E*>(args.call.buffers[1]);
  for (uint64_t i = FirstIndex(); i < args.elements; i += GridStride()) {
    int64_t offsets[2];
    OffsetsOf<2>(args, static_cast<Index>(i), offsets);
    dst[offsets[0]] = src[offsets[1]];
  }
}

template <class E>
__device__ void Copy(const ElementwiseArgs& args) {
  if (args.ndim == 0) {
    E* dst = static_cast<E*>(args.call.buffers[0]);
    const E* src = static_cast<const E*>(args.call.buffers[1]);
    for (uint64_t i = FirstIndex(); i < args.elements; i += GridStride()) dst[i] = src[i];
  } else if (args.elements <= UINT32_MAX) {
    CopyStrided<E, uint32_t>(args);
  } else {
    CopyStrided<E, uint64_t>(args);
  }
}

// --- RMSNorm -----------------------------------------------------------------------------------

// y_j = x_j * w_j / sqrt(sum(x^2) / dim + epsilon), one block per row. In place (y is x) works:
// the block reads its whole row (the reduction's barriers) before it writes.
template <class X, class W>
__device__ void RMSNorm(const RMSNormArgs& args) {
  using V = typename X::Value;
  using S = typename X::Storage;
  __shared__ V scratch[kWarpSize];
  const uint64_t dim = args.dim;
  const V epsilon = static_cast<V>(args.epsilon);
  const auto* w = static_cast<const typename W::Storage*>(args.call.buffers[2]);
  for (uint64_t row = blockIdx.x; row < args.rows; row += gridDim.x) {
    const int64_t batch = static_cast<int64_t>(row / args.nhead);
    const int64_t head = static_cast<int64_t>(row % args.nhead);
    S* y = static_cast<S*>(args.call.buffers[0]) + batch * args.y_strides[0] +
           head * args.y_strides[1];
    const S* x = static_cast<const S*>(args.call.buffers[1]) + batch * args.x_strides[0] +
                 head * args.x_strides[1];
    V sum = 0;
    for (uint64_t j = threadIdx.x; j < dim; j += blockDim.x) {
      const V value = X::Load(x[j]);
      sum += value * value;
    }
    sum = BlockReduce(sum, SumOp(), V(0), scratch);
    const V rms = V(1) / Sqrt(sum / static_cast<V>(dim) + epsilon);
    for (uint64_t j = threadIdx.x; j < dim; j += blockDim.x) {
      y[j] = X::Store(Mul(Mul(X::Load(x[j]), static_cast<V>(W::Load(w[j]))), rms));
    }
  }
}

// --- CausalSoftmax -----------------------------------------------------------------------------

// Row i of [seq_len, total] sees the columns j <= total - seq_len + i; the others become 0. One
// block per row; exp is computed again for the output rather than kept, and in place (y is x)
// works as for RMSNorm.
template <class Type>
__device__ void CausalSoftmax(const CausalSoftmaxArgs& args) {
  using V = typename Type::Value;
  using S = typename Type::Storage;
  __shared__ V scratch[kWarpSize];
  const uint64_t total = args.total_seq_len;
  const int64_t y_step = args.y_strides[2];
  const int64_t x_step = args.x_strides[2];
  for (uint64_t row = blockIdx.x; row < args.rows; row += gridDim.x) {
    const uint64_t i = row % args.seq_len;
    const int64_t batch = static_cast<int64_t>(row / args.seq_len);
    S* y = static_cast<S*>(args.call.buffers[0]) + batch * args.y_strides[0] +
           static_cast<int64_t>(i) * args.y_strides[1];
    const S* x = static_cast<const S*>(args.call.buffers[1]) + batch * args.x_strides[0] +
                 static_cast<int64_t>(i) * args.x_strides[1];
    const uint64_t visible = total - args.seq_len + i + 1;  // 1 to total
    const V first = Type::Load(x[0]);
    V max = first;
    for (uint64_t j = threadIdx.x; j < visible; j += blockDim.x) {
      max = MaxOp()(max, Type::Load(x[static_cast<int64_t>(j) * x_step]));
    }
    max = BlockReduce(max, MaxOp(), first, scratch);
    if (first != first) max = first;  // the CPU starts from x[0]: a NaN there stays the max
    V sum = 0;
    for (uint64_t j = threadIdx.x; j < visible; j += blockDim.x) {
      sum += Exp(Type::Load(x[static_cast<int64_t>(j) * x_step]) - max);
    }
    sum = BlockReduce(sum, SumOp(), V(0), scratch);
    for (uint64_t j = threadIdx.x; j < total; j += blockDim.x) {
      const V value =
          j < visible ? Exp(Type::Load(x[static_cast<int64_t>(j) * x_step]) - max) / sum : V(0);
      y[static_cast<int64_t>(j) * y_step] = Type::Store(value);
    }
  }
}

// --- RoPE --------------------------------------------------------------------------------------

// Reads pos_ids[offset] as an I of the table's rows: false when it is outside [0, table_len).
template <class I>
__device__ bool PositionAt(const void* pos_ids, int64_t offset, uint64_t table_len, uint64_t* row) {
  const I value = static_cast<const I*>(pos_ids)[offset];
  if constexpr (static_cast<I>(-1) < 0) {
    if (value < 0) return false;
  }
  const uint64_t position = static_cast<uint64_t>(value);
  if (position >= table_len) return false;
  *row = position;
  return true;
}

__device__ bool PositionOf(int32_t dtype, const void* pos_ids, int64_t offset, uint64_t table_len,
                           uint64_t* row) {
  switch (dtype) {
    case INFINI_DTYPE_I8:
      return PositionAt<int8_t>(pos_ids, offset, table_len, row);
    case INFINI_DTYPE_I16:
      return PositionAt<int16_t>(pos_ids, offset, table_len, row);
    case INFINI_DTYPE_I32:
      return PositionAt<int32_t>(pos_ids, offset, table_len, row);
    case INFINI_DTYPE_I64:
      return PositionAt<int64_t>(pos_ids, offset, table_len, row);
    case INFINI_DTYPE_U8:
      return PositionAt<uint8_t>(pos_ids, offset, table_len, row);
    case INFINI_DTYPE_U16:
      return PositionAt<uint16_t>(pos_ids, offset, table_len, row);
    case INFINI_DTYPE_U32:
      return PositionAt<uint32_t>(pos_ids, offset, table_len, row);
    case INFINI_DTYPE_U64:
      return PositionAt<uint64_t>(pos_ids, offset, table_len, row);
    default:
      return false;  // refused by the plan
  }
}

// One thread per pair (a0, a1) of a head of a token, rotated by its position's sin and cos:
// GPT-J pairs neighbours (2i, 2i + 1), GPT-NeoX the halves (i, i + half). A position outside the
// tables leaves the token's y unwritten, as on the CPU. Both of a pair are read before either is
// written, so in place (y is x) works.
template <class Type, bool kNeox, class Index>
__device__ void RoPEPairs(const RoPEArgs& args) {
  using V = typename Type::Value;
  using S = typename Type::Storage;
  const Index half = static_cast<Index>(args.half);
  const Index nhead = static_cast<Index>(args.nhead);
  const Index seq_len = static_cast<Index>(args.seq_len);
  for (uint64_t p = FirstIndex(); p < args.pairs; p += GridStride()) {
    Index rest = static_cast<Index>(p);
    const Index i = rest % half;
    rest /= half;
    const int64_t head = static_cast<int64_t>(rest % nhead);
    rest /= nhead;
    const int64_t token = static_cast<int64_t>(rest % seq_len);
    const int64_t batch = static_cast<int64_t>(rest / seq_len);
    uint64_t row;
    const int64_t pos_offset = batch * args.pos_strides[0] + token * args.pos_strides[1];
    if (!PositionOf(args.pos_dtype, args.call.buffers[2], pos_offset, args.table_len, &row)) {
      continue;
    }
    const int64_t r = static_cast<int64_t>(row);
    const V sin_i =
        Type::Load(static_cast<const S*>(args.call.buffers[3])[r * args.sin_row_stride + i]);
    const V cos_i =
        Type::Load(static_cast<const S*>(args.call.buffers[4])[r * args.cos_row_stride + i]);
    S* y = static_cast<S*>(args.call.buffers[0]) + batch * args.y_strides[0] +
           token * args.y_strides[1] + head * args.y_strides[2];
    const S* x = static_cast<const S*>(args.call.buffers[1]) + batch * args.x_strides[0] +
                 token * args.x_strides[1] + head * args.x_strides[2];
    const Index a0 = kNeox ? i : 2 * i;
    const Index a1 = kNeox ? i + half : 2 * i + 1;
    const V x0 = Type::Load(x[a0]);
    const V x1 = Type::Load(x[a1]);
    y[a0] = Type::Store(Mul(x0, cos_i) - Mul(x1, sin_i));
    y[a1] = Type::Store(Mul(x0, sin_i) + Mul(x1, cos_i));
  }
}

template <class Type, bool kNeox>
__device__ void RoPE(const RoPEArgs& args) {
  if (args.pairs <= UINT32_MAX) {
    RoPEPairs<Type, kNeox, uint32_t>(args);
  } else {
    RoPEPairs<Type, kNeox, uint64_t>(args);
  }
}

// --- RandomSample ------------------------------------------------------------------------------
//
// InfiniCore's rule, as the CPU computes it (cpu_llm_operators.cc): the first maximum when
// random_val, topp or temperature is 0 or topk is 1; otherwise the candidates in double, sorted
// by value descending (a NaN after every number, ties keeping the lower index first), cum[0] = 1,
// cum[i] = cum[i - 1] + exp((v[i] - max) / temperature) summed in that order, and the first of the
// top k whose cum reaches random_val * min(cum[k - 1], cum[voc - 1] * topp), else the k-th.
//
// The sort is by a key per candidate: an unsigned integer ascending as the value descends, every
// NaN the largest key, -0 the key of +0 (they tie on the CPU). A stable sort by key (ties by index)
// is the CPU's order.

template <class U>
__device__ uint64_t DescendingKey(U bits, U sign, U infinity) {
  const U magnitude = bits & static_cast<U>(~sign);
  if (magnitude > infinity) return static_cast<U>(~U(0));  // NaN: last
  if (magnitude == 0) bits = 0;                            // -0 is +0
  const U ascending = (bits & sign) ? static_cast<U>(~bits) : static_cast<U>(bits | sign);
  return static_cast<U>(~ascending);
}

__device__ inline uint64_t KeyOf(F16, uint16_t bits) {
  return DescendingKey<uint16_t>(bits, 0x8000u, 0x7c00u);
}
__device__ inline uint64_t KeyOf(BF16, uint16_t bits) {
  return DescendingKey<uint16_t>(bits, 0x8000u, 0x7f80u);
}
__device__ inline uint64_t KeyOf(F32, float value) {
  return DescendingKey<uint32_t>(__float_as_uint(value), 0x80000000u, 0x7f800000u);
}
__device__ inline uint64_t KeyOf(F64, double value) {
  return DescendingKey<uint64_t>(static_cast<uint64_t>(__double_as_longlong(value)),
                                 0x8000000000000000ull, 0x7ff0000000000000ull);
}

// The candidate i's value, as the CPU reads it: the storage's value (float for F16/BF16), in
// double.
template <class Type>
__device__ double CandidateValue(const RandomSampleArgs& args, uint64_t i) {
  const auto* probs = static_cast<const typename Type::Storage*>(args.call.buffers[1]);
  return static_cast<double>(Type::Load(probs[static_cast<int64_t>(i) * args.stride]));
}

template <class Type>
__device__ uint64_t CandidateKey(const RandomSampleArgs& args, uint64_t i) {
  const auto* probs = static_cast<const typename Type::Storage*>(args.call.buffers[1]);
  return KeyOf(Type(), probs[static_cast<int64_t>(i) * args.stride]);
}

__device__ void StoreIndex(const RandomSampleArgs& args, uint64_t index) {
  void* result = args.call.buffers[0];
  switch (args.result_dtype) {
    case INFINI_DTYPE_I32:
      *static_cast<int32_t*>(result) = static_cast<int32_t>(index);
      break;
    case INFINI_DTYPE_I64:
      *static_cast<int64_t*>(result) = static_cast<int64_t>(index);
      break;
    case INFINI_DTYPE_U32:
      *static_cast<uint32_t*>(result) = static_cast<uint32_t>(index);
      break;
    case INFINI_DTYPE_U64:
      *static_cast<uint64_t*>(result) = index;
      break;
    default:
      break;  // refused by the plan
  }
}

__device__ inline bool TakesArgMax(const KernelCall& call) {
  return call.random_val == 0 || call.topp == 0 || call.topk == 1 || call.temperature == 0;
}

// A value and its index, for the arg max: `none` is no candidate yet.
struct Best {
  double value;
  uint64_t index;
};

constexpr uint64_t kNone = UINT64_MAX;

// Whether a beats b: a number (NaN never counts) larger, or equal at a lower index.
__device__ inline bool Beats(const Best& a, const Best& b) {
  if (a.index == kNone || a.value != a.value) return false;
  if (b.index == kNone) return true;
  return a.value > b.value || (a.value == b.value && a.index < b.index);
}

__device__ Best WarpBest(Best best) {
  for (int mask = kWarpSize / 2; mask > 0; mask >>= 1) {
    const Best other{__shfl_xor_sync(kFullMask, best.value, mask),
                     __shfl_xor_sync(kFullMask, best.index, mask)};
    if (Beats(other, best)) best = other;
  }
  return best;
}

// The CPU's ArgMax: the first maximum, scanning from candidate 0; a NaN never replaces the best,
// so a NaN at 0 stays the answer. Every thread gets the index.
template <class Type>
__device__ uint64_t ArgMax(const RandomSampleArgs& args) {
  __shared__ Best scratch[kWarpSize];
  Best best{0, kNone};
  for (uint64_t i = threadIdx.x; i < args.voc; i += blockDim.x) {
    const Best candidate{CandidateValue<Type>(args, i), i};
    if (Beats(candidate, best)) best = candidate;
  }
  best = WarpBest(best);
  const int warp = threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  __syncthreads();
  if (lane == 0) scratch[warp] = best;
  __syncthreads();
  best = lane < static_cast<int>(blockDim.x / kWarpSize) ? scratch[lane] : Best{0, kNone};
  best = WarpBest(best);
  const double first = CandidateValue<Type>(args, 0);
  if (first != first || best.index == kNone) return 0;
  return best.index;
}

// The terms of the cumulative sum in sorted order, in parallel: cum[0] = 1, cum[i] = exp((v[i] -
// max) / temperature), each exactly as the sequential sum would compute it.
template <class Type>
__device__ void WriteTerms(const RandomSampleArgs& args, const uint32_t* order, double* cum) {
  const double max = CandidateValue<Type>(args, order[0]);
  const double temperature = args.call.temperature;
  for (uint64_t i = threadIdx.x; i < args.voc; i += blockDim.x) {
    cum[i] = i == 0 ? 1.0 : Exp((CandidateValue<Type>(args, order[i]) - max) / temperature);
  }
  __syncthreads();
}

// The CPU's cumulative sum exactly: the terms added in order, by one thread (slow: one dependent
// add per candidate).
__device__ void SequentialSum(uint64_t voc, double* cum) {
  if (threadIdx.x == 0) {
    constexpr uint64_t kBatch = 8;  // terms read ahead of their adds
    double sum = cum[0];
    uint64_t i = 1;
    for (; i + kBatch <= voc; i += kBatch) {
      double terms[kBatch];
#pragma unroll
      for (uint64_t b = 0; b < kBatch; ++b) terms[b] = cum[i + b];
#pragma unroll
      for (uint64_t b = 0; b < kBatch; ++b) {
        sum += terms[b];
        cum[i + b] = sum;
      }
    }
    for (; i < voc; ++i) {
      sum += cum[i];
      cum[i] = sum;
    }
  }
  __syncthreads();
}

// The cumulative sum in parallel, in place: tiles of kItems consecutive terms per thread, each
// tile's thread totals scanned across the block. Its order of additions is not the CPU's.
__device__ void ParallelSum(uint64_t voc, double* cum) {
  constexpr int kItems = 8;
  __shared__ double warp_totals[kWarpSize];
  const int warp = threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  double carry = 0;
  for (uint64_t tile = 0; tile < voc; tile += static_cast<uint64_t>(blockDim.x) * kItems) {
    const uint64_t first = tile + static_cast<uint64_t>(threadIdx.x) * kItems;
    double running[kItems];
    double total = 0;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      total += first + j < voc ? cum[first + j] : 0.0;
      running[j] = total;
    }
    double inclusive = total;
    for (int delta = 1; delta < kWarpSize; delta <<= 1) {
      const double below = __shfl_up_sync(kFullMask, inclusive, delta);
      if (lane >= delta) inclusive += below;
    }
    if (lane == kWarpSize - 1) warp_totals[warp] = inclusive;
    __syncthreads();
    double before = carry;  // the tiles before, the warps before, the lanes before
    double tile_total = carry;
    for (int w = 0; w < warps; ++w) {
      const double warp_total = warp_totals[w];
      if (w < warp) before += warp_total;
      tile_total += warp_total;
    }
    before += inclusive - total;
#pragma unroll
    for (int j = 0; j < kItems; ++j) {
      if (first + j < voc) cum[first + j] = before + running[j];
    }
    carry = tile_total;
    __syncthreads();  // warp_totals is rewritten by the next tile
  }
  __syncthreads();
}

// The first i < k with limit <= cum[i], scaled by `scale` (kNone if none); every thread gets it.
__device__ uint64_t FirstReaching(const double* cum, uint64_t k, double limit, double scale) {
  __shared__ uint64_t scratch[kWarpSize];
  uint64_t first = kNone;
  for (uint64_t i = threadIdx.x; i < k; i += blockDim.x) {
    if (limit <= cum[i] * scale) {
      first = i;
      break;  // each thread's i only grows
    }
  }
  return BlockReduce(first, MinOp(), kNone, scratch);
}

// The threshold: random_val * min(cum[k - 1], cum[voc - 1] * topp), as the CPU rounds it.
__device__ inline double Limit(const KernelCall& call, double top_k, double total) {
  return static_cast<double>(call.random_val) *
         MinOp()(top_k, total * static_cast<double>(call.topp));
}

__device__ inline bool IsFinite(double x) { return x - x == 0; }

// The draw from the candidates in sorted order: order[voc] their indices; cum[voc] doubles of
// scratch (shared or global memory). Every thread gets the index.
//
// The CPU's cumulative sums are sequential; summing 10^5 terms with one thread takes milliseconds.
// So the sums are first made in parallel: any order of adding n non-negative terms lies within
// (n - 1) u (u = 2^-53) of the exact sum, so two orders differ by at most 2 n u of it. With every
// sum widened by delta = (3 n + 8) u (the slack also covers exp's last bit against the host's), the
// threshold and each cum[i] lie in known intervals; when these decide the answer (the first i
// whose interval is surely at or above the threshold, all before it surely below), it is the
// CPU's. Otherwise (a sum within ~1e-10 of the threshold, or a sum not finite: NaN or infinite
// candidates) the sums are made again sequentially, exactly in the CPU's order.
template <class Type>
__device__ uint64_t DrawSorted(const RandomSampleArgs& args, const uint32_t* order, double* cum) {
  const KernelCall& call = args.call;
  const uint64_t voc = args.voc;
  const uint64_t topk = call.topk <= 0 ? voc : static_cast<uint64_t>(call.topk);
  const uint64_t k = topk < voc ? topk : voc;
  WriteTerms<Type>(args, order, cum);
  ParallelSum(voc, cum);
  const double top_k = cum[k - 1];
  const double total = cum[voc - 1];
  if (IsFinite(total)) {  // then every sum is: the terms are >= 0
    const double delta = (3.0 * static_cast<double>(voc) + 8.0) * 0x1p-53;
    const double low = 1 - delta;
    const double high = 1 + delta;
    // The threshold is monotonic in each sum: its extremes lie at the corners.
    const double corners[4] = {
        Limit(call, top_k * low, total * low), Limit(call, top_k * low, total * high),
        Limit(call, top_k * high, total * low), Limit(call, top_k * high, total * high)};
    double limit_low = corners[0];
    double limit_high = corners[0];
    for (double corner : corners) {
      limit_low = MinOp()(limit_low, corner);
      limit_high = MaxOp()(limit_high, corner);
    }
    if (IsFinite(limit_low) && IsFinite(limit_high)) {
      const uint64_t maybe = FirstReaching(cum, k, limit_low, high);
      const uint64_t surely = FirstReaching(cum, k, limit_high, low);
      if (maybe == surely) return order[surely == kNone ? k - 1 : surely];
    }
  }
  __syncthreads();  // every thread has read the parallel sums it decided by
  WriteTerms<Type>(args, order, cum);
  SequentialSum(voc, cum);
  const uint64_t first = FirstReaching(cum, k, Limit(call, cum[k - 1], cum[voc - 1]), 1.0);
  return order[first == kNone ? k - 1 : first];
}

// Candidates sorted in dynamic shared memory (voc keys of 8 bytes, then voc indices of 4) by rank:
// each candidate's place is the count of those before it in the order, so the sort is stable by
// construction. Quadratic, for the small vocabularies the plan sends here.
template <class Type>
__device__ void RandomSampleShared(const RandomSampleArgs& args) {
  extern __shared__ uint64_t shared_keys[];
  const uint64_t voc = args.voc;
  uint64_t index;
  if (TakesArgMax(args.call)) {
    index = ArgMax<Type>(args);
  } else {
    uint64_t* keys = shared_keys;
    uint32_t* order = reinterpret_cast<uint32_t*>(keys + voc);
    for (uint64_t i = threadIdx.x; i < voc; i += blockDim.x) keys[i] = CandidateKey<Type>(args, i);
    __syncthreads();
    for (uint64_t i = threadIdx.x; i < voc; i += blockDim.x) {
      const uint64_t key = keys[i];
      uint32_t rank = 0;
      for (uint64_t j = 0; j < voc; ++j) {
        const uint64_t other = keys[j];  // the same j in every thread: a broadcast
        rank += (other < key) | ((other == key) & (j < i));
      }
      order[rank] = static_cast<uint32_t>(i);
    }
    __syncthreads();  // the keys are free now: their space holds the cumulative sums
    index = DrawSorted<Type>(args, order, reinterpret_cast<double*>(keys));
  }
  if (threadIdx.x == 0) StoreIndex(args, index);
}

constexpr int kRadixBits = 8;
constexpr int kRadixSize = 1 << kRadixBits;
constexpr int kMaxPasses = 8;  // 64-bit keys
constexpr unsigned kNoDigit = kRadixSize;

__device__ inline unsigned DigitOf(uint64_t key, int pass) {
  return static_cast<unsigned>(key >> (pass * kRadixBits)) & (kRadixSize - 1);
}

__device__ inline unsigned LanesBelow() {
  unsigned mask;
  asm("mov.u32 %0, %%lanemask_lt;" : "=r"(mask));
  return mask;
}

// The shared memory of the workspace sort.
struct RadixShared {
  uint32_t counts[kMaxPasses][kRadixSize];       // per pass: the digits' counts, then their bases
  uint32_t warp_offsets[kRadixSize][kWarpSize];  // per tile: per digit, per warp
  int skip[kMaxPasses];
};

__device__ void ClearWarpOffsets(RadixShared& s) {
  uint32_t* offsets = &s.warp_offsets[0][0];
  for (int e = threadIdx.x; e < kRadixSize * kWarpSize; e += blockDim.x) offsets[e] = 0;
}

// Adds each valid lane's digit to counts (one atomic per distinct digit of the warp); returns the
// lanes of the warp with the same digit. All lanes of the warp call it.
__device__ unsigned CountDigit(unsigned digit, uint32_t* counts) {
  const unsigned peers = __match_any_sync(kFullMask, digit);
  if (digit != kNoDigit && (peers & LanesBelow()) == 0) atomicAdd(&counts[digit], __popc(peers));
  return peers;
}

// Copies the candidates' keys and indices (in index order) to keys/indices and counts the digits
// of every pass; turns each pass's counts into bases (exclusive sums) and marks the passes whose
// digit is the same for every candidate (they would not change the order).
template <class Type, int kPasses>
__device__ void LoadAndCount(const RandomSampleArgs& args, uint64_t* keys, uint32_t* indices,
                             RadixShared& s) {
  const uint64_t voc = args.voc;
  uint32_t* all_counts = &s.counts[0][0];
  for (int e = threadIdx.x; e < kPasses * kRadixSize; e += blockDim.x) all_counts[e] = 0;
  __syncthreads();
  for (uint64_t tile = 0; tile < voc; tile += blockDim.x) {  // uniform bounds: whole warps
    const uint64_t i = tile + threadIdx.x;
    const bool valid = i < voc;
    const uint64_t key = valid ? CandidateKey<Type>(args, i) : 0;
    if (valid) {
      keys[i] = key;
      indices[i] = static_cast<uint32_t>(i);
    }
#pragma unroll
    for (int pass = 0; pass < kPasses; ++pass) {
      CountDigit(valid ? DigitOf(key, pass) : kNoDigit, s.counts[pass]);
    }
  }
  __syncthreads();
  if (threadIdx.x < kPasses) {  // one thread per pass: 256 sequential adds
    uint32_t* counts = s.counts[threadIdx.x];
    uint32_t sum = 0;
    int skip = 0;
    for (int d = 0; d < kRadixSize; ++d) {
      const uint32_t count = counts[d];
      skip |= count == voc;
      counts[d] = sum;
      sum += count;
    }
    s.skip[threadIdx.x] = skip;
  }
  ClearWarpOffsets(s);
  __syncthreads();
}

// One stable pass by the digit `pass`, tile by tile (a tile: one candidate per thread, in thread
// order): each candidate goes to its digit's base, plus those of its digit in earlier warps of the
// tile, plus those in earlier lanes of its warp.
__device__ void RadixPass(uint64_t voc, int pass, const uint64_t* keys_in,
                          const uint32_t* indices_in, uint64_t* keys_out, uint32_t* indices_out,
                          RadixShared& s) {
  const int warp = threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  uint32_t* bases = s.counts[pass];
  for (uint64_t tile = 0; tile < voc; tile += blockDim.x) {
    const uint64_t i = tile + threadIdx.x;
    const bool valid = i < voc;
    const uint64_t key = valid ? keys_in[i] : 0;
    const unsigned digit = valid ? DigitOf(key, pass) : kNoDigit;
    const unsigned peers = __match_any_sync(kFullMask, digit);
    const unsigned rank = __popc(peers & LanesBelow());
    if (valid && rank == 0) s.warp_offsets[digit][warp] = __popc(peers);
    __syncthreads();
    // Per digit, the warps' counts become offsets: warp w scans the digits w, w + warps, ...
    for (int d = warp; d < kRadixSize; d += warps) {
      const uint32_t count = lane < warps ? s.warp_offsets[d][lane] : 0;
      uint32_t inclusive = count;
      for (int delta = 1; delta < kWarpSize; delta <<= 1) {
        const uint32_t below = __shfl_up_sync(kFullMask, inclusive, delta);
        if (lane >= delta) inclusive += below;
      }
      const uint32_t base = bases[d];
      if (lane < warps) s.warp_offsets[d][lane] = base + inclusive - count;
      __syncwarp();
      if (lane == kWarpSize - 1) bases[d] = base + inclusive;
    }
    __syncthreads();
    if (valid) {
      const uint32_t to = s.warp_offsets[digit][warp] + rank;
      keys_out[to] = key;
      indices_out[to] = indices_in[i];
    }
    __syncthreads();
    ClearWarpOffsets(s);
    __syncthreads();
  }
}

// Candidates sorted in the workspace by a least-significant-digit radix sort (8-bit digits,
// stable, so ties keep their index order), for vocabularies too large for shared memory.
template <class Type>
__device__ void RandomSampleLarge(const RandomSampleArgs& args) {
  __shared__ RadixShared s;
  // The key's width: the storage's (16, 32 or 64 bits).
  constexpr int kPasses = static_cast<int>(sizeof(typename Type::Storage)) * 8 / kRadixBits;
  uint64_t index;
  if (TakesArgMax(args.call) || args.call.workspace == nullptr ||
      args.call.workspace_size < args.workspace_needed) {
    // Without its workspace the draw cannot be made: the arg max, as the CPU falls back to.
    index = ArgMax<Type>(args);
  } else {
    char* workspace = static_cast<char*>(args.call.workspace);
    uint64_t* keys = reinterpret_cast<uint64_t*>(workspace + args.keys_offset[0]);
    uint64_t* other_keys = reinterpret_cast<uint64_t*>(workspace + args.keys_offset[1]);
    uint32_t* indices = reinterpret_cast<uint32_t*>(workspace + args.indices_offset[0]);
    uint32_t* other_indices = reinterpret_cast<uint32_t*>(workspace + args.indices_offset[1]);
    LoadAndCount<Type, kPasses>(args, keys, indices, s);
    for (int pass = 0; pass < kPasses; ++pass) {
      if (s.skip[pass]) continue;
      RadixPass(args.voc, pass, keys, indices, other_keys, other_indices, s);
      uint64_t* sorted_keys = other_keys;
      other_keys = keys;
      keys = sorted_keys;
      uint32_t* sorted_indices = other_indices;
      other_indices = indices;
      indices = sorted_indices;
    }
    // The keys are no longer needed: their space holds the cumulative sums.
    index = DrawSorted<Type>(args, indices, reinterpret_cast<double*>(keys));
  }
  if (threadIdx.x == 0) StoreIndex(args, index);
}

}  // namespace infinirt::infiniop_cuda_family::kernels

// The other operators' kernel bodies, with the helpers above.
#include "kernels/attention_kernels.h"
#include "kernels/model_kernels.h"
#include "kernels/quantized_kernels.h"
#include "kernels/routing_kernels.h"

// --- The kernels -------------------------------------------------------------------------------

namespace ik = infinirt::infiniop_cuda_family::kernels;
using infinirt::infiniop_cuda_family::AddRMSNormArgs;
using infinirt::infiniop_cuda_family::CacheWriteArgs;
using infinirt::infiniop_cuda_family::CausalSoftmaxArgs;
using infinirt::infiniop_cuda_family::DenseAttentionArgs;
using infinirt::infiniop_cuda_family::DequantizeAWQArgs;
using infinirt::infiniop_cuda_family::ElementwiseArgs;
using infinirt::infiniop_cuda_family::EmbeddingArgs;
using infinirt::infiniop_cuda_family::I8GemmArgs;
using infinirt::infiniop_cuda_family::LayerNormArgs;
using infinirt::infiniop_cuda_family::LineArgs;
using infinirt::infiniop_cuda_family::PagedAttentionArgs;
using infinirt::infiniop_cuda_family::PagedCachingArgs;
using infinirt::infiniop_cuda_family::RandomSampleArgs;
using infinirt::infiniop_cuda_family::RMSNormArgs;
using infinirt::infiniop_cuda_family::RoPEArgs;
using infinirt::infiniop_cuda_family::RouterArgs;
using infinirt::infiniop_cuda_family::TopKArgs;

// A kernel per row of elementwise_operators.h's tables and dtype: infiniop_<snake>_<dtype>.
#define INFINIOP_ELEMENTWISE_KERNEL_(inputs, Name, snake, Op, suffix, Type) \
  extern "C" __global__ void __launch_bounds__(1024)                        \
      infiniop_##snake##_##suffix(ElementwiseArgs args) {                   \
    ik::Compute<ik::Type, ik::Op, inputs>(args);                            \
  }
#define INFINIOP_BINARY_KERNELS_(Name, snake, Op, types) \
  types(INFINIOP_ELEMENTWISE_KERNEL_, 2, Name, snake, Op)
#define INFINIOP_UNARY_KERNELS_(Name, snake, Op, types) \
  types(INFINIOP_ELEMENTWISE_KERNEL_, 1, Name, snake, Op)
INFINIOP_CUDA_BINARY_OPERATORS(INFINIOP_BINARY_KERNELS_)
INFINIOP_CUDA_UNARY_OPERATORS(INFINIOP_UNARY_KERNELS_)
#undef INFINIOP_UNARY_KERNELS_
#undef INFINIOP_BINARY_KERNELS_
#undef INFINIOP_ELEMENTWISE_KERNEL_

#define INFINIOP_COPY_KERNEL_(name, Element)                                      \
  extern "C" __global__ void __launch_bounds__(1024) name(ElementwiseArgs args) { \
    ik::Copy<Element>(args);                                                      \
  }

INFINIOP_COPY_KERNEL_(infiniop_rearrange_1, uint8_t)
INFINIOP_COPY_KERNEL_(infiniop_rearrange_2, uint16_t)
INFINIOP_COPY_KERNEL_(infiniop_rearrange_4, uint32_t)
INFINIOP_COPY_KERNEL_(infiniop_rearrange_8, uint64_t)
INFINIOP_COPY_KERNEL_(infiniop_rearrange_16, ik::Bytes16)
#undef INFINIOP_COPY_KERNEL_

#define INFINIOP_RMS_NORM_KERNEL_(name, X, W)                                 \
  extern "C" __global__ void __launch_bounds__(1024) name(RMSNormArgs args) { \
    ik::RMSNorm<ik::X, ik::W>(args);                                          \
  }

INFINIOP_RMS_NORM_KERNEL_(infiniop_rms_norm_f16_w_f16, F16, F16)
INFINIOP_RMS_NORM_KERNEL_(infiniop_rms_norm_f16_w_bf16, F16, BF16)
INFINIOP_RMS_NORM_KERNEL_(infiniop_rms_norm_f16_w_f32, F16, F32)
INFINIOP_RMS_NORM_KERNEL_(infiniop_rms_norm_bf16_w_f16, BF16, F16)
INFINIOP_RMS_NORM_KERNEL_(infiniop_rms_norm_bf16_w_bf16, BF16, BF16)
INFINIOP_RMS_NORM_KERNEL_(infiniop_rms_norm_bf16_w_f32, BF16, F32)
INFINIOP_RMS_NORM_KERNEL_(infiniop_rms_norm_f32_w_f32, F32, F32)
INFINIOP_RMS_NORM_KERNEL_(infiniop_rms_norm_f64_w_f64, F64, F64)
#undef INFINIOP_RMS_NORM_KERNEL_

#define INFINIOP_FLOAT_KERNELS_(X, prefix, Args, call) \
  X(prefix##_f16, Args, call<ik::F16>)                 \
  X(prefix##_bf16, Args, call<ik::BF16>)               \
  X(prefix##_f32, Args, call<ik::F32>)                 \
  X(prefix##_f64, Args, call<ik::F64>)

#define INFINIOP_KERNEL_(name, Args, call) \
  extern "C" __global__ void __launch_bounds__(1024) name(Args args) { call(args); }

// Template arguments with a comma do not pass through a macro: RoPE's pairings get aliases.
namespace infinirt::infiniop_cuda_family::kernels {
template <class Type>
__device__ void RoPEGptJ(const RoPEArgs& args) {
  RoPE<Type, false>(args);
}
template <class Type>
__device__ void RoPEGptNeox(const RoPEArgs& args) {
  RoPE<Type, true>(args);
}
}  // namespace infinirt::infiniop_cuda_family::kernels

INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_causal_softmax, CausalSoftmaxArgs,
                        ik::CausalSoftmax)
INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_rope_gpt_j, RoPEArgs, ik::RoPEGptJ)
INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_rope_gpt_neox, RoPEArgs, ik::RoPEGptNeox)
INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_random_sample, RandomSampleArgs,
                        ik::RandomSampleShared)
INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_random_sample_large, RandomSampleArgs,
                        ik::RandomSampleLarge)

// The row-wise model operators (kernels/model_kernels.h).
namespace infinirt::infiniop_cuda_family::kernels {
template <class Type>
__device__ void SoftmaxOnly(const LineArgs& args) {
  Softmax<Type, false>(args);
}
template <class Type>
__device__ void LogSoftmax(const LineArgs& args) {
  Softmax<Type, true>(args);
}
}  // namespace infinirt::infiniop_cuda_family::kernels

INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_layer_norm, LayerNormArgs, ik::LayerNorm)
INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_softmax, LineArgs, ik::SoftmaxOnly)
INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_log_softmax, LineArgs, ik::LogSoftmax)
INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_silu_and_mul, LineArgs, ik::SiluAndMul)
INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_embedding, EmbeddingArgs, ik::Embedding)

// The selections (kernels/routing_kernels.h): TopK sorting in shared memory or in the workspace;
// the routers on F16, BF16 and F32 scores, as on the CPU.
INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_topk, TopKArgs, ik::TopKShared)
INFINIOP_FLOAT_KERNELS_(INFINIOP_KERNEL_, infiniop_topk_workspace, TopKArgs, ik::TopKWorkspace)
INFINIOP_KERNEL_(infiniop_topksoftmax_f16, RouterArgs, ik::Topksoftmax<ik::F16>)
INFINIOP_KERNEL_(infiniop_topksoftmax_bf16, RouterArgs, ik::Topksoftmax<ik::BF16>)
INFINIOP_KERNEL_(infiniop_topksoftmax_f32, RouterArgs, ik::Topksoftmax<ik::F32>)
INFINIOP_KERNEL_(infiniop_topkrouter_f16, RouterArgs, ik::Topkrouter<ik::F16>)
INFINIOP_KERNEL_(infiniop_topkrouter_bf16, RouterArgs, ik::Topkrouter<ik::BF16>)
INFINIOP_KERNEL_(infiniop_topkrouter_f32, RouterArgs, ik::Topkrouter<ik::F32>)

#define INFINIOP_ADD_RMS_NORM_KERNEL_(name, X, W)                                \
  extern "C" __global__ void __launch_bounds__(1024) name(AddRMSNormArgs args) { \
    ik::AddRMSNorm<ik::X, ik::W>(args);                                          \
  }

INFINIOP_ADD_RMS_NORM_KERNEL_(infiniop_add_rms_norm_f16_w_f16, F16, F16)
INFINIOP_ADD_RMS_NORM_KERNEL_(infiniop_add_rms_norm_f16_w_bf16, F16, BF16)
INFINIOP_ADD_RMS_NORM_KERNEL_(infiniop_add_rms_norm_f16_w_f32, F16, F32)
INFINIOP_ADD_RMS_NORM_KERNEL_(infiniop_add_rms_norm_bf16_w_f16, BF16, F16)
INFINIOP_ADD_RMS_NORM_KERNEL_(infiniop_add_rms_norm_bf16_w_bf16, BF16, BF16)
INFINIOP_ADD_RMS_NORM_KERNEL_(infiniop_add_rms_norm_bf16_w_f32, BF16, F32)
INFINIOP_ADD_RMS_NORM_KERNEL_(infiniop_add_rms_norm_f32_w_f32, F32, F32)
INFINIOP_ADD_RMS_NORM_KERNEL_(infiniop_add_rms_norm_f64_w_f64, F64, F64)
#undef INFINIOP_ADD_RMS_NORM_KERNEL_

// The caches and attention (kernels/attention_kernels.h), and the quantized weights
// (kernels/quantized_kernels.h): F16, BF16 and F32 only, as on the CPU; blocks of at most 16 warps
// (attention) or exactly 8 (I8Gemm), which __launch_bounds__ lets the registers count on. The
// attention kernels ask for one block per multiprocessor at the least: with its default aim of two,
// ptxas held them to 64 registers and spilled their row's state (96 registers without spills).
#define INFINIOP_HALF_AND_F32_KERNELS_(X, bounds, prefix, Args, call) \
  X(bounds, prefix##_f16, Args, call<ik::F16>)                        \
  X(bounds, prefix##_bf16, Args, call<ik::BF16>)                      \
  X(bounds, prefix##_f32, Args, call<ik::F32>)
#define INFINIOP_BOUNDED_KERNEL_(bounds, name, Args, call) \
  extern "C" __global__ void __launch_bounds__ bounds name(Args args) { call(args); }

INFINIOP_HALF_AND_F32_KERNELS_(INFINIOP_BOUNDED_KERNEL_, (512, 1), infiniop_paged_attention,
                               PagedAttentionArgs, ik::PagedAttention)
INFINIOP_HALF_AND_F32_KERNELS_(INFINIOP_BOUNDED_KERNEL_, (512, 1), infiniop_dense_attention,
                               DenseAttentionArgs, ik::DenseAttention)
INFINIOP_HALF_AND_F32_KERNELS_(INFINIOP_BOUNDED_KERNEL_, (1024), infiniop_dequantize_awq,
                               DequantizeAWQArgs, ik::DequantizeAWQ)
INFINIOP_HALF_AND_F32_KERNELS_(INFINIOP_BOUNDED_KERNEL_, (256), infiniop_i8_gemm, I8GemmArgs,
                               ik::I8Gemm)

// The cache writes copy elements as stored: a kernel per element size (F16 and BF16: 2, F32: 4).
INFINIOP_BOUNDED_KERNEL_((1024), infiniop_kv_caching_2, CacheWriteArgs, ik::CacheWrite<uint16_t>)
INFINIOP_BOUNDED_KERNEL_((1024), infiniop_kv_caching_4, CacheWriteArgs, ik::CacheWrite<uint32_t>)
INFINIOP_BOUNDED_KERNEL_((1024), infiniop_paged_caching_2, PagedCachingArgs,
                         ik::PagedCaching<uint16_t>)
INFINIOP_BOUNDED_KERNEL_((1024), infiniop_paged_caching_4, PagedCachingArgs,
                         ik::PagedCaching<uint32_t>)
#undef INFINIOP_BOUNDED_KERNEL_
#undef INFINIOP_HALF_AND_F32_KERNELS_
#undef INFINIOP_KERNEL_
#undef INFINIOP_FLOAT_KERNELS_
