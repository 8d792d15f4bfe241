// The attention operators on the host: PagedCaching, PagedAttention (decode),
// PagedAttentionPrefill, FlashAttention, KVCaching and Attention (contiguous caches), the plans
// cpu_operators.cc's Create makes and its Run queues.
//
// One kernel serves the three attention forms: for one kv head, a group of query rows (every
// query head that reads that kv head, for one or more tokens) walks the visible keys in blocks of
// kKeyBlock, each row keeping a running max, a running sum and its output accumulator (the online
// softmax): no score matrix is stored, and each block of keys and values is read from memory once
// for the whole group, while it is in cache. The forms differ in where key j of a row lives (a
// paged cache through a block table, or a dense tensor) and which keys a row sees (its sequence's
// length, the causal bound). Computed in float, each output element rounded once.
//
// Indices are read when the work runs: a sequence whose block table, length or query range does
// not fit the tensors gets NaN in its output rows instead of reads out of bounds.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <memory>
#include <vector>

#include "cpu_common.h"
#include "cpu_isa.h"
#include "cpu_parallel.h"
#include "infiniop_backend.h"
#include "infiniop_backend_support.h"

namespace infinirt::infiniop_cpu {

namespace {

constexpr size_t kKeyBlock = 64;
// Query tokens per task of a prefill: enough rows to reuse each block of keys, few enough to
// spread a sequence over the threads.
constexpr size_t kTokensPerTask = 64;

// An index tensor's element `offset` (in elements), as int64.
int64_t ReadIndex(const void* base, infiniDtype_t dtype, ptrdiff_t offset) {
  return dtype == INFINI_DTYPE_I32 ? static_cast<const int32_t*>(base)[offset]
                                   : static_cast<const int64_t*>(base)[offset];
}

// A tensor's geometry as the kernels read it.
struct Strided {
  infiniDtype_t dtype = INFINI_DTYPE_INVALID;
  std::vector<size_t> shape;
  std::vector<ptrdiff_t> strides;
};

Strided Geometry(const infiniopBackendTensor& t) {
  Strided g;
  g.dtype = t.dtype;
  g.shape.assign(t.shape, t.shape + t.ndim);
  g.strides.assign(t.strides, t.strides + t.ndim);
  return g;
}

// One query row of a group: where its query and output are, how many keys it sees, and where it
// stands for ALiBi (its key position).
struct QueryRow {
  const void* q;
  void* out;
  size_t visible;
  float slope;
  int64_t position;
};

// --- The blocked kernel ------------------------------------------------------------------------
//
// Per block of kKeyBlock keys, the block's keys (transposed: kt[d][j]) and values (vb[j][d]) are
// converted to float once for the group, then two small matrix products run on registers: the
// scores s = q kt (rows x kKeyBlock) and, after the online softmax turned them into weights p,
// acc += p vb (rows x head_size). Both keep a tile of results in vector registers across the
// shared dimension (GCC vector extensions, kLanes floats wide), so that each loaded vector feeds
// several multiply-adds; compiled for AVX-512, AVX2 and the baseline (RunForIsa).

template <int kLanes>
struct FloatVector {
  typedef float Type __attribute__((vector_size(kLanes * sizeof(float))));
};
template <int kLanes>
using Vec = typename FloatVector<kLanes>::Type;

// Vectors move through pointers: a vector passed or returned by value in a function compiled for
// another ISA would change the calling convention (GCC's -Wpsabi).
template <int kLanes>
[[gnu::always_inline]] inline void LoadVec(Vec<kLanes>* v, const float* from) {
  std::memcpy(v, from, sizeof *v);
}

template <int kLanes>
[[gnu::always_inline]] inline void StoreVec(float* to, const Vec<kLanes>* v) {
  std::memcpy(to, v, sizeof *v);
}

// s[r][0, kKeyBlock) = sum over d of q[r][d] * kt[d][0, kKeyBlock), for kRows rows of q (scaled
// queries, head_size apart) and s (kKeyBlock apart).
template <int kLanes, int kRows>
[[gnu::always_inline]] inline void ScoreTile(const float* q, size_t head_size, const float* kt,
                                             float* s) {
  constexpr int kColumns = static_cast<int>(kKeyBlock) / kLanes;
  Vec<kLanes> acc[kRows][kColumns] = {};
  for (size_t d = 0; d < head_size; ++d) {
    Vec<kLanes> k[kColumns];
    for (int c = 0; c < kColumns; ++c) LoadVec<kLanes>(&k[c], kt + d * kKeyBlock + c * kLanes);
    for (int r = 0; r < kRows; ++r) {
      const Vec<kLanes> qv = Vec<kLanes>{} + q[r * head_size + d];
      for (int c = 0; c < kColumns; ++c) acc[r][c] += qv * k[c];
    }
  }
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kColumns; ++c) StoreVec<kLanes>(s + r * kKeyBlock + c * kLanes, &acc[r][c]);
  }
}

// As many rows per tile as keep the tile's accumulators within 16 vector registers.
template <int kLanes>
constexpr int kScoreRows = std::max(1, 16 / (static_cast<int>(kKeyBlock) / kLanes));

