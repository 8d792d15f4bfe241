// Unit tests of core/plugin_trust.h: who could change a plugin file or directory, from a stat
// and account names given here (so the private-group rule is tested without such accounts).
#include "plugin_trust.h"

#include <gtest/gtest.h>

#include <map>
#include <string>

namespace infinirt::core {
namespace {

constexpr uid_t kAlice = 1000, kBob = 1001;
constexpr gid_t kAliceGroup = 1000, kUsers = 100, kUnnamedGroup = 4242;

const AccountNames& TestNames() {
  static const AccountNames names = {
      [](uid_t uid) -> std::optional<std::string> {
        static const std::map<uid_t, std::string> users = {
            {0, "root"}, {kAlice, "alice"}, {kBob, "bob"}};
        auto found = users.find(uid);
        return found == users.end() ? std::nullopt : std::optional<std::string>(found->second);
      },
      [](gid_t gid) -> std::optional<std::string> {
        static const std::map<gid_t, std::string> groups = {
            {0, "root"}, {kAliceGroup, "alice"}, {kUsers, "users"}};
        auto found = groups.find(gid);
        return found == groups.end() ? std::nullopt : std::optional<std::string>(found->second);
      }};
  return names;
}

struct stat Stat(uid_t owner, gid_t group, mode_t mode) {
  struct stat info {};
  info.st_uid = owner;
  info.st_gid = group;
  info.st_mode = mode;
  return info;
}

std::string Problem(uid_t owner, gid_t group, mode_t mode, uid_t effective_uid) {
  return WritableByOthers(Stat(owner, group, S_IFREG | mode), effective_uid, TestNames());
}

TEST(PluginTrust, InstalledByRootIsTrusted) {
  EXPECT_EQ(Problem(0, 0, 0755, 0), "");
  EXPECT_EQ(Problem(0, 0, 0644, kAlice), "");
}

TEST(PluginTrust, WorldWritableIsRefusedWhoeverOwnsIt) {
  EXPECT_EQ(Problem(0, 0, 0777, 0), "world-writable (mode 0777)");
  EXPECT_EQ(Problem(kAlice, kAliceGroup, 0666, kAlice), "world-writable (mode 0666)");
  const struct stat sticky = Stat(0, 0, S_IFDIR | 01777);
  EXPECT_EQ(WritableByOthers(sticky, 0, TestNames()), "world-writable (mode 1777)");
}

TEST(PluginTrust, GroupWritableByRootsGroupIsTrusted) { EXPECT_EQ(Problem(0, 0, 0775, 0), ""); }

TEST(PluginTrust, GroupWritableByTheOwnersPrivateGroupIsTrusted) {
  // What a build by alice under umask 002 makes.
  EXPECT_EQ(Problem(kAlice, kAliceGroup, 0775, kAlice), "");
}

TEST(PluginTrust, GroupWritableByASharedGroupIsRefused) {
  EXPECT_EQ(Problem(kAlice, kUsers, 0775, kAlice),
            "writable by group 'users' (gid 100) (mode 0775), which is neither root's group nor "
            "the owner's private group");
}

TEST(PluginTrust, AnotherUsersPrivateGroupIsNotTheOwners) {
  // Group "alice" on a file owned by root: not root's group, and root's private group is root.
  EXPECT_NE(Problem(0, kAliceGroup, 0775, 0), "");
  EXPECT_NE(Problem(kBob, kAliceGroup, 0775, kBob), "");
}

TEST(PluginTrust, GroupWithoutANameIsRefused) {
  EXPECT_EQ(Problem(kAlice, kUnnamedGroup, 0775, kAlice),
            "writable by group (gid 4242) (mode 0775), which is neither root's group nor the "
            "owner's private group");
}

TEST(PluginTrust, OwnedByTheEffectiveUserIsTrusted) {
  EXPECT_EQ(Problem(kAlice, kUsers, 0755, kAlice), "");
}

TEST(PluginTrust, OwnedByAnotherUserIsRefused) {
  EXPECT_EQ(Problem(kBob, kUsers, 0755, kAlice),
            "owned by user 'bob' (uid 1001), who is neither root nor the user this process runs "
            "as (uid 1000)");
  EXPECT_EQ(Problem(5555, kUsers, 0755, 0),
            "owned by user (uid 5555), who is neither root nor the user this process runs as "
            "(uid 0)");
}

TEST(PluginTrust, SystemAccountNamesKnowRoot) {
  EXPECT_EQ(SystemAccountNames().user_name(0), "root");
  EXPECT_EQ(SystemAccountNames().group_name(0), "root");
}

}  // namespace
}  // namespace infinirt::core
