// What the loader's files share: the plugin file names, the search plan, the backend filter, the
// checks made before dlopen, and the listing entries.
//
//   loader.cc            LoadPlugins: each plugin file found, through checks, dlopen and
//                        Initialize, into the listing and the backends
//   loader_discovery.cc  where plugins are searched for (the search plan, INFINIRT_BACKENDS) and
//                        the plugin files found there
//   loader_checks.cc     the checks made on a plugin file before dlopen (trust, ELF headers)
//   loader_open.cc       dlopen, the plugin table's checks, Initialize; extension libraries
//   loader_listing.cc    the backend listing (infinirtGetBackendProperties, infinirt-info): its
//                        entries, the device types without a plugin, the messages about them
//
// (loader_search.h is another search: the dynamic loader's, for the plugins' vendor runtimes.)
#ifndef INFINIRT_CORE_LOADER_INTERNAL_H_
#define INFINIRT_CORE_LOADER_INTERNAL_H_

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <map>
#include <memory>
#include <string>
#include <vector>

#include "loader.h"
#include "loader_search.h"

namespace infinirt::core::loader_internal {

inline constexpr char kPluginPrefix[] = "libinfinirt_";
inline constexpr char kPluginSuffix[] = ".so";
inline constexpr char kAllowInsecure[] = "INFINIRT_ALLOW_INSECURE_PLUGINS";
inline constexpr char kLoadAnyway[] = "; INFINIRT_ALLOW_INSECURE_PLUGINS=1 loads it anyway";

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

// A plugin file the search found.
struct Candidate {
  std::string path;               // as found: in a searched directory, or named in the search
  std::string directory_problem;  // why its searched directory is skipped, or ""
  std::string real_path;          // what files are de-duplicated and opened by
};

// strerror(errno).
std::string ErrnoText();

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

struct SearchPlan {
  std::vector<std::string> entries;  // absolute directories or files
  bool from_environment = false;
};

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

// loader_discovery.cc

// The backend name a plugin file's name gives, or "".
std::string BackendNameOfFile(const std::string& path);
// realpath(), or the path as it is when it cannot be resolved.
std::string RealPath(const std::string& path);
SearchPlan PlanSearch(const Config& config, const std::string& library_dir);
BackendFilter MakeBackendFilter(const Config& config);
// The plugin files that the search plan finds, in order (result->searched: what was searched).
std::vector<Candidate> FindCandidates(const SearchPlan& plan, bool allow_insecure,
                                      LoadResult* result);

// loader_checks.cc

// A backend name: lower-case letters, digits and '_', shorter than infinirtBackendProp's name.
bool IsValidBackendName(const std::string& name);
// Whether INFINIRT_ALLOW_INSECURE_PLUGINS=1.
bool InsecurePluginsAllowed();
// Why another user could change a searched directory, or "".
std::string SearchedDirectoryProblem(const std::string& directory);
// The checks made before dlopen; false when the file must not be opened.
bool PassesFileChecks(const Candidate& candidate, const std::string& real_path, bool allow_insecure,
                      CheckedDirectories* directories, infinirtBackendProp* listing,
                      std::string* allowed_problem);

// loader_open.cc

// dlopen and the table's checks: the backend, not yet initialised, or null.
std::unique_ptr<Backend> OpenPlugin(const std::string& path, infinirtBackendProp* listing);
// Initialize, GetInfo and GetDeviceCount; false when the plugin cannot be used.
bool InitializePlugin(Backend* backend, const Config& config, LoaderSearch* search,
                      infinirtBackendProp* listing);

// loader_listing.cc

// A listing entry of a plugin not yet examined.
infinirtBackendProp NewListing(const std::string& name, const std::string& path);
// "a, b, c".
std::string Join(const std::vector<std::string>& items);
void ListUnconsideredDeviceTypes(const BackendFilter& filter, const std::string& searched,
                                 LoadResult* result);
void WarnAboutUnknownNames(const BackendFilter& filter,
                           const std::vector<infinirtBackendProp>& listing);
std::string NothingLoadedMessage(const BackendFilter& filter, const LoadResult& result,
                                 const std::string& searched);

}  // namespace infinirt::core::loader_internal

#endif  // INFINIRT_CORE_LOADER_INTERNAL_H_
