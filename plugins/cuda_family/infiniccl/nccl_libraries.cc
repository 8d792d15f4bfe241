#include "nccl_libraries.h"

#include <dlfcn.h>

#include <iterator>
#include <string>
#include <vector>

#include "infinirt.h"
#include "plugin_support.h"
#include "vendor_library.h"

namespace infiniccl_nccl {

namespace {

namespace plugin = infinirt::plugin;

// The engine has no host table to log through (it is no runtime plugin): the discovery's log
// lines are dropped, and what it found or tried goes to the listing instead.
const plugin::PluginLog& SilentLog() {
  static const plugin::PluginLog* log = new plugin::PluginLog("nccl");
  return *log;
}

// One per entry of the data, in its order; filled once by LoadLibraries.
std::vector<NcclLibrary>& Libraries() {
  static auto* libraries = new std::vector<NcclLibrary>();  // kept: comms use their functions
  return *libraries;
}

template <class Pointer>
void Resolve(const plugin::VendorLibrary& opened, const std::string& symbol, Pointer* pointer) {
  *pointer = reinterpret_cast<Pointer>(opened.Symbol(symbol.c_str()));
}

// Resolves the functions; the required ones it lacks, as " name name".
std::string ResolveFunctions(const plugin::VendorLibrary& opened, NcclLibrary* library) {
  std::string missing;
#define NCCL_RESOLVE_REQUIRED_(ret, name, params)             \
  Resolve(opened, library->Symbol(#name), &library->fn.name); \
  if (library->fn.name == nullptr) missing += " " + library->Symbol(#name);
  NCCL_REQUIRED_FUNCTIONS(NCCL_RESOLVE_REQUIRED_)
#undef NCCL_RESOLVE_REQUIRED_
#define NCCL_RESOLVE_OPTIONAL_(ret, name, params) \
  Resolve(opened, library->Symbol(#name), &library->fn.name);
  NCCL_OPTIONAL_FUNCTIONS(NCCL_RESOLVE_OPTIONAL_)
#undef NCCL_RESOLVE_OPTIONAL_
  return missing;
}

NcclLibrary Open(const CollectiveLibraryData& data) {
  NcclLibrary library;
  library.data = &data;
  const plugin::CandidateList candidates = plugin::ListedCandidates(
      data.env, data.candidates, "the built-in list (config/vendors.json)", SilentLog());
  plugin::VendorLibrary opened;  // never closes what it opened
  if (!opened.Open(candidates, SilentLog())) {
    library.why = std::string(data.library) + " not found: tried " + opened.tried() +
                  (opened.attempts().empty() ? "" : " (" + opened.attempts() + ")");
    return library;
  }
  library.path = opened.path();
  if (const std::string missing = ResolveFunctions(opened, &library); !missing.empty()) {
    library.why = library.path + " lacks" + missing;
    return library;
  }
  int version = -1;
  if (library.fn.GetVersion != nullptr && library.fn.GetVersion(&version) == kNcclSuccess) {
    library.version = version;
  }
  library.name = std::string(data.library) + " (version " +
                 (library.version < 0 ? "unknown" : std::to_string(library.version)) + ")";
  library.loaded = true;
  return library;
}

// Devices of each type InfiniRT has (all 0 when it has none).
std::vector<int> DeviceCounts() {
  std::vector<int> counts(INFINI_DEVICE_TYPE_COUNT, 0);
  if (infinirtGetAllDeviceCount(counts.data()) != infinirtSuccess) {
    infinirtGetLastError();
    counts.assign(INFINI_DEVICE_TYPE_COUNT, 0);
  }
  return counts;
}

}  // namespace

const char* DeviceTypeName(infiniDevice_t type) {
  switch (type) {
#define NCCL_DEVICE_NAME_(name, value, display, plugin_name) \
  case INFINI_DEVICE_##name:                                 \
    return display;
    INFINIRT_DEVICE_TYPES(NCCL_DEVICE_NAME_)
#undef NCCL_DEVICE_NAME_
    default:
      return "an unknown device type";
  }
}

namespace {

// "A, B or C": the device types the engine serves (its entries in the vendor table).
std::string ServedTypeNames() {
  std::string names;
  const size_t count = std::size(kCollectiveLibraries);
  for (size_t i = 0; i < count; ++i) {
    if (i > 0) names += i + 1 == count ? " or " : ", ";
    names += DeviceTypeName(kCollectiveLibraries[i].device_type);
  }
  return names;
}

}  // namespace

bool LoadLibraries(std::string* why) {
  const std::vector<int> counts = DeviceCounts();
  std::vector<NcclLibrary>& libraries = Libraries();
  std::string absent;
  bool any = false;
  for (const CollectiveLibraryData& data : kCollectiveLibraries) {
    if (counts[data.device_type] == 0) {
      NcclLibrary unused;
      unused.data = &data;
      unused.why = std::string("no ") + DeviceTypeName(data.device_type) +
                   " device is present, so its " + data.library + " was not looked for";
      libraries.push_back(unused);
      continue;
    }
    libraries.push_back(Open(data));
    const NcclLibrary& opened = libraries.back();
    any = any || opened.loaded;
    if (!opened.loaded) {
      absent += (absent.empty() ? "" : "; ") + std::string(DeviceTypeName(data.device_type)) +
                ": " + opened.why;
    }
  }
  if (any) return true;
  *why = absent.empty() ? "no " + ServedTypeNames() + " device is present"
                        : "no collective library for the devices present: " + absent;
  return false;
}

const NcclLibrary* LibraryFor(infiniDevice_t type, std::string* why) {
  for (const NcclLibrary& library : Libraries()) {
    if (library.data->device_type != type) continue;
    if (library.loaded) return &library;
    *why = std::string(DeviceTypeName(type)) + ": " + library.why;
    return nullptr;
  }
  *why = std::string("the NCCL engine does not serve ") + DeviceTypeName(type) + " devices";
  return nullptr;
}

}  // namespace infiniccl_nccl
