// Plugins the loader must reject, each reported in the listing with its status and reason while
// the runtime goes on with the plugins that work; and no plugin at all.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "infinirt.h"
#include "infinirt_plugin.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

// --- INFINIRT_PLUGIN_PATH names an empty or a missing directory ---------------------------

class NoPlugin : public RuntimeTest {
 protected:
  // The one directory the scenario searches.
  static std::string Searched() {
    const char* path = std::getenv("INFINIRT_PLUGIN_PATH");
    return path ? path : "(INFINIRT_PLUGIN_PATH unset)";
  }
};

TEST_F(NoPlugin, InitAndDeviceCountAnswerNoDevice) {
  EXPECT_EQ(infinirtInit(), infinirtErrorNoDevice);
  int count = -1;
  EXPECT_EQ(infinirtGetDeviceCount(&count), infinirtErrorNoDevice);
  EXPECT_EQ(count, 0);
  void* pointer = nullptr;
  EXPECT_EQ(infinirtMalloc(&pointer, 64), infinirtErrorNoDevice);
}

// One entry per device type of the header's list; Kunlun, which has no plugin in this build, is
// "not built" rather than "not found".
TEST_F(NoPlugin, ListingHasNotFoundEntriesNamingTheDirectorySearched) {
  const auto listing = Listing();
  ASSERT_EQ(listing.size(), static_cast<size_t>(INFINI_DEVICE_TYPE_COUNT));
  for (const infinirtBackendProp& entry : listing) {
    SCOPED_TRACE(entry.name);
    const bool built = std::string(entry.name) != "kunlun";
    EXPECT_EQ(entry.status, built ? infinirtBackendNotFound : infinirtBackendNotBuilt);
    EXPECT_TRUE(Contains(entry.reason, Searched())) << entry.reason;
    EXPECT_EQ(entry.deviceCount, 0);
    EXPECT_STREQ(entry.path, "");
  }
  const auto cpu = OnlyEntryNamed("cpu");
  ASSERT_TRUE(cpu);
  EXPECT_TRUE(Contains(cpu->reason, "libinfinirt_cpu.so")) << cpu->reason;
}

TEST_F(NoPlugin, DeviceTypeWithoutAPluginInThisBuildIsNotBuiltNotMissing) {
  const auto kunlun = OnlyEntryNamed("kunlun");
  ASSERT_TRUE(kunlun);
  EXPECT_EQ(kunlun->status, infinirtBackendNotBuilt);
  EXPECT_TRUE(Contains(kunlun->reason, "this build of InfiniRT has no kunlun plugin"))
      << kunlun->reason;
  EXPECT_FALSE(Contains(kunlun->reason, "not found")) << kunlun->reason;
}

TEST_F(NoPlugin, ErrorLogNamesTheDirectoriesSearched) {
  const std::string log = CaptureStderrOf([] { infinirtInit(); });
  EXPECT_TRUE(HasLineWith(log, {"[infinirt]", "[error]", Searched()})) << log;
}

TEST_F(NoPlugin, MissingFileNamedInThePathIsListedAsNotFound) {
  const std::string ghost = Searched() + "/libinfinirt_ghost.so";
  ScopedEnv path("INFINIRT_PLUGIN_PATH", ghost);
  const auto entry = OnlyEntryNamed("ghost");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendNotFound);
  EXPECT_EQ(entry->path, ghost);
  EXPECT_TRUE(Contains(entry->reason, "INFINIRT_PLUGIN_PATH")) << entry->reason;
}

TEST_F(NoPlugin, RuntimeWorksOnceAPluginIsOnThePath) {
  {
    ScopedEnv path("INFINIRT_PLUGIN_PATH", Searched() + ":" + CpuPlugin());
    ExpectCpuStillWorks();
    ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  }
  EXPECT_EQ(infinirtInit(), infinirtErrorNoDevice);
}

// --- A file named like a plugin that is not a shared library ------------------------------

using NotALibrary = RuntimeTest;

TEST_F(NotALibrary, RejectedBeforeDlopenAsNotAnElfFile) {
  const std::string file = PluginFile("notelf", "notelf");
  const auto entry = OnlyEntryNamed("notelf");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendDlopenFailed);
  EXPECT_EQ(entry->path, RealPath(file));
  EXPECT_STREQ(entry->reason, "not an ELF file: it does not start with the ELF magic \\x7fELF");
  EXPECT_EQ(entry->deviceCount, 0);
  EXPECT_EQ(entry->abiMajor, -1);
}

TEST_F(NotALibrary, OtherPluginsStillLoad) { ExpectCpuStillWorks(); }

// --- A valid plugin file that dlopen refuses: a library it needs is missing ---------------

using MissingDependency = RuntimeTest;

