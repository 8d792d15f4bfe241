#include "device_info.h"

#include <unistd.h>

#include <algorithm>
#include <climits>
#include <cstring>
#include <fstream>
#include <string>
#include <thread>

namespace infinirt::cpu {

namespace {

// "MemAvailable:   123456 kB" -> bytes; 0 when absent.
size_t MeminfoBytes(const std::string& key) {
  std::ifstream meminfo("/proc/meminfo");
  std::string name;
  size_t kilobytes = 0;
  std::string unit;
  while (meminfo >> name >> kilobytes >> unit) {
    if (name == key + ":") return kilobytes * 1024;
  }
  return 0;
}

// The cgroup v2 (or v1) memory limit of this process, or SIZE_MAX when none.
size_t CgroupMemoryLimit() {
  for (const char* path :
       {"/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"}) {
    std::ifstream file(path);
    std::string value;
    if (file >> value && !value.empty() && value != "max") {
      try {
        return static_cast<size_t>(std::stoull(value));
      } catch (...) {
      }
    }
  }
  return SIZE_MAX;
}

std::string CpuModelName() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const size_t colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  }
  return "";
}

int HardwareThreads() { return std::max(1u, std::thread::hardware_concurrency()); }

// The processor's clock in kHz: its highest frequency (cpufreq), else what /proc/cpuinfo says it
// runs at now; 1 GHz when the OS says neither (CUDA never reports 0, and programs divide by it).
int ClockRateKhz() {
  std::ifstream max_frequency("/sys/devices/system/cpu/cpu0/cpufreq/cpuinfo_max_freq");
  long khz = 0;
  if (max_frequency >> khz && khz > 0 && khz < INT_MAX) return static_cast<int>(khz);
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("cpu MHz", 0) != 0) continue;
    const size_t colon = line.find(':');
    if (colon == std::string::npos) break;
    try {
      const double mhz = std::stod(line.substr(colon + 1));
      if (mhz > 0 && mhz * 1000 < INT_MAX) return static_cast<int>(mhz * 1000);
    } catch (...) {
    }
    break;
  }
  return 1000000;
}

int CacheSize(int name) {
  const long size = sysconf(name);
  return size > 0 && size < INT_MAX ? static_cast<int>(size) : 0;
}

}  // namespace

MemoryInfo ReadMemoryInfo() {
  MemoryInfo info;
  const long pages = sysconf(_SC_PHYS_PAGES);
  const long page_size = sysconf(_SC_PAGE_SIZE);
  info.total = pages > 0 && page_size > 0 ? static_cast<size_t>(pages) * page_size : 0;
  info.total = std::min(info.total, CgroupMemoryLimit());
  info.available = std::min(MeminfoBytes("MemAvailable"), info.total);
  return info;
}

void FillDeviceProperties(int index, int count, struct infinirtDeviceProp* prop) {
  const std::string model = CpuModelName();
  const std::string which = count > 1 ? " " + std::to_string(index) : "";
  std::snprintf(prop->name, sizeof(prop->name), "CPU%s%s%s", which.c_str(),
                model.empty() ? "" : " (", model.empty() ? "" : (model + ")").c_str());
  prop->totalGlobalMem = ReadMemoryInfo().total / static_cast<size_t>(count > 0 ? count : 1);
}

