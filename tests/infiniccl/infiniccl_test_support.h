// Test support for InfiniCCL on CPU devices: host values of every dtype (F16 and BF16 converted
// with round-to-nearest-even), random inputs per dtype and reduction operator, a host reference
// for the reductions, comparisons with each dtype's tolerance, device buffers with guard bytes,
// and a set of communicators (one rank per CPU device, a stream each) that issues one call per
// rank either from this thread inside a group or from one thread per rank.
//
// A CPU device's memory is host memory, so the tests fill and read device buffers through their
// pointers once the streams are synchronised.
#ifndef INFINIRT_TESTS_INFINICCL_INFINICCL_TEST_SUPPORT_H_
#define INFINIRT_TESTS_INFINICCL_INFINICCL_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <future>
#include <memory>
#include <sstream>
#include <string>
#include <thread>
#include <type_traits>
#include <utility>
#include <vector>

#include "infiniccl.h"
#include "infinicore.h"
#include "infinirt.h"
#include "test_support.h"

namespace infiniccl_test {

// --- Names, for messages ---------------------------------------------------------------------

inline std::string StatusName(infiniStatus_t status) {
  switch (status) {
#define STATUS_NAME_CASE_(name, value, text) \
  case INFINI_STATUS_##name:                 \
    return "INFINI_STATUS_" #name " (" #value ")";
    INFINIRT_STATUS_LIST(STATUS_NAME_CASE_)
#undef STATUS_NAME_CASE_
    default:
      return "unknown status (" + std::to_string(static_cast<int>(status)) + ")";
  }
}

// Statuses compare by name, so that a failure prints which status came back.
#define EXPECT_STATUS(expected, call) \
  EXPECT_EQ(::infiniccl_test::StatusName(call), ::infiniccl_test::StatusName(expected)) << #call
#define ASSERT_STATUS(expected, call) \
  ASSERT_EQ(::infiniccl_test::StatusName(call), ::infiniccl_test::StatusName(expected)) << #call
#define EXPECT_CCL_OK(call) EXPECT_STATUS(INFINI_STATUS_SUCCESS, call)
#define ASSERT_CCL_OK(call) ASSERT_STATUS(INFINI_STATUS_SUCCESS, call)
// Any failure will do (the semantics leave the code open).
#define EXPECT_CCL_FAILS(call)                                   \
  EXPECT_NE(::infiniccl_test::StatusName(call),                  \
            ::infiniccl_test::StatusName(INFINI_STATUS_SUCCESS)) \
      << #call

inline std::string DtypeName(infiniDtype_t dtype) {
  switch (dtype) {
#define DTYPE_NAME_CASE_(name, value, size) \
  case INFINI_DTYPE_##name:                 \
    return #name;
    INFINIRT_DTYPE_LIST(DTYPE_NAME_CASE_)
#undef DTYPE_NAME_CASE_
    default:
      return "dtype" + std::to_string(static_cast<int>(dtype));
  }
}

// Bytes per element; 0 for INVALID and for numbers that are no dtype.
inline size_t DtypeSize(infiniDtype_t dtype) {
  switch (dtype) {
#define DTYPE_SIZE_CASE_(name, value, size) \
  case INFINI_DTYPE_##name:                 \
    return size;
    INFINIRT_DTYPE_LIST(DTYPE_SIZE_CASE_)
#undef DTYPE_SIZE_CASE_
    default:
      return 0;
  }
}

inline std::string OpName(infinicclReduceOp_t op) {
  switch (op) {
#define OP_NAME_CASE_(name, value, text) \
  case INFINICCL_##name:                 \
    return #name;
    INFINICCL_REDUCE_OPS(OP_NAME_CASE_)
#undef OP_NAME_CASE_
    default:
      return "op" + std::to_string(static_cast<int>(op));
  }
}

// The dtypes the reductions accept, and those data movement accepts (every dtype with a size).
inline const std::vector<infiniDtype_t>& ReductionDtypes() {
  static const std::vector<infiniDtype_t> dtypes = {
      INFINI_DTYPE_I8,  INFINI_DTYPE_I16,  INFINI_DTYPE_I32, INFINI_DTYPE_I64,
      INFINI_DTYPE_U8,  INFINI_DTYPE_U16,  INFINI_DTYPE_U32, INFINI_DTYPE_U64,
      INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64};
  return dtypes;
}
inline const std::vector<infiniDtype_t>& MovementDtypes() {
  static const std::vector<infiniDtype_t> dtypes = [] {
    std::vector<infiniDtype_t> sized;
#define SIZED_DTYPE_(name, value, size) \
  if (size > 0) sized.push_back(INFINI_DTYPE_##name);
    INFINIRT_DTYPE_LIST(SIZED_DTYPE_)
#undef SIZED_DTYPE_
    return sized;
  }();
  return dtypes;
}
inline const std::vector<infinicclReduceOp_t>& AllOps() {
  static const std::vector<infinicclReduceOp_t> ops = {INFINICCL_SUM, INFINICCL_PROD, INFINICCL_MAX,
                                                       INFINICCL_MIN, INFINICCL_AVG};
  return ops;
}

// --- F16 and BF16 ----------------------------------------------------------------------------

// float -> IEEE binary16, round to nearest even (overflow to infinity, subnormals kept).
inline uint16_t FloatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint32_t sign = (bits >> 16) & 0x8000u;
  uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude >= 0x47800000u) {  // >= 65536, infinity or NaN: beyond every finite half
    if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00u);  // quiet NaN
    return static_cast<uint16_t>(sign | 0x7c00u);
  }
  if (magnitude < 0x38800000u) {  // below 2^-14: a subnormal half (or zero)
    // Adding 0.5 (2^-1) leaves the value's multiple of 2^-24 in the low mantissa bits, rounded
    // by the float addition itself (to nearest even).
    const uint32_t magic_bits = 126u << 23;
    float magic, magnitude_float;
    std::memcpy(&magic, &magic_bits, 4);
    std::memcpy(&magnitude_float, &magnitude, 4);
    magnitude_float += magic;
    std::memcpy(&magnitude, &magnitude_float, 4);
    return static_cast<uint16_t>(sign | (magnitude - magic_bits));
  }
  const uint32_t odd = (magnitude >> 13) & 1u;
  magnitude += (static_cast<uint32_t>(15 - 127) << 23) + 0xfffu + odd;  // rebias, round
  return static_cast<uint16_t>(sign | (magnitude >> 13));  // a carry may reach infinity
}