TEST_F(MissingDependency, ReportedAsDlopenFailedWithDlerrorText) {
  const std::string file = PluginFile("missing_dep", "missing_dependency");
  // What dlopen says about this file here, to compare with the listing's reason.
  dlerror();
  ASSERT_EQ(dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL), nullptr);
  const std::string expected = dlerror();
  const auto entry = OnlyEntryNamed("missing_dependency");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendDlopenFailed);
  EXPECT_EQ(entry->path, RealPath(file));
  EXPECT_TRUE(Contains(entry->reason, "libfake_dependency.so")) << entry->reason;
  EXPECT_EQ(std::string(entry->reason), expected);
  EXPECT_EQ(entry->deviceCount, 0);
}

TEST_F(MissingDependency, OtherPluginsStillLoad) { ExpectCpuStillWorks(); }

// --- A shared library without infinirtPluginGetTable --------------------------------------

using NoEntryPoint = RuntimeTest;

TEST_F(NoEntryPoint, ReportedAsNoEntryPoint) {
  const auto entry = OnlyEntryNamed("noentry");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendNoEntryPoint);
  EXPECT_EQ(entry->path, RealPath(PluginFile("noentry", "noentry")));
  EXPECT_TRUE(Contains(entry->reason, INFINIRT_PLUGIN_ENTRY_SYMBOL)) << entry->reason;
  EXPECT_EQ(entry->deviceCount, 0);
}

TEST_F(NoEntryPoint, OtherPluginsStillLoad) { ExpectCpuStillWorks(); }

// --- ABI major versions the core does not speak -------------------------------------------

using AbiTooOld = RuntimeTest;

TEST_F(AbiTooOld, ReportedWithThePluginsAbiVersion) {
  const auto entry = OnlyEntryNamed("abi_old");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendAbiTooOld);
  EXPECT_EQ(entry->abiMajor, INFINIRT_PLUGIN_ABI_MAJOR - 1);
  EXPECT_EQ(entry->abiMinor, INFINIRT_PLUGIN_ABI_MINOR);
  const std::string version = "plugin ABI " + std::to_string(INFINIRT_PLUGIN_ABI_MAJOR - 1) + ".";
  EXPECT_TRUE(Contains(entry->reason, version)) << entry->reason;
  EXPECT_EQ(entry->deviceCount, 0);
}

TEST_F(AbiTooOld, OtherPluginsStillLoad) { ExpectCpuStillWorks(); }

using AbiTooNew = RuntimeTest;

TEST_F(AbiTooNew, ReportedWithThePluginsAbiVersion) {
  const auto entry = OnlyEntryNamed("abi_new");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendAbiTooNew);
  EXPECT_EQ(entry->abiMajor, INFINIRT_PLUGIN_ABI_MAJOR + 1);
  const std::string version = "plugin ABI " + std::to_string(INFINIRT_PLUGIN_ABI_MAJOR + 1) + ".";
  EXPECT_TRUE(Contains(entry->reason, version)) << entry->reason;
  EXPECT_EQ(entry->deviceCount, 0);
}

TEST_F(AbiTooNew, OtherPluginsStillLoad) { ExpectCpuStillWorks(); }

// --- A device type this core does not know (a plugin made for a newer InfiniRT) ------------

using UnknownDeviceType = RuntimeTest;

TEST_F(UnknownDeviceType, ListedWithItsOwnStatusAndTheTypeItServes) {
  const auto entry = OnlyEntryNamed("future_type");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendUnknownDeviceType);
  EXPECT_EQ(entry->path, RealPath(PluginFile("future_type", "future_type")));
  const std::string type = "device type " + std::to_string(INFINI_DEVICE_TYPE_COUNT);
  EXPECT_TRUE(Contains(entry->reason, type)) << entry->reason;
  EXPECT_TRUE(Contains(entry->reason, "newer InfiniRT")) << entry->reason;
  EXPECT_EQ(entry->deviceType, INFINI_DEVICE_TYPE_COUNT);
  EXPECT_EQ(entry->abiMajor, INFINIRT_PLUGIN_ABI_MAJOR);
  EXPECT_EQ(entry->deviceCount, 0);
}

TEST_F(UnknownDeviceType, OtherPluginsStillLoad) { ExpectCpuStillWorks(); }

// --- Initialize fails ---------------------------------------------------------------------

using InitFailed = RuntimeTest;

TEST_F(InitFailed, ReportedWithTheErrorInitializeReturned) {
  const auto entry = OnlyEntryNamed("init_fails");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendInitFailed);
  EXPECT_TRUE(Contains(entry->reason, "infinirtErrorInitializationError")) << entry->reason;
  EXPECT_EQ(entry->deviceType, INFINI_DEVICE_HYGON);
  EXPECT_EQ(entry->deviceCount, 0);
}

TEST_F(InitFailed, ContributesNoDevice) {
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
  EXPECT_EQ(counts[INFINI_DEVICE_HYGON], 0);
  int device = -1;
  EXPECT_EQ(infinirtDeviceGetOrdinal(&device, INFINI_DEVICE_HYGON, 0), infinirtErrorInvalidDevice);
}

TEST_F(InitFailed, OtherPluginsStillLoad) { ExpectCpuStillWorks(); }

}  // namespace
}  // namespace infinirt::loader_test
