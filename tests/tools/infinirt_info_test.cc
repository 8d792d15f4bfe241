// infinirt-info as a user runs it: a child process whose default, -v and --json output must
// describe every backend and device that the public API reports under the same environment,
// whose --help names every environment variable InfiniRT reads, and whose exit status says
// whether there is a device.
//
// The plugin path is cpu : notelf/ : accel/ : noruntime/ : initfail/, i.e. the CPU plugin, a
// file that is not a shared library, the fake accelerators (fake_nvidia with 2 devices,
// fake_ascend with 1), a plugin whose vendor runtime is missing (the longest status) and one
// whose Initialize fails.
#include <gtest/gtest.h>
#include <sys/wait.h>

#include <cstdio>
#include <fstream>
#include <memory>
#include <nlohmann/json.hpp>
#include <optional>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "env_variables.h"
#include "infiniccl.h"
#include "infiniop.h"
#include "infinirt.h"
#include "loader_support.h"
#include "test_support.h"

namespace infinirt::loader_test {
namespace {

using ToolRun = infinirt::testing::CommandRun;

// Runs infinirt-info with the given arguments and this process's environment. stderr is
// discarded unless merged into the output.
ToolRun RunInfo(const std::string& arguments, bool merge_stderr = false) {
  return infinirt::testing::RunCommand(std::string("'") + INFINIRT_INFO + "' " + arguments +
                                       (merge_stderr ? " 2>&1" : " 2>/dev/null"));
}

std::vector<std::string> Lines(const std::string& text) {
  std::vector<std::string> lines;
  std::istringstream stream(text);
  for (std::string line; std::getline(stream, line);) lines.push_back(line);
  return lines;
}

// The cells of a table row: the text between runs of two or more spaces.
std::vector<std::string> Cells(const std::string& row) {
  std::vector<std::string> cells;
  size_t at = row.find_first_not_of(' ');
  while (at != std::string::npos) {
    size_t end = row.find("  ", at);
    cells.push_back(row.substr(at, end == std::string::npos ? std::string::npos : end - at));
    at = end == std::string::npos ? end : row.find_first_not_of(' ', end);
  }
  return cells;
}

// The lines whose first cell is `first`.
std::vector<std::string> RowsStartingWith(const std::string& text, const std::string& first) {
  std::vector<std::string> rows;
  for (const std::string& line : Lines(text)) {
    const std::vector<std::string> cells = Cells(line);
    if (!cells.empty() && cells[0] == first) rows.push_back(line);
  }
  return rows;
}

size_t CountOf(const std::string& text, const std::string& part) {
  size_t count = 0;
  for (size_t at = text.find(part); at != std::string::npos; at = text.find(part, at + 1)) ++count;
  return count;
}

std::string GiB(size_t bytes) {
  char text[64];
  std::snprintf(text, sizeof(text), "%.1f GiB", static_cast<double>(bytes) / (1 << 30));
  return text;
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
    Set("INFINIRT_PLUGIN_PATH", CpuPlugin() + ":" + PluginDir("notelf") + ":" + PluginDir("accel") +
                                    ":" + PluginDir("noruntime") + ":" + PluginDir("initfail"));
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

// --- Default: one line per backend, one per device ----------------------------------------

TEST_F(InfinirtInfo, DefaultIsOneLinePerBackendAndOnePerDevice) {
  const ToolRun run = RunInfo("");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const auto listing = Listing();
  for (const infinirtBackendProp& entry : listing) {
    EXPECT_EQ(RowsStartingWith(run.output, entry.name).size(), 1u) << entry.name << "\n"
                                                                   << run.output;
  }
  const auto devices = ApiDevices();
  ASSERT_EQ(devices.size(), 4u);
  for (const DeviceFacts& device : devices) {
    SCOPED_TRACE(device.ordinal);
    const std::vector<std::string> rows =
        RowsStartingWith(run.output, std::to_string(device.ordinal));
    ASSERT_EQ(rows.size(), 1u) << run.output;
    const std::string backend =
        std::string(device.prop.backendName) + ":" + std::to_string(device.prop.vendorDeviceIndex);
    EXPECT_TRUE(HasLineWith(rows[0], {device.prop.name, backend, GiB(device.prop.totalGlobalMem)}))
        << rows[0];
  }
  // The fakes' sizes are known: device d of a fake has d + 1 GiB.
  EXPECT_TRUE(HasLineWith(run.output, {"fake_nvidia:1", "2.0 GiB"})) << run.output;
  // The runtime that answered, with its version, is on its backend's line; the reasons (every
  // dlopen error) and the paths are -v's.
  EXPECT_TRUE(HasLineWith(RowsStartingWith(run.output, "fake_nvidia").at(0),
                          {"runtime: /fake/libfakert.so.1, version 4242"}))
      << run.output;
  // A failed initialisation says its error there too.
  EXPECT_TRUE(HasLineWith(RowsStartingWith(run.output, "init_fails").at(0),
                          {"init failed", "Initialize returned infinirtErrorInitializationError"}))
      << run.output;
  for (const char* detail : {"path:", "reason:", "ELF", "cannot open shared object file"}) {
    EXPECT_FALSE(Contains(run.output, detail)) << detail << "\n" << run.output;
  }
  // Two headings, a blank line before each table and before the closing hint; then, for the
  // operator backends and for the collective engines, a heading, one line per device type of a
  // loaded backend and a blank line.
  std::set<infiniDevice_t> loaded_types;
  for (const infinirtBackendProp& entry : listing) {
    if (entry.status == infinirtBackendLoaded) loaded_types.insert(entry.deviceType);
  }
  EXPECT_EQ(Lines(run.output).size(),
            listing.size() + devices.size() + 7 + 2 * (loaded_types.size() + 2))
      << run.output;
  EXPECT_TRUE(Contains(run.output, "infinirt-info -v")) << run.output;
}

// Each cell starts (text) or ends (numbers) where its heading does, and cells are two spaces
// apart at least: before, "vendor runtime missing" ran into the count ("missing 0 device(s)").
TEST_F(InfinirtInfo, DefaultColumnsAreAlignedUnderTheirHeadings) {
  const ToolRun run = RunInfo("");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const std::vector<std::string> headings = RowsStartingWith(run.output, "Backend");
  ASSERT_EQ(headings.size(), 1u) << run.output;
  const size_t status_column = headings[0].find("Status");
  const size_t count_end = headings[0].find("Devices") + std::string("Devices").size();
  struct Expected {
    const char* name;
    const char* status;
    const char* devices;
  };
  for (const Expected& expected :
       {Expected{"cpu", "loaded", "1"}, Expected{"no_runtime", "vendor runtime missing", "0"},
        Expected{"notelf", "dlopen failed", "-"}, Expected{"kunlun", "no plugin built", "-"}}) {
    SCOPED_TRACE(expected.name);
    const std::vector<std::string> rows = RowsStartingWith(run.output, expected.name);
    ASSERT_EQ(rows.size(), 1u) << run.output;
    const std::vector<std::string> cells = Cells(rows[0]);
    ASSERT_GE(cells.size(), 3u) << rows[0];
    EXPECT_EQ(cells[1], expected.status) << rows[0];
    EXPECT_EQ(cells[2], expected.devices) << rows[0];
    EXPECT_EQ(rows[0].find(cells[1]), status_column) << rows[0] << "\n" << headings[0];
    EXPECT_EQ(rows[0].find("  " + cells[2]) + 2 + cells[2].size(), count_end) << rows[0] << "\n"
                                                                              << headings[0];
  }
}

// The variable that hides every device is named: by the library's warning, on the row of each
// backend whose devices it hides, and as the reason there is no device.
TEST_F(InfinirtInfo, DefaultNamesWhatHidesEveryDevice) {
  Set("INFINIRT_VISIBLE_DEVICES", "");
  const ToolRun run = RunInfo("", /*merge_stderr=*/true);
  EXPECT_EQ(run.exit_status, 1) << run.output;
  const std::string hidden = "hidden by INFINIRT_VISIBLE_DEVICES=''";
  EXPECT_TRUE(HasLineWith(run.output, {"[warning]", "no device is available",
                                       "INFINIRT_VISIBLE_DEVICES='' hides all 4 device(s)"}))
      << run.output;
  EXPECT_TRUE(HasLineWith(run.output, {"fake_nvidia", "loaded", "2 of 2 device(s) " + hidden}))
      << run.output;
  EXPECT_TRUE(Contains(run.output, "No device:\n")) << run.output;
  EXPECT_TRUE(HasLineWith(run.output, {"  cpu: 1 of 1 device(s) " + hidden})) << run.output;
}

// --- -v: the reasons, and a page per device -----------------------------------------------

TEST_F(InfinirtInfo, VerboseListsEveryBackendWithStatusPathAndReason) {
  const ToolRun run = RunInfo("-v");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const auto listing = Listing();
  EXPECT_TRUE(Contains(run.output, "Backends (" + std::to_string(listing.size()) + " considered)"))
      << run.output;
  for (const infinirtBackendProp& entry : listing) {
    SCOPED_TRACE(entry.name);
    EXPECT_EQ(RowsStartingWith(run.output, entry.name).size(), 1u) << run.output;
    if (entry.path[0]) {
      EXPECT_TRUE(HasLineWith(run.output, {"path:", entry.path})) << run.output;
    }
    if (entry.reason[0]) {
      EXPECT_TRUE(HasLineWith(run.output, {"reason:", entry.reason})) << run.output;
    }
  }
  EXPECT_TRUE(HasLineWith(run.output, {"cpu", "loaded", "1 device(s), ABI"})) << run.output;
  EXPECT_TRUE(HasLineWith(run.output, {"fake_nvidia", "loaded", "2 device(s)"})) << run.output;
  EXPECT_TRUE(HasLineWith(run.output, {"no_runtime", "vendor runtime missing", "0 device(s)"}))
      << run.output;
  EXPECT_TRUE(HasLineWith(run.output, {"runtime:", "libfakert.so.1"})) << run.output;
  EXPECT_TRUE(HasLineWith(run.output, {"notelf", "dlopen failed"})) << run.output;
  EXPECT_TRUE(HasLineWith(run.output, {"nvidia", "not found"})) << run.output;
}

// As CUDA's deviceQuery: for every device its properties and every device attribute of
// infinirt.h's list (an attribute the backend does not answer shows its error).
TEST_F(InfinirtInfo, VerboseHasAPagePerDeviceWithItsPropertiesAndEveryAttribute) {
  const ToolRun run = RunInfo("-v");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const auto devices = ApiDevices();
  for (const DeviceFacts& device : devices) {
    EXPECT_TRUE(Contains(
        run.output, "Device " + std::to_string(device.ordinal) + ": " + device.prop.name + "\n"))
        << run.output;
  }
  EXPECT_EQ(CountOf(run.output, "Properties (infinirtGetDeviceProperties):"), devices.size());
  EXPECT_EQ(CountOf(run.output, "Attributes (infinirtDeviceGetAttribute):"), devices.size());
  const std::string nvidia_memory = std::to_string(devices[1].prop.totalGlobalMem) + " (2.0 GiB)";
  EXPECT_EQ(RowsStartingWith(run.output, "totalGlobalMem").size(), devices.size());
  EXPECT_TRUE(HasLineWith(run.output, {"totalGlobalMem", nvidia_memory})) << run.output;
  EXPECT_EQ(RowsStartingWith(run.output, "multiProcessorCount").size(), devices.size());
  // The CPU answers every attribute.
  int cpu_warp_size = -1;
  ASSERT_EQ(infinirtDeviceGetAttribute(&cpu_warp_size, infinirtDevAttrWarpSize, 3),
            infinirtSuccess);
  EXPECT_TRUE(HasLineWith(run.output, {"WarpSize  ", std::to_string(cpu_warp_size)})) << run.output;
#define INFINIRT_TEST_ATTRIBUTE_ROW_(name, value)                                              \
  EXPECT_EQ(RowsStartingWith(run.output, std::string(#name).substr(7)).size(), devices.size()) \
      << #name;
  INFINIRT_DEVICE_ATTR_LIST(INFINIRT_TEST_ATTRIBUTE_ROW_)
#undef INFINIRT_TEST_ATTRIBUTE_ROW_
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

// One operator backend per device type of a loaded backend, as infiniopGetBackendInfo describes
// it: here the fake accelerators' types have none (not found), the CPU's is found or not by the
// same search path as the runtime's plugins.
TEST_F(InfinirtInfo, ListsTheOperatorBackendOfEachLoadedDeviceType) {
  const ToolRun run = RunInfo("--json");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const nlohmann::json report = nlohmann::json::parse(run.output, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.output;
  ASSERT_TRUE(report["operator_backends"].is_array());
  std::set<std::string> loaded_types;
  for (const infinirtBackendProp& entry : Listing()) {
    if (entry.status == infinirtBackendLoaded) loaded_types.insert(TypeName(entry.deviceType));
  }
  std::set<std::string> listed_types;
  for (const nlohmann::json& entry : report["operator_backends"]) {
    SCOPED_TRACE(entry.dump());
    const std::string type = entry["device_type"].get<std::string>();
    listed_types.insert(type);
    EXPECT_TRUE(StatusKeys().count(entry["status"].get<std::string>()));
    infiniDevice_t device_type = INFINI_DEVICE_TYPE_COUNT;
    for (int t = 0; t < INFINI_DEVICE_TYPE_COUNT; ++t) {
      if (type == TypeName(static_cast<infiniDevice_t>(t))) {
        device_type = static_cast<infiniDevice_t>(t);
      }
    }
    infinirtBackendProp info{};
    ASSERT_EQ(infiniopGetBackendInfo(device_type, &info), INFINI_STATUS_SUCCESS);
    EXPECT_EQ(entry["status"] == "loaded", info.status == infinirtBackendLoaded);
    EXPECT_EQ(entry["path"], info.path);
    EXPECT_EQ(entry["reason"], info.reason);
    if (type == "nvidia") {
      EXPECT_EQ(entry["status"], "not_found");
      EXPECT_NE(entry["reason"].get<std::string>().find("libinfiniop_nvidia.so"),
                std::string::npos);
    }
  }
  EXPECT_EQ(listed_types, loaded_types);
  const ToolRun text = RunInfo("");
  EXPECT_NE(text.output.find("Operator backends (InfiniOP):"), std::string::npos) << text.output;
  infinirtBackendProp info{};
  EXPECT_EQ(infiniopGetBackendInfo(INFINI_DEVICE_TYPE_COUNT, &info), INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopGetBackendInfo(INFINI_DEVICE_CPU, nullptr), INFINI_STATUS_NULL_POINTER);
}

// The same for the collective engines (infinicclGetEngineInfo): the CPU's is found beside the
// plugins; the fake NVIDIA devices' engine (NCCL's) is not built, and says so.
TEST_F(InfinirtInfo, ListsTheCollectiveEngineOfEachLoadedDeviceType) {
  const ToolRun run = RunInfo("--json");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  const nlohmann::json report = nlohmann::json::parse(run.output, nullptr, false);
  ASSERT_FALSE(report.is_discarded()) << run.output;
  ASSERT_TRUE(report["collective_engines"].is_array());
  std::set<std::string> loaded_types;
  for (const infinirtBackendProp& entry : Listing()) {
    if (entry.status == infinirtBackendLoaded) loaded_types.insert(TypeName(entry.deviceType));
  }
  std::set<std::string> listed_types;
  for (const nlohmann::json& entry : report["collective_engines"]) {
    SCOPED_TRACE(entry.dump());
    const std::string type = entry["device_type"].get<std::string>();
    listed_types.insert(type);
    infiniDevice_t device_type = INFINI_DEVICE_TYPE_COUNT;
    for (int t = 0; t < INFINI_DEVICE_TYPE_COUNT; ++t) {
      if (type == TypeName(static_cast<infiniDevice_t>(t))) {
        device_type = static_cast<infiniDevice_t>(t);
      }
    }
    infinirtBackendProp info{};
    ASSERT_EQ(infinicclGetEngineInfo(device_type, &info), INFINI_STATUS_SUCCESS);
    EXPECT_EQ(entry["status"] == "loaded", info.status == infinirtBackendLoaded);
    EXPECT_EQ(entry["reason"], info.reason);
    if (type == "nvidia") {
      EXPECT_EQ(entry["status"], "not_found");
      EXPECT_NE(entry["reason"].get<std::string>().find("libinfiniccl_nccl.so"), std::string::npos);
    }
  }
  EXPECT_EQ(listed_types, loaded_types);
  const ToolRun text = RunInfo("");
  EXPECT_NE(text.output.find("Collective engines (InfiniCCL):"), std::string::npos) << text.output;
  infinirtBackendProp info{};
  EXPECT_EQ(infinicclGetEngineInfo(INFINI_DEVICE_TYPE_COUNT, &info), INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infinicclGetEngineInfo(INFINI_DEVICE_CPU, nullptr), INFINI_STATUS_NULL_POINTER);
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
  EXPECT_TRUE(HasLineWith(text.output, {"No device:", "no backend loaded"})) << text.output;
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

TEST_F(InfinirtInfo, HelpNamesEveryOptionAndEveryEnvironmentVariable) {
  const ToolRun run = RunInfo("--help");
  EXPECT_EQ(run.exit_status, 0) << run.output;
  for (const char* option : {"--json", "-v", "--verbose", "--version", "--help"}) {
    EXPECT_TRUE(Contains(run.output, option)) << option << "\n" << run.output;
  }
  // The core's variables, from the core's own list.
#define INFINIRT_TEST_CORE_VARIABLE_(name, syntax, meaning) \
  EXPECT_TRUE(Contains(run.output, #name "=")) << #name << "\n" << run.output;
  INFINIRT_CORE_ENVIRONMENT(INFINIRT_TEST_CORE_VARIABLE_)
#undef INFINIRT_TEST_CORE_VARIABLE_
  // The vendor plugins' variables, from the file the plugins are built from.
  std::ifstream file(VENDOR_TABLE_JSON);
  const nlohmann::json table = nlohmann::json::parse(file, nullptr, false);
  ASSERT_TRUE(table.is_object() && table.contains("vendors") && table.at("vendors").is_array())
      << VENDOR_TABLE_JSON;
  size_t vendor_variables = 0;
  for (const nlohmann::json& row : table.at("vendors")) {
    if (!row.contains("runtime")) continue;  // no vendor plugin
    const std::string variable = row["runtime"]["env"].get<std::string>();
    EXPECT_TRUE(Contains(run.output, variable)) << variable << "\n" << run.output;
    ++vendor_variables;
  }
  EXPECT_GE(vendor_variables, 7u);
  EXPECT_TRUE(Contains(run.output, "CUDA_HOME")) << run.output;
}

// --version needs no plugin: it loads none.
TEST_F(InfinirtInfo, VersionPrintsTheVersionsWithoutLoadingPlugins) {
  Set("INFINIRT_LOG_LEVEL", "debug");
  const ToolRun run = RunInfo("--version", /*merge_stderr=*/true);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  const std::string version = std::to_string(INFINIRT_VERSION_MAJOR) + "." +
                              std::to_string(INFINIRT_VERSION_MINOR) + "." +
                              std::to_string(INFINIRT_VERSION_PATCH);
  EXPECT_TRUE(HasLineWith(
      run.output, {"InfiniRT", version, "CUDA Runtime API " + std::to_string(INFINIRT_VERSION)}))
      << run.output;
  EXPECT_FALSE(Contains(run.output, "loader:")) << run.output;
}

}  // namespace
}  // namespace infinirt::loader_test
