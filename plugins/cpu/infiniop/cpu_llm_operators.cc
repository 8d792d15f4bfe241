// RMSNorm, CausalSoftmax, RoPE and RandomSample on the host: the plans that cpu_operators.cc's
// Create makes and its Run queues as host functions.
//
// libinfiniop has validated every descriptor against the operator's rules before Create sees it.
// The checks here are only what computing safely needs: a tensor breaking the
// shapes an operator relies on is refused with BAD_PARAM, and a dtype or a layout the plans do not
// compute (a last dimension that is not contiguous, for RMSNorm and RoPE) with NOT_IMPLEMENTED.
// F16 and BF16 compute in float and F64 in double; each output element is rounded once.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <exception>
#include <limits>
#include <memory>
#include <mutex>
#include <type_traits>
#include <vector>

#include "cpu_common.h"
#include "cpu_isa.h"
#include "cpu_parallel.h"
#include "infiniop/ops/rope.h"
#include "infiniop_backend.h"
#include "infiniop_backend_support.h"

namespace infinirt::infiniop_cpu {

namespace {

// The offset, in elements, of `index` steps of `stride`.
ptrdiff_t Step(size_t index, ptrdiff_t stride) { return static_cast<ptrdiff_t>(index) * stride; }

template <class T>
T* At(void* buffer, ptrdiff_t offset) {
  return static_cast<T*>(buffer) + offset;
}

using infiniop_backend::SameShape;

// --- RMSNorm -----------------------------------------------------------------------------------

using infiniop_backend::NormRows;

// y_j = x_j * w_j / sqrt(sum(x^2) / dim + epsilon) on each row; in place (y is x) works, as each
// row is read whole before it is written.
// The sum of the squares of a contiguous row, in kBlock running totals (cpu_common.h).
template <class T>
[[gnu::always_inline]] inline ValueOf<T> SumOfSquares(const T* x, size_t length) {
  using V = ValueOf<T>;
  V lanes[kBlock] = {};
  size_t j = 0;
  for (; j + kBlock <= length; j += kBlock) {
    for (size_t k = 0; k < kBlock; ++k) {
      const V value = Load(x[j + k]);
      lanes[k] += value * value;
    }
  }
  V sum = 0;
  for (size_t k = 0; k < kBlock; ++k) sum += lanes[k];
  for (; j < length; ++j) {
    const V value = Load(x[j]);
    sum += value * value;
  }
  return sum;
}

// One row of RMSNorm. Always inlined, so that each version below compiles it for its own
// instructions.
template <class T, class W>
[[gnu::always_inline]] inline void NormRowLoop(T* y, const T* x, const W* w, size_t dim,
                                               ValueOf<T> epsilon) {
  using V = ValueOf<T>;
  const V rms = V(1) / std::sqrt(SumOfSquares(x, dim) / static_cast<V>(dim) + epsilon);
  // One loop declared free of dependences (y is x or apart from it), as ContiguousLoop's.
  INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
  for (size_t j = 0; j < dim; ++j) y[j] = Store<T>(Load(x[j]) * static_cast<V>(Load(w[j])) * rms);
}

template <class T, class W>
void NormRowBaseline(T* y, const T* x, const W* w, size_t dim, ValueOf<T> epsilon) {
  NormRowLoop(y, x, w, dim, epsilon);
}

#if INFINIOP_CPU_HAS_X86_KERNELS
template <class T, class W>
INFINIOP_CPU_TARGET_AVX2 void NormRowAvx2(T* y, const T* x, const W* w, size_t dim,
                                          ValueOf<T> epsilon) {
  NormRowLoop(y, x, w, dim, epsilon);
}

template <class T, class W>
INFINIOP_CPU_TARGET_AVX512 void NormRowAvx512(T* y, const T* x, const W* w, size_t dim,
                                              ValueOf<T> epsilon) {
  NormRowLoop(y, x, w, dim, epsilon);
}
#endif

// The row's version for the selected instructions (cpu_isa.h).
template <class T, class W>
void NormRow(T* y, const T* x, const W* w, size_t dim, ValueOf<T> epsilon) {
  RunForIsa(INFINIOP_CPU_X86_ONLY(&NormRowAvx512<T, W>), INFINIOP_CPU_X86_ONLY(&NormRowAvx2<T, W>),
            &NormRowBaseline<T, W>, y, x, w, dim, epsilon);
}

template <class T, class W>
class RMSNormPlan final : public Plan {
 public:
  explicit RMSNormPlan(const NormRows& rows)
      : Plan(3, rows.batch == 0 || rows.nhead == 0 || rows.dim == 0, /*uses_run_params=*/false),
        rows_(rows) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    using V = ValueOf<T>;
    const size_t dim = rows_.dim;
    const V epsilon = static_cast<V>(rows_.epsilon);
    const W* w = static_cast<const W*>(buffers[2]);
    const size_t row_grain = std::max<size_t>(1, kParallelGrain / dim);
    ParallelFor(rows_.batch * rows_.nhead, row_grain, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const size_t b = r / rows_.nhead, h = r % rows_.nhead;
        T* y = At<T>(buffers[0], Step(b, rows_.y_strides[0]) + Step(h, rows_.y_strides[1]));
        const T* x = At<T>(buffers[1], Step(b, rows_.x_strides[0]) + Step(h, rows_.x_strides[1]));
        NormRow(y, x, w, dim, epsilon);
      }
    });
  }

 private:
  NormRows rows_;
};

