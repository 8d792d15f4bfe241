// A fake InfiniRT plugin for the loader tests: host memory pretending to be device memory.
//
// Its table comes from plugin_table_builder.h, like every plugin's: the entries a test needs
// are members of FakePlugin (FakeAsyncPlugin adds the asynchronous ones); the others stay NULL.
// Compile-time switches make the variants:
//   FAKE_NAME           backend name reported in the table (an identifier, e.g. fake_nvidia)
//   FAKE_DEVICE_TYPE    an infiniDevice_t value, e.g. INFINI_DEVICE_NVIDIA
//   FAKE_DEVICE_COUNT   devices contributed; 0 reports a reason in GetInfo
//   FAKE_ABI_MAJOR      the ABI major version written into the table
//   FAKE_TABLE_END      an entry name: struct_size stops just before it, as if the plugin had
//                       been built against an older minor version that lacked it
//   FAKE_INIT_FAILS     Initialize returns infinirtErrorInitializationError
//   FAKE_RUNTIME_MISSING GetInfo says the vendor runtime could not be loaded; no devices
//   FAKE_NO_ENTRY_POINT the library does not export infinirtPluginGetTable at all
//   FAKE_ABI_MINOR      the ABI minor version written into the table
//   FAKE_ASYNC          streams and events of their own, and the asynchronous entries
//                       (MemcpyAsync, MemsetAsync, LaunchHostFunc, EventRecord,
//                       StreamWaitEvent, ...) on host memory, run at once when enqueued (a valid
//                       in-order stream); a GraphInstantiate that declines every graph, so the
//                       core replays graphs through these; StreamGetNativeHandle answering the
//                       fake's stream object. fakeAsyncCalls(entry) counts the calls of each
//                       entry.
#include <atomic>
#include <cstddef>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "infinirt_plugin.h"
#include "plugin_table_builder.h"

#define FAKE_STRINGIFY_(x) #x
#define FAKE_STRINGIFY(x) FAKE_STRINGIFY_(x)

#ifndef FAKE_NAME
#define FAKE_NAME fake
#endif
#ifndef FAKE_DEVICE_TYPE
#define FAKE_DEVICE_TYPE INFINI_DEVICE_NVIDIA
#endif
#ifndef FAKE_DEVICE_COUNT
#define FAKE_DEVICE_COUNT 1
#endif
#ifndef FAKE_ABI_MAJOR
#define FAKE_ABI_MAJOR INFINIRT_PLUGIN_ABI_MAJOR
#endif
#ifndef FAKE_ABI_MINOR
#define FAKE_ABI_MINOR INFINIRT_PLUGIN_ABI_MINOR
#endif

namespace {

constexpr char kName[] = FAKE_STRINGIFY(FAKE_NAME);
constexpr size_t kBytesPerDevice = size_t{1} << 30;
// Every stream the fake creates is this one object: its streams complete each call before
// returning, so they need no state of their own.
int g_stream_token = 0;
const infinirtPluginHost* g_host = nullptr;

bool RuntimeMissing() {
#ifdef FAKE_RUNTIME_MISSING
  return true;
#else
  return false;
#endif
}

int DeviceCount() { return RuntimeMissing() ? 0 : FAKE_DEVICE_COUNT; }

bool ValidDevice(int device) { return device >= 0 && device < DeviceCount(); }

// The entries (plugin_table_builder.h finds them by name).
struct FakePlugin {
  static infinirtError_t Initialize(const infinirtPluginHost* host) {
#ifdef FAKE_INIT_FAILS
    (void)host;
    return infinirtErrorInitializationError;
#else
    g_host = host;
    if (g_host != nullptr && g_host->log != nullptr) {
      g_host->log(INFINIRT_LOG_DEBUG, kName, "fake plugin initialised");
    }
    return infinirtSuccess;
#endif
  }

  static infinirtError_t Finalize() {
    g_host = nullptr;
    return infinirtSuccess;
  }

  static infinirtError_t GetInfo(infinirtPluginInfo* info) {
    info->runtime_version = RuntimeMissing() ? -1 : 4242;
    if (RuntimeMissing()) {
      info->runtime_missing = 1;
      std::snprintf(info->runtime_library, sizeof(info->runtime_library), "libfakert.so.1");
      std::snprintf(info->reason, sizeof(info->reason),
                    "libfakert.so.1: cannot open shared object file (fake runtime absent)");
    } else {
      std::snprintf(info->runtime_library, sizeof(info->runtime_library), "/fake/libfakert.so.1");
      if (DeviceCount() == 0) {
        std::snprintf(info->reason, sizeof(info->reason), "fake runtime reports no devices");
      }
    }
    return infinirtSuccess;
  }

