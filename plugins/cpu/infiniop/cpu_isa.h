// Which vector instructions the CPU operator backend's kernels use, chosen once at run time: the
// build targets the architecture's baseline (x86-64: SSE2), so that one binary runs on every
// machine, and the hottest loops have a second version compiled for AVX2 with FMA, taken where the
// processor has them.
#ifndef INFINIOP_CPU_ISA_H_
#define INFINIOP_CPU_ISA_H_

namespace infinirt::infiniop_cpu {

// In order: each level's processors have the instructions of those before it.
enum class Isa {
  kBaseline,  // what the build targets
  kAvx2,      // x86-64 with AVX2, FMA and F16C
  kAvx512,    // and AVX-512 F, VL, BW and DQ, used 512 bits wide
};

// The instructions this process uses: the best the processor has, or no better than
// INFINIOP_CPU_ISA asks ("baseline", "avx2" or "avx512"; to test each path, or to compare them).
Isa SelectedIsa();

template <class T>
struct NotDeduced {
  using Type = T;
};

// Calls the version of a kernel for the selected instructions: avx512 or avx2 where SelectedIsa()
// reaches its level and the version exists (INFINIOP_CPU_X86_ONLY), else baseline.
template <class... Params, class... Args>
void RunForIsa(typename NotDeduced<void (*)(Params...)>::Type avx512,
               typename NotDeduced<void (*)(Params...)>::Type avx2, void (*baseline)(Params...),
               Args... args) {
  const Isa isa = SelectedIsa();
  if (isa == Isa::kAvx512 && avx512 != nullptr) return avx512(args...);
  if (isa >= Isa::kAvx2 && avx2 != nullptr) return avx2(args...);
  baseline(args...);
}

}  // namespace infinirt::infiniop_cpu

// Mark functions to be compiled for AVX2 with FMA and F16C, or for AVX-512 (512-bit vectors
// preferred: GCC otherwise keeps to 256); such a function may only run where SelectedIsa() is at
// least its level, and the functions it inlines are compiled with it. Elsewhere than x86-64 with
// GCC or Clang these versions are not built (INFINIOP_CPU_HAS_X86_KERNELS is 0).
#if defined(__x86_64__) && (defined(__GNUC__) || defined(__clang__))
#define INFINIOP_CPU_HAS_X86_KERNELS 1
#define INFINIOP_CPU_TARGET_AVX2 __attribute__((target("avx2,fma,f16c")))
#if defined(__clang__)  // Clang's target attribute takes no vector width
#define INFINIOP_CPU_TARGET_AVX512 \
  __attribute__((target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512dq")))
#else
#define INFINIOP_CPU_TARGET_AVX512 \
  __attribute__((                  \
      target("avx2,fma,f16c,avx512f,avx512vl,avx512bw,avx512dq,prefer-vector-width=512")))
#endif
#else
#define INFINIOP_CPU_HAS_X86_KERNELS 0
#endif

// Names a kernel's AVX2 or AVX-512 version where those are built; nullptr elsewhere.
#if INFINIOP_CPU_HAS_X86_KERNELS
#define INFINIOP_CPU_X86_ONLY(...) (__VA_ARGS__)
#else
#define INFINIOP_CPU_X86_ONLY(...) nullptr
#endif

// Around code using AVX-512 intrinsics: GCC 12's start their results from a variable initialised
// with itself, which its own -Wuninitialized then reports in every function that inlines them
// (GCC bug 105593).
#if defined(__clang__)
#define INFINIOP_CPU_BEGIN_AVX512_INTRINSICS
#define INFINIOP_CPU_END_AVX512_INTRINSICS
#else
#define INFINIOP_CPU_BEGIN_AVX512_INTRINSICS                                           \
  _Pragma("GCC diagnostic push") _Pragma("GCC diagnostic ignored \"-Wuninitialized\"") \
      _Pragma("GCC diagnostic ignored \"-Wmaybe-uninitialized\"")
#define INFINIOP_CPU_END_AVX512_INTRINSICS _Pragma("GCC diagnostic pop")
#endif

#endif  // INFINIOP_CPU_ISA_H_
