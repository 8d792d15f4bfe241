// OpenLibrary (plugins/common/vendor_library.h): a plugin takes the core's word that a bare name
// cannot be found only from a host table large enough to hold library_certainly_absent (plugin
// ABI 1.1), and then reports what dlopen would have said; otherwise it asks dlopen.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstddef>
#include <string>
#include <vector>

#include "vendor_library.h"

namespace infinirt::plugin {
namespace {

std::vector<std::string> asked;  // the names the fake core was asked about

int SaysEverythingIsAbsent(const char* name) {
  asked.emplace_back(name);
  return 1;
}

// A host table as a core of the given size would hand over, whose library_certainly_absent
// calls everything absent.
infinirtPluginHost HostOfSize(size_t size) {
  infinirtPluginHost host{};
  host.struct_size = size;
  host.abi_major = INFINIRT_PLUGIN_ABI_MAJOR;
  host.abi_minor = size == sizeof(infinirtPluginHost) ? INFINIRT_PLUGIN_ABI_MINOR : 0;
  host.config_json = "{}";
  host.library_certainly_absent = &SaysEverythingIsAbsent;
  return host;
}

void* Open(const infinirtPluginHost* host, const std::string& name, std::string* error) {
  PluginLog log("test");
  if (host != nullptr) log.Attach(host);
  return OpenLibrary(name, RTLD_NOW | RTLD_LOCAL, log, error);
}

TEST(OpenLibrary, TakesTheCoresWordForABareName) {
  asked.clear();
  const infinirtPluginHost host = HostOfSize(sizeof(infinirtPluginHost));
  std::string error;
  // libc.so.6 is there, but this core says otherwise: the plugin does not search.
  EXPECT_EQ(Open(&host, "libc.so.6", &error), nullptr);
  EXPECT_EQ(error, "libc.so.6: cannot open shared object file: No such file or directory");
  EXPECT_EQ(asked, std::vector<std::string>{"libc.so.6"});
}

TEST(OpenLibrary, AsksDlopenForPaths) {
  asked.clear();
  const infinirtPluginHost host = HostOfSize(sizeof(infinirtPluginHost));
  std::string error;
  EXPECT_EQ(Open(&host, "/nonexistent/libinfinirt_none.so", &error), nullptr);
  EXPECT_EQ(error,
            "/nonexistent/libinfinirt_none.so: cannot open shared object file: No such file or "
            "directory");
  EXPECT_TRUE(asked.empty()) << "a path is not the core's to judge";
}

TEST(OpenLibrary, AsksDlopenWhenTheHostTableIsFromAnOlderCore) {
  asked.clear();
  const infinirtPluginHost older =
      HostOfSize(offsetof(infinirtPluginHost, library_certainly_absent));  // ABI 1.0's size
  std::string error;
  void* libc = Open(&older, "libc.so.6", &error);
  EXPECT_NE(libc, nullptr) << error;
  if (libc != nullptr) dlclose(libc);
  EXPECT_TRUE(asked.empty()) << "the field lies beyond the table an ABI 1.0 core hands over";
}

TEST(OpenLibrary, AsksDlopenBeforeInitialize) {
  std::string error;
  void* libc = Open(nullptr, "libc.so.6", &error);
  EXPECT_NE(libc, nullptr) << error;
  if (libc != nullptr) dlclose(libc);
  EXPECT_EQ(Open(nullptr, "libinfinirt_none_at_all.so", &error), nullptr);
  EXPECT_EQ(error,
            "libinfinirt_none_at_all.so: cannot open shared object file: No such file or "
            "directory");
}

}  // namespace
}  // namespace infinirt::plugin
