// The public C API for devices: count, selection, synchronisation, reset, properties and
// attributes, versions.

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>

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

// infinirtSetDeviceFlags's flags, by flat ordinal (kept for the process's life, as CUDA keeps a
// primary context's).
std::mutex& DeviceFlagsMutex() {
  static std::mutex mutex;
  return mutex;
}
std::map<int, unsigned int>& DeviceFlags() {
  static auto* flags = new std::map<int, unsigned int>;  // never destroyed: calls during exit
  return *flags;
}

struct PciAddress {
  int domain = 0, bus = 0, device = 0;
};

// "dddd:bb:dd.f" or "bb:dd.f" (hexadecimal, as CUDA and nvidia-smi write them), nothing after.
bool ParsePciBusId(const char* text, PciAddress* address) {
  unsigned int domain = 0, bus = 0, device = 0, function = 0;
  int used = 0;
  const size_t length = std::strlen(text);
  if (std::sscanf(text, "%x:%x:%x.%x%n", &domain, &bus, &device, &function, &used) == 4 &&
      static_cast<size_t>(used) == length) {
  } else if (std::sscanf(text, "%x:%x.%x%n", &bus, &device, &function, &used) == 3 &&
             static_cast<size_t>(used) == length) {
    domain = 0;
  } else {
    return false;
  }
  if (domain > 0xffff || bus > 0xff || device > 0x1f || function > 7) return false;
  *address = PciAddress{static_cast<int>(domain), static_cast<int>(bus), static_cast<int>(device)};
  return true;
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

infinirtError_t infinirtSetDeviceFlags(unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    constexpr unsigned int kKnown = infinirtDeviceScheduleMask | infinirtDeviceMapHost |
                                    infinirtDeviceLmemResizeToMax | infinirtDeviceSyncMemops;
    const unsigned int schedule = flags & infinirtDeviceScheduleMask;
    if ((flags & ~kKnown) ||
        (schedule != infinirtDeviceScheduleAuto && schedule != infinirtDeviceScheduleSpin &&
         schedule != infinirtDeviceScheduleYield &&
         schedule != infinirtDeviceScheduleBlockingSync)) {
      return Fail(infinirtErrorInvalidValue, "{}: {:#x} is not a combination of device flags",
                  function_name, flags);
    }
    Target target;
    if (auto error = CurrentTarget(Runtime::Get(), &target, function_name)) return error;
    std::lock_guard<std::mutex> lock(DeviceFlagsMutex());
    DeviceFlags()[target.device] = flags;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGetDeviceFlags(unsigned int* flags) {
  return Guard(__func__, [&](const char* function_name) {
    if (flags == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: flags is NULL", function_name);
    Target target;
    if (auto error = CurrentTarget(Runtime::Get(), &target, function_name)) return error;
    std::lock_guard<std::mutex> lock(DeviceFlagsMutex());
    auto found = DeviceFlags().find(target.device);
    *flags = (found == DeviceFlags().end() ? 0u : found->second) | infinirtDeviceMapHost;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  return Guard(__func__, [&](const char* function_name) {
    if (pciBusId == nullptr || len <= 0) {
      return Fail(infinirtErrorInvalidValue, "{}: pciBusId is NULL or len ({}) is not positive",
                  function_name, len);
    }
    infinirtDeviceProp prop;
    if (auto error = infinirtGetDeviceProperties(&prop, device)) return error;
    std::snprintf(pciBusId, static_cast<size_t>(len), "%04x:%02x:%02x.0",
                  static_cast<unsigned>(prop.pciDomainID), static_cast<unsigned>(prop.pciBusID),
                  static_cast<unsigned>(prop.pciDeviceID));
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceGetByPCIBusId(int* device, const char* pciBusId) {
  return Guard(__func__, [&](const char* function_name) {
    if (device == nullptr || pciBusId == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is NULL", function_name,
                  device == nullptr ? "device" : "pciBusId");
    }
    PciAddress wanted;
    if (!ParsePciBusId(pciBusId, &wanted)) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: \"{}\" is not a PCI address ([domain:]bus:device.function, in hex)",
                  function_name, pciBusId);
    }
    int count = 0;
    if (auto error = infinirtGetDeviceCount(&count)) return error;
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      infinirtDeviceProp prop;
      if (infinirtGetDeviceProperties(&prop, ordinal) != infinirtSuccess) {
        infinirtGetLastError();
        continue;
      }
      if (prop.pciDomainID == wanted.domain && prop.pciBusID == wanted.bus &&
          prop.pciDeviceID == wanted.device) {
        *device = ordinal;
        return infinirtSuccess;
      }
    }
    return Fail(infinirtErrorInvalidDevice, "{}: no device at {}", function_name, pciBusId);
  });
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
