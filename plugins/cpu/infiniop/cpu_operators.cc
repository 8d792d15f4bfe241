// The CPU operator backend (libinfiniop_cpu.so): operators computed on the host, queued in stream
// order with infinirtLaunchHostFunc. This file has the table's entries and the elementwise
// operators (binary: Add, Sub, Mul, SwiGLU; the activations; Rearrange); cpu_llm_operators.cc
// has RMSNorm, CausalSoftmax, RoPE and RandomSample; cpu_common.h what they share.
//
// libinfiniop has validated every descriptor before Create sees it. For the elementwise operators
// the tensors of one call share one shape and one dtype, and the strides (in elements, possibly 0
// or negative) address memory the caller owns. A descriptor's layout is simplified once, at Create
// (dimensions of one element dropped, neighbours that every tensor lays out as one run merged), so
// that the usual case, all tensors contiguous, becomes a single flat loop the compiler can
// vectorise.
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "cpu_common.h"
#include "cpu_isa.h"
#include "cpu_parallel.h"
#include "cpu_transpose.h"
#include "infiniop_backend.h"
#include "infiniop_backend_support.h"
#include "infinirt.h"

namespace infinirt::infiniop_cpu {

namespace {

// --- Binary operators: c = op(a, b) --------------------------------------------------------------

struct AddOp {
  template <class V>
  V operator()(V a, V b) const {
    return a + b;
  }
};

struct SubOp {
  template <class V>
  V operator()(V a, V b) const {
    return a - b;
  }
};

struct MulOp {
  template <class V>
  V operator()(V a, V b) const {
    return a * b;
  }
};

// up * silu(gate), silu(x) = x * sigmoid(x).
struct SwiGLUOp {
  template <class V>
  V operator()(V up, V gate) const {
    return up * (gate * Sigmoid(gate));
  }
};

// --- Unary operators: y = op(x) ----------------------------------------------------------------

// max(x, 0), NaN staying NaN.
struct ReluOp {
  template <class V>
  V operator()(V x) const {
    return x < V(0) ? V(0) : x;
  }
};

struct SigmoidOp {
  template <class V>
  V operator()(V x) const {
    return Sigmoid(x);
  }
};

// x * sigmoid(x).
struct SiluOp {
  template <class V>
  V operator()(V x) const {
    return x * Sigmoid(x);
  }
};

// x * Phi(x) = x (1 + erf(x / sqrt 2)) / 2, through erfc so that neither side cancels: for x < 0
// x erfc(-x / sqrt 2) / 2, else x (1 - erfc(x / sqrt 2) / 2).
struct GeluOp {
  template <class V>
  V operator()(V x) const {
    constexpr V kInvSqrt2 = V(0.70710678118654752440);
    const V tail = Erfc((x < V(0) ? -x : x) * kInvSqrt2);
    return x < V(0) ? V(0.5) * x * tail : x * (V(1) - V(0.5) * tail);
  }
};

// x (1 + tanh(u)) / 2 with u = sqrt(2 / pi) (x + 0.044715 x^3), computed as x * sigmoid(2u),
// which is the same function without tanh's cancellation near 0.
struct GeluTanhOp {
  template <class V>
  V operator()(V x) const {
    constexpr V kTwoSqrt2OverPi = V(1.59576912160573071175);  // 2 sqrt(2 / pi)
    const V two_u = kTwoSqrt2OverPi * (x + V(0.044715) * x * x * x);
    return x * Sigmoid(two_u);
  }
};

// x * alpha, alpha the call's (MulScalar): rounded to float for the types computed in float.
struct MulScalarOp {
  explicit MulScalarOp(const infiniopBackendRunParams& params) : alpha(params.alpha_f64) {}
  template <class V>
  V operator()(V x) const {
    return x * static_cast<V>(alpha);
  }
  double alpha;
};

// An operator's functor for a call: made from the call's parameters when it reads them.
template <class Op>
Op MakeOp(const infiniopBackendRunParams& params) {
  if constexpr (std::is_constructible_v<Op, const infiniopBackendRunParams&>) {
    return Op(params);
  } else {
    return Op{};
  }
}

// --- Layouts -----------------------------------------------------------------------------------

constexpr size_t kMaxTensors = 3;
// Once dimensions of one element are dropped, each remaining one has at least two elements, so a
// shape whose element count fits in size_t has fewer dimensions than size_t has bits.
constexpr size_t kMaxDims = sizeof(size_t) * CHAR_BIT;

// The element offsets of one call's tensors, simplified.
struct Layout {
  size_t tensor_count = 0;
  size_t element_size = 0;
  size_t elements = 0;  // 0: nothing to do
  // Every tensor is one contiguous run of `elements` (always so for a single element): one flat
  // loop covers the call.
  bool flat = false;
  // Otherwise: the merged dimensions, the last being the inner loop, and per tensor the stride of
  // each, in elements and in bytes; rows: how many inner loops (the outer dimensions' product).
  std::vector<size_t> dims;
  std::array<std::vector<ptrdiff_t>, kMaxTensors> strides;
  std::array<std::vector<ptrdiff_t>, kMaxTensors> byte_strides;
  size_t rows = 0;
};

// The number of elements of a shape; false when it does not fit in size_t.
bool CountElements(const size_t* shape, size_t ndim, size_t* elements) {
  size_t count = 1;
  for (size_t d = 0; d < ndim; ++d) {
    if (shape[d] == 0) {
      *elements = 0;
      return true;
    }
    if (count > SIZE_MAX / shape[d]) return false;
    count *= shape[d];
  }
  *elements = count;
  return true;
}

// Fills in dims and strides: dimensions of one element go (their stride never moves an offset),
// and a dimension joins the one before it when, in every tensor, stepping the outer one equals
// stepping the inner one across its whole extent.
void MergeDimensions(const infiniopBackendTensor* tensors, Layout* layout) {
  const size_t ndim = tensors[0].ndim;
  for (size_t d = 0; d < ndim; ++d) {
    const size_t size = tensors[0].shape[d];
    if (size == 1) continue;
    bool joins = !layout->dims.empty();
    for (size_t t = 0; joins && t < layout->tensor_count; ++t) {
      const ptrdiff_t inner = tensors[t].strides[d];
      joins = layout->strides[t].back() == inner * static_cast<ptrdiff_t>(size);
    }
    if (joins) {
      layout->dims.back() *= size;
      for (size_t t = 0; t < layout->tensor_count; ++t) {
        layout->strides[t].back() = tensors[t].strides[d];
      }
      continue;
    }
    layout->dims.push_back(size);
    for (size_t t = 0; t < layout->tensor_count; ++t) {
      layout->strides[t].push_back(tensors[t].strides[d]);
    }
  }
}

bool AllUnitStrides(const Layout& layout) {
  for (size_t t = 0; t < layout.tensor_count; ++t) {
    if (layout.strides[t].back() != 1) return false;
  }
  return true;
}

// The layout of a call's tensors (which share tensors[0]'s shape); false when its element count
// overflows.
bool MakeLayout(const infiniopBackendTensor* tensors, size_t count, size_t element_size,
                Layout* layout) {
  layout->tensor_count = count;
  layout->element_size = element_size;
  if (!CountElements(tensors[0].shape, tensors[0].ndim, &layout->elements)) return false;
  if (layout->elements == 0) return true;
  MergeDimensions(tensors, layout);
  if (layout->dims.empty() || (layout->dims.size() == 1 && AllUnitStrides(*layout))) {
    layout->flat = true;
    return true;
  }
  for (size_t t = 0; t < count; ++t) {
    for (ptrdiff_t stride : layout->strides[t]) {
      layout->byte_strides[t].push_back(stride * static_cast<ptrdiff_t>(element_size));
    }
  }
  layout->rows = layout->elements / layout->dims.back();
  return true;
}

// Calls row(pointers, length, element strides) for the inner loops first_row to end_row - 1 of a
// layout that is not flat. Only positioning at first_row divides; the outer dimensions are then
// stepped with an index counter. (A range of rows is what a thread would take.)
template <size_t N, class Row>
void ForEachRow(const Layout& layout, const std::array<char*, N>& bases, size_t first_row,
                size_t end_row, Row row) {
  const size_t outer = layout.dims.size() - 1;
  const size_t length = layout.dims[outer];
  std::array<ptrdiff_t, N> inner_strides;
  for (size_t t = 0; t < N; ++t) inner_strides[t] = layout.strides[t][outer];

  size_t index[kMaxDims];
  std::array<char*, N> pointers = bases;
  size_t rest = first_row;
  for (size_t d = outer; d-- > 0;) {
    index[d] = rest % layout.dims[d];
    rest /= layout.dims[d];
    const ptrdiff_t steps = static_cast<ptrdiff_t>(index[d]);
    for (size_t t = 0; t < N; ++t) pointers[t] += steps * layout.byte_strides[t][d];
  }

  for (size_t r = first_row; r < end_row; ++r) {
    row(pointers, length, inner_strides);
    for (size_t d = outer; d-- > 0;) {
      if (++index[d] < layout.dims[d]) {
        for (size_t t = 0; t < N; ++t) pointers[t] += layout.byte_strides[t][d];
        break;
      }
      // Back to the start of this dimension; the next one out steps instead.
      index[d] = 0;
      const ptrdiff_t back = static_cast<ptrdiff_t>(layout.dims[d] - 1);
      for (size_t t = 0; t < N; ++t) pointers[t] -= back * layout.byte_strides[t][d];
    }
  }
}

// --- Operators ---------------------------------------------------------------------------------

// The contiguous loop of an elementwise operator (out = op(in...)): one loop, declared free of
// dependences between iterations (an output is an input element for element, or overlaps none),
// which the vectoriser takes whole at -O3, remainder included. (Blocks of kBlock fully unrolled
// were left scalar: GCC 12 cannot prove the unrolled stores apart from the loads, and the
// declaration no longer applies once the loop is gone.) Always inlined, so that each caller below
// compiles it for its own instructions.
template <class T, class Op, class... In>
[[gnu::always_inline]] inline void ContiguousLoop(Op op, T* out, size_t length, const In*... in) {
  using A = Arithmetic<T>;
  INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
  for (size_t i = 0; i < length; ++i) out[i] = A::Store(op(A::Load(in[i])...));
}

template <class T, class Op, class... In>
void ContiguousBaseline(Op op, T* out, size_t length, const In*... in) {
  ContiguousLoop<T, Op>(op, out, length, in...);
}

#if INFINIOP_CPU_HAS_X86_KERNELS
template <class T, class Op, class... In>
INFINIOP_CPU_TARGET_AVX2 void ContiguousAvx2(Op op, T* out, size_t length, const In*... in) {
  ContiguousLoop<T, Op>(op, out, length, in...);
}

template <class T, class Op, class... In>
INFINIOP_CPU_TARGET_AVX512 void ContiguousAvx512(Op op, T* out, size_t length, const In*... in) {
  ContiguousLoop<T, Op>(op, out, length, in...);
}
#endif

template <class T, class Op, class... In>
void Contiguous(Op op, T* out, size_t length, const In*... in) {
  RunForIsa(INFINIOP_CPU_X86_ONLY(&ContiguousAvx512<T, Op, In...>),
            INFINIOP_CPU_X86_ONLY(&ContiguousAvx2<T, Op, In...>), &ContiguousBaseline<T, Op, In...>,
            op, out, length, in...);
}

// One inner loop of an elementwise operator with kInputs inputs, over tensors (out, in...) of
// one dtype T.
template <class T, class Op, size_t kInputs>
struct ComputeRow {
  static constexpr size_t kTensors = kInputs + 1;
  using Functor = Op;

