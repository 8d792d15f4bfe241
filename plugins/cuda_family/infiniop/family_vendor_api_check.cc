// Compile-time proof that the CUDA-family operator backends's function lists and numbers
// (family_vendor_api.h) are CUDA's and cuBLAS's: with the lists' type macros set to the real
// types, every entry must have the type of the function of that name in the real headers.
// Compiled only where the CUDA Toolkit is installed; nothing of it is linked.
#include <cublas_api.h>
#include <cuda_runtime_api.h>

#include <type_traits>

#define NV_STREAM cudaStream_t
#define NV_LIBRARY cudaLibrary_t
#define NV_KERNEL cudaKernel_t
#define NV_DIM3 dim3
#define NV_JIT_OPTION enum cudaJitOption
#define NV_LIBRARY_OPTION enum cudaLibraryOption
#define NV_CUBLAS cublasHandle_t
#define NV_OPERATION cublasOperation_t
#define NV_DATA_TYPE cudaDataType
#define NV_COMPUTE_TYPE cublasComputeType_t
#define NV_GEMM_ALGO cublasGemmAlgo_t
#include "family_vendor_api.h"

#define NV_CHECK_RUNTIME_(name, params)                                       \
  static_assert(std::is_same_v<decltype(&cuda##name), cudaError_t(*) params>, \
                "cuda" #name ": the backend's list disagrees with CUDA");
FAMILY_OPERATOR_RUNTIME_FUNCTIONS(NV_CHECK_RUNTIME_)
#undef NV_CHECK_RUNTIME_

// A cast, not decltype: cuBLAS overloads some names for C++; the cast compiles only when one of
// them has the list's prototype.
#define NV_CHECK_CUBLAS_(name, params) \
  [[maybe_unused]] static const auto kCheck_##name = static_cast<cublasStatus_t(*) params>(&name);
FAMILY_OPERATOR_BLAS_FUNCTIONS(NV_CHECK_CUBLAS_)
#undef NV_CHECK_CUBLAS_

// The backend calls through pointers with plain C types: the substitutions must keep the
// calling convention.
static_assert(sizeof(cudaError_t) == sizeof(int) && sizeof(cublasStatus_t) == sizeof(int));
static_assert(sizeof(cublasOperation_t) == sizeof(int) && sizeof(cudaDataType) == sizeof(int) &&
              sizeof(cublasComputeType_t) == sizeof(int) &&
              sizeof(cublasGemmAlgo_t) == sizeof(int));
static_assert(sizeof(dim3) == sizeof(NvDim3) && std::is_trivially_copyable_v<dim3>);
static_assert(std::is_pointer_v<cudaLibrary_t> && std::is_pointer_v<cudaKernel_t> &&
              std::is_pointer_v<cublasHandle_t>);

namespace nvop = infinirt::infiniop_cuda_family;
static_assert(nvop::kCudaSuccess == cudaSuccess && nvop::kCublasSuccess == CUBLAS_STATUS_SUCCESS);
static_assert(nvop::kCudaErrorNoKernelImageForDevice == cudaErrorNoKernelImageForDevice &&
              nvop::kCudaErrorUnsupportedPtxVersion == cudaErrorUnsupportedPtxVersion);
static_assert(nvop::kCublasOpN == CUBLAS_OP_N && nvop::kCublasOpT == CUBLAS_OP_T);
static_assert(nvop::kCudaR16F == CUDA_R_16F && nvop::kCudaR16BF == CUDA_R_16BF &&
              nvop::kCudaR32F == CUDA_R_32F && nvop::kCudaR64F == CUDA_R_64F);
static_assert(nvop::kCublasCompute32F == CUBLAS_COMPUTE_32F &&
              nvop::kCublasCompute64F == CUBLAS_COMPUTE_64F &&
              nvop::kCublasGemmDefault == CUBLAS_GEMM_DEFAULT);
