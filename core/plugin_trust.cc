#include "plugin_trust.h"

#include <grp.h>
#include <pwd.h>
#include <unistd.h>

#include <cerrno>
#include <cstdio>
#include <type_traits>
#include <vector>

namespace infinirt::core {

namespace {

constexpr uid_t kRoot = 0;
constexpr gid_t kRootGroup = 0;

std::string ModeText(mode_t mode) {
  char text[16];
  std::snprintf(text, sizeof(text), "mode %04o", static_cast<unsigned>(mode & 07777));
  return text;
}

// getpwuid_r/getgrgid_r with a buffer that grows until the entry fits.
template <class Entry, class Lookup>
std::optional<std::string> NameFromDatabase(Lookup lookup) {
  std::vector<char> buffer(1024);
  while (true) {
    Entry entry{};
    Entry* found = nullptr;
    const int error = lookup(&entry, buffer.data(), buffer.size(), &found);
    if (error == ERANGE && buffer.size() < (1u << 20)) {
      buffer.resize(buffer.size() * 2);
      continue;
    }
    if (error != 0 || found == nullptr) return std::nullopt;
    if constexpr (std::is_same_v<Entry, passwd>)
      return std::string(found->pw_name);
    else
      return std::string(found->gr_name);
  }
}

std::string UserText(uid_t uid, const AccountNames& names) {
  const auto name = names.user_name(uid);
  return (name ? "user '" + *name + "' " : std::string("user ")) + "(uid " + std::to_string(uid) +
         ")";
}

std::string GroupText(gid_t gid, const AccountNames& names) {
  const auto name = names.group_name(gid);
  return (name ? "group '" + *name + "' " : std::string("group ")) + "(gid " + std::to_string(gid) +
         ")";
}

// The owner's private group: named like the owner (a numeric id without a name never is).
bool IsOwnersPrivateGroup(const struct stat& info, const AccountNames& names) {
  const auto user = names.user_name(info.st_uid);
  const auto group = names.group_name(info.st_gid);
  return user && group && *user == *group;
}

}  // namespace

const AccountNames& SystemAccountNames() {
  // Never destroyed: a thread may still load the runtime while the process exits.
  static const AccountNames& names =
      *new AccountNames{[](uid_t uid) {
                          return NameFromDatabase<passwd>(
                              [uid](passwd* entry, char* buffer, size_t size, passwd** found) {
                                return getpwuid_r(uid, entry, buffer, size, found);
                              });
                        },
                        [](gid_t gid) {
                          return NameFromDatabase<group>(
                              [gid](group* entry, char* buffer, size_t size, group** found) {
                                return getgrgid_r(gid, entry, buffer, size, found);
                              });
                        }};
  return names;
}

std::string WritableByOthers(const struct stat& info, uid_t effective_uid,
                             const AccountNames& names) {
  if ((info.st_mode & S_IWOTH) != 0) return "world-writable (" + ModeText(info.st_mode) + ")";
  if ((info.st_mode & S_IWGRP) != 0 && info.st_gid != kRootGroup &&
      !IsOwnersPrivateGroup(info, names)) {
    return "writable by " + GroupText(info.st_gid, names) + " (" + ModeText(info.st_mode) +
           "), which is neither root's group nor the owner's private group";
  }
  if (info.st_uid != kRoot && info.st_uid != effective_uid) {
    return "owned by " + UserText(info.st_uid, names) +
           ", who is neither root nor the user this process runs as (uid " +
           std::to_string(effective_uid) + ")";
  }
  return "";
}

}  // namespace infinirt::core
