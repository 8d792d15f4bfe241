#include "loader_search.h"

#include <dlfcn.h>
#include <elf.h>
#include <fcntl.h>
#include <link.h>
#include <stdlib.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstddef>
#include <cstdint>
#include <cstring>
#include <ctime>
#include <iterator>
#include <mutex>
#include <vector>

namespace infinirt::core {

namespace {

// glibc's cache file since 2.32 (elf/dl-cache.h): a 48-byte header, then nlibs entries of 24
// bytes whose key and value are offsets of NUL-terminated strings from the start of the header.
constexpr char kCacheMagic[] = "glibc-ld.so.cache";
constexpr char kCacheVersion[] = "1.1";
constexpr size_t kCacheHeaderSize = 48;
constexpr size_t kCacheEntrySize = 24;
constexpr size_t kCacheCountOffset = 20;    // uint32_t nlibs
constexpr size_t kCacheEntryKeyOffset = 4;  // after int32_t flags

// The subdirectories glibc's loader tries inside each directory of its search path on x86-64:
// glibc-hwcaps/<level>/ (2.33 and later), and the legacy platform and capability directories
// (2.36 and earlier; tls/ combined with the others). A directory holding any of them is not
// judged: the loader may find the library there.
constexpr const char* kCapabilitySubdirectories[] = {"glibc-hwcaps", "tls",      "x86_64",
                                                     "haswell",      "xeon_phi", "avx512_1"};

bool NoSuchFile(int error) { return error == ENOENT || error == ENOTDIR; }

uint32_t ReadU32(const char* at) {
  uint32_t value;
  std::memcpy(&value, at, sizeof value);
  return value;
}

// What tells one version of a file or directory from another: a file replaced (ldconfig
// writes a new cache file) has another inode, one changed in place (an entry added to a
// directory) another modification time.
struct FileIdentity {
  dev_t device = 0;
  ino_t inode = 0;
  off_t size = -1;
  struct timespec modified {};

