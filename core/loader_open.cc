// Opening a plugin: dlopen, its table read and checked (struct size, ABI version, name, device
// type), then Initialize with the host table; and infinirtOpenExtensionLibrary's libraries,
// found along the plugins' search plan and checked as plugins are.
#include <dlfcn.h>
#include <sys/stat.h>

#include <algorithm>
#include <memory>

#include "env.h"
#include "loader_internal.h"
#include "loader_search.h"
#include "log.h"
#include "plugin_table.h"

namespace infinirt::core {
namespace loader_internal {

namespace {

// Why a plugin that serves device type `type` cannot be used: the core does not know the type.
// A plugin built for a newer InfiniRT, which added device types, is the likely cause.
std::string UnknownDeviceTypeReason(int type) {
  std::string known;
  for (size_t value = 0; value < KnownBackendNames().size(); ++value) {
    known += (known.empty() ? "" : ", ") + std::to_string(value) + " " + KnownBackendNames()[value];
  }
  return "it serves device type " + std::to_string(type) +
         ", which this InfiniRT does not know (it knows " + known +
         "); a plugin made for a newer InfiniRT needs that InfiniRT";
}

}  // namespace

// Opens one plugin file and checks its table. On success returns the backend (not yet
// initialised); on failure fills the listing's status and reason and returns null.
std::unique_ptr<Backend> OpenPlugin(const std::string& path, infinirtBackendProp* listing) {
  dlerror();
  void* library = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    const char* message = dlerror();
    listing->status = infinirtBackendDlopenFailed;
    CopyString(listing->reason, message ? message : "dlopen failed");
    return nullptr;
  }
  auto get_table =
      reinterpret_cast<infinirtPluginGetTableFn>(dlsym(library, INFINIRT_PLUGIN_ENTRY_SYMBOL));
  if (get_table == nullptr) {
    listing->status = infinirtBackendNoEntryPoint;
    CopyString(listing->reason,
               std::string("the library does not export ") + INFINIRT_PLUGIN_ENTRY_SYMBOL);
    dlclose(library);
    return nullptr;
  }
  const infinirtPluginTable* table = get_table();
  auto reject = [&](infinirtBackendStatus_t status, const std::string& reason) {
    listing->status = status;
    CopyString(listing->reason, reason);
    dlclose(library);
    return nullptr;
  };
  if (table == nullptr) return reject(infinirtBackendBadTable, "the entry point returned NULL");
  if (table->struct_size < INFINIRT_PLUGIN_TABLE_HEADER_SIZE) {
    return reject(infinirtBackendBadTable, "struct_size " + std::to_string(table->struct_size) +
                                               " is smaller than the table header");
  }
  listing->abiMajor = static_cast<int>(table->abi_major);
  listing->abiMinor = static_cast<int>(table->abi_minor);
  const std::string versions = "plugin ABI " + std::to_string(table->abi_major) + "." +
                               std::to_string(table->abi_minor) + ", core ABI " +
                               std::to_string(INFINIRT_PLUGIN_ABI_MAJOR) + "." +
                               std::to_string(INFINIRT_PLUGIN_ABI_MINOR);
  if (table->abi_major < INFINIRT_PLUGIN_ABI_MAJOR) {
    return reject(infinirtBackendAbiTooOld, versions + ": rebuild the plugin");
  }
  if (table->abi_major > INFINIRT_PLUGIN_ABI_MAJOR) {
    return reject(infinirtBackendAbiTooNew, versions + ": upgrade InfiniRT");
  }
  const std::string name = table->name ? table->name : "";
  if (!IsValidBackendName(name)) {
    return reject(infinirtBackendBadTable, "invalid backend name '" + name + "'");
  }
  CopyString(listing->name, name);
  if (static_cast<int>(table->device_type) < 0 || table->device_type >= INFINI_DEVICE_TYPE_COUNT) {
    return reject(infinirtBackendUnknownDeviceType,
                  UnknownDeviceTypeReason(static_cast<int>(table->device_type)));
  }
  auto backend = std::make_unique<Backend>();
  backend->name = name;
  backend->device_type = table->device_type;
  backend->path = path;
  backend->library = library;
  backend->table = CompleteTable(*table, &backend->missing_entries);
  listing->deviceType = table->device_type;
  return backend;
}

namespace {

// The plugin whose Initialize runs on this thread, for the host's library_certainly_absent.
struct PluginBeingInitialized {
  LoaderSearch* search;
  void* library;  // the plugin's dlopen handle: the caller of its dlopens
};
thread_local const PluginBeingInitialized* plugin_being_initialized = nullptr;

int LibraryCertainlyAbsent(const char* name) noexcept {
  const PluginBeingInitialized* plugin = plugin_being_initialized;
  if (plugin == nullptr || name == nullptr) return 0;
  try {
    const bool absent = plugin->search->CertainlyAbsent(plugin->library, name);
    if (absent) Log().debug("loader: {} is in no directory the dynamic loader searches", name);
    return absent ? 1 : 0;
  } catch (...) {  // nothing may cross the plugin ABI; not knowing is an honest answer
    return 0;
  }
}

// The plugin's Initialize, with library_certainly_absent answering for it meanwhile.
infinirtError_t CallInitialize(Backend* backend, LoaderSearch* search) {
  const PluginBeingInitialized plugin{search, backend->library};
  plugin_being_initialized = &plugin;
  const infinirtError_t result = backend->table.Initialize(&backend->host);
  plugin_being_initialized = nullptr;
  return result;
}

// The plugin's config section, with the variables that override one of its keys applied:
// INFINIRT_CPU_DEVICES sets the CPU backend's "devices" (a number goes in as a number; any other
// text as it is, for the plugin to refuse with its own message), INFINIRT_CPU_SHAREABLE_MEMORY
// its "shareable_memory" (0 and 1 as booleans, any other text as it is).
std::string PluginConfig(const std::string& name, const Config& config) {
  nlohmann::json section =
      config.plugins.contains(name) ? config.plugins[name] : nlohmann::json::object();
  if (name != "cpu") return section.dump();
  if (auto devices = GetEnv(EnvVar::INFINIRT_CPU_DEVICES)) {
    const bool number =
        !devices->empty() && devices->size() <= 9 &&
        std::all_of(devices->begin(), devices->end(), [](char c) { return c >= '0' && c <= '9'; });
    section["devices"] = number ? nlohmann::json(std::stoll(*devices)) : nlohmann::json(*devices);
  }
  if (auto shareable = GetEnv(EnvVar::INFINIRT_CPU_SHAREABLE_MEMORY)) {
    section["shareable_memory"] = *shareable == "1"   ? nlohmann::json(true)
                                  : *shareable == "0" ? nlohmann::json(false)
                                                      : nlohmann::json(*shareable);
  }
  return section.dump();
}

}  // namespace

// Calls the plugin's Initialize, GetInfo and GetDeviceCount. False when it cannot be used.
bool InitializePlugin(Backend* backend, const Config& config, LoaderSearch* search,
                      infinirtBackendProp* listing) {
  backend->config_json = PluginConfig(backend->name, config);
  backend->host.struct_size = sizeof(infinirtPluginHost);
  backend->host.abi_major = INFINIRT_PLUGIN_ABI_MAJOR;
  backend->host.abi_minor = INFINIRT_PLUGIN_ABI_MINOR;
  backend->host.log = &PluginLog;
  backend->host.config_json = backend->config_json.c_str();
  backend->host.library_certainly_absent = &LibraryCertainlyAbsent;
  const infinirtError_t init = CallInitialize(backend, search);
  if (init != infinirtSuccess) {
    listing->status = infinirtBackendInitFailed;
    CopyString(listing->reason, std::string("Initialize returned ") + infinirtGetErrorName(init));
    return false;
  }
  backend->initialized = true;
  backend->info.struct_size = sizeof(infinirtPluginInfo);
  backend->info.runtime_version = -1;
  if (backend->table.GetInfo(&backend->info) != infinirtSuccess) {
    backend->info.runtime_version = -1;
  }
  listing->runtimeVersion = backend->info.runtime_version;
  CopyString(listing->runtimeLibrary, backend->info.runtime_library);
  int count = 0;
  const infinirtError_t counted = backend->table.GetDeviceCount(&count);
  if (counted != infinirtSuccess && counted != infinirtErrorNoDevice) {
    listing->status = infinirtBackendInitFailed;
    CopyString(listing->reason,
               std::string("GetDeviceCount returned ") + infinirtGetErrorName(counted));
    return false;
  }
  backend->device_count = counted == infinirtSuccess && count > 0 ? count : 0;
  if (backend->info.runtime_missing) {
    listing->status = infinirtBackendRuntimeMissing;
    CopyString(listing->reason, backend->info.reason);
  } else if (backend->info.runtime_failed) {
    listing->status = infinirtBackendInitFailed;
    CopyString(listing->reason, backend->info.reason);
    backend->device_count = 0;
  } else {
    listing->status = infinirtBackendLoaded;
    // Without devices, why; with devices, a limitation the plugin reports (or nothing).
    CopyString(listing->reason, backend->info.reason);
  }
  return true;
}

}  // namespace loader_internal

