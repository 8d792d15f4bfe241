// The rules of the selection and routing operators: TopK along a dimension, and the MoE routers
// Topksoftmax and Topkrouter (whose outputs have no descriptors: their sizes come with the call,
// and the backends check them there, infiniop_backend_support.h's RouterTopkFits).
#include "validation_rules.h"

namespace infiniop::rules {

// TopK: values_output and indices_output of input's shape but k along dim; values of input's
// floating dtype, indices I32 or I64; dim within input's dimensions, k at most their size there;
// any strides, the outputs not broadcast.
infiniStatus_t ValidateTopK(const InfiniopTensorDescriptor* const* t, size_t count,
                            const infiniopBackendCreateParams& params, std::string* why) {
  if (count != 3) return Fail(INFINI_STATUS_BAD_PARAM, "three tensors expected", why);
  const InfiniopTensorDescriptor &values = *t[0], &indices = *t[1], &input = *t[2];
  if (!IsFloating(input.dtype) || values.dtype != input.dtype) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "input, values_output: one of F16, BF16, F32, F64",
                why);
  }
  if (!IsIndex(indices.dtype)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "indices_output: I32 or I64", why);
  }
  if (params.dim < 0 || static_cast<size_t>(params.dim) >= input.ndim()) {
    return Fail(INFINI_STATUS_BAD_PARAM, "dim is not one of input's dimensions", why);
  }
  const size_t dim = static_cast<size_t>(params.dim);
  if (params.k > input.shape[dim]) {
    return Fail(INFINI_STATUS_BAD_PARAM, "k exceeds input's size along dim", why);
  }
  std::vector<size_t> selected = input.shape;
  selected[dim] = params.k;
  if (values.shape != selected || indices.shape != selected) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE,
                "values_output, indices_output: input's shape with k along dim", why);
  }
  if (values.HasBroadcastDimension() || indices.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "an output has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// The routers' scores x [tokens, experts]: F16, BF16 or F32, each row packed.
infiniStatus_t ValidateRouterScores(const InfiniopTensorDescriptor& x, std::string* why) {
  if (!OneOf(x.dtype, {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32})) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "x: F16, BF16 or F32", why);
  }
  if (x.ndim() != 2) return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "x: [tokens, experts]", why);
  if (x.shape[1] > 1 && x.strides[1] != 1) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "x: each row packed", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// Topksoftmax: values and indices without descriptors, then x.
infiniStatus_t ValidateTopksoftmax(const InfiniopTensorDescriptor* const* t, size_t count,
                                   const infiniopBackendCreateParams& /*params*/,
                                   std::string* why) {
  if (count != 3) return Fail(INFINI_STATUS_BAD_PARAM, "three tensors expected", why);
  return ValidateRouterScores(*t[2], why);
}

// Topkrouter: values and indices without descriptors, then x [tokens, experts] with experts a
// multiple of the 8 groups of at least two, and correction_bias F32 [experts].
infiniStatus_t ValidateTopkrouter(const InfiniopTensorDescriptor* const* t, size_t count,
                                  const infiniopBackendCreateParams& /*params*/, std::string* why) {
  if (count != 4) return Fail(INFINI_STATUS_BAD_PARAM, "four tensors expected", why);
  const InfiniopTensorDescriptor &x = *t[2], &bias = *t[3];
  const infiniStatus_t scores = ValidateRouterScores(x, why);
  if (scores != INFINI_STATUS_SUCCESS) return scores;
  if (bias.dtype != INFINI_DTYPE_F32) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "correction_bias: F32", why);
  }
  if (bias.ndim() != 1 || bias.shape[0] != x.shape[1]) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "correction_bias: [experts]", why);
  }
  const size_t experts = x.shape[1];
  if (experts % 8 != 0 || experts < 16) {
    return Fail(INFINI_STATUS_BAD_PARAM, "experts: a multiple of 8 groups of at least 2", why);
  }
  return INFINI_STATUS_SUCCESS;
}

}  // namespace infiniop::rules
