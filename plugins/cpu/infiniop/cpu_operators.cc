// The CPU operator backend (libinfiniop_cpu.so): the elementwise operators (Add, Mul, SwiGLU and
// Rearrange) computed on the host, queued in stream order with infinirtLaunchHostFunc.
//
// libinfiniop has validated every descriptor before Create sees it: the tensors of one call share
// one shape and one dtype, and the strides (in elements, possibly 0 or negative) address memory
// the caller owns. A descriptor's layout is simplified once, at Create (dimensions of one element
// dropped, neighbours that every tensor lays out as one run merged), so that the usual case, all
// tensors contiguous, becomes a single flat loop the compiler can vectorise.
#include <algorithm>
#include <array>
#include <climits>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <exception>
#include <memory>
#include <mutex>
#include <type_traits>
#include <utility>
#include <vector>

#include "infiniop_backend.h"
#include "infinirt.h"

namespace infinirt::infiniop_cpu {

namespace {

// --- Half-precision conversions ----------------------------------------------------------------

uint32_t BitsOf(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return bits;
}

float FloatOf(uint32_t bits) {
  float value;
  std::memcpy(&value, &bits, sizeof value);
  return value;
}

// IEEE binary16: 1 sign bit, 5 exponent bits (bias 15), 10 mantissa bits.
float HalfToFloat(uint16_t half) {
  const uint32_t sign = static_cast<uint32_t>(half & 0x8000u) << 16;
  const uint32_t exponent = (half >> 10) & 0x1fu;
  const uint32_t mantissa = half & 0x3ffu;
  if (exponent == 0x1f) return FloatOf(sign | 0x7f800000u | (mantissa << 13));  // inf, NaN
  if (exponent != 0) return FloatOf(sign | ((exponent + 112) << 23) | (mantissa << 13));
  // Zero or subnormal: mantissa * 2^-24, exact in float (a power-of-two scale of a small integer).
  const float magnitude = static_cast<float>(mantissa) * 0x1p-24f;
  return FloatOf(sign | BitsOf(magnitude));
}

// Rounds to nearest, ties to even; too large a value becomes infinity, a NaN stays a NaN.
uint16_t FloatToHalf(float value) {
  const uint32_t bits = BitsOf(value);
  const uint16_t sign = static_cast<uint16_t>((bits >> 16) & 0x8000u);
  const uint32_t magnitude = bits & 0x7fffffffu;
  if (magnitude > 0x7f800000u) {  // NaN: quiet, with the top of its payload
    return static_cast<uint16_t>(sign | 0x7e00u | ((magnitude >> 13) & 0x3ffu));
  }
  // 65520 (0x477ff000) lies halfway between the largest half, 65504, and 2^16; the tie goes to
  // the even neighbour, which is infinity.
  if (magnitude >= 0x477ff000u) return static_cast<uint16_t>(sign | 0x7c00u);
  if (magnitude >= 0x38800000u) {  // a normal half: rebias the exponent, round off 13 bits
    const uint32_t rounded = magnitude + 0xfffu + ((magnitude >> 13) & 1u);
    return static_cast<uint16_t>(sign | ((rounded - 0x38000000u) >> 13));
  }
  // A subnormal half (or zero): the value in units of 2^-24, rounded to an integer. Below 2^-25
  // (float exponent 102) that is 0; exactly 2^-25 is a tie that goes to the even 0 as well.
  const uint32_t exponent = magnitude >> 23;
  if (exponent < 102) return sign;
  const uint32_t significand = (magnitude & 0x7fffffu) | 0x800000u;
  const uint32_t shift = 126 - exponent;  // 14 to 24
  uint32_t units = significand >> shift;
  const uint32_t remainder = significand & ((1u << shift) - 1);
  const uint32_t halfway = 1u << (shift - 1);
  if (remainder > halfway || (remainder == halfway && (units & 1u) != 0)) ++units;
  return static_cast<uint16_t>(sign | units);  // 0x400 when it rounds up to the smallest normal
}

// bfloat16 is the upper half of a float.
float Bf16ToFloat(uint16_t bf16) { return FloatOf(static_cast<uint32_t>(bf16) << 16); }

uint16_t FloatToBf16(float value) {
  const uint32_t bits = BitsOf(value);
  // A NaN is truncated (and made quiet): rounding could carry its payload into infinity.
  if ((bits & 0x7fffffffu) > 0x7f800000u) return static_cast<uint16_t>((bits >> 16) | 0x0040u);
  return static_cast<uint16_t>((bits + 0x7fffu + ((bits >> 16) & 1u)) >> 16);
}

// The storage types of F16 and BF16 elements.
struct Half {
  uint16_t bits;
};
struct BFloat16 {
  uint16_t bits;
};

// How elements of a storage type are computed with: Load gives the value to compute with, Store
// the element to write back. Half precision computes in float; signed integers in the unsigned
// type of their width, so that overflow wraps instead of being undefined.
template <class T>
struct Arithmetic {
  using Value = T;
  static Value Load(T element) { return element; }
  static T Store(Value value) { return value; }
};

template <>
struct Arithmetic<Half> {
  using Value = float;
  static float Load(Half element) { return HalfToFloat(element.bits); }
  static Half Store(float value) { return Half{FloatToHalf(value)}; }
};

template <>
struct Arithmetic<BFloat16> {
  using Value = float;
  static float Load(BFloat16 element) { return Bf16ToFloat(element.bits); }
  static BFloat16 Store(float value) { return BFloat16{FloatToBf16(value)}; }
};

template <class Signed>
struct WrappingArithmetic {
  using Value = std::make_unsigned_t<Signed>;
  static Value Load(Signed element) { return static_cast<Value>(element); }
  static Signed Store(Value value) { return static_cast<Signed>(value); }  // modular (GCC, C++20)
};

template <>
struct Arithmetic<int32_t> : WrappingArithmetic<int32_t> {};
template <>
struct Arithmetic<int64_t> : WrappingArithmetic<int64_t> {};

struct AddOp {
  template <class V>
  V operator()(V a, V b) const {
    return a + b;
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
    const V sigmoid = V(1) / (V(1) + std::exp(-gate));
    return up * (gate * sigmoid);
  }
};

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

// GCC vectorises at -O2 (the build's RelWithDebInfo) only a loop that needs neither a run-time
// aliasing check nor a scalar remainder: contiguous loops go in blocks of a fixed size, declared
// free of dependences between iterations. That holds for an output that is one of the inputs
// element for element (in place); an output overlapping an input otherwise is not supported.
constexpr size_t kBlock = 16;
#if defined(__GNUC__) && !defined(__clang__)
#define INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE _Pragma("GCC ivdep")
#else
#define INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
#endif

// One inner loop of a binary elementwise operator over tensors (out, x, y).
template <class T, class Op>
struct BinaryRow {
  static constexpr size_t kTensors = 3;

