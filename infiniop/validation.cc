#include "validation.h"

#include <initializer_list>
#include <vector>

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

bool IsFloating(infiniDtype_t dtype) {
  return OneOf(dtype, {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64});
}

bool IsInteger(infiniDtype_t dtype) {
  return OneOf(dtype, {INFINI_DTYPE_I8, INFINI_DTYPE_I16, INFINI_DTYPE_I32, INFINI_DTYPE_I64,
                       INFINI_DTYPE_U8, INFINI_DTYPE_U16, INFINI_DTYPE_U32, INFINI_DTYPE_U64});
}

ptrdiff_t LastStride(const InfiniopTensorDescriptor& t) { return t.strides.back(); }

bool IsContiguous(const InfiniopTensorDescriptor& t) {
  ptrdiff_t expected = 1;
  for (size_t i = t.ndim(); i-- > 0;) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= static_cast<ptrdiff_t>(t.shape[i]);
  }
  return true;
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
    const infiniopBackendCreateParams& /*params*/, std::string* why) {
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
  if (params.algo != INFINIOP_ROPE_ALGO_GPT_J &&
      params.algo != INFINIOP_ROPE_ALGO_GPT_NEOX) {
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
    const infiniopBackendCreateParams& /*params*/, std::string* why) {
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

// The shape without its last dimension.
std::vector<size_t> LeadingShape(const InfiniopTensorDescriptor& t) {
  return std::vector<size_t>(t.shape.begin(), t.shape.end() - (t.shape.empty() ? 0 : 1));
}

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

// --- Attention ---------------------------------------------------------------------------------

bool IsIndex(infiniDtype_t dtype) { return OneOf(dtype, {INFINI_DTYPE_I32, INFINI_DTYPE_I64}); }

bool IsAttentionDtype(infiniDtype_t dtype) {
  return OneOf(dtype, {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32});
}

bool HeadDimPacked(const InfiniopTensorDescriptor& t) {
  return t.ndim() > 0 && (LastStride(t) == 1 || t.shape.back() == 1);
}

// Paged caches: k_cache and v_cache [blocks, kv_heads, block_size, head_size] of one shape and
// dtype, head_size packed.
infiniStatus_t ValidatePagedCaches(const InfiniopTensorDescriptor& k_cache,
                                   const InfiniopTensorDescriptor& v_cache, std::string* why) {
  if (!IsAttentionDtype(k_cache.dtype) || v_cache.dtype != k_cache.dtype) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "the caches: one of F16, BF16, F32", why);
  }
  if (k_cache.ndim() != 4 || v_cache.shape != k_cache.shape) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE,
                "the caches: [blocks, kv_heads, block_size, head_size], one shape", why);
  }
  if (!HeadDimPacked(k_cache) || !HeadDimPacked(v_cache)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "the caches' head_size must be packed", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// PagedCaching: k_cache, v_cache (outputs), k, v [tokens, kv_heads, head_size], slot_mapping
// [tokens] of I32 or I64.
infiniStatus_t ValidatePagedCaching(const InfiniopTensorDescriptor* const* t, size_t count,
                                    const infiniopBackendCreateParams& /*params*/,
                                    std::string* why) {
  if (count != 5) return Fail(INFINI_STATUS_BAD_PARAM, "five tensors expected", why);
  const InfiniopTensorDescriptor &k_cache = *t[0], &v_cache = *t[1], &k = *t[2], &v = *t[3],
                                 &slots = *t[4];
  if (const infiniStatus_t caches = ValidatePagedCaches(k_cache, v_cache, why)) return caches;
  if (k.dtype != k_cache.dtype || v.dtype != k_cache.dtype) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "k and v have the caches' dtype", why);
  }
  if (!IsIndex(slots.dtype)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "slot_mapping: I32 or I64", why);
  }
  if (k.ndim() != 3 || v.shape != k.shape || slots.ndim() != 1 || slots.shape[0] != k.shape[0] ||
      k.shape[1] != k_cache.shape[1] || k.shape[2] != k_cache.shape[3]) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE,
                "k, v [tokens, kv_heads, head_size] as the caches'; slot_mapping [tokens]", why);
  }
  if (!HeadDimPacked(k) || !HeadDimPacked(v) || k_cache.HasBroadcastDimension() ||
      v_cache.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES,
                "head_size packed in k and v; the caches not broadcast", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// The queries of the paged attention forms: out and q [rows, heads, head_size] of the caches'
// dtype and head_size, heads a multiple of kv_heads; block_tables [seqs, max_blocks] and seq_lens
// [seqs] of I32 or I64; alibi_slopes (absent: none) F32 [heads].
infiniStatus_t ValidatePagedQueries(const InfiniopTensorDescriptor* const* t, size_t seqs_index,
                                    std::string* why) {
  const InfiniopTensorDescriptor &out = *t[0], &q = *t[1], &k_cache = *t[2], &v_cache = *t[3],
                                 &tables = *t[4], &seq_lens = *t[seqs_index];
  if (const infiniStatus_t caches = ValidatePagedCaches(k_cache, v_cache, why)) return caches;
  if (q.dtype != k_cache.dtype || out.dtype != k_cache.dtype) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "out and q have the caches' dtype", why);
  }
  if (!IsIndex(tables.dtype) || !IsIndex(seq_lens.dtype)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "block_tables and seq_lens: I32 or I64", why);
  }
  if (q.ndim() != 3 || out.shape != q.shape || q.shape[2] != k_cache.shape[3] ||
      k_cache.shape[1] == 0 || q.shape[1] % k_cache.shape[1] != 0 || tables.ndim() != 2 ||
      seq_lens.ndim() != 1 || seq_lens.shape[0] != tables.shape[0]) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE,
                "out, q [rows, heads, head_size], heads a multiple of kv_heads; block_tables "
                "[seqs, max_blocks], seq_lens [seqs]",
                why);
  }
  if (!HeadDimPacked(q) || !HeadDimPacked(out) || out.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "head_size packed in q and out", why);
  }
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t ValidateAlibi(const InfiniopTensorDescriptor* alibi, size_t heads,
                             std::string* why) {
  if (alibi == nullptr) return INFINI_STATUS_SUCCESS;
  if (alibi->dtype != INFINI_DTYPE_F32) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "alibi_slopes: F32", why);
  }
  if (alibi->ndim() != 1 || alibi->shape[0] != heads) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "alibi_slopes [heads]", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// PagedAttention: one query per sequence (q's rows are the sequences).
