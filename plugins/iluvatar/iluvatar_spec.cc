// Iluvatar CoreX: a CUDA-compatible libcudart of its own (opened by absolute path under the
// CoreX prefix, see config/vendor_runtimes.json). CUDA's names; CUDA's numbers assumed
// (docs/vendor-runtimes.md). Its cudaGraphInstantiate is the 5-argument form.
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
      true,
      nullptr,
  };
  return spec;
}

}  // namespace infinirt::cuda_family
