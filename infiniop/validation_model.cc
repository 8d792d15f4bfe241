// The rules of the operators models call beyond the first ones: the norms (LayerNorm,
// AddRMSNorm), Softmax and LogSoftmax along an axis, Embedding, SiluAndMul, and the quantized
// weights' DequantizeAWQ and I8Gemm.
#include "validation_rules.h"

namespace infiniop::rules {

// LayerNorm: output, input_standardization, input [..., dim] of one shape; input_std_deviation
// [...]; weight and bias (absent: none) [dim]; one floating dtype for all; any strides, the
// outputs not broadcast.
infiniStatus_t ValidateLayerNorm(const InfiniopTensorDescriptor* const* t, size_t count,
                                 const infiniopBackendCreateParams& /*params*/, std::string* why) {
  if (count != 6) return Fail(INFINI_STATUS_BAD_PARAM, "six tensors expected", why);
  const InfiniopTensorDescriptor &output = *t[0], &standardization = *t[1], &deviation = *t[2],
                                 &input = *t[3], &weight = *t[4];
  const InfiniopTensorDescriptor* bias = t[5];
  if (!IsFloating(input.dtype)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "input: one of F16, BF16, F32, F64", why);
  }
  for (size_t i = 0; i < count; ++i) {
    if (t[i] != nullptr && t[i]->dtype != input.dtype) {
      return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "every tensor has input's dtype", why);
    }
  }
  const bool vector_ok =
      weight.ndim() == 1 && (bias == nullptr || (bias->ndim() == 1 && bias->shape == weight.shape));
  if (input.ndim() == 0 || output.shape != input.shape || standardization.shape != input.shape ||
      deviation.shape != LeadingShape(input) || !vector_ok ||
      weight.shape[0] != input.shape.back()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE,
                "output, input_standardization, input [..., dim]; input_std_deviation [...]; "
                "weight, bias [dim]",
                why);
  }
  if (output.HasBroadcastDimension() || standardization.HasBroadcastDimension() ||
      deviation.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "an output has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// AddRMSNorm: y, residual_out, a, b [..., dim] of one shape and dtype, weight [dim] (its dtype as
// RMSNorm's w); the last dimension of each packed, the outputs not broadcast.
infiniStatus_t ValidateAddRMSNorm(const InfiniopTensorDescriptor* const* t, size_t count,
                                  const infiniopBackendCreateParams& /*params*/, std::string* why) {
  if (count != 5) return Fail(INFINI_STATUS_BAD_PARAM, "five tensors expected", why);
  const InfiniopTensorDescriptor &y = *t[0], &residual = *t[1], &a = *t[2], &b = *t[3], &w = *t[4];
  if (!IsFloating(a.dtype) || y.dtype != a.dtype || residual.dtype != a.dtype ||
      b.dtype != a.dtype) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "y, residual_out, a, b: one of F16, BF16, F32, F64",
                why);
  }
  const bool half = a.dtype == INFINI_DTYPE_F16 || a.dtype == INFINI_DTYPE_BF16;
  const bool weight_ok =
      half ? OneOf(w.dtype, {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32})
           : w.dtype == a.dtype;
  if (!weight_ok) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "weight's dtype does not fit a's", why);
  }
  if (a.ndim() == 0 || y.shape != a.shape || residual.shape != a.shape || b.shape != a.shape ||
      w.ndim() != 1 || w.shape[0] != a.shape.back()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "y, residual_out, a, b [..., dim]; weight [dim]",
                why);
  }
  for (const InfiniopTensorDescriptor* tensor : {&y, &residual, &a, &b, &w}) {
    if (LastStride(*tensor) != 1 && tensor->shape.back() != 1) {
      return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "the last dimension must be packed", why);
    }
  }
  if (y.HasBroadcastDimension() || residual.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "an output has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// Softmax and LogSoftmax: y and x of one shape and one floating dtype, the axis within the
// dimensions (negative: from the end); any strides, y not broadcast.
infiniStatus_t ValidateSoftmaxAlong(const InfiniopTensorDescriptor* const* t, size_t count,
                                    int axis, std::string* why) {
  if (count != 2) return Fail(INFINI_STATUS_BAD_PARAM, "two tensors expected", why);
  const InfiniopTensorDescriptor &y = *t[0], &x = *t[1];
  if (x.dtype != y.dtype || !IsFloating(x.dtype)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "one of F16, BF16, F32, F64 for both", why);
  }
  if (x.shape != y.shape) return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "shapes differ", why);
  const int ndim = static_cast<int>(x.ndim());
  if (axis < -ndim || axis >= ndim) {
    return Fail(INFINI_STATUS_BAD_PARAM, "the axis is not one of the tensors' dimensions", why);
  }
  if (y.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "the output has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t ValidateSoftmax(const InfiniopTensorDescriptor* const* t, size_t count,
                               const infiniopBackendCreateParams& params, std::string* why) {
  return ValidateSoftmaxAlong(t, count, params.axis, why);
}