  static void Apply(Op op, const std::array<char*, kTensors>& pointers, size_t length,
                    const std::array<ptrdiff_t, kTensors>& strides) {
    ApplyTo(op, pointers, length, strides, std::make_index_sequence<kInputs>{});
  }

  template <size_t... I>
  static void ApplyTo(Op op, const std::array<char*, kTensors>& pointers, size_t length,
                      const std::array<ptrdiff_t, kTensors>& strides, std::index_sequence<I...>) {
    using A = Arithmetic<T>;
    T* out = reinterpret_cast<T*>(pointers[0]);
    if (((strides[I + 1] == 1) && ... && (strides[0] == 1))) {
      Contiguous<T, Op>(op, out, length, reinterpret_cast<const T*>(pointers[I + 1])...);
      return;
    }
    const ptrdiff_t n = static_cast<ptrdiff_t>(length);
    for (ptrdiff_t i = 0; i < n; ++i) {
      out[i * strides[0]] =
          A::Store(op(A::Load(reinterpret_cast<const T*>(pointers[I + 1])[i * strides[I + 1]])...));
    }
  }
};

template <class T, class Op>
using BinaryRow = ComputeRow<T, Op, 2>;
template <class T, class Op>
using UnaryRow = ComputeRow<T, Op, 1>;

// One inner loop of Rearrange (dst, src): elements are kSize raw bytes. memcpy of a constant size
// compiles to plain loads and stores, with no alignment or type assumed.
template <size_t kSize>
struct CopyRow {
  static constexpr size_t kTensors = 2;
  struct Functor {};  // nothing to compute

