// Every plugin this project builds holds to the plugin ABI's lifecycle rule
// (include/infinirt_plugin.h): a repeated Initialize answers infinirtSuccess and changes
// nothing, a Finalize without Initialize answers infinirtSuccess, and Initialize after Finalize
// starts afresh. The plugins are opened directly with dlopen, without the core.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <sstream>
#include <string>
#include <vector>

#include "infinirt_plugin.h"

namespace {

// PLUGIN_FILES: the plugin files to check, separated by ':'.
std::vector<std::string> PluginFiles() {
  std::vector<std::string> files;
  const char* list = std::getenv("PLUGIN_FILES");
  std::istringstream stream(list != nullptr ? list : "");
  for (std::string file; std::getline(stream, file, ':');) {
    if (!file.empty()) files.push_back(file);
  }
  return files;
}

void IgnoreLog(infinirtLogLevel_t, const char*, const char*) {}

infinirtPluginHost Host() {
  infinirtPluginHost host{};
  host.struct_size = sizeof(host);
  host.abi_major = INFINIRT_PLUGIN_ABI_MAJOR;
  host.abi_minor = INFINIRT_PLUGIN_ABI_MINOR;
  host.log = IgnoreLog;
  host.config_json = "{}";
  return host;
}

// The plugin's table, opened with dlopen. The plugins stay mapped: some keep their vendor
// runtime loaded for the process.
const infinirtPluginTable* OpenTable(const std::string& file) {
  void* library = dlopen(file.c_str(), RTLD_NOW | RTLD_LOCAL);
  if (library == nullptr) {
    ADD_FAILURE() << dlerror();
    return nullptr;
  }
  auto get_table =
      reinterpret_cast<infinirtPluginGetTableFn>(dlsym(library, INFINIRT_PLUGIN_ENTRY_SYMBOL));
  if (get_table == nullptr) {
    ADD_FAILURE() << file << " exports no " INFINIRT_PLUGIN_ENTRY_SYMBOL;
    return nullptr;
  }
  return get_table();
}

class PluginLifecycle : public ::testing::TestWithParam<std::string> {
 protected:
  void SetUp() override {
    table_ = OpenTable(GetParam());
    ASSERT_NE(table_, nullptr);
    ASSERT_NE(table_->Initialize, nullptr);
    ASSERT_NE(table_->Finalize, nullptr);
  }
  const infinirtPluginTable* table_ = nullptr;
  const infinirtPluginHost host_ = Host();
};

TEST_P(PluginLifecycle, FinalizeWithoutInitializeSucceeds) {
  EXPECT_EQ(table_->Finalize(), infinirtSuccess);
}

TEST_P(PluginLifecycle, RepeatedInitializeSucceedsAndChangesNothing) {
  ASSERT_EQ(table_->Initialize(&host_), infinirtSuccess);
  int count = -1;
  ASSERT_EQ(table_->GetDeviceCount(&count), infinirtSuccess);
  EXPECT_EQ(table_->Initialize(&host_), infinirtSuccess);
  EXPECT_EQ(table_->Initialize(nullptr), infinirtSuccess) << "the first host table stays";
  int again = -1;
  ASSERT_EQ(table_->GetDeviceCount(&again), infinirtSuccess);
  EXPECT_EQ(again, count);
  EXPECT_EQ(table_->Finalize(), infinirtSuccess);
  EXPECT_EQ(table_->Finalize(), infinirtSuccess);
}

TEST_P(PluginLifecycle, InitializeAfterFinalizeStartsAfresh) {
  for (int round = 0; round < 3; ++round) {
    ASSERT_EQ(table_->Initialize(&host_), infinirtSuccess) << "round " << round;
    int count = -1;
    EXPECT_EQ(table_->GetDeviceCount(&count), infinirtSuccess);
    ASSERT_EQ(table_->Finalize(), infinirtSuccess) << "round " << round;
  }
}

std::string PluginName(const ::testing::TestParamInfo<std::string>& info) {
  std::string name = info.param.substr(info.param.find_last_of('/') + 1);
  for (char& c : name) {
    if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
  }
  return name;
}

INSTANTIATE_TEST_SUITE_P(EveryPlugin, PluginLifecycle, ::testing::ValuesIn(PluginFiles()),
                         PluginName);

TEST(PluginLifecycleList, NamesThePlugins) { EXPECT_GE(PluginFiles().size(), 8u); }

// A failed Initialize leaves the plugin uninitialised: the next Initialize tries again (and
// fails again here), and Finalize has nothing to undo.
TEST(PluginLifecycleFailure, AFailedInitializeIsNotRemembered) {
  const char* file = std::getenv("INIT_FAILS_PLUGIN");
  ASSERT_NE(file, nullptr);
  const infinirtPluginTable* table = OpenTable(file);
  ASSERT_NE(table, nullptr);
  const infinirtPluginHost host = Host();
  EXPECT_EQ(table->Initialize(&host), infinirtErrorInitializationError);
  EXPECT_EQ(table->Initialize(&host), infinirtErrorInitializationError);
  EXPECT_EQ(table->Finalize(), infinirtSuccess);
}

}  // namespace
