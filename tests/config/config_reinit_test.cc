// Re-initialisation (infinirtFinalize, then any call) reads the configuration and the
// environment afresh: nothing a previous initialisation applied may outlive it. A separate
// CTest entry from config_api_test, whose tests each start with INFINIRT_LOG_LEVEL set and so
// do not depend on this.
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "config_test_support.h"
#include "infinirt.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

using ConfigReinit = ConfigTest;

TEST_F(ConfigReinit, LogLevelOfAPreviousConfigDoesNotOutliveIt) {
  Set("INFINIRT_LOG_LEVEL", std::nullopt);
  Set("INFINIRT_CONFIG", DataFile("log_level_debug.json"));
  ASSERT_TRUE(HasLineWith(InitLog(), {"[debug]"}));
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  Set("INFINIRT_CONFIG", DataFile("empty.json"));
  const std::string log = InitLog();
  EXPECT_FALSE(Contains(log, "[debug]")) << log;
}

TEST_F(ConfigReinit, LogLevelOfAPreviousEnvironmentDoesNotOutliveIt) {
  Set("INFINIRT_LOG_LEVEL", "debug");
  ASSERT_TRUE(HasLineWith(InitLog(), {"[debug]"}));
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  Set("INFINIRT_LOG_LEVEL", std::nullopt);
  const std::string log = InitLog();
  EXPECT_FALSE(Contains(log, "[debug]")) << log;
}

}  // namespace
}  // namespace infinirt::loader_test
