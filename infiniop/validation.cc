// The rules of the first operators (elementwise, RMSNorm, CausalSoftmax, RoPE, RandomSample,
// Gemm), and Validate's dispatch to each operator's rule by the list. The others:
// validation_model.cc, validation_attention.cc.
#include "validation.h"

#include <initializer_list>
#include <vector>

#include "validation_rules.h"

namespace infiniop {

namespace rules {

// The elementwise operators (the output, then one or two inputs): one shape and one dtype for all
// (no broadcasting of shapes: an input is broadcast along a dimension by a stride of 0), the
// output not broadcast.
infiniStatus_t ValidateElementwise(const InfiniopTensorDescriptor* const* t, size_t count,
                                   std::initializer_list<infiniDtype_t> dtypes, std::string* why) {
  if (count != 2 && count != 3)
    return Fail(INFINI_STATUS_BAD_PARAM, "2 or 3 tensors expected", why);
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

infiniStatus_t ValidateAdd(const InfiniopTensorDescriptor* const* t, size_t count,
                           const infiniopBackendCreateParams& /*params*/, std::string* why) {
  return ValidateElementwise(t, count,
                             {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32,
                              INFINI_DTYPE_F64, INFINI_DTYPE_I32, INFINI_DTYPE_I64},
                             why);
}

infiniStatus_t ValidateMul(const InfiniopTensorDescriptor* const* t, size_t count,
                           const infiniopBackendCreateParams& params, std::string* why) {
  return ValidateAdd(t, count, params, why);
}

infiniStatus_t ValidateSub(const InfiniopTensorDescriptor* const* t, size_t count,
                           const infiniopBackendCreateParams& params, std::string* why) {
  return ValidateAdd(t, count, params, why);
}

// The activations: y = f(x) of one shape and one floating dtype.
infiniStatus_t ValidateActivation(const InfiniopTensorDescriptor* const* t, size_t count,
                                  const infiniopBackendCreateParams& /*params*/, std::string* why) {
  if (count != 2) return Fail(INFINI_STATUS_BAD_PARAM, "two tensors expected", why);
  return ValidateElementwise(
      t, count, {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64}, why);
}

infiniStatus_t ValidateRelu(const InfiniopTensorDescriptor* const* t, size_t count,
                            const infiniopBackendCreateParams& params, std::string* why) {
  return ValidateActivation(t, count, params, why);
}

infiniStatus_t ValidateSigmoid(const InfiniopTensorDescriptor* const* t, size_t count,
                               const infiniopBackendCreateParams& params, std::string* why) {
  return ValidateActivation(t, count, params, why);
}

infiniStatus_t ValidateSilu(const InfiniopTensorDescriptor* const* t, size_t count,
                            const infiniopBackendCreateParams& params, std::string* why) {
  return ValidateActivation(t, count, params, why);
}

infiniStatus_t ValidateGelu(const InfiniopTensorDescriptor* const* t, size_t count,
                            const infiniopBackendCreateParams& params, std::string* why) {
  return ValidateActivation(t, count, params, why);
}

infiniStatus_t ValidateMulScalar(const InfiniopTensorDescriptor* const* t, size_t count,
                                 const infiniopBackendCreateParams& params, std::string* why) {
  return ValidateActivation(t, count, params, why);
}

infiniStatus_t ValidateGeluTanh(const InfiniopTensorDescriptor* const* t, size_t count,
                                const infiniopBackendCreateParams& params, std::string* why) {
  return ValidateActivation(t, count, params, why);
}

infiniStatus_t ValidateSwiGLU(const InfiniopTensorDescriptor* const* t, size_t count,
                              const infiniopBackendCreateParams& /*params*/, std::string* why) {
  return ValidateElementwise(
      t, count, {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64}, why);
}

// Rearrange: dst and src of one shape and one dtype (any), dst not broadcast.
infiniStatus_t ValidateRearrange(const InfiniopTensorDescriptor* const* t, size_t count,
                                 const infiniopBackendCreateParams& /*params*/, std::string* why) {
  if (count != 2) return Fail(INFINI_STATUS_BAD_PARAM, "two tensors expected", why);
  if (t[0]->dtype != t[1]->dtype) return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "dtypes differ", why);
  if (t[0]->shape != t[1]->shape) return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "shapes differ", why);
  if (t[0]->HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "dst has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// RMSNorm: y, x [batch, dim] or [batch, nhead, dim]; w [dim]; the last dimension of each packed.
// x and y share a dtype; w is that dtype, or (for F16 and BF16 activations) F16, BF16 or F32.
infiniStatus_t ValidateRMSNorm(const InfiniopTensorDescriptor* const* t, size_t count,
                               const infiniopBackendCreateParams& /*params*/, std::string* why) {
  if (count != 3) return Fail(INFINI_STATUS_BAD_PARAM, "three tensors expected", why);
  const InfiniopTensorDescriptor &y = *t[0], &x = *t[1], &w = *t[2];
  if (x.dtype != y.dtype || !IsFloating(x.dtype)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "x and y: one of F16, BF16, F32, F64", why);
  }
  const bool half = x.dtype == INFINI_DTYPE_F16 || x.dtype == INFINI_DTYPE_BF16;
  const bool weight_ok =
      half ? OneOf(w.dtype, {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32})
           : w.dtype == x.dtype;
  if (!weight_ok) return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "w's dtype does not fit x's", why);
  if ((x.ndim() != 2 && x.ndim() != 3) || x.shape != y.shape || w.ndim() != 1 ||
      w.shape[0] != x.shape.back()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "y, x [batch, (nhead,) dim] and w [dim]", why);
  }
  if (LastStride(x) != 1 || LastStride(y) != 1 || LastStride(w) != 1 || y.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "the last dimension must be packed", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// CausalSoftmax: y, x [(batch,) seq_len, total_seq_len] with total_seq_len >= seq_len; any strides.
infiniStatus_t ValidateCausalSoftmax(const InfiniopTensorDescriptor* const* t, size_t count,
                                     const infiniopBackendCreateParams& /*params*/,
                                     std::string* why) {
  if (count != 2) return Fail(INFINI_STATUS_BAD_PARAM, "two tensors expected", why);
  const InfiniopTensorDescriptor &y = *t[0], &x = *t[1];
  if (x.dtype != y.dtype || !IsFloating(x.dtype)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "x and y: one of F16, BF16, F32, F64", why);
  }
  if ((x.ndim() != 2 && x.ndim() != 3) || x.shape != y.shape ||
      x.shape[x.ndim() - 1] < x.shape[x.ndim() - 2]) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "[(batch,) seq_len, total_seq_len >= seq_len]",
                why);
  }
  if (y.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "y has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// RoPE: y, x [(batch,) seqlen, nhead, dhead] with the last dimension packed; pos_ids of an integer
// dtype, [seqlen] or [batch, seqlen]; sin and cos tables contiguous [table_len, dhead / 2] of x's
// dtype.
infiniStatus_t ValidateRoPE(const InfiniopTensorDescriptor* const* t, size_t count,
                            const infiniopBackendCreateParams& params, std::string* why) {
  if (count != 5) return Fail(INFINI_STATUS_BAD_PARAM, "five tensors expected", why);
  const InfiniopTensorDescriptor &y = *t[0], &x = *t[1], &pos = *t[2], &sin = *t[3], &cos = *t[4];
  if (params.algo != INFINIOP_ROPE_ALGO_GPT_J && params.algo != INFINIOP_ROPE_ALGO_GPT_NEOX) {
    return Fail(INFINI_STATUS_BAD_PARAM, "unknown RoPE algorithm", why);
  }
  if (!IsFloating(x.dtype) || y.dtype != x.dtype || sin.dtype != x.dtype || cos.dtype != x.dtype) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "y, x, sin and cos: one float dtype", why);
  }
  if (!IsInteger(pos.dtype)) return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "pos_ids: integers", why);
  const size_t ndim = x.ndim();
  const bool batched = ndim == 4;
  const bool shapes_ok =
      (ndim == 3 || ndim == 4) && y.shape == x.shape && x.shape[ndim - 1] % 2 == 0 &&
      sin.ndim() == 2 && sin.shape == cos.shape && 2 * sin.shape[1] == x.shape[ndim - 1] &&
      ((pos.ndim() == 1 && pos.shape[0] == x.shape[ndim - 3]) ||
       (batched && pos.ndim() == 2 && pos.shape[0] == x.shape[0] && pos.shape[1] == x.shape[1]));
  if (!shapes_ok) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE,
                "x, y [(batch,) seqlen, nhead, dhead], pos_ids [(batch,) seqlen], tables "
                "[table_len, dhead / 2]",
                why);
  }
  if (LastStride(x) != 1 || LastStride(y) != 1 || !IsContiguous(sin) || !IsContiguous(cos) ||
      y.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "x, y packed last dimension; tables contiguous",
                why);
  }
  return INFINI_STATUS_SUCCESS;
}

