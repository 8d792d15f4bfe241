// The Cambricon plugin's support declarations (GetSupport, for docs/support-matrix.md). They
// describe the runtime that is loaded; with none loaded, a CNRT that has every function of
// CNRT_FUNCTIONS. tests/vendor_plugins checks each against the emulated CNRT's call record:
// the functions named are those the entry calls on its usual path.
#include <string>
#include <utility>
#include <vector>

#include "cambricon_internal.h"
#include "infinirt_plugin.h"
#include "plugin_support.h"

namespace infinirt::cambricon {
namespace {

struct Declaration {
  infinirtPluginSupportLevel_t level = INFINIRT_SUPPORT_NONE;
  std::vector<std::string> functions;  // full CNRT names
  std::string note;
};

// Whether the loaded runtime has a function (any, when none is loaded).
template <class Pointer>
bool Has(Pointer function) {
  return g_state == nullptr || !S().library.is_open() || function != nullptr;
}

Declaration Native(std::vector<std::string> functions, std::string note = "") {
  return {INFINIRT_SUPPORT_NATIVE, std::move(functions), std::move(note)};
}
Declaration Emulated(std::vector<std::string> functions, std::string note) {
  return {INFINIRT_SUPPORT_EMULATED, std::move(functions), std::move(note)};
}
Declaration None(std::string note) { return {INFINIRT_SUPPORT_NONE, {}, std::move(note)}; }

Declaration NativeIfPresent(bool present, const std::string& function, std::string note = "") {
  if (present) return Native({function}, std::move(note));
  return None("the runtime lacks " + function);
}

const char* MemcpyAsyncSymbol() {
  return g_state && S().fn.memcpy_async ? S().memcpy_async_symbol : "cnrtMemcpyAsync_V3";
}

Declaration DeviceProperties(const Functions& fn) {
  std::vector<std::string> used;
  if (Has(fn.get_device_properties)) {
    used.push_back(g_state && fn.get_device_properties ? S().properties_symbol
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

Declaration Graphs(const Functions& fn, const std::string& entry) {
  if (g_state != nullptr && S().library.is_open() && !HasNativeGraphs(fn)) {
    return None("the runtime lacks queue capture or TaskTopo functions: the core replays graphs");
  }
  if (entry == "GraphLaunch") return Native({"cnrtTaskTopoEntityInvoke"});
  if (entry == "GraphExecDestroy") return Native({"cnrtTaskTopoEntityDestroy"});
  return Native({"cnrtQueueBeginCapture", "cnrtQueueEndCapture", "cnrtTaskTopoInstantiate",
                 "cnrtTaskTopoDestroy"},
                "nodes captured in order on a private queue (relaxed mode); the core replays "
                "graphs with host functions, host-to-host copies, event waits, memsets of host "
                "memory or copies whose host memory cnrtPointerGetAttributes calls pageable");
}

Declaration Events(const Functions& fn, const std::string& entry) {
  if (entry == "EventCreate") {
    if (!Has(fn.NotifierCreateWithFlags)) {
      return Native({"cnrtNotifierCreate"},
                    "the runtime lacks cnrtNotifierCreateWithFlags: flags other than "
                    "BlockingSync answer NotSupported");
    }
    return Native({"cnrtNotifierCreateWithFlags"},
                  "DisableTiming -> CNRT_NOTIFIER_DISABLE_TIMING_SW; Interprocess -> "
                  "INTERPROCESS | DISABLE_TIMING_ALL; BlockingSync has no notifier flag (host "
                  "waits spin or block as the device's schedule flag says)");
  }
  if (entry == "EventDestroy") return Native({"cnrtNotifierDestroy"});
  if (entry == "EventRecord") return Native({"cnrtPlaceNotifier"});
  if (entry == "EventQuery") {
    return Native({"cnrtQueryNotifier"}, "cnrtErrorBusy (or cnrtErrorNotReady) is not ready");
  }
  if (entry == "EventSynchronize") {
    return Native({"cnrtWaitNotifier"},
                  "from a host function: cnrtQueryNotifier, and NotPermitted unless complete");
  }
  return Native({"cnrtNotifierElapsedTime"},
                "ms last; a notifier without timing or never placed -> InvalidResourceHandle, "
                "busy -> NotReady");
}

Declaration Streams(const Functions& fn, const std::string& entry) {
  if (entry == "StreamCreate") {
    return Native({"cnrtQueueCreate"},
                  "flags 0 only: CNRT queues take no flags and synchronise with the NULL queue "
                  "where it is the legacy queue (CNDrv >= 3), so infinirtStreamNonBlocking "
                  "answers NotSupported");
  }
  if (entry == "StreamDestroy") return Native({"cnrtQueueDestroy"});
  if (entry == "StreamSynchronize") return Native({"cnrtQueueSync"});
  if (entry == "StreamQuery") {
    return Native({"cnrtQueueQuery"}, "cnrtErrorBusy (or cnrtErrorNotReady) is not ready");
  }
  if (entry == "StreamWaitEvent") {
    return Native({"cnrtQueueWaitNotifier"}, "notifier first, flag 0");
  }
  return NativeIfPresent(Has(fn.InvokeHostFunc), "cnrtInvokeHostFunc",
                         "through a trampoline that marks the thread: blocking entries called "
                         "from a host function answer NotPermitted without calling CNRT");
}

Declaration Memory(const Functions& fn, const std::string& entry) {
  if (entry == "MemGetInfo") return NativeIfPresent(Has(fn.MemGetInfo), "cnrtMemGetInfo");
  if (entry == "Malloc") return Native({"cnrtMalloc"});
  if (entry == "Free" || entry == "FreeHost") {
    return Native({"cnrtSyncDevice", entry == "Free" ? "cnrtFree" : "cnrtFreeHost"},
                  "waits for the device first, as CUDA's free does");
  }
  if (entry == "HostAlloc") {
    return Native({"cnrtHostMalloc"},
                  "flags 0 only: cnrtHostMalloc takes no flags (portable, mapped and "
                  "write-combined memory answer NotSupported)");
  }
  if (entry == "MallocAsync" || entry == "FreeAsync") {
    return StreamOrdered(fn, entry == "MallocAsync");
  }
  if (entry == "Memcpy") return Native({"cnrtMemcpy"}, "CNRT's direction values");
  if (entry == "MemcpyAsync") {
    return Emulated({MemcpyAsyncSymbol()},
                    "copies go to the first of cnrtMemcpyAsync_V3/_V2/cnrtMemcpyAsync (queue "
                    "before direction); host-to-host copies, which CNRT's asynchronous copy "
                    "lacks, wait with cnrtQueueSync and copy with cnrtMemcpy(HostToHost)");
  }
  if (entry == "Memset") {
    return Native({"cnrtMemset"},
                  "page-locked host memory, which cnrtMemset refuses (cnrtPointerGetAttributes "
                  "tells): cnrtSyncDevice, then set by the host");
  }
  return Native({"cnrtMemsetAsync"},
                "page-locked host memory, which cnrtMemsetAsync refuses (cnrtPointerGetAttributes "
                "tells): set by a host function (cnrtInvokeHostFunc) in queue order");
}

Declaration MemPools(const Functions& fn, const std::string& entry) {
  if (!(Has(fn.DeviceGetDefaultMemPool) && Has(fn.MemPoolGetAttribute) &&
        Has(fn.MemPoolSetAttribute) && Has(fn.MemPoolTrimTo))) {
    return None("the runtime lacks CNRT's memory pools (as CNRT 6.0.2 does)");
  }
  const char* function = entry == "MemPoolGetAttribute"   ? "cnrtMemPoolGetAttribute"
                         : entry == "MemPoolSetAttribute" ? "cnrtMemPoolSetAttribute"
                                                          : "cnrtMemPoolTrimTo";
  return Native({"cnrtDeviceGetDefaultMemPool", function},
                "the device's default pool; CNRT numbers the attributes as CUDA does");
}

Declaration Device(const Functions& fn, const std::string& entry) {
  if (entry == "GetDeviceCount") return Native({"cnrtGetDeviceCount"}, "counted at start");
  if (entry == "GetDeviceProperties") return DeviceProperties(fn);
  if (entry == "DeviceGetAttribute") {
    return NativeIfPresent(
        Has(fn.DeviceGetAttribute), "cnrtDeviceGetAttribute",
        "capability, clocks, ECC, bus width, L2, PCI ids, queue priorities, compute mode; "
        "multiprocessors = clusters x cores per cluster; MemoryPoolsSupported from "
        "cnrtMemAllocAsync's presence; others NotSupported");
  }
  if (entry == "DriverGetVersion") {
    return NativeIfPresent(Has(fn.DriverGetVersion), "cnrtDriverGetVersion",
                           "major * 1000 + minor * 10");
  }
  if (entry == "DeviceSynchronize") return Native({"cnrtSyncDevice"});
  return NativeIfPresent(Has(fn.DeviceReset), "cnrtDeviceReset");
}

bool Declare(const std::string& entry, Declaration* out) {
  static const Functions kNone{};
  const Functions& fn = g_state ? S().fn : kNone;
  auto is = [&](std::initializer_list<const char*> names) {
    for (const char* name : names) {
      if (entry == name) return true;
    }
    return false;
  };
  if (is({"GetDeviceCount", "GetDeviceProperties", "DeviceGetAttribute", "DriverGetVersion",
          "DeviceSynchronize", "DeviceReset"})) {
    *out = Device(fn, entry);
  } else if (is({"MemGetInfo", "Malloc", "Free", "HostAlloc", "FreeHost", "MallocAsync",
                 "FreeAsync", "Memcpy", "MemcpyAsync", "Memset", "MemsetAsync"})) {
    *out = Memory(fn, entry);
  } else if (is({"StreamCreate", "StreamDestroy", "StreamSynchronize", "StreamQuery",
                 "StreamWaitEvent", "LaunchHostFunc"})) {
    *out = Streams(fn, entry);
  } else if (is({"EventCreate", "EventDestroy", "EventRecord", "EventQuery", "EventSynchronize",
                 "EventElapsedTime"})) {
    *out = Events(fn, entry);
  } else if (is({"MemPoolGetAttribute", "MemPoolSetAttribute", "MemPoolTrimTo"})) {
    *out = MemPools(fn, entry);
  } else if (is({"GraphInstantiate", "GraphLaunch", "GraphExecDestroy"})) {
    *out = Graphs(fn, entry);
  } else {
    return false;
  }
  return true;
}

}  // namespace

infinirtError_t GetSupport(const char* entry, infinirtPluginSupport* support) {
  static const plugin::PluginLog silent(kPluginName);
  return plugin::Guarded(g_state ? S().log : silent, [&] {
    Declaration declaration;
    if (entry == nullptr || support == nullptr || !Declare(entry, &declaration)) {
      return infinirtErrorInvalidValue;
    }
    std::string functions;
    for (const std::string& function : declaration.functions) {
      functions += (functions.empty() ? "" : ", ") + function;
    }
    support->level = declaration.level;
    plugin::CopyText(support->vendor_functions, sizeof(support->vendor_functions), functions);
    plugin::CopyText(support->note, sizeof(support->note), declaration.note);
    return infinirtSuccess;
  });
}

}  // namespace infinirt::cambricon
