// The public C API for what a device is: its properties and attributes, its PCI address (and the
// device at an address), and the runtime's and driver's versions. Selection, flags, limits,
// peers, synchronisation and reset are in api_device.cc.

#include <cstdio>
#include <cstring>
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
