// MetaX: MACA (libmcruntime, mc* names) or HPCC (libhcruntime, hc* names), chosen by the
// library that opened. Enum values: CUDA's (memcpy kinds and mcEventDisableTiming = 2 are
// seen in third-party code; the rest is UNCONFIRMED, docs/vendor-runtimes.md). Errors are
// translated by name (mcGetErrorName / hcGetErrorName). Whether MACA numbers device attributes
// as CUDA or in HIP's order is not known (sources disagree): it is checked at start-up. Its
// mcMallocHost takes a flags argument, which the plugin always passes.
#include "cuda_family.h"

namespace infinirt::cuda_family {

const CudaFamilySpec& ThisVendor() {
  static const CudaFamilySpec spec = {
      "metax",
      INFINI_DEVICE_METAX,
      "metax",
      "mc",
      {{"hcruntime", "hc"}, {nullptr, nullptr}},
      kCudaEnums,
      /*cuda_special_streams=*/false,
      /*cuda_error_numbers=*/false,
      /*attribute_numbers_verified=*/false,
      nullptr,
  };
  return spec;
}

}  // namespace infinirt::cuda_family
