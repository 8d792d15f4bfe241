// LayerNorm, AddRMSNorm, Softmax, LogSoftmax, SiluAndMul and Embedding on the host: the plans that
// cpu_operators.cc's Create makes and its Run queues as host functions.
//
// Each walks "lines": the elements along one axis (the last, or Softmax's), one line per index of
// the other dimensions, each tensor with its own strides. A line whose elements are contiguous in
// every tensor takes a loop the compiler vectorises (sums in kBlock running totals, exp as
// VectorisableExp); another walks its strides. The threads take ranges of lines. F16 and BF16
// compute in float, F64 in double; each output element is rounded once. libinfiniop has
// validated the tensors (validation.cc); what is checked here is only what computing safely needs.
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

// --- Lines -------------------------------------------------------------------------------------

// The lines of up to kMaxLineTensors tensors along one axis: `length` elements each, `count` of
// them (the product of the other dimensions of tensor 0, which the others share or, for a tensor
// without the axis, such as LayerNorm's std deviation, lay out with their own strides).
constexpr size_t kMaxLineTensors = 4;

struct Lines {
  size_t count = 0;
  size_t length = 0;
  size_t tensors = 0;
  std::vector<size_t> outer;                              // the other dimensions, in order
  std::vector<ptrdiff_t> outer_strides[kMaxLineTensors];  // per tensor, along `outer`
  ptrdiff_t step[kMaxLineTensors] = {};                   // per tensor, along the axis
  bool along_axis[kMaxLineTensors] = {};                  // whether the tensor has the axis

  // The element offset of line `line`'s first element in tensor t.
  ptrdiff_t Offset(size_t line, size_t t) const {
    ptrdiff_t offset = 0;
    for (size_t d = outer.size(); d-- > 0;) {
      offset += static_cast<ptrdiff_t>(line % outer[d]) * outer_strides[t][d];
      line /= outer[d];
    }
    return offset;
  }

  // Whether every tensor with the axis lays its lines out contiguously (one without it, such as
  // LayerNorm's std deviation, has one element per line).
  bool Contiguous() const {
    for (size_t t = 0; t < tensors; ++t) {
      if (along_axis[t] && step[t] != 1 && length > 1) return false;
    }
    return true;
  }
};

// Lines of `shape` along `axis`: tensors[i] gives each tensor's strides; a tensor whose rank is
// one less (has_axis false) has no stride along the axis.
Lines MakeLines(const infiniopBackendTensor& shape, size_t axis,
                std::initializer_list<const infiniopBackendTensor*> tensors,
                std::initializer_list<bool> has_axis) {
  Lines lines;
  lines.tensors = tensors.size();
  lines.length = shape.shape[axis];
  lines.count = 1;
  for (size_t d = 0; d < shape.ndim; ++d) {
    if (d == axis) continue;
    lines.outer.push_back(shape.shape[d]);
    lines.count *= shape.shape[d];
  }
  size_t t = 0;
  auto axis_flag = has_axis.begin();
  for (const infiniopBackendTensor* tensor : tensors) {
    const bool with_axis = *axis_flag++;
    lines.along_axis[t] = with_axis;
    for (size_t d = 0, own = 0; d < shape.ndim; ++d) {
      if (d == axis) {
        if (with_axis) lines.step[t] = tensor->strides[own++];
        continue;
      }
      lines.outer_strides[t].push_back(tensor->strides[own++]);
    }
    ++t;
  }
  return lines;
}

// Calls line(first line, end line) in ranges of lines for the threads.
template <class Body>
void ForLines(const Lines& lines, Body body) {
  const size_t grain = std::max<size_t>(1, kParallelGrain / std::max<size_t>(lines.length, 1));
  ParallelFor(lines.count, grain, [&](size_t begin, size_t end) { body(begin, end); });
}