inline float HalfToFloatSlow(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  uint32_t bits;
  if (exponent == 0) {
    const float value = std::ldexp(static_cast<float>(mantissa), -24);  // zero or subnormal
    std::memcpy(&bits, &value, 4);
    bits |= sign;
  } else if (exponent == 31) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else {
    bits = sign | ((exponent + 112u) << 23) | (mantissa << 13);
  }
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

// Every half's float, from a table (the large cases convert millions of elements).
inline float HalfToFloat(uint16_t half) {
  static const std::vector<float> table = [] {
    std::vector<float> values(65536);
    for (uint32_t i = 0; i < 65536; ++i) values[i] = HalfToFloatSlow(static_cast<uint16_t>(i));
    return values;
  }();
  return table[half];
}

inline uint16_t FloatToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40u);
  bits += 0x7fffu + ((bits >> 16) & 1u);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}
inline float Bf16ToFloat(uint16_t value) {
  const uint32_t bits = static_cast<uint32_t>(value) << 16;
  float result;
  std::memcpy(&result, &bits, 4);
  return result;
}

// --- Host values of the reducible dtypes -----------------------------------------------------

enum class Kind { kSigned, kUnsigned, kFloat };

// One codec per reducible dtype: its storage type T, its kind, and conversions to and from
// double (floats) or 64-bit integers (integers, whose 64-bit values a double cannot hold).
template <typename Storage>
struct SignedCodec {
  using T = Storage;
  static constexpr Kind kind = Kind::kSigned;
  static double ToDouble(T value) { return static_cast<double>(value); }
  static T FromDouble(double value) { return static_cast<T>(value); }
};
template <typename Storage>
struct UnsignedCodec {
  using T = Storage;
  static constexpr Kind kind = Kind::kUnsigned;
  static double ToDouble(T value) { return static_cast<double>(value); }
  static T FromDouble(double value) { return static_cast<T>(value); }
};
struct F16Codec {
  using T = uint16_t;
  static constexpr Kind kind = Kind::kFloat;
  static double ToDouble(T value) { return HalfToFloat(value); }
  static T FromDouble(double value) { return FloatToHalf(static_cast<float>(value)); }
};
struct Bf16Codec {
  using T = uint16_t;
  static constexpr Kind kind = Kind::kFloat;
  static double ToDouble(T value) { return Bf16ToFloat(value); }
  static T FromDouble(double value) { return FloatToBf16(static_cast<float>(value)); }
};
struct F32Codec {
  using T = float;
  static constexpr Kind kind = Kind::kFloat;
  static double ToDouble(T value) { return value; }
  static T FromDouble(double value) { return static_cast<float>(value); }
};
struct F64Codec {
  using T = double;
  static constexpr Kind kind = Kind::kFloat;
  static double ToDouble(T value) { return value; }
  static T FromDouble(double value) { return value; }
};