// x in F16 or BF16: w in F16, BF16 or F32.
template <class T>
infiniStatus_t MakeHalfRMSNorm(infiniDtype_t w_dtype, const NormRows& rows, PlanPtr* plan) {
  switch (w_dtype) {
    case INFINI_DTYPE_F16:
      *plan = std::make_shared<RMSNormPlan<T, Half>>(rows);
      return INFINI_STATUS_SUCCESS;
    case INFINI_DTYPE_BF16:
      *plan = std::make_shared<RMSNormPlan<T, BFloat16>>(rows);
      return INFINI_STATUS_SUCCESS;
    case INFINI_DTYPE_F32:
      *plan = std::make_shared<RMSNormPlan<T, float>>(rows);
      return INFINI_STATUS_SUCCESS;
    default:
      return INFINI_STATUS_NOT_IMPLEMENTED;
  }
}

// --- CausalSoftmax -----------------------------------------------------------------------------

using infiniop_backend::SoftmaxRows;

// Row i sees the columns j <= total_seq_len - seq_len + i; the others become 0. exp is computed
// twice per visible column (for the sum, then for the output) rather than kept in a buffer, so
// that a call allocates nothing, and in place (y is x) works: each element is read before it is
// written.
template <class T>
class CausalSoftmaxPlan final : public Plan {
 public:
  explicit CausalSoftmaxPlan(const SoftmaxRows& rows)
      : Plan(2, rows.batch == 0 || rows.seq_len == 0 || rows.total_seq_len == 0,
             /*uses_run_params=*/false),
        rows_(rows) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    using V = ValueOf<T>;
    const size_t total = rows_.total_seq_len;
    const ptrdiff_t y_step = rows_.y_strides[2];
    const ptrdiff_t x_step = rows_.x_strides[2];
    const size_t row_grain = std::max<size_t>(1, kParallelGrain / total);
    ParallelFor(rows_.batch * rows_.seq_len, row_grain, [&](size_t begin, size_t end) {
      for (size_t r = begin; r < end; ++r) {
        const size_t b = r / rows_.seq_len, i = r % rows_.seq_len;
        T* y = At<T>(buffers[0], Step(b, rows_.y_strides[0]) + Step(i, rows_.y_strides[1]));
        const T* x = At<T>(buffers[1], Step(b, rows_.x_strides[0]) + Step(i, rows_.x_strides[1]));
        const size_t visible = total - rows_.seq_len + i + 1;  // 1 to total
        if (x_step == 1 && y_step == 1) {  // the usual rows: the vectorised line
          SoftmaxContiguous(y, x, visible);
          std::fill(y + visible, y + total, Store<T>(V(0)));
          continue;
        }
        V max = Load(x[0]);
        for (size_t j = 1; j < visible; ++j) max = std::max(max, Load(x[Step(j, x_step)]));
        V sum = 0;
        for (size_t j = 0; j < visible; ++j) sum += std::exp(Load(x[Step(j, x_step)]) - max);
        for (size_t j = 0; j < visible; ++j) {
          y[Step(j, y_step)] = Store<T>(std::exp(Load(x[Step(j, x_step)]) - max) / sum);
        }
        for (size_t j = visible; j < total; ++j) y[Step(j, y_step)] = Store<T>(V(0));
      }
    });
  }

 private:
  SoftmaxRows rows_;
};

