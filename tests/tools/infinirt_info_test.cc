// infinirt-info as a user runs it: a child process whose text and --json output must describe
// every backend and device that the public API reports under the same environment, and whose
// exit status says whether there is a device.
//
// The plugin path is cpu : notelf/ : accel/, i.e. the CPU plugin, a file that is not a shared
// library, and the fake accelerators (fake_nvidia with 2 devices, fake_ascend with 1).
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "infinirt.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

struct ToolRun {
  int exit_status = -1;  // -1 when it did not exit normally
  std::string output;
};

// Runs infinirt-info with the given arguments and this process's environment. stderr is
// discarded unless merged into the output.
ToolRun RunInfo(const std::string& arguments, bool merge_stderr = false) {
  const std::string command = std::string("'") + INFINIRT_INFO + "' " + arguments +
                              (merge_stderr ? " 2>&1" : " 2>/dev/null");
  ToolRun run;
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t read = 0;
  while ((read = fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.output.append(buffer, read);
  const int status = pclose(pipe);
  if (status != -1 && WIFEXITED(status)) run.exit_status = WEXITSTATUS(status);
  return run;
}

struct DeviceFacts {
  int ordinal;
  infinirtDeviceProp prop;
};

std::vector<DeviceFacts> ApiDevices() {
  std::vector<DeviceFacts> devices;
  const int count = DeviceCount();
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    DeviceFacts facts{ordinal, {}};
    EXPECT_EQ(infinirtGetDeviceProperties(&facts.prop, ordinal), infinirtSuccess);
    devices.push_back(facts);
  }
  return devices;
}

// The plugin name of a device type, from the header's one list.
const char* TypeName(infiniDevice_t type) {
  switch (type) {
#define INFINIRT_TEST_TYPE_NAME_(name, value, display, plugin) \
  case INFINI_DEVICE_##name:                                   \
    return #plugin;
    INFINIRT_DEVICE_TYPES(INFINIRT_TEST_TYPE_NAME_)
#undef INFINIRT_TEST_TYPE_NAME_
    default:
      return "(not a device type)";
  }
}

// The statuses --json may report, one key per infinirtBackendStatus_t value.
const std::set<std::string>& StatusKeys() {
  static const std::set<std::string> keys = {
      "loaded",      "not_found", "dlopen_failed",       "no_entry_point", "abi_too_old",
      "abi_too_new", "bad_table", "runtime_missing",     "init_failed",    "filtered_out",
      "duplicate",   "insecure",  "unknown_device_type", "not_built"};
  return keys;
}

class InfinirtInfo : public RuntimeTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    Set("INFINIRT_PLUGIN_PATH", CpuPlugin() + ":" + PluginDir("notelf") + ":" + PluginDir("accel"));
    Set("INFINIRT_CONFIG", EMPTY_CONFIG);
    Set("INFINIRT_LOG_LEVEL", "warn");
    Set("INFINIRT_BACKENDS", std::nullopt);
    Set("INFINIRT_VISIBLE_DEVICES", std::nullopt);
  }
  void TearDown() override {
    RuntimeTest::TearDown();
    environment_.clear();
  }
  void Set(const char* name, const std::optional<std::string>& value) {
    environment_.push_back(std::make_unique<ScopedEnv>(name, value));
  }

 private:
  std::vector<std::unique_ptr<ScopedEnv>> environment_;
};

// --- Text ---------------------------------------------------------------------------------

TEST_F(InfinirtInfo, TextListsEveryBackendWithStatusPathAndReason) {
  const ToolRun run = RunInfo("");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const auto listing = Listing();
  EXPECT_TRUE(Contains(run.output, "Backends (" + std::to_string(listing.size()) + " considered)"))
      << run.output;
  for (const infinirtBackendProp& entry : listing) {
    SCOPED_TRACE(entry.name);
    EXPECT_TRUE(HasLineWith(run.output, {entry.name})) << run.output;
    if (entry.path[0]) {
      EXPECT_TRUE(HasLineWith(run.output, {"path:", entry.path})) << run.output;
    }
    if (entry.reason[0]) {
      EXPECT_TRUE(HasLineWith(run.output, {"reason:", entry.reason})) << run.output;
    }
  }
  EXPECT_TRUE(HasLineWith(run.output, {"cpu", "loaded", "1 device(s)"})) << run.output;
  EXPECT_TRUE(HasLineWith(run.output, {"fake_nvidia", "loaded", "2 device(s)"})) << run.output;
  EXPECT_TRUE(HasLineWith(run.output, {"notelf", "dlopen failed"})) << run.output;
  EXPECT_TRUE(HasLineWith(run.output, {"nvidia", "not found"})) << run.output;
}

