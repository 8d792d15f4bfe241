// The same plugin reached more than once: it loads once, its devices count once, and every
// later sighting is reported as a duplicate.
#include <gtest/gtest.h>

#include <string>

#include "infinirt.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

// accel/ holds fake_nvidia (2 NVIDIA devices) and fake_ascend (1 ASCEND device); with the CPU
// plugin that is 4 devices, however often the files are reached.
void ExpectAcceleratorsCountedOnce() {
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
  EXPECT_EQ(counts[INFINI_DEVICE_NVIDIA], 2);
  EXPECT_EQ(counts[INFINI_DEVICE_ASCEND], 1);
  EXPECT_EQ(counts[INFINI_DEVICE_CPU], 1);
  EXPECT_EQ(DeviceCount(), 4);
}

// --- accel/, a symlink to accel/'s fake_nvidia, and that file named directly ---------------

using DuplicateFile = RuntimeTest;

TEST_F(DuplicateFile, FirstSightingLoadsLaterOnesAreDuplicates) {
  const std::string real = RealPath(PluginFile("accel", "fake_nvidia"));
  const auto entries = EntriesNamed("fake_nvidia");
  ASSERT_EQ(entries.size(), 3u);
  EXPECT_EQ(entries[0].status, infinirtBackendLoaded) << entries[0].reason;
  EXPECT_EQ(entries[0].path, real);
  EXPECT_EQ(entries[0].deviceCount, 2);
  for (int i = 1; i < 3; ++i) {
    SCOPED_TRACE("sighting " + std::to_string(i));
    EXPECT_EQ(entries[i].status, infinirtBackendDuplicate);
    EXPECT_EQ(entries[i].path, real);  // the symlink is resolved
    EXPECT_TRUE(Contains(entries[i].reason, real)) << entries[i].reason;
    EXPECT_EQ(entries[i].deviceCount, 0);
    // Recognised by its real path, before it is opened again (the duplicate-name check, which
    // needs the plugin's table, would report its ABI version).
    EXPECT_EQ(entries[i].abiMajor, -1) << entries[i].reason;
  }
}

TEST_F(DuplicateFile, DevicesAreCountedOnce) { ExpectAcceleratorsCountedOnce(); }

// --- accel/ listed twice ------------------------------------------------------------------

using DuplicateDirectory = RuntimeTest;

TEST_F(DuplicateDirectory, PluginsInItLoadOnce) {
  const auto entries = EntriesNamed("fake_nvidia");
  ASSERT_FALSE(entries.empty());
  EXPECT_EQ(entries[0].status, infinirtBackendLoaded);
  for (size_t i = 1; i < entries.size(); ++i) {
    EXPECT_EQ(entries[i].status, infinirtBackendDuplicate);
  }
  ExpectAcceleratorsCountedOnce();
}

// "accel" and "accel/" differ as text but are the same directory.
TEST_F(DuplicateDirectory, SpelledDifferentlyItsPluginsAreDuplicates) {
  ScopedEnv path("INFINIRT_PLUGIN_PATH",
                 PluginDir("accel") + ":" + PluginDir("accel") + "/:" + CpuPlugin());
  for (const char* name : {"fake_nvidia", "fake_ascend"}) {
    SCOPED_TRACE(name);
    const auto entries = EntriesNamed(name);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].status, infinirtBackendLoaded);
    EXPECT_EQ(entries[1].status, infinirtBackendDuplicate);
    EXPECT_EQ(entries[1].abiMajor, -1) << "not recognised by its real path";
  }
  ExpectAcceleratorsCountedOnce();
}

// --- dirlink/ (a symlink to accel/), then accel/ -----------------------------------------

using LinkedDirectory = RuntimeTest;

// The listing names the files by their real paths, and the second sighting of each is a
// duplicate recognised before it is opened.
TEST_F(LinkedDirectory, ItsPluginsAreListedByRealPathAndLoadOnce) {
  for (const char* name : {"fake_nvidia", "fake_ascend"}) {
    SCOPED_TRACE(name);
    const std::string real = RealPath(PluginFile("accel", name));
    const auto entries = EntriesNamed(name);
    ASSERT_EQ(entries.size(), 2u);
    EXPECT_EQ(entries[0].status, infinirtBackendLoaded) << entries[0].reason;
    EXPECT_EQ(entries[0].path, real);
    EXPECT_EQ(entries[1].status, infinirtBackendDuplicate);
    EXPECT_EQ(entries[1].path, real);
    EXPECT_EQ(entries[1].abiMajor, -1) << "not recognised by its real path";
  }
  ExpectAcceleratorsCountedOnce();
}

// --- dupname_a and dupname_b: two files whose tables both say "dupname" --------------------

using DuplicateName = RuntimeTest;

TEST_F(DuplicateName, SecondFileWithTheSameBackendNameIsDuplicate) {
  const std::string first = RealPath(PluginFile("dupname", "dupname_a"));
  const auto entries = EntriesNamed("dupname");
  ASSERT_EQ(entries.size(), 2u);
  EXPECT_EQ(entries[0].status, infinirtBackendLoaded) << entries[0].reason;
  EXPECT_EQ(entries[0].path, first);
  EXPECT_EQ(entries[0].deviceCount, 1);
  EXPECT_EQ(entries[1].status, infinirtBackendDuplicate);
  EXPECT_EQ(entries[1].path, RealPath(PluginFile("dupname", "dupname_b")));
  EXPECT_TRUE(Contains(entries[1].reason, first)) << entries[1].reason;
  EXPECT_EQ(entries[1].deviceCount, 0);
}

// dupname_a has 1 device and dupname_b 3: only the first one's count.
TEST_F(DuplicateName, OnlyTheFirstFilesDevicesAreExposed) {
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
  EXPECT_EQ(counts[INFINI_DEVICE_KUNLUN], 1);
  EXPECT_EQ(DeviceCount(), 2);
  ExpectDeviceRoundTrip(0);
  ExpectDeviceRoundTrip(1);
}

}  // namespace
}  // namespace infinirt::loader_test
