#include "cncl_translation.h"

#include "cncl_api.h"

namespace infiniccl_cncl {

const infiniccl_engine::VendorNumbers& CnclNumbers() {
  static constexpr infiniccl_engine::VendorNumbers::Type kTypes[] = {
      {INFINI_DTYPE_I8, kCnclInt8},       {INFINI_DTYPE_I16, kCnclInt16},
      {INFINI_DTYPE_I32, kCnclInt32},     {INFINI_DTYPE_I64, kCnclInt64},
      {INFINI_DTYPE_U8, kCnclUint8},      {INFINI_DTYPE_U16, kCnclUint16},
      {INFINI_DTYPE_U32, kCnclUint32},    {INFINI_DTYPE_U64, kCnclUint64},
      {INFINI_DTYPE_F16, kCnclFloat16},   {INFINI_DTYPE_F32, kCnclFloat32},
      {INFINI_DTYPE_BF16, kCnclBfloat16}, {INFINI_DTYPE_INVALID, -1}};
  static constexpr infiniccl_engine::VendorNumbers kNumbers = {
      "CNCL", "cnclResult_t", kTypes, kCnclUint8, {kCnclSum, kCnclProd, kCnclMax, kCnclMin}};
  return kNumbers;
}

infiniStatus_t StatusOf(int result) {
  switch (result) {
    case kCnclSuccess:
      return INFINI_STATUS_SUCCESS;
    case kCnclArguments:
    case kCnclNullPointer:
      return INFINI_STATUS_BAD_PARAM;
    case kCnclUnsupported:
      return INFINI_STATUS_NOT_IMPLEMENTED;
    default:  // internal, system, runtime, device, asynchronous, unknown
      return INFINI_STATUS_INTERNAL_ERROR;
  }
}

}  // namespace infiniccl_cncl
