// main() for loader_test: runs the one GoogleTest suite named by INFINIRT_TEST_SCENARIO.
//
// Each CTest entry sets the environment of one scenario and names its suite. Running every
// suite in one process would run them under the wrong environment, and a misspelt suite name
// would otherwise pass with zero tests, so both are refused here.
#include <gtest/gtest.h>

#include <cstdio>
#include <cstdlib>
#include <string>

int main(int argc, char** argv) {
  testing::InitGoogleTest(&argc, argv);
  const char* scenario = std::getenv("INFINIRT_TEST_SCENARIO");
  if (scenario == nullptr || *scenario == '\0') {
    std::fprintf(stderr,
                 "loader_test: set INFINIRT_TEST_SCENARIO to a test suite name; run it through "
                 "ctest, which also sets the scenario's INFINIRT_PLUGIN_PATH\n");
    return 2;
  }
  GTEST_FLAG_SET(filter, std::string(scenario) + ".*");
  const int result = RUN_ALL_TESTS();
  if (testing::UnitTest::GetInstance()->test_to_run_count() == 0) {
    std::fprintf(stderr, "loader_test: no test in suite '%s'\n", scenario);
    return 1;
  }
  return result;
}
