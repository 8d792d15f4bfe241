// Hygon DCU: DTK's CUDA-compatible libcudart over HIP. CUDA's names; CUDA's numbers assumed
// (docs/vendor-plugins.md). Not assumed: that it knows CUDA's special stream handles, or that
// its attributes are numbered as CUDA's (checked at start-up).
#include "cuda_family.h"

namespace infinirt::cuda_family {

const CudaFamilySpec& ThisVendor() {
  static const CudaFamilySpec spec = {
      "hygon",
      INFINI_DEVICE_HYGON,
      "hygon",
      "cuda",
      {{nullptr, nullptr}},
      kCudaEnums,
      /*cuda_special_streams=*/false,
      /*cuda_error_numbers=*/true,
      /*attribute_numbers_verified=*/false,
      nullptr,
  };
  return spec;
}

}  // namespace infinirt::cuda_family