template <int kLanes>
[[gnu::always_inline]] inline void Scores(const float* q, size_t rows, size_t head_size,
                                          const float* kt, float* s) {
  constexpr int kRows = kScoreRows<kLanes>;
  size_t r = 0;
  for (; r + kRows <= rows; r += kRows) {
    ScoreTile<kLanes, kRows>(q + r * head_size, head_size, kt, s + r * kKeyBlock);
  }
  for (; r < rows; ++r) ScoreTile<kLanes, 1>(q + r * head_size, head_size, kt, s + r * kKeyBlock);
}

// s[r][j] = q[r] . kb[j] for j < n, from the keys row by row (kb[j][d]): for a group of one or
// two rows (a decode step without grouped heads), where transposing the block would cost more
// than the products. Two vector accumulators per key hide the multiply-add's latency.
template <int kLanes>
[[gnu::always_inline]] inline void ScoresByRow(const float* q, size_t rows, size_t head_size,
                                               const float* kb, size_t n, float* s) {
  const size_t vectors = head_size / kLanes;
  for (size_t r = 0; r < rows; ++r) {
    const float* qr = q + r * head_size;
    for (size_t j = 0; j < n; ++j) {
      const float* k = kb + j * head_size;
      Vec<kLanes> even = {}, odd = {}, a, b;
      size_t c = 0;
      for (; c + 2 <= vectors; c += 2) {
        LoadVec<kLanes>(&a, qr + c * kLanes);
        LoadVec<kLanes>(&b, k + c * kLanes);
        even += a * b;
        LoadVec<kLanes>(&a, qr + (c + 1) * kLanes);
        LoadVec<kLanes>(&b, k + (c + 1) * kLanes);
        odd += a * b;
      }
      if (c < vectors) {
        LoadVec<kLanes>(&a, qr + c * kLanes);
        LoadVec<kLanes>(&b, k + c * kLanes);
        even += a * b;
      }
      even += odd;
      float dot = 0;
      for (int l = 0; l < kLanes; ++l) dot += even[l];
      for (size_t d = vectors * kLanes; d < head_size; ++d) dot += qr[d] * k[d];
      s[r * kKeyBlock + j] = dot;
    }
  }
}

// The most rows a group scores key by key (ScoresByRow) rather than through the transposed block.
constexpr size_t kRowsScoredByRow = 2;

// acc[r][d0, d0 + kColumns * kLanes) += sum over j < n of p[r][j] * vb[j][same], kRows rows.
template <int kLanes, int kRows, int kColumns>
[[gnu::always_inline]] inline void AccumulateTile(const float* p, size_t n, const float* vb,
                                                  size_t head_size, float* acc, size_t d0) {
  Vec<kLanes> a[kRows][kColumns];
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kColumns; ++c)
      LoadVec<kLanes>(&a[r][c], acc + r * head_size + d0 + c * kLanes);
  }
  for (size_t j = 0; j < n; ++j) {
    Vec<kLanes> v[kColumns];
    for (int c = 0; c < kColumns; ++c) LoadVec<kLanes>(&v[c], vb + j * head_size + d0 + c * kLanes);
    for (int r = 0; r < kRows; ++r) {
      const Vec<kLanes> pv = Vec<kLanes>{} + p[r * kKeyBlock + j];
      for (int c = 0; c < kColumns; ++c) a[r][c] += pv * v[c];
    }
  }
  for (int r = 0; r < kRows; ++r) {
    for (int c = 0; c < kColumns; ++c)
      StoreVec<kLanes>(acc + r * head_size + d0 + c * kLanes, &a[r][c]);
  }
}

// acc[r][d] (rows x head_size) += sum over j < n of p[r][j] * vb[j][d]: tiles of 4 rows by 4
// vectors of d, then what is left of d one vector, then one float at a time.
template <int kLanes>
[[gnu::always_inline]] inline void Accumulate(const float* p, size_t rows, size_t n,
                                              const float* vb, size_t head_size, float* acc) {
  constexpr size_t kWide = 4 * kLanes;
  for (size_t r = 0; r < rows;) {
    const float* pr = p + r * kKeyBlock;
    float* ar = acc + r * head_size;
    size_t d0 = 0;
    if (r + 4 <= rows) {
      for (; d0 + kWide <= head_size; d0 += kWide) {
        AccumulateTile<kLanes, 4, 4>(pr, n, vb, head_size, ar, d0);
      }
      for (; d0 + kLanes <= head_size; d0 += kLanes) {
        AccumulateTile<kLanes, 4, 1>(pr, n, vb, head_size, ar, d0);
      }
      for (size_t rr = 0; rr < 4; ++rr) {
        for (size_t d = d0; d < head_size; ++d) {
          for (size_t j = 0; j < n; ++j)
            ar[rr * head_size + d] += pr[rr * kKeyBlock + j] * vb[j * head_size + d];
        }
      }
      r += 4;
      continue;
    }
    for (; d0 + kWide <= head_size; d0 += kWide)
      AccumulateTile<kLanes, 1, 4>(pr, n, vb, head_size, ar, d0);
    for (; d0 + kLanes <= head_size; d0 += kLanes)
      AccumulateTile<kLanes, 1, 1>(pr, n, vb, head_size, ar, d0);
    for (size_t d = d0; d < head_size; ++d) {
      for (size_t j = 0; j < n; ++j) ar[d] += pr[j] * vb[j * head_size + d];
    }
    r += 1;
  }
}

