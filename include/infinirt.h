/*
 * InfiniRT: one runtime API for AI accelerators.
 *
 * This header is the CUDA Runtime API with the prefix "cuda" renamed to "infinirt": every function,
 * type, enum value and flag below has the CUDA 13 prototype or number of its namesake, so CUDA code
 * ports by renaming. Calls are routed to vendor plugins (libinfinirt_<vendor>.so) loaded at start-up;
 * a CPU backend is always available. Valid C99 and C++17.
 *
 * Semantic differences from CUDA are listed in README.md ("Differences from CUDA").
 */
#ifndef INFINIRT_H_
#define INFINIRT_H_

#include <stddef.h>
#include <stdint.h>

#define INFINIRT_VERSION_MAJOR 0
#define INFINIRT_VERSION_MINOR 1
#define INFINIRT_VERSION_PATCH 0

/* The CUDA Runtime API version whose prototypes and semantics InfiniRT implements
 * (infinirtRuntimeGetVersion reports it, as cudaRuntimeGetVersion reports CUDART_VERSION). */
#define INFINIRT_CUDA_API_VERSION 13000

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
 * Device types: InfiniCore's numbering (the guard lets infinicore.h and this header coexist).
 * ------------------------------------------------------------------------------------------- */
#ifndef __INFINI_DEVICE__
#define __INFINI_DEVICE__
typedef enum {
  INFINI_DEVICE_CPU = 0,
  INFINI_DEVICE_NVIDIA = 1,
  INFINI_DEVICE_CAMBRICON = 2,
  INFINI_DEVICE_ASCEND = 3,
  INFINI_DEVICE_METAX = 4,
  INFINI_DEVICE_MOORE = 5,
  INFINI_DEVICE_ILUVATAR = 6,
  INFINI_DEVICE_KUNLUN = 7,
  INFINI_DEVICE_HYGON = 8,
  INFINI_DEVICE_TYPE_COUNT
} infiniDevice_t;
#endif

/* ---------------------------------------------------------------------------------------------
 * Errors: every cudaError value of CUDA 13, renamed. X(name, value, description).
 * infinirtGetErrorName returns the name, infinirtGetErrorString the description.
 * ------------------------------------------------------------------------------------------- */