// The sum of f(x_j) over a contiguous line, in kBlock running totals.
template <class V, class T, class F>
[[gnu::always_inline]] inline V SumOf(const T* x, size_t length, F f) {
  V lanes[kBlock] = {};
  size_t j = 0;
  for (; j + kBlock <= length; j += kBlock) {
    for (size_t k = 0; k < kBlock; ++k) lanes[k] += f(Load(x[j + k]));
  }
  V sum = 0;
  for (size_t k = 0; k < kBlock; ++k) sum += lanes[k];
  for (; j < length; ++j) sum += f(Load(x[j]));
  return sum;
}

template <class T>
T* Element(void* buffer, ptrdiff_t offset) {
  return static_cast<T*>(buffer) + offset;
}

// --- LayerNorm ---------------------------------------------------------------------------------

// A contiguous line of LayerNorm: the mean, then the variance about it (sums in kBlock lanes),
// then the standardization and the output in one pass. Always inlined into the versions below,
// each compiled for its instructions.
template <class T>
[[gnu::always_inline]] inline void LayerNormLineLoop(T* out, T* standardized, T* deviation,
                                                     const T* x, const T* weight, const T* bias,
                                                     size_t n, float eps) {
  using V = ValueOf<T>;
  const V mean = SumOf<V>(x, n, [](V v) { return v; }) / static_cast<V>(n);
  const V variance =
      SumOf<V>(x, n, [mean](V v) { return (v - mean) * (v - mean); }) / static_cast<V>(n);
  const V std_deviation = std::sqrt(variance + static_cast<V>(eps));
  const V inverse = V(1) / std_deviation;
  *deviation = Store<T>(std_deviation);
  if (bias != nullptr) {
    INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
    for (size_t j = 0; j < n; ++j) {
      const V normalized = (Load(x[j]) - mean) * inverse;
      standardized[j] = Store<T>(normalized);
      out[j] = Store<T>(normalized * Load(weight[j]) + Load(bias[j]));
    }
  } else {
    INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
    for (size_t j = 0; j < n; ++j) {
      const V normalized = (Load(x[j]) - mean) * inverse;
      standardized[j] = Store<T>(normalized);
      out[j] = Store<T>(normalized * Load(weight[j]));
    }
  }
}

template <class T>
void LayerNormLineBaseline(T* out, T* standardized, T* deviation, const T* x, const T* weight,
                           const T* bias, size_t n, float eps) {
  LayerNormLineLoop(out, standardized, deviation, x, weight, bias, n, eps);
}

#if INFINIOP_CPU_HAS_X86_KERNELS
template <class T>
INFINIOP_CPU_TARGET_AVX2 void LayerNormLineAvx2(T* out, T* standardized, T* deviation, const T* x,
                                                const T* weight, const T* bias, size_t n,
                                                float eps) {
  LayerNormLineLoop(out, standardized, deviation, x, weight, bias, n, eps);
}

template <class T>
INFINIOP_CPU_TARGET_AVX512 void LayerNormLineAvx512(T* out, T* standardized, T* deviation,
                                                    const T* x, const T* weight, const T* bias,
                                                    size_t n, float eps) {
  LayerNormLineLoop(out, standardized, deviation, x, weight, bias, n, eps);
}
#endif

template <class T>
void LayerNormLine(T* out, T* standardized, T* deviation, const T* x, const T* weight,
                   const T* bias, size_t n, float eps) {
  RunForIsa(INFINIOP_CPU_X86_ONLY(&LayerNormLineAvx512<T>),
            INFINIOP_CPU_X86_ONLY(&LayerNormLineAvx2<T>), &LayerNormLineBaseline<T>, out,
            standardized, deviation, x, weight, bias, n, eps);
}

