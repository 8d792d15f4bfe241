// Rows of half-precision elements to float and back, in the widest vectors the processor has
// (cpu_isa.h): F16 with the processor's own conversions (F16C, AVX-512), BF16 with shifts. Gemm's
// float copies use them (cpu_gemm.cc).
#ifndef INFINIOP_CPU_CONVERT_H_
#define INFINIOP_CPU_CONVERT_H_

#include <cstddef>

#include "cpu_common.h"

namespace infinirt::infiniop_cpu {

// Rounding to nearest, ties to even, as FloatToHalf and FloatToBf16 do; a NaN stays a NaN.
void ToFloat(const Half* from, float* to, size_t count);
void ToFloat(const BFloat16* from, float* to, size_t count);
void FromFloat(const float* from, Half* to, size_t count);
void FromFloat(const float* from, BFloat16* to, size_t count);

}  // namespace infinirt::infiniop_cpu

#endif  // INFINIOP_CPU_CONVERT_H_
