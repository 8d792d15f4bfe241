// LoaderSearch (core/loader_search.h) against the real dynamic loader: every "certainly absent"
// it gives is checked by asking dlopen the same question, and every name the loader can find
// must get "maybe". The test runs with LD_LIBRARY_PATH naming a directory that holds
// libinfinirt_probe_in_path.so and a directory the test changes (tests/core_unit/CMakeLists.txt).
#include "loader_search.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <gtest/gtest.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <memory>
#include <set>
#include <string>
#include <vector>

namespace infinirt::core {
namespace {

constexpr char kInPath[] = "libinfinirt_probe_in_path.so";
constexpr char kProbeSoname[] = "libinfinirt_probe_soname.so.7";
constexpr char kProbeFileName[] = "libinfinirt_probe_file.so";

void* MainProgram() {
  static void* self = dlopen(nullptr, RTLD_NOW);
  return self;
}

// What dlopen answers for a name: "" when it loads (then it is closed again), else dlerror().
std::string LoaderAnswer(const std::string& name) {
  dlerror();
  void* handle = dlopen(name.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (handle != nullptr) {
    dlclose(handle);
    return "";
  }
  const char* error = dlerror();
  return error != nullptr ? error : "dlopen failed without a message";
}

std::string UniqueName(const std::string& stem) {
  return "libinfinirt_" + stem + "_" + std::to_string(getpid()) + ".so";
}

bool Exists(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0;
}

// The directories the loader searches for this program, as it reports them.
std::vector<std::string> SearchDirectories() {
  Dl_serinfo size{};
  EXPECT_EQ(dlinfo(MainProgram(), RTLD_DI_SERINFOSIZE, &size), 0);
  std::vector<char> buffer(size.dls_size);
  auto* info = reinterpret_cast<Dl_serinfo*>(buffer.data());
  *info = size;
  EXPECT_EQ(dlinfo(MainProgram(), RTLD_DI_SERINFO, info), 0);
  std::vector<std::string> directories;
  for (unsigned int i = 0; i < info->dls_cnt; ++i)
    directories.push_back(info->dls_serpath[i].dls_name);
  return directories;
}

// Where LoaderSearch can say "absent" at all: x86-64, and no directory of this program's search
// path holding a capability subdirectory (then every answer is rightly "maybe").
std::string WhyNothingCanBeAbsent() {
#if !defined(__x86_64__)
  return "LoaderSearch judges nothing on this architecture";
#else
  if (getenv("LD_AUDIT") != nullptr) return "LD_AUDIT is set";
  for (const std::string& directory : SearchDirectories()) {
    for (const std::string& subdirectory : LoaderSearch::CapabilitySubdirectories()) {
      if (Exists(directory + "/" + subdirectory)) {
        return directory + "/" + subdirectory + " exists: the loader searches it too";
      }
    }
  }
  return "";
#endif
}

#define REQUIRE_JUDGEABLE_SEARCH_PATH() \
  if (const std::string why = WhyNothingCanBeAbsent(); !why.empty()) GTEST_SKIP() << why

// --- The cache file -------------------------------------------------------------------------

// A cache file in glibc's format with the given names as keys.
std::string CacheWith(const std::vector<std::string>& names) {
  std::string header(48, '\0');
  std::memcpy(header.data(), "glibc-ld.so.cache1.1", 20);
  const uint32_t count = static_cast<uint32_t>(names.size());
  std::memcpy(header.data() + 20, &count, 4);
  std::string entries(24 * names.size(), '\0');
  std::string strings;
  const size_t strings_start = header.size() + entries.size();
  for (size_t i = 0; i < names.size(); ++i) {
    const uint32_t key = static_cast<uint32_t>(strings_start + strings.size());
    std::memcpy(entries.data() + 24 * i + 4, &key, 4);
    strings += names[i];
    strings += '\0';
  }
  return header + entries + strings;
}

std::optional<LoaderCacheNames> Parse(const std::string& data) {
  return ParseLoaderCache(data.data(), data.size());
}

TEST(LoaderCache, ParsesTheKeys) {
  const auto names = Parse(CacheWith({"libone.so.1", "libtwo.so"}));
  ASSERT_TRUE(names.has_value());
  EXPECT_EQ(*names, (LoaderCacheNames{"libone.so.1", "libtwo.so"}));
  EXPECT_EQ(Parse(CacheWith({})), LoaderCacheNames{});
}

TEST(LoaderCache, RefusesWhatIsNotGlibcsFormatOrInconsistent) {
  const std::string good = CacheWith({"libone.so.1"});
  EXPECT_FALSE(ParseLoaderCache(nullptr, 0).has_value());
  EXPECT_FALSE(Parse(good.substr(0, 47)).has_value()) << "a truncated header";
  std::string old_format = good;
  std::memcpy(old_format.data(), "ld.so-1.7.0", 11);
  EXPECT_FALSE(Parse(old_format).has_value()) << "the old format";
  std::string other_version = good;
  other_version[19] = '2';
  EXPECT_FALSE(Parse(other_version).has_value()) << "another version";
  std::string too_many = good;
  const uint32_t count = 3;
  std::memcpy(too_many.data() + 20, &count, 4);
  EXPECT_FALSE(Parse(too_many).has_value()) << "more entries than the file holds";
  std::string key_outside = good;
  const uint32_t far = 100000;
  std::memcpy(key_outside.data() + 48 + 4, &far, 4);
  EXPECT_FALSE(Parse(key_outside).has_value()) << "a key past the end";
  EXPECT_FALSE(Parse(good.substr(0, good.size() - 1)).has_value()) << "an unterminated key";
}

// The system's cache file holds exactly the names ldconfig -p lists from it.
TEST(LoaderCache, ReadsTheSystemCacheAsLdconfigListsIt) {
  std::ifstream file(LoaderSearch::kSystemCacheFile, std::ios::binary);
  if (!file) GTEST_SKIP() << LoaderSearch::kSystemCacheFile << " cannot be read";
  const std::string data((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const auto names = Parse(data);
  ASSERT_TRUE(names.has_value()) << "not in glibc's format";
  std::unique_ptr<FILE, int (*)(FILE*)> listing(
      popen("PATH=/sbin:/usr/sbin:$PATH ldconfig -p 2>/dev/null", "r"), pclose);
  ASSERT_NE(listing, nullptr);
  LoaderCacheNames listed;
  char line[4096];
  while (fgets(line, sizeof line, listing.get()) != nullptr) {
    if (line[0] != '\t') continue;  // the "N libs found in cache" line
    const char* name = line + 1;
    listed.emplace(name, std::strcspn(name, " "));
  }
  ASSERT_FALSE(listed.empty()) << "ldconfig -p listed nothing";
  EXPECT_EQ(*names, listed);
}

// --- The search -----------------------------------------------------------------------------

TEST(LoaderSearch, JudgesOnlyBareNamesForAKnownCaller) {
  LoaderSearch search;
  const std::string absent = UniqueName("never");
  EXPECT_FALSE(search.CertainlyAbsent(MainProgram(), ""));
  EXPECT_FALSE(search.CertainlyAbsent(MainProgram(), "some/dir/" + absent));
  EXPECT_FALSE(search.CertainlyAbsent(MainProgram(), "/nonexistent/" + absent));
  EXPECT_FALSE(search.CertainlyAbsent(nullptr, absent));
}

TEST(LoaderSearch, AbsentNameIsAbsentAndTheLoaderSaysSoInTheSameWords) {
  REQUIRE_JUDGEABLE_SEARCH_PATH();
  const std::string name = UniqueName("absent");
  LoaderSearch search;
  EXPECT_TRUE(search.CertainlyAbsent(MainProgram(), name));
  EXPECT_EQ(LoaderAnswer(name), LoaderSearch::NotFoundMessage(name));
}

TEST(LoaderSearch, NameInTheLoadersCacheIsNotAbsent) {
  std::ifstream file(LoaderSearch::kSystemCacheFile, std::ios::binary);
  const std::string data((std::istreambuf_iterator<char>(file)), std::istreambuf_iterator<char>());
  const auto names = Parse(data);
  if (!names || names->empty()) GTEST_SKIP() << "no usable system cache file";
  LoaderSearch search;
  for (const std::string& name : *names) {
    EXPECT_FALSE(search.CertainlyAbsent(MainProgram(), name)) << name;
  }
}

TEST(LoaderSearch, NameInALibraryPathDirectoryIsNotAbsent) {
  LoaderSearch search;
  EXPECT_FALSE(search.CertainlyAbsent(MainProgram(), kInPath));
  EXPECT_EQ(LoaderAnswer(kInPath), "") << "the loader finds it through LD_LIBRARY_PATH";
}

// A library loaded by path answers to its SONAME: the loader returns it for that name although
// no directory holds a file so named, and LoaderSearch must not call the name absent.
TEST(LoaderSearch, LoadedLibraryIsFoundByItsSoname) {
  REQUIRE_JUDGEABLE_SEARCH_PATH();
  ASSERT_EQ(dlopen(kProbeSoname, RTLD_NOW | RTLD_NOLOAD), nullptr) << "loaded before the test";
  EXPECT_TRUE(LoaderSearch().CertainlyAbsent(MainProgram(), kProbeSoname));
  EXPECT_EQ(LoaderAnswer(kProbeSoname), LoaderSearch::NotFoundMessage(kProbeSoname));

  void* probe = dlopen(PROBE_ELSEWHERE, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(probe, nullptr) << dlerror();
  LoaderSearch search;
  EXPECT_FALSE(search.CertainlyAbsent(MainProgram(), kProbeSoname));
  EXPECT_FALSE(search.CertainlyAbsent(MainProgram(), kProbeFileName));
  EXPECT_EQ(LoaderAnswer(kProbeSoname), "") << "the loader matches the loaded SONAME";
  dlclose(probe);
  // Unloaded again: the same search object sees the loader's counts change.
  EXPECT_TRUE(search.CertainlyAbsent(MainProgram(), kProbeSoname));
}

TEST(LoaderSearch, UnusableCacheFileMeansMaybe) {
  const std::string name = UniqueName("uncached");
  EXPECT_FALSE(LoaderSearch("/nonexistent/ld.so.cache").CertainlyAbsent(MainProgram(), name));
  const std::string garbage = ::testing::TempDir() + "/garbage_ld.so.cache";
  std::ofstream(garbage) << "not a cache file at all, but long enough to hold a header......";
  EXPECT_FALSE(LoaderSearch(garbage).CertainlyAbsent(MainProgram(), name));
  std::remove(garbage.c_str());
}

// What was learnt of a directory is kept only while the directory is unchanged: a file added to
// a directory whose absence was remembered is seen by the next search.
TEST(LoaderSearch, FileAddedToARememberedDirectoryIsSeen) {
  REQUIRE_JUDGEABLE_SEARCH_PATH();
  const std::string directory = CHANGING_DIRECTORY;
  mkdir(directory.c_str(), 0755);
  const std::string name = UniqueName("added");
  const std::string path = directory + "/" + name;
  std::remove(path.c_str());
  // Last changed a minute ago: settled, so what the search learns of it is kept.
  struct timespec times[2];
  clock_gettime(CLOCK_REALTIME, &times[0]);
  times[0].tv_sec -= 60;
  times[1] = times[0];
  ASSERT_EQ(utimensat(AT_FDCWD, directory.c_str(), times, 0), 0);
  EXPECT_TRUE(LoaderSearch().CertainlyAbsent(MainProgram(), name));
  EXPECT_TRUE(LoaderSearch().CertainlyAbsent(MainProgram(), name)) << "from what was kept";

  std::ofstream(path) << "not a library; its presence is enough";
  times[0].tv_sec += 30;  // as if changed half a minute ago: settled, at another time
  times[1] = times[0];
  ASSERT_EQ(utimensat(AT_FDCWD, directory.c_str(), times, 0), 0);
  EXPECT_FALSE(LoaderSearch().CertainlyAbsent(MainProgram(), name)) << "changed since kept";
  ASSERT_EQ(utimensat(AT_FDCWD, directory.c_str(), nullptr, 0), 0);  // changed just now
  EXPECT_FALSE(LoaderSearch().CertainlyAbsent(MainProgram(), name)) << "not settled";
  EXPECT_NE(LoaderAnswer(name), LoaderSearch::NotFoundMessage(name))
      << "the loader finds the file too (and refuses it as no ELF file)";
  std::remove(path.c_str());
}

}  // namespace
}  // namespace infinirt::core
