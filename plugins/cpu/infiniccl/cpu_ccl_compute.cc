// The SSE intrinsics first: infinicore.h (through cpu_ccl_compute.h) defines a macro named __C,
// which GCC's intrinsics headers use as a parameter name.
#if defined(__SSE2__)
#include <emmintrin.h>
#include <xmmintrin.h>
#endif

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

#include "cpu_ccl_compute.h"

namespace infiniccl_cpu {

namespace {

constexpr size_t kBlock = 2048;  // elements reduced at a time (the accumulators stay in L1)

// --- 16-bit floats, converted through float (round to nearest even) ----------------------------

float HalfToFloat(uint16_t h) {
  const uint32_t sign = static_cast<uint32_t>(h & 0x8000) << 16;
  const uint32_t exponent = (h >> 10) & 0x1f;
  uint32_t mantissa = h & 0x3ff;
  uint32_t bits;
  if (exponent == 0x1f) {
    bits = sign | 0x7f800000u | (mantissa << 13);
  } else if (exponent != 0) {
    bits = sign | ((exponent + 112) << 23) | (mantissa << 13);
  } else if (mantissa == 0) {
    bits = sign;
  } else {  // subnormal: normalise
    int shift = 0;
    while ((mantissa & 0x400) == 0) {
      mantissa <<= 1;
      ++shift;
    }
    bits = sign | static_cast<uint32_t>(113 - shift) << 23 | ((mantissa & 0x3ff) << 13);
  }
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

uint16_t FloatToHalf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) return static_cast<uint16_t>(sign | 0x7e00);   // NaN
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00);  // overflow: inf
  if (magnitude < 0x38800000u) {  // below the smallest normal half: a subnormal or 0
    const float scaled = std::fabs(value) * 16777216.0f;  // units of 2^-24, rounded to even
    return static_cast<uint16_t>(sign | static_cast<uint16_t>(std::nearbyint(scaled)));
  }
  const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
  return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
}

float Bf16ToFloat(uint16_t b) {
  const uint32_t bits = static_cast<uint32_t>(b) << 16;
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

uint16_t FloatToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x40);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// How an element type is read into its accumulator and written back. Floats accumulate in
// float (16-bit ones rounded once, when stored) or double; integers in 64 bits, where sums and
// products wrap modulo 2^64 and so, once truncated, modulo the type's width, as the type's own
// arithmetic would.
template <class T>
struct Codec {
  using Acc = std::conditional_t<std::is_floating_point_v<T>, T,
                                 std::conditional_t<std::is_signed_v<T>, int64_t, uint64_t>>;
  static Acc Load(const void* base, size_t i) { return static_cast<const T*>(base)[i]; }
  static void Store(void* base, size_t i, Acc value) {
    static_cast<T*>(base)[i] = static_cast<T>(value);
  }
};
struct Half {};
struct BFloat {};
template <>
struct Codec<Half> {
  using Acc = float;
  static Acc Load(const void* base, size_t i) {
    return HalfToFloat(static_cast<const uint16_t*>(base)[i]);
  }
  static void Store(void* base, size_t i, Acc value) {
    static_cast<uint16_t*>(base)[i] = FloatToHalf(value);
  }
};
template <>
struct Codec<BFloat> {
  using Acc = float;
  static Acc Load(const void* base, size_t i) {
    return Bf16ToFloat(static_cast<const uint16_t*>(base)[i]);
  }
  static void Store(void* base, size_t i, Acc value) {
    static_cast<uint16_t*>(base)[i] = FloatToBf16(value);
  }
};

// One step of a reduction; the op is a template argument, so that each inner loop is a plain
// vectorisable loop.
template <infinicclReduceOp_t kOp, class Acc>
Acc Combine(Acc a, Acc b) {
  if constexpr (kOp == INFINICCL_PROD) {
    if constexpr (std::is_integral_v<Acc>) {  // wraps, as unsigned arithmetic does
      return static_cast<Acc>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
    } else {
      return a * b;
    }
  } else if constexpr (kOp == INFINICCL_MAX) {
    return b > a ? b : a;
  } else if constexpr (kOp == INFINICCL_MIN) {
    return b < a ? b : a;
  } else if constexpr (std::is_integral_v<Acc>) {  // SUM and AVG
    return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
  } else {
    return a + b;
  }
}

// Destinations at least this large (per call, in bytes) are written with streaming stores where
// the type allows: they bypass the cache, so that writing them does not first read them (the
// written data is not read again soon, and would not fit anyway).
constexpr size_t kStreamingBytes = size_t{4} << 20;