#define INFINIRT_ERROR_LIST(X) \
  X(infinirtSuccess, 0, "no error") \
  X(infinirtErrorInvalidValue, 1, "invalid argument") \
  X(infinirtErrorMemoryAllocation, 2, "out of memory") \
  X(infinirtErrorInitializationError, 3, "initialization error") \
  X(infinirtErrorCudartUnloading, 4, "runtime is shutting down") \
  X(infinirtErrorProfilerDisabled, 5, "profiler disabled") \
  X(infinirtErrorProfilerNotInitialized, 6, "profiler not initialized") \
  X(infinirtErrorProfilerAlreadyStarted, 7, "profiler already started") \
  X(infinirtErrorProfilerAlreadyStopped, 8, "profiler already stopped") \
  X(infinirtErrorInvalidConfiguration, 9, "invalid launch configuration") \
  X(infinirtErrorInvalidPitchValue, 12, "invalid pitch") \
  X(infinirtErrorInvalidSymbol, 13, "invalid symbol") \
  X(infinirtErrorInvalidHostPointer, 16, "invalid host pointer (deprecated code)") \
  X(infinirtErrorInvalidDevicePointer, 17, "invalid device pointer (deprecated code)") \
  X(infinirtErrorInvalidTexture, 18, "invalid texture") \
  X(infinirtErrorInvalidTextureBinding, 19, "invalid texture binding") \
  X(infinirtErrorInvalidChannelDescriptor, 20, "invalid channel descriptor") \
  X(infinirtErrorInvalidMemcpyDirection, 21, "invalid copy direction") \
  X(infinirtErrorAddressOfConstant, 22, "address of constant requested (deprecated code)") \
  X(infinirtErrorTextureFetchFailed, 23, "texture fetch failed (deprecated code)") \
  X(infinirtErrorTextureNotBound, 24, "texture not bound (deprecated code)") \
  X(infinirtErrorSynchronizationError, 25, "synchronization failed (deprecated code)") \
  X(infinirtErrorInvalidFilterSetting, 26, "invalid filter setting") \
  X(infinirtErrorInvalidNormSetting, 27, "invalid normalization setting") \
  X(infinirtErrorMixedDeviceExecution, 28, "mixed device execution (deprecated code)") \
  X(infinirtErrorNotYetImplemented, 31, "function not yet implemented (deprecated code)") \
  X(infinirtErrorMemoryValueTooLarge, 32, "memory value too large (deprecated code)") \
  X(infinirtErrorStubLibrary, 34, "a stub library was loaded instead of the real runtime") \
  X(infinirtErrorInsufficientDriver, 35, "driver is older than the runtime requires") \
  X(infinirtErrorCallRequiresNewerDriver, 36, "call requires a newer driver") \
  X(infinirtErrorInvalidSurface, 37, "invalid surface") \
  X(infinirtErrorDuplicateVariableName, 43, "duplicate global variable name") \
  X(infinirtErrorDuplicateTextureName, 44, "duplicate texture name") \
  X(infinirtErrorDuplicateSurfaceName, 45, "duplicate surface name") \
  X(infinirtErrorDevicesUnavailable, 46, "all devices are busy or unavailable") \
  X(infinirtErrorIncompatibleDriverContext, 49, "incompatible driver context") \
  X(infinirtErrorMissingConfiguration, 52, "launch configuration missing") \
  X(infinirtErrorPriorLaunchFailure, 53, "a previous launch failed (deprecated code)") \
  X(infinirtErrorLaunchMaxDepthExceeded, 65, "launch nesting depth exceeded") \
  X(infinirtErrorLaunchFileScopedTex, 66, "file-scoped texture used in a device launch") \
  X(infinirtErrorLaunchFileScopedSurf, 67, "file-scoped surface used in a device launch") \
  X(infinirtErrorSyncDepthExceeded, 68, "device synchronization depth exceeded") \
  X(infinirtErrorLaunchPendingCountExceeded, 69, "too many pending device launches") \
  X(infinirtErrorInvalidDeviceFunction, 98, "invalid device function") \
  X(infinirtErrorNoDevice, 100, "no device is available") \
  X(infinirtErrorInvalidDevice, 101, "invalid device ordinal") \
  X(infinirtErrorDeviceNotLicensed, 102, "device not licensed for this use") \
  X(infinirtErrorSoftwareValidityNotEstablished, 103, "software validity not established") \
  X(infinirtErrorStartupFailure, 127, "runtime start-up failed") \
  X(infinirtErrorInvalidKernelImage, 200, "invalid kernel image") \
  X(infinirtErrorDeviceUninitialized, 201, "device context not initialized") \
  X(infinirtErrorMapBufferObjectFailed, 205, "mapping a buffer object failed") \
  X(infinirtErrorUnmapBufferObjectFailed, 206, "unmapping a buffer object failed") \
  X(infinirtErrorArrayIsMapped, 207, "array is mapped") \
  X(infinirtErrorAlreadyMapped, 208, "resource already mapped") \
  X(infinirtErrorNoKernelImageForDevice, 209, "no kernel image for this device") \
  X(infinirtErrorAlreadyAcquired, 210, "resource already acquired") \
  X(infinirtErrorNotMapped, 211, "resource not mapped") \
  X(infinirtErrorNotMappedAsArray, 212, "resource not mapped as an array") \
  X(infinirtErrorNotMappedAsPointer, 213, "resource not mapped as a pointer") \
  X(infinirtErrorECCUncorrectable, 214, "uncorrectable ECC error") \
  X(infinirtErrorUnsupportedLimit, 215, "limit not supported") \
  X(infinirtErrorDeviceAlreadyInUse, 216, "device already in use") \
  X(infinirtErrorPeerAccessUnsupported, 217, "peer access not supported") \
  X(infinirtErrorInvalidPtx, 218, "invalid PTX") \
  X(infinirtErrorInvalidGraphicsContext, 219, "invalid graphics context") \
  X(infinirtErrorNvlinkUncorrectable, 220, "uncorrectable NVLink error") \
  X(infinirtErrorJitCompilerNotFound, 221, "JIT compiler not found") \
  X(infinirtErrorUnsupportedPtxVersion, 222, "unsupported PTX version") \
  X(infinirtErrorJitCompilationDisabled, 223, "JIT compilation disabled") \
  X(infinirtErrorUnsupportedExecAffinity, 224, "unsupported execution affinity") \
  X(infinirtErrorUnsupportedDevSideSync, 225, "device-side synchronization not supported") \
  X(infinirtErrorContained, 226, "error contained by the device") \
  X(infinirtErrorInvalidSource, 300, "invalid source") \
  X(infinirtErrorFileNotFound, 301, "file not found") \
  X(infinirtErrorSharedObjectSymbolNotFound, 302, "shared object symbol not found") \
  X(infinirtErrorSharedObjectInitFailed, 303, "shared object initialization failed") \
  X(infinirtErrorOperatingSystem, 304, "operating system call failed") \
  X(infinirtErrorInvalidResourceHandle, 400, "invalid resource handle") \
  X(infinirtErrorIllegalState, 401, "operation not valid in the current state") \
  X(infinirtErrorLossyQuery, 402, "query result would lose information") \
  X(infinirtErrorSymbolNotFound, 500, "symbol not found") \
  X(infinirtErrorNotReady, 600, "work not yet complete") \
  X(infinirtErrorIllegalAddress, 700, "illegal memory access") \
  X(infinirtErrorLaunchOutOfResources, 701, "too many resources requested for launch") \
  X(infinirtErrorLaunchTimeout, 702, "launch timed out") \
  X(infinirtErrorLaunchIncompatibleTexturing, 703, "launch uses incompatible texturing") \
  X(infinirtErrorPeerAccessAlreadyEnabled, 704, "peer access already enabled") \
  X(infinirtErrorPeerAccessNotEnabled, 705, "peer access not enabled") \
  X(infinirtErrorSetOnActiveProcess, 708, "cannot change settings of an active process") \
  X(infinirtErrorContextIsDestroyed, 709, "context has been destroyed") \
  X(infinirtErrorAssert, 710, "device-side assertion failed") \
  X(infinirtErrorTooManyPeers, 711, "too many peers") \
  X(infinirtErrorHostMemoryAlreadyRegistered, 712, "host memory already registered") \
  X(infinirtErrorHostMemoryNotRegistered, 713, "host memory not registered") \
  X(infinirtErrorHardwareStackError, 714, "hardware stack error") \
  X(infinirtErrorIllegalInstruction, 715, "illegal instruction") \
  X(infinirtErrorMisalignedAddress, 716, "misaligned address") \
  X(infinirtErrorInvalidAddressSpace, 717, "invalid address space") \
  X(infinirtErrorInvalidPc, 718, "invalid program counter") \
  X(infinirtErrorLaunchFailure, 719, "launch failed") \
  X(infinirtErrorCooperativeLaunchTooLarge, 720, "cooperative launch too large") \
  X(infinirtErrorTensorMemoryLeak, 721, "tensor memory not released") \
  X(infinirtErrorNotPermitted, 800, "operation not permitted") \
  X(infinirtErrorNotSupported, 801, "operation not supported") \
  X(infinirtErrorSystemNotReady, 802, "system not ready") \
  X(infinirtErrorSystemDriverMismatch, 803, "driver and kernel module versions differ") \
  X(infinirtErrorCompatNotSupportedOnDevice, 804, "forward compatibility not supported on this device") \
  X(infinirtErrorMpsConnectionFailed, 805, "MPS connection failed") \
  X(infinirtErrorMpsRpcFailure, 806, "MPS remote call failed") \
  X(infinirtErrorMpsServerNotReady, 807, "MPS server not ready") \
  X(infinirtErrorMpsMaxClientsReached, 808, "MPS client limit reached") \
  X(infinirtErrorMpsMaxConnectionsReached, 809, "MPS connection limit reached") \
  X(infinirtErrorMpsClientTerminated, 810, "MPS client terminated") \
  X(infinirtErrorCdpNotSupported, 811, "dynamic parallelism not supported") \
  X(infinirtErrorCdpVersionMismatch, 812, "dynamic parallelism version mismatch") \
  X(infinirtErrorStreamCaptureUnsupported, 900, "operation not permitted while a stream is capturing") \
  X(infinirtErrorStreamCaptureInvalidated, 901, "capture was invalidated by an earlier error") \
  X(infinirtErrorStreamCaptureMerge, 902, "operation would merge two separate captures") \
  X(infinirtErrorStreamCaptureUnmatched, 903, "capture was not ended in the stream that began it") \
  X(infinirtErrorStreamCaptureUnjoined, 904, "capture has forked work that was not joined back") \
  X(infinirtErrorStreamCaptureIsolation, 905, "capture would depend on work outside the capture") \
  X(infinirtErrorStreamCaptureImplicit, 906, "operation would implicitly synchronize with a capturing stream") \
  X(infinirtErrorCapturedEvent, 907, "operation not permitted on an event recorded during capture") \
  X(infinirtErrorStreamCaptureWrongThread, 908, "capture must be ended by the thread that began it") \
  X(infinirtErrorTimeout, 909, "wait timed out") \
  X(infinirtErrorGraphExecUpdateFailure, 910, "graph exec update failed") \
  X(infinirtErrorExternalDevice, 911, "external device error") \
  X(infinirtErrorInvalidClusterSize, 912, "invalid cluster size") \
  X(infinirtErrorFunctionNotLoaded, 913, "function not loaded") \
  X(infinirtErrorInvalidResourceType, 914, "invalid resource type") \
  X(infinirtErrorInvalidResourceConfiguration, 915, "invalid resource configuration") \
  X(infinirtErrorUnknown, 999, "unknown error")