// Tensors (output, standardization, std deviation, input, weight, bias). Mean and biased variance
// in two passes over the input (the second about the mean, as exact as the dtype allows), then
// one pass writing the standardization and the output; in place (output or standardization is
// input) works, as each element is read before it is written.
template <class T>
class LayerNormPlan final : public Plan {
 public:
  LayerNormPlan(Lines lines, ptrdiff_t weight_step, ptrdiff_t bias_step, bool has_bias, float eps)
      : Plan(6, lines.count == 0 || lines.length == 0, /*uses_run_params=*/false),
        lines_(std::move(lines)),
        weight_step_(weight_step),
        bias_step_(bias_step),
        has_bias_(has_bias),
        eps_(eps) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    const size_t n = lines_.length;
    const T* weight = static_cast<const T*>(buffers[4]);
    const T* bias = has_bias_ ? static_cast<const T*>(buffers[5]) : nullptr;
    const bool contiguous =
        lines_.Contiguous() && weight_step_ == 1 && (!has_bias_ || bias_step_ == 1);
    ForLines(lines_, [&](size_t begin, size_t end) {
      for (size_t line = begin; line < end; ++line) {
        T* out = Element<T>(buffers[0], lines_.Offset(line, 0));
        T* standardized = Element<T>(buffers[1], lines_.Offset(line, 1));
        T* deviation = Element<T>(buffers[2], lines_.Offset(line, 2));
        const T* x = Element<T>(buffers[3], lines_.Offset(line, 3));
        if (contiguous) {
          LayerNormLine<T>(out, standardized, deviation, x, weight, bias, n, eps_);
        } else {
          StridedLine(out, standardized, deviation, x, weight, bias, n);
        }
      }
    });
  }

 private:
  using V = ValueOf<T>;

  void StridedLine(T* out, T* standardized, T* deviation, const T* x, const T* weight,
                   const T* bias, size_t n) const {
    const ptrdiff_t so = lines_.step[0], ss = lines_.step[1], sx = lines_.step[3];
    V mean = 0;
    for (size_t j = 0; j < n; ++j) mean += Load(x[Step(j, sx)]);
    mean /= static_cast<V>(n);
    V variance = 0;
    for (size_t j = 0; j < n; ++j) {
      const V centred = Load(x[Step(j, sx)]) - mean;
      variance += centred * centred;
    }
    variance /= static_cast<V>(n);
    const V std_deviation = std::sqrt(variance + static_cast<V>(eps_));
    const V inverse = V(1) / std_deviation;
    *deviation = Store<T>(std_deviation);
    for (size_t j = 0; j < n; ++j) {
      const V normalized = (Load(x[Step(j, sx)]) - mean) * inverse;
      const V shifted = bias != nullptr ? Load(bias[Step(j, bias_step_)]) : V(0);
      standardized[Step(j, ss)] = Store<T>(normalized);
      out[Step(j, so)] = Store<T>(normalized * Load(weight[Step(j, weight_step_)]) + shifted);
    }
  }

  static ptrdiff_t Step(size_t index, ptrdiff_t stride) {
    return static_cast<ptrdiff_t>(index) * stride;
  }

  Lines lines_;
  ptrdiff_t weight_step_;
  ptrdiff_t bias_step_;
  bool has_bias_;
  float eps_;
};

// --- AddRMSNorm --------------------------------------------------------------------------------

