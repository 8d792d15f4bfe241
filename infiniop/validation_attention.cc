// The attention operators' rules: the paged forms (PagedCaching, PagedAttention,
// PagedAttentionPrefill), FlashAttention, and the contiguous caches' (KVCaching, Attention).
#include "validation_rules.h"

namespace infiniop::rules {

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

// KVCaching: the caches [batch, kv_heads, max_len, head_size] (written) and k, v [batch,
// kv_heads, seq_len, head_size] of one dtype; past_kv_lengths [batch] I64.
infiniStatus_t ValidateKVCaching(const InfiniopTensorDescriptor* const* t, size_t count,
                                 const infiniopBackendCreateParams& /*params*/, std::string* why) {
  if (count != 5) return Fail(INFINI_STATUS_BAD_PARAM, "five tensors expected", why);
  const InfiniopTensorDescriptor &k_cache = *t[0], &v_cache = *t[1], &k = *t[2], &v = *t[3],
                                 &past = *t[4];
  if (!IsAttentionDtype(k_cache.dtype) || v_cache.dtype != k_cache.dtype ||
      k.dtype != k_cache.dtype || v.dtype != k_cache.dtype) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "the caches, k and v: one of F16, BF16, F32", why);
  }
  if (past.dtype != INFINI_DTYPE_I64) {
    return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "past_kv_lengths: I64", why);
  }
  if (k_cache.ndim() != 4 || v_cache.shape != k_cache.shape || k.ndim() != 4 ||
      v.shape != k.shape || k.shape[0] != k_cache.shape[0] || k.shape[1] != k_cache.shape[1] ||
      k.shape[3] != k_cache.shape[3] || past.ndim() != 1 || past.shape[0] != k.shape[0]) {
    return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE,
                "caches [batch, kv_heads, max_len, head_size], k and v [batch, kv_heads, "
                "seq_len, head_size], past_kv_lengths [batch]",
                why);
  }
  if (k_cache.HasBroadcastDimension() || v_cache.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "a cache has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

// Attention: out [seq_len, heads, head_size] contiguous; q [heads, seq_len, head_size]; k, v
// [kv_heads, seq_len, head_size]; the caches [kv_heads, >= pos + seq_len, head_size]; one dtype;
// head_size packed everywhere.
infiniStatus_t ValidateAttention(const InfiniopTensorDescriptor* const* t, size_t count,
                                 const infiniopBackendCreateParams& params, std::string* why) {
  if (count != 6) return Fail(INFINI_STATUS_BAD_PARAM, "six tensors expected", why);
  const InfiniopTensorDescriptor &out = *t[0], &q = *t[1], &k = *t[2], &v = *t[3],
                                 &k_cache = *t[4], &v_cache = *t[5];
  for (size_t i = 0; i < count; ++i) {
    if (t[i]->dtype != q.dtype || !IsAttentionDtype(q.dtype)) {
      return Fail(INFINI_STATUS_BAD_TENSOR_DTYPE, "every tensor: one of F16, BF16, F32", why);
    }
    if (t[i]->ndim() != 3) {
      return Fail(INFINI_STATUS_BAD_TENSOR_SHAPE, "every tensor is 3-dimensional", why);
    }
  }
  if (!IsContiguous(out)) return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "out contiguous", why);
  for (size_t i = 1; i < count; ++i) {
    if (!HeadDimPacked(*t[i])) {
      return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "head_size must be packed", why);
    }
  }
  const size_t heads = q.shape[0], seq = q.shape[1], head_size = q.shape[2];
  const size_t kv_heads = k.shape[0];
  if (out.shape != std::vector<size_t>{seq, heads, head_size} || kv_heads == 0 ||
      heads % kv_heads != 0 || k.shape != std::vector<size_t>{kv_heads, seq, head_size} ||
      v.shape != k.shape || k_cache.shape[0] != kv_heads || k_cache.shape[2] != head_size ||
      v_cache.shape != k_cache.shape || k_cache.shape[1] < params.pos + seq) {
    return Fail(INFINI_STATUS_BAD_PARAM,
                "out [seq_len, heads, head_size], q [heads, seq_len, head_size], k, v [kv_heads, "
                "seq_len, head_size], caches [kv_heads, >= pos + seq_len, head_size]",
                why);
  }
  if (k_cache.HasBroadcastDimension() || v_cache.HasBroadcastDimension()) {
    return Fail(INFINI_STATUS_BAD_TENSOR_STRIDES, "a cache has a broadcast dimension", why);
  }
  return INFINI_STATUS_SUCCESS;
}

}  // namespace infiniop::rules
