// Rows of half-precision elements to float and back (cpu_convert.h).
// The intrinsics come before any InfiniCore header: infinicore.h defines __C (InfiniCore's own
// macro), a name GCC's intrinsics headers give parameters.
#include "cpu_isa.h"
#if INFINIOP_CPU_HAS_X86_KERNELS
#include <immintrin.h>
#endif

#include "cpu_convert.h"

namespace infinirt::infiniop_cpu {

namespace {

// Element by element, through Arithmetic<T> (the baseline, and every vector loop's tail).
template <class T>
[[gnu::always_inline]] inline void LoadLoop(const T* from, float* to, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) to[i] = Arithmetic<T>::Load(from[i]);
}

template <class T>
[[gnu::always_inline]] inline void StoreLoop(const float* from, T* to, size_t begin, size_t end) {
  for (size_t i = begin; i < end; ++i) to[i] = Arithmetic<T>::Store(from[i]);
}

#if INFINIOP_CPU_HAS_X86_KERNELS

INFINIOP_CPU_BEGIN_AVX512_INTRINSICS

// F16C's conversions (vcvtph2ps, vcvtps2ph) are exact one way and round to nearest even the
// other, with infinities and NaNs kept, as HalfToFloat and FloatToHalf are.
INFINIOP_CPU_TARGET_AVX512 void HalfToFloatAvx512(const Half* from, float* to, size_t count) {
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m256i halves = _mm256_loadu_si256(reinterpret_cast<const __m256i*>(from + i));
    _mm512_storeu_ps(to + i, _mm512_cvtph_ps(halves));
  }
  LoadLoop(from, to, i, count);
}

INFINIOP_CPU_TARGET_AVX512 void FloatToHalfAvx512(const float* from, Half* to, size_t count) {
  size_t i = 0;
  for (; i + 16 <= count; i += 16) {
    const __m256i halves = _mm512_cvtps_ph(_mm512_loadu_ps(from + i), _MM_FROUND_TO_NEAREST_INT);
    _mm256_storeu_si256(reinterpret_cast<__m256i*>(to + i), halves);
  }
  StoreLoop(from, to, i, count);
}

INFINIOP_CPU_TARGET_AVX2 void HalfToFloatAvx2(const Half* from, float* to, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i halves = _mm_loadu_si128(reinterpret_cast<const __m128i*>(from + i));
    _mm256_storeu_ps(to + i, _mm256_cvtph_ps(halves));
  }
  LoadLoop(from, to, i, count);
}

INFINIOP_CPU_TARGET_AVX2 void FloatToHalfAvx2(const float* from, Half* to, size_t count) {
  size_t i = 0;
  for (; i + 8 <= count; i += 8) {
    const __m128i halves = _mm256_cvtps_ph(_mm256_loadu_ps(from + i), _MM_FROUND_TO_NEAREST_INT);
    _mm_storeu_si128(reinterpret_cast<__m128i*>(to + i), halves);
  }
  StoreLoop(from, to, i, count);
}

INFINIOP_CPU_END_AVX512_INTRINSICS

// BF16 is shifts and adds, which the vectoriser takes as written.
INFINIOP_CPU_TARGET_AVX512 void Bf16ToFloatAvx512(const BFloat16* from, float* to, size_t count) {
  LoadLoop(from, to, 0, count);
}
INFINIOP_CPU_TARGET_AVX512 void FloatToBf16Avx512(const float* from, BFloat16* to, size_t count) {
  StoreLoop(from, to, 0, count);
}
INFINIOP_CPU_TARGET_AVX2 void Bf16ToFloatAvx2(const BFloat16* from, float* to, size_t count) {
  LoadLoop(from, to, 0, count);
}
INFINIOP_CPU_TARGET_AVX2 void FloatToBf16Avx2(const float* from, BFloat16* to, size_t count) {
  StoreLoop(from, to, 0, count);
}

#endif

template <class T>
void LoadBaseline(const T* from, float* to, size_t count) {
  LoadLoop(from, to, 0, count);
}

template <class T>
void StoreBaseline(const float* from, T* to, size_t count) {
  StoreLoop(from, to, 0, count);
}

}  // namespace

void ToFloat(const Half* from, float* to, size_t count) {
  RunForIsa(INFINIOP_CPU_X86_ONLY(&HalfToFloatAvx512), INFINIOP_CPU_X86_ONLY(&HalfToFloatAvx2),
            &LoadBaseline<Half>, from, to, count);
}

void FromFloat(const float* from, Half* to, size_t count) {
  RunForIsa(INFINIOP_CPU_X86_ONLY(&FloatToHalfAvx512), INFINIOP_CPU_X86_ONLY(&FloatToHalfAvx2),
            &StoreBaseline<Half>, from, to, count);
}

void ToFloat(const BFloat16* from, float* to, size_t count) {
  RunForIsa(INFINIOP_CPU_X86_ONLY(&Bf16ToFloatAvx512), INFINIOP_CPU_X86_ONLY(&Bf16ToFloatAvx2),
            &LoadBaseline<BFloat16>, from, to, count);
}

void FromFloat(const float* from, BFloat16* to, size_t count) {
  RunForIsa(INFINIOP_CPU_X86_ONLY(&FloatToBf16Avx512), INFINIOP_CPU_X86_ONLY(&FloatToBf16Avx2),
            &StoreBaseline<BFloat16>, from, to, count);
}

}  // namespace infinirt::infiniop_cpu