// The online softmax of a row's scores s[0, n) (keys first to first + n - 1) against its running
// max and sum: s becomes the weights p (0 past n, up to kKeyBlock), and the row's accumulator is
// scaled to the new max.
[[gnu::always_inline]] inline void SoftmaxStep(const QueryRow& row, size_t first, size_t n,
                                               float* s, float* acc, size_t head_size, float* max,
                                               float* sum) {
  if (row.slope != 0) {
    for (size_t j = 0; j < n; ++j) {
      s[j] += row.slope * static_cast<float>(static_cast<int64_t>(first + j) - row.position);
    }
  }
  float block_max = -std::numeric_limits<float>::infinity();
  for (size_t j = 0; j < n; ++j) block_max = std::max(block_max, s[j]);
  const float new_max = std::max(*max, block_max);
  const float correction = ExpOfNonPositive(*max - new_max);  // 0 for the first block
  float block_sum = 0;
  for (size_t j = 0; j < n; ++j) {
    s[j] = ExpOfNonPositive(s[j] - new_max);
    block_sum += s[j];
  }
  for (size_t j = n; j < kKeyBlock; ++j) s[j] = 0;
  for (size_t d = 0; d < head_size; ++d) acc[d] *= correction;
  *sum = *sum * correction + block_sum;
  *max = new_max;
}

// The online softmax of a group of rows over one kv head's keys. key(j) and value(j) give key
// and value j's head_size elements.
template <int kLanes, class T, class Keys, class Values>
[[gnu::always_inline]] inline void AttendGroupWith(const QueryRow* rows, size_t count,
                                                   size_t head_size, float scale, Keys key,
                                                   Values value) {
  std::vector<float> queries(count * head_size), acc(count * head_size, 0.0f);
  std::vector<float> max(count, -std::numeric_limits<float>::infinity()), sum(count, 0.0f);
  // The block's keys: transposed (kt[d][j]) for the tiles, or as rows (kb[j][d]) for few rows.
  const bool by_row = count <= kRowsScoredByRow;
  std::vector<float> kt(head_size * kKeyBlock, 0.0f), vb(kKeyBlock * head_size);
  std::vector<float> s(count * kKeyBlock);
  size_t most = 0;
  for (size_t r = 0; r < count; ++r) {
    const T* q = static_cast<const T*>(rows[r].q);
    for (size_t d = 0; d < head_size; ++d) queries[r * head_size + d] = Load(q[d]) * scale;
    most = std::max(most, rows[r].visible);
  }
  for (size_t first = 0; first < most; first += kKeyBlock) {
    const size_t n = std::min(kKeyBlock, most - first);
    for (size_t j = 0; j < n; ++j) {
      const T* k = key(first + j);
      const T* v = value(first + j);
      if (by_row) {
        for (size_t d = 0; d < head_size; ++d) kt[j * head_size + d] = Load(k[d]);
      } else {
        for (size_t d = 0; d < head_size; ++d) kt[d * kKeyBlock + j] = Load(k[d]);
      }
      for (size_t d = 0; d < head_size; ++d) vb[j * head_size + d] = Load(v[d]);
    }
    if (by_row) {
      ScoresByRow<kLanes>(queries.data(), count, head_size, kt.data(), n, s.data());
    } else {
      if (n < kKeyBlock) {  // the last block: no stale keys in the columns past it
        for (size_t d = 0; d < head_size; ++d) {
          std::fill(&kt[d * kKeyBlock + n], &kt[(d + 1) * kKeyBlock], 0.0f);
        }
      }
      Scores<kLanes>(queries.data(), count, head_size, kt.data(), s.data());
    }
    for (size_t r = 0; r < count; ++r) {
      float* sr = &s[r * kKeyBlock];
      if (rows[r].visible <= first) {  // done: this block adds nothing to it
        std::fill(sr, sr + kKeyBlock, 0.0f);
        continue;
      }
      SoftmaxStep(rows[r], first, std::min(n, rows[r].visible - first), sr, &acc[r * head_size],
                  head_size, &max[r], &sum[r]);
    }
    Accumulate<kLanes>(s.data(), count, n, vb.data(), head_size, acc.data());
  }
  for (size_t r = 0; r < count; ++r) {
    T* out = static_cast<T*>(rows[r].out);
    const float inverse = sum[r] > 0 ? 1.0f / sum[r] : 0.0f;  // no key seen: 0
    for (size_t d = 0; d < head_size; ++d) out[d] = Store<T>(acc[r * head_size + d] * inverse);
  }
}

template <class T, class Keys, class Values>
void AttendGroupBaseline(const QueryRow* rows, size_t count, size_t head_size, float scale,
                         Keys key, Values value) {
  AttendGroupWith<4, T>(rows, count, head_size, scale, key, value);
}

#if INFINIOP_CPU_HAS_X86_KERNELS
template <class T, class Keys, class Values>
INFINIOP_CPU_TARGET_AVX2 void AttendGroupAvx2(const QueryRow* rows, size_t count, size_t head_size,
                                              float scale, Keys key, Values value) {
  AttendGroupWith<8, T>(rows, count, head_size, scale, key, value);
}

