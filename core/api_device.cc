// The public C API for devices: count, selection, synchronisation, reset, properties and
// attributes, versions.

#include "api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

bool IsDeviceAttribute(int attribute) {
  switch (attribute) {
#define INFINIRT_ATTR_CASE_(name, value) case value:
    INFINIRT_DEVICE_ATTR_LIST(INFINIRT_ATTR_CASE_)
#undef INFINIRT_ATTR_CASE_
    return true;
  }
  return false;
}

}  // namespace

extern "C" {

// ------------------------------------------------------------------------------------------
// Device management
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtGetDeviceCount(int* count) {
  return Guard(__func__, [&](const char* function_name) {
    if (count == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: count is NULL", function_name);
    const Runtime& runtime = Runtime::Get();
    *count = static_cast<int>(runtime.devices().size());
    if (runtime.devices().empty()) {
      return Fail(infinirtErrorNoDevice, "{}: no device is available: {}", function_name,
                  runtime.no_device_reason());
    }
    return infinirtSuccess;
  });
}

infinirtError_t infinirtSetDevice(int device) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = DeviceTarget(runtime, device, &target, function_name)) return error;
    SetCurrentOrdinal(runtime, device);
    return infinirtSuccess;
  });
}

namespace {

// infinirtGetDevice with every check, for when its fast path does not apply.
[[gnu::noinline]] infinirtError_t GetDeviceChecked(int* device) {
  return Guard("infinirtGetDevice", [&](const char* function_name) {
    if (device == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: device is NULL", function_name);
    Runtime& runtime = Runtime::Get();
    if (runtime.devices().empty()) {
      return Fail(infinirtErrorNoDevice, "{}: no device is available: {}", function_name,
                  runtime.no_device_reason());
    }
    *device = CurrentOrdinal(runtime);
    return infinirtSuccess;
  });
}

}  // namespace

// The fast path calls nothing, so it needs no stack frame: with Guard's error paths inline,
// saving registers for them cost more than the call's work.
infinirtError_t infinirtGetDevice(int* device) {
  const Runtime* runtime = Runtime::IfReady();
  const ThreadState& state = tls_thread_state;
  if (__builtin_expect(runtime != nullptr && device != nullptr && !runtime->devices().empty() &&
                           state.current_ordinal_generation == runtime->generation(),
                       1)) {
    *device = state.current_ordinal;
    return infinirtSuccess;
  }
  return GetDeviceChecked(device);
}

infinirtError_t infinirtDeviceSynchronize(void) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    if (auto error = runtime.captures().CheckDeviceSynchronize(target.device)) return error;
    return BackendAnswer(target.backend->table.DeviceSynchronize(target.local), *target.backend,
                         function_name);
  });
}

infinirtError_t infinirtDeviceReset(void) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    if (auto error = runtime.captures().CheckUnsafeCall()) return error;
    if (auto error = runtime.ReleaseDeviceObjects(target.device)) {
      return BackendAnswer(error, *target.backend, function_name,
                           "while waiting for the device's work, which a reset does first");
    }
    return BackendAnswer(target.backend->table.DeviceReset(target.local), *target.backend,
                         function_name);
  });
}

infinirtError_t infinirtGetDeviceProperties(struct infinirtDeviceProp* prop, int device) {
  return Guard(__func__, [&](const char* function_name) {
    if (prop == nullptr) return Fail(infinirtErrorInvalidValue, "{}: prop is NULL", function_name);
    Target target;
    if (auto error = DeviceTarget(Runtime::Get(), device, &target, function_name)) return error;
    std::memset(prop, 0, sizeof(*prop));
    if (auto error = target.backend->table.GetDeviceProperties(target.local, prop)) {
      return BackendAnswer(error, *target.backend, function_name);
    }
    prop->deviceType = target.backend->device_type;
    prop->vendorDeviceIndex = target.local;
    std::snprintf(prop->backendName, sizeof(prop->backendName), "%s", target.backend->name.c_str());
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceGetAttribute(int* value, enum infinirtDeviceAttr attr, int device) {
  return Guard(__func__, [&](const char* function_name) {
    if (value == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: value is NULL", function_name);
    Target target;
    if (auto error = DeviceTarget(Runtime::Get(), device, &target, function_name)) return error;
    if (!IsDeviceAttribute(static_cast<int>(attr))) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a device attribute", function_name,
                  static_cast<int>(attr));
    }
    return BackendAnswer(target.backend->table.DeviceGetAttribute(target.local, value, attr),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtRuntimeGetVersion(int* runtimeVersion) {
  return Guard(__func__, [&](const char* function_name) {
    if (runtimeVersion == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: runtimeVersion is NULL", function_name);
    }
    *runtimeVersion = INFINIRT_CUDA_API_VERSION;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDriverGetVersion(int* driverVersion) {
  return Guard(__func__, [&](const char* function_name) {
    if (driverVersion == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: driverVersion is NULL", function_name);
    }
    Runtime& runtime = Runtime::Get();
    // As CUDA without a driver: 0, and success.
    *driverVersion = 0;
    if (runtime.devices().empty()) return infinirtSuccess;
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function_name)) return error;
    return BackendAnswer(target.backend->table.DriverGetVersion(target.local, driverVersion),
                         *target.backend, function_name);
  });
}

}  // extern "C"