// Calls fn(Codec{}) with the codec of a reducible dtype; a failure for any other dtype.
template <typename Fn>
decltype(auto) WithCodec(infiniDtype_t dtype, Fn&& fn) {
  switch (dtype) {
    case INFINI_DTYPE_I8:
      return fn(SignedCodec<int8_t>{});
    case INFINI_DTYPE_I16:
      return fn(SignedCodec<int16_t>{});
    case INFINI_DTYPE_I32:
      return fn(SignedCodec<int32_t>{});
    case INFINI_DTYPE_I64:
      return fn(SignedCodec<int64_t>{});
    case INFINI_DTYPE_U8:
      return fn(UnsignedCodec<uint8_t>{});
    case INFINI_DTYPE_U16:
      return fn(UnsignedCodec<uint16_t>{});
    case INFINI_DTYPE_U32:
      return fn(UnsignedCodec<uint32_t>{});
    case INFINI_DTYPE_U64:
      return fn(UnsignedCodec<uint64_t>{});
    case INFINI_DTYPE_F16:
      return fn(F16Codec{});
    case INFINI_DTYPE_BF16:
      return fn(Bf16Codec{});
    case INFINI_DTYPE_F32:
      return fn(F32Codec{});
    case INFINI_DTYPE_F64:
      return fn(F64Codec{});
    default:
      ADD_FAILURE() << "no host values for dtype " << DtypeName(dtype);
      using Result = decltype(fn(F32Codec{}));
      return Result();
  }
}

inline bool IsFloat(infiniDtype_t dtype) {
  return dtype == INFINI_DTYPE_F16 || dtype == INFINI_DTYPE_BF16 || dtype == INFINI_DTYPE_F32 ||
         dtype == INFINI_DTYPE_F64;
}

// Element i of raw memory holding `dtype` values, as a double (integers beyond 2^53 round).
inline double GetAsDouble(infiniDtype_t dtype, const void* base, size_t i) {
  return WithCodec(dtype, [&](auto codec) -> double {
    using C = decltype(codec);
    typename C::T value;
    std::memcpy(&value, static_cast<const uint8_t*>(base) + i * sizeof(value), sizeof(value));
    return C::ToDouble(value);
  });
}
inline void SetFromDouble(infiniDtype_t dtype, void* base, size_t i, double value) {
  WithCodec(dtype, [&](auto codec) {
    using C = decltype(codec);
    const typename C::T stored = C::FromDouble(value);
    std::memcpy(static_cast<uint8_t*>(base) + i * sizeof(stored), &stored, sizeof(stored));
  });
}

// --- Random inputs ----------------------------------------------------------------------------

// SplitMix64: small, fast and the same everywhere, so a failing case repeats.
class Random {
 public:
  explicit Random(uint64_t seed) : state_(seed) {}
  uint64_t Next() {
    uint64_t z = (state_ += 0x9e3779b97f4a7c15ull);
    z = (z ^ (z >> 30)) * 0xbf58476d1ce4e5b9ull;
    z = (z ^ (z >> 27)) * 0x94d049bb133111ebull;
    return z ^ (z >> 31);
  }
  double Uniform(double low, double high) {
    return low + (high - low) * (static_cast<double>(Next() >> 11) * 0x1.0p-53);
  }
  // An integer in [low, high].
  int64_t Between(int64_t low, int64_t high) {
    return low + static_cast<int64_t>(Next() % static_cast<uint64_t>(high - low + 1));
  }

 private:
  uint64_t state_;
};

inline uint64_t MixSeed(std::initializer_list<uint64_t> parts) {
  uint64_t seed = 0x243f6a8885a308d3ull;
  for (uint64_t part : parts) {
    seed ^= part + 0x9e3779b97f4a7c15ull + (seed << 6) + (seed >> 2);
  }
  return seed;
}

