// What the Ascend plugin declares per entry (GetSupport, for the support matrix). The
// declarations describe the runtime that is loaded; with none loaded, a runtime that has every
// function of the lists in ascend_api.h.
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "ascend_state.h"

namespace infinirt::ascend {
namespace {

struct Declaration {
  infinirtPluginSupportLevel_t level = INFINIRT_SUPPORT_NONE;
  std::vector<const char*> functions;
  std::string note;
};

Declaration Native(std::vector<const char*> functions, std::string note = "") {
  return {INFINIRT_SUPPORT_NATIVE, std::move(functions), std::move(note)};
}
Declaration Emulated(std::vector<const char*> functions, std::string note) {
  return {INFINIRT_SUPPORT_EMULATED, std::move(functions), std::move(note)};
}
Declaration None(std::string note) { return {INFINIRT_SUPPORT_NONE, {}, std::move(note)}; }

bool RuntimeLoaded() { return HasState() && S().library.is_open(); }

// Whether an optional function is there (assumed, when no runtime is loaded).
template <class Pointer>
bool Has(Pointer function) {
  return !RuntimeLoaded() || function != nullptr;
}

bool Graphs() { return !RuntimeLoaded() || HasNativeGraphs(); }

const char* const kLegacyNote =
    "ACL streams never wait for the default stream: the plugin orders the legacy and blocking "
    "streams as CUDA does, with aclrtRecordEvent/aclrtStreamWaitEvent";

std::optional<Declaration> DeviceEntry(const std::string& entry, const Functions& fn) {
  if (entry == "GetDeviceCount") {
    return Native({"aclInit", "aclrtGetDeviceCount"}, "counted once, after aclInit(NULL)");
  }
  if (entry == "GetDeviceProperties") {
    std::vector<const char*> functions;
    if (Has(fn.aclrtGetSocName)) functions.push_back("aclrtGetSocName");
    if (Has(fn.aclGetDeviceCapability)) functions.push_back("aclGetDeviceCapability");
    if (Has(fn.aclrtGetMemInfo)) functions.push_back("aclrtGetMemInfo");
    if (functions.empty()) {
      return Emulated({},
                      "the runtime lacks aclrtGetSocName, aclGetDeviceCapability and "
                      "aclrtGetMemInfo: a fixed name, other fields 0");
    }
    return Native(functions,
                  "name (SoC name), multiProcessorCount (AI cores), l2CacheSize, totalGlobalMem; "
                  "other fields 0");
  }
  if (entry == "DeviceGetAttribute") return None("ACL has no device query with CUDA's attributes");
  if (entry == "DriverGetVersion") return None("no ACL function of the plugin's list tells it");
  if (entry == "DeviceSynchronize") return Native({"aclrtSynchronizeDevice"});
  if (entry == "DeviceReset") {
    return Emulated({"aclrtSynchronizeDevice"},
                    "waits for the device; aclrtResetDevice would also destroy the context that "
                    "other threads and stream-ordered allocations still use");
  }
  return std::nullopt;
}

std::optional<Declaration> MemoryEntry(const std::string& entry, const Functions& fn) {
  if (entry == "MemGetInfo") {
    if (!Has(fn.aclrtGetMemInfo)) return None("the runtime lacks aclrtGetMemInfo");
    return Native({"aclrtGetMemInfo"}, "ACL_HBM_MEM; ACL_DDR_MEM where HBM reports no memory");
  }
  if (entry == "Malloc") return Native({"aclrtMalloc"}, "policy ACL_MEM_MALLOC_HUGE_FIRST");
  if (entry == "Free") {
    return Native({"aclrtSynchronizeDevice", "aclrtFree"}, "waits for the device, as cudaFree");
  }
  if (entry == "HostAlloc") {
    return Native({"aclrtMallocHost"}, "flags 0 only: aclrtMallocHost takes no flags");
  }
  if (entry == "FreeHost") {
    return Native({"aclrtSynchronizeDevice", "aclrtFreeHost"}, "waits for the device first");
  }
  if (entry == "MallocAsync" || entry == "FreeAsync") {
    const bool is_malloc = entry == "MallocAsync";
    return Emulated({"aclrtSynchronizeStream", is_malloc ? "aclrtMalloc" : "aclrtFree"},
                    "waits for the stream: ACL's aclrtMemPool* allocator is experimental and "
                    "needs a pool of fixed maximum size");
  }
  if (entry == "Memcpy" || entry == "Memset") {
    const bool is_copy = entry == "Memcpy";
    return Native({"aclrtSynchronizeStream", is_copy ? "aclrtMemcpy" : "aclrtMemset"},
                  std::string(is_copy ? "destMax" : "maxCount") +
                      " = count; first waits for the legacy and blocking streams (CUDA's "
                      "legacy-stream rule), as ACL's synchronous call uses no stream");
  }
  if (entry == "MemcpyAsync") {
    return Native({"aclrtMemcpyAsync"},
                  "destMax = count; host-to-host copies wait for the stream "
                  "(aclrtSynchronizeStream) and are done on the host");
  }
  if (entry == "MemsetAsync") return Native({"aclrtMemsetAsync"}, "maxCount = count");
  if (entry == "MemPoolGetAttribute" || entry == "MemPoolSetAttribute" ||
      entry == "MemPoolTrimTo") {
    return None("stream-ordered allocation is emulated: no ACL memory pool is used");
  }
  return std::nullopt;
}

std::optional<Declaration> StreamEntry(const std::string& entry, const Functions& fn) {
  if (entry == "StreamCreate") {
    return Emulated({"aclrtCreateStream"},
                    std::string(kLegacyNote) + " (blocking streams: one event each)");
  }
  if (entry == "StreamDestroy") {
    return Emulated({"aclrtStreamQuery", "aclrtDestroyStream"},
                    "a stream with pending work is destroyed once idle: aclrtDestroyStream "
                    "would wait for the work");
  }
  if (entry == "StreamSynchronize") {
    return Native({"aclrtSynchronizeStream"},
                  "the legacy stream's synchronisation also covers the blocking streams");
  }
  if (entry == "StreamQuery") {
    return Native({"aclrtStreamQuery"},
                  "not ready from the status out-parameter; the legacy "
                  "stream's query covers the blocking streams");
  }
  if (entry == "StreamWaitEvent") return Native({"aclrtStreamWaitEvent"}, "ACL has no flags");
  if (entry == "LaunchHostFunc") {
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

std::optional<Declaration> EventEntry(const std::string& entry) {
  if (entry == "EventCreate") {
    return Native({EventCreateFunction()},
                  "ACL_EVENT_SYNC | ACL_EVENT_TIME_LINE, without TIME_LINE for DisableTiming "
                  "(aclrtCreateEventWithFlag where the Ex form is missing); BlockingSync is "
                  "accepted (ACL has no such choice); Interprocess is not supported");
  }
  if (entry == "EventDestroy") return Native({"aclrtDestroyEvent"});
  if (entry == "EventRecord") return Native({"aclrtRecordEvent"});
  if (entry == "EventQuery") {
    return Native({"aclrtQueryEventStatus"}, "not ready from the status out-parameter");
  }
  if (entry == "EventSynchronize") return Native({"aclrtSynchronizeEvent"});
  if (entry == "EventElapsedTime") return Native({"aclrtEventElapsedTime"});
  return std::nullopt;
}

Declaration GraphEntry(const std::string& entry) {
  if (!Graphs()) {
    return None(
        "the runtime lacks one of aclmdlRICaptureBegin/GetInfo/End, aclmdlRIExecuteAsync, "
        "aclmdlRIDestroy: the core replays graphs");
  }
  if (entry == "GraphInstantiate") {
    return Native({"aclmdlRICaptureBegin", "aclmdlRICaptureGetInfo", "aclmdlRICaptureEnd"},
                  "nodes captured in order on a private stream (RELAXED); the exec is the "
                  "aclmdlRI; graphs with host-to-host copies, event waits or copies of pageable "
                  "host memory are replayed by the core");
  }
  if (entry == "GraphLaunch") {
    return Native({"aclmdlRIExecuteAsync"}, "after the exec's previous launch (an ACL event)");
  }
  return Native({"aclmdlRIDestroy"}, "once the exec's launches are done");
}

// The declaration for an entry, or nullopt for a name that is not an entry with one.
std::optional<Declaration> Declare(const std::string& entry) {
  static const Functions kAll{};
  const Functions& fn = HasState() ? S().fn : kAll;
  if (auto found = DeviceEntry(entry, fn)) return found;
  if (auto found = MemoryEntry(entry, fn)) return found;
  if (auto found = StreamEntry(entry, fn)) return found;
  if (auto found = EventEntry(entry)) return found;
  if (entry == "GraphInstantiate" || entry == "GraphLaunch" || entry == "GraphExecDestroy") {
    return GraphEntry(entry);
  }
  return std::nullopt;
}

}  // namespace

infinirtError_t GetSupport(const char* entry, infinirtPluginSupport* support) {
  if (entry == nullptr || support == nullptr) return infinirtErrorInvalidValue;
  const std::optional<Declaration> found = Declare(entry);
  if (!found) return infinirtErrorInvalidValue;
  const Declaration& declaration = *found;
  std::string functions;
  for (const char* function : declaration.functions) {
    functions += (functions.empty() ? "" : ", ") + std::string(function);
  }
  support->level = declaration.level;
  plugin::CopyText(support->vendor_functions, sizeof(support->vendor_functions), functions);
  plugin::CopyText(support->note, sizeof(support->note), declaration.note);
  return infinirtSuccess;
}

}  // namespace infinirt::ascend
