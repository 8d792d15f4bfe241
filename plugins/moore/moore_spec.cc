// Moore Threads MUSA: libmusart, musa* names. The numeric values of musa's enums are not in
// any public header we could check (docs/vendor-plugins.md, assumed): CUDA's are used, as MUSA
// mirrors CUDA. Errors are translated by name (musaGetErrorName), not by number, the default
// streams are not assumed to have CUDA's special handles, and the attribute numbering is
// checked at start-up.
#include "cuda_family.h"

namespace infinirt::cuda_family {

const CudaFamilySpec& ThisVendor() {
  static const CudaFamilySpec spec = {
      "moore",
      INFINI_DEVICE_MOORE,
      "moore",
      "musa",
      {{nullptr, nullptr}},
      kCudaEnums,
      /*cuda_special_streams=*/false,
      /*cuda_error_numbers=*/false,
      /*attribute_numbers_verified=*/false,
      nullptr,
  };
  return spec;
}

}  // namespace infinirt::cuda_family
