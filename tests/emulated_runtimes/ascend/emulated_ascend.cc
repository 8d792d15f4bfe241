// A host-emulated AscendCL runtime (tests only; see emu_core.h). THIS IS NOT CANN: it is a
// library named libascendcl.so that exports the AscendCL functions the Ascend plugin resolves,
// with CANN's prototypes, enum values and error codes (docs/vendor-runtimes.md), and executes them
// on InfiniRT's own CPU backend. It proves that the plugin translates InfiniRT to ACL correctly
// (argument orders, enum values, status out-parameters, thread rules); it proves nothing about
// Ascend hardware. Where CANN documents a rule, the emulation enforces it:
//   - every aclrt* call fails with ACL_ERROR_UNINITIALIZE before aclInit, and with
//     ACL_ERROR_RT_CONTEXT_NULL in a thread that has not called aclrtSetDevice;
//   - streams never synchronise implicitly with the default stream (all ACL streams are
//     "non-blocking"), and aclrtDestroyStream waits for the stream's pending work;
//   - stream and event queries answer ACL_SUCCESS and report "not ready" in the status
//     out-parameter (aclrtStreamQuery: COMPLETE 0 / NOT_READY 1; aclrtQueryEventStatus:
//     NOT_READY 0 / COMPLETE 1);
//   - copies check their direction against the memory involved, destMax / maxCount bound the
//     count, events without ACL_EVENT_SYNC cannot be waited for, events without
//     ACL_EVENT_TIME_LINE have no timestamps;
//   - capture (aclmdlRICapture*): the default stream cannot be captured, syncs and queries of a
//     capturing stream are refused, captured copies with a host side need aclrtMallocHost
//     memory, GLOBAL mode refuses synchronous copies and memsets, and a model with a launch
//     still running cannot be destroyed.
// EMU_ASCEND_DEVICES sets the device count, EMU_ASCEND_FAIL_INIT=1 makes aclInit fail.
// Built with EMU_ASCEND_OMIT_INIT it lacks aclInit (a library the plugin cannot use alone).
// Built with EMU_ASCEND_MINIMAL it is an older runtime: only the functions the plugin requires
// (no aclrtLaunchHostFunc, aclmdlRI* capture, aclrtGetMemInfo, aclrtGetVersion, ...).
#include <atomic>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <unordered_map>

#include "emu_core.h"

#define EMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace emu = infinirt::emu;

