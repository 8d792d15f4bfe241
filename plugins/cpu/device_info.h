// What the CPU device reports: properties, attributes and memory, read from the OS.
#ifndef INFINIRT_PLUGINS_CPU_DEVICE_INFO_H_
#define INFINIRT_PLUGINS_CPU_DEVICE_INFO_H_

#include <array>
#include <atomic>
#include <cstddef>

#include "infinirt.h"

namespace infinirt::cpu {

struct MemoryInfo {
  size_t total = 0;      // physical memory, or the cgroup limit when lower
  size_t available = 0;  // what the OS reports as available, never above total
};

MemoryInfo ReadMemoryInfo();

// The properties that no device attribute answers, for device `index` of `count` CPU devices:
// with several, the name says which, and each has its share of the host's memory. The core
// takes the other fields from DeviceAttributeValue.
void FillDeviceProperties(int index, int count, struct infinirtDeviceProp* prop);

// What the attributes of one CPU device depend on.
struct DeviceFacts {
  int index = 0;           // the device's index among the CPU devices
  int worker_threads = 0;  // threads that run its streams' work
};

// The value of a device attribute for a CPU device. Attributes with no meaning on a CPU
// (textures, surfaces, clusters, ...) are 0: the capability is absent.
int DeviceAttributeValue(enum infinirtDeviceAttr attr, const DeviceFacts& device);

// A CPU device's limits (infinirtDeviceSetLimit). It runs no kernels, so they apply to nothing:
// the values are kept and reported, with CUDA's defaults and rules (the persisting L2 size is
// clamped to the device's maximum, 0; the L2 fetch granularity to 128 bytes). The device
// runtime's synchronisation depth is unsupported, as on CUDA's current GPUs.
class DeviceLimits {
 public:
  DeviceLimits();
  infinirtError_t Get(enum infinirtLimit limit, size_t* value) const;
  infinirtError_t Set(enum infinirtLimit limit, size_t value);

 private:
  static constexpr size_t kCount = infinirtLimitPersistingL2CacheSize + 1;
  std::array<std::atomic<size_t>, kCount> values_;
};

}  // namespace infinirt::cpu

#endif  // INFINIRT_PLUGINS_CPU_DEVICE_INFO_H_
