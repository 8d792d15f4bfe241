// InfiniCCL's numbers as NCCL's: dtypes, reduction operators (translated by collective_engine.h's
// TranslateOp), and NCCL's results as infiniStatus_t.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_TRANSLATION_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_TRANSLATION_H_

#include <cstddef>
#include <string>

#include "collective_engine.h"
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

// The library's reduction operators, for collective_engine.h's TranslateOp: ncclAvg only from
// NCCL 2.10.3 on (before it, AVG is NOT_IMPLEMENTED, saying so).
infiniccl_engine::VendorOps NcclOps(const NcclLibrary& library);

// An NCCL result as an infiniStatus_t: invalid arguments and usage are BAD_PARAM, the rest of the
// failures INTERNAL_ERROR.
infiniStatus_t StatusOf(int result);

// "<function> failed: <the library's name of the result> (<its last error>)".
std::string Describe(const NcclLibrary& library, const char* function, int result, void* comm);

}  // namespace infiniccl_nccl

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_TRANSLATION_H_