// --- RoPE --------------------------------------------------------------------------------------

// Reads pos_ids[offset] and answers whether it names a row of the tables, [0, table_len).
using PositionFn = bool (*)(const void* pos_ids, ptrdiff_t offset, size_t table_len, size_t* row);

template <class I>
bool PositionAt(const void* pos_ids, ptrdiff_t offset, size_t table_len, size_t* row) {
  const I value = static_cast<const I*>(pos_ids)[offset];
  if constexpr (std::is_signed_v<I>) {
    if (value < 0) return false;
  }
  const uint64_t position = static_cast<uint64_t>(value);
  if (position >= table_len) return false;
  *row = static_cast<size_t>(position);
  return true;
}

PositionFn PositionFor(infiniDtype_t dtype) {
  switch (dtype) {
    case INFINI_DTYPE_I8:
      return &PositionAt<int8_t>;
    case INFINI_DTYPE_I16:
      return &PositionAt<int16_t>;
    case INFINI_DTYPE_I32:
      return &PositionAt<int32_t>;
    case INFINI_DTYPE_I64:
      return &PositionAt<int64_t>;
    case INFINI_DTYPE_U8:
      return &PositionAt<uint8_t>;
    case INFINI_DTYPE_U16:
      return &PositionAt<uint16_t>;
    case INFINI_DTYPE_U32:
      return &PositionAt<uint32_t>;
    case INFINI_DTYPE_U64:
      return &PositionAt<uint64_t>;
    default:
      return nullptr;
  }
}

// RoPE's tensors as every backend reads them (infiniop_backend_support.h), and the reader of the
// positions' integer type.
struct RoPEShape : infiniop_backend::RoPELayout {
  PositionFn position = nullptr;
};

// Rotates the pairs (a0, a1) of each head of each token by the sin and cos of its position:
// GPT-J pairs neighbours (2i, 2i + 1), GPT-NeoX the halves (i, i + dhead / 2). Both of a pair
// are read before either is written, so in place (y is x) works.
//
// A position outside [0, table_len) has no row of the tables to rotate by: that token's rows of y
// are left unchanged (not written at all, so for y apart from x not a copy of x either) rather
// than reading out of bounds.
template <class T, bool kNeox>
class RoPEPlan final : public Plan {
 public:
  explicit RoPEPlan(const RoPEShape& shape)
      : Plan(5, shape.batch == 0 || shape.seq_len == 0 || shape.nhead == 0 || shape.half == 0,
             /*uses_run_params=*/false),
        shape_(shape) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    using V = ValueOf<T>;
    const RoPEShape& s = shape_;
    const size_t token_grain = std::max<size_t>(1, kParallelGrain / (2 * s.nhead * s.half));
    ParallelFor(s.batch * s.seq_len, token_grain, [&](size_t begin, size_t end) {
      for (size_t token = begin; token < end; ++token) {
        const size_t b = token / s.seq_len, t = token % s.seq_len;
        size_t row;
        const ptrdiff_t pos_offset = Step(b, s.pos_strides[0]) + Step(t, s.pos_strides[1]);
        if (!s.position(buffers[2], pos_offset, s.table_len, &row)) continue;  // see above
        const T* sin_row = At<T>(buffers[3], Step(row, s.sin_row_stride));
        const T* cos_row = At<T>(buffers[4], Step(row, s.cos_row_stride));
        for (size_t h = 0; h < s.nhead; ++h) {
          T* y = At<T>(buffers[0],
                       Step(b, s.y_strides[0]) + Step(t, s.y_strides[1]) + Step(h, s.y_strides[2]));
          const T* x = At<T>(buffers[1], Step(b, s.x_strides[0]) + Step(t, s.x_strides[1]) +
                                             Step(h, s.x_strides[2]));
          for (size_t i = 0; i < s.half; ++i) {
            const size_t a0 = kNeox ? i : 2 * i;
            const size_t a1 = kNeox ? i + s.half : 2 * i + 1;
            const V x0 = Load(x[a0]);
            const V x1 = Load(x[a1]);
            const V sin_i = Load(sin_row[i]);
            const V cos_i = Load(cos_row[i]);
            y[a0] = Store<T>(x0 * cos_i - x1 * sin_i);
            y[a1] = Store<T>(x0 * sin_i + x1 * cos_i);
          }
        }
      }
    });
  }

 private:
  RoPEShape shape_;
};

