// Moore Threads' operator backend: Gemm through muBLAS. Names as third-party code calls them
// (mublasCreate, mublasSetStream, mublasGemmStridedBatchedEx, no _v2 suffix); enum values CUDA's,
// assumed as for the runtime. No kernels: the other operators answer NOT_IMPLEMENTED.
#include "family_operator_spec.h"

namespace infinirt::infiniop_cuda_family {

const FamilyOperatorSpec& ThisVendor() {
  static const FamilyOperatorSpec spec = {
      "moore",
      INFINI_DEVICE_MOORE,
      "INFINIOP_MOORE_BLAS",
      {{nullptr, "musa", "mublas", false, {"libmublas.so", nullptr, nullptr}},
       {nullptr, nullptr, nullptr, false, {nullptr}}},
      "muBLAS mublasGemmStridedBatchedEx",
      false,
      nullptr,
      "muBLAS: library name and CUDA's enum values (operations, data and compute types, "
      "statuses)",
  };
  return spec;
}

}  // namespace infinirt::infiniop_cuda_family
