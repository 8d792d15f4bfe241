// Iluvatar CoreX: a CUDA-compatible libcudart of its own (opened by absolute path under the
// CoreX prefix, see config/vendors.json). CUDA's names; CUDA's numbers assumed
// (docs/vendor-plugins.md). Its cudaGraphInstantiate is the 5-argument form. Not assumed: that
// it knows CUDA's special stream handles, or CUDA's attribute numbering (checked at start-up).
#include "cuda_family.h"

namespace infinirt::cuda_family {

const CudaFamilySpec& ThisVendor() {
  static const CudaFamilySpec spec = {
      "iluvatar",
      INFINI_DEVICE_ILUVATAR,
      "iluvatar",
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
