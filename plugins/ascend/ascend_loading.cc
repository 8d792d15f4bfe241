// The Ascend plugin: opening AscendCL, and the lifecycle entries.
#include <memory>
#include <string>

#include "ascend_state.h"

namespace infinirt::ascend {
namespace {

State* g_state = nullptr;

// ---------------------------------------------------------------------------------------------
// Loading the runtime

template <class Pointer>
bool ResolveSymbol(const char* name, Pointer* pointer) {
  *pointer = reinterpret_cast<Pointer>(TheState().library.Symbol(name));
  return *pointer != nullptr;
}

// Resolves every function; false (with the reason) when a required one is missing.
bool ResolveFunctions() {
  Functions& fn = TheState().fn;
  std::string missing;
#define ASCEND_RESOLVE_REQUIRED_(name, params) \
  if (!ResolveSymbol(#name, &fn.name))         \
    missing += (missing.empty() ? "" : ", ") + std::string(#name);
  ASCEND_REQUIRED_FUNCTIONS(ASCEND_RESOLVE_REQUIRED_)
#undef ASCEND_RESOLVE_REQUIRED_
#define ASCEND_RESOLVE_OPTIONAL_(name, params) ResolveSymbol(#name, &fn.name);
  ASCEND_OPTIONAL_FUNCTIONS(ASCEND_RESOLVE_OPTIONAL_)
#undef ASCEND_RESOLVE_OPTIONAL_
  ResolveSymbol("aclrtGetSocName", &fn.aclrtGetSocName);
  ResolveSymbol("aclGetRecentErrMsg", &fn.aclGetRecentErrMsg);
  if (!missing.empty()) {
    TheState().reason = TheState().library.path() + " lacks " + missing;
    return false;
  }
  return true;
}

// The ACL interface version (aclrtGetVersion: major.minor.patch) as major * 1000 + minor * 10.
void ReadRuntimeVersion() {
  int32_t major = 0, minor = 0, patch = 0;
  if (TheState().fn.aclrtGetVersion != nullptr &&
      TheState().fn.aclrtGetVersion(&major, &minor, &patch) == 0) {
    TheState().runtime_version = major * 1000 + minor * 10;
  }
}

// The candidates naming CANN's newer runtime library, libacl_rt.so, and the others.
bool NamesAclRt(const std::string& pattern) {
  return pattern.find("libacl_rt.so") != std::string::npos;
}

plugin::CandidateList Only(const plugin::CandidateList& all, bool acl_rt) {
  plugin::CandidateList part{{}, all.source};
  for (const std::string& pattern : all.patterns) {
    if (NamesAclRt(pattern) == acl_rt) part.patterns.push_back(pattern);
  }
  return part;
}

// CANN's newer libacl_rt.so is preferred where it exists and has every function the plugin
// requires; otherwise the others (libascendcl.so, which older releases export everything from).
bool OpenAndResolve(const plugin::CandidateList& candidates) {
  State& s = TheState();
  const plugin::CandidateList acl_rt = Only(candidates, true);
  std::string acl_rt_reason;  // why not libacl_rt.so, for the listing if nothing else opens
  if (!acl_rt.patterns.empty()) {
    if (s.OpenRuntime(acl_rt)) {
      if (ResolveFunctions()) return true;
      Log(INFINIRT_LOG_DEBUG, s.reason + ": trying the other candidates");
      s.fn = Functions();
    }
    acl_rt_reason = s.reason;
  }
  const plugin::CandidateList others = Only(candidates, false);
  if (others.patterns.empty()) return false;  // the reason is libacl_rt.so's
  if (!s.OpenRuntime(others)) {
    if (!acl_rt_reason.empty()) s.reason = acl_rt_reason + "; " + s.reason;
    return false;
  }
  return ResolveFunctions();
}

void LoadRuntime(const char* config_json) {
  State& s = TheState();
  if (!OpenAndResolve(plugin::VendorCandidates("ascend", config_json, s.log))) return;
  Log(INFINIRT_LOG_DEBUG, "opened " + s.library.path());
  ReadRuntimeVersion();
  // Once per process; a second aclInit answers ACL_ERROR_REPEAT_INITIALIZE, which CANN's
  // documentation says to ignore (someone else in the process initialised ACL).
  const AclError init = s.fn.aclInit(nullptr);
  if (init != acl::kSuccess && init != acl::kRepeatInitialize) {
    s.reason = "aclInit(NULL) returned " + ErrorText(init);
    return;
  }
  uint32_t count = 0;
  const AclError status = s.fn.aclrtGetDeviceCount(&count);
  if (TranslateStatus(status) == infinirtErrorNoDevice) {  // a working runtime, no device
    s.usable = true;
    s.reason =
        s.library.path() + " reports no devices (aclrtGetDeviceCount: " + ErrorText(status) + ")";
    return;
  }
  if (status != acl::kSuccess) {  // the runtime is there but failed to initialise
    s.reason = "aclrtGetDeviceCount returned " + ErrorText(status);
    return;
  }
  s.usable = true;
  s.device_count = static_cast<int>(count);
  for (uint32_t i = 0; i < count; ++i) s.devices.push_back(std::make_unique<DeviceOrder>());
  if (count == 0) s.reason = s.library.path() + " reports no devices";
}

}  // namespace

// ---------------------------------------------------------------------------------------------
// Entries: lifecycle

infinirtError_t AscendPlugin::Initialize(const infinirtPluginHost* host) {
  auto state = std::make_unique<State>();
  state->log.Attach(host);
  state->binding.Invalidate();
  StartPerThreadStreams();
  g_state = state.release();
  LoadRuntime(host ? host->config_json : nullptr);
  return infinirtSuccess;
}

// ACL is not finalised (aclFinalize): the runtime stays loaded and initialised for the process,
// as a later Initialize may need it again and CANN does not promise aclInit after aclFinalize.
infinirtError_t AscendPlugin::Finalize() {
  RetirePerThreadStreams();
  if (g_state == nullptr) return infinirtSuccess;
  try {
    if (TheState().usable) ReleaseOrders();
  } catch (...) {
    // The state goes all the same: a Finalize must not stop half-way.
  }
  delete g_state;
  g_state = nullptr;
  return infinirtSuccess;
}

State& TheState() { return *g_state; }
bool HasState() { return g_state != nullptr; }
void Log(infinirtLogLevel_t level, const std::string& message) { TheState().log(level, message); }

}  // namespace infinirt::ascend