// Tensors (y, residual_out, a, b, weight), the last dimension packed in each. s = a + b is kept in
// the value type in a per-thread row, so that y is computed from the unrounded sum whichever
// output is an input (in place).
template <class T, class W>
class AddRMSNormPlan final : public Plan {
 public:
  AddRMSNormPlan(Lines lines, float epsilon)
      : Plan(5, lines.count == 0 || lines.length == 0, /*uses_run_params=*/false),
        lines_(std::move(lines)),
        epsilon_(epsilon) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    using V = ValueOf<T>;
    const size_t n = lines_.length;
    const W* weight = static_cast<const W*>(buffers[4]);
    ForLines(lines_, [&](size_t begin, size_t end) {
      std::vector<V> sum(n);
      for (size_t line = begin; line < end; ++line) {
        T* y = Element<T>(buffers[0], lines_.Offset(line, 0));
        T* residual = Element<T>(buffers[1], lines_.Offset(line, 1));
        const T* a = Element<T>(buffers[2], lines_.Offset(line, 2));
        const T* b = Element<T>(buffers[3], lines_.Offset(line, 3));
        V* s = sum.data();
        for (size_t j = 0; j < n; ++j) s[j] = Load(a[j]) + Load(b[j]);
        V lanes[kBlock] = {};
        size_t j = 0;
        for (; j + kBlock <= n; j += kBlock) {
          for (size_t k = 0; k < kBlock; ++k) lanes[k] += s[j + k] * s[j + k];
        }
        V squares = 0;
        for (size_t k = 0; k < kBlock; ++k) squares += lanes[k];
        for (; j < n; ++j) squares += s[j] * s[j];
        const V rms = V(1) / std::sqrt(squares / static_cast<V>(n) + static_cast<V>(epsilon_));
        for (size_t k = 0; k < n; ++k) {
          residual[k] = Store<T>(s[k]);
          y[k] = Store<T>(s[k] * static_cast<V>(Load(weight[k])) * rms);
        }
      }
    });
  }

 private:
  Lines lines_;
  float epsilon_;
};

// --- Softmax and LogSoftmax --------------------------------------------------------------------

// A contiguous line of Softmax (kLog: LogSoftmax): the max and the sum of exp(x - max) in kBlock
// running lanes, so that both vectorise, then the outputs. Always inlined into the versions
// below, each compiled for its instructions.
// The sum of n floats in 16-wide vector accumulators (GCC vector extensions: a running sum in
// lanes that the vectoriser leaves scalar otherwise, as it may not reorder the additions).
[[gnu::always_inline]] inline float VectorSum(const float* y, size_t n) {
  typedef float Vec16 __attribute__((vector_size(64)));
  Vec16 even = {}, odd = {}, chunk;
  size_t i = 0;
  for (; i + 32 <= n; i += 32) {
    std::memcpy(&chunk, y + i, sizeof chunk);
    even += chunk;
    std::memcpy(&chunk, y + i + 16, sizeof chunk);
    odd += chunk;
  }
  even += odd;
  float sum = 0;
  for (int k = 0; k < 16; ++k) sum += even[k];
  for (; i < n; ++i) sum += y[i];
  return sum;
}

// The largest of n floats in 16-wide vectors; a NaN among them makes it NaN, as the lanes below.
[[gnu::always_inline]] inline float VectorMax(const float* x, size_t n) {
  typedef float Vec16 __attribute__((vector_size(64)));
  const float lowest = -std::numeric_limits<float>::infinity();
  Vec16 max = Vec16{} + lowest, chunk;
  size_t i = 0;
  for (; i + 16 <= n; i += 16) {
    std::memcpy(&chunk, x + i, sizeof chunk);
    max = max > chunk ? max : chunk;
  }
  float result = lowest;
  for (int k = 0; k < 16; ++k) result = result > max[k] ? result : max[k];
  for (; i < n; ++i) result = result > x[i] ? result : x[i];
  return result;
}

// A float line: each exponential computed once, into y (a loop that vectorises), summed in
// vectors, then scaled. The log form sums the exponentials in running lanes without storing them,
// then writes y = x - (max + log sum) in one pass (in place too: each x is read before its y is
// written).
template <bool kLog>
[[gnu::always_inline]] inline void SoftmaxFloatLine(float* y, const float* x, size_t n) {
  const float max = VectorMax(x, n);
  if constexpr (kLog) {
    const float sum = SumOf<float>(x, n, [max](float v) { return ExpOfNonPositive(v - max); });
    const float shift = max + std::log(sum);
    INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
    for (size_t i = 0; i < n; ++i) y[i] = x[i] - shift;
  } else {
    INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
    for (size_t i = 0; i < n; ++i) y[i] = ExpOfNonPositive(x[i] - max);
    const float sum = VectorSum(y, n);
    const float inverse = 1.0f / sum;
    INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
    for (size_t i = 0; i < n; ++i) y[i] *= inverse;
  }
}

