// A block of memory handed out by a Runtime, released (to its allocator) when the last
// shared_ptr to it goes.
#ifndef INFINIRT_MEMORY_HPP_
#define INFINIRT_MEMORY_HPP_

#include <cstddef>
#include <functional>

#include "infinirt/device.hpp"
#include "infinirt/export.hpp"

namespace infinirt {

class INFINIRT_CXX_API Memory {
 public:
  // Called once, with data, when the Memory goes; must not throw.
  using Deleter = std::function<void(std::byte*)>;

  Memory(std::byte* data, size_t size, Device device, Deleter deleter, bool pinned = false);
  ~Memory();
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  // The device the memory belongs to (for pinned host memory: the device it was pinned for).
  Device device() const { return device_; }
  // Page-locked host memory (Runtime::allocatePinnedHostMemory), not device memory.
  bool is_pinned() const { return pinned_; }

 private:
  std::byte* data_;
  size_t size_;
  Device device_;
  Deleter deleter_;
  bool pinned_;
};

}  // namespace infinirt

#endif  // INFINIRT_MEMORY_HPP_
