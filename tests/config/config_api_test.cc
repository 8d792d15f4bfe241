// The configuration file through the public API: which file is read, what a bad one logs, and
// that its values (or the defaults) reach the loader, the device list and the CPU plugin.
//
// Every test sets the environment it needs and re-initialises the runtime (each initialisation
// reads the environment and the file again). The plugin path is the CPU plugin and the fake
// accelerators (fake_nvidia: 2 NVIDIA devices, fake_ascend: 1 ASCEND device): 4 devices, the
// CPU last, when nothing filters them.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "config_test_support.h"
#include "infinirt.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

// --- Which file ---------------------------------------------------------------------------

TEST_F(ConfigTest, WithoutInfinirtConfigTheFileBesideTheLibraryIsRead) {
  Set("INFINIRT_CONFIG", std::nullopt);
  Set("INFINIRT_LOG_LEVEL", "debug");
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(log, {"[debug]", "config: read", "/share/infinirt/infinirt.json"}))
      << log;
}

TEST_F(ConfigTest, MissingFileLogsAnErrorAndDefaultsApply) {
  const std::string missing = DataFile("does-not-exist.json");
  Set("INFINIRT_CONFIG", missing);
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(log, {"[infinirt]", "[error]", missing})) << log;
  EXPECT_EQ(DeviceCount(), 4);
}

// --- A bad file ---------------------------------------------------------------------------

TEST_F(ConfigTest, MalformedFileIsReportedWithLineAndColumnAndDefaultsApply) {
  Set("INFINIRT_CONFIG", DataFile("malformed.json"));
  const std::string log = InitLog();
  // Line 3 of the file lacks its comma; the parser notices in line 4.
  EXPECT_TRUE(HasLineWith(log, {"[error]", DataFile("malformed.json") + ":4:", "JSON"})) << log;
  // The file's "backends": ["cpu"] precedes the error; it must not apply.
  EXPECT_EQ(StatusOf("fake_nvidia"), infinirtBackendLoaded);
  EXPECT_EQ(StatusOf("cpu"), infinirtBackendLoaded);
  EXPECT_EQ(DeviceCount(), 4);
  ExpectDeviceRoundTrip(3);
}

TEST_F(ConfigTest, KeyOfTheWrongTypeIsNamedAndKeepsItsDefault) {
  Set("INFINIRT_CONFIG", DataFile("wrong_type.json"));  // backends: "cpu", visible_devices: "3"
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(log, {"[error]", DataFile("wrong_type.json"), "'backends'"})) << log;
  EXPECT_EQ(StatusOf("fake_nvidia"), infinirtBackendLoaded);  // the default: every backend
  // The valid key beside it applies: only ordinal 3, the CPU, is visible.
  EXPECT_EQ(DeviceCount(), 1);
  int cpu = -1;
  EXPECT_EQ(infinirtDeviceGetOrdinal(&cpu, INFINI_DEVICE_CPU, 0), infinirtSuccess);
  EXPECT_EQ(cpu, 0);
}

// A warning naming the file and the key: nothing of the file is lost (it may be a key of a
// newer InfiniRT), so it is no error.
TEST_F(ConfigTest, UnknownKeyIsAWarning) {
  Set("INFINIRT_CONFIG", DataFile("unknown_key.json"));
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(
      log, {"[infinirt] [warning]", DataFile("unknown_key.json"), "unknown key 'bakends'"}))
      << log;
  EXPECT_FALSE(Contains(log, "[error]")) << log;
  EXPECT_FALSE(Contains(log, "_comment")) << log;
  EXPECT_EQ(DeviceCount(), 4);
}

// An ifstream opens a directory and reads nothing, which was reported as invalid JSON.
TEST_F(ConfigTest, InfinirtConfigNamingADirectoryIsReportedAsSuch) {
  Set("INFINIRT_CONFIG", std::string(CONFIG_DATA_DIR));
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(
      log, {"[error]", "INFINIRT_CONFIG=" + std::string(CONFIG_DATA_DIR), "is a directory"}))
      << log;
  EXPECT_FALSE(Contains(log, "JSON")) << log;
  EXPECT_EQ(DeviceCount(), 4);
}

// --- Values that reach the loader and the device list -------------------------------------

TEST_F(ConfigTest, BackendsKeyFiltersLikeTheEnvironmentVariable) {
  Set("INFINIRT_CONFIG", DataFile("backends_cpu.json"));
  EXPECT_EQ(StatusOf("cpu"), infinirtBackendLoaded);
  EXPECT_EQ(StatusOf("fake_nvidia"), infinirtBackendFilteredOut);
  EXPECT_EQ(StatusOf("fake_ascend"), infinirtBackendFilteredOut);
  EXPECT_EQ(DeviceCount(), 1);
}

TEST_F(ConfigTest, InfinirtBackendsOverridesTheBackendsKey) {
  Set("INFINIRT_CONFIG", DataFile("backends_cpu.json"));
  Set("INFINIRT_BACKENDS", "cpu,fake_ascend");
  EXPECT_EQ(StatusOf("fake_ascend"), infinirtBackendLoaded);
  EXPECT_EQ(StatusOf("fake_nvidia"), infinirtBackendFilteredOut);
  EXPECT_EQ(DeviceCount(), 2);
}