#define INFINIRT_ENUMERATOR_(name, value, ...) name = value,
typedef enum infinirtError { INFINIRT_ERROR_LIST(INFINIRT_ENUMERATOR_) } infinirtError_t;

/* ---------------------------------------------------------------------------------------------
 * Enumerations (CUDA 13 values)
 * ------------------------------------------------------------------------------------------- */
enum infinirtMemcpyKind {
  infinirtMemcpyHostToHost = 0,
  infinirtMemcpyHostToDevice = 1,
  infinirtMemcpyDeviceToHost = 2,
  infinirtMemcpyDeviceToDevice = 3,
  infinirtMemcpyDefault = 4 /* direction inferred from the pointers */
};

enum infinirtMemoryType {
  infinirtMemoryTypeUnregistered = 0,
  infinirtMemoryTypeHost = 1,
  infinirtMemoryTypeDevice = 2,
  infinirtMemoryTypeManaged = 3
};

enum infinirtStreamCaptureStatus {
  infinirtStreamCaptureStatusNone = 0,
  infinirtStreamCaptureStatusActive = 1,
  infinirtStreamCaptureStatusInvalidated = 2
};

enum infinirtStreamCaptureMode {
  infinirtStreamCaptureModeGlobal = 0,
  infinirtStreamCaptureModeThreadLocal = 1,
  infinirtStreamCaptureModeRelaxed = 2
};

