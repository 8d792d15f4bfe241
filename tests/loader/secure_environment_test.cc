// A privileged process ignores every InfiniRT variable and says so. A setuid or setgid copy of
// loader_environment_probe is run (as root) with every variable set to a value that would change
// the outcome; the kernel starts it with AT_SECURE, so secure_getenv hides them: the default
// search finds the build tree's plugins, and each variable is named in one warning, even though
// INFINIRT_LOG_LEVEL=off asks for silence. The same run without privilege shows that the values
// do take effect otherwise.
#include <sys/prctl.h>
#include <sys/statvfs.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "file_support.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

constexpr char kFromEnvironment[] = "/nonexistent/from-the-environment";

// The core's variables, each set to a value that would be visible in the probe's output.
const std::vector<std::pair<std::string, std::string>>& CoreVariables() {
  static const std::vector<std::pair<std::string, std::string>> variables = {
      {"INFINIRT_PLUGIN_PATH", PluginDir("accel")},  // would replace the default search
      {"INFINIRT_BACKENDS", "fake_nvidia"},          // would filter the CPU plugin out
      {"INFINIRT_CONFIG", std::string(kFromEnvironment) + "/infinirt.json"},  // an error
      {"INFINIRT_VISIBLE_DEVICES", ""},  // would hide every device
      {"INFINIRT_LOG_LEVEL", "off"},     // would hide the warnings
      {"INFINIRT_ALLOW_INSECURE_PLUGINS", "1"},
  };
  return variables;
}

// Vendor plugins' variables: the runtime library they would open.
const std::vector<std::pair<std::string, std::string>>& VendorVariables() {
  static const std::vector<std::pair<std::string, std::string>> variables = {
      {"INFINIRT_NVIDIA_RUNTIME", std::string(kFromEnvironment) + "/libcudart.so.13"},
      {"INFINIRT_ASCEND_RUNTIME", std::string(kFromEnvironment) + "/libascendcl.so"},
  };
  return variables;
}

// Every variable set, and the suite's sanitizer options (scripts/test.sh --sanitize).
std::vector<std::string> ProbeEnvironment() {
  std::vector<std::string> environment;
  for (const auto& variables : {CoreVariables(), VendorVariables()}) {
    for (const auto& [name, value] : variables) environment.push_back(name + "=" + value);
  }
  for (const char* name : {"ASAN_OPTIONS", "UBSAN_OPTIONS", "LSAN_OPTIONS"}) {
    if (const char* value = getenv(name)) environment.push_back(std::string(name) + "=" + value);
  }
  return environment;
}

struct ProbeBackend {
  std::string name;
  int status = -1;
  std::string path;
  std::string runtime;
};

// What loader_environment_probe printed.
struct ProbeOutput {
  int exit_code = -1;
  int at_secure = -1;
  int device_count = -1;
  std::vector<ProbeBackend> backends;
  std::string log;  // its standard error

  const ProbeBackend* Backend(const std::string& name) const {
    for (const ProbeBackend& backend : backends) {
      if (backend.name == name) return &backend;
    }
    return nullptr;
  }
};

ProbeOutput ParseProbe(const ProgramRun& run) {
  ProbeOutput output;
  output.exit_code = run.exit_code;
  output.log = run.err;
  std::istringstream lines(run.out);
  std::string line;
  while (std::getline(lines, line)) {
    std::istringstream fields(line);
    std::string kind;
    fields >> kind;
    if (kind == "at_secure") fields >> output.at_secure;
    if (kind == "device_count") fields >> output.device_count;
    if (kind == "backend") {
      ProbeBackend backend;
      fields >> backend.name >> backend.status >> backend.path;
      std::getline(fields, backend.runtime);
      output.backends.push_back(backend);
    }
  }
  return output;
}

int CountLinesWith(const std::string& text, std::initializer_list<std::string> parts) {
  std::istringstream lines(text);
  std::string line;
  int count = 0;
  while (std::getline(lines, line)) {
    bool all = true;
    for (const std::string& part : parts) all = all && Contains(line, part);
    count += all ? 1 : 0;
  }
  return count;
}

class SecureEnvironment : public testing::Test {
 protected:
  // Why a privileged copy of the probe cannot be made and run in directory, or "" when it can.
  static std::string WhyNoPrivilegedCopy(const std::string& directory) {
    if (geteuid() != 0) {
      return "not running as root (euid " + std::to_string(geteuid()) +
             "): only root can give a copy to another user or group and run it setuid/setgid";
    }
    struct statvfs filesystem {};
    if (statvfs(directory.c_str(), &filesystem) == 0 && (filesystem.f_flag & ST_NOSUID) != 0) {
      return "the filesystem of " + directory + " is mounted nosuid";
    }
    if (prctl(PR_GET_NO_NEW_PRIVS, 0, 0, 0, 0) == 1) {
      return "no_new_privs is set for this process (a container or sandbox setting): the kernel "
             "ignores setuid/setgid bits";
    }
    return "";
  }

  // A copy of the probe owned by owner:group with mode (04755: setuid, 02755: setgid), run
  // with every variable set.
  static ProbeOutput RunPrivilegedCopy(uid_t owner, gid_t group, mode_t mode) {
    TempDir scratch(FAKE_PLUGIN_ROOT, "secure-environment");
    const std::string copy = scratch / "loader_environment_probe";
    if (!CopyFile(ENVIRONMENT_PROBE, copy, 0755)) return {};
    // chown clears the setuid and setgid bits, so the mode comes after it.
    EXPECT_EQ(chown(copy.c_str(), owner, group), 0) << ErrnoText();
    EXPECT_EQ(chmod(copy.c_str(), mode), 0) << ErrnoText();
    return ParseProbe(RunProgram(copy, ProbeEnvironment(), scratch.path()));
  }

