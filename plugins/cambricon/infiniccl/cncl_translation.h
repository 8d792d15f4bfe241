// CNCL's numbers for InfiniCCL's (the translation itself is collective_engine.h's), and
// cnclResult_t as infiniStatus_t.
#ifndef INFINIRT_PLUGINS_CAMBRICON_INFINICCL_CNCL_TRANSLATION_H_
#define INFINIRT_PLUGINS_CAMBRICON_INFINICCL_CNCL_TRANSLATION_H_

#include "collective_engine.h"

namespace infiniccl_cncl {

// cnclDataType_t for each InfiniCore dtype it has (no f64), cnclReduceOp_t (no average).
const infiniccl_engine::VendorNumbers& CnclNumbers();

// A cnclResult_t as an infiniStatus_t: argument and null-pointer errors are BAD_PARAM,
// "unsupported" NOT_IMPLEMENTED, the rest of the failures INTERNAL_ERROR.
infiniStatus_t StatusOf(int result);

}  // namespace infiniccl_cncl

#endif  // INFINIRT_PLUGINS_CAMBRICON_INFINICCL_CNCL_TRANSLATION_H_