template <class T, bool kLog>
[[gnu::always_inline]] inline void SoftmaxLineLoop(T* y, const T* x, size_t n) {
  using V = ValueOf<T>;
  if constexpr (std::is_same_v<T, float>) {
    SoftmaxFloatLine<kLog>(y, x, n);
    return;
  }
  V maxima[kBlock];
  for (size_t k = 0; k < kBlock; ++k) maxima[k] = -std::numeric_limits<V>::infinity();
  size_t j = 0;
  for (; j + kBlock <= n; j += kBlock) {
    for (size_t k = 0; k < kBlock; ++k) {
      const V value = Load(x[j + k]);
      maxima[k] = maxima[k] > value ? maxima[k] : value;
    }
  }
  V max = -std::numeric_limits<V>::infinity();
  for (size_t k = 0; k < kBlock; ++k) max = std::max(max, maxima[k]);
  for (; j < n; ++j) max = std::max(max, Load(x[j]));
  const V sum = SumOf<V>(x, n, [max](V v) { return ExpOfNonPositive(v - max); });
  if constexpr (kLog) {
    const V shift = max + std::log(sum);
    INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
    for (size_t i = 0; i < n; ++i) y[i] = Store<T>(Load(x[i]) - shift);
  } else {
    const V inverse = V(1) / sum;
    INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
    for (size_t i = 0; i < n; ++i) y[i] = Store<T>(ExpOfNonPositive(Load(x[i]) - max) * inverse);
  }
}

template <class T, bool kLog>
void SoftmaxLineBaseline(T* y, const T* x, size_t n) {
  SoftmaxLineLoop<T, kLog>(y, x, n);
}

#if INFINIOP_CPU_HAS_X86_KERNELS
template <class T, bool kLog>
INFINIOP_CPU_TARGET_AVX2 void SoftmaxLineAvx2(T* y, const T* x, size_t n) {
  SoftmaxLineLoop<T, kLog>(y, x, n);
}

template <class T, bool kLog>
INFINIOP_CPU_TARGET_AVX512 void SoftmaxLineAvx512(T* y, const T* x, size_t n) {
  SoftmaxLineLoop<T, kLog>(y, x, n);
}
#endif

template <class T, bool kLog>
void SoftmaxLine(T* y, const T* x, size_t n) {
  RunForIsa(INFINIOP_CPU_X86_ONLY(&SoftmaxLineAvx512<T, kLog>),
            INFINIOP_CPU_X86_ONLY(&SoftmaxLineAvx2<T, kLog>), &SoftmaxLineBaseline<T, kLog>, y, x,
            n);
}

// Tensors (y, x) along one axis: the max, the sum of exp(x - max) (exp computed again for the
// output rather than kept, so that a call allocates nothing and in place works), then
// y = exp(x - max) / sum, or for the log form y = x - max - log(sum).
template <class T, bool kLog>
class SoftmaxPlan final : public Plan {
 public:
  explicit SoftmaxPlan(Lines lines)
      : Plan(2, lines.count == 0 || lines.length == 0, /*uses_run_params=*/false),
        lines_(std::move(lines)) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    const bool contiguous = lines_.Contiguous();
    ForLines(lines_, [&](size_t begin, size_t end) {
      for (size_t line = begin; line < end; ++line) {
        T* y = Element<T>(buffers[0], lines_.Offset(line, 0));
        const T* x = Element<T>(buffers[1], lines_.Offset(line, 1));
        if (contiguous) {
          SoftmaxLine<T, kLog>(y, x, lines_.length);
        } else {
          Line(y, x, lines_.step[0], lines_.step[1]);
        }
      }
    });
  }

 private:
  using V = ValueOf<T>;

  // A line with steps (SoftmaxLine takes the contiguous ones).
  void Line(T* y, const T* x, ptrdiff_t y_step, ptrdiff_t x_step) const {
    const ptrdiff_t n = static_cast<ptrdiff_t>(lines_.length);
    V max = -std::numeric_limits<V>::infinity();
    for (ptrdiff_t j = 0; j < n; ++j) max = std::max(max, Load(x[j * x_step]));
    V lanes[kBlock] = {};
    ptrdiff_t j = 0;
    for (; j + static_cast<ptrdiff_t>(kBlock) <= n; j += kBlock) {
      for (size_t k = 0; k < kBlock; ++k) {
        lanes[k] += ExpOfNonPositive(Load(x[(j + k) * x_step]) - max);
      }
    }
    V sum = 0;
    for (size_t k = 0; k < kBlock; ++k) sum += lanes[k];
    for (; j < n; ++j) sum += ExpOfNonPositive(Load(x[j * x_step]) - max);
    if constexpr (kLog) {
      const V shift = max + std::log(sum);
      for (ptrdiff_t i = 0; i < n; ++i) y[i * y_step] = Store<T>(Load(x[i * x_step]) - shift);
    } else {
      const V inverse = V(1) / sum;
      for (ptrdiff_t i = 0; i < n; ++i) {
        y[i * y_step] = Store<T>(ExpOfNonPositive(Load(x[i * x_step]) - max) * inverse);
      }
    }
  }

  Lines lines_;
};