template <class T, class Keys, class Values>
INFINIOP_CPU_TARGET_AVX512 void AttendGroupAvx512(const QueryRow* rows, size_t count,
                                                  size_t head_size, float scale, Keys key,
                                                  Values value) {
  AttendGroupWith<16, T>(rows, count, head_size, scale, key, value);
}
#endif

template <class T, class Keys, class Values>
void AttendGroup(const std::vector<QueryRow>& rows, size_t head_size, float scale, Keys key,
                 Values value) {
  RunForIsa(INFINIOP_CPU_X86_ONLY(&AttendGroupAvx512<T, Keys, Values>),
            INFINIOP_CPU_X86_ONLY(&AttendGroupAvx2<T, Keys, Values>),
            &AttendGroupBaseline<T, Keys, Values>, rows.data(), rows.size(), head_size, scale, key,
            value);
}

// Fills a row's output with NaN: its sequence's indices did not fit.
template <class T>
void MarkInvalid(void* out, size_t head_size) {
  T* row = static_cast<T*>(out);
  for (size_t d = 0; d < head_size; ++d) {
    row[d] = Store<T>(std::numeric_limits<float>::quiet_NaN());
  }
}

template <class T>
char* At(void* base, ptrdiff_t offset) {
  return reinterpret_cast<char*>(static_cast<T*>(base) + offset);
}

// --- Paged caches ------------------------------------------------------------------------------

// Key or value j of kv head h of a sequence, through its block table row.
template <class T>
struct PagedRows {
  const T* cache;
  const Strided* geometry;  // [blocks, kv_heads, block_size, head_size]
  const int64_t* blocks;    // the sequence's block ids, checked
  size_t head;
  const T* operator()(size_t j) const {
    const size_t block_size = geometry->shape[2];
    return cache + blocks[j / block_size] * geometry->strides[0] +
           static_cast<ptrdiff_t>(head) * geometry->strides[1] +
           static_cast<ptrdiff_t>(j % block_size) * geometry->strides[2];
  }
};

// The paged attention forms: tensors (out, q, k_cache, v_cache, block_tables, seq_lens,
// [cum_seq_lens_q,] alibi_slopes). Prefill when cum_seq_lens_q is there.
template <class T>
class PagedAttentionPlan final : public Plan {
 public:
  PagedAttentionPlan(const infiniopBackendTensor* tensors, bool prefill, float scale)
      : Plan(prefill ? 8 : 7, tensors[1].shape[0] == 0, /*uses_run_params=*/false),
        prefill_(prefill),
        scale_(scale) {
    for (size_t t = 0; t < (prefill ? 8u : 7u); ++t) {
      if (tensors[t].dtype != INFINI_DTYPE_INVALID) geometry_[t] = Geometry(tensors[t]);
    }
    has_alibi_ = tensors[prefill ? 7 : 6].dtype != INFINI_DTYPE_INVALID;
  }

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    const Strided &out = geometry_[0], &q = geometry_[1], &cache = geometry_[2];
    const size_t seqs = geometry_[5].shape[0];
    const size_t heads = q.shape[1], kv_heads = cache.shape[1], head_size = q.shape[2];
    const size_t group = heads / kv_heads;
    // Per sequence: its first query row, its query count, its length and its checked blocks.
    std::vector<size_t> first_row(seqs), query_count(seqs), length(seqs);
    std::vector<std::vector<int64_t>> blocks(seqs);
    std::vector<bool> valid(seqs);
    for (size_t s = 0; s < seqs; ++s) {
      valid[s] = ReadSequence(buffers, s, &first_row[s], &query_count[s], &length[s], &blocks[s]);
    }
    // Tasks: (sequence, kv head, first token, end token).
    struct Task {
      size_t seq, head, begin, end;
    };
    std::vector<Task> tasks;
    for (size_t s = 0; s < seqs; ++s) {
      for (size_t h = 0; h < kv_heads; ++h) {
        for (size_t t = 0; t < query_count[s]; t += kTokensPerTask) {
          tasks.push_back({s, h, t, std::min(query_count[s], t + kTokensPerTask)});
        }
      }
    }
    const float* slopes =
        has_alibi_ ? static_cast<const float*>(buffers[prefill_ ? 7 : 6]) : nullptr;
    const ptrdiff_t slope_stride = has_alibi_ ? geometry_[prefill_ ? 7 : 6].strides[0] : 0;
    const size_t grain = std::max<size_t>(1, kParallelGrain / std::max<size_t>(1, head_size * 64));
    ParallelFor(tasks.size(), grain, [&](size_t begin, size_t end) {
      std::vector<QueryRow> rows;
      for (size_t i = begin; i < end; ++i) {
        const Task& task = tasks[i];
        rows.clear();
        for (size_t t = task.begin; t < task.end; ++t) {
          const size_t row = first_row[task.seq] + t;
          // Query t of q_len sees keys 0 .. length - q_len + t.
          const size_t visible = length[task.seq] - query_count[task.seq] + t + 1;
          for (size_t g = 0; g < group; ++g) {
            const size_t h = task.head * group + g;
            const ptrdiff_t q_offset = static_cast<ptrdiff_t>(row) * q.strides[0] +
                                       static_cast<ptrdiff_t>(h) * q.strides[1];
            const ptrdiff_t out_offset = static_cast<ptrdiff_t>(row) * out.strides[0] +
                                         static_cast<ptrdiff_t>(h) * out.strides[1];
            const float slope =
                slopes != nullptr ? slopes[static_cast<ptrdiff_t>(h) * slope_stride] : 0.0f;
            rows.push_back({At<T>(buffers[1], q_offset), At<T>(buffers[0], out_offset), visible,
                            slope, static_cast<int64_t>(visible) - 1});
          }
        }
        if (!valid[task.seq]) {
          for (const QueryRow& row : rows) MarkInvalid<T>(row.out, head_size);
          continue;
        }
        const PagedRows<T> keys{static_cast<const T*>(buffers[2]), &geometry_[2],
                                blocks[task.seq].data(), task.head};
        const PagedRows<T> values{static_cast<const T*>(buffers[3]), &geometry_[3],
                                  blocks[task.seq].data(), task.head};
        AttendGroup<T>(rows, head_size, scale_, keys, values);
      }
    });
  }

 private:
  // Sequence s's query rows, length and block ids, read from the index tensors; false (its rows
  // then get NaN) when they do not fit: a length past its block table or below its query count,
  // a block id outside the cache, a query range outside q.
  bool ReadSequence(const Buffers& buffers, size_t s, size_t* first_row, size_t* queries,
                    size_t* length, std::vector<int64_t>* blocks) const {
    const Strided &q = geometry_[1], &cache = geometry_[2], &tables = geometry_[4],
                  &lengths = geometry_[5];
    const size_t rows = q.shape[0];
    int64_t first = static_cast<int64_t>(s), end = first + 1;
    if (prefill_) {
      const Strided& cum = geometry_[6];
      first = ReadIndex(buffers[6], cum.dtype, static_cast<ptrdiff_t>(s) * cum.strides[0]);
      end = ReadIndex(buffers[6], cum.dtype, static_cast<ptrdiff_t>(s + 1) * cum.strides[0]);
    }
    const int64_t seq_len =
        ReadIndex(buffers[5], lengths.dtype, static_cast<ptrdiff_t>(s) * lengths.strides[0]);
    const size_t block_size = cache.shape[2];
    const size_t max_blocks = tables.shape[1];
    *first_row = first >= 0 && first <= static_cast<int64_t>(rows) ? static_cast<size_t>(first) : 0;
    *queries =
        end >= first && end <= static_cast<int64_t>(rows) ? static_cast<size_t>(end - first) : 0;
    *length = 0;
    if (first < 0 || end < first || end > static_cast<int64_t>(rows)) return false;
    if (seq_len < end - first || static_cast<uint64_t>(seq_len) > max_blocks * block_size) {
      return false;
    }
    *length = static_cast<size_t>(seq_len);
    const size_t needed = (*length + block_size - 1) / block_size;
    blocks->resize(needed);
    for (size_t b = 0; b < needed; ++b) {
      const int64_t id = ReadIndex(buffers[4], tables.dtype,
                                   static_cast<ptrdiff_t>(s) * tables.strides[0] +
                                       static_cast<ptrdiff_t>(b) * tables.strides[1]);
      if (id < 0 || static_cast<uint64_t>(id) >= cache.shape[0]) return false;
      (*blocks)[b] = id;
    }
    return true;
  }

  bool prefill_;
  float scale_;
  bool has_alibi_ = false;
  Strided geometry_[8];
};

