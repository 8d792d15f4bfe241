// What INFINIRT_PLUGIN_PATH may name, and what discovery says about it at debug level.
#include <gtest/gtest.h>
#include <unistd.h>

#include <climits>
#include <string>

#include "infinirt.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

// --- Relative and empty entries (":relative/dir::.:libinfinirt_cwd.so:<cpu>:") -------------
// The working directory is plugins/cwd, which holds libinfinirt_cwd.so, as does its
// relative/dir/. Only the CPU plugin, named by an absolute path, may load.

class RelativePaths : public RuntimeTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    char cwd[PATH_MAX];
    ASSERT_NE(getcwd(cwd, sizeof(cwd)), nullptr);
    // Otherwise the scenario proves nothing: the plugin must be right here.
    ASSERT_EQ(RealPath(cwd), RealPath(PluginDir("cwd")));
    ASSERT_EQ(access("libinfinirt_cwd.so", R_OK), 0);
    ASSERT_EQ(access("relative/dir/libinfinirt_cwd.so", R_OK), 0);
  }
};

TEST_F(RelativePaths, OnlyTheAbsoluteEntryIsSearched) {
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  EXPECT_TRUE(EntriesNamed("cwd").empty());
  for (const infinirtBackendProp& entry : Listing()) {
    EXPECT_FALSE(Contains(entry.path, PluginDir("cwd"))) << entry.name << ": " << entry.path;
  }
  EXPECT_EQ(DeviceCount(), 1);
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
  EXPECT_EQ(counts[INFINI_DEVICE_ILUVATAR], 0);
  ExpectDeviceRoundTrip(0);
}

TEST_F(RelativePaths, RelativeEntriesAreReportedAsIgnored) {
  const std::string log = CaptureStderrOf([] { infinirtInit(); });
  for (const char* entry : {"'relative/dir'", "'.'", "'libinfinirt_cwd.so'"}) {
    EXPECT_TRUE(HasLineWith(log, {"[infinirt]", "[warning]", entry, "absolute"}))
        << entry << " in:\n"
        << log;
  }
}

// The same plugin does load when its directory is named absolutely, so the test above would
// see it if the loader searched relative entries.
TEST_F(RelativePaths, ThePluginLoadsWhenNamedAbsolutely) {
  ScopedEnv path("INFINIRT_PLUGIN_PATH", PluginDir("cwd"));
  const auto entry = OnlyEntryNamed("cwd");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendLoaded) << entry->reason;
  EXPECT_EQ(DeviceCount(), 1);
}

// --- INFINIRT_LOG_LEVEL=debug: missing/ : notelf/ : <cpu file> : noentry/ : accel/ -------------

class DebugLog : public RuntimeTest {
 protected:
  static std::string InitLog() {
    return CaptureStderrOf([] { infinirtInit(); });
  }
  // The directory holding the libinfinirt.so this test runs with.
  static std::string LibraryDirectory() {
    const std::string library = RealPath(LIBINFINIRT);
    return library.substr(0, library.find_last_of('/'));
  }
};

TEST_F(DebugLog, EveryEntrySearchedIsLogged) {
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(log, {"[debug]", PluginDir("does-not-exist"), "does not exist"})) << log;
  for (const char* directory : {"notelf", "noentry", "accel"}) {
    EXPECT_TRUE(HasLineWith(log, {"[debug]", "searching directory", PluginDir(directory)}))
        << directory << " in:\n"
        << log;
  }
  EXPECT_TRUE(HasLineWith(log, {"[debug]", "named directly", CpuPlugin()})) << log;
}

TEST_F(DebugLog, EveryFileTriedIsLoggedWithItsVerdict) {
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(log, {"[debug]", PluginFile("notelf", "notelf"), "rejected"})) << log;
  EXPECT_TRUE(HasLineWith(
      log, {"[debug]", PluginFile("noentry", "noentry"), "rejected", "infinirtPluginGetTable"}))
      << log;
  EXPECT_TRUE(HasLineWith(log, {"[debug]", CpuPlugin(), "loaded"})) << log;
  EXPECT_TRUE(HasLineWith(log, {"[debug]", PluginFile("accel", "fake_ascend"), "loaded"})) << log;
  EXPECT_TRUE(HasLineWith(log, {"[debug]", PluginFile("accel", "fake_nvidia"), "loaded"})) << log;
}

TEST_F(DebugLog, PluginMessagesReachTheLog) {
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(log, {"[debug]", "[fake_nvidia]", "fake plugin initialised"})) << log;
}

// Without INFINIRT_PLUGIN_PATH: the directory beside libinfinirt.so (here the build tree's
// lib/infinirt), and not the directory this build would install its plugins to, which belongs
// to another installation as far as this library is concerned; a debug line says why.
TEST_F(DebugLog, TheConfiguredInstallDirectoryIsNotSearchedByALibraryElsewhere) {
  ScopedEnv path("INFINIRT_PLUGIN_PATH", std::nullopt);
  const std::string install_dir = INSTALL_PLUGIN_DIR;
  const std::string beside = RealPath(LibraryDirectory() + "/infinirt");
  ASSERT_NE(beside, RealPath(install_dir)) << "the build tree is the install directory";
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(log, {"[debug]", "searching directory", beside})) << log;
  EXPECT_TRUE(HasLineWith(log, {"[debug]", "not searching " + install_dir, beside})) << log;
  EXPECT_FALSE(HasLineWith(log, {"searching directory " + install_dir})) << log;
  EXPECT_FALSE(HasLineWith(log, {install_dir + " does not exist"})) << log;
  EXPECT_EQ(OnlyEntryNamed("cpu")->path, RealPath(beside + "/libinfinirt_cpu.so"));
}

TEST_F(DebugLog, AtWarnLevelDiscoveryIsQuiet) {
  ScopedEnv level("INFINIRT_LOG_LEVEL", "warn");
  const std::string log = InitLog();
  EXPECT_FALSE(Contains(log, "searching directory")) << log;
  EXPECT_FALSE(Contains(log, "[debug]")) << log;
}

}  // namespace
}  // namespace infinirt::loader_test