using namespace loader_internal;  // NOLINT: the loader's own helpers

infinirtError_t OpenExtensionLibrary(const Config& config, const std::string& library_dir,
                                     const std::string& file_name, void** handle,
                                     infinirtBackendProp* prop) {
  *prop = NewListing(file_name, "");
  const SearchPlan plan = PlanSearch(config, library_dir);
  const bool allow_insecure = InsecurePluginsAllowed();
  CheckedDirectories directories;
  for (const std::string& entry : plan.entries) {
    struct stat info {};
    if (stat(entry.c_str(), &info) != 0) continue;
    Candidate candidate;
    if (S_ISDIR(info.st_mode)) {
      const std::string path = entry + "/" + file_name;
      struct stat file_info {};
      if (stat(path.c_str(), &file_info) != 0) continue;
      candidate = {path, "", RealPath(path)};
      const std::string problem = SearchedDirectoryProblem(entry);
      if (!problem.empty() && !allow_insecure) {
        candidate.directory_problem = "the searched directory " + entry + " is " + problem;
      }
    } else if (entry.size() > file_name.size() &&
               entry.compare(entry.size() - file_name.size() - 1, std::string::npos,
                             "/" + file_name) == 0) {
      candidate = {entry, "", RealPath(entry)};
    } else {
      continue;
    }
    CopyString(prop->path, candidate.real_path);
    std::string allowed_problem;
    if (!PassesFileChecks(candidate, candidate.real_path, allow_insecure, &directories, prop,
                          &allowed_problem)) {
      Log().debug("loader: {} refused: {}", candidate.real_path, prop->reason);
      return infinirtErrorSharedObjectInitFailed;
    }
    void* opened = dlopen(candidate.real_path.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (opened == nullptr) {
      const char* why = dlerror();
      prop->status = infinirtBackendDlopenFailed;
      CopyString(prop->reason, why != nullptr ? why : "dlopen failed");
      Log().debug("loader: {} failed: {}", candidate.real_path, prop->reason);
      return infinirtErrorSharedObjectInitFailed;
    }
    prop->status = infinirtBackendLoaded;
    CopyString(prop->reason, allowed_problem);
    *handle = opened;
    Log().debug("loader: extension library {} opened", candidate.real_path);
    return infinirtSuccess;
  }
  prop->status = infinirtBackendNotFound;
  CopyString(prop->reason, "no " + file_name + " in " + Join(plan.entries));
  return infinirtErrorFileNotFound;
}

}  // namespace infinirt::core
