#include "nccl_translation.h"

#include <limits>

#include "infinirt.h"

namespace infiniccl_nccl {

namespace {

// NCCL's type for an InfiniCore dtype, or -1 where NCCL has none.
int NcclTypeOf(infiniDtype_t dtype) {
  switch (dtype) {
    case INFINI_DTYPE_I8:
      return kNcclInt8;
    case INFINI_DTYPE_U8:
      return kNcclUint8;
    case INFINI_DTYPE_I32:
      return kNcclInt32;
    case INFINI_DTYPE_U32:
      return kNcclUint32;
    case INFINI_DTYPE_I64:
      return kNcclInt64;
    case INFINI_DTYPE_U64:
      return kNcclUint64;
    case INFINI_DTYPE_F16:
      return kNcclFloat16;
    case INFINI_DTYPE_F32:
      return kNcclFloat32;
    case INFINI_DTYPE_F64:
      return kNcclFloat64;
    case INFINI_DTYPE_BF16:
      return kNcclBfloat16;
    default:
      return -1;
  }
}

}  // namespace

infiniStatus_t TranslateElements(const NcclLibrary& library, const infinicclBackendCall& call,
                                 NcclElements* elements, std::string* why) {
  int type = NcclTypeOf(call.dtype);
  if (type == kNcclBfloat16 && !library.HasBfloat16AndAvg()) type = -1;
  if (type >= 0) {
    *elements = NcclElements{type, call.count};
    return INFINI_STATUS_SUCCESS;
  }
  if (infinicclCallReduces(call.kind)) {
    *why = library.name + " cannot reduce dtype " + std::to_string(static_cast<int>(call.dtype)) +
           (call.dtype == INFINI_DTYPE_BF16 ? ": bf16 came with NCCL 2.10.3"
                                            : ": NCCL has no such type");
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  // Moving data needs no type: its bytes move as they are.
  const size_t size = infinirtDtypeSize(call.dtype);
  if (size == 0 || call.count > std::numeric_limits<size_t>::max() / size) {
    *why = std::to_string(call.count) + " elements of dtype " +
           std::to_string(static_cast<int>(call.dtype)) + " are more bytes than a size_t holds";
    return INFINI_STATUS_BAD_PARAM;
  }
  *elements = NcclElements{kNcclUint8, call.count * size};
  return INFINI_STATUS_SUCCESS;
}

infiniccl_engine::VendorOps NcclOps(const NcclLibrary& library) {
  infiniccl_engine::VendorOps ops{kNcclSum, kNcclProd, kNcclMax, kNcclMin};
  if (library.HasBfloat16AndAvg()) {
    ops.avg = kNcclAvg;
  } else {
    ops.no_average = "ncclAvg came with NCCL 2.10.3";
  }
  return ops;
}

infiniStatus_t StatusOf(int result) {
  switch (result) {
    case kNcclSuccess:
      return INFINI_STATUS_SUCCESS;
    case kNcclInvalidArgument:
    case kNcclInvalidUsage:
      return INFINI_STATUS_BAD_PARAM;
    default:  // unhandled CUDA error, system, internal, remote error, in progress, unknown
      return INFINI_STATUS_INTERNAL_ERROR;
  }
}

std::string Describe(const NcclLibrary& library, const char* function, int result, void* comm) {
  std::string text = library.Symbol(function) + " failed: ";
  const char* name = library.fn.GetErrorString(result);
  text += name != nullptr ? name : "result " + std::to_string(result);
  text +=
      std::string(" (") + library.data->symbol_prefix + "Result_t " + std::to_string(result) + ")";
  if (library.fn.GetLastError != nullptr) {
    const char* last = library.fn.GetLastError(comm);
    if (last != nullptr && last[0] != '\0') text += ": " + std::string(last);
  }
  return text;
}

}  // namespace infiniccl_nccl
