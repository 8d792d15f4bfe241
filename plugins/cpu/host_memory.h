// The CPU device's memory: host memory aligned as CUDA aligns device allocations (256 bytes).
//
// Not posix_memalign: glibc's memalign carves the aligned block out of a larger chunk and frees
// the pieces before and after it, and those small free pieces make every later free of a large
// block consolidate the heap (malloc_consolidate was a quarter of an infinirtMalloc + Free pair
// of 1 MiB). Instead the block is allocated with malloc, 272 bytes larger, and the 16 bytes before
// the aligned start keep the address malloc returned and the size asked for (a device's memory
// accounting reads it back).
#ifndef INFINIRT_PLUGINS_CPU_HOST_MEMORY_H_
#define INFINIRT_PLUGINS_CPU_HOST_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace infinirt::cpu {

constexpr size_t kDeviceAlignment = 256;  // what CUDA guarantees for cudaMalloc

namespace detail {
struct BlockHeader {
  void* raw;    // what malloc returned
  size_t size;  // what was asked for
};
inline BlockHeader* HeaderOf(void* pointer) {
  return reinterpret_cast<BlockHeader*>(static_cast<char*>(pointer) - sizeof(BlockHeader));
}
}  // namespace detail

// Null when the memory cannot be had (or size is absurd). alignment: a power of two, at least
// the device's (managed memory asks for a page).
inline void* AllocateDeviceMemory(size_t size, size_t alignment = kDeviceAlignment) {
  const size_t extra = alignment + sizeof(detail::BlockHeader);
  if (size > SIZE_MAX - extra) return nullptr;
  void* raw = std::malloc(size + extra);
  if (raw == nullptr) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw) + sizeof(detail::BlockHeader);
  const uintptr_t aligned = (start + alignment - 1) & ~uintptr_t{alignment - 1};
  const detail::BlockHeader header{raw, size};
  std::memcpy(reinterpret_cast<void*>(aligned - sizeof header), &header, sizeof header);
  return reinterpret_cast<void*>(aligned);
}

// The size AllocateDeviceMemory was asked for (0 for null).
inline size_t DeviceMemorySize(void* pointer) {
  if (pointer == nullptr) return 0;
  detail::BlockHeader header;
  std::memcpy(&header, detail::HeaderOf(pointer), sizeof header);
  return header.size;
}

// Frees what AllocateDeviceMemory returned.
inline void FreeDeviceMemory(void* pointer) {
  if (pointer == nullptr) return;
  detail::BlockHeader header;
  std::memcpy(&header, detail::HeaderOf(pointer), sizeof header);
  std::free(header.raw);
}

// Sets count elements of element_size (2 or 4) bytes to the low bytes of value, in the host's
// byte order (as a device of the same order stores them). The pointer need not be aligned.
inline void FillElements(void* ptr, unsigned int value, unsigned int element_size, size_t count) {
  auto* bytes = static_cast<unsigned char*>(ptr);
  if (element_size == 2) {
    const auto element = static_cast<uint16_t>(value);
    for (size_t i = 0; i < count; ++i) std::memcpy(bytes + 2 * i, &element, 2);
  } else {
    const auto element = static_cast<uint32_t>(value);
    for (size_t i = 0; i < count; ++i) std::memcpy(bytes + 4 * i, &element, 4);
  }
}

}  // namespace infinirt::cpu

#endif  // INFINIRT_PLUGINS_CPU_HOST_MEMORY_H_
