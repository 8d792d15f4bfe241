// The plans of the selections: TopK along any dimension and the MoE routers Topksoftmax and
// Topkrouter, their kernels in kernels/routing_kernels.h. The tensors are read as the CPU backend
// reads them (plugins/cpu/infiniop/cpu_routing.cc): the same shapes refused with BAD_PARAM, the
// same dtypes computed (the others NOT_IMPLEMENTED), and, for the routers, each call's topk checked
// against the experts before anything is launched (infiniop_backend_support.h's RouterTopkFits).
//
// A block per line sorts (key, index) entries of 16 bytes: a line that fits the shared sort space
// is sorted whole there; a longer one has its first k found by a radix selection, then sorted in
// shared memory when k fits there, else (TopK only) in the block's slab of the workspace.
#include <stdint.h>

#include <algorithm>

#include "family_kernel_abi.h"
#include "family_plan_helpers.h"
#include "infiniop_backend_support.h"
#include "kernels/index_math.h"

namespace infinirt::infiniop_cuda_family::plans {

namespace {

constexpr uint64_t kEntryBytes = 16;  // a SelectEntry: key, index
// The kernels' own (static) shared memory, with a margin: the radix histogram (2 KiB) and a few
// values.
constexpr uint64_t kSelectStaticShared = 4 * 1024;
// The most entries a block sorts in shared memory: 2048 (32 KiB).
constexpr uint64_t kMostSharedEntries = 2048;
// The workspace TopK's slabs may take together, when there are more lines than multiprocessors
// (at least one slab, whatever its size).
constexpr uint64_t kMostWorkspaceBytes = uint64_t{1} << 30;

// The entries a block of this device may sort in shared memory (a power of two, 0 for none).
uint64_t SharedEntries(const DeviceLimits& limits) {
  const uint64_t bytes = std::min<uint64_t>(kPortableSharedBytes, limits.shared_bytes_per_block);
  if (bytes < kSelectStaticShared + kEntryBytes) return 0;
  uint64_t entries = kMostSharedEntries;
  while (entries > 0 && entries * kEntryBytes + kSelectStaticShared > bytes) entries >>= 1;
  return entries;
}

// A block sorting `entries` (a power of two): a thread per pair, a warp at the least.
unsigned SortThreads(uint64_t entries, const DeviceLimits& limits) {
  return BlockThreads(limits, static_cast<unsigned>(std::min<uint64_t>(kMaxBlock, entries / 2)));
}

}  // namespace

// Tensors (values_output, indices_output, input); Create's k, dim and largest (sorted or not, the
// k come in order).
infiniStatus_t MakeTopKPlan(const infiniopBackendTensor* tensors,
                            const infiniopBackendCreateParams& params, const DeviceLimits& limits,
                            KernelPlan* plan) {
  const infiniopBackendTensor &values = tensors[0], &indices = tensors[1], &input = tensors[2];
  if (params.dim < 0 || static_cast<size_t>(params.dim) >= input.ndim) {
    return INFINI_STATUS_BAD_PARAM;
  }
  const size_t dim = static_cast<size_t>(params.dim);
  if (params.k > input.shape[dim] || values.dtype != input.dtype) return INFINI_STATUS_BAD_PARAM;
  if (values.ndim != input.ndim || indices.ndim != input.ndim) return INFINI_STATUS_BAD_PARAM;
  if (!IsIndexDtype(indices.dtype)) return INFINI_STATUS_NOT_IMPLEMENTED;
  const FloatKernels shared_kernels{"infiniop_topk_f16", "infiniop_topk_bf16", "infiniop_topk_f32",
                                    "infiniop_topk_f64"};
  const FloatKernels workspace_kernels{
      "infiniop_topk_workspace_f16", "infiniop_topk_workspace_bf16", "infiniop_topk_workspace_f32",
      "infiniop_topk_workspace_f64"};
  if (shared_kernels.For(input.dtype) == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  TopKArgs args{};
  if (!MakeLineLayout(input, dim, {&values, &indices, &input}, {true, true, true}, &args.lines)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  args.k = params.k;
  args.largest = params.largest ? 1 : 0;
  args.index_dtype = indices.dtype;
  if (args.k == 0 || IsEmpty(args.lines)) return INFINI_STATUS_SUCCESS;  // nothing to write
  const uint64_t length = args.lines.length;
  const uint64_t shared_entries = SharedEntries(limits);
  if (length <= shared_entries) {  // the whole line sorted in shared memory
    args.sort_capacity = NextPowerOfTwo(length);
    AddLaunch(shared_kernels.For(input.dtype), args.lines.count,
              SortThreads(args.sort_capacity, limits),
              static_cast<size_t>(args.sort_capacity * kEntryBytes), args, plan);
    return INFINI_STATUS_SUCCESS;
  }
  const unsigned threads = BlockThreads(limits, kMaxBlock);  // the radix passes read the line
  if (args.k <= shared_entries) {  // the first k selected, sorted in shared memory
    args.sort_capacity = NextPowerOfTwo(args.k);
    AddLaunch(shared_kernels.For(input.dtype), args.lines.count, threads,
              static_cast<size_t>(args.sort_capacity * kEntryBytes), args, plan);
    return INFINI_STATUS_SUCCESS;
  }
  // Sorted in the workspace: a slab per block, as many blocks as multiprocessors (or fewer, to keep
  // the workspace within kMostWorkspaceBytes), each looping over its lines.
  if (args.k > (UINT64_MAX >> 6)) return INFINI_STATUS_NOT_IMPLEMENTED;  // no such workspace
  args.sort_capacity = NextPowerOfTwo(args.k);
  args.slab_bytes = args.sort_capacity * kEntryBytes;
  uint64_t blocks = std::min<uint64_t>(args.lines.count, std::max(limits.multiprocessors, 1));
  blocks = std::max<uint64_t>(1, std::min(blocks, kMostWorkspaceBytes / args.slab_bytes));
  args.workspace_needed = blocks * args.slab_bytes;
  AddLaunch(workspace_kernels.For(input.dtype), blocks, threads, 0, args, plan);
  plan->workspace_size = static_cast<size_t>(args.workspace_needed);
  return INFINI_STATUS_SUCCESS;
}

// Tensors (values, indices: without descriptors, then x [tokens, experts], Topkrouter's
// correction_bias [experts]). The call's topk sizes the outputs; it is checked at each call.
infiniStatus_t MakeRouterPlan(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                              const DeviceLimits& limits, KernelPlan* plan) {
  const bool grouped = op == INFINIOP_OPERATOR_Topkrouter;
  const infiniopBackendTensor& x = tensors[2];
  if (x.ndim != 2 || (x.shape[1] > 1 && x.strides[1] != 1)) return INFINI_STATUS_BAD_PARAM;
  if (tensors[0].dtype != INFINI_DTYPE_F32 || tensors[1].dtype != INFINI_DTYPE_I32) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  const uint64_t experts = x.shape[1];
  if (grouped && (experts % 8 != 0 || experts < 16)) return INFINI_STATUS_BAD_PARAM;
  if (grouped && (tensors[3].dtype != INFINI_DTYPE_F32 || tensors[3].ndim != 1)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  const FloatKernels kernels =
      grouped ? FloatKernels{"infiniop_topkrouter_f16", "infiniop_topkrouter_bf16",
                             "infiniop_topkrouter_f32", nullptr}
              : FloatKernels{"infiniop_topksoftmax_f16", "infiniop_topksoftmax_bf16",
                             "infiniop_topksoftmax_f32", nullptr};
  const char* kernel = kernels.For(x.dtype);
  if (kernel == nullptr) return INFINI_STATUS_NOT_IMPLEMENTED;
  // The sort space: the whole row where it fits, else the most a call may choose (Topksoftmax's
  // 32, Topkrouter's half of the experts).
  const uint64_t shared_entries = SharedEntries(limits);
  const uint64_t most_chosen = grouped ? experts / 2 : 32;
  RouterArgs args{};
  if (experts <= shared_entries) {
    args.sort_capacity = NextPowerOfTwo(std::max<uint64_t>(experts, 1));
  } else if (most_chosen <= shared_entries) {
    args.sort_capacity = NextPowerOfTwo(most_chosen);
  } else {
    return INFINI_STATUS_NOT_IMPLEMENTED;  // Topkrouter beyond 2 * 2048 experts
  }
  args.tokens = x.shape[0];
  args.experts = experts;
  args.row_stride = x.strides[0];
  args.bias_stride = grouped ? tensors[3].strides[0] : 0;
  plan->check_run = [op, experts](const infiniopBackendRunParams& params) {
    return infiniop_backend::RouterTopkFits(op, experts, params.topk) ? INFINI_STATUS_SUCCESS
                                                                      : INFINI_STATUS_BAD_PARAM;
  };
  if (args.tokens == 0 || experts == 0) return INFINI_STATUS_SUCCESS;  // nothing to write
  const unsigned threads = BlockThreads(limits, experts > shared_entries ? kMaxBlock : 256);
  AddLaunch(kernel, args.tokens, threads, static_cast<size_t>(args.sort_capacity * kEntryBytes),
            args, plan);
  return INFINI_STATUS_SUCCESS;
}

}  // namespace infinirt::infiniop_cuda_family::plans