  static void Apply(Functor /*copy*/, const std::array<char*, 2>& pointers, size_t length,
                    const std::array<ptrdiff_t, 2>& strides) {
    char* dst = pointers[0];
    const char* src = pointers[1];
    if (strides[0] == 1 && strides[1] == 1) {
      std::memmove(dst, src, length * kSize);
      return;
    }
    const ptrdiff_t n = static_cast<ptrdiff_t>(length);
    const ptrdiff_t dst_step = strides[0] * static_cast<ptrdiff_t>(kSize);
    const ptrdiff_t src_step = strides[1] * static_cast<ptrdiff_t>(kSize);
    for (ptrdiff_t i = 0; i < n; ++i) std::memcpy(dst + i * dst_step, src + i * src_step, kSize);
  }
};

using ComputeFn = void (*)(const Layout&, const Buffers&, const infiniopBackendRunParams&);

// Computes a whole call with the inner loop Row, its functor made for the call's parameters.
template <class Row>
void Elementwise(const Layout& layout, const Buffers& buffers,
                 const infiniopBackendRunParams& params) {
  constexpr size_t N = Row::kTensors;
  const typename Row::Functor op = MakeOp<typename Row::Functor>(params);
  std::array<char*, N> bases;
  for (size_t t = 0; t < N; ++t) bases[t] = static_cast<char*>(buffers[t]);
  if (layout.elements == 0) return;
  if (layout.flat) {
    // Ranges of whole blocks, so that each thread's loop vectorises as one thread's would.
    const size_t blocks = (layout.elements + kBlock - 1) / kBlock;
    ParallelFor(blocks, kParallelGrain / kBlock, [&](size_t begin, size_t end) {
      std::array<char*, N> pointers = bases;
      const size_t first = begin * kBlock;
      for (size_t t = 0; t < N; ++t) pointers[t] += first * layout.element_size;
      std::array<ptrdiff_t, N> unit;
      unit.fill(1);
      Row::Apply(op, pointers, std::min(end * kBlock, layout.elements) - first, unit);
    });
    return;
  }
  const size_t row_grain = std::max<size_t>(1, kParallelGrain / layout.dims.back());
  ParallelFor(layout.rows, row_grain, [&](size_t begin, size_t end) {
    ForEachRow(layout, bases, begin, end,
               [&](const std::array<char*, N>& pointers, size_t length,
                   const std::array<ptrdiff_t, N>& strides) {
                 Row::Apply(op, pointers, length, strides);
               });
  });
}

// The function computing a floating operator whose inner loop is Row<T, Op> on `dtype`; null
// for a dtype it does not take.
template <template <class, class> class Row, class Op>
ComputeFn FloatingComputeOf(infiniDtype_t dtype) {
  switch (dtype) {
    case INFINI_DTYPE_F16:
      return &Elementwise<Row<Half, Op>>;
    case INFINI_DTYPE_BF16:
      return &Elementwise<Row<BFloat16, Op>>;
    case INFINI_DTYPE_F32:
      return &Elementwise<Row<float, Op>>;
    case INFINI_DTYPE_F64:
      return &Elementwise<Row<double, Op>>;
    default:
      return nullptr;
  }
}

template <class Op>
ComputeFn FloatingCompute(infiniDtype_t dtype) {
  return FloatingComputeOf<BinaryRow, Op>(dtype);
}

template <class Op>
ComputeFn FloatingUnaryCompute(infiniDtype_t dtype) {
  return FloatingComputeOf<UnaryRow, Op>(dtype);
}

template <class Op>
ComputeFn IntegerCompute(infiniDtype_t dtype) {
  switch (dtype) {
    case INFINI_DTYPE_I32:
      return &Elementwise<BinaryRow<int32_t, Op>>;
    case INFINI_DTYPE_I64:
      return &Elementwise<BinaryRow<int64_t, Op>>;
    default:
      return nullptr;
  }
}

size_t ElementSize(infiniDtype_t dtype) { return infinirtDtypeSize(dtype); }

// Whether a copy's innermost loop strides through one of its tensors (a transpose, say): then
// the last two dimensions are copied in square tiles instead, so that each side touches whole
// cache lines while they are loaded, rather than one line per element.
bool StridesInnermost(const Layout& layout) {
  return !layout.flat && layout.dims.size() >= 2 &&
         (layout.strides[0].back() != 1 || layout.strides[1].back() != 1);
}

// Tiles of 64 rows by 8 columns: along a column the strided side's cache lines lie a power of two
// apart, which maps them all to one cache set; 8 of them fit its 8 ways (measured: 64 x 8 copied
// a 4096 x 4096 transpose about twice as fast as 32 x 32).
constexpr size_t kTileRows = 64;
constexpr size_t kTileCols = 8;

// Where plane `plane` (an index over the dimensions before the last two) of a copy's dst and src
// begins.
void PlaneBases(const Layout& layout, const Buffers& buffers, size_t plane, char** dst,
                const char** src) {
  *dst = static_cast<char*>(buffers[0]);
  *src = static_cast<const char*>(buffers[1]);
  for (size_t d = layout.dims.size() - 2; d-- > 0;) {
    const ptrdiff_t index = static_cast<ptrdiff_t>(plane % layout.dims[d]);
    plane /= layout.dims[d];
    *dst += index * layout.byte_strides[0][d];
    *src += index * layout.byte_strides[1][d];
  }
}

// One band of a tiled copy: rows i0 to i0 + kTileRows - 1 of the last two dimensions of plane
// `plane` (an index over the dimensions before them), tile by tile.
template <size_t kSize>
void CopyBand(const Layout& layout, const Buffers& buffers, size_t plane, size_t i0) {
  const size_t n = layout.dims.size();
  const size_t rows = layout.dims[n - 2], cols = layout.dims[n - 1];
  // Locals: stores through char* could alias the layout's vectors, which the compiler would then
  // read again at every element.
  const ptrdiff_t dst_row_step = layout.byte_strides[0][n - 2];
  const ptrdiff_t dst_col_step = layout.byte_strides[0][n - 1];
  const ptrdiff_t src_row_step = layout.byte_strides[1][n - 2];
  const ptrdiff_t src_col_step = layout.byte_strides[1][n - 1];
  char* dst = nullptr;
  const char* src = nullptr;
  PlaneBases(layout, buffers, plane, &dst, &src);
  const size_t i_end = std::min(rows, i0 + kTileRows);
  for (size_t j0 = 0; j0 < cols; j0 += kTileCols) {
    const ptrdiff_t j_end = static_cast<ptrdiff_t>(std::min(cols, j0 + kTileCols));
    for (size_t i = i0; i < i_end; ++i) {
      char* dst_row = dst + static_cast<ptrdiff_t>(i) * dst_row_step;
      const char* src_row = src + static_cast<ptrdiff_t>(i) * src_row_step;
      for (ptrdiff_t j = static_cast<ptrdiff_t>(j0); j < j_end; ++j) {
        std::memcpy(dst_row + j * dst_col_step, src_row + j * src_col_step, kSize);
      }
    }
  }
}

// Rearrange with the last two dimensions in tiles of kTileRows x kTileCols elements; the threads
// take bands of kTileRows rows, of any plane.
template <size_t kSize>
void TiledCopy(const Layout& layout, const Buffers& buffers) {
  const size_t n = layout.dims.size();
  const size_t rows = layout.dims[n - 2], cols = layout.dims[n - 1];
  const size_t planes = layout.elements / (rows * cols);
  const size_t bands_per_plane = (rows + kTileRows - 1) / kTileRows;
  const size_t band_grain = std::max<size_t>(1, kParallelGrain / (kTileRows * cols));
  ParallelFor(planes * bands_per_plane, band_grain, [&](size_t begin, size_t end) {
    for (size_t band = begin; band < end; ++band) {
      CopyBand<kSize>(layout, buffers, band / bands_per_plane,
                      (band % bands_per_plane) * kTileRows);
    }
  });
}

// Whether a copy of 4-byte elements swaps its last two dimensions (one side runs along the last,
// the other along the one before it); if so, *t is plane 0's transpose.
bool SwapsLastTwoDimensions(const Layout& layout, const Buffers& buffers, Transpose32* t) {
  if (layout.element_size != 4 || !StridesInnermost(layout)) return false;
  const size_t n = layout.dims.size();
  const ptrdiff_t dst_row = layout.strides[0][n - 2], dst_col = layout.strides[0][n - 1];
  const ptrdiff_t src_row = layout.strides[1][n - 2], src_col = layout.strides[1][n - 1];
  t->a = static_cast<const char*>(buffers[1]);
  t->b = static_cast<char*>(buffers[0]);
  if (dst_col == 1 && src_row == 1) {  // dst[i][j] = src[j][i] along src's columns
    t->a_stride = src_col;
    t->b_stride = dst_row;
    t->a_rows = layout.dims[n - 1];
    t->a_cols = layout.dims[n - 2];
    return true;
  }
  if (dst_row == 1 && src_col == 1) {  // src's rows become dst's columns
    t->a_stride = src_row;
    t->b_stride = dst_col;
    t->a_rows = layout.dims[n - 2];
    t->a_cols = layout.dims[n - 1];
    return true;
  }
  return false;
}

bool IsTranspose32(const Layout& layout, const Buffers& buffers, Transpose32* t) {
  if (!SwapsLastTwoDimensions(layout, buffers, t)) return false;
  t->streaming_stores = layout.elements * 4 >= kStreamingStoreBytes;
  return true;
}

// A transpose of 4-byte elements in registers (cpu_transpose.h); the threads take bands of
// kTransposeBand rows of a, of any plane.
void RegisterTranspose(const Layout& layout, const Buffers& buffers, const Transpose32& plane0) {
  const size_t n = layout.dims.size();
  const size_t planes = layout.elements / (layout.dims[n - 2] * layout.dims[n - 1]);
  const size_t bands_per_plane = (plane0.a_rows + kTransposeBand - 1) / kTransposeBand;
  const size_t band_grain = std::max<size_t>(1, kParallelGrain / (kTransposeBand * plane0.a_cols));
  ParallelFor(planes * bands_per_plane, band_grain, [&](size_t begin, size_t end) {
    for (size_t band = begin; band < end; ++band) {
      Transpose32 t = plane0;
      PlaneBases(layout, buffers, band / bands_per_plane, &t.b, &t.a);
      const size_t first = (band % bands_per_plane) * kTransposeBand;
      TransposeRows32(t, first, std::min(plane0.a_rows, first + kTransposeBand));
    }
  });
}

template <size_t kSize>
void Copy(const Layout& layout, const Buffers& buffers, const infiniopBackendRunParams& params) {
  Transpose32 transpose;
  if (SelectedIsa() >= Isa::kAvx2 && IsTranspose32(layout, buffers, &transpose)) {
    RegisterTranspose(layout, buffers, transpose);
    return;
  }
  if (StridesInnermost(layout)) {
    TiledCopy<kSize>(layout, buffers);
    return;
  }
  Elementwise<CopyRow<kSize>>(layout, buffers, params);
}

ComputeFn CopyCompute(size_t element_size) {
  switch (element_size) {
    case 1:
      return &Copy<1>;
    case 2:
      return &Copy<2>;
    case 4:
      return &Copy<4>;
    case 8:
      return &Copy<8>;
    case 16:
      return &Copy<16>;
    default:
      return nullptr;
  }
}

// The function computing `op` on `dtype`; null for a combination not implemented.
ComputeFn ComputeFor(infiniopOperator_t op, infiniDtype_t dtype) {
  switch (op) {
    case INFINIOP_OPERATOR_Add: {
      const ComputeFn floating = FloatingCompute<AddOp>(dtype);
      return floating != nullptr ? floating : IntegerCompute<AddOp>(dtype);
    }
    case INFINIOP_OPERATOR_Mul: {
      const ComputeFn floating = FloatingCompute<MulOp>(dtype);
      return floating != nullptr ? floating : IntegerCompute<MulOp>(dtype);
    }
    case INFINIOP_OPERATOR_Sub: {
      const ComputeFn floating = FloatingCompute<SubOp>(dtype);
      return floating != nullptr ? floating : IntegerCompute<SubOp>(dtype);
    }
    case INFINIOP_OPERATOR_SwiGLU:
      return FloatingCompute<SwiGLUOp>(dtype);
    case INFINIOP_OPERATOR_Relu:
      return FloatingUnaryCompute<ReluOp>(dtype);
    case INFINIOP_OPERATOR_Sigmoid:
      return FloatingUnaryCompute<SigmoidOp>(dtype);
    case INFINIOP_OPERATOR_Silu:
      return FloatingUnaryCompute<SiluOp>(dtype);
    case INFINIOP_OPERATOR_Gelu:
      return FloatingUnaryCompute<GeluOp>(dtype);
    case INFINIOP_OPERATOR_GeluTanh:
      return FloatingUnaryCompute<GeluTanhOp>(dtype);
    case INFINIOP_OPERATOR_MulScalar:
      return FloatingUnaryCompute<MulScalarOp>(dtype);
    case INFINIOP_OPERATOR_Rearrange:
      return CopyCompute(ElementSize(dtype));
    default:
      return nullptr;
  }
}

// An elementwise operator's plan: its tensors' simplified layout and the function computing it.
class ElementwisePlan final : public Plan {
 public:
  ElementwisePlan(Layout layout, ComputeFn compute, bool uses_run_params)
      : Plan(layout.tensor_count, layout.elements == 0, uses_run_params),
        layout_(std::move(layout)),
        compute_(compute) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& params) const override {
    compute_(layout_, buffers, params);
  }

