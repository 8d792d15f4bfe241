// What the CUDA-family operator backends' files share: the vendor libraries they call (the runtime
// the vendor's runtime plugin loaded, its cuBLAS-shaped BLAS, NVIDIA's kernels) and Gemm's plan.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_BACKEND_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_BACKEND_H_

#include <string>

#include "family_vendor_api.h"
#include "infiniop_backend.h"

namespace infinirt::infiniop_cuda_family {

#define NV_FUNCTION_POINTER_(name, params) int(*name) params = nullptr;
struct RuntimeFunctions {
  FAMILY_OPERATOR_RUNTIME_FUNCTIONS(NV_FUNCTION_POINTER_)
};
struct CublasFunctions {
  FAMILY_OPERATOR_BLAS_FUNCTIONS(NV_FUNCTION_POINTER_)
};
#undef NV_FUNCTION_POINTER_

// Resolves the runtime's functions (under the vendor's prefix) from the library the vendor's
// runtime plugin uses (the same instance: one context per device for both), and picks the flavour
// of the vendor's libraries that goes with it. False, with the reason, when that plugin is not
// loaded or its library lacks <prefix>GetDevice.
bool LoadRuntime(std::string* why);
const RuntimeFunctions& Runtime();

// The vendor's cuBLAS-shaped BLAS, opened on first use: the paths of the vendor's variable
// (INFINIOP_NVIDIA_CUBLAS, INFINIOP_METAX_BLAS...) or else its spec's file names, by name and
// beside the runtime in use. Null, with the reason, when none opens or one lacks a function.
const CublasFunctions* Cublas(std::string* why);

// A kernel of the backend's fatbin (loaded on first use), as cudaLaunchKernel takes it; null,
// with the reason, when the backend was built without kernels, the runtime cannot load them
// (before CUDA 12), or the fatbin has no such kernel. *architecture is set when the fatbin has
// no code the device can run.
void* KernelFunction(const char* name, std::string* why, bool* architecture);

// A line on stderr when INFINIRT_LOG_LEVEL is debug (or trace): why a call was refused.
void LogDebug(const std::string& message);

// Gemm's plan: cuBLAS's column-major call computing the descriptor's row- or column-major c.
struct GemmPlan {
  bool empty = false;  // a 0-sized m, n or batch: nothing to queue
  int transa = kCublasOpN;
  int transb = kCublasOpN;
  int m = 0, n = 0, k = 0;
  int lda = 1, ldb = 1, ldc = 1;
  long long stride_a = 0, stride_b = 0, stride_c = 0;
  int batch = 1;
  bool swap_operands = false;  // cuBLAS's A is the descriptor's b (c computed transposed)
  int data_type = kCudaR32F;
  int compute_type = kCublasCompute32F;
  bool double_scalars = false;  // alpha and beta passed as double (F64)
};

infiniStatus_t MakeGemmPlan(const infiniopBackendTensor* tensors, GemmPlan* plan);
// Queues the Gemm on the native stream, with the stream's device current.
infiniStatus_t RunGemm(const GemmPlan& plan, void* const* buffers,
                       const infiniopBackendRunParams& params, void* native_stream);

}  // namespace infinirt::infiniop_cuda_family

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_BACKEND_H_
