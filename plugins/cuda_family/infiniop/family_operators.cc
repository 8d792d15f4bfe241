// A CUDA-family operator backend (libinfiniop_<vendor>.so, one per vendor from the same code and
// the vendor's FamilyOperatorSpec): Gemm through the vendor's cuBLAS-shaped BLAS, every other
// operator through the CUDA kernels of kernels/ (NVIDIA only: nvcc builds them into the backend
// as a fatbin where the CUDA Toolkit is installed). Work is queued on the vendor's native stream
// behind the InfiniRT stream, in order with the stream's other work, through
// infinirtLaunchNativeFunc: so a capturing stream records the call, and the vendor's own capture
// takes in its kernels and cuBLAS call when InfiniRT instantiates the graph.
//
// What is not served answers honestly: without the BLAS, Gemm is NOT_IMPLEMENTED; without kernels
// (another vendor, a build without nvcc, a CUDA Runtime before 12.0), the other operators are; on
// a device the fatbin has no code for, DEVICE_ARCHITECTURE_NOT_SUPPORTED.
#include <algorithm>
#include <cstdio>
#include <cstring>
#include <exception>
#include <memory>
#include <string>
#include <vector>

#include "family_backend.h"
#include "family_kernel_abi.h"
#include "family_operator_spec.h"
#include "family_plans.h"
#include "infiniop_backend.h"
#include "infinirt.h"

