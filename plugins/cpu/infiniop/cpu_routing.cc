// The selection and routing operators on the host: TopK along any dimension, and the MoE routers
// Topksoftmax (softmax, then the largest) and Topkrouter (DeepSeek-V3's grouped choice). The
// plans cpu_operators.cc's Create makes and its Run queues.
//
// Every selection orders the same way: larger first (smaller first for TopK's smallest), NaN
// above every number, equal values by index, so that the results do not depend on the sort.
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <memory>
#include <utility>
#include <vector>

#include "cpu_common.h"
#include "cpu_parallel.h"
#include "infiniop_backend.h"
#include "infiniop_backend_support.h"

namespace infinirt::infiniop_cpu {

namespace {

// A candidate of a selection: its value and its index along the selected dimension.
template <class V>
struct Candidate {
  V value;
  size_t index;
};

// Whether a goes before b when the largest are selected.
template <class V>
bool LargerFirst(const Candidate<V>& a, const Candidate<V>& b) {
  const bool a_nan = std::isnan(a.value), b_nan = std::isnan(b.value);
  if (a_nan != b_nan) return a_nan;
  if (!a_nan && a.value != b.value) return a.value > b.value;
  return a.index < b.index;
}

// Whether a goes before b when the smallest are selected (NaN last).
template <class V>
bool SmallerFirst(const Candidate<V>& a, const Candidate<V>& b) {
  const bool a_nan = std::isnan(a.value), b_nan = std::isnan(b.value);
  if (a_nan != b_nan) return b_nan;
  if (!a_nan && a.value != b.value) return a.value < b.value;
  return a.index < b.index;
}

// Orders the first k of `candidates` as the selection's first k.
template <class V>
void SelectFirst(std::vector<Candidate<V>>& candidates, size_t k, bool largest) {
  const auto middle = candidates.begin() + static_cast<ptrdiff_t>(k);
  if (largest) {
    std::partial_sort(candidates.begin(), middle, candidates.end(), &LargerFirst<V>);
  } else {
    std::partial_sort(candidates.begin(), middle, candidates.end(), &SmallerFirst<V>);
  }
}

// The k first of a line of n elements (`step` apart), for k well below n, read in place: one pass
// keeping the k best seen so far in a heap whose top is the worst of them, so that most elements
// cost one comparison with that worst; then the heap in order, into `kept`. The same order as
// SelectFirst (larger, or smaller, first; equal values by index). False, with `kept` unusable,
// when the line has a NaN: the NaN-aware SelectFirst is needed then.
template <class T>
bool SelectFirstByHeap(const T* line, ptrdiff_t step, size_t n, size_t k, bool largest,
                       std::vector<Candidate<ValueOf<T>>>& kept) {
  using V = ValueOf<T>;
  const auto better = [largest](const Candidate<V>& a, const Candidate<V>& b) {
    if (a.value != b.value) return largest ? a.value > b.value : a.value < b.value;
    return a.index < b.index;
  };
  kept.resize(k);
  for (size_t i = 0; i < k; ++i) {
    kept[i] = {Load(line[static_cast<ptrdiff_t>(i) * step]), i};
    if (std::isnan(kept[i].value)) return false;
  }
  std::make_heap(kept.begin(), kept.end(), better);  // the worst kept on top
  V worst = kept.front().value;
  for (size_t i = k; i < n; ++i) {
    const V value = Load(line[static_cast<ptrdiff_t>(i) * step]);
    // Scanned in index order: an element equal to the worst kept comes later, so it is worse.
    // The test is false for most elements and true for a better one or a NaN.
    if (largest ? value <= worst : value >= worst) continue;
    if (std::isnan(value)) return false;
    std::pop_heap(kept.begin(), kept.end(), better);
    kept.back() = {value, i};
    std::push_heap(kept.begin(), kept.end(), better);
    worst = kept.front().value;
  }
  std::sort_heap(kept.begin(), kept.end(), better);  // best first
  return true;
}

// The k largest of n floats into candidates[0, k), in order: by the heap where k is small against
// n and no NaN is among them, else by sorting.
void SelectLargest(const float* values, size_t n, size_t k,
                   std::vector<Candidate<float>>& candidates) {
  if (k > 0 && k * 8 <= n && SelectFirstByHeap(values, 1, n, k, true, candidates)) return;
  candidates.resize(n);
  for (size_t e = 0; e < n; ++e) candidates[e] = {values[e], e};
  SelectFirst(candidates, k, /*largest=*/true);
}

// --- TopK --------------------------------------------------------------------------------------

// One dimension other than the selected one: its size and each tensor's stride along it.
struct OtherDimension {
  size_t size;
  ptrdiff_t input_stride, values_stride, indices_stride;
};

// Whether TopK has nothing to write: k is 0, or input has no element.
bool SelectsNothing(const infiniopBackendTensor& input, size_t k) {
  if (k == 0) return true;
  for (size_t d = 0; d < input.ndim; ++d) {
    if (input.shape[d] == 0) return true;
  }
  return false;
}

// Tensors (values_output, indices_output, input): every line of input along dim, its k first
// into the outputs' line at the same place.
template <class T, class Index>
class TopKPlan final : public Plan {
 public:
  TopKPlan(const infiniopBackendTensor* tensors, size_t dim, size_t k, bool largest)
      : Plan(3, SelectsNothing(tensors[2], k), /*uses_run_params=*/false),
        k_(k),
        largest_(largest) {
    const infiniopBackendTensor &values = tensors[0], &indices = tensors[1], &input = tensors[2];
    length_ = input.shape[dim];
    input_step_ = input.strides[dim];
    values_step_ = values.strides[dim];
    indices_step_ = indices.strides[dim];
    lines_ = 1;
    for (size_t d = 0; d < input.ndim; ++d) {
      if (d == dim) continue;
      others_.push_back({input.shape[d], input.strides[d], values.strides[d], indices.strides[d]});
      lines_ *= input.shape[d];
    }
  }

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    using V = ValueOf<T>;
    T* values = static_cast<T*>(buffers[0]);
    Index* indices = static_cast<Index*>(buffers[1]);
    const T* input = static_cast<const T*>(buffers[2]);
    const size_t grain = std::max<size_t>(1, kParallelGrain / std::max<size_t>(1, length_));
    ParallelFor(lines_, grain, [&](size_t begin, size_t end) {
      std::vector<Candidate<V>> candidates(length_);
      for (size_t line = begin; line < end; ++line) {
        ptrdiff_t at[3];
        LineOffsets(line, at);
        // A heap where k is small against the line (unless it has a NaN), else a partial sort.
        const bool by_heap =
            k_ * 8 <= length_ &&
            SelectFirstByHeap(input + at[0], input_step_, length_, k_, largest_, candidates);
        if (!by_heap) {
          candidates.resize(length_);
          for (size_t i = 0; i < length_; ++i) {
            candidates[i] = {Load(input[at[0] + static_cast<ptrdiff_t>(i) * input_step_]), i};
          }
          SelectFirst(candidates, k_, largest_);
        }
        for (size_t j = 0; j < k_; ++j) {
          const ptrdiff_t step = static_cast<ptrdiff_t>(j);
          values[at[1] + step * values_step_] = Store<T>(candidates[j].value);
          indices[at[2] + step * indices_step_] = static_cast<Index>(candidates[j].index);
        }
      }
    });
  }

