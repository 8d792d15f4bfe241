#include "loader.h"

#include <dirent.h>
#include <dlfcn.h>
#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <chrono>
#include <cstring>
#include <iterator>
#include <map>
#include <memory>
#include <set>

#include "elf_check.h"
#include "env.h"
#include "loader_search.h"
#include "log.h"
#include "plugin_table.h"
#include "plugin_trust.h"

namespace infinirt::core {

namespace {

// What the discovery log says of a plugin that loaded, by its status in the listing.
const char* LoadedVerdict(infinirtBackendStatus_t status) {
  switch (status) {
    case infinirtBackendLoaded:
      return "loaded";
    case infinirtBackendRuntimeMissing:
      return "loaded; its vendor runtime is missing";
    case infinirtBackendInitFailed:
      return "loaded; its vendor runtime failed to initialise";
    default:
      return "loaded";
  }
}

constexpr char kPluginPrefix[] = "libinfinirt_";
constexpr char kPluginSuffix[] = ".so";
constexpr char kAllowInsecure[] = "INFINIRT_ALLOW_INSECURE_PLUGINS";
constexpr char kLoadAnyway[] = "; INFINIRT_ALLOW_INSECURE_PLUGINS=1 loads it anyway";

// A file descriptor, closed at the end of the scope.
class UniqueFd {
 public:
  explicit UniqueFd(int fd) : fd_(fd) {}
  ~UniqueFd() {
    if (fd_ >= 0) close(fd_);
  }
  UniqueFd(const UniqueFd&) = delete;
  UniqueFd& operator=(const UniqueFd&) = delete;
  int get() const { return fd_; }
  explicit operator bool() const { return fd_ >= 0; }

