// The CUDA-family plugin's support declarations (GetSupport, the source of the support matrix).
// They describe the runtime that is loaded; with none loaded, a runtime that has every
// function of the lists. Function names are written without the vendor's prefix.
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "cuda_family_plugin.h"

namespace infinirt::cuda_family {
namespace {

using plugin::Declaration;
using plugin::Emulated;
using plugin::Native;
using plugin::NativeIfPresent;
using plugin::None;
namespace entry = plugin::entry;

bool RuntimeLoaded() { return g_state != nullptr && TheState().library.is_open(); }

// Whether an optional function is there (assumed, when no runtime is loaded).
template <class Pointer>
bool Has(Pointer function) {
  return !RuntimeLoaded() || function != nullptr;
}

// Adopting another library's stream: its flags and device read where the runtime can tell them.
Declaration StreamAdoptDeclaration(const Functions& fn) {
  std::vector<std::string> calls;
  if (Has(fn.StreamGetFlags)) calls.push_back("StreamGetFlags");
  if (Has(fn.StreamGetDevice)) calls.push_back("StreamGetDevice");
  return Native(calls,
                "the vendor stream is used as it is; where the runtime lacks StreamGetFlags it is "
                "taken to be blocking, and where it lacks StreamGetDevice its device is not "
                "checked");
}

// MallocAsync and FreeAsync: the vendor's stream-ordered function, or the emulation.
Declaration StreamOrdered(bool present, const char* function, const char* fallback) {
  const std::string note = std::string("where the runtime lacks ") + function +
                           ", emulated: waits for the stream (StreamSynchronize), then " + fallback;
  if (present) return Native({function}, note);
  return Emulated({"StreamSynchronize", fallback}, note);
}

// A pool entry: the vendor's function of that name (`present`: the runtime has it), on the
// device's default pool (DeviceGetDefaultMemPool) for the entries that serve it.
Declaration PoolDeclaration(bool present, const Functions& fn, infinirtPluginEntry_t id,
                            const char* function) {
  if (!present) return None(std::string("the runtime lacks ") + function);
  // The entries of the default pool find it first.
  const bool default_pool = id == entry::MemPoolGetAttribute || id == entry::MemPoolSetAttribute ||
                            id == entry::MemPoolTrimTo;
  if (!default_pool) {
    return Native({function}, "pool properties and access descriptors have CUDA's layout");
  }
  if (!Has(fn.DeviceGetDefaultMemPool)) return None("the runtime lacks DeviceGetDefaultMemPool");
  return Native({"DeviceGetDefaultMemPool", function}, "on the device's default pool");
}

Declaration GraphInstantiateDeclaration(const Functions& fn) {
  if (RuntimeLoaded() && !HasNativeGraphs()) {
    return None("the runtime lacks stream capture or graphs: the core replays graphs");
  }
  const bool with_flags = Has(fn.GraphInstantiateWithFlags);
  return Native({"StreamBeginCapture", "StreamEndCapture",
                 with_flags ? "GraphInstantiateWithFlags" : "GraphInstantiate", "GraphDestroy"},
                "nodes captured in order on a private stream (relaxed mode); "
                "GraphInstantiate, called as the 5-argument form, where "
                "GraphInstantiateWithFlags is missing; graphs with host-to-host copies or "
                "event waits are replayed by the core");
}

// Opening another process's memory: the vendor's function, and the driver's size of what it
// mapped (the runtime API has no call that tells it), by which the core routes copies.
Declaration IpcOpenDeclaration(const Functions& fn) {
  if (!Has(fn.IpcOpenMemHandle)) return None("the runtime lacks IpcOpenMemHandle");
  if (!NamedAsCuda()) {
    return None(
        "the driver's function for the size of opened memory (CUDA's "
        "cuMemGetAddressRange) is not known for this vendor");
  }
  if (!Has(fn.GetDriverEntryPointByVersion)) {
    return None(
        "the runtime lacks GetDriverEntryPointByVersion, through which the plugin asks "
        "the driver the size of opened memory");
  }
  return Native({"IpcOpenMemHandle", "GetDriverEntryPointByVersion"},
                "the size of the opened memory from the driver's cuMemGetAddressRange");
}

// Importing another process's pool allocation: the vendor's function, and the driver's size of
// what it mapped, as for IpcOpenMemHandle.
Declaration PoolImportDeclaration(const Functions& fn) {
  if (!Has(fn.MemPoolImportPointer)) return None("the runtime lacks MemPoolImportPointer");
  const Declaration sizing = IpcOpenDeclaration(fn);
  if (!NamedAsCuda() || !Has(fn.GetDriverEntryPointByVersion)) return None(sizing.note);
  return Native({"MemPoolImportPointer", "GetDriverEntryPointByVersion"},
                "the size of the imported memory from the driver's cuMemGetAddressRange");
}

// The other pool-sharing entries: as MemPoolImportPointer is, since pools other processes open
// are made only where their allocations can be imported (MemPoolCreate refuses them otherwise).
Declaration PoolSharingDeclaration(bool present, const Functions& fn, const char* function,
                                   const char* note) {
  const Declaration importing = PoolImportDeclaration(fn);
  if (importing.level == INFINIRT_SUPPORT_NONE) {
    return None("no pool other processes open is made: " + importing.note);
  }
  return NativeIfPresent(present, function, note);
}

// A managed memory hint: CUDA 13's form (a location), which CUDA 12.2 to 12.9 name _v2, or the
// older one (a device number), as ChooseManagedHintForms found them.
Declaration ManagedHintDeclaration(bool location_form, bool device_form, const char* function) {
  if (!NamedAsCuda()) {
    return None(std::string("which prototype the vendor's ") + function +
                " has is not known (CUDA 13 changed CUDA's)");
  }
  const bool prefetch = std::string(function) == "MemPrefetchAsync";
  if (RuntimeLoaded() && !location_form && !device_form) {
    return None(std::string("the runtime lacks ") + function);
  }
  if (!RuntimeLoaded()) {
    return Native({function},
                  "CUDA 13's form, with a location; before CUDA 13 the runtime's _v2 form (CUDA "
                  "12.2 on), else the older one with a device number (the host as -1), where a "
                  "NUMA location answers NotSupported");
  }
  if (location_form) {
    return Native({prefetch ? TheState().prefetch_symbol : TheState().advise_symbol},
                  "with a location: CUDA 13's form, which CUDA 12.2 to 12.9 name _v2");
  }
  return Native({function},
                "the form before CUDA 13, with a device number (the host as -1); a NUMA location "
                "answers NotSupported");
}

// The entries that are the runtime's function of the same name, declared by one rule: Native for
// a function of CUDA_FAMILY_REQUIRED_FUNCTIONS, NativeIfPresent for one of
// CUDA_FAMILY_OPTIONAL_FUNCTIONS. `present` is nullptr for a required one.
struct ListedFunction {
  const char* name;
  bool (*present)(const Functions& fn);
};
#define CF_REQUIRED_(name, params) {#name, nullptr},
#define CF_OPTIONAL_(name, params) {#name, [](const Functions& fn) { return Has(fn.name); }},
const ListedFunction kListedFunctions[] = {
    CUDA_FAMILY_REQUIRED_FUNCTIONS(CF_REQUIRED_) CUDA_FAMILY_OPTIONAL_FUNCTIONS(CF_OPTIONAL_)};
#undef CF_OPTIONAL_
#undef CF_REQUIRED_

// What the rule adds for some of them: how the call is made.
struct EntryNote {
  infinirtPluginEntry_t id;
  const char* note;
};
const EntryNote kEntryNotes[] = {
    {entry::GetDeviceCount, "counted at initialisation"},
    {entry::MemcpyAsync, "host-to-host copies then wait with StreamSynchronize"},
    {entry::StreamWaitEvent, "always 3 arguments, flags 0"},
    {entry::EventQuery, "not ready recognised by error name"},
    {entry::DeviceEnablePeerAccess, "access another library enabled already counts as enabled"},
    {entry::DeviceDisablePeerAccess, "access another library disabled already counts as disabled"},
    {entry::MallocManaged, "flags as CUDA's"},
    {entry::StreamGetAttribute, "the value union has CUDA's layout"},
    {entry::StreamSetAttribute, "the value union has CUDA's layout"},
    {entry::Memcpy2DAsync, "host-to-host planes go row by row (each copy synchronous)"},
    {entry::IpcGetMemHandle, "the handle's 64 bytes pass unchanged"},
    {entry::IpcGetEventHandle, "the handle's 64 bytes pass unchanged"},
};

// The entries whose function has another name, declared by the same rule.
struct RenamedEntry {
  infinirtPluginEntry_t id;
  const char* function;
};
const RenamedEntry kRenamedEntries[] = {
    {entry::StreamCreate, "StreamCreateWithFlags"},
    {entry::EventCreate, "EventCreateWithFlags"},
};

// The declaration the rule gives `id`; nullopt for an entry that no listed function serves.
std::optional<Declaration> DeclareByRule(infinirtPluginEntry_t id, const Functions& fn) {
  const char* function = plugin::kEntryNames[id];
  for (const RenamedEntry& renamed : kRenamedEntries) {
    if (renamed.id == id) function = renamed.function;
  }
  std::string note;
  for (const EntryNote& entry_note : kEntryNotes) {
    if (entry_note.id == id) note = entry_note.note;
  }
  for (const ListedFunction& listed : kListedFunctions) {
    if (std::strcmp(listed.name, function) != 0) continue;
    if (listed.present == nullptr) return Native({function}, note);
    return NativeIfPresent(listed.present(fn), function, note);
  }
  return std::nullopt;
}

// The entries the rule does not describe, written out; nullopt for the others.
std::optional<Declaration> DeclareException(infinirtPluginEntry_t id, const Functions& fn) {
  switch (id) {
    case entry::GetDeviceProperties:
      if (RuntimeLoaded() && !TheState().attribute_problem.empty()) {
        return Native({TheState().properties_symbol, "MemGetInfo"},
                      "the name and memory size only: attributes are refused, the runtime's "
                      "numbering is not CUDA's");
      }
      return Native({g_state ? TheState().properties_symbol : "GetDeviceProperties",
                     "DeviceGetAttribute", "MemGetInfo"},
                    "the name from GetDeviceProperties(_v2), the numbers from attributes");
    case entry::DeviceGetAttribute:
      if (RuntimeLoaded() && !TheState().attribute_problem.empty()) {
        return None("the runtime's attribute numbering is not CUDA's: " +
                    TheState().attribute_problem);
      }
      return NativeIfPresent(Has(fn.DeviceGetAttribute), "DeviceGetAttribute");
    case entry::HostAlloc:
      return Has(fn.HostAlloc)
                 ? Native({"HostAlloc"}, "MallocHost where HostAlloc is missing")
                 : Native({"MallocHost"}, "only flags 0: the runtime lacks HostAlloc");
    case entry::MallocAsync:
      return StreamOrdered(Has(fn.MallocAsync), "MallocAsync", "Malloc");
    case entry::FreeAsync:
      return StreamOrdered(Has(fn.FreeAsync), "FreeAsync", "Free");
    case entry::StreamGetNativeHandle:
      return Native({},
                    "the runtime's own stream handle, no call: the vendor's legacy stream "
                    "(cudaStreamLegacy where CUDA's special handles exist, else 0) for the "
                    "legacy one, the plugin's per-thread stream for the per-thread one");
    case entry::StreamAdopt:
      return StreamAdoptDeclaration(fn);
    case entry::StreamRelease:
      return Native({}, "no call: the adopted stream is the vendor's handle, left to its maker");
    case entry::EventGetNativeHandle:
      return Native({}, "the runtime's own event handle, no call");
    case entry::MemPrefetchAsync:
      return ManagedHintDeclaration(Has(fn.MemPrefetchAsync), Has(fn.MemPrefetchAsyncToDevice),
                                    "MemPrefetchAsync");
    case entry::MemAdvise:
      return ManagedHintDeclaration(Has(fn.MemAdvise), Has(fn.MemAdviseForDevice), "MemAdvise");
    case entry::LaunchHostFunc:
      if (!Has(fn.LaunchHostFunc)) return None("the runtime lacks LaunchHostFunc");
      return Native({"LaunchHostFunc"},
                    "through a trampoline that marks the thread: blocking entries called from a "
                    "host function answer NotPermitted without calling the runtime, which forbids "
                    "them without promising an answer");
    case entry::MemPoolGetAttribute:
    case entry::PoolGetAttribute:
      return PoolDeclaration(Has(fn.MemPoolGetAttribute), fn, id, "MemPoolGetAttribute");
    case entry::MemPoolSetAttribute:
    case entry::PoolSetAttribute:
      return PoolDeclaration(Has(fn.MemPoolSetAttribute), fn, id, "MemPoolSetAttribute");
    case entry::MemPoolTrimTo:
    case entry::PoolTrimTo:
      return PoolDeclaration(Has(fn.MemPoolTrimTo), fn, id, "MemPoolTrimTo");
    case entry::MemPoolCreate:
      return PoolDeclaration(Has(fn.MemPoolCreate), fn, id, "MemPoolCreate");
    case entry::MemPoolDestroy:
      return PoolDeclaration(Has(fn.MemPoolDestroy), fn, id, "MemPoolDestroy");
    case entry::MallocFromPoolAsync:
      return PoolDeclaration(Has(fn.MallocFromPoolAsync), fn, id, "MallocFromPoolAsync");
    case entry::MemPoolSetAccess:
      return PoolDeclaration(Has(fn.MemPoolSetAccess), fn, id, "MemPoolSetAccess");
    case entry::MemPoolGetAccess:
      return PoolDeclaration(Has(fn.MemPoolGetAccess), fn, id, "MemPoolGetAccess");
    case entry::IpcOpenMemHandle:
      return IpcOpenDeclaration(fn);
    case entry::IpcCloseMemHandle:
      if (IpcOpenDeclaration(fn).level == INFINIRT_SUPPORT_NONE) {
        return None("nothing is opened to close: " + IpcOpenDeclaration(fn).note);
      }
      return NativeIfPresent(Has(fn.IpcCloseMemHandle), "IpcCloseMemHandle");
    case entry::MemPoolExportToShareableHandle:
      return PoolSharingDeclaration(Has(fn.MemPoolExportToShareableHandle), fn,
                                    "MemPoolExportToShareableHandle",
                                    "the OS handle passes unchanged");
    case entry::MemPoolImportFromShareableHandle:
      return PoolSharingDeclaration(Has(fn.MemPoolImportFromShareableHandle), fn,
                                    "MemPoolImportFromShareableHandle", "");
    case entry::MemPoolExportPointer:
      return PoolSharingDeclaration(Has(fn.MemPoolExportPointer), fn, "MemPoolExportPointer",
                                    "the export data's 64 bytes pass unchanged");
    case entry::MemPoolImportPointer:
      return PoolImportDeclaration(fn);
    case entry::GraphInstantiate:
      return GraphInstantiateDeclaration(fn);
    case entry::GraphLaunch:
      if (!Has(fn.GraphLaunch)) return None("the runtime lacks GraphLaunch");
      return Native({"GraphLaunch"},
                    "a graph with host nodes records an event after each launch (EventRecord)");
    case entry::GraphExecDestroy:
      if (!Has(fn.GraphExecDestroy)) return None("the runtime lacks GraphExecDestroy");
      return Native({"GraphExecDestroy"},
                    "a graph with host nodes keeps their trampolines until its last launch "
                    "completes (EventQuery)");
    default:
      return std::nullopt;
  }
}

// The lifecycle entries, which only the core calls, are declared by neither.
bool IsLifecycleEntry(infinirtPluginEntry_t id) {
  return id == entry::Initialize || id == entry::Finalize || id == entry::GetSupport;
}

}  // namespace

std::optional<Declaration> CudaFamilyPlugin::Declare(infinirtPluginEntry_t id) {
  static const Functions kAll{};
  const Functions& fn = g_state != nullptr ? TheState().fn : kAll;
  if (IsLifecycleEntry(id)) return std::nullopt;
  if (std::optional<Declaration> exception = DeclareException(id, fn)) return exception;
  return DeclareByRule(id, fn);
}

std::string CudaFamilyPlugin::VendorFunctionName(const char* function) {
  const bool opened = g_state != nullptr && !TheState().prefix.empty();
  return (opened ? TheState().prefix : std::string(ThisVendor().default_prefix)) + function;
}

}  // namespace infinirt::cuda_family
