#include "cpu_ccl_compute.h"

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <type_traits>

namespace infiniccl_cpu {

namespace {

constexpr size_t kBlock = 2048;  // elements reduced at a time (the accumulators stay in L1)

size_t ElementSize(infiniDtype_t dtype) {
  switch (dtype) {
#define INFINICCL_CPU_SIZE_(name, value, size) \
  case INFINI_DTYPE_##name:                    \
    return size;
    INFINIRT_DTYPE_LIST(INFINICCL_CPU_SIZE_)
#undef INFINICCL_CPU_SIZE_
    default:
      return 0;
  }
}

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

template <class Acc>
Acc Combine(infinicclReduceOp_t op, Acc a, Acc b) {
  switch (op) {
    case INFINICCL_PROD:
      if constexpr (std::is_integral_v<Acc>) {  // wraps, as unsigned arithmetic does
        return static_cast<Acc>(static_cast<uint64_t>(a) * static_cast<uint64_t>(b));
      } else {
        return a * b;
      }
    case INFINICCL_MAX:
      return b > a ? b : a;
    case INFINICCL_MIN:
      return b < a ? b : a;
    default:  // SUM and AVG
      if constexpr (std::is_integral_v<Acc>) {
        return static_cast<Acc>(static_cast<uint64_t>(a) + static_cast<uint64_t>(b));
      } else {
        return a + b;
      }
  }
}

// AVG: the sum over the ranks divided by their number (integers truncate toward zero).
template <class Acc>
Acc Finish(infinicclReduceOp_t op, Acc value, size_t ranks) {
  if (op != INFINICCL_AVG) return value;
  return value / static_cast<Acc>(ranks);
}

// destinations[d] (at element offset dst_offset) = op over sources (at src_offset), for count
// elements, a block at a time.
template <class T>
void ReduceRange(infinicclReduceOp_t op, const std::vector<const void*>& sources, size_t src_offset,
                 const std::vector<void*>& destinations, size_t dst_offset, size_t count) {
  using C = Codec<T>;
  typename C::Acc acc[kBlock];
  for (size_t start = 0; start < count; start += kBlock) {
    const size_t n = std::min(kBlock, count - start);
    for (size_t i = 0; i < n; ++i) acc[i] = C::Load(sources[0], src_offset + start + i);
    for (size_t s = 1; s < sources.size(); ++s) {
      for (size_t i = 0; i < n; ++i) {
        acc[i] = Combine(op, acc[i], C::Load(sources[s], src_offset + start + i));
      }
    }
    for (size_t i = 0; i < n; ++i) acc[i] = Finish(op, acc[i], sources.size());
    for (void* destination : destinations) {
      for (size_t i = 0; i < n; ++i) C::Store(destination, dst_offset + start + i, acc[i]);
    }
  }
}

void Reduce(infiniDtype_t dtype, infinicclReduceOp_t op, const std::vector<const void*>& sources,
            size_t src_offset, const std::vector<void*>& destinations, size_t dst_offset,
            size_t count) {
  switch (dtype) {
#define INFINICCL_CPU_REDUCE_(name, type) \
  case INFINI_DTYPE_##name:               \
    return ReduceRange<type>(op, sources, src_offset, destinations, dst_offset, count);
    INFINICCL_CPU_REDUCE_(I8, int8_t)
    INFINICCL_CPU_REDUCE_(I16, int16_t)
    INFINICCL_CPU_REDUCE_(I32, int32_t)
    INFINICCL_CPU_REDUCE_(I64, int64_t)
    INFINICCL_CPU_REDUCE_(U8, uint8_t)
    INFINICCL_CPU_REDUCE_(U16, uint16_t)
    INFINICCL_CPU_REDUCE_(U32, uint32_t)
    INFINICCL_CPU_REDUCE_(U64, uint64_t)
    INFINICCL_CPU_REDUCE_(F16, Half)
    INFINICCL_CPU_REDUCE_(BF16, BFloat)
    INFINICCL_CPU_REDUCE_(F32, float)
    INFINICCL_CPU_REDUCE_(F64, double)
#undef INFINICCL_CPU_REDUCE_
    default:
      return;  // libinfiniccl lets only these through
  }
}

void CopyBytes(void* destination, const void* source, size_t bytes) {
  if (destination != source && bytes > 0) std::memmove(destination, source, bytes);
}

std::vector<const void*> Sources(const Work& work) {
  std::vector<const void*> sources;
  for (const Part& part : work.parts) sources.push_back(part.sendbuf);
  return sources;
}

}  // namespace

void Compute(const Work& work) {
  const size_t size = ElementSize(work.dtype);
  const size_t bytes = work.count * size;
  const size_t ranks = work.parts.size();
  switch (work.kind) {
    case INFINICCL_CALL_AllReduce: {
      std::vector<void*> destinations;
      for (const Part& part : work.parts) destinations.push_back(part.recvbuf);
      Reduce(work.dtype, work.op, Sources(work), 0, destinations, 0, work.count);
      return;
    }
    case INFINICCL_CALL_Reduce:
      Reduce(work.dtype, work.op, Sources(work), 0, {work.parts[work.root].recvbuf}, 0, work.count);
      return;
    case INFINICCL_CALL_ReduceScatter:
      for (size_t r = 0; r < ranks; ++r) {
        Reduce(work.dtype, work.op, Sources(work), r * work.count, {work.parts[r].recvbuf}, 0,
               work.count);
      }
      return;
    case INFINICCL_CALL_Broadcast:
      for (const Part& part : work.parts) {
        CopyBytes(part.recvbuf, work.parts[work.root].sendbuf, bytes);
      }
      return;
    case INFINICCL_CALL_AllGather:
      for (const Part& destination : work.parts) {
        for (size_t j = 0; j < ranks; ++j) {
          CopyBytes(static_cast<char*>(destination.recvbuf) + j * bytes, work.parts[j].sendbuf,
                    bytes);
        }
      }
      return;
    case INFINICCL_CALL_Send:  // parts: the sender, then the receiver
      CopyBytes(work.parts[1].recvbuf, work.parts[0].sendbuf, bytes);
      return;
    default:
      return;
  }
}

}  // namespace infiniccl_cpu
