// The AscendCL (CANN) functions the Ascend plugin resolves with dlsym, as one list:
// X(symbol, parameters). The symbols are the exported C names of libascendcl.so; the prototypes
// are those of CANN's acl/acl.h, acl_base_rt.h and acl_rt.h (docs/vendor-runtimes.md), with every
// handle type (aclrtStream, aclrtEvent, aclmdlRI) as void* and every enum (aclrtMemcpyKind,
// aclrtMemMallocPolicy, aclrtMemAttr, aclrtStreamStatus, aclrtEventRecordedStatus, aclDeviceInfo,
// aclmdlRICaptureMode, aclmdlRICaptureStatus) as int. Every function returns aclError, an int
// whose success value ACL_SUCCESS is 0.
#ifndef INFINIRT_PLUGINS_ASCEND_ASCEND_API_H_
#define INFINIRT_PLUGINS_ASCEND_ASCEND_API_H_

#include <cstddef>
#include <cstdint>

namespace infinirt::ascend {

using AclError = int;
using AclHostFunc = void (*)(void* args);  // aclrtHostFunc

// Without these the runtime is not usable: the backend reports which one is missing.
#define ASCEND_REQUIRED_FUNCTIONS(X)                                                            \
  X(aclInit, (const char* config_path))                                                         \
  X(aclrtGetDeviceCount, (uint32_t * count))                                                    \
  X(aclrtSetDevice, (int32_t device))                                                           \
  X(aclrtSynchronizeDevice, (void))                                                             \
  X(aclrtMalloc, (void** ptr, size_t size, int policy))                                         \
  X(aclrtFree, (void* ptr))                                                                     \
  X(aclrtMallocHost, (void** ptr, size_t size))                                                 \
  X(aclrtFreeHost, (void* ptr))                                                                 \
  X(aclrtMemcpy, (void* dst, size_t dest_max, const void* src, size_t count, int kind))         \
  X(aclrtMemcpyAsync,                                                                           \
    (void* dst, size_t dest_max, const void* src, size_t count, int kind, void* stream))        \
  X(aclrtMemset, (void* ptr, size_t max_count, int32_t value, size_t count))                    \
  X(aclrtMemsetAsync, (void* ptr, size_t max_count, int32_t value, size_t count, void* stream)) \
  X(aclrtCreateStream, (void** stream))                                                         \
  X(aclrtDestroyStream, (void* stream))                                                         \
  X(aclrtSynchronizeStream, (void* stream))                                                     \
  X(aclrtStreamQuery, (void* stream, int* status))                                              \
  X(aclrtStreamWaitEvent, (void* stream, void* event))                                          \
  X(aclrtCreateEventWithFlag, (void** event, uint32_t flag))                                    \
  X(aclrtRecordEvent, (void* event, void* stream))                                              \
  X(aclrtQueryEventStatus, (void* event, int* status))                                          \
  X(aclrtSynchronizeEvent, (void* event))                                                       \
  X(aclrtDestroyEvent, (void* event))                                                           \
  X(aclrtEventElapsedTime, (float* ms, void* start, void* end))

// Used where present (newer CANN releases); an InfiniRT call that needs a missing one answers
// NotSupported, as GetSupport says.
#define ASCEND_OPTIONAL_FUNCTIONS(X)                                                \
  X(aclrtCreateEventExWithFlag, (void** event, uint32_t flag))                      \
  X(aclrtGetVersion, (int32_t * major, int32_t * minor, int32_t * patch))           \
  X(aclrtGetMemInfo, (int attr, size_t* free_bytes, size_t* total_bytes))           \
  X(aclGetDeviceCapability, (uint32_t device, int info, int64_t* value))            \
  X(aclrtLaunchHostFunc, (void* stream, AclHostFunc fn, void* args))                \
  X(aclmdlRICaptureBegin, (void* stream, int mode))                                 \
  X(aclmdlRICaptureGetInfo, (void* stream, int* status, void** model))              \
  X(aclmdlRICaptureEnd, (void* stream, void** model))                               \
  X(aclmdlRIExecuteAsync, (void* model, void* stream))                              \
  X(aclmdlRIDestroy, (void* model))                                                 \
  X(aclrtDeviceGetStreamPriorityRange, (int32_t * least, int32_t * greatest))       \
  X(aclrtCreateStreamWithConfig, (void** stream, uint32_t priority, uint32_t flag)) \
  X(aclrtDeviceCanAccessPeer, (int32_t * can_access, int32_t device, int32_t peer)) \
  X(aclrtDeviceEnablePeerAccess, (int32_t peer, uint32_t flags))                    \
  X(aclrtDeviceDisablePeerAccess, (int32_t peer))

// The vendor's numbers (acl_base_rt.h, acl_rt.h, error_codes/rt_error_codes.h).
namespace acl {
constexpr AclError kSuccess = 0;
constexpr AclError kRepeatInitialize = 100002;  // ACL_ERROR_REPEAT_INITIALIZE: not a failure
constexpr int kMallocHugeFirst = 0;             // ACL_MEM_MALLOC_HUGE_FIRST
constexpr int kDdrMem = 0;                      // ACL_DDR_MEM
constexpr int kHbmMem = 1;                      // ACL_HBM_MEM
constexpr int kDeviceInfoAiCoreNum = 0;         // ACL_DEVICE_INFO_AI_CORE_NUM
constexpr int kDeviceInfoL2Size = 2;            // ACL_DEVICE_INFO_L2_SIZE
constexpr uint32_t kEventSync = 0x1;            // ACL_EVENT_SYNC: the event can be waited for
constexpr uint32_t kEventTimeLine = 0x8;        // ACL_EVENT_TIME_LINE: the event has timestamps
constexpr int kStreamStatusComplete = 0;        // ACL_STREAM_STATUS_COMPLETE
constexpr int kStreamStatusNotReady = 1;        // ACL_STREAM_STATUS_NOT_READY
constexpr int kEventRecordedNotReady = 0;       // ACL_EVENT_RECORDED_STATUS_NOT_READY
constexpr int kEventRecordedComplete = 1;       // ACL_EVENT_RECORDED_STATUS_COMPLETE
constexpr int kCaptureModeRelaxed = 2;          // ACL_MODEL_RI_CAPTURE_MODE_RELAXED
constexpr int kCaptureStatusActive = 1;         // ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
// aclrtMemcpyKind, indexed by infinirtMemcpyKind (H2H, H2D, D2H, D2D, Default): the same numbers.
constexpr int kMemcpyKind[5] = {0, 1, 2, 3, 4};
}  // namespace acl

}  // namespace infinirt::ascend

#endif  // INFINIRT_PLUGINS_ASCEND_ASCEND_API_H_