// PagedCaching: tensors (k_cache, v_cache, k, v, slot_mapping).
template <class T>
class PagedCachingPlan final : public Plan {
 public:
  explicit PagedCachingPlan(const infiniopBackendTensor* tensors)
      : Plan(5, tensors[2].shape[0] == 0, /*uses_run_params=*/false) {
    for (size_t t = 0; t < 5; ++t) geometry_[t] = Geometry(tensors[t]);
  }

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    const Strided &cache = geometry_[0], &k = geometry_[2], &slots = geometry_[4];
    const size_t tokens = k.shape[0], kv_heads = k.shape[1], head_size = k.shape[2];
    const size_t block_size = cache.shape[2], capacity = cache.shape[0] * block_size;
    ParallelFor(
        tokens, std::max<size_t>(1, kParallelGrain / (kv_heads * head_size)),
        [&](size_t begin, size_t end) {
          for (size_t t = begin; t < end; ++t) {
            const int64_t slot =
                ReadIndex(buffers[4], slots.dtype, static_cast<ptrdiff_t>(t) * slots.strides[0]);
            // Negative: padding. Past the cache: nothing to write to (see docs).
            if (slot < 0 || static_cast<uint64_t>(slot) >= capacity) continue;
            for (size_t which = 0; which < 2; ++which) {
              Copy(buffers, which, t, static_cast<size_t>(slot), kv_heads, head_size, block_size);
            }
          }
        });
  }

 private:
  void Copy(const Buffers& buffers, size_t which, size_t token, size_t slot, size_t kv_heads,
            size_t head_size, size_t block_size) const {
    const Strided &cache = geometry_[which], &source = geometry_[2 + which];
    T* destination = static_cast<T*>(buffers[which]);
    const T* from = static_cast<const T*>(buffers[2 + which]);
    const ptrdiff_t block = static_cast<ptrdiff_t>(slot / block_size);
    const ptrdiff_t offset = static_cast<ptrdiff_t>(slot % block_size);
    for (size_t h = 0; h < kv_heads; ++h) {
      T* row = destination + block * cache.strides[0] +
               static_cast<ptrdiff_t>(h) * cache.strides[1] + offset * cache.strides[2];
      const T* src = from + static_cast<ptrdiff_t>(token) * source.strides[0] +
                     static_cast<ptrdiff_t>(h) * source.strides[1];
      std::copy(src, src + head_size, row);
    }
  }

  Strided geometry_[5];
};

