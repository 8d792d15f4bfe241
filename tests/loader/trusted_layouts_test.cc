// Layouts a normal build or install produces are not refused: a plugin directory made under
// umask 022, or under umask 002 (group-writable: trusted when the group is root's or the owner's
// private group), loads. The private-group case needs a user whose primary group is named like
// it: the test's own user, or, when the test runs as root, another such account (daemon on
// Debian) that the process becomes for the initialisation (seteuid).
#include <grp.h>
#include <pwd.h>
#include <sys/statvfs.h>
#include <unistd.h>

#include <memory>
#include <string>

#include "file_support.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

std::string UserName(uid_t uid) {
  const passwd* entry = getpwuid(uid);
  return entry ? entry->pw_name : "";
}

std::string GroupName(gid_t gid) {
  const group* entry = getgrgid(gid);
  return entry ? entry->gr_name : "";
}

// A user other than root whose primary group has the user's name.
std::optional<Account> UserWithAPrivateGroup() {
  setpwent();
  std::optional<Account> found;
  while (const passwd* entry = getpwent()) {
    if (entry->pw_uid != 0 && GroupName(entry->pw_gid) == entry->pw_name) {
      found = Account{entry->pw_uid, entry->pw_gid};
      break;
    }
  }
  endpwent();
  return found;
}

// The process's effective user and group are `account` until the end of the scope.
class ScopedEffectiveAccount {
 public:
  explicit ScopedEffectiveAccount(const Account& account) {
    ok_ = setegid(account.gid) == 0 && seteuid(account.uid) == 0;
  }
  ~ScopedEffectiveAccount() {
    seteuid(0);
    setegid(0);
  }
  ScopedEffectiveAccount(const ScopedEffectiveAccount&) = delete;
  ScopedEffectiveAccount& operator=(const ScopedEffectiveAccount&) = delete;
  bool ok() const { return ok_; }

 private:
  bool ok_ = false;
};

class TrustedLayouts : public RuntimeTest {
 protected:
  // A plugin directory as a build under `umask` makes it, with a copy of fake_nvidia (the
  // linker creates files with mode 0777 & ~umask), owned by owner.
  static std::string BuildLikeLayout(const TempDir& scratch, mode_t umask, const Account& owner) {
    const std::string directory = scratch / "lib";
    const std::string plugin = directory + "/libinfinirt_fake_nvidia.so";
    MakeDirectory(directory, 0777 & ~umask);
    CopyFile(PluginFile("accel", "fake_nvidia"), plugin, 0777 & ~umask);
    EXPECT_EQ(lchown(scratch.path().c_str(), owner.uid, owner.gid), 0) << ErrnoText();
    EXPECT_EQ(lchown(directory.c_str(), owner.uid, owner.gid), 0) << ErrnoText();
    EXPECT_EQ(lchown(plugin.c_str(), owner.uid, owner.gid), 0) << ErrnoText();
    return directory;
  }

  static void ExpectFakeLoadsFrom(const std::string& directory) {
    ScopedEnv search("INFINIRT_PLUGIN_PATH", directory);
    const auto entry = OnlyEntryNamed("fake_nvidia");
    ASSERT_TRUE(entry);
    EXPECT_EQ(entry->status, infinirtBackendLoaded) << entry->reason;
    EXPECT_STREQ(entry->reason, "");
    EXPECT_EQ(DeviceCount(), 2);
  }

  static Account Myself() { return Account{geteuid(), getegid()}; }
};

TEST_F(TrustedLayouts, Umask022BuildLoads) {
  TempDir scratch(FAKE_PLUGIN_ROOT, "umask-022");
  ExpectFakeLoadsFrom(BuildLikeLayout(scratch, 022, Myself()));
}

TEST_F(TrustedLayouts, Umask002BuildOfThisUserLoads) {
  const std::string user = UserName(geteuid()), group = GroupName(getegid());
  if (geteuid() != 0 && user != group) {
    GTEST_SKIP() << "the primary group of user '" << user << "' is '" << group
                 << "', not a private group: under umask 002 its files are writable by others";
  }
  // As root, the group is root's; otherwise the user's private group.
  TempDir scratch(FAKE_PLUGIN_ROOT, "umask-002");
  ExpectFakeLoadsFrom(BuildLikeLayout(scratch, 002, Myself()));
}

TEST_F(TrustedLayouts, Umask002BuildOfAUserWithAPrivateGroupLoads) {
  if (geteuid() != 0) {
    GTEST_SKIP() << "not running as root (euid " << geteuid()
                 << "): only root can act as another user (Umask002BuildOfThisUserLoads covers "
                    "this user's own group)";
  }
  const std::optional<Account> account = UserWithAPrivateGroup();
  if (!account) GTEST_SKIP() << "no user other than root has a private group here";
  // Under the system's temporary directory, which every user can traverse (the build tree may
  // not be: the process reads the plugin as that user).
  struct statvfs filesystem {};
  if (statvfs(testing::TempDir().c_str(), &filesystem) == 0 &&
      (filesystem.f_flag & ST_NOEXEC) != 0) {
    GTEST_SKIP() << "the filesystem of " << testing::TempDir()
                 << " is mounted noexec: no plugin can be loaded from it";
  }
  TempDir scratch(testing::TempDir(), "umask-002-private-group");
  const std::string directory = BuildLikeLayout(scratch, 002, *account);
  ScopedEffectiveAccount as(*account);
  ASSERT_TRUE(as.ok()) << ErrnoText();
  SCOPED_TRACE("as user '" + UserName(account->uid) + "' (group '" + GroupName(account->gid) +
               "')");
  ExpectFakeLoadsFrom(directory);
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
}

}  // namespace
}  // namespace infinirt::loader_test
