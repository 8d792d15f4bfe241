// NVIDIA's operator backend: cuBLAS (its prototypes and numbers checked against the CUDA
// Toolkit's headers where they are installed: family_vendor_api_check.cc) and the backend's CUDA
// kernels, which nvcc builds into it (CMakeLists.txt).
#include "family_operator_spec.h"

#ifdef INFINIOP_NVIDIA_KERNELS
// The fatbin nvcc made of kernels/*.cu, from the generated infiniop_nvidia_fatbin.c.
extern "C" const unsigned char infiniop_nvidia_fatbin[];
#define INFINIOP_NVIDIA_FATBIN_ infiniop_nvidia_fatbin
#else
#define INFINIOP_NVIDIA_FATBIN_ nullptr
#endif

namespace infinirt::infiniop_cuda_family {

const FamilyOperatorSpec& ThisVendor() {
  static const FamilyOperatorSpec spec = {
      "nvidia",
      INFINI_DEVICE_NVIDIA,
      "INFINIOP_NVIDIA_CUBLAS",
      {{nullptr, "cuda", "cublas", true, {"libcublas.so.13", "libcublas.so.12", nullptr}},
       {nullptr, nullptr, nullptr, false, {nullptr}}},
      "cuBLAS cublasGemmStridedBatchedEx",
      true,
      INFINIOP_NVIDIA_FATBIN_,
      "",
  };
  return spec;
}

}  // namespace infinirt::infiniop_cuda_family