  static void Apply(const std::array<char*, 3>& pointers, size_t length,
                    const std::array<ptrdiff_t, 3>& strides) {
    using A = Arithmetic<T>;
    T* out = reinterpret_cast<T*>(pointers[0]);
    const T* x = reinterpret_cast<const T*>(pointers[1]);
    const T* y = reinterpret_cast<const T*>(pointers[2]);
    const Op op;
    if (strides[0] == 1 && strides[1] == 1 && strides[2] == 1) {
      size_t i = 0;
      for (; i + kBlock <= length; i += kBlock) {
        INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
        for (size_t j = i; j < i + kBlock; ++j) {
          out[j] = A::Store(op(A::Load(x[j]), A::Load(y[j])));
        }
      }
      for (; i < length; ++i) out[i] = A::Store(op(A::Load(x[i]), A::Load(y[i])));
      return;
    }
    const ptrdiff_t n = static_cast<ptrdiff_t>(length);
    for (ptrdiff_t i = 0; i < n; ++i) {
      out[i * strides[0]] = A::Store(op(A::Load(x[i * strides[1]]), A::Load(y[i * strides[2]])));
    }
  }
};

// One inner loop of Rearrange (dst, src): elements are kSize raw bytes. memcpy of a constant size
// compiles to plain loads and stores, with no alignment or type assumed.
template <size_t kSize>
struct CopyRow {
  static constexpr size_t kTensors = 2;

