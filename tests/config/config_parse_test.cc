// infinirt::core::ParseConfig on its own: every problem is a complete message naming the file
// (and line:column, or the key), and every value that was valid survives.
#include <gtest/gtest.h>

#include <cstdio>
#include <string>
#include <utility>
#include <vector>

#include "config.h"

namespace infinirt::core {
namespace {

constexpr char kSource[] = "/etc/example/infinirt.json";

struct Parsed {
  Config config;
  std::vector<std::string> problems;  // the errors
  std::vector<std::string> warnings;
};

Parsed Parse(const std::string& text) {
  Parsed parsed;
  ConfigProblems problems;
  parsed.config = ParseConfig(text, kSource, &problems);
  parsed.problems = problems.errors;
  parsed.warnings = problems.warnings;
  return parsed;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// The built-in defaults, field by field.
void ExpectDefaults(const Config& config) {
  EXPECT_FALSE(config.log_level.has_value());
  EXPECT_TRUE(config.backends.empty());
  EXPECT_TRUE(config.plugin_search_paths.empty());
  EXPECT_FALSE(config.visible_devices.has_value());
  EXPECT_TRUE(config.plugins.is_object());
  EXPECT_TRUE(config.plugins.empty());
}

TEST(ParseConfig, ValidFileYieldsEveryValueAndNoProblem) {
  const Parsed parsed = Parse(R"({
    "log_level": "debug",
    "backends": ["cpu", "nvidia"],
    "plugin_search_paths": ["/opt/plugins"],
    "visible_devices": "1,0",
    "plugins": {"cpu": {"worker_threads": 3}}
  })");
  EXPECT_TRUE(parsed.problems.empty()) << parsed.problems[0];
  EXPECT_TRUE(parsed.warnings.empty()) << parsed.warnings[0];
  const Config& config = parsed.config;
  EXPECT_EQ(config.source, kSource);
  EXPECT_EQ(config.log_level, "debug");
  EXPECT_EQ(config.backends, (std::vector<std::string>{"cpu", "nvidia"}));
  EXPECT_EQ(config.plugin_search_paths, std::vector<std::string>{"/opt/plugins"});
  EXPECT_EQ(config.visible_devices, "1,0");
  EXPECT_EQ(config.plugins["cpu"]["worker_threads"], 3);
}

// "<source>:<line>:<column>: " at the start of a message, or {0, 0}.
std::pair<int, int> LineAndColumnOf(const std::string& message) {
  const std::string prefix = std::string(kSource) + ":";
  int line = 0, column = 0;
  if (message.rfind(prefix, 0) != 0 ||
      std::sscanf(message.c_str() + prefix.size(), "%d:%d: ", &line, &column) != 2) {
    return {0, 0};
  }
  return {line, column};
}

TEST(ParseConfig, MalformedJsonIsReportedWithFileLineAndColumn) {
  // Line 2 has a trailing comma: the parser stops at the ']' in column 22.
  const Parsed parsed = Parse(
      "{\n"
      "  \"backends\": [\"cpu\",],\n"
      "  \"log_level\": \"warn\"\n"
      "}\n");
  ASSERT_EQ(parsed.problems.size(), 1u);
  const std::string& message = parsed.problems[0];
  EXPECT_EQ(LineAndColumnOf(message), std::make_pair(2, 22)) << message;
  EXPECT_TRUE(Contains(message, "not valid JSON")) << message;
  EXPECT_TRUE(Contains(message, "defaults")) << message;
}

TEST(ParseConfig, MalformedJsonPointsIntoTheUnexpectedToken) {
  // Line 3 lacks its comma, so the string that opens line 4 (columns 3 to 19) is unexpected.
  const Parsed parsed = Parse(
      "{\n"
      "  \"backends\": [\"cpu\"],\n"
      "  \"log_level\": \"warn\"\n"
      "  \"visible_devices\": \"0\"\n"
      "}\n");
  ASSERT_EQ(parsed.problems.size(), 1u);
  const auto [line, column] = LineAndColumnOf(parsed.problems[0]);
  EXPECT_EQ(line, 4) << parsed.problems[0];
  EXPECT_GE(column, 3) << parsed.problems[0];
  EXPECT_LE(column, 19) << parsed.problems[0];
}

TEST(ParseConfig, MalformedJsonKeepsNothingOfTheFile) {
  // "backends" parsed fine before the error; it must not be half-applied.
  const Parsed parsed = Parse("{\"backends\": [\"cpu\"], \"log_level\": }");
  ASSERT_EQ(parsed.problems.size(), 1u);
  ExpectDefaults(parsed.config);
  EXPECT_EQ(parsed.config.source, "");
}

// Found by config_fuzzer: a number beyond a double's range is valid JSON that nlohmann refuses
// with out_of_range, not parse_error; it escaped ParseConfig, so that every call of the
// runtime failed instead of the defaults applying.
TEST(ParseConfig, NumberTooLargeForADoubleIsReportedAndTheDefaultsApply) {
  const Parsed parsed = Parse(R"({"log_level": "debug", "plugins": {"cpu": 1111E1111}})");
  ASSERT_EQ(parsed.problems.size(), 1u);
  EXPECT_TRUE(Contains(parsed.problems[0], kSource)) << parsed.problems[0];
  EXPECT_TRUE(Contains(parsed.problems[0], "number overflow")) << parsed.problems[0];
  EXPECT_TRUE(Contains(parsed.problems[0], "using the defaults")) << parsed.problems[0];
  EXPECT_FALSE(parsed.config.log_level.has_value());
  EXPECT_TRUE(parsed.config.source.empty());
}

TEST(ParseConfig, TopLevelThatIsNotAnObjectIsReported) {
  const Parsed parsed = Parse("[\"cpu\"]");
  ASSERT_EQ(parsed.problems.size(), 1u);
  EXPECT_TRUE(Contains(parsed.problems[0], kSource)) << parsed.problems[0];
  EXPECT_TRUE(Contains(parsed.problems[0], "object")) << parsed.problems[0];
  ExpectDefaults(parsed.config);
}

TEST(ParseConfig, KeysOfTheWrongTypeAreNamedAndKeepTheirDefaults) {
  const Parsed parsed = Parse(R"({
    "log_level": 3,
    "backends": "cpu",
    "plugin_search_paths": ["/opt/plugins", 7],
    "visible_devices": 0,
    "plugins": {"cpu": 4}
  })");
  ExpectDefaults(parsed.config);
  ASSERT_EQ(parsed.problems.size(), 5u);
  const std::vector<std::string> keys = {"'log_level'", "'backends'", "'plugin_search_paths'",
                                         "'visible_devices'", "'plugins.cpu'"};
  for (const std::string& key : keys) {
    bool named = false;
    for (const std::string& problem : parsed.problems) {
      named = named || (Contains(problem, key) && Contains(problem, kSource));
    }
    EXPECT_TRUE(named) << key << " is not named in a problem";
  }
}

TEST(ParseConfig, ValidKeysSurviveBesideAKeyOfTheWrongType) {
  const Parsed parsed = Parse(R"({"backends": "cpu", "visible_devices": "3"})");
  ASSERT_EQ(parsed.problems.size(), 1u);
  EXPECT_TRUE(Contains(parsed.problems[0], "'backends'")) << parsed.problems[0];
  EXPECT_TRUE(parsed.config.backends.empty());
  EXPECT_EQ(parsed.config.visible_devices, "3");
}

// An unknown key loses nothing (it may be a key of a newer InfiniRT): a warning, not an error.
TEST(ParseConfig, UnknownKeysAreWarningsAndUnderscoreKeysAreComments) {
  const Parsed parsed = Parse(R"({"_comment": "x", "bakends": ["cpu"], "backends": ["cpu"]})");
  EXPECT_TRUE(parsed.problems.empty()) << parsed.problems[0];
  ASSERT_EQ(parsed.warnings.size(), 1u);
  EXPECT_TRUE(Contains(parsed.warnings[0], "unknown key 'bakends'")) << parsed.warnings[0];
  EXPECT_TRUE(Contains(parsed.warnings[0], kSource)) << parsed.warnings[0];
  EXPECT_EQ(parsed.config.backends, std::vector<std::string>{"cpu"});
}

TEST(ParseConfig, PluginSectionsArePassedOnAsTheyAre) {
  // The core does not judge a plugin's own keys; the plugin does (see config_api_test).
  const Parsed parsed = Parse(R"({"plugins": {"cpu": {"worker_threads": "many"}, "x": {}}})");
  EXPECT_TRUE(parsed.problems.empty());
  EXPECT_EQ(parsed.config.plugins["cpu"]["worker_threads"], "many");
  EXPECT_TRUE(parsed.config.plugins.contains("x"));
}

}  // namespace
}  // namespace infinirt::core
