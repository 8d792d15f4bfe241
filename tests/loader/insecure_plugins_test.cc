// Plugin files and directories that another user could change are refused (listed as insecure,
// with the reason, and logged at warn) while the CPU plugin still loads; with
// INFINIRT_ALLOW_INSECURE_PLUGINS=1 each of them loads. Every layout is built at run time, in a
// fresh directory, from a copy of the fake_nvidia plugin. Layouts that give a file to another
// user or group need root; elsewhere those tests are skipped and say why.
#include <unistd.h>

#include <initializer_list>
#include <memory>
#include <string>

#include "file_support.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

constexpr char kOptIn[] = "INFINIRT_ALLOW_INSECURE_PLUGINS";

std::string NotRootReason() {
  return "not running as root (euid " + std::to_string(geteuid()) +
         "): only root can give a file to another user or group";
}

class InsecurePlugins : public RuntimeTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    scratch_ = std::make_unique<TempDir>(FAKE_PLUGIN_ROOT, "insecure");
    ASSERT_FALSE(scratch_->path().empty());
  }
  void TearDown() override {
    RuntimeTest::TearDown();
    scratch_.reset();
  }

  // A new directory in the scratch directory, with exactly this mode.
  std::string Directory(const std::string& name, mode_t mode) {
    const std::string path = *scratch_ / name;
    MakeDirectory(path, mode);
    return path;
  }

  // A copy of the fake_nvidia plugin (2 devices) in directory, with exactly this mode.
  static std::string PluginCopy(const std::string& directory, mode_t mode,
                                const std::string& name = "fake_nvidia") {
    const std::string path = directory + "/libinfinirt_" + name + ".so";
    CopyFile(PluginFile("accel", name), path, mode);
    return path;
  }

  // Initialises with `path` and the CPU plugin: the fake is refused, with every part in its
  // reason and in a warning; the CPU plugin loads. Then, with the opt-in, the fake loads.
  static void ExpectRefusedUnlessOptedIn(const std::string& path, const std::string& plugin_file,
                                         std::initializer_list<std::string> reason_parts) {
    ScopedEnv search("INFINIRT_PLUGIN_PATH", path + ":" + CpuPlugin());
    {
      SCOPED_TRACE("without " + std::string(kOptIn));
      const std::string log = CaptureStderrOf([] { infinirtInit(); });
      const auto entry = OnlyEntryNamed("fake_nvidia");
      ASSERT_TRUE(entry);
      EXPECT_EQ(entry->status, infinirtBackendInsecure);
      EXPECT_EQ(entry->path, RealPath(plugin_file));
      for (const std::string& part : reason_parts) {
        EXPECT_TRUE(Contains(entry->reason, part)) << entry->reason << "\nlacks: " << part;
      }
      EXPECT_TRUE(Contains(entry->reason, std::string(kOptIn) + "=1 loads it anyway"))
          << entry->reason;
      EXPECT_EQ(entry->deviceCount, 0);
      EXPECT_TRUE(HasLineWith(log, {"[infinirt] [warning]", RealPath(plugin_file)})) << log;
      ExpectCpuStillWorks();
    }
    ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
    {
      SCOPED_TRACE("with " + std::string(kOptIn) + "=1");
      ScopedEnv opt_in(kOptIn, "1");
      const auto entry = OnlyEntryNamed("fake_nvidia");
      ASSERT_TRUE(entry);
      EXPECT_EQ(entry->status, infinirtBackendLoaded) << entry->reason;
      EXPECT_EQ(entry->deviceCount, 2);
      EXPECT_TRUE(Contains(entry->reason, "loaded although")) << entry->reason;
      EXPECT_EQ(DeviceCount(), 3);
    }
  }

  std::unique_ptr<TempDir> scratch_;
};