// --- FlashAttention ----------------------------------------------------------------------------

template <class T>
struct DenseRows {
  const T* base;  // batch b, kv head h, key 0
  ptrdiff_t stride;
  const T* operator()(size_t j) const { return base + static_cast<ptrdiff_t>(j) * stride; }
};

// Tensors (out, q, k, v, total_kv_len).
template <class T>
class FlashAttentionPlan final : public Plan {
 public:
  FlashAttentionPlan(const infiniopBackendTensor* tensors, float scale, bool causal)
      : Plan(5, tensors[1].shape[0] == 0 || tensors[1].shape[2] == 0, /*uses_run_params=*/false),
        scale_(scale),
        causal_(causal) {
    for (size_t t = 0; t < 5; ++t) geometry_[t] = Geometry(tensors[t]);
  }

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    const Strided &out = geometry_[0], &q = geometry_[1], &k = geometry_[2], &v = geometry_[3],
                  &lengths = geometry_[4];
    const size_t batch = q.shape[0], heads = q.shape[1], q_len = q.shape[2], head_size = q.shape[3],
                 kv_heads = k.shape[1], kv_len = k.shape[2];
    const size_t group = heads / kv_heads;
    const size_t chunks = (q_len + kTokensPerTask - 1) / kTokensPerTask;
    const size_t grain = std::max<size_t>(1, kParallelGrain / std::max<size_t>(1, head_size * 64));
    ParallelFor(batch * kv_heads * chunks, grain, [&](size_t begin, size_t end) {
      std::vector<QueryRow> rows;
      for (size_t task = begin; task < end; ++task) {
        const size_t b = task / (kv_heads * chunks), h = task / chunks % kv_heads,
                     chunk = task % chunks;
        const int64_t total =
            ReadIndex(buffers[4], lengths.dtype, static_cast<ptrdiff_t>(b) * lengths.strides[0]);
        const bool valid = total >= 0 && static_cast<uint64_t>(total) <= kv_len;
        const int64_t keys = valid ? total : 0;
        rows.clear();
        for (size_t i = chunk * kTokensPerTask; i < std::min(q_len, (chunk + 1) * kTokensPerTask);
             ++i) {
          // Causal: query i sees keys up to total - q_len + i (none when that is negative).
          const int64_t bound =
              causal_ ? keys - static_cast<int64_t>(q_len) + static_cast<int64_t>(i) + 1 : keys;
          const size_t visible = static_cast<size_t>(std::clamp<int64_t>(bound, 0, keys));
          for (size_t g = 0; g < group; ++g) {
            const size_t head = h * group + g;
            const ptrdiff_t q_offset = static_cast<ptrdiff_t>(b) * q.strides[0] +
                                       static_cast<ptrdiff_t>(head) * q.strides[1] +
                                       static_cast<ptrdiff_t>(i) * q.strides[2];
            const ptrdiff_t out_offset = static_cast<ptrdiff_t>(b) * out.strides[0] +
                                         static_cast<ptrdiff_t>(head) * out.strides[1] +
                                         static_cast<ptrdiff_t>(i) * out.strides[2];
            rows.push_back(
                {At<T>(buffers[1], q_offset), At<T>(buffers[0], out_offset), visible, 0.0f, 0});
          }
        }
        if (!valid) {
          for (const QueryRow& row : rows) MarkInvalid<T>(row.out, head_size);
          continue;
        }
        const ptrdiff_t k_base =
            static_cast<ptrdiff_t>(b) * k.strides[0] + static_cast<ptrdiff_t>(h) * k.strides[1];
        const ptrdiff_t v_base =
            static_cast<ptrdiff_t>(b) * v.strides[0] + static_cast<ptrdiff_t>(h) * v.strides[1];
        AttendGroup<T>(rows, head_size, scale_,
                       DenseRows<T>{static_cast<const T*>(buffers[2]) + k_base, k.strides[2]},
                       DenseRows<T>{static_cast<const T*>(buffers[3]) + v_base, v.strides[2]});
      }
    });
  }

 private:
  float scale_;
  bool causal_;
  Strided geometry_[5];
};

// --- Contiguous caches: KVCaching and Attention --------------------------------------------

// Copies k[.., s, :] of `source` (rows along stride source_step) into rows `at` + s of `cache`.
template <class T>
void CopyRows(T* cache, ptrdiff_t cache_row, ptrdiff_t cache_col, const T* source,
              ptrdiff_t source_row, ptrdiff_t source_col, size_t rows, size_t head_size) {
  for (size_t r = 0; r < rows; ++r) {
    for (size_t d = 0; d < head_size; ++d) {
      cache[static_cast<ptrdiff_t>(r) * cache_row + static_cast<ptrdiff_t>(d) * cache_col] =
          source[static_cast<ptrdiff_t>(r) * source_row + static_cast<ptrdiff_t>(d) * source_col];
    }
  }
}

