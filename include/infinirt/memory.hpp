// A block of memory handed out by a Runtime, released (to its allocator) when the last
// shared_ptr to it goes.
#ifndef INFINIRT_MEMORY_HPP_
#define INFINIRT_MEMORY_HPP_

#include <cstddef>
#include <functional>

#include "infinirt.h"
#include "infinirt/device.hpp"
#include "infinirt/export.hpp"

namespace infinirt {

class INFINIRT_CXX_API Memory {
 public:
  // Called once, with data, when the Memory goes; must not throw.
  using Deleter = std::function<void(std::byte*)>;

  // Told of each stream recordStream names; may throw infinirt::Error.
  using StreamRecorder = std::function<void(infinirtStream_t)>;

  Memory(std::byte* data, size_t size, Device device, Deleter deleter, bool pinned = false,
         StreamRecorder recorder = nullptr);
  ~Memory();
  Memory(const Memory&) = delete;
  Memory& operator=(const Memory&) = delete;

  std::byte* data() const { return data_; }
  size_t size() const { return size_; }
  // The device the memory belongs to (for pinned host memory: the device it was pinned for).
  Device device() const { return device_; }
  // Page-locked host memory (Runtime::allocatePinnedHostMemory), not device memory.
  bool is_pinned() const { return pinned_; }

  // Says that work queued on `stream` (other than the stream the memory was allocated on) uses
  // this memory: when the memory is released, its block is reused only after that work, as of
  // the release, is done. Nothing to do for pinned host memory (its release waits for the
  // device).
  void recordStream(infinirtStream_t stream);

 private:
  std::byte* data_;
  size_t size_;
  Device device_;
  Deleter deleter_;
  bool pinned_;
  StreamRecorder recorder_;
};

}  // namespace infinirt

#endif  // INFINIRT_MEMORY_HPP_