infiniStatus_t ValidatePagedAttention(const InfiniopTensorDescriptor* const* t, size_t count,
                                      const infiniopBackendCreateParams& /*params*/,
                                      std::string* why) {
  if (count != 7) return Fail(INFINI_STATUS_BAD_PARAM, "seven tensors expected", why);
  if (const infiniStatus_t queries = ValidatePagedQueries(t, 5, why)) return queries;
  if (t[1]->shape[0] != t[5]->shape[0]) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "q has one row per sequence", why);
  }
  return ValidateAlibi(t[6], t[1]->shape[1], why);
}

// PagedAttentionPrefill: q's rows are the sequences' new tokens, cum_seq_lens_q [seqs + 1].
infiniStatus_t ValidatePagedAttentionPrefill(const InfiniopTensorDescriptor* const* t, size_t count,
                                             const infiniopBackendCreateParams& /*params*/,
                                             std::string* why) {
  if (count != 8) return Fail(INFINI_STATUS_BAD_PARAM, "eight tensors expected", why);
  if (const infiniStatus_t queries = ValidatePagedQueries(t, 5, why)) return queries;
  const InfiniopTensorDescriptor& cum = *t[6];
  if (!IsIndex(cum.dtype)) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "cum_seq_lens_q: I32 or I64", why);
  }
  if (cum.ndim() != 1 || cum.shape[0] != t[5]->shape[0] + 1) {
    return Fail(INFINI_STATUS_BAD_PARAM, "cum_seq_lens_q [seqs + 1]", why);
  }
  return ValidateAlibi(t[7], t[1]->shape[1], why);
}

// FlashAttention: out, q [batch, heads, q_len, head_size]; k, v [batch, kv_heads, kv_len,
// head_size], heads a multiple of kv_heads; total_kv_len [batch] I64.
infiniStatus_t ValidateFlashAttention(const InfiniopTensorDescriptor* const* t, size_t count,
                                      const infiniopBackendCreateParams& /*params*/,
                                      std::string* why) {
  if (count != 5) return Fail(INFINI_STATUS_BAD_PARAM, "five tensors expected", why);
  const InfiniopTensorDescriptor &out = *t[0], &q = *t[1], &k = *t[2], &v = *t[3], &lengths = *t[4];
  if (!IsAttentionDtype(q.dtype) || out.dtype != q.dtype || k.dtype != q.dtype ||
      v.dtype != q.dtype) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "out, q, k, v: one of F16, BF16, F32", why);
  }
  if (lengths.dtype != INFINI_DTYPE_I64) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "total_kv_len: I64", why);
  }
  if (q.ndim() != 4 || out.shape != q.shape || k.ndim() != 4 || v.shape != k.shape ||
      k.shape[0] != q.shape[0] || k.shape[3] != q.shape[3] || k.shape[1] == 0 ||
      q.shape[1] % k.shape[1] != 0 || lengths.ndim() != 1 || lengths.shape[0] != q.shape[0]) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE,
                "out, q [batch, heads, q_len, head_size]; k, v [batch, kv_heads, kv_len, "
                "head_size], heads a multiple of kv_heads; total_kv_len [batch]",
                why);
  }
  for (const InfiniopTensorDescriptor* tensor : {&out, &q, &k, &v}) {
    if (!HeadDimPacked(*tensor)) {
      return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "head_size must be packed", why);
    }
  }
  if (out.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "out has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

}  // namespace

// Each operator's rules are its Validate<Name>, by the list.
infiniStatus_t Validate(infiniopOperator_t op, const InfiniopTensorDescriptor* const* tensors,
                        size_t count, const infiniopBackendCreateParams& params, std::string* why) {
  switch (op) {
#define INFINIOP_VALIDATE_(name, ...) \
  case INFINIOP_OPERATOR_##name:      \
    return Validate##name(tensors, count, params, why);
    INFINIOP_OPERATORS(INFINIOP_VALIDATE_)
#undef INFINIOP_VALIDATE_
    default:
      return Fail(INFINI_STATUS_NOT_IMPLEMENTED, "this operator is not implemented yet", why);
  }
}

}  // namespace infiniop
