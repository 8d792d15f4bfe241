// infinirtOpenExtensionLibrary: a library that extends InfiniRT (an operator backend) is found on
// the plugins' search path and opened after the plugins' checks. Each layout is built at run time
// in a fresh directory from a copy of a real shared object (the fake_nvidia plugin).
#include <dlfcn.h>

#include <fstream>
#include <memory>
#include <string>

#include "file_support.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

constexpr char kProbe[] = "libinfiniop_probe.so";

class ExtensionLibrary : public RuntimeTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    scratch_ = std::make_unique<TempDir>(FAKE_PLUGIN_ROOT, "extension");
    ASSERT_FALSE(scratch_->path().empty());
  }
  void TearDown() override {
    RuntimeTest::TearDown();
    scratch_.reset();
  }

  // A directory with a copy of a real shared object named kProbe in it.
  std::string DirectoryWithProbe(const std::string& name, mode_t mode) {
    const std::string directory = *scratch_ / name;
    EXPECT_TRUE(MakeDirectory(directory, mode));
    EXPECT_TRUE(CopyFile(PluginFile("accel", "fake_nvidia"), directory + "/" + kProbe, 0644));
    return directory;
  }

  std::unique_ptr<TempDir> scratch_;
};

TEST_F(ExtensionLibrary, IsFoundOnThePluginSearchPathAndOpened) {
  const std::string directory = DirectoryWithProbe("plugins", 0755);
  ScopedEnv search("INFINIRT_PLUGIN_PATH", CpuPlugin() + ":" + directory);
  void* handle = nullptr;
  infinirtBackendProp prop{};
  ASSERT_EQ(infinirtOpenExtensionLibrary(kProbe, &handle, &prop), infinirtSuccess) << prop.reason;
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(prop.status, infinirtBackendLoaded);
  EXPECT_EQ(std::string(prop.path), RealPath(directory + "/" + kProbe));
  EXPECT_NE(dlsym(handle, "infinirtPluginGetTable"), nullptr);  // the file's own symbol
  dlclose(handle);
}

TEST_F(ExtensionLibrary, AbsentIsFileNotFoundWithWhereItWasLookedFor) {
  const std::string directory = *scratch_ / "empty";
  ASSERT_TRUE(MakeDirectory(directory, 0755));
  ScopedEnv search("INFINIRT_PLUGIN_PATH", CpuPlugin() + ":" + directory);
  void* handle = reinterpret_cast<void*>(1);
  infinirtBackendProp prop{};
  EXPECT_EQ(infinirtOpenExtensionLibrary(kProbe, &handle, &prop), infinirtErrorFileNotFound);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(prop.status, infinirtBackendNotFound);
  EXPECT_NE(std::string(prop.reason).find(directory), std::string::npos) << prop.reason;
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorFileNotFound);
}

TEST_F(ExtensionLibrary, InADirectoryOthersMayWriteItIsRefusedUnlessOptedIn) {
  const std::string directory = DirectoryWithProbe("open", 0777);
  ScopedEnv search("INFINIRT_PLUGIN_PATH", CpuPlugin() + ":" + directory);
  void* handle = nullptr;
  infinirtBackendProp prop{};
  EXPECT_EQ(infinirtOpenExtensionLibrary(kProbe, &handle, &prop),
            infinirtErrorSharedObjectInitFailed);
  EXPECT_EQ(handle, nullptr);
  EXPECT_EQ(prop.status, infinirtBackendInsecure);
  EXPECT_NE(std::string(prop.reason).find(directory), std::string::npos) << prop.reason;

  ScopedEnv opt_in("INFINIRT_ALLOW_INSECURE_PLUGINS", "1");
  ASSERT_EQ(infinirtOpenExtensionLibrary(kProbe, &handle, &prop), infinirtSuccess) << prop.reason;
  EXPECT_EQ(prop.status, infinirtBackendLoaded);
  dlclose(handle);
}

TEST_F(ExtensionLibrary, AFileThatIsNotASharedObjectIsRefusedBeforeDlopen) {
  const std::string directory = *scratch_ / "text";
  ASSERT_TRUE(MakeDirectory(directory, 0755));
  std::ofstream(directory + "/" + kProbe) << "not a shared object\n";
  ScopedEnv search("INFINIRT_PLUGIN_PATH", directory);
  void* handle = nullptr;
  infinirtBackendProp prop{};
  EXPECT_EQ(infinirtOpenExtensionLibrary(kProbe, &handle, &prop),
            infinirtErrorSharedObjectInitFailed);
  EXPECT_EQ(prop.status, infinirtBackendDlopenFailed) << prop.reason;
  EXPECT_EQ(handle, nullptr);
  infinirtGetLastError();
}

TEST_F(ExtensionLibrary, NamesThatAreNotPlainLibraryFileNamesAreInvalid) {
  void* handle = nullptr;
  infinirtBackendProp prop{};
  for (const char* name : {"", "x.so", "libx.dylib", "../libx.so", "lib/x.so", "libx.so/.."}) {
    EXPECT_EQ(infinirtOpenExtensionLibrary(name, &handle, &prop), infinirtErrorInvalidValue)
        << name;
  }
  EXPECT_EQ(infinirtOpenExtensionLibrary(nullptr, &handle, &prop), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtOpenExtensionLibrary(kProbe, nullptr, &prop), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtOpenExtensionLibrary(kProbe, &handle, nullptr), infinirtErrorInvalidValue);
  infinirtGetLastError();
}

}  // namespace
}  // namespace infinirt::loader_test
