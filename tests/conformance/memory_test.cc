// S21-S26, S43 and S61: freeing, implicit synchronisation of Free, Malloc edge cases,
// stream-ordered allocation, pointer attributes, MemGetInfo, host registration, memory pools.
#include <sys/mman.h>
#include <unistd.h>

#include <cstdint>
#include <cstdlib>
#include <limits>
#include <vector>

#include "conformance.h"

#if defined(__SANITIZE_ADDRESS__)
#define INFINIRT_CONFORMANCE_ASAN 1
#elif defined(__has_feature)
#if __has_feature(address_sanitizer)
#define INFINIRT_CONFORMANCE_ASAN 1
#endif
#endif

#ifdef INFINIRT_CONFORMANCE_ASAN
// AddressSanitizer aborts on an impossible allocation by default; S23 needs the allocator to
// report failure, as it does without the sanitizer. ASAN_OPTIONS still overrides this. Default
// visibility: the sanitizer runtime looks the hook up dynamically.
extern "C" __attribute__((visibility("default"))) const char* __asan_default_options() {
  return "allocator_may_return_null=1";
}
#endif

namespace infinirt::conformance {
namespace {

// ---------------------------------------------------------------------------------------------
// S21: freeing NULL is a no-op; anything but the start of a live allocation of the right kind
// is InvalidValue, and leaves live allocations alone.

TEST_F(Conformance, S21_FreeOfNullSucceeds) {
  EXPECT_EQ(infinirtFree(nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtFreeHost(nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtSuccess);
}

TEST_F(Conformance, S21_DoubleFreeIsInvalidValue) {
  void* device = nullptr;
  void* pinned = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMalloc(&device, kBytes));
  ASSERT_OK_OR_SKIP(infinirtMallocHost(&pinned, kBytes));
  EXPECT_EQ(infinirtFree(device), infinirtSuccess);
  EXPECT_EQ(infinirtFree(device), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtFreeHost(pinned), infinirtSuccess);
  EXPECT_EQ(infinirtFreeHost(pinned), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
}

TEST_F(Conformance, S21_FreeOfForeignPointerIsInvalidValue) {
  int on_stack = 0;
  EXPECT_EQ(infinirtFree(&on_stack), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtFreeHost(&on_stack), infinirtErrorInvalidValue);
  void* from_malloc = std::malloc(kBytes);
  ASSERT_NE(from_malloc, nullptr);
  EXPECT_EQ(infinirtFree(from_malloc), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtFreeHost(from_malloc), infinirtErrorInvalidValue);
  std::free(from_malloc);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
}

TEST_F(Conformance, S21_FreeOfInteriorPointerIsInvalidValue) {
  unsigned char* device = NewDeviceMemory(kBytes);
  unsigned char* pinned = NewPinnedMemory(kBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(pinned, nullptr);
  EXPECT_EQ(infinirtFree(device + 16), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtFreeHost(pinned + 16), infinirtErrorInvalidValue);
  // The allocations are still live and whole.
  ASSERT_OK_OR_SKIP(infinirtMemset(device, 0x21, kBytes));
  EXPECT_TRUE(AllBytesAre(ReadBack(device, kBytes).data(), kBytes, 0x21));
  EXPECT_EQ(infinirtFree(device), infinirtSuccess);
  EXPECT_EQ(infinirtFreeHost(pinned), infinirtSuccess);
}

TEST_F(Conformance, S21_FreeOfTheOtherKindIsInvalidValue) {
  void* device = nullptr;
  void* pinned = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMalloc(&device, kBytes));
  ASSERT_OK_OR_SKIP(infinirtMallocHost(&pinned, kBytes));
  EXPECT_EQ(infinirtFreeHost(device), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtFree(pinned), infinirtErrorInvalidValue);
  // The rejected calls freed nothing.
  EXPECT_EQ(infinirtFree(device), infinirtSuccess);
  EXPECT_EQ(infinirtFreeHost(pinned), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S22: Free of Malloc memory synchronises: the legacy stream is idle when it returns.

TEST_F(Conformance, S22_FreeWaitsForPendingLegacyStreamWork) {
  infinirtStream_t blocking = NewStream();
  unsigned char* busy = NewDeviceMemory(kBytes);
  ASSERT_NE(busy, nullptr);
  void* to_free = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMalloc(&to_free, kBytes));
  Gate& gate = NewGate();

  // The legacy stream's memset waits for the gated blocking stream.
  ASSERT_OK_OR_SKIP(gate.Block(blocking));
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(busy, 0x42, kBytes, nullptr));
  ASSERT_EQ(infinirtStreamQuery(nullptr), infinirtErrorNotReady);

  DelayedOpen release(gate);
  EXPECT_EQ(infinirtFree(to_free), infinirtSuccess);
  EXPECT_TRUE(release.started()) << "Free returned while the legacy stream had pending work";
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtStreamQuery(blocking), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S23: Malloc edge cases.

TEST_F(Conformance, S23_MallocOfZeroBytesGivesNull) {
  int marker = 0;
  void* memory = &marker;
  EXPECT_EQ(infinirtMalloc(&memory, 0), infinirtSuccess);
  EXPECT_EQ(memory, nullptr);
  EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
}

TEST_F(Conformance, S23_MallocWithNullOutputIsInvalidValue) {
  EXPECT_EQ(infinirtMalloc(nullptr, kBytes), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
}

TEST_F(Conformance, S23_HugeMallocIsMemoryAllocationAndRuntimeStaysUsable) {
  static_assert(infinirtErrorMemoryAllocation == 2, "CUDA's value");
  for (size_t size : {size_t{1} << 62, std::numeric_limits<size_t>::max()}) {
    void* memory = nullptr;
    EXPECT_EQ(infinirtMalloc(&memory, size), infinirtErrorMemoryAllocation) << size;
    EXPECT_EQ(infinirtGetLastError(), infinirtErrorMemoryAllocation);
  }
  // Not sticky (S19): the runtime goes on working.
  infinirtStream_t stream = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0x13, kBytes, stream));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_TRUE(AllBytesAre(ReadBack(device, kBytes).data(), kBytes, 0x13));
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtSuccess);
}

TEST_F(Conformance, S23_MallocReturns256ByteAlignedPointers) {
  for (size_t size :
       {size_t{1}, size_t{3}, size_t{255}, size_t{257}, size_t{4097}, size_t{1} << 20}) {
    for (int repeat = 0; repeat < 4; ++repeat) {
      unsigned char* memory = NewDeviceMemory(size);
      ASSERT_NE(memory, nullptr);
      EXPECT_EQ(reinterpret_cast<uintptr_t>(memory) % 256, 0u) << "size " << size;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// S24 (in short; tests/stream_ordered covers the details): stream-ordered allocation works
// and the device reports memory pools.

// A backend that emulates stream-ordered allocation without pools reports 0 and is skipped
// for that part only, after the allocation checks.
TEST_F(Conformance, S24_StreamOrderedAllocationWorksAndPoolsAreReported) {
  infinirtStream_t stream = NewStream();
  unsigned char* pinned = NewPinnedMemory(kBytes, 0);
  ASSERT_NE(pinned, nullptr);
  void* memory = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMallocAsync(&memory, kBytes, stream));
  ASSERT_NE(memory, nullptr);
  // Usable by later work in the same stream; freed in stream order after that work.
  EXPECT_EQ(infinirtMemsetAsync(memory, 0x3C, kBytes, stream), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(pinned, memory, kBytes, infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  EXPECT_EQ(infinirtFreeAsync(memory, stream), infinirtSuccess);
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_TRUE(AllBytesAre(pinned, kBytes, 0x3C));
  EXPECT_EQ(infinirtFreeAsync(memory, stream), infinirtErrorInvalidValue) << "double free";
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);

  // Memory of infinirtMalloc is accepted too (as on NVIDIA), freed after the stream's work.
  unsigned char* device_memory = nullptr;
  ASSERT_EQ(infinirtMalloc(reinterpret_cast<void**>(&device_memory), kBytes), infinirtSuccess);
  EXPECT_EQ(infinirtMemsetAsync(device_memory, 0x5A, kBytes, stream), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(pinned, device_memory, kBytes, infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  EXPECT_EQ(infinirtFreeAsync(device_memory, stream), infinirtSuccess);
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_TRUE(AllBytesAre(pinned, kBytes, 0x5A)) << "freed before the work queued on it";
  EXPECT_EQ(infinirtFree(device_memory), infinirtErrorInvalidValue) << "freed already";
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);

  int pools = -1;
  ASSERT_OK_OR_SKIP(infinirtDeviceGetAttribute(&pools, infinirtDevAttrMemoryPoolsSupported, 0));
  if (pools == 0 && SkipsUnsupported()) {
    GTEST_SKIP() << "not supported by " << BackendName() << ": memory pools (attribute 0)";
  }
  EXPECT_EQ(pools, 1);
}

// ---------------------------------------------------------------------------------------------
// S25: PointerGetAttributes.

infinirtPointerAttributes AttributesOf(const void* pointer) {
  infinirtPointerAttributes attributes;
  std::memset(&attributes, 0xCD, sizeof(attributes));
  EXPECT_EQ(infinirtPointerGetAttributes(&attributes, pointer), infinirtSuccess);
  return attributes;
}

TEST_F(Conformance, S25_AttributesOfDeviceMemory) {
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  for (unsigned char* pointer : {device, device + 100, device + kBytes - 1}) {
    SCOPED_TRACE(pointer - device);
    const infinirtPointerAttributes attributes = AttributesOf(pointer);
    EXPECT_EQ(attributes.type, infinirtMemoryTypeDevice);
    EXPECT_EQ(attributes.device, 0);
    EXPECT_EQ(attributes.devicePointer, pointer);
    EXPECT_EQ(attributes.hostPointer, nullptr);
  }
}

TEST_F(Conformance, S25_AttributesOfPinnedHostMemory) {
  unsigned char* pinned = NewPinnedMemory(kBytes);
  void* host_alloc = nullptr;
  ASSERT_NE(pinned, nullptr);
  ASSERT_OK_OR_SKIP(infinirtHostAlloc(&host_alloc, kBytes, infinirtHostAllocPortable));
  auto* allocated = static_cast<unsigned char*>(host_alloc);
  for (unsigned char* pointer :
       {pinned, pinned + 100, pinned + kBytes - 1, allocated, allocated + 7}) {
    const infinirtPointerAttributes attributes = AttributesOf(pointer);
    EXPECT_EQ(attributes.type, infinirtMemoryTypeHost);
    EXPECT_EQ(attributes.device, 0);
    EXPECT_EQ(attributes.devicePointer, pointer);
    EXPECT_EQ(attributes.hostPointer, pointer);
  }
  EXPECT_EQ(infinirtFreeHost(host_alloc), infinirtSuccess);
}

TEST_F(Conformance, S25_AttributesOfUnregisteredMemory) {
  int on_stack = 0;
  void* from_malloc = std::malloc(kBytes);
  ASSERT_NE(from_malloc, nullptr);
  EXPECT_EQ(AttributesOf(&on_stack).type, infinirtMemoryTypeUnregistered);
  EXPECT_EQ(AttributesOf(from_malloc).type, infinirtMemoryTypeUnregistered);
  std::free(from_malloc);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtSuccess);
}

TEST_F(Conformance, S25_NullAttributesIsInvalidValue) {
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  EXPECT_EQ(infinirtPointerGetAttributes(nullptr, device), infinirtErrorInvalidValue);
}

// ---------------------------------------------------------------------------------------------
// S26: MemGetInfo.

TEST_F(Conformance, S26_MemGetInfoReportsFreeWithinTotal) {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  ASSERT_OK_OR_SKIP(infinirtMemGetInfo(&free_bytes, &total_bytes));
  EXPECT_GT(total_bytes, 0u);
  EXPECT_LE(free_bytes, total_bytes);
  // One output may be NULL, as on NVIDIA: the other is filled.
  size_t only_total = 0;
  EXPECT_EQ(infinirtMemGetInfo(nullptr, &only_total), infinirtSuccess);
  EXPECT_EQ(only_total, total_bytes);
  size_t only_free = SIZE_MAX;
  EXPECT_EQ(infinirtMemGetInfo(&only_free, nullptr), infinirtSuccess);
  EXPECT_LE(only_free, total_bytes);
  EXPECT_EQ(infinirtMemGetInfo(nullptr, nullptr), infinirtErrorInvalidValue);
}

// ---------------------------------------------------------------------------------------------
// S43: host memory registration.

TEST_F(Conformance, S43_RegisteredHostMemoryIsKnownAsHostMemory) {
  std::vector<unsigned char>& host = NewPageableMemory(kBytes, 0);
  int current = -1;
  ASSERT_EQ(infinirtGetDevice(&current), infinirtSuccess);
  ASSERT_OK_OR_SKIP(infinirtHostRegister(host.data(), kBytes, infinirtHostRegisterMapped));
  infinirtPointerAttributes attributes = AttributesOf(host.data() + 10);
  EXPECT_EQ(attributes.type, infinirtMemoryTypeHost);
  EXPECT_EQ(attributes.device, current);
  EXPECT_EQ(attributes.hostPointer, host.data() + 10);
  unsigned int flags = 99;
  EXPECT_EQ(infinirtHostGetFlags(&flags, host.data() + 10), infinirtSuccess);
  EXPECT_EQ(flags, static_cast<unsigned int>(infinirtHostRegisterMapped));
  void* device_pointer = nullptr;
  EXPECT_EQ(infinirtHostGetDevicePointer(&device_pointer, host.data(), 0), infinirtSuccess);
  EXPECT_EQ(device_pointer, host.data()) << "unified addressing: the same address";
  // Copies with MemcpyDefault see it as host memory, asynchronous ones included.
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  infinirtStream_t stream = NewStream();
  ASSERT_EQ(infinirtMemset(device, 0x6B, kBytes), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(host.data(), device, kBytes, infinirtMemcpyDefault, stream),
            infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(host.data(), kBytes, 0x6B));
  // A copy running past the registered range is refused, as with any allocation.
  EXPECT_EQ(infinirtMemcpy(host.data() + 1, device, kBytes, infinirtMemcpyDeviceToHost),
            infinirtErrorInvalidValue);
  infinirtGetLastError();

  ASSERT_EQ(infinirtHostUnregister(host.data()), infinirtSuccess);
  EXPECT_EQ(AttributesOf(host.data()).type, infinirtMemoryTypeUnregistered);
  EXPECT_EQ(infinirtHostGetFlags(&flags, host.data()), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtHostUnregister(host.data()), infinirtErrorHostMemoryNotRegistered);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorHostMemoryNotRegistered);
  // Pageable again: still usable memory of the program.
  ASSERT_EQ(infinirtMemcpy(host.data(), device, kBytes, infinirtMemcpyDeviceToHost),
            infinirtSuccess);
}

TEST_F(Conformance, S43_RegistrationRefusesOverlapsAndBadArguments) {
  std::vector<unsigned char>& host = NewPageableMemory(4 * kBytes, 0);
  ASSERT_OK_OR_SKIP(infinirtHostRegister(host.data() + kBytes, kBytes, 0));
  EXPECT_EQ(infinirtHostRegister(host.data() + kBytes, kBytes, 0),
            infinirtErrorHostMemoryAlreadyRegistered);
  EXPECT_EQ(infinirtHostRegister(host.data(), 4 * kBytes, 0),
            infinirtErrorHostMemoryAlreadyRegistered)
      << "a range around a registered one";
  EXPECT_EQ(infinirtHostRegister(host.data() + kBytes + 100, 10, 0),
            infinirtErrorHostMemoryAlreadyRegistered)
      << "a range inside a registered one";
  EXPECT_EQ(infinirtHostUnregister(host.data() + kBytes + 100),
            infinirtErrorHostMemoryNotRegistered)
      << "not the start of the range";
  unsigned char* pinned = NewPinnedMemory(kBytes);
  ASSERT_NE(pinned, nullptr);
  EXPECT_EQ(infinirtHostRegister(pinned, kBytes, 0), infinirtErrorHostMemoryAlreadyRegistered);
  EXPECT_EQ(infinirtHostUnregister(pinned), infinirtErrorHostMemoryNotRegistered);
  unsigned char* device = NewDeviceMemory(kBytes);
  EXPECT_EQ(infinirtHostRegister(device, kBytes, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtHostRegister(nullptr, kBytes, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtHostRegister(host.data(), 0, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtHostRegister(host.data(), kBytes, 0x100), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtHostRegister(host.data(), kBytes, infinirtHostRegisterIoMemory),
            infinirtErrorNotSupported);
  EXPECT_EQ(infinirtHostUnregister(nullptr), infinirtErrorInvalidValue);
  void* device_pointer = nullptr;
  unsigned int flags = 0;
  EXPECT_EQ(infinirtHostGetDevicePointer(&device_pointer, host.data() + kBytes, 1),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtHostGetDevicePointer(nullptr, host.data() + kBytes, 0),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtHostGetDevicePointer(&device_pointer, host.data(), 0),
            infinirtErrorInvalidValue)
      << "pageable memory";
  EXPECT_EQ(infinirtHostGetDevicePointer(&device_pointer, device, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtHostGetFlags(nullptr, pinned), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtHostGetFlags(&flags, device), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
  // Nothing of that changed the registration.
  EXPECT_EQ(infinirtHostUnregister(host.data() + kBytes), infinirtSuccess);
}

// A range with a page that is not mapped cannot be registered (InvalidValue, NVIDIA's answer),
// and nothing of it is.
TEST_F(Conformance, S43_RegisteringARangeWithUnmappedPagesIsInvalidValue) {
  const size_t page = static_cast<size_t>(sysconf(_SC_PAGESIZE));
  void* mapped =
      mmap(nullptr, 3 * page, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  ASSERT_NE(mapped, MAP_FAILED);
  auto* pages = static_cast<unsigned char*>(mapped);
  ASSERT_EQ(munmap(pages + page, page), 0);  // a hole in the middle
  const infinirtError_t registered = infinirtHostRegister(pages, 3 * page, 0);
  if (registered == infinirtErrorNotSupported && SkipsUnsupported()) {
    munmap(pages, page);
    munmap(pages + 2 * page, page);
    GTEST_SKIP() << "not supported by " << BackendName() << ": infinirtHostRegister";
  }
  EXPECT_EQ(registered, infinirtErrorInvalidValue);
  EXPECT_EQ(AttributesOf(pages).type, infinirtMemoryTypeUnregistered);
  // The mapped pages alone register.
  EXPECT_EQ(infinirtHostRegister(pages + 2 * page, page, 0), infinirtSuccess);
  unsigned int flags = 0;
  EXPECT_EQ(infinirtHostGetFlags(&flags, pages + 2 * page), infinirtSuccess);
  EXPECT_EQ(flags, static_cast<unsigned int>(infinirtHostRegisterMapped))
      << "registered memory is mapped too (unified addressing)";
  EXPECT_EQ(infinirtHostUnregister(pages + 2 * page), infinirtSuccess);
  infinirtGetLastError();
  munmap(pages, page);
  munmap(pages + 2 * page, page);
}

TEST_F(Conformance, S43_DeviceResetUnregistersHostMemory) {
  std::vector<unsigned char>& host = NewPageableMemory(kBytes, 0);
  ASSERT_OK_OR_SKIP(infinirtHostRegister(host.data(), kBytes, 0));
  ASSERT_EQ(infinirtDeviceReset(), infinirtSuccess);
  EXPECT_EQ(AttributesOf(host.data()).type, infinirtMemoryTypeUnregistered);
  EXPECT_EQ(infinirtHostUnregister(host.data()), infinirtErrorHostMemoryNotRegistered);
  infinirtGetLastError();
  host[0] = 1;  // the memory is the program's still
}

// The flags HostAlloc was given, and Mapped for every pinned range: unified addressing maps them
// all into the devices' address space, and NVIDIA's runtime reports that.
TEST_F(Conformance, S43_HostGetFlagsGivesTheFlagsOfHostAlloc) {
  void* portable = nullptr;
  ASSERT_OK_OR_SKIP(infinirtHostAlloc(&portable, kBytes, infinirtHostAllocPortable));
  unsigned int flags = 99;
  EXPECT_EQ(infinirtHostGetFlags(&flags, portable), infinirtSuccess);
  EXPECT_EQ(flags, static_cast<unsigned int>(infinirtHostAllocPortable | infinirtHostAllocMapped));
  EXPECT_EQ(infinirtFreeHost(portable), infinirtSuccess);
  void* plain = nullptr;
  ASSERT_EQ(infinirtMallocHost(&plain, kBytes), infinirtSuccess);
  EXPECT_EQ(infinirtHostGetFlags(&flags, plain), infinirtSuccess);
  EXPECT_EQ(flags, static_cast<unsigned int>(infinirtHostAllocMapped));
  void* device_pointer = nullptr;
  EXPECT_EQ(infinirtHostGetDevicePointer(&device_pointer, plain, 0), infinirtSuccess);
  EXPECT_EQ(device_pointer, plain);
  EXPECT_EQ(infinirtFreeHost(plain), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S61: memory pools of the program's own.

infinirtMemPoolProps PoolProps(int device, size_t max_size = 0) {
  infinirtMemPoolProps props{};
  props.allocType = infinirtMemAllocationTypePinned;
  props.location = {infinirtMemLocationTypeDevice, device};
  props.maxSize = max_size;
  return props;
}

uint64_t PoolUsage(infinirtMemPool_t pool) {
  uint64_t used = 12345;
  EXPECT_EQ(infinirtMemPoolGetAttribute(pool, infinirtMemPoolAttrUsedMemCurrent, &used),
            infinirtSuccess);
  return used;
}

TEST_F(Conformance, S61_MemoryFromAPoolOfOnesOwnIsStreamOrdered) {
  int device = 0;
  ASSERT_EQ(infinirtGetDevice(&device), infinirtSuccess);
  const infinirtMemPoolProps props = PoolProps(device);
  infinirtMemPool_t pool = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMemPoolCreate(&pool, &props));
  infinirtMemPool_t default_pool = nullptr;
  ASSERT_EQ(infinirtDeviceGetDefaultMemPool(&default_pool, device), infinirtSuccess);
  EXPECT_NE(pool, default_pool);
  const uint64_t default_used = PoolUsage(default_pool);
  infinirtStream_t stream = NewStream();
  void* memory = nullptr;
  ASSERT_EQ(infinirtMallocFromPoolAsync(&memory, kBytes, pool, stream), infinirtSuccess);
  ASSERT_NE(memory, nullptr);
  EXPECT_GE(PoolUsage(pool), kBytes);
  EXPECT_EQ(PoolUsage(default_pool), default_used) << "the default pool served the allocation";
  infinirtPointerAttributes attributes{};
  EXPECT_EQ(infinirtPointerGetAttributes(&attributes, memory), infinirtSuccess);
  EXPECT_EQ(attributes.type, infinirtMemoryTypeDevice);
  EXPECT_EQ(infinirtMemsetAsync(memory, 0x5a, kBytes, stream), infinirtSuccess);
  std::vector<unsigned char>& host = NewPageableMemory(kBytes);
  EXPECT_EQ(infinirtMemcpyAsync(host.data(), memory, kBytes, infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  EXPECT_EQ(infinirtFreeAsync(memory, stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(host[0], 0x5a);
  EXPECT_EQ(host[kBytes - 1], 0x5a);
  EXPECT_EQ(PoolUsage(pool), 0u);
  EXPECT_EQ(infinirtMemPoolTrimTo(pool, 0), infinirtSuccess);
  uint64_t reserved = 99;
  EXPECT_EQ(infinirtMemPoolGetAttribute(pool, infinirtMemPoolAttrReservedMemCurrent, &reserved),
            infinirtSuccess);
  EXPECT_EQ(reserved, 0u) << "TrimTo(0) after a synchronisation releases everything";
  EXPECT_EQ(infinirtMemPoolDestroy(pool), infinirtSuccess);
  // A pool the program leaves, with memory allocated, is released at exit (LeakSanitizer, in
  // the sanitizer builds, fails the suite otherwise).
  infinirtMemPool_t left = nullptr;
  ASSERT_EQ(infinirtMemPoolCreate(&left, &props), infinirtSuccess);
  void* left_memory = nullptr;
  EXPECT_EQ(infinirtMallocFromPoolAsync(&left_memory, kBytes, left, stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
}

TEST_F(Conformance, S61_MallocAsyncAllocatesFromTheDevicesCurrentPool) {
  int device = 0;
  ASSERT_EQ(infinirtGetDevice(&device), infinirtSuccess);
  const infinirtMemPoolProps props = PoolProps(device);
  infinirtMemPool_t pool = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMemPoolCreate(&pool, &props));
  ASSERT_EQ(infinirtDeviceSetMemPool(device, pool), infinirtSuccess);
  infinirtMemPool_t current = nullptr;
  EXPECT_EQ(infinirtDeviceGetMemPool(&current, device), infinirtSuccess);
  EXPECT_EQ(current, pool);
  infinirtStream_t stream = NewStream();
  void* memory = nullptr;
  ASSERT_EQ(infinirtMallocAsync(&memory, kBytes, stream), infinirtSuccess);
  EXPECT_GE(PoolUsage(pool), kBytes);
  // Destroyed with memory still allocated: the memory stays usable until it is freed, and the
  // device's default pool is current again.
  EXPECT_EQ(infinirtMemPoolDestroy(pool), infinirtSuccess);
  infinirtMemPool_t default_pool = nullptr;
  ASSERT_EQ(infinirtDeviceGetDefaultMemPool(&default_pool, device), infinirtSuccess);
  EXPECT_EQ(infinirtDeviceGetMemPool(&current, device), infinirtSuccess);
  EXPECT_EQ(current, default_pool);
  EXPECT_EQ(infinirtMemsetAsync(memory, 7, kBytes, stream), infinirtSuccess);
  std::vector<unsigned char>& host = NewPageableMemory(kBytes);
  EXPECT_EQ(infinirtMemcpyAsync(host.data(), memory, kBytes, infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  EXPECT_EQ(infinirtFreeAsync(memory, stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(host[kBytes - 1], 7);
  EXPECT_EQ(infinirtMemPoolGetAttribute(pool, infinirtMemPoolAttrUsedMemCurrent, &current),
            infinirtErrorInvalidResourceHandle);
}

TEST_F(Conformance, S61_APoolHoldsNoMoreThanItsMaxSize) {
  int device = 0;
  ASSERT_EQ(infinirtGetDevice(&device), infinirtSuccess);
  const infinirtMemPoolProps props = PoolProps(device, size_t{2} << 20);
  infinirtMemPool_t pool = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMemPoolCreate(&pool, &props));
  infinirtStream_t stream = NewStream();
  void* small = nullptr;
  void* large = reinterpret_cast<void*>(0x1);
  EXPECT_EQ(infinirtMallocFromPoolAsync(&small, size_t{1} << 20, pool, stream), infinirtSuccess);
  EXPECT_EQ(infinirtMallocFromPoolAsync(&large, size_t{4} << 20, pool, stream),
            infinirtErrorMemoryAllocation);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorMemoryAllocation);
  EXPECT_EQ(infinirtFreeAsync(small, stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(infinirtMemPoolDestroy(pool), infinirtSuccess);
}

TEST_F(Conformance, S61_PoolAccessIsTheOwnDevicesAndWhatIsGranted) {
  int device = 0;
  ASSERT_EQ(infinirtGetDevice(&device), infinirtSuccess);
  const infinirtMemPoolProps props = PoolProps(device);
  infinirtMemPool_t pool = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMemPoolCreate(&pool, &props));
  infinirtMemLocation own{infinirtMemLocationTypeDevice, device};
  infinirtMemAccessFlags flags = infinirtMemAccessFlagsProtNone;
  ASSERT_OK_OR_SKIP(infinirtMemPoolGetAccess(&flags, pool, &own));
  EXPECT_EQ(flags, infinirtMemAccessFlagsProtReadWrite);
  const infinirtMemAccessDesc revoke{own, infinirtMemAccessFlagsProtNone};
  EXPECT_EQ(infinirtMemPoolSetAccess(pool, &revoke, 1), infinirtErrorInvalidValue);
  const infinirtMemAccessDesc read_only{own, infinirtMemAccessFlagsProtRead};
  EXPECT_EQ(infinirtMemPoolSetAccess(pool, &read_only, 1), infinirtErrorInvalidValue);
  const infinirtMemAccessDesc host{{infinirtMemLocationTypeHost, 0},
                                   infinirtMemAccessFlagsProtReadWrite};
  EXPECT_EQ(infinirtMemPoolSetAccess(pool, &host, 1), infinirtErrorInvalidValue);
  const infinirtMemAccessDesc nowhere{{infinirtMemLocationTypeDevice, 9999},
                                      infinirtMemAccessFlagsProtReadWrite};
  EXPECT_EQ(infinirtMemPoolSetAccess(pool, &nowhere, 1), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtMemPoolSetAccess(pool, nullptr, 1), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolSetAccess(pool, nullptr, 0), infinirtSuccess);
  EXPECT_EQ(infinirtMemPoolGetAccess(nullptr, pool, &own), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolGetAccess(&flags, pool, nullptr), infinirtErrorInvalidValue);
  // A location naming no device: InvalidValue here, as NVIDIA's runtime answers.
  infinirtMemLocation no_device{infinirtMemLocationTypeDevice, 9999};
  EXPECT_EQ(infinirtMemPoolGetAccess(&flags, pool, &no_device), infinirtErrorInvalidValue);
  no_device.id = -1;
  EXPECT_EQ(infinirtMemPoolGetAccess(&flags, pool, &no_device), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolGetAccess(&flags, pool, &own), infinirtSuccess);
  EXPECT_EQ(flags, infinirtMemAccessFlagsProtReadWrite) << "a refused call changed the access";
  if (device_count() >= 2) {
    infinirtMemLocation other{infinirtMemLocationTypeDevice, device == 0 ? 1 : 0};
    EXPECT_EQ(infinirtMemPoolGetAccess(&flags, pool, &other), infinirtSuccess);
    EXPECT_EQ(flags, infinirtMemAccessFlagsProtNone) << "another device has no access at first";
    // A valid grant beside a bad one: refused as a whole.
    const infinirtMemAccessDesc both[] = {{other, infinirtMemAccessFlagsProtReadWrite}, revoke};
    EXPECT_EQ(infinirtMemPoolSetAccess(pool, both, 2), infinirtErrorInvalidValue);
    EXPECT_EQ(infinirtMemPoolGetAccess(&flags, pool, &other), infinirtSuccess);
    EXPECT_EQ(flags, infinirtMemAccessFlagsProtNone);
    EXPECT_EQ(infinirtMemPoolSetAccess(pool, both, 1), infinirtSuccess);
    EXPECT_EQ(infinirtMemPoolGetAccess(&flags, pool, &other), infinirtSuccess);
    EXPECT_EQ(flags, infinirtMemAccessFlagsProtReadWrite);
  }
  EXPECT_EQ(infinirtMemPoolDestroy(pool), infinirtSuccess);
}

TEST_F(Conformance, S61_BadPoolCallsAreRefused) {
  int device = 0;
  ASSERT_EQ(infinirtGetDevice(&device), infinirtSuccess);
  infinirtMemPoolProps props = PoolProps(device);
  infinirtMemPool_t pool = nullptr;
  ASSERT_OK_OR_SKIP(infinirtMemPoolCreate(&pool, &props));
  EXPECT_EQ(infinirtMemPoolDestroy(pool), infinirtSuccess);
  // A pool destroyed before: InvalidValue (NVIDIA's answer); a handle that never was a pool:
  // InvalidResourceHandle.
  EXPECT_EQ(infinirtMemPoolDestroy(pool), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolDestroy(nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolDestroy(reinterpret_cast<infinirtMemPool_t>(uintptr_t{0x12345678})),
            infinirtErrorInvalidResourceHandle);
  infinirtMemPool_t made = nullptr;
  EXPECT_EQ(infinirtMemPoolCreate(nullptr, &props), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolCreate(&made, nullptr), infinirtErrorInvalidValue);
  props.allocType = infinirtMemAllocationTypeInvalid;
  EXPECT_EQ(infinirtMemPoolCreate(&made, &props), infinirtErrorInvalidValue);
  props = PoolProps(device);
  props.location.type = static_cast<infinirtMemLocationType>(99);
  EXPECT_EQ(infinirtMemPoolCreate(&made, &props), infinirtErrorInvalidValue);
  props = PoolProps(9999);  // a location naming no device: NVIDIA's runtime answers InvalidValue
  EXPECT_EQ(infinirtMemPoolCreate(&made, &props), infinirtErrorInvalidValue);
  props = PoolProps(-1);
  EXPECT_EQ(infinirtMemPoolCreate(&made, &props), infinirtErrorInvalidValue);
  props = PoolProps(device);
  props.handleTypes = static_cast<infinirtMemAllocationHandleType>(0x100);
  EXPECT_EQ(infinirtMemPoolCreate(&made, &props), infinirtErrorInvalidValue);
  EXPECT_EQ(made, nullptr) << "a refused call made a pool";
  infinirtMemPool_t default_pool = nullptr;
  ASSERT_EQ(infinirtDeviceGetDefaultMemPool(&default_pool, device), infinirtSuccess);
  EXPECT_EQ(infinirtMemPoolDestroy(default_pool), infinirtErrorInvalidValue);
  infinirtStream_t stream = NewStream();
  void* memory = nullptr;
  EXPECT_EQ(infinirtMallocFromPoolAsync(&memory, kBytes, pool, stream),
            infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtMallocFromPoolAsync(nullptr, kBytes, default_pool, stream),
            infinirtErrorInvalidValue);
  // The default pool serves MallocFromPoolAsync too.
  EXPECT_EQ(infinirtMallocFromPoolAsync(&memory, kBytes, default_pool, stream), infinirtSuccess);
  EXPECT_EQ(infinirtFreeAsync(memory, stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  if (device_count() < 2) return;  // the rest needs a second device
  props = PoolProps(device == 0 ? 1 : 0);
  ASSERT_EQ(infinirtMemPoolCreate(&pool, &props), infinirtSuccess);
  EXPECT_EQ(infinirtMallocFromPoolAsync(&memory, kBytes, pool, stream), infinirtErrorInvalidValue)
      << "a pool of another device than the stream's";
  EXPECT_EQ(infinirtDeviceSetMemPool(device, pool), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtMemPoolDestroy(pool), infinirtSuccess);
}

}  // namespace
}  // namespace infinirt::conformance
