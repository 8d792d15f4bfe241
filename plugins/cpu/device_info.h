// What the CPU device reports: properties, attributes and memory, read from the OS.
#ifndef INFINIRT_PLUGINS_CPU_DEVICE_INFO_H_
#define INFINIRT_PLUGINS_CPU_DEVICE_INFO_H_

#include <cstddef>

#include "infinirt.h"

namespace infinirt::cpu {

struct MemoryInfo {
  size_t total = 0;      // physical memory, or the cgroup limit when lower
  size_t available = 0;  // what the OS reports as available, never above total
};

MemoryInfo ReadMemoryInfo();

// Device `index` of `count` CPU devices: with several, the name says which, and each has its
// share of the host's memory.
void FillDeviceProperties(int worker_threads, int index, int count,
                          struct infinirtDeviceProp* prop);

// The value of a device attribute for the CPU device. Attributes with no meaning on a CPU
// (textures, surfaces, PCI, clusters, ...) are 0: the capability is absent.
int DeviceAttributeValue(enum infinirtDeviceAttr attr, int worker_threads);

}  // namespace infinirt::cpu

#endif  // INFINIRT_PLUGINS_CPU_DEVICE_INFO_H_
