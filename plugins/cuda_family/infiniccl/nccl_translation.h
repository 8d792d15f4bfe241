// InfiniCCL's numbers as NCCL's: dtypes, reduction operators, and NCCL's results as
// infiniStatus_t.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_TRANSLATION_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_TRANSLATION_H_

#include <cstddef>
#include <string>

#include "infiniccl_backend.h"
#include "nccl_libraries.h"

namespace infiniccl_nccl {

// What NCCL is asked to move: its dtype and the element count in that dtype.
struct NcclElements {
  int dtype = kNcclUint8;
  size_t count = 0;
};

// The NCCL dtype and count of a call. A reduction needs NCCL's own type (no 16-bit integers in
// NCCL: NOT_IMPLEMENTED; bf16 before NCCL 2.10.3: NOT_IMPLEMENTED); data that only moves goes as
// its bytes where NCCL has no such type. On failure why says what.
infiniStatus_t TranslateElements(const NcclLibrary& library, const infinicclBackendCall& call,
                                 NcclElements* elements, std::string* why);

// The NCCL operator of a reduction (ncclAvg before NCCL 2.10.3: NOT_IMPLEMENTED).
infiniStatus_t TranslateOp(const NcclLibrary& library, infinicclReduceOp_t op, int* nccl_op,
                           std::string* why);

// An NCCL result as an infiniStatus_t: invalid arguments and usage are BAD_PARAM, the rest of the
// failures INTERNAL_ERROR.
infiniStatus_t StatusOf(int result);

// "<function> failed: <the library's name of the result> (<its last error>)".
std::string Describe(const NcclLibrary& library, const char* function, int result, void* comm);

}  // namespace infiniccl_nccl

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_TRANSLATION_H_