TEST_F(ConfigTest, VisibleDevicesKeyAppliesAndTheEnvironmentOverridesIt) {
  Set("INFINIRT_CONFIG", DataFile("visible_devices.json"));  // "3": the CPU only
  EXPECT_EQ(DeviceCount(), 1);
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  Set("INFINIRT_VISIBLE_DEVICES", "0,2");
  EXPECT_EQ(DeviceCount(), 2);
  infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
  EXPECT_EQ(infinirtDeviceGetType(&type, 1), infinirtSuccess);
  EXPECT_EQ(type, INFINI_DEVICE_ASCEND);
}

TEST_F(ConfigTest, PluginSearchPathsAddDirectoriesWhenThePathVariableIsUnset) {
  Set("INFINIRT_PLUGIN_PATH", std::nullopt);
  Set("INFINIRT_CONFIG", std::string(GENERATED_CONFIG_DIR) + "/search_paths.json");
  const std::string log = InitLog();
  EXPECT_EQ(StatusOf("fake_nvidia"), infinirtBackendLoaded);
  EXPECT_EQ(StatusOf("cpu"), infinirtBackendLoaded);  // the default directory still counts
  // The file's relative entry is refused like a relative INFINIRT_PLUGIN_PATH entry.
  EXPECT_TRUE(HasLineWith(log, {"[warning]", "'relative/plugins'"})) << log;
}

// --- The CPU plugin's section -------------------------------------------------------------

TEST_F(ConfigTest, WorkerThreadsReachTheCpuPlugin) {
  Set("INFINIRT_CONFIG", DataFile("worker_threads.json"));
  EXPECT_EQ(CpuAsyncEngineCount(), 3);
  infinirtDeviceProp prop{};
  int cpu = -1;
  ASSERT_EQ(infinirtDeviceGetOrdinal(&cpu, INFINI_DEVICE_CPU, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGetDeviceProperties(&prop, cpu), infinirtSuccess);
  EXPECT_EQ(prop.asyncEngineCount, 3);
}

TEST_F(ConfigTest, InvalidWorkerThreadsAreReportedAndTheAutomaticValueApplies) {
  const int automatic = CpuAsyncEngineCount();  // with the empty configuration
  ASSERT_GT(automatic, 0);
  for (const char* file : {"worker_threads_invalid.json", "worker_threads_negative.json"}) {
    SCOPED_TRACE(file);
    ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
    Set("INFINIRT_CONFIG", DataFile(file));
    const std::string log = InitLog();
    EXPECT_TRUE(HasLineWith(log, {"[error]", "[cpu]", "worker_threads"})) << log;
    EXPECT_EQ(CpuAsyncEngineCount(), automatic);
  }
}

TEST_F(ConfigTest, InvalidInlineBytesAreReported) {
  Set("INFINIRT_CONFIG", DataFile("inline_bytes_negative.json"));
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(log, {"[error]", "[cpu]", "inline_bytes"})) << log;
  EXPECT_GT(CpuAsyncEngineCount(), 0);  // the CPU plugin initialised all the same
}

// --- log_level ----------------------------------------------------------------------------

TEST_F(ConfigTest, LogLevelKeyAppliesWithoutTheEnvironmentVariable) {
  Set("INFINIRT_LOG_LEVEL", std::nullopt);
  Set("INFINIRT_CONFIG", DataFile("log_level_debug.json"));
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(log, {"[debug]", "loader:"})) << log;
}

TEST_F(ConfigTest, InvalidLogLevelIsReported) {
  Set("INFINIRT_LOG_LEVEL", std::nullopt);
  Set("INFINIRT_CONFIG", DataFile("log_level_invalid.json"));
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(log, {"[error]", "log_level", "'loud'"})) << log;
  EXPECT_EQ(DeviceCount(), 4);
}

TEST_F(ConfigTest, LogLevelNamesAreCaseInsensitive) {
  for (const char* level : {"DEBUG", "Debug", "debug"}) {
    SCOPED_TRACE(level);
    ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
    Set("INFINIRT_LOG_LEVEL", level);
    const std::string log = InitLog();
    EXPECT_TRUE(HasLineWith(log, {"[debug]", "loader:"})) << log;
    EXPECT_FALSE(Contains(log, "is not one of")) << log;
  }
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  Set("INFINIRT_LOG_LEVEL", std::nullopt);
  Set("INFINIRT_CONFIG", DataFile("log_level_mixed_case.json"));  // "Debug"
  const std::string log = InitLog();
  EXPECT_TRUE(HasLineWith(log, {"[debug]", "loader:"})) << log;
  EXPECT_FALSE(Contains(log, "[error]")) << log;
}

TEST_F(ConfigTest, InfinirtLogLevelOverridesTheLogLevelKey) {
  Set("INFINIRT_LOG_LEVEL", "error");
  Set("INFINIRT_CONFIG", DataFile("log_level_debug.json"));
  const std::string log = InitLog();
  EXPECT_FALSE(Contains(log, "[debug]")) << log;
}

}  // namespace
}  // namespace infinirt::loader_test
