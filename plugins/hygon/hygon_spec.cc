// Hygon DCU: DTK's CUDA-compatible libcudart over HIP. CUDA's names; CUDA's numbers assumed
// (docs/vendor-runtimes.md).
#include "cuda_family.h"

namespace infinirt::cuda_family {

const CudaFamilySpec& ThisVendor() {
  static const CudaFamilySpec spec = {
      "hygon", INFINI_DEVICE_HYGON, "hygon", "cuda", {{nullptr, nullptr}}, kCudaEnums, true,
      nullptr,
  };
  return spec;
}

}  // namespace infinirt::cuda_family
