// Plugins that load but offer less: a table from an older minor version, no devices, no vendor
// runtime.
#include <gtest/gtest.h>

#include <string>

#include "infinirt.h"
#include "infinirt_plugin.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

// --- A table whose struct_size stops before StreamCreate (an older minor version) ---------
// Ordinal 0 is the short table's METAX device, ordinal 1 the CPU.

using ShortTable = RuntimeTest;

TEST_F(ShortTable, LoadsWithItsDevice) {
  const auto entry = OnlyEntryNamed("short_table");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendLoaded) << entry->reason;
  EXPECT_EQ(entry->deviceType, INFINI_DEVICE_METAX);
  EXPECT_EQ(entry->deviceCount, 1);
  EXPECT_EQ(DeviceCount(), 2);
  infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
  EXPECT_EQ(infinirtDeviceGetType(&type, 0), infinirtSuccess);
  EXPECT_EQ(type, INFINI_DEVICE_METAX);
}

TEST_F(ShortTable, EntriesInsideStructSizeWork) {
  ExpectDeviceRoundTrip(0);
  infinirtDeviceProp prop{};
  ASSERT_EQ(infinirtGetDeviceProperties(&prop, 0), infinirtSuccess);
  EXPECT_STREQ(prop.name, "Fake short_table device 0");
  void* pointer = nullptr;
  ASSERT_EQ(infinirtMalloc(&pointer, 256), infinirtSuccess);
  EXPECT_EQ(infinirtMemset(pointer, 0x5a, 256), infinirtSuccess);
  unsigned char byte = 0;
  EXPECT_EQ(infinirtMemcpy(&byte, static_cast<char*>(pointer) + 255, 1, infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  EXPECT_EQ(byte, 0x5a);
  EXPECT_EQ(infinirtFree(pointer), infinirtSuccess);
}

// The fake sets StreamCreate in its table even in this variant: only struct_size hides it, so
// a core that read past struct_size would succeed here.
TEST_F(ShortTable, EntriesBeyondStructSizeAnswerNotSupported) {
  ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);
  infinirtStream_t stream = nullptr;
  EXPECT_EQ(infinirtStreamCreate(&stream), infinirtErrorNotSupported);
  EXPECT_EQ(infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking),
            infinirtErrorNotSupported);
}

TEST_F(ShortTable, CpuDeviceKeepsItsStreams) {
  ASSERT_EQ(infinirtSetDevice(1), infinirtSuccess);
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
  ExpectDeviceRoundTrip(1);
}

// --- A plugin whose runtime is present but has no devices ---------------------------------

using ZeroDevices = RuntimeTest;

TEST_F(ZeroDevices, LoadedWithNoDeviceAndTheReasonFromGetInfo) {
  const auto entry = OnlyEntryNamed("zero_devices");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendLoaded);
  EXPECT_EQ(entry->deviceCount, 0);
  EXPECT_EQ(entry->deviceType, INFINI_DEVICE_CAMBRICON);
  EXPECT_STREQ(entry->reason, "fake runtime reports no devices");
  EXPECT_EQ(entry->runtimeVersion, 4242);
  EXPECT_STREQ(entry->runtimeLibrary, "/fake/libfakert.so.1");
}

TEST_F(ZeroDevices, OnlyTheCpuDeviceIsExposed) {
  ExpectOnlyTheCpuDevice();
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
  EXPECT_EQ(counts[INFINI_DEVICE_CAMBRICON], 0);
  EXPECT_EQ(counts[INFINI_DEVICE_CPU], 1);
}

// --- A plugin whose vendor runtime library is absent --------------------------------------

using RuntimeMissing = RuntimeTest;

TEST_F(RuntimeMissing, ReportedAsRuntimeMissingWithTheReason) {
  const auto entry = OnlyEntryNamed("no_runtime");
  ASSERT_TRUE(entry);
  EXPECT_EQ(entry->status, infinirtBackendRuntimeMissing);
  EXPECT_EQ(entry->deviceCount, 0);
  EXPECT_EQ(entry->deviceType, INFINI_DEVICE_MOORE);
  EXPECT_TRUE(Contains(entry->reason, "cannot open shared object file")) << entry->reason;
  EXPECT_STREQ(entry->runtimeLibrary, "libfakert.so.1");
  EXPECT_EQ(entry->runtimeVersion, -1);
  EXPECT_EQ(entry->abiMajor, INFINIRT_PLUGIN_ABI_MAJOR);
}

TEST_F(RuntimeMissing, OnlyTheCpuDeviceIsExposed) { ExpectOnlyTheCpuDevice(); }

}  // namespace
}  // namespace infinirt::loader_test