// --- SiluAndMul --------------------------------------------------------------------------------

// Tensors (y [..., d], x [..., 2d]): y_j = silu(x_j) * x_{j + d}, the lines along the last axis
// walked with y's length.
template <class T>
class SiluAndMulPlan final : public Plan {
 public:
  explicit SiluAndMulPlan(Lines lines)
      : Plan(2, lines.count == 0 || lines.length == 0, /*uses_run_params=*/false),
        lines_(std::move(lines)) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    const ptrdiff_t n = static_cast<ptrdiff_t>(lines_.length);
    const ptrdiff_t y_step = lines_.step[0], x_step = lines_.step[1];
    ForLines(lines_, [&](size_t begin, size_t end) {
      for (size_t line = begin; line < end; ++line) {
        T* y = Element<T>(buffers[0], lines_.Offset(line, 0));
        const T* x = Element<T>(buffers[1], lines_.Offset(line, 1));
        if (y_step == 1 && x_step == 1) {
          for (ptrdiff_t j = 0; j < n; ++j) y[j] = Store<T>(Product(x[j], x[j + n]));
        } else {
          for (ptrdiff_t j = 0; j < n; ++j) {
            y[j * y_step] = Store<T>(Product(x[j * x_step], x[(j + n) * x_step]));
          }
        }
      }
    });
  }

 private:
  static ValueOf<T> Product(T gate_element, T up_element) {
    using V = ValueOf<T>;
    const V gate = Load(gate_element);
    return gate * Sigmoid(gate) * Load(up_element);
  }

  Lines lines_;
};

// --- Embedding ---------------------------------------------------------------------------------

// Tensors (output, input, weight): output row i is weight row input[i]. An index outside
// [0, vocab) cannot be reported from the queued work, so its row becomes NaN, which no valid row
// is made of, rather than being left as it was.
template <class T, class Index>
class EmbeddingPlan final : public Plan {
 public:
  EmbeddingPlan(Lines rows, Lines indices, size_t vocab, ptrdiff_t weight_row, ptrdiff_t weight_col)
      : Plan(3, rows.count == 0 || rows.length == 0, /*uses_run_params=*/false),
        rows_(std::move(rows)),
        indices_(std::move(indices)),
        vocab_(vocab),
        weight_row_(weight_row),
        weight_col_(weight_col) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    const size_t dim = rows_.length;
    const ptrdiff_t out_step = rows_.step[0];
    const T* weight = static_cast<const T*>(buffers[2]);
    const T nan = Store<T>(std::numeric_limits<ValueOf<T>>::quiet_NaN());
    ForLines(rows_, [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        T* out = Element<T>(buffers[0], rows_.Offset(i, 0));
        const Index index = *Element<const Index>(buffers[1], indices_.Offset(i, 0));
        if (index < 0 || static_cast<uint64_t>(index) >= vocab_) {
          for (size_t j = 0; j < dim; ++j) out[static_cast<ptrdiff_t>(j) * out_step] = nan;
          continue;
        }
        const T* row = weight + static_cast<ptrdiff_t>(index) * weight_row_;
        if (out_step == 1 && weight_col_ == 1) {
          std::memcpy(out, row, dim * sizeof(T));
        } else {
          for (size_t j = 0; j < dim; ++j) {
            out[static_cast<ptrdiff_t>(j) * out_step] =
                row[static_cast<ptrdiff_t>(j) * weight_col_];
          }
        }
      }
    });
  }

 private:
  Lines rows_;
  Lines indices_;
  size_t vocab_;
  ptrdiff_t weight_row_;
  ptrdiff_t weight_col_;
};

