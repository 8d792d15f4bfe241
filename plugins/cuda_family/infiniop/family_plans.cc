// The plans of the CUDA-family operator backends' own kernels (kernels/infiniop_kernels.cu): for
// each operator but Gemm, which kernel a call launches, its geometry and its argument struct,
// checked and simplified the way the CPU backend does (plugins/cpu/infiniop/), whose semantics the
// kernels share: the same refusals (BAD_PARAM for tensors breaking an operator's shapes,
// NOT_IMPLEMENTED for a dtype combination or layout not computed), elementwise layouts with
// dimensions of one element dropped and neighbours laid out as one run merged, a 0-sized tensor
// computing nothing. This file has the elementwise operators, RMSNorm, CausalSoftmax, RoPE and
// RandomSample, and MakeKernelPlan, which sends the row-wise model and quantized operators to
// family_plans_model.cc, the caches and attention to family_plans_attention.cc, and TopK and the
// routers to family_plans_routing.cc.
#include "family_plans.h"

#include <stdint.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <type_traits>
#include <vector>

#include "family_kernel_abi.h"
#include "family_plan_helpers.h"
#include "infiniop_backend_support.h"
#include "kernels/elementwise_operators.h"

namespace infinirt::infiniop_cuda_family {

namespace {

using plans::AddLaunch;
using plans::BlockThreads;
using plans::CountElements;
using plans::FloatKernels;
using plans::GridStrideBlocks;
using plans::kElementwiseThreads;
using plans::kMaxBlock;
using plans::RowThreads;

// --- Tensors -----------------------------------------------------------------------------------

size_t ElementSize(infiniDtype_t dtype) { return infinirtDtypeSize(dtype); }

using infiniop_backend::SameShape;

// Whether the tensors can be read: shape and strides present.
bool Readable(const infiniopBackendTensor* tensors, size_t count) {
  for (size_t t = 0; t < count; ++t) {
    if (tensors[t].ndim != 0 && (tensors[t].shape == nullptr || tensors[t].strides == nullptr)) {
      return false;
    }
  }
  return true;
}

// The kernel-name suffix of a float dtype; null for another dtype.
const char* FloatSuffix(infiniDtype_t dtype) {
  switch (dtype) {
    case INFINI_DTYPE_F16:
      return "f16";
    case INFINI_DTYPE_BF16:
      return "bf16";
    case INFINI_DTYPE_F32:
      return "f32";
    case INFINI_DTYPE_F64:
      return "f64";
    default:
      return nullptr;
  }
}

// --- Elementwise: the binary operators of kernels/elementwise_operators.h, Rearrange -----------

// The table's snake names are the operator list's (they name the kernels).
constexpr bool SameText(const char* a, const char* b) {
  while (*a != '\0' && *a == *b) ++a, ++b;
  return *a == *b;
}
constexpr const char* SnakeName(infiniopOperator_t op) {
  switch (op) {
#define INFINIOP_SNAKE_NAME_(Name, snake, ...) \
  case INFINIOP_OPERATOR_##Name:               \
    return #snake;
    INFINIOP_OPERATORS(INFINIOP_SNAKE_NAME_)
#undef INFINIOP_SNAKE_NAME_
    default:
      return "";
  }
}
#define INFINIOP_CHECK_SNAKE_NAME_(Name, snake, ...)                   \
  static_assert(SameText(#snake, SnakeName(INFINIOP_OPERATOR_##Name)), \
                "elementwise_operators.h: " #Name "'s snake name is not the operator list's");
INFINIOP_CUDA_BINARY_OPERATORS(INFINIOP_CHECK_SNAKE_NAME_)
INFINIOP_CUDA_UNARY_OPERATORS(INFINIOP_CHECK_SNAKE_NAME_)
#undef INFINIOP_CHECK_SNAKE_NAME_

// The kernel of an elementwise operator for a dtype: a binary or unary operator's from
// kernels/elementwise_operators.h's tables, Rearrange's by element size; null where none is built.
const char* ElementwiseKernel(infiniopOperator_t op, infiniDtype_t dtype) {
#define INFINIOP_KERNEL_NAME_(Name, snake, Op, suffix, Type) \
  if (dtype == INFINI_DTYPE_##Type) return "infiniop_" #snake "_" #suffix;
#define INFINIOP_ELEMENTWISE_CASE_(Name, snake, Op, types) \
  case INFINIOP_OPERATOR_##Name:                           \
    types(INFINIOP_KERNEL_NAME_, Name, snake, Op) return nullptr;
  switch (op) {
    INFINIOP_CUDA_BINARY_OPERATORS(INFINIOP_ELEMENTWISE_CASE_)
    INFINIOP_CUDA_UNARY_OPERATORS(INFINIOP_ELEMENTWISE_CASE_)
#undef INFINIOP_ELEMENTWISE_CASE_
#undef INFINIOP_KERNEL_NAME_
    case INFINIOP_OPERATOR_Rearrange:
      switch (ElementSize(dtype)) {
        case 1:
          return "infiniop_rearrange_1";
        case 2:
          return "infiniop_rearrange_2";
        case 4:
          return "infiniop_rearrange_4";
        case 8:
          return "infiniop_rearrange_8";
        case 16:
          return "infiniop_rearrange_16";
        default:
          return nullptr;
      }
    default:
      return nullptr;
  }
}

// Whether the operator is one of the elementwise tables' or Rearrange.
bool IsElementwise(infiniopOperator_t op) {
  switch (op) {
#define INFINIOP_ELEMENTWISE_OPERATOR_(Name, ...) case INFINIOP_OPERATOR_##Name:
    INFINIOP_CUDA_BINARY_OPERATORS(INFINIOP_ELEMENTWISE_OPERATOR_)
    INFINIOP_CUDA_UNARY_OPERATORS(INFINIOP_ELEMENTWISE_OPERATOR_)
#undef INFINIOP_ELEMENTWISE_OPERATOR_
    case INFINIOP_OPERATOR_Rearrange:
      return true;
    default:
      return false;
  }
}

static_assert(kMaxBuffers >= infiniop_backend::MostOperatorTensors(),
              "KernelCall holds the buffers of every operator of the list");

// The call's layout simplified as the CPU's MergeDimensions does: dimensions of one element go,
// and a dimension joins the one before it when, in every tensor, stepping the outer one equals
// stepping the inner one across its whole extent. false when more than kMaxDims remain.
bool MergeDimensions(const infiniopBackendTensor* tensors, size_t count, ElementwiseArgs* args) {
  const size_t ndim = tensors[0].ndim;
  int merged = 0;
  for (size_t d = 0; d < ndim; ++d) {
    const uint64_t size = tensors[0].shape[d];
    if (size == 1) continue;
    bool joins = merged > 0;
    for (size_t t = 0; joins && t < count; ++t) {
      const int64_t inner = tensors[t].strides[d];
      joins = args->strides[t][merged - 1] == inner * static_cast<int64_t>(size);
    }
    if (joins) {
      args->shape[merged - 1] *= size;
      for (size_t t = 0; t < count; ++t) args->strides[t][merged - 1] = tensors[t].strides[d];
      continue;
    }
    if (merged == kMaxDims) return false;
    args->shape[merged] = size;
    for (size_t t = 0; t < count; ++t) args->strides[t][merged] = tensors[t].strides[d];
    ++merged;
  }
  args->ndim = merged;
  return true;
}

// The binary (c, a, b) and unary (y, x) operators and Rearrange (dst, src): tensors of one shape
// and one dtype.
infiniStatus_t MakeElementwisePlan(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                                   size_t count, const DeviceLimits& limits, KernelPlan* plan) {
  for (size_t t = 1; t < count; ++t) {
    if (!SameShape(tensors[0], tensors[t])) return INFINI_STATUS_BAD_PARAM;
    if (tensors[t].dtype != tensors[0].dtype) return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  const char* kernel = ElementwiseKernel(op, tensors[0].dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  ElementwiseArgs args{};
  if (!CountElements(tensors[0], &args.elements)) return INFINI_STATUS_BAD_PARAM;
  if (args.elements == 0) return INFINI_STATUS_SUCCESS;  // nothing to launch
  if (!MergeDimensions(tensors, count, &args)) return INFINI_STATUS_NOT_IMPLEMENTED;
  bool unit_strides = true;
  for (size_t t = 0; t < count && args.ndim == 1; ++t) unit_strides &= args.strides[t][0] == 1;
  if (args.ndim == 0 || (args.ndim == 1 && unit_strides)) args.ndim = 0;  // one flat loop
  const unsigned threads = BlockThreads(limits, kElementwiseThreads);
  AddLaunch(kernel, GridStrideBlocks(args.elements, threads, limits), threads, 0, args, plan);
  return INFINI_STATUS_SUCCESS;
}

// --- Row-wise operators: RMSNorm, CausalSoftmax ------------------------------------------------

const char* RMSNormKernel(infiniDtype_t x, infiniDtype_t w) {
  switch (x) {
    case INFINI_DTYPE_F16:
      if (w == INFINI_DTYPE_F16) return "infiniop_rms_norm_f16_w_f16";
      if (w == INFINI_DTYPE_BF16) return "infiniop_rms_norm_f16_w_bf16";
      if (w == INFINI_DTYPE_F32) return "infiniop_rms_norm_f16_w_f32";
      return nullptr;
    case INFINI_DTYPE_BF16:
      if (w == INFINI_DTYPE_F16) return "infiniop_rms_norm_bf16_w_f16";
      if (w == INFINI_DTYPE_BF16) return "infiniop_rms_norm_bf16_w_bf16";
      if (w == INFINI_DTYPE_F32) return "infiniop_rms_norm_bf16_w_f32";
      return nullptr;
    case INFINI_DTYPE_F32:
      return w == INFINI_DTYPE_F32 ? "infiniop_rms_norm_f32_w_f32" : nullptr;
    case INFINI_DTYPE_F64:
      return w == INFINI_DTYPE_F64 ? "infiniop_rms_norm_f64_w_f64" : nullptr;
    default:
      return nullptr;
  }
}

// Tensors (y, x, w); y and x [batch, dim] or [batch, nhead, dim], w [dim].
infiniStatus_t MakeRMSNormPlan(const infiniopBackendTensor* tensors,
                               const infiniopBackendCreateParams& params,
                               const DeviceLimits& limits, KernelPlan* plan) {
  infiniop_backend::NormRows rows;
  if (const infiniStatus_t read = infiniop_backend::ReadNormRows(tensors, params.epsilon, &rows)) {
    return read;
  }
  RMSNormArgs args{};
  const uint64_t batch = rows.batch;
  args.nhead = rows.nhead;
  args.dim = rows.dim;
  std::copy(rows.y_strides, rows.y_strides + 2, args.y_strides);
  std::copy(rows.x_strides, rows.x_strides + 2, args.x_strides);
  args.epsilon = rows.epsilon;
  const char* kernel = RMSNormKernel(tensors[1].dtype, tensors[2].dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  if (batch == 0 || args.nhead == 0 || args.dim == 0) return INFINI_STATUS_SUCCESS;
  if (batch > UINT64_MAX / args.nhead) return INFINI_STATUS_BAD_PARAM;
  args.rows = batch * args.nhead;
  AddLaunch(kernel, args.rows, RowThreads(args.dim, limits), 0, args, plan);
  return INFINI_STATUS_SUCCESS;
}

// Tensors (y, x): [seq_len, total_seq_len] or [batch, seq_len, total_seq_len], any strides.
infiniStatus_t MakeCausalSoftmaxPlan(const infiniopBackendTensor* tensors,
                                     const DeviceLimits& limits, KernelPlan* plan) {
  infiniop_backend::SoftmaxRows rows;
  if (const infiniStatus_t read = infiniop_backend::ReadSoftmaxRows(tensors, &rows)) return read;
  CausalSoftmaxArgs args{};
  const uint64_t batch = rows.batch;
  args.seq_len = rows.seq_len;
  args.total_seq_len = rows.total_seq_len;
  std::copy(rows.y_strides, rows.y_strides + 3, args.y_strides);
  std::copy(rows.x_strides, rows.x_strides + 3, args.x_strides);
  const char* kernel = FloatKernels{"infiniop_causal_softmax_f16", "infiniop_causal_softmax_bf16",
                                    "infiniop_causal_softmax_f32", "infiniop_causal_softmax_f64"}
                           .For(tensors[1].dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  if (batch == 0 || args.seq_len == 0 || args.total_seq_len == 0) return INFINI_STATUS_SUCCESS;
  if (batch > UINT64_MAX / args.seq_len) return INFINI_STATUS_BAD_PARAM;
  args.rows = batch * args.seq_len;
  AddLaunch(kernel, args.rows, RowThreads(args.total_seq_len, limits), 0, args, plan);
  return INFINI_STATUS_SUCCESS;
}

// --- RoPE --------------------------------------------------------------------------------------

bool IsPositionDtype(infiniDtype_t dtype) {
  switch (dtype) {
    case INFINI_DTYPE_I8:
    case INFINI_DTYPE_I16:
    case INFINI_DTYPE_I32:
    case INFINI_DTYPE_I64:
    case INFINI_DTYPE_U8:
    case INFINI_DTYPE_U16:
    case INFINI_DTYPE_U32:
    case INFINI_DTYPE_U64:
      return true;
    default:
      return false;
  }
}

// Tensors (y, x, pos_ids, sin_table, cos_table), read as every backend reads them
// (infiniop_backend_support.h).
infiniStatus_t MakeRoPEPlan(const infiniopBackendTensor* tensors,
                            const infiniopBackendCreateParams& params, const DeviceLimits& limits,
                            KernelPlan* plan) {
  infiniop_backend::RoPELayout layout;
  if (const infiniStatus_t read = infiniop_backend::ReadRoPELayout(tensors, params.algo, &layout)) {
    return read;
  }
  const infiniDtype_t pos_dtype = tensors[2].dtype;
  if (!IsPositionDtype(pos_dtype)) return INFINI_STATUS_NOT_IMPLEMENTED;
  const infiniDtype_t dtype = tensors[1].dtype;
  const char* kernel =
      layout.neox ? FloatKernels{"infiniop_rope_gpt_neox_f16", "infiniop_rope_gpt_neox_bf16",
                                 "infiniop_rope_gpt_neox_f32", "infiniop_rope_gpt_neox_f64"}
                        .For(dtype)
                  : FloatKernels{"infiniop_rope_gpt_j_f16", "infiniop_rope_gpt_j_bf16",
                                 "infiniop_rope_gpt_j_f32", "infiniop_rope_gpt_j_f64"}
                        .For(dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  if (infiniop_backend::IsEmpty(layout)) return INFINI_STATUS_SUCCESS;
  RoPEArgs args{};
  args.seq_len = layout.seq_len;
  args.nhead = layout.nhead;
  args.half = layout.half;
  args.table_len = layout.table_len;
  std::copy(layout.y_strides, layout.y_strides + 3, args.y_strides);
  std::copy(layout.x_strides, layout.x_strides + 3, args.x_strides);
  std::copy(layout.pos_strides, layout.pos_strides + 2, args.pos_strides);
  args.sin_row_stride = layout.sin_row_stride;
  args.cos_row_stride = layout.cos_row_stride;
  args.pos_dtype = pos_dtype;
  const uint64_t batch = layout.batch;
  uint64_t pairs = batch;
  for (uint64_t factor : {args.seq_len, args.nhead, args.half}) {
    if (pairs > UINT64_MAX / factor) return INFINI_STATUS_BAD_PARAM;
    pairs *= factor;
  }
  args.pairs = pairs;
  const unsigned threads = BlockThreads(limits, kElementwiseThreads);
  AddLaunch(kernel, GridStrideBlocks(pairs, threads, limits), threads, 0, args, plan);
  return INFINI_STATUS_SUCCESS;
}

// --- RandomSample ------------------------------------------------------------------------------

// The shared-memory kernel sorts by rank, quadratic in the vocabulary: up to this many candidates
// (12 bytes each of dynamic shared memory); more go to the workspace's radix sort.
constexpr uint64_t kMaxSharedVoc = 1024;
constexpr uint64_t kSharedBytesPerCandidate = 12;  // an 8-byte key, a 4-byte index
// The shared-memory kernel's own (static) shared memory, with a margin.
constexpr size_t kSampleStaticShared = 2048;
// The workspace kernel's static shared memory (its radix tables), with a margin.
constexpr size_t kLargeSampleStaticShared = 42 * 1024;
constexpr uint64_t kWorkspaceBytesPerCandidate = 24;  // two 8-byte keys, two 4-byte indices

bool IsResultDtype(infiniDtype_t dtype) {
  return dtype == INFINI_DTYPE_I32 || dtype == INFINI_DTYPE_I64 || dtype == INFINI_DTYPE_U32 ||
         dtype == INFINI_DTYPE_U64;
}

// Tensors (result, probs): result 0-D, probs [voc] (any stride is read as it is). The run
// parameters come with each call.
infiniStatus_t MakeRandomSamplePlan(const infiniopBackendTensor* tensors,
                                    const DeviceLimits& limits, KernelPlan* plan) {
  const infiniopBackendTensor& result = tensors[0];
  const infiniopBackendTensor& probs = tensors[1];
  if (result.ndim != 0 || probs.ndim != 1) return INFINI_STATUS_BAD_PARAM;
  if (!IsResultDtype(result.dtype)) return INFINI_STATUS_NOT_IMPLEMENTED;
  if (FloatSuffix(probs.dtype) == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  RandomSampleArgs args{};
  args.voc = probs.shape[0];
  args.stride = probs.strides[0];
  args.result_dtype = result.dtype;
  if (args.voc == 0) return INFINI_STATUS_SUCCESS;
  if (args.voc > UINT32_MAX) return INFINI_STATUS_NOT_IMPLEMENTED;  // 32-bit sorted indices
  const unsigned threads = BlockThreads(limits, kMaxBlock);
  const uint64_t shared_bytes = args.voc * kSharedBytesPerCandidate;
  if (args.voc <= kMaxSharedVoc &&
      shared_bytes + kSampleStaticShared <= limits.shared_bytes_per_block) {
    const char* kernel = FloatKernels{"infiniop_random_sample_f16", "infiniop_random_sample_bf16",
                                      "infiniop_random_sample_f32", "infiniop_random_sample_f64"}
                             .For(probs.dtype);
    AddLaunch(kernel, 1, threads, static_cast<size_t>(shared_bytes), args, plan);
    return INFINI_STATUS_SUCCESS;
  }
  if (limits.shared_bytes_per_block < kLargeSampleStaticShared) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  // Keys first (8-byte aligned), then the indices.
  const uint64_t voc = args.voc;
  args.keys_offset[0] = 0;
  args.keys_offset[1] = 8 * voc;
  args.indices_offset[0] = 16 * voc;
  args.indices_offset[1] = 20 * voc;
  args.workspace_needed = kWorkspaceBytesPerCandidate * voc;
  const char* kernel =
      FloatKernels{"infiniop_random_sample_large_f16", "infiniop_random_sample_large_bf16",
                   "infiniop_random_sample_large_f32", "infiniop_random_sample_large_f64"}
          .For(probs.dtype);
  AddLaunch(kernel, 1, threads, 0, args, plan);
  plan->workspace_size = static_cast<size_t>(args.workspace_needed);
  return INFINI_STATUS_SUCCESS;
}

}  // namespace

infiniStatus_t MakeKernelPlan(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                              size_t count, const infiniopBackendCreateParams& params,
                              const DeviceLimits& limits, KernelPlan* plan) {
  if (plan == nullptr) return INFINI_STATUS_NULL_POINTER;
  *plan = KernelPlan{};
  const size_t expected = infiniopOperatorTensorCount(op);
  if (expected == 0 || op == INFINIOP_OPERATOR_Gemm) return INFINI_STATUS_NOT_IMPLEMENTED;
  if (count != expected) return INFINI_STATUS_BAD_PARAM;
  if (tensors == nullptr || !Readable(tensors, count)) return INFINI_STATUS_NULL_POINTER;
  infiniStatus_t status;
  switch (op) {
    case INFINIOP_OPERATOR_RMSNorm:
      status = MakeRMSNormPlan(tensors, params, limits, plan);
      break;
    case INFINIOP_OPERATOR_CausalSoftmax:
      status = MakeCausalSoftmaxPlan(tensors, limits, plan);
      break;
    case INFINIOP_OPERATOR_RoPE:
      status = MakeRoPEPlan(tensors, params, limits, plan);
      break;
    case INFINIOP_OPERATOR_RandomSample:
      status = MakeRandomSamplePlan(tensors, limits, plan);
      break;
    case INFINIOP_OPERATOR_LayerNorm:
      status = plans::MakeLayerNormPlan(tensors, params, limits, plan);
      break;
    case INFINIOP_OPERATOR_AddRMSNorm:
      status = plans::MakeAddRMSNormPlan(tensors, params, limits, plan);
      break;
    case INFINIOP_OPERATOR_Softmax:
      status = plans::MakeSoftmaxPlan(tensors, params.axis, /*log=*/false, limits, plan);
      break;
    case INFINIOP_OPERATOR_LogSoftmax:
      status = plans::MakeSoftmaxPlan(tensors, params.dim, /*log=*/true, limits, plan);
      break;
    case INFINIOP_OPERATOR_SiluAndMul:
      status = plans::MakeSiluAndMulPlan(tensors, limits, plan);
      break;
    case INFINIOP_OPERATOR_Embedding:
      status = plans::MakeEmbeddingPlan(tensors, limits, plan);
      break;
    case INFINIOP_OPERATOR_DequantizeAWQ:
      status = plans::MakeDequantizeAWQPlan(tensors, limits, plan);
      break;
    case INFINIOP_OPERATOR_I8Gemm:
      status = plans::MakeI8GemmPlan(tensors, plan);
      break;
    case INFINIOP_OPERATOR_KVCaching:
      status = plans::MakeKVCachingPlan(tensors, limits, plan);
      break;
    case INFINIOP_OPERATOR_PagedCaching:
      status = plans::MakePagedCachingPlan(tensors, limits, plan);
      break;
    case INFINIOP_OPERATOR_PagedAttention:
      status = plans::MakePagedAttentionPlan(tensors, /*prefill=*/false, params, plan);
      break;
    case INFINIOP_OPERATOR_PagedAttentionPrefill:
      status = plans::MakePagedAttentionPlan(tensors, /*prefill=*/true, params, plan);
      break;
    case INFINIOP_OPERATOR_FlashAttention:
      status = plans::MakeFlashAttentionPlan(tensors, params, plan);
      break;
    case INFINIOP_OPERATOR_Attention:
      status = plans::MakeAttentionPlan(tensors, params, limits, plan);
      break;
    case INFINIOP_OPERATOR_TopK:
      status = plans::MakeTopKPlan(tensors, params, limits, plan);
      break;
    case INFINIOP_OPERATOR_Topksoftmax:
    case INFINIOP_OPERATOR_Topkrouter:
      status = plans::MakeRouterPlan(op, tensors, limits, plan);
      break;
    default:
      // An operator with no kernels of the family's is not implemented, whatever its tensors.
      status = IsElementwise(op) ? MakeElementwisePlan(op, tensors, count, limits, plan)
                                 : INFINI_STATUS_NOT_IMPLEMENTED;
      break;
  }
  if (status != INFINI_STATUS_SUCCESS) *plan = KernelPlan{};
  return status;
}

}  // namespace infinirt::infiniop_cuda_family
