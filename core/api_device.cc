// The public C API for device management: count, selection, flags, limits and cache
// configuration, peer access, synchronisation, reset. What a device is (its properties,
// attributes, PCI address) and the versions are in api_device_properties.cc.

#include <cstring>
#include <map>
#include <mutex>

#include "api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

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

bool ValidDeviceFlags(unsigned int flags) {
  constexpr unsigned int kKnown = infinirtDeviceScheduleMask | infinirtDeviceMapHost |
                                  infinirtDeviceLmemResizeToMax | infinirtDeviceSyncMemops;
  const unsigned int schedule = flags & infinirtDeviceScheduleMask;
  return (flags & ~kKnown) == 0 &&
         (schedule == infinirtDeviceScheduleAuto || schedule == infinirtDeviceScheduleSpin ||
          schedule == infinirtDeviceScheduleYield ||
          schedule == infinirtDeviceScheduleBlockingSync);
}

void StoreDeviceFlags(int device, unsigned int flags) {
  std::lock_guard<std::mutex> lock(DeviceFlagsMutex());
  DeviceFlags()[device] = flags;
}

bool IsLimit(enum infinirtLimit limit) {
  return limit >= infinirtLimitStackSize && limit <= infinirtLimitPersistingL2CacheSize;
}

bool IsCacheConfig(enum infinirtFuncCache config) {
  return config >= infinirtFuncCachePreferNone && config <= infinirtFuncCachePreferEqual;
}

// How many of the requirements of infinirtChooseDevice's prop (its non-zero fields) a device
// meets.
int RequirementsMet(const infinirtDeviceProp& wanted, const infinirtDeviceProp& device) {
  int met = 0;
  if (wanted.name[0] != '\0' && std::strstr(device.name, wanted.name) != nullptr) ++met;
  if ((wanted.major != 0 || wanted.minor != 0) &&
      (device.major > wanted.major ||
       (device.major == wanted.major && device.minor >= wanted.minor))) {
    ++met;
  }
  if (wanted.totalGlobalMem != 0 && device.totalGlobalMem >= wanted.totalGlobalMem) ++met;
  if (wanted.multiProcessorCount != 0 && device.multiProcessorCount >= wanted.multiProcessorCount) {
    ++met;
  }
  for (int infinirtDeviceProp::*capability :
       {&infinirtDeviceProp::integrated, &infinirtDeviceProp::canMapHostMemory,
        &infinirtDeviceProp::concurrentKernels, &infinirtDeviceProp::unifiedAddressing,
        &infinirtDeviceProp::managedMemory, &infinirtDeviceProp::concurrentManagedAccess,
        &infinirtDeviceProp::pageableMemoryAccess, &infinirtDeviceProp::streamPrioritiesSupported,
        &infinirtDeviceProp::hostRegisterSupported, &infinirtDeviceProp::memoryPoolsSupported}) {
    if (wanted.*capability != 0 && device.*capability != 0) ++met;
  }
  return met;
}

// Whether `device` can reach `peer`'s memory directly: devices of one backend only, as the
// backend answers (0 where it has no peer functions). A device is not its own peer.
infinirtError_t PeerAccessible(const Target& device, const Target& peer, int* can,
                               const char* function) {
  *can = 0;
  if (device.backend_index != peer.backend_index || device.device == peer.device) {
    return infinirtSuccess;
  }
  const infinirtError_t answer =
      device.backend->table.DeviceCanAccessPeer(device.local, can, peer.local);
  if (answer == infinirtErrorNotSupported) {
    *can = 0;
    return infinirtSuccess;
  }
  return BackendAnswer(answer, *device.backend, function);
}

// The current device and a peer of it, for enabling and disabling access.
infinirtError_t PeerTargets(Runtime& runtime, int peerDevice, Target* current, Target* peer,
                            const char* function) {
  if (auto error = CurrentTarget(runtime, current, function)) return error;
  if (auto error = DeviceTarget(runtime, peerDevice, peer, function)) return error;
  if (current->device == peer->device) {
    return Fail(infinirtErrorInvalidDevice, "{}: device {} is not a peer of itself", function,
                peerDevice);
  }
  return infinirtSuccess;
}

