// The Cambricon plugin's error translation: CNRT's codes as InfiniRT errors.
#include <string>

#include "cambricon_internal.h"

namespace infinirt::cambricon {
namespace {

// ---------------------------------------------------------------------------------------------
// Errors

// CNRT's codes (cnrt.h) and InfiniRT's errors for them.
struct ErrorPair {
  int cnrt;
  infinirtError_t infinirt;
};
constexpr ErrorPair kErrors[] = {
    {cnrt::kSuccess, infinirtSuccess},
    {cnrt::kErrorNotReady, infinirtErrorNotReady},
    {cnrt::kErrorBusy, infinirtErrorNotReady},  // what queue and notifier queries answer
    {cnrt::kErrorInit, infinirtErrorInitializationError},
    {cnrt::kErrorNoDevice, infinirtErrorNoDevice},
    {cnrt::kErrorDeviceInvalid, infinirtErrorInvalidDevice},
    {cnrt::kErrorArgsInvalid, infinirtErrorInvalidValue},
    {cnrt::kErrorNoAttribute, infinirtErrorInvalidValue},
    {cnrt::kErrorSys, infinirtErrorOperatingSystem},
    {cnrt::kErrorSysNoMem, infinirtErrorMemoryAllocation},
    {cnrt::kErrorNoMem, infinirtErrorMemoryAllocation},
    {cnrt::kErrorInvalidResourceHandle, infinirtErrorInvalidResourceHandle},
    {cnrt::kErrorDevice, infinirtErrorInvalidResourceHandle},  // a handle of another device
    {cnrt::kErrorIllegalState, infinirtErrorIllegalState},
    {cnrt::kErrorNotSupport, infinirtErrorNotSupported},
    {cnrt::kErrorOpsNotPermitted, infinirtErrorNotPermitted},
    {cnrt::kErrorAssert, infinirtErrorAssert},
    {cnrt::kErrorQueueCaptureUnsupported, infinirtErrorStreamCaptureUnsupported},
    {cnrt::kErrorQueueCaptureInvalidated, infinirtErrorStreamCaptureInvalidated},
    {cnrt::kErrorQueueCaptureWrongThread, infinirtErrorStreamCaptureWrongThread},
    {cnrt::kErrorQueueCaptureMerged, infinirtErrorStreamCaptureMerge},
    {cnrt::kErrorQueueCaptureUnjoined, infinirtErrorStreamCaptureUnjoined},
    {cnrt::kErrorQueueCaptureIsolation, infinirtErrorStreamCaptureIsolation},
    {cnrt::kErrorQueueCaptureUnmatched, infinirtErrorStreamCaptureUnmatched},
    {cnrt::kErrorSetOnActiveProcess, infinirtErrorSetOnActiveProcess},
    {cnrt::kErrorMemcpyDirectionInvalid, infinirtErrorInvalidMemcpyDirection},
    {cnrt::kErrorNoCnrtContext, infinirtErrorDeviceUninitialized},
    {cnrt::kErrorCndrvFuncNotFound, infinirtErrorInsufficientDriver},  // an older driver
    {cnrt::kErrorInvalidSymbol, infinirtErrorInvalidSymbol},
    // A device-side trap ends the kernel as CUDA's __trap() does: an unspecified launch failure.
    {cnrt::kErrorKernelTrap, infinirtErrorLaunchFailure},
    {cnrt::kErrorKernelUserTrap, infinirtErrorLaunchFailure},
    {cnrt::kErrorNotFound, infinirtErrorSymbolNotFound},  // "specific resources are not found"
    {cnrt::kErrorInvalidKernel, infinirtErrorInvalidDeviceFunction},
    // "compiled with an unsupported toolchain", CUDA's words for cudaErrorUnsupportedPtxVersion
    {cnrt::kErrorUnsupportedKernelVersion, infinirtErrorUnsupportedPtxVersion},
    {cnrt::kErrorTaskTopoEntityUpdateFailure, infinirtErrorGraphExecUpdateFailure},
};

}  // namespace

// The InfiniRT error for a CNRT status; Unknown for the others (cnrtErrorQueue,
// cnrtErrorCndrvFuncCall, cnrtErrorUnknown, ...).
infinirtError_t TranslateStatus(int status) {
  for (const ErrorPair& pair : kErrors) {
    if (pair.cnrt == status) return pair.infinirt;
  }
  return infinirtErrorUnknown;
}

// "632013 (cnrtErrorMemcpyDirectionInvalid)", for messages.
std::string ErrorText(int status) {
  const char* name = TheState().fn.GetErrorName ? TheState().fn.GetErrorName(status) : nullptr;
  return std::to_string(status) + (name ? std::string(" (") + name + ")" : std::string());
}

// Translates and, for anything but success and "not ready", logs which CNRT call failed.
infinirtError_t Check(const char* function, int status) {
  const infinirtError_t error = TranslateStatus(status);
  if (error != infinirtSuccess && error != infinirtErrorNotReady) {
    Log(INFINIRT_LOG_DEBUG, std::string(function) + " returned " + ErrorText(status));
  }
  return error;
}

// Selects the device for the calling thread (CNRT keeps it per host thread).
infinirtError_t Bind(int device) {
  const int status =
      TheState().binding.Bind(device, [](int d) { return TheState().fn.SetDevice(d); });
  return Check("cnrtSetDevice", status);
}

}  // namespace infinirt::cambricon
