// The Cambricon plugin: opening CNRT, and the lifecycle entries.
#include <climits>
#include <memory>
#include <string>
#include <utility>

#include "cambricon_internal.h"

namespace infinirt::cambricon {

State* g_state = nullptr;

namespace {

// ---------------------------------------------------------------------------------------------
// Loading the runtime

template <class Pointer>
bool Resolve(const char* name, Pointer* pointer) {
  *pointer =
      reinterpret_cast<Pointer>(TheState().library.Symbol((std::string("cnrt") + name).c_str()));
  return *pointer != nullptr;
}

// Picks the asynchronous copy and the device-properties variant; false when no copy exists.
bool ChooseVariants(std::string* missing) {
  Functions& fn = TheState().fn;
  const std::pair<const char*, decltype(fn.memcpy_async)> copies[] = {
      {"cnrtMemcpyAsync_V3", fn.MemcpyAsync_V3},
      {"cnrtMemcpyAsync_V2", fn.MemcpyAsync_V2},
      {"cnrtMemcpyAsync", fn.MemcpyAsync}};
  for (const auto& [symbol, function] : copies) {
    if (fn.memcpy_async == nullptr && function != nullptr) {
      fn.memcpy_async = function;
      TheState().memcpy_async_symbol = symbol;
    }
  }
  const std::pair<const char*, decltype(fn.get_device_properties)> properties[] = {
      {"cnrtGetDeviceProperties_V3", fn.GetDeviceProperties_V3},
      {"cnrtGetDeviceProperties_V2", fn.GetDeviceProperties_V2},
      {"cnrtGetDeviceProperties", fn.GetDeviceProperties}};
  for (const auto& [symbol, function] : properties) {
    if (fn.get_device_properties == nullptr && function != nullptr) {
      fn.get_device_properties = function;
      TheState().properties_symbol = symbol;
    }
  }
  if (fn.memcpy_async != nullptr) return true;
  *missing += std::string(missing->empty() ? "" : ", ") +
              "cnrtMemcpyAsync_V3, cnrtMemcpyAsync_V2 or cnrtMemcpyAsync";
  return false;
}

// Resolves every function; false (with the reason) when a required one is missing.
bool ResolveFunctions() {
  Functions& fn = TheState().fn;
  std::string missing;
  constexpr bool kRequired = true;
  constexpr bool kOptional = false;
#define CNRT_RESOLVE_(requirement, name, params) \
  if (!Resolve(#name, &fn.name) && requirement)  \
    missing += std::string(missing.empty() ? "" : ", ") + "cnrt" #name;
  CNRT_FUNCTIONS(CNRT_RESOLVE_)
#undef CNRT_RESOLVE_
  Resolve("GetErrorName", &fn.GetErrorName);
  const bool copies = ChooseVariants(&missing);
  if (missing.empty() && copies) return true;
  TheState().reason = TheState().library.path() + " lacks " + missing;
  return false;
}

// cnrtGetLibVersion returns cnrtRet_t in CNRT 6 and nothing in CNRT 4: only the numbers count.
void ReadVersion() {
  if (TheState().fn.GetLibVersion == nullptr) return;
  int major = 0, minor = 0, patch = 0;
  TheState().fn.GetLibVersion(&major, &minor, &patch);
  if (major > 0) TheState().runtime_version = VersionNumber(major, minor);
}

void CountDevices() {
  State& s = TheState();
  unsigned int count = 0;
  const int status = s.fn.GetDeviceCount(&count);
  if (TranslateStatus(status) == infinirtErrorNoDevice) {  // a working runtime, no device
    s.usable = true;
    s.reason =
        s.library.path() + " reports no devices (cnrtGetDeviceCount: " + ErrorText(status) + ")";
    return;
  }
  if (status != cnrt::kSuccess) {  // the runtime is there but failed to initialise
    s.reason = "cnrtGetDeviceCount returned " + ErrorText(status);
    return;
  }
  s.usable = true;
  s.device_count = count > static_cast<unsigned int>(INT_MAX) ? INT_MAX : static_cast<int>(count);
  if (count == 0) s.reason = s.library.path() + " reports no devices";
}

void LoadRuntime(const char* config_json) {
  State& s = TheState();
  const plugin::CandidateList candidates = plugin::VendorCandidates(kVendorKey, config_json, s.log);
  if (!s.OpenRuntime(candidates)) return;
  Log(INFINIRT_LOG_DEBUG, "opened " + s.library.path());
  if (!ResolveFunctions()) return;
  ReadVersion();
  CountDevices();
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Entries: lifecycle

infinirtError_t CambriconPlugin::Initialize(const infinirtPluginHost* host) {
  auto state = std::make_unique<State>();
  state->log.Attach(host);
  state->binding.Invalidate();
  StartPerThreadQueues();
  g_state = state.release();
  LoadRuntime(host ? host->config_json : nullptr);
  return infinirtSuccess;
}

infinirtError_t CambriconPlugin::Finalize() {
  RetirePerThreadQueues();
  delete g_state;  // the runtime library stays loaded (vendor_library.h)
  g_state = nullptr;
  return infinirtSuccess;
}

}  // namespace infinirt::cambricon