template <class T>
PlanPtr MakeRoPEOf(const RoPEShape& shape, bool neox) {
  if (neox) return std::make_shared<RoPEPlan<T, true>>(shape);
  return std::make_shared<RoPEPlan<T, false>>(shape);
}

// --- RandomSample ------------------------------------------------------------------------------

struct Candidate {
  double value;  // a score, then the cumulative sum up to it
  size_t index;
};

// The order of the sort: larger values first, a NaN after every number (so that the order stays a
// strict weak ordering whatever the scores).
bool ComesBefore(const Candidate& a, const Candidate& b) {
  if (std::isnan(a.value)) return false;
  if (std::isnan(b.value)) return true;
  return a.value > b.value;
}

// InfiniCore's sampling from the candidates in index order (at least one): sorted by value,
// descending, ties keeping the lower index first; cum[0] = 1, cum[i] = cum[i - 1] + exp((v[i] -
// max) / temperature); the first of the top k whose cum reaches random_val * min(cum[k - 1],
// cum[voc - 1] * topp), or the k-th if none does (random_val above 1).
size_t SampleSorted(std::vector<Candidate>* candidates, const infiniopBackendRunParams& params) {
  std::vector<Candidate>& sorted = *candidates;
  std::stable_sort(sorted.begin(), sorted.end(), &ComesBefore);
  const size_t voc = sorted.size();
  const double max = sorted[0].value;
  const double temperature = params.temperature;
  sorted[0].value = 1;
  for (size_t i = 1; i < voc; ++i) {
    sorted[i].value = sorted[i - 1].value + std::exp((sorted[i].value - max) / temperature);
  }
  const size_t k = params.topk <= 0 ? voc : std::min(static_cast<size_t>(params.topk), voc);
  const double top_k = sorted[k - 1].value;
  const double top_p = sorted[voc - 1].value * static_cast<double>(params.topp);
  const double limit = static_cast<double>(params.random_val) * std::min(top_k, top_p);
  for (size_t i = 0; i < k; ++i) {
    if (limit <= sorted[i].value) return sorted[i].index;
  }
  return sorted[k - 1].index;
}

void StoreIndex(void* result, infiniDtype_t dtype, size_t index) {
  switch (dtype) {
    case INFINI_DTYPE_I32:
      *static_cast<int32_t*>(result) = static_cast<int32_t>(index);
      break;
    case INFINI_DTYPE_I64:
      *static_cast<int64_t*>(result) = static_cast<int64_t>(index);
      break;
    case INFINI_DTYPE_U32:
      *static_cast<uint32_t*>(result) = static_cast<uint32_t>(index);
      break;
    case INFINI_DTYPE_U64:
      *static_cast<uint64_t*>(result) = static_cast<uint64_t>(index);
      break;
    default:
      break;  // refused at Create
  }
}

bool IsResultDtype(infiniDtype_t dtype) {
  return dtype == INFINI_DTYPE_I32 || dtype == INFINI_DTYPE_I64 || dtype == INFINI_DTYPE_U32 ||
         dtype == INFINI_DTYPE_U64;
}

// The largest number among scores[begin, end) and the first index holding it, in one pass of
// kBlock running lanes, each keeping its largest and where it first saw it (a loop that
// vectorises: the indices are as wide as the values). A NaN is above nothing, so never taken;
// where no number is above -inf, the answer is -inf (and its index means nothing).
template <class T>
struct LargestAt {
  ValueOf<T> value;
  size_t index;
};

template <class T>
[[gnu::always_inline]] inline LargestAt<T> FirstLargestLoop(const T* scores, size_t begin,
                                                            size_t end) {
  using V = ValueOf<T>;
  using Index = std::conditional_t<sizeof(V) == 8, uint64_t, uint32_t>;
  V lanes[kBlock];
  Index where[kBlock];
  for (size_t k = 0; k < kBlock; ++k) {
    lanes[k] = -std::numeric_limits<V>::infinity();
    where[k] = 0;
  }
  size_t i = begin;
  for (; i + kBlock <= end; i += kBlock) {
    for (size_t k = 0; k < kBlock; ++k) {
      const V value = Load(scores[i + k]);
      const bool above = value > lanes[k];
      lanes[k] = above ? value : lanes[k];
      where[k] = above ? static_cast<Index>(i + k) : where[k];
    }
  }
  LargestAt<T> best{-std::numeric_limits<V>::infinity(), 0};
  for (size_t k = 0; k < kBlock; ++k) {
    if (lanes[k] > best.value || (lanes[k] == best.value && where[k] < best.index)) {
      best = {lanes[k], where[k]};
    }
  }
  for (; i < end; ++i) {  // after every lane's index, so only a larger value wins
    const V value = Load(scores[i]);
    if (value > best.value) best = {value, i};
  }
  return best;
}