TEST_F(InsecurePlugins, WorldWritableFileIsRefused) {
  const std::string plugin = PluginCopy(Directory("plugins", 0755), 0757);
  ExpectRefusedUnlessOptedIn(plugin, plugin, {"the plugin file is world-writable (mode 0757)"});
}

TEST_F(InsecurePlugins, FileWritableByAForeignGroupIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << NotRootReason();
  std::optional<gid_t> group = GroupNamed("nogroup");
  if (!group) GTEST_SKIP() << "no group named nogroup";
  const std::string plugin = PluginCopy(Directory("plugins", 0755), 0775);
  ASSERT_EQ(chown(plugin.c_str(), 0, *group), 0) << ErrnoText();
  ExpectRefusedUnlessOptedIn(
      plugin, plugin,
      {"the plugin file is writable by group 'nogroup' (gid " + std::to_string(*group) +
       ") (mode 0775), which is neither root's group nor the owner's private group"});
}

TEST_F(InsecurePlugins, FileOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << NotRootReason();
  const std::optional<Account> nobody = UserNamed("nobody");
  if (!nobody) GTEST_SKIP() << "no user named nobody";
  const std::string plugin = PluginCopy(Directory("plugins", 0755), 0755);
  ASSERT_EQ(chown(plugin.c_str(), nobody->uid, 0), 0) << ErrnoText();
  ExpectRefusedUnlessOptedIn(
      plugin, plugin,
      {"the plugin file is owned by user 'nobody' (uid " + std::to_string(nobody->uid) +
       "), who is neither root nor the user this process runs as"});
}

TEST_F(InsecurePlugins, WorldWritableDirectoryOfANamedFileIsRefused) {
  const std::string directory = Directory("plugins", 0777);
  const std::string plugin = PluginCopy(directory, 0755);
  ExpectRefusedUnlessOptedIn(
      plugin, plugin, {"its directory " + RealPath(directory) + " is world-writable (mode 0777)"});
}

TEST_F(InsecurePlugins, DirectoryOwnedByAnotherUserIsRefused) {
  if (geteuid() != 0) GTEST_SKIP() << NotRootReason();
  const std::optional<Account> nobody = UserNamed("nobody");
  if (!nobody) GTEST_SKIP() << "no user named nobody";
  const std::string directory = Directory("plugins", 0755);
  const std::string plugin = PluginCopy(directory, 0755);
  ASSERT_EQ(chown(directory.c_str(), nobody->uid, 0), 0) << ErrnoText();
  ExpectRefusedUnlessOptedIn(
      plugin, plugin, {"its directory " + RealPath(directory) + " is owned by user 'nobody'"});
}

TEST_F(InsecurePlugins, SymlinkToAWorldWritableFileIsRefused) {
  const std::string target = PluginCopy(Directory("elsewhere", 0755), 0666);
  const std::string links = Directory("links", 0755);
  const std::string link = links + "/libinfinirt_fake_nvidia.so";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0) << ErrnoText();
  // Found through the safe directory that holds the link; the file it leads to is checked.
  ExpectRefusedUnlessOptedIn(links, target, {"the plugin file is world-writable (mode 0666)"});
}

TEST_F(InsecurePlugins, SymlinkIntoAWorldWritableDirectoryIsRefused) {
  const std::string open_directory = Directory("open", 0777);
  const std::string target = PluginCopy(open_directory, 0755);
  const std::string links = Directory("links", 0755);
  const std::string link = links + "/libinfinirt_fake_nvidia.so";
  ASSERT_EQ(symlink(target.c_str(), link.c_str()), 0) << ErrnoText();
  ExpectRefusedUnlessOptedIn(link, target,
                             {"its directory " + RealPath(open_directory) + " is world-writable"});
}

