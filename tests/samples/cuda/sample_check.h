// What every sample uses: a check of each call that ends the program with the error's name, and
// a check of a result. CUDA spelling throughout: the test renames it (tools/cuda-to-infinirt).
#ifndef SAMPLE_CHECK_H_
#define SAMPLE_CHECK_H_

#include <cuda_runtime_api.h>

#include <cstdio>
#include <cstdlib>

#define CHECK(call)                                                              \
  do {                                                                           \
    const cudaError_t check_error_ = (call);                                     \
    if (check_error_ != cudaSuccess) {                                           \
      std::fprintf(stderr, "%s:%d: %s returned %s\n", __FILE__, __LINE__, #call, \
                   cudaGetErrorName(check_error_));                              \
      std::exit(EXIT_FAILURE);                                                   \
    }                                                                            \
  } while (0)

#define EXPECT(condition)                                                           \
  do {                                                                              \
    if (!(condition)) {                                                             \
      std::fprintf(stderr, "%s:%d: expected %s\n", __FILE__, __LINE__, #condition); \
      std::exit(EXIT_FAILURE);                                                      \
    }                                                                               \
  } while (0)

#endif  // SAMPLE_CHECK_H_
