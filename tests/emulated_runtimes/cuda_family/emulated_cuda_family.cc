// A host-emulated CUDA-shaped runtime (tests only; see emu_core.h): the CUDA Runtime functions
// the CUDA-family plugin resolves, exported under EMU_PREFIX (cuda, musa, mc, hc), with CUDA's
// enum values and error numbers. Built once per vendor with that vendor's library name and
// ABI variations:
//   EMU_PREFIX                token: cuda, musa, mc, hc
//   EMU_VENDOR                "NVIDIA", ...: names the EMU_<VENDOR>_* variables
//   EMU_INSTANTIATE_ARGS      3 (CUDA >= 12) or 5 (CUDA 11 style) for <prefix>GraphInstantiate
//   EMU_WITH_FLAGS            exports <prefix>GraphInstantiateWithFlags
//   EMU_ASYNC_ALLOC           exports <prefix>MallocAsync / FreeAsync
//   EMU_PROPERTIES_V2         names <prefix>GetDeviceProperties as ..._v2 (CUDA >= 12)
//   EMU_OMIT_MEMSET_ASYNC     leaves <prefix>MemsetAsync out (a runtime missing a symbol)
//   EMU_SPECIAL_STREAMS       knows CUDA's special stream handles 0x1 and 0x2 (else rejects them)
//   EMU_MALLOC_HOST_FLAGS     <prefix>MallocHost takes a third argument, flags (MACA's form)
//   EMU_OMIT_HOST_ALLOC       leaves <prefix>HostAlloc out
//   EMU_HIP_ATTRIBUTES        numbers device attributes in HIP's order, not CUDA's
#include <algorithm>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>

#include "emu_core.h"

#define EMU_CAT2(a, b) a##b
#define EMU_CAT(a, b) EMU_CAT2(a, b)
#define EMU_STR2(a) #a
#define EMU_STR(a) EMU_STR2(a)
#define EMU_FN(name) EMU_CAT(EMU_PREFIX, name)
#define EMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace emu = infinirt::emu;

