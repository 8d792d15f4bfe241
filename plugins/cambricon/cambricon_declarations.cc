// The Cambricon plugin's support declarations (GetSupport, for docs/support-matrix.md). They
// describe the runtime that is loaded; with none loaded, a CNRT that has every function of
// CNRT_FUNCTIONS. tests/vendor_plugins checks each against the emulated CNRT's call record:
// the functions named are those the entry calls on its usual path.
#include <string>
#include <utility>
#include <vector>

#include "cambricon_internal.h"

namespace infinirt::cambricon {
namespace {

using plugin::Declaration;
using plugin::Emulated;
using plugin::Native;
using plugin::NativeIfPresent;
using plugin::None;
namespace entry = plugin::entry;

// Whether the loaded runtime has a function (any, when none is loaded).
template <class Pointer>
bool Has(Pointer function) {
  return g_state == nullptr || !TheState().library.is_open() || function != nullptr;
}

const char* MemcpyAsyncSymbol() {
  return g_state && TheState().fn.memcpy_async ? TheState().memcpy_async_symbol
                                               : "cnrtMemcpyAsync_V3";
}

Declaration DeviceProperties(const Functions& fn) {
  std::vector<std::string> used;
  if (Has(fn.get_device_properties)) {
    used.push_back(g_state && fn.get_device_properties ? TheState().properties_symbol
                                                       : "cnrtGetDeviceProperties_V3");
  }
  if (Has(fn.DeviceGetAttribute)) used.push_back("cnrtDeviceGetAttribute");
  if (Has(fn.MemGetInfo)) used.push_back("cnrtMemGetInfo");
  return Native(std::move(used),
                "the name from cnrtGetDeviceProperties_V3 (or _V2, or unversioned); the numbers "
                "from cnrtDeviceGetAttribute; totalGlobalMem from cnrtMemGetInfo");
}

Declaration StreamOrdered(const Functions& fn, bool allocate) {
  const bool native = allocate ? Has(fn.MemAllocAsync) : Has(fn.MemFreeAsync);
  if (native) return Native({allocate ? "cnrtMemAllocAsync" : "cnrtMemFreeAsync"});
  return Emulated({"cnrtQueueSync", allocate ? "cnrtMalloc" : "cnrtFree"},
                  "the runtime lacks the queue-ordered allocator (as CNRT 6.0.2 does): waits "
                  "for the queue, then allocates or frees");
}

Declaration Graphs(const Functions& fn, infinirtPluginEntry_t id) {
  if (g_state != nullptr && TheState().library.is_open() && !HasNativeGraphs(fn)) {
    return None("the runtime lacks queue capture or TaskTopo functions: the core replays graphs");
  }
  if (id == entry::GraphLaunch) return Native({"cnrtTaskTopoEntityInvoke"});
  if (id == entry::GraphExecDestroy) return Native({"cnrtTaskTopoEntityDestroy"});
  return Native({"cnrtQueueBeginCapture", "cnrtQueueEndCapture", "cnrtTaskTopoInstantiate",
                 "cnrtTaskTopoDestroy"},
                "nodes captured in order on a private queue (relaxed mode); the core replays "
                "graphs with host functions, host-to-host copies, event waits, memsets of host "
                "memory or copies whose host memory cnrtPointerGetAttributes calls pageable");
}

Declaration Events(const Functions& fn, infinirtPluginEntry_t id) {
  if (id == entry::EventCreate) {
    if (!Has(fn.NotifierCreateWithFlags)) {
      return Native({"cnrtNotifierCreate"},
                    "the runtime lacks cnrtNotifierCreateWithFlags: flags other than "
                    "BlockingSync answer NotSupported");
    }
    return Native({"cnrtNotifierCreateWithFlags"},
                  "DisableTiming -> CNRT_NOTIFIER_DISABLE_TIMING_SW; Interprocess -> "
                  "INTERPROCESS | DISABLE_TIMING_ALL (NotSupported before CNRT 6.14.1, which "
                  "added it); BlockingSync has no notifier flag (host "
                  "waits spin or block as the device's schedule flag says)");
  }
  if (id == entry::EventDestroy) return Native({"cnrtNotifierDestroy"});
  if (id == entry::EventRecord) return Native({"cnrtPlaceNotifier"});
  if (id == entry::EventQuery) {
    return Native({"cnrtQueryNotifier"}, "cnrtErrorBusy (or cnrtErrorNotReady) is not ready");
  }
  if (id == entry::EventSynchronize) {
    return Native({"cnrtWaitNotifier"},
                  "from a host function: cnrtQueryNotifier, and NotPermitted unless complete");
  }
  if (id == entry::EventGetNativeHandle) return Native({}, "the cnrtNotifier_t itself, no call");
  return Native({"cnrtNotifierElapsedTime"},
                "ms last; a notifier without timing or never placed -> InvalidResourceHandle, "
                "busy -> NotReady");
}

Declaration Streams(const Functions& fn, infinirtPluginEntry_t id) {
  if (id == entry::StreamCreate) {
    return Native({"cnrtQueueCreate"},
                  "flags 0 only: CNRT queues take no flags and synchronise with the NULL queue "
                  "where it is the legacy queue (CNDrv >= 3), so infinirtStreamNonBlocking "
                  "answers NotSupported");
  }
  if (id == entry::DeviceGetStreamPriorityRange) {
    return NativeIfPresent(Has(fn.DeviceGetQueuePriorityRange), "cnrtDeviceGetQueuePriorityRange",
                           "CNRT's numbers as they are: lower runs first, as CUDA's");
  }
  if (id == entry::StreamCreateWithPriority) {
    return NativeIfPresent(Has(fn.QueueCreateWithPriority), "cnrtQueueCreateWithPriority",
                           "flags 0 only, as for StreamCreate");
  }
  if (id == entry::StreamDestroy) return Native({"cnrtQueueDestroy"});
  if (id == entry::StreamSynchronize) return Native({"cnrtQueueSync"});
  if (id == entry::StreamQuery) {
    return Native({"cnrtQueueQuery"}, "cnrtErrorBusy (or cnrtErrorNotReady) is not ready");
  }
  if (id == entry::StreamWaitEvent) {
    return Native({"cnrtQueueWaitNotifier"}, "notifier first, flag 0");
  }
  if (id == entry::StreamGetNativeHandle) {
    return Native({}, "the stream's cnrtQueue_t, no call: the NULL queue for the legacy stream");
  }
  if (id == entry::StreamAdopt) {
    return Native({"cnrtQueueQuery"},
                  "the queue is used as it is, blocking (CNRT queues synchronise with the "
                  "legacy queue); CNRT cannot tell its device, which is not checked; "
                  "cnrtQueueQuery refuses unknown handles");
  }
  if (id == entry::StreamRelease) {
    return Native({}, "no call: the adopted queue is left to its maker");
  }
  return NativeIfPresent(Has(fn.InvokeHostFunc), "cnrtInvokeHostFunc",
                         "through a trampoline that marks the thread: blocking entries called "
                         "from a host function answer NotPermitted without calling CNRT");
}

Declaration Memory(const Functions& fn, infinirtPluginEntry_t id) {
  if (id == entry::MemGetInfo) return NativeIfPresent(Has(fn.MemGetInfo), "cnrtMemGetInfo");
  if (id == entry::Malloc) return Native({"cnrtMalloc"});
  if (id == entry::Free || id == entry::FreeHost) {
    return Native({"cnrtSyncDevice", id == entry::Free ? "cnrtFree" : "cnrtFreeHost"},
                  "waits for the device first, as CUDA's free does");
  }
  if (id == entry::HostAlloc) {
    return Native({"cnrtHostMalloc"},
                  "flags 0 only: cnrtHostMalloc takes no flags (portable, mapped and "
                  "write-combined memory answer NotSupported)");
  }
  if (id == entry::MallocAsync || id == entry::FreeAsync) {
    return StreamOrdered(fn, id == entry::MallocAsync);
  }
  if (id == entry::Memcpy) return Native({"cnrtMemcpy"}, "CNRT's direction values");
  if (id == entry::MemcpyAsync) {
    return Emulated({MemcpyAsyncSymbol()},
                    "copies go to the first of cnrtMemcpyAsync_V3/_V2/cnrtMemcpyAsync (queue "
                    "before direction); host-to-host copies, which CNRT's asynchronous copy "
                    "lacks, wait with cnrtQueueSync and copy with cnrtMemcpy(HostToHost)");
  }
  if (id == entry::Memset) {
    return Native({"cnrtMemset"},
                  "page-locked host memory, which cnrtMemset refuses (cnrtPointerGetAttributes "
                  "tells): cnrtSyncDevice, then set by the host");
  }
  return Native({"cnrtMemsetAsync"},
                "page-locked host memory, which cnrtMemsetAsync refuses (cnrtPointerGetAttributes "
                "tells): set by a host function (cnrtInvokeHostFunc) in queue order");
}

Declaration MemPools(const Functions& fn, infinirtPluginEntry_t id) {
  if (!(Has(fn.DeviceGetDefaultMemPool) && Has(fn.MemPoolGetAttribute) &&
        Has(fn.MemPoolSetAttribute) && Has(fn.MemPoolTrimTo))) {
    return None("the runtime lacks CNRT's memory pools (as CNRT 6.0.2 does)");
  }
  const char* function = id == entry::MemPoolGetAttribute   ? "cnrtMemPoolGetAttribute"
                         : id == entry::MemPoolSetAttribute ? "cnrtMemPoolSetAttribute"
                                                            : "cnrtMemPoolTrimTo";
  return Native({"cnrtDeviceGetDefaultMemPool", function},
                "the device's default pool; CNRT numbers the attributes as CUDA does");
}

Declaration Device(const Functions& fn, infinirtPluginEntry_t id) {
  if (id == entry::GetDeviceCount) return Native({"cnrtGetDeviceCount"}, "counted at start");
  if (id == entry::GetDeviceProperties) return DeviceProperties(fn);
  if (id == entry::DeviceGetAttribute) {
    return NativeIfPresent(
        Has(fn.DeviceGetAttribute), "cnrtDeviceGetAttribute",
        "capability, clocks, ECC, bus width, L2, PCI ids, queue priorities, compute mode; "
        "multiprocessors = clusters x cores per cluster; MemoryPoolsSupported from "
        "cnrtMemAllocAsync's presence; others NotSupported");
  }
  if (id == entry::DriverGetVersion) {
    return NativeIfPresent(Has(fn.DriverGetVersion), "cnrtDriverGetVersion",
                           "major * 1000 + minor * 10");
  }
  if (id == entry::DeviceSynchronize) return Native({"cnrtSyncDevice"});
  return NativeIfPresent(Has(fn.DeviceReset), "cnrtDeviceReset");
}

}  // namespace

std::optional<Declaration> CambriconPlugin::Declare(infinirtPluginEntry_t id) {
  static const Functions kNone{};
  const Functions& fn = g_state ? TheState().fn : kNone;
  switch (id) {
    case entry::GetDeviceCount:
    case entry::GetDeviceProperties:
    case entry::DeviceGetAttribute:
    case entry::DriverGetVersion:
    case entry::DeviceSynchronize:
    case entry::DeviceReset:
      return Device(fn, id);
    case entry::MemGetInfo:
    case entry::Malloc:
    case entry::Free:
    case entry::HostAlloc:
    case entry::FreeHost:
    case entry::MallocAsync:
    case entry::FreeAsync:
    case entry::Memcpy:
    case entry::MemcpyAsync:
    case entry::Memset:
    case entry::MemsetAsync:
      return Memory(fn, id);
    case entry::StreamCreate:
    case entry::DeviceGetStreamPriorityRange:
    case entry::StreamCreateWithPriority:
    case entry::StreamDestroy:
    case entry::StreamSynchronize:
    case entry::StreamQuery:
    case entry::StreamWaitEvent:
    case entry::StreamGetNativeHandle:
    case entry::StreamAdopt:
    case entry::StreamRelease:
    case entry::LaunchHostFunc:
      return Streams(fn, id);
    case entry::EventCreate:
    case entry::EventDestroy:
    case entry::EventRecord:
    case entry::EventQuery:
    case entry::EventSynchronize:
    case entry::EventElapsedTime:
    case entry::EventGetNativeHandle:
      return Events(fn, id);
    case entry::MemPoolGetAttribute:
    case entry::MemPoolSetAttribute:
    case entry::MemPoolTrimTo:
      return MemPools(fn, id);
    case entry::GraphInstantiate:
    case entry::GraphLaunch:
    case entry::GraphExecDestroy:
      return Graphs(fn, id);
    default:
      return std::nullopt;  // the lifecycle entries, which only the core calls
  }
}

}  // namespace infinirt::cambricon
