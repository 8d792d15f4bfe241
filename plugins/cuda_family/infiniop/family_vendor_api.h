// The vendor functions the CUDA-family operator backends call, as lists: X(name, parameters), under
// CUDA's and cuBLAS's names (another vendor's are derived from them: family_operator_spec.h).
// Every function returns an int status (cudaError_t, cublasStatus_t).
//
// Like the runtime plugin's list, the parameter types are macros: the backend sees plain C types
// (handles are pointers, enums ints, dim3 a struct of three unsigned), and
// family_vendor_api_check.cc, compiled where the CUDA Toolkit is installed, redefines them as
// CUDA's types and proves every entry equal to the prototype in the real headers.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_VENDOR_API_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_VENDOR_API_H_

#include <stddef.h>

// CUDA's dim3, as the backend passes it by value.
struct NvDim3 {
  unsigned int x, y, z;
};

#ifndef NV_STREAM
#define NV_STREAM void*
#define NV_LIBRARY void*
#define NV_KERNEL void*
#define NV_DIM3 NvDim3
#define NV_JIT_OPTION int
#define NV_LIBRARY_OPTION int
#define NV_CUBLAS void*
#define NV_OPERATION int
#define NV_DATA_TYPE int
#define NV_COMPUTE_TYPE int
#define NV_GEMM_ALGO int
#endif

// The CUDA Runtime's, from the library the NVIDIA runtime plugin loaded. The library functions
// (CUDA 12.0 and later) load the backend's kernels: without them, only Gemm is served.
#define FAMILY_OPERATOR_RUNTIME_FUNCTIONS(X)                                                     \
  X(GetDevice, (int* device))                                                                    \
  X(LibraryLoadData,                                                                             \
    (NV_LIBRARY * library, const void* code, NV_JIT_OPTION* jitOptions, void** jitOptionsValues, \
     unsigned int numJitOptions, NV_LIBRARY_OPTION* libraryOptions, void** libraryOptionValues,  \
     unsigned int numLibraryOptions))                                                            \
  X(LibraryGetKernel, (NV_KERNEL * pKernel, NV_LIBRARY library, const char* name))               \
  X(LaunchKernel, (const void* func, NV_DIM3 gridDim, NV_DIM3 blockDim, void** args,             \
                   size_t sharedMem, NV_STREAM stream))

// cuBLAS's (libcublas.so.13 or .12): Gemm.
#define FAMILY_OPERATOR_BLAS_FUNCTIONS(X)                                                          \
  X(cublasCreate_v2, (NV_CUBLAS * handle))                                                         \
  X(cublasDestroy_v2, (NV_CUBLAS handle))                                                          \
  X(cublasSetStream_v2, (NV_CUBLAS handle, NV_STREAM streamId))                                    \
  X(cublasGemmStridedBatchedEx,                                                                    \
    (NV_CUBLAS handle, NV_OPERATION transa, NV_OPERATION transb, int m, int n, int k,              \
     const void* alpha, const void* A, NV_DATA_TYPE Atype, int lda, long long int strideA,         \
     const void* B, NV_DATA_TYPE Btype, int ldb, long long int strideB, const void* beta, void* C, \
     NV_DATA_TYPE Ctype, int ldc, long long int strideC, int batchCount,                           \
     NV_COMPUTE_TYPE computeType, NV_GEMM_ALGO algo))

namespace infinirt::infiniop_cuda_family {

// CUDA's and cuBLAS's numbers that the backend passes (checked against the real headers).
constexpr int kCudaSuccess = 0;
constexpr int kCudaErrorNoKernelImageForDevice = 209;
constexpr int kCudaErrorUnsupportedPtxVersion = 222;
constexpr int kCublasSuccess = 0;
constexpr int kCublasOpN = 0;
constexpr int kCublasOpT = 1;
constexpr int kCudaR16F = 2;
constexpr int kCudaR16BF = 14;
constexpr int kCudaR32F = 0;
constexpr int kCudaR64F = 1;
constexpr int kCublasCompute32F = 68;
constexpr int kCublasCompute64F = 70;
constexpr int kCublasGemmDefault = -1;

}  // namespace infinirt::infiniop_cuda_family

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_VENDOR_API_H_
