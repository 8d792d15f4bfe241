// The public C API for devices: count, selection, synchronisation, reset, properties and
// attributes, versions.

#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <type_traits>

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

// 0000:00:00.0 is the host bridge, never an accelerator: all zero means the backend does not
// know the device's address.
bool HasPciAddress(const infinirtDeviceProp& prop) {
  return prop.pciDomainID != 0 || prop.pciBusID != 0 || prop.pciDeviceID != 0;
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

// The fields of infinirtDeviceProp that a device attribute also answers, with that attribute:
// X(field, attribute). GetDeviceProperties takes them from the backend's DeviceGetAttribute, so
// that the two never disagree, and keeps the plugin's value where the backend answers no value.
#define INFINIRT_PROP_ATTRIBUTES(X)                                                 \
  X(sharedMemPerBlock, MaxSharedMemoryPerBlock)                                     \
  X(regsPerBlock, MaxRegistersPerBlock)                                             \
  X(warpSize, WarpSize)                                                             \
  X(memPitch, MaxPitch)                                                             \
  X(maxThreadsPerBlock, MaxThreadsPerBlock)                                         \
  X(maxThreadsDim[0], MaxBlockDimX)                                                 \
  X(maxThreadsDim[1], MaxBlockDimY)                                                 \
  X(maxThreadsDim[2], MaxBlockDimZ)                                                 \
  X(maxGridSize[0], MaxGridDimX)                                                    \
  X(maxGridSize[1], MaxGridDimY)                                                    \
  X(maxGridSize[2], MaxGridDimZ)                                                    \
  X(totalConstMem, TotalConstantMemory)                                             \
  X(major, ComputeCapabilityMajor)                                                  \
  X(minor, ComputeCapabilityMinor)                                                  \
  X(textureAlignment, TextureAlignment)                                             \
  X(texturePitchAlignment, TexturePitchAlignment)                                   \
  X(multiProcessorCount, MultiProcessorCount)                                       \
  X(integrated, Integrated)                                                         \
  X(canMapHostMemory, CanMapHostMemory)                                             \
  X(maxTexture1D, MaxTexture1DWidth)                                                \
  X(maxTexture1DMipmap, MaxTexture1DMipmappedWidth)                                 \
  X(maxTexture2D[0], MaxTexture2DWidth)                                             \
  X(maxTexture2D[1], MaxTexture2DHeight)                                            \
  X(maxTexture2DMipmap[0], MaxTexture2DMipmappedWidth)                              \
  X(maxTexture2DMipmap[1], MaxTexture2DMipmappedHeight)                             \
  X(maxTexture2DLinear[0], MaxTexture2DLinearWidth)                                 \
  X(maxTexture2DLinear[1], MaxTexture2DLinearHeight)                                \
  X(maxTexture2DLinear[2], MaxTexture2DLinearPitch)                                 \
  X(maxTexture2DGather[0], MaxTexture2DGatherWidth)                                 \
  X(maxTexture2DGather[1], MaxTexture2DGatherHeight)                                \
  X(maxTexture3D[0], MaxTexture3DWidth)                                             \
  X(maxTexture3D[1], MaxTexture3DHeight)                                            \
  X(maxTexture3D[2], MaxTexture3DDepth)                                             \
  X(maxTexture3DAlt[0], MaxTexture3DWidthAlt)                                       \
  X(maxTexture3DAlt[1], MaxTexture3DHeightAlt)                                      \
  X(maxTexture3DAlt[2], MaxTexture3DDepthAlt)                                       \
  X(maxTextureCubemap, MaxTextureCubemapWidth)                                      \
  X(maxTexture1DLayered[0], MaxTexture1DLayeredWidth)                               \
  X(maxTexture1DLayered[1], MaxTexture1DLayeredLayers)                              \
  X(maxTexture2DLayered[0], MaxTexture2DLayeredWidth)                               \
  X(maxTexture2DLayered[1], MaxTexture2DLayeredHeight)                              \
  X(maxTexture2DLayered[2], MaxTexture2DLayeredLayers)                              \
  X(maxTextureCubemapLayered[0], MaxTextureCubemapLayeredWidth)                     \
  X(maxTextureCubemapLayered[1], MaxTextureCubemapLayeredLayers)                    \
  X(maxSurface1D, MaxSurface1DWidth)                                                \
  X(maxSurface2D[0], MaxSurface2DWidth)                                             \
  X(maxSurface2D[1], MaxSurface2DHeight)                                            \
  X(maxSurface3D[0], MaxSurface3DWidth)                                             \
  X(maxSurface3D[1], MaxSurface3DHeight)                                            \
  X(maxSurface3D[2], MaxSurface3DDepth)                                             \
  X(maxSurface1DLayered[0], MaxSurface1DLayeredWidth)                               \
  X(maxSurface1DLayered[1], MaxSurface1DLayeredLayers)                              \
  X(maxSurface2DLayered[0], MaxSurface2DLayeredWidth)                               \
  X(maxSurface2DLayered[1], MaxSurface2DLayeredHeight)                              \
  X(maxSurface2DLayered[2], MaxSurface2DLayeredLayers)                              \
  X(maxSurfaceCubemap, MaxSurfaceCubemapWidth)                                      \
  X(maxSurfaceCubemapLayered[0], MaxSurfaceCubemapLayeredWidth)                     \
  X(maxSurfaceCubemapLayered[1], MaxSurfaceCubemapLayeredLayers)                    \
  X(surfaceAlignment, SurfaceAlignment)                                             \
  X(concurrentKernels, ConcurrentKernels)                                           \
  X(ECCEnabled, EccEnabled)                                                         \
  X(pciBusID, PciBusId)                                                             \
  X(pciDeviceID, PciDeviceId)                                                       \
  X(pciDomainID, PciDomainId)                                                       \
  X(tccDriver, TccDriver)                                                           \
  X(asyncEngineCount, AsyncEngineCount)                                             \
  X(unifiedAddressing, UnifiedAddressing)                                           \
  X(memoryBusWidth, GlobalMemoryBusWidth)                                           \
  X(l2CacheSize, L2CacheSize)                                                       \
  X(persistingL2CacheMaxSize, MaxPersistingL2CacheSize)                             \
  X(maxThreadsPerMultiProcessor, MaxThreadsPerMultiProcessor)                       \
  X(streamPrioritiesSupported, StreamPrioritiesSupported)                           \
  X(globalL1CacheSupported, GlobalL1CacheSupported)                                 \
  X(localL1CacheSupported, LocalL1CacheSupported)                                   \
  X(sharedMemPerMultiprocessor, MaxSharedMemoryPerMultiprocessor)                   \
  X(regsPerMultiprocessor, MaxRegistersPerMultiprocessor)                           \
  X(managedMemory, ManagedMemory)                                                   \
  X(isMultiGpuBoard, IsMultiGpuBoard)                                               \
  X(multiGpuBoardGroupID, MultiGpuBoardGroupID)                                     \
  X(hostNativeAtomicSupported, HostNativeAtomicSupported)                           \
  X(pageableMemoryAccess, PageableMemoryAccess)                                     \
  X(concurrentManagedAccess, ConcurrentManagedAccess)                               \
  X(computePreemptionSupported, ComputePreemptionSupported)                         \
  X(canUseHostPointerForRegisteredMem, CanUseHostPointerForRegisteredMem)           \
  X(cooperativeLaunch, CooperativeLaunch)                                           \
  X(sharedMemPerBlockOptin, MaxSharedMemoryPerBlockOptin)                           \
  X(pageableMemoryAccessUsesHostPageTables, PageableMemoryAccessUsesHostPageTables) \
  X(directManagedMemAccessFromHost, DirectManagedMemAccessFromHost)                 \
  X(maxBlocksPerMultiProcessor, MaxBlocksPerMultiprocessor)                         \
  X(accessPolicyMaxWindowSize, MaxAccessPolicyWindowSize)                           \
  X(reservedSharedMemPerBlock, ReservedSharedMemoryPerBlock)                        \
  X(hostRegisterSupported, HostRegisterSupported)                                   \
  X(sparseCudaArraySupported, SparseCudaArraySupported)                             \
  X(hostRegisterReadOnlySupported, HostRegisterReadOnlySupported)                   \
  X(timelineSemaphoreInteropSupported, TimelineSemaphoreInteropSupported)           \
  X(memoryPoolsSupported, MemoryPoolsSupported)                                     \
  X(gpuDirectRDMASupported, GPUDirectRDMASupported)                                 \
  X(gpuDirectRDMAFlushWritesOptions, GPUDirectRDMAFlushWritesOptions)               \
  X(gpuDirectRDMAWritesOrdering, GPUDirectRDMAWritesOrdering)                       \
  X(memoryPoolSupportedHandleTypes, MemoryPoolSupportedHandleTypes)                 \
  X(deferredMappingCudaArraySupported, DeferredMappingCudaArraySupported)           \
  X(ipcEventSupported, IpcEventSupport)                                             \
  X(clusterLaunch, ClusterLaunch)                                                   \
  X(deviceNumaConfig, NumaConfig)                                                   \
  X(deviceNumaId, NumaId)                                                           \
  X(mpsEnabled, MpsEnabled)                                                         \
  X(hostNumaId, HostNumaId)                                                         \
  X(gpuPciDeviceID, GpuPciDeviceId)                                                 \
  X(gpuPciSubsystemID, GpuPciSubsystemId)                                           \
  X(hostNumaMultinodeIpcSupported, HostNumaMultinodeIpcSupported)

// An attribute's int into a field of any of the properties' integer types. Sizes are size_t in
// the properties and int as attributes: a negative size is no size.
template <class Field>
void StoreAttribute(int value, Field* field) {
  if constexpr (std::is_same_v<Field, size_t>) {
    *field = value > 0 ? static_cast<size_t>(value) : 0;
  } else {
    *field = static_cast<Field>(value);
  }
}

void FillFromAttributes(const Backend& backend, int local, infinirtDeviceProp* prop) {
  int value = 0;
#define INFINIRT_PROP_FROM_ATTRIBUTE_(field, attribute)                              \
  if (backend.table.DeviceGetAttribute(local, &value, infinirtDevAttr##attribute) == \
      infinirtSuccess) {                                                             \
    StoreAttribute(value, &prop->field);                                             \
  }
  INFINIRT_PROP_ATTRIBUTES(INFINIRT_PROP_FROM_ATTRIBUTE_)
#undef INFINIRT_PROP_FROM_ATTRIBUTE_
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

infinirtError_t infinirtDeviceGetPCIBusId(char* pciBusId, int len, int device) {
  return Guard(__func__, [&](const char* function_name) {
    if (pciBusId == nullptr || len <= 0) {
      return Fail(infinirtErrorInvalidValue, "{}: pciBusId is NULL or len ({}) is not positive",
                  function_name, len);
    }
    infinirtDeviceProp prop;
    if (auto error = infinirtGetDeviceProperties(&prop, device)) return error;
    if (!HasPciAddress(prop)) {
      return Fail(infinirtErrorNotSupported,
                  "{}: the backend of device {} does not tell its PCI "
                  "address",
                  function_name, device);
    }
    char id[32];
    const int length = std::snprintf(
        id, sizeof id, "%04x:%02x:%02x.0", static_cast<unsigned>(prop.pciDomainID),
        static_cast<unsigned>(prop.pciBusID), static_cast<unsigned>(prop.pciDeviceID));
    // Too short for the whole id: InvalidValue (NVIDIA's answer), not a truncated id.
    if (len <= length) {
      return Fail(infinirtErrorInvalidValue, "{}: {} bytes cannot hold the id \"{}\"",
                  function_name, len, id);
    }
    std::memcpy(pciBusId, id, static_cast<size_t>(length) + 1);
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
      if (HasPciAddress(prop) && prop.pciDomainID == wanted.domain && prop.pciBusID == wanted.bus &&
          prop.pciDeviceID == wanted.device) {
        *device = ordinal;
        return infinirtSuccess;
      }
    }
    return Fail(infinirtErrorInvalidDevice, "{}: no device at {}", function_name, pciBusId);
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

infinirtError_t infinirtGetDeviceProperties(struct infinirtDeviceProp* prop, int device) {
  return Guard(__func__, [&](const char* function_name) {
    if (prop == nullptr) return Fail(infinirtErrorInvalidValue, "{}: prop is NULL", function_name);
    Target target;
    if (auto error = DeviceTarget(Runtime::Get(), device, &target, function_name)) return error;
    std::memset(prop, 0, sizeof(*prop));
    if (auto error = target.backend->table.GetDeviceProperties(target.local, prop)) {
      return BackendAnswer(error, *target.backend, function_name);
    }
    FillFromAttributes(*target.backend, target.local, prop);
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