namespace {

// CUDA's error numbers, which InfiniRT's are.
constexpr int kSuccess = 0;
constexpr int kInvalidValue = 1;
constexpr int kInitializationError = 3;
constexpr int kInvalidMemcpyDirection = 21;
constexpr int kInvalidDevice = 101;
constexpr int kUnsupportedLimit = 215;
constexpr int kPeerAccessAlreadyEnabled = 704;
constexpr int kPeerAccessNotEnabled = 705;
constexpr int kHostMemoryAlreadyRegistered = 712;
constexpr int kHostMemoryNotRegistered = 713;
constexpr int kInvalidResourceHandle = 400;
constexpr int kIllegalState = 401;
constexpr int kStreamCaptureUnsupported = 900;
constexpr int kStreamCaptureImplicit = 906;
constexpr int kUnknown = 999;

// CUDA's special stream handles. A runtime built with EMU_SPECIAL_STREAMS knows them; the others
// take them for stream objects they never made and answer cudaErrorInvalidResourceHandle, as
// a runtime that does not know them would at best.
#ifdef EMU_SPECIAL_STREAMS
void* const kLegacyStream = reinterpret_cast<void*>(0x1);
void* const kPerThreadStream = reinterpret_cast<void*>(0x2);
#else
void* const kLegacyStream = nullptr;
void* const kPerThreadStream = nullptr;
#endif

struct Init {
  Init() { emu::Configure(EMU_VENDOR); }
} g_init;

std::string Name(const char* suffix) { return std::string(EMU_STR(EMU_PREFIX)) + suffix; }

// Like the CUDA Runtime, the emulation registers a teardown at exit when it is first called;
// a call after it answers cudaErrorCudartUnloading and says on stderr that it came too late
// (the real runtime has freed its state by then and may crash instead). Tests fail on that line.
constexpr int kCudartUnloading = 4;
std::atomic<bool> g_torn_down{false};

void TearDownAtExit() { g_torn_down.store(true); }

bool CalledAfterTeardown(const std::string& name) {
  static const bool registered = std::atexit(&TearDownAtExit) == 0;
  (void)registered;
  if (!g_torn_down.load()) return false;
  std::fprintf(stderr, "emulated runtime: %s called after the runtime's teardown at exit\n",
               name.c_str());
  return true;
}

// Every function starts here: CUDA's implicit device 0, the record, injected failures.
int Enter(const char* suffix, const std::string& arguments) {
  const std::string name = Name(suffix);
  if (CalledAfterTeardown(name)) return kCudartUnloading;
  if (emu::CurrentDevice() < 0) emu::SetCurrentDevice(0);
  emu::Record(name.c_str(), arguments);
  return emu::InjectedFailure(name.c_str());
}

#define ENTER(suffix, arguments)                                        \
  do {                                                                  \
    if (const int injected = Enter(suffix, arguments)) return injected; \
  } while (0)

std::string P(const void* p) { return emu::Pointer(p); }
std::string N(unsigned long long n) { return std::to_string(n); }

// The CPU backend's answer (InfiniRT's numbers are CUDA's). The CPU backend refuses a blocking
// call made from a host function (NotPermitted). CUDA forbids such calls without promising an
// answer (it "may" return cudaErrorNotPermitted), so the plugin refuses them itself; here they
// answer cudaErrorUnknown, with a line on stderr, so that a plugin passing one on is caught.
int Status(infinirtError_t error) {
  if (error != infinirtErrorNotPermitted) return static_cast<int>(error);
  std::fprintf(stderr,
               "emulated runtime: a blocking call from a host function, which CUDA forbids\n");
  return kUnknown;
}

// A copy's direction checked against the memory the runtime handed out.
int CheckDirection(void* dst, const void* src, size_t count, int kind) {
  const bool dst_device = emu::KindOf(dst, count) == emu::MemoryKind::kDevice;
  const bool src_device = emu::KindOf(src, count) == emu::MemoryKind::kDevice;
  switch (kind) {
    case 0:
      return !dst_device && !src_device ? kSuccess : kInvalidMemcpyDirection;
    case 1:
      return dst_device && !src_device ? kSuccess : kInvalidMemcpyDirection;
    case 2:
      return !dst_device && src_device ? kSuccess : kInvalidMemcpyDirection;
    case 3:
      return dst_device && src_device ? kSuccess : kInvalidMemcpyDirection;
    case 4:
      return kSuccess;
    default:
      return kInvalidMemcpyDirection;
  }
}

enum infinirtMemcpyKind ResolvedKind(void* dst, const void* src, size_t count, int kind) {
  if (kind != 4) return static_cast<enum infinirtMemcpyKind>(kind);
  const bool dst_device = emu::KindOf(dst, count) == emu::MemoryKind::kDevice;
  const bool src_device = emu::KindOf(src, count) == emu::MemoryKind::kDevice;
  return static_cast<enum infinirtMemcpyKind>((src_device ? 2 : 0) + (dst_device ? 1 : 0));
}

bool Resolve(void* handle, infinirtPluginStream_t* cpu, emu::Stream** stream) {
  return emu::CpuStream(handle, kLegacyStream, kPerThreadStream, cpu, stream);
}

bool ValidDevice(int device) { return device >= 0 && device < emu::DeviceCount(); }

emu::Event* EventOf(void* handle) {
  return emu::IsLive(handle) ? static_cast<emu::Event*>(handle) : nullptr;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Devices and errors

EMU_EXPORT int EMU_FN(GetDeviceCount)(int* count) {
  ENTER("GetDeviceCount", "");
  if (count == nullptr) return kInvalidValue;
  if (emu::InitFails()) return emu::InitError() == 1 ? kInitializationError : emu::InitError();
  *count = emu::DeviceCount();
  return kSuccess;
}

EMU_EXPORT int EMU_FN(SetDevice)(int device) {
  ENTER("SetDevice", N(device));
  if (device < 0 || device >= emu::DeviceCount()) return kInvalidDevice;
  emu::SetCurrentDevice(device);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(GetDevice)(int* device) {
  ENTER("GetDevice", "");
  if (device == nullptr) return kInvalidValue;
  *device = emu::CurrentDevice();
  return kSuccess;
}

EMU_EXPORT int EMU_FN(DeviceSynchronize)(void) {
  ENTER("DeviceSynchronize", "");
  return Status(emu::Cpu().DeviceSynchronize(0));
}

EMU_EXPORT int EMU_FN(DeviceReset)(void) {
  ENTER("DeviceReset", "");
  return Status(emu::Cpu().DeviceSynchronize(0));
}

EMU_EXPORT int EMU_FN(RuntimeGetVersion)(int* version) {
  ENTER("RuntimeGetVersion", "");
  *version = 12080;
  return kSuccess;
}

EMU_EXPORT int EMU_FN(DriverGetVersion)(int* version) {
  ENTER("DriverGetVersion", "");
  const char* driver = std::getenv("EMU_" EMU_VENDOR "_DRIVER_VERSION");
  *version = driver != nullptr ? std::atoi(driver) : 12080;
  return kSuccess;
}

// The facts the emulated devices report for these attributes, unlike the CPU backend's (a warp
// of 1 thread, compute capability 0.0), so that an attribute asked by a wrong number cannot
// match its properties by chance.
constexpr int kWarpSize = 32;
constexpr int kComputeMajor = 8;
constexpr int kComputeMinor = 9;
constexpr int kMultiprocessors = 6;

#ifdef EMU_HIP_ATTRIBUTES
// HIP's numbers (hipDeviceAttribute_t, HIP 5 and later) of the attributes the plugin asks by
// CUDA's numbers; InfiniRT's (CUDA's) attribute for each, -1 for one this emulation lacks.
int CudaAttributeOf(int hip_attribute) {
  switch (hip_attribute) {
    case 10:
      return infinirtDevAttrCooperativeLaunch;
    case 16:
      return infinirtDevAttrIntegrated;
    case 23:
      return infinirtDevAttrComputeCapabilityMajor;
    case 61:
      return infinirtDevAttrComputeCapabilityMinor;
    case 63:
      return infinirtDevAttrMultiProcessorCount;
    case 75:
      return infinirtDevAttrMaxSharedMemoryPerBlockOptin;
    case 76:
      return infinirtDevAttrMaxSharedMemoryPerMultiprocessor;
    case 87:
      return infinirtDevAttrWarpSize;
    default:
      return -1;
  }
}
#else
int CudaAttributeOf(int attribute) { return attribute; }
#endif

EMU_EXPORT int EMU_FN(DeviceGetAttribute)(int* value, int attr_number, int device) {
  ENTER("DeviceGetAttribute", N(attr_number) + " " + N(device));
  if (device < 0 || device >= emu::DeviceCount()) return kInvalidDevice;
  if (value == nullptr) return kInvalidValue;
  const int attr = CudaAttributeOf(attr_number);
  if (attr < 0) return kInvalidValue;
  switch (attr) {
    case infinirtDevAttrWarpSize:
      *value = kWarpSize;
      return kSuccess;
    case infinirtDevAttrComputeCapabilityMajor:
      *value = kComputeMajor;
      return kSuccess;
    case infinirtDevAttrComputeCapabilityMinor:
      *value = kComputeMinor;
      return kSuccess;
    case infinirtDevAttrMultiProcessorCount:
      *value = kMultiprocessors;
      return kSuccess;
    default:
      break;
  }
  // Each emulated device has a PCI address of its own: bus 0, its index as the device number.
  if (attr == infinirtDevAttrPciDomainId || attr == infinirtDevAttrPciBusId) {
    *value = 0;
    return kSuccess;
  }
  if (attr == infinirtDevAttrPciDeviceId) {
    *value = device + 1;  // device 0 of bus 0 is the host bridge
    return kSuccess;
  }
  return Status(
      emu::Cpu().DeviceGetAttribute(0, value, static_cast<enum infinirtDeviceAttr>(attr)));
}

#ifdef EMU_PROPERTIES_V2
#define EMU_PROPERTIES_NAME GetDeviceProperties_v2
#else
#define EMU_PROPERTIES_NAME GetDeviceProperties
#endif
EMU_EXPORT int EMU_FN(EMU_PROPERTIES_NAME)(void* prop, int device) {
  ENTER(EMU_STR(EMU_PROPERTIES_NAME), N(device));
  if (device < 0 || device >= emu::DeviceCount()) return kInvalidDevice;
  std::memset(prop, 0, 1024);  // smaller than any version of cudaDeviceProp
  const std::string name = std::string("Emulated ") + EMU_VENDOR + " device " + N(device);
  std::memcpy(prop, name.c_str(), name.size() + 1);
  // Some numbers, where CUDA 12's cudaDeviceProp has them (the version this runtime reports).
  auto store = [prop](size_t offset, int value) {
    std::memcpy(static_cast<char*>(prop) + offset, &value, sizeof value);
  };
  store(308, kWarpSize);
  store(360, kComputeMajor);
  store(364, kComputeMinor);
  store(384, 1);  // deviceOverlap, which CUDA 13 dropped
  store(388, kMultiprocessors);
  return kSuccess;
}

EMU_EXPORT const char* EMU_FN(GetErrorName)(int error) {
  static thread_local std::string name;
  name = Name("ErrorUnknown");
  switch (error) {
#define EMU_ERROR_NAME_(suffix, number, text) \
  case number:                                \
    name = Name(#suffix);                     \
    break;
    INFINIRT_ERROR_LIST(EMU_ERROR_NAME_)
#undef EMU_ERROR_NAME_
    default:
      break;
  }
  return name.c_str();
}

EMU_EXPORT const char* EMU_FN(GetErrorString)(int error) { return EMU_FN(GetErrorName)(error); }

// ---------------------------------------------------------------------------------------------
// Memory

EMU_EXPORT int EMU_FN(MemGetInfo)(size_t* free_bytes, size_t* total_bytes) {
  ENTER("MemGetInfo", "");
  return Status(emu::Cpu().MemGetInfo(0, free_bytes, total_bytes));
}

EMU_EXPORT int EMU_FN(Malloc)(void** ptr, size_t size) {
  ENTER("Malloc", N(size));
  if (ptr == nullptr) return kInvalidValue;
  if (const infinirtError_t e = emu::Cpu().Malloc(0, ptr, size)) return Status(e);
  emu::TrackMemory(*ptr, size, emu::MemoryKind::kDevice, emu::CurrentDevice());
  return kSuccess;
}

EMU_EXPORT int EMU_FN(Free)(void* ptr) {
  ENTER("Free", P(ptr));
  if (ptr == nullptr) return kSuccess;
  if (emu::KindOf(ptr, 0) != emu::MemoryKind::kDevice) return kInvalidValue;
  if (const infinirtError_t e = emu::Cpu().Free(0, ptr)) return Status(e);
  emu::UntrackMemory(ptr, emu::MemoryKind::kDevice);
  return kSuccess;
}

#ifndef EMU_OMIT_HOST_ALLOC
EMU_EXPORT int EMU_FN(HostAlloc)(void** ptr, size_t size, unsigned int flags) {
  ENTER("HostAlloc", N(size) + " flags=" + N(flags));
  if (ptr == nullptr || (flags & ~0x7u) != 0) return kInvalidValue;
  if (const infinirtError_t e = emu::Cpu().HostAlloc(0, ptr, size, flags)) return Status(e);
  emu::TrackMemory(*ptr, size, emu::MemoryKind::kPinnedHost, emu::CurrentDevice());
  return kSuccess;
}
#endif

#ifdef EMU_MALLOC_HOST_FLAGS
// MACA's form: (ptr, size, flags). Flags beyond the host allocation ones are refused, as a
// caller that passed two arguments would leave garbage there.
EMU_EXPORT int EMU_FN(MallocHost)(void** ptr, size_t size, unsigned int flags) {
  ENTER("MallocHost", N(size) + " flags=" + N(flags));
  if (ptr == nullptr || (flags & ~0x7u) != 0) return kInvalidValue;
#else
EMU_EXPORT int EMU_FN(MallocHost)(void** ptr, size_t size) {
  ENTER("MallocHost", N(size));
  if (ptr == nullptr) return kInvalidValue;
  const unsigned int flags = 0;
#endif
  if (const infinirtError_t e = emu::Cpu().HostAlloc(0, ptr, size, flags)) return Status(e);
  emu::TrackMemory(*ptr, size, emu::MemoryKind::kPinnedHost, emu::CurrentDevice());
  return kSuccess;
}

// Managed memory is the CPU backend's device memory, which the host reaches too.
EMU_EXPORT int EMU_FN(MallocManaged)(void** ptr, size_t size, unsigned int flags) {
  ENTER("MallocManaged", N(size) + " flags=" + N(flags));
  if (ptr == nullptr || size == 0 || (flags != 1 && flags != 2)) return kInvalidValue;
  if (const infinirtError_t e = emu::Cpu().MallocManaged(0, ptr, size, flags)) return Status(e);
  emu::TrackMemory(*ptr, size, emu::MemoryKind::kDevice, emu::CurrentDevice());
  return kSuccess;
}

// Managed memory hints, in both of CUDA's forms: before CUDA 13 the plain names take a device
// number (-1 the host) and CUDA 12.2 on adds _v2 names with a location (EMU_HINTS_V2), which
// CUDA 13 gives the plain names. The CPU backend has nothing to move; the arguments are checked.
namespace {
constexpr int kLocationDevice = 1;
constexpr int kLocationHost = 2;
constexpr int kAdviceFirst = 1;  // cudaMemAdviseSetReadMostly
constexpr int kAdviceLast = 6;   // cudaMemAdviseUnsetAccessedBy

bool ManagedRange(const void* ptr, size_t count) {
  return ptr != nullptr && count > 0 && emu::KindOf(ptr, count) == emu::MemoryKind::kDevice;
}
bool ValidLocation(const struct infinirtMemLocation& location) {
  return (location.type == kLocationDevice && ValidDevice(location.id)) ||
         location.type == kLocationHost;
}
struct infinirtMemLocation DeviceLocation(int device) {
  struct infinirtMemLocation location {};
  location.type =
      static_cast<enum infinirtMemLocationType>(device == -1 ? kLocationHost : kLocationDevice);
  location.id = device == -1 ? 0 : device;
  return location;
}

int Prefetch(const void* ptr, size_t count, const struct infinirtMemLocation& location,
             void* stream) {
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (!ManagedRange(ptr, count) || !ValidLocation(location)) return kInvalidValue;
  struct infinirtMemLocation on_cpu {};
  on_cpu.type = infinirtMemLocationTypeDevice;  // the CPU backend's one device
  return Status(emu::Cpu().MemPrefetchAsync(0, ptr, count, on_cpu, cpu));
}

// Managed memory, or pageable memory: the emulated devices reach it (they report
// pageableMemoryAccess = 1, the CPU backend's answer), and the runtime takes advice about it.
bool AdvisableRange(const void* ptr, size_t count) {
  return ManagedRange(ptr, count) ||
         (ptr != nullptr && count > 0 && emu::KindOf(ptr, count) == emu::MemoryKind::kUnknown);
}

int Advise(const void* ptr, size_t count, int advice, const struct infinirtMemLocation& location) {
  if (!AdvisableRange(ptr, count) || advice < kAdviceFirst || advice > kAdviceLast) {
    return kInvalidValue;
  }
  const bool read_mostly = advice <= 2;
  if (!read_mostly && !ValidLocation(location)) return kInvalidValue;
  struct infinirtMemLocation on_cpu {};
  on_cpu.type = infinirtMemLocationTypeDevice;
  return Status(
      emu::Cpu().MemAdvise(0, ptr, count, static_cast<enum infinirtMemoryAdvise>(advice), on_cpu));
}
}  // namespace

EMU_EXPORT int EMU_FN(MemPrefetchAsync)(const void* ptr, size_t count, int device, void* stream) {
  ENTER("MemPrefetchAsync", P(ptr) + " " + N(count) + " device=" + N(device));
  return Prefetch(ptr, count, DeviceLocation(device), stream);
}

EMU_EXPORT int EMU_FN(MemAdvise)(const void* ptr, size_t count, int advice, int device) {
  ENTER("MemAdvise", P(ptr) + " " + N(count) + " advice=" + N(advice) + " device=" + N(device));
  return Advise(ptr, count, advice, DeviceLocation(device));
}

#ifdef EMU_HINTS_V2
EMU_EXPORT int EMU_FN(MemPrefetchAsync_v2)(const void* ptr, size_t count,
                                           struct infinirtMemLocation location, unsigned int flags,
                                           void* stream) {
  ENTER("MemPrefetchAsync_v2", P(ptr) + " " + N(count) + " type=" + N(location.type) +
                                   " id=" + N(location.id) + " flags=" + N(flags));
  if (flags != 0) return kInvalidValue;
  return Prefetch(ptr, count, location, stream);
}

EMU_EXPORT int EMU_FN(MemAdvise_v2)(const void* ptr, size_t count, int advice,
                                    struct infinirtMemLocation location) {
  ENTER("MemAdvise_v2", P(ptr) + " " + N(count) + " advice=" + N(advice) +
                            " type=" + N(location.type) + " id=" + N(location.id));
  return Advise(ptr, count, advice, location);
}
#endif

// Registered host memory behaves as pinned memory from then on.
EMU_EXPORT int EMU_FN(HostRegister)(void* ptr, size_t size, unsigned int flags) {
  ENTER("HostRegister", P(ptr) + " " + N(size) + " flags=" + N(flags));
  if (ptr == nullptr || size == 0 || (flags & ~0xFu) != 0) return kInvalidValue;
  if (emu::KindOf(ptr, 1) != emu::MemoryKind::kUnknown) return kHostMemoryAlreadyRegistered;
  if (const infinirtError_t e = emu::Cpu().HostRegister(0, ptr, size, flags)) return Status(e);
  emu::TrackMemory(ptr, size, emu::MemoryKind::kPinnedHost, emu::CurrentDevice());
  return kSuccess;
}

EMU_EXPORT int EMU_FN(HostUnregister)(void* ptr) {
  ENTER("HostUnregister", P(ptr));
  if (!emu::UntrackMemory(ptr, emu::MemoryKind::kPinnedHost)) return kHostMemoryNotRegistered;
  return Status(emu::Cpu().HostUnregister(0, ptr));
}

EMU_EXPORT int EMU_FN(HostGetDevicePointer)(void** device_ptr, void* host_ptr, unsigned int flags) {
  ENTER("HostGetDevicePointer", P(host_ptr));
  if (device_ptr == nullptr || flags != 0) return kInvalidValue;
  if (emu::KindOf(host_ptr, 1) != emu::MemoryKind::kPinnedHost) return kInvalidValue;
  return Status(emu::Cpu().HostGetDevicePointer(0, device_ptr, host_ptr));
}

EMU_EXPORT int EMU_FN(FreeHost)(void* ptr) {
  ENTER("FreeHost", P(ptr));
  if (ptr == nullptr) return kSuccess;
  if (emu::KindOf(ptr, 0) != emu::MemoryKind::kPinnedHost) return kInvalidValue;
  if (const infinirtError_t e = emu::Cpu().FreeHost(0, ptr)) return Status(e);
  emu::UntrackMemory(ptr, emu::MemoryKind::kPinnedHost);
  return kSuccess;
}

#ifdef EMU_ASYNC_ALLOC
EMU_EXPORT int EMU_FN(MallocAsync)(void** ptr, size_t size, void* stream) {
  ENTER("MallocAsync", N(size) + " stream=" + P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (ptr == nullptr) return kInvalidValue;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (s != nullptr && s->capturing) return kStreamCaptureUnsupported;
  if (const infinirtError_t e = emu::Cpu().MallocAsync(0, ptr, size, cpu)) return Status(e);
  emu::TrackMemory(*ptr, size, emu::MemoryKind::kDevice, emu::CurrentDevice());
  return kSuccess;
}

// Memory pools: the CPU backend's, one per pool made here; a device's default pool is the CPU
// backend's default pool. Which devices were granted access is kept here, per pool.
namespace {
struct Pool {
  infinirtPluginMemPool_t cpu = nullptr;  // NULL: the CPU backend's default pool
  int device = 0;
  std::map<int, int> access;  // device -> CUDA's access flags
};
std::mutex g_pool_mutex;

Pool* PoolOf(void* handle) { return emu::IsLive(handle) ? static_cast<Pool*>(handle) : nullptr; }

Pool* DefaultPool(int device) {
  static std::map<int, std::unique_ptr<Pool>> pools;
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  std::unique_ptr<Pool>& pool = pools[device];
  if (!pool) {
    pool = std::make_unique<Pool>();
    pool->device = device;
    emu::Register(pool.get());
  }
  return pool.get();
}

constexpr int kAccessNone = 0;
constexpr int kAccessReadWrite = 3;
}  // namespace

EMU_EXPORT int EMU_FN(DeviceGetDefaultMemPool)(void** pool, int device) {
  ENTER("DeviceGetDefaultMemPool", N(device));
  if (pool == nullptr) return kInvalidValue;
  if (!ValidDevice(device)) return kInvalidDevice;
  *pool = DefaultPool(device);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(MemPoolCreate)(void** pool, const struct infinirtMemPoolProps* props) {
  ENTER("MemPoolCreate", "");
  if (pool == nullptr || props == nullptr || props->allocType != 1 || props->location.type != 1 ||
      !ValidDevice(props->location.id)) {
    return kInvalidValue;
  }
  auto made = std::make_unique<Pool>();
  made->device = props->location.id;
  if (const infinirtError_t e = emu::Cpu().MemPoolCreate(0, &made->cpu, props)) return Status(e);
  *pool = made.release();
  emu::Register(*pool);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(MemPoolDestroy)(void* pool) {
  ENTER("MemPoolDestroy", P(pool));
  Pool* p = PoolOf(pool);
  if (p == nullptr || p->cpu == nullptr) return kInvalidValue;  // default pools stay
  emu::Unregister(pool);
  std::unique_ptr<Pool> owned(p);
  return Status(emu::Cpu().MemPoolDestroy(0, owned->cpu));
}

EMU_EXPORT int EMU_FN(MallocFromPoolAsync)(void** ptr, size_t size, void* pool, void* stream) {
  ENTER("MallocFromPoolAsync", N(size) + " " + P(pool) + " stream=" + P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  Pool* p = PoolOf(pool);
  if (ptr == nullptr || p == nullptr) return kInvalidValue;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (s != nullptr && s->capturing) return kStreamCaptureUnsupported;
  const infinirtError_t e = p->cpu == nullptr
                                ? emu::Cpu().MallocAsync(0, ptr, size, cpu)
                                : emu::Cpu().MallocFromPoolAsync(0, ptr, size, p->cpu, cpu);
  if (e != infinirtSuccess) return Status(e);
  emu::TrackMemory(*ptr, size, emu::MemoryKind::kDevice, p->device);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(MemPoolGetAttribute)(void* pool, int attr, void* value) {
  ENTER("MemPoolGetAttribute", P(pool) + " " + N(attr));
  Pool* p = PoolOf(pool);
  if (p == nullptr || value == nullptr) return kInvalidValue;
  return Status(
      emu::Cpu().PoolGetAttribute(0, p->cpu, static_cast<enum infinirtMemPoolAttr>(attr), value));
}

EMU_EXPORT int EMU_FN(MemPoolSetAttribute)(void* pool, int attr, void* value) {
  ENTER("MemPoolSetAttribute", P(pool) + " " + N(attr));
  Pool* p = PoolOf(pool);
  if (p == nullptr || value == nullptr) return kInvalidValue;
  return Status(
      emu::Cpu().PoolSetAttribute(0, p->cpu, static_cast<enum infinirtMemPoolAttr>(attr), value));
}

EMU_EXPORT int EMU_FN(MemPoolTrimTo)(void* pool, size_t keep) {
  ENTER("MemPoolTrimTo", P(pool) + " " + N(keep));
  Pool* p = PoolOf(pool);
  if (p == nullptr) return kInvalidValue;
  return Status(emu::Cpu().PoolTrimTo(0, p->cpu, keep));
}

EMU_EXPORT int EMU_FN(MemPoolSetAccess)(void* pool, const struct infinirtMemAccessDesc* descs,
                                        size_t count) {
  ENTER("MemPoolSetAccess", P(pool) + " " + N(count));
  Pool* p = PoolOf(pool);
  if (p == nullptr || (count != 0 && descs == nullptr)) return kInvalidValue;
  for (size_t i = 0; i < count; ++i) {
    const int flags = static_cast<int>(descs[i].flags);
    if (descs[i].location.type != 1 || !ValidDevice(descs[i].location.id) ||
        (flags != kAccessNone && flags != kAccessReadWrite) ||
        (descs[i].location.id == p->device && flags != kAccessReadWrite)) {
      return kInvalidValue;
    }
  }
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  for (size_t i = 0; i < count; ++i) {
    p->access[descs[i].location.id] = static_cast<int>(descs[i].flags);
  }
  return kSuccess;
}

EMU_EXPORT int EMU_FN(MemPoolGetAccess)(enum infinirtMemAccessFlags* flags, void* pool,
                                        struct infinirtMemLocation* location) {
  ENTER("MemPoolGetAccess", P(pool));
  Pool* p = PoolOf(pool);
  if (p == nullptr || flags == nullptr || location == nullptr || location->type != 1 ||
      !ValidDevice(location->id)) {
    return kInvalidValue;
  }
  std::lock_guard<std::mutex> lock(g_pool_mutex);
  auto found = p->access.find(location->id);
  const int value = location->id == p->device  ? kAccessReadWrite
                    : found == p->access.end() ? kAccessNone
                                               : found->second;
  *flags = static_cast<enum infinirtMemAccessFlags>(value);
  return kSuccess;
}

// Pools other processes open: the CPU backend's (its pools' memory is a shared file), behind the
// vendor's names; an imported allocation is device memory of the current device, freed with
// Free or FreeAsync.
EMU_EXPORT int EMU_FN(MemPoolExportToShareableHandle)(void* handle, void* pool, int type,
                                                      unsigned int flags) {
  ENTER("MemPoolExportToShareableHandle", P(pool) + " type=" + N(type) + " flags=" + N(flags));
  Pool* p = PoolOf(pool);
  if (handle == nullptr || p == nullptr || p->cpu == nullptr || flags != 0) return kInvalidValue;
  return Status(emu::Cpu().MemPoolExportToShareableHandle(
      0, handle, p->cpu, static_cast<enum infinirtMemAllocationHandleType>(type), flags));
}

EMU_EXPORT int EMU_FN(MemPoolImportFromShareableHandle)(void** pool, void* handle, int type,
                                                        unsigned int flags) {
  ENTER("MemPoolImportFromShareableHandle", P(handle) + " type=" + N(type));
  if (pool == nullptr || flags != 0) return kInvalidValue;
  auto made = std::make_unique<Pool>();
  made->device = emu::CurrentDevice();
  if (const infinirtError_t e = emu::Cpu().MemPoolImportFromShareableHandle(
          0, &made->cpu, handle, static_cast<enum infinirtMemAllocationHandleType>(type), flags)) {
    return Status(e);
  }
  *pool = made.release();
  emu::Register(*pool);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(MemPoolExportPointer)(struct infinirtMemPoolPtrExportData* data, void* ptr) {
  ENTER("MemPoolExportPointer", P(ptr));
  if (data == nullptr || emu::KindOf(ptr, 0) != emu::MemoryKind::kDevice) return kInvalidValue;
  return Status(emu::Cpu().MemPoolExportPointer(0, data, ptr));
}

EMU_EXPORT int EMU_FN(MemPoolImportPointer)(void** ptr, void* pool,
                                            struct infinirtMemPoolPtrExportData* data) {
  ENTER("MemPoolImportPointer", P(pool));
  Pool* p = PoolOf(pool);
  if (ptr == nullptr || data == nullptr || p == nullptr || p->cpu == nullptr) return kInvalidValue;
  size_t size = 0;
  if (const infinirtError_t e = emu::Cpu().MemPoolImportPointer(0, ptr, &size, p->cpu, data)) {
    return Status(e);
  }
  emu::TrackMemory(*ptr, size, emu::MemoryKind::kDevice, p->device);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(FreeAsync)(void* ptr, void* stream) {
  ENTER("FreeAsync", P(ptr) + " stream=" + P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (s != nullptr && s->capturing) return kStreamCaptureUnsupported;
  if (emu::KindOf(ptr, 0) != emu::MemoryKind::kDevice) return kInvalidValue;
  if (const infinirtError_t e = emu::Cpu().FreeAsync(0, ptr, cpu)) return Status(e);
  emu::UntrackMemory(ptr, emu::MemoryKind::kDevice);
  return kSuccess;
}
#endif

EMU_EXPORT int EMU_FN(Memcpy)(void* dst, const void* src, size_t count, int kind) {
  ENTER("Memcpy", P(dst) + " " + P(src) + " " + N(count) + " kind=" + N(kind));
  if (const int e = CheckDirection(dst, src, count, kind)) return e;
  return Status(emu::Cpu().Memcpy(0, dst, src, count, ResolvedKind(dst, src, count, kind)));
}

EMU_EXPORT int EMU_FN(MemcpyAsync)(void* dst, const void* src, size_t count, int kind,
                                   void* stream) {
  ENTER("MemcpyAsync",
        P(dst) + " " + P(src) + " " + N(count) + " kind=" + N(kind) + " stream=" + P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (const int e = CheckDirection(dst, src, count, kind)) return e;
  const enum infinirtMemcpyKind resolved = ResolvedKind(dst, src, count, kind);
  if (s != nullptr && s->capturing) {
    infinirtPluginGraphNode node{};
    node.kind = INFINIRT_GRAPH_NODE_MEMCPY;
    node.params.copy.dst = dst;
    node.params.copy.src = src;
    node.params.copy.count = count;
    node.params.copy.kind = resolved;
    emu::Capture(*s, node);
    return kSuccess;
  }
  return Status(emu::Cpu().MemcpyAsync(0, dst, src, count, resolved, cpu));
}

// Planes: the rows must lie in memory the runtime handed out (checked at the first and last row)
// and go the way `kind` says. Not captured here: InfiniRT copies planes row by row in captures.
EMU_EXPORT int EMU_FN(Memcpy2DAsync)(void* dst, size_t dpitch, const void* src, size_t spitch,
                                     size_t width, size_t height, int kind, void* stream) {
  ENTER("Memcpy2DAsync", P(dst) + " " + N(dpitch) + " " + P(src) + " " + N(spitch) + " " +
                             N(width) + "x" + N(height) + " kind=" + N(kind));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (width > dpitch || width > spitch || height == 0) return kInvalidValue;
  const size_t dst_span = (height - 1) * dpitch + width, src_span = (height - 1) * spitch + width;
  if (const int e = CheckDirection(dst, src, width, kind)) return e;
  if (emu::KindOf(dst, dst_span) != emu::KindOf(dst, width) ||
      emu::KindOf(src, src_span) != emu::KindOf(src, width)) {
    return kInvalidValue;
  }
  if (s != nullptr && s->capturing) return kStreamCaptureUnsupported;
  return Status(emu::Cpu().Memcpy2DAsync(0, dst, dpitch, src, spitch, width, height,
                                         ResolvedKind(dst, src, width, kind), cpu));
}

EMU_EXPORT int EMU_FN(Memset2DAsync)(void* ptr, size_t pitch, int value, size_t width,
                                     size_t height, void* stream) {
  ENTER("Memset2DAsync", P(ptr) + " " + N(pitch) + " " + N(width) + "x" + N(height));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (width > pitch || height == 0) return kInvalidValue;
  if (emu::KindOf(ptr, (height - 1) * pitch + width) == emu::MemoryKind::kUnknown) {
    return kInvalidValue;
  }
  if (s != nullptr && s->capturing) return kStreamCaptureUnsupported;
  return Status(emu::Cpu().Memset2DAsync(0, ptr, pitch, value, width, height, cpu));
}

EMU_EXPORT int EMU_FN(Memset)(void* ptr, int value, size_t count) {
  ENTER("Memset", P(ptr) + " " + N(value) + " " + N(count));
  if (emu::KindOf(ptr, count) == emu::MemoryKind::kUnknown) return kInvalidValue;
  return Status(emu::Cpu().Memset(0, ptr, value, count));
}

#ifndef EMU_OMIT_MEMSET_ASYNC
EMU_EXPORT int EMU_FN(MemsetAsync)(void* ptr, int value, size_t count, void* stream) {
  ENTER("MemsetAsync", P(ptr) + " " + N(value) + " " + N(count) + " stream=" + P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (emu::KindOf(ptr, count) == emu::MemoryKind::kUnknown) return kInvalidValue;
  if (s != nullptr && s->capturing) {
    infinirtPluginGraphNode node{};
    node.kind = INFINIRT_GRAPH_NODE_MEMSET;
    node.params.set.ptr = ptr;
    node.params.set.value = value;
    node.params.set.count = count;
    emu::Capture(*s, node);
    return kSuccess;
  }
  return Status(emu::Cpu().MemsetAsync(0, ptr, value, count, cpu));
}
#endif

// ---------------------------------------------------------------------------------------------
// Streams and events

EMU_EXPORT int EMU_FN(StreamCreateWithFlags)(void** stream, unsigned int flags) {
  ENTER("StreamCreateWithFlags", "flags=" + N(flags));
  if (stream == nullptr || (flags & ~0x1u) != 0) return kInvalidValue;
  auto made = std::make_unique<emu::Stream>();
  made->device = emu::CurrentDevice();
  made->flags = flags;
  if (const infinirtError_t e = emu::Cpu().StreamCreate(0, &made->cpu, flags)) return Status(e);
  *stream = made.release();
  emu::Register(*stream);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(StreamDestroy)(void* stream) {
  ENTER("StreamDestroy", P(stream));
  if (!emu::Unregister(stream)) return kInvalidResourceHandle;
  std::unique_ptr<emu::Stream> owned(static_cast<emu::Stream*>(stream));
  return Status(emu::Cpu().StreamDestroy(0, owned->cpu));
}

// The default streams are blocking and the current device's.
EMU_EXPORT int EMU_FN(StreamGetFlags)(void* stream, unsigned int* flags) {
  ENTER("StreamGetFlags", P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (flags == nullptr) return kInvalidValue;
  *flags = s != nullptr ? s->flags : 0;
  return kSuccess;
}

// Peers: the emulated devices share the host's memory, so each reaches every other; the access
// enabled from the current device is kept per pair, with CUDA's errors.
namespace {
std::mutex g_peer_mutex;
std::set<std::pair<int, int>> g_peer_access;

}  // namespace

EMU_EXPORT int EMU_FN(DeviceCanAccessPeer)(int* can_access, int device, int peer) {
  ENTER("DeviceCanAccessPeer", N(device) + " " + N(peer));
  if (can_access == nullptr) return kInvalidValue;
  if (!ValidDevice(device) || !ValidDevice(peer)) return kInvalidDevice;
  *can_access = device != peer;
  return kSuccess;
}

EMU_EXPORT int EMU_FN(DeviceEnablePeerAccess)(int peer, unsigned int flags) {
  ENTER("DeviceEnablePeerAccess", N(peer) + " flags=" + N(flags));
  if (flags != 0) return kInvalidValue;
  const int device = emu::CurrentDevice();
  if (!ValidDevice(peer) || peer == device) return kInvalidDevice;
  std::lock_guard<std::mutex> lock(g_peer_mutex);
  return g_peer_access.emplace(device, peer).second ? kSuccess : kPeerAccessAlreadyEnabled;
}

EMU_EXPORT int EMU_FN(DeviceDisablePeerAccess)(int peer) {
  ENTER("DeviceDisablePeerAccess", N(peer));
  if (!ValidDevice(peer)) return kInvalidDevice;
  std::lock_guard<std::mutex> lock(g_peer_mutex);
  return g_peer_access.erase({emu::CurrentDevice(), peer}) ? kSuccess : kPeerAccessNotEnabled;
}

EMU_EXPORT int EMU_FN(DeviceGetP2PAttribute)(int* value, int attr, int src, int dst) {
  ENTER("DeviceGetP2PAttribute", N(attr) + " " + N(src) + " " + N(dst));
  if (value == nullptr || attr < 1 || attr > 5) return kInvalidValue;
  if (!ValidDevice(src) || !ValidDevice(dst) || src == dst) return kInvalidDevice;
  *value =
      attr == infinirtDevP2PAttrAccessSupported || attr == infinirtDevP2PAttrNativeAtomicSupported;
  return kSuccess;
}

// Limits and the cache split are the CPU backend's (one set, shared by the emulated devices).
EMU_EXPORT int EMU_FN(DeviceGetLimit)(size_t* value, int limit) {
  ENTER("DeviceGetLimit", N(limit));
  if (value == nullptr) return kInvalidValue;
  if (limit < 0 || limit > infinirtLimitPersistingL2CacheSize) return kUnsupportedLimit;
  return Status(emu::Cpu().DeviceGetLimit(0, static_cast<enum infinirtLimit>(limit), value));
}

EMU_EXPORT int EMU_FN(DeviceSetLimit)(int limit, size_t value) {
  ENTER("DeviceSetLimit", N(limit) + " " + N(value));
  if (limit < 0 || limit > infinirtLimitPersistingL2CacheSize) return kUnsupportedLimit;
  return Status(emu::Cpu().DeviceSetLimit(0, static_cast<enum infinirtLimit>(limit), value));
}

EMU_EXPORT int EMU_FN(DeviceGetCacheConfig)(int* config) {
  ENTER("DeviceGetCacheConfig", "");
  if (config == nullptr) return kInvalidValue;
  enum infinirtFuncCache cpu = infinirtFuncCachePreferNone;
  if (const infinirtError_t e = emu::Cpu().DeviceGetCacheConfig(0, &cpu)) return Status(e);
  *config = static_cast<int>(cpu);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(DeviceSetCacheConfig)(int config) {
  ENTER("DeviceSetCacheConfig", N(config));
  if (config < 0 || config > infinirtFuncCachePreferEqual) return kInvalidValue;
  return Status(emu::Cpu().DeviceSetCacheConfig(0, static_cast<enum infinirtFuncCache>(config)));
}

// Priorities are the CPU backend's (its worker pool picks higher-priority streams first).
EMU_EXPORT int EMU_FN(DeviceGetStreamPriorityRange)(int* least, int* greatest) {
  ENTER("DeviceGetStreamPriorityRange", "");
  int cpu_least = 0, cpu_greatest = 0;
  if (const infinirtError_t e =
          emu::Cpu().DeviceGetStreamPriorityRange(0, &cpu_least, &cpu_greatest)) {
    return Status(e);
  }
  if (least != nullptr) *least = cpu_least;
  if (greatest != nullptr) *greatest = cpu_greatest;
  return kSuccess;
}

EMU_EXPORT int EMU_FN(StreamCreateWithPriority)(void** stream, unsigned int flags, int priority) {
  ENTER("StreamCreateWithPriority", "flags=" + N(flags) + " priority=" + N(priority));
  if (stream == nullptr || (flags & ~0x1u) != 0) return kInvalidValue;
  auto made = std::make_unique<emu::Stream>();
  made->device = emu::CurrentDevice();
  made->flags = flags;
  if (const infinirtError_t e =
          emu::Cpu().StreamCreateWithPriority(0, &made->cpu, flags, priority)) {
    return Status(e);
  }
  *stream = made.release();
  emu::Register(*stream);
  return kSuccess;
}

// Stream attributes are the CPU backend's stream's; CUDA's stream attributes only.
namespace {
bool IsStreamAttribute(int attr) {
  return attr == infinirtLaunchAttributeAccessPolicyWindow ||
         attr == infinirtLaunchAttributeSynchronizationPolicy ||
         attr == infinirtLaunchAttributeMemSyncDomainMap ||
         attr == infinirtLaunchAttributeMemSyncDomain || attr == infinirtLaunchAttributePriority;
}
}  // namespace

EMU_EXPORT int EMU_FN(StreamGetAttribute)(void* stream, int attr,
                                          union infinirtLaunchAttributeValue* value) {
  ENTER("StreamGetAttribute", P(stream) + " " + N(attr));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (value == nullptr || !IsStreamAttribute(attr)) return kInvalidValue;
  return Status(emu::Cpu().StreamGetAttribute(
      0, cpu, static_cast<enum infinirtLaunchAttributeID>(attr), value));
}

EMU_EXPORT int EMU_FN(StreamSetAttribute)(void* stream, int attr,
                                          const union infinirtLaunchAttributeValue* value) {
  ENTER("StreamSetAttribute", P(stream) + " " + N(attr));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (value == nullptr || !IsStreamAttribute(attr)) return kInvalidValue;
  return Status(emu::Cpu().StreamSetAttribute(
      0, cpu, static_cast<enum infinirtLaunchAttributeID>(attr), value));
}

EMU_EXPORT int EMU_FN(StreamGetDevice)(void* stream, int* device) {
  ENTER("StreamGetDevice", P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (device == nullptr) return kInvalidValue;
  *device = s != nullptr ? s->device : std::max(emu::CurrentDevice(), 0);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(StreamSynchronize)(void* stream) {
  ENTER("StreamSynchronize", P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (s != nullptr && s->capturing) return kStreamCaptureUnsupported;
  return Status(emu::Cpu().StreamSynchronize(0, cpu));
}

EMU_EXPORT int EMU_FN(StreamQuery)(void* stream) {
  ENTER("StreamQuery", P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (s != nullptr && s->capturing) return kStreamCaptureUnsupported;
  return Status(emu::Cpu().StreamQuery(0, cpu));
}

EMU_EXPORT int EMU_FN(StreamWaitEvent)(void* stream, void* event, unsigned int flags) {
  ENTER("StreamWaitEvent", P(stream) + " " + P(event) + " flags=" + N(flags));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  emu::Event* e = EventOf(event);
  if (e == nullptr) return kInvalidResourceHandle;
  if (flags != 0) return kInvalidValue;
  if (s != nullptr && s->capturing) return kStreamCaptureUnsupported;  // not emulated
  return Status(emu::Cpu().StreamWaitEvent(0, cpu, e->cpu, 0));
}

EMU_EXPORT int EMU_FN(LaunchHostFunc)(void* stream, void (*fn)(void*), void* user_data) {
  ENTER("LaunchHostFunc", P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (fn == nullptr) return kInvalidValue;
  if (s != nullptr && s->capturing) {
    infinirtPluginGraphNode node{};
    node.kind = INFINIRT_GRAPH_NODE_HOST;
    node.params.host.fn = fn;
    node.params.host.user_data = user_data;
    emu::Capture(*s, node);
    return kSuccess;
  }
  return Status(emu::Cpu().LaunchHostFunc(0, cpu, fn, user_data));
}

EMU_EXPORT int EMU_FN(EventCreateWithFlags)(void** event, unsigned int flags) {
  ENTER("EventCreateWithFlags", "flags=" + N(flags));
  if (event == nullptr || (flags & ~0x7u) != 0) return kInvalidValue;
  auto made = std::make_unique<emu::Event>();
  made->device = emu::CurrentDevice();
  made->flags = flags;
  if (const infinirtError_t e = emu::Cpu().EventCreate(0, &made->cpu, flags)) return Status(e);
  *event = made.release();
  emu::Register(*event);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(EventDestroy)(void* event) {
  ENTER("EventDestroy", P(event));
  if (!emu::Unregister(event)) return kInvalidResourceHandle;
  std::unique_ptr<emu::Event> owned(static_cast<emu::Event*>(event));
  return Status(emu::Cpu().EventDestroy(0, owned->cpu));
}

EMU_EXPORT int EMU_FN(EventRecord)(void* event, void* stream) {
  ENTER("EventRecord", P(event) + " stream=" + P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  emu::Event* e = EventOf(event);
  if (e == nullptr) return kInvalidResourceHandle;
  if (s != nullptr && s->capturing) return kStreamCaptureUnsupported;  // not emulated
  return Status(emu::Cpu().EventRecord(0, e->cpu, cpu));
}

EMU_EXPORT int EMU_FN(EventQuery)(void* event) {
  ENTER("EventQuery", P(event));
  emu::Event* e = EventOf(event);
  if (e == nullptr) return kInvalidResourceHandle;
  return Status(emu::Cpu().EventQuery(0, e->cpu));
}

EMU_EXPORT int EMU_FN(EventSynchronize)(void* event) {
  ENTER("EventSynchronize", P(event));
  emu::Event* e = EventOf(event);
  if (e == nullptr) return kInvalidResourceHandle;
  return Status(emu::Cpu().EventSynchronize(0, e->cpu));
}

EMU_EXPORT int EMU_FN(EventElapsedTime)(float* ms, void* start, void* end) {
  ENTER("EventElapsedTime", P(start) + " " + P(end));
  emu::Event* first = EventOf(start);
  emu::Event* last = EventOf(end);
  if (first == nullptr || last == nullptr) return kInvalidResourceHandle;
  if (ms == nullptr) return kInvalidValue;
  return Status(emu::Cpu().EventElapsedTime(0, ms, first->cpu, last->cpu));
}

// ---------------------------------------------------------------------------------------------
// Interprocess sharing, on the CPU backend's (emu_core.cc: its memory is shareable when
// INFINIRT_CPU_SHAREABLE_MEMORY=1). Opened memory is device memory here, tracked until its last
// close; the driver's address range query, handed out by GetDriverEntryPointByVersion, reads the
// tracked allocations.

namespace {
std::mutex g_ipc_mutex;
std::map<void*, int> g_ipc_opens;  // opened address -> opens not yet closed

int EmuMemGetAddressRange(unsigned long long* base, size_t* size, unsigned long long address) {
  uintptr_t start = 0;
  size_t bytes = 0;
  if (!emu::AllocationOf(reinterpret_cast<void*>(static_cast<uintptr_t>(address)), &start,
                         &bytes)) {
    return 1;  // CUDA_ERROR_INVALID_VALUE
  }
  if (base != nullptr) *base = start;
  if (size != nullptr) *size = bytes;
  return 0;
}
}  // namespace

EMU_EXPORT int EMU_FN(IpcGetMemHandle)(infinirtIpcMemHandle_t* handle, void* ptr) {
  ENTER("IpcGetMemHandle", P(ptr));
  if (handle == nullptr || emu::KindOf(ptr, 0) != emu::MemoryKind::kDevice) return kInvalidValue;
  return Status(emu::Cpu().IpcGetMemHandle(0, handle, ptr));
}

EMU_EXPORT int EMU_FN(IpcOpenMemHandle)(void** ptr, infinirtIpcMemHandle_t handle,
                                        unsigned int flags) {
  ENTER("IpcOpenMemHandle", "flags=" + N(flags));
  if (ptr == nullptr || (flags & ~1u) != 0) return kInvalidValue;
  size_t size = 0;
  if (const infinirtError_t e = emu::Cpu().IpcOpenMemHandle(0, ptr, &size, &handle, flags)) {
    return Status(e);
  }
  std::lock_guard<std::mutex> lock(g_ipc_mutex);
  if (g_ipc_opens[*ptr]++ == 0) {
    emu::TrackMemory(*ptr, size, emu::MemoryKind::kDevice, emu::CurrentDevice());
  }
  return kSuccess;
}

EMU_EXPORT int EMU_FN(IpcCloseMemHandle)(void* ptr) {
  ENTER("IpcCloseMemHandle", P(ptr));
  std::lock_guard<std::mutex> lock(g_ipc_mutex);
  auto open = g_ipc_opens.find(ptr);
  if (open == g_ipc_opens.end()) return kInvalidValue;
  if (const infinirtError_t e = emu::Cpu().IpcCloseMemHandle(0, ptr)) return Status(e);
  if (--open->second == 0) {
    g_ipc_opens.erase(open);
    emu::UntrackMemory(ptr, emu::MemoryKind::kDevice);
  }
  return kSuccess;
}

EMU_EXPORT int EMU_FN(IpcGetEventHandle)(infinirtIpcEventHandle_t* handle, void* event) {
  ENTER("IpcGetEventHandle", P(event));
  emu::Event* e = EventOf(event);
  if (e == nullptr || (e->flags & 0x4u) == 0) return kInvalidResourceHandle;
  if (handle == nullptr) return kInvalidValue;
  return Status(emu::Cpu().IpcGetEventHandle(0, handle, e->cpu));
}

EMU_EXPORT int EMU_FN(IpcOpenEventHandle)(void** event, infinirtIpcEventHandle_t handle) {
  ENTER("IpcOpenEventHandle", "");
  if (event == nullptr) return kInvalidValue;
  auto made = std::make_unique<emu::Event>();
  made->device = emu::CurrentDevice();
  made->flags = 0x6u;  // interprocess, without timing
  if (const infinirtError_t e = emu::Cpu().IpcOpenEventHandle(0, &made->cpu, &handle)) {
    return Status(e);
  }
  *event = made.release();
  emu::Register(*event);
  return kSuccess;
}

// Only the driver function the plugin asks for; 1 (cudaDriverEntryPointSymbolNotFound) else.
EMU_EXPORT int EMU_FN(GetDriverEntryPointByVersion)(const char* symbol, void** function,
                                                    unsigned int version, unsigned long long flags,
                                                    int* status) {
  ENTER("GetDriverEntryPointByVersion",
        std::string(symbol ? symbol : "(null)") + " version=" + N(version) + " flags=" + N(flags));
  if (symbol == nullptr || function == nullptr) return kInvalidValue;
  const bool known = std::strcmp(symbol, "cuMemGetAddressRange") == 0 && version >= 3020;
  *function = known ? reinterpret_cast<void*>(&EmuMemGetAddressRange) : nullptr;
  if (status != nullptr) *status = known ? 0 : 1;
  return kSuccess;
}

// ---------------------------------------------------------------------------------------------
// Capture and graphs (single-stream captures: what the plugin issues)

EMU_EXPORT int EMU_FN(StreamBeginCapture)(void* stream, int mode) {
  ENTER("StreamBeginCapture", P(stream) + " mode=" + N(mode));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (mode < 0 || mode > 2) return kInvalidValue;
  if (s == nullptr) return kStreamCaptureImplicit;  // the default streams cannot capture
  if (s->capturing) return kIllegalState;
  s->capturing = true;
  s->captured.clear();
  return kSuccess;
}

// 0 (none) or 1 (active), as cudaStreamCaptureStatus numbers them. Not used by the runtime plugin;
// the emulated BLAS libraries ask it, to keep what a captured call needs.
EMU_EXPORT int EMU_FN(StreamIsCapturing)(void* stream, int* status) {
  ENTER("StreamIsCapturing", P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (status == nullptr) return kInvalidValue;
  *status = s != nullptr && s->capturing ? 1 : 0;
  return kSuccess;
}

EMU_EXPORT int EMU_FN(StreamEndCapture)(void* stream, void** graph) {
  ENTER("StreamEndCapture", P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (s == nullptr || !s->capturing || graph == nullptr) return kIllegalState;
  auto made = std::make_unique<emu::Graph>();
  made->nodes = std::move(s->captured);
  s->captured.clear();
  s->capturing = false;
  *graph = made.release();
  emu::Register(*graph);
  return kSuccess;
}

namespace {
int InstantiateGraph(void** exec, void* graph) {
  if (exec == nullptr || !emu::IsLive(graph)) return kInvalidValue;
  emu::Exec* made = nullptr;
  if (const infinirtError_t e = emu::Instantiate(*static_cast<emu::Graph*>(graph), &made)) {
    return Status(e);
  }
  *exec = made;
  return kSuccess;
}
}  // namespace

#if EMU_INSTANTIATE_ARGS == 5
EMU_EXPORT int EMU_FN(GraphInstantiate)(void** exec, void* graph, void** error_node, char* log,
                                        size_t log_size) {
  ENTER("GraphInstantiate", P(graph) + " " + P(error_node) + " " + P(log) + " " + N(log_size));
  if (log == nullptr && log_size != 0) return kInvalidValue;
  return InstantiateGraph(exec, graph);
}
#else
EMU_EXPORT int EMU_FN(GraphInstantiate)(void** exec, void* graph, unsigned long long flags) {
  ENTER("GraphInstantiate", P(graph) + " flags=" + N(flags));
  if (flags != 0) return kInvalidValue;  // the plugin must pass flags = 0
  return InstantiateGraph(exec, graph);
}
#endif

#ifdef EMU_WITH_FLAGS
EMU_EXPORT int EMU_FN(GraphInstantiateWithFlags)(void** exec, void* graph,
                                                 unsigned long long flags) {
  ENTER("GraphInstantiateWithFlags", P(graph) + " flags=" + N(flags));
  if (flags != 0) return kInvalidValue;
  return InstantiateGraph(exec, graph);
}
#endif

EMU_EXPORT int EMU_FN(GraphLaunch)(void* exec, void* stream) {
  ENTER("GraphLaunch", P(exec) + " stream=" + P(stream));
  infinirtPluginStream_t cpu;
  emu::Stream* s;
  if (!Resolve(stream, &cpu, &s)) return kInvalidResourceHandle;
  if (!emu::IsLive(exec)) return kInvalidResourceHandle;
  return Status(emu::Cpu().GraphLaunch(0, static_cast<emu::Exec*>(exec)->cpu, cpu));
}

EMU_EXPORT int EMU_FN(GraphExecDestroy)(void* exec) {
  ENTER("GraphExecDestroy", P(exec));
  if (!emu::Unregister(exec)) return kInvalidResourceHandle;
  std::unique_ptr<emu::Exec> owned(static_cast<emu::Exec*>(exec));
  return Status(emu::Cpu().GraphExecDestroy(0, owned->cpu));
}

EMU_EXPORT int EMU_FN(GraphDestroy)(void* graph) {
  ENTER("GraphDestroy", P(graph));
  if (!emu::Unregister(graph)) return kInvalidResourceHandle;
  delete static_cast<emu::Graph*>(graph);
  return kSuccess;
}
