#include "hccl_translation.h"

#include "hccl_api.h"

namespace infiniccl_hccl {

const infiniccl_engine::VendorNumbers& HcclNumbers() {
  static constexpr infiniccl_engine::VendorNumbers::Type kTypes[] = {
      {INFINI_DTYPE_I8, kHcclInt8},    {INFINI_DTYPE_I16, kHcclInt16},
      {INFINI_DTYPE_I32, kHcclInt32},  {INFINI_DTYPE_I64, kHcclInt64},
      {INFINI_DTYPE_U8, kHcclUint8},   {INFINI_DTYPE_U16, kHcclUint16},
      {INFINI_DTYPE_U32, kHcclUint32}, {INFINI_DTYPE_U64, kHcclUint64},
      {INFINI_DTYPE_F16, kHcclFp16},   {INFINI_DTYPE_F32, kHcclFp32},
      {INFINI_DTYPE_F64, kHcclFp64},   {INFINI_DTYPE_BF16, kHcclBfp16},
      {INFINI_DTYPE_INVALID, -1}};
  static constexpr infiniccl_engine::VendorNumbers kNumbers = {
      "HCCL",
      "HcclResult",
      kTypes,
      kHcclUint8,
      {kHcclReduceSum, kHcclReduceProd, kHcclReduceMax, kHcclReduceMin}};
  return kNumbers;
}

infiniStatus_t StatusOf(int result) {
  switch (result) {
    case kHcclSuccess:
      return INFINI_STATUS_SUCCESS;
    case kHcclParameterError:
    case kHcclNullPointer:
      return INFINI_STATUS_BAD_PARAM;
    case kHcclNotSupported:
      return INFINI_STATUS_NOT_IMPLEMENTED;
    default:  // memory, internal, timeout, transport, runtime, driver, remote, unknown
      return INFINI_STATUS_INTERNAL_ERROR;
  }
}

}  // namespace infiniccl_hccl