// Inputs for a reduction, chosen so that the reference is exact where the semantics are:
//  - integer SUM, MAX, MIN: any bit pattern (SUM wraps modulo 2^bits; MAX and MIN see negative
//    and positive values alike);
//  - integer PROD: small factors (+-1..3 signed, 1..5 unsigned), whose products over 8 ranks
//    still wrap the 8- and 16-bit types without collapsing to zero as random even factors do;
//  - integer AVG: values whose 64-bit sum over 8 ranks cannot overflow (any value for types up to
//    32 bits, |v| < 2^59 for the 64-bit ones), so that a sum kept in the element type, which
//    overflows, is told apart from the 64-bit one;
//  - floats: [-1, 1] for SUM and AVG, [0.5, 1.5] for PROD (8 factors stay near 1, representable in
//    every float type), [-100, 100] for MAX and MIN.
inline void FillForOp(infiniDtype_t dtype, infinicclReduceOp_t op, void* base, size_t count,
                      uint64_t seed) {
  Random random(seed);
  WithCodec(dtype, [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::T;
    T* data = static_cast<T*>(base);
    if constexpr (C::kind == Kind::kFloat) {
      double low = -1.0, high = 1.0;
      if (op == INFINICCL_PROD) low = 0.5, high = 1.5;
      if (op == INFINICCL_MAX || op == INFINICCL_MIN) low = -100.0, high = 100.0;
      for (size_t i = 0; i < count; ++i) data[i] = C::FromDouble(random.Uniform(low, high));
    } else {
      using U = std::make_unsigned_t<T>;
      const bool is_signed = C::kind == Kind::kSigned;
      for (size_t i = 0; i < count; ++i) {
        uint64_t bits = random.Next();
        if (op == INFINICCL_PROD) {
          int64_t factor = is_signed ? random.Between(1, 3) : random.Between(1, 5);
          if (is_signed && (bits & 1)) factor = -factor;
          bits = static_cast<uint64_t>(factor);
        } else if (op == INFINICCL_AVG && sizeof(T) == 8) {
          bits = is_signed ? static_cast<uint64_t>(
                                 random.Between(-(int64_t{1} << 59), (int64_t{1} << 59) - 1))
                           : (bits >> 4);  // < 2^60
        }
        const U truncated = static_cast<U>(bits);
        std::memcpy(&data[i], &truncated, sizeof(T));
      }
    }
  });
}

inline void FillRandomBytes(void* base, size_t bytes, uint64_t seed) {
  Random random(seed);
  uint8_t* data = static_cast<uint8_t*>(base);
  size_t i = 0;
  for (; i + 8 <= bytes; i += 8) {
    const uint64_t word = random.Next();
    std::memcpy(data + i, &word, 8);
  }
  if (i < bytes) {
    const uint64_t word = random.Next();
    std::memcpy(data + i, &word, bytes - i);
  }
}

// --- The reference ----------------------------------------------------------------------------

// out[i] = op over inputs[r][i] for r in rank order, as the semantics define it:
//  - floats accumulate in double and round once to the type (F16 and BF16 through float);
//    AVG = sum / nranks;
//  - integers: SUM and PROD in 64-bit unsigned arithmetic, then truncated to the type's width
//    (the type's wrap-around, for signed types as bit patterns); MAX and MIN compare as the
//    type's signedness says; AVG = the 64-bit sum (signed for signed types) / nranks, truncated
//    toward zero, converted to the type.
// result[i] = store(combine(...combine(load(in[0][i]), load(in[1][i]))..., load(in[n-1][i]))), a
// block of elements at a time (rank by rank within a block, which the compiler can vectorise).
template <typename Acc, typename T, typename Load, typename Combine, typename Store>
void ReduceInBlocks(const std::vector<const T*>& in, size_t count, T* result, Load load,
                    Combine combine, Store store) {
  constexpr size_t kBlock = 2048;
  Acc acc[kBlock];
  for (size_t begin = 0; begin < count; begin += kBlock) {
    const size_t length = std::min(kBlock, count - begin);
    const T* first = in[0] + begin;
    for (size_t i = 0; i < length; ++i) acc[i] = load(first[i]);
    for (size_t r = 1; r < in.size(); ++r) {
      const T* next = in[r] + begin;
      for (size_t i = 0; i < length; ++i) acc[i] = combine(acc[i], load(next[i]));
    }
    for (size_t i = 0; i < length; ++i) result[begin + i] = store(acc[i]);
  }
}

