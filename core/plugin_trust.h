// Who could change a plugin file or a directory of plugins, from its owner and mode.
//
// The core refuses to load code that a user other than the file's owner, root, or the user the
// process runs as could have written: anyone who can write a plugin can run code in every
// process that loads it. A file or directory is untrusted when it is
//   - world-writable (a sticky directory included: others can still add files to it);
//   - group-writable, unless the group is root's (gid 0) or the owner's private group, a group
//     whose name is the owner's user name (as useradd and adduser create them; with umask 002,
//     which such systems use, every file a user builds is writable by that group);
//   - owned by a user other than root and the process's effective user.
// The loader applies this to every plugin file, to the directory holding it (a writable
// directory lets another user replace the file), and to every directory it searches; ancestors
// of those directories are not examined.
#ifndef INFINIRT_CORE_PLUGIN_TRUST_H_
#define INFINIRT_CORE_PLUGIN_TRUST_H_

#include <sys/stat.h>
#include <sys/types.h>

#include <functional>
#include <optional>
#include <string>

namespace infinirt::core {

// User and group names: the system's account databases, or a stand-in in unit tests.
struct AccountNames {
  std::function<std::optional<std::string>(uid_t)> user_name;
  std::function<std::optional<std::string>(gid_t)> group_name;
};

const AccountNames& SystemAccountNames();

// Why a user other than the owner, root and effective_uid could change what `info` describes,
// as a phrase ("world-writable (mode 0777)"); "" when none could.
std::string WritableByOthers(const struct stat& info, uid_t effective_uid,
                             const AccountNames& names = SystemAccountNames());

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_PLUGIN_TRUST_H_
