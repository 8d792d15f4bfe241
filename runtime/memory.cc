#include "infinirt/memory.hpp"

#include <utility>

namespace infinirt {

Memory::Memory(std::byte* data, size_t size, Device device, Deleter deleter, bool pinned)
    : data_(data), size_(size), device_(device), deleter_(std::move(deleter)), pinned_(pinned) {}

Memory::~Memory() {
  if (deleter_) deleter_(data_);
}

}  // namespace infinirt