inline void ReferenceReduce(infiniDtype_t dtype, infinicclReduceOp_t op,
                            const std::vector<const void*>& inputs, size_t count, void* out) {
  WithCodec(dtype, [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::T;
    const size_t nranks = inputs.size();
    std::vector<const T*> in(nranks);
    for (size_t r = 0; r < nranks; ++r) in[r] = static_cast<const T*>(inputs[r]);
    T* result = static_cast<T*>(out);
    auto plus = [](auto a, auto b) { return a + b; };
    auto times = [](auto a, auto b) { return a * b; };
    auto max = [](auto a, auto b) { return std::max(a, b); };
    auto min = [](auto a, auto b) { return std::min(a, b); };
    if constexpr (C::kind == Kind::kFloat) {
      auto load = [](T value) { return C::ToDouble(value); };
      auto store = [](double value) { return C::FromDouble(value); };
      const double n = static_cast<double>(nranks);
      switch (op) {
        case INFINICCL_SUM:
          return ReduceInBlocks<double>(in, count, result, load, plus, store);
        case INFINICCL_PROD:
          return ReduceInBlocks<double>(in, count, result, load, times, store);
        case INFINICCL_MAX:
          return ReduceInBlocks<double>(in, count, result, load, max, store);
        case INFINICCL_MIN:
          return ReduceInBlocks<double>(in, count, result, load, min, store);
        case INFINICCL_AVG:
          return ReduceInBlocks<double>(in, count, result, load, plus,
                                        [n](double sum) { return C::FromDouble(sum / n); });
      }
    } else {
      using U = std::make_unsigned_t<T>;
      using Wide = std::conditional_t<C::kind == Kind::kSigned, int64_t, uint64_t>;
      // Widened with the type's signedness (sign-extended where signed).
      auto widen = [](T value) { return static_cast<Wide>(value); };
      // Modular: the sum or product's bits, for the type's wrap-around.
      auto widen_bits = [](T value) { return static_cast<uint64_t>(static_cast<Wide>(value)); };
      auto narrow = [](auto value) {
        const U bits = static_cast<U>(value);  // the low bits: modulo 2^bits of the type
        T stored;
        std::memcpy(&stored, &bits, sizeof(T));
        return stored;
      };
      const Wide n = static_cast<Wide>(nranks);
      switch (op) {
        case INFINICCL_SUM:
          return ReduceInBlocks<uint64_t>(in, count, result, widen_bits, plus, narrow);
        case INFINICCL_PROD:
          return ReduceInBlocks<uint64_t>(in, count, result, widen_bits, times, narrow);
        case INFINICCL_MAX:
          return ReduceInBlocks<Wide>(in, count, result, widen, max, narrow);
        case INFINICCL_MIN:
          return ReduceInBlocks<Wide>(in, count, result, widen, min, narrow);
        case INFINICCL_AVG:
          // The 64-bit sum (FillForOp's AVG inputs cannot overflow it) over nranks, truncated
          // toward zero as C's division does.
          return ReduceInBlocks<Wide>(in, count, result, widen, plus,
                                      [n, narrow](Wide sum) { return narrow(sum / n); });
      }
    }
    ADD_FAILURE() << "no reference for operator " << OpName(op);
  });
}

// The relative tolerance of a reduction result: integers, MAX and MIN exact; F16 1e-3, BF16
// 8e-3 and F32 1e-6, each times nranks; F64 1e-12. A float result is close when
// |got - want| <= tolerance * max(|want|, 1).
inline double RelativeTolerance(infiniDtype_t dtype, infinicclReduceOp_t op, int nranks) {
  if (op == INFINICCL_MAX || op == INFINICCL_MIN) return 0.0;
  switch (dtype) {
    case INFINI_DTYPE_F16:
      return 1e-3 * nranks;
    case INFINI_DTYPE_BF16:
      return 8e-3 * nranks;
    case INFINI_DTYPE_F32:
      return 1e-6 * nranks;
    case INFINI_DTYPE_F64:
      return 1e-12;
    default:
      return 0.0;
  }
}

// --- Comparisons ------------------------------------------------------------------------------

// got[0..count) against want[0..count): integers bit for bit, floats within the tolerance. The
// message names the first mismatch and how many there are.
inline ::testing::AssertionResult ValuesMatch(infiniDtype_t dtype, const void* got,
                                              const void* want, size_t count,
                                              double relative_tolerance) {
  size_t mismatches = 0, first = 0;
  WithCodec(dtype, [&](auto codec) {
    using C = decltype(codec);
    using T = typename C::T;
    const T* g = static_cast<const T*>(got);
    const T* w = static_cast<const T*>(want);
    for (size_t i = 0; i < count; ++i) {
      bool same;
      if constexpr (C::kind == Kind::kFloat) {
        const double gv = C::ToDouble(g[i]), wv = C::ToDouble(w[i]);
        // Written so that a NaN is a mismatch.
        same = std::fabs(gv - wv) <= relative_tolerance * std::max(std::fabs(wv), 1.0);
      } else {
        same = std::memcmp(&g[i], &w[i], sizeof(T)) == 0;
      }
      if (!same && mismatches++ == 0) first = i;
    }
  });
  if (mismatches == 0) return ::testing::AssertionSuccess();
  std::ostringstream message;
  message.precision(17);
  message << mismatches << " of " << count << " " << DtypeName(dtype)
          << " elements differ; the first, element " << first << ", is "
          << GetAsDouble(dtype, got, first) << " where the reference has "
          << GetAsDouble(dtype, want, first) << " (relative tolerance " << relative_tolerance
          << ")";
  return ::testing::AssertionFailure() << message.str();
}

