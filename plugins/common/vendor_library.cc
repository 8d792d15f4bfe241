#include "vendor_library.h"

#include <dlfcn.h>
#include <glob.h>
#include <link.h>
#include <stdlib.h>

#include <cstddef>
#include <nlohmann/json.hpp>

#include "plugin_support.h"
#include "vendor_runtimes_data.h"  // generated from config/vendors.json

namespace infinirt::plugin {
namespace {

// secure_getenv, logging a variable that is set but hidden by it: the process runs with
// AT_SECURE (setuid/setgid), where nothing in the environment may choose the library to load.
const char* SecureEnv(const char* name, const PluginLog& log, infinirtLogLevel_t level_if_ignored) {
  const char* value = secure_getenv(name);
  if (value == nullptr && getenv(name) != nullptr) {
    log(level_if_ignored, std::string(name) +
                              " is set but ignored: the process runs setuid/setgid or with raised "
                              "capabilities (AT_SECURE), where the vendor runtime is not chosen "
                              "from the environment");
  }
  return value;
}

std::vector<std::string> SplitColons(const std::string& text) {
  std::vector<std::string> parts;
  size_t start = 0;
  while (start <= text.size()) {
    const size_t end = text.find(':', start);
    const std::string part = text.substr(start, end == std::string::npos ? end : end - start);
    if (!part.empty()) parts.push_back(part);
    if (end == std::string::npos) break;
    start = end + 1;
  }
  return parts;
}

// Replaces ${VAR} with the variable's value; false when a variable is unset or empty. Variables
// like HOME are set in every process, so one ignored under AT_SECURE is logged at debug only.
bool SubstituteVariables(const std::string& pattern, const PluginLog& log, std::string* out) {
  out->clear();
  size_t at = 0;
  while (at < pattern.size()) {
    const size_t open = pattern.find("${", at);
    if (open == std::string::npos) {
      out->append(pattern, at, std::string::npos);
      break;
    }
    const size_t close = pattern.find('}', open);
    if (close == std::string::npos) return false;
    out->append(pattern, at, open - at);
    const std::string name = pattern.substr(open + 2, close - open - 2);
    const char* value = SecureEnv(name.c_str(), log, INFINIRT_LOG_DEBUG);
    if (value == nullptr || *value == '\0') return false;
    out->append(value);
    at = close + 1;
  }
  return true;
}

const VendorRuntimeData* FindVendorRuntimeData(const std::string& vendor) {
  for (const VendorRuntimeData& entry : kVendorRuntimes) {
    if (vendor == entry.vendor) return &entry;
  }
  return nullptr;
}

// The "runtime_library" override of the plugin's config section: a string or a list of them.
bool ConfigOverride(const char* config_json, std::vector<std::string>* patterns,
                    std::string* problem) {
  if (config_json == nullptr) return false;
  const nlohmann::json section = nlohmann::json::parse(config_json, nullptr, false);
  if (section.is_discarded() || !section.is_object() || !section.contains("runtime_library")) {
    return false;
  }
  const nlohmann::json& value = section["runtime_library"];
  if (value.is_string()) {
    patterns->push_back(value.get<std::string>());
    return true;
  }
  if (value.is_array()) {
    for (const nlohmann::json& item : value) {
      if (!item.is_string()) {
        *problem = "infinirt.json: runtime_library must hold strings only";
        return true;
      }
      patterns->push_back(item.get<std::string>());
    }
    return true;
  }
  *problem = "infinirt.json: runtime_library must be a string or a list of strings";
  return true;
}

std::string LoadedPath(void* handle, const std::string& fallback) {
  struct link_map* map = nullptr;
  if (dlinfo(handle, RTLD_DI_LINKMAP, &map) == 0 && map != nullptr && map->l_name != nullptr &&
      map->l_name[0] != '\0') {
    return map->l_name;
  }
  return fallback;
}

// The host's library_certainly_absent, where the host table has it (ABI 1.1).
bool HostSaysAbsent(const PluginLog& log, const std::string& name) {
  const infinirtPluginHost* host = log.host();
  constexpr size_t needed = offsetof(infinirtPluginHost, library_certainly_absent) +
                            sizeof(host->library_certainly_absent);
  return host != nullptr && host->struct_size >= needed &&
         host->library_certainly_absent != nullptr && name.find('/') == std::string::npos &&
         host->library_certainly_absent(name.c_str()) != 0;
}

}  // namespace

void* OpenLibrary(const std::string& name, int flags, const PluginLog& log, std::string* error) {
  if (HostSaysAbsent(log, name)) {
    *error = name + ": cannot open shared object file: No such file or directory";
    return nullptr;
  }
  dlerror();
  void* handle = dlopen(name.c_str(), flags);
  if (handle == nullptr) {
    const char* message = dlerror();  // names the file itself
    *error = message != nullptr ? message : name + ": dlopen failed";
  }
  return handle;
}

std::vector<std::string> ExpandCandidate(const std::string& pattern, const PluginLog& log) {
  std::string substituted;
  if (!SubstituteVariables(pattern, log, &substituted) || substituted.empty()) return {};
  if (substituted.find_first_of("*?[") == std::string::npos) return {substituted};
  glob_t matches{};
  std::vector<std::string> paths;
  if (glob(substituted.c_str(), 0, nullptr, &matches) == 0) {
    for (size_t i = 0; i < matches.gl_pathc; ++i) paths.emplace_back(matches.gl_pathv[i]);
  }
  globfree(&matches);
  return paths;  // glob sorts its matches
}

namespace {

// The variable's list, when it is set (and may be read: not under AT_SECURE).
bool VariableOverride(const char* variable, const PluginLog& log, CandidateList* list) {
  const char* value = SecureEnv(variable, log, INFINIRT_LOG_WARN);
  if (value == nullptr || *value == '\0') return false;
  list->patterns = SplitColons(value);
  list->source = variable;
  return true;
}

void AppendBuiltin(const char* const* builtin, CandidateList* list) {
  for (const char* const* candidate = builtin; *candidate != nullptr; ++candidate) {
    list->patterns.emplace_back(*candidate);
  }
}

}  // namespace

CandidateList VendorCandidates(const std::string& vendor, const char* config_json,
                               const PluginLog& log) {
  CandidateList list;
  const VendorRuntimeData* entry = FindVendorRuntimeData(vendor);
  if (entry == nullptr) {
    list.source = "no runtime for '" + vendor + "' in config/vendors.json";
    return list;
  }
  if (VariableOverride(entry->env, log, &list)) return list;
  std::vector<std::string> patterns;
  std::string problem;
  if (ConfigOverride(config_json, &patterns, &problem)) {
    list.source =
        problem.empty() ? "infinirt.json plugins." + vendor + ".runtime_library" : problem;
    if (problem.empty()) list.patterns = std::move(patterns);
    return list;
  }
  AppendBuiltin(entry->candidates, &list);
  list.source = "the built-in list (config/vendors.json)";
  return list;
}

CandidateList ListedCandidates(const char* variable, const char* const* builtin,
                               const std::string& builtin_source, const PluginLog& log) {
  CandidateList list;
  if (VariableOverride(variable, log, &list)) return list;
  AppendBuiltin(builtin, &list);
  list.source = builtin_source;
  return list;
}

bool VendorLibrary::Open(const CandidateList& candidates, const PluginLog& log) {
  Close();
  attempts_.clear();
  tried_.clear();
  for (const std::string& pattern : candidates.patterns) {
    for (const std::string& candidate : ExpandCandidate(pattern, log)) {
      if (!tried_.empty()) tried_ += ", ";
      tried_ += candidate;
      // A copy the process already has is reused by dlopen itself (it matches loaded names and
      // files). No RTLD_NOLOAD attempt first: for a name the loader cannot find it costs the
      // whole search a second time.
      std::string error;
      void* handle = OpenLibrary(candidate, RTLD_NOW | RTLD_LOCAL, log, &error);
      if (handle != nullptr) {
        handle_ = handle;
        path_ = LoadedPath(handle, candidate);
        return true;
      }
      if (!attempts_.empty()) attempts_ += "; ";
      attempts_ += error;
    }
  }
  tried_ +=
      (tried_.empty() ? "no candidates" : "") + std::string(" (from ") + candidates.source + ")";
  return false;
}

void VendorLibrary::Close() {
  handle_ = nullptr;
  path_.clear();
}

void* VendorLibrary::Symbol(const char* name) const {
  return handle_ == nullptr ? nullptr : dlsym(handle_, name);
}

void FillPluginInfo(const VendorLibrary& library, bool usable, int runtime_version,
                    const std::string& reason, infinirtPluginInfo* info) {
  info->runtime_version = runtime_version;
  CopyText(info->runtime_library, sizeof(info->runtime_library),
           library.is_open() ? library.path() : library.tried());
  info->runtime_missing = library.is_open() ? 0 : 1;
  info->runtime_failed = library.is_open() && !usable ? 1 : 0;
  CopyText(info->reason, sizeof(info->reason), reason);
}

}  // namespace infinirt::plugin