enum infinirtGraphInstantiateFlags {
  infinirtGraphInstantiateFlagAutoFreeOnLaunch = 1,
  infinirtGraphInstantiateFlagUpload = 2,
  infinirtGraphInstantiateFlagDeviceLaunch = 4,
  infinirtGraphInstantiateFlagUseNodePriority = 8
};

/* Device attributes: every non-reserved cudaDeviceAttr of CUDA 13. X(name, value). */
#define INFINIRT_DEVICE_ATTR_LIST(X) \
  X(infinirtDevAttrMaxThreadsPerBlock, 1) \
  X(infinirtDevAttrMaxBlockDimX, 2) \
  X(infinirtDevAttrMaxBlockDimY, 3) \
  X(infinirtDevAttrMaxBlockDimZ, 4) \
  X(infinirtDevAttrMaxGridDimX, 5) \
  X(infinirtDevAttrMaxGridDimY, 6) \
  X(infinirtDevAttrMaxGridDimZ, 7) \
  X(infinirtDevAttrMaxSharedMemoryPerBlock, 8) \
  X(infinirtDevAttrTotalConstantMemory, 9) \
  X(infinirtDevAttrWarpSize, 10) \
  X(infinirtDevAttrMaxPitch, 11) \
  X(infinirtDevAttrMaxRegistersPerBlock, 12) \
  X(infinirtDevAttrClockRate, 13) \
  X(infinirtDevAttrTextureAlignment, 14) \
  X(infinirtDevAttrGpuOverlap, 15) \
  X(infinirtDevAttrMultiProcessorCount, 16) \
  X(infinirtDevAttrKernelExecTimeout, 17) \
  X(infinirtDevAttrIntegrated, 18) \
  X(infinirtDevAttrCanMapHostMemory, 19) \
  X(infinirtDevAttrComputeMode, 20) \
  X(infinirtDevAttrMaxTexture1DWidth, 21) \
  X(infinirtDevAttrMaxTexture2DWidth, 22) \
  X(infinirtDevAttrMaxTexture2DHeight, 23) \
  X(infinirtDevAttrMaxTexture3DWidth, 24) \
  X(infinirtDevAttrMaxTexture3DHeight, 25) \
  X(infinirtDevAttrMaxTexture3DDepth, 26) \
  X(infinirtDevAttrMaxTexture2DLayeredWidth, 27) \
  X(infinirtDevAttrMaxTexture2DLayeredHeight, 28) \
  X(infinirtDevAttrMaxTexture2DLayeredLayers, 29) \
  X(infinirtDevAttrSurfaceAlignment, 30) \
  X(infinirtDevAttrConcurrentKernels, 31) \
  X(infinirtDevAttrEccEnabled, 32) \
  X(infinirtDevAttrPciBusId, 33) \
  X(infinirtDevAttrPciDeviceId, 34) \
  X(infinirtDevAttrTccDriver, 35) \
  X(infinirtDevAttrMemoryClockRate, 36) \
  X(infinirtDevAttrGlobalMemoryBusWidth, 37) \
  X(infinirtDevAttrL2CacheSize, 38) \
  X(infinirtDevAttrMaxThreadsPerMultiProcessor, 39) \
  X(infinirtDevAttrAsyncEngineCount, 40) \
  X(infinirtDevAttrUnifiedAddressing, 41) \
  X(infinirtDevAttrMaxTexture1DLayeredWidth, 42) \
  X(infinirtDevAttrMaxTexture1DLayeredLayers, 43) \
  X(infinirtDevAttrMaxTexture2DGatherWidth, 45) \
  X(infinirtDevAttrMaxTexture2DGatherHeight, 46) \
  X(infinirtDevAttrMaxTexture3DWidthAlt, 47) \
  X(infinirtDevAttrMaxTexture3DHeightAlt, 48) \
  X(infinirtDevAttrMaxTexture3DDepthAlt, 49) \
  X(infinirtDevAttrPciDomainId, 50) \
  X(infinirtDevAttrTexturePitchAlignment, 51) \
  X(infinirtDevAttrMaxTextureCubemapWidth, 52) \
  X(infinirtDevAttrMaxTextureCubemapLayeredWidth, 53) \
  X(infinirtDevAttrMaxTextureCubemapLayeredLayers, 54) \
  X(infinirtDevAttrMaxSurface1DWidth, 55) \
  X(infinirtDevAttrMaxSurface2DWidth, 56) \
  X(infinirtDevAttrMaxSurface2DHeight, 57) \
  X(infinirtDevAttrMaxSurface3DWidth, 58) \
  X(infinirtDevAttrMaxSurface3DHeight, 59) \
  X(infinirtDevAttrMaxSurface3DDepth, 60) \
  X(infinirtDevAttrMaxSurface1DLayeredWidth, 61) \
  X(infinirtDevAttrMaxSurface1DLayeredLayers, 62) \
  X(infinirtDevAttrMaxSurface2DLayeredWidth, 63) \
  X(infinirtDevAttrMaxSurface2DLayeredHeight, 64) \
  X(infinirtDevAttrMaxSurface2DLayeredLayers, 65) \
  X(infinirtDevAttrMaxSurfaceCubemapWidth, 66) \
  X(infinirtDevAttrMaxSurfaceCubemapLayeredWidth, 67) \
  X(infinirtDevAttrMaxSurfaceCubemapLayeredLayers, 68) \
  X(infinirtDevAttrMaxTexture1DLinearWidth, 69) \
  X(infinirtDevAttrMaxTexture2DLinearWidth, 70) \
  X(infinirtDevAttrMaxTexture2DLinearHeight, 71) \
  X(infinirtDevAttrMaxTexture2DLinearPitch, 72) \
  X(infinirtDevAttrMaxTexture2DMipmappedWidth, 73) \
  X(infinirtDevAttrMaxTexture2DMipmappedHeight, 74) \
  X(infinirtDevAttrComputeCapabilityMajor, 75) \
  X(infinirtDevAttrComputeCapabilityMinor, 76) \
  X(infinirtDevAttrMaxTexture1DMipmappedWidth, 77) \
  X(infinirtDevAttrStreamPrioritiesSupported, 78) \
  X(infinirtDevAttrGlobalL1CacheSupported, 79) \
  X(infinirtDevAttrLocalL1CacheSupported, 80) \
  X(infinirtDevAttrMaxSharedMemoryPerMultiprocessor, 81) \
  X(infinirtDevAttrMaxRegistersPerMultiprocessor, 82) \
  X(infinirtDevAttrManagedMemory, 83) \
  X(infinirtDevAttrIsMultiGpuBoard, 84) \
  X(infinirtDevAttrMultiGpuBoardGroupID, 85) \
  X(infinirtDevAttrHostNativeAtomicSupported, 86) \
  X(infinirtDevAttrSingleToDoublePrecisionPerfRatio, 87) \
  X(infinirtDevAttrPageableMemoryAccess, 88) \
  X(infinirtDevAttrConcurrentManagedAccess, 89) \
  X(infinirtDevAttrComputePreemptionSupported, 90) \
  X(infinirtDevAttrCanUseHostPointerForRegisteredMem, 91) \
  X(infinirtDevAttrCooperativeLaunch, 95) \
  X(infinirtDevAttrMaxSharedMemoryPerBlockOptin, 97) \
  X(infinirtDevAttrCanFlushRemoteWrites, 98) \
  X(infinirtDevAttrHostRegisterSupported, 99) \
  X(infinirtDevAttrPageableMemoryAccessUsesHostPageTables, 100) \
  X(infinirtDevAttrDirectManagedMemAccessFromHost, 101) \
  X(infinirtDevAttrMaxBlocksPerMultiprocessor, 106) \
  X(infinirtDevAttrMaxPersistingL2CacheSize, 108) \
  X(infinirtDevAttrMaxAccessPolicyWindowSize, 109) \
  X(infinirtDevAttrSparseCudaArraySupported, 112) \
  X(infinirtDevAttrHostRegisterReadOnlySupported, 113) \
  X(infinirtDevAttrTimelineSemaphoreInteropSupported, 114) \
  X(infinirtDevAttrMemoryPoolsSupported, 115) \
  X(infinirtDevAttrGPUDirectRDMASupported, 116) \
  X(infinirtDevAttrGPUDirectRDMAFlushWritesOptions, 117) \
  X(infinirtDevAttrGPUDirectRDMAWritesOrdering, 118) \
  X(infinirtDevAttrMemoryPoolSupportedHandleTypes, 119) \
  X(infinirtDevAttrClusterLaunch, 120) \
  X(infinirtDevAttrDeferredMappingCudaArraySupported, 121) \
  X(infinirtDevAttrIpcEventSupport, 125) \
  X(infinirtDevAttrMemSyncDomainCount, 126) \
  X(infinirtDevAttrNumaConfig, 130) \
  X(infinirtDevAttrNumaId, 131) \
  X(infinirtDevAttrMpsEnabled, 133) \
  X(infinirtDevAttrHostNumaId, 134) \
  X(infinirtDevAttrD3D12CigSupported, 135) \
  X(infinirtDevAttrVulkanCigSupported, 138) \
  X(infinirtDevAttrGpuPciDeviceId, 139) \
  X(infinirtDevAttrGpuPciSubsystemId, 140) \
  X(infinirtDevAttrHostNumaMemoryPoolsSupported, 142) \
  X(infinirtDevAttrHostNumaMultinodeIpcSupported, 143) \
  X(infinirtDevAttrHostMemoryPoolsSupported, 144) \
  X(infinirtDevAttrOnlyPartialHostNativeAtomicSupported, 147)

