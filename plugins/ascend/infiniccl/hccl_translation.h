// HCCL's numbers for InfiniCCL's (the translation itself is collective_engine.h's), and
// HcclResult as infiniStatus_t.
#ifndef INFINIRT_PLUGINS_ASCEND_INFINICCL_HCCL_TRANSLATION_H_
#define INFINIRT_PLUGINS_ASCEND_INFINICCL_HCCL_TRANSLATION_H_

#include "collective_engine.h"

namespace infiniccl_hccl {

// HcclDataType for each InfiniCore dtype it has, HcclReduceOp (no average).
const infiniccl_engine::VendorNumbers& HcclNumbers();

// An HcclResult as an infiniStatus_t: parameter and null-pointer errors are BAD_PARAM, "not
// supported" NOT_IMPLEMENTED, the rest of the failures INTERNAL_ERROR.
infiniStatus_t StatusOf(int result);

}  // namespace infiniccl_hccl

#endif  // INFINIRT_PLUGINS_ASCEND_INFINICCL_HCCL_TRANSLATION_H_
