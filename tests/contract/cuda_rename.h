// Rename<T>: the type T with every CUDA Runtime type in it replaced by its InfiniRT namesake, the
// type-level form of the renaming rule (docs/porting.md): every cuda prefix becomes infinirt.
// It recurses through pointers, references, arrays, cv-qualifiers and function types (return and
// parameter types), so cudaHostFn_t (void (*)(void*)) or cudaStream_t* need no entry of their own.
//
// Include after infinirt.h and <cuda_runtime_api.h>.
#ifndef INFINIRT_TESTS_CONTRACT_CUDA_RENAME_H_
#define INFINIRT_TESTS_CONTRACT_CUDA_RENAME_H_

#include <cstddef>
#include <type_traits>

namespace infinirt::contract {

// RenameBare<T> handles a T without top-level cv-qualifiers. The primary template is the leaf
// case: a type that is not a CUDA type and has no parts (int, size_t, void, char, ...).
template <class T>
struct RenameBare {
  using type = T;
};

// Top-level cv-qualifiers are stripped, the rest renamed, and the qualifiers put back. Doing this
// here instead of in partial specialisations for `const T` keeps `const int[3]` (which matches
// both `const T` and `T[N]`) unambiguous.
template <class T>
struct Rename {
 private:
  using Renamed = typename RenameBare<std::remove_cv_t<T>>::type;
  using WithConst = std::conditional_t<std::is_const_v<T>, std::add_const_t<Renamed>, Renamed>;