template <class T>
LargestAt<T> FirstLargestBaseline(const T* scores, size_t begin, size_t end) {
  return FirstLargestLoop(scores, begin, end);
}

#if INFINIOP_CPU_HAS_X86_KERNELS
template <class T>
INFINIOP_CPU_TARGET_AVX2 LargestAt<T> FirstLargestAvx2(const T* scores, size_t begin, size_t end) {
  return FirstLargestLoop(scores, begin, end);
}

template <class T>
INFINIOP_CPU_TARGET_AVX512 LargestAt<T> FirstLargestAvx512(const T* scores, size_t begin,
                                                           size_t end) {
  return FirstLargestLoop(scores, begin, end);
}
#endif

template <class T>
LargestAt<T> FirstLargest(const T* scores, size_t begin, size_t end) {
  const Isa isa = SelectedIsa();
#if INFINIOP_CPU_HAS_X86_KERNELS
  if (isa == Isa::kAvx512) return FirstLargestAvx512(scores, begin, end);
  if (isa == Isa::kAvx2) return FirstLargestAvx2(scores, begin, end);
#else
  (void)isa;
#endif
  return FirstLargestBaseline(scores, begin, end);
}

// The least part of an arg max worth a thread: 16 Ki scores (64 KiB of floats) take a few
// microseconds, about what handing them to a spinning helper costs.
constexpr size_t kArgMaxGrain = size_t{1} << 14;

// One index drawn from probs [voc] (voc at least 1), written to the 0-D result in its dtype: the
// first maximum when random_val, topp or temperature is 0 or topk is 1, else SampleSorted's draw.
// The sort's candidates are allocated here, per call (Create reports no workspace); were that to
// fail, a host function has no way to report it, and the call writes the first maximum instead.
template <class T>
class RandomSamplePlan final : public Plan {
 public:
  RandomSamplePlan(size_t voc, ptrdiff_t stride, infiniDtype_t result_dtype)
      : Plan(2, voc == 0, /*uses_run_params=*/true),
        voc_(voc),
        stride_(stride),
        result_dtype_(result_dtype) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& params) const override {
    StoreIndex(buffers[0], result_dtype_, Sample(static_cast<const T*>(buffers[1]), params));
  }

 private:
  // The first maximum, NaN ignored (but a NaN first, which wins, as no number is above it).
  size_t ArgMax(const T* probs) const {
    if (stride_ == 1 && !std::isnan(Load(probs[0]))) return ContiguousArgMax(probs);
    size_t best = 0;
    ValueOf<T> best_value = Load(probs[0]);
    for (size_t i = 1; i < voc_; ++i) {
      const ValueOf<T> value = Load(probs[Step(i, stride_)]);
      if (value > best_value) {
        best = i;
        best_value = value;
      }
    }
    return best;
  }

  // The same for packed scores, in parallel: each part's first largest (FirstLargest), then the
  // parts' in order. With no number above -inf, scores[0] (not NaN here) is the first maximum.
  size_t ContiguousArgMax(const T* probs) const {
    if (voc_ > UINT32_MAX) return FirstLargest(probs, 0, voc_).index;  // lanes' indices are 32-bit
    std::mutex mutex;
    LargestAt<T> best{-std::numeric_limits<ValueOf<T>>::infinity(), 0};
    ParallelFor(voc_, kArgMaxGrain, [&](size_t begin, size_t end) {
      const LargestAt<T> part = FirstLargest(probs, begin, end);
      std::lock_guard<std::mutex> lock(mutex);
      if (part.value > best.value || (part.value == best.value && part.index < best.index)) {
        best = part;
      }
    });
    return best.value == -std::numeric_limits<ValueOf<T>>::infinity() ? 0 : best.index;
  }

  size_t Sample(const T* probs, const infiniopBackendRunParams& params) const {
    if (params.random_val == 0 || params.topp == 0 || params.topk == 1 || params.temperature == 0) {
      return ArgMax(probs);
    }
    std::vector<Candidate> candidates;
    try {
      candidates.resize(voc_);
    } catch (const std::exception&) {
      return ArgMax(probs);
    }
    for (size_t i = 0; i < voc_; ++i) {
      candidates[i] = Candidate{static_cast<double>(Load(probs[Step(i, stride_)])), i};
    }
    return SampleSorted(&candidates, params);
  }

  size_t voc_;
  ptrdiff_t stride_;
  infiniDtype_t result_dtype_;
};

}  // namespace

