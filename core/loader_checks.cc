// The checks made on a plugin file before dlopen: who else could change it or its directory
// (plugin_trust.h; INFINIRT_ALLOW_INSECURE_PLUGINS=1 lets such a file through), and whether its
// ELF headers fit this process (elf_check.h). The plugin table's checks follow dlopen
// (loader_open.cc).
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

#include "elf_check.h"
#include "env.h"
#include "loader_internal.h"
#include "log.h"
#include "plugin_trust.h"

namespace infinirt::core::loader_internal {

namespace {

// Appends "<subject><problem>" to a "; "-separated list, when there is a problem.
void AddProblem(std::string* problems, const std::string& subject, const std::string& problem) {
  if (problem.empty()) return;
  if (!problems->empty()) *problems += "; ";
  *problems += subject + problem;
}

// What the checks made before dlopen found about one plugin file.
struct FileVerdict {
  std::string untrusted;   // who else could change the file or its directory, or ""
  std::string unloadable;  // why it cannot be a plugin of this process, or ""
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

}  // namespace

bool IsValidBackendName(const std::string& name) {
  if (name.empty() || name.size() >= sizeof(infinirtBackendProp{}.name)) return false;
  return std::all_of(name.begin(), name.end(), [](char c) {
    return (c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_';
  });
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

// Why another user could change a searched directory (WritableByOthers' phrase), or "". Opened
// O_PATH (no read permission needed) and examined with fstat: the directory itself, after
// symlinks.
std::string SearchedDirectoryProblem(const std::string& directory) {
  UniqueFd fd(open(directory.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC));
  struct stat info {};
  if (!fd || fstat(fd.get(), &info) != 0) return "";  // then no plugin is found in it either
  return WritableByOthers(info, geteuid());
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

}  // namespace infinirt::core::loader_internal