 public:
  using type = std::conditional_t<std::is_volatile_v<T>, std::add_volatile_t<WithConst>, WithConst>;
};

template <class T>
using RenameT = typename Rename<T>::type;

// Compound types: rename the parts.
template <class T>
struct RenameBare<T*> {
  using type = RenameT<T>*;
};
template <class T>
struct RenameBare<T&> {
  using type = RenameT<T>&;
};
template <class T>
struct RenameBare<T&&> {
  using type = RenameT<T>&&;
};
template <class T, std::size_t N>
struct RenameBare<T[N]> {
  using type = RenameT<T>[N];
};
template <class T>
struct RenameBare<T[]> {
  using type = RenameT<T>[];
};
template <class R, class... Args>
struct RenameBare<R(Args...)> {
  using type = RenameT<R>(RenameT<Args>...);
};
template <class R, class... Args>
struct RenameBare<R(Args..., ...)> {
  using type = RenameT<R>(RenameT<Args>..., ...);
};
template <class R, class... Args>
struct RenameBare<R(Args...) noexcept> {
  using type = RenameT<R>(RenameT<Args>...) noexcept;
};
template <class R, class... Args>
struct RenameBare<R(Args..., ...) noexcept> {
  using type = RenameT<R>(RenameT<Args>..., ...) noexcept;
};

// The CUDA types InfiniRT renames (docs/porting.md). A CUDA type missing here survives the
// renaming, and the failure message shows it by name.
#define INFINIRT_CONTRACT_RENAME(cuda_type, infinirt_type) \
  template <>                                              \
  struct RenameBare<cuda_type> {                           \
    using type = infinirt_type;                            \
  };

INFINIRT_CONTRACT_RENAME(enum cudaError, enum infinirtError)  // and so cudaError_t
INFINIRT_CONTRACT_RENAME(cudaStream_t, infinirtStream_t)
INFINIRT_CONTRACT_RENAME(cudaEvent_t, infinirtEvent_t)
INFINIRT_CONTRACT_RENAME(cudaGraph_t, infinirtGraph_t)
INFINIRT_CONTRACT_RENAME(cudaGraphExec_t, infinirtGraphExec_t)
INFINIRT_CONTRACT_RENAME(cudaGraphNode_t, infinirtGraphNode_t)
INFINIRT_CONTRACT_RENAME(enum cudaMemcpyKind, enum infinirtMemcpyKind)
INFINIRT_CONTRACT_RENAME(enum cudaMemoryType, enum infinirtMemoryType)
INFINIRT_CONTRACT_RENAME(enum cudaStreamCaptureStatus, enum infinirtStreamCaptureStatus)
INFINIRT_CONTRACT_RENAME(enum cudaStreamCaptureMode, enum infinirtStreamCaptureMode)
INFINIRT_CONTRACT_RENAME(enum cudaGraphInstantiateFlags, enum infinirtGraphInstantiateFlags)
INFINIRT_CONTRACT_RENAME(enum cudaDeviceAttr, enum infinirtDeviceAttr)
INFINIRT_CONTRACT_RENAME(struct cudaPointerAttributes, struct infinirtPointerAttributes)
INFINIRT_CONTRACT_RENAME(struct cudaDeviceProp, struct infinirtDeviceProp)
INFINIRT_CONTRACT_RENAME(struct CUuuid_st, struct infinirtUUID_st)  // cudaUUID_t
INFINIRT_CONTRACT_RENAME(cudaMemPool_t, infinirtMemPool_t)
INFINIRT_CONTRACT_RENAME(enum cudaMemPoolAttr, enum infinirtMemPoolAttr)
INFINIRT_CONTRACT_RENAME(struct cudaGraphEdgeData_st, struct infinirtGraphEdgeData_st)
INFINIRT_CONTRACT_RENAME(enum cudaGraphDependencyType_enum, enum infinirtGraphDependencyType_enum)
INFINIRT_CONTRACT_RENAME(enum cudaLimit, enum infinirtLimit)
INFINIRT_CONTRACT_RENAME(struct cudaMemLocation, struct infinirtMemLocation)
INFINIRT_CONTRACT_RENAME(enum cudaMemLocationType, enum infinirtMemLocationType)
INFINIRT_CONTRACT_RENAME(enum cudaMemoryAdvise, enum infinirtMemoryAdvise)
INFINIRT_CONTRACT_RENAME(enum cudaMemRangeAttribute, enum infinirtMemRangeAttribute)
INFINIRT_CONTRACT_RENAME(enum cudaDeviceP2PAttr, enum infinirtDeviceP2PAttr)
INFINIRT_CONTRACT_RENAME(struct cudaPitchedPtr, struct infinirtPitchedPtr)
INFINIRT_CONTRACT_RENAME(struct cudaIpcMemHandle_st, struct infinirtIpcMemHandle_st)
INFINIRT_CONTRACT_RENAME(struct cudaIpcEventHandle_st, struct infinirtIpcEventHandle_st)
INFINIRT_CONTRACT_RENAME(struct cudaExtent, struct infinirtExtent)
INFINIRT_CONTRACT_RENAME(struct cudaPos, struct infinirtPos)
INFINIRT_CONTRACT_RENAME(struct cudaMemcpy3DParms, struct infinirtMemcpy3DParms)
INFINIRT_CONTRACT_RENAME(cudaArray_t, infinirtArray_t)
INFINIRT_CONTRACT_RENAME(enum cudaFuncCache, enum infinirtFuncCache)
INFINIRT_CONTRACT_RENAME(struct cudaHostNodeParams, struct infinirtHostNodeParams)
INFINIRT_CONTRACT_RENAME(struct cudaMemsetParams, struct infinirtMemsetParams)
INFINIRT_CONTRACT_RENAME(struct cudaMemAllocNodeParams, struct infinirtMemAllocNodeParams)
INFINIRT_CONTRACT_RENAME(enum cudaGraphNodeType, enum infinirtGraphNodeType)
INFINIRT_CONTRACT_RENAME(enum cudaMemAccessFlags, enum infinirtMemAccessFlags)
INFINIRT_CONTRACT_RENAME(enum cudaMemAllocationType, enum infinirtMemAllocationType)
INFINIRT_CONTRACT_RENAME(enum cudaMemAllocationHandleType, enum infinirtMemAllocationHandleType)
INFINIRT_CONTRACT_RENAME(struct cudaMemAccessDesc, struct infinirtMemAccessDesc)
INFINIRT_CONTRACT_RENAME(struct cudaMemPoolProps, struct infinirtMemPoolProps)
INFINIRT_CONTRACT_RENAME(struct cudaMemPoolPtrExportData, struct infinirtMemPoolPtrExportData)
INFINIRT_CONTRACT_RENAME(struct cudaGraphExecUpdateResultInfo_st,
                         struct infinirtGraphExecUpdateResultInfo_st)
INFINIRT_CONTRACT_RENAME(struct cudaGraphInstantiateParams_st,
                         struct infinirtGraphInstantiateParams_st)
INFINIRT_CONTRACT_RENAME(enum cudaGraphExecUpdateResult, enum infinirtGraphExecUpdateResult)
INFINIRT_CONTRACT_RENAME(enum cudaGraphInstantiateResult, enum infinirtGraphInstantiateResult)
INFINIRT_CONTRACT_RENAME(enum cudaGraphDebugDotFlags, enum infinirtGraphDebugDotFlags)
INFINIRT_CONTRACT_RENAME(cudaUserObject_t, infinirtUserObject_t)
INFINIRT_CONTRACT_RENAME(enum cudaStreamUpdateCaptureDependenciesFlags,
                         enum infinirtStreamUpdateCaptureDependenciesFlags)
INFINIRT_CONTRACT_RENAME(enum cudaUserObjectFlags, enum infinirtUserObjectFlags)
INFINIRT_CONTRACT_RENAME(enum cudaUserObjectRetainFlags, enum infinirtUserObjectRetainFlags)
INFINIRT_CONTRACT_RENAME(enum cudaLaunchAttributeID, enum infinirtLaunchAttributeID)
INFINIRT_CONTRACT_RENAME(union cudaLaunchAttributeValue, union infinirtLaunchAttributeValue)
INFINIRT_CONTRACT_RENAME(struct cudaAccessPolicyWindow, struct infinirtAccessPolicyWindow)
INFINIRT_CONTRACT_RENAME(enum cudaAccessProperty, enum infinirtAccessProperty)
INFINIRT_CONTRACT_RENAME(enum cudaSynchronizationPolicy, enum infinirtSynchronizationPolicy)
INFINIRT_CONTRACT_RENAME(enum cudaClusterSchedulingPolicy, enum infinirtClusterSchedulingPolicy)
INFINIRT_CONTRACT_RENAME(enum cudaLaunchMemSyncDomain, enum infinirtLaunchMemSyncDomain)
INFINIRT_CONTRACT_RENAME(struct cudaLaunchMemSyncDomainMap_st,
                         struct infinirtLaunchMemSyncDomainMap_st)
INFINIRT_CONTRACT_RENAME(cudaGraphDeviceNode_t, infinirtGraphDeviceNode_t)

#undef INFINIRT_CONTRACT_RENAME

}  // namespace infinirt::contract

#endif  // INFINIRT_TESTS_CONTRACT_CUDA_RENAME_H_