  static FileIdentity Of(const struct stat& info) {
    return {info.st_dev, info.st_ino, info.st_size, info.st_mtim};
  }
  bool operator==(const FileIdentity& other) const {
    return device == other.device && inode == other.inode && size == other.size &&
           modified.tv_sec == other.modified.tv_sec && modified.tv_nsec == other.modified.tv_nsec;
  }
};

// Whether a path may name something: true unless stat says there is no such file.
bool MayExist(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 || !NoSuchFile(errno);
}

std::shared_ptr<const LoaderCacheNames> ReadCacheFile(const std::string& path, off_t size) {
  const int fd = open(path.c_str(), O_RDONLY | O_CLOEXEC);
  if (fd < 0) return nullptr;
  std::string data(static_cast<size_t>(size), '\0');
  size_t done = 0;
  while (done < data.size()) {
    const ssize_t got = pread(fd, data.data() + done, data.size() - done, done);
    if (got < 0 && errno == EINTR) continue;
    if (got <= 0) break;
    done += static_cast<size_t>(got);
  }
  close(fd);
  if (done != data.size()) return nullptr;
  std::optional<LoaderCacheNames> names = ParseLoaderCache(data.data(), data.size());
  if (!names) return nullptr;
  return std::make_shared<const LoaderCacheNames>(std::move(*names));
}

// Where in memory the string table of a loaded object is: glibc adds the load address to the
// dynamic section's DT_STRTAB in place, except where that section is read-only (the vDSO). The
// answer must lie in one of the object's loadable segments; nullptr when neither reading does.
const char* StringTable(const dl_phdr_info& info, ElfW(Addr) value) {
  auto inside = [&](ElfW(Addr) address) {
    for (int i = 0; i < info.dlpi_phnum; ++i) {
      const ElfW(Phdr)& segment = info.dlpi_phdr[i];
      const ElfW(Addr) start = info.dlpi_addr + segment.p_vaddr;
      if (segment.p_type == PT_LOAD && address - start < segment.p_memsz) return true;
    }
    return false;
  };
  if (inside(value)) return reinterpret_cast<const char*>(value);
  if (inside(info.dlpi_addr + value)) return reinterpret_cast<const char*>(info.dlpi_addr + value);
  return nullptr;
}

// The names a loaded object answers to for the loader: its file name, and its SONAME. False
// when its SONAME cannot be read.
bool AddNamesOf(const dl_phdr_info& info, std::unordered_set<std::string>* names) {
  if (info.dlpi_name != nullptr && info.dlpi_name[0] != '\0') {
    const char* slash = std::strrchr(info.dlpi_name, '/');
    names->emplace(slash != nullptr ? slash + 1 : info.dlpi_name);
  }
  const ElfW(Dyn)* dynamic = nullptr;
  for (int i = 0; i < info.dlpi_phnum; ++i) {
    if (info.dlpi_phdr[i].p_type == PT_DYNAMIC) {
      dynamic = reinterpret_cast<const ElfW(Dyn)*>(info.dlpi_addr + info.dlpi_phdr[i].p_vaddr);
    }
  }
  if (dynamic == nullptr) return true;
  ElfW(Addr) strtab = 0;
  bool has_soname = false;
  ElfW(Xword) soname = 0;
  for (const ElfW(Dyn)* entry = dynamic; entry->d_tag != DT_NULL; ++entry) {
    if (entry->d_tag == DT_STRTAB) strtab = entry->d_un.d_ptr;
    if (entry->d_tag == DT_SONAME) {
      has_soname = true;
      soname = entry->d_un.d_val;
    }
  }
  if (!has_soname) return true;
  const char* strings = StringTable(info, strtab);
  if (strings == nullptr) return false;
  names->emplace(strings + soname);
  return true;
}

// The loader's count of objects loaded and unloaded so far: while both stay the same, so does
// the set of loaded objects.
struct LoadCounts {
  unsigned long long adds = 0;
  unsigned long long subs = 0;
  bool known = false;
};

int ReadLoadCounts(dl_phdr_info* info, size_t size, void* data) {
  auto* counts = static_cast<LoadCounts*>(data);
  if (size >= offsetof(dl_phdr_info, dlpi_subs) + sizeof(info->dlpi_subs)) {
    counts->adds = info->dlpi_adds;
    counts->subs = info->dlpi_subs;
    counts->known = true;
  }
  return 1;  // the first object carries the counts
}

struct LoadedNames {
  std::unordered_set<std::string>* names;
  bool complete = true;
};

int CollectLoadedNames(dl_phdr_info* info, size_t, void* data) {
  auto* loaded = static_cast<LoadedNames*>(data);
  if (!AddNamesOf(*info, loaded->names)) loaded->complete = false;
  return 0;
}

// Whether a directory holds a subdirectory the loader also searches (or cannot be read).
bool HasCapabilitySubdirectory(const std::string& directory) {
  for (const char* subdirectory : kCapabilitySubdirectories) {
    if (MayExist(directory + "/" + subdirectory)) return true;
  }
  return false;
}

// Whether a directory last changed (at `modified`) a second or more ago: any change from now on
// gives it a later modification time.
bool Settled(const struct timespec& modified) {
  struct timespec now {};
  clock_gettime(CLOCK_REALTIME, &now);
  return now.tv_sec - modified.tv_sec > 1 ||
         (now.tv_sec - modified.tv_sec == 1 && now.tv_nsec >= modified.tv_nsec);
}

// The directories the loader searches for a bare name asked for by `caller`, in order.
std::optional<std::vector<std::string>> SearchDirectories(void* caller) {
  Dl_serinfo size_info;
  if (dlinfo(caller, RTLD_DI_SERINFOSIZE, &size_info) != 0) return std::nullopt;
  std::vector<char> buffer(size_info.dls_size);
  auto* info = reinterpret_cast<Dl_serinfo*>(buffer.data());
  *info = size_info;  // RTLD_DI_SERINFO reads dls_size and dls_cnt back
  if (dlinfo(caller, RTLD_DI_SERINFO, info) != 0) return std::nullopt;
  std::vector<std::string> directories;
  for (unsigned int i = 0; i < info->dls_cnt; ++i) {
    directories.emplace_back(info->dls_serpath[i].dls_name);
  }
  return directories;
}

}  // namespace

// What was learnt of a settled directory, kept for later initialisations while its identity
// (modification time included) stays the same.
struct LoaderSearch::DirectoryMemo {
  FileIdentity identity;
  bool certain = false;                    // no capability subdirectory
  std::unordered_set<std::string> absent;  // names certainly not in it
};

namespace {

// What this process keeps between initialisations: the last cache file read, and what was
// learnt of each settled directory.
struct Kept {
  std::mutex mutex;
  std::string cache_path;
  FileIdentity cache_identity;
  std::shared_ptr<const LoaderCacheNames> cache_names;  // null: the file could not be used
  std::map<std::string, std::shared_ptr<LoaderSearch::DirectoryMemo>> directories;
};

Kept& TheKept() {
  // Never destroyed: an initialisation may run while static destructors run at exit.
  static Kept& kept = *new Kept;
  return kept;
}

}  // namespace

std::optional<LoaderCacheNames> ParseLoaderCache(const char* data, size_t size) {
  if (data == nullptr || size < kCacheHeaderSize) return std::nullopt;
  constexpr size_t magic_length = sizeof kCacheMagic - 1;
  if (std::memcmp(data, kCacheMagic, magic_length) != 0 ||
      std::memcmp(data + magic_length, kCacheVersion, sizeof kCacheVersion - 1) != 0) {
    return std::nullopt;
  }
  const size_t count = ReadU32(data + kCacheCountOffset);
  if (count > (size - kCacheHeaderSize) / kCacheEntrySize) return std::nullopt;
  LoaderCacheNames names;
  names.reserve(count);
  for (size_t i = 0; i < count; ++i) {
    const size_t key =
        ReadU32(data + kCacheHeaderSize + i * kCacheEntrySize + kCacheEntryKeyOffset);
    if (key >= size) return std::nullopt;
    const void* end = std::memchr(data + key, '\0', size - key);
    if (end == nullptr) return std::nullopt;
    names.emplace(data + key, static_cast<const char*>(end) - (data + key));
  }
  return names;
}

LoaderSearch::LoaderSearch(std::string cache_file)
    // The loader's own variable, read only to know whether it runs audit modules.
    : cache_file_(std::move(cache_file)), audited_(getenv("LD_AUDIT") != nullptr) {}

std::string LoaderSearch::NotFoundMessage(const std::string& name) {
  return name + ": cannot open shared object file: No such file or directory";
}

const LoaderCacheNames* LoaderSearch::CacheNames() {
  if (cache_looked_at_) return cache_names_.get();
  cache_looked_at_ = true;
  struct stat info {};
  if (stat(cache_file_.c_str(), &info) != 0 || !S_ISREG(info.st_mode)) return nullptr;
  const FileIdentity identity = FileIdentity::Of(info);
  Kept& kept = TheKept();
  std::lock_guard<std::mutex> lock(kept.mutex);
  if (kept.cache_path != cache_file_ || !(kept.cache_identity == identity)) {
    kept.cache_path = cache_file_;
    kept.cache_identity = identity;
    kept.cache_names = ReadCacheFile(cache_file_, info.st_size);
  }
  cache_names_ = kept.cache_names;
  return cache_names_.get();
}

const std::vector<std::string>& LoaderSearch::CapabilitySubdirectories() {
  static const std::vector<std::string>& names = *new std::vector<std::string>(
      std::begin(kCapabilitySubdirectories), std::end(kCapabilitySubdirectories));
  return names;
}

struct LoaderSearch::DirectoryState {
  std::string path;
  bool exists = false;   // a directory (else the loader finds nothing in it)
  bool certain = false;  // missing, or present without capability subdirectories
  std::pair<dev_t, ino_t> identity{};
  std::shared_ptr<DirectoryMemo> memo;  // null while the directory is not settled
};

LoaderSearch::DirectoryState& LoaderSearch::LookAt(const std::string& directory) {
  std::shared_ptr<DirectoryState>& slot = directories_[directory];
  if (slot) return *slot;
  slot = std::make_shared<DirectoryState>();
  DirectoryState& state = *slot;
  state.path = directory;
  struct stat info {};
  if (stat(directory.c_str(), &info) != 0) {
    state.certain = NoSuchFile(errno);  // missing: the loader finds nothing in it either
    return state;
  }
  state.certain = true;
  if (!S_ISDIR(info.st_mode)) return state;
  state.exists = true;
  state.identity = {info.st_dev, info.st_ino};
  const bool settled = Settled(info.st_mtim);
  const FileIdentity identity = FileIdentity::Of(info);
  Kept& kept = TheKept();
  {
    std::lock_guard<std::mutex> lock(kept.mutex);
    std::shared_ptr<DirectoryMemo>& memo = kept.directories[directory];
    if (settled && memo && memo->identity == identity) {
      state.certain = memo->certain;
      state.memo = memo;
      return state;
    }
    memo.reset();
  }
  state.certain = !HasCapabilitySubdirectory(directory);
  if (settled) {
    auto memo = std::make_shared<DirectoryMemo>();
    memo->identity = identity;
    memo->certain = state.certain;
    std::lock_guard<std::mutex> lock(kept.mutex);
    kept.directories[directory] = memo;
    state.memo = memo;
  }
  return state;
}

bool LoaderSearch::CertainlyNotIn(DirectoryState& directory, const std::string& name) {
  if (!directory.certain) return false;
  if (!directory.exists) return true;
  std::mutex& kept = TheKept().mutex;
  if (directory.memo) {
    std::lock_guard<std::mutex> lock(kept);
    if (directory.memo->absent.count(name) != 0) return true;
  }
  if (MayExist(directory.path + "/" + name)) return false;
  if (directory.memo) {
    std::lock_guard<std::mutex> lock(kept);
    directory.memo->absent.insert(name);
  }
  return true;
}

bool LoaderSearch::MayBeLoadedAs(const std::string& name) {
  LoadCounts counts;
  dl_iterate_phdr(&ReadLoadCounts, &counts);
  if (!counts.known || counts.adds != loaded_adds_ || counts.subs != loaded_subs_ ||
      !loaded_names_read_) {
    loaded_names_.clear();
    LoadedNames loaded{&loaded_names_};
    dl_iterate_phdr(&CollectLoadedNames, &loaded);
    loaded_names_complete_ = loaded.complete;
    loaded_names_read_ = counts.known;  // without the counts, read them again each time
    loaded_adds_ = counts.adds;
    loaded_subs_ = counts.subs;
  }
  return !loaded_names_complete_ || loaded_names_.count(name) != 0;
}

bool LoaderSearch::CertainlyAbsent(void* caller, const std::string& name) {
#if !defined(__x86_64__)
  (void)caller;
  (void)name;
  return false;
#else
  if (audited_ || caller == nullptr || name.empty() || name.find('/') != std::string::npos) {
    return false;
  }
  const LoaderCacheNames* cached = CacheNames();
  if (cached == nullptr || cached->count(name) != 0) return false;
  if (MayBeLoadedAs(name)) return false;
  const std::optional<std::vector<std::string>> directories = SearchDirectories(caller);
  if (!directories) return false;
  std::set<std::pair<dev_t, ino_t>> seen;  // a directory reached by two paths is read once
  for (const std::string& path : *directories) {
    DirectoryState& directory = LookAt(path);
    if (directory.exists && !seen.insert(directory.identity).second) continue;
    if (!CertainlyNotIn(directory, name)) return false;
  }
  return true;
#endif
}

}  // namespace infinirt::core
