// The public C API that CUDA does not have: explicit initialisation and finalisation, device
// types and ordinals across backends, and the backend listing.

#include <string>

#include "api_support.h"
#include "loader.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

extern "C" {

// ------------------------------------------------------------------------------------------
// Extensions
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtInit(void) {
  return Guard(__func__, [&](const char* function_name) {
    const Runtime& runtime = Runtime::Get();
    if (runtime.devices().empty()) {
      return Fail(infinirtErrorNoDevice, "{}: no device is available: {}", function_name,
                  runtime.no_device_reason());
    }
    return infinirtSuccess;
  });
}

infinirtError_t infinirtFinalize(void) {
  return Guard(__func__, [&](const char*) {
    Runtime::Finalize();
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGetAllDeviceCount(int* count_array) {
  return Guard(__func__, [&](const char* function_name) {
    if (count_array == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: count_array is NULL", function_name);
    }
    for (int type = 0; type < INFINI_DEVICE_TYPE_COUNT; ++type) count_array[type] = 0;
    for (const auto& device : Runtime::Get().devices()) ++count_array[device.type];
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceGetType(infiniDevice_t* type, int device) {
  return Guard(__func__, [&](const char* function_name) {
    if (type == nullptr) return Fail(infinirtErrorInvalidValue, "{}: type is NULL", function_name);
    Target target;
    if (auto error = DeviceTarget(Runtime::Get(), device, &target, function_name)) return error;
    *type = target.backend->device_type;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceGetOrdinal(int* device, infiniDevice_t type, int index) {
  return Guard(__func__, [&](const char* function_name) {
    if (device == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: device is NULL", function_name);
    if (static_cast<int>(type) < 0 || type >= INFINI_DEVICE_TYPE_COUNT) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a device type", function_name,
                  static_cast<int>(type));
    }
    const auto& devices = Runtime::Get().devices();
    int seen = 0;
    for (size_t ordinal = 0; ordinal < devices.size(); ++ordinal) {
      if (devices[ordinal].type != type) continue;
      if (seen++ == index) {
        *device = static_cast<int>(ordinal);
        return infinirtSuccess;
      }
    }
    return Fail(infinirtErrorInvalidDevice, "{}: there is no device {} of type {}", function_name,
                index, static_cast<int>(type));
  });
}

infinirtError_t infinirtGetBackendCount(int* count) {
  return Guard(__func__, [&](const char* function_name) {
    if (count == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: count is NULL", function_name);
    *count = static_cast<int>(Runtime::Get().listing().size());
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGetBackendProperties(infinirtBackendProp* prop, int index) {
  return Guard(__func__, [&](const char* function_name) {
    if (prop == nullptr) return Fail(infinirtErrorInvalidValue, "{}: prop is NULL", function_name);
    const auto& listing = Runtime::Get().listing();
    if (index < 0 || index >= static_cast<int>(listing.size())) {
      return Fail(infinirtErrorInvalidValue, "{}: backend index {} is not in [0, {})",
                  function_name, index, listing.size());
    }
    *prop = listing[index];
    return infinirtSuccess;
  });
}

infinirtError_t infinirtOpenExtensionLibrary(const char* fileName, void** handle,
                                             infinirtBackendProp* prop) {
  return Guard(__func__, [&](const char* function_name) {
    if (fileName == nullptr || handle == nullptr || prop == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: fileName, handle and prop must not be NULL",
                  function_name);
    }
    const std::string name = fileName;
    const bool well_formed = name.size() > 6 && name.compare(0, 3, "lib") == 0 &&
                             name.compare(name.size() - 3, 3, ".so") == 0 &&
                             name.find('/') == std::string::npos;
    if (!well_formed) {
      return Fail(infinirtErrorInvalidValue, "{}: '{}' is not a file name lib<name>.so",
                  function_name, name);
    }
    *handle = nullptr;
    const infinirtError_t status =
        OpenExtensionLibrary(Runtime::Get().config(), LibraryDirectory(), name, handle, prop);
    if (status != infinirtSuccess) {
      return Fail(status, "{}: {}: {}", function_name, name, prop->reason);
    }
    return infinirtSuccess;
  });
}

}  // extern "C"
