// What one CUDA-family vendor's operator backend (libinfiniop_<vendor>.so) is made of besides the
// shared code of this folder: its device type, the prefix of its runtime's functions, its BLAS
// library and the prefix of that library's functions. Each vendor's folder defines ThisVendor()
// (plugins/<vendor>/infiniop/<vendor>_operators.cc). The BLAS functions are cuBLAS's, renamed:
// cublasGemmStridedBatchedEx becomes <blas_prefix>GemmStridedBatchedEx, and cuBLAS's _v2 names
// (cublasCreate_v2) lose the suffix where the vendor's library has none.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_OPERATOR_SPEC_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_OPERATOR_SPEC_H_

#include "infinicore.h"

namespace infinirt::infiniop_cuda_family {

// The libraries of one flavour of a vendor's stack (MetaX has two: MACA and HPCC).
struct FamilyLibraries {
  // A part of the runtime library's file name that marks this flavour; nullptr: any.
  const char* runtime_library_mark;
  const char* runtime_prefix;  // "cuda": cudaGetDevice
  const char* blas_prefix;     // "cublas": cublasGemmStridedBatchedEx
  bool blas_v2_names;          // cublasCreate_v2, cublasSetStream_v2, cublasDestroy_v2
  // The BLAS library's file names, tried by name and then beside the runtime library.
  const char* blas_libraries[3];
};

struct FamilyOperatorSpec {
  const char* name;  // libinfiniop_<name>.so, the runtime plugin's name
  infiniDevice_t device_type;
  // A variable holding colon-separated paths of the BLAS library, replacing the built-in list.
  const char* blas_variable;
  FamilyLibraries flavours[2];  // the first whose mark is in the runtime library's name
  // What Describe names as computing Gemm ("cuBLAS cublasGemmStridedBatchedEx").
  const char* gemm_how;
  // Whether the vendor's backend carries the CUDA kernels of kernels/ (NVIDIA's, where nvcc built
  // them); without them every operator but Gemm answers NOT_IMPLEMENTED.
  bool kernels;
  // The fatbin of those kernels built into this backend, or nullptr (no nvcc at build time, or a
  // vendor without them).
  const unsigned char* fatbin;
  // The facts this vendor's entries rest on that no vendor header here confirms, for the docs
  // and the debug log ("" where all are verified).
  const char* assumed;
};

const FamilyOperatorSpec& ThisVendor();

}  // namespace infinirt::infiniop_cuda_family

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_OPERATOR_SPEC_H_