  static infinirtError_t GetDeviceCount(int* count) {
    *count = DeviceCount();
    return *count > 0 ? infinirtSuccess : infinirtErrorNoDevice;
  }

  static infinirtError_t GetDeviceProperties(int device, struct infinirtDeviceProp* prop) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    std::snprintf(prop->name, sizeof(prop->name), "Fake %s device %d", kName, device);
    prop->totalGlobalMem = kBytesPerDevice * static_cast<size_t>(device + 1);
    prop->multiProcessorCount = 1;
    prop->unifiedAddressing = 1;
    return infinirtSuccess;
  }

  static infinirtError_t DeviceSynchronize(int device) {
    return ValidDevice(device) ? infinirtSuccess : infinirtErrorInvalidDevice;
  }

  static infinirtError_t MemGetInfo(int device, size_t* free_bytes, size_t* total_bytes) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    *total_bytes = kBytesPerDevice * static_cast<size_t>(device + 1);
    *free_bytes = *total_bytes / 2;
    return infinirtSuccess;
  }

  static infinirtError_t Malloc(int device, void** ptr, size_t size) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    *ptr = std::malloc(size);
    return *ptr ? infinirtSuccess : infinirtErrorMemoryAllocation;
  }

  static infinirtError_t Free(int device, void* ptr) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    std::free(ptr);
    return infinirtSuccess;
  }

  static infinirtError_t Memcpy(int device, void* dst, const void* src, size_t count,
                                enum infinirtMemcpyKind) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    std::memmove(dst, src, count);
    return infinirtSuccess;
  }

  static infinirtError_t Memset(int device, void* ptr, int value, size_t count) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    std::memset(ptr, value, count);
    return infinirtSuccess;
  }

  // Streams are synchronous here: every entry completes before it returns.
  static infinirtError_t StreamCreate(int device, infinirtPluginStream_t* stream, unsigned int) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    *stream = &g_stream_token;
    return infinirtSuccess;
  }

  static infinirtError_t StreamDestroy(int device, infinirtPluginStream_t) {
    return ValidDevice(device) ? infinirtSuccess : infinirtErrorInvalidDevice;
  }

  static infinirtError_t StreamSynchronize(int device, infinirtPluginStream_t) {
    return ValidDevice(device) ? infinirtSuccess : infinirtErrorInvalidDevice;
  }
};

#ifdef FAKE_ASYNC
// Streams and events are objects of their own here, so that one the core fails to destroy
// shows in the live counts (and to AddressSanitizer as a leak).
struct FakeStream {
  int device;
};
struct FakeEvent {
  int device;
  unsigned int flags;
  bool recorded;
};

enum Counter {
  kMemcpyAsync,
  kMemsetAsync,
  kLaunchHostFunc,
  kEventRecord,
  kStreamWaitEvent,
  kGraphInstantiate,
  kStreamGetNativeHandle,
  kLiveStreams,
  kLiveEvents,
  kCounterCount
};
const char* const kCounterNames[kCounterCount] = {
    "MemcpyAsync",      "MemsetAsync",           "LaunchHostFunc", "EventRecord", "StreamWaitEvent",
    "GraphInstantiate", "StreamGetNativeHandle", "live_streams",   "live_events"};
std::atomic<int> g_counters[kCounterCount];

void Count(Counter counter, int delta = 1) { g_counters[counter].fetch_add(delta); }

// Streams and events of its own, and the asynchronous entries, run at once when enqueued.
struct FakeAsyncPlugin : FakePlugin {
  static infinirtError_t Initialize(const infinirtPluginHost* host) {
    for (auto& counter : g_counters) counter.store(0);
    return FakePlugin::Initialize(host);
  }

