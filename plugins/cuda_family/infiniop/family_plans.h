// The CUDA-family operator backends' plans for the operators computed by its own CUDA kernels
// (every operator but Gemm, which is cuBLAS's): which kernels a call launches, with what geometry
// and arguments. family_plans.cc makes them at Create; family_operators.cc launches them at Run.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_PLANS_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_PLANS_H_

#include <stddef.h>

#include <functional>
#include <vector>

#include "infiniop_backend.h"

namespace infinirt::infiniop_cuda_family {

// What a plan may assume of the device.
struct DeviceLimits {
  int multiprocessors = 1;
  int max_threads_per_block = 1024;
  size_t shared_bytes_per_block = 48 * 1024;
};

// The largest argument struct a kernel takes (well under CUDA's 4 KB): Run copies a launch's
// arguments into a buffer of this size on its stack.
constexpr size_t kMaxKernelArgs = 1024;

// One kernel launch: the kernel's name in the fatbin, its geometry, and its argument struct as
// bytes (sizeof the kernel's struct, a KernelCall first, which Run fills in).
struct KernelLaunch {
  const char* kernel = nullptr;
  unsigned grid[3] = {1, 1, 1};
  unsigned block[3] = {1, 1, 1};
  size_t shared_bytes = 0;
  std::vector<unsigned char> args;
};

// A call: its launches, in order on the call's stream (none: nothing to compute, as for a
// 0-sized tensor), and the workspace it needs. check_run, where set, checks each call's run
// parameters before anything is queued (the routers' topk against their experts): a call it
// refuses launches nothing and answers its status.
struct KernelPlan {
  std::vector<KernelLaunch> launches;
  size_t workspace_size = 0;
  std::function<infiniStatus_t(const infiniopBackendRunParams&)> check_run;
};

// The plan computing `op` (not Gemm) on tensors that passed libinfiniop's validation, in the
// order of the operator's public Create call. NOT_IMPLEMENTED for a combination of dtypes or a
// layout the kernels do not compute, BAD_PARAM for tensors breaking what the kernels rely on.
infiniStatus_t MakeKernelPlan(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                              size_t count, const infiniopBackendCreateParams& params,
                              const DeviceLimits& limits, KernelPlan* plan);

}  // namespace infinirt::infiniop_cuda_family

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_PLANS_H_