infiniStatus_t ValidateLogSoftmax(const InfiniopTensorDescriptor* const* t, size_t count,
                                  const infiniopBackendCreateParams& params, std::string* why) {
  return ValidateSoftmaxAlong(t, count, params.dim, why);
}

// Embedding: weight [vocab, dim] of a floating dtype, output input's shape + [dim] of weight's
// dtype, input of I32 or I64 indices; any strides, output not broadcast.
infiniStatus_t ValidateEmbedding(const InfiniopTensorDescriptor* const* t, size_t count,
                                 const infiniopBackendCreateParams& /*params*/, std::string* why) {
  if (count != 3) return Fail(INFINI_STATUS_BAD_PARAM, "three tensors expected", why);
  const InfiniopTensorDescriptor &output = *t[0], &input = *t[1], &weight = *t[2];
  if (!OneOf(input.dtype, {INFINI_DTYPE_I32, INFINI_DTYPE_I64})) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "input: I32 or I64 indices", why);
  }
  if (!IsFloating(weight.dtype) || output.dtype != weight.dtype) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "weight and output: one floating dtype", why);
  }
  std::vector<size_t> expected = input.shape;
  if (weight.ndim() == 2) expected.push_back(weight.shape[1]);
  if (weight.ndim() != 2 || output.shape != expected) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "weight [vocab, dim], output input's shape + [dim]",
                why);
  }
  if (output.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "the output has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// SiluAndMul: y [..., d] and x [..., 2d] of one floating dtype, the leading dimensions alike.
infiniStatus_t ValidateSiluAndMul(const InfiniopTensorDescriptor* const* t, size_t count,
                                  const infiniopBackendCreateParams& /*params*/, std::string* why) {
  if (count != 2) return Fail(INFINI_STATUS_BAD_PARAM, "two tensors expected", why);
  const InfiniopTensorDescriptor &y = *t[0], &x = *t[1];
  if (x.dtype != y.dtype || !IsFloating(x.dtype)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "one of F16, BF16, F32, F64 for both", why);
  }
  if (x.ndim() != y.ndim() || x.ndim() == 0) {
    return Fail(INFINI_STATUS_BAD_PARAM, "y and x have one number of dimensions", why);
  }
  if (LeadingShape(x) != LeadingShape(y) || x.shape.back() != 2 * y.shape.back()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "y [..., d] and x [..., 2d]", why);
  }
  if (y.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "y has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// DequantizeAWQ: out [K, N] and scales [groups, N] of F16, BF16 or F32 (InfiniCore: F16), K a
// multiple of groups; qweight [K, N / 8] and zeros [groups, N / 8] of I32.
infiniStatus_t ValidateDequantizeAWQ(const InfiniopTensorDescriptor* const* t, size_t count,
                                     const infiniopBackendCreateParams& /*params*/,
                                     std::string* why) {
  if (count != 4) return Fail(INFINI_STATUS_BAD_PARAM, "four tensors expected", why);
  const InfiniopTensorDescriptor &out = *t[0], &qweight = *t[1], &scales = *t[2], &zeros = *t[3];
  if (!IsAttentionDtype(out.dtype) || scales.dtype != out.dtype) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "out and scales: one of F16, BF16, F32", why);
  }
  if (qweight.dtype != INFINI_DTYPE_I32 || zeros.dtype != INFINI_DTYPE_I32) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "qweight and zeros: I32", why);
  }
  if (out.ndim() != 2 || qweight.ndim() != 2 || scales.ndim() != 2 || zeros.ndim() != 2 ||
      out.shape[0] != qweight.shape[0] || out.shape[1] != 8 * qweight.shape[1] ||
      scales.shape[1] != out.shape[1] || scales.shape[0] == 0 ||
      out.shape[0] % scales.shape[0] != 0 || zeros.shape[0] != scales.shape[0] ||
      zeros.shape[1] != qweight.shape[1]) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE,
                "out [K, N], qweight [K, N / 8], scales [groups, N], zeros [groups, N / 8], K a "
                "multiple of groups",
                why);
  }
  if (out.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "out has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// I8Gemm: out [M, N] of F16 or BF16 (or F32); x [M, K] and weights [K, N] of I8, each with a unit
// stride in one of its dimensions; x_scale [M] (or [M, 1]) and weights_scale [N] (or [1, N]) F32;
// bias (absent: none) [N] of out's dtype.
infiniStatus_t ValidateI8Gemm(const InfiniopTensorDescriptor* const* t, size_t count,
                              const infiniopBackendCreateParams& /*params*/, std::string* why) {
  if (count != 6) return Fail(INFINI_STATUS_BAD_PARAM, "six tensors expected", why);
  const InfiniopTensorDescriptor &out = *t[0], &x = *t[2], &x_scale = *t[3], &w = *t[4],
                                 &w_scale = *t[5];
  const InfiniopTensorDescriptor* bias = t[1];
  if (!IsAttentionDtype(out.dtype) || (bias != nullptr && bias->dtype != out.dtype)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "out and bias: F16, BF16 or F32", why);
  }
  if (x.dtype != INFINI_DTYPE_I8 || w.dtype != INFINI_DTYPE_I8 ||
      x_scale.dtype != INFINI_DTYPE_F32 || w_scale.dtype != INFINI_DTYPE_F32) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "x and weights I8, their scales F32", why);
  }
  if (out.ndim() != 2 || x.ndim() != 2 || w.ndim() != 2) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "out, x and weights are matrices", why);
  }
  const size_t m = out.shape[0], n = out.shape[1];
  auto is_vector = [](const InfiniopTensorDescriptor& v, size_t length, bool column) {
    return v.Elements() == length &&
           (v.ndim() == 1 || (v.ndim() == 2 && v.shape[column ? 1 : 0] == 1));
  };
  if (x.shape[0] != m || w.shape[1] != n || x.shape[1] != w.shape[0] ||
      !is_vector(x_scale, m, true) || !is_vector(w_scale, n, false) ||
      (bias != nullptr && (bias->ndim() != 1 || bias->shape[0] != n))) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE,
                "out [M, N], x [M, K], weights [K, N], x_scale [M], weights_scale [N], bias [N]",
                why);
  }
  for (const InfiniopTensorDescriptor* matrix : {&out, &x, &w}) {
    const bool unit = matrix->strides[0] == 1 || matrix->strides[1] == 1 ||
                      matrix->shape[0] == 1 || matrix->shape[1] == 1;
    if (!unit) {
      return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "a matrix needs a unit stride", why);
    }
  }
  if (out.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "out has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

}  // namespace infiniop::rules
