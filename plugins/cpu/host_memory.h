// The CPU device's memory: host memory aligned as CUDA aligns device allocations (256 bytes).
//
// Not posix_memalign: glibc's memalign carves the aligned block out of a larger chunk and frees
// the pieces before and after it, and those small free pieces make every later free of a large
// block consolidate the heap (malloc_consolidate was a quarter of an infinirtMalloc + Free pair
// of 1 MiB). Instead the block is allocated with malloc, 264 bytes larger, and the address
// malloc returned is kept in the 8 bytes before the aligned start.
#ifndef INFINIRT_PLUGINS_CPU_HOST_MEMORY_H_
#define INFINIRT_PLUGINS_CPU_HOST_MEMORY_H_

#include <cstddef>
#include <cstdint>
#include <cstdlib>
#include <cstring>

namespace infinirt::cpu {

constexpr size_t kDeviceAlignment = 256;  // what CUDA guarantees for cudaMalloc

// Null when the memory cannot be had (or size is absurd).
inline void* AllocateDeviceMemory(size_t size) {
  constexpr size_t kExtra = kDeviceAlignment + sizeof(void*);
  if (size > SIZE_MAX - kExtra) return nullptr;
  void* raw = std::malloc(size + kExtra);
  if (raw == nullptr) return nullptr;
  const uintptr_t start = reinterpret_cast<uintptr_t>(raw) + sizeof(void*);
  const uintptr_t aligned = (start + kDeviceAlignment - 1) & ~uintptr_t{kDeviceAlignment - 1};
  std::memcpy(reinterpret_cast<void*>(aligned - sizeof(void*)), &raw, sizeof raw);
  return reinterpret_cast<void*>(aligned);
}

// Frees what AllocateDeviceMemory returned.
inline void FreeDeviceMemory(void* pointer) {
  if (pointer == nullptr) return;
  void* raw;
  std::memcpy(&raw, static_cast<char*>(pointer) - sizeof raw, sizeof raw);
  std::free(raw);
}

}  // namespace infinirt::cpu

#endif  // INFINIRT_PLUGINS_CPU_HOST_MEMORY_H_