// The axis an int names in `ndim` dimensions (negative: from the end); false outside them.
bool AxisOf(int axis, size_t ndim, size_t* index) {
  const long long n = static_cast<long long>(ndim);
  const long long a = axis < 0 ? axis + n : axis;
  if (a < 0 || a >= n) return false;
  *index = static_cast<size_t>(a);
  return true;
}

}  // namespace

template <class T>
void SoftmaxContiguous(T* y, const T* x, size_t n) {
  SoftmaxLine<T, false>(y, x, n);
}

template void SoftmaxContiguous<Half>(Half*, const Half*, size_t);
template void SoftmaxContiguous<BFloat16>(BFloat16*, const BFloat16*, size_t);
template void SoftmaxContiguous<float>(float*, const float*, size_t);
template void SoftmaxContiguous<double>(double*, const double*, size_t);

infiniStatus_t MakeLayerNormPlan(const infiniopBackendTensor* tensors,
                                 const infiniopBackendCreateParams* params, PlanPtr* plan) {
  if (params == nullptr) return INFINI_STATUS_NULL_POINTER;
  const infiniopBackendTensor &output = tensors[0], &standardized = tensors[1],
                              &deviation = tensors[2], &input = tensors[3], &weight = tensors[4],
                              &bias = tensors[5];
  const bool has_bias = bias.dtype != INFINI_DTYPE_INVALID;
  if (input.ndim == 0 || weight.ndim != 1 || deviation.ndim + 1 != input.ndim ||
      !infiniop_backend::SameShape(output, input) ||
      !infiniop_backend::SameShape(standardized, input) || (has_bias && bias.ndim != 1)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  Lines lines = MakeLines(input, input.ndim - 1, {&output, &standardized, &deviation, &input},
                          {true, true, false, true});
  const float eps = params->eps;
  const ptrdiff_t bias_step = has_bias ? bias.strides[0] : 0;
  return WithFloatType(input.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    *plan = std::make_shared<LayerNormPlan<T>>(std::move(lines), weight.strides[0], bias_step,
                                               has_bias, eps);
    return INFINI_STATUS_SUCCESS;
  });
}

