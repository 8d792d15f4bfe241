// The Cambricon CNRT functions and values the Cambricon plugin uses (docs/vendor-runtimes.md and
// CNRT's cnrt.h 6.0.2 / 6.14.1). The plugin opens libcnrt.so with dlopen and resolves these by
// name, so it builds without the Neuware SDK.
//
// Every function returns cnrtRet_t, an int-sized enum: the plugin sees it as int. Handles
// (cnrtQueue_t, cnrtNotifier_t, cnrtTaskTopo_t, cnrtTaskTopoEntity_t, cnrtMemPool_t) are
// pointers, enums are ints.
#ifndef INFINIRT_PLUGINS_CAMBRICON_CNRT_API_H_
#define INFINIRT_PLUGINS_CAMBRICON_CNRT_API_H_

#include <cstddef>

namespace infinirt::cambricon {

typedef void (*CnrtHostFn)(void* user_data);

// One list of every function: X(requirement, name, parameters); the symbol is "cnrt" + name.
// Without a kRequired function the runtime is unusable and the backend says which one is
// missing; a kOptional one is used where present (an InfiniRT entry that needs a missing one
// answers NotSupported or is emulated, as GetSupport declares). Of the three asynchronous copy
// symbols at least one must exist: the plugin takes _V3, else _V2, else the unversioned one
// (6.14.1 marks the last two as to be deprecated).
#define CNRT_FUNCTIONS(X)                                                                  \
  X(kRequired, GetDeviceCount, (unsigned int* count))                                      \
  X(kRequired, SetDevice, (int device))                                                    \
  X(kRequired, SyncDevice, (void))                                                         \
  X(kRequired, Malloc, (void** ptr, size_t bytes))                                         \
  X(kRequired, Free, (void* ptr))                                                          \
  X(kRequired, HostMalloc, (void** ptr, size_t bytes))                                     \
  X(kRequired, FreeHost, (void* ptr))                                                      \
  X(kRequired, Memcpy, (void* dst, void* src, size_t bytes, int dir))                      \
  X(kRequired, Memset, (void* ptr, int value, size_t bytes))                               \
  X(kRequired, MemsetAsync, (void* ptr, int value, size_t bytes, void* queue))             \
  X(kRequired, QueueCreate, (void** queue))                                                \
  X(kRequired, QueueDestroy, (void* queue))                                                \
  X(kRequired, QueueSync, (void* queue))                                                   \
  X(kRequired, QueueQuery, (void* queue))                                                  \
  X(kRequired, QueueWaitNotifier, (void* notifier, void* queue, unsigned int flags))       \
  X(kRequired, NotifierCreate, (void** notifier))                                          \
  X(kRequired, NotifierDestroy, (void* notifier))                                          \
  X(kRequired, PlaceNotifier, (void* notifier, void* queue))                               \
  X(kRequired, QueryNotifier, (void* notifier))                                            \
  X(kRequired, WaitNotifier, (void* notifier))                                             \
  X(kRequired, NotifierElapsedTime, (void* start, void* end, float* ms))                   \
  X(kOptional, MemcpyAsync_V3, (void* dst, void* src, size_t bytes, void* queue, int dir)) \
  X(kOptional, MemcpyAsync_V2, (void* dst, void* src, size_t bytes, void* queue, int dir)) \
  X(kOptional, MemcpyAsync, (void* dst, void* src, size_t bytes, void* queue, int dir))    \
  X(kOptional, NotifierCreateWithFlags, (void** notifier, unsigned int flags))             \
  X(kOptional, GetLibVersion, (int* major, int* minor, int* patch))                        \
  X(kOptional, DriverGetVersion, (int* major, int* minor, int* patch))                     \
  X(kOptional, DeviceReset, (void))                                                        \
  X(kOptional, GetDeviceProperties_V3, (void* prop, int device))                           \
  X(kOptional, GetDeviceProperties_V2, (void* prop, int device))                           \
  X(kOptional, GetDeviceProperties, (void* prop, int device))                              \
  X(kOptional, DeviceGetAttribute, (int* value, int attr, int device))                     \
  X(kOptional, DeviceGetQueuePriorityRange, (int* least, int* greatest))                   \
  X(kOptional, QueueCreateWithPriority, (void** queue, unsigned int flags, int priority))  \
  X(kOptional, MemGetInfo, (size_t * free_bytes, size_t * total_bytes))                    \
  X(kOptional, MemAllocAsync, (void** ptr, size_t bytes, void* queue))                     \
  X(kOptional, MemFreeAsync, (void* ptr, void* queue))                                     \
  X(kOptional, DeviceGetDefaultMemPool, (void** pool, int device))                         \
  X(kOptional, MemPoolGetAttribute, (void* pool, int attr, void* value))                   \
  X(kOptional, MemPoolSetAttribute, (void* pool, int attr, void* value))                   \
  X(kOptional, MemPoolTrimTo, (void* pool, size_t min_bytes_to_keep))                      \
  X(kOptional, PointerGetAttributes, (void* attributes, const void* ptr))                  \
  X(kOptional, InvokeHostFunc, (void* queue, CnrtHostFn fn, void* user_data))              \
  X(kOptional, QueueBeginCapture, (void* queue, int mode))                                 \
  X(kOptional, QueueEndCapture, (void* queue, void** topo))                                \
  X(kOptional, TaskTopoInstantiate,                                                        \
    (void** entity, void* topo, void** error_node, char* log, size_t log_size))            \
  X(kOptional, TaskTopoDestroy, (void* topo))                                              \
  X(kOptional, TaskTopoEntityInvoke, (void* entity, void* queue))                          \
  X(kOptional, TaskTopoEntityDestroy, (void* entity))

// CNRT's numbers (cnrt.h). Only what the plugin passes or recognises.
namespace cnrt {

// cnrtRet_t
constexpr int kSuccess = 0;
constexpr int kErrorNotReady = 1;
constexpr int kErrorInit = 100002;
constexpr int kErrorNoDevice = 100004;
constexpr int kErrorDeviceInvalid = 100005;
constexpr int kErrorArgsInvalid = 100006;
constexpr int kErrorSys = 100007;
constexpr int kErrorSysNoMem = 100010;
constexpr int kErrorInvalidResourceHandle = 100014;
constexpr int kErrorIllegalState = 100015;
constexpr int kErrorNotSupport = 100050;
constexpr int kErrorOpsNotPermitted = 100051;
constexpr int kErrorQueue = 100060;
constexpr int kErrorNoMem = 100100;
constexpr int kErrorAssert = 100128;
constexpr int kErrorKernelTrap = 100132;
constexpr int kErrorKernelUserTrap = 100133;
constexpr int kErrorNotFound = 100301;
constexpr int kErrorInvalidKernel = 100302;
constexpr int kErrorUnsupportedKernelVersion = 100303;
constexpr int kErrorQueueCaptureUnsupported = 100360;
constexpr int kErrorQueueCaptureInvalidated = 100361;
constexpr int kErrorQueueCaptureWrongThread = 100362;
constexpr int kErrorQueueCaptureMerged = 100363;
constexpr int kErrorQueueCaptureUnjoined = 100364;
constexpr int kErrorQueueCaptureIsolation = 100365;
constexpr int kErrorQueueCaptureUnmatched = 100366;
constexpr int kErrorTaskTopoEntityUpdateFailure = 100400;
constexpr int kErrorSetOnActiveProcess = 632002;
constexpr int kErrorDevice = 632006;
constexpr int kErrorNoAttribute = 632009;
constexpr int kErrorMemcpyDirectionInvalid = 632013;
constexpr int kErrorBusy = 632014;
constexpr int kErrorCndrvFuncCall = 632015;
constexpr int kErrorCndevFuncCall = 632017;
constexpr int kErrorNoCnrtContext = 632019;
constexpr int kErrorCndrvFuncNotFound = 632020;
constexpr int kErrorInvalidSymbol = 632100;
constexpr int kErrorUnknown = 999991;

// cnrtMemTransDir_t: not CUDA's numbering.
constexpr int kMemcpyHostToDev = 0;
constexpr int kMemcpyDevToDev = 1;
constexpr int kMemcpyDevToHost = 2;
constexpr int kMemcpyHostToHost = 3;
constexpr int kMemcpyPeerToPeer = 4;
constexpr int kMemcpyNoDirection = 5;

// cnrtNotifierFlags_t (DISABLE_TIMING_ALL and INTERPROCESS since 6.14.1).
constexpr unsigned int kNotifierDefault = 0x0;
constexpr unsigned int kNotifierDisableTimingSw = 0x2;
constexpr unsigned int kNotifierDisableTimingAll = 0x4;
constexpr unsigned int kNotifierInterprocess = 0x8;

// cnrtQueueCaptureMode_t
constexpr int kQueueCaptureModeRelaxed = 2;

// cnrtMemType_t, the first field of cnrtPointerAttributes_t.
constexpr int kMemTypeUnregistered = 0;
constexpr int kMemTypeHost = 1;
constexpr int kMemTypeDevice = 2;

// cnrtDeviceAttr_t
constexpr int kAttrComputeCapabilityMajor = 0x01;
constexpr int kAttrComputeCapabilityMinor = 0x02;
constexpr int kAttrComputeMode = 0x09;
constexpr int kAttrSupportQueuePriorities = 0x103;
constexpr int kAttrClusterCount = 0x205;
constexpr int kAttrMcorePerCluster = 0x206;
constexpr int kAttrMaxL2CacheSize = 0x301;
constexpr int kAttrEccEnable = 0x401;
constexpr int kAttrIpuClockRate = 0x402;
constexpr int kAttrMemClockRate = 0x403;
constexpr int kAttrGmemBusWidth = 0x404;
constexpr int kAttrPciBusID = 0x406;
constexpr int kAttrPciDeviceID = 0x407;
constexpr int kAttrPciDomainID = 0x408;

// cnrtComputeMode_t
constexpr int kComputeModeExclusiveProcess = 1;

}  // namespace cnrt
}  // namespace infinirt::cambricon

#endif  // INFINIRT_PLUGINS_CAMBRICON_CNRT_API_H_