// Byte for byte, naming the first differing element of `element_size` bytes.
inline ::testing::AssertionResult BytesMatch(const void* got, const void* want, size_t bytes,
                                             size_t element_size) {
  if (bytes == 0 || std::memcmp(got, want, bytes) == 0) return ::testing::AssertionSuccess();
  const uint8_t* g = static_cast<const uint8_t*>(got);
  const uint8_t* w = static_cast<const uint8_t*>(want);
  size_t first = 0;
  while (g[first] == w[first]) ++first;
  size_t differing = 0;
  for (size_t i = 0; i < bytes; i += element_size) {
    if (std::memcmp(g + i, w + i, element_size) != 0) ++differing;
  }
  char got_byte[8], want_byte[8];
  std::snprintf(got_byte, sizeof got_byte, "0x%02x", g[first]);
  std::snprintf(want_byte, sizeof want_byte, "0x%02x", w[first]);
  return ::testing::AssertionFailure()
         << differing << " of " << bytes / element_size << " elements differ; the first is element "
         << first / element_size << " (byte " << first << ": " << got_byte << " where " << want_byte
         << " was expected)";
}

// Untouched memory: every byte `value`.
inline ::testing::AssertionResult AllBytesAre(const void* memory, size_t bytes, uint8_t value) {
  const uint8_t* data = static_cast<const uint8_t*>(memory);
  for (size_t i = 0; i < bytes; ++i) {
    if (data[i] != value) {
      char found[8];
      std::snprintf(found, sizeof found, "0x%02x", data[i]);
      return ::testing::AssertionFailure()
             << "byte " << i << " of " << bytes << " was written (" << found << ")";
    }
  }
  return ::testing::AssertionSuccess();
}

// A 64-bit digest, to tell that a buffer kept its contents without keeping a copy.
inline uint64_t HashBytes(const void* memory, size_t bytes) {
  const uint8_t* data = static_cast<const uint8_t*>(memory);
  constexpr uint64_t kMultiplier = 0xff51afd7ed558ccdull;
  // Four independent lanes, so that the multiplications do not wait on one another.
  uint64_t a = 0x84222325cbf29ce4ull ^ bytes, b = 0x9e3779b97f4a7c15ull, c = 0xc2b2ae3d27d4eb4full,
           d = 0x165667b19e3779f9ull;
  size_t i = 0;
  for (; i + 32 <= bytes; i += 32) {
    uint64_t words[4];
    std::memcpy(words, data + i, 32);
    a = (a ^ words[0]) * kMultiplier;
    b = (b ^ words[1]) * kMultiplier;
    c = (c ^ words[2]) * kMultiplier;
    d = (d ^ words[3]) * kMultiplier;
    a ^= a >> 29;
    b ^= b >> 29;
    c ^= c >> 29;
    d ^= d >> 29;
  }
  uint64_t hash = ((a * kMultiplier ^ b) * kMultiplier ^ c) * kMultiplier ^ d;
  for (; i < bytes; ++i) hash = (hash ^ data[i]) * kMultiplier;
  return hash ^ (hash >> 32);
}

// --- Device memory ----------------------------------------------------------------------------

// What fresh buffers and their guard bytes hold, so that a stray write shows.
constexpr uint8_t kSentinel = 0xa5;
// Bytes after each buffer's payload that no call may write.
constexpr size_t kGuardBytes = 64;

// Memory of one device (InfiniRT ordinal), filled with kSentinel; freed on destruction.
class DeviceBuffer {
 public:
  DeviceBuffer() = default;
  DeviceBuffer(int device, size_t bytes) : bytes_(bytes) {
    EXPECT_OK(infinirtSetDevice(device));
    void* memory = nullptr;
    EXPECT_OK(infinirtMalloc(&memory, std::max<size_t>(bytes, 1)));
    data_ = static_cast<uint8_t*>(memory);
    if (data_ != nullptr) std::memset(data_, kSentinel, bytes);
  }
  ~DeviceBuffer() { Release(); }
  DeviceBuffer(DeviceBuffer&& other) noexcept
      : data_(std::exchange(other.data_, nullptr)), bytes_(other.bytes_) {}
  DeviceBuffer& operator=(DeviceBuffer&& other) noexcept {
    if (this != &other) {
      Release();
      data_ = std::exchange(other.data_, nullptr);
      bytes_ = other.bytes_;
    }
    return *this;
  }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;