namespace {

// ACL's numbers (acl_base_rt.h, acl_rt.h, error_codes/rt_error_codes.h).
constexpr int kSuccess = 0;                   // ACL_SUCCESS
constexpr int kInvalidParam = 100000;         // ACL_ERROR_INVALID_PARAM
constexpr int kUninitialize = 100001;         // ACL_ERROR_UNINITIALIZE
constexpr int kRepeatInitialize = 100002;     // ACL_ERROR_REPEAT_INITIALIZE
constexpr int kRepeatFinalize = 100037;       // ACL_ERROR_REPEAT_FINALIZE
constexpr int kFailure = 500001;              // ACL_ERROR_FAILURE
constexpr int kRtParamInvalid = 107000;       // ACL_ERROR_RT_PARAM_INVALID
constexpr int kRtInvalidDeviceId = 107001;    // ACL_ERROR_RT_INVALID_DEVICEID
constexpr int kRtContextNull = 107002;        // ACL_ERROR_RT_CONTEXT_NULL
constexpr int kRtStreamContext = 107003;      // ACL_ERROR_RT_STREAM_CONTEXT
constexpr int kRtTimestampInvalid = 107006;   // ACL_ERROR_RT_EVENT_TIMESTAMP_INVALID
constexpr int kRtInvalidHandle = 107017;      // ACL_ERROR_RT_INVALID_HANDLE
constexpr int kRtStreamCaptured = 107027;     // ACL_ERROR_RT_STREAM_CAPTURED
constexpr int kRtStreamNotCaptured = 107029;  // ACL_ERROR_RT_STREAM_NOT_CAPTURED
constexpr int kRtCaptureNotSupport = 107030;  // ACL_ERROR_RT_CAPTURE_MODE_NOT_SUPPORT
constexpr int kRtModelRunning = 107037;       // ACL_ERROR_RT_MODEL_RUNNING
constexpr int kRtFeatureNotSupport = 207000;  // ACL_ERROR_RT_FEATURE_NOT_SUPPORT
constexpr int kRtMemoryAllocation = 207001;   // ACL_ERROR_RT_MEMORY_ALLOCATION
constexpr int kRtNoPermission = 207006;       // ACL_ERROR_RT_NO_PERMISSION
constexpr int kRtInternalError = 507000;      // ACL_ERROR_RT_INTERNAL_ERROR
constexpr int kRtEventNotComplete = 507006;   // ACL_ERROR_RT_EVENT_NOT_COMPLETE

constexpr uint32_t kEventSync = 0x1;            // ACL_EVENT_SYNC
constexpr uint32_t kEventTimeLine = 0x8;        // ACL_EVENT_TIME_LINE
constexpr uint32_t kEventDeviceUseOnly = 0x10;  // ACL_EVENT_DEVICE_USE_ONLY
constexpr uint32_t kEventExternal = 0x20;       // ACL_EVENT_EXTERNAL: alone
constexpr uint32_t kEventIpc = 0x40;            // ACL_EVENT_IPC: alone, Ex form only
constexpr uint32_t kEventProgress = 0x2;        // ACL_EVENT_CAPTURE_STREAM_PROGRESS
constexpr int kStreamComplete = 0;              // ACL_STREAM_STATUS_COMPLETE
constexpr int kStreamNotReady = 1;              // ACL_STREAM_STATUS_NOT_READY
constexpr int kEventNotReady = 0;               // ACL_EVENT_RECORDED_STATUS_NOT_READY
constexpr int kEventComplete = 1;               // ACL_EVENT_RECORDED_STATUS_COMPLETE
constexpr int kCaptureGlobal = 0;               // ACL_MODEL_RI_CAPTURE_MODE_GLOBAL
constexpr int kCaptureRelaxed = 2;              // ACL_MODEL_RI_CAPTURE_MODE_RELAXED
constexpr int kCaptureStatusNone = 0;           // ACL_MODEL_RI_CAPTURE_STATUS_NONE
constexpr int kCaptureStatusActive = 1;         // ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE
constexpr int kMemAttrLast = 17;                // ACL_MEM_P2P_HUGE1G, the last aclrtMemAttr
constexpr int kDeviceInfoL2Size = 2;            // ACL_DEVICE_INFO_L2_SIZE

struct Init {
  Init() { emu::Configure("ASCEND"); }
} g_init;

std::atomic<bool> g_initialized{false};
std::atomic<int> g_captures{0};         // captures in progress, any mode
std::atomic<int> g_global_captures{0};  // ... in GLOBAL mode
// The calling thread's latest error message (aclGetRecentErrMsg). A plain buffer: the process's
// exit handlers still call in after the thread's destructors ran.
thread_local char t_last_message[256];

void SetMessage(const std::string& message) {
  std::snprintf(t_last_message, sizeof(t_last_message), "%s", message.c_str());
}

// What a function needs before it may run.
enum class Needs { kNothing, kInit, kDevice };

// Every function starts here: the record, injected failures, then ACL's preconditions.
int Enter(const char* name, const std::string& arguments, Needs needs) {
  emu::Record(name, arguments);
  t_last_message[0] = '\0';
  if (const int injected = emu::InjectedFailure(name)) return injected;
  if (needs != Needs::kNothing && !g_initialized.load()) {
    SetMessage(std::string(name) + " called before aclInit");
    return kUninitialize;
  }
  if (needs == Needs::kDevice && emu::CurrentDevice() < 0) {
    SetMessage(std::string(name) + ": no aclrtSetDevice in this thread");
    return kRtContextNull;
  }
  return kSuccess;
}

#define ENTER(name, arguments, needs)                                             \
  do {                                                                            \
    if (const int refused = Enter(name, arguments, Needs::needs)) return refused; \
  } while (0)

std::string P(const void* p) { return emu::Pointer(p); }
std::string N(unsigned long long n) { return std::to_string(n); }

// The CPU backend's answer in ACL's numbers.
int Status(infinirtError_t error) {
  switch (error) {
    case infinirtSuccess:
      return kSuccess;
    case infinirtErrorInvalidValue:
      return kRtParamInvalid;
    case infinirtErrorMemoryAllocation:
      return kRtMemoryAllocation;
    case infinirtErrorInvalidResourceHandle:
      return kRtInvalidHandle;
    case infinirtErrorNotReady:
      return kRtEventNotComplete;
    case infinirtErrorNotPermitted:  // a blocking call from a host function
      return kRtNoPermission;
    case infinirtErrorNotSupported:
      return kRtFeatureNotSupport;
    default:
      return kRtInternalError;
  }
}

// ---------------------------------------------------------------------------------------------
// Handles: typed, so that a stream passed as an event is rejected.

enum class Kind { kStream, kEvent, kModel };

struct AclStream : emu::Stream {
  int capture_mode = kCaptureRelaxed;
};

struct Model {
  emu::Exec* exec = nullptr;
  infinirtPluginEvent_t last_launch = nullptr;  // CPU event recorded after each launch
};

std::mutex g_handles_mutex;
std::unordered_map<const void*, Kind> g_handles;

void Track(const void* handle, Kind kind) {
  emu::Register(handle);
  std::lock_guard<std::mutex> lock(g_handles_mutex);
  g_handles[handle] = kind;
}

bool Live(const void* handle, Kind kind) {
  std::lock_guard<std::mutex> lock(g_handles_mutex);
  const auto found = g_handles.find(handle);
  return found != g_handles.end() && found->second == kind;
}

bool Untrack(const void* handle, Kind kind) {
  {
    std::lock_guard<std::mutex> lock(g_handles_mutex);
    const auto found = g_handles.find(handle);
    if (found == g_handles.end() || found->second != kind) return false;
    g_handles.erase(found);
  }
  return emu::Unregister(handle);
}

// A stream argument: NULL is the default stream of the current context; any other stream must
// be live and belong to the current device's context.
int StreamOf(void* handle, infinirtPluginStream_t* cpu, AclStream** stream) {
  *stream = nullptr;
  *cpu = INFINIRT_PLUGIN_STREAM_LEGACY;
  if (handle == nullptr) return kSuccess;
  if (!Live(handle, Kind::kStream)) return kRtInvalidHandle;
  *stream = static_cast<AclStream*>(handle);
  if ((*stream)->device != emu::CurrentDevice()) return kRtStreamContext;
  *cpu = (*stream)->cpu;
  return kSuccess;
}

emu::Event* EventOf(void* handle) {
  return Live(handle, Kind::kEvent) ? static_cast<emu::Event*>(handle) : nullptr;
}

bool Capturing(const AclStream* stream) { return stream != nullptr && stream->capturing; }

// ---------------------------------------------------------------------------------------------
// Copies

bool IsDevice(const void* p, size_t count) {
  return emu::KindOf(p, count) == emu::MemoryKind::kDevice;
}

// aclrtMemcpyKind checked against the memory the runtime handed out.
int CheckDirection(void* dst, const void* src, size_t count, int kind) {
  const bool dst_device = IsDevice(dst, count);
  const bool src_device = IsDevice(src, count);
  bool ok = false;
  switch (kind) {
    case 0:  // ACL_MEMCPY_HOST_TO_HOST
      ok = !dst_device && !src_device;
      break;
    case 1:  // ACL_MEMCPY_HOST_TO_DEVICE
      ok = dst_device && !src_device;
      break;
    case 2:  // ACL_MEMCPY_DEVICE_TO_HOST
      ok = !dst_device && src_device;
      break;
    case 3:  // ACL_MEMCPY_DEVICE_TO_DEVICE
      ok = dst_device && src_device;
      break;
    case 4:  // ACL_MEMCPY_DEFAULT
      ok = true;
      break;
    default:  // the buffered and inter-device kinds are not emulated
      ok = false;
  }
  if (ok) return kSuccess;
  SetMessage("memcpy kind " + N(kind) + " does not match the memory");
  return kRtParamInvalid;
}

enum infinirtMemcpyKind ResolvedKind(void* dst, const void* src, size_t count, int kind) {
  if (kind != 4) return static_cast<enum infinirtMemcpyKind>(kind);
  return static_cast<enum infinirtMemcpyKind>((IsDevice(src, count) ? 2 : 0) +
                                              (IsDevice(dst, count) ? 1 : 0));
}

// Captured copies may touch host memory only if it came from aclrtMallocHost.
bool HostSidesPinned(void* dst, const void* src, size_t count) {
  auto pinned_or_device = [count](const void* p) {
    const emu::MemoryKind kind = emu::KindOf(p, count);
    return kind == emu::MemoryKind::kDevice || kind == emu::MemoryKind::kPinnedHost;
  };
  return pinned_or_device(dst) && pinned_or_device(src);
}

int CheckCopyArguments(void* dst, size_t dest_max, const void* src, size_t count, int kind) {
  if (dst == nullptr || src == nullptr || count > dest_max) return kInvalidParam;
  return CheckDirection(dst, src, count, kind);
}

int CheckSetArguments(void* ptr, size_t max_count, size_t count) {
  if (ptr == nullptr || count > max_count) return kInvalidParam;
  if (emu::KindOf(ptr, count) == emu::MemoryKind::kUnknown) return kInvalidParam;
  return kSuccess;
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Initialisation, devices, versions

#ifndef EMU_ASCEND_OMIT_INIT  // a library without it: the plugin must look elsewhere
EMU_EXPORT int aclInit(const char* config_path) {
  ENTER("aclInit", config_path ? config_path : "NULL", kNothing);
  if (emu::InitFails()) {
    SetMessage("emulated initialisation failure (EMU_ASCEND_FAIL_INIT)");
    return kFailure;
  }
  return g_initialized.exchange(true) ? kRepeatInitialize : kSuccess;
}
#endif

EMU_EXPORT int aclFinalize(void) {
  ENTER("aclFinalize", "", kNothing);
  return g_initialized.exchange(false) ? kSuccess : kRepeatFinalize;
}

#ifndef EMU_ASCEND_MINIMAL
EMU_EXPORT const char* aclGetRecentErrMsg(void) {
  emu::Record("aclGetRecentErrMsg", "");
  return t_last_message;
}

EMU_EXPORT int aclrtGetVersion(int32_t* major, int32_t* minor, int32_t* patch) {
  ENTER("aclrtGetVersion", "", kNothing);
  if (major == nullptr || minor == nullptr || patch == nullptr) return kInvalidParam;
  *major = 1;
  *minor = 17;
  *patch = 0;
  return kSuccess;
}

EMU_EXPORT const char* aclrtGetSocName(void) {
  emu::Record("aclrtGetSocName", "");
  if (emu::InjectedFailure("aclrtGetSocName") != 0 || !g_initialized.load()) return nullptr;
  return "Emulated Ascend (CPU backend)";
}
#endif  // EMU_ASCEND_MINIMAL

EMU_EXPORT int aclrtGetDeviceCount(uint32_t* count) {
  ENTER("aclrtGetDeviceCount", "", kInit);
  if (count == nullptr) return kInvalidParam;
  *count = static_cast<uint32_t>(emu::DeviceCount());
  return kSuccess;
}

EMU_EXPORT int aclrtSetDevice(int32_t device) {
  ENTER("aclrtSetDevice", N(device), kInit);
  if (device < 0 || device >= emu::DeviceCount()) return kRtInvalidDeviceId;
  emu::SetCurrentDevice(device);
  return kSuccess;
}

EMU_EXPORT int aclrtGetDevice(int32_t* device) {
  ENTER("aclrtGetDevice", "", kDevice);
  if (device == nullptr) return kInvalidParam;
  *device = emu::CurrentDevice();
  return kSuccess;
}

EMU_EXPORT int aclrtSynchronizeDevice(void) {
  ENTER("aclrtSynchronizeDevice", "", kDevice);
  if (g_captures.load() > 0) return kRtCaptureNotSupport;
  return Status(emu::Cpu().DeviceSynchronize(0));
}

#ifndef EMU_ASCEND_MINIMAL
EMU_EXPORT int aclGetDeviceCapability(uint32_t device, int info, int64_t* value) {
  ENTER("aclGetDeviceCapability", N(device) + " info=" + N(info), kInit);
  if (value == nullptr || device >= static_cast<uint32_t>(emu::DeviceCount())) {
    return kInvalidParam;
  }
  if (info < 0 || info > kDeviceInfoL2Size) return kInvalidParam;
  int answer = 0;
  const enum infinirtDeviceAttr attr =
      info == kDeviceInfoL2Size ? infinirtDevAttrL2CacheSize : infinirtDevAttrMultiProcessorCount;
  if (const infinirtError_t e = emu::Cpu().DeviceGetAttribute(0, &answer, attr)) return Status(e);
  *value = answer;
  return kSuccess;
}
#endif  // EMU_ASCEND_MINIMAL

// ---------------------------------------------------------------------------------------------
// Memory

#ifndef EMU_ASCEND_MINIMAL
EMU_EXPORT int aclrtGetMemInfo(int attr, size_t* free_bytes, size_t* total_bytes) {
  ENTER("aclrtGetMemInfo", "attr=" + N(attr), kDevice);
  if (attr < 0 || attr > kMemAttrLast || free_bytes == nullptr || total_bytes == nullptr) {
    return kInvalidParam;
  }
  return Status(emu::Cpu().MemGetInfo(0, free_bytes, total_bytes));
}
#endif  // EMU_ASCEND_MINIMAL

EMU_EXPORT int aclrtMalloc(void** ptr, size_t size, int policy) {
  ENTER("aclrtMalloc", N(size) + " policy=" + N(policy), kDevice);
  const int base = policy & ~(0x100 | 0x1000 | 0x100000);  // band-width and read-only bits
  if (ptr == nullptr || size == 0 || base < 0 || base > 7) return kInvalidParam;
  if (const infinirtError_t e = emu::Cpu().Malloc(0, ptr, size)) return Status(e);
  emu::TrackMemory(*ptr, size, emu::MemoryKind::kDevice, emu::CurrentDevice());
  return kSuccess;
}

EMU_EXPORT int aclrtFree(void* ptr) {
  ENTER("aclrtFree", P(ptr), kDevice);
  if (ptr == nullptr || emu::KindOf(ptr, 0) != emu::MemoryKind::kDevice) return kInvalidParam;
  if (const infinirtError_t e = emu::Cpu().Free(0, ptr)) return Status(e);
  emu::UntrackMemory(ptr, emu::MemoryKind::kDevice);
  return kSuccess;
}

EMU_EXPORT int aclrtMallocHost(void** ptr, size_t size) {
  ENTER("aclrtMallocHost", N(size), kDevice);
  if (ptr == nullptr || size == 0) return kInvalidParam;
  if (const infinirtError_t e = emu::Cpu().HostAlloc(0, ptr, size, 0)) return Status(e);
  emu::TrackMemory(*ptr, size, emu::MemoryKind::kPinnedHost, emu::CurrentDevice());
  return kSuccess;
}

EMU_EXPORT int aclrtFreeHost(void* ptr) {
  ENTER("aclrtFreeHost", P(ptr), kDevice);
  if (ptr == nullptr || emu::KindOf(ptr, 0) != emu::MemoryKind::kPinnedHost) return kInvalidParam;
  if (const infinirtError_t e = emu::Cpu().FreeHost(0, ptr)) return Status(e);
  emu::UntrackMemory(ptr, emu::MemoryKind::kPinnedHost);
  return kSuccess;
}

EMU_EXPORT int aclrtMemcpy(void* dst, size_t dest_max, const void* src, size_t count, int kind) {
  ENTER("aclrtMemcpy",
        P(dst) + " destMax=" + N(dest_max) + " " + P(src) + " " + N(count) + " kind=" + N(kind),
        kDevice);
  if (const int e = CheckCopyArguments(dst, dest_max, src, count, kind)) return e;
  if (g_global_captures.load() > 0) return kRtCaptureNotSupport;
  return Status(emu::Cpu().Memcpy(0, dst, src, count, ResolvedKind(dst, src, count, kind)));
}

EMU_EXPORT int aclrtMemcpyAsync(void* dst, size_t dest_max, const void* src, size_t count, int kind,
                                void* stream) {
  ENTER("aclrtMemcpyAsync",
        P(dst) + " destMax=" + N(dest_max) + " " + P(src) + " " + N(count) + " kind=" + N(kind) +
            " stream=" + P(stream),
        kDevice);
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  if (const int e = CheckCopyArguments(dst, dest_max, src, count, kind)) return e;
  const enum infinirtMemcpyKind resolved = ResolvedKind(dst, src, count, kind);
  if (Capturing(s)) {
    if (!HostSidesPinned(dst, src, count)) return kRtCaptureNotSupport;
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

EMU_EXPORT int aclrtMemset(void* ptr, size_t max_count, int32_t value, size_t count) {
  ENTER("aclrtMemset", P(ptr) + " maxCount=" + N(max_count) + " " + N(value) + " " + N(count),
        kDevice);
  if (const int e = CheckSetArguments(ptr, max_count, count)) return e;
  if (g_global_captures.load() > 0) return kRtCaptureNotSupport;
  return Status(emu::Cpu().Memset(0, ptr, value, count));
}

EMU_EXPORT int aclrtMemsetAsync(void* ptr, size_t max_count, int32_t value, size_t count,
                                void* stream) {
  ENTER("aclrtMemsetAsync",
        P(ptr) + " maxCount=" + N(max_count) + " " + N(value) + " " + N(count) +
            " stream=" + P(stream),
        kDevice);
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  if (const int e = CheckSetArguments(ptr, max_count, count)) return e;
  if (Capturing(s)) {
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

// ---------------------------------------------------------------------------------------------
// Streams

// ACL streams do not synchronise with the default stream: non-blocking CPU streams.
EMU_EXPORT int aclrtCreateStream(void** stream) {
  ENTER("aclrtCreateStream", "", kDevice);
  if (stream == nullptr) return kInvalidParam;
  auto made = std::make_unique<AclStream>();
  made->device = emu::CurrentDevice();
  if (const infinirtError_t e = emu::Cpu().StreamCreate(0, &made->cpu, infinirtStreamNonBlocking)) {
    return Status(e);
  }
  *stream = made.release();
  Track(*stream, Kind::kStream);
  return kSuccess;
}

#ifndef EMU_ASCEND_MINIMAL
// Stream priorities: [7, 0] here (lower runs first), mapped onto the CPU backend's range so
// that a stream of greater priority is picked first. The flags (fast launch, ...) change nothing.
constexpr int32_t kLeastPriority = 7;
constexpr int32_t kGreatestPriority = 0;

EMU_EXPORT int aclrtDeviceGetStreamPriorityRange(int32_t* least, int32_t* greatest) {
  ENTER("aclrtDeviceGetStreamPriorityRange", "", kDevice);
  if (least == nullptr || greatest == nullptr) return kInvalidParam;
  *least = kLeastPriority;
  *greatest = kGreatestPriority;
  return kSuccess;
}

EMU_EXPORT int aclrtCreateStreamWithConfig(void** stream, uint32_t priority, uint32_t flag) {
  ENTER("aclrtCreateStreamWithConfig", "priority=" + N(priority) + " flag=" + N(flag), kDevice);
  if (stream == nullptr || priority > static_cast<uint32_t>(kLeastPriority) || (flag & ~0x3fu)) {
    return kInvalidParam;
  }
  auto made = std::make_unique<AclStream>();
  made->device = emu::CurrentDevice();
  const int cpu_priority = emu::CpuPriority(static_cast<int>(priority), kLeastPriority);
  if (const infinirtError_t e = emu::Cpu().StreamCreateWithPriority(
          0, &made->cpu, infinirtStreamNonBlocking, cpu_priority)) {
    return Status(e);
  }
  *stream = made.release();
  Track(*stream, Kind::kStream);
  return kSuccess;
}
#endif  // EMU_ASCEND_MINIMAL

#ifndef EMU_ASCEND_MINIMAL
// Peers: the emulated devices share the host's memory, so each reaches every other.
EMU_EXPORT int aclrtDeviceCanAccessPeer(int32_t* can_access, int32_t device, int32_t peer) {
  ENTER("aclrtDeviceCanAccessPeer", N(device) + " " + N(peer), kDevice);
  if (can_access == nullptr || device < 0 || peer < 0 || device >= emu::DeviceCount() ||
      peer >= emu::DeviceCount() || device == peer) {
    return kInvalidParam;
  }
  *can_access = 1;
  return kSuccess;
}

EMU_EXPORT int aclrtDeviceEnablePeerAccess(int32_t peer, uint32_t flags) {
  ENTER("aclrtDeviceEnablePeerAccess", N(peer) + " flags=" + N(flags), kDevice);
  if (flags != 0 || peer < 0 || peer >= emu::DeviceCount() || peer == emu::CurrentDevice()) {
    return kInvalidParam;
  }
  return kSuccess;
}

EMU_EXPORT int aclrtDeviceDisablePeerAccess(int32_t peer) {
  ENTER("aclrtDeviceDisablePeerAccess", N(peer), kDevice);
  if (peer < 0 || peer >= emu::DeviceCount() || peer == emu::CurrentDevice()) return kInvalidParam;
  return kSuccess;
}
#endif  // EMU_ASCEND_MINIMAL

// Waits for the stream's pending work before destroying it, as CANN documents.
EMU_EXPORT int aclrtDestroyStream(void* stream) {
  ENTER("aclrtDestroyStream", P(stream), kDevice);
  if (stream == nullptr) return kInvalidParam;  // the default stream cannot be destroyed
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  if (s->capturing) return kRtStreamCaptured;
  if (const infinirtError_t e = emu::Cpu().StreamSynchronize(0, cpu)) return Status(e);
  if (!Untrack(stream, Kind::kStream)) return kRtInvalidHandle;
  std::unique_ptr<AclStream> owned(s);
  return Status(emu::Cpu().StreamDestroy(0, cpu));
}

EMU_EXPORT int aclrtSynchronizeStream(void* stream) {
  ENTER("aclrtSynchronizeStream", P(stream), kDevice);
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  if (Capturing(s)) return kRtCaptureNotSupport;
  return Status(emu::Cpu().StreamSynchronize(0, cpu));
}

// Not ready is reported in *status; the call itself succeeds.
EMU_EXPORT int aclrtStreamQuery(void* stream, int* status) {
  ENTER("aclrtStreamQuery", P(stream), kDevice);
  if (status == nullptr) return kInvalidParam;
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  if (Capturing(s)) return kRtCaptureNotSupport;
  const infinirtError_t e = emu::Cpu().StreamQuery(0, cpu);
  if (e != infinirtSuccess && e != infinirtErrorNotReady) return Status(e);
  *status = e == infinirtSuccess ? kStreamComplete : kStreamNotReady;
  return kSuccess;
}

EMU_EXPORT int aclrtStreamWaitEvent(void* stream, void* event) {
  ENTER("aclrtStreamWaitEvent", P(stream) + " " + P(event), kDevice);
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  emu::Event* e = EventOf(event);
  if (e == nullptr) return kRtInvalidHandle;
  if (!(e->flags & kEventSync)) {
    SetMessage("aclrtStreamWaitEvent: the event was created without ACL_EVENT_SYNC");
    return kInvalidParam;
  }
  if (Capturing(s)) return kRtCaptureNotSupport;  // not emulated
  return Status(emu::Cpu().StreamWaitEvent(0, cpu, e->cpu, 0));
}

#ifndef EMU_ASCEND_MINIMAL
EMU_EXPORT int aclrtLaunchHostFunc(void* stream, void (*fn)(void*), void* args) {
  ENTER("aclrtLaunchHostFunc", P(stream), kDevice);
  if (fn == nullptr) return kInvalidParam;
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  if (Capturing(s)) {
    infinirtPluginGraphNode node{};
    node.kind = INFINIRT_GRAPH_NODE_HOST;
    node.params.host.fn = fn;
    node.params.host.user_data = args;
    emu::Capture(*s, node);
    return kSuccess;
  }
  return Status(emu::Cpu().LaunchHostFunc(0, cpu, fn, args));
}
#endif  // EMU_ASCEND_MINIMAL

// ---------------------------------------------------------------------------------------------
// Events

namespace {
// The flags each creation function documents; ACL_EVENT_EXTERNAL and ACL_EVENT_IPC go alone.
bool ValidEventFlags(uint32_t flags, bool ex) {
  const uint32_t alone = ex ? kEventIpc : kEventExternal;
  const uint32_t known =
      kEventSync | kEventProgress | kEventTimeLine | alone | (ex ? 0u : kEventDeviceUseOnly);
  if ((flags & ~known) != 0) return false;
  return (flags & alone) == 0 || flags == alone;
}

int CreateEvent(void** event, uint32_t flags) {
  if (event == nullptr) return kInvalidParam;
  auto made = std::make_unique<emu::Event>();
  made->device = emu::CurrentDevice();
  made->flags = flags;
  const unsigned int cpu_flags = (flags & kEventTimeLine) ? 0u : infinirtEventDisableTiming;
  if (const infinirtError_t e = emu::Cpu().EventCreate(0, &made->cpu, cpu_flags)) {
    return Status(e);
  }
  *event = made.release();
  Track(*event, Kind::kEvent);
  return kSuccess;
}
}  // namespace

EMU_EXPORT int aclrtCreateEventWithFlag(void** event, uint32_t flag) {
  ENTER("aclrtCreateEventWithFlag", "flag=" + N(flag), kDevice);
  if (!ValidEventFlags(flag, /*ex=*/false)) return kInvalidParam;
  return CreateEvent(event, flag);
}

#ifndef EMU_ASCEND_MINIMAL
// Events whose records replace one another and whose waits use the record current at the call
// (CANN's aclrtRecordEvent documentation): the CPU backend's events behave so.
EMU_EXPORT int aclrtCreateEventExWithFlag(void** event, uint32_t flag) {
  ENTER("aclrtCreateEventExWithFlag", "flag=" + N(flag), kDevice);
  if (!ValidEventFlags(flag, /*ex=*/true)) return kInvalidParam;
  return CreateEvent(event, flag);
}
#endif  // EMU_ASCEND_MINIMAL

// The default event has timestamps and can be waited for.
EMU_EXPORT int aclrtCreateEvent(void** event) {
  ENTER("aclrtCreateEvent", "", kDevice);
  return CreateEvent(event, kEventSync | kEventTimeLine);
}

EMU_EXPORT int aclrtDestroyEvent(void* event) {
  ENTER("aclrtDestroyEvent", P(event), kDevice);
  emu::Event* e = EventOf(event);
  if (e == nullptr || !Untrack(event, Kind::kEvent)) return kRtInvalidHandle;
  std::unique_ptr<emu::Event> owned(e);
  return Status(emu::Cpu().EventDestroy(0, owned->cpu));
}

EMU_EXPORT int aclrtRecordEvent(void* event, void* stream) {
  ENTER("aclrtRecordEvent", P(event) + " stream=" + P(stream), kDevice);
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  emu::Event* e = EventOf(event);
  if (e == nullptr) return kRtInvalidHandle;
  if (e->device != emu::CurrentDevice()) return kRtStreamContext;
  if (Capturing(s)) return kRtCaptureNotSupport;  // not emulated
  return Status(emu::Cpu().EventRecord(0, e->cpu, cpu));
}

// Not ready is reported in *status; the call itself succeeds.
EMU_EXPORT int aclrtQueryEventStatus(void* event, int* status) {
  ENTER("aclrtQueryEventStatus", P(event), kDevice);
  emu::Event* e = EventOf(event);
  if (e == nullptr) return kRtInvalidHandle;
  if (status == nullptr) return kInvalidParam;
  const infinirtError_t error = emu::Cpu().EventQuery(0, e->cpu);
  if (error != infinirtSuccess && error != infinirtErrorNotReady) return Status(error);
  *status = error == infinirtSuccess ? kEventComplete : kEventNotReady;
  return kSuccess;
}

EMU_EXPORT int aclrtSynchronizeEvent(void* event) {
  ENTER("aclrtSynchronizeEvent", P(event), kDevice);
  emu::Event* e = EventOf(event);
  if (e == nullptr) return kRtInvalidHandle;
  return Status(emu::Cpu().EventSynchronize(0, e->cpu));
}

EMU_EXPORT int aclrtEventElapsedTime(float* ms, void* start, void* end) {
  ENTER("aclrtEventElapsedTime", P(start) + " " + P(end), kDevice);
  emu::Event* first = EventOf(start);
  emu::Event* last = EventOf(end);
  if (first == nullptr || last == nullptr) return kRtInvalidHandle;
  if (ms == nullptr) return kInvalidParam;
  if (first->device != last->device) return kRtStreamContext;
  if (!(first->flags & kEventTimeLine) || !(last->flags & kEventTimeLine)) {
    SetMessage("aclrtEventElapsedTime: an event was created without ACL_EVENT_TIME_LINE");
    return kRtTimestampInvalid;
  }
  return Status(emu::Cpu().EventElapsedTime(0, ms, first->cpu, last->cpu));
}

// ---------------------------------------------------------------------------------------------
// Capture into a model run instance (single-stream captures: what the plugin issues). The
// aclmdlRI is executable as it comes out of aclmdlRICaptureEnd.

#ifndef EMU_ASCEND_MINIMAL
EMU_EXPORT int aclmdlRICaptureBegin(void* stream, int mode) {
  ENTER("aclmdlRICaptureBegin", P(stream) + " mode=" + N(mode), kDevice);
  if (mode < kCaptureGlobal || mode > kCaptureRelaxed) return kInvalidParam;
  if (stream == nullptr) return kInvalidParam;  // the default stream cannot be captured
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  if (s->capturing) return kRtStreamCaptured;
  s->capturing = true;
  s->capture_mode = mode;
  s->captured.clear();
  g_captures.fetch_add(1);
  if (mode == kCaptureGlobal) g_global_captures.fetch_add(1);
  return kSuccess;
}

EMU_EXPORT int aclmdlRICaptureGetInfo(void* stream, int* status, void** model) {
  ENTER("aclmdlRICaptureGetInfo", P(stream), kDevice);
  if (status == nullptr) return kInvalidParam;
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  *status = Capturing(s) ? kCaptureStatusActive : kCaptureStatusNone;
  if (model != nullptr) *model = nullptr;  // the instance exists only once the capture ends
  return kSuccess;
}

EMU_EXPORT int aclmdlRICaptureEnd(void* stream, void** model) {
  ENTER("aclmdlRICaptureEnd", P(stream), kDevice);
  if (model == nullptr) return kInvalidParam;
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  if (!Capturing(s)) return kRtStreamNotCaptured;
  emu::Graph graph;
  graph.nodes = std::move(s->captured);
  s->captured.clear();
  s->capturing = false;
  g_captures.fetch_sub(1);
  if (s->capture_mode == kCaptureGlobal) g_global_captures.fetch_sub(1);
  auto made = std::make_unique<Model>();
  if (const infinirtError_t e = emu::Instantiate(graph, &made->exec)) return Status(e);
  *model = made.release();
  Track(*model, Kind::kModel);
  return kSuccess;
}

EMU_EXPORT int aclmdlRIExecuteAsync(void* model, void* stream) {
  ENTER("aclmdlRIExecuteAsync", P(model) + " stream=" + P(stream), kDevice);
  infinirtPluginStream_t cpu;
  AclStream* s;
  if (const int e = StreamOf(stream, &cpu, &s)) return e;
  if (!Live(model, Kind::kModel)) return kRtInvalidHandle;
  if (Capturing(s)) return kRtCaptureNotSupport;  // not emulated
  Model* m = static_cast<Model*>(model);
  if (m->last_launch == nullptr) {
    const infinirtError_t e =
        emu::Cpu().EventCreate(0, &m->last_launch, infinirtEventDisableTiming);
    if (e != infinirtSuccess) return Status(e);
  }
  if (const infinirtError_t e = emu::Cpu().GraphLaunch(0, m->exec->cpu, cpu)) return Status(e);
  return Status(emu::Cpu().EventRecord(0, m->last_launch, cpu));
}

// A model with a launch still running cannot be destroyed (ACL_ERROR_RT_MODEL_RUNNING).
EMU_EXPORT int aclmdlRIDestroy(void* model) {
  ENTER("aclmdlRIDestroy", P(model), kDevice);
  if (!Live(model, Kind::kModel)) return kRtInvalidHandle;
  Model* m = static_cast<Model*>(model);
  if (m->last_launch != nullptr &&
      emu::Cpu().EventQuery(0, m->last_launch) == infinirtErrorNotReady) {
    return kRtModelRunning;
  }
  if (!Untrack(model, Kind::kModel)) return kRtInvalidHandle;
  std::unique_ptr<Model> owned(m);
  if (owned->last_launch != nullptr) emu::Cpu().EventDestroy(0, owned->last_launch);
  emu::Unregister(owned->exec);
  std::unique_ptr<emu::Exec> exec(owned->exec);
  return Status(emu::Cpu().GraphExecDestroy(0, exec->cpu));
}
#endif  // EMU_ASCEND_MINIMAL
