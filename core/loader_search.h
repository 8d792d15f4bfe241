// Whether the dynamic loader can find a library asked for by a bare file name, answered without
// the loader's own search where the answer is certainly "no".
//
// Vendor plugins ask the loader for their runtimes by bare name (libcnrt.so, libmusart.so, ...),
// and on a machine without that vendor's software each name costs a whole search: the loader
// maps its cache file (/etc/ld.so.cache) again for every dlopen, then tries every directory of
// the search path. Ten such names were a fifth of infinirtInit. A LoaderSearch lives for one
// initialisation: it reads the cache file once (and keeps what it read for the next one while
// the file is unchanged) and looks at each directory once.
//
// It answers "certainly absent" only where the loader would certainly answer "No such file or
// directory": the name is not that of a loaded object (by file name or SONAME), not a key of the
// cache file, and no file of that name is in any directory of the caller's search path as the
// loader itself reports it (dlinfo RTLD_DI_SERINFO: RPATHs, LD_LIBRARY_PATH, RUNPATH, default
// directories). Whatever it cannot read or cannot be sure of makes it answer "maybe", and the
// caller asks the loader as before: a cache file in another format, a directory holding
// hardware-capability subdirectories (glibc-hwcaps/, tls/, x86_64/ ...: the loader searches
// those too), a file it may not look at, LD_AUDIT set (an audit module may rename what is
// searched), or an architecture other than x86-64 (whose capability subdirectory names this
// code does not list).
//
// What it learns of a directory (no capability subdirectory; these names not in it) is kept for
// later initialisations while the directory's modification time is unchanged, since adding or
// removing an entry changes it. Only a directory already unchanged for a second when it was
// examined is trusted so: the kernel's file times advance by clock ticks, and a change made in
// the tick of the examination could leave the time as it was.
#ifndef INFINIRT_CORE_LOADER_SEARCH_H_
#define INFINIRT_CORE_LOADER_SEARCH_H_

#include <sys/types.h>

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <unordered_set>
#include <utility>
#include <vector>

namespace infinirt::core {

using LoaderCacheNames = std::unordered_set<std::string>;

// The names (keys) of a loader cache file in glibc's format ("glibc-ld.so.cache1.1", the only
// one glibc writes since 2.32); nullopt when the data is in another format or inconsistent.
std::optional<LoaderCacheNames> ParseLoaderCache(const char* data, size_t size);

class LoaderSearch {
 public:
  static constexpr const char* kSystemCacheFile = "/etc/ld.so.cache";

  explicit LoaderSearch(std::string cache_file = kSystemCacheFile);

  // True only when dlopen(name) from the object whose dlopen handle is `caller` certainly fails
  // for want of a file: then the loader's message is NotFoundMessage(name). False for a name
  // with a '/', and whenever it cannot tell.
  bool CertainlyAbsent(void* caller, const std::string& name);

  // The loader's message for a bare name it found nowhere, as dlerror() words it.
  static std::string NotFoundMessage(const std::string& name);

  // The subdirectories the loader also searches inside each directory of its path (x86-64).
  static const std::vector<std::string>& CapabilitySubdirectories();

  // What was learnt of a directory, kept across initialisations (loader_search.cc).
  struct DirectoryMemo;

 private:
  struct DirectoryState;
  // What is known of a directory of the search path during this initialisation.
  DirectoryState& LookAt(const std::string& directory);
  // Whether `name` is certainly not in the directory; false when it may be.
  bool CertainlyNotIn(DirectoryState& directory, const std::string& name);

  // The cache file's names, read (or taken from the previous reading) on first use; null when
  // it cannot be used.
  const LoaderCacheNames* CacheNames();
  // Whether a loaded object may answer to `name` (read again when objects came or went).
  bool MayBeLoadedAs(const std::string& name);

  const std::string cache_file_;
  const bool audited_;  // LD_AUDIT is set
  bool cache_looked_at_ = false;
  std::shared_ptr<const LoaderCacheNames> cache_names_;
  std::map<std::string, std::shared_ptr<DirectoryState>> directories_;
  std::unordered_set<std::string> loaded_names_;
  bool loaded_names_read_ = false;
  bool loaded_names_complete_ = false;
  unsigned long long loaded_adds_ = 0;
  unsigned long long loaded_subs_ = 0;
};

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_LOADER_SEARCH_H_
