// The fixture shared by config_api_test and config_reinit_test: a clean environment for each
// test, set through Set() and restored afterwards, and a runtime finalized around each test.
#ifndef INFINIRT_TESTS_CONFIG_CONFIG_TEST_SUPPORT_H_
#define INFINIRT_TESTS_CONFIG_CONFIG_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "infinirt.h"
#include "loader_support.h"

namespace infinirt::loader_test {

inline std::string DataFile(const std::string& name) {
  return std::string(CONFIG_DATA_DIR) + "/" + name;
}

// The plugin path is the CPU plugin and the fake accelerators (fake_nvidia: 2 NVIDIA devices,
// fake_ascend: 1 ASCEND device): 4 devices, the CPU last, when nothing filters them.
class ConfigTest : public RuntimeTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    Set("INFINIRT_PLUGIN_PATH", CpuPlugin() + ":" + PluginDir("accel"));
    Set("INFINIRT_CONFIG", DataFile("empty.json"));
    Set("INFINIRT_LOG_LEVEL", "warn");
    Set("INFINIRT_BACKENDS", std::nullopt);
    Set("INFINIRT_VISIBLE_DEVICES", std::nullopt);
  }
  void TearDown() override {
    RuntimeTest::TearDown();
    environment_.clear();  // restores the variables, last set first
  }

  // Sets (or unsets) a variable until the end of the test.
  void Set(const char* name, const std::optional<std::string>& value) {
    environment_.push_back(std::make_unique<ScopedEnv>(name, value));
  }

  static std::string InitLog() {
    return CaptureStderrOf([] { infinirtInit(); });
  }

  static infinirtBackendStatus_t StatusOf(const std::string& backend) {
    const auto entry = OnlyEntryNamed(backend);
    return entry ? entry->status : infinirtBackendNotFound;
  }

  static int CpuAsyncEngineCount() {
    int cpu = -1;
    EXPECT_EQ(infinirtDeviceGetOrdinal(&cpu, INFINI_DEVICE_CPU, 0), infinirtSuccess);
    int value = -1;
    EXPECT_EQ(infinirtDeviceGetAttribute(&value, infinirtDevAttrAsyncEngineCount, cpu),
              infinirtSuccess);
    return value;
  }

 private:
  std::vector<std::unique_ptr<ScopedEnv>> environment_;
};

}  // namespace infinirt::loader_test

#endif  // INFINIRT_TESTS_CONFIG_CONFIG_TEST_SUPPORT_H_