#define INFINIRT_ATTR_ENUMERATOR_(name, value) name = value,
enum infinirtDeviceAttr { INFINIRT_DEVICE_ATTR_LIST(INFINIRT_ATTR_ENUMERATOR_) };

/* ---------------------------------------------------------------------------------------------
 * Flags and special handles (CUDA 13 values)
 * ------------------------------------------------------------------------------------------- */
#define infinirtHostAllocDefault 0x00
#define infinirtHostAllocPortable 0x01
#define infinirtHostAllocMapped 0x02
#define infinirtHostAllocWriteCombined 0x04

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

#define infinirtCpuDeviceId ((int)-1)
#define infinirtInvalidDeviceId ((int)-2)

/* ---------------------------------------------------------------------------------------------
 * Handles and structures
 * ------------------------------------------------------------------------------------------- */
/* Opaque handles. InfiniRT owns the objects behind them; a destroyed, foreign or garbage handle
 * is rejected with infinirtErrorInvalidResourceHandle instead of being dereferenced. */
typedef struct infinirtStream_st *infinirtStream_t;
typedef struct infinirtEvent_st *infinirtEvent_t;
typedef struct infinirtGraph_st *infinirtGraph_t;
typedef struct infinirtGraphExec_st *infinirtGraphExec_t;
typedef struct infinirtGraphNode_st *infinirtGraphNode_t;

