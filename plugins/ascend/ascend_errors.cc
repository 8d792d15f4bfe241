// aclError -> infinirtError_t. ACL has no code-to-name function (only aclGetRecentErrMsg, the
// calling thread's latest message), so the plugin keeps a table of the codes CANN's headers
// define (acl_base_rt.h, error_codes/rt_error_codes.h): their names, for messages, and their
// InfiniRT counterparts. Codes not in the table are infinirtErrorUnknown.
#include <string>

#include "ascend_state.h"

namespace infinirt::ascend {
namespace {

// X(code, name, InfiniRT error): the codes of CANN's headers that the plugin knows by name.
#define ASCEND_ERROR_CODES(X)                                                                \
  X(0, ACL_SUCCESS, infinirtSuccess)                                                         \
  X(100000, ACL_ERROR_INVALID_PARAM, infinirtErrorInvalidValue)                              \
  X(100001, ACL_ERROR_UNINITIALIZE, infinirtErrorInitializationError)                        \
  X(100002, ACL_ERROR_REPEAT_INITIALIZE, infinirtErrorInitializationError)                   \
  X(100037, ACL_ERROR_REPEAT_FINALIZE, infinirtErrorInitializationError)                     \
  X(200000, ACL_ERROR_BAD_ALLOC, infinirtErrorMemoryAllocation)                              \
  X(200001, ACL_ERROR_API_NOT_SUPPORT, infinirtErrorNotSupported)                            \
  X(200002, ACL_ERROR_INVALID_DEVICE, infinirtErrorInvalidDevice)                            \
  X(200003, ACL_ERROR_MEMORY_ADDRESS_UNALIGNED, infinirtErrorInvalidValue)                   \
  X(200004, ACL_ERROR_RESOURCE_NOT_MATCH, infinirtErrorInvalidResourceHandle)                \
  X(200005, ACL_ERROR_INVALID_RESOURCE_HANDLE, infinirtErrorInvalidResourceHandle)           \
  X(200006, ACL_ERROR_FEATURE_UNSUPPORTED, infinirtErrorNotSupported)                        \
  X(300000, ACL_ERROR_STORAGE_OVER_LIMIT, infinirtErrorMemoryAllocation)                     \
  X(107000, ACL_ERROR_RT_PARAM_INVALID, infinirtErrorInvalidValue)                           \
  X(107001, ACL_ERROR_RT_INVALID_DEVICEID, infinirtErrorInvalidDevice)                       \
  X(107002, ACL_ERROR_RT_CONTEXT_NULL, infinirtErrorDeviceUninitialized)                     \
  X(107003, ACL_ERROR_RT_STREAM_CONTEXT, infinirtErrorInvalidResourceHandle)                 \
  X(107006, ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID, infinirtErrorInvalidResourceHandle)        \
  X(107008, ACL_ERROR_RT_ADDR_UNALIGNED, infinirtErrorInvalidValue)                          \
  X(107016, ACL_ERROR_RT_INVALID_MEMORY_TYPE, infinirtErrorInvalidValue)                     \
  X(107017, ACL_ERROR_RT_INVALID_HANDLE, infinirtErrorInvalidResourceHandle)                 \
  X(107018, ACL_ERROR_RT_INVALID_MALLOC_TYPE, infinirtErrorInvalidValue)                     \
  X(107019, ACL_ERROR_RT_WAIT_TIMEOUT, infinirtErrorTimeout)                                 \
  X(107020, ACL_ERROR_RT_TASK_TIMEOUT, infinirtErrorLaunchTimeout)                           \
  X(107024, ACL_ERROR_RT_CAPTURE_DEPENDENCY, infinirtErrorStreamCaptureIsolation)            \
  X(107025, ACL_ERROR_RT_STREAM_UNJOINED, infinirtErrorStreamCaptureUnjoined)                \
  X(107027, ACL_ERROR_RT_STREAM_CAPTURED, infinirtErrorStreamCaptureUnsupported)             \
  X(107028, ACL_ERROR_RT_EVENT_CAPTURED, infinirtErrorCapturedEvent)                         \
  X(107029, ACL_ERROR_RT_STREAM_NOT_CAPTURED, infinirtErrorIllegalState)                     \
  X(107030, ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT, infinirtErrorStreamCaptureUnsupported)    \
  X(107031, ACL_ERROR_RT_STREAM_CAPTURE_IMPLICIT, infinirtErrorStreamCaptureImplicit)        \
  X(107032, ACL_ERROR_STREAM_CAPTURE_CONFLICT, infinirtErrorStreamCaptureMerge)              \
  X(107036, ACL_ERROR_RT_STREAM_CAPTURE_UNMATCHED, infinirtErrorStreamCaptureUnmatched)      \
  X(107037, ACL_ERROR_RT_MODEL_RUNNING, infinirtErrorIllegalState)                           \
  X(107038, ACL_ERROR_RT_STREAM_CAPTURE_WRONG_THREAD, infinirtErrorStreamCaptureWrongThread) \
  X(207000, ACL_ERROR_RT_FEATURE_NOT_SUPPORT, infinirtErrorNotSupported)                     \
  X(207001, ACL_ERROR_RT_MEMORY_ALLOCATION, infinirtErrorMemoryAllocation)                   \
  X(207002, ACL_ERROR_RT_MEMORY_FREE, infinirtErrorInvalidValue)                             \
  X(207004, ACL_ERROR_RT_NO_DEVICE, infinirtErrorNoDevice)                                   \
  X(207005, ACL_ERROR_RT_RESOURCE_ALLOC_FAIL, infinirtErrorMemoryAllocation)                 \
  X(207006, ACL_ERROR_RT_NO_PERMISSION, infinirtErrorNotPermitted)                           \
  X(207007, ACL_ERROR_RT_NO_EVENT_RESOURCE, infinirtErrorMemoryAllocation)                   \
  X(207008, ACL_ERROR_RT_NO_STREAM_RESOURCE, infinirtErrorMemoryAllocation)                  \
  X(207018, ACL_ERROR_RT_DEVICE_OOM, infinirtErrorMemoryAllocation)                          \
  X(207020, ACL_ERROR_RT_TIMEOUT, infinirtErrorTimeout)                                      \
  X(507004, ACL_ERROR_RT_STREAM_NOT_COMPLETE, infinirtErrorNotReady)                         \
  X(507006, ACL_ERROR_RT_EVENT_NOT_COMPLETE, infinirtErrorNotReady)                          \
  X(507011, ACL_ERROR_RT_MODEL_EXECUTE, infinirtErrorLaunchFailure)                          \
  X(507014, ACL_ERROR_RT_AICORE_TIMEOUT, infinirtErrorLaunchTimeout)                         \
  X(507015, ACL_ERROR_RT_AICORE_EXCEPTION, infinirtErrorLaunchFailure)                       \
  X(507046, ACL_ERROR_RT_STREAM_SYNC_TIMEOUT, infinirtErrorTimeout)                          \
  X(507047, ACL_ERROR_RT_EVENT_SYNC_TIMEOUT, infinirtErrorTimeout)                           \
  X(507053, ACL_ERROR_RT_DEVICE_MEM_ERROR, infinirtErrorIllegalAddress)                      \
  X(507054, ACL_ERROR_RT_HBM_MULTI_BIT_ECC_ERROR, infinirtErrorECCUncorrectable)             \
  X(507903, ACL_ERROR_RT_STREAM_CAPTURE_INVALIDATED, infinirtErrorStreamCaptureInvalidated)  \
  X(500000, ACL_ERROR_INTERNAL_ERROR, infinirtErrorUnknown)                                  \
  X(500001, ACL_ERROR_FAILURE, infinirtErrorUnknown)                                         \
  X(500002, ACL_ERROR_GE_FAILURE, infinirtErrorUnknown)                                      \
  X(500003, ACL_ERROR_RT_FAILURE, infinirtErrorUnknown)                                      \
  X(500004, ACL_ERROR_DRV_FAILURE, infinirtErrorUnknown)                                     \
  X(507000, ACL_ERROR_RT_INTERNAL_ERROR, infinirtErrorUnknown)                               \
  X(507899, ACL_ERROR_RT_DRV_INTERNAL_ERROR, infinirtErrorUnknown)

struct Mapping {
  AclError acl;
  const char* name;
  infinirtError_t error;
};

constexpr Mapping kMappings[] = {
#define ASCEND_MAPPING_(code, name, error) {code, #name, error},
    ASCEND_ERROR_CODES(ASCEND_MAPPING_)
#undef ASCEND_MAPPING_
};

const Mapping* Find(AclError status) {
  for (const Mapping& mapping : kMappings) {
    if (mapping.acl == status) return &mapping;
  }
  return nullptr;
}

}  // namespace

infinirtError_t TranslateStatus(AclError status) {
  const Mapping* mapping = Find(status);
  return mapping != nullptr ? mapping->error : infinirtErrorUnknown;
}

std::string ErrorText(AclError status) {
  std::string text = std::to_string(status);
  if (const Mapping* mapping = Find(status)) text += std::string(" (") + mapping->name + ")";
  if (HasState() && TheState().fn.aclGetRecentErrMsg != nullptr) {
    const char* message = TheState().fn.aclGetRecentErrMsg();
    if (message != nullptr && *message != '\0') text += std::string(": ") + message;
  }
  return text;
}

infinirtError_t Check(const char* function, AclError status) {
  if (status == acl::kSuccess) return infinirtSuccess;
  if (HasState()) Log(INFINIRT_LOG_DEBUG, std::string(function) + " returned " + ErrorText(status));
  return TranslateStatus(status);
}

}  // namespace infinirt::ascend
