// MetaX's operator backend: Gemm through mcBLAS (MACA) or hcBLAS (HPCC), whichever matches the
// runtime the MetaX plugin opened. Names as third-party code calls them (mcblasCreate,
// mcblasSetStream, mcblasGemmStridedBatchedEx, no _v2 suffix; its Gemm takes cudaDataType_t);
// enum values CUDA's, assumed as for the runtime. No kernels: the other operators answer
// NOT_IMPLEMENTED.
#include "family_operator_spec.h"

namespace infinirt::infiniop_cuda_family {

const FamilyOperatorSpec& ThisVendor() {
  static const FamilyOperatorSpec spec = {
      "metax",
      INFINI_DEVICE_METAX,
      "INFINIOP_METAX_BLAS",
      {{"hcruntime", "hc", "hcblas", false, {"libhcblas.so", nullptr, nullptr}},
       {nullptr, "mc", "mcblas", false, {"libmcblas.so", nullptr, nullptr}}},
      "mcBLAS mcblasGemmStridedBatchedEx (HPCC: hcblas)",
      false,
      nullptr,
      "mcBLAS/hcBLAS: library names and CUDA's enum values (operations, data and compute types, "
      "statuses)",
  };
  return spec;
}

}  // namespace infinirt::infiniop_cuda_family