// Writes n accumulated elements to destination at offset; streams them when asked and possible.
template <class T>
void StoreBlock(void* destination, size_t offset, const typename Codec<T>::Acc* acc, size_t n,
                bool streaming) {
#if defined(__SSE2__)
  if constexpr (std::is_same_v<T, float>) {
    float* out = static_cast<float*>(destination) + offset;
    if (streaming && reinterpret_cast<uintptr_t>(out) % 16 == 0) {
      size_t i = 0;
      for (; i + 4 <= n; i += 4) _mm_stream_ps(out + i, _mm_loadu_ps(acc + i));
      for (; i < n; ++i) out[i] = acc[i];
      return;
    }
  } else if constexpr (std::is_same_v<T, double>) {
    double* out = static_cast<double*>(destination) + offset;
    if (streaming && reinterpret_cast<uintptr_t>(out) % 16 == 0) {
      size_t i = 0;
      for (; i + 2 <= n; i += 2) _mm_stream_pd(out + i, _mm_loadu_pd(acc + i));
      for (; i < n; ++i) out[i] = acc[i];
      return;
    }
  }
#endif
  (void)streaming;
  for (size_t i = 0; i < n; ++i) Codec<T>::Store(destination, offset + i, acc[i]);
}

// destinations[d] (at element offset dst_offset) = op over sources (at src_offset), for count
// elements, a block at a time.
template <class T, infinicclReduceOp_t kOp>
void ReduceRange(const std::vector<const void*>& sources, size_t src_offset,
                 const std::vector<void*>& destinations, size_t dst_offset, size_t count) {
  using C = Codec<T>;
  using Acc = typename C::Acc;
  alignas(64) Acc acc[kBlock];
  const bool streaming = count * sizeof(T) >= kStreamingBytes;
  for (size_t start = 0; start < count; start += kBlock) {
    const size_t n = std::min(kBlock, count - start);
    for (size_t i = 0; i < n; ++i) acc[i] = C::Load(sources[0], src_offset + start + i);
    for (size_t s = 1; s < sources.size(); ++s) {
      for (size_t i = 0; i < n; ++i) {
        acc[i] = Combine<kOp>(acc[i], C::Load(sources[s], src_offset + start + i));
      }
    }
    if constexpr (kOp == INFINICCL_AVG) {  // the sum over the ranks, divided by their number
      const Acc ranks = static_cast<Acc>(sources.size());
      for (size_t i = 0; i < n; ++i) acc[i] = acc[i] / ranks;  // integers truncate toward zero
    }
    for (void* destination : destinations) {
      StoreBlock<T>(destination, dst_offset + start, acc, n, streaming);
    }
  }
#if defined(__SSE2__)
  if (streaming) _mm_sfence();  // the stores are visible before the operation counts as done
#endif
}

template <class T>
void ReduceRange(infinicclReduceOp_t op, const std::vector<const void*>& sources, size_t src_offset,
                 const std::vector<void*>& destinations, size_t dst_offset, size_t count) {
  switch (op) {
    case INFINICCL_PROD:
      return ReduceRange<T, INFINICCL_PROD>(sources, src_offset, destinations, dst_offset, count);
    case INFINICCL_MAX:
      return ReduceRange<T, INFINICCL_MAX>(sources, src_offset, destinations, dst_offset, count);
    case INFINICCL_MIN:
      return ReduceRange<T, INFINICCL_MIN>(sources, src_offset, destinations, dst_offset, count);
    case INFINICCL_AVG:
      return ReduceRange<T, INFINICCL_AVG>(sources, src_offset, destinations, dst_offset, count);
    default:
      return ReduceRange<T, INFINICCL_SUM>(sources, src_offset, destinations, dst_offset, count);
  }
}

// Calls f with a value of the element type of a reducible dtype (Half and BFloat for the 16-bit
// floats); false for any other dtype.
template <class F>
bool WithElementType(infiniDtype_t dtype, F&& f) {
  switch (dtype) {
#define INFINICCL_CPU_TYPE_(name, type) \
  case INFINI_DTYPE_##name:             \
    f(type{});                          \
    return true;
    INFINICCL_CPU_TYPE_(I8, int8_t)
    INFINICCL_CPU_TYPE_(I16, int16_t)
    INFINICCL_CPU_TYPE_(I32, int32_t)
    INFINICCL_CPU_TYPE_(I64, int64_t)
    INFINICCL_CPU_TYPE_(U8, uint8_t)
    INFINICCL_CPU_TYPE_(U16, uint16_t)
    INFINICCL_CPU_TYPE_(U32, uint32_t)
    INFINICCL_CPU_TYPE_(U64, uint64_t)
    INFINICCL_CPU_TYPE_(F16, Half)
    INFINICCL_CPU_TYPE_(BF16, BFloat)
    INFINICCL_CPU_TYPE_(F32, float)
    INFINICCL_CPU_TYPE_(F64, double)
#undef INFINICCL_CPU_TYPE_
    default:
      return false;
  }
}

}  // namespace

