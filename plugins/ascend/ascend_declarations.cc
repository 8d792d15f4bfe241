// What the Ascend plugin declares per entry (GetSupport, for the support matrix). The
// declarations describe the runtime that is loaded; with none loaded, a runtime that has every
// function of the lists in ascend_api.h.
#include <optional>
#include <string>
#include <vector>

#include "ascend_state.h"

namespace infinirt::ascend {
namespace {

using plugin::Declaration;
using plugin::Emulated;
using plugin::Native;
using plugin::NativeIfPresent;
using plugin::None;
namespace entry = plugin::entry;

bool RuntimeLoaded() { return HasState() && TheState().library.is_open(); }

// Whether an optional function is there (assumed, when no runtime is loaded).
template <class Pointer>
bool Has(Pointer function) {
  return !RuntimeLoaded() || function != nullptr;
}

bool Graphs() { return !RuntimeLoaded() || HasNativeGraphs(); }

const char* const kLegacyNote =
    "ACL streams never wait for the default stream: the plugin orders the legacy and blocking "
    "streams as CUDA does, with aclrtRecordEvent/aclrtStreamWaitEvent";

std::optional<Declaration> DeviceEntry(infinirtPluginEntry_t id, const Functions& fn) {
  if (id == entry::GetDeviceCount) {
    return Native({"aclInit", "aclrtGetDeviceCount"}, "counted once, after aclInit(NULL)");
  }
  if (id == entry::GetDeviceProperties) {
    std::vector<std::string> functions;
    if (Has(fn.aclrtGetSocName)) functions.push_back("aclrtGetSocName");
    if (Has(fn.aclGetDeviceCapability)) functions.push_back("aclGetDeviceCapability");
    if (Has(fn.aclrtGetMemInfo)) functions.push_back("aclrtGetMemInfo");
    if (functions.empty()) {
      return Emulated({},
                      "the runtime lacks aclrtGetSocName, aclGetDeviceCapability and "
                      "aclrtGetMemInfo: a fixed name, other fields 0");
    }
    return Native(functions,
                  "name (SoC name), multiProcessorCount (AI cores), l2CacheSize, totalGlobalMem, "
                  "streamPrioritiesSupported (from the priority range); other fields 0");
  }
  if (id == entry::DeviceGetAttribute)
    return None("ACL has no device query with CUDA's attributes");
  if (id == entry::DriverGetVersion) return None("no ACL function of the plugin's list tells it");
  if (id == entry::DeviceSynchronize) return Native({"aclrtSynchronizeDevice"});
  if (id == entry::DeviceCanAccessPeer || id == entry::DeviceEnablePeerAccess ||
      id == entry::DeviceDisablePeerAccess) {
    if (id == entry::DeviceCanAccessPeer) {
      return NativeIfPresent(Has(fn.aclrtDeviceCanAccessPeer), "aclrtDeviceCanAccessPeer");
    }
    if (id == entry::DeviceEnablePeerAccess) {
      return NativeIfPresent(Has(fn.aclrtDeviceEnablePeerAccess), "aclrtDeviceEnablePeerAccess");
    }
    return NativeIfPresent(Has(fn.aclrtDeviceDisablePeerAccess), "aclrtDeviceDisablePeerAccess");
  }
  if (id == entry::DeviceGetP2PAttribute) {
    return None(
        "ACL has no peer attributes; the core answers AccessSupported from "
        "aclrtDeviceCanAccessPeer and 0 for the others");
  }
  if (id == entry::DeviceReset) {
    return Emulated({"aclrtSynchronizeDevice"},
                    "waits for the device; aclrtResetDevice would also destroy the context that "
                    "other threads and stream-ordered allocations still use");
  }
  return std::nullopt;
}

std::optional<Declaration> MemoryEntry(infinirtPluginEntry_t id, const Functions& fn) {
  if (id == entry::MemGetInfo) {
    if (!Has(fn.aclrtGetMemInfo)) return None("the runtime lacks aclrtGetMemInfo");
    return Native({"aclrtGetMemInfo"}, "ACL_HBM_MEM; ACL_DDR_MEM where HBM reports no memory");
  }
  if (id == entry::Malloc) return Native({"aclrtMalloc"}, "policy ACL_MEM_MALLOC_HUGE_FIRST");
  if (id == entry::Free) {
    return Native({"aclrtSynchronizeDevice", "aclrtFree"}, "waits for the device, as cudaFree");
  }
  if (id == entry::HostAlloc) {
    return Native({"aclrtMallocHost"}, "flags 0 only: aclrtMallocHost takes no flags");
  }
  if (id == entry::FreeHost) {
    return Native({"aclrtSynchronizeDevice", "aclrtFreeHost"}, "waits for the device first");
  }
  if (id == entry::MallocAsync || id == entry::FreeAsync) {
    const bool is_malloc = id == entry::MallocAsync;
    return Emulated({"aclrtSynchronizeStream", is_malloc ? "aclrtMalloc" : "aclrtFree"},
                    "waits for the stream: ACL's aclrtMemPool* allocator is experimental and "
                    "needs a pool of fixed maximum size");
  }
  if (id == entry::Memcpy || id == entry::Memset) {
    const bool is_copy = id == entry::Memcpy;
    return Native({"aclrtSynchronizeStream", is_copy ? "aclrtMemcpy" : "aclrtMemset"},
                  std::string(is_copy ? "destMax" : "maxCount") +
                      " = count; first waits for the legacy and blocking streams (CUDA's "
                      "legacy-stream rule), as ACL's synchronous call uses no stream");
  }
  if (id == entry::MemcpyAsync) {
    return Native({"aclrtMemcpyAsync"},
                  "destMax = count; host-to-host copies wait for the stream "
                  "(aclrtSynchronizeStream) and are done on the host");
  }
  if (id == entry::MemsetAsync) return Native({"aclrtMemsetAsync"}, "maxCount = count");
  if (id == entry::MemPoolGetAttribute || id == entry::MemPoolSetAttribute ||
      id == entry::MemPoolTrimTo) {
    return None("stream-ordered allocation is emulated: no ACL memory pool is used");
  }
  return std::nullopt;
}

std::optional<Declaration> StreamEntry(infinirtPluginEntry_t id, const Functions& fn) {
  if (id == entry::StreamCreate) {
    return Emulated({"aclrtCreateStream"},
                    std::string(kLegacyNote) + " (blocking streams: one event each)");
  }
  if (id == entry::DeviceGetStreamPriorityRange) {
    return NativeIfPresent(Has(fn.aclrtDeviceGetStreamPriorityRange),
                           "aclrtDeviceGetStreamPriorityRange",
                           "ACL's numbers as they are: lower runs first, as CUDA's");
  }
  if (id == entry::StreamCreateWithPriority) {
    if (!Has(fn.aclrtCreateStreamWithConfig)) {
      return None("the runtime lacks aclrtCreateStreamWithConfig");
    }
    return Emulated({"aclrtCreateStreamWithConfig"},
                    std::string(kLegacyNote) + " (blocking streams: one event each); flag 0");
  }
  if (id == entry::StreamDestroy) {
    return Emulated({"aclrtStreamQuery", "aclrtDestroyStream"},
                    "a stream with pending work is destroyed once idle: aclrtDestroyStream "
                    "would wait for the work");
  }
  if (id == entry::StreamSynchronize) {
    return Native({"aclrtSynchronizeStream"},
                  "the legacy stream's synchronisation also covers the blocking streams");
  }
  if (id == entry::StreamQuery) {
    return Native({"aclrtStreamQuery"},
                  "not ready from the status out-parameter; the legacy "
                  "stream's query covers the blocking streams");
  }
  if (id == entry::StreamWaitEvent) return Native({"aclrtStreamWaitEvent"}, "ACL has no flags");
  if (id == entry::StreamGetNativeHandle) {
    return Native({},
                  "the stream's aclrtStream, NULL (ACL's default stream) for the legacy one; "
                  "the legacy ordering is prepared for work queued on it outside InfiniRT");
  }
  if (id == entry::StreamAdopt) {
    return Native({"aclrtStreamQuery"},
                  "ACL cannot tell a stream's flags or device: the stream is blocking when it "
                  "is one of the plugin's blocking streams, else non-blocking (as every ACL "
                  "stream is); aclrtStreamQuery with the device bound refuses unknown handles");
  }
  if (id == entry::StreamRelease) {
    return Native({}, "no ACL call: the adopted aclrtStream is left to its maker");
  }
  if (id == entry::LaunchHostFunc) {
    if (!Has(fn.aclrtLaunchHostFunc)) {
      return None(
          "the runtime lacks aclrtLaunchHostFunc (aclrtLaunchCallback needs a report "
          "thread of the caller's)");
    }
    return Native({"aclrtLaunchHostFunc"},
                  "through a trampoline: blocking calls from the function answer NotPermitted "
                  "without reaching ACL, which forbids runtime calls in callbacks");
  }
  return std::nullopt;
}

std::optional<Declaration> EventEntry(infinirtPluginEntry_t id) {
  if (id == entry::EventCreate) {
    return Native({EventCreateFunction()},
                  "ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE, without TIME_LINE for DisableTiming "
                  "(aclrtCreateEventWithFlag where the Ex form is missing); BlockingSync is "
                  "accepted (ACL has no such choice); Interprocess is not supported");
  }
  if (id == entry::EventDestroy) return Native({"aclrtDestroyEvent"});
  if (id == entry::EventRecord) return Native({"aclrtRecordEvent"});
  if (id == entry::EventQuery) {
    return Native({"aclrtQueryEventStatus"}, "not ready from the status out-parameter");
  }
  if (id == entry::EventSynchronize) return Native({"aclrtSynchronizeEvent"});
  if (id == entry::EventElapsedTime) return Native({"aclrtEventElapsedTime"});
  if (id == entry::EventGetNativeHandle) return Native({}, "the aclrtEvent itself, no call");
  return std::nullopt;
}

Declaration GraphEntry(infinirtPluginEntry_t id) {
  if (!Graphs()) {
    return None(
        "the runtime lacks one of aclmdlRICaptureBegin/GetInfo/End, aclmdlRIExecuteAsync, "
        "aclmdlRIDestroy: the core replays graphs");
  }
  if (id == entry::GraphInstantiate) {
    return Native({"aclmdlRICaptureBegin", "aclmdlRICaptureGetInfo", "aclmdlRICaptureEnd"},
                  "nodes captured in order on a private stream (RELAXED); the exec is the "
                  "aclmdlRI; graphs with host-to-host copies, event waits or copies of pageable "
                  "host memory are replayed by the core");
  }
  if (id == entry::GraphLaunch) {
    return Native({"aclmdlRIExecuteAsync"}, "after the exec's previous launch (an ACL event)");
  }
  return Native({"aclmdlRIDestroy"}, "once the exec's launches are done");
}

}  // namespace

// The declaration for an entry, or nullopt for the lifecycle entries, which only the core calls.
std::optional<Declaration> AscendPlugin::Declare(infinirtPluginEntry_t id) {
  static const Functions kAll{};
  const Functions& fn = HasState() ? TheState().fn : kAll;
  if (auto found = DeviceEntry(id, fn)) return found;
  if (auto found = MemoryEntry(id, fn)) return found;
  if (auto found = StreamEntry(id, fn)) return found;
  if (auto found = EventEntry(id)) return found;
  if (id == entry::GraphInstantiate || id == entry::GraphLaunch || id == entry::GraphExecDestroy) {
    return GraphEntry(id);
  }
  return std::nullopt;
}

}  // namespace infinirt::ascend