// KVCaching: tensors (k_cache, v_cache, k, v, past_kv_lengths), caches [batch, kv_heads, max_len,
// head_size]. A batch whose past length is negative or leaves no room for its tokens is skipped:
// there is no place to write it.
template <class T>
class KVCachingPlan final : public Plan {
 public:
  explicit KVCachingPlan(const infiniopBackendTensor* tensors)
      : Plan(5, tensors[2].shape[0] == 0 || tensors[2].shape[2] == 0, /*uses_run_params=*/false) {
    for (size_t t = 0; t < 5; ++t) geometry_[t] = Geometry(tensors[t]);
  }

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    const Strided &k = geometry_[2], &past = geometry_[4];
    const size_t batch = k.shape[0], kv_heads = k.shape[1], seq = k.shape[2];
    const size_t max_len = geometry_[0].shape[2];
    ParallelFor(batch * kv_heads, 1, [&](size_t begin, size_t end) {
      for (size_t task = begin; task < end; ++task) {
        const size_t b = task / kv_heads, h = task % kv_heads;
        const int64_t at =
            ReadIndex(buffers[4], past.dtype, static_cast<ptrdiff_t>(b) * past.strides[0]);
        if (at < 0 || static_cast<uint64_t>(at) + seq > max_len) continue;
        for (size_t which = 0; which < 2; ++which) {
          const Strided &cache = geometry_[which], &source = geometry_[2 + which];
          T* destination = static_cast<T*>(buffers[which]) +
                           static_cast<ptrdiff_t>(b) * cache.strides[0] +
                           static_cast<ptrdiff_t>(h) * cache.strides[1] + at * cache.strides[2];
          const T* from = static_cast<const T*>(buffers[2 + which]) +
                          static_cast<ptrdiff_t>(b) * source.strides[0] +
                          static_cast<ptrdiff_t>(h) * source.strides[1];
          CopyRows(destination, cache.strides[2], cache.strides[3], from, source.strides[2],
                   source.strides[3], seq, source.shape[3]);
        }
      }
    });
  }

 private:
  Strided geometry_[5];
};

// Attention: tensors (out, q, k, v, k_cache, v_cache): k and v written into the caches at pos,
// then each query i attends causally to the caches' first pos + i + 1 keys, scaled by
// 1 / sqrt(head_size).
template <class T>
class ContiguousAttentionPlan final : public Plan {
 public:
  ContiguousAttentionPlan(const infiniopBackendTensor* tensors, size_t pos)
      : Plan(6, tensors[1].shape[1] == 0, /*uses_run_params=*/false), pos_(pos) {
    for (size_t t = 0; t < 6; ++t) geometry_[t] = Geometry(tensors[t]);
  }

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    const Strided &out = geometry_[0], &q = geometry_[1], &k_cache = geometry_[4],
                  &v_cache = geometry_[5];
    const size_t heads = q.shape[0], seq = q.shape[1], head_size = q.shape[2];
    const size_t kv_heads = k_cache.shape[0], group = heads / kv_heads;
    for (size_t which = 0; which < 2; ++which) {
      const Strided &cache = geometry_[4 + which], &source = geometry_[2 + which];
      for (size_t h = 0; h < kv_heads; ++h) {
        CopyRows(static_cast<T*>(buffers[4 + which]) +
                     static_cast<ptrdiff_t>(h) * cache.strides[0] +
                     static_cast<ptrdiff_t>(pos_) * cache.strides[1],
                 cache.strides[1], cache.strides[2],
                 static_cast<const T*>(buffers[2 + which]) +
                     static_cast<ptrdiff_t>(h) * source.strides[0],
                 source.strides[1], source.strides[2], seq, head_size);
      }
    }
    const float scale = 1.0f / std::sqrt(static_cast<float>(head_size));
    const size_t chunks = (seq + kTokensPerTask - 1) / kTokensPerTask;
    ParallelFor(kv_heads * chunks, 1, [&](size_t begin, size_t end) {
      std::vector<QueryRow> rows;
      for (size_t task = begin; task < end; ++task) {
        const size_t h = task / chunks, chunk = task % chunks;
        rows.clear();
        for (size_t i = chunk * kTokensPerTask; i < std::min(seq, (chunk + 1) * kTokensPerTask);
             ++i) {
          for (size_t g = 0; g < group; ++g) {
            const size_t head = h * group + g;
            const ptrdiff_t q_offset = static_cast<ptrdiff_t>(head) * q.strides[0] +
                                       static_cast<ptrdiff_t>(i) * q.strides[1];
            const ptrdiff_t out_offset = static_cast<ptrdiff_t>(i) * out.strides[0] +
                                         static_cast<ptrdiff_t>(head) * out.strides[1];
            rows.push_back({At<T>(const_cast<void*>(buffers[1]), q_offset),
                            At<T>(buffers[0], out_offset), pos_ + i + 1, 0.0f, 0});
          }
        }
        AttendGroup<T>(rows, head_size, scale,
                       DenseRows<T>{static_cast<const T*>(buffers[4]) +
                                        static_cast<ptrdiff_t>(h) * k_cache.strides[0],
                                    k_cache.strides[1]},
                       DenseRows<T>{static_cast<const T*>(buffers[5]) +
                                        static_cast<ptrdiff_t>(h) * v_cache.strides[0],
                                    v_cache.strides[1]});
      }
    });
  }

 private:
  size_t pos_;
  Strided geometry_[6];
};

