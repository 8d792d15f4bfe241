// The run-time choice of the CPU operator backend's kernels (cpu_isa.h).
#include "cpu_isa.h"

#include <stdlib.h>
#include <string.h>

#include <algorithm>

#if INFINIOP_CPU_HAS_X86_KERNELS
#include <cpuid.h>
#endif

namespace infinirt::infiniop_cpu {

namespace {

#if INFINIOP_CPU_HAS_X86_KERNELS
// CPUID leaf 1, ECX bit 29 (__builtin_cpu_supports has no "f16c" in Clang, and GCC 12's answers
// 0 for it).
bool HasF16c() {
  unsigned eax = 0, ebx = 0, ecx = 0, edx = 0;
  return __get_cpuid(1, &eax, &ebx, &ecx, &edx) != 0 && (ecx & (1u << 29)) != 0;
}
#endif

Isa BestOfProcessor() {
#if INFINIOP_CPU_HAS_X86_KERNELS
  __builtin_cpu_init();
  if (!__builtin_cpu_supports("avx2") || !__builtin_cpu_supports("fma") || !HasF16c()) {
    return Isa::kBaseline;
  }
  const bool avx512 = __builtin_cpu_supports("avx512f") && __builtin_cpu_supports("avx512vl") &&
                      __builtin_cpu_supports("avx512bw") && __builtin_cpu_supports("avx512dq");
  return avx512 ? Isa::kAvx512 : Isa::kAvx2;
#else
  return Isa::kBaseline;
#endif
}

// The level INFINIOP_CPU_ISA asks for; the best there is when it is unset or unknown.
Isa AskedIsa() {
  const char* asked = secure_getenv("INFINIOP_CPU_ISA");
  if (asked == nullptr) return Isa::kAvx512;
  if (strcmp(asked, "baseline") == 0) return Isa::kBaseline;
  if (strcmp(asked, "avx2") == 0) return Isa::kAvx2;
  return Isa::kAvx512;
}

Isa DetectIsa() { return std::min(AskedIsa(), BestOfProcessor()); }

}  // namespace

Isa SelectedIsa() {
  static const Isa isa = DetectIsa();
  return isa;
}

}  // namespace infinirt::infiniop_cpu