 private:
  // The element offsets of line `line` (the other dimensions, the last fastest) in input,
  // values_output and indices_output.
  void LineOffsets(size_t line, ptrdiff_t at[3]) const {
    at[0] = at[1] = at[2] = 0;
    for (size_t d = others_.size(); d-- > 0;) {
      const OtherDimension& other = others_[d];
      const ptrdiff_t i = static_cast<ptrdiff_t>(line % other.size);
      line /= other.size;
      at[0] += i * other.input_stride;
      at[1] += i * other.values_stride;
      at[2] += i * other.indices_stride;
    }
  }

  size_t k_;
  bool largest_;
  size_t length_ = 0, lines_ = 0;
  ptrdiff_t input_step_ = 0, values_step_ = 0, indices_step_ = 0;
  std::vector<OtherDimension> others_;
};

template <class T>
infiniStatus_t MakeTopKPlanOf(const infiniopBackendTensor* tensors, size_t dim, size_t k,
                              bool largest, PlanPtr* plan) {
  if (tensors[1].dtype == INFINI_DTYPE_I32) {
    *plan = std::make_shared<TopKPlan<T, int32_t>>(tensors, dim, k, largest);
  } else if (tensors[1].dtype == INFINI_DTYPE_I64) {
    *plan = std::make_shared<TopKPlan<T, int64_t>>(tensors, dim, k, largest);
  } else {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  return INFINI_STATUS_SUCCESS;
}

// --- The routers -------------------------------------------------------------------------------

constexpr size_t kRouterGroups = 8;      // Topkrouter's groups of experts
constexpr size_t kRouterKeptGroups = 4;  // the groups whose experts may be chosen
// Added to the chosen weights' sum, as DeepSeek-V3's reference does, so that an all-zero choice
// divides by no zero.
constexpr float kRouterEpsilon = 1e-20f;

float SigmoidOf(float x) { return 1.0f / (1.0f + std::exp(-x)); }

// Tensors (values, indices: no descriptors, then x [tokens, experts], Topkrouter's
// correction_bias [experts]). Each call's topk is checked against the experts when it is made.
template <class T>
class RouterPlan final : public Plan {
 public:
  RouterPlan(infiniopOperator_t op, const infiniopBackendTensor* tensors)
      : Plan(op == INFINIOP_OPERATOR_Topkrouter ? 4 : 3, tensors[2].shape[0] == 0,
             /*uses_run_params=*/true),
        op_(op),
        tokens_(tensors[2].shape[0]),
        experts_(tensors[2].shape[1]),
        row_stride_(tensors[2].strides[0]),
        bias_stride_(op == INFINIOP_OPERATOR_Topkrouter ? tensors[3].strides[0] : 0) {}

  infiniStatus_t CheckRun(const infiniopBackendRunParams& params) const override {
    return infiniop_backend::RouterTopkFits(op_, experts_, params.topk) ? INFINI_STATUS_SUCCESS
                                                                        : INFINI_STATUS_BAD_PARAM;
  }

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& params) const override {
    const size_t topk = static_cast<size_t>(params.topk);
    if (topk == 0) return;
    float* values = static_cast<float*>(buffers[0]);
    int32_t* indices = static_cast<int32_t*>(buffers[1]);
    const T* x = static_cast<const T*>(buffers[2]);
    const float* bias =
        op_ == INFINIOP_OPERATOR_Topkrouter ? static_cast<const float*>(buffers[3]) : nullptr;
    const size_t grain = std::max<size_t>(1, kParallelGrain / (experts_ * 8));
    ParallelFor(tokens_, grain, [&](size_t begin, size_t end) {
      std::vector<Candidate<float>> candidates(experts_);
      std::vector<float> scores(experts_);
      for (size_t row = begin; row < end; ++row) {
        const T* scores_in = x + static_cast<ptrdiff_t>(row) * row_stride_;
        for (size_t e = 0; e < experts_; ++e) scores[e] = Load(scores_in[e]);
        float* row_values = values + row * topk;
        int32_t* row_indices = indices + row * topk;
        if (op_ == INFINIOP_OPERATOR_Topksoftmax) {
          SoftmaxRow(scores, topk, params.norm != 0, candidates, row_values, row_indices);
        } else {
          GroupedRow(scores, bias, topk, params.routed_scaling_factor, candidates, row_values,
                     row_indices);
        }
      }
    });
  }

 private:
  // Topksoftmax's row: the topk largest scores, their softmax probabilities (renormalised to sum
  // 1 when norm).
  void SoftmaxRow(const std::vector<float>& scores, size_t topk, bool norm,
                  std::vector<Candidate<float>>& candidates, float* values,
                  int32_t* indices) const {
    float max = -INFINITY;
    for (float score : scores) max = std::max(max, score);
    float sum = 0;
    for (float score : scores) sum += ExpOfNonPositive(score - max);
    SelectLargest(scores.data(), experts_, topk, candidates);
    float chosen = 0;
    for (size_t j = 0; j < topk; ++j) {
      values[j] = ExpOfNonPositive(candidates[j].value - max) / sum;
      indices[j] = static_cast<int32_t>(candidates[j].index);
      chosen += values[j];
    }
    if (!norm) return;
    for (size_t j = 0; j < topk; ++j) values[j] /= chosen;
  }

  // Topkrouter's row: sigmoid scores s, biased b = s + bias; the groups scored by their two
  // largest b, the best kKeptGroups kept (the others' b read as 0); the topk largest b, weighted
  // by their unbiased s, normalised and scaled.
  void GroupedRow(std::vector<float>& scores, const float* bias, size_t topk, float scaling,
                  std::vector<Candidate<float>>& candidates, float* values,
                  int32_t* indices) const {
    for (float& score : scores) score = SigmoidOf(score);
    const size_t group_size = experts_ / kRouterGroups;
    for (size_t e = 0; e < experts_; ++e) {
      candidates[e] = {scores[e] + bias[static_cast<ptrdiff_t>(e) * bias_stride_], e};
    }
    std::vector<Candidate<float>> groups(kRouterGroups);
    for (size_t g = 0; g < kRouterGroups; ++g) {
      std::vector<Candidate<float>> members(candidates.begin() + g * group_size,
                                            candidates.begin() + (g + 1) * group_size);
      SelectFirst(members, 2, /*largest=*/true);
      groups[g] = {members[0].value + members[1].value, g};
    }
    SelectFirst(groups, kRouterKeptGroups, /*largest=*/true);
    std::vector<bool> kept(kRouterGroups, false);
    for (size_t g = 0; g < kRouterKeptGroups; ++g) kept[groups[g].index] = true;
    std::vector<float> masked(experts_);
    for (size_t e = 0; e < experts_; ++e)
      masked[e] = kept[e / group_size] ? candidates[e].value : 0.0f;
    SelectLargest(masked.data(), experts_, topk, candidates);
    float chosen = 0;
    for (size_t j = 0; j < topk; ++j) chosen += scores[candidates[j].index];
    for (size_t j = 0; j < topk; ++j) {
      values[j] = scaling * scores[candidates[j].index] / (chosen + kRouterEpsilon);
      indices[j] = static_cast<int32_t>(candidates[j].index);
    }
  }

  infiniopOperator_t op_;
  size_t tokens_, experts_;
  ptrdiff_t row_stride_, bias_stride_;
};

}  // namespace