TEST_F(InfinirtInfo, TextListsEveryDeviceWithOrdinalTypeNameAndMemory) {
  const ToolRun run = RunInfo("");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const auto devices = ApiDevices();
  ASSERT_EQ(devices.size(), 4u);
  EXPECT_TRUE(Contains(run.output, "Devices (4)")) << run.output;
  for (const DeviceFacts& device : devices) {
    SCOPED_TRACE(device.ordinal);
    const std::string ordinal = "  " + std::to_string(device.ordinal) + "  ";
    EXPECT_TRUE(
        HasLineWith(run.output, {ordinal, TypeName(device.prop.deviceType), device.prop.name}))
        << run.output;
    char memory[64];
    std::snprintf(memory, sizeof(memory), "memory %.1f GiB total",
                  static_cast<double>(device.prop.totalGlobalMem) / (1 << 30));
    const std::string backend = std::string("backend ") + device.prop.backendName + ", index " +
                                std::to_string(device.prop.vendorDeviceIndex);
    EXPECT_TRUE(HasLineWith(run.output, {backend, memory})) << run.output;
  }
  // The fakes' sizes are known: device d of a fake has d + 1 GiB.
  EXPECT_TRUE(HasLineWith(run.output, {"backend fake_nvidia, index 1", "2.0 GiB total"}))
      << run.output;
}

// --- JSON ---------------------------------------------------------------------------------

TEST_F(InfinirtInfo, JsonParsesAndHasTheSameBackendsAsTheApi) {
  const ToolRun run = RunInfo("--json");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const nlohmann::json report = nlohmann::json::parse(run.output, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.output;
  const auto listing = Listing();
  ASSERT_TRUE(report["backends"].is_array());
  ASSERT_EQ(report["backends"].size(), listing.size());
  for (size_t i = 0; i < listing.size(); ++i) {
    const nlohmann::json& backend = report["backends"][i];
    SCOPED_TRACE(backend.dump());
    EXPECT_EQ(backend["name"], listing[i].name);
    EXPECT_EQ(backend["path"], listing[i].path);
    EXPECT_EQ(backend["reason"], listing[i].reason);
    EXPECT_EQ(backend["device_count"], listing[i].deviceCount);
    EXPECT_TRUE(StatusKeys().count(backend["status"].get<std::string>()));
  }
  auto status_of = [&](const std::string& name) {
    for (const auto& backend : report["backends"]) {
      if (backend["name"] == name) return backend["status"].get<std::string>();
    }
    return std::string("(absent)");
  };
  EXPECT_EQ(status_of("cpu"), "loaded");
  EXPECT_EQ(status_of("fake_nvidia"), "loaded");
  EXPECT_EQ(status_of("notelf"), "dlopen_failed");
  EXPECT_EQ(status_of("nvidia"), "not_found");
}

TEST_F(InfinirtInfo, JsonHasTheSameDevicesAsTheApi) {
  const ToolRun run = RunInfo("--json");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const nlohmann::json report = nlohmann::json::parse(run.output, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.output;
  const auto devices = ApiDevices();
  ASSERT_TRUE(report["devices"].is_array());
  ASSERT_EQ(report["devices"].size(), devices.size());
  for (const DeviceFacts& device : devices) {
    const nlohmann::json& entry = report["devices"][device.ordinal];
    SCOPED_TRACE(entry.dump());
    EXPECT_EQ(entry["ordinal"], device.ordinal);
    EXPECT_EQ(entry["type"], TypeName(device.prop.deviceType));
    EXPECT_EQ(entry["backend"], device.prop.backendName);
    EXPECT_EQ(entry["index"], device.prop.vendorDeviceIndex);
    EXPECT_EQ(entry["name"], device.prop.name);
    EXPECT_EQ(entry["total_memory_bytes"], device.prop.totalGlobalMem);
  }
}

// --- Exit status --------------------------------------------------------------------------

TEST_F(InfinirtInfo, ExitsOneWhenThereIsNoDevice) {
  Set("INFINIRT_PLUGIN_PATH", PluginDir("empty"));
  const ToolRun text = RunInfo("");
  EXPECT_EQ(text.exit_status, 1) << text.output;
  EXPECT_TRUE(HasLineWith(text.output, {"cpu", "not found"})) << text.output;
  const ToolRun json = RunInfo("--json");
  EXPECT_EQ(json.exit_status, 1) << json.output;
  const nlohmann::json report = nlohmann::json::parse(json.output, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << json.output;
  EXPECT_TRUE(report["devices"].empty());
  EXPECT_FALSE(report["backends"].empty());
}

TEST_F(InfinirtInfo, ExitsTwoOnAnUnknownArgumentAndNamesIt) {
  const ToolRun run = RunInfo("--bogus", /*merge_stderr=*/true);
  EXPECT_EQ(run.exit_status, 2) << run.output;
  EXPECT_TRUE(Contains(run.output, "--bogus")) << run.output;
}

TEST_F(InfinirtInfo, HelpExitsZero) {
  const ToolRun run = RunInfo("--help");
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_TRUE(Contains(run.output, "--json")) << run.output;
}

}  // namespace
}  // namespace infinirt::loader_test
