// The arguments of the NVIDIA operator backend's CUDA kernels, shared by the kernels (compiled by
// nvcc into the fatbin the backend carries) and the host code that launches them (compiled by the
// host compiler, without CUDA's headers). Every kernel is extern "C" and takes one struct by value,
// whose first member is a KernelCall; the host makes the rest of the struct when a descriptor is
// created and fills in the KernelCall at each call.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_KERNEL_ABI_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_KERNEL_ABI_H_

#include <stdint.h>

namespace infinirt::infiniop_cuda_family {

constexpr int kMaxBuffers = 8;

// What changes from call to call: the buffers in the order of the operator's public call (outputs
// first), the workspace, and the run parameters (RandomSample's; topk also Topksoftmax's and
// Topkrouter's, norm Topksoftmax's, routed_scaling_factor Topkrouter's, alpha_f64 MulScalar's).
struct KernelCall {
  void* buffers[kMaxBuffers];
  void* workspace;
  uint64_t workspace_size;
  float random_val;
  float topp;
  float temperature;
  int32_t topk;
  int32_t norm;
  float routed_scaling_factor;
  double alpha_f64;
};

// --- The kernels' argument structs ---------------------------------------------------------------
// Each starts with the KernelCall; the rest is made once, by MakeKernelPlan. Sizes and counts are
// in elements, strides in elements (0 and negative allowed), all 64-bit. Only fixed-width fields,
// so that the host compiler and nvcc lay them out alike.

// The most dimensions an elementwise call has once its layout is simplified.
constexpr int kMaxDims = 12;
// The most tensors of an elementwise kernel (a binary operator's c, a, b; Rearrange's dst, src).
constexpr int kMaxElementwiseTensors = 3;

// The binary operators of kernels/elementwise_operators.h (buffers c, a, b) and Rearrange (dst,
// src). ndim 0: every tensor is one contiguous run of `elements`; otherwise the merged shape (the
// last dimension innermost) and each tensor's strides along it.
struct ElementwiseArgs {
  KernelCall call;
  uint64_t elements;
  int32_t ndim;
  int32_t reserved;
  uint64_t shape[kMaxDims];
  int64_t strides[kMaxElementwiseTensors][kMaxDims];
};

// RMSNorm (y, x, w): rows = batch * nhead rows of dim elements, each row's elements contiguous;
// row r is (r / nhead, r % nhead).
struct RMSNormArgs {
  KernelCall call;
  uint64_t rows;
  uint64_t nhead;
  uint64_t dim;
  int64_t y_strides[2];  // batch, head
  int64_t x_strides[2];
  float epsilon;
  int32_t reserved;
};

// CausalSoftmax (y, x): rows = batch * seq_len rows of total_seq_len elements; row r is
// (r / seq_len, r % seq_len).
struct CausalSoftmaxArgs {
  KernelCall call;
  uint64_t rows;
  uint64_t seq_len;
  uint64_t total_seq_len;
  int64_t y_strides[3];  // batch, row, column
  int64_t x_strides[3];
};

// RoPE (y, x, pos_ids, sin_table, cos_table): one thread per rotated pair; pairs = batch *
// seq_len * nhead * half. pos_dtype: the infiniDtype_t of pos_ids (an integer dtype).
struct RoPEArgs {
  KernelCall call;
  uint64_t pairs;
  uint64_t seq_len;
  uint64_t nhead;
  uint64_t half;  // dhead / 2
  uint64_t table_len;
  int64_t y_strides[3];  // batch, token, head
  int64_t x_strides[3];
  int64_t pos_strides[2];  // batch, token
  int64_t sin_row_stride;
  int64_t cos_row_stride;
  int32_t pos_dtype;
  int32_t reserved;
};

// RandomSample (result, probs): one block. result_dtype: the infiniDtype_t of the 0-D result
// (I32, I64, U32 or U64). infiniop_random_sample_* sort the candidates in the launch's dynamic
// shared memory (12 bytes each) and use no workspace; infiniop_random_sample_large_* sort them in
// the workspace, laid out at the byte offsets below (workspace_needed bytes in all).
struct RandomSampleArgs {
  KernelCall call;
  uint64_t voc;
  int64_t stride;
  int32_t result_dtype;
  int32_t reserved;
  uint64_t keys_offset[2];     // voc uint64_t each
  uint64_t indices_offset[2];  // voc uint32_t each
  uint64_t workspace_needed;
};

// --- Lines: the row-wise model operators (LayerNorm, AddRMSNorm, Softmax, LogSoftmax, SiluAndMul,
// Embedding)
// ---------------------------------------------------------------------------------------

// The most tensors a line layout walks (LayerNorm's output, standardization, std deviation, input).
constexpr int kMaxLineTensors = 4;

// The elements along one axis ("a line") of up to kMaxLineTensors tensors, one line per index of
// the other ("outer") dimensions: `count` lines of `length` elements. Line l's first element in
// tensor t is at LineOffset(layout, l, t) (kernels/index_math.h), its element j `j * steps[t]`
// further. The outer dimensions are merged where every tensor allows (dimensions of one element
// dropped), the last innermost; a tensor without the axis (LayerNorm's std deviation, Embedding's
// indices) has step 0.
struct LineLayout {
  uint64_t count;
  uint64_t length;
  int32_t outer_ndim;
  int32_t tensors;
  uint64_t outer_shape[kMaxDims];
  int64_t outer_strides[kMaxLineTensors][kMaxDims];
  int64_t steps[kMaxLineTensors];
};

// LayerNorm (output, input_standardization, input_std_deviation, input, weight, bias): lines of
// tensors 0 to 3 in that order; bias absent when has_bias is 0.
struct LayerNormArgs {
  KernelCall call;
  LineLayout lines;
  int64_t weight_step;
  int64_t bias_step;
  int32_t has_bias;
  float eps;
};

// AddRMSNorm (y, residual_out, a, b, weight): lines of tensors 0 to 3 in that order.
struct AddRMSNormArgs {
  KernelCall call;
  LineLayout lines;
  int64_t weight_step;
  float epsilon;
  int32_t reserved;
};

// Softmax and LogSoftmax (y, x) along their axis; SiluAndMul (y, x) along the last axis, with y's
// length (x's line is twice as long: the gate, then the up projection).
struct LineArgs {
  KernelCall call;
  LineLayout lines;
};

// Embedding (output, input, weight): the output's rows along its last axis (tensor 0), the index of
// each row in tensor 1 (input, without the axis). index_dtype: I32 or I64.
struct EmbeddingArgs {
  KernelCall call;
  LineLayout lines;
  uint64_t vocab;
  int64_t weight_strides[2];  // row, column
  int32_t index_dtype;
  int32_t reserved;
};

// --- Caches and attention ----------------------------------------------------------------------

// KVCaching (k_cache, v_cache, k, v, past_kv_lengths) and Attention's first step (the caches are
// its buffers 4 and 5, k and v its 2 and 3): cache[b, h, position_b + s, :] = source[b, h, s, :]
// for both caches, one thread per element of the sources ([batch, heads, seq, head_size], batch 1
// for Attention). position_b: past_kv_lengths[b] (an I64 buffer, past_buffer) or fixed_position
// where past_buffer is -1; a batch whose position is negative or leaves no room for seq rows below
// max_len is not written.
struct CacheWriteArgs {
  KernelCall call;
  uint64_t elements;
  uint64_t heads;
  uint64_t seq;
  uint64_t head_size;
  uint64_t max_len;
  uint64_t fixed_position;
  int64_t cache_strides[2][4];   // per cache: batch, head, position, element
  int64_t source_strides[2][4];  // per source
  int64_t past_stride;
  int32_t cache_buffers[2];
  int32_t source_buffers[2];
  int32_t past_buffer;
  int32_t reserved;
};

// PagedCaching (k_cache, v_cache, k, v, slot_mapping): token t's k and v [kv_heads, head_size]
// written at slot_mapping[t] = block * block_size + offset of the caches [blocks, kv_heads,
// block_size, head_size]; a slot that is negative (padding) or past the caches is skipped. One
// thread per element of k. slot_dtype: I32 or I64.
struct PagedCachingArgs {
  KernelCall call;
  uint64_t elements;
  uint64_t kv_heads;
  uint64_t head_size;
  uint64_t block_size;
  uint64_t capacity;             // blocks * block_size
  int64_t cache_strides[2][4];   // per cache: block, head, offset, element
  int64_t source_strides[2][3];  // per source: token, head, element
  int64_t slot_stride;
  int32_t slot_dtype;
  int32_t reserved;
};

// The attention kernels' geometry, shared by the paged and the dense forms. A block computes the
// rows of `tokens_per_block` query tokens of one sequence times `heads_per_block` of the query
// heads reading one kv head (a row per warp: warps = tokens_per_block * heads_per_block), walking
// the visible keys in tiles of tile_keys keys and values staged in dynamic shared memory (the query
// rows in float, then the key tile, then the value tile; AttentionSharedBytes in
// kernels/index_math.h). gridDim.y = kv_heads * head_chunks, head_chunks = ceil(group /
// heads_per_block); gridDim.x walks the token tiles.
struct AttentionTiling {
  uint32_t tokens_per_block;
  uint32_t heads_per_block;
  uint32_t head_chunks;
  uint32_t tile_keys;
  uint64_t heads;
  uint64_t kv_heads;
  uint64_t group;  // heads / kv_heads
  uint64_t head_size;
  float scale;
  int32_t reserved;
};

// The most elements of a head a kernel computes (8 per lane of a warp).
constexpr uint64_t kMaxAttentionHeadSize = 256;

// PagedAttention (out, q, k_cache, v_cache, block_tables, seq_lens, alibi_slopes) and
// PagedAttentionPrefill (..., seq_lens, cum_seq_lens_q, alibi_slopes). q and out [rows, heads,
// head_size]; the caches [blocks, kv_heads, block_size, head_size]. Decode (cum_buffer -1): row s
// is sequence s's one query. Prefill: sequence s's queries are rows cum[s] to cum[s + 1] - 1.
// alibi_buffer -1: no ALiBi. Index dtypes: I32 or I64.
struct PagedAttentionArgs {
  KernelCall call;
  AttentionTiling tiling;
  uint64_t seqs;
  uint64_t rows;
  uint64_t token_tiles;  // ceil(rows / tokens_per_block)
  uint64_t block_size;
  uint64_t cache_blocks;
  uint64_t max_blocks;
  int64_t q_strides[2];  // row, head
  int64_t out_strides[2];
  int64_t k_strides[3];  // block, head, offset
  int64_t v_strides[3];
  int64_t table_strides[2];
  int64_t seq_lens_stride;
  int64_t cum_stride;
  int64_t alibi_stride;
  int32_t table_dtype;
  int32_t seq_lens_dtype;
  int32_t cum_dtype;
  int32_t cum_buffer;
  int32_t alibi_buffer;
  int32_t reserved;
};

// FlashAttention (out, q, k, v, total_kv_len) and Attention's second step (out, q, the caches as k
// and v: buffers 4 and 5). q and out [batch, heads, q_len, head_size], k and v [batch, kv_heads,
// kv_len, head_size] as strides (Attention's: batch 1, its own orders). Batch b sees its first
// total_b keys: total_kv_len[b] (an I64 buffer, total_buffer) or fixed_total where total_buffer is
// -1; a total outside [0, kv_len] makes the batch's rows NaN. Causal: query i sees keys up to
// total_b - q_len + i.
struct DenseAttentionArgs {
  KernelCall call;
  AttentionTiling tiling;
  uint64_t batch;
  uint64_t q_len;
  uint64_t kv_len;
  uint64_t token_tiles;  // batch * ceil(q_len / tokens_per_block)
  uint64_t fixed_total;
  int64_t q_strides[3];  // batch, head, token
  int64_t out_strides[3];
  int64_t k_strides[3];  // batch, head, key
  int64_t v_strides[3];
  int64_t total_stride;
  int32_t q_buffer;
  int32_t k_buffer;
  int32_t v_buffer;
  int32_t total_buffer;
  int32_t causal;
  int32_t reserved;
};

// --- Quantized weights -------------------------------------------------------------------------

// DequantizeAWQ (out [K, N], qweight [K, N / 8], scales [groups, N], zeros [groups, N / 8]): one
// thread per pack of eight outputs; group = K / groups.
struct DequantizeAWQArgs {
  KernelCall call;
  uint64_t packs;         // K * N / 8
  uint64_t pack_columns;  // N / 8
  uint64_t group;
  int64_t out_strides[2];
  int64_t qweight_strides[2];
  int64_t scales_strides[2];
  int64_t zeros_strides[2];
};

// I8Gemm (out [M, N], bias [N], x [M, K], x_scale, weights [K, N], weights_scale): 32 x 32 tiles of
// out per block, K in steps of 32 staged in shared memory, int32 sums by __dp4a. has_bias 0: no
// bias; a scale's or the bias's stride along its vector (0 for one element).
struct I8GemmArgs {
  KernelCall call;
  uint64_t m;
  uint64_t n;
  uint64_t k;
  uint64_t m_tiles;
  uint64_t n_tiles;
  int64_t out_strides[2];
  int64_t x_strides[2];
  int64_t w_strides[2];
  int64_t x_scale_stride;
  int64_t w_scale_stride;
  int64_t bias_stride;
  int32_t has_bias;
  int32_t reserved;
};

// --- Selections: TopK and the MoE routers --------------------------------------------------------
// One block per line (TopK) or row (the routers) orders the candidates by a 64-bit key per value
// (SelectionKey, kernels/index_math.h: ascending in the selection's order) and their index: a line
// of at most sort_capacity candidates is sorted whole; a longer one first has its first k found by
// a radix selection on (key, index), and only those k are sorted. The sort is a bitonic sort of
// sort_capacity (a power of two) entries of 16 bytes (key, index) in the launch's dynamic shared
// memory, or, for TopK's kernels infiniop_topk_workspace_*, in the block's slab of the workspace.

// TopK (values_output, indices_output, input): lines of tensors 0 to 2 in that order, along dim.
// index_dtype: I32 or I64. Workspace kernels: block b sorts in the slab_bytes at b * slab_bytes,
// workspace_needed bytes in all.
struct TopKArgs {
  KernelCall call;
  LineLayout lines;
  uint64_t k;
  uint64_t sort_capacity;
  uint64_t slab_bytes;
  uint64_t workspace_needed;
  int32_t largest;
  int32_t index_dtype;
};

// Topksoftmax and Topkrouter (values F32, indices I32: [tokens, topk] contiguous, topk the call's;
// x [tokens, experts] with packed rows; Topkrouter's correction_bias F32 [experts]).
struct RouterArgs {
  KernelCall call;
  uint64_t tokens;
  uint64_t experts;
  int64_t row_stride;
  int64_t bias_stride;
  uint64_t sort_capacity;
};

}  // namespace infinirt::infiniop_cuda_family

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_KERNEL_ABI_H_
