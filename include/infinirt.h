/*
 * InfiniRT: one runtime API for AI accelerators.
 *
 * This header is the CUDA Runtime API with the prefix "cuda" renamed to "infinirt": every function,
 * type, enum value and flag below has the CUDA 13 prototype or number of its namesake, so CUDA code
 * ports by renaming. Calls are routed to vendor plugins (libinfinirt_<vendor>.so) loaded at
 * start-up; a CPU backend is always available. Valid C99 and C++17.
 *
 * Semantic differences from CUDA are listed in docs/differences-from-cuda.md.
 */
#ifndef INFINIRT_H_
#define INFINIRT_H_

#include <stddef.h>
#include <stdint.h>

/* The types InfiniCore's libraries share: infiniDevice_t (with the list of device types),
 * infiniStatus_t, infiniDtype_t, and INFINIRT_ENUM_BASE. */
#include "infinicore.h"

#define INFINIRT_VERSION_MAJOR 0
#define INFINIRT_VERSION_MINOR 1
#define INFINIRT_VERSION_PATCH 0

/* The CUDA Runtime API version whose prototypes and semantics InfiniRT implements
 * (infinirtRuntimeGetVersion reports it, as cudaRuntimeGetVersion reports CUDART_VERSION). */
#define INFINIRT_CUDA_API_VERSION 13000

/* CUDA's CUDART_* macros that host programs use, renamed (CUDART becomes INFINIRT) with CUDA's
 * values, so that code using them ports by renaming too (the contract test compares them):
 *   INFINIRT_VERSION   as CUDART_VERSION: the CUDA Runtime API version (13000), for code that
 *                      tests it (#if CUDART_VERSION >= 12000). InfiniRT's own version is
 *                      INFINIRT_VERSION_MAJOR/MINOR/PATCH.
 *   INFINIRT_CB        as CUDART_CB: the calling convention of host callbacks (infinirtHostFn_t).
 *   INFINIRTAPI, INFINIRTAPI_CDECL  as CUDARTAPI, CUDARTAPI_CDECL: the calling convention of the
 *                      API functions, for pointers to them (typedef infinirtError_t
 *                      (INFINIRTAPI *MallocFn)(void**, size_t)).
 * Left out: CUDART_DEVICE (__device__: marks functions callable from device code, which InfiniRT
 * has none of), the math constants of math_constants.h and cuda_fp16.h (CUDART_PI, CUDART_INF_F,
 * ...: not the runtime's, and defined with device intrinsics), and the reserved __CUDART_* names.
 */
#define INFINIRT_VERSION INFINIRT_CUDA_API_VERSION
#if defined(_WIN32)
#define INFINIRT_CB __stdcall
#else
#define INFINIRT_CB
#endif
#if defined(_MSC_VER) && !defined(__GNUC__) /* as CUDA's host_defines.h, GNU compilers first */
#define INFINIRTAPI __stdcall
#define INFINIRTAPI_CDECL __cdecl
#else
#define INFINIRTAPI
#define INFINIRTAPI_CDECL
#endif

#if defined(_WIN32)
#define INFINIRT_API __declspec(dllimport)
#else
#define INFINIRT_API __attribute__((visibility("default")))
#endif

/* C++ default arguments, as CUDA's __dv(v). */
#ifdef __cplusplus
#define INFINIRT_DV(v) = v
#else
#define INFINIRT_DV(v)
#endif

