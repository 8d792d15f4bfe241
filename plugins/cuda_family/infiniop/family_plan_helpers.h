// What the CUDA family's plan files share (family_plans.cc: the elementwise operators, the norms
// and softmaxes of the first operators, RoPE, RandomSample; family_plans_model.cc: the row-wise
// model operators and the quantized ones; family_plans_attention.cc: the caches and attention;
// family_plans_routing.cc: TopK and the MoE routers):
// launch geometry, the launch itself, kernel names per dtype, and the per-file plan makers that
// MakeKernelPlan dispatches to.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_PLAN_HELPERS_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_PLAN_HELPERS_H_

#include <stdint.h>

#include <algorithm>
#include <climits>
#include <cstddef>
#include <cstring>
#include <initializer_list>
#include <type_traits>

#include "family_kernel_abi.h"
#include "family_plans.h"
#include "infiniop_backend.h"

namespace infinirt::infiniop_cuda_family::plans {

constexpr uint64_t kMaxGridX = INT32_MAX;  // 2^31 - 1
constexpr uint64_t kMaxGridY = 65535;
constexpr unsigned kMaxBlock = 1024;
constexpr unsigned kWarp = 32;
// Blocks of a grid-stride loop per multiprocessor: enough to keep each one busy.
constexpr uint64_t kBlocksPerMultiprocessor = 32;
constexpr unsigned kElementwiseThreads = 256;
// The dynamic shared memory a plan may ask for: what every CUDA GPU gives a block without opting
// in (cudaFuncSetAttribute), so that no plan depends on the device's limits.
constexpr uint64_t kPortableSharedBytes = 48 * 1024;

// A block of `wanted` threads (a multiple of 32) within what the device allows.
inline unsigned BlockThreads(const DeviceLimits& limits, unsigned wanted) {
  const unsigned device_max = limits.max_threads_per_block > 0
                                  ? static_cast<unsigned>(limits.max_threads_per_block)
                                  : kWarp;
  const unsigned most = std::max(kWarp, std::min(kMaxBlock, device_max) / kWarp * kWarp);
  return std::min(most, std::max(kWarp, (wanted + kWarp - 1) / kWarp * kWarp));
}

// Blocks of a grid-stride loop over `items` with `threads` each.
inline uint64_t GridStrideBlocks(uint64_t items, unsigned threads, const DeviceLimits& limits) {
  const uint64_t needed = (items + threads - 1) / threads;
  const uint64_t multiprocessors = static_cast<uint64_t>(std::max(limits.multiprocessors, 1));
  return std::max<uint64_t>(1, std::min(needed, multiprocessors * kBlocksPerMultiprocessor));
}

// A block per row: a warp's worth of threads per 32 columns, up to 512 (1024 for long rows).
inline unsigned RowThreads(uint64_t columns, const DeviceLimits& limits) {
  const uint64_t most = columns >= 16384 ? 1024 : 512;
  return BlockThreads(limits, static_cast<unsigned>(std::min(columns, most)));
}

// One launch of `kernel` with its arguments as bytes (the KernelCall in front, filled in by Run):
// blocks_x blocks along x (clamped to the grid's limit: the kernels loop over what is beyond) and
// blocks_y along y (which the caller keeps within kMaxGridY).
template <class Args>
void AddLaunch(const char* kernel, uint64_t blocks_x, unsigned threads, size_t shared_bytes,
               const Args& args, KernelPlan* plan, uint64_t blocks_y = 1) {
  static_assert(std::is_trivially_copyable_v<Args> && std::is_standard_layout_v<Args>);
  static_assert(offsetof(Args, call) == 0, "the KernelCall comes first");
  static_assert(sizeof(Args) <= kMaxKernelArgs, "kernel arguments stay well under CUDA's 4 KB");
  KernelLaunch launch;
  launch.kernel = kernel;
  launch.grid[0] = static_cast<unsigned>(std::min(std::max<uint64_t>(blocks_x, 1), kMaxGridX));
  launch.grid[1] = static_cast<unsigned>(std::min(std::max<uint64_t>(blocks_y, 1), kMaxGridY));
  launch.block[0] = threads;
  launch.shared_bytes = shared_bytes;
  launch.args.resize(sizeof(Args));
  std::memcpy(launch.args.data(), &args, sizeof(Args));
  plan->launches.push_back(std::move(launch));
}

// Kernel names are string literals (a launch keeps the pointer): per float dtype, F16, BF16, F32,
// F64 (null: none built for that dtype).
struct FloatKernels {
  const char* f16;
  const char* bf16;
  const char* f32;
  const char* f64;