/* The legacy default stream (same as 0) and the calling thread's per-thread default stream. */
#define infinirtStreamLegacy ((infinirtStream_t)0x1)
#define infinirtStreamPerThread ((infinirtStream_t)0x2)

typedef void (*infinirtHostFn_t)(void *userData);

struct infinirtPointerAttributes {
  enum infinirtMemoryType type;
  int device;
  void *devicePointer;
  void *hostPointer;
  long reserved[8];
};

typedef struct infinirtUUID_st {
  char bytes[16];
} infinirtUUID_t;

/* The fields of cudaDeviceProp that make sense across vendors, with CUDA's names and types,
 * followed by InfiniRT's own fields. Not layout-compatible with cudaDeviceProp. */
struct infinirtDeviceProp {
  char name[256];
  infinirtUUID_t uuid;
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
  int multiProcessorCount;
  int integrated;
  int canMapHostMemory;
  int concurrentKernels;
  int ECCEnabled;
  int pciBusID;
  int pciDeviceID;
  int pciDomainID;
  int asyncEngineCount;
  int unifiedAddressing;
  int memoryBusWidth;
  int l2CacheSize;
  int maxThreadsPerMultiProcessor;
  int streamPrioritiesSupported;
  size_t sharedMemPerMultiprocessor;
  int regsPerMultiprocessor;
  int managedMemory;
  int isMultiGpuBoard;
  int pageableMemoryAccess;
  int concurrentManagedAccess;
  int hostRegisterSupported;
  int memoryPoolsSupported;
  /* InfiniRT fields */
  infiniDevice_t deviceType; /* which kind of device this ordinal is */
  int vendorDeviceIndex;     /* index of the device within its backend */
  char backendName[32];      /* plugin name, e.g. "cpu", "nvidia" */
  int reserved[32];
};

/* Backend listing (InfiniRT extension): one entry per plugin considered, loaded or not. */
typedef enum {
  infinirtBackendLoaded = 0,          /* loaded and contributing its devices */
  infinirtBackendNotFound = 1,        /* no library found for this backend */
  infinirtBackendDlopenFailed = 2,    /* dlopen refused the file; reason holds dlerror() */
  infinirtBackendNoEntryPoint = 3,    /* the library lacks infinirtPluginGetTable */
  infinirtBackendAbiTooOld = 4,       /* plugin ABI major version older than the core's */
  infinirtBackendAbiTooNew = 5,       /* plugin ABI major version newer than the core's */
  infinirtBackendBadTable = 6,        /* the plugin table is malformed (size, name, device type) */
  infinirtBackendRuntimeMissing = 7,  /* plugin loaded, but its vendor runtime is absent: 0 devices */
  infinirtBackendInitFailed = 8,      /* the plugin's Initialize entry failed */
  infinirtBackendFilteredOut = 9,     /* excluded by INFINIRT_BACKENDS or the config file */
  infinirtBackendDuplicate = 10       /* same file or same backend name already loaded */
} infinirtBackendStatus_t;

typedef struct infinirtBackendProp {
  char name[32];                   /* e.g. "cpu", "nvidia" */
  infiniDevice_t deviceType;       /* INFINI_DEVICE_TYPE_COUNT when unknown (not loaded) */
  char path[4096];                 /* the plugin file (real path), or "" */
  int abiMajor;                    /* plugin ABI version; -1 when unknown */
  int abiMinor;
  int runtimeVersion;              /* vendor runtime version; -1 when unknown or absent */
  char runtimeLibrary[1024];       /* vendor runtime library in use, or "" */
  int deviceCount;                 /* devices contributed (after INFINIRT_VISIBLE_DEVICES) */
  double loadTimeMs;               /* time spent loading and initialising the plugin */
  infinirtBackendStatus_t status;
  char reason[2048];               /* human-readable detail, e.g. dlerror() text */
} infinirtBackendProp;

