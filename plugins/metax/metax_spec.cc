// MetaX: MACA (libmcruntime, mc* names) or HPCC (libhcruntime, hc* names), chosen by the
// library that opened. Enum values: CUDA's (memcpy kinds and mcEventDisableTiming = 2 are
// seen in third-party code; the rest is UNCONFIRMED, docs/vendor-runtimes.md). Errors are
// translated by name (mcGetErrorName / hcGetErrorName).
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
      false,
      nullptr,
  };
  return spec;
}

}  // namespace infinirt::cuda_family
