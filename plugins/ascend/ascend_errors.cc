// aclError -> infinirtError_t. ACL has no code-to-name function (only aclGetRecentErrMsg, the
// calling thread's latest message), so the plugin keeps a table of the codes CANN's headers
// define (acl_base_rt.h, error_codes/rt_error_codes.h) that have an InfiniRT counterpart.
#include <string>

#include "ascend_state.h"

namespace infinirt::ascend {
namespace {

struct Mapping {
  AclError acl;
  infinirtError_t error;
};

constexpr Mapping kMappings[] = {
    {0, infinirtSuccess},                                // ACL_SUCCESS
    {100000, infinirtErrorInvalidValue},                 // ACL_ERROR_INVALID_PARAM
    {100001, infinirtErrorInitializationError},          // ACL_ERROR_UNINITIALIZE
    {100002, infinirtErrorInitializationError},          // ACL_ERROR_REPEAT_INITIALIZE
    {100037, infinirtErrorInitializationError},          // ACL_ERROR_REPEAT_FINALIZE
    {200000, infinirtErrorMemoryAllocation},             // ACL_ERROR_BAD_ALLOC
    {200001, infinirtErrorNotSupported},                 // ACL_ERROR_API_NOT_SUPPORT
    {200002, infinirtErrorInvalidDevice},                // ACL_ERROR_INVALID_DEVICE
    {200003, infinirtErrorInvalidValue},                 // ACL_ERROR_MEMORY_ADDRESS_UNALIGNED
    {200004, infinirtErrorInvalidResourceHandle},        // ACL_ERROR_RESOURCE_NOT_MATCH
    {200005, infinirtErrorInvalidResourceHandle},        // ACL_ERROR_INVALID_RESOURCE_HANDLE
    {200006, infinirtErrorNotSupported},                 // ACL_ERROR_FEATURE_UNSUPPORTED
    {300000, infinirtErrorMemoryAllocation},             // ACL_ERROR_STORAGE_OVER_LIMIT
    {107000, infinirtErrorInvalidValue},                 // ACL_ERROR_RT_PARAM_INVALID
    {107001, infinirtErrorInvalidDevice},                // ACL_ERROR_RT_INVALID_DEVICEID
    {107002, infinirtErrorDeviceUninitialized},          // ACL_ERROR_RT_CONTEXT_NULL
    {107003, infinirtErrorInvalidResourceHandle},        // ACL_ERROR_RT_STREAM_CONTEXT
    {107006, infinirtErrorInvalidResourceHandle},        // ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
    {107008, infinirtErrorInvalidValue},                 // ACL_ERROR_RT_ADDR_UNALIGNED
    {107016, infinirtErrorInvalidValue},                 // ACL_ERROR_RT_INVALID_MEMORY_TYPE
    {107017, infinirtErrorInvalidResourceHandle},        // ACL_ERROR_RT_INVALID_HANDLE
    {107018, infinirtErrorInvalidValue},                 // ACL_ERROR_RT_INVALID_MALLOC_TYPE
    {107019, infinirtErrorTimeout},                      // ACL_ERROR_RT_WAIT_TIMEOUT
    {107020, infinirtErrorLaunchTimeout},                // ACL_ERROR_RT_TASK_TIMEOUT
    {107024, infinirtErrorStreamCaptureIsolation},       // ACL_ERROR_RT_CAPTURE_DEPENDENCY
    {107025, infinirtErrorStreamCaptureUnjoined},        // ACL_ERROR_RT_STREAM_UNJOINED
    {107027, infinirtErrorStreamCaptureUnsupported},     // ACL_ERROR_RT_STREAM_CAPTURED
    {107028, infinirtErrorCapturedEvent},                // ACL_ERROR_RT_EVENT_CAPTURED
    {107029, infinirtErrorIllegalState},                 // ACL_ERROR_RT_STREAM_NOT_CAPTURED
    {107030, infinirtErrorStreamCaptureUnsupported},     // ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
    {107031, infinirtErrorStreamCaptureImplicit},        // ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT
    {107032, infinirtErrorStreamCaptureMerge},           // ACL_ERROR_STREAM_CAPTURE_CONFLICT
    {107036, infinirtErrorStreamCaptureUnmatched},       // ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED
    {107037, infinirtErrorIllegalState},                 // ACL_ERROR_RT_MODEL_RUNNING
    {107038, infinirtErrorStreamCaptureWrongThread},     // ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD
    {207000, infinirtErrorNotSupported},                 // ACL_ERROR_RT_FEATURE_NOT_SUPPORT
    {207001, infinirtErrorMemoryAllocation},             // ACL_ERROR_RT_MEMORY_ALLOCATION
    {207002, infinirtErrorInvalidValue},                 // ACL_ERROR_RT_MEMORY_FREE
    {207004, infinirtErrorNoDevice},                     // ACL_ERROR_RT_NO_DEVICE
    {207005, infinirtErrorMemoryAllocation},             // ACL_ERROR_RT_RESOURCE_ALLOC_FAIL
    {207006, infinirtErrorNotPermitted},                 // ACL_ERROR_RT_NO_PERMISSION
    {207007, infinirtErrorMemoryAllocation},             // ACL_ERROR_RT_NO_EVENT_RESOURCE
    {207008, infinirtErrorMemoryAllocation},             // ACL_ERROR_RT_NO_STREAM_RESOURCE
    {207018, infinirtErrorMemoryAllocation},             // ACL_ERROR_RT_DEVICE_OOM
    {207020, infinirtErrorTimeout},                      // ACL_ERROR_RT_TIMEOUT
    {507004, infinirtErrorNotReady},                     // ACL_ERROR_RT_STREAM_NOT_COMPLETE
    {507006, infinirtErrorNotReady},                     // ACL_ERROR_RT_EVENT_NOT_COMPLETE
    {507011, infinirtErrorLaunchFailure},                // ACL_ERROR_RT_MODEL_EXECUTE
    {507014, infinirtErrorLaunchTimeout},                // ACL_ERROR_RT_AICORE_TIMEOUT
    {507015, infinirtErrorLaunchFailure},                // ACL_ERROR_RT_AICORE_EXCEPTION
    {507046, infinirtErrorTimeout},                      // ACL_ERROR_RT_STREAM_SYNC_TIMEOUT
    {507047, infinirtErrorTimeout},                      // ACL_ERROR_RT_EVENT_SYNC_TIMEOUT
    {507053, infinirtErrorIllegalAddress},               // ACL_ERROR_RT_DEVICE_MEM_ERROR
    {507054, infinirtErrorECCUncorrectable},             // ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR
    {507903, infinirtErrorStreamCaptureInvalidated},     // ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED
};

}  // namespace

infinirtError_t TranslateStatus(AclError status) {
  for (const Mapping& mapping : kMappings) {
    if (mapping.acl == status) return mapping.error;
  }
  return infinirtErrorUnknown;
}

infinirtError_t Check(const char* function, AclError status) {
  if (status == acl::kSuccess) return infinirtSuccess;
  const infinirtError_t error = TranslateStatus(status);
  std::string message = std::string(function) + " returned " + std::to_string(status);
  if (HasState() && S().fn.aclGetRecentErrMsg != nullptr) {
    const char* text = S().fn.aclGetRecentErrMsg();
    if (text != nullptr && *text != '\0') message += std::string(" (") + text + ")";
  }
  if (HasState()) Log(INFINIRT_LOG_DEBUG, message);
  return error;
}

}  // namespace infinirt::ascend