/* ---------------------------------------------------------------------------------------------
 * Functions: the one list of public entry points. X(return type, name after the prefix,
 * parameter list). INFINIRT_CUDA_FUNCTIONS are cuda<Name> renamed, prototype for prototype;
 * a test compares each with the real CUDA header where the CUDA Toolkit is installed.
 * ------------------------------------------------------------------------------------------- */
#define INFINIRT_CUDA_FUNCTIONS(X)                                                                  \
  /* Device management */                                                                         \
  X(infinirtError_t, GetDeviceCount, (int *count))                                                \
  X(infinirtError_t, SetDevice, (int device))                                                     \
  X(infinirtError_t, GetDevice, (int *device))                                                    \
  /* Waits for all work on the current device, in every stream. */                                \
  X(infinirtError_t, DeviceSynchronize, (void))                                                   \
  /* Destroys every allocation, stream and event of the current device (stream-ordered           \
     allocations excepted), after waiting for its queued work. */                                 \
  X(infinirtError_t, DeviceReset, (void))                                                         \
  X(infinirtError_t, GetDeviceProperties, (struct infinirtDeviceProp * prop, int device))         \
  X(infinirtError_t, DeviceGetAttribute, (int *value, enum infinirtDeviceAttr attr, int device))  \
  /* The CUDA Runtime API version implemented (INFINIRT_CUDA_API_VERSION). */                     \
  X(infinirtError_t, RuntimeGetVersion, (int *runtimeVersion))                                    \
  /* The current device's vendor runtime version, in CUDA's encoding where the vendor has one. */ \
  X(infinirtError_t, DriverGetVersion, (int *driverVersion))                                      \
  /* Errors: one last-error variable per host thread. */                                          \
  X(infinirtError_t, GetLastError, (void))                                                        \
  X(infinirtError_t, PeekAtLastError, (void))                                                     \
  X(const char *, GetErrorName, (infinirtError_t error))                                          \
  X(const char *, GetErrorString, (infinirtError_t error))                                        \
  /* Memory. Every allocation is recorded by the core, which routes frees and copies. */         \
  X(infinirtError_t, Malloc, (void **devPtr, size_t size))                                        \
  X(infinirtError_t, Free, (void *devPtr))                                                        \
  X(infinirtError_t, MallocHost, (void **ptr, size_t size))                                       \
  X(infinirtError_t, HostAlloc, (void **pHost, size_t size, unsigned int flags))                  \
  X(infinirtError_t, FreeHost, (void *ptr))                                                       \
  X(infinirtError_t, MallocAsync, (void **devPtr, size_t size, infinirtStream_t hStream))         \
  X(infinirtError_t, FreeAsync, (void *devPtr, infinirtStream_t hStream))                         \
  X(infinirtError_t, MemGetInfo, (size_t * free, size_t * total))                                \
  X(infinirtError_t, Memcpy,                                                                      \
    (void *dst, const void *src, size_t count, enum infinirtMemcpyKind kind))                     \
  X(infinirtError_t, MemcpyAsync,                                                                 \
    (void *dst, const void *src, size_t count, enum infinirtMemcpyKind kind,                      \
     infinirtStream_t stream INFINIRT_DV(0)))                                                     \
  X(infinirtError_t, Memset, (void *devPtr, int value, size_t count))                             \
  X(infinirtError_t, MemsetAsync,                                                                 \
    (void *devPtr, int value, size_t count, infinirtStream_t stream INFINIRT_DV(0)))              \
  X(infinirtError_t, PointerGetAttributes,                                                        \
    (struct infinirtPointerAttributes * attributes, const void *ptr))                             \
  /* Streams */                                                                                   \
  X(infinirtError_t, StreamCreate, (infinirtStream_t * pStream))                                  \
  X(infinirtError_t, StreamCreateWithFlags, (infinirtStream_t * pStream, unsigned int flags))     \
  X(infinirtError_t, StreamDestroy, (infinirtStream_t stream))                                    \
  X(infinirtError_t, StreamSynchronize, (infinirtStream_t stream))                                \
  X(infinirtError_t, StreamQuery, (infinirtStream_t stream))                                      \
  X(infinirtError_t, StreamWaitEvent,                                                             \
    (infinirtStream_t stream, infinirtEvent_t event, unsigned int flags INFINIRT_DV(0)))          \
  X(infinirtError_t, LaunchHostFunc, (infinirtStream_t stream, infinirtHostFn_t fn, void *userData)) \
  /* Events */                                                                                    \
  X(infinirtError_t, EventCreate, (infinirtEvent_t * event))                                      \
  X(infinirtError_t, EventCreateWithFlags, (infinirtEvent_t * event, unsigned int flags))         \
  X(infinirtError_t, EventRecord, (infinirtEvent_t event, infinirtStream_t stream INFINIRT_DV(0))) \
  X(infinirtError_t, EventQuery, (infinirtEvent_t event))                                         \
  X(infinirtError_t, EventSynchronize, (infinirtEvent_t event))                                   \
  X(infinirtError_t, EventDestroy, (infinirtEvent_t event))                                       \
  X(infinirtError_t, EventElapsedTime, (float *ms, infinirtEvent_t start, infinirtEvent_t end))   \
  /* Stream capture and graphs */                                                                 \
  X(infinirtError_t, StreamBeginCapture,                                                          \
    (infinirtStream_t stream, enum infinirtStreamCaptureMode mode))                               \
  X(infinirtError_t, StreamEndCapture, (infinirtStream_t stream, infinirtGraph_t * pGraph))       \
  X(infinirtError_t, StreamIsCapturing,                                                           \
    (infinirtStream_t stream, enum infinirtStreamCaptureStatus * pCaptureStatus))                 \
  X(infinirtError_t, GraphInstantiate,                                                            \
    (infinirtGraphExec_t * pGraphExec, infinirtGraph_t graph,                                     \
     unsigned long long flags INFINIRT_DV(0)))                                                    \
  X(infinirtError_t, GraphInstantiateWithFlags,                                                   \
    (infinirtGraphExec_t * pGraphExec, infinirtGraph_t graph,                                     \
     unsigned long long flags INFINIRT_DV(0)))                                                    \
  X(infinirtError_t, GraphLaunch, (infinirtGraphExec_t graphExec, infinirtStream_t stream))       \
  X(infinirtError_t, GraphExecDestroy, (infinirtGraphExec_t graphExec))                           \
  X(infinirtError_t, GraphDestroy, (infinirtGraph_t graph))