int DeviceAttributeValue(enum infinirtDeviceAttr attr, const DeviceFacts& device) {
  switch (attr) {
    case infinirtDevAttrMaxThreadsPerBlock:
    case infinirtDevAttrMaxBlockDimX:
    case infinirtDevAttrMaxBlockDimY:
    case infinirtDevAttrMaxBlockDimZ:
    case infinirtDevAttrWarpSize:
    case infinirtDevAttrMaxThreadsPerMultiProcessor:
    case infinirtDevAttrMaxBlocksPerMultiprocessor:
      return 1;
    case infinirtDevAttrMaxGridDimX:
      return INT_MAX;
    case infinirtDevAttrMaxGridDimY:
    case infinirtDevAttrMaxGridDimZ:
      return 65535;
    case infinirtDevAttrMaxPitch:
      return INT_MAX;
    case infinirtDevAttrMultiProcessorCount:
      return HardwareThreads();
    // Values CUDA never reports as 0 (programs divide by them). The OS tells the processor's
    // clock, not the memory's: the memory clock is given as the processor's, and the bus width
    // as one 64-bit DRAM channel, so that a bandwidth estimate is a number, not a division by 0.
    case infinirtDevAttrClockRate:
    case infinirtDevAttrMemoryClockRate:
      return ClockRateKhz();
    case infinirtDevAttrGlobalMemoryBusWidth:
      return 64;
    case infinirtDevAttrAsyncEngineCount:
      return device.worker_threads;
    case infinirtDevAttrL2CacheSize:
      return CacheSize(_SC_LEVEL2_CACHE_SIZE);
    // No PCI address: a made-up one, distinct for each CPU device (infinirtDeviceGetPCIBusId).
    case infinirtDevAttrPciDomainId:
      return 0xffff;
    case infinirtDevAttrPciBusId:
      return (device.index >> 5) & 0xff;
    case infinirtDevAttrPciDeviceId:
      return device.index & 0x1f;
    case infinirtDevAttrGpuOverlap:
    case infinirtDevAttrIntegrated:
    case infinirtDevAttrCanMapHostMemory:
    case infinirtDevAttrConcurrentKernels:
    case infinirtDevAttrUnifiedAddressing:
    case infinirtDevAttrPageableMemoryAccess:
    case infinirtDevAttrHostNativeAtomicSupported:
    case infinirtDevAttrMemoryPoolsSupported:
    case infinirtDevAttrPageableMemoryAccessUsesHostPageTables:
    case infinirtDevAttrStreamPrioritiesSupported:  // the worker pool picks by priority
    case infinirtDevAttrHostRegisterSupported:
    case infinirtDevAttrHostRegisterReadOnlySupported:
    case infinirtDevAttrCanUseHostPointerForRegisteredMem:  // the device pointer is the host's
    case infinirtDevAttrManagedMemory:                      // device memory is the host's
    case infinirtDevAttrConcurrentManagedAccess:
    case infinirtDevAttrDirectManagedMemAccessFromHost:
      return 1;
    case infinirtDevAttrHostNumaId:
    case infinirtDevAttrNumaId:
      return -1;
    default:
      return 0;
  }
}

DeviceLimits::DeviceLimits() {
  for (auto& value : values_) value.store(0, std::memory_order_relaxed);
  values_[infinirtLimitStackSize] = 1024;
  values_[infinirtLimitPrintfFifoSize] = 1 << 20;
  values_[infinirtLimitMallocHeapSize] = 8 << 20;
  values_[infinirtLimitDevRuntimePendingLaunchCount] = 2048;
  values_[infinirtLimitMaxL2FetchGranularity] = 64;
}

infinirtError_t DeviceLimits::Get(enum infinirtLimit limit, size_t* value) const {
  if (limit == infinirtLimitDevRuntimeSyncDepth) return infinirtErrorUnsupportedLimit;
  *value = values_[limit].load(std::memory_order_relaxed);
  return infinirtSuccess;
}

infinirtError_t DeviceLimits::Set(enum infinirtLimit limit, size_t value) {
  switch (limit) {
    case infinirtLimitDevRuntimeSyncDepth:
      return infinirtErrorUnsupportedLimit;
    case infinirtLimitMaxL2FetchGranularity:
      value = std::min<size_t>(value, 128);
      break;
    case infinirtLimitPersistingL2CacheSize:
      value = 0;  // the device's maximum (DevAttrMaxPersistingL2CacheSize)
      break;
    default:
      break;
  }
  values_[limit].store(value, std::memory_order_relaxed);
  return infinirtSuccess;
}

}  // namespace infinirt::cpu
