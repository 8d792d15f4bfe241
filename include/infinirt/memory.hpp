// A block of memory handed out by a Runtime, released (to its allocator) when the last
// shared_ptr to it goes.
#ifndef INFINIRT_MEMORY_HPP_
#define INFINIRT_MEMORY_HPP_

#include <cstddef>

#include "infinirt.h"
#include "infinirt/device.hpp"
#include "infinirt/export.hpp"

namespace infinirt {

class INFINIRT_CXX_API Memory {
 public:
  // What handed the memory out (an allocator): told when the Memory goes and of the streams
  // recordStream names. `token` is the owner's own note for the memory.
  class Owner {
   public:
    // Called once, when the Memory goes; must not throw.
    virtual void release(std::byte* data, void* token) noexcept = 0;
    // May throw infinirt::Error.
    virtual void recordStream(void* token, infinirtStream_t stream) = 0;

   protected:
    ~Owner() = default;
  };

  Memory(std::byte* data, size_t size, Device device, Owner* owner, void* token,
         bool pinned = false)
      : data_(data), size_(size), device_(device), pinned_(pinned), owner_(owner), token_(token) {}
  ~Memory() { owner_->release(data_, token_); }
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
  void recordStream(infinirtStream_t stream) { owner_->recordStream(token_, stream); }

 private:
  std::byte* data_;
  size_t size_;
  Device device_;
  bool pinned_;
  Owner* owner_;
  void* token_;
};

}  // namespace infinirt

#endif  // INFINIRT_MEMORY_HPP_