infiniStatus_t MakeTopKPlan(const infiniopBackendTensor* tensors,
                            const infiniopBackendCreateParams* params, PlanPtr* plan) {
  if (params == nullptr) return INFINI_STATUS_NULL_POINTER;
  const infiniopBackendTensor& input = tensors[2];
  if (params->dim < 0 || static_cast<size_t>(params->dim) >= input.ndim) {
    return INFINI_STATUS_BAD_PARAM;
  }
  const size_t dim = static_cast<size_t>(params->dim);
  if (params->k > input.shape[dim] || tensors[0].dtype != input.dtype) {
    return INFINI_STATUS_BAD_PARAM;
  }
  return WithFloatType(input.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    return MakeTopKPlanOf<T>(tensors, dim, params->k, params->largest, plan);
  });
}

infiniStatus_t MakeRouterPlan(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                              PlanPtr* plan) {
  const infiniopBackendTensor& x = tensors[2];
  if (x.ndim != 2 || (x.shape[1] > 1 && x.strides[1] != 1)) return INFINI_STATUS_BAD_PARAM;
  if (tensors[0].dtype != INFINI_DTYPE_F32 || tensors[1].dtype != INFINI_DTYPE_I32) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  if (op == INFINIOP_OPERATOR_Topkrouter &&
      (x.shape[1] % kRouterGroups != 0 || x.shape[1] < 2 * kRouterGroups)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  if (x.dtype == INFINI_DTYPE_F64) return INFINI_STATUS_NOT_IMPLEMENTED;
  return WithFloatType(x.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    *plan = std::make_shared<RouterPlan<T>>(op, tensors);
  });
}

}  // namespace infinirt::infiniop_cpu
