// Files, accounts and processes for the loader scenarios that build plugin layouts at run time:
// temporary directories, copies with chosen modes, user and group ids, and a program run with
// a chosen environment and its output captured.
#ifndef INFINIRT_TESTS_LOADER_FILE_SUPPORT_H_
#define INFINIRT_TESTS_LOADER_FILE_SUPPORT_H_

#include <fcntl.h>
#include <ftw.h>
#include <grp.h>
#include <gtest/gtest.h>
#include <pwd.h>
#include <spawn.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>
#include <fstream>
#include <optional>
#include <sstream>
#include <string>
#include <vector>

namespace infinirt::loader_test {

inline std::string ErrnoText() { return std::strerror(errno); }

// A new directory <base>/<prefix>-XXXXXX (mode 0700), removed with its contents at the end of
// the scope. path() is "" when it could not be created (the test has failed then).
class TempDir {
 public:
  TempDir(const std::string& base, const std::string& prefix) {
    std::string pattern = base + "/" + prefix + "-XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) {
      path_ = pattern;
    } else {
      ADD_FAILURE() << "mkdtemp " << pattern << ": " << ErrnoText();
    }
  }
  ~TempDir() {
    if (path_.empty()) return;
    nftw(
        path_.c_str(),
        [](const char* path, const struct stat*, int, struct FTW*) { return remove(path); }, 16,
        FTW_DEPTH | FTW_PHYS);
  }
  TempDir(const TempDir&) = delete;
  TempDir& operator=(const TempDir&) = delete;

  const std::string& path() const { return path_; }
  std::string operator/(const std::string& name) const { return path_ + "/" + name; }

 private:
  std::string path_;
};

inline bool MakeDirectory(const std::string& path, mode_t mode) {
  if (mkdir(path.c_str(), mode) != 0 || chmod(path.c_str(), mode) != 0) {
    ADD_FAILURE() << "mkdir " << path << ": " << ErrnoText();
    return false;
  }
  return true;
}

// Copies a file; the copy gets exactly `mode` (whatever the umask).
inline bool CopyFile(const std::string& from, const std::string& to, mode_t mode) {
  std::ifstream in(from, std::ios::binary);
  std::ofstream out(to, std::ios::binary | std::ios::trunc);
  out << in.rdbuf();
  out.close();
  if (!in || !out || chmod(to.c_str(), mode) != 0) {
    ADD_FAILURE() << "copy " << from << " -> " << to << ": " << ErrnoText();
    return false;
  }
  return true;
}

inline std::string ReadFile(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

struct Account {
  uid_t uid;
  gid_t gid;  // the user's primary group
};

inline std::optional<Account> UserNamed(const std::string& name) {
  const passwd* entry = getpwnam(name.c_str());
  if (entry == nullptr) return std::nullopt;
  return Account{entry->pw_uid, entry->pw_gid};
}

inline std::optional<gid_t> GroupNamed(const std::string& name) {
  const group* entry = getgrnam(name.c_str());
  if (entry == nullptr) return std::nullopt;
  return entry->gr_gid;
}

struct ProgramRun {
  int exit_code = -1;  // -1 when it did not exit normally
  std::string out;
  std::string err;
};

// Runs program with exactly this environment ("NAME=value" strings), its standard output and
// error written to files in scratch_dir and returned.
inline ProgramRun RunProgram(const std::string& program,
                             const std::vector<std::string>& environment,
                             const std::string& scratch_dir) {
  ProgramRun run;
  const std::string out = scratch_dir + "/stdout", err = scratch_dir + "/stderr";
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 1, out.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  posix_spawn_file_actions_addopen(&actions, 2, err.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0600);
  std::vector<char*> argv = {const_cast<char*>(program.c_str()), nullptr};
  std::vector<char*> envp;
  for (const std::string& entry : environment) envp.push_back(const_cast<char*>(entry.c_str()));
  envp.push_back(nullptr);
  pid_t child = -1;
  const int spawned =
      posix_spawn(&child, program.c_str(), &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ADD_FAILURE() << "posix_spawn " << program << ": " << std::strerror(spawned);
    return run;
  }
  int status = 0;
  waitpid(child, &status, 0);
  if (WIFEXITED(status)) run.exit_code = WEXITSTATUS(status);
  run.out = ReadFile(out);
  run.err = ReadFile(err);
  return run;
}

}  // namespace infinirt::loader_test

#endif  // INFINIRT_TESTS_LOADER_FILE_SUPPORT_H_
