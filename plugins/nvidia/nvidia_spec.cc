// NVIDIA: the CUDA Runtime itself (libcudart), CUDA's names and numbers, verified against
// CUDA 13's headers (cuda_prototype_check.cc).
#include "cuda_family.h"

namespace infinirt::cuda_family {

const CudaFamilySpec& ThisVendor() {
  static const CudaFamilySpec spec = {
      "nvidia",
      INFINI_DEVICE_NVIDIA,
      "nvidia",
      "cuda",
      {{nullptr, nullptr}},
      kCudaEnums,
      /*cuda_special_streams=*/true,
      /*cuda_error_numbers=*/true,
      /*attribute_numbers_verified=*/true,
      "libcuda.so.1",
  };
  return spec;
}

}  // namespace infinirt::cuda_family
