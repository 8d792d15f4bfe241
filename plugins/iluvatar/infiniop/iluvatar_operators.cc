// Iluvatar CoreX's operator backend: Gemm through CoreX's cuBLAS-compatible libcublas (CUDA's
// names and numbers, assumed as the runtime plugin assumes them for CoreX's libcudart). No kernels:
// the CUDA kernels are built for NVIDIA GPUs only, so the other operators answer NOT_IMPLEMENTED.
#include "family_operator_spec.h"

namespace infinirt::infiniop_cuda_family {

const FamilyOperatorSpec& ThisVendor() {
  static const FamilyOperatorSpec spec = {
      "iluvatar",
      INFINI_DEVICE_ILUVATAR,
      "INFINIOP_ILUVATAR_BLAS",
      {{nullptr, "cuda", "cublas", true, {"libcublas.so", nullptr, nullptr}},
       {nullptr, nullptr, nullptr, false, {nullptr}}},
      "CoreX cuBLAS cublasGemmStridedBatchedEx",
      false,
      nullptr,
      "CoreX's cuBLAS: library name, _v2 symbol names and CUDA's enum values",
  };
  return spec;
}

}  // namespace infinirt::infiniop_cuda_family
