// The flat device ordinal space (docs/architecture.md#devices) and the environment filters
// INFINIRT_BACKENDS and INFINIRT_VISIBLE_DEVICES.
//
// The path is cpu : notelf/ : accel/, so the load order is cpu, fake_ascend, fake_nvidia; the
// ordinals must nevertheless be NVIDIA 0, NVIDIA 1, ASCEND 0, CPU (by device type, then index,
// the CPU last).
#include <gtest/gtest.h>

#include <optional>
#include <string>
#include <tuple>
#include <vector>

#include "infinirt.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

struct DeviceRow {
  infiniDevice_t type;
  std::string backend;
  int index;
  std::string name;
  bool operator==(const DeviceRow& other) const {
    return std::tie(type, backend, index, name) ==
           std::tie(other.type, other.backend, other.index, other.name);
  }
};

std::ostream& operator<<(std::ostream& os, const DeviceRow& row) {
  return os << "{type " << row.type << ", " << row.backend << ":" << row.index << ", '" << row.name
            << "'}";
}

// Every visible device, by ordinal, as the public API describes it.
std::vector<DeviceRow> Devices() {
  std::vector<DeviceRow> rows;
  const int count = DeviceCount();
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    infinirtDeviceProp prop{};
    EXPECT_EQ(infinirtGetDeviceProperties(&prop, ordinal), infinirtSuccess);
    infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
    EXPECT_EQ(infinirtDeviceGetType(&type, ordinal), infinirtSuccess);
    EXPECT_EQ(type, prop.deviceType) << "ordinal " << ordinal;
    rows.push_back({type, prop.backendName, prop.vendorDeviceIndex, prop.name});
  }
  return rows;
}

const DeviceRow kNvidia0{INFINI_DEVICE_NVIDIA, "fake_nvidia", 0, "Fake fake_nvidia device 0"};
const DeviceRow kNvidia1{INFINI_DEVICE_NVIDIA, "fake_nvidia", 1, "Fake fake_nvidia device 1"};
const DeviceRow kAscend0{INFINI_DEVICE_ASCEND, "fake_ascend", 0, "Fake fake_ascend device 0"};

bool IsCpu(const DeviceRow& row) {
  return row.type == INFINI_DEVICE_CPU && row.backend == "cpu" && row.index == 0;
}

std::optional<int> OrdinalOf(infiniDevice_t type, int index) {
  int device = -1;
  if (infinirtDeviceGetOrdinal(&device, type, index) != infinirtSuccess) return std::nullopt;
  return device;
}

// --- Ordering -----------------------------------------------------------------------------

using DeviceOrdering = RuntimeTest;

TEST_F(DeviceOrdering, AcceleratorsFirstByTypeThenIndexCpuLast) {
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  const std::vector<DeviceRow> devices = Devices();
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_EQ(devices[0], kNvidia0);
  EXPECT_EQ(devices[1], kNvidia1);
  EXPECT_EQ(devices[2], kAscend0);
  EXPECT_TRUE(IsCpu(devices[3])) << devices[3];
}

TEST_F(DeviceOrdering, AllDeviceCountCountsEachType) {
  int counts[INFINI_DEVICE_TYPE_COUNT];
  for (int& count : counts) count = -1;
  ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
  for (int type = 0; type < INFINI_DEVICE_TYPE_COUNT; ++type) {
    const int expected = type == INFINI_DEVICE_NVIDIA   ? 2
                         : type == INFINI_DEVICE_ASCEND ? 1
                         : type == INFINI_DEVICE_CPU    ? 1
                                                        : 0;
    EXPECT_EQ(counts[type], expected) << "device type " << type;
  }
}

TEST_F(DeviceOrdering, DeviceGetOrdinalMapsTypeAndIndexToOrdinals) {
  EXPECT_EQ(OrdinalOf(INFINI_DEVICE_NVIDIA, 0), 0);
  EXPECT_EQ(OrdinalOf(INFINI_DEVICE_NVIDIA, 1), 1);
  EXPECT_EQ(OrdinalOf(INFINI_DEVICE_ASCEND, 0), 2);
  EXPECT_EQ(OrdinalOf(INFINI_DEVICE_CPU, 0), 3);
  int device = -1;
  EXPECT_EQ(infinirtDeviceGetOrdinal(&device, INFINI_DEVICE_NVIDIA, 2), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtDeviceGetOrdinal(&device, INFINI_DEVICE_METAX, 0), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtDeviceGetOrdinal(&device, INFINI_DEVICE_TYPE_COUNT, 0),
            infinirtErrorInvalidValue);
  infiniDevice_t type = INFINI_DEVICE_CPU;
  EXPECT_EQ(infinirtDeviceGetType(&type, 4), infinirtErrorInvalidDevice);
}

