// What the CPU operator backend's files share: the storage types of F16 and BF16 elements and
// their conversions, how each storage type is computed with, and the plan of a descriptor, which
// the table's entries (cpu_operators.cc) queue on streams as host functions.
#ifndef INFINIOP_CPU_COMMON_H_
#define INFINIOP_CPU_COMMON_H_

#include <algorithm>
#include <array>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <type_traits>

#include "infiniop_backend.h"
#include "infiniop_backend_support.h"

namespace infinirt::infiniop_cpu {

// --- Half-precision conversions ----------------------------------------------------------------

inline uint32_t BitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

inline float FloatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// IEEE binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
inline float HalfToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f) return FloatOf(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return FloatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in float (a power-of-two scale of a small integer).
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return FloatOf(sign | BitsOf(magnitude));
}

// Rounds to nearest, ties to even; too large a value becomes infinity, a NaN stays a NaN.
inline uint16_t FloatToHalf(float value) {
  const uint32_t bits = BitsOf(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {  // NaN: quiet, with the top of its payload
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  // 65520 (0x477ff000) lies halfway between the largest half, 65504, and 2^16; the tie goes to
  // the even neighbour, which is infinity.
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) {  // a normal half: rebias the exponent, round off 13 bits
    const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }
  // A subnormal half (or zero): the value in units of 2^-24, rounded to an integer. Below 2^-25
  // (float exponent 102) that is 0; exactly 2^-25 is a tie that goes to the even 0 as well.
  const uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return sign;
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - exponent;  // 14 to 24
  uint32_t units = significand >> shift;
  const uint32_t remainder = significand & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (units & 1u) != 0)) ++units;
  return static_cast<uint16_t>(sign | units);  // 0x400 when it rounds up to the smallest normal
}

// bfloat16 is the upper half of a float.
inline float Bf16ToFloat(uint16_t bf16) { return FloatOf(static_cast<uint32_t>(bf16) << 16); }