// RandomSample: result a 0-dimensional integer; probs [voc] packed, of a float dtype.
infiniStatus_t ValidateRandomSample(const InfiniopTensorDescriptor* const* t, size_t count,
                                    const infiniopBackendCreateParams& /*params*/,
                                    std::string* why) {
  if (count != 2) return Fail(INFINI_STATUS_BAD_PARAM, "two tensors expected", why);
  const InfiniopTensorDescriptor &result = *t[0], &probs = *t[1];
  if (!OneOf(result.dtype,
             {INFINI_DTYPE_I32, INFINI_DTYPE_I64, INFINI_DTYPE_U32, INFINI_DTYPE_U64}) ||
      !IsFloating(probs.dtype)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "result I32/I64/U32/U64, probs a float dtype", why);
  }
  if (result.ndim() != 0 || probs.ndim() != 1 || probs.shape[0] == 0) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "result a scalar, probs [voc > 0]", why);
  }
  if (probs.strides[0] != 1) return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "probs packed", why);
  return INFINI_STATUS_SUCCESS;
}

// Gemm: c [(batch,) m, n], a [(batch,) m, k], b [(batch,) k, n], one float dtype; a and b may
// have a batch of 1 (or be 2-D) for every batch of c; in each matrix one of the last two
// dimensions is packed.
infiniStatus_t ValidateGemm(const InfiniopTensorDescriptor* const* t, size_t count,
                            const infiniopBackendCreateParams& /*params*/, std::string* why) {
  if (count != 3) return Fail(INFINI_STATUS_BAD_PARAM, "three tensors expected", why);
  const InfiniopTensorDescriptor &c = *t[0], &a = *t[1], &b = *t[2];
  if (!IsFloating(c.dtype) || a.dtype != c.dtype || b.dtype != c.dtype) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "c, a and b: one of F16, BF16, F32, F64", why);
  }
  for (const InfiniopTensorDescriptor* m : {&c, &a, &b}) {
    if (m->ndim() != 2 && m->ndim() != 3) {
      return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "matrices are 2-D or 3-D", why);
    }
  }
  auto rows = [](const InfiniopTensorDescriptor& m) { return m.shape[m.ndim() - 2]; };
  auto cols = [](const InfiniopTensorDescriptor& m) { return m.shape[m.ndim() - 1]; };
  auto batch = [](const InfiniopTensorDescriptor& m) { return m.ndim() == 3 ? m.shape[0] : 1; };
  if (rows(c) != rows(a) || cols(c) != cols(b) || cols(a) != rows(b)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "c [m, n], a [m, k], b [k, n]", why);
  }
  for (const InfiniopTensorDescriptor* m : {&a, &b}) {
    if (batch(*m) != batch(c) && batch(*m) != 1) {
      return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "a batch of a or b is c's or 1", why);
    }
  }
  for (const InfiniopTensorDescriptor* m : {&c, &a, &b}) {
    const size_t last = m->ndim() - 1;
    const bool rows_packed = m->strides[last - 1] == 1 || m->shape[last - 1] == 1;
    const bool cols_packed = m->strides[last] == 1 || m->shape[last] == 1;
    if (!rows_packed && !cols_packed) {
      return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "one of a matrix's last strides must be 1",
                  why);
    }
  }
  if (c.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "c has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

}  // namespace rules

// Each operator's rules are its Validate<Name>, by the list.
infiniStatus_t Validate(infiniopOperator_t op, const InfiniopTensorDescriptor* const* tensors,
                        size_t count, const infiniopBackendCreateParams& params, std::string* why) {
  switch (op) {
#define INFINIOP_VALIDATE_(name, ...) \
  case INFINIOP_OPERATOR_##name:      \
    return rules::Validate##name(tensors, count, params, why);
    INFINIOP_OPERATORS(INFINIOP_VALIDATE_)
#undef INFINIOP_VALIDATE_
    default:
      return rules::Fail(INFINI_STATUS_NOT_IMPLEMENTED, "this operator is not implemented yet",
                         why);
  }
}

}  // namespace infiniop
