// The allocator a device's runtimes share (one per device and process). Memory comes from the
// C API directly and goes back when its last shared_ptr goes.
#ifndef INFINIRT_RUNTIME_DEVICE_ALLOCATOR_H_
#define INFINIRT_RUNTIME_DEVICE_ALLOCATOR_H_

#include <cstddef>
#include <memory>

#include "infinirt/device.hpp"
#include "infinirt/memory.hpp"

namespace infinirt::detail {

class DeviceAllocator : public std::enable_shared_from_this<DeviceAllocator> {
 public:
  DeviceAllocator(Device device, int ordinal) : device_(device), ordinal_(ordinal) {}

  // The allocator of a device, made at its first use; the same object for every runtime of the
  // device.
  static std::shared_ptr<DeviceAllocator> For(Device device, int ordinal);

  // Device memory; pinned host memory for this device. size > 0, else infinirt::Error
  // (InvalidValue).
  std::shared_ptr<Memory> Allocate(size_t size);
  std::shared_ptr<Memory> AllocatePinnedHost(size_t size);

 private:
  Device device_;
  int ordinal_;
};

// Makes a device current for the calling thread for a scope, restoring the previous one.
class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace infinirt::detail

#endif  // INFINIRT_RUNTIME_DEVICE_ALLOCATOR_H_