 private:
  int fd_;
};

template <size_t N>
void CopyString(char (&destination)[N], const std::string& source) {
  std::snprintf(destination, N, "%s", source.c_str());
}

bool IsValidBackendName(const std::string& name) {
  if (name.empty() || name.size() >= sizeof(infinirtBackendProp{}.name)) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
}

// "libinfinirt_<name>.so" -> "<name>"; "" when the file name does not have that form.
std::string BackendNameOfFile(const std::string& path) {
  const std::string file = path.substr(path.find_last_of('/') + 1);
  const size_t prefix = sizeof(kPluginPrefix) - 1, suffix = sizeof(kPluginSuffix) - 1;
  if (file.size() <= prefix + suffix || file.compare(0, prefix, kPluginPrefix) != 0 ||
      file.compare(file.size() - suffix, suffix, kPluginSuffix) != 0) {
    return "";
  }
  std::string name = file.substr(prefix, file.size() - prefix - suffix);
  return IsValidBackendName(name) ? name : "";
}

std::string RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  if (realpath(path.c_str(), buffer) == nullptr) return path;
  return buffer;
}

// A plugin file the search found.
struct Candidate {
  std::string path;               // as found: in a searched directory, or named in the search
  std::string directory_problem;  // why its searched directory is skipped, or ""
  std::string real_path;          // what files are de-duplicated and opened by
};

// The plugin files of a directory, by name. The real path of a regular file is the directory's
// real path and its name, so only links (and entries of unknown type) need realpath(), which
// costs a readlink per path component: six per plugin in a build tree.
std::vector<Candidate> PluginFilesIn(const std::string& directory) {
  std::vector<Candidate> files;
  DIR* dir = opendir(directory.c_str());
  if (dir == nullptr) return files;
  const std::string real_directory = RealPath(directory);
  while (dirent* entry = readdir(dir)) {
    const std::string path = directory + "/" + entry->d_name;
    if (BackendNameOfFile(path).empty()) continue;
    files.push_back(
        {path, "",
         entry->d_type == DT_REG ? real_directory + "/" + entry->d_name : RealPath(path)});
  }
  closedir(dir);
  std::sort(files.begin(), files.end(),
            [](const Candidate& a, const Candidate& b) { return a.path < b.path; });
  return files;
}

std::string ErrnoText() { return std::strerror(errno); }

// Only "1" opts in; read with secure_getenv, so a setuid/setgid process cannot opt in. Another
// value ("true", "yes") is named in a warning rather than taken as a yes: this one is kept strict.
bool InsecurePluginsAllowed() {
  const auto value = GetEnv(EnvVar::INFINIRT_ALLOW_INSECURE_PLUGINS);
  if (!value) return false;
  if (*value == "1") return true;
  if (!value->empty() && *value != "0") {
    Log().warn("{}='{}' is not 1: plugins that another user could change stay refused",
               kAllowInsecure, *value);
  }
  return false;
}

// Appends "<subject><problem>" to a "; "-separated list, when there is a problem.
void AddProblem(std::string* problems, const std::string& subject, const std::string& problem) {
  if (problem.empty()) return;
  if (!problems->empty()) *problems += "; ";
  *problems += subject + problem;
}

// Why another user could change a searched directory (WritableByOthers' phrase), or "". Opened
// O_PATH (no read permission needed) and examined with fstat: the directory itself, after
// symlinks.
std::string SearchedDirectoryProblem(const std::string& directory) {
  UniqueFd fd(open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  struct stat info {};
  if (!fd || fstat(fd.get(), &info) != 0) return "";  // then no plugin is found in it either
  return WritableByOthers(info, geteuid());
}

// What the checks made before dlopen found about one plugin file.
struct FileVerdict {
  std::string untrusted;   // who else could change the file or its directory, or ""
  std::string unloadable;  // why it cannot be a plugin of this process, or ""
};

// The directories of the plugin files checked during one load, each opened and examined once
// (the files of one directory are opened relative to the same descriptor), and the effective
// user the modes are judged for.
class CheckedDirectories {
 public:
  struct Directory {
    explicit Directory(int descriptor) : fd(descriptor) {}
    UniqueFd fd;
    struct stat info {};
    std::string problem;  // why it cannot be opened or examined, or ""
  };

  uid_t user() const { return user_; }

  const Directory& Open(const std::string& path) {
    std::unique_ptr<Directory>& slot = directories_[path];
    if (slot) return *slot;
    slot = std::make_unique<Directory>(open(path.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
    if (!slot->fd) {
      slot->problem = "cannot open its directory " + path + ": " + ErrnoText();
    } else if (fstat(slot->fd.get(), &slot->info) != 0) {
      slot->problem = "cannot examine its directory " + path + ": " + ErrnoText();
    }
    return *slot;
  }

 private:
  const uid_t user_ = geteuid();
  std::map<std::string, std::unique_ptr<Directory>> directories_;
};

// Checks the plugin file at real_path (no symlinks left) and the directory holding it. The checks
// read descriptors (fstat, and the ELF header with pread), so the mode, owner and header examined
// belong to one file, not to whatever the path names a moment later.
FileVerdict CheckPluginFile(const std::string& real_path, CheckedDirectories* directories) {
  FileVerdict verdict;
  const size_t slash = real_path.find_last_of('/');
  const std::string directory_path = slash == 0 ? "/" : real_path.substr(0, slash);
  const CheckedDirectories::Directory& directory = directories->Open(directory_path);
  if (!directory.problem.empty()) {
    verdict.unloadable = directory.problem;
    return verdict;
  }
  // O_NOFOLLOW: the real path has no symlink left, unless one was put there since. O_NONBLOCK:
  // opening a FIFO named like a plugin must not wait for a writer.
  UniqueFd file_fd(openat(directory.fd.get(), real_path.c_str() + slash + 1,
                          O_RDONLY | O_CLOEXEC | O_NOFOLLOW | O_NONBLOCK));
  struct stat file_info {};
  if (!file_fd || fstat(file_fd.get(), &file_info) != 0) {
    verdict.unloadable = "cannot open the file: " + ErrnoText();
    return verdict;
  }
  const uid_t user = directories->user();
  AddProblem(&verdict.untrusted, "the plugin file is ", WritableByOthers(file_info, user));
  AddProblem(&verdict.untrusted, "its directory " + directory_path + " is ",
             WritableByOthers(directory.info, user));
  if (!S_ISREG(file_info.st_mode)) {
    verdict.unloadable = "not a regular file";
  } else {
    verdict.unloadable = ElfProblem(file_fd.get(), file_info.st_size);
  }
  return verdict;
}

infinirtBackendProp NewListing(const std::string& name, const std::string& path) {
  infinirtBackendProp prop{};
  CopyString(prop.name, name);
  CopyString(prop.path, path);
  prop.deviceType = INFINI_DEVICE_TYPE_COUNT;
  prop.abiMajor = prop.abiMinor = -1;
  prop.runtimeVersion = -1;
  return prop;
}

struct SearchPlan {
  std::vector<std::string> entries;  // absolute directories or files
  bool from_environment = false;
};

// The plugins of a libinfinirt.so are the ones beside it: the directory it was configured to be
// installed in (INFINIRT_INSTALL_PLUGIN_DIR) is searched only when the library cannot tell where
// it is. Searching it as well would make a relocated install (a copied prefix, a build tree, a
// package unpacked elsewhere) load another installation's plugins, of another version, beside
// or instead of its own. Where the library does sit in its install directory, the directory
// beside it is that one.
void LogInstallDirectoryNotSearched(const std::string& library_dir) {
  // The two realpath() calls cost more than the rest of the search plan: only for the log.
  if (!Log().should_log(spdlog::level::debug)) return;
  const std::string beside = library_dir + "/infinirt";
  if (RealPath(beside) == RealPath(INFINIRT_INSTALL_PLUGIN_DIR)) return;
  Log().debug(
      "loader: not searching {}, the plugin directory this InfiniRT was configured to install to: "
      "libinfinirt.so is in {}, so its plugins are in {} (another installation's plugins could "
      "be of another version)",
      INFINIRT_INSTALL_PLUGIN_DIR, library_dir, beside);
}

SearchPlan PlanSearch(const Config& config, const std::string& library_dir) {
  SearchPlan plan;
  std::vector<std::string> raw;
  if (auto env = GetEnv(EnvVar::INFINIRT_PLUGIN_PATH); env && !env->empty()) {
    plan.from_environment = true;
    raw = SplitList(*env, ':');
    Log().debug("loader: INFINIRT_PLUGIN_PATH={} replaces the default search", *env);
  } else {
    if (library_dir.empty()) {
      raw.push_back(INFINIRT_INSTALL_PLUGIN_DIR);
    } else {
      raw.push_back(library_dir + "/infinirt");
      LogInstallDirectoryNotSearched(library_dir);
    }
    raw.insert(raw.end(), config.plugin_search_paths.begin(), config.plugin_search_paths.end());
  }
  for (const std::string& entry : raw) {
    if (entry.empty() || entry[0] != '/') {
      Log().warn("loader: ignoring '{}': plugin search entries must be absolute paths", entry);
      continue;
    }
    if (std::find(plan.entries.begin(), plan.entries.end(), entry) == plan.entries.end()) {
      plan.entries.push_back(entry);
    }
  }
  return plan;
}

// The backends to load: INFINIRT_BACKENDS (comma-separated) when set, else the config file's
// "backends"; no name means every backend. Names are compared in lower case, as backend names are.
struct BackendFilter {
  std::vector<std::string> names;
  std::string origin;  // what set the names, for messages: "INFINIRT_BACKENDS=cuda"

  bool Passes(const std::string& name) const {
    return names.empty() || std::find(names.begin(), names.end(), name) != names.end();
  }
  std::string FilteredOutReason() const { return "not named in " + origin; }
};

BackendFilter MakeBackendFilter(const Config& config) {
  BackendFilter filter;
  if (auto env = GetEnv(EnvVar::INFINIRT_BACKENDS)) {
    filter.names = SplitList(*env, ',');
    filter.origin = "INFINIRT_BACKENDS=" + *env;
  } else {
    filter.names = config.backends;
    filter.origin =
        "the \"backends\" of " + (config.source.empty() ? "the configuration" : config.source);
  }
  for (std::string& name : filter.names) name = ToLower(name);
  return filter;
}

std::string Join(const std::vector<std::string>& items) {
  std::string joined;
  for (const std::string& item : items) joined += (joined.empty() ? "" : ", ") + item;
  return joined;
}

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

// The plugin files that the search plan finds, in order. Every entry goes to result->searched;
// a missing file named in INFINIRT_PLUGIN_PATH is listed as not found.
std::vector<Candidate> FindCandidates(const SearchPlan& plan, bool allow_insecure,
                                      LoadResult* result) {
  std::vector<Candidate> candidates;
  for (const std::string& entry : plan.entries) {
    struct stat info {};
    result->searched.push_back(entry);
    if (stat(entry.c_str(), &info) != 0) {
      Log().debug("loader: {} does not exist", entry);
      if (plan.from_environment && !BackendNameOfFile(entry).empty()) {
        infinirtBackendProp listing = NewListing(BackendNameOfFile(entry), entry);
        listing.status = infinirtBackendNotFound;
        CopyString(listing.reason, "no such file (named in INFINIRT_PLUGIN_PATH)");
        result->listing.push_back(listing);
      }
      continue;
    }
    if (!S_ISDIR(info.st_mode)) {
      Log().debug("loader: plugin file named directly: {}", entry);
      candidates.push_back({entry, "", RealPath(entry)});
      continue;
    }
    std::vector<Candidate> files = PluginFilesIn(entry);
    Log().debug("loader: searching directory {}: {} plugin file(s)", entry, files.size());
    std::string problem = SearchedDirectoryProblem(entry);
    if (!problem.empty() && allow_insecure) {
      Log().info("loader: searching {} although it is {} ({}=1)", entry, problem, kAllowInsecure);
      problem.clear();
    } else if (!problem.empty()) {
      problem = "the searched directory " + entry + " is " + problem +
                ": another user could add or replace plugins in it, so it is skipped as a whole";
      Log().warn("loader: {}{}", problem, kLoadAnyway);
      result->searched.back() += " (skipped: insecure)";
    }
    for (Candidate& file : files) {
      file.directory_problem = problem;
      candidates.push_back(std::move(file));
    }
  }
  return candidates;
}

// The checks made before dlopen. False when the file must not be opened; the listing then holds
// the status and the reason. A problem that INFINIRT_ALLOW_INSECURE_PLUGINS=1 lets through is
// returned in *allowed_problem.
bool PassesFileChecks(const Candidate& candidate, const std::string& real_path, bool allow_insecure,
                      CheckedDirectories* directories, infinirtBackendProp* listing,
                      std::string* allowed_problem) {
  const FileVerdict verdict = candidate.directory_problem.empty()
                                  ? CheckPluginFile(real_path, directories)
                                  : FileVerdict{candidate.directory_problem, ""};
  if (!verdict.untrusted.empty() && !allow_insecure) {
    listing->status = infinirtBackendInsecure;
    CopyString(listing->reason, verdict.untrusted + kLoadAnyway);
    // A skipped directory was logged once, as a whole.
    if (candidate.directory_problem.empty()) {
      Log().warn("loader: refusing {}: {}{}", real_path, verdict.untrusted, kLoadAnyway);
    }
    return false;
  }
  if (!verdict.untrusted.empty()) {
    Log().info("loader: loading {} although {} ({}=1)", real_path, verdict.untrusted,
               kAllowInsecure);
    *allowed_problem = verdict.untrusted;
  }
  if (!verdict.unloadable.empty()) {
    listing->status = infinirtBackendDlopenFailed;
    CopyString(listing->reason, verdict.unloadable);
    return false;
  }
  return true;
}

// A listing entry for every device type whose plugin no file was found for: not found, not
// built, or filtered out.
void ListUnconsideredDeviceTypes(const BackendFilter& filter, const std::string& searched,
                                 LoadResult* result) {
  for (const std::string& name : KnownBackendNames()) {
    const bool considered = std::any_of(result->listing.begin(), result->listing.end(),
                                        [&](const auto& l) { return name == l.name; });
    if (considered) continue;
    infinirtBackendProp listing = NewListing(name, "");
    const std::string file = std::string(kPluginPrefix) + name + kPluginSuffix;
    if (!PluginIsBuilt(name)) {
      // Nothing was expected: not "not found", which would send the user looking for a file.
      listing.status = infinirtBackendNotBuilt;
      CopyString(listing.reason, "this build of InfiniRT has no " + name + " plugin (and no " +
                                     file + " was found in: " + searched + ")");
    } else if (!filter.Passes(name)) {
      listing.status = infinirtBackendFilteredOut;
      CopyString(listing.reason, filter.FilteredOutReason());
    } else {
      listing.status = infinirtBackendNotFound;
      CopyString(listing.reason, file + " not found in: " + searched);
    }
    result->listing.push_back(listing);
  }
}

// A filter name that is neither a device type's plugin nor the name of a plugin found is most
// likely a typo or a vendor's product name (INFINIRT_BACKENDS=cuda): it silently matches nothing,
// so it is named in a warning with the names that would match.
void WarnAboutUnknownNames(const BackendFilter& filter,
                           const std::vector<infinirtBackendProp>& listing) {
  std::vector<std::string> known = KnownBackendNames();
  for (const infinirtBackendProp& entry : listing) {
    if (entry.name[0] && std::find(known.begin(), known.end(), entry.name) == known.end()) {
      known.push_back(entry.name);
    }
  }
  std::vector<std::string> unknown;
  for (const std::string& name : filter.names) {
    if (std::find(known.begin(), known.end(), name) == known.end()) {
      unknown.push_back("'" + name + "'");
    }
  }
  if (unknown.empty()) return;
  Log().warn("{}: no backend is named {}; the backend names are: {}", filter.origin, Join(unknown),
             Join(known));
}

// The error when no plugin loaded, naming the filter when it removed every plugin found.
std::string NothingLoadedMessage(const BackendFilter& filter, const LoadResult& result,
                                 const std::string& searched) {
  std::vector<std::string> found, filtered;
  for (const infinirtBackendProp& entry : result.listing) {
    if (entry.path[0] == '\0') continue;  // a device type without a file
    found.push_back(entry.name);
    if (entry.status == infinirtBackendFilteredOut) filtered.push_back(entry.name);
  }
  if (!found.empty() && filtered.size() == found.size()) {
    return "no InfiniRT plugin loaded: " + filter.origin + " filtered out every plugin found (" +
           Join(filtered) + "); searched: " + searched;
  }
  std::string message = "no InfiniRT plugin could be loaded; searched: " + searched;
  if (!filtered.empty()) message += "; " + filter.origin + " filtered out " + Join(filtered);
  return message;
}

}  // namespace

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

std::string LibraryDirectory() {
  Dl_info info{};
  if (dladdr(reinterpret_cast<void*>(&LibraryDirectory), &info) == 0 || !info.dli_fname) {
    return "";
  }
  const std::string path = RealPath(info.dli_fname);
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? "" : path.substr(0, slash);
}

// The device type list's values are consecutive from 0: INFINI_DEVICE_TYPE_COUNT then counts the
// types, a type indexes arrays of that many entries (infinirtGetAllDeviceCount), and
// KnownBackendNames()[type] is the plugin name of a type.
#define INFINIRT_DEVICE_VALUE_(name, value, display, plugin) value,
constexpr int kDeviceTypeValues[] = {INFINIRT_DEVICE_TYPES(INFINIRT_DEVICE_VALUE_)};
#undef INFINIRT_DEVICE_VALUE_
constexpr bool DeviceTypeValuesAreConsecutiveFromZero() {
  for (size_t i = 0; i < std::size(kDeviceTypeValues); ++i) {
    if (kDeviceTypeValues[i] != static_cast<int>(i)) return false;
  }
  return std::size(kDeviceTypeValues) == INFINI_DEVICE_TYPE_COUNT;
}
static_assert(DeviceTypeValuesAreConsecutiveFromZero(),
              "INFINIRT_DEVICE_TYPES must list the values 0, 1, 2, ... in order");

namespace {

// Whether this build makes the plugin of each device type, by type. core/CMakeLists.txt defines
// INFINIRT_PLUGIN_BUILT_<plugin name> as 1 or 0 for every entry of INFINIRT_DEVICE_TYPES.
#define INFINIRT_PLUGIN_BUILT_(name, value, display, plugin) INFINIRT_PLUGIN_BUILT_##plugin != 0,
constexpr bool kPluginBuilt[] = {INFINIRT_DEVICE_TYPES(INFINIRT_PLUGIN_BUILT_)};
#undef INFINIRT_PLUGIN_BUILT_

}  // namespace

bool PluginIsBuilt(const std::string& name) {
  const auto& names = KnownBackendNames();
  const auto found = std::find(names.begin(), names.end(), name);
  return found != names.end() && kPluginBuilt[found - names.begin()];
}

const std::vector<std::string>& KnownBackendNames() {
#define INFINIRT_PLUGIN_NAME_(name, value, display, plugin) #plugin,
  // Never destroyed: a thread may still load the runtime while the process exits (and is then
  // refused, but after reading these).
  static const std::vector<std::string>& names =
      *new std::vector<std::string>{INFINIRT_DEVICE_TYPES(INFINIRT_PLUGIN_NAME_)};
#undef INFINIRT_PLUGIN_NAME_
  return names;
}

LoadResult LoadPlugins(const Config& config, const std::string& library_dir) {
  LoadResult result;
  const SearchPlan plan = PlanSearch(config, library_dir);
  const BackendFilter filter = MakeBackendFilter(config);
  const bool allow_insecure = InsecurePluginsAllowed();
  const std::vector<Candidate> candidates = FindCandidates(plan, allow_insecure, &result);
  // A listing entry is about 7 KiB: grow the vector once, not entry by entry.
  result.listing.reserve(result.listing.size() + candidates.size() + KnownBackendNames().size());

  std::set<std::string> seen_paths;
  CheckedDirectories checked_directories;
  LoaderSearch loader_search;  // what the plugins' vendor runtime names can be found as
  for (const Candidate& found : candidates) {
    const std::string& candidate = found.path;
    const std::string& real = found.real_path;
    std::string name = BackendNameOfFile(candidate);
    infinirtBackendProp listing = NewListing(name, real);
    const auto started = std::chrono::steady_clock::now();
    auto finish = [&](const char* verdict) {
      listing.loadTimeMs =
          std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - started)
              .count();
      Log().debug("loader: {} -> {}{}{}", candidate, verdict, listing.reason[0] ? ": " : "",
                  listing.reason);
      result.listing.push_back(listing);
    };
    if (!seen_paths.insert(real).second) {
      listing.status = infinirtBackendDuplicate;
      CopyString(listing.reason, "the same file was already considered as " + real);
      finish("skipped (duplicate file)");
      continue;
    }
    if (!name.empty() && !filter.Passes(name)) {
      listing.status = infinirtBackendFilteredOut;
      CopyString(listing.reason, filter.FilteredOutReason());
      finish("skipped (filtered out)");
      continue;
    }
    std::string allowed_problem;
    if (!PassesFileChecks(found, real, allow_insecure, &checked_directories, &listing,
                          &allowed_problem)) {
      finish(listing.status == infinirtBackendInsecure ? "refused (insecure)" : "rejected");
      continue;
    }
    std::unique_ptr<Backend> backend = OpenPlugin(real, &listing);
    if (!backend) {
      finish("rejected");
      continue;
    }
    name = backend->name;
    if (!filter.Passes(name)) {
      listing.status = infinirtBackendFilteredOut;
      CopyString(listing.reason, filter.FilteredOutReason());
      finish("skipped (filtered out)");
      continue;
    }
    auto same_name = std::find_if(result.backends.begin(), result.backends.end(),
                                  [&](const auto& loaded) { return loaded->name == name; });
    if (same_name != result.backends.end()) {
      listing.status = infinirtBackendDuplicate;
      CopyString(listing.reason,
                 "backend '" + name + "' is already loaded from " + (*same_name)->path);
      finish("skipped (duplicate backend)");
      continue;
    }
    if (!backend->missing_entries.empty()) {
      std::string missing;
      for (const auto& entry : backend->missing_entries) missing += " " + entry;
      Log().debug("loader: {} lacks entries (they answer NotSupported):{}", name, missing);
    }
    if (!InitializePlugin(backend.get(), config, &loader_search, &listing)) {
      finish("rejected");
      continue;
    }
    if (!allowed_problem.empty() && listing.reason[0] == '\0') {
      CopyString(listing.reason,
                 "loaded although " + allowed_problem + " (" + kAllowInsecure + "=1)");
    }
    listing.deviceCount = backend->device_count;
    finish(LoadedVerdict(listing.status));
    result.listing_of_backend.push_back(static_cast<int>(result.listing.size()) - 1);
    result.backends.push_back(std::move(backend));
  }

  const std::string searched = result.searched.empty() ? "(nothing)" : Join(result.searched);
  ListUnconsideredDeviceTypes(filter, searched, &result);
  WarnAboutUnknownNames(filter, result.listing);
  if (result.backends.empty()) Log().error("{}", NothingLoadedMessage(filter, result, searched));
  return result;
}

}  // namespace infinirt::core
