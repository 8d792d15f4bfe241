// The plans of the row-wise model operators (LayerNorm, AddRMSNorm, Softmax, LogSoftmax,
// SiluAndMul, Embedding) and of the quantized ones (DequantizeAWQ, I8Gemm): their kernels in
// kernels/model_kernels.h and kernels/quantized_kernels.h. The tensors are read as the CPU backend
// reads them (plugins/cpu/infiniop/cpu_model_operators.cc, cpu_quantized.cc): the same shapes
// refused with BAD_PARAM, the same dtypes computed (the others NOT_IMPLEMENTED), any strides.
#include <stdint.h>

#include <algorithm>
#include <initializer_list>

#include "family_kernel_abi.h"
#include "family_plan_helpers.h"
#include "infiniop_backend_support.h"

namespace infinirt::infiniop_cuda_family::plans {

// --- Lines ---------------------------------------------------------------------------------------

// The lines of `shape` along `axis` for `tensors` (has_axis: whether each has the axis; one without
// it, such as LayerNorm's std deviation, has the other dimensions of `shape` in order), as the
// CPU's MakeLines walks them, with the outer dimensions merged as MergeDimensions merges an
// elementwise layout. False when more than kMaxDims outer dimensions remain or the line count
// overflows.
bool MakeLineLayout(const infiniopBackendTensor& shape, size_t axis,
                    std::initializer_list<const infiniopBackendTensor*> tensor_list,
                    std::initializer_list<bool> has_axis_list, LineLayout* layout) {
  const infiniopBackendTensor* tensors[kMaxLineTensors] = {};
  bool has_axis[kMaxLineTensors] = {};
  const size_t count = std::min<size_t>(tensor_list.size(), kMaxLineTensors);
  std::copy_n(tensor_list.begin(), count, tensors);
  std::copy_n(has_axis_list.begin(), std::min(count, has_axis_list.size()), has_axis);
  *layout = LineLayout{};
  layout->tensors = static_cast<int32_t>(count);
  layout->length = shape.shape[axis];
  layout->count = 1;
  int merged = 0;
  for (size_t d = 0; d < shape.ndim; ++d) {
    if (d == axis) continue;
    const uint64_t size = shape.shape[d];
    if (size == 0) {
      layout->count = 0;
    } else if (layout->count > UINT64_MAX / size) {
      return false;
    } else {
      layout->count *= size;
    }
    if (size == 1) continue;
    // Each tensor's stride along d: a tensor without the axis has shape's other dimensions, in
    // order, so that its dimensions after the axis come one earlier.
    int64_t strides[kMaxLineTensors] = {};
    for (size_t t = 0; t < count; ++t) {
      strides[t] = tensors[t]->strides[has_axis[t] || d < axis ? d : d - 1];
    }
    bool joins = merged > 0;
    for (size_t t = 0; joins && t < count; ++t) {
      joins = layout->outer_strides[t][merged - 1] == strides[t] * static_cast<int64_t>(size);
    }
    if (joins) {
      layout->outer_shape[merged - 1] *= size;
      for (size_t t = 0; t < count; ++t) layout->outer_strides[t][merged - 1] = strides[t];
      continue;
    }
    if (merged == kMaxDims) return false;
    layout->outer_shape[merged] = size;
    for (size_t t = 0; t < count; ++t) layout->outer_strides[t][merged] = strides[t];
    ++merged;
  }
  layout->outer_ndim = merged;
  for (size_t t = 0; t < count; ++t) layout->steps[t] = has_axis[t] ? tensors[t]->strides[axis] : 0;
  return true;
}

bool IsEmpty(const LineLayout& lines) { return lines.count == 0 || lines.length == 0; }

namespace {

using infiniop_backend::SameShape;

// The axis an int names in `ndim` dimensions (negative: from the end); false outside them.
bool AxisOf(int axis, size_t ndim, size_t* index) {
  const long long n = static_cast<long long>(ndim);
  const long long a = axis < 0 ? axis + n : axis;
  if (a < 0 || a >= n) return false;
  *index = static_cast<size_t>(a);
  return true;
}

// A block per line (the kernels loop over lines beyond the grid's limit).
template <class Args>
void AddLinePerBlockLaunch(const char* kernel, const Args& args, const DeviceLimits& limits,
                           KernelPlan* plan) {
  AddLaunch(kernel, args.lines.count, RowThreads(args.lines.length, limits), 0, args, plan);
}

// A thread per element of the lines, in a grid-stride loop.
template <class Args>
void AddElementLaunch(const char* kernel, const Args& args, const DeviceLimits& limits,
                      KernelPlan* plan) {
  const uint64_t elements = args.lines.count * args.lines.length;
  const unsigned threads = BlockThreads(limits, kElementwiseThreads);
  AddLaunch(kernel, GridStrideBlocks(elements, threads, limits), threads, 0, args, plan);
}

// The kernels of a norm whose weights may have another float dtype than the activations (F16 and
// BF16 activations take F16, BF16 or F32 weights; F32 and F64 only their own), as RMSNorm's.
const char* AddRMSNormKernel(infiniDtype_t x, infiniDtype_t w) {
  switch (x) {
    case INFINI_DTYPE_F16:
      return FloatKernels{"infiniop_add_rms_norm_f16_w_f16", "infiniop_add_rms_norm_f16_w_bf16",
                          "infiniop_add_rms_norm_f16_w_f32", nullptr}
          .For(w);
    case INFINI_DTYPE_BF16:
      return FloatKernels{"infiniop_add_rms_norm_bf16_w_f16", "infiniop_add_rms_norm_bf16_w_bf16",
                          "infiniop_add_rms_norm_bf16_w_f32", nullptr}
          .For(w);
    case INFINI_DTYPE_F32:
      return w == INFINI_DTYPE_F32 ? "infiniop_add_rms_norm_f32_w_f32" : nullptr;
    case INFINI_DTYPE_F64:
      return w == INFINI_DTYPE_F64 ? "infiniop_add_rms_norm_f64_w_f64" : nullptr;
    default:
      return nullptr;
  }
}

// The stride of a vector given as [n], [n, 1] or [1, n]: along its one dimension of more than one
// element (0 where it has none), as the CPU's VectorStride.
int64_t VectorStride(const infiniopBackendTensor& t) {
  for (size_t d = 0; d < t.ndim; ++d) {
    if (t.shape[d] > 1) return t.strides[d];
  }
  return 0;
}

}  // namespace

// --- LayerNorm, AddRMSNorm ---------------------------------------------------------------------

// Tensors (output, input_standardization, input_std_deviation, input, weight, bias).
infiniStatus_t MakeLayerNormPlan(const infiniopBackendTensor* tensors,
                                 const infiniopBackendCreateParams& params,
                                 const DeviceLimits& limits, KernelPlan* plan) {
  const infiniopBackendTensor &output = tensors[0], &standardized = tensors[1],
                              &deviation = tensors[2], &input = tensors[3], &weight = tensors[4],
                              &bias = tensors[5];
  const bool has_bias = bias.dtype != INFINI_DTYPE_INVALID;
  if (input.ndim == 0 || weight.ndim != 1 || deviation.ndim + 1 != input.ndim ||
      !SameShape(output, input) || !SameShape(standardized, input) ||
      (has_bias && bias.ndim != 1)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  const char* kernel = FloatKernels{"infiniop_layer_norm_f16", "infiniop_layer_norm_bf16",
                                    "infiniop_layer_norm_f32", "infiniop_layer_norm_f64"}
                           .For(input.dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  LayerNormArgs args{};
  if (!MakeLineLayout(input, input.ndim - 1, {&output, &standardized, &deviation, &input},
                      {true, true, false, true}, &args.lines)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  args.weight_step = weight.strides[0];
  args.bias_step = has_bias ? bias.strides[0] : 0;
  args.has_bias = has_bias ? 1 : 0;
  args.eps = params.eps;
  if (IsEmpty(args.lines)) return INFINI_STATUS_SUCCESS;
  AddLinePerBlockLaunch(kernel, args, limits, plan);
  return INFINI_STATUS_SUCCESS;
}

// Tensors (y, residual_out, a, b, weight).
infiniStatus_t MakeAddRMSNormPlan(const infiniopBackendTensor* tensors,
                                  const infiniopBackendCreateParams& params,
                                  const DeviceLimits& limits, KernelPlan* plan) {
  const infiniopBackendTensor &y = tensors[0], &residual = tensors[1], &a = tensors[2],
                              &b = tensors[3], &weight = tensors[4];
  if (a.ndim == 0 || weight.ndim != 1 || !SameShape(y, a) || !SameShape(residual, a) ||
      !SameShape(b, a)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  if (y.dtype != a.dtype || residual.dtype != a.dtype || b.dtype != a.dtype) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  const char* kernel = AddRMSNormKernel(a.dtype, weight.dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  AddRMSNormArgs args{};
  if (!MakeLineLayout(a, a.ndim - 1, {&y, &residual, &a, &b}, {true, true, true, true},
                      &args.lines)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  args.weight_step = weight.strides[0];
  args.epsilon = params.epsilon;
  if (IsEmpty(args.lines)) return INFINI_STATUS_SUCCESS;
  AddLinePerBlockLaunch(kernel, args, limits, plan);
  return INFINI_STATUS_SUCCESS;
}

// --- Softmax, LogSoftmax -----------------------------------------------------------------------

// Tensors (y, x) along `axis` (negative: from the end).
infiniStatus_t MakeSoftmaxPlan(const infiniopBackendTensor* tensors, int axis, bool log,
                               const DeviceLimits& limits, KernelPlan* plan) {
  const infiniopBackendTensor &y = tensors[0], &x = tensors[1];
  size_t along = 0;
  if (!SameShape(y, x) || !AxisOf(axis, x.ndim, &along)) return INFINI_STATUS_BAD_PARAM;
  if (y.dtype != x.dtype) return INFINI_STATUS_NOT_IMPLEMENTED;
  const char* kernel = log ? FloatKernels{"infiniop_log_softmax_f16", "infiniop_log_softmax_bf16",
                                          "infiniop_log_softmax_f32", "infiniop_log_softmax_f64"}
                                 .For(x.dtype)
                           : FloatKernels{"infiniop_softmax_f16", "infiniop_softmax_bf16",
                                          "infiniop_softmax_f32", "infiniop_softmax_f64"}
                                 .For(x.dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  LineArgs args{};
  if (!MakeLineLayout(x, along, {&y, &x}, {true, true}, &args.lines)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  if (IsEmpty(args.lines)) return INFINI_STATUS_SUCCESS;
  AddLinePerBlockLaunch(kernel, args, limits, plan);
  return INFINI_STATUS_SUCCESS;
}

// --- SiluAndMul, Embedding ---------------------------------------------------------------------

// Tensors (y [..., d], x [..., 2d]).
infiniStatus_t MakeSiluAndMulPlan(const infiniopBackendTensor* tensors, const DeviceLimits& limits,
                                  KernelPlan* plan) {
  const infiniopBackendTensor &y = tensors[0], &x = tensors[1];
  if (y.ndim == 0 || x.ndim != y.ndim || x.shape[x.ndim - 1] != 2 * y.shape[y.ndim - 1] ||
      !std::equal(y.shape, y.shape + y.ndim - 1, x.shape)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  if (y.dtype != x.dtype) return INFINI_STATUS_NOT_IMPLEMENTED;
  const char* kernel = FloatKernels{"infiniop_silu_and_mul_f16", "infiniop_silu_and_mul_bf16",
                                    "infiniop_silu_and_mul_f32", "infiniop_silu_and_mul_f64"}
                           .For(x.dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  LineArgs args{};
  if (!MakeLineLayout(y, y.ndim - 1, {&y, &x}, {true, true}, &args.lines)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  if (IsEmpty(args.lines)) return INFINI_STATUS_SUCCESS;
  if (args.lines.count > UINT64_MAX / args.lines.length) return INFINI_STATUS_BAD_PARAM;
  AddElementLaunch(kernel, args, limits, plan);
  return INFINI_STATUS_SUCCESS;
}

// Tensors (output, input, weight): output [input's shape..., dim], weight [vocab, dim].
infiniStatus_t MakeEmbeddingPlan(const infiniopBackendTensor* tensors, const DeviceLimits& limits,
                                 KernelPlan* plan) {
  const infiniopBackendTensor &output = tensors[0], &input = tensors[1], &weight = tensors[2];
  if (weight.ndim != 2 || output.ndim != input.ndim + 1 ||
      output.shape[output.ndim - 1] != weight.shape[1] ||
      !std::equal(input.shape, input.shape + input.ndim, output.shape)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  if (output.dtype != weight.dtype || !IsIndexDtype(input.dtype)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  const char* kernel = FloatKernels{"infiniop_embedding_f16", "infiniop_embedding_bf16",
                                    "infiniop_embedding_f32", "infiniop_embedding_f64"}
                           .For(weight.dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  EmbeddingArgs args{};
  // The indices walked with the output's outer dimensions: the input's shape.
  if (!MakeLineLayout(output, output.ndim - 1, {&output, &input}, {true, false}, &args.lines)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  args.vocab = weight.shape[0];
  args.weight_strides[0] = weight.strides[0];
  args.weight_strides[1] = weight.strides[1];
  args.index_dtype = input.dtype;
  if (IsEmpty(args.lines)) return INFINI_STATUS_SUCCESS;
  if (args.lines.count > UINT64_MAX / args.lines.length) return INFINI_STATUS_BAD_PARAM;
  AddElementLaunch(kernel, args, limits, plan);
  return INFINI_STATUS_SUCCESS;
}

// --- DequantizeAWQ, I8Gemm ---------------------------------------------------------------------

// Tensors (out [K, N], qweight [K, N / 8], scales [groups, N], zeros [groups, N / 8]).
infiniStatus_t MakeDequantizeAWQPlan(const infiniopBackendTensor* tensors,
                                     const DeviceLimits& limits, KernelPlan* plan) {
  const infiniopBackendTensor &out = tensors[0], &qweight = tensors[1], &scales = tensors[2],
                              &zeros = tensors[3];
  if (out.ndim != 2 || qweight.ndim != 2 || scales.ndim != 2 || zeros.ndim != 2 ||
      out.shape[1] != 8 * qweight.shape[1] || scales.shape[0] == 0 ||
      out.shape[0] % scales.shape[0] != 0 || qweight.dtype != INFINI_DTYPE_I32 ||
      zeros.dtype != INFINI_DTYPE_I32) {
    return INFINI_STATUS_BAD_PARAM;
  }
  if (scales.dtype != out.dtype) return INFINI_STATUS_NOT_IMPLEMENTED;
  const char* kernel = FloatKernels{"infiniop_dequantize_awq_f16", "infiniop_dequantize_awq_bf16",
                                    "infiniop_dequantize_awq_f32", nullptr}
                           .For(out.dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  DequantizeAWQArgs args{};
  args.pack_columns = qweight.shape[1];
  args.group = out.shape[0] / scales.shape[0];
  for (int d = 0; d < 2; ++d) {
    args.out_strides[d] = out.strides[d];
    args.qweight_strides[d] = qweight.strides[d];
    args.scales_strides[d] = scales.strides[d];
    args.zeros_strides[d] = zeros.strides[d];
  }
  if (out.shape[0] == 0 || args.pack_columns == 0) return INFINI_STATUS_SUCCESS;
  if (out.shape[0] > UINT64_MAX / args.pack_columns) return INFINI_STATUS_BAD_PARAM;
  args.packs = out.shape[0] * args.pack_columns;
  const unsigned threads = BlockThreads(limits, kElementwiseThreads);
  AddLaunch(kernel, GridStrideBlocks(args.packs, threads, limits), threads, 0, args, plan);
  return INFINI_STATUS_SUCCESS;
}

// The I8Gemm kernel's tile: kI8GemmTile x kI8GemmTile outputs per block of kI8GemmThreads threads
// (kernels/quantized_kernels.h relies on both).
constexpr uint64_t kI8GemmTile = 32;
constexpr unsigned kI8GemmThreads = 256;

// Tensors (out [M, N], bias [N] or absent, x [M, K], x_scale, weights [K, N], weights_scale).
infiniStatus_t MakeI8GemmPlan(const infiniopBackendTensor* tensors, KernelPlan* plan) {
  const infiniopBackendTensor &out = tensors[0], &bias = tensors[1], &x = tensors[2],
                              &x_scale = tensors[3], &w = tensors[4], &w_scale = tensors[5];
  if (out.ndim != 2 || x.ndim != 2 || w.ndim != 2 || x.dtype != INFINI_DTYPE_I8 ||
      w.dtype != INFINI_DTYPE_I8 || x.shape[1] != w.shape[0] || out.shape[0] != x.shape[0] ||
      out.shape[1] != w.shape[1]) {
    return INFINI_STATUS_BAD_PARAM;
  }
  const bool has_bias = bias.dtype != INFINI_DTYPE_INVALID;
  if ((has_bias && bias.dtype != out.dtype) || x_scale.dtype != INFINI_DTYPE_F32 ||
      w_scale.dtype != INFINI_DTYPE_F32) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  const char* kernel =
      FloatKernels{"infiniop_i8_gemm_f16", "infiniop_i8_gemm_bf16", "infiniop_i8_gemm_f32", nullptr}
          .For(out.dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  I8GemmArgs args{};
  args.m = out.shape[0];
  args.n = out.shape[1];
  args.k = x.shape[1];
  for (int d = 0; d < 2; ++d) {
    args.out_strides[d] = out.strides[d];
    args.x_strides[d] = x.strides[d];
    args.w_strides[d] = w.strides[d];
  }
  args.x_scale_stride = VectorStride(x_scale);
  args.w_scale_stride = VectorStride(w_scale);
  args.bias_stride = has_bias ? bias.strides[0] : 0;
  args.has_bias = has_bias ? 1 : 0;
  if (args.m == 0 || args.n == 0) return INFINI_STATUS_SUCCESS;
  args.m_tiles = (args.m + kI8GemmTile - 1) / kI8GemmTile;
  args.n_tiles = (args.n + kI8GemmTile - 1) / kI8GemmTile;
  // Column tiles along x, row tiles along y (the kernel loops over those beyond the grid).
  AddLaunch(kernel, args.n_tiles, kI8GemmThreads, 0, args, plan, std::min(args.m_tiles, kMaxGridY));
  return INFINI_STATUS_SUCCESS;
}

}  // namespace infinirt::infiniop_cuda_family::plans