void Reduce(infiniDtype_t dtype, infinicclReduceOp_t op, const std::vector<const void*>& sources,
            size_t src_offset, const std::vector<void*>& destinations, size_t dst_offset,
            size_t count) {
  // libinfiniccl lets only reducible dtypes through
  WithElementType(dtype, [&](auto element) {
    ReduceRange<decltype(element)>(op, sources, src_offset, destinations, dst_offset, count);
  });
}

namespace {

void CopyBytes(void* destination, const void* source, size_t bytes) {
  if (destination != source && bytes > 0) std::memmove(destination, source, bytes);
}

std::vector<const void*> Sources(const Work& work) {
  std::vector<const void*> sources;
  for (const Part& part : work.parts) sources.push_back(part.sendbuf);
  return sources;
}

}  // namespace

size_t ElementSize(infiniDtype_t dtype) { return infinirtDtypeSize(dtype); }

void Compute(const Work& work, size_t begin, size_t end) {
  if (end <= begin) return;
  const size_t size = ElementSize(work.dtype);
  const size_t n = end - begin;
  const size_t ranks = work.parts.size();
  auto at = [&](const void* base, size_t element) {
    return static_cast<const char*>(base) + element * size;
  };
  auto at_mutable = [&](void* base, size_t element) {
    return static_cast<char*>(base) + element * size;
  };
  switch (work.kind) {
    case INFINICCL_CALL_AllReduce: {
      std::vector<void*> destinations;
      for (const Part& part : work.parts) destinations.push_back(part.recvbuf);
      Reduce(work.dtype, work.op, Sources(work), begin, destinations, begin, n);
      return;
    }
    case INFINICCL_CALL_Reduce:
      Reduce(work.dtype, work.op, Sources(work), begin, {work.parts[work.root].recvbuf}, begin, n);
      return;
    case INFINICCL_CALL_ReduceScatter:
      for (size_t r = 0; r < ranks; ++r) {
        Reduce(work.dtype, work.op, Sources(work), r * work.count + begin, {work.parts[r].recvbuf},
               begin, n);
      }
      return;
    case INFINICCL_CALL_Broadcast:
      for (const Part& part : work.parts) {
        CopyBytes(at_mutable(part.recvbuf, begin), at(work.parts[work.root].sendbuf, begin),
                  n * size);
      }
      return;
    case INFINICCL_CALL_AllGather:
      for (const Part& destination : work.parts) {
        for (size_t j = 0; j < ranks; ++j) {
          CopyBytes(at_mutable(destination.recvbuf, j * work.count + begin),
                    at(work.parts[j].sendbuf, begin), n * size);
        }
      }
      return;
    case INFINICCL_CALL_Send:  // parts: the sender, then the receiver
      CopyBytes(at_mutable(work.parts[1].recvbuf, begin), at(work.parts[0].sendbuf, begin),
                n * size);
      return;
    default:
      return;
  }
}

infiniDtype_t SumDtype(infiniDtype_t dtype) {
  infiniDtype_t sum = dtype;
  WithElementType(dtype, [&](auto element) {
    using T = decltype(element);
    if constexpr (std::is_integral_v<T>)
      sum = std::is_signed_v<T> ? INFINI_DTYPE_I64 : INFINI_DTYPE_U64;
  });
  return sum;
}

void Widen(infiniDtype_t dtype, const void* source, void* wide, size_t count) {
  WithElementType(dtype, [&](auto element) {
    using C = Codec<decltype(element)>;
    auto* out = static_cast<typename C::Acc*>(wide);
    for (size_t i = 0; i < count; ++i) out[i] = C::Load(source, i);
  });
}

void StoreAverage(infiniDtype_t dtype, const void* sum, void* destination, size_t count,
                  int ranks) {
  WithElementType(dtype, [&](auto element) {
    using C = Codec<decltype(element)>;
    using Acc = typename C::Acc;
    const Acc divisor = static_cast<Acc>(ranks);
    for (size_t i = 0; i < count; ++i) {
      // A float's sum has its own type; an integer's is its accumulator (Widen).
      const Acc total = std::is_integral_v<Acc> ? static_cast<const Acc*>(sum)[i] : C::Load(sum, i);
      C::Store(destination, i, total / divisor);  // integers truncate toward zero
    }
  });
}

}  // namespace infiniccl_cpu