infiniStatus_t MakeAddRMSNormPlan(const infiniopBackendTensor* tensors,
                                  const infiniopBackendCreateParams* params, PlanPtr* plan) {
  if (params == nullptr) return INFINI_STATUS_NULL_POINTER;
  const infiniopBackendTensor &y = tensors[0], &residual = tensors[1], &a = tensors[2],
                              &b = tensors[3], &weight = tensors[4];
  if (a.ndim == 0 || weight.ndim != 1 || !infiniop_backend::SameShape(y, a) ||
      !infiniop_backend::SameShape(residual, a) || !infiniop_backend::SameShape(b, a)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  Lines lines = MakeLines(a, a.ndim - 1, {&y, &residual, &a, &b}, {true, true, true, true});
  if (!lines.Contiguous() || (weight.shape[0] > 1 && weight.strides[0] != 1)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  const float epsilon = params->epsilon;
  auto make = [&](auto activation, auto weights) {
    using T = typename decltype(activation)::T;
    using W = typename decltype(weights)::T;
    *plan = std::make_shared<AddRMSNormPlan<T, W>>(std::move(lines), epsilon);
    return INFINI_STATUS_SUCCESS;
  };
  return WithFloatType(a.dtype, [&](auto activation) {
    using T = typename decltype(activation)::T;
    if (weight.dtype == a.dtype) return make(activation, TypeTag<T>{});
    if constexpr (std::is_same_v<T, Half> || std::is_same_v<T, BFloat16>) {
      switch (weight.dtype) {
        case INFINI_DTYPE_F16:
          return make(activation, TypeTag<Half>{});
        case INFINI_DTYPE_BF16:
          return make(activation, TypeTag<BFloat16>{});
        case INFINI_DTYPE_F32:
          return make(activation, TypeTag<float>{});
        default:
          break;
      }
    }
    return INFINI_STATUS_NOT_IMPLEMENTED;
  });
}

infiniStatus_t MakeSoftmaxPlan(const infiniopBackendTensor* tensors, int axis, bool log,
                               PlanPtr* plan) {
  const infiniopBackendTensor &y = tensors[0], &x = tensors[1];
  size_t along = 0;
  if (!infiniop_backend::SameShape(y, x) || !AxisOf(axis, x.ndim, &along)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  Lines lines = MakeLines(x, along, {&y, &x}, {true, true});
  return WithFloatType(x.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    if (log) {
      *plan = std::make_shared<SoftmaxPlan<T, true>>(std::move(lines));
    } else {
      *plan = std::make_shared<SoftmaxPlan<T, false>>(std::move(lines));
    }
    return INFINI_STATUS_SUCCESS;
  });
}

infiniStatus_t MakeSiluAndMulPlan(const infiniopBackendTensor* tensors, PlanPtr* plan) {
  const infiniopBackendTensor &y = tensors[0], &x = tensors[1];
  if (y.ndim == 0 || x.ndim != y.ndim || x.shape[x.ndim - 1] != 2 * y.shape[y.ndim - 1] ||
      !std::equal(y.shape, y.shape + y.ndim - 1, x.shape)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  Lines lines = MakeLines(y, y.ndim - 1, {&y, &x}, {true, true});
  return WithFloatType(x.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    *plan = std::make_shared<SiluAndMulPlan<T>>(std::move(lines));
  });
}

infiniStatus_t MakeEmbeddingPlan(const infiniopBackendTensor* tensors, PlanPtr* plan) {
  const infiniopBackendTensor &output = tensors[0], &input = tensors[1], &weight = tensors[2];
  if (weight.ndim != 2 || output.ndim != input.ndim + 1 ||
      output.shape[output.ndim - 1] != weight.shape[1] ||
      !std::equal(input.shape, input.shape + input.ndim, output.shape)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  if (output.dtype != weight.dtype) return INFINI_STATUS_NOT_IMPLEMENTED;
  Lines rows = MakeLines(output, output.ndim - 1, {&output}, {true});
  // The indices walked with the output's outer dimensions: the input's shape.
  Lines indices = MakeLines(output, output.ndim - 1, {&input}, {false});
  const size_t vocab = weight.shape[0];
  const ptrdiff_t weight_row = weight.strides[0], weight_col = weight.strides[1];
  return WithFloatType(weight.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    if (input.dtype == INFINI_DTYPE_I32) {
      *plan = std::make_shared<EmbeddingPlan<T, int32_t>>(std::move(rows), std::move(indices),
                                                          vocab, weight_row, weight_col);
    } else if (input.dtype == INFINI_DTYPE_I64) {
      *plan = std::make_shared<EmbeddingPlan<T, int64_t>>(std::move(rows), std::move(indices),
                                                          vocab, weight_row, weight_col);
    } else {
      return INFINI_STATUS_NOT_IMPLEMENTED;
    }
    return INFINI_STATUS_SUCCESS;
  });
}

}  // namespace infinirt::infiniop_cpu