  uint8_t* data() const { return data_; }
  size_t bytes() const { return bytes_; }

 private:
  void Release() {
    if (data_ != nullptr) {
      EXPECT_OK(infinirtFree(data_));
    }
    data_ = nullptr;
  }
  uint8_t* data_ = nullptr;
  size_t bytes_ = 0;
};

// --- Environment and bounded calls ------------------------------------------------------------

inline int CpuDeviceCount() {
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  if (infinirtGetAllDeviceCount(counts) != infinirtSuccess) return 0;
  return counts[INFINI_DEVICE_CPU];
}

// INFINICCL_TIMEOUT_MS, which a communicator reads when it is made. The variable is written only
// when it changes (other threads of the runtime may be reading the environment).
inline void SetTimeoutMs(int milliseconds) {
  const std::string value = std::to_string(milliseconds);
  const char* current = std::getenv("INFINICCL_TIMEOUT_MS");
  if (current == nullptr || value != current) setenv("INFINICCL_TIMEOUT_MS", value.c_str(), 1);
}

// Runs fn on a thread of its own and waits at most `limit` for it. A call that never returns
// leaves no way to get its thread back, so the process ends then, naming the call: a hang is a
// failure with a reason rather than a CTest timeout.
template <typename Fn>
auto Bounded(const std::string& what, std::chrono::milliseconds limit, Fn fn) -> decltype(fn()) {
  using Result = decltype(fn());
  auto task = std::make_shared<std::packaged_task<Result()>>(std::move(fn));
  std::future<Result> result = task->get_future();
  std::thread([task] { (*task)(); }).detach();
  if (result.wait_for(limit) != std::future_status::ready) {
    std::fprintf(stderr, "[  FAILED  ] %s did not return within %lld ms; ending the test program\n",
                 what.c_str(), static_cast<long long>(limit.count()));
    std::fflush(stderr);
    std::_Exit(1);
  }
  return result.get();
}

// --- Communicators ----------------------------------------------------------------------------

// What one call per rank answered, and the group's own two calls (SUCCESS when not used).
struct RankStatuses {
  infiniStatus_t group_start = INFINI_STATUS_SUCCESS;
  infiniStatus_t group_end = INFINI_STATUS_SUCCESS;
  std::vector<infiniStatus_t> ranks;

  ::testing::AssertionResult AllSucceeded() const {
    std::ostringstream failures;
    if (group_start != INFINI_STATUS_SUCCESS) {
      failures << " GroupStart: " << StatusName(group_start) << ";";
    }
    for (size_t r = 0; r < ranks.size(); ++r) {
      if (ranks[r] != INFINI_STATUS_SUCCESS) {
        failures << " rank " << r << ": " << StatusName(ranks[r]) << ";";
      }
    }
    if (group_end != INFINI_STATUS_SUCCESS) {
      failures << " GroupEnd: " << StatusName(group_end) << ";";
    }
    if (failures.str().empty()) return ::testing::AssertionSuccess();
    return ::testing::AssertionFailure() << "calls failed:" << failures.str();
  }
};

// One communicator per CPU device of a list (rank i on the CPU device of index ids[i]), each
// with a non-blocking stream of its device (so that nothing the test does on a legacy stream is
// ordered with the collectives). The calls that set it up assert: use them inside
// ASSERT_NO_FATAL_FAILURE.
class CommunicatorSet {
 public:
  CommunicatorSet() = default;
  CommunicatorSet(const CommunicatorSet&) = delete;
  CommunicatorSet& operator=(const CommunicatorSet&) = delete;
  ~CommunicatorSet() { Destroy(); }