  const char* For(infiniDtype_t dtype) const {
    switch (dtype) {
      case INFINI_DTYPE_F16:
        return f16;
      case INFINI_DTYPE_BF16:
        return bf16;
      case INFINI_DTYPE_F32:
        return f32;
      case INFINI_DTYPE_F64:
        return f64;
      default:
        return nullptr;
    }
  }
};

// The number of elements of a shape; false when it does not fit in 64 bits.
inline bool CountElements(const infiniopBackendTensor& t, uint64_t* elements) {
  uint64_t count = 1;
  for (size_t d = 0; d < t.ndim; ++d) {
    if (t.shape[d] == 0) {
      *elements = 0;
      return true;
    }
    if (count > UINT64_MAX / t.shape[d]) return false;
    count *= t.shape[d];
  }
  *elements = count;
  return true;
}

inline bool IsIndexDtype(infiniDtype_t dtype) {
  return dtype == INFINI_DTYPE_I32 || dtype == INFINI_DTYPE_I64;
}

// The lines of `shape` along `axis` for `tensors` (family_plans_model.cc; has_axis: whether each
// has the axis), the outer dimensions merged. False when more than kMaxDims outer dimensions remain
// or the line count overflows.
bool MakeLineLayout(const infiniopBackendTensor& shape, size_t axis,
                    std::initializer_list<const infiniopBackendTensor*> tensor_list,
                    std::initializer_list<bool> has_axis_list, LineLayout* layout);
// Whether the lines have no element.
bool IsEmpty(const LineLayout& lines);

// family_plans_model.cc: tensors in the order of the operator's public Create call, validated.
infiniStatus_t MakeLayerNormPlan(const infiniopBackendTensor* tensors,
                                 const infiniopBackendCreateParams& params,
                                 const DeviceLimits& limits, KernelPlan* plan);
infiniStatus_t MakeAddRMSNormPlan(const infiniopBackendTensor* tensors,
                                  const infiniopBackendCreateParams& params,
                                  const DeviceLimits& limits, KernelPlan* plan);
infiniStatus_t MakeSoftmaxPlan(const infiniopBackendTensor* tensors, int axis, bool log,
                               const DeviceLimits& limits, KernelPlan* plan);
infiniStatus_t MakeSiluAndMulPlan(const infiniopBackendTensor* tensors, const DeviceLimits& limits,
                                  KernelPlan* plan);
infiniStatus_t MakeEmbeddingPlan(const infiniopBackendTensor* tensors, const DeviceLimits& limits,
                                 KernelPlan* plan);
infiniStatus_t MakeDequantizeAWQPlan(const infiniopBackendTensor* tensors,
                                     const DeviceLimits& limits, KernelPlan* plan);
infiniStatus_t MakeI8GemmPlan(const infiniopBackendTensor* tensors, KernelPlan* plan);

// family_plans_attention.cc.
infiniStatus_t MakeKVCachingPlan(const infiniopBackendTensor* tensors, const DeviceLimits& limits,
                                 KernelPlan* plan);
infiniStatus_t MakePagedCachingPlan(const infiniopBackendTensor* tensors,
                                    const DeviceLimits& limits, KernelPlan* plan);
infiniStatus_t MakePagedAttentionPlan(const infiniopBackendTensor* tensors, bool prefill,
                                      const infiniopBackendCreateParams& params, KernelPlan* plan);
infiniStatus_t MakeFlashAttentionPlan(const infiniopBackendTensor* tensors,
                                      const infiniopBackendCreateParams& params, KernelPlan* plan);
infiniStatus_t MakeAttentionPlan(const infiniopBackendTensor* tensors,
                                 const infiniopBackendCreateParams& params,
                                 const DeviceLimits& limits, KernelPlan* plan);

// family_plans_routing.cc.
infiniStatus_t MakeTopKPlan(const infiniopBackendTensor* tensors,
                            const infiniopBackendCreateParams& params, const DeviceLimits& limits,
                            KernelPlan* plan);
infiniStatus_t MakeRouterPlan(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                              const DeviceLimits& limits, KernelPlan* plan);

}  // namespace infinirt::infiniop_cuda_family::plans

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_PLAN_HELPERS_H_