#ifdef __cplusplus
extern "C" {
#endif

/* ---------------------------------------------------------------------------------------------
 * Errors: every cudaError value of CUDA 13, renamed. X(name without the "infinirt" prefix,
 * value, description): X(ErrorInvalidValue, 1, ...) is infinirtErrorInvalidValue = 1.
 * infinirtGetErrorName returns the full name, infinirtGetErrorString the description.
 * ------------------------------------------------------------------------------------------- */
#define INFINIRT_ERROR_LIST(X)                                                                  \
  X(Success, 0, "no error")                                                                     \
  X(ErrorInvalidValue, 1, "invalid argument")                                                   \
  X(ErrorMemoryAllocation, 2, "out of memory")                                                  \
  X(ErrorInitializationError, 3, "initialization error")                                        \
  X(ErrorCudartUnloading, 4, "runtime is shutting down")                                        \
  X(ErrorProfilerDisabled, 5, "profiler disabled")                                              \
  X(ErrorProfilerNotInitialized, 6, "profiler not initialized")                                 \
  X(ErrorProfilerAlreadyStarted, 7, "profiler already started")                                 \
  X(ErrorProfilerAlreadyStopped, 8, "profiler already stopped")                                 \
  X(ErrorInvalidConfiguration, 9, "invalid launch configuration")                               \
  X(ErrorInvalidPitchValue, 12, "invalid pitch")                                                \
  X(ErrorInvalidSymbol, 13, "invalid symbol")                                                   \
  X(ErrorInvalidHostPointer, 16, "invalid host pointer (deprecated code)")                      \
  X(ErrorInvalidDevicePointer, 17, "invalid device pointer (deprecated code)")                  \
  X(ErrorInvalidTexture, 18, "invalid texture")                                                 \
  X(ErrorInvalidTextureBinding, 19, "invalid texture binding")                                  \
  X(ErrorInvalidChannelDescriptor, 20, "invalid channel descriptor")                            \
  X(ErrorInvalidMemcpyDirection, 21, "invalid copy direction")                                  \
  X(ErrorAddressOfConstant, 22, "address of constant requested (deprecated code)")              \
  X(ErrorTextureFetchFailed, 23, "texture fetch failed (deprecated code)")                      \
  X(ErrorTextureNotBound, 24, "texture not bound (deprecated code)")                            \
  X(ErrorSynchronizationError, 25, "synchronization failed (deprecated code)")                  \
  X(ErrorInvalidFilterSetting, 26, "invalid filter setting")                                    \
  X(ErrorInvalidNormSetting, 27, "invalid normalization setting")                               \
  X(ErrorMixedDeviceExecution, 28, "mixed device execution (deprecated code)")                  \
  X(ErrorNotYetImplemented, 31, "function not yet implemented (deprecated code)")               \
  X(ErrorMemoryValueTooLarge, 32, "memory value too large (deprecated code)")                   \
  X(ErrorStubLibrary, 34, "a stub library was loaded instead of the real runtime")              \
  X(ErrorInsufficientDriver, 35, "driver is older than the runtime requires")                   \
  X(ErrorCallRequiresNewerDriver, 36, "call requires a newer driver")                           \
  X(ErrorInvalidSurface, 37, "invalid surface")                                                 \
  X(ErrorDuplicateVariableName, 43, "duplicate global variable name")                           \
  X(ErrorDuplicateTextureName, 44, "duplicate texture name")                                    \
  X(ErrorDuplicateSurfaceName, 45, "duplicate surface name")                                    \
  X(ErrorDevicesUnavailable, 46, "all devices are busy or unavailable")                         \
  X(ErrorIncompatibleDriverContext, 49, "incompatible driver context")                          \
  X(ErrorMissingConfiguration, 52, "launch configuration missing")                              \
  X(ErrorPriorLaunchFailure, 53, "a previous launch failed (deprecated code)")                  \
  X(ErrorLaunchMaxDepthExceeded, 65, "launch nesting depth exceeded")                           \
  X(ErrorLaunchFileScopedTex, 66, "file-scoped texture used in a device launch")                \
  X(ErrorLaunchFileScopedSurf, 67, "file-scoped surface used in a device launch")               \
  X(ErrorSyncDepthExceeded, 68, "device synchronization depth exceeded")                        \
  X(ErrorLaunchPendingCountExceeded, 69, "too many pending device launches")                    \
  X(ErrorInvalidDeviceFunction, 98, "invalid device function")                                  \
  X(ErrorNoDevice, 100, "no device is available")                                               \
  X(ErrorInvalidDevice, 101, "invalid device ordinal")                                          \
  X(ErrorDeviceNotLicensed, 102, "device not licensed for this use")                            \
  X(ErrorSoftwareValidityNotEstablished, 103, "software validity not established")              \
  X(ErrorStartupFailure, 127, "runtime start-up failed")                                        \
  X(ErrorInvalidKernelImage, 200, "invalid kernel image")                                       \
  X(ErrorDeviceUninitialized, 201, "device context not initialized")                            \
  X(ErrorMapBufferObjectFailed, 205, "mapping a buffer object failed")                          \
  X(ErrorUnmapBufferObjectFailed, 206, "unmapping a buffer object failed")                      \
  X(ErrorArrayIsMapped, 207, "array is mapped")                                                 \
  X(ErrorAlreadyMapped, 208, "resource already mapped")                                         \
  X(ErrorNoKernelImageForDevice, 209, "no kernel image for this device")                        \
  X(ErrorAlreadyAcquired, 210, "resource already acquired")                                     \
  X(ErrorNotMapped, 211, "resource not mapped")                                                 \
  X(ErrorNotMappedAsArray, 212, "resource not mapped as an array")                              \
  X(ErrorNotMappedAsPointer, 213, "resource not mapped as a pointer")                           \
  X(ErrorECCUncorrectable, 214, "uncorrectable ECC error")                                      \
  X(ErrorUnsupportedLimit, 215, "limit not supported")                                          \
  X(ErrorDeviceAlreadyInUse, 216, "device already in use")                                      \
  X(ErrorPeerAccessUnsupported, 217, "peer access not supported")                               \
  X(ErrorInvalidPtx, 218, "invalid PTX")                                                        \
  X(ErrorInvalidGraphicsContext, 219, "invalid graphics context")                               \
  X(ErrorNvlinkUncorrectable, 220, "uncorrectable NVLink error")                                \
  X(ErrorJitCompilerNotFound, 221, "JIT compiler not found")                                    \
  X(ErrorUnsupportedPtxVersion, 222, "unsupported PTX version")                                 \
  X(ErrorJitCompilationDisabled, 223, "JIT compilation disabled")                               \
  X(ErrorUnsupportedExecAffinity, 224, "unsupported execution affinity")                        \
  X(ErrorUnsupportedDevSideSync, 225, "device-side synchronization not supported")              \
  X(ErrorContained, 226, "error contained by the device")                                       \
  X(ErrorInvalidSource, 300, "invalid source")                                                  \
  X(ErrorFileNotFound, 301, "file not found")                                                   \
  X(ErrorSharedObjectSymbolNotFound, 302, "shared object symbol not found")                     \
  X(ErrorSharedObjectInitFailed, 303, "shared object initialization failed")                    \
  X(ErrorOperatingSystem, 304, "operating system call failed")                                  \
  X(ErrorInvalidResourceHandle, 400, "invalid resource handle")                                 \
  X(ErrorIllegalState, 401, "operation not valid in the current state")                         \
  X(ErrorLossyQuery, 402, "query result would lose information")                                \
  X(ErrorSymbolNotFound, 500, "symbol not found")                                               \
  X(ErrorNotReady, 600, "work not yet complete")                                                \
  X(ErrorIllegalAddress, 700, "illegal memory access")                                          \
  X(ErrorLaunchOutOfResources, 701, "too many resources requested for launch")                  \
  X(ErrorLaunchTimeout, 702, "launch timed out")                                                \
  X(ErrorLaunchIncompatibleTexturing, 703, "launch uses incompatible texturing")                \
  X(ErrorPeerAccessAlreadyEnabled, 704, "peer access already enabled")                          \
  X(ErrorPeerAccessNotEnabled, 705, "peer access not enabled")                                  \
  X(ErrorSetOnActiveProcess, 708, "cannot change settings of an active process")                \
  X(ErrorContextIsDestroyed, 709, "context has been destroyed")                                 \
  X(ErrorAssert, 710, "device-side assertion failed")                                           \
  X(ErrorTooManyPeers, 711, "too many peers")                                                   \
  X(ErrorHostMemoryAlreadyRegistered, 712, "host memory already registered")                    \
  X(ErrorHostMemoryNotRegistered, 713, "host memory not registered")                            \
  X(ErrorHardwareStackError, 714, "hardware stack error")                                       \
  X(ErrorIllegalInstruction, 715, "illegal instruction")                                        \
  X(ErrorMisalignedAddress, 716, "misaligned address")                                          \
  X(ErrorInvalidAddressSpace, 717, "invalid address space")                                     \
  X(ErrorInvalidPc, 718, "invalid program counter")                                             \
  X(ErrorLaunchFailure, 719, "launch failed")                                                   \
  X(ErrorCooperativeLaunchTooLarge, 720, "cooperative launch too large")                        \
  X(ErrorTensorMemoryLeak, 721, "tensor memory not released")                                   \
  X(ErrorNotPermitted, 800, "operation not permitted")                                          \
  X(ErrorNotSupported, 801, "operation not supported")                                          \
  X(ErrorSystemNotReady, 802, "system not ready")                                               \
  X(ErrorSystemDriverMismatch, 803, "driver and kernel module versions differ")                 \
  X(ErrorCompatNotSupportedOnDevice, 804, "forward compatibility not supported on this device") \
  X(ErrorMpsConnectionFailed, 805, "MPS connection failed")                                     \
  X(ErrorMpsRpcFailure, 806, "MPS remote call failed")                                          \
  X(ErrorMpsServerNotReady, 807, "MPS server not ready")                                        \
  X(ErrorMpsMaxClientsReached, 808, "MPS client limit reached")                                 \
  X(ErrorMpsMaxConnectionsReached, 809, "MPS connection limit reached")                         \
  X(ErrorMpsClientTerminated, 810, "MPS client terminated")                                     \
  X(ErrorCdpNotSupported, 811, "dynamic parallelism not supported")                             \
  X(ErrorCdpVersionMismatch, 812, "dynamic parallelism version mismatch")                       \
  X(ErrorStreamCaptureUnsupported, 900, "operation not permitted while a stream is capturing")  \
  X(ErrorStreamCaptureInvalidated, 901, "capture was invalidated by an earlier error")          \
  X(ErrorStreamCaptureMerge, 902, "operation would merge two separate captures")                \
  X(ErrorStreamCaptureUnmatched, 903, "capture was not ended in the stream that began it")      \
  X(ErrorStreamCaptureUnjoined, 904, "capture has forked work that was not joined back")        \
  X(ErrorStreamCaptureIsolation, 905, "capture would depend on work outside the capture")       \
  X(ErrorStreamCaptureImplicit, 906,                                                            \
    "operation would implicitly synchronize with a capturing stream")                           \
  X(ErrorCapturedEvent, 907, "operation not permitted on an event recorded during capture")     \
  X(ErrorStreamCaptureWrongThread, 908, "capture must be ended by the thread that began it")    \
  X(ErrorTimeout, 909, "wait timed out")                                                        \
  X(ErrorGraphExecUpdateFailure, 910, "graph exec update failed")                               \
  X(ErrorExternalDevice, 911, "external device error")                                          \
  X(ErrorInvalidClusterSize, 912, "invalid cluster size")                                       \
  X(ErrorFunctionNotLoaded, 913, "function not loaded")                                         \
  X(ErrorInvalidResourceType, 914, "invalid resource type")                                     \
  X(ErrorInvalidResourceConfiguration, 915, "invalid resource configuration")                   \
  X(ErrorUnknown, 999, "unknown error")                                                         \
  X(ErrorApiFailureBase, 10000, "base of the deprecated API failure range (deprecated code)")

#define INFINIRT_ENUMERATOR_(name, value, ...) infinirt##name = value,
typedef enum infinirtError INFINIRT_ENUM_BASE {
  INFINIRT_ERROR_LIST(INFINIRT_ENUMERATOR_)
} infinirtError_t;

/* ---------------------------------------------------------------------------------------------
 * Enumerations (CUDA 13 values)
 * ------------------------------------------------------------------------------------------- */
enum infinirtMemcpyKind INFINIRT_ENUM_BASE {
  infinirtMemcpyHostToHost = 0,
  infinirtMemcpyHostToDevice = 1,
  infinirtMemcpyDeviceToHost = 2,
  infinirtMemcpyDeviceToDevice = 3,
  infinirtMemcpyDefault = 4 /* direction inferred from the pointers */
};

enum infinirtMemoryType INFINIRT_ENUM_BASE {
  infinirtMemoryTypeUnregistered = 0,
  infinirtMemoryTypeHost = 1,
  infinirtMemoryTypeDevice = 2,
  infinirtMemoryTypeManaged = 3
};

enum infinirtStreamCaptureStatus INFINIRT_ENUM_BASE {
  infinirtStreamCaptureStatusNone = 0,
  infinirtStreamCaptureStatusActive = 1,
  infinirtStreamCaptureStatusInvalidated = 2
};

enum infinirtStreamCaptureMode INFINIRT_ENUM_BASE {
  infinirtStreamCaptureModeGlobal = 0,
  infinirtStreamCaptureModeThreadLocal = 1,
  infinirtStreamCaptureModeRelaxed = 2
};

enum infinirtGraphInstantiateFlags INFINIRT_ENUM_BASE {
  infinirtGraphInstantiateFlagAutoFreeOnLaunch = 1,
  infinirtGraphInstantiateFlagUpload = 2,
  infinirtGraphInstantiateFlagDeviceLaunch = 4,
  infinirtGraphInstantiateFlagUseNodePriority = 8
};

enum infinirtMemPoolAttr INFINIRT_ENUM_BASE {
  infinirtMemPoolReuseFollowEventDependencies = 0x1,
  infinirtMemPoolReuseAllowOpportunistic = 0x2,
  infinirtMemPoolReuseAllowInternalDependencies = 0x3,
  infinirtMemPoolAttrReleaseThreshold = 0x4,
  infinirtMemPoolAttrReservedMemCurrent = 0x5,
  infinirtMemPoolAttrReservedMemHigh = 0x6,
  infinirtMemPoolAttrUsedMemCurrent = 0x7,
  infinirtMemPoolAttrUsedMemHigh = 0x8
};

/* The kind of a graph node (infinirtGraphNodeGetType). InfiniRT makes no kernel, external
 * semaphore or conditional nodes; a native-function node (infinirtLaunchNativeFunc) reports
 * infinirtGraphNodeTypeKernel, the device work it stands for. */
enum infinirtGraphNodeType INFINIRT_ENUM_BASE {
  infinirtGraphNodeTypeKernel = 0x00,
  infinirtGraphNodeTypeMemcpy = 0x01,
  infinirtGraphNodeTypeMemset = 0x02,
  infinirtGraphNodeTypeHost = 0x03,
  infinirtGraphNodeTypeGraph = 0x04,
  infinirtGraphNodeTypeEmpty = 0x05,
  infinirtGraphNodeTypeWaitEvent = 0x06,
  infinirtGraphNodeTypeEventRecord = 0x07,
  infinirtGraphNodeTypeExtSemaphoreSignal = 0x08,
  infinirtGraphNodeTypeExtSemaphoreWait = 0x09,
  infinirtGraphNodeTypeMemAlloc = 0x0a,
  infinirtGraphNodeTypeMemFree = 0x0b,
  infinirtGraphNodeTypeConditional = 0x0d,
  infinirtGraphNodeTypeCount
};

/* infinirtStreamUpdateCaptureDependencies's flags. */
enum infinirtStreamUpdateCaptureDependenciesFlags INFINIRT_ENUM_BASE {
  infinirtStreamAddCaptureDependencies = 0x0,
  infinirtStreamSetCaptureDependencies = 0x1
};

/* infinirtUserObjectCreate's flags: the one defined flag, which CUDA requires, says that no call
 * waits for the destructor. */
enum infinirtUserObjectFlags INFINIRT_ENUM_BASE { infinirtUserObjectNoDestructorSync = 0x1 };

/* infinirtGraphRetainUserObject's flags: move the caller's references to the graph instead of
 * making new ones. */
enum infinirtUserObjectRetainFlags INFINIRT_ENUM_BASE { infinirtGraphUserObjectMove = 0x1 };

/* infinirtGraphExecUpdate: why an exec could not take a graph's parameters. */
enum infinirtGraphExecUpdateResult INFINIRT_ENUM_BASE {
  infinirtGraphExecUpdateSuccess = 0x0,
  infinirtGraphExecUpdateError = 0x1,
  infinirtGraphExecUpdateErrorTopologyChanged = 0x2,
  infinirtGraphExecUpdateErrorNodeTypeChanged = 0x3,
  infinirtGraphExecUpdateErrorFunctionChanged = 0x4,
  infinirtGraphExecUpdateErrorParametersChanged = 0x5,
  infinirtGraphExecUpdateErrorNotSupported = 0x6,
  infinirtGraphExecUpdateErrorUnsupportedFunctionChange = 0x7,
  infinirtGraphExecUpdateErrorAttributesChanged = 0x8
};

typedef enum infinirtGraphInstantiateResult INFINIRT_ENUM_BASE {
  infinirtGraphInstantiateSuccess = 0,
  infinirtGraphInstantiateError = 1,
  infinirtGraphInstantiateInvalidStructure = 2,
  infinirtGraphInstantiateNodeOperationNotSupported = 3,
  infinirtGraphInstantiateMultipleDevicesNotSupported = 4,
  infinirtGraphInstantiateConditionalHandleUnused = 5
} infinirtGraphInstantiateResult;

/* infinirtGraphDebugDotPrint: what the DOT file shows of each node besides its type. */
enum infinirtGraphDebugDotFlags INFINIRT_ENUM_BASE {
  infinirtGraphDebugDotFlagsVerbose = 1 << 0,
  infinirtGraphDebugDotFlagsKernelNodeParams = 1 << 2,
  infinirtGraphDebugDotFlagsMemcpyNodeParams = 1 << 3,
  infinirtGraphDebugDotFlagsMemsetNodeParams = 1 << 4,
  infinirtGraphDebugDotFlagsHostNodeParams = 1 << 5,
  infinirtGraphDebugDotFlagsEventNodeParams = 1 << 6,
  infinirtGraphDebugDotFlagsExtSemasSignalNodeParams = 1 << 7,
  infinirtGraphDebugDotFlagsExtSemasWaitNodeParams = 1 << 8,
  infinirtGraphDebugDotFlagsKernelNodeAttributes = 1 << 9,
  infinirtGraphDebugDotFlagsHandles = 1 << 10,
  infinirtGraphDebugDotFlagsConditionalNodeParams = 1 << 15
};

/* Memory pools and graph allocations: how memory may be accessed, and what a pool allocates. */
enum infinirtMemAccessFlags INFINIRT_ENUM_BASE {
  infinirtMemAccessFlagsProtNone = 0,
  infinirtMemAccessFlagsProtRead = 1,
  infinirtMemAccessFlagsProtReadWrite = 3
};

enum infinirtMemAllocationType INFINIRT_ENUM_BASE {
  infinirtMemAllocationTypeInvalid = 0x0,
  infinirtMemAllocationTypePinned = 0x1,
  infinirtMemAllocationTypeManaged = 0x2,
  infinirtMemAllocationTypeMax = 0x7FFFFFFF
};

enum infinirtMemAllocationHandleType INFINIRT_ENUM_BASE {
  infinirtMemHandleTypeNone = 0x0,
  infinirtMemHandleTypePosixFileDescriptor = 0x1,
  infinirtMemHandleTypeWin32 = 0x2,
  infinirtMemHandleTypeWin32Kmt = 0x4,
  infinirtMemHandleTypeFabric = 0x8
};

/* infinirtDeviceGetLimit/SetLimit: resources of the device's kernels. */
enum infinirtLimit INFINIRT_ENUM_BASE {
  infinirtLimitStackSize = 0x00,
  infinirtLimitPrintfFifoSize = 0x01,
  infinirtLimitMallocHeapSize = 0x02,
  infinirtLimitDevRuntimeSyncDepth = 0x03,
  infinirtLimitDevRuntimePendingLaunchCount = 0x04,
  infinirtLimitMaxL2FetchGranularity = 0x05,
  infinirtLimitPersistingL2CacheSize = 0x06
};

/* Managed memory: where it should live (infinirtMemPrefetchAsync, infinirtMemAdvise). */
enum infinirtMemLocationType INFINIRT_ENUM_BASE {
  infinirtMemLocationTypeInvalid = 0,
  infinirtMemLocationTypeNone = 0,
  infinirtMemLocationTypeDevice = 1,
  infinirtMemLocationTypeHost = 2,
  infinirtMemLocationTypeHostNuma = 3,
  infinirtMemLocationTypeHostNumaCurrent = 4
};

enum infinirtMemoryAdvise INFINIRT_ENUM_BASE {
  infinirtMemAdviseSetReadMostly = 1,
  infinirtMemAdviseUnsetReadMostly = 2,
  infinirtMemAdviseSetPreferredLocation = 3,
  infinirtMemAdviseUnsetPreferredLocation = 4,
  infinirtMemAdviseSetAccessedBy = 5,
  infinirtMemAdviseUnsetAccessedBy = 6
};

/* infinirtMemRangeGetAttribute: what advice and prefetches said of a managed range. */
enum infinirtMemRangeAttribute INFINIRT_ENUM_BASE {
  infinirtMemRangeAttributeReadMostly = 1,
  infinirtMemRangeAttributePreferredLocation = 2,
  infinirtMemRangeAttributeAccessedBy = 3,
  infinirtMemRangeAttributeLastPrefetchLocation = 4,
  infinirtMemRangeAttributePreferredLocationType = 5,
  infinirtMemRangeAttributePreferredLocationId = 6,
  infinirtMemRangeAttributeLastPrefetchLocationType = 7,
  infinirtMemRangeAttributeLastPrefetchLocationId = 8
};

/* infinirtDeviceGetP2PAttribute: what one device can do with another's memory. */
enum infinirtDeviceP2PAttr INFINIRT_ENUM_BASE {
  infinirtDevP2PAttrPerformanceRank = 1,
  infinirtDevP2PAttrAccessSupported = 2,
  infinirtDevP2PAttrNativeAtomicSupported = 3,
  infinirtDevP2PAttrCudaArrayAccessSupported = 4,
  infinirtDevP2PAttrOnlyPartialNativeAtomicSupported = 5
};

/* infinirtDeviceGetCacheConfig/SetCacheConfig: how the device splits L1 cache and shared
 * memory. */
enum infinirtFuncCache INFINIRT_ENUM_BASE {
  infinirtFuncCachePreferNone = 0,
  infinirtFuncCachePreferShared = 1,
  infinirtFuncCachePreferL1 = 2,
  infinirtFuncCachePreferEqual = 3
};

typedef enum infinirtGraphDependencyType_enum INFINIRT_ENUM_BASE {
  infinirtGraphDependencyTypeDefault = 0,
  infinirtGraphDependencyTypeProgrammatic = 1
} infinirtGraphDependencyType;

/* Launch and stream attributes (infinirtStreamGetAttribute/SetAttribute). A stream takes the
 * five that infinirtStreamAttributeXxx name; the others concern kernels. */
typedef enum infinirtLaunchAttributeID INFINIRT_ENUM_BASE {
  infinirtLaunchAttributeIgnore = 0,
  infinirtLaunchAttributeAccessPolicyWindow = 1,
  infinirtLaunchAttributeCooperative = 2,
  infinirtLaunchAttributeSynchronizationPolicy = 3,
  infinirtLaunchAttributeClusterDimension = 4,
  infinirtLaunchAttributeClusterSchedulingPolicyPreference = 5,
  infinirtLaunchAttributeProgrammaticStreamSerialization = 6,
  infinirtLaunchAttributeProgrammaticEvent = 7,
  infinirtLaunchAttributePriority = 8,
  infinirtLaunchAttributeMemSyncDomainMap = 9,
  infinirtLaunchAttributeMemSyncDomain = 10,
  infinirtLaunchAttributePreferredClusterDimension = 11,
  infinirtLaunchAttributeLaunchCompletionEvent = 12,
  infinirtLaunchAttributeDeviceUpdatableKernelNode = 13,
  infinirtLaunchAttributePreferredSharedMemoryCarveout = 14,
  infinirtLaunchAttributeNvlinkUtilCentricScheduling = 16
} infinirtLaunchAttributeID;

/* How an access policy window's lines are kept in the device's L2 cache. */
enum infinirtAccessProperty INFINIRT_ENUM_BASE {
  infinirtAccessPropertyNormal = 0,
  infinirtAccessPropertyStreaming = 1,
  infinirtAccessPropertyPersisting = 2
};

/* How a host thread waits for the stream's work. */
enum infinirtSynchronizationPolicy INFINIRT_ENUM_BASE {
  infinirtSyncPolicyAuto = 1,
  infinirtSyncPolicySpin = 2,
  infinirtSyncPolicyYield = 3,
  infinirtSyncPolicyBlockingSync = 4
};

enum infinirtClusterSchedulingPolicy INFINIRT_ENUM_BASE {
  infinirtClusterSchedulingPolicyDefault = 0,
  infinirtClusterSchedulingPolicySpread = 1,
  infinirtClusterSchedulingPolicyLoadBalancing = 2
};

typedef enum infinirtLaunchMemSyncDomain INFINIRT_ENUM_BASE {
  infinirtLaunchMemSyncDomainDefault = 0,
  infinirtLaunchMemSyncDomainRemote = 1
} infinirtLaunchMemSyncDomain;

/* Device attributes: every non-reserved cudaDeviceAttr of CUDA 13. X(name without the
 * "infinirt" prefix, value): X(DevAttrWarpSize, 10) is infinirtDevAttrWarpSize = 10. */
#define INFINIRT_DEVICE_ATTR_LIST(X)                    \
  X(DevAttrMaxThreadsPerBlock, 1)                       \
  X(DevAttrMaxBlockDimX, 2)                             \
  X(DevAttrMaxBlockDimY, 3)                             \
  X(DevAttrMaxBlockDimZ, 4)                             \
  X(DevAttrMaxGridDimX, 5)                              \
  X(DevAttrMaxGridDimY, 6)                              \
  X(DevAttrMaxGridDimZ, 7)                              \
  X(DevAttrMaxSharedMemoryPerBlock, 8)                  \
  X(DevAttrTotalConstantMemory, 9)                      \
  X(DevAttrWarpSize, 10)                                \
  X(DevAttrMaxPitch, 11)                                \
  X(DevAttrMaxRegistersPerBlock, 12)                    \
  X(DevAttrClockRate, 13)                               \
  X(DevAttrTextureAlignment, 14)                        \
  X(DevAttrGpuOverlap, 15)                              \
  X(DevAttrMultiProcessorCount, 16)                     \
  X(DevAttrKernelExecTimeout, 17)                       \
  X(DevAttrIntegrated, 18)                              \
  X(DevAttrCanMapHostMemory, 19)                        \
  X(DevAttrComputeMode, 20)                             \
  X(DevAttrMaxTexture1DWidth, 21)                       \
  X(DevAttrMaxTexture2DWidth, 22)                       \
  X(DevAttrMaxTexture2DHeight, 23)                      \
  X(DevAttrMaxTexture3DWidth, 24)                       \
  X(DevAttrMaxTexture3DHeight, 25)                      \
  X(DevAttrMaxTexture3DDepth, 26)                       \
  X(DevAttrMaxTexture2DLayeredWidth, 27)                \
  X(DevAttrMaxTexture2DLayeredHeight, 28)               \
  X(DevAttrMaxTexture2DLayeredLayers, 29)               \
  X(DevAttrSurfaceAlignment, 30)                        \
  X(DevAttrConcurrentKernels, 31)                       \
  X(DevAttrEccEnabled, 32)                              \
  X(DevAttrPciBusId, 33)                                \
  X(DevAttrPciDeviceId, 34)                             \
  X(DevAttrTccDriver, 35)                               \
  X(DevAttrMemoryClockRate, 36)                         \
  X(DevAttrGlobalMemoryBusWidth, 37)                    \
  X(DevAttrL2CacheSize, 38)                             \
  X(DevAttrMaxThreadsPerMultiProcessor, 39)             \
  X(DevAttrAsyncEngineCount, 40)                        \
  X(DevAttrUnifiedAddressing, 41)                       \
  X(DevAttrMaxTexture1DLayeredWidth, 42)                \
  X(DevAttrMaxTexture1DLayeredLayers, 43)               \
  X(DevAttrMaxTexture2DGatherWidth, 45)                 \
  X(DevAttrMaxTexture2DGatherHeight, 46)                \
  X(DevAttrMaxTexture3DWidthAlt, 47)                    \
  X(DevAttrMaxTexture3DHeightAlt, 48)                   \
  X(DevAttrMaxTexture3DDepthAlt, 49)                    \
  X(DevAttrPciDomainId, 50)                             \
  X(DevAttrTexturePitchAlignment, 51)                   \
  X(DevAttrMaxTextureCubemapWidth, 52)                  \
  X(DevAttrMaxTextureCubemapLayeredWidth, 53)           \
  X(DevAttrMaxTextureCubemapLayeredLayers, 54)          \
  X(DevAttrMaxSurface1DWidth, 55)                       \
  X(DevAttrMaxSurface2DWidth, 56)                       \
  X(DevAttrMaxSurface2DHeight, 57)                      \
  X(DevAttrMaxSurface3DWidth, 58)                       \
  X(DevAttrMaxSurface3DHeight, 59)                      \
  X(DevAttrMaxSurface3DDepth, 60)                       \
  X(DevAttrMaxSurface1DLayeredWidth, 61)                \
  X(DevAttrMaxSurface1DLayeredLayers, 62)               \
  X(DevAttrMaxSurface2DLayeredWidth, 63)                \
  X(DevAttrMaxSurface2DLayeredHeight, 64)               \
  X(DevAttrMaxSurface2DLayeredLayers, 65)               \
  X(DevAttrMaxSurfaceCubemapWidth, 66)                  \
  X(DevAttrMaxSurfaceCubemapLayeredWidth, 67)           \
  X(DevAttrMaxSurfaceCubemapLayeredLayers, 68)          \
  X(DevAttrMaxTexture1DLinearWidth, 69)                 \
  X(DevAttrMaxTexture2DLinearWidth, 70)                 \
  X(DevAttrMaxTexture2DLinearHeight, 71)                \
  X(DevAttrMaxTexture2DLinearPitch, 72)                 \
  X(DevAttrMaxTexture2DMipmappedWidth, 73)              \
  X(DevAttrMaxTexture2DMipmappedHeight, 74)             \
  X(DevAttrComputeCapabilityMajor, 75)                  \
  X(DevAttrComputeCapabilityMinor, 76)                  \
  X(DevAttrMaxTexture1DMipmappedWidth, 77)              \
  X(DevAttrStreamPrioritiesSupported, 78)               \
  X(DevAttrGlobalL1CacheSupported, 79)                  \
  X(DevAttrLocalL1CacheSupported, 80)                   \
  X(DevAttrMaxSharedMemoryPerMultiprocessor, 81)        \
  X(DevAttrMaxRegistersPerMultiprocessor, 82)           \
  X(DevAttrManagedMemory, 83)                           \
  X(DevAttrIsMultiGpuBoard, 84)                         \
  X(DevAttrMultiGpuBoardGroupID, 85)                    \
  X(DevAttrHostNativeAtomicSupported, 86)               \
  X(DevAttrSingleToDoublePrecisionPerfRatio, 87)        \
  X(DevAttrPageableMemoryAccess, 88)                    \
  X(DevAttrConcurrentManagedAccess, 89)                 \
  X(DevAttrComputePreemptionSupported, 90)              \
  X(DevAttrCanUseHostPointerForRegisteredMem, 91)       \
  X(DevAttrCooperativeLaunch, 95)                       \
  X(DevAttrMaxSharedMemoryPerBlockOptin, 97)            \
  X(DevAttrCanFlushRemoteWrites, 98)                    \
  X(DevAttrHostRegisterSupported, 99)                   \
  X(DevAttrPageableMemoryAccessUsesHostPageTables, 100) \
  X(DevAttrDirectManagedMemAccessFromHost, 101)         \
  X(DevAttrMaxBlocksPerMultiprocessor, 106)             \
  X(DevAttrMaxPersistingL2CacheSize, 108)               \
  X(DevAttrMaxAccessPolicyWindowSize, 109)              \
  X(DevAttrReservedSharedMemoryPerBlock, 111)           \
  X(DevAttrSparseCudaArraySupported, 112)               \
  X(DevAttrHostRegisterReadOnlySupported, 113)          \
  X(DevAttrTimelineSemaphoreInteropSupported, 114)      \
  X(DevAttrMemoryPoolsSupported, 115)                   \
  X(DevAttrGPUDirectRDMASupported, 116)                 \
  X(DevAttrGPUDirectRDMAFlushWritesOptions, 117)        \
  X(DevAttrGPUDirectRDMAWritesOrdering, 118)            \
  X(DevAttrMemoryPoolSupportedHandleTypes, 119)         \
  X(DevAttrClusterLaunch, 120)                          \
  X(DevAttrDeferredMappingCudaArraySupported, 121)      \
  X(DevAttrIpcEventSupport, 125)                        \
  X(DevAttrMemSyncDomainCount, 126)                     \
  X(DevAttrNumaConfig, 130)                             \
  X(DevAttrNumaId, 131)                                 \
  X(DevAttrMpsEnabled, 133)                             \
  X(DevAttrHostNumaId, 134)                             \
  X(DevAttrD3D12CigSupported, 135)                      \
  X(DevAttrVulkanCigSupported, 138)                     \
  X(DevAttrGpuPciDeviceId, 139)                         \
  X(DevAttrGpuPciSubsystemId, 140)                      \
  X(DevAttrHostNumaMemoryPoolsSupported, 142)           \
  X(DevAttrHostNumaMultinodeIpcSupported, 143)          \
  X(DevAttrHostMemoryPoolsSupported, 144)               \
  X(DevAttrOnlyPartialHostNativeAtomicSupported, 147)

#define INFINIRT_ATTR_ENUMERATOR_(name, value) infinirt##name = value,
enum infinirtDeviceAttr INFINIRT_ENUM_BASE { INFINIRT_DEVICE_ATTR_LIST(INFINIRT_ATTR_ENUMERATOR_) };

/* ---------------------------------------------------------------------------------------------
 * Flags and special handles (CUDA 13 values)
 * ------------------------------------------------------------------------------------------- */
#define infinirtHostAllocDefault 0x00
#define infinirtHostAllocPortable 0x01
#define infinirtHostAllocMapped 0x02
#define infinirtHostAllocWriteCombined 0x04

#define infinirtDeviceScheduleAuto 0x00
#define infinirtDeviceScheduleSpin 0x01
#define infinirtDeviceScheduleYield 0x02
#define infinirtDeviceScheduleBlockingSync 0x04
#define infinirtDeviceBlockingSync 0x04
#define infinirtDeviceScheduleMask 0x07
#define infinirtDeviceMapHost 0x08
#define infinirtDeviceLmemResizeToMax 0x10
#define infinirtDeviceSyncMemops 0x80
#define infinirtDeviceMask 0xff

#define infinirtMemAttachGlobal 0x01
#define infinirtMemAttachHost 0x02
#define infinirtMemAttachSingle 0x04

#define infinirtHostRegisterDefault 0x00
#define infinirtHostRegisterPortable 0x01
#define infinirtHostRegisterMapped 0x02
#define infinirtHostRegisterIoMemory 0x04
#define infinirtHostRegisterReadOnly 0x08

#define infinirtStreamDefault 0x00
#define infinirtStreamNonBlocking 0x01

#define infinirtEventDefault 0x00
#define infinirtEventBlockingSync 0x01
#define infinirtEventDisableTiming 0x02
#define infinirtEventInterprocess 0x04

#define infinirtEventRecordDefault 0x00
#define infinirtEventRecordExternal 0x01
#define infinirtEventWaitDefault 0x00
#define infinirtEventWaitExternal 0x01

#define infinirtInitDeviceFlagsAreValid 0x01

#define infinirtCpuDeviceId ((int)-1)
#define infinirtInvalidDeviceId ((int)-2)

/* ---------------------------------------------------------------------------------------------
 * Handles and structures
 * ------------------------------------------------------------------------------------------- */
/* Opaque handles. InfiniRT owns the objects behind them; a destroyed, foreign or garbage handle
 * is rejected with infinirtErrorInvalidResourceHandle instead of being dereferenced. */
typedef struct infinirtStream_st* infinirtStream_t;
typedef struct infinirtEvent_st* infinirtEvent_t;
typedef struct infinirtGraph_st* infinirtGraph_t;
typedef struct infinirtGraphExec_st* infinirtGraphExec_t;
typedef struct infinirtGraphNode_st* infinirtGraphNode_t;
typedef struct infinirtMemPool_st* infinirtMemPool_t;
/* A program's object whose lifetime graphs share (infinirtUserObjectCreate). */
typedef struct infinirtUserObject_st* infinirtUserObject_t;

/* Handles that carry device memory and events to another process of the same host
 * (infinirtIpcGetMemHandle, infinirtIpcGetEventHandle): 64 opaque bytes, as CUDA's, copied
 * between processes by any means. */
#define INFINIRT_IPC_HANDLE_SIZE 64
typedef struct infinirtIpcEventHandle_st {
  char reserved[INFINIRT_IPC_HANDLE_SIZE];
} infinirtIpcEventHandle_t;
typedef struct infinirtIpcMemHandle_st {
  char reserved[INFINIRT_IPC_HANDLE_SIZE];
} infinirtIpcMemHandle_t;
#define infinirtIpcMemLazyEnablePeerAccess 0x01

/* Annotation of a graph edge, as cudaGraphEdgeData; InfiniRT's edges are all plain
 * dependencies (every field zero). */
typedef struct infinirtGraphEdgeData_st {
  unsigned char from_port;
  unsigned char to_port;
  unsigned char type;
  unsigned char reserved[5];
} infinirtGraphEdgeData;

/* The legacy default stream (same as 0) and the calling thread's per-thread default stream. */
#define infinirtStreamLegacy ((infinirtStream_t)0x1)
#define infinirtStreamPerThread ((infinirtStream_t)0x2)

typedef void(INFINIRT_CB* infinirtHostFn_t)(void* userData);
/* infinirtStreamAddCallback's callback: the stream, the stream's status, the user's data. */
typedef void(INFINIRT_CB* infinirtStreamCallback_t)(infinirtStream_t stream, infinirtError_t status,
                                                    void* userData);

/* infinirtLaunchNativeFunc: a function that queues work on a vendor's own stream (nativeStream),
 * and the function that releases its userData once InfiniRT will not call it again. */
typedef infinirtError_t(INFINIRT_CB* infinirtNativeFn_t)(void* nativeStream, void* userData);
typedef void(INFINIRT_CB* infinirtNativeReleaseFn_t)(void* userData);

struct infinirtPointerAttributes {
  enum infinirtMemoryType type;
  int device;
  void* devicePointer;
  void* hostPointer;
  long reserved[8];
};

/* A place for memory: a device (id its ordinal), the host, or a host NUMA node (id the node). */
struct infinirtMemLocation {
  enum infinirtMemLocationType type;
  int id;
};

typedef struct infinirtUUID_st {
  char bytes[16];
} infinirtUUID_t;

/* CUDA 13's cudaDeviceProp field for field (same names, types and offsets), then InfiniRT's own
 * fields. Every field that has a device attribute (infinirtDeviceGetAttribute) holds the
 * attribute's value; texture and surface limits are 0 where the backend has no textures, and the
 * Windows-only luid fields are always 0. docs/cpu-backend.md says what the CPU device reports. */
struct infinirtDeviceProp {
  char name[256];
  infinirtUUID_t uuid;
  char luid[8];
  unsigned int luidDeviceNodeMask;
  size_t totalGlobalMem;
  size_t sharedMemPerBlock;
  int regsPerBlock;
  int warpSize;
  size_t memPitch;
  int maxThreadsPerBlock;
  int maxThreadsDim[3];
  int maxGridSize[3];
  size_t totalConstMem;
  int major;
  int minor;
  size_t textureAlignment;
  size_t texturePitchAlignment;
  int multiProcessorCount;
  int integrated;
  int canMapHostMemory;
  int maxTexture1D;
  int maxTexture1DMipmap;
  int maxTexture2D[2];
  int maxTexture2DMipmap[2];
  int maxTexture2DLinear[3];
  int maxTexture2DGather[2];
  int maxTexture3D[3];
  int maxTexture3DAlt[3];
  int maxTextureCubemap;
  int maxTexture1DLayered[2];
  int maxTexture2DLayered[3];
  int maxTextureCubemapLayered[2];
  int maxSurface1D;
  int maxSurface2D[2];
  int maxSurface3D[3];
  int maxSurface1DLayered[2];
  int maxSurface2DLayered[3];
  int maxSurfaceCubemap;
  int maxSurfaceCubemapLayered[2];
  size_t surfaceAlignment;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int tccDriver;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryBusWidth;
  int l2CacheSize;
  int persistingL2CacheMaxSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  int globalL1CacheSupported;
  int localL1CacheSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int multiGpuBoardGroupID;
  int hostNativeAtomicSupported;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int computePreemptionSupported;
  int canUseHostPointerForRegisteredMem;
  int cooperativeLaunch;
  size_t sharedMemPerBlockOptin;
  int pageableMemoryAccessUsesHostPageTables;
  int directManagedMemAccessFromHost;
  int maxBlocksPerMultiProcessor;
  int accessPolicyMaxWindowSize;
  size_t reservedSharedMemPerBlock;
  int hostRegisterSupported;
  int sparseCudaArraySupported;
  int hostRegisterReadOnlySupported;
  int timelineSemaphoreInteropSupported;
  int memoryPoolsSupported;
  int gpuDirectRDMASupported;
  unsigned int gpuDirectRDMAFlushWritesOptions;
  int gpuDirectRDMAWritesOrdering;
  unsigned int memoryPoolSupportedHandleTypes;
  int deferredMappingCudaArraySupported;
  int ipcEventSupported;
  int clusterLaunch;
  int unifiedFunctionPointers;
  int deviceNumaConfig;
  int deviceNumaId;
  int mpsEnabled;
  int hostNumaId;
  unsigned int gpuPciDeviceID;
  unsigned int gpuPciSubsystemID;
  int hostNumaMultinodeIpcSupported;
  int reserved[56];
  /* InfiniRT fields, after CUDA's whole structure */
  infiniDevice_t deviceType; /* which kind of device this ordinal is */
  int vendorDeviceIndex;     /* index of the device within its backend */
  char backendName[32];      /* plugin name, e.g. "cpu", "nvidia" */
  int infinirtReserved[32];
};

/* Pitched memory and 2D/3D copies (CUDA's driver_types.h layouts). For linear memory, widths and
 * x positions are in bytes. */
struct infinirtPitchedPtr {
  void* ptr;
  size_t pitch; /* bytes from one row to the next */
  size_t xsize; /* the logical width of a row, in bytes */
  size_t ysize; /* rows per slice */
};
struct infinirtExtent {
  size_t width;
  size_t height;
  size_t depth;
};
struct infinirtPos {
  size_t x;
  size_t y;
  size_t z;
};
/* CUDA arrays (textures' storage): InfiniRT has none, so the array fields must be NULL. */
typedef struct infinirtArray* infinirtArray_t;
struct infinirtMemcpy3DParms {
  infinirtArray_t srcArray;
  struct infinirtPos srcPos;
  struct infinirtPitchedPtr srcPtr;
  infinirtArray_t dstArray;
  struct infinirtPos dstPos;
  struct infinirtPitchedPtr dstPtr;
  struct infinirtExtent extent;
  enum infinirtMemcpyKind kind;
};

typedef struct infinirtGraphExecUpdateResultInfo_st {
  enum infinirtGraphExecUpdateResult result;
  infinirtGraphNode_t errorNode;     /* the node at fault (the "to" node of an edge), or NULL */
  infinirtGraphNode_t errorFromNode; /* the "from" node of an edge at fault, or NULL */
} infinirtGraphExecUpdateResultInfo;

typedef struct infinirtGraphInstantiateParams_st {
  unsigned long long flags;
  infinirtStream_t uploadStream;
  infinirtGraphNode_t errNode_out;
  infinirtGraphInstantiateResult result_out;
} infinirtGraphInstantiateParams;

/* Parameters of graph nodes built by hand (infinirtGraphAdd*Node). */
struct infinirtMemsetParams {
  void* dst;
  size_t pitch; /* bytes from one row to the next; unused when height is 1 */
  unsigned int value;
  unsigned int elementSize; /* 1, 2 or 4 */
  size_t width;             /* elements per row */
  size_t height;            /* rows */
};

struct infinirtHostNodeParams {
  infinirtHostFn_t fn;
  void* userData;
};

struct infinirtMemAccessDesc {
  struct infinirtMemLocation location;
  enum infinirtMemAccessFlags flags;
};

struct infinirtMemPoolProps {
  enum infinirtMemAllocationType allocType;
  enum infinirtMemAllocationHandleType handleTypes;
  struct infinirtMemLocation location;
  void* win32SecurityAttributes;
  size_t maxSize;
  unsigned short usage;
  unsigned char reserved[54];
};

/* infinirtMemPoolExportPointer: what another process imports an allocation of a shared pool by
 * (infinirtMemPoolImportPointer); plain data, carried by any means. */
struct infinirtMemPoolPtrExportData {
  unsigned char reserved[64];
};

/* infinirtGraphAddMemAllocNode: poolProps say where (a device), bytesize how much; dptr
 * receives the address, fixed for the graph's lifetime. */
struct infinirtMemAllocNodeParams {
  struct infinirtMemPoolProps poolProps;
  const struct infinirtMemAccessDesc* accessDescs;
  size_t accessDescCount;
  size_t bytesize;
  void* dptr;
};

/* A region of memory and how its accesses use the device's L2 cache: hitRatio of its lines
 * (in [0, 1]) get hitProp, the rest missProp (Normal or Streaming). */
struct infinirtAccessPolicyWindow {
  void* base_ptr;
  size_t num_bytes;
  float hitRatio;
  enum infinirtAccessProperty hitProp;
  enum infinirtAccessProperty missProp;
};

/* The memory synchronisation domain ids that the two logical domains stand for. */
typedef struct infinirtLaunchMemSyncDomainMap_st {
  unsigned char default_;
  unsigned char remote;
} infinirtLaunchMemSyncDomainMap;

typedef struct infinirtGraphDeviceUpdatableNode_st* infinirtGraphDeviceNode_t;

/* The value of one launch or stream attribute: the member its id names. 64 bytes, as CUDA's. */
typedef union infinirtLaunchAttributeValue {
  char pad[64];
  struct infinirtAccessPolicyWindow accessPolicyWindow;
  int cooperative;
  enum infinirtSynchronizationPolicy syncPolicy;
  struct {
    unsigned int x;
    unsigned int y;
    unsigned int z;
  } clusterDim;
  enum infinirtClusterSchedulingPolicy clusterSchedulingPolicyPreference;
  int programmaticStreamSerializationAllowed;
  struct {
    infinirtEvent_t event;
    int flags;
    int triggerAtBlockStart;
  } programmaticEvent;
  int priority;
  infinirtLaunchMemSyncDomainMap memSyncDomainMap;
  infinirtLaunchMemSyncDomain memSyncDomain;
  struct {
    unsigned int x;
    unsigned int y;
    unsigned int z;
  } preferredClusterDim;
  struct {
    infinirtEvent_t event;
    int flags;
  } launchCompletionEvent;
  struct {
    int deviceUpdatable;
    infinirtGraphDeviceNode_t devNode;
  } deviceUpdatableKernelNode;
  unsigned int sharedMemCarveout;
  unsigned int nvlinkUtilCentricScheduling;
} infinirtLaunchAttributeValue;

/* A stream's attributes are launch attributes, under these names. */
typedef infinirtLaunchAttributeID infinirtStreamAttrID;
typedef infinirtLaunchAttributeValue infinirtStreamAttrValue;
#define infinirtStreamAttributeAccessPolicyWindow infinirtLaunchAttributeAccessPolicyWindow
#define infinirtStreamAttributeSynchronizationPolicy infinirtLaunchAttributeSynchronizationPolicy
#define infinirtStreamAttributeMemSyncDomainMap infinirtLaunchAttributeMemSyncDomainMap
#define infinirtStreamAttributeMemSyncDomain infinirtLaunchAttributeMemSyncDomain
#define infinirtStreamAttributePriority infinirtLaunchAttributePriority

/* Backend listing (InfiniRT extension): one entry per plugin considered, loaded or not. */
typedef enum INFINIRT_ENUM_BASE {
  infinirtBackendLoaded = 0,       /* loaded and contributing its devices */
  infinirtBackendNotFound = 1,     /* no library found for this backend */
  infinirtBackendDlopenFailed = 2, /* not loadable: dlopen's answer (dlerror()), or an ELF header
                                      that does not fit this process (machine, class) or a
                                      truncated file, found before dlopen */
  infinirtBackendNoEntryPoint = 3, /* the library lacks infinirtPluginGetTable */
  infinirtBackendAbiTooOld = 4,    /* plugin ABI major version older than the core's */
  infinirtBackendAbiTooNew = 5,    /* plugin ABI major version newer than the core's */
  infinirtBackendBadTable = 6,     /* the plugin table is malformed (size, name) */
  infinirtBackendRuntimeMissing =
      7,                          /* plugin loaded, but its vendor runtime is absent: 0 devices */
  infinirtBackendInitFailed = 8,  /* the plugin's Initialize entry failed */
  infinirtBackendFilteredOut = 9, /* excluded by INFINIRT_BACKENDS or the config file */
  infinirtBackendDuplicate = 10,  /* same file or same backend name already loaded */
  infinirtBackendInsecure = 11,   /* refused: another user could change the file or its
                                     directory (INFINIRT_ALLOW_INSECURE_PLUGINS=1 overrides) */
  infinirtBackendUnknownDeviceType = 12, /* the plugin serves a device type that this InfiniRT
                                            does not know (one added by a newer InfiniRT) */
  infinirtBackendNotBuilt = 13           /* a device type whose plugin is not part of this build of
                                            InfiniRT (and no file of that name was found either) */
} infinirtBackendStatus_t;

typedef struct infinirtBackendProp {
  char name[32];             /* e.g. "cpu", "nvidia" */
  infiniDevice_t deviceType; /* INFINI_DEVICE_TYPE_COUNT when unknown (not loaded) */
  char path[4096];           /* the plugin file (real path), or "" */
  int abiMajor;              /* plugin ABI version; -1 when unknown */
  int abiMinor;
  int runtimeVersion;        /* vendor runtime version; -1 when unknown or absent */
  char runtimeLibrary[1024]; /* vendor runtime library in use, or "" */
  int deviceCount;           /* devices contributed (after INFINIRT_VISIBLE_DEVICES) */
  double loadTimeMs;         /* time spent loading and initialising the plugin */
  infinirtBackendStatus_t status;
  char reason[2048]; /* human-readable detail, e.g. dlerror() text */
} infinirtBackendProp;

/* ---------------------------------------------------------------------------------------------
 * Functions: the one list of public entry points. X(return type, name after the prefix,
 * parameter list). INFINIRT_CUDA_FUNCTIONS are cuda<Name> renamed, prototype for prototype;
 * a test compares each with the real CUDA header where the CUDA Toolkit is installed.
 * ------------------------------------------------------------------------------------------- */
#define INFINIRT_CUDA_FUNCTIONS(X)                                                                 \
  /* Device management */                                                                          \
  X(infinirtError_t, GetDeviceCount, (int* count))                                                 \
  X(infinirtError_t, SetDevice, (int device))                                                      \
  X(infinirtError_t, GetDevice, (int* device))                                                     \
  /* The current device's flags (CUDA's scheduling hints and the rest): kept and reported;         \
     infinirtDeviceMapHost is always set, as for CUDA's runtime. */                                \
  X(infinirtError_t, SetDeviceFlags, (unsigned int flags))                                         \
  X(infinirtError_t, GetDeviceFlags, (unsigned int* flags))                                        \
  /* "dddd:bb:dd.0" from the device's properties, and the device of such a string. */              \
  X(infinirtError_t, DeviceGetPCIBusId, (char* pciBusId, int len, int device))                     \
  X(infinirtError_t, DeviceGetByPCIBusId, (int* device, const char* pciBusId))                     \
  /* Peers: whether `device` can reach `peerDevice`'s memory directly (devices of one backend      \
     that allows it; never devices of two backends, whose copies InfiniRT stages through host      \
     memory), and the current device's access to a peer's memory, kept until disabled or until     \
     either device is reset. */                                                                    \
  X(infinirtError_t, DeviceCanAccessPeer, (int* canAccessPeer, int device, int peerDevice))        \
  X(infinirtError_t, DeviceEnablePeerAccess, (int peerDevice, unsigned int flags))                 \
  X(infinirtError_t, DeviceDisablePeerAccess, (int peerDevice))                                    \
  X(infinirtError_t, DeviceGetP2PAttribute,                                                        \
    (int* value, enum infinirtDeviceP2PAttr attr, int srcDevice, int dstDevice))                   \
  /* Waits for all work on the current device, in every stream. */                                 \
  X(infinirtError_t, DeviceSynchronize, (void))                                                    \
  /* Destroys every allocation, stream and event of the current device (stream-ordered             \
     allocations excepted), after waiting for its queued work. */                                  \
  X(infinirtError_t, DeviceReset, (void))                                                          \
  X(infinirtError_t, GetDeviceProperties, (struct infinirtDeviceProp * prop, int device))          \
  /* The device (among those whose backend matches a non-empty backendName) whose properties       \
     meet most of prop's non-zero requirements: name, major.minor at least, totalGlobalMem,        \
     multiProcessorCount and the capabilities (integrated, canMapHostMemory, managedMemory, ...)   \
     asked for; the lowest ordinal among equals. */                                                \
  X(infinirtError_t, ChooseDevice, (int* device, const struct infinirtDeviceProp* prop))           \
  /* The devices a thread that never called SetDevice starts on, in order: it gets the first.      \
     len 0 restores the default (device 0). */                                                     \
  X(infinirtError_t, SetValidDevices, (int* device_arr, int len))                                  \
  /* Initialises the device without making it current; with infinirtInitDeviceFlagsAreValid in     \
     flags, deviceFlags become its flags (as SetDeviceFlags). */                                   \
  X(infinirtError_t, InitDevice, (int device, unsigned int deviceFlags, unsigned int flags))       \
  /* Resources of the current device's kernels (infinirtLimit); a backend without kernels keeps    \
     the values set and applies them to nothing. */                                                \
  X(infinirtError_t, DeviceSetLimit, (enum infinirtLimit limit, size_t value))                     \
  X(infinirtError_t, DeviceGetLimit, (size_t * pValue, enum infinirtLimit limit))                  \
  /* The current device's preferred split of L1 cache and shared memory: a hint; a device whose    \
     split is fixed accepts it and reports infinirtFuncCachePreferNone. */                         \
  X(infinirtError_t, DeviceSetCacheConfig, (enum infinirtFuncCache cacheConfig))                   \
  X(infinirtError_t, DeviceGetCacheConfig, (enum infinirtFuncCache * pCacheConfig))                \
  X(infinirtError_t, DeviceGetAttribute, (int* value, enum infinirtDeviceAttr attr, int device))   \
  /* The CUDA Runtime API version implemented (INFINIRT_CUDA_API_VERSION). */                      \
  X(infinirtError_t, RuntimeGetVersion, (int* runtimeVersion))                                     \
  /* The current device's vendor runtime version, in CUDA's encoding where the vendor has one. */  \
  X(infinirtError_t, DriverGetVersion, (int* driverVersion))                                       \
  /* Errors: one last-error variable per host thread. */                                           \
  X(infinirtError_t, GetLastError, (void))                                                         \
  X(infinirtError_t, PeekAtLastError, (void))                                                      \
  X(const char*, GetErrorName, (infinirtError_t error))                                            \
  X(const char*, GetErrorString, (infinirtError_t error))                                          \
  /* Memory. Every allocation is recorded by the core, which routes frees and copies. */           \
  X(infinirtError_t, Malloc, (void** devPtr, size_t size))                                         \
  X(infinirtError_t, Free, (void* devPtr))                                                         \
  X(infinirtError_t, MallocHost, (void** ptr, size_t size))                                        \
  X(infinirtError_t, HostAlloc, (void** pHost, size_t size, unsigned int flags))                   \
  X(infinirtError_t, FreeHost, (void* ptr))                                                        \
  /* Page-locks host memory the program allocated, on the current device's backend: copies with    \
     it are then as with pinned memory, and PointerGetAttributes and MemcpyDefault know it. */     \
  X(infinirtError_t, HostRegister, (void* ptr, size_t size, unsigned int flags))                   \
  X(infinirtError_t, HostUnregister, (void* ptr))                                                  \
  X(infinirtError_t, HostGetDevicePointer, (void** pDevice, void* pHost, unsigned int flags))      \
  X(infinirtError_t, HostGetFlags, (unsigned int* pFlags, void* pHost))                            \
  /* Memory the host and the current device both use, freed with Free. Where the backend moves     \
     it, MemPrefetchAsync and MemAdvise say where it should be; on the CPU they change nothing     \
     (it is all the host's). */                                                                    \
  X(infinirtError_t, MallocManaged,                                                                \
    (void** devPtr, size_t size, unsigned int flags INFINIRT_DV(infinirtMemAttachGlobal)))         \
  X(infinirtError_t, MemPrefetchAsync,                                                             \
    (const void* devPtr, size_t count, struct infinirtMemLocation location, unsigned int flags,    \
     infinirtStream_t stream INFINIRT_DV(0)))                                                      \
  X(infinirtError_t, MemAdvise,                                                                    \
    (const void* devPtr, size_t count, enum infinirtMemoryAdvise advice,                           \
     struct infinirtMemLocation location))                                                         \
  /* What MemAdvise and MemPrefetchAsync said of a range (the core keeps it for every backend). */ \
  X(infinirtError_t, MemRangeGetAttribute,                                                         \
    (void* data, size_t dataSize, enum infinirtMemRangeAttribute attribute, const void* devPtr,    \
     size_t count))                                                                                \
  X(infinirtError_t, MemRangeGetAttributes,                                                        \
    (void** data, size_t* dataSizes, enum infinirtMemRangeAttribute* attributes,                   \
     size_t numAttributes, const void* devPtr, size_t count))                                      \
  X(infinirtError_t, MallocAsync, (void** devPtr, size_t size, infinirtStream_t hStream))          \
  X(infinirtError_t, FreeAsync, (void* devPtr, infinirtStream_t hStream))                          \
  X(infinirtError_t, MemGetInfo, (size_t * free, size_t * total))                                  \
  /* The device's pool for MallocAsync: its attributes give usage statistics and set the           \
     release threshold. */                                                                         \
  X(infinirtError_t, DeviceGetDefaultMemPool, (infinirtMemPool_t * memPool, int device))           \
  X(infinirtError_t, MemPoolGetAttribute,                                                          \
    (infinirtMemPool_t memPool, enum infinirtMemPoolAttr attr, void* value))                       \
  X(infinirtError_t, MemPoolSetAttribute,                                                          \
    (infinirtMemPool_t memPool, enum infinirtMemPoolAttr attr, void* value))                       \
  /* The pool MallocAsync uses on a device: its default pool until DeviceSetMemPool names          \
     another pool of that device. */                                                               \
  X(infinirtError_t, DeviceGetMemPool, (infinirtMemPool_t * memPool, int device))                  \
  X(infinirtError_t, DeviceSetMemPool, (int device, infinirtMemPool_t memPool))                    \
  X(infinirtError_t, MemPoolTrimTo, (infinirtMemPool_t memPool, size_t minBytesToKeep))            \
  /* Pools of the program's own, on a device (props->location); destroying one with memory still   \
     allocated from it releases the pool once that memory is freed. Another device reaches a       \
     pool's memory once MemPoolSetAccess allows it. */                                             \
  X(infinirtError_t, MemPoolCreate,                                                                \
    (infinirtMemPool_t * memPool, const struct infinirtMemPoolProps* poolProps))                   \
  X(infinirtError_t, MemPoolDestroy, (infinirtMemPool_t memPool))                                  \
  X(infinirtError_t, MallocFromPoolAsync,                                                          \
    (void** ptr, size_t size, infinirtMemPool_t memPool, infinirtStream_t stream))                 \
  X(infinirtError_t, MemPoolSetAccess,                                                             \
    (infinirtMemPool_t memPool, const struct infinirtMemAccessDesc* descList, size_t count))       \
  X(infinirtError_t, MemPoolGetAccess,                                                             \
    (enum infinirtMemAccessFlags * flags, infinirtMemPool_t memPool,                               \
     struct infinirtMemLocation * location))                                                       \
  /* Pools other processes open (props->handleTypes): the pool travels as an OS handle (for        \
     infinirtMemHandleTypePosixFileDescriptor an int written to *shareableHandle, imported as      \
     (void*)(uintptr_t)fd), each allocation as 64 bytes of export data. An imported pool makes     \
     no allocations; its imported memory is freed with Free or FreeAsync. */                       \
  X(infinirtError_t, MemPoolExportToShareableHandle,                                               \
    (void* shareableHandle, infinirtMemPool_t memPool,                                             \
     enum infinirtMemAllocationHandleType handleType, unsigned int flags))                         \
  X(infinirtError_t, MemPoolImportFromShareableHandle,                                             \
    (infinirtMemPool_t * memPool, void* shareableHandle,                                           \
     enum infinirtMemAllocationHandleType handleType, unsigned int flags))                         \
  X(infinirtError_t, MemPoolExportPointer,                                                         \
    (struct infinirtMemPoolPtrExportData * exportData, void* ptr))                                 \
  X(infinirtError_t, MemPoolImportPointer,                                                         \
    (void** ptr, infinirtMemPool_t memPool, struct infinirtMemPoolPtrExportData* exportData))      \
  X(infinirtError_t, Memcpy,                                                                       \
    (void* dst, const void* src, size_t count, enum infinirtMemcpyKind kind))                      \
  X(infinirtError_t, MemcpyAsync,                                                                  \
    (void* dst, const void* src, size_t count, enum infinirtMemcpyKind kind,                       \
     infinirtStream_t stream INFINIRT_DV(0)))                                                      \
  X(infinirtError_t, Memset, (void* devPtr, int value, size_t count))                              \
  X(infinirtError_t, MemsetAsync,                                                                  \
    (void* devPtr, int value, size_t count, infinirtStream_t stream INFINIRT_DV(0)))               \
  /* Pitched memory: rows of `width` bytes, `*pitch` apart (a multiple of 256 bytes). */           \
  X(infinirtError_t, MallocPitch, (void** devPtr, size_t* pitch, size_t width, size_t height))     \
  X(infinirtError_t, Malloc3D,                                                                     \
    (struct infinirtPitchedPtr * pitchedDevPtr, struct infinirtExtent extent))                     \
  /* 2D and 3D copies and memsets: row by row, each row as MemcpyAsync/MemsetAsync does it (one    \
     copy where the rows are contiguous). The whole region is checked first: a pitch smaller       \
     than the width is InvalidPitchValue; a region that leaves its allocation, or a destination    \
     that overlaps the source, InvalidValue; nothing is copied then. */                            \
  X(infinirtError_t, Memcpy2D,                                                                     \
    (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,        \
     enum infinirtMemcpyKind kind))                                                                \
  X(infinirtError_t, Memcpy2DAsync,                                                                \
    (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width, size_t height,        \
     enum infinirtMemcpyKind kind, infinirtStream_t stream INFINIRT_DV(0)))                        \
  X(infinirtError_t, Memset2D,                                                                     \
    (void* devPtr, size_t pitch, int value, size_t width, size_t height))                          \
  X(infinirtError_t, Memset2DAsync,                                                                \
    (void* devPtr, size_t pitch, int value, size_t width, size_t height,                           \
     infinirtStream_t stream INFINIRT_DV(0)))                                                      \
  X(infinirtError_t, Memcpy3D, (const struct infinirtMemcpy3DParms* p))                            \
  X(infinirtError_t, Memcpy3DAsync,                                                                \
    (const struct infinirtMemcpy3DParms* p, infinirtStream_t stream INFINIRT_DV(0)))               \
  X(infinirtError_t, Memset3D,                                                                     \
    (struct infinirtPitchedPtr pitchedDevPtr, int value, struct infinirtExtent extent))            \
  X(infinirtError_t, Memset3DAsync,                                                                \
    (struct infinirtPitchedPtr pitchedDevPtr, int value, struct infinirtExtent extent,             \
     infinirtStream_t stream INFINIRT_DV(0)))                                                      \
  /* A copy between the memory of two devices (each pointer, when it is device memory, must be     \
     of the device named), as MemcpyAsync with infinirtMemcpyDefault does it. */                   \
  X(infinirtError_t, MemcpyPeer,                                                                   \
    (void* dst, int dstDevice, const void* src, int srcDevice, size_t count))                      \
  X(infinirtError_t, MemcpyPeerAsync,                                                              \
    (void* dst, int dstDevice, const void* src, int srcDevice, size_t count,                       \
     infinirtStream_t stream INFINIRT_DV(0)))                                                      \
  X(infinirtError_t, PointerGetAttributes,                                                         \
    (struct infinirtPointerAttributes * attributes, const void* ptr))                              \
  /* Streams */                                                                                    \
  X(infinirtError_t, StreamCreate, (infinirtStream_t * pStream))                                   \
  X(infinirtError_t, StreamCreateWithFlags, (infinirtStream_t * pStream, unsigned int flags))      \
  /* Priorities: lower numbers run first; a priority outside the device's range is clamped into    \
     it. A device without priorities has the range [0, 0]. */                                      \
  X(infinirtError_t, DeviceGetStreamPriorityRange, (int* leastPriority, int* greatestPriority))    \
  X(infinirtError_t, StreamCreateWithPriority,                                                     \
    (infinirtStream_t * pStream, unsigned int flags, int priority))                                \
  X(infinirtError_t, StreamGetPriority, (infinirtStream_t hStream, int* priority))                 \
  X(infinirtError_t, StreamGetFlags, (infinirtStream_t hStream, unsigned int* flags))              \
  /* A number unique to the stream among the process's streams, never reused. */                   \
  X(infinirtError_t, StreamGetId, (infinirtStream_t hStream, unsigned long long* streamId))        \
  X(infinirtError_t, StreamDestroy, (infinirtStream_t stream))                                     \
  X(infinirtError_t, StreamSynchronize, (infinirtStream_t stream))                                 \
  X(infinirtError_t, StreamQuery, (infinirtStream_t stream))                                       \
  /* The device of a stream (the current device for the legacy and per-thread streams). */         \
  X(infinirtError_t, StreamGetDevice, (infinirtStream_t hStream, int* device))                     \
  X(infinirtError_t, StreamWaitEvent,                                                              \
    (infinirtStream_t stream, infinirtEvent_t event, unsigned int flags INFINIRT_DV(0)))           \
  X(infinirtError_t, LaunchHostFunc,                                                               \
    (infinirtStream_t stream, infinirtHostFn_t fn, void* userData))                                \
  /* The older form of LaunchHostFunc (flags must be 0), not capturable. */                        \
  X(infinirtError_t, StreamAddCallback,                                                            \
    (infinirtStream_t stream, infinirtStreamCallback_t callback, void* userData,                   \
     unsigned int flags))                                                                          \
  /* The stream attributes (infinirtStreamAttributeXxx); the others answer InvalidValue. A         \
     priority outside the device's range is clamped into it. CopyAttributes copies all five to     \
     a stream of the same device. */                                                               \
  X(infinirtError_t, StreamGetAttribute,                                                           \
    (infinirtStream_t hStream, infinirtStreamAttrID attr, infinirtStreamAttrValue * value_out))    \
  X(infinirtError_t, StreamSetAttribute,                                                           \
    (infinirtStream_t hStream, infinirtStreamAttrID attr, const infinirtStreamAttrValue* value))   \
  X(infinirtError_t, StreamCopyAttributes, (infinirtStream_t dst, infinirtStream_t src))           \
  /* Events */                                                                                     \
  X(infinirtError_t, EventCreate, (infinirtEvent_t * event))                                       \
  X(infinirtError_t, EventCreateWithFlags, (infinirtEvent_t * event, unsigned int flags))          \
  X(infinirtError_t, EventRecord, (infinirtEvent_t event, infinirtStream_t stream INFINIRT_DV(0))) \
  X(infinirtError_t, EventRecordWithFlags,                                                         \
    (infinirtEvent_t event, infinirtStream_t stream INFINIRT_DV(0),                                \
     unsigned int flags INFINIRT_DV(0)))                                                           \
  X(infinirtError_t, EventQuery, (infinirtEvent_t event))                                          \
  X(infinirtError_t, EventSynchronize, (infinirtEvent_t event))                                    \
  X(infinirtError_t, EventDestroy, (infinirtEvent_t event))                                        \
  X(infinirtError_t, EventElapsedTime, (float* ms, infinirtEvent_t start, infinirtEvent_t end))    \
  /* Interprocess communication */                                                                 \
  X(infinirtError_t, IpcGetEventHandle,                                                            \
    (infinirtIpcEventHandle_t * handle, infinirtEvent_t event))                                    \
  X(infinirtError_t, IpcOpenEventHandle,                                                           \
    (infinirtEvent_t * event, infinirtIpcEventHandle_t handle))                                    \
  X(infinirtError_t, IpcGetMemHandle, (infinirtIpcMemHandle_t * handle, void* devPtr))             \
  X(infinirtError_t, IpcOpenMemHandle,                                                             \
    (void** devPtr, infinirtIpcMemHandle_t handle, unsigned int flags))                            \
  X(infinirtError_t, IpcCloseMemHandle, (void* devPtr))                                            \
  /* Stream capture and graphs */                                                                  \
  X(infinirtError_t, StreamBeginCapture,                                                           \
    (infinirtStream_t stream, enum infinirtStreamCaptureMode mode))                                \
  X(infinirtError_t, StreamEndCapture, (infinirtStream_t stream, infinirtGraph_t * pGraph))        \
  X(infinirtError_t, StreamIsCapturing,                                                            \
    (infinirtStream_t stream, enum infinirtStreamCaptureStatus * pCaptureStatus))                  \
  /* The graph, id and current dependencies of a capture. The node handles identify nodes of       \
     the capture graph; the arrays stay valid until the next call on the stream. */                \
  X(infinirtError_t, StreamGetCaptureInfo,                                                         \
    (infinirtStream_t stream, enum infinirtStreamCaptureStatus * captureStatus_out,                \
     unsigned long long* id_out INFINIRT_DV(0), infinirtGraph_t* graph_out INFINIRT_DV(0),         \
     const infinirtGraphNode_t** dependencies_out INFINIRT_DV(0),                                  \
     const infinirtGraphEdgeData** edgeData_out INFINIRT_DV(0),                                    \
     size_t* numDependencies_out INFINIRT_DV(0)))                                                  \
  X(infinirtError_t, ThreadExchangeStreamCaptureMode, (enum infinirtStreamCaptureMode * mode))     \
  /* A capture into the program's graph, after the nodes given; EndCapture returns that graph. */  \
  X(infinirtError_t, StreamBeginCaptureToGraph,                                                    \
    (infinirtStream_t stream, infinirtGraph_t graph, const infinirtGraphNode_t* dependencies,      \
     const infinirtGraphEdgeData* dependencyData, size_t numDependencies,                          \
     enum infinirtStreamCaptureMode mode))                                                         \
  /* The nodes a capturing stream's next node depends on: flags infinirtStreamAddCapture-          \
     Dependencies adds these, infinirtStreamSetCaptureDependencies makes them the only ones. */    \
  X(infinirtError_t, StreamUpdateCaptureDependencies,                                              \
    (infinirtStream_t stream, infinirtGraphNode_t * dependencies,                                  \
     const infinirtGraphEdgeData* dependencyData, size_t numDependencies,                          \
     unsigned int flags INFINIRT_DV(0)))                                                           \
  X(infinirtError_t, GraphInstantiate,                                                             \
    (infinirtGraphExec_t * pGraphExec, infinirtGraph_t graph,                                      \
     unsigned long long flags INFINIRT_DV(0)))                                                     \
  X(infinirtError_t, GraphInstantiateWithFlags,                                                    \
    (infinirtGraphExec_t * pGraphExec, infinirtGraph_t graph,                                      \
     unsigned long long flags INFINIRT_DV(0)))                                                     \
  X(infinirtError_t, GraphLaunch, (infinirtGraphExec_t graphExec, infinirtStream_t stream))        \
  X(infinirtError_t, GraphExecDestroy, (infinirtGraphExec_t graphExec))                            \
  X(infinirtError_t, GraphDestroy, (infinirtGraph_t graph))                                        \
  /* Graphs built node by node. A graph belongs to the device current when it is created. */       \
  X(infinirtError_t, GraphCreate, (infinirtGraph_t * pGraph, unsigned int flags))                  \
  X(infinirtError_t, GraphAddEmptyNode,                                                            \
    (infinirtGraphNode_t * pGraphNode, infinirtGraph_t graph,                                      \
     const infinirtGraphNode_t* pDependencies, size_t numDependencies))                            \
  X(infinirtError_t, GraphAddHostNode,                                                             \
    (infinirtGraphNode_t * pGraphNode, infinirtGraph_t graph,                                      \
     const infinirtGraphNode_t* pDependencies, size_t numDependencies,                             \
     const struct infinirtHostNodeParams* pNodeParams))                                            \
  X(infinirtError_t, GraphAddMemcpyNode,                                                           \
    (infinirtGraphNode_t * pGraphNode, infinirtGraph_t graph,                                      \
     const infinirtGraphNode_t* pDependencies, size_t numDependencies,                             \
     const struct infinirtMemcpy3DParms* pCopyParams))                                             \
  X(infinirtError_t, GraphAddMemcpyNode1D,                                                         \
    (infinirtGraphNode_t * pGraphNode, infinirtGraph_t graph,                                      \
     const infinirtGraphNode_t* pDependencies, size_t numDependencies, void* dst, const void* src, \
     size_t count, enum infinirtMemcpyKind kind))                                                  \
  X(infinirtError_t, GraphAddMemsetNode,                                                           \
    (infinirtGraphNode_t * pGraphNode, infinirtGraph_t graph,                                      \
     const infinirtGraphNode_t* pDependencies, size_t numDependencies,                             \
     const struct infinirtMemsetParams* pMemsetParams))                                            \
  X(infinirtError_t, GraphAddEventRecordNode,                                                      \
    (infinirtGraphNode_t * pGraphNode, infinirtGraph_t graph,                                      \
     const infinirtGraphNode_t* pDependencies, size_t numDependencies, infinirtEvent_t event))     \
  X(infinirtError_t, GraphAddEventWaitNode,                                                        \
    (infinirtGraphNode_t * pGraphNode, infinirtGraph_t graph,                                      \
     const infinirtGraphNode_t* pDependencies, size_t numDependencies, infinirtEvent_t event))     \
  /* The child graph is copied into the node: later changes to it do not reach the node. */        \
  X(infinirtError_t, GraphAddChildGraphNode,                                                       \
    (infinirtGraphNode_t * pGraphNode, infinirtGraph_t graph,                                      \
     const infinirtGraphNode_t* pDependencies, size_t numDependencies,                             \
     infinirtGraph_t childGraph))                                                                  \
  X(infinirtError_t, GraphAddMemAllocNode,                                                         \
    (infinirtGraphNode_t * pGraphNode, infinirtGraph_t graph,                                      \
     const infinirtGraphNode_t* pDependencies, size_t numDependencies,                             \
     struct infinirtMemAllocNodeParams* nodeParams))                                               \
  X(infinirtError_t, GraphAddMemFreeNode,                                                          \
    (infinirtGraphNode_t * pGraphNode, infinirtGraph_t graph,                                      \
     const infinirtGraphNode_t* pDependencies, size_t numDependencies, void* dptr))                \
  X(infinirtError_t, GraphAddDependencies,                                                         \
    (infinirtGraph_t graph, const infinirtGraphNode_t* from, const infinirtGraphNode_t* to,        \
     const infinirtGraphEdgeData* edgeData, size_t numDependencies))                               \
  X(infinirtError_t, GraphRemoveDependencies,                                                      \
    (infinirtGraph_t graph, const infinirtGraphNode_t* from, const infinirtGraphNode_t* to,        \
     const infinirtGraphEdgeData* edgeData, size_t numDependencies))                               \
  /* The listing functions: with a NULL array, *count receives the number; with an array of        \
   *count entries, up to that many are written and the rest of a longer array is set to NULL,      \
   *count then saying how many were written. */                                                    \
  X(infinirtError_t, GraphGetNodes,                                                                \
    (infinirtGraph_t graph, infinirtGraphNode_t * nodes, size_t * numNodes))                       \
  X(infinirtError_t, GraphGetRootNodes,                                                            \
    (infinirtGraph_t graph, infinirtGraphNode_t * pRootNodes, size_t * pNumRootNodes))             \
  X(infinirtError_t, GraphGetEdges,                                                                \
    (infinirtGraph_t graph, infinirtGraphNode_t * from, infinirtGraphNode_t * to,                  \
     infinirtGraphEdgeData * edgeData, size_t * numEdges))                                         \
  X(infinirtError_t, GraphNodeGetType,                                                             \
    (infinirtGraphNode_t node, enum infinirtGraphNodeType * pType))                                \
  X(infinirtError_t, GraphNodeGetDependencies,                                                     \
    (infinirtGraphNode_t node, infinirtGraphNode_t * pDependencies,                                \
     infinirtGraphEdgeData * edgeData, size_t * pNumDependencies))                                 \
  X(infinirtError_t, GraphNodeGetDependentNodes,                                                   \
    (infinirtGraphNode_t node, infinirtGraphNode_t * pDependentNodes,                              \
     infinirtGraphEdgeData * edgeData, size_t * pNumDependentNodes))                               \
  X(infinirtError_t, GraphClone, (infinirtGraph_t * pGraphClone, infinirtGraph_t originalGraph))   \
  X(infinirtError_t, GraphNodeFindInClone,                                                         \
    (infinirtGraphNode_t * pNode, infinirtGraphNode_t originalNode, infinirtGraph_t clonedGraph))  \
  X(infinirtError_t, GraphDestroyNode, (infinirtGraphNode_t node))                                 \
  X(infinirtError_t, GraphHostNodeGetParams,                                                       \
    (infinirtGraphNode_t node, struct infinirtHostNodeParams * pNodeParams))                       \
  X(infinirtError_t, GraphHostNodeSetParams,                                                       \
    (infinirtGraphNode_t node, const struct infinirtHostNodeParams* pNodeParams))                  \
  X(infinirtError_t, GraphMemcpyNodeGetParams,                                                     \
    (infinirtGraphNode_t node, struct infinirtMemcpy3DParms * pNodeParams))                        \
  X(infinirtError_t, GraphMemcpyNodeSetParams1D,                                                   \
    (infinirtGraphNode_t node, void* dst, const void* src, size_t count,                           \
     enum infinirtMemcpyKind kind))                                                                \
  X(infinirtError_t, GraphMemcpyNodeSetParams,                                                     \
    (infinirtGraphNode_t node, const struct infinirtMemcpy3DParms* pNodeParams))                   \
  X(infinirtError_t, GraphMemsetNodeGetParams,                                                     \
    (infinirtGraphNode_t node, struct infinirtMemsetParams * pNodeParams))                         \
  X(infinirtError_t, GraphMemsetNodeSetParams,                                                     \
    (infinirtGraphNode_t node, const struct infinirtMemsetParams* pNodeParams))                    \
  X(infinirtError_t, GraphEventRecordNodeGetEvent,                                                 \
    (infinirtGraphNode_t node, infinirtEvent_t * event_out))                                       \
  X(infinirtError_t, GraphEventWaitNodeGetEvent,                                                   \
    (infinirtGraphNode_t node, infinirtEvent_t * event_out))                                       \
  X(infinirtError_t, GraphMemAllocNodeGetParams,                                                   \
    (infinirtGraphNode_t node, struct infinirtMemAllocNodeParams * params_out))                    \
  X(infinirtError_t, GraphMemFreeNodeGetParams, (infinirtGraphNode_t node, void* dptr_out))        \
  /* Executable graphs changed in place: the next launch runs the new parameters. */               \
  X(infinirtError_t, GraphExecUpdate,                                                              \
    (infinirtGraphExec_t hGraphExec, infinirtGraph_t hGraph,                                       \
     infinirtGraphExecUpdateResultInfo * resultInfo))                                              \
  X(infinirtError_t, GraphExecHostNodeSetParams,                                                   \
    (infinirtGraphExec_t hGraphExec, infinirtGraphNode_t node,                                     \
     const struct infinirtHostNodeParams* pNodeParams))                                            \
  X(infinirtError_t, GraphExecMemcpyNodeSetParams,                                                 \
    (infinirtGraphExec_t hGraphExec, infinirtGraphNode_t node,                                     \
     const struct infinirtMemcpy3DParms* pNodeParams))                                             \
  X(infinirtError_t, GraphExecMemcpyNodeSetParams1D,                                               \
    (infinirtGraphExec_t hGraphExec, infinirtGraphNode_t node, void* dst, const void* src,         \
     size_t count, enum infinirtMemcpyKind kind))                                                  \
  X(infinirtError_t, GraphExecMemsetNodeSetParams,                                                 \
    (infinirtGraphExec_t hGraphExec, infinirtGraphNode_t node,                                     \
     const struct infinirtMemsetParams* pNodeParams))                                              \
  X(infinirtError_t, GraphUpload, (infinirtGraphExec_t graphExec, infinirtStream_t stream))        \
  X(infinirtError_t, GraphInstantiateWithParams,                                                   \
    (infinirtGraphExec_t * pGraphExec, infinirtGraph_t graph,                                      \
     infinirtGraphInstantiateParams * instantiateParams))                                          \
  /* Writes the graph in Graphviz's DOT language to the file at path. */                           \
  X(infinirtError_t, GraphDebugDotPrint,                                                           \
    (infinirtGraph_t graph, const char* path, unsigned int flags))                                 \
  /* User objects: a pointer and its destructor, called once the program and every graph and       \
     exec holding a reference have released theirs (an exec's after its pending launches). */      \
  X(infinirtError_t, UserObjectCreate,                                                             \
    (infinirtUserObject_t * object_out, void* ptr, infinirtHostFn_t destroy,                       \
     unsigned int initialRefcount, unsigned int flags))                                            \
  X(infinirtError_t, UserObjectRetain,                                                             \
    (infinirtUserObject_t object, unsigned int count INFINIRT_DV(1)))                              \
  X(infinirtError_t, UserObjectRelease,                                                            \
    (infinirtUserObject_t object, unsigned int count INFINIRT_DV(1)))                              \
  X(infinirtError_t, GraphRetainUserObject,                                                        \
    (infinirtGraph_t graph, infinirtUserObject_t object, unsigned int count INFINIRT_DV(1),        \
     unsigned int flags INFINIRT_DV(0)))                                                           \
  X(infinirtError_t, GraphReleaseUserObject,                                                       \
    (infinirtGraph_t graph, infinirtUserObject_t object, unsigned int count INFINIRT_DV(1)))

#define INFINIRT_EXTENSION_FUNCTIONS(X)                                                            \
  /* Discovers and loads plugins. Optional (every call initialises lazily), idempotent and         \
     thread-safe. Returns infinirtErrorNoDevice when no backend contributes a device. */           \
  X(infinirtError_t, Init, (void))                                                                 \
  /* Waits for queued work, releases every object and unloads the plugins. Calls made after it     \
     initialise again. Not to be called while other threads use the runtime. */                    \
  X(infinirtError_t, Finalize, (void))                                                             \
  /* count_array[t] = devices of device type t, for every t < INFINI_DEVICE_TYPE_COUNT. */         \
  X(infinirtError_t, GetAllDeviceCount, (int* count_array))                                        \
  /* Device type of a flat ordinal, and the flat ordinal of the index-th device of a type. */      \
  X(infinirtError_t, DeviceGetType, (infiniDevice_t * type, int device))                           \
  X(infinirtError_t, DeviceGetOrdinal, (int* device, infiniDevice_t type, int index))              \
  /* Backend listing: every plugin considered, loaded or not, with the reason. */                  \
  X(infinirtError_t, GetBackendCount, (int* count))                                                \
  X(infinirtError_t, GetBackendProperties, (infinirtBackendProp * prop, int index))                \
  /* Opens a library that extends InfiniRT (an operator backend: "libinfiniop_cpu.so") from        \
     the plugins' search path, after the plugins' checks (no other user may change it or its       \
     directory; its ELF headers fit this process), with dlopen(RTLD_NOW | RTLD_LOCAL); the         \
     caller owns *handle (dlclose). prop says what happened: status infinirtBackendLoaded and      \
     the path, or why not (NotFound, Insecure, DlopenFailed) with the reason. fileName: a file     \
     name of the form lib<name>.so, no directory. Returns infinirtErrorFileNotFound when no        \
     such file is found, infinirtErrorSharedObjectInitFailed when one is refused or fails. */      \
  X(infinirtError_t, OpenExtensionLibrary,                                                         \
    (const char* fileName, void** handle, infinirtBackendProp* prop))                              \
  /* The vendor runtime's own stream behind an InfiniRT stream (a cudaStream_t for NVIDIA; the     \
     legacy stream is the vendor's: cudaStreamLegacy), for a library that queues work on it itself \
     (cuBLAS, NCCL). Work queued there is ordered with the stream's InfiniRT work but is not       \
     seen by InfiniRT's stream capture: while the stream captures, the call answers                \
     infinirtErrorStreamCaptureUnsupported (and invalidates the capture, as any work capture       \
     cannot record does); infinirtLaunchNativeFunc is the capturable way. The CPU backend has no   \
     vendor stream: infinirtErrorNotSupported. */                                                  \
  X(infinirtError_t, StreamGetNativeHandle, (void** nativeStream, infinirtStream_t stream))        \
  /* LaunchHostFunc for host work that touches about `bytes` bytes: where the backend runs host    \
     work itself (the CPU backend) and the stream has nothing pending, work of at most its inline  \
     threshold (plugins.cpu.work_inline_bytes) runs in the calling thread, in stream order,        \
     before the call returns; otherwise, and on the other backends, it is queued as LaunchHostFunc \
     queues. Captured as LaunchHostFunc. fn must not wait for anything the caller does after the   \
     call. */                                                                                      \
  X(infinirtError_t, LaunchHostWork,                                                               \
    (infinirtStream_t stream, infinirtHostFn_t fn, void* userData, size_t bytes))                  \
  /* The vendor runtime's own event behind an InfiniRT event (a cudaEvent_t for NVIDIA). An event  \
     recorded in a capture stands for a point of the capture and was not recorded on the vendor's  \
     side. The CPU backend has no vendor events: infinirtErrorNotSupported. */                     \
  X(infinirtError_t, EventGetNativeHandle, (void** nativeEvent, infinirtEvent_t event))            \
  /* An InfiniRT stream for a vendor stream another library made (PyTorch's, CuPy's), on the flat  \
     ordinal `device`, which must be the vendor stream's device. Work issued to it goes to that    \
     stream; its flags are the vendor stream's (infinirtStreamNonBlocking where it does not        \
     synchronise with the legacy stream). infinirtStreamDestroy releases the InfiniRT handle only: \
     the vendor stream stays its maker's. NULL and the special default-stream values are           \
     infinirtErrorInvalidValue; the CPU backend (no vendor streams): infinirtErrorNotSupported. */ \
  X(infinirtError_t, StreamCreateFromNativeHandle,                                                 \
    (infinirtStream_t * pStream, int device, void* nativeStream))                                  \
  /* The same work made capturable: fn(nativeStream, userData) queues it on the vendor's stream.   \
     Outside capture fn is called at once, on the calling thread with the stream's device          \
     current, and a failure it answers is returned. While the stream captures, the call is         \
     recorded as a node instead, and fn is called whenever the graph's work must be issued: at     \
     GraphInstantiate into the vendor's own capture (a backend with native graphs), or at each     \
     GraphLaunch on the launch stream's vendor stream (a replayed graph); a failure then is        \
     GraphInstantiate's or GraphLaunch's answer. fn must not call InfiniRT, and the work it        \
     queues must not read userData after fn returns (kernel arguments are copied at launch).       \
     On success InfiniRT owns userData and calls release(userData) (when not NULL) once fn will    \
     not be called again: at once outside capture, else when the graph and every exec made from    \
     it are destroyed. On an error nothing is queued or recorded and the caller keeps userData.    \
     The CPU backend has no vendor stream: infinirtErrorNotSupported. */                           \
  X(infinirtError_t, LaunchNativeFunc,                                                             \
    (infinirtStream_t stream, infinirtNativeFn_t fn, void* userData,                               \
     infinirtNativeReleaseFn_t release))

/* cudaPitchedPtr's, cudaExtent's and cudaPos's makers (CUDA's driver_functions.h). */
static inline struct infinirtPitchedPtr make_infinirtPitchedPtr(void* d, size_t p, size_t xsz,
                                                                size_t ysz) {
  struct infinirtPitchedPtr s;
  s.ptr = d;
  s.pitch = p;
  s.xsize = xsz;
  s.ysize = ysz;
  return s;
}
static inline struct infinirtExtent make_infinirtExtent(size_t w, size_t h, size_t d) {
  struct infinirtExtent e;
  e.width = w;
  e.height = h;
  e.depth = d;
  return e;
}
static inline struct infinirtPos make_infinirtPos(size_t x, size_t y, size_t z) {
  struct infinirtPos p;
  p.x = x;
  p.y = y;
  p.z = z;
  return p;
}

/* ---------------------------------------------------------------------------------------------
 * Per-thread default stream builds
 * ---------------------------------------------------------------------------------------------
 * A program compiled with INFINIRT_API_PER_THREAD_DEFAULT_STREAM defined (CUDA's
 * CUDA_API_PER_THREAD_DEFAULT_STREAM) calls the per-thread variants of the functions below: in
 * the _ptsz variants the stream 0 is the calling thread's per-thread default stream
 * (infinirtStreamPerThread) instead of the legacy default stream; the _ptds variants, the
 * synchronous copies and memsets, run in the per-thread default stream. infinirtStreamLegacy
 * still names the legacy stream. The variants are the library's own exported functions, with
 * the same prototypes, so translation units built either way can be linked together.
 * X(name without the "infinirt" prefix, variant): CUDA's list, and the two extensions that take
 * a stream. */
#define INFINIRT_PER_THREAD_STREAM_FUNCTIONS(X)                                                    \
  X(Memcpy, ptds)                                                                                  \
  X(Memcpy2D, ptds)                                                                                \
  X(Memcpy3D, ptds)                                                                                \
  X(Memset, ptds)                                                                                  \
  X(Memset2D, ptds)                                                                                \
  X(Memset3D, ptds)                                                                                \
  X(GraphInstantiateWithParams, ptsz)                                                              \
  X(GraphUpload, ptsz)                                                                             \
  X(GraphLaunch, ptsz)                                                                             \
  X(StreamBeginCapture, ptsz)                                                                      \
  X(StreamBeginCaptureToGraph, ptsz)                                                               \
  X(StreamEndCapture, ptsz)                                                                        \
  X(StreamGetCaptureInfo, ptsz)                                                                    \
  X(StreamUpdateCaptureDependencies, ptsz)                                                         \
  X(StreamIsCapturing, ptsz)                                                                       \
  X(MemcpyAsync, ptsz)                                                                             \
  X(Memcpy2DAsync, ptsz)                                                                           \
  X(Memcpy3DAsync, ptsz)                                                                           \
  X(MemsetAsync, ptsz)                                                                             \
  X(Memset2DAsync, ptsz)                                                                           \
  X(Memset3DAsync, ptsz)                                                                           \
  X(StreamQuery, ptsz)                                                                             \
  X(StreamGetDevice, ptsz)                                                                         \
  X(StreamGetFlags, ptsz)                                                                          \
  X(StreamGetId, ptsz)                                                                             \
  X(StreamGetPriority, ptsz)                                                                       \
  X(EventRecord, ptsz)                                                                             \
  X(EventRecordWithFlags, ptsz)                                                                    \
  X(StreamWaitEvent, ptsz)                                                                         \
  X(StreamAddCallback, ptsz)                                                                       \
  X(StreamSynchronize, ptsz)                                                                       \
  X(LaunchHostFunc, ptsz)                                                                          \
  X(MemPrefetchAsync, ptsz)                                                                        \
  X(StreamCopyAttributes, ptsz)                                                                    \
  X(StreamGetAttribute, ptsz)                                                                      \
  X(StreamSetAttribute, ptsz)                                                                      \
  X(MallocAsync, ptsz)                                                                             \
  X(FreeAsync, ptsz)                                                                               \
  X(MallocFromPoolAsync, ptsz)                                                                     \
  X(StreamGetNativeHandle, ptsz)                                                                   \
  X(LaunchNativeFunc, ptsz)

/* The #defines, one per entry of the list, are generated from it. */
#if defined(INFINIRT_API_PER_THREAD_DEFAULT_STREAM)
#include "infinirt_per_thread.h"
#endif

#define INFINIRT_DECLARE_(ret, name, params) INFINIRT_API ret INFINIRTAPI infinirt##name params;
INFINIRT_CUDA_FUNCTIONS(INFINIRT_DECLARE_)
INFINIRT_EXTENSION_FUNCTIONS(INFINIRT_DECLARE_)
#undef INFINIRT_DECLARE_

#ifdef __cplusplus
} /* extern "C" */

