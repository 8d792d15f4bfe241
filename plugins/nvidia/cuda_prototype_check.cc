// Compile-time proof that the CUDA-family plugin's function list (cuda_family_api.h) is the
// CUDA Runtime's: with the list's type macros set to CUDA's types, every entry must have the
// type of the function of that name in the real cuda_runtime_api.h. Compiled only where the
// CUDA Toolkit is installed; nothing of it is linked.
#include <cuda_runtime_api.h>

#include <type_traits>

#include "infinirt.h"

#define CF_ERROR cudaError_t
#define CF_STREAM cudaStream_t
#define CF_EVENT cudaEvent_t
#define CF_GRAPH cudaGraph_t
#define CF_EXEC cudaGraphExec_t
#define CF_KIND enum cudaMemcpyKind
#define CF_CAPTURE_MODE enum cudaStreamCaptureMode
#define CF_ATTR enum cudaDeviceAttr
#define CF_LIMIT enum cudaLimit
#define CF_FUNC_CACHE enum cudaFuncCache
#define CF_P2P_ATTR enum cudaDeviceP2PAttr
#define CF_STREAM_ATTR cudaStreamAttrID
#define CF_STREAM_ATTR_VALUE cudaStreamAttrValue
#define CF_POOL cudaMemPool_t
#define CF_POOL_ATTR enum cudaMemPoolAttr
#define CF_POOL_PROPS struct cudaMemPoolProps
#define CF_ACCESS_DESC struct cudaMemAccessDesc
#define CF_ACCESS_FLAGS enum cudaMemAccessFlags
#define CF_LOCATION struct cudaMemLocation
#define CF_HOST_FN cudaHostFn_t
#define CF_IPC_MEM_HANDLE cudaIpcMemHandle_t
#define CF_IPC_EVENT_HANDLE cudaIpcEventHandle_t
#define CF_ENTRY_STATUS enum cudaDriverEntryPointQueryResult
#define CF_ADVICE enum cudaMemoryAdvise
#define CF_HANDLE_TYPE enum cudaMemAllocationHandleType
#define CF_POOL_EXPORT_DATA struct cudaMemPoolPtrExportData
#include "cuda_family_api.h"

#define CF_CHECK_(name, params)                                               \
  static_assert(std::is_same_v<decltype(&cuda##name), cudaError_t(*) params>, \
                "cuda" #name ": the CUDA-family function list disagrees with CUDA");
CUDA_FAMILY_REQUIRED_FUNCTIONS(CF_CHECK_)
CUDA_FAMILY_OPTIONAL_FUNCTIONS(CF_CHECK_)
#undef CF_CHECK_

// The plugin calls these through pointers with plain C types: the substitutions must not
// change the calling convention.
static_assert(sizeof(cudaError_t) == sizeof(int) && std::is_enum_v<cudaError_t>);
static_assert(sizeof(enum cudaMemcpyKind) == sizeof(int));
static_assert(sizeof(enum cudaStreamCaptureMode) == sizeof(int));
static_assert(sizeof(enum cudaDeviceAttr) == sizeof(int));
static_assert(sizeof(enum cudaLimit) == sizeof(int) && sizeof(enum cudaFuncCache) == sizeof(int));
static_assert(sizeof(enum cudaDeviceP2PAttr) == sizeof(int));
static_assert(sizeof(cudaStreamAttrID) == sizeof(int));
// The plugin passes InfiniRT's value union, which has CUDA's layout (the contract test).
static_assert(sizeof(cudaStreamAttrValue) == sizeof(union infinirtLaunchAttributeValue));
static_assert(sizeof(enum cudaMemPoolAttr) == sizeof(int) && std::is_pointer_v<cudaMemPool_t>);
static_assert(sizeof(struct cudaMemPoolProps) == sizeof(struct infinirtMemPoolProps) &&
              sizeof(struct cudaMemAccessDesc) == sizeof(struct infinirtMemAccessDesc) &&
              sizeof(enum cudaMemAccessFlags) == sizeof(enum infinirtMemAccessFlags) &&
              sizeof(struct cudaMemLocation) == sizeof(struct infinirtMemLocation));
// The handles travel by value, as InfiniRT's of the same size and alignment.
static_assert(sizeof(cudaIpcMemHandle_t) == sizeof(infinirtIpcMemHandle_t) &&
              alignof(cudaIpcMemHandle_t) == alignof(infinirtIpcMemHandle_t) &&
              sizeof(cudaIpcEventHandle_t) == sizeof(infinirtIpcEventHandle_t) &&
              sizeof(enum cudaDriverEntryPointQueryResult) == sizeof(int) &&
              sizeof(enum cudaMemoryAdvise) == sizeof(int));
static_assert(std::is_pointer_v<cudaStream_t> && std::is_pointer_v<cudaEvent_t> &&
              std::is_pointer_v<cudaGraph_t> && std::is_pointer_v<cudaGraphExec_t>);
static_assert(std::is_same_v<decltype(&cudaGetErrorName), const char* (*)(cudaError_t)>);
// The 3-argument cudaGraphInstantiate of CUDA >= 12, which the plugin calls as the 5-argument
// form only where GraphInstantiateWithFlags is missing (docs/vendor-runtimes.md).
static_assert(std::is_same_v<decltype(&cudaGraphInstantiate),
                             cudaError_t (*)(cudaGraphExec_t*, cudaGraph_t, unsigned long long)>);
// The values the NVIDIA spec passes (kCudaEnums in cuda_family.h).
#include "cuda_family.h"
static_assert(infinirt::cuda_family::kCudaEnums.memcpy_kind[0] == cudaMemcpyHostToHost &&
              infinirt::cuda_family::kCudaEnums.memcpy_kind[1] == cudaMemcpyHostToDevice &&
              infinirt::cuda_family::kCudaEnums.memcpy_kind[2] == cudaMemcpyDeviceToHost &&
              infinirt::cuda_family::kCudaEnums.memcpy_kind[3] == cudaMemcpyDeviceToDevice &&
              infinirt::cuda_family::kCudaEnums.memcpy_kind[4] == cudaMemcpyDefault);
static_assert(infinirt::cuda_family::kCudaEnums.stream_non_blocking == cudaStreamNonBlocking &&
              infinirt::cuda_family::kCudaEnums.event_blocking_sync == cudaEventBlockingSync &&
              infinirt::cuda_family::kCudaEnums.event_disable_timing == cudaEventDisableTiming &&
              infinirt::cuda_family::kCudaEnums.event_interprocess == cudaEventInterprocess &&
              infinirt::cuda_family::kCudaEnums.host_alloc_portable == cudaHostAllocPortable &&
              infinirt::cuda_family::kCudaEnums.host_alloc_mapped == cudaHostAllocMapped &&
              infinirt::cuda_family::kCudaEnums.host_alloc_write_combined ==
                  cudaHostAllocWriteCombined &&
              infinirt::cuda_family::kCudaEnums.capture_mode_relaxed ==
                  cudaStreamCaptureModeRelaxed);
// The attribute numbering self-check reads these from the properties struct (CUDA 13's layout).
#include <cstddef>
static_assert(offsetof(cudaDeviceProp, warpSize) ==
                  infinirt::cuda_family::kCuda13PropOffsets.warp_size &&
              offsetof(cudaDeviceProp, major) == infinirt::cuda_family::kCuda13PropOffsets.major &&
              offsetof(cudaDeviceProp, minor) == infinirt::cuda_family::kCuda13PropOffsets.minor &&
              offsetof(cudaDeviceProp, multiProcessorCount) ==
                  infinirt::cuda_family::kCuda13PropOffsets.multiprocessor_count);