TEST_F(DeviceOrdering, BrokenPluginIsReportedAndTheGoodOnesWork) {
  const auto broken = OnlyEntryNamed("notelf");
  ASSERT_TRUE(broken);
  EXPECT_EQ(broken->status, infinirtBackendDlopenFailed);
  for (const char* name : {"cpu", "fake_nvidia", "fake_ascend"}) {
    const auto entry = OnlyEntryNamed(name);
    ASSERT_TRUE(entry) << name;
    EXPECT_EQ(entry->status, infinirtBackendLoaded) << name << ": " << entry->reason;
  }
  for (int device = 0; device < 4; ++device) ExpectDeviceRoundTrip(device);
}

TEST_F(DeviceOrdering, ListingAndOrdinalsAreTheSameAfterReinitialisation) {
  struct Snapshot {
    std::vector<std::tuple<std::string, int, std::string>> listing;
    std::vector<DeviceRow> devices;
  };
  auto take = [] {
    Snapshot snapshot;
    for (const infinirtBackendProp& entry : Listing()) {
      snapshot.listing.emplace_back(entry.name, entry.status, entry.path);
    }
    snapshot.devices = Devices();
    return snapshot;
  };
  const Snapshot first = take();
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  const Snapshot second = take();
  EXPECT_EQ(first.listing, second.listing);
  EXPECT_EQ(first.devices, second.devices);
  ASSERT_EQ(second.devices.size(), 4u);
  EXPECT_EQ(second.devices[0], kNvidia0);
}

// --- INFINIRT_BACKENDS=cpu ----------------------------------------------------------------

using BackendsFilter = RuntimeTest;

TEST_F(BackendsFilter, OnlyTheNamedBackendLoads) {
  const auto cpu = OnlyEntryNamed("cpu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->status, infinirtBackendLoaded);
  // notelf would be DlopenFailed if it had been opened: the filter applies first.
  for (const char* name : {"fake_nvidia", "fake_ascend", "notelf", "nvidia", "ascend"}) {
    const auto entry = OnlyEntryNamed(name);
    ASSERT_TRUE(entry) << name;
    EXPECT_EQ(entry->status, infinirtBackendFilteredOut) << name;
    EXPECT_EQ(entry->deviceCount, 0) << name;
  }
  const std::vector<DeviceRow> devices = Devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_TRUE(IsCpu(devices[0])) << devices[0];
}

TEST_F(BackendsFilter, FilteredOutEntriesNameTheVariableAndItsValue) {
  const auto nvidia = OnlyEntryNamed("fake_nvidia");
  ASSERT_TRUE(nvidia);
  EXPECT_STREQ(nvidia->reason, "not named in INFINIRT_BACKENDS=cpu");
}

// "cuda" names no backend: a warning names it and the names that would match; the known names
// still filter as asked.
TEST_F(BackendsFilter, UnknownNameIsWarnedAboutWithTheKnownNames) {
  ScopedEnv backends("INFINIRT_BACKENDS", "cpu,cuda");
  const std::string log = CaptureStderrOf([] { infinirtInit(); });
  EXPECT_TRUE(HasLineWith(log, {"[warning]", "INFINIRT_BACKENDS=cpu,cuda",
                                "no backend is named 'cuda'", "cpu, nvidia,", "fake_nvidia"}))
      << log;
  EXPECT_FALSE(Contains(log, "named 'cpu")) << log;
  EXPECT_FALSE(Contains(log, "[error]")) << log;
  const std::vector<DeviceRow> devices = Devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_TRUE(IsCpu(devices[0])) << devices[0];
}

// Before, the error said only "no InfiniRT plugin could be loaded; searched ...", as if no file
// had been found.
TEST_F(BackendsFilter, FilterThatRemovesEveryPluginIsNamedInTheError) {
  ScopedEnv backends("INFINIRT_BACKENDS", "cuda");
  const std::string log = CaptureStderrOf([] { infinirtInit(); });
  EXPECT_TRUE(HasLineWith(log, {"[error]", "INFINIRT_BACKENDS=cuda",
                                "filtered out every plugin found (cpu, notelf, fake_ascend, "
                                "fake_nvidia)"}))
      << log;
  EXPECT_EQ(infinirtInit(), infinirtErrorNoDevice);
}

TEST_F(BackendsFilter, SeveralNamesAreSeparatedByCommas) {
  ScopedEnv backends("INFINIRT_BACKENDS", "cpu,fake_ascend");
  const auto nvidia = OnlyEntryNamed("fake_nvidia");
  ASSERT_TRUE(nvidia);
  EXPECT_EQ(nvidia->status, infinirtBackendFilteredOut);
  const std::vector<DeviceRow> devices = Devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0], kAscend0);
  EXPECT_TRUE(IsCpu(devices[1])) << devices[1];
}

