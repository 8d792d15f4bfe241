// The emulated cuBLAS's inspection interface (tests/emulated_runtimes/cublas): what a test reads
// back of the last cublasGemmStridedBatchedEx call, through dlsym on the emulated library.
#ifndef INFINIRT_TESTS_EMULATED_RUNTIMES_CUBLAS_EMULATED_CUBLAS_H_
#define INFINIRT_TESTS_EMULATED_RUNTIMES_CUBLAS_EMULATED_CUBLAS_H_

// The arguments of a Gemm call (alpha and beta as double, whatever the compute type).
struct EmuGemmCall {
  void* handle;
  void* stream;
  int transa, transb, m, n, k;
  double alpha, beta;
  const void* a;
  int a_type, lda;
  long long stride_a;
  const void* b;
  int b_type, ldb;
  long long stride_b;
  void* c;
  int c_type, ldc;
  long long stride_c;
  int batch, compute_type, algo;
  int calls;  // how many Gemm calls so far
};

// emuCublasLastGemm: the last call's arguments. emuCublasFailNext: the status the next call
// answers (cuBLAS's number), without computing.
using EmuCublasLastGemmFn = EmuGemmCall (*)(void);
using EmuCublasFailNextFn = void (*)(int);

#endif  // INFINIRT_TESTS_EMULATED_RUNTIMES_CUBLAS_EMULATED_CUBLAS_H_