#define INFINIRT_EXTENSION_FUNCTIONS(X)                                                             \
  /* Discovers and loads plugins. Optional (every call initialises lazily), idempotent and       \
     thread-safe. Returns infinirtErrorNoDevice when no backend contributes a device. */          \
  X(infinirtError_t, Init, (void))                                                                \
  /* Waits for queued work, releases every object and unloads the plugins. Calls made after it   \
     initialise again. Not to be called while other threads use the runtime. */                   \
  X(infinirtError_t, Finalize, (void))                                                            \
  /* count_array[t] = devices of device type t, for every t < INFINI_DEVICE_TYPE_COUNT. */        \
  X(infinirtError_t, GetAllDeviceCount, (int *count_array))                                       \
  /* Device type of a flat ordinal, and the flat ordinal of the index-th device of a type. */     \
  X(infinirtError_t, DeviceGetType, (infiniDevice_t * type, int device))                          \
  X(infinirtError_t, DeviceGetOrdinal, (int *device, infiniDevice_t type, int index))             \
  /* Backend listing: every plugin considered, loaded or not, with the reason. */                 \
  X(infinirtError_t, GetBackendCount, (int *count))                                               \
  X(infinirtError_t, GetBackendProperties, (infinirtBackendProp * prop, int index))

#define INFINIRT_DECLARE_(ret, name, params) INFINIRT_API ret infinirt##name params;
INFINIRT_CUDA_FUNCTIONS(INFINIRT_DECLARE_)
INFINIRT_EXTENSION_FUNCTIONS(INFINIRT_DECLARE_)
#undef INFINIRT_DECLARE_

#ifdef __cplusplus
} /* extern "C" */

/* C++ conveniences that CUDA's cuda_runtime.h also offers. Define INFINIRT_NO_CXX_OVERLOADS to
 * get the plain C declarations only (as including cuda_runtime_api.h instead of cuda_runtime.h). */
#ifndef INFINIRT_NO_CXX_OVERLOADS
template <class T>
static inline infinirtError_t infinirtMalloc(T **devPtr, size_t size) {
  return infinirtMalloc(reinterpret_cast<void **>(devPtr), size);
}
template <class T>
static inline infinirtError_t infinirtMallocHost(T **ptr, size_t size, unsigned int flags = 0) {
  return infinirtHostAlloc(reinterpret_cast<void **>(ptr), size, flags);
}
template <class T>
static inline infinirtError_t infinirtHostAlloc(T **ptr, size_t size, unsigned int flags) {
  return infinirtHostAlloc(reinterpret_cast<void **>(ptr), size, flags);
}
template <class T>
static inline infinirtError_t infinirtMallocAsync(T **devPtr, size_t size, infinirtStream_t stream) {
  return infinirtMallocAsync(reinterpret_cast<void **>(devPtr), size, stream);
}
static inline infinirtError_t infinirtEventCreate(infinirtEvent_t *event, unsigned int flags) {
  return infinirtEventCreateWithFlags(event, flags);
}
#endif /* INFINIRT_NO_CXX_OVERLOADS */
#endif /* __cplusplus */

#endif /* INFINIRT_H_ */