// --- INFINIRT_VISIBLE_DEVICES (the scenario sets "2,0") -----------------------------------
// Without it the ordinals are NVIDIA 0, NVIDIA 1, ASCEND 0, CPU.

using VisibleDevices = RuntimeTest;

TEST_F(VisibleDevices, ListedOrdinalsInListedOrder) {
  const std::vector<DeviceRow> devices = Devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0], kAscend0);
  EXPECT_EQ(devices[1], kNvidia0);
  EXPECT_EQ(OrdinalOf(INFINI_DEVICE_ASCEND, 0), 0);
  EXPECT_EQ(OrdinalOf(INFINI_DEVICE_NVIDIA, 0), 1);
  EXPECT_EQ(OrdinalOf(INFINI_DEVICE_NVIDIA, 1), std::nullopt);
  EXPECT_EQ(OrdinalOf(INFINI_DEVICE_CPU, 0), std::nullopt);
  ExpectDeviceRoundTrip(0);
  ExpectDeviceRoundTrip(1);
}

TEST_F(VisibleDevices, ListingCountsOnlyVisibleDevices) {
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
  EXPECT_EQ(counts[INFINI_DEVICE_NVIDIA], 1);
  EXPECT_EQ(counts[INFINI_DEVICE_ASCEND], 1);
  EXPECT_EQ(counts[INFINI_DEVICE_CPU], 0);
  for (const auto& [name, count] :
       {std::pair<const char*, int>{"fake_nvidia", 1}, {"fake_ascend", 1}, {"cpu", 0}}) {
    const auto entry = OnlyEntryNamed(name);
    ASSERT_TRUE(entry) << name;
    EXPECT_EQ(entry->status, infinirtBackendLoaded) << name;
    EXPECT_EQ(entry->deviceCount, count) << name;
  }
}

TEST_F(VisibleDevices, ParsingStopsAtTheFirstInvalidToken) {
  {
    ScopedEnv visible("INFINIRT_VISIBLE_DEVICES", "3,7,0");
    const std::vector<DeviceRow> devices = Devices();
    ASSERT_EQ(devices.size(), 1u);
    EXPECT_TRUE(IsCpu(devices[0])) << devices[0];
    ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  }
  ScopedEnv visible("INFINIRT_VISIBLE_DEVICES", "1,bogus,0");
  const std::vector<DeviceRow> devices = Devices();
  ASSERT_EQ(devices.size(), 1u);
  EXPECT_EQ(devices[0], kNvidia1);
}

TEST_F(VisibleDevices, BackendColonIndexTokensNameDevices) {
  ScopedEnv visible("INFINIRT_VISIBLE_DEVICES", "fake_nvidia:1,cpu:0,2");
  const std::vector<DeviceRow> devices = Devices();
  ASSERT_EQ(devices.size(), 3u);
  EXPECT_EQ(devices[0], kNvidia1);
  EXPECT_TRUE(IsCpu(devices[1])) << devices[1];
  EXPECT_EQ(devices[2], kAscend0);
}

