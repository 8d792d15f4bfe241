// The plans of the caches and attention operators (KVCaching, PagedCaching, PagedAttention,
// PagedAttentionPrefill, FlashAttention, Attention): their kernels in
// kernels/attention_kernels.h. The tensors are read as the CPU backend reads them
// (plugins/cpu/infiniop/cpu_attention.cc): the same shapes refused with BAD_PARAM, F16, BF16 and
// F32 computed (F64 NOT_IMPLEMENTED, as there), any strides the validation lets through. A head
// of more than kMaxAttentionHeadSize elements is NOT_IMPLEMENTED (the CPU has no such bound).
#include <stdint.h>

#include <algorithm>
#include <cmath>
#include <initializer_list>

#include "family_kernel_abi.h"
#include "family_plan_helpers.h"
#include "infiniop_backend_support.h"
#include "kernels/index_math.h"

namespace infinirt::infiniop_cuda_family::plans {

namespace {

using infiniop_backend::SameShape;

// The most query rows (one per warp) of an attention block.
constexpr uint64_t kMaxAttentionRows = 16;
// Keys per tile: a warp's lanes each score one key of a tile; 16 where 32 do not fit.
constexpr uint32_t kTileKeys = 32;
constexpr uint32_t kSmallTileKeys = 16;

bool IsAttentionDtype(infiniDtype_t dtype) {
  return dtype == INFINI_DTYPE_F16 || dtype == INFINI_DTYPE_BF16 || dtype == INFINI_DTYPE_F32;
}

// Whether every tensor has the first's dtype, one of the attention dtypes.
bool OneAttentionDtype(const infiniopBackendTensor* tensors, std::initializer_list<size_t> which) {
  const infiniDtype_t dtype = tensors[*which.begin()].dtype;
  if (!IsAttentionDtype(dtype)) return false;
  for (size_t t : which) {
    if (tensors[t].dtype != dtype) return false;
  }
  return true;
}

// The copy kernels move raw elements: by element size.
const char* KVCachingKernel(infiniDtype_t dtype) {
  return infinirtDtypeSize(dtype) == 2 ? "infiniop_kv_caching_2" : "infiniop_kv_caching_4";
}
const char* PagedCachingKernel(infiniDtype_t dtype) {
  return infinirtDtypeSize(dtype) == 2 ? "infiniop_paged_caching_2" : "infiniop_paged_caching_4";
}

// A thread per element, in a grid-stride loop.
template <class Args>
void AddCopyLaunch(const char* kernel, const Args& args, const DeviceLimits& limits,
                   KernelPlan* plan) {
  const unsigned threads = BlockThreads(limits, kElementwiseThreads);
  AddLaunch(kernel, GridStrideBlocks(args.elements, threads, limits), threads, 0, args, plan);
}

// The product of the counts; false when it does not fit in 64 bits.
bool Product(std::initializer_list<uint64_t> counts, uint64_t* product) {
  uint64_t result = 1;
  for (uint64_t count : counts) {
    if (count != 0 && result > UINT64_MAX / count) return false;
    result *= count;
  }
  *product = result;
  return true;
}

// The attention blocks' geometry (family_kernel_abi.h's AttentionTiling): up to 16 query rows a
// block, as many heads of a kv head's group as fit (the rest in further head chunks), then as many
// tokens as fill the rows (one where each token is its own sequence: decode); 32 keys a tile, and
// fewer rows and keys where the block's shared memory would pass kPortableSharedBytes. Depends
// only on the shapes and the dtype, so Describe (on default limits) and Create agree.
AttentionTiling ChooseTiling(uint64_t heads, uint64_t kv_heads, uint64_t head_size,
                             uint64_t element_size, bool one_token_per_block, float scale) {
  AttentionTiling tiling{};
  tiling.heads = heads;
  tiling.kv_heads = kv_heads;
  tiling.group = heads / kv_heads;
  tiling.head_size = head_size;
  tiling.scale = scale;
  uint64_t heads_per_block =
      std::min<uint64_t>(std::max<uint64_t>(tiling.group, 1), kMaxAttentionRows);
  uint64_t tokens =
      one_token_per_block ? 1 : std::max<uint64_t>(1, kMaxAttentionRows / heads_per_block);
  uint32_t tile = kTileKeys;
  while (AttentionSharedBytes(tokens * heads_per_block, tile, head_size, element_size) >
         kPortableSharedBytes) {
    if (tile > kSmallTileKeys) {
      tile = kSmallTileKeys;
    } else if (tokens > 1) {
      tokens = (tokens + 1) / 2;
    } else if (heads_per_block > 1) {
      heads_per_block = (heads_per_block + 1) / 2;
    } else {
      break;  // one row of at most kMaxAttentionHeadSize always fits
    }
  }
  tiling.tokens_per_block = static_cast<uint32_t>(tokens);
  tiling.heads_per_block = static_cast<uint32_t>(heads_per_block);
  tiling.head_chunks =
      static_cast<uint32_t>((tiling.group + heads_per_block - 1) / heads_per_block);
  tiling.tile_keys = tile;
  return tiling;
}

// An attention launch: token tiles along x, kv heads times head chunks along y, a warp per row.
// NOT_IMPLEMENTED where y passes the grid's limit.
template <class Args>
infiniStatus_t AddAttentionLaunch(const char* kernel, const Args& args, size_t element_size,
                                  KernelPlan* plan) {
  const AttentionTiling& tiling = args.tiling;
  const uint64_t blocks_y = tiling.kv_heads * tiling.head_chunks;
  if (blocks_y > kMaxGridY) return INFINI_STATUS_NOT_IMPLEMENTED;
  const uint64_t warps = uint64_t{tiling.tokens_per_block} * tiling.heads_per_block;
  const uint64_t shared =
      AttentionSharedBytes(warps, tiling.tile_keys, tiling.head_size, element_size);
  if (shared > kPortableSharedBytes) return INFINI_STATUS_NOT_IMPLEMENTED;
  AddLaunch(kernel, args.token_tiles, static_cast<unsigned>(warps * kWarp),
            static_cast<size_t>(shared), args, plan, blocks_y);
  return INFINI_STATUS_SUCCESS;
}

const FloatKernels kPagedAttentionKernels{"infiniop_paged_attention_f16",
                                          "infiniop_paged_attention_bf16",
                                          "infiniop_paged_attention_f32", nullptr};
const FloatKernels kDenseAttentionKernels{"infiniop_dense_attention_f16",
                                          "infiniop_dense_attention_bf16",
                                          "infiniop_dense_attention_f32", nullptr};

}  // namespace

// --- Caches ------------------------------------------------------------------------------------

// Tensors (k_cache, v_cache, k, v, past_kv_lengths): caches [batch, kv_heads, max_len, head_size],
// k and v [batch, kv_heads, seq_len, head_size].
infiniStatus_t MakeKVCachingPlan(const infiniopBackendTensor* tensors, const DeviceLimits& limits,
                                 KernelPlan* plan) {
  const infiniopBackendTensor &k_cache = tensors[0], &k = tensors[2], &past = tensors[4];
  if (k_cache.ndim != 4 || k.ndim != 4 || past.ndim != 1 || past.dtype != INFINI_DTYPE_I64 ||
      k.shape[0] != k_cache.shape[0] || k.shape[1] != k_cache.shape[1] ||
      k.shape[3] != k_cache.shape[3] || !SameShape(tensors[0], tensors[1]) ||
      !SameShape(tensors[2], tensors[3])) {
    return INFINI_STATUS_BAD_PARAM;
  }
  if (!OneAttentionDtype(tensors, {0, 1, 2, 3})) return INFINI_STATUS_NOT_IMPLEMENTED;
  CacheWriteArgs args{};
  if (!Product({k.shape[0], k.shape[1], k.shape[2], k.shape[3]}, &args.elements)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  args.heads = k.shape[1];
  args.seq = k.shape[2];
  args.head_size = k.shape[3];
  args.max_len = k_cache.shape[2];
  for (int which = 0; which < 2; ++which) {
    std::copy_n(tensors[which].strides, 4, args.cache_strides[which]);
    std::copy_n(tensors[2 + which].strides, 4, args.source_strides[which]);
    args.cache_buffers[which] = which;
    args.source_buffers[which] = 2 + which;
  }
  args.past_stride = past.strides[0];
  args.past_buffer = 4;
  if (args.elements == 0) return INFINI_STATUS_SUCCESS;
  AddCopyLaunch(KVCachingKernel(k.dtype), args, limits, plan);
  return INFINI_STATUS_SUCCESS;
}

// Tensors (k_cache, v_cache, k, v, slot_mapping): caches [blocks, kv_heads, block_size, head_size],
// k and v [tokens, kv_heads, head_size].
infiniStatus_t MakePagedCachingPlan(const infiniopBackendTensor* tensors,
                                    const DeviceLimits& limits, KernelPlan* plan) {
  const infiniopBackendTensor &k_cache = tensors[0], &k = tensors[2], &slots = tensors[4];
  if (k_cache.ndim != 4 || k.ndim != 3 || slots.ndim != 1 || !IsIndexDtype(slots.dtype) ||
      k.shape[1] != k_cache.shape[1] || k.shape[2] != k_cache.shape[3] ||
      slots.shape[0] != k.shape[0] || !SameShape(tensors[0], tensors[1]) ||
      !SameShape(tensors[2], tensors[3])) {
    return INFINI_STATUS_BAD_PARAM;
  }
  if (!OneAttentionDtype(tensors, {0, 1, 2, 3})) return INFINI_STATUS_NOT_IMPLEMENTED;
  PagedCachingArgs args{};
  if (!Product({k.shape[0], k.shape[1], k.shape[2]}, &args.elements)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  args.kv_heads = k.shape[1];
  args.head_size = k.shape[2];
  args.block_size = k_cache.shape[2];
  if (!Product({k_cache.shape[0], k_cache.shape[2]}, &args.capacity)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  for (int which = 0; which < 2; ++which) {
    std::copy_n(tensors[which].strides, 4, args.cache_strides[which]);
    std::copy_n(tensors[2 + which].strides, 3, args.source_strides[which]);
  }
  args.slot_stride = slots.strides[0];
  args.slot_dtype = slots.dtype;
  if (args.elements == 0) return INFINI_STATUS_SUCCESS;
  AddCopyLaunch(PagedCachingKernel(k.dtype), args, limits, plan);
  return INFINI_STATUS_SUCCESS;
}

// --- Paged attention ---------------------------------------------------------------------------

// Tensors (out, q, k_cache, v_cache, block_tables, seq_lens, [cum_seq_lens_q,] alibi_slopes).
infiniStatus_t MakePagedAttentionPlan(const infiniopBackendTensor* tensors, bool prefill,
                                      const infiniopBackendCreateParams& params, KernelPlan* plan) {
  const infiniopBackendTensor &out = tensors[0], &q = tensors[1], &k_cache = tensors[2],
                              &v_cache = tensors[3], &tables = tensors[4], &lengths = tensors[5];
  const infiniopBackendTensor& alibi = tensors[prefill ? 7 : 6];
  if (q.ndim != 3 || k_cache.ndim != 4 || tables.ndim != 2 || lengths.ndim != 1 ||
      k_cache.shape[1] == 0 || q.shape[1] % k_cache.shape[1] != 0 ||
      q.shape[2] != k_cache.shape[3] || !IsIndexDtype(tables.dtype) ||
      !IsIndexDtype(lengths.dtype) || (prefill && !IsIndexDtype(tensors[6].dtype))) {
    return INFINI_STATUS_BAD_PARAM;
  }
  const bool has_alibi = alibi.dtype != INFINI_DTYPE_INVALID;
  if (!OneAttentionDtype(tensors, {1, 0, 2, 3}) || (has_alibi && alibi.dtype != INFINI_DTYPE_F32)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  const uint64_t heads = q.shape[1], kv_heads = k_cache.shape[1], head_size = q.shape[2];
  if (head_size > kMaxAttentionHeadSize) return INFINI_STATUS_NOT_IMPLEMENTED;
  const size_t element_size = infinirtDtypeSize(q.dtype);
  PagedAttentionArgs args{};
  args.tiling = ChooseTiling(heads, kv_heads, head_size, element_size,
                             /*one_token_per_block=*/!prefill, params.scale);
  args.seqs = lengths.shape[0];
  args.rows = q.shape[0];
  args.block_size = k_cache.shape[2];
  args.cache_blocks = k_cache.shape[0];
  args.max_blocks = tables.shape[1];
  std::copy_n(q.strides, 2, args.q_strides);
  std::copy_n(out.strides, 2, args.out_strides);
  std::copy_n(k_cache.strides, 3, args.k_strides);
  std::copy_n(v_cache.strides, 3, args.v_strides);
  std::copy_n(tables.strides, 2, args.table_strides);
  args.seq_lens_stride = lengths.strides[0];
  args.table_dtype = tables.dtype;
  args.seq_lens_dtype = lengths.dtype;
  args.cum_buffer = prefill ? 6 : -1;
  args.cum_stride = prefill ? tensors[6].strides[0] : 0;
  args.cum_dtype = prefill ? tensors[6].dtype : INFINI_DTYPE_INVALID;
  args.alibi_buffer = has_alibi ? (prefill ? 7 : 6) : -1;
  args.alibi_stride = has_alibi ? alibi.strides[0] : 0;
  if (args.rows == 0 || args.seqs == 0 || heads == 0 || head_size == 0) {
    return INFINI_STATUS_SUCCESS;  // no row to compute
  }
  const uint64_t tokens = args.tiling.tokens_per_block;
  args.token_tiles = (args.rows + tokens - 1) / tokens;
  return AddAttentionLaunch(kPagedAttentionKernels.For(q.dtype), args, element_size, plan);
}

// --- Dense attention: FlashAttention, Attention -------------------------------------------------

// Tensors (out, q, k, v, total_kv_len): q, out [batch, heads, q_len, head_size], k, v [batch,
// kv_heads, kv_len, head_size].
infiniStatus_t MakeFlashAttentionPlan(const infiniopBackendTensor* tensors,
                                      const infiniopBackendCreateParams& params, KernelPlan* plan) {
  const infiniopBackendTensor &out = tensors[0], &q = tensors[1], &k = tensors[2], &v = tensors[3],
                              &lengths = tensors[4];
  if (q.ndim != 4 || k.ndim != 4 || lengths.ndim != 1 || k.shape[1] == 0 ||
      q.shape[1] % k.shape[1] != 0 || lengths.dtype != INFINI_DTYPE_I64) {
    return INFINI_STATUS_BAD_PARAM;
  }
  if (!OneAttentionDtype(tensors, {1, 0, 2, 3})) return INFINI_STATUS_NOT_IMPLEMENTED;
  const uint64_t head_size = q.shape[3];
  if (head_size > kMaxAttentionHeadSize) return INFINI_STATUS_NOT_IMPLEMENTED;
  const size_t element_size = infinirtDtypeSize(q.dtype);
  DenseAttentionArgs args{};
  args.tiling = ChooseTiling(q.shape[1], k.shape[1], head_size, element_size,
                             /*one_token_per_block=*/false, params.scale);
  args.batch = q.shape[0];
  args.q_len = q.shape[2];
  args.kv_len = k.shape[2];
  std::copy_n(q.strides, 3, args.q_strides);  // batch, head, token
  std::copy_n(out.strides, 3, args.out_strides);
  std::copy_n(k.strides, 3, args.k_strides);  // batch, head, key
  std::copy_n(v.strides, 3, args.v_strides);
  args.total_stride = lengths.strides[0];
  args.q_buffer = 1;
  args.k_buffer = 2;
  args.v_buffer = 3;
  args.total_buffer = 4;
  args.causal = params.is_causal != 0 ? 1 : 0;
  if (args.batch == 0 || args.q_len == 0 || q.shape[1] == 0 || head_size == 0) {
    return INFINI_STATUS_SUCCESS;
  }
  const uint64_t tokens = args.tiling.tokens_per_block;
  if (!Product({args.batch, (args.q_len + tokens - 1) / tokens}, &args.token_tiles)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  return AddAttentionLaunch(kDenseAttentionKernels.For(q.dtype), args, element_size, plan);
}

// Tensors (out [seq, heads, head_size], q [heads, seq, head_size], k, v [kv_heads, seq,
// head_size], k_cache, v_cache [kv_heads, >= pos + seq, head_size]): k and v written into the
// caches at pos (infiniop_kv_caching_*, batch 1, at fixed_position), then the dense attention of
// the caches, causal from pos, scaled by 1 / sqrt(head_size) as the CPU rounds it.
infiniStatus_t MakeAttentionPlan(const infiniopBackendTensor* tensors,
                                 const infiniopBackendCreateParams& params,
                                 const DeviceLimits& limits, KernelPlan* plan) {
  const infiniopBackendTensor &out = tensors[0], &q = tensors[1], &k = tensors[2],
                              &k_cache = tensors[4], &v_cache = tensors[5];
  if (q.ndim != 3 || k.ndim != 3 || k_cache.ndim != 3 || k.shape[0] == 0 ||
      q.shape[0] % k.shape[0] != 0 || k_cache.shape[0] != k.shape[0] ||
      k_cache.shape[1] < params.pos + q.shape[1]) {
    return INFINI_STATUS_BAD_PARAM;
  }
  if (!OneAttentionDtype(tensors, {1, 0, 2, 3, 4, 5})) return INFINI_STATUS_NOT_IMPLEMENTED;
  const uint64_t heads = q.shape[0], seq = q.shape[1], head_size = q.shape[2];
  const uint64_t kv_heads = k.shape[0];
  if (head_size > kMaxAttentionHeadSize) return INFINI_STATUS_NOT_IMPLEMENTED;
  const size_t element_size = infinirtDtypeSize(q.dtype);

  CacheWriteArgs write{};
  if (!Product({kv_heads, seq, head_size}, &write.elements)) return INFINI_STATUS_BAD_PARAM;
  write.heads = kv_heads;
  write.seq = seq;
  write.head_size = head_size;
  write.max_len = k_cache.shape[1];
  write.fixed_position = params.pos;
  for (int which = 0; which < 2; ++which) {
    const infiniopBackendTensor& cache = tensors[4 + which];
    const infiniopBackendTensor& source = tensors[2 + which];
    // [kv_heads, len, head_size] as [1, kv_heads, len, head_size].
    std::copy_n(cache.strides, 3, write.cache_strides[which] + 1);
    std::copy_n(source.strides, 3, write.source_strides[which] + 1);
    write.cache_buffers[which] = 4 + which;
    write.source_buffers[which] = 2 + which;
  }
  write.past_buffer = -1;

  DenseAttentionArgs attend{};
  const float scale = 1.0f / std::sqrt(static_cast<float>(head_size));
  attend.tiling = ChooseTiling(heads, kv_heads, head_size, element_size,
                               /*one_token_per_block=*/false, scale);
  attend.batch = 1;
  attend.q_len = seq;
  attend.kv_len = k_cache.shape[1];
  attend.fixed_total = params.pos + seq;
  attend.total_buffer = -1;
  attend.causal = 1;  // query i sees pos + i + 1 keys
  attend.q_strides[1] = q.strides[0];
  attend.q_strides[2] = q.strides[1];
  attend.out_strides[1] = out.strides[1];
  attend.out_strides[2] = out.strides[0];
  attend.k_strides[1] = k_cache.strides[0];
  attend.k_strides[2] = k_cache.strides[1];
  attend.v_strides[1] = v_cache.strides[0];
  attend.v_strides[2] = v_cache.strides[1];
  attend.q_buffer = 1;
  attend.k_buffer = 4;
  attend.v_buffer = 5;
  if (seq == 0) return INFINI_STATUS_SUCCESS;  // nothing to write or attend
  if (write.elements != 0) AddCopyLaunch(KVCachingKernel(q.dtype), write, limits, plan);
  if (heads == 0 || head_size == 0) return INFINI_STATUS_SUCCESS;
  const uint64_t tokens = attend.tiling.tokens_per_block;
  attend.token_tiles = (seq + tokens - 1) / tokens;
  return AddAttentionLaunch(kDenseAttentionKernels.For(q.dtype), attend, element_size, plan);
}

}  // namespace infinirt::infiniop_cuda_family::plans
