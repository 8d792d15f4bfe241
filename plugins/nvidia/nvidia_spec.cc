// NVIDIA: the CUDA Runtime itself (libcudart), CUDA's names and numbers.
#include "cuda_family.h"

namespace infinirt::cuda_family {

const CudaFamilySpec& ThisVendor() {
  static const CudaFamilySpec spec = {
      "nvidia", INFINI_DEVICE_NVIDIA, "nvidia", "cuda", {{nullptr, nullptr}}, kCudaEnums,
      true,     "libcuda.so.1",
  };
  return spec;
}

}  // namespace infinirt::cuda_family