TEST_F(VisibleDevices, EmptyValueHidesAllDevices) {
  ScopedEnv visible("INFINIRT_VISIBLE_DEVICES", "");
  EXPECT_EQ(infinirtInit(), infinirtErrorNoDevice);
  int count = -1;
  EXPECT_EQ(infinirtGetDeviceCount(&count), infinirtErrorNoDevice);
  EXPECT_EQ(count, 0);
  const auto cpu = OnlyEntryNamed("cpu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->status, infinirtBackendLoaded);
  EXPECT_EQ(cpu->deviceCount, 0);
}

// With no device left, the variable is named as the reason: in a warning, in the debug line of
// every call answering NoDevice, and in the listing of each backend whose devices it hides.
TEST_F(VisibleDevices, EmptyOrAllFilteredValueIsNamedAsTheReasonForNoDevice) {
  for (const char* value : {"", "7"}) {
    SCOPED_TRACE(std::string("INFINIRT_VISIBLE_DEVICES=") + value);
    ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
    ScopedEnv visible("INFINIRT_VISIBLE_DEVICES", value);
    ScopedEnv debug("INFINIRT_LOG_LEVEL", "debug");
    const std::string variable = std::string("INFINIRT_VISIBLE_DEVICES='") + value + "'";
    const std::string log = CaptureStderrOf([] { infinirtInit(); });
    EXPECT_TRUE(HasLineWith(
        log, {"[warning]", "no device is available", variable, "hides all 4 device(s)"}))
        << log;
    EXPECT_TRUE(HasLineWith(log, {"[debug]", "infinirtInit: no device is available", variable}))
        << log;
    const auto nvidia = OnlyEntryNamed("fake_nvidia");
    ASSERT_TRUE(nvidia);
    EXPECT_TRUE(Contains(nvidia->reason, "2 of 2 device(s) hidden by " + variable))
        << nvidia->reason;
  }
}

TEST_F(VisibleDevices, ListingNamesHowManyDevicesAreHidden) {
  const auto nvidia = OnlyEntryNamed("fake_nvidia");  // the scenario's "2,0": NVIDIA 1 is hidden
  ASSERT_TRUE(nvidia);
  EXPECT_STREQ(nvidia->reason, "1 of 2 device(s) hidden by INFINIRT_VISIBLE_DEVICES='2,0'");
  const auto ascend = OnlyEntryNamed("fake_ascend");
  ASSERT_TRUE(ascend);
  EXPECT_STREQ(ascend->reason, "");
}

TEST_F(VisibleDevices, BackendNamesInTokensAreCaseInsensitive) {
  ScopedEnv visible("INFINIRT_VISIBLE_DEVICES", "FAKE_NVIDIA:1,Cpu:0");
  const std::vector<DeviceRow> devices = Devices();
  ASSERT_EQ(devices.size(), 2u);
  EXPECT_EQ(devices[0], kNvidia1);
  EXPECT_TRUE(IsCpu(devices[1])) << devices[1];
}

TEST_F(VisibleDevices, UnsetShowsEveryDevice) {
  ScopedEnv visible("INFINIRT_VISIBLE_DEVICES", std::nullopt);
  EXPECT_EQ(DeviceCount(), 4);
}

}  // namespace
}  // namespace infinirt::loader_test

namespace infinirt::loader_test {
namespace {

// The current device belongs to the runtime it was set in: after infinirtFinalize a thread
// starts again from device 0, as in a fresh process, even if the new runtime has fewer devices.
TEST_F(VisibleDevices, FinalizeResetsTheCurrentDevice) {
  ScopedEnv visible("INFINIRT_VISIBLE_DEVICES", std::nullopt);
  ASSERT_EQ(infinirtSetDevice(3), infinirtSuccess);
  int device = -1;
  ASSERT_EQ(infinirtGetDevice(&device), infinirtSuccess);
  ASSERT_EQ(device, 3);
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);

  ScopedEnv only_cpu("INFINIRT_VISIBLE_DEVICES", "cpu:0");
  ASSERT_EQ(infinirtGetDevice(&device), infinirtSuccess);
  EXPECT_EQ(device, 0);
  void* memory = nullptr;
  EXPECT_EQ(infinirtMalloc(&memory, 64), infinirtSuccess);
  EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
}

}  // namespace
}  // namespace infinirt::loader_test
