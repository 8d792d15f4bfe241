// A host-emulated Cambricon CNRT (libcnrt.so) for tests only; see emu_core.h. It is NOT
// Cambricon's runtime and no MLU is involved: it exports CNRT's function names with the
// prototypes and numbers of cnrt.h 6.14.1 (docs/vendor-runtimes.md) and executes on InfiniRT's
// CPU backend, so it proves that the Cambricon plugin translates correctly, not that a device
// works. Like CNRT 6.14.1 it
//   - returns cnrtRet_t codes (cnrtSuccess 0, ..., cnrtErrorBusy 632014 for "not ready");
//   - keeps the current device per host thread (device 0 until a thread selects another) and
//     refuses a queue or notifier of another device (cnrtErrorDevice);
//   - checks copy directions with CNRT's values (host-to-device is 0) against the memory it
//     handed out, and has no host-to-host direction for asynchronous copies;
//   - exports cnrtMemcpyAsync and cnrtMemcpyAsync_V2 but not _V3, so the plugin's fallback is
//     exercised; has the queue-ordered allocator and memory pools of 6.14;
//   - models CNDrv >= 3, where the NULL queue is the legacy queue: queues from cnrtQueueCreate
//     synchronise with it, and no queue can be made non-blocking;
//   - captures single-queue sequences (copies, memsets, host functions) into TaskTopos.
// Variants (compile definitions): EMU_CNRT_6_0 leaves out what 6.0.2 lacks or the plugin must
// do without (cnrtMemcpyAsync_V2, cnrtGetDeviceProperties_V3, the queue-ordered allocator and
// memory pools, notifier flags other than DISABLE_TIMING_SW); EMU_CNRT_OMIT_MEMSET_ASYNC leaves
// out a required function.
// EMU_CAMBRICON_DEVICES sets the device count, EMU_CAMBRICON_FAIL_INIT makes every call fail
// with cnrtErrorInit, and emuFail injects failures (emu_inspect.h).
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>

#include "emu_core.h"

#define EMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace emu = infinirt::emu;