 private:
  Layout layout_;
  ComputeFn compute_;
};

using infiniop_backend::SameShape;

// The elementwise operators (binary, unary) and Rearrange: tensors of one shape and one dtype.
infiniStatus_t MakeElementwisePlan(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                                   size_t count, PlanPtr* plan) {
  for (size_t t = 1; t < count; ++t) {
    if (!SameShape(tensors[0], tensors[t])) return INFINI_STATUS_BAD_PARAM;
    if (tensors[t].dtype != tensors[0].dtype) return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  const ComputeFn compute = ComputeFor(op, tensors[0].dtype);
  if (compute == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  Layout layout;
  if (!MakeLayout(tensors, count, ElementSize(tensors[0].dtype), &layout)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  *plan = std::make_shared<ElementwisePlan>(std::move(layout), compute,
                                            /*uses_run_params=*/op == INFINIOP_OPERATOR_MulScalar);
  return INFINI_STATUS_SUCCESS;
}

// --- Kernels and their queued work -------------------------------------------------------------

// One queued call: the plan, the call's buffers and its run parameters.
struct Closure {
  PlanPtr plan;
  Buffers buffers{};
  infiniopBackendRunParams params{};
};

struct Kernel {
  PlanPtr plan;
  // The bytes of the tensors a call touches: a call small enough runs in the caller when its
  // stream is idle (infinirtLaunchHostWork).
  size_t bytes = 0;
  // The absent tensors (an INFINIOP_IN_OPTIONAL given as NULL): their buffers are NULL.
  std::array<bool, kMaxBuffers> absent{};
  // The closures of calls recorded into graphs: a graph runs its closure at every launch, so the
  // kernel keeps them until it is destroyed (the caller keeps a descriptor alive while graphs
  // that captured it may run).
  std::mutex captured_mutex;
  std::vector<std::unique_ptr<Closure>> captured;
};

Kernel* KernelOf(infiniopBackendKernel_t kernel) { return reinterpret_cast<Kernel*>(kernel); }

// A host function cannot fail: a call whose computation throws (memory for Gemm's float copies, a
// oneDNN error) leaves its outputs as they were and says so on stderr, rather than ending the
// process.
void Execute(const Closure& closure) {
  try {
    closure.plan->Compute(closure.buffers, closure.params);
  } catch (const std::exception& error) {
    std::fprintf(stderr,
                 "[infiniop cpu] error: an operator call failed (%s): its output is not written\n",
                 error.what());
  }
}

// A call queued on a stream runs once and frees its closure.
void INFINIRT_CB RunAndRelease(void* user_data) {
  std::unique_ptr<Closure> closure(static_cast<Closure*>(user_data));
  Execute(*closure);
}

// A call recorded into a graph: its kernel owns the closure.
void INFINIRT_CB RunKept(void* user_data) { Execute(*static_cast<const Closure*>(user_data)); }

// Whether the tensors can be read: shape and strides present.
bool Readable(const infiniopBackendTensor* tensors, size_t count) {
  for (size_t t = 0; t < count; ++t) {
    if (tensors[t].ndim != 0 && (tensors[t].shape == nullptr || tensors[t].strides == nullptr)) {
      return false;
    }
  }
  return true;
}

// The plan computing `op` on tensors of the operator's count.
infiniStatus_t MakePlan(infiniopOperator_t op, const infiniopBackendTensor* tensors, size_t count,
                        const infiniopBackendCreateParams* params, PlanPtr* plan) {
  switch (op) {
    case INFINIOP_OPERATOR_RMSNorm:
      return MakeRMSNormPlan(tensors, params, plan);
    case INFINIOP_OPERATOR_CausalSoftmax:
      return MakeCausalSoftmaxPlan(tensors, plan);
    case INFINIOP_OPERATOR_RoPE:
      return MakeRoPEPlan(tensors, params, plan);
    case INFINIOP_OPERATOR_RandomSample:
      return MakeRandomSamplePlan(tensors, plan);
    case INFINIOP_OPERATOR_Gemm:
      return MakeGemmPlan(tensors, plan);
    case INFINIOP_OPERATOR_LayerNorm:
      return MakeLayerNormPlan(tensors, params, plan);
    case INFINIOP_OPERATOR_AddRMSNorm:
      return MakeAddRMSNormPlan(tensors, params, plan);
    case INFINIOP_OPERATOR_Softmax:
      if (params == nullptr) return INFINI_STATUS_NULL_POINTER;
      return MakeSoftmaxPlan(tensors, params->axis, /*log=*/false, plan);
    case INFINIOP_OPERATOR_LogSoftmax:
      if (params == nullptr) return INFINI_STATUS_NULL_POINTER;
      return MakeSoftmaxPlan(tensors, params->dim, /*log=*/true, plan);
    case INFINIOP_OPERATOR_Embedding:
      return MakeEmbeddingPlan(tensors, plan);
    case INFINIOP_OPERATOR_PagedCaching:
      return MakePagedCachingPlan(tensors, plan);
    case INFINIOP_OPERATOR_PagedAttention:
      return MakePagedAttentionPlan(tensors, /*prefill=*/false, params, plan);
    case INFINIOP_OPERATOR_PagedAttentionPrefill:
      return MakePagedAttentionPlan(tensors, /*prefill=*/true, params, plan);
    case INFINIOP_OPERATOR_FlashAttention:
      return MakeFlashAttentionPlan(tensors, params, plan);
    case INFINIOP_OPERATOR_SiluAndMul:
      return MakeSiluAndMulPlan(tensors, plan);
    case INFINIOP_OPERATOR_KVCaching:
      return MakeKVCachingPlan(tensors, plan);
    case INFINIOP_OPERATOR_Attention:
      return MakeAttentionPlan(tensors, params, plan);
    case INFINIOP_OPERATOR_DequantizeAWQ:
      return MakeDequantizeAWQPlan(tensors, plan);
    case INFINIOP_OPERATOR_I8Gemm:
      return MakeI8GemmPlan(tensors, plan);
    case INFINIOP_OPERATOR_TopK:
      return MakeTopKPlan(tensors, params, plan);
    case INFINIOP_OPERATOR_Topksoftmax:
    case INFINIOP_OPERATOR_Topkrouter:
      return MakeRouterPlan(op, tensors, plan);
    default:
      return MakeElementwisePlan(op, tensors, count, plan);
  }
}

// The bytes of a call's tensors (those with a descriptor), saturating.
size_t TensorBytes(const infiniopBackendTensor* tensors, size_t count) {
  size_t total = 0;
  for (size_t t = 0; t < count; ++t) {
    if (tensors[t].ndim == 0 && tensors[t].dtype == INFINI_DTYPE_INVALID) continue;
    size_t bytes = infinirtDtypeSize(tensors[t].dtype);
    for (size_t d = 0; d < tensors[t].ndim; ++d) {
      const size_t extent = tensors[t].shape[d];
      bytes = extent != 0 && bytes > SIZE_MAX / extent ? SIZE_MAX : bytes * extent;
    }
    total = bytes > SIZE_MAX - total ? SIZE_MAX : total + bytes;
  }
  return total;
}

// Queues a closure that frees itself once run (in the caller, when small and the stream idle).
infiniStatus_t QueueOnce(std::unique_ptr<Closure> closure, size_t bytes, infinirtStream_t stream) {
  if (infinirtLaunchHostWork(stream, &RunAndRelease, closure.get(), bytes) != infinirtSuccess) {
    infinirtGetLastError();
    return INFINI_STATUS_INTERNAL_ERROR;  // the closure goes with the unique_ptr
  }
  closure.release();  // the host function owns it now (it may have run and freed it already)
  return INFINI_STATUS_SUCCESS;
}

// Records a closure into the graph being captured on `stream`; the kernel keeps it.
infiniStatus_t QueueKept(Kernel& kernel, std::unique_ptr<Closure> closure,
                         infinirtStream_t stream) {
  std::lock_guard<std::mutex> lock(kernel.captured_mutex);
  kernel.captured.reserve(kernel.captured.size() + 1);  // so that keeping it cannot fail below
  if (infinirtLaunchHostFunc(stream, &RunKept, closure.get()) != infinirtSuccess) {
    infinirtGetLastError();
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  kernel.captured.push_back(std::move(closure));
  return INFINI_STATUS_SUCCESS;
}

// --- The table's entries -----------------------------------------------------------------------

infiniStatus_t Initialize(char* /*why*/, size_t /*why_size*/) { return INFINI_STATUS_SUCCESS; }

infiniStatus_t Create(infiniopOperator_t op, int /*device_index: the host is the one CPU*/,
                      const infiniopBackendTensor* tensors, size_t tensor_count,
                      const infiniopBackendCreateParams* params, infiniopBackendKernel_t* kernel,
                      size_t* workspace_size) {
  if (kernel == nullptr || workspace_size == nullptr) return INFINI_STATUS_NULL_POINTER;
  const size_t expected = infiniopOperatorTensorCount(op);
  if (expected == 0) return INFINI_STATUS_NOT_IMPLEMENTED;
  if (tensor_count != expected) return INFINI_STATUS_BAD_PARAM;
  if (tensors == nullptr || !Readable(tensors, tensor_count)) return INFINI_STATUS_NULL_POINTER;

  try {
    PlanPtr plan;
    const infiniStatus_t made = MakePlan(op, tensors, tensor_count, params, &plan);
    if (made != INFINI_STATUS_SUCCESS) return made;
    auto created = std::make_unique<Kernel>();
    created->plan = std::move(plan);
    created->bytes = TensorBytes(tensors, tensor_count);
    for (size_t t = 0; t < tensor_count; ++t) {
      created->absent[t] = tensors[t].dtype == INFINI_DTYPE_INVALID;
    }
    *kernel = reinterpret_cast<infiniopBackendKernel_t>(created.release());
  } catch (const std::exception&) {
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  // No operator needs workspace: RandomSample's sort allocates its own (see cpu_llm_operators.cc).
  *workspace_size = 0;
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t Run(infiniopBackendKernel_t handle, void* /*workspace*/, size_t /*workspace_size*/,
                   void* const* buffers, size_t buffer_count,
                   const infiniopBackendRunParams* params, infinirtStream_t stream) {
  if (handle == nullptr) return INFINI_STATUS_BAD_PARAM;
  Kernel& kernel = *KernelOf(handle);
  const Plan& plan = *kernel.plan;
  if (buffer_count != plan.buffer_count()) return INFINI_STATUS_BAD_PARAM;
  if (buffers == nullptr) return INFINI_STATUS_NULL_POINTER;
  if (plan.uses_run_params() && params == nullptr) return INFINI_STATUS_NULL_POINTER;
  if (params != nullptr) {
    const infiniStatus_t fits = plan.CheckRun(*params);
    if (fits != INFINI_STATUS_SUCCESS) return fits;
  }
  if (plan.empty()) return INFINI_STATUS_SUCCESS;  // nothing to queue
  for (size_t t = 0; t < buffer_count; ++t) {
    if (buffers[t] == nullptr && !kernel.absent[t]) return INFINI_STATUS_NULL_POINTER;
  }

  // Whether this call is being recorded into a graph decides who owns its closure. (Capture
  // beginning on the stream from another thread between this check and the launch is a race
  // of the caller's, as it is for any work queued meanwhile.)
  infinirtStreamCaptureStatus capture = infinirtStreamCaptureStatusNone;
  if (infinirtStreamIsCapturing(stream, &capture) != infinirtSuccess) {
    infinirtGetLastError();
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  try {
    auto closure = std::make_unique<Closure>();
    closure->plan = kernel.plan;
    std::copy(buffers, buffers + buffer_count, closure->buffers.begin());
    // Copied: they may differ per call (RandomSample's), and the caller's struct is not kept.
    if (params != nullptr) closure->params = *params;
    // An invalidated capture refuses the launch; were it to accept, keeping the closure is safe.
    if (capture != infinirtStreamCaptureStatusNone) {
      return QueueKept(kernel, std::move(closure), stream);
    }
    return QueueOnce(std::move(closure), kernel.bytes, stream);
  } catch (const std::exception&) {
    return INFINI_STATUS_INTERNAL_ERROR;
  }
}

infiniStatus_t Destroy(infiniopBackendKernel_t handle);

infiniStatus_t Describe(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                        size_t tensor_count, const infiniopBackendCreateParams* params, char* how,
                        size_t how_size) {
  infiniopBackendKernel_t kernel = nullptr;
  size_t workspace_size = 0;
  const infiniStatus_t status =
      Create(op, 0, tensors, tensor_count, params, &kernel, &workspace_size);
  if (status != INFINI_STATUS_SUCCESS) return status;
  Destroy(kernel);
  if (how != nullptr && how_size > 0) {
    std::snprintf(how, how_size, "%s",
                  op == INFINIOP_OPERATOR_Gemm ? GemmLibraries(tensors[0].dtype) : "host loops");
  }
  return INFINI_STATUS_SUCCESS;
}

// Calls still queued hold the plan themselves; the closures kept for graphs go with the kernel.
infiniStatus_t Destroy(infiniopBackendKernel_t handle) {
  if (handle == nullptr) return INFINI_STATUS_BAD_PARAM;
  delete KernelOf(handle);
  return INFINI_STATUS_SUCCESS;
}

const infiniopBackendTable kTable = {
    sizeof(infiniopBackendTable),
    INFINIOP_BACKEND_ABI_MAJOR,
    INFINIOP_BACKEND_ABI_MINOR,
    "cpu",
    INFINI_DEVICE_CPU,
    &Initialize,
    &Create,
    &Run,
    &Destroy,
    &Describe,
};

}  // namespace

}  // namespace infinirt::infiniop_cpu

extern "C" __attribute__((visibility("default"))) const infiniopBackendTable*
infiniopBackendGetTable(void) {
  return &infinirt::infiniop_cpu::kTable;
}
