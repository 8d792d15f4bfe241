#include "validation.h"

#include <initializer_list>

namespace infiniop {

namespace {

bool OneOf(infiniDtype_t dtype, std::initializer_list<infiniDtype_t> allowed) {
  for (infiniDtype_t candidate : allowed) {
    if (dtype == candidate) return true;
  }
  return false;
}

infiniStatus_t Fail(infiniStatus_t status, const std::string& text, std::string* why) {
  *why = text;
  return status;
}

// Add, Mul, SwiGLU: one shape and one dtype for all (no broadcasting of shapes: an input is
// broadcast along a dimension by a stride of 0), the output not broadcast.
infiniStatus_t ValidateElementwise(const InfiniopTensorDescriptor* const* t, size_t count,
                                   std::initializer_list<infiniDtype_t> dtypes, std::string* why) {
  if (count != 3) return Fail(INFINI_STATUS_BAD_PARAM, "three tensors expected", why);
  const InfiniopTensorDescriptor& c = *t[0];
  for (size_t i = 1; i < count; ++i) {
    if (t[i]->dtype != c.dtype) return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "dtypes differ", why);
    if (t[i]->shape != c.shape) return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "shapes differ", why);
  }
  if (!OneOf(c.dtype, dtypes)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "dtype not supported by the operator", why);
  }
  if (c.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "the output has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// Rearrange: dst and src of one shape and one dtype (any), dst not broadcast.
infiniStatus_t ValidateRearrange(const InfiniopTensorDescriptor* const* t, size_t count,
                                 std::string* why) {
  if (count != 2) return Fail(INFINI_STATUS_BAD_PARAM, "two tensors expected", why);
  if (t[0]->dtype != t[1]->dtype) return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "dtypes differ", why);
  if (t[0]->shape != t[1]->shape) return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "shapes differ", why);
  if (t[0]->HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "dst has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

}  // namespace

infiniStatus_t Validate(infiniopOperator_t op, const InfiniopTensorDescriptor* const* tensors,
                        size_t count, const infiniopBackendCreateParams&, std::string* why) {
  switch (op) {
    case INFINIOP_OPERATOR_Add:
    case INFINIOP_OPERATOR_Mul:
      return ValidateElementwise(tensors, count,
                                 {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32,
                                  INFINI_DTYPE_F64, INFINI_DTYPE_I32, INFINI_DTYPE_I64},
                                 why);
    case INFINIOP_OPERATOR_SwiGLU:
      return ValidateElementwise(
          tensors, count, {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64},
          why);
    case INFINIOP_OPERATOR_Rearrange:
      return ValidateRearrange(tensors, count, why);
    default:
      return Fail(INFINI_STATUS_NOT_IMPLEMENTED, "this operator is not implemented yet", why);
  }
}

}  // namespace infiniop