  // True when user can read path (checked in a child process that becomes the user).
  static bool CanRead(const Account& user, const std::string& path) {
    const pid_t child = fork();
    if (child == 0) {
      const bool readable =
          setgid(user.gid) == 0 && setuid(user.uid) == 0 && access(path.c_str(), R_OK) == 0;
      _exit(readable ? 0 : 1);
    }
    int status = 0;
    waitpid(child, &status, 0);
    return WIFEXITED(status) && WEXITSTATUS(status) == 0;
  }

  static void ExpectEveryVariableIgnored(const ProbeOutput& output) {
    EXPECT_EQ(output.exit_code, 0) << output.log;
    ASSERT_EQ(output.at_secure, 1)
        << "the kernel did not start the privileged copy with AT_SECURE\n"
        << output.log;
    // The default search (the build tree's lib/infinirt), not INFINIRT_PLUGIN_PATH's fakes.
    const ProbeBackend* cpu = output.Backend("cpu");
    ASSERT_NE(cpu, nullptr) << output.log;
    EXPECT_EQ(cpu->status, infinirtBackendLoaded) << output.log;
    EXPECT_EQ(cpu->path, RealPath(CpuPlugin()));
    EXPECT_EQ(output.Backend("fake_nvidia"), nullptr);
    EXPECT_GE(output.device_count, 1) << "INFINIRT_VISIBLE_DEVICES= was applied";
    for (const ProbeBackend& backend : output.backends) {
      EXPECT_FALSE(Contains(backend.runtime, kFromEnvironment)) << backend.name << backend.runtime;
    }
    EXPECT_FALSE(Contains(output.log, kFromEnvironment)) << output.log;
    // One warning per variable, at the default level although INFINIRT_LOG_LEVEL=off.
    for (const auto& [name, value] : CoreVariables()) {
      EXPECT_EQ(CountLinesWith(output.log, {"[infinirt] [warning] " + name + " is set but ignored",
                                            "setuid/setgid", "AT_SECURE"}),
                1)
          << name << "\n"
          << output.log;
    }
    EXPECT_TRUE(HasLineWith(output.log, {"[infinirt] [warning] [nvidia] INFINIRT_NVIDIA_RUNTIME "
                                         "is set but ignored",
                                         "AT_SECURE"}))
        << output.log;
    EXPECT_TRUE(HasLineWith(output.log, {"[infinirt] [warning] [ascend] INFINIRT_ASCEND_RUNTIME "
                                         "is set but ignored",
                                         "AT_SECURE"}))
        << output.log;
  }
};

TEST_F(SecureEnvironment, WithoutPrivilegeTheVariablesTakeEffect) {
  TempDir scratch(FAKE_PLUGIN_ROOT, "plain-environment");
  const ProbeOutput output =
      ParseProbe(RunProgram(ENVIRONMENT_PROBE, ProbeEnvironment(), scratch.path()));
  EXPECT_EQ(output.exit_code, 0) << output.log;
  EXPECT_EQ(output.at_secure, 0);
  const ProbeBackend* fake = output.Backend("fake_nvidia");
  ASSERT_NE(fake, nullptr);
  EXPECT_EQ(fake->status, infinirtBackendLoaded);
  const ProbeBackend* cpu = output.Backend("cpu");
  ASSERT_NE(cpu, nullptr);
  EXPECT_EQ(cpu->status, infinirtBackendFilteredOut);
  EXPECT_EQ(output.device_count, 0);
  EXPECT_EQ(output.log, "");  // INFINIRT_LOG_LEVEL=off
}

TEST_F(SecureEnvironment, SetuidCopyIgnoresEveryVariableAndWarns) {
  const std::string why = WhyNoPrivilegedCopy(FAKE_PLUGIN_ROOT);
  if (!why.empty()) GTEST_SKIP() << why;
  const std::optional<Account> nobody = UserNamed("nobody");
  if (!nobody) GTEST_SKIP() << "no user named nobody";
  for (const std::string& path : {std::string(LIBINFINIRT), CpuPlugin()}) {
    if (!CanRead(*nobody, path)) {
      GTEST_SKIP() << "user nobody cannot read " << path
                   << ": a program setuid to nobody cannot load InfiniRT from this build tree "
                      "(the setgid scenario covers AT_SECURE here)";
    }
  }
  ExpectEveryVariableIgnored(RunPrivilegedCopy(nobody->uid, getegid(), 04755));
}

TEST_F(SecureEnvironment, SetgidCopyIgnoresEveryVariableAndWarns) {
  const std::string why = WhyNoPrivilegedCopy(FAKE_PLUGIN_ROOT);
  if (!why.empty()) GTEST_SKIP() << why;
  std::optional<gid_t> group = GroupNamed("nogroup");
  if (!group) group = GroupNamed("nobody");
  if (!group) GTEST_SKIP() << "no group named nogroup or nobody";
  ExpectEveryVariableIgnored(RunPrivilegedCopy(geteuid(), *group, 02755));
}

}  // namespace
}  // namespace infinirt::loader_test