TEST_F(InsecurePlugins, WorldWritableSearchedDirectoryIsSkippedAsAWhole) {
  // Sticky like /tmp: others cannot replace these files, but they can add plugins beside them.
  const std::string directory = Directory("plugins", 01777);
  const std::string nvidia = PluginCopy(directory, 0755);
  const std::string ascend = PluginCopy(directory, 0755, "fake_ascend");
  ScopedEnv search("INFINIRT_PLUGIN_PATH", directory + ":" + CpuPlugin());
  const std::string log = CaptureStderrOf([] { infinirtInit(); });
  for (const std::string name : {"fake_nvidia", "fake_ascend"}) {
    SCOPED_TRACE(name);
    const auto entry = OnlyEntryNamed(name);
    ASSERT_TRUE(entry);
    EXPECT_EQ(entry->status, infinirtBackendInsecure);
    EXPECT_TRUE(Contains(entry->reason,
                         "the searched directory " + directory + " is world-writable (mode 1777)"))
        << entry->reason;
    EXPECT_TRUE(Contains(entry->reason, "skipped as a whole")) << entry->reason;
  }
  EXPECT_EQ(RealPath(OnlyEntryNamed("fake_nvidia")->path), RealPath(nvidia));
  EXPECT_EQ(RealPath(OnlyEntryNamed("fake_ascend")->path), RealPath(ascend));
  // One warning for the directory, none per file in it.
  EXPECT_TRUE(HasLineWith(log, {"[infinirt] [warning]", directory, "skipped as a whole"})) << log;
  EXPECT_FALSE(HasLineWith(log, {"refusing"})) << log;
  // Backends not found name the directory as skipped.
  const auto kunlun = OnlyEntryNamed("kunlun");
  ASSERT_TRUE(kunlun);
  EXPECT_TRUE(Contains(kunlun->reason, directory + " (skipped: insecure)")) << kunlun->reason;
  ExpectCpuStillWorks();

  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  ScopedEnv opt_in(kOptIn, "1");
  EXPECT_EQ(OnlyEntryNamed("fake_nvidia")->status, infinirtBackendLoaded);
  EXPECT_EQ(OnlyEntryNamed("fake_ascend")->status, infinirtBackendLoaded);
  EXPECT_EQ(DeviceCount(), 4);
}

TEST_F(InsecurePlugins, OnlyTheValueOneOptsIn) {
  const std::string plugin = PluginCopy(Directory("plugins", 0755), 0777);
  ScopedEnv search("INFINIRT_PLUGIN_PATH", plugin + ":" + CpuPlugin());
  for (const char* value : {"", "0", "yes", "true", " 1"}) {
    SCOPED_TRACE(std::string(kOptIn) + "='" + value + "'");
    ScopedEnv opt_in(kOptIn, value);
    const std::string log = CaptureStderrOf([] { infinirtInit(); });
    const auto entry = OnlyEntryNamed("fake_nvidia");
    ASSERT_TRUE(entry);
    EXPECT_EQ(entry->status, infinirtBackendInsecure);
    // A value that looks like a yes is named, so that the refusal is no surprise.
    const bool looks_like_yes = *value != '\0' && std::string(value) != "0";
    EXPECT_EQ(HasLineWith(log, {"[warning]", std::string(kOptIn) + "='" + value + "' is not 1"}),
              looks_like_yes)
        << log;
    ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  }
}

TEST_F(InsecurePlugins, GroupWritableByRootsGroupIsTrusted) {
  if (geteuid() != 0) GTEST_SKIP() << NotRootReason();
  const std::string directory = Directory("plugins", 0775);
  const std::string plugin = PluginCopy(directory, 0775);
  ASSERT_EQ(chown(directory.c_str(), 0, 0), 0) << ErrnoText();
  ASSERT_EQ(chown(plugin.c_str(), 0, 0), 0) << ErrnoText();
  ScopedEnv search("INFINIRT_PLUGIN_PATH", directory + ":" + CpuPlugin());
  const auto entry = OnlyEntryNamed("fake_nvidia");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendLoaded) << entry->reason;
  EXPECT_STREQ(entry->reason, "");
}

}  // namespace
}  // namespace infinirt::loader_test