  static void Apply(const std::array<char*, 2>& pointers, size_t length,
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

using Buffers = std::array<void*, kMaxTensors>;
using ComputeFn = void (*)(const Layout&, const Buffers&);

// Computes a whole call with the inner loop Row.
template <class Row>
void Elementwise(const Layout& layout, const Buffers& buffers) {
  constexpr size_t N = Row::kTensors;
  std::array<char*, N> bases;
  for (size_t t = 0; t < N; ++t) bases[t] = static_cast<char*>(buffers[t]);
  if (layout.elements == 0) return;
  if (layout.flat) {
    std::array<ptrdiff_t, N> unit;
    unit.fill(1);
    Row::Apply(bases, layout.elements, unit);
    return;
  }
  ForEachRow(layout, bases, 0, layout.rows, &Row::Apply);
}

template <class Op>
ComputeFn FloatingCompute(infiniDtype_t dtype) {
  switch (dtype) {
    case INFINI_DTYPE_F16:
      return &Elementwise<BinaryRow<Half, Op>>;
    case INFINI_DTYPE_BF16:
      return &Elementwise<BinaryRow<BFloat16, Op>>;
    case INFINI_DTYPE_F32:
      return &Elementwise<BinaryRow<float, Op>>;
    case INFINI_DTYPE_F64:
      return &Elementwise<BinaryRow<double, Op>>;
    default:
      return nullptr;
  }
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

size_t ElementSize(infiniDtype_t dtype) {
  switch (dtype) {
#define INFINIOP_CPU_DTYPE_SIZE_(name, value, size) \
  case INFINI_DTYPE_##name:                         \
    return size;
    INFINIRT_DTYPE_LIST(INFINIOP_CPU_DTYPE_SIZE_)
#undef INFINIOP_CPU_DTYPE_SIZE_
    default:
      return 0;
  }
}

ComputeFn CopyCompute(size_t element_size) {
  switch (element_size) {
    case 1:
      return &Elementwise<CopyRow<1>>;
    case 2:
      return &Elementwise<CopyRow<2>>;
    case 4:
      return &Elementwise<CopyRow<4>>;
    case 8:
      return &Elementwise<CopyRow<8>>;
    case 16:
      return &Elementwise<CopyRow<16>>;
    default:
      return nullptr;
  }
}

// The tensors an operator takes; 0 for one this backend does not implement.
size_t TensorCount(infiniopOperator_t op) {
  switch (op) {
    case INFINIOP_OPERATOR_Add:
    case INFINIOP_OPERATOR_Mul:
    case INFINIOP_OPERATOR_SwiGLU:
      return 3;
    case INFINIOP_OPERATOR_Rearrange:
      return 2;
    default:
      return 0;
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
    case INFINIOP_OPERATOR_SwiGLU:
      return FloatingCompute<SwiGLUOp>(dtype);
    case INFINIOP_OPERATOR_Rearrange:
      return CopyCompute(ElementSize(dtype));
    default:
      return nullptr;
  }
}

// --- Kernels and their queued work -------------------------------------------------------------

// What a descriptor computes; never changed once made, and shared with the work queued for it.
struct Plan {
  Layout layout;
  ComputeFn compute = nullptr;
};

// One queued call: the plan and the call's buffers.
struct Closure {
  std::shared_ptr<const Plan> plan;
  Buffers buffers{};
};

struct Kernel {
  std::shared_ptr<const Plan> plan;
  // The closures of calls recorded into graphs: a graph runs its closure at every launch, so the
  // kernel keeps them until it is destroyed (the caller keeps a descriptor alive while graphs
  // that captured it may run).
  std::mutex captured_mutex;
  std::vector<std::unique_ptr<Closure>> captured;
};

Kernel* KernelOf(infiniopBackendKernel_t kernel) { return reinterpret_cast<Kernel*>(kernel); }

void Execute(const Closure& closure) {
  closure.plan->compute(closure.plan->layout, closure.buffers);
}

// A call queued on a stream runs once and frees its closure.
void INFINIRT_CB RunAndRelease(void* user_data) {
  std::unique_ptr<Closure> closure(static_cast<Closure*>(user_data));
  Execute(*closure);
}

// A call recorded into a graph: its kernel owns the closure.
void INFINIRT_CB RunKept(void* user_data) { Execute(*static_cast<const Closure*>(user_data)); }

bool SameShape(const infiniopBackendTensor& a, const infiniopBackendTensor& b) {
  if (a.ndim != b.ndim) return false;
  return a.ndim == 0 || std::equal(a.shape, a.shape + a.ndim, b.shape);
}

// Whether the tensors can be read: shape and strides present, with one shape among them.
infiniStatus_t CheckTensors(const infiniopBackendTensor* tensors, size_t count) {
  for (size_t t = 0; t < count; ++t) {
    if (tensors[t].ndim != 0 && (tensors[t].shape == nullptr || tensors[t].strides == nullptr)) {
      return INFINI_STATUS_NULL_POINTER;
    }
  }
  for (size_t t = 1; t < count; ++t) {
    if (!SameShape(tensors[0], tensors[t])) return INFINI_STATUS_BAD_PARAM;
    if (tensors[t].dtype != tensors[0].dtype) return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  return INFINI_STATUS_SUCCESS;
}

// Queues a closure that frees itself once run.
infiniStatus_t QueueOnce(std::unique_ptr<Closure> closure, infinirtStream_t stream) {
  if (infinirtLaunchHostFunc(stream, &RunAndRelease, closure.get()) != infinirtSuccess) {
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

infiniStatus_t Initialize() { return INFINI_STATUS_SUCCESS; }

infiniStatus_t Create(infiniopOperator_t op, int /*device_index: the host is the one CPU*/,
                      const infiniopBackendTensor* tensors, size_t tensor_count,
                      const infiniopBackendCreateParams* /*params*/,
                      infiniopBackendKernel_t* kernel, size_t* workspace_size) {
  if (kernel == nullptr || workspace_size == nullptr) return INFINI_STATUS_NULL_POINTER;
  const size_t expected = TensorCount(op);
  if (expected == 0) return INFINI_STATUS_NOT_IMPLEMENTED;
  if (tensor_count != expected) return INFINI_STATUS_BAD_PARAM;
  if (tensors == nullptr) return INFINI_STATUS_NULL_POINTER;
  const infiniStatus_t readable = CheckTensors(tensors, tensor_count);
  if (readable != INFINI_STATUS_SUCCESS) return readable;
  const ComputeFn compute = ComputeFor(op, tensors[0].dtype);
  if (compute == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;

  try {
    auto plan = std::make_shared<Plan>();
    plan->compute = compute;
    if (!MakeLayout(tensors, tensor_count, ElementSize(tensors[0].dtype), &plan->layout)) {
      return INFINI_STATUS_BAD_PARAM;
    }
    auto made = std::make_unique<Kernel>();
    made->plan = std::move(plan);
    *kernel = reinterpret_cast<infiniopBackendKernel_t>(made.release());
  } catch (const std::exception&) {
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  *workspace_size = 0;
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t Run(infiniopBackendKernel_t handle, void* /*workspace*/, size_t /*workspace_size*/,
                   void* const* buffers, size_t buffer_count,
                   const infiniopBackendRunParams* /*params*/, infinirtStream_t stream) {
  if (handle == nullptr) return INFINI_STATUS_BAD_PARAM;
  Kernel& kernel = *KernelOf(handle);
  const Layout& layout = kernel.plan->layout;
  if (buffer_count != layout.tensor_count) return INFINI_STATUS_BAD_PARAM;
  if (buffers == nullptr) return INFINI_STATUS_NULL_POINTER;
  if (layout.elements == 0) return INFINI_STATUS_SUCCESS;  // nothing to queue
  for (size_t t = 0; t < buffer_count; ++t) {
    if (buffers[t] == nullptr) return INFINI_STATUS_NULL_POINTER;
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
    // An invalidated capture refuses the launch; were it to accept, keeping the closure is safe.
    if (capture != infinirtStreamCaptureStatusNone) {
      return QueueKept(kernel, std::move(closure), stream);
    }
    return QueueOnce(std::move(closure), stream);
  } catch (const std::exception&) {
    return INFINI_STATUS_INTERNAL_ERROR;
  }
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
};

}  // namespace

}  // namespace infinirt::infiniop_cpu

extern "C" __attribute__((visibility("default"))) const infiniopBackendTable*
infiniopBackendGetTable(void) {
  return &infinirt::infiniop_cpu::kTable;
}