inline uint16_t FloatToBf16(float value) {
  const uint32_t bits = BitsOf(value);
  // A NaN is truncated (and made quiet): rounding could carry its payload into infinity.
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// The storage types of F16 and BF16 elements.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// How elements of a storage type are computed with: Load gives the value to compute with, Store
// the element to write back. Half precision computes in float; signed integers in the unsigned
// type of their width, so that overflow wraps instead of being undefined.
template <class T>
struct Arithmetic {
  using Value = T;
  static Value Load(T element) { return element; }
  static T Store(Value value) { return value; }
};

template <>
struct Arithmetic<Half> {
  using Value = float;
  static float Load(Half element) { return HalfToFloat(element.bits); }
  static Half Store(float value) { return Half{FloatToHalf(value)}; }
};

template <>
struct Arithmetic<BFloat16> {
  using Value = float;
  static float Load(BFloat16 element) { return Bf16ToFloat(element.bits); }
  static BFloat16 Store(float value) { return BFloat16{FloatToBf16(value)}; }
};

template <class Signed>
struct WrappingArithmetic {
  using Value = std::make_unsigned_t<Signed>;
  static Value Load(Signed element) { return static_cast<Value>(element); }
  static Signed Store(Value value) { return static_cast<Signed>(value); }  // modular (GCC, C++20)
};

template <>
struct Arithmetic<int32_t> : WrappingArithmetic<int32_t> {};
template <>
struct Arithmetic<int64_t> : WrappingArithmetic<int64_t> {};

// The value a storage type computes with (float for F16, BF16 and F32, double for F64), and an
// element loaded into it and stored back, rounded once.
template <class T>
using ValueOf = typename Arithmetic<T>::Value;

template <class T>
ValueOf<T> Load(T element) {
  return Arithmetic<T>::Load(element);
}

template <class T>
T Store(ValueOf<T> value) {
  return Arithmetic<T>::Store(value);
}

// --- Vectorisation -----------------------------------------------------------------------------

// The backend is compiled at -O3 (CMakeLists.txt). A contiguous loop that stores is one loop
// declared free of dependences between iterations (INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE), which
// holds for an output that is one of the inputs element for element (in place); an output
// overlapping an input otherwise is not supported. (Not blocks of kBlock unrolled: GCC 12 then
// cannot tell the stores from the loads and leaves the block scalar.) A sum keeps one running
// total per position of a block of kBlock, so that its additions need no order between blocks
// and vectorise.
constexpr size_t kBlock = 16;
// The least work, in elements, worth handing to another thread (ParallelFor's grain): waking a
// helper costs a few microseconds, which 64 Ki elements take to compute.
constexpr size_t kParallelGrain = size_t{1} << 16;
#if defined(__GNUC__) && !defined(__clang__)
#define INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE _Pragma("GCC ivdep")
#else
#define INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
#endif

// e^x = 2^n e^r for an x the caller has clamped to where its 2^n is representable: x = n ln 2 + r
// with |r| <= ln 2 / 2, e^r by Cephes' polynomial for expf (about 1 ulp). Without a call or a
// branch, so that a loop of it vectorises (a loop calling expf does not).
struct ExpParts {
  float e_r;  // e^r
  int32_t n;
};

[[gnu::always_inline]] inline ExpParts ReducedExp(float clamped) {
  constexpr float kLog2e = 1.44269504088896341f;
  constexpr float kLn2High = 0.693359375f, kLn2Low = -2.12194440e-4f;
  constexpr float kShifter = 12582912.0f;  // 1.5 * 2^23: adding it rounds to an integer
  constexpr int32_t kShifterBits = 0x4b400000;
  const float shifted = clamped * kLog2e + kShifter;  // n in the low mantissa bits
  const float fn = shifted - kShifter;
  int32_t shifted_bits;
  std::memcpy(&shifted_bits, &shifted, 4);
  const float r = (clamped - fn * kLn2High) - fn * kLn2Low;
  float p = 1.9875691500e-4f;
  p = p * r + 1.3981999507e-3f;
  p = p * r + 8.3334519073e-3f;
  p = p * r + 4.1665795894e-2f;
  p = p * r + 1.6666665459e-1f;
  p = p * r + 5.0000001201e-1f;
  return {p * (r * r) + r + 1.0f, shifted_bits - kShifterBits};
}

// Below this e^x is 0 to the exponentials here: 2^n would leave the normal range.
constexpr float kExpMin = -87.33654475f;

// e^x in float, vectorisable (ReducedExp): 0 below kExpMin, infinity above 88.72, and NaN for
// NaN, as expf does (but for denormal results, flushed to 0). Its comparisons vectorise only
// where they may not trap (-fno-trapping-math: CMakeLists.txt).
[[gnu::always_inline]] inline float VectorisableExp(float x) {
  constexpr float kMax = 88.72283905f;
  // NaN compares false: it becomes kExpMin here (n stays in range), and NaN again at the end.
  float clamped = x > kExpMin ? x : kExpMin;
  clamped = clamped < kMax ? clamped : kMax;
  const ExpParts parts = ReducedExp(clamped);
  // 2^n for n in [-126, 128] as 2^(n/2) * 2^(n - n/2), each a normal float.
  const int32_t half = parts.n >> 1;
  const uint32_t bits_a = static_cast<uint32_t>(half + 127) << 23;
  const uint32_t bits_b = static_cast<uint32_t>(parts.n - half + 127) << 23;
  float two_a, two_b;
  std::memcpy(&two_a, &bits_a, 4);
  std::memcpy(&two_b, &bits_b, 4);
  float y = parts.e_r * two_a * two_b;
  y = x < kExpMin ? 0.0f : y;
  y = x > kMax ? std::numeric_limits<float>::infinity() : y;
  return x != x ? x : y;
}

// erfc(x) in float without a call or a branch, so that a loop of it vectorises: for z = |x|,
// erfc(z) = t exp(-z^2 + P(t)) with t = 1 / (1 + z / 2) and P the degree-9 fit of Numerical
// Recipes' erfcc (relative error below 1.2e-7 for every z >= 0), then erfc(x) = 2 - erfc(z) for
// x < 0. NaN for NaN.
[[gnu::always_inline]] inline float VectorisableErfc(float x) {
  const float z = x < 0.0f ? -x : x;
  const float t = 1.0f / (1.0f + 0.5f * z);
  float p = 0.17087277f;
  p = p * t - 0.82215223f;
  p = p * t + 1.48851587f;
  p = p * t - 1.13520398f;
  p = p * t + 0.27886807f;
  p = p * t - 0.18628806f;
  p = p * t + 0.09678418f;
  p = p * t + 0.37409196f;
  p = p * t + 1.00002368f;
  p = p * t - 1.26551223f;
  const float erfc_z = t * VectorisableExp(p - z * z);
  return x < 0.0f ? 2.0f - erfc_z : erfc_z;
}

// e^x for x <= 0 (as softmax's x - max and sigmoid's -|x| are) in float, with fewer
// instructions than VectorisableExp: n = round(x / ln 2) is then at most 0 (at most 127 up to x =
// 88), so 2^n is one normal float and there is no overflow to handle. 0 below kExpMin, NaN for
// NaN.
[[gnu::always_inline]] inline float VectorisableExpOfNonPositive(float x) {
  const float clamped = x > kExpMin ? x : kExpMin;  // NaN too: the answer is chosen at the end
  const ExpParts parts = ReducedExp(clamped);
  const uint32_t bits = static_cast<uint32_t>(parts.n + 127) << 23;
  float two_n;
  std::memcpy(&two_n, &bits, 4);
  const float y = x < kExpMin ? 0.0f : parts.e_r * two_n;
  return x != x ? x : y;
}

// The functions the floating operators compute with: in float without a call, so that their
// loops vectorise; in double, the C library's.
[[gnu::always_inline]] inline float Exp(float x) { return VectorisableExp(x); }
inline double Exp(double x) { return std::exp(x); }
// Exp for arguments at most 0 (the float version's only domain: see above).
[[gnu::always_inline]] inline float ExpOfNonPositive(float x) {
  return VectorisableExpOfNonPositive(x);
}
inline double ExpOfNonPositive(double x) { return std::exp(x); }
inline float Erfc(float x) { return VectorisableErfc(x); }
inline double Erfc(double x) { return std::erfc(x); }

// 1 / (1 + e^-x), from e = e^-|x| (never overflowing): 1 / (1 + e) for x >= 0, e / (1 + e) below,
// which keeps its relative precision where the result is tiny. 0 at -inf, 1 at inf, NaN for NaN.
template <class V>
[[gnu::always_inline]] inline V Sigmoid(V x) {
  const V e = ExpOfNonPositive(x < V(0) ? x : -x);
  return (x < V(0) ? e : V(1)) / (V(1) + e);
}

// --- Plans -------------------------------------------------------------------------------------

// The most buffers an operator of the list takes.
constexpr size_t kMaxBuffers = infiniop_backend::MostOperatorTensors();
using Buffers = std::array<void*, kMaxBuffers>;

// What a descriptor computes, made by Create; never changed once made, and shared with the work
// queued for it (which may outlive the descriptor).
class Plan {
 public:
  Plan(size_t buffer_count, bool empty, bool uses_run_params)
      : buffer_count_(buffer_count), empty_(empty), uses_run_params_(uses_run_params) {}
  virtual ~Plan() = default;
  Plan(const Plan&) = delete;
  Plan& operator=(const Plan&) = delete;

  // Computes one call on the host, for the call's buffers (in the public call's order, each not
  // null) and run parameters (zeros where the call passed none and the plan uses none).
  virtual void Compute(const Buffers& buffers, const infiniopBackendRunParams& params) const = 0;

  // Whether a call's run parameters fit the descriptor (the routers' topk): checked when the call
  // is made, before anything is queued; the status Run answers otherwise.
  virtual infiniStatus_t CheckRun(const infiniopBackendRunParams& /*params*/) const {
    return INFINI_STATUS_SUCCESS;
  }

  size_t buffer_count() const { return buffer_count_; }
  // Nothing to compute (an empty tensor): a call queues nothing.
  bool empty() const { return empty_; }
  // Whether a call must pass its infiniopBackendRunParams.
  bool uses_run_params() const { return uses_run_params_; }

 private:
  size_t buffer_count_;
  bool empty_;
  bool uses_run_params_;
};

using PlanPtr = std::shared_ptr<const Plan>;

// The plans of the operators in cpu_llm_operators.cc, for tensors that have the operator's count
// and are readable (shape and strides present). Each answers SUCCESS with *plan set, or the
// status Create returns (NOT_IMPLEMENTED for a dtype or layout it does not compute, BAD_PARAM for
// tensors that break the operator's rules, NULL_POINTER for missing create parameters). They may
// throw std::bad_alloc.
infiniStatus_t MakeRMSNormPlan(const infiniopBackendTensor* tensors,
                               const infiniopBackendCreateParams* params, PlanPtr* plan);
infiniStatus_t MakeCausalSoftmaxPlan(const infiniopBackendTensor* tensors, PlanPtr* plan);
infiniStatus_t MakeRoPEPlan(const infiniopBackendTensor* tensors,
                            const infiniopBackendCreateParams* params, PlanPtr* plan);
infiniStatus_t MakeRandomSamplePlan(const infiniopBackendTensor* tensors, PlanPtr* plan);
// cpu_model_operators.cc's: LayerNorm, AddRMSNorm, Softmax and LogSoftmax (log) along `axis`
// (negative: from the end), Embedding.
infiniStatus_t MakeLayerNormPlan(const infiniopBackendTensor* tensors,
                                 const infiniopBackendCreateParams* params, PlanPtr* plan);
infiniStatus_t MakeAddRMSNormPlan(const infiniopBackendTensor* tensors,
                                  const infiniopBackendCreateParams* params, PlanPtr* plan);
infiniStatus_t MakeSoftmaxPlan(const infiniopBackendTensor* tensors, int axis, bool log,
                               PlanPtr* plan);
infiniStatus_t MakeEmbeddingPlan(const infiniopBackendTensor* tensors, PlanPtr* plan);
// cpu_attention.cc's: PagedCaching, PagedAttention (prefill: PagedAttentionPrefill),
// FlashAttention, KVCaching, Attention; SiluAndMul is cpu_model_operators.cc's.
infiniStatus_t MakePagedCachingPlan(const infiniopBackendTensor* tensors, PlanPtr* plan);
infiniStatus_t MakePagedAttentionPlan(const infiniopBackendTensor* tensors, bool prefill,
                                      const infiniopBackendCreateParams* params, PlanPtr* plan);
infiniStatus_t MakeFlashAttentionPlan(const infiniopBackendTensor* tensors,
                                      const infiniopBackendCreateParams* params, PlanPtr* plan);
infiniStatus_t MakeKVCachingPlan(const infiniopBackendTensor* tensors, PlanPtr* plan);
infiniStatus_t MakeAttentionPlan(const infiniopBackendTensor* tensors,
                                 const infiniopBackendCreateParams* params, PlanPtr* plan);
infiniStatus_t MakeSiluAndMulPlan(const infiniopBackendTensor* tensors, PlanPtr* plan);
// cpu_quantized.cc's: DequantizeAWQ, I8Gemm.
infiniStatus_t MakeDequantizeAWQPlan(const infiniopBackendTensor* tensors, PlanPtr* plan);
infiniStatus_t MakeI8GemmPlan(const infiniopBackendTensor* tensors, PlanPtr* plan);
// A contiguous line of n elements' softmax, vectorised for the processor (cpu_model_operators.cc;
// for Half, BFloat16, float and double): CausalSoftmax's rows use it for their visible part.
template <class T>
void SoftmaxContiguous(T* y, const T* x, size_t n);
// cpu_routing.cc's: TopK, Topksoftmax, Topkrouter.
infiniStatus_t MakeTopKPlan(const infiniopBackendTensor* tensors,
                            const infiniopBackendCreateParams* params, PlanPtr* plan);
infiniStatus_t MakeRouterPlan(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                              PlanPtr* plan);
// Gemm (cpu_gemm.cc), through oneDNN or OpenBLAS.
infiniStatus_t MakeGemmPlan(const infiniopBackendTensor* tensors, PlanPtr* plan);
// How Gemm computes a dtype, for Describe: the libraries it may go to, whichever the processor
// and the layouts pick (so that the support table is the same on every machine).
const char* GemmLibraries(infiniDtype_t dtype);

// A storage type, passed as a value: WithFloatType's callable reads it as decltype(type)::T.
template <class Storage>
struct TypeTag {
  using T = Storage;
};

// Calls make(TypeTag<T>{}) with the storage type T of a float dtype (F16, BF16, F32, F64) and
// answers its status (SUCCESS where it returns none); NOT_IMPLEMENTED for any other dtype.
// make(tag)'s status; SUCCESS where it returns nothing.
template <class Make, class Tag>
infiniStatus_t StatusOfMake(Make& make, Tag tag) {
  if constexpr (std::is_void_v<decltype(make(tag))>) {
    make(tag);
    return INFINI_STATUS_SUCCESS;
  } else {
    return make(tag);
  }
}

template <class Make>
infiniStatus_t WithFloatType(infiniDtype_t dtype, Make make) {
  switch (dtype) {
    case INFINI_DTYPE_F16:
      return StatusOfMake(make, TypeTag<Half>{});
    case INFINI_DTYPE_BF16:
      return StatusOfMake(make, TypeTag<BFloat16>{});
    case INFINI_DTYPE_F32:
      return StatusOfMake(make, TypeTag<float>{});
    case INFINI_DTYPE_F64:
      return StatusOfMake(make, TypeTag<double>{});
    default:
      return INFINI_STATUS_NOT_IMPLEMENTED;
  }
}

}  // namespace infinirt::infiniop_cpu

#endif  // INFINIOP_CPU_COMMON_H_