// --- The plans' makers -------------------------------------------------------------------------

// Tensors (y, x, w); y and x [batch, dim] or [batch, nhead, dim], w [dim].
infiniStatus_t MakeRMSNormPlan(const infiniopBackendTensor* tensors,
                               const infiniopBackendCreateParams* params, PlanPtr* plan) {
  if (params == nullptr) return INFINI_STATUS_NULL_POINTER;
  NormRows rows;
  if (const infiniStatus_t read = infiniop_backend::ReadNormRows(tensors, params->epsilon, &rows)) {
    return read;
  }
  const infiniDtype_t w_dtype = tensors[2].dtype;
  switch (tensors[1].dtype) {
    case INFINI_DTYPE_F16:
      return MakeHalfRMSNorm<Half>(w_dtype, rows, plan);
    case INFINI_DTYPE_BF16:
      return MakeHalfRMSNorm<BFloat16>(w_dtype, rows, plan);
    case INFINI_DTYPE_F32:
      if (w_dtype != INFINI_DTYPE_F32) return INFINI_STATUS_NOT_IMPLEMENTED;
      *plan = std::make_shared<RMSNormPlan<float, float>>(rows);
      return INFINI_STATUS_SUCCESS;
    case INFINI_DTYPE_F64:
      if (w_dtype != INFINI_DTYPE_F64) return INFINI_STATUS_NOT_IMPLEMENTED;
      *plan = std::make_shared<RMSNormPlan<double, double>>(rows);
      return INFINI_STATUS_SUCCESS;
    default:
      return INFINI_STATUS_NOT_IMPLEMENTED;
  }
}

// Tensors (y, x): [seq_len, total_seq_len] or [batch, seq_len, total_seq_len], any strides.
infiniStatus_t MakeCausalSoftmaxPlan(const infiniopBackendTensor* tensors, PlanPtr* plan) {
  SoftmaxRows rows;
  if (const infiniStatus_t read = infiniop_backend::ReadSoftmaxRows(tensors, &rows)) return read;
  return WithFloatType(tensors[1].dtype, [&](auto type) {
    *plan = std::make_shared<CausalSoftmaxPlan<typename decltype(type)::T>>(rows);
  });
}

// Tensors (y, x, pos_ids, sin_table, cos_table): y and x [seqlen, nhead, dhead] or [batch, seqlen,
// nhead, dhead]; pos_ids [seqlen] or [batch, seqlen]; the tables [table_len, dhead / 2].
infiniStatus_t MakeRoPEPlan(const infiniopBackendTensor* tensors,
                            const infiniopBackendCreateParams* params, PlanPtr* plan) {
  if (params == nullptr) return INFINI_STATUS_NULL_POINTER;
  RoPEShape shape;
  if (const infiniStatus_t read =
          infiniop_backend::ReadRoPELayout(tensors, params->algo, &shape)) {
    return read;
  }
  shape.position = PositionFor(tensors[2].dtype);
  if (shape.position == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  return WithFloatType(tensors[1].dtype, [&](auto type) {
    *plan = MakeRoPEOf<typename decltype(type)::T>(shape, shape.neox);
  });
}

// Tensors (result, probs): result 0-D, probs [voc] (any stride is read as it is).
infiniStatus_t MakeRandomSamplePlan(const infiniopBackendTensor* tensors, PlanPtr* plan) {
  const infiniopBackendTensor& result = tensors[0];
  const infiniopBackendTensor& probs = tensors[1];
  if (result.ndim != 0 || probs.ndim != 1) return INFINI_STATUS_BAD_PARAM;
  if (!IsResultDtype(result.dtype)) return INFINI_STATUS_NOT_IMPLEMENTED;
  const size_t voc = probs.shape[0];
  const ptrdiff_t stride = probs.strides[0];
  return WithFloatType(probs.dtype, [&](auto type) {
    *plan =
        std::make_shared<RandomSamplePlan<typename decltype(type)::T>>(voc, stride, result.dtype);
  });
}

}  // namespace infinirt::infiniop_cpu