  // Ranks on CPU devices 0..nranks-1.
  void Init(int nranks) {
    std::vector<int> ids(static_cast<size_t>(std::max(nranks, 0)));
    for (int i = 0; i < nranks; ++i) ids[i] = i;
    Init(ids);
  }
  void Init(const std::vector<int>& ids) {
    ASSERT_TRUE(comms_.empty()) << "Init called twice";
    ASSERT_FALSE(ids.empty());
    const int needed = *std::max_element(ids.begin(), ids.end()) + 1;
    const int available = CpuDeviceCount();
    ASSERT_GE(available, needed)
        << "these tests need " << needed << " CPU devices and InfiniRT has " << available
        << ": run them with INFINIRT_BACKENDS=cpu INFINIRT_CPU_DEVICES=8, as CTest does";
    for (int id : ids) {
      int ordinal = -1;
      ASSERT_OK(infinirtDeviceGetOrdinal(&ordinal, INFINI_DEVICE_CPU, id));
      devices_.push_back(ordinal);
    }
    for (int device : devices_) {
      infinirtStream_t stream = nullptr;
      ASSERT_OK(infinirtSetDevice(device));
      ASSERT_OK(infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking));
      streams_.push_back(stream);
    }
    comms_.assign(ids.size(), nullptr);
    ASSERT_CCL_OK(infinicclCommInitAll(INFINI_DEVICE_CPU, comms_.data(),
                                       static_cast<int>(ids.size()), ids.data()));
    for (infinicclComm_t comm : comms_) ASSERT_NE(comm, nullptr);
  }

  // Waits for every stream, destroys the communicators, then the streams. Safe to call twice.
  void Destroy() {
    for (infinirtStream_t stream : streams_) EXPECT_OK(infinirtStreamSynchronize(stream));
    for (infinicclComm_t comm : comms_) {
      if (comm != nullptr) {
        EXPECT_CCL_OK(infinicclCommDestroy(comm));
      }
    }
    comms_.clear();
    for (infinirtStream_t stream : streams_) EXPECT_OK(infinirtStreamDestroy(stream));
    streams_.clear();
    devices_.clear();
    infinirtSetDevice(0);
  }
  // Forgets a communicator the test released itself (CommDestroy, CommAbort).
  void Forget(int rank) { comms_[rank] = nullptr; }

  int size() const { return static_cast<int>(comms_.size()); }
  infinicclComm_t comm(int rank) const { return comms_[rank]; }
  infinirtStream_t stream(int rank) const { return streams_[rank]; }
  int device(int rank) const { return devices_[rank]; }  // InfiniRT ordinal

  // Memory of the rank's device.
  DeviceBuffer Allocate(int rank, size_t bytes) const { return DeviceBuffer(device(rank), bytes); }

  void SynchronizeAll() const {
    for (int r = 0; r < size(); ++r) {
      EXPECT_OK(infinirtStreamSynchronize(streams_[r])) << "rank " << r;
    }
  }

  // call(rank) for every rank from this thread, between GroupStart and GroupEnd (as the
  // semantics require of a thread that issues the calls of several ranks).
  RankStatuses RunOnAllRanks(const std::function<infiniStatus_t(int rank)>& call) const {
    RankStatuses statuses;
    statuses.ranks.assign(comms_.size(), INFINI_STATUS_INTERNAL_ERROR);
    statuses.group_start = infinicclGroupStart();
    // Without a group the calls would wait for one another: issue none.
    if (statuses.group_start != INFINI_STATUS_SUCCESS) return statuses;
    for (int r = 0; r < size(); ++r) statuses.ranks[r] = call(r);
    statuses.group_end = infinicclGroupEnd();
    return statuses;
  }

  // call(rank) on one thread per rank, without a group.
  RankStatuses RunOnRankThreads(const std::function<infiniStatus_t(int rank)>& call) const {
    RankStatuses statuses;
    statuses.ranks.assign(comms_.size(), INFINI_STATUS_INTERNAL_ERROR);
    std::vector<std::thread> threads;
    for (int r = 0; r < size(); ++r) {
      threads.emplace_back([&statuses, &call, r] { statuses.ranks[r] = call(r); });
    }
    for (std::thread& thread : threads) thread.join();
    return statuses;
  }

 private:
  std::vector<int> devices_;
  std::vector<infinirtStream_t> streams_;
  std::vector<infinicclComm_t> comms_;
};

// The number of ranks a test parameter holds: the parameter itself, or a tuple's first field.
inline int RanksOf(int nranks) { return nranks; }
template <typename... Rest>
int RanksOf(const std::tuple<int, Rest...>& param) {
  return std::get<0>(param);
}

// A fixture with a communicator set of RanksOf(GetParam()) ranks on CPU devices 0..N-1.
template <typename Param>
class CommunicatorTest : public ::testing::TestWithParam<Param> {
 protected:
  void SetUp() override { ASSERT_NO_FATAL_FAILURE(comms_.Init(RanksOf(this->GetParam()))); }
  void TearDown() override { comms_.Destroy(); }

  int nranks() const { return comms_.size(); }
  CommunicatorSet comms_;
};

}  // namespace infiniccl_test

#endif  // INFINIRT_TESTS_INFINICCL_INFINICCL_TEST_SUPPORT_H_
