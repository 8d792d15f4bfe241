// The CUDA-family plugin: opening the vendor runtime, and the lifecycle entries.
#include <dlfcn.h>

#include <cstring>
#include <memory>
#include <string>

#include "cuda_family_plugin.h"

namespace infinirt::cuda_family {

State* g_state = nullptr;

namespace {

std::string PrefixFor(const std::string& library_path) {
  for (const PrefixRule& rule : TheState().spec.prefix_rules) {
    if (rule.library_part == nullptr) break;
    if (library_path.find(rule.library_part) != std::string::npos) return rule.prefix;
  }
  return TheState().spec.default_prefix;
}

template <class Pointer>
bool Resolve(const char* name, Pointer* pointer) {
  *pointer =
      reinterpret_cast<Pointer>(TheState().library.Symbol((TheState().prefix + name).c_str()));
  return *pointer != nullptr;
}

// Resolves every function; false (with the reason) when a required one is missing.
bool ResolveFunctions() {
  Functions& fn = TheState().fn;
  std::string missing;
#define CF_RESOLVE_REQUIRED_(name, params) \
  if (!Resolve(#name, &fn.name))           \
    missing += (missing.empty() ? "" : ", ") + TheState().prefix + #name;
  CUDA_FAMILY_REQUIRED_FUNCTIONS(CF_RESOLVE_REQUIRED_)
#undef CF_RESOLVE_REQUIRED_
#define CF_RESOLVE_OPTIONAL_(name, params) Resolve(#name, &fn.name);
  CUDA_FAMILY_OPTIONAL_FUNCTIONS(CF_RESOLVE_OPTIONAL_)
#undef CF_RESOLVE_OPTIONAL_
  Resolve("GetErrorName", &fn.GetErrorName);
  TheState().properties_symbol = "GetDeviceProperties_v2";  // CUDA >= 12
  if (!Resolve(TheState().properties_symbol, &fn.GetDeviceProperties)) {
    TheState().properties_symbol = "GetDeviceProperties";
    Resolve(TheState().properties_symbol, &fn.GetDeviceProperties);
  }
  Resolve("GraphInstantiate", &fn.GraphInstantiate);
  Resolve("MallocHost", &fn.MallocHostWithFlags);
  if (!missing.empty()) {
    TheState().reason = TheState().library.path() + " lacks " + missing;
    return false;
  }
  return true;
}

// CUDA 13 gave cudaMemPrefetchAsync and cudaMemAdvise the prototypes with a location that CUDA
// 12.2 to 12.9 name _v2; before 13 the plain names take a device number. Where the vendor does
// not name its functions as CUDA does, which form its own have is not known: neither is used.
void ChooseManagedHintForms() {
  State& s = TheState();
  Functions& fn = s.fn;
  if (!NamedAsCuda()) {
    fn.MemPrefetchAsync = nullptr;
    fn.MemAdvise = nullptr;
    return;
  }
  if (s.runtime_version >= 13000) return;  // the list's names are the location forms
  Resolve("MemPrefetchAsync", &fn.MemPrefetchAsyncToDevice);
  Resolve("MemAdvise", &fn.MemAdviseForDevice);
  if (Resolve("MemPrefetchAsync_v2", &fn.MemPrefetchAsync))
    s.prefetch_symbol = "MemPrefetchAsync_v2";
  if (Resolve("MemAdvise_v2", &fn.MemAdvise)) s.advise_symbol = "MemAdvise_v2";
}

// "12.8" from CUDA's version number 12080.
std::string VersionText(int version) {
  return std::to_string(version / 1000) + "." + std::to_string(version % 1000 / 10);
}

// What to fix when the runtime reports its driver missing or too old: whether the driver
// library can be opened at all tells the two apart.
std::string DriverDiagnosis() {
  const State& s = TheState();
  const char* driver = s.spec.driver_library;
  if (driver == nullptr) return "driver not found or too old for this runtime";
  std::string error;
  void* handle = plugin::OpenLibrary(driver, RTLD_LAZY | RTLD_LOCAL, s.log, &error);
  if (handle == nullptr) return "driver not found (" + error + ")";
  dlclose(handle);
  std::string versions;
  int driver_version = 0;
  if (s.fn.DriverGetVersion != nullptr && s.fn.DriverGetVersion(&driver_version) == 0 &&
      driver_version > 0 && s.runtime_version > 0) {
    versions = ": " + std::string(driver) + " supports version " + VersionText(driver_version) +
               ", the runtime is " + VersionText(s.runtime_version);
  }
  return "driver too old for this runtime" + versions;
}

// --- The attribute numbering self-check ------------------------------------------------------
// Where a vendor's numbering of device attributes is not verified to be CUDA's (for some, the
// sources disagree: HIP numbers them otherwise), the plugin asks a few attributes by CUDA's
// numbers on device 0 and compares them with the same facts in the properties struct, whose
// first fields CUDA-compatible runtimes lay out as CUDA does. Wrong numbers would answer every
// attribute with another attribute's value; on disagreement, attributes are refused instead.

struct CheckedFact {
  infinirtDeviceAttr attribute;  // its number is CUDA's
  const char* what;
  unsigned DevicePropOffsets::*offset;
};

constexpr CheckedFact kCheckedFacts[] = {
    {infinirtDevAttrWarpSize, "warp size", &DevicePropOffsets::warp_size},
    {infinirtDevAttrComputeCapabilityMajor, "compute capability major", &DevicePropOffsets::major},
    {infinirtDevAttrComputeCapabilityMinor, "compute capability minor", &DevicePropOffsets::minor},
    {infinirtDevAttrMultiProcessorCount, "multiprocessor count",
     &DevicePropOffsets::multiprocessor_count},
};

int IntAt(const char* bytes, unsigned offset) {
  int value = 0;
  std::memcpy(&value, bytes + offset, sizeof value);
  return value;
}

// CUDA 13's layout for a runtime of version 13 or later, else CUDA 12's (which the vendors
// that number their versions otherwise mirror).
const DevicePropOffsets& PropLayout() {
  return TheState().runtime_version >= 13000 ? kCuda13PropOffsets : kCuda12PropOffsets;
}

// "" when the attribute agrees with the properties struct, else what was seen.
std::string CompareFact(const CheckedFact& fact, const char* prop) {
  int value = 0;
  const CF_ERROR status =
      TheState().fn.DeviceGetAttribute(&value, static_cast<int>(fact.attribute), 0);
  const std::string number = std::to_string(static_cast<int>(fact.attribute));
  if (status != 0) {
    return "attribute " + number + " (" + fact.what + ") failed: " + ErrorText(status);
  }
  const int expected = IntAt(prop, PropLayout().*fact.offset);
  if (value == expected) return "";
  return "attribute " + number + " (" + fact.what + ") is " + std::to_string(value) +
         ", the properties say " + std::to_string(expected);
}

// The evidence against CUDA's numbering, or "" where the facts agree.
std::string CheckAttributeNumbering() {
  State& s = TheState();
  if (s.fn.DeviceGetAttribute == nullptr) return "";  // nothing to answer wrongly
  if (s.fn.GetDeviceProperties == nullptr) {
    return s.prefix + "GetDeviceProperties is missing: nothing to check the numbering against";
  }
  alignas(64) static char prop[kVendorPropertiesBytes];
  std::memset(prop, 0, sizeof prop);
  if (s.fn.GetDeviceProperties(prop, 0) != 0) {
    return s.prefix + s.properties_symbol + " failed on device 0";
  }
  std::string evidence;
  for (const CheckedFact& fact : kCheckedFacts) {
    const std::string seen = CompareFact(fact, prop);
    if (!seen.empty()) evidence += (evidence.empty() ? "" : "; ") + seen;
  }
  return evidence;
}

void SelfCheckAttributeNumbering() {
  State& s = TheState();
  if (s.spec.attribute_numbers_verified || s.device_count == 0) return;
  const std::string evidence = CheckAttributeNumbering();
  if (evidence.empty()) {
    Log(INFINIRT_LOG_DEBUG, "device attributes agree with the properties in CUDA's numbering");
    return;
  }
  s.attribute_problem = evidence;
  s.reason =
      "device attributes NotSupported: the runtime's numbering is not CUDA's (" + evidence + ")";
  Log(INFINIRT_LOG_WARN, s.reason);
}

}  // namespace

void LoadRuntime(const char* config_json) {
  State& s = TheState();
  const plugin::CandidateList candidates =
      plugin::VendorCandidates(s.spec.vendor_key, config_json, s.log);
  if (!s.OpenRuntime(candidates)) return;
  s.prefix = PrefixFor(s.library.path());
  Log(INFINIRT_LOG_DEBUG, "opened " + s.library.path() + " (symbol prefix " + s.prefix + ")");
  if (!ResolveFunctions()) return;
  if (s.fn.RuntimeGetVersion != nullptr) s.fn.RuntimeGetVersion(&s.runtime_version);
  ChooseManagedHintForms();
  int count = 0;
  const CF_ERROR status = s.fn.GetDeviceCount(&count);
  if (TranslateStatus(status) == infinirtErrorNoDevice) {  // a working runtime, no device
    s.usable = true;
    s.reason = s.library.path() + " reports no devices (" + s.prefix +
               "GetDeviceCount: " + ErrorText(status) + ")";
    return;
  }
  if (status != 0) {  // the runtime is there but failed to initialise
    s.reason = s.prefix + "GetDeviceCount returned " + ErrorText(status);
    if (TranslateStatus(status) == infinirtErrorInsufficientDriver) {
      s.reason = DriverDiagnosis() + ": " + s.reason;
    }
    return;
  }
  s.usable = true;
  s.device_count = count;
  if (count == 0) s.reason = s.library.path() + " reports no devices";
  SelfCheckAttributeNumbering();
}

// ---------------------------------------------------------------------------------------------
// Entries: lifecycle

infinirtError_t CudaFamilyPlugin::Initialize(const infinirtPluginHost* host) {
  auto state = std::make_unique<State>(ThisVendor());
  state->log.Attach(host);
  state->binding.Invalidate();
  StartPerThreadStreams();
  g_state = state.release();
  LoadRuntime(host ? host->config_json : nullptr);
  return infinirtSuccess;
}

infinirtError_t CudaFamilyPlugin::Finalize() {
  if (g_state != nullptr) FreePendingExecs();
  RetirePerThreadStreams();
  delete g_state;  // the runtime library stays loaded (vendor_library.h)
  g_state = nullptr;
  return infinirtSuccess;
}

}  // namespace infinirt::cuda_family