  static infinirtError_t StreamCreate(int device, infinirtPluginStream_t* stream, unsigned int) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    *stream = new FakeStream{device};
    Count(kLiveStreams);
    return infinirtSuccess;
  }

  static infinirtError_t StreamDestroy(int device, infinirtPluginStream_t stream) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    delete static_cast<FakeStream*>(stream);
    Count(kLiveStreams, -1);
    return infinirtSuccess;
  }

  // Every stream is always idle: its work ran when it was enqueued.
  static infinirtError_t StreamQuery(int device, infinirtPluginStream_t) {
    return ValidDevice(device) ? infinirtSuccess : infinirtErrorInvalidDevice;
  }

  static infinirtError_t MemcpyAsync(int device, void* dst, const void* src, size_t count,
                                     enum infinirtMemcpyKind kind, infinirtPluginStream_t) {
    Count(kMemcpyAsync);
    return Memcpy(device, dst, src, count, kind);
  }

  static infinirtError_t MemsetAsync(int device, void* ptr, int value, size_t count,
                                     infinirtPluginStream_t) {
    Count(kMemsetAsync);
    return Memset(device, ptr, value, count);
  }

  static infinirtError_t LaunchHostFunc(int device, infinirtPluginStream_t, infinirtHostFn_t fn,
                                        void* user_data) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    Count(kLaunchHostFunc);
    fn(user_data);
    return infinirtSuccess;
  }

  static infinirtError_t EventCreate(int device, infinirtPluginEvent_t* event, unsigned int flags) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    *event = new FakeEvent{device, flags, false};
    Count(kLiveEvents);
    return infinirtSuccess;
  }

  static infinirtError_t EventDestroy(int device, infinirtPluginEvent_t event) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    delete static_cast<FakeEvent*>(event);
    Count(kLiveEvents, -1);
    return infinirtSuccess;
  }

  static infinirtError_t EventRecord(int device, infinirtPluginEvent_t event,
                                     infinirtPluginStream_t) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    static_cast<FakeEvent*>(event)->recorded = true;
    Count(kEventRecord);
    return infinirtSuccess;
  }

  // Recorded work is always complete.
  static infinirtError_t EventQuery(int device, infinirtPluginEvent_t) {
    return ValidDevice(device) ? infinirtSuccess : infinirtErrorInvalidDevice;
  }

  static infinirtError_t StreamWaitEvent(int device, infinirtPluginStream_t, infinirtPluginEvent_t,
                                         unsigned int) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    Count(kStreamWaitEvent);
    return infinirtSuccess;
  }
  static infinirtError_t EventSynchronize(int device, infinirtPluginEvent_t event) {
    return EventQuery(device, event);
  }
  // No native graphs: the core replays graphs through the entries above. Counted, to show which
  // graphs the core offers it.
  static infinirtError_t GraphInstantiate(int device, infinirtPluginGraphExec_t*,
                                          const infinirtPluginGraphNode*, size_t,
                                          unsigned long long) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    Count(kGraphInstantiate);
    return infinirtErrorNotSupported;
  }

  // The "vendor stream" is the fake's own stream object (the special handles stand for
  // themselves).
  static infinirtError_t StreamGetNativeHandle(int device, infinirtPluginStream_t stream,
                                               void** native_stream) {
    if (!ValidDevice(device)) return infinirtErrorInvalidDevice;
    Count(kStreamGetNativeHandle);
    *native_stream = stream;
    return infinirtSuccess;
  }
};
using Plugin = FakeAsyncPlugin;
#else
using Plugin = FakePlugin;
#endif  // FAKE_ASYNC

infinirtPluginTable MakeTable() {
  infinirtPluginTable table = infinirt::plugin::MakePluginTable<Plugin>(kName, FAKE_DEVICE_TYPE);
  table.abi_major = FAKE_ABI_MAJOR;
  table.abi_minor = FAKE_ABI_MINOR;
#ifdef FAKE_TABLE_END
  // Entries past struct_size stay set: if the core read past it, it would find working
  // entries there, and the short-table test would see success instead of NotSupported.
  table.struct_size = offsetof(infinirtPluginTable, FAKE_TABLE_END);
#endif
  return table;
}

}  // namespace

#ifndef FAKE_NO_ENTRY_POINT
extern "C" const infinirtPluginTable* infinirtPluginGetTable(void) {
  static const infinirtPluginTable table = MakeTable();
  return &table;
}

#ifdef FAKE_ASYNC
// For the tests (found with dlsym): calls of an entry since Initialize, or the live streams
// ("live_streams") or events ("live_events"); -1 for an unknown name.
extern "C" INFINIRT_PLUGIN_EXPORT int fakeAsyncCalls(const char* entry) {
  for (int i = 0; i < kCounterCount; ++i) {
    if (std::strcmp(entry, kCounterNames[i]) == 0) return g_counters[i].load();
  }
  return -1;
}
#endif
#else
// A library that looks like a plugin by name but exports something else.
extern "C" INFINIRT_PLUGIN_EXPORT int infinirtFakeNotTheEntryPoint(void) {
  return static_cast<int>(MakeTable().abi_major);
}
#endif
