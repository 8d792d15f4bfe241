#include "device_allocator.h"

#include <map>
#include <mutex>
#include <string>

#include "infinirt/error.hpp"
#include "runtime_log.h"

namespace infinirt::detail {

namespace {

std::string Call(const char* function, const Device& device, size_t size) {
  return std::string(function) + "(size=" + std::to_string(size) + ") on " + device.toString();
}

void RefuseZeroSize(const char* function, const Device& device, size_t size) {
  if (size == 0) check(infinirtErrorInvalidValue, [&] { return Call(function, device, size); });
}

// Pinned host memory on the CPU backend is the same as any host memory; said once per process.
void WarnPinnedOnCpu(const Device& device) {
  if (device.type() != INFINI_DEVICE_CPU) return;
  static std::once_flag warned;
  std::call_once(warned, [] {
    Warn(
        "allocatePinnedHostMemory on a CPU device: the memory is ordinary host memory (nothing "
        "to pin)");
  });
}

// Memory owning `data`, released by `release`; released at once if the Memory cannot be made.
std::shared_ptr<Memory> Own(std::byte* data, size_t size, const Device& device,
                            Memory::Deleter release, bool pinned) {
  try {
    return std::make_shared<Memory>(data, size, device, release, pinned);
  } catch (...) {
    release(data);
    throw;
  }
}

}  // namespace

std::shared_ptr<DeviceAllocator> DeviceAllocator::For(Device device, int ordinal) {
  static std::mutex mutex;
  // Never destroyed: memory released at process exit may still reach its allocator.
  static auto* allocators = new std::map<Device, std::shared_ptr<DeviceAllocator>>();
  std::lock_guard<std::mutex> lock(mutex);
  std::shared_ptr<DeviceAllocator>& allocator = (*allocators)[device];
  if (!allocator) allocator = std::make_shared<DeviceAllocator>(device, ordinal);
  return allocator;
}

std::shared_ptr<Memory> DeviceAllocator::Allocate(size_t size) {
  RefuseZeroSize("infinirtMalloc", device_, size);
  void* data = nullptr;
  {
    ScopedDevice on_device(ordinal_);
    check(infinirtMalloc(&data, size), [&] { return Call("infinirtMalloc", device_, size); });
  }
  // The allocator stays alive while memory it handed out does.
  auto keep = shared_from_this();
  return Own(
      static_cast<std::byte*>(data), size, device_,
      [keep](std::byte* block) { ReportIfFailed(infinirtFree(block), "infinirtFree"); },
      /*pinned=*/false);
}

std::shared_ptr<Memory> DeviceAllocator::AllocatePinnedHost(size_t size) {
  RefuseZeroSize("infinirtMallocHost", device_, size);
  WarnPinnedOnCpu(device_);
  void* data = nullptr;
  {
    ScopedDevice on_device(ordinal_);
    check(infinirtMallocHost(&data, size),
          [&] { return Call("infinirtMallocHost", device_, size); });
  }
  auto keep = shared_from_this();
  return Own(
      static_cast<std::byte*>(data), size, device_,
      [keep](std::byte* block) { ReportIfFailed(infinirtFreeHost(block), "infinirtFreeHost"); },
      /*pinned=*/true);
}

ScopedDevice::ScopedDevice(int ordinal) {
  INFINIRT_CHECK(infinirtGetDevice(&previous_));
  if (previous_ != ordinal) {
    check(infinirtSetDevice(ordinal),
          [&] { return "infinirtSetDevice(" + std::to_string(ordinal) + ")"; });
  }
}

ScopedDevice::~ScopedDevice() {
  int now = -1;
  if (infinirtGetDevice(&now) == infinirtSuccess && now != previous_) {
    ReportIfFailed(infinirtSetDevice(previous_), "infinirtSetDevice (restoring the device)");
  }
}

}  // namespace infinirt::detail