// Calls make(TypeTag<T>{}) for the attention dtypes (F16, BF16, F32).
template <class Make>
infiniStatus_t WithAttentionType(infiniDtype_t dtype, Make make) {
  if (dtype == INFINI_DTYPE_F64) return INFINI_STATUS_NOT_IMPLEMENTED;
  return WithFloatType(dtype, make);
}

bool IsIndexTensor(const infiniopBackendTensor& t) {
  return t.dtype == INFINI_DTYPE_I32 || t.dtype == INFINI_DTYPE_I64;
}

}  // namespace

infiniStatus_t MakePagedCachingPlan(const infiniopBackendTensor* tensors, PlanPtr* plan) {
  const infiniopBackendTensor &k_cache = tensors[0], &k = tensors[2], &slots = tensors[4];
  if (k_cache.ndim != 4 || k.ndim != 3 || slots.ndim != 1 || !IsIndexTensor(slots) ||
      k.shape[1] != k_cache.shape[1] || k.shape[2] != k_cache.shape[3] ||
      slots.shape[0] != k.shape[0] || !infiniop_backend::SameShape(tensors[0], tensors[1]) ||
      !infiniop_backend::SameShape(tensors[2], tensors[3])) {
    return INFINI_STATUS_BAD_PARAM;
  }
  return WithAttentionType(k.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    *plan = std::make_shared<PagedCachingPlan<T>>(tensors);
  });
}

infiniStatus_t MakePagedAttentionPlan(const infiniopBackendTensor* tensors, bool prefill,
                                      const infiniopBackendCreateParams* params, PlanPtr* plan) {
  if (params == nullptr) return INFINI_STATUS_NULL_POINTER;
  const infiniopBackendTensor &q = tensors[1], &cache = tensors[2], &tables = tensors[4],
                              &lengths = tensors[5];
  if (q.ndim != 3 || cache.ndim != 4 || tables.ndim != 2 || lengths.ndim != 1 ||
      cache.shape[1] == 0 || q.shape[1] % cache.shape[1] != 0 || q.shape[2] != cache.shape[3] ||
      !IsIndexTensor(tables) || !IsIndexTensor(lengths) ||
      (prefill && !IsIndexTensor(tensors[6]))) {
    return INFINI_STATUS_BAD_PARAM;
  }
  const float scale = params->scale;
  return WithAttentionType(q.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    *plan = std::make_shared<PagedAttentionPlan<T>>(tensors, prefill, scale);
  });
}

infiniStatus_t MakeKVCachingPlan(const infiniopBackendTensor* tensors, PlanPtr* plan) {
  const infiniopBackendTensor &k_cache = tensors[0], &k = tensors[2], &past = tensors[4];
  if (k_cache.ndim != 4 || k.ndim != 4 || past.ndim != 1 || past.dtype != INFINI_DTYPE_I64 ||
      k.shape[0] != k_cache.shape[0] || k.shape[1] != k_cache.shape[1] ||
      k.shape[3] != k_cache.shape[3] || !infiniop_backend::SameShape(tensors[0], tensors[1]) ||
      !infiniop_backend::SameShape(tensors[2], tensors[3])) {
    return INFINI_STATUS_BAD_PARAM;
  }
  return WithAttentionType(k.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    *plan = std::make_shared<KVCachingPlan<T>>(tensors);
  });
}

infiniStatus_t MakeAttentionPlan(const infiniopBackendTensor* tensors,
                                 const infiniopBackendCreateParams* params, PlanPtr* plan) {
  if (params == nullptr) return INFINI_STATUS_NULL_POINTER;
  const infiniopBackendTensor &q = tensors[1], &k = tensors[2], &k_cache = tensors[4];
  if (q.ndim != 3 || k.ndim != 3 || k_cache.ndim != 3 || k.shape[0] == 0 ||
      q.shape[0] % k.shape[0] != 0 || k_cache.shape[0] != k.shape[0] ||
      k_cache.shape[1] < params->pos + q.shape[1]) {
    return INFINI_STATUS_BAD_PARAM;
  }
  const size_t pos = params->pos;
  return WithAttentionType(q.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    *plan = std::make_shared<ContiguousAttentionPlan<T>>(tensors, pos);
  });
}

infiniStatus_t MakeFlashAttentionPlan(const infiniopBackendTensor* tensors,
                                      const infiniopBackendCreateParams* params, PlanPtr* plan) {
  if (params == nullptr) return INFINI_STATUS_NULL_POINTER;
  const infiniopBackendTensor &q = tensors[1], &k = tensors[2], &lengths = tensors[4];
  if (q.ndim != 4 || k.ndim != 4 || lengths.ndim != 1 || k.shape[1] == 0 ||
      q.shape[1] % k.shape[1] != 0 || lengths.dtype != INFINI_DTYPE_I64) {
    return INFINI_STATUS_BAD_PARAM;
  }
  const float scale = params->scale;
  const bool causal = params->is_causal != 0;
  return WithAttentionType(q.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    *plan = std::make_shared<FlashAttentionPlan<T>>(tensors, scale, causal);
  });
}

}  // namespace infinirt::infiniop_cpu