namespace infinirt::infiniop_cuda_family {

namespace {

// A descriptor's work: cuBLAS's Gemm, or kernel launches (each with its kernel looked up).
struct Kernel {
  infiniopOperator_t op = INFINIOP_OPERATOR_COUNT;
  size_t buffer_count = 0;
  bool uses_run_params = false;
  GemmPlan gemm;
  KernelPlan plan;
  std::vector<void*> functions;  // per launch of the plan
};

// A descriptor's handle: its kernel is shared with the calls a graph holds, so that destroying
// the descriptor does not pull the plan from under them.
struct Descriptor {
  std::shared_ptr<const Kernel> kernel;
};

Descriptor* DescriptorOf(infiniopBackendKernel_t handle) {
  return reinterpret_cast<Descriptor*>(handle);
}

// The limits of the vendor's device_index-th device, for the kernels' geometry.
infiniStatus_t LimitsOf(int device_index, DeviceLimits* limits) {
  int ordinal = -1;
  infinirtDeviceProp prop;
  if (infinirtDeviceGetOrdinal(&ordinal, ThisVendor().device_type, device_index) !=
          infinirtSuccess ||
      infinirtGetDeviceProperties(&prop, ordinal) != infinirtSuccess) {
    infinirtGetLastError();
    return INFINI_STATUS_DEVICE_NOT_FOUND;
  }
  limits->multiprocessors = std::max(1, prop.multiProcessorCount);
  limits->max_threads_per_block = std::max(32, prop.maxThreadsPerBlock);
  // 48 KiB of shared memory per block is what every CUDA GPU offers without opting in.
  limits->shared_bytes_per_block = prop.sharedMemPerBlock > 0 ? prop.sharedMemPerBlock : 48 * 1024;
  return INFINI_STATUS_SUCCESS;
}

// Looks up the kernel of every launch of the plan.
infiniStatus_t FindFunctions(Kernel* kernel) {
  for (const KernelLaunch& launch : kernel->plan.launches) {
    std::string why;
    bool architecture = false;
    void* function = KernelFunction(launch.kernel, &why, &architecture);
    if (function == nullptr) {
      LogDebug(why);
      return architecture ? INFINI_STATUS_DEVICE_ARCHITECTURE_NOT_SUPPORTED
                          : INFINI_STATUS_NOT_IMPLEMENTED;
    }
    if (launch.args.size() < sizeof(KernelCall)) return INFINI_STATUS_INTERNAL_ERROR;
    kernel->functions.push_back(function);
  }
  return INFINI_STATUS_SUCCESS;
}

// The arguments Create and Describe take, checked alike.
infiniStatus_t CheckArguments(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                              size_t tensor_count, const infiniopBackendCreateParams* params) {
  if (params == nullptr) return INFINI_STATUS_NULL_POINTER;
  const size_t expected = infiniopOperatorTensorCount(op);
  if (expected == 0) return INFINI_STATUS_NOT_IMPLEMENTED;
  if (tensor_count != expected) return INFINI_STATUS_BAD_PARAM;
  if (tensors == nullptr) return INFINI_STATUS_NULL_POINTER;
  return INFINI_STATUS_SUCCESS;
}

// The kernel's plan for the device's limits: cuBLAS's call for Gemm, launches for the others.
// Needs neither cuBLAS nor the kernels (Create checks those; Describe assumes them).
infiniStatus_t PlanKernel(infiniopOperator_t op, const infiniopBackendTensor* tensors, size_t count,
                          const infiniopBackendCreateParams& params, const DeviceLimits& limits,
                          Kernel* kernel) {
  kernel->op = op;
  kernel->buffer_count = count;
  kernel->uses_run_params = infiniopOperatorCallScalarCount(op) > 0;
  if (op == INFINIOP_OPERATOR_Gemm) return MakeGemmPlan(tensors, &kernel->gemm);
  return MakeKernelPlan(op, tensors, count, params, limits, &kernel->plan);
}

infiniStatus_t MakeKernel(infiniopOperator_t op, int device_index,
                          const infiniopBackendTensor* tensors, size_t count,
                          const infiniopBackendCreateParams& params, Kernel* kernel) {
  DeviceLimits limits;
  if (op == INFINIOP_OPERATOR_Gemm) {
    std::string why;
    if (Cublas(&why) == nullptr) {
      LogDebug("Gemm: " + why);
      return INFINI_STATUS_NOT_IMPLEMENTED;
    }
  } else if (const infiniStatus_t found = LimitsOf(device_index, &limits)) {
    return found;
  }
  if (const infiniStatus_t planned = PlanKernel(op, tensors, count, params, limits, kernel)) {
    return planned;
  }
  return op == INFINIOP_OPERATOR_Gemm ? INFINI_STATUS_SUCCESS : FindFunctions(kernel);
}

// Queues a plan's launches, with the call's buffers, workspace and parameters in each.
infiniStatus_t LaunchPlan(const Kernel& kernel, void* workspace, size_t workspace_size,
                          void* const* buffers, const infiniopBackendRunParams* params,
                          void* native_stream) {
  KernelCall call{};
  std::copy(buffers, buffers + kernel.buffer_count, call.buffers);
  call.workspace = workspace;
  call.workspace_size = workspace_size;
  if (params != nullptr) {
    call.random_val = params->random_val;
    call.topp = params->topp;
    call.temperature = params->temperature;
    call.topk = params->topk;
    call.norm = params->norm;
    call.routed_scaling_factor = params->routed_scaling_factor;
    call.alpha_f64 = params->alpha_f64;
  }
  alignas(16) unsigned char args[kMaxKernelArgs];  // no allocation on the call's path
  for (size_t i = 0; i < kernel.plan.launches.size(); ++i) {
    const KernelLaunch& launch = kernel.plan.launches[i];
    std::memcpy(args, launch.args.data(), launch.args.size());
    std::memcpy(args, &call, sizeof call);
    void* arguments[] = {args};  // cudaLaunchKernel copies them before it returns
    const NvDim3 grid{launch.grid[0], launch.grid[1], launch.grid[2]};
    const NvDim3 block{launch.block[0], launch.block[1], launch.block[2]};
    const int status = Runtime().LaunchKernel(kernel.functions[i], grid, block, arguments,
                                              launch.shared_bytes, native_stream);
    if (status != kCudaSuccess) {
      LogDebug(std::string("launching ") + launch.kernel + ": CUDA error " +
               std::to_string(status));
      return INFINI_STATUS_INTERNAL_ERROR;
    }
  }
  return INFINI_STATUS_SUCCESS;
}

// One call, as infinirtLaunchNativeFunc holds it: issued at once, or each time a graph that
// recorded it is instantiated (or replayed).
struct QueuedCall {
  std::shared_ptr<const Kernel> kernel;
  void* buffers[kMaxBuffers] = {};
  void* workspace = nullptr;
  size_t workspace_size = 0;
  infiniopBackendRunParams params{};
};

// What the last issue on this thread answered: infinirtLaunchNativeFunc carries only an
// infinirtError_t back, and an issue made at once runs on the calling thread.
thread_local infiniStatus_t t_issued = INFINI_STATUS_SUCCESS;

infiniStatus_t Issue(const QueuedCall& call, void* native_stream) {
  const Kernel& kernel = *call.kernel;
  if (kernel.op == INFINIOP_OPERATOR_Gemm) {
    return RunGemm(kernel.gemm, call.buffers, call.params, native_stream);
  }
  return LaunchPlan(kernel, call.workspace, call.workspace_size, call.buffers, &call.params,
                    native_stream);
}

infinirtError_t INFINIRT_CB IssueQueuedCall(void* native_stream, void* data) {
  t_issued = Issue(*static_cast<const QueuedCall*>(data), native_stream);
  return t_issued == INFINI_STATUS_SUCCESS ? infinirtSuccess : infinirtErrorLaunchFailure;
}

void INFINIRT_CB ReleaseQueuedCall(void* data) { delete static_cast<QueuedCall*>(data); }

// Why infinirtLaunchNativeFunc refused, as InfiniCore says it: the call's own failure, or a
// stream that is not usable (another device's, destroyed, in an invalidated capture).
infiniStatus_t RefusalStatus(infinirtError_t error) {
  if (t_issued != INFINI_STATUS_SUCCESS) return t_issued;
  LogDebug(std::string("queueing on the stream: ") + infinirtGetErrorName(error));
  return INFINI_STATUS_BAD_PARAM;
}

// --- The table's entries -----------------------------------------------------------------------

infiniStatus_t Initialize(char* why, size_t why_size) {
  std::string reason;
  if (!LoadRuntime(&reason)) {
    LogDebug(reason);
    if (why != nullptr && why_size > 0) std::snprintf(why, why_size, "%s", reason.c_str());
    return INFINI_STATUS_DEVICE_NOT_INITIALIZED;
  }
  if (ThisVendor().assumed[0] != '\0') {
    LogDebug(std::string("not verified against a vendor header: ") + ThisVendor().assumed);
  }
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t Create(infiniopOperator_t op, int device_index, const infiniopBackendTensor* tensors,
                      size_t tensor_count, const infiniopBackendCreateParams* params,
                      infiniopBackendKernel_t* kernel, size_t* workspace_size) {
  if (kernel == nullptr || workspace_size == nullptr) return INFINI_STATUS_NULL_POINTER;
  if (const infiniStatus_t checked = CheckArguments(op, tensors, tensor_count, params)) {
    return checked;
  }
  try {
    auto made_kernel = std::make_shared<Kernel>();
    const infiniStatus_t made =
        MakeKernel(op, device_index, tensors, tensor_count, *params, made_kernel.get());
    if (made != INFINI_STATUS_SUCCESS) return made;
    *workspace_size = made_kernel->plan.workspace_size;
    auto created = std::make_unique<Descriptor>(Descriptor{std::move(made_kernel)});
    *kernel = reinterpret_cast<infiniopBackendKernel_t>(created.release());
    return INFINI_STATUS_SUCCESS;
  } catch (const std::exception&) {
    return INFINI_STATUS_INTERNAL_ERROR;
  }
}

infiniStatus_t Run(infiniopBackendKernel_t handle, void* workspace, size_t workspace_size,
                   void* const* buffers, size_t buffer_count,
                   const infiniopBackendRunParams* params, infinirtStream_t stream) {
  if (handle == nullptr) return INFINI_STATUS_BAD_PARAM;
  const std::shared_ptr<const Kernel>& kernel = DescriptorOf(handle)->kernel;
  if (buffer_count != kernel->buffer_count || buffer_count > kMaxBuffers) {
    return INFINI_STATUS_BAD_PARAM;
  }
  if (buffers == nullptr) return INFINI_STATUS_NULL_POINTER;
  if (kernel->uses_run_params && params == nullptr) return INFINI_STATUS_NULL_POINTER;
  if (kernel->op != INFINIOP_OPERATOR_Gemm && kernel->plan.check_run && params != nullptr) {
    if (const infiniStatus_t fits = kernel->plan.check_run(*params)) return fits;
  }
  if (kernel->op == INFINIOP_OPERATOR_Gemm ? kernel->gemm.empty : kernel->plan.launches.empty()) {
    return INFINI_STATUS_SUCCESS;  // nothing to queue
  }
  std::unique_ptr<QueuedCall> call;
  try {
    call = std::make_unique<QueuedCall>();
  } catch (const std::exception&) {
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  call->kernel = kernel;
  std::copy(buffers, buffers + buffer_count, call->buffers);
  call->workspace = workspace;
  call->workspace_size = workspace_size;
  if (params != nullptr) call->params = *params;  // the caller's struct is not kept
  // The runtime calls IssueQueuedCall with the stream's device current, which cuBLAS and the
  // launches use; on success it owns the call and releases it once nothing can issue it again.
  t_issued = INFINI_STATUS_SUCCESS;
  const infinirtError_t queued =
      infinirtLaunchNativeFunc(stream, &IssueQueuedCall, call.get(), &ReleaseQueuedCall);
  if (queued != infinirtSuccess) {
    infinirtGetLastError();
    return RefusalStatus(queued);
  }
  call.release();
  return INFINI_STATUS_SUCCESS;
}

// What Create would answer with the BLAS present, and the kernels where the vendor has them, on a
// device of the usual limits (the plans' geometry does not change which tensors they accept).
infiniStatus_t Describe(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                        size_t tensor_count, const infiniopBackendCreateParams* params, char* how,
                        size_t how_size) {
  if (const infiniStatus_t checked = CheckArguments(op, tensors, tensor_count, params)) {
    return checked;
  }
  if (op != INFINIOP_OPERATOR_Gemm && !ThisVendor().kernels) return INFINI_STATUS_NOT_IMPLEMENTED;
  try {
    Kernel planned;
    const infiniStatus_t status =
        PlanKernel(op, tensors, tensor_count, *params, DeviceLimits{}, &planned);
    if (status == INFINI_STATUS_SUCCESS && how != nullptr && how_size > 0) {
      std::snprintf(how, how_size, "%s",
                    op == INFINIOP_OPERATOR_Gemm ? ThisVendor().gemm_how : "CUDA kernels");
    }
    return status;
  } catch (const std::exception&) {
    return INFINI_STATUS_INTERNAL_ERROR;
  }
}

// Work already queued holds nothing of the kernel (its arguments were copied at launch); calls a
// graph recorded share it.
infiniStatus_t Destroy(infiniopBackendKernel_t handle) {
  if (handle == nullptr) return INFINI_STATUS_BAD_PARAM;
  delete DescriptorOf(handle);
  return INFINI_STATUS_SUCCESS;
}

// Made on first use: its name and device type are the vendor's.
const infiniopBackendTable* Table() {
  static const infiniopBackendTable table = {
      sizeof(infiniopBackendTable),
      INFINIOP_BACKEND_ABI_MAJOR,
      INFINIOP_BACKEND_ABI_MINOR,
      ThisVendor().name,
      ThisVendor().device_type,
      &Initialize,
      &Create,
      &Run,
      &Destroy,
      &Describe,
  };
  return &table;
}

}  // namespace

}  // namespace infinirt::infiniop_cuda_family

extern "C" __attribute__((visibility("default"))) const infiniopBackendTable*
infiniopBackendGetTable(void) {
  return infinirt::infiniop_cuda_family::Table();
}
