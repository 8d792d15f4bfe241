// The caches' and attention operators' kernel bodies: the cache writes (KVCaching, Attention's
// first step; PagedCaching), a thread per element, and the attention of the paged forms
// (PagedAttention, PagedAttentionPrefill) and the dense ones (FlashAttention, Attention's second
// step), sharing AttendRows. Included by infiniop_kernels.cu after its element types, reductions
// and helpers; the arguments are family_kernel_abi.h's, made by family_plans_attention.cc. The
// semantics are the CPU's (cpu_attention.cc): computed in float, each output element rounded once;
// indices read when the work runs, a sequence (or batch) whose indices do not fit the tensors
// getting NaN rows instead of reads out of bounds.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_ATTENTION_KERNELS_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_ATTENTION_KERNELS_H_

#include "kernels/index_math.h"

namespace infinirt::infiniop_cuda_family::kernels {

// --- Cache writes ------------------------------------------------------------------------------

// cache[b, h, position_b + s, d] = source[b, h, s, d] for both caches, a thread per element of the
// sources (E: the element, copied as stored). A batch whose position is negative or leaves no room
// for its seq rows is skipped, as on the CPU.
template <class E>
__device__ void CacheWrite(const CacheWriteArgs& args) {
  for (uint64_t e = FirstIndex(); e < args.elements; e += GridStride()) {
    uint64_t rest = e;
    const uint64_t d = rest % args.head_size;
    rest /= args.head_size;
    const uint64_t s = rest % args.seq;
    rest /= args.seq;
    const uint64_t h = rest % args.heads;
    const uint64_t b = rest / args.heads;
    const int64_t position = args.past_buffer >= 0
                                 ? LoadIndex(args.call.buffers[args.past_buffer], INFINI_DTYPE_I64,
                                             static_cast<int64_t>(b) * args.past_stride)
                                 : static_cast<int64_t>(args.fixed_position);
    if (position < 0 || static_cast<uint64_t>(position) + args.seq > args.max_len) continue;
    const int64_t row = position + static_cast<int64_t>(s);
    for (int which = 0; which < 2; ++which) {
      const int64_t* c = args.cache_strides[which];
      const int64_t* f = args.source_strides[which];
      E* cache = static_cast<E*>(args.call.buffers[args.cache_buffers[which]]);
      const E* source = static_cast<const E*>(args.call.buffers[args.source_buffers[which]]);
      cache[static_cast<int64_t>(b) * c[0] + static_cast<int64_t>(h) * c[1] + row * c[2] +
            static_cast<int64_t>(d) * c[3]] =
          source[static_cast<int64_t>(b) * f[0] + static_cast<int64_t>(h) * f[1] +
                 static_cast<int64_t>(s) * f[2] + static_cast<int64_t>(d) * f[3]];
    }
  }
}

// Token t's k and v written at slot_mapping[t] (block slot / block_size, offset slot % block_size),
// a thread per element of k; a negative slot (padding) or one past the caches is skipped.
template <class E>
__device__ void PagedCaching(const PagedCachingArgs& args) {
  for (uint64_t e = FirstIndex(); e < args.elements; e += GridStride()) {
    uint64_t rest = e;
    const uint64_t d = rest % args.head_size;
    rest /= args.head_size;
    const uint64_t h = rest % args.kv_heads;
    const uint64_t t = rest / args.kv_heads;
    const int64_t slot = LoadIndex(args.call.buffers[4], args.slot_dtype,
                                   static_cast<int64_t>(t) * args.slot_stride);
    if (slot < 0 || static_cast<uint64_t>(slot) >= args.capacity) continue;
    const int64_t block = static_cast<int64_t>(static_cast<uint64_t>(slot) / args.block_size);
    const int64_t offset = static_cast<int64_t>(static_cast<uint64_t>(slot) % args.block_size);
    for (int which = 0; which < 2; ++which) {
      const int64_t* c = args.cache_strides[which];
      const int64_t* f = args.source_strides[which];
      E* cache = static_cast<E*>(args.call.buffers[which]);
      const E* source = static_cast<const E*>(args.call.buffers[2 + which]);
      cache[block * c[0] + static_cast<int64_t>(h) * c[1] + offset * c[2] +
            static_cast<int64_t>(d) * c[3]] =
          source[static_cast<int64_t>(t) * f[0] + static_cast<int64_t>(h) * f[1] +
                 static_cast<int64_t>(d) * f[2]];
    }
  }
}

// --- Attention ---------------------------------------------------------------------------------
//
// A block computes up to 16 query rows that read one kv head's keys, a warp per row (a token's
// query head); the block walks the keys the rows see in tiles of tile_keys (16 or 32): the block
// stages a tile's keys and values in shared memory (each read from memory once for all its rows),
// then each warp scores the tile's keys against its query, a lane per key, and folds them into its
// running max, sum and output (the online softmax; no score matrix is kept). A lane holds the
// output elements d = lane + 32 c (c < 8: head_size <= 256).

constexpr int kAttentionSlices = static_cast<int>(kMaxAttentionHeadSize) / kWarpSize;

// A warp's query row. Every field is the same in all lanes of the warp (the warp takes its
// branches as one, so its shuffles see every lane).
struct AttentionRow {
  bool active;       // a row of the block's tokens and heads
  uint64_t visible;  // the keys it sees: 0 to visible - 1
  float slope;       // ALiBi's (0: none)
  int64_t position;  // ALiBi's: the key position of the query
  int64_t q_offset;  // elements into q, of its first element
  int64_t out_offset;
};

// The warp's row as NaN: its sequence's indices did not fit the tensors.
template <class Type>
__device__ void MarkRowInvalid(const AttentionRow& row, const AttentionTiling& tiling, void* out) {
  if (!row.active) return;
  auto* o = static_cast<typename Type::Storage*>(out) + row.out_offset;
  for (uint64_t d = threadIdx.x % kWarpSize; d < tiling.head_size; d += kWarpSize) {
    o[d] = Type::Store(QuietNaN<float>());
  }
}

// The attention of every warp's row over keys 0 to most - 1 (most: the block's largest visible;
// a row ignores the keys past its own). Keys(j, &key, &value) gives key and value j's elements
// (head_size of them, packed). Called by the whole block; its rows' q and out in q and out.
template <class Type, class Keys>
__device__ __forceinline__ void AttendRows(const AttentionTiling& tiling, const AttentionRow& row,
                                           uint64_t most, const void* q, void* out,
                                           const Keys& keys_of) {
  using S = typename Type::Storage;
  extern __shared__ __align__(16) unsigned char attention_shared[];
  const uint64_t head_size = tiling.head_size;
  const uint64_t warps = blockDim.x / kWarpSize;
  const uint64_t warp = threadIdx.x / kWarpSize;
  const unsigned lane = threadIdx.x % kWarpSize;
  const uint64_t pitch = AttentionKeyPitch(head_size, sizeof(S));
  float* query = reinterpret_cast<float*>(attention_shared) + warp * head_size;
  S* keys = reinterpret_cast<S*>(attention_shared + AttentionQueryBytes(warps, head_size));
  S* values = reinterpret_cast<S*>(attention_shared + AttentionQueryBytes(warps, head_size) +
                                   AttentionKeyTileBytes(tiling.tile_keys, head_size, sizeof(S)));
  __syncthreads();  // the block's previous rows are done with the shared memory
  if (row.active) {
    const S* q_row = static_cast<const S*>(q) + row.q_offset;
    for (uint64_t d = lane; d < head_size; d += kWarpSize) {
      query[d] = Mul(static_cast<float>(Type::Load(q_row[d])), tiling.scale);
    }
  }
  float max = -Infinity<float>();
  float sum = 0;
  float acc[kAttentionSlices];
#pragma unroll
  for (int c = 0; c < kAttentionSlices; ++c) acc[c] = 0;
  for (uint64_t first = 0; first < most; first += tiling.tile_keys) {
    const uint64_t count = most - first < tiling.tile_keys ? most - first : tiling.tile_keys;
    __syncthreads();  // the previous tile is consumed (and the queries are written)
    for (uint64_t j = warp; j < count; j += warps) {  // a warp per key, its lanes along the head
      const S* key;
      const S* value;
      keys_of(first + j, &key, &value);
      for (uint64_t d = lane; d < head_size; d += kWarpSize) {
        keys[j * pitch + d] = key[d];
        values[j * head_size + d] = value[d];
      }
    }
    __syncthreads();
    if (!row.active || first >= row.visible) continue;  // the whole warp alike
    // Lane j scores key first + j.
    const bool seen = lane < count && first + lane < row.visible;
    float score = -Infinity<float>();
    if (seen) {
      const S* key = keys + lane * pitch;
      float dot = 0;
      for (uint64_t d = 0; d < head_size; ++d) {
        dot += Mul(query[d], static_cast<float>(Type::Load(key[d])));
      }
      if (row.slope != 0) {
        dot +=
            Mul(row.slope, static_cast<float>(static_cast<int64_t>(first + lane) - row.position));
      }
      score = dot;
    }
    const float new_max = MaxOp()(max, WarpReduce(score, MaxOp()));
    const float correction = Exp(max - new_max);  // 0 for the first tile
    const float p = seen ? Exp(score - new_max) : 0.0f;
    sum = sum * correction + WarpReduce(p, SumOp());
#pragma unroll
    for (int c = 0; c < kAttentionSlices; ++c) acc[c] *= correction;
    for (uint64_t j = 0; j < count; ++j) {
      const float weight = __shfl_sync(kFullMask, p, static_cast<int>(j));
      const S* value = values + j * head_size;
#pragma unroll
      for (int c = 0; c < kAttentionSlices; ++c) {
        const uint64_t d = lane + static_cast<uint64_t>(c) * kWarpSize;
        if (d < head_size) acc[c] += weight * static_cast<float>(Type::Load(value[d]));
      }
    }
    max = new_max;
  }
  if (row.active) {
    S* o = static_cast<S*>(out) + row.out_offset;
    const float inverse = sum > 0 ? 1.0f / sum : 0.0f;  // no key seen: 0
#pragma unroll
    for (int c = 0; c < kAttentionSlices; ++c) {
      const uint64_t d = lane + static_cast<uint64_t>(c) * kWarpSize;
      if (d < head_size) o[d] = Type::Store(acc[c] * inverse);
    }
  }
}

// The warp's place in its block: the token of the block's tokens and the head of the kv head's
// group (g < group where the row exists).
struct WarpSlot {
  uint64_t token;  // 0 to tokens_per_block - 1
  uint64_t kv_head;
  uint64_t g;
  uint64_t head;  // the query head: kv_head * group + g
};

__device__ inline WarpSlot SlotOfWarp(const AttentionTiling& tiling) {
  const uint64_t warp = threadIdx.x / kWarpSize;
  WarpSlot slot;
  slot.token = warp / tiling.heads_per_block;
  slot.kv_head = blockIdx.y / tiling.head_chunks;
  slot.g =
      (blockIdx.y % tiling.head_chunks) * tiling.heads_per_block + warp % tiling.heads_per_block;
  slot.head = slot.kv_head * tiling.group + slot.g;
  return slot;
}

// --- Paged attention ---------------------------------------------------------------------------

// Key and value j of a sequence's kv head, through its block table row (checked before use).
template <class S>
struct PagedKeys {
  const void* table;  // the sequence's row of block_tables
  int32_t table_dtype;
  int64_t table_step;
  uint64_t block_size;
  const S* k;  // the kv head's elements of block 0
  const S* v;
  int64_t k_block_stride;
  int64_t v_block_stride;
  int64_t k_offset_stride;
  int64_t v_offset_stride;
  __device__ void operator()(uint64_t j, const S** key, const S** value) const {
    const int64_t block =
        LoadIndex(table, table_dtype, static_cast<int64_t>(j / block_size) * table_step);
    const int64_t offset = static_cast<int64_t>(j % block_size);
    *key = k + block * k_block_stride + offset * k_offset_stride;
    *value = v + block * v_block_stride + offset * v_offset_stride;
  }
};

// The element at `offset` of an index buffer, as a typed pointer for PagedKeys.
__device__ inline const void* IndexAt(const void* base, int32_t dtype, int64_t offset) {
  return dtype == INFINI_DTYPE_I32
             ? static_cast<const void*>(static_cast<const int32_t*>(base) + offset)
             : static_cast<const void*>(static_cast<const int64_t*>(base) + offset);
}

// A sequence as the paged kernel reads it: its query rows first to end - 1, its length, and
// whether its indices fit (the CPU's ReadSequence): 0 <= first <= end <= rows, end - first <=
// length <= max_blocks * block_size, and every block id it uses in [0, blocks) (checked by the
// whole block: call it from every thread).
struct PagedSequence {
  int64_t first;
  int64_t end;
  int64_t length;
  bool rows_fit;  // 0 <= first <= end <= rows: else none of its rows is written, as on the CPU
  bool valid;
};

__device__ inline int64_t CumulativeRow(const PagedAttentionArgs& args, uint64_t s) {
  return LoadIndex(args.call.buffers[args.cum_buffer], args.cum_dtype,
                   static_cast<int64_t>(s) * args.cum_stride);
}

__device__ PagedSequence ReadPagedSequence(const PagedAttentionArgs& args, uint64_t s) {
  PagedSequence seq;
  seq.first = args.cum_buffer >= 0 ? CumulativeRow(args, s) : static_cast<int64_t>(s);
  seq.end = args.cum_buffer >= 0 ? CumulativeRow(args, s + 1) : seq.first + 1;
  seq.length = LoadIndex(args.call.buffers[5], args.seq_lens_dtype,
                         static_cast<int64_t>(s) * args.seq_lens_stride);
  const int64_t rows = static_cast<int64_t>(args.rows);
  seq.rows_fit = seq.first >= 0 && seq.end >= seq.first && seq.end <= rows;
  const bool fits = seq.rows_fit && seq.length >= seq.end - seq.first &&
                    static_cast<uint64_t>(seq.length) <= args.max_blocks * args.block_size;
  // length > 0 here implies block_size > 0.
  const uint64_t needed =
      fits && seq.length > 0 ? (static_cast<uint64_t>(seq.length) - 1) / args.block_size + 1 : 0;
  bool bad = !fits;
  for (uint64_t b = threadIdx.x; b < needed; b += blockDim.x) {
    const int64_t id = LoadIndex(args.call.buffers[4], args.table_dtype,
                                 static_cast<int64_t>(s) * args.table_strides[0] +
                                     static_cast<int64_t>(b) * args.table_strides[1]);
    if (id < 0 || static_cast<uint64_t>(id) >= args.cache_blocks) bad = true;
  }
  seq.valid = __syncthreads_or(bad) == 0;
  return seq;
}

// The sequence whose query rows hold row t: decode, sequence t; prefill, the last s with
// cum[s] <= t (a binary search over cum_seq_lens_q, which is non-decreasing in any valid call),
// -1 where cum[0] > t. Every thread computes the same.
__device__ int64_t SequenceOfRow(const PagedAttentionArgs& args, uint64_t t) {
  if (args.cum_buffer < 0) return static_cast<int64_t>(t);
  const int64_t row = static_cast<int64_t>(t);
  if (CumulativeRow(args, 0) > row) return -1;
  uint64_t low = 0, high = args.seqs - 1;  // cum[low] <= row
  while (low < high) {
    const uint64_t middle = low + (high - low + 1) / 2;
    if (CumulativeRow(args, middle) <= row) {
      low = middle;
    } else {
      high = middle - 1;
    }
  }
  return static_cast<int64_t>(low);
}

// The block's token tiles (rows of q) for its kv head and head chunk: within a tile, the runs of
// rows of one sequence ("segments") one after the other.
template <class Type>
__device__ void PagedAttention(const PagedAttentionArgs& args) {
  using S = typename Type::Storage;
  const AttentionTiling& tiling = args.tiling;
  const WarpSlot slot = SlotOfWarp(tiling);
  const bool has_head = slot.g < tiling.group;
  const float* slopes = args.alibi_buffer >= 0
                            ? static_cast<const float*>(args.call.buffers[args.alibi_buffer])
                            : nullptr;
  const float slope = slopes != nullptr && has_head
                          ? slopes[static_cast<int64_t>(slot.head) * args.alibi_stride]
                          : 0.0f;
  for (uint64_t tile = blockIdx.x; tile < args.token_tiles; tile += gridDim.x) {
    const uint64_t tile_first = tile * tiling.tokens_per_block;
    const uint64_t tile_end = args.rows - tile_first < tiling.tokens_per_block
                                  ? args.rows
                                  : tile_first + tiling.tokens_per_block;
    uint64_t t = tile_first;
    while (t < tile_end) {  // the same in every thread
      const int64_t s = SequenceOfRow(args, t);
      const int64_t next = s < 0 ? CumulativeRow(args, 0) : 0;
      if (s < 0) {  // before the first sequence's rows: not written, as on the CPU
        t = static_cast<uint64_t>(next) < tile_end ? static_cast<uint64_t>(next) : tile_end;
        continue;
      }
      const PagedSequence seq = ReadPagedSequence(args, static_cast<uint64_t>(s));
      const int64_t row_t = static_cast<int64_t>(t);
      if (!(seq.first <= row_t && row_t < seq.end)) {  // past the last sequence's rows
        t = tile_end;
        continue;
      }
      const uint64_t segment_end =
          static_cast<uint64_t>(seq.end) < tile_end ? static_cast<uint64_t>(seq.end) : tile_end;
      if (!seq.rows_fit) {
        t = segment_end;
        continue;
      }
      // This warp's row: token t + slot.token of the segment.
      const uint64_t token = t + slot.token;
      AttentionRow row{};
      row.active = has_head && token < segment_end;
      const int64_t queries = seq.end - seq.first;
      // Query i of the sequence's q_len sees keys 0 to length - q_len + i.
      const int64_t i = static_cast<int64_t>(token) - seq.first;
      row.visible = row.active ? static_cast<uint64_t>(seq.length - queries + i + 1) : 0;
      row.slope = slope;
      row.position = static_cast<int64_t>(row.visible) - 1;
      row.q_offset = static_cast<int64_t>(token) * args.q_strides[0] +
                     static_cast<int64_t>(slot.head) * args.q_strides[1];
      row.out_offset = static_cast<int64_t>(token) * args.out_strides[0] +
                       static_cast<int64_t>(slot.head) * args.out_strides[1];
      if (!seq.valid) {
        MarkRowInvalid<Type>(row, tiling, args.call.buffers[0]);
      } else {
        // The segment's last token sees the most keys.
        const int64_t last = static_cast<int64_t>(segment_end - 1) - seq.first;
        const uint64_t most = static_cast<uint64_t>(seq.length - queries + last + 1);
        const PagedKeys<S> keys{
            IndexAt(args.call.buffers[4], args.table_dtype, s * args.table_strides[0]),
            args.table_dtype,
            args.table_strides[1],
            args.block_size,
            static_cast<const S*>(args.call.buffers[2]) +
                static_cast<int64_t>(slot.kv_head) * args.k_strides[1],
            static_cast<const S*>(args.call.buffers[3]) +
                static_cast<int64_t>(slot.kv_head) * args.v_strides[1],
            args.k_strides[0],
            args.v_strides[0],
            args.k_strides[2],
            args.v_strides[2]};
        AttendRows<Type>(tiling, row, most, args.call.buffers[1], args.call.buffers[0], keys);
      }
      t = segment_end;
    }
  }
}

// --- Dense attention ---------------------------------------------------------------------------

// Key and value j of a batch's kv head.
template <class S>
struct DenseKeys {
  const S* k;  // key 0 of the batch's kv head
  const S* v;
  int64_t k_step;
  int64_t v_step;
  __device__ void operator()(uint64_t j, const S** key, const S** value) const {
    *key = k + static_cast<int64_t>(j) * k_step;
    *value = v + static_cast<int64_t>(j) * v_step;
  }
};

// The keys query i of a batch of `total` keys sees: all, or causally those up to
// total - q_len + i (none where that is negative).
__device__ inline uint64_t DenseVisible(const DenseAttentionArgs& args, int64_t total, uint64_t i) {
  if (!args.causal) return static_cast<uint64_t>(total);
  const int64_t bound = total - static_cast<int64_t>(args.q_len) + static_cast<int64_t>(i) + 1;
  if (bound < 0) return 0;
  return static_cast<uint64_t>(bound > total ? total : bound);
}

// The block's token tiles: tile x is batch x / tiles_per_batch, its tokens_per_block queries from
// (x % tiles_per_batch) * tokens_per_block.
template <class Type>
__device__ void DenseAttention(const DenseAttentionArgs& args) {
  using S = typename Type::Storage;
  const AttentionTiling& tiling = args.tiling;
  const WarpSlot slot = SlotOfWarp(tiling);
  const uint64_t tiles_per_batch =
      (args.q_len + tiling.tokens_per_block - 1) / tiling.tokens_per_block;
  for (uint64_t tile = blockIdx.x; tile < args.token_tiles; tile += gridDim.x) {
    const uint64_t b = tile / tiles_per_batch;
    const uint64_t tile_first = (tile % tiles_per_batch) * tiling.tokens_per_block;
    const uint64_t tile_end = args.q_len - tile_first < tiling.tokens_per_block
                                  ? args.q_len
                                  : tile_first + tiling.tokens_per_block;
    const int64_t total = args.total_buffer >= 0
                              ? LoadIndex(args.call.buffers[args.total_buffer], INFINI_DTYPE_I64,
                                          static_cast<int64_t>(b) * args.total_stride)
                              : static_cast<int64_t>(args.fixed_total);
    const bool valid = total >= 0 && static_cast<uint64_t>(total) <= args.kv_len;
    const uint64_t token = tile_first + slot.token;
    AttentionRow row{};
    row.active = slot.g < tiling.group && token < tile_end;
    row.visible = row.active && valid ? DenseVisible(args, total, token) : 0;
    row.q_offset = static_cast<int64_t>(b) * args.q_strides[0] +
                   static_cast<int64_t>(slot.head) * args.q_strides[1] +
                   static_cast<int64_t>(token) * args.q_strides[2];
    row.out_offset = static_cast<int64_t>(b) * args.out_strides[0] +
                     static_cast<int64_t>(slot.head) * args.out_strides[1] +
                     static_cast<int64_t>(token) * args.out_strides[2];
    if (!valid) {  // the same in every thread
      MarkRowInvalid<Type>(row, tiling, args.call.buffers[0]);
    } else {
      const S* k = static_cast<const S*>(args.call.buffers[args.k_buffer]) +
                   static_cast<int64_t>(b) * args.k_strides[0] +
                   static_cast<int64_t>(slot.kv_head) * args.k_strides[1];
      const S* v = static_cast<const S*>(args.call.buffers[args.v_buffer]) +
                   static_cast<int64_t>(b) * args.v_strides[0] +
                   static_cast<int64_t>(slot.kv_head) * args.v_strides[1];
      const DenseKeys<S> keys{k, v, args.k_strides[2], args.v_strides[2]};
      AttendRows<Type>(tiling, row, DenseVisible(args, total, tile_end - 1),
                       args.call.buffers[args.q_buffer], args.call.buffers[0], keys);
    }
  }
}

}  // namespace infinirt::infiniop_cuda_family::kernels

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_ATTENTION_KERNELS_H_