bool IsP2PAttribute(enum infinirtDeviceP2PAttr attr) {
  return attr >= infinirtDevP2PAttrPerformanceRank &&
         attr <= infinirtDevP2PAttrOnlyPartialNativeAtomicSupported;
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
    if (!ValidDeviceFlags(flags)) {
      return Fail(infinirtErrorInvalidValue, "{}: {:#x} is not a combination of device flags",
                  function_name, flags);
    }
    Target target;
    if (auto error = CurrentTarget(Runtime::Get(), &target, function_name)) return error;
    StoreDeviceFlags(target.device, flags);
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

infinirtError_t infinirtInitDevice(int device, unsigned int deviceFlags, unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    if (flags & ~static_cast<unsigned int>(infinirtInitDeviceFlagsAreValid)) {
      return Fail(infinirtErrorInvalidValue, "{}: flags {:#x} is not 0 or {:#x}", function_name,
                  flags, infinirtInitDeviceFlagsAreValid);
    }
    const bool set_flags = (flags & infinirtInitDeviceFlagsAreValid) != 0;
    if (set_flags && !ValidDeviceFlags(deviceFlags)) {
      return Fail(infinirtErrorInvalidValue, "{}: {:#x} is not a combination of device flags",
                  function_name, deviceFlags);
    }
    // Loading the backends initialises every device; there is nothing more to do for one.
    Target target;
    if (auto error = DeviceTarget(Runtime::Get(), device, &target, function_name)) return error;
    if (set_flags) StoreDeviceFlags(device, deviceFlags);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtSetValidDevices(int* device_arr, int len) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    const int count = static_cast<int>(runtime.devices().size());
    if (len < 0 || len > count || (len > 0 && device_arr == nullptr)) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: len {} with device_arr {}: needs 0 <= len <= {} devices and an array",
                  function_name, len, device_arr == nullptr ? "NULL" : "given", count);
    }
    for (int i = 0; i < len; ++i) {
      Target target;
      if (auto error = DeviceTarget(runtime, device_arr[i], &target, function_name)) return error;
    }
    // Every device this process has works, so a thread starts on the first of the list.
    runtime.set_first_device(len > 0 ? device_arr[0] : 0);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtChooseDevice(int* device, const struct infinirtDeviceProp* prop) {
  return Guard(__func__, [&](const char* function_name) {
    if (device == nullptr || prop == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is NULL", function_name,
                  device == nullptr ? "device" : "prop");
    }
    int count = 0;
    if (auto error = infinirtGetDeviceCount(&count)) return error;
    int best = -1, best_met = -1;
    for (int ordinal = 0; ordinal < count; ++ordinal) {
      infinirtDeviceProp candidate;
      if (auto error = infinirtGetDeviceProperties(&candidate, ordinal)) return error;
      if (prop->backendName[0] != '\0' &&
          std::strncmp(prop->backendName, candidate.backendName, sizeof(prop->backendName)) != 0) {
        continue;
      }
      const int met = RequirementsMet(*prop, candidate);
      if (met > best_met) best = ordinal, best_met = met;
    }
    if (best < 0) {
      return Fail(infinirtErrorInvalidDevice, "{}: no device of backend \"{:.32}\"", function_name,
                  prop->backendName);
    }
    *device = best;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtDeviceSetLimit(enum infinirtLimit limit, size_t value) {
  return Guard(__func__, [&](const char* function_name) {
    if (!IsLimit(limit)) {
      return Fail(infinirtErrorUnsupportedLimit, "{}: {} is not a limit", function_name,
                  static_cast<int>(limit));
    }
    Target target;
    if (auto error = CurrentTarget(Runtime::Get(), &target, function_name)) return error;
    return BackendAnswer(target.backend->table.DeviceSetLimit(target.local, limit, value),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtDeviceGetLimit(size_t* pValue, enum infinirtLimit limit) {
  return Guard(__func__, [&](const char* function_name) {
    if (pValue == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: pValue is NULL", function_name);
    if (!IsLimit(limit)) {
      return Fail(infinirtErrorUnsupportedLimit, "{}: {} is not a limit", function_name,
                  static_cast<int>(limit));
    }
    Target target;
    if (auto error = CurrentTarget(Runtime::Get(), &target, function_name)) return error;
    return BackendAnswer(target.backend->table.DeviceGetLimit(target.local, limit, pValue),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtDeviceSetCacheConfig(enum infinirtFuncCache cacheConfig) {
  return Guard(__func__, [&](const char* function_name) {
    if (!IsCacheConfig(cacheConfig)) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a cache configuration", function_name,
                  static_cast<int>(cacheConfig));
    }
    Target target;
    if (auto error = CurrentTarget(Runtime::Get(), &target, function_name)) return error;
    return BackendAnswer(target.backend->table.DeviceSetCacheConfig(target.local, cacheConfig),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtDeviceGetCacheConfig(enum infinirtFuncCache* pCacheConfig) {
  return Guard(__func__, [&](const char* function_name) {
    if (pCacheConfig == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: pCacheConfig is NULL", function_name);
    Target target;
    if (auto error = CurrentTarget(Runtime::Get(), &target, function_name)) return error;
    return BackendAnswer(target.backend->table.DeviceGetCacheConfig(target.local, pCacheConfig),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtDeviceCanAccessPeer(int* canAccessPeer, int device, int peerDevice) {
  return Guard(__func__, [&](const char* function_name) {
    if (canAccessPeer == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: canAccessPeer is NULL", function_name);
    }
    Runtime& runtime = Runtime::Get();
    Target target, peer;
    if (auto error = DeviceTarget(runtime, device, &target, function_name)) return error;
    if (auto error = DeviceTarget(runtime, peerDevice, &peer, function_name)) return error;
    return PeerAccessible(target, peer, canAccessPeer, function_name);
  });
}

infinirtError_t infinirtDeviceEnablePeerAccess(int peerDevice, unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    if (flags != 0) {
      return Fail(infinirtErrorInvalidValue, "{}: flags must be 0, not {:#x}", function_name,
                  flags);
    }
    Runtime& runtime = Runtime::Get();
    Target current, peer;
    if (auto error = PeerTargets(runtime, peerDevice, &current, &peer, function_name)) return error;
    int can = 0;
    if (auto error = PeerAccessible(current, peer, &can, function_name)) return error;
    if (!can) {
      return Fail(infinirtErrorPeerAccessUnsupported,
                  "{}: device {} cannot reach the memory of device {}", function_name,
                  current.device, peerDevice);
    }
    if (!runtime.EnablePeerAccess(current.device, peer.device)) {
      return Fail(infinirtErrorPeerAccessAlreadyEnabled, "{}: device {} already reaches device {}",
                  function_name, current.device, peerDevice);
    }
    const infinirtError_t answer =
        current.backend->table.DeviceEnablePeerAccess(current.local, peer.local);
    if (answer != infinirtSuccess) runtime.DisablePeerAccess(current.device, peer.device);
    return BackendAnswer(answer, *current.backend, function_name);
  });
}

infinirtError_t infinirtDeviceDisablePeerAccess(int peerDevice) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    Target current, peer;
    if (auto error = PeerTargets(runtime, peerDevice, &current, &peer, function_name)) return error;
    if (!runtime.DisablePeerAccess(current.device, peer.device)) {
      return Fail(infinirtErrorPeerAccessNotEnabled,
                  "{}: device {} has no access to device {} to disable", function_name,
                  current.device, peerDevice);
    }
    const infinirtError_t answer =
        current.backend->table.DeviceDisablePeerAccess(current.local, peer.local);
    if (answer != infinirtSuccess) runtime.EnablePeerAccess(current.device, peer.device);
    return BackendAnswer(answer, *current.backend, function_name);
  });
}

infinirtError_t infinirtDeviceGetP2PAttribute(int* value, enum infinirtDeviceP2PAttr attr,
                                              int srcDevice, int dstDevice) {
  return Guard(__func__, [&](const char* function_name) {
    if (value == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: value is NULL", function_name);
    if (!IsP2PAttribute(attr)) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is not a peer attribute", function_name,
                  static_cast<int>(attr));
    }
    Runtime& runtime = Runtime::Get();
    Target source, destination;
    if (auto error = DeviceTarget(runtime, srcDevice, &source, function_name)) return error;
    if (auto error = DeviceTarget(runtime, dstDevice, &destination, function_name)) return error;
    if (srcDevice == dstDevice) {
      return Fail(infinirtErrorInvalidDevice, "{}: device {} is not a peer of itself",
                  function_name, srcDevice);
    }
    int can = 0;
    if (auto error = PeerAccessible(source, destination, &can, function_name)) return error;
    *value = 0;
    if (!can) return infinirtSuccess;  // nothing between them: every attribute is 0
    const infinirtError_t answer =
        source.backend->table.DeviceGetP2PAttribute(source.local, value, attr, destination.local);
    if (answer == infinirtErrorNotSupported) {
      *value = attr == infinirtDevP2PAttrAccessSupported ? 1 : 0;
      return infinirtSuccess;
    }
    return BackendAnswer(answer, *source.backend, function_name);
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

}  // extern "C"