/* C++ conveniences that CUDA's cuda_runtime.h also offers. Define INFINIRT_NO_CXX_OVERLOADS to
 * get the plain C declarations only (as including cuda_runtime_api.h instead of cuda_runtime.h). */
#ifndef INFINIRT_NO_CXX_OVERLOADS
template <class T>
static inline infinirtError_t infinirtMalloc(T** devPtr, size_t size) {
  return infinirtMalloc(reinterpret_cast<void**>(devPtr), size);
}
template <class T>
static inline infinirtError_t infinirtMallocHost(T** ptr, size_t size, unsigned int flags = 0) {
  return infinirtHostAlloc(reinterpret_cast<void**>(ptr), size, flags);
}
template <class T>
static inline infinirtError_t infinirtHostAlloc(T** ptr, size_t size, unsigned int flags) {
  return infinirtHostAlloc(reinterpret_cast<void**>(ptr), size, flags);
}
template <class T>
static inline infinirtError_t infinirtMallocAsync(T** devPtr, size_t size,
                                                  infinirtStream_t stream) {
  return infinirtMallocAsync(reinterpret_cast<void**>(devPtr), size, stream);
}
static inline infinirtError_t infinirtEventCreate(infinirtEvent_t* event, unsigned int flags) {
  return infinirtEventCreateWithFlags(event, flags);
}
#endif /* INFINIRT_NO_CXX_OVERLOADS */
#endif /* __cplusplus */

#endif /* INFINIRT_H_ */