namespace {

// cnrtRet_t (cnrt.h 6.14.1).
constexpr int kSuccess = 0;
constexpr int kErrorNotReady = 1;
constexpr int kErrorInit = 100002;
constexpr int kErrorNoDevice = 100004;
constexpr int kErrorDeviceInvalid = 100005;
constexpr int kErrorArgsInvalid = 100006;
constexpr int kErrorInvalidResourceHandle = 100014;
constexpr int kErrorIllegalState = 100015;
constexpr int kErrorNotSupport = 100050;
constexpr int kErrorOpsNotPermitted = 100051;
constexpr int kErrorNoMem = 100100;
constexpr int kErrorQueueCaptureUnsupported = 100360;
constexpr int kErrorQueueCaptureInvalidated = 100361;
constexpr int kErrorDevice = 632006;
constexpr int kErrorMemcpyDirectionInvalid = 632013;
constexpr int kErrorBusy = 632014;
constexpr int kErrorCndrvFuncCall = 632015;
constexpr int kErrorUnknown = 999991;

// cnrtMemTransDir_t
constexpr int kHostToDev = 0;
constexpr int kDevToDev = 1;
constexpr int kDevToHost = 2;
constexpr int kHostToHost = 3;
constexpr int kPeerToPeer = 4;
constexpr int kNoDirection = 5;

// cnrtNotifierFlags_t
constexpr unsigned int kDisableTimingSw = 0x2;
constexpr unsigned int kDisableTimingAll = 0x4;
constexpr unsigned int kInterprocess = 0x8;

// The special queue handles of cnrt.h 6.14.1 (not CUDA's values).
void* const kQueuePerThread = reinterpret_cast<void*>(0x1);
void* const kQueueLegacy = reinterpret_cast<void*>(0x2);

struct Init {
  Init() { emu::Configure("CAMBRICON"); }
} g_init;

// Every function starts here: the implicit device 0, the record, injected failures, and
// CNRT's implicit initialisation, which fails for every call when asked to.
int Enter(const char* function, const std::string& arguments) {
  if (emu::CurrentDevice() < 0) emu::SetCurrentDevice(0);
  emu::Record(function, arguments);
  if (const int injected = emu::InjectedFailure(function)) return injected;
  return emu::InitFails() ? kErrorInit : kSuccess;
}

#define ENTER(arguments)                                                \
  do {                                                                  \
    if (const int entered = Enter(__func__, arguments)) return entered; \
  } while (0)

std::string P(const void* p) { return emu::Pointer(p); }
std::string N(unsigned long long n) { return std::to_string(n); }

// The CPU backend's answer as CNRT would give it.
int Status(infinirtError_t error) {
  switch (error) {
    case infinirtSuccess:
      return kSuccess;
    case infinirtErrorNotReady:
      return kErrorBusy;
    case infinirtErrorInvalidValue:
      return kErrorArgsInvalid;
    case infinirtErrorMemoryAllocation:
      return kErrorNoMem;
    case infinirtErrorInvalidResourceHandle:
      return kErrorInvalidResourceHandle;
    case infinirtErrorIllegalState:
      return kErrorIllegalState;
    case infinirtErrorNotSupported:
      return kErrorNotSupport;
    case infinirtErrorStreamCaptureUnsupported:
      return kErrorQueueCaptureUnsupported;
    case infinirtErrorStreamCaptureInvalidated:
      return kErrorQueueCaptureInvalidated;
    case infinirtErrorInvalidMemcpyDirection:
      return kErrorMemcpyDirectionInvalid;
    case infinirtErrorNotPermitted:
      // A blocking call from a host function: CNRT forbids CNRT calls there and documents
      // cnrtErrorCndrvFuncCall for them.
      return kErrorCndrvFuncCall;
    default:
      return kErrorUnknown;
  }
}

bool ValidDevice(int device) { return device >= 0 && device < emu::DeviceCount(); }

// ---------------------------------------------------------------------------------------------
// Queues and notifiers

struct Queue {
  infinirtPluginStream_t cpu = nullptr;
  emu::Stream* stream = nullptr;  // nullptr for the implicit queues
};

// Resolves a queue handle: NULL and cnrtQueueLegacy are the legacy queue, cnrtQueuePerThread
// the thread's own; a created queue must be live and belong to the current device.
int ResolveQueue(void* handle, Queue* queue) {
  if (!emu::CpuStream(handle, kQueueLegacy, kQueuePerThread, &queue->cpu, &queue->stream)) {
    return kErrorInvalidResourceHandle;
  }
  if (queue->stream != nullptr && queue->stream->device != emu::CurrentDevice()) {
    return kErrorDevice;
  }
  return kSuccess;
}

// A queue that takes new work now: resolved, and refused while it captures when the work is
// not something a capture records.
int ResolveQueueNotCapturing(void* handle, Queue* queue) {
  if (const int e = ResolveQueue(handle, queue)) return e;
  return queue->stream && queue->stream->capturing ? kErrorQueueCaptureUnsupported : kSuccess;
}

bool Capturing(const Queue& queue) { return queue.stream != nullptr && queue.stream->capturing; }

emu::Event* NotifierOf(void* handle) {
  return emu::IsLive(handle) ? static_cast<emu::Event*>(handle) : nullptr;
}

// ---------------------------------------------------------------------------------------------
// Copies

bool OnDevice(const void* p, size_t count) {
  return emu::KindOf(p, count) == emu::MemoryKind::kDevice;
}

// A direction checked against the memory the runtime handed out. The asynchronous copies have
// no host-to-host direction (6.14.1).
int CheckDirection(void* dst, const void* src, size_t count, int dir, bool asynchronous) {
  const bool dst_device = OnDevice(dst, count);
  const bool src_device = OnDevice(src, count);
  bool valid = false;
  switch (dir) {
    case kHostToDev:
      valid = dst_device && !src_device;
      break;
    case kDevToDev:
    case kPeerToPeer:
      valid = dst_device && src_device;
      break;
    case kDevToHost:
      valid = !dst_device && src_device;
      break;
    case kHostToHost:
      valid = !asynchronous && !dst_device && !src_device;
      break;
    case kNoDirection:
      valid = true;
      break;
    default:
      break;
  }
  return valid ? kSuccess : kErrorMemcpyDirectionInvalid;
}

// The CPU backend's kind for the memory involved.
enum infinirtMemcpyKind CpuKind(void* dst, const void* src, size_t count) {
  const int kind = (OnDevice(src, count) ? 2 : 0) + (OnDevice(dst, count) ? 1 : 0);
  return static_cast<enum infinirtMemcpyKind>(kind);
}

int AsyncCopy(void* dst, void* src, size_t bytes, void* queue, int dir) {
  Queue q;
  if (const int e = ResolveQueue(queue, &q)) return e;
  if (const int e = CheckDirection(dst, src, bytes, dir, true)) return e;
  const enum infinirtMemcpyKind kind = CpuKind(dst, src, bytes);
  if (Capturing(q)) {
    infinirtPluginGraphNode node{};
    node.kind = INFINIRT_GRAPH_NODE_MEMCPY;
    node.params.copy.dst = dst;
    node.params.copy.src = src;
    node.params.copy.count = bytes;
    node.params.copy.kind = kind;
    emu::Capture(*q.stream, node);
    return kSuccess;
  }
  return Status(emu::Cpu().MemcpyAsync(0, dst, src, bytes, kind, q.cpu));
}

std::string CopyArguments(void* dst, void* src, size_t bytes, void* queue, int dir) {
  return P(dst) + " " + P(src) + " " + N(bytes) + " queue=" + P(queue) + " dir=" + N(dir);
}

// ---------------------------------------------------------------------------------------------
// Error names

const char* NameOf(int error) {
  static const std::map<int, const char*> names = {
      {kSuccess, "cnrtSuccess"},
      {kErrorNotReady, "cnrtErrorNotReady"},
      {kErrorInit, "cnrtErrorInit"},
      {kErrorNoDevice, "cnrtErrorNoDevice"},
      {kErrorDeviceInvalid, "cnrtErrorDeviceInvalid"},
      {kErrorArgsInvalid, "cnrtErrorArgsInvalid"},
      {kErrorInvalidResourceHandle, "cnrtErrorInvalidResourceHandle"},
      {kErrorIllegalState, "cnrtErrorIllegalState"},
      {kErrorNotSupport, "cnrtErrorNotSupport"},
      {kErrorOpsNotPermitted, "cnrtErrorOpsNotPermitted"},
      {kErrorNoMem, "cnrtErrorNoMem"},
      {kErrorQueueCaptureUnsupported, "cnrtErrorQueueCaptureUnsupported"},
      {kErrorQueueCaptureInvalidated, "cnrtErrorQueueCaptureInvalidated"},
      {kErrorDevice, "cnrtErrorDevice"},
      {kErrorMemcpyDirectionInvalid, "cnrtErrorMemcpyDirectionInvalid"},
      {kErrorBusy, "cnrtErrorBusy"},
      {kErrorCndrvFuncCall, "cnrtErrorCndrvFuncCall"},
      {kErrorUnknown, "cnrtErrorUnknown"},
  };
  const auto found = names.find(error);
  return found == names.end() ? "cnrtErrorUnknown" : found->second;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Devices, versions, errors

EMU_EXPORT int cnrtGetDeviceCount(unsigned int* count) {
  ENTER("");
  if (count == nullptr) return kErrorArgsInvalid;
  *count = static_cast<unsigned int>(emu::DeviceCount());
  return emu::DeviceCount() > 0 ? kSuccess : kErrorNoDevice;
}

EMU_EXPORT int cnrtSetDevice(int ordinal) {
  ENTER(N(ordinal));
  if (!ValidDevice(ordinal)) return kErrorDeviceInvalid;
  emu::SetCurrentDevice(ordinal);
  return kSuccess;
}

EMU_EXPORT int cnrtGetDevice(int* ordinal) {
  ENTER("");
  if (ordinal == nullptr) return kErrorArgsInvalid;
  *ordinal = emu::CurrentDevice();
  return kSuccess;
}

EMU_EXPORT int cnrtSyncDevice(void) {
  ENTER("");
  return Status(emu::Cpu().DeviceSynchronize(0));
}

// The emulated context holds nothing of its own: a reset waits for the device's work.
EMU_EXPORT int cnrtDeviceReset(void) {
  ENTER("");
  return Status(emu::Cpu().DeviceSynchronize(0));
}

// Answers even when initialisation fails, as a library version needs no device.
EMU_EXPORT int cnrtGetLibVersion(int* major, int* minor, int* patch) {
  emu::Record(__func__, "");
  if (const int injected = emu::InjectedFailure(__func__)) return injected;
  if (major == nullptr || minor == nullptr || patch == nullptr) return kErrorArgsInvalid;
#ifdef EMU_CNRT_6_0
  *major = 6;
  *minor = 0;
  *patch = 2;
#else
  *major = 6;
  *minor = 14;
  *patch = 1;
#endif
  return kSuccess;
}

EMU_EXPORT int cnrtDriverGetVersion(int* major, int* minor, int* patch) {
  ENTER("");
  if (major == nullptr || minor == nullptr || patch == nullptr) return kErrorArgsInvalid;
  *major = 6;
  *minor = 2;
  *patch = 0;
  return kSuccess;
}

namespace {

// cnrtDeviceProp_t of 6.14.1 (cnrtGetDeviceProperties_V3): the name, 46 int fields, the UUID,
// the total memory in bytes and 30 reserved ints.
struct DeviceProp {
  char name[256];
  int fields[46];
  char uuid[16];
  uint64_t total_global_mem_size;
  int reserved[30];
};

int FillProperties(void* prop, int device) {
  if (prop == nullptr) return kErrorArgsInvalid;
  if (!ValidDevice(device)) return kErrorDeviceInvalid;
  DeviceProp properties{};
  std::snprintf(properties.name, sizeof(properties.name), "Emulated CAMBRICON device %d", device);
  std::memcpy(prop, &properties, sizeof(properties));
  return kSuccess;
}

// Fixed values of an emulated MLU (cnrtDeviceAttr_t numbers).
int AttributeValue(int attr, int device, int* value) {
  static const std::map<int, int> values = {
      {0x01, 5},  // compute capability major
      {0x02, 0},  // compute capability minor
#ifndef EMU_CNRT_6_0
      {0x09, 0},  // compute mode: default (6.14.1's cnrtAttrComputeMode; 6.0.2 has none)
#endif
      {0x103, 1},        // queue priorities supported
      {0x205, 8},        // clusters
      {0x206, 4},        // MLU cores per cluster
      {0x301, 1 << 22},  // L2 cache bytes
      {0x401, 0},        // ECC
      {0x402, 1000000},  // cluster clock, kHz
      {0x403, 1600000},  // memory clock, kHz
      {0x404, 4096},     // memory bus width, bits
  };
  if (attr >= 0x406 && attr <= 0x408) {  // PCI bus, device and domain ids
    *value = attr == 0x406 ? device + 1 : 0;
    return kSuccess;
  }
  const auto found = values.find(attr);
  if (found == values.end()) return attr >= 0xffffff ? kErrorNotSupport : kErrorArgsInvalid;
  *value = found->second;
  return kSuccess;
}

}  // namespace

#ifndef EMU_CNRT_6_0
EMU_EXPORT int cnrtGetDeviceProperties_V3(void* prop, int device) {
  ENTER(N(device));
  return FillProperties(prop, device);
}

#endif

EMU_EXPORT int cnrtGetDeviceProperties_V2(void* prop, int device) {
  ENTER(N(device));
  return FillProperties(prop, device);
}

EMU_EXPORT int cnrtDeviceGetAttribute(int* value, int attr, int device) {
  ENTER(N(attr) + " " + N(device));
  if (value == nullptr) return kErrorArgsInvalid;
  if (!ValidDevice(device)) return kErrorDeviceInvalid;
  return AttributeValue(attr, device, value);
}

EMU_EXPORT const char* cnrtGetErrorName(int error) { return NameOf(error); }

EMU_EXPORT const char* cnrtGetErrorStr(int error) { return NameOf(error); }

// ---------------------------------------------------------------------------------------------
// Memory

EMU_EXPORT int cnrtMemGetInfo(size_t* free_bytes, size_t* total_bytes) {
  ENTER("");
  if (free_bytes == nullptr || total_bytes == nullptr) return kErrorArgsInvalid;
  return Status(emu::Cpu().MemGetInfo(0, free_bytes, total_bytes));
}

EMU_EXPORT int cnrtMalloc(void** ptr, size_t bytes) {
  ENTER(N(bytes));
  if (ptr == nullptr || bytes == 0) return kErrorArgsInvalid;
  if (const infinirtError_t e = emu::Cpu().Malloc(0, ptr, bytes)) return Status(e);
  emu::TrackMemory(*ptr, bytes, emu::MemoryKind::kDevice, emu::CurrentDevice());
  return kSuccess;
}

EMU_EXPORT int cnrtFree(void* ptr) {
  ENTER(P(ptr));
  if (ptr == nullptr) return kSuccess;
  if (emu::KindOf(ptr, 0) != emu::MemoryKind::kDevice) return kErrorArgsInvalid;
  if (const infinirtError_t e = emu::Cpu().Free(0, ptr)) return Status(e);
  emu::UntrackMemory(ptr, emu::MemoryKind::kDevice);  // only once the backend freed it
  return kSuccess;
}

EMU_EXPORT int cnrtHostMalloc(void** ptr, size_t bytes) {
  ENTER(N(bytes));
  if (ptr == nullptr || bytes == 0) return kErrorArgsInvalid;
  if (const infinirtError_t e = emu::Cpu().HostAlloc(0, ptr, bytes, 0)) return Status(e);
  emu::TrackMemory(*ptr, bytes, emu::MemoryKind::kPinnedHost, emu::CurrentDevice());
  return kSuccess;
}

EMU_EXPORT int cnrtFreeHost(void* ptr) {
  ENTER(P(ptr));
  if (ptr == nullptr) return kSuccess;
  if (emu::KindOf(ptr, 0) != emu::MemoryKind::kPinnedHost) return kErrorArgsInvalid;
  if (const infinirtError_t e = emu::Cpu().FreeHost(0, ptr)) return Status(e);
  emu::UntrackMemory(ptr, emu::MemoryKind::kPinnedHost);
  return kSuccess;
}

EMU_EXPORT int cnrtMemcpy(void* dst, void* src, size_t bytes, int dir) {
  ENTER(P(dst) + " " + P(src) + " " + N(bytes) + " dir=" + N(dir));
  if (const int e = CheckDirection(dst, src, bytes, dir, false)) return e;
  return Status(emu::Cpu().Memcpy(0, dst, src, bytes, CpuKind(dst, src, bytes)));
}

// The deprecated asynchronous copies of 6.14.1 (no _V3 here): the queue before the direction.
EMU_EXPORT int cnrtMemcpyAsync(void* dst, void* src, size_t bytes, void* queue, int dir) {
  ENTER(CopyArguments(dst, src, bytes, queue, dir));
  return AsyncCopy(dst, src, bytes, queue, dir);
}

#ifndef EMU_CNRT_6_0
EMU_EXPORT int cnrtMemcpyAsync_V2(void* dst, void* src, size_t bytes, void* queue, int dir) {
  ENTER(CopyArguments(dst, src, bytes, queue, dir));
  return AsyncCopy(dst, src, bytes, queue, dir);
}
#endif

EMU_EXPORT int cnrtMemset(void* ptr, int value, size_t bytes) {
  ENTER(P(ptr) + " " + N(value) + " " + N(bytes));
  if (!OnDevice(ptr, bytes)) return kErrorArgsInvalid;
  return Status(emu::Cpu().Memset(0, ptr, value, bytes));
}

#ifndef EMU_CNRT_OMIT_MEMSET_ASYNC
EMU_EXPORT int cnrtMemsetAsync(void* ptr, int value, size_t bytes, void* queue) {
  ENTER(P(ptr) + " " + N(value) + " " + N(bytes) + " queue=" + P(queue));
  Queue q;
  if (const int e = ResolveQueue(queue, &q)) return e;
  if (!OnDevice(ptr, bytes)) return kErrorArgsInvalid;
  if (Capturing(q)) {
    infinirtPluginGraphNode node{};
    node.kind = INFINIRT_GRAPH_NODE_MEMSET;
    node.params.set.ptr = ptr;
    node.params.set.value = value;
    node.params.set.count = bytes;
    emu::Capture(*q.stream, node);
    return kSuccess;
  }
  return Status(emu::Cpu().MemsetAsync(0, ptr, value, bytes, q.cpu));
}
#endif

namespace {

// cnrtPointerAttributes_t
struct PointerAttributes {
  int type;  // cnrtMemType_t: unregistered 0, host 1, device 2
  int device;
  size_t size;
  void* device_pointer;
  void* host_pointer;
  int cache_mode;
  void* device_base_pointer;
};

}  // namespace

EMU_EXPORT int cnrtPointerGetAttributes(void* attributes, const void* ptr) {
  ENTER(P(ptr));
  if (attributes == nullptr || ptr == nullptr) return kErrorArgsInvalid;
  PointerAttributes result{};
  const emu::MemoryKind kind = emu::KindOf(ptr, 1);
  result.type = kind == emu::MemoryKind::kDevice ? 2 : kind == emu::MemoryKind::kPinnedHost ? 1 : 0;
  result.device = result.type == 0 ? -1 : emu::CurrentDevice();
  if (result.type == 2) result.device_pointer = const_cast<void*>(ptr);
  if (result.type == 1) result.host_pointer = const_cast<void*>(ptr);
  std::memcpy(attributes, &result, sizeof(result));
  return kSuccess;
}

#ifndef EMU_CNRT_6_0
// Queue-ordered allocation (6.14): the CPU backend's stream-ordered pool.
EMU_EXPORT int cnrtMemAllocAsync(void** ptr, size_t bytes, void* queue) {
  ENTER(N(bytes) + " queue=" + P(queue));
  Queue q;
  if (ptr == nullptr) return kErrorArgsInvalid;
  if (const int e = ResolveQueueNotCapturing(queue, &q)) return e;  // memory nodes: not emulated
  if (const infinirtError_t e = emu::Cpu().MallocAsync(0, ptr, bytes, q.cpu)) return Status(e);
  emu::TrackMemory(*ptr, bytes, emu::MemoryKind::kDevice, emu::CurrentDevice());
  return kSuccess;
}

EMU_EXPORT int cnrtMemFreeAsync(void* ptr, void* queue) {
  ENTER(P(ptr) + " queue=" + P(queue));
  Queue q;
  if (const int e = ResolveQueueNotCapturing(queue, &q)) return e;
  if (emu::KindOf(ptr, 0) != emu::MemoryKind::kDevice) return kErrorArgsInvalid;
  if (const infinirtError_t e = emu::Cpu().FreeAsync(0, ptr, q.cpu)) return Status(e);
  emu::UntrackMemory(ptr, emu::MemoryKind::kDevice);
  return kSuccess;
}

namespace {

// One default pool per device, a live handle (every device's pool is the CPU backend's).
struct MemPool {
  int device;
};

void* DefaultPool(int device) {
  static std::mutex mutex;
  static std::map<int, std::unique_ptr<MemPool>>* pools =
      new std::map<int, std::unique_ptr<MemPool>>;
  std::lock_guard<std::mutex> lock(mutex);
  std::unique_ptr<MemPool>& pool = (*pools)[device];
  if (!pool) {
    pool = std::make_unique<MemPool>(MemPool{device});
    emu::Register(pool.get());
  }
  return pool.get();
}

bool KnownPoolAttribute(int attr) { return attr >= 1 && attr <= 8; }

}  // namespace

EMU_EXPORT int cnrtDeviceGetDefaultMemPool(void** pool, int device) {
  ENTER(N(device));
  if (pool == nullptr) return kErrorArgsInvalid;
  if (!ValidDevice(device)) return kErrorDeviceInvalid;
  *pool = DefaultPool(device);
  return kSuccess;
}

EMU_EXPORT int cnrtMemPoolGetAttribute(void* pool, int attr, void* value) {
  ENTER(P(pool) + " attr=" + N(attr));
  if (!emu::IsLive(pool) || !KnownPoolAttribute(attr) || value == nullptr) {
    return kErrorArgsInvalid;
  }
  return Status(
      emu::Cpu().MemPoolGetAttribute(0, static_cast<enum infinirtMemPoolAttr>(attr), value));
}

EMU_EXPORT int cnrtMemPoolSetAttribute(void* pool, int attr, void* value) {
  ENTER(P(pool) + " attr=" + N(attr));
  if (!emu::IsLive(pool) || !KnownPoolAttribute(attr) || value == nullptr) {
    return kErrorArgsInvalid;
  }
  return Status(
      emu::Cpu().MemPoolSetAttribute(0, static_cast<enum infinirtMemPoolAttr>(attr), value));
}

EMU_EXPORT int cnrtMemPoolTrimTo(void* pool, size_t min_bytes_to_keep) {
  ENTER(P(pool) + " " + N(min_bytes_to_keep));
  if (!emu::IsLive(pool)) return kErrorArgsInvalid;
  return Status(emu::Cpu().MemPoolTrimTo(0, min_bytes_to_keep));
}
#endif  // EMU_CNRT_6_0

// ---------------------------------------------------------------------------------------------
// Queues

namespace {

// CNRT's queue priorities, [7, 0] as a real MLU has them (lower runs first).
constexpr int kLeastPriority = 7;
constexpr int kGreatestPriority = 0;

// cpu_priority: the CPU backend's, in its own range (emu::CpuPriority).
int CreateQueue(void** queue, int cpu_priority = 0) {
  if (queue == nullptr) return kErrorArgsInvalid;
  auto made = std::make_unique<emu::Stream>();
  made->device = emu::CurrentDevice();
  // Blocking: a CNDrv >= 3 queue synchronises with the legacy (NULL) queue.
  if (const infinirtError_t e =
          emu::Cpu().StreamCreateWithPriority(0, &made->cpu, 0, cpu_priority)) {
    return Status(e);
  }
  *queue = made.release();
  emu::Register(*queue);
  return kSuccess;
}

}  // namespace

EMU_EXPORT int cnrtQueueCreate(void** queue) {
  ENTER("");
  return CreateQueue(queue);
}

EMU_EXPORT int cnrtDeviceGetQueuePriorityRange(int* least, int* greatest) {
  ENTER("");
  if (least == nullptr || greatest == nullptr) return kErrorArgsInvalid;
  *least = kLeastPriority;
  *greatest = kGreatestPriority;
  return kSuccess;
}

// The flags are reserved (0). CNRT's priorities map onto the CPU backend's, so that a queue of
// greater priority is picked first here too.
EMU_EXPORT int cnrtQueueCreateWithPriority(void** queue, unsigned int flags, int priority) {
  ENTER("flags=" + N(flags) + " priority=" + std::to_string(priority));
  if (flags != 0 || priority < kGreatestPriority || priority > kLeastPriority) {
    return kErrorArgsInvalid;
  }
  return CreateQueue(queue, emu::CpuPriority(priority, kLeastPriority));
}

EMU_EXPORT int cnrtQueueDestroy(void* queue) {
  ENTER(P(queue));
  if (queue == nullptr || queue == kQueueLegacy || queue == kQueuePerThread) {
    return kErrorArgsInvalid;  // the implicit queues are the runtime's
  }
  if (!emu::Unregister(queue)) return kErrorInvalidResourceHandle;
  std::unique_ptr<emu::Stream> owned(static_cast<emu::Stream*>(queue));
  return Status(emu::Cpu().StreamDestroy(0, owned->cpu));
}

EMU_EXPORT int cnrtQueueSync(void* queue) {
  ENTER(P(queue));
  Queue q;
  if (const int e = ResolveQueueNotCapturing(queue, &q)) return e;
  return Status(emu::Cpu().StreamSynchronize(0, q.cpu));
}

EMU_EXPORT int cnrtQueueQuery(void* queue) {
  ENTER(P(queue));
  Queue q;
  if (const int e = ResolveQueueNotCapturing(queue, &q)) return e;
  return Status(emu::Cpu().StreamQuery(0, q.cpu));  // busy: cnrtErrorBusy
}

// The notifier comes first. CNRT_NOTIFIER_WAIT_EXTERNAL (1) is for captures, which do not
// record waits here.
EMU_EXPORT int cnrtQueueWaitNotifier(void* notifier, void* queue, unsigned int flag) {
  ENTER(P(notifier) + " queue=" + P(queue) + " flag=" + N(flag));
  Queue q;
  if (const int e = ResolveQueueNotCapturing(queue, &q)) return e;
  emu::Event* n = NotifierOf(notifier);
  if (n == nullptr) return kErrorInvalidResourceHandle;
  if (flag != 0) return kErrorArgsInvalid;
  return Status(emu::Cpu().StreamWaitEvent(0, q.cpu, n->cpu, 0));
}

EMU_EXPORT int cnrtInvokeHostFunc(void* queue, void (*fn)(void*), void* user_data) {
  ENTER(P(queue));
  Queue q;
  if (const int e = ResolveQueue(queue, &q)) return e;
  if (fn == nullptr) return kErrorArgsInvalid;
  if (Capturing(q)) {
    infinirtPluginGraphNode node{};
    node.kind = INFINIRT_GRAPH_NODE_HOST;
    node.params.host.fn = fn;
    node.params.host.user_data = user_data;
    emu::Capture(*q.stream, node);
    return kSuccess;
  }
  return Status(emu::Cpu().LaunchHostFunc(0, q.cpu, fn, user_data));
}

// ---------------------------------------------------------------------------------------------
// Notifiers

namespace {

int CreateNotifier(void** notifier, unsigned int flags) {
  if (notifier == nullptr) return kErrorArgsInvalid;
#ifdef EMU_CNRT_6_0
  constexpr unsigned int kKnownFlags = kDisableTimingSw;  // the others came with 6.14
#else
  constexpr unsigned int kKnownFlags = kDisableTimingSw | kDisableTimingAll | kInterprocess;
#endif
  if ((flags & ~kKnownFlags) != 0) return kErrorArgsInvalid;
  if ((flags & kInterprocess) && !(flags & kDisableTimingAll)) return kErrorArgsInvalid;
  unsigned int cpu_flags = 0;
  if (flags & (kDisableTimingSw | kDisableTimingAll)) cpu_flags |= infinirtEventDisableTiming;
  if (flags & kInterprocess) cpu_flags |= infinirtEventInterprocess;
  auto made = std::make_unique<emu::Event>();
  made->device = emu::CurrentDevice();
  made->flags = flags;
  if (const infinirtError_t e = emu::Cpu().EventCreate(0, &made->cpu, cpu_flags)) {
    return Status(e);
  }
  *notifier = made.release();
  emu::Register(*notifier);
  return kSuccess;
}

}  // namespace

EMU_EXPORT int cnrtNotifierCreate(void** notifier) {
  ENTER("");
  return CreateNotifier(notifier, 0);
}

EMU_EXPORT int cnrtNotifierCreateWithFlags(void** notifier, unsigned int flags) {
  ENTER("flags=" + N(flags));
  return CreateNotifier(notifier, flags);
}

EMU_EXPORT int cnrtNotifierDestroy(void* notifier) {
  ENTER(P(notifier));
  if (!emu::Unregister(notifier)) return kErrorInvalidResourceHandle;
  std::unique_ptr<emu::Event> owned(static_cast<emu::Event*>(notifier));
  return Status(emu::Cpu().EventDestroy(0, owned->cpu));
}

EMU_EXPORT int cnrtPlaceNotifier(void* notifier, void* queue) {
  ENTER(P(notifier) + " queue=" + P(queue));
  Queue q;
  if (const int e = ResolveQueueNotCapturing(queue, &q)) return e;  // place nodes: not emulated
  emu::Event* n = NotifierOf(notifier);
  if (n == nullptr) return kErrorInvalidResourceHandle;
  if (n->device != emu::CurrentDevice()) return kErrorDevice;
  return Status(emu::Cpu().EventRecord(0, n->cpu, q.cpu));
}

EMU_EXPORT int cnrtQueryNotifier(void* notifier) {
  ENTER(P(notifier));
  emu::Event* n = NotifierOf(notifier);
  if (n == nullptr) return kErrorInvalidResourceHandle;
  return Status(emu::Cpu().EventQuery(0, n->cpu));  // busy: cnrtErrorBusy
}

// Success for a notifier never placed.
EMU_EXPORT int cnrtWaitNotifier(void* notifier) {
  ENTER(P(notifier));
  emu::Event* n = NotifierOf(notifier);
  if (n == nullptr) return kErrorInvalidResourceHandle;
  return Status(emu::Cpu().EventSynchronize(0, n->cpu));
}

// The elapsed time comes out through the last argument. cnrt.h: a notifier without timing
// gives cnrtErrorArgsInvalid, one never placed cnrtErrorCndrvFuncCall, a busy one cnrtErrorBusy.
EMU_EXPORT int cnrtNotifierElapsedTime(void* start, void* end, float* ms) {
  ENTER(P(start) + " " + P(end));
  emu::Event* first = NotifierOf(start);
  emu::Event* last = NotifierOf(end);
  if (first == nullptr || last == nullptr) return kErrorInvalidResourceHandle;
  if (ms == nullptr) return kErrorArgsInvalid;
  if ((first->flags | last->flags) & (kDisableTimingSw | kDisableTimingAll)) {
    return kErrorArgsInvalid;
  }
  const infinirtError_t error = emu::Cpu().EventElapsedTime(0, ms, first->cpu, last->cpu);
  return error == infinirtErrorInvalidResourceHandle ? kErrorCndrvFuncCall : Status(error);
}

// ---------------------------------------------------------------------------------------------
// Queue capture and TaskTopos (single-queue captures: what the plugin issues)

EMU_EXPORT int cnrtQueueBeginCapture(void* queue, int mode) {
  ENTER(P(queue) + " mode=" + N(mode));
  Queue q;
  if (const int e = ResolveQueue(queue, &q)) return e;
  if (mode < 0 || mode > 2) return kErrorArgsInvalid;
  if (q.stream == nullptr) return kErrorArgsInvalid;  // the implicit queues cannot capture
  if (q.stream->capturing) return kErrorIllegalState;
  q.stream->capturing = true;
  q.stream->captured.clear();
  return kSuccess;
}

EMU_EXPORT int cnrtQueueEndCapture(void* queue, void** topo) {
  ENTER(P(queue));
  Queue q;
  if (const int e = ResolveQueue(queue, &q)) return e;
  if (topo == nullptr) return kErrorArgsInvalid;
  if (q.stream == nullptr || !q.stream->capturing) return kErrorIllegalState;
  auto made = std::make_unique<emu::Graph>();
  made->nodes = std::move(q.stream->captured);
  q.stream->captured.clear();
  q.stream->capturing = false;
  *topo = made.release();
  emu::Register(*topo);
  return kSuccess;
}

EMU_EXPORT int cnrtQueueIsCapturing(void* queue, int* status) {
  ENTER(P(queue));
  Queue q;
  if (const int e = ResolveQueue(queue, &q)) return e;
  if (status == nullptr) return kErrorArgsInvalid;
  *status = Capturing(q) ? 1 : 0;  // cnrtQueueCaptureStatusActive / None
  return kSuccess;
}

// CUDA-11-style: the error node and log buffer are optional outputs.
EMU_EXPORT int cnrtTaskTopoInstantiate(void** entity, void* topo, void** error_node, char* log,
                                       size_t log_size) {
  ENTER(P(topo) + " " + P(error_node) + " " + P(log) + " " + N(log_size));
  if (entity == nullptr || !emu::IsLive(topo)) return kErrorArgsInvalid;
  if (log == nullptr && log_size != 0) return kErrorArgsInvalid;
  emu::Exec* made = nullptr;
  if (const infinirtError_t e = emu::Instantiate(*static_cast<emu::Graph*>(topo), &made)) {
    return Status(e);
  }
  *entity = made;
  return kSuccess;
}

EMU_EXPORT int cnrtTaskTopoDestroy(void* topo) {
  ENTER(P(topo));
  if (!emu::Unregister(topo)) return kErrorInvalidResourceHandle;
  delete static_cast<emu::Graph*>(topo);
  return kSuccess;
}

EMU_EXPORT int cnrtTaskTopoEntityInvoke(void* entity, void* queue) {
  ENTER(P(entity) + " queue=" + P(queue));
  Queue q;
  if (const int e = ResolveQueueNotCapturing(queue, &q)) return e;  // child topos: not emulated
  if (!emu::IsLive(entity)) return kErrorInvalidResourceHandle;
  return Status(emu::Cpu().GraphLaunch(0, static_cast<emu::Exec*>(entity)->cpu, q.cpu));
}

EMU_EXPORT int cnrtTaskTopoEntityDestroy(void* entity) {
  ENTER(P(entity));
  if (!emu::Unregister(entity)) return kErrorInvalidResourceHandle;
  std::unique_ptr<emu::Exec> owned(static_cast<emu::Exec*>(entity));
  return Status(emu::Cpu().GraphExecDestroy(0, owned->cpu));
}
