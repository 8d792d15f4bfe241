#include "infinirt/memory.hpp"

#include <utility>

namespace infinirt {

Memory::Memory(std::byte* data, size_t size, Device device, Deleter deleter, bool pinned,
               StreamRecorder recorder)
    : data_(data),
      size_(size),
      device_(device),
      deleter_(std::move(deleter)),
      pinned_(pinned),
      recorder_(std::move(recorder)) {}

Memory::~Memory() {
  if (deleter_) deleter_(data_);
}

void Memory::recordStream(infinirtStream_t stream) {
  if (recorder_) recorder_(stream);
}

}  // namespace infinirt
