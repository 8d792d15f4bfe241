// The one place that says which area of the matrix each test belongs to.
#include <gtest/gtest.h>

#include <cstring>

#include "selftest.h"

namespace infinirt::selftest {
namespace {

// The rule: a test's area is its source file's, except for the statements below, which share a
// file with tests of another area. A new conformance file needs a line here; the self-test's
// tests (tests/tools/selftest_test.cc) fail while any test has no area.
struct FileArea {
  const char* file;  // base name
  Area area;
};
constexpr FileArea kAreaOfFile[] = {
    {"device_test.cc", Area::kDevices},          // S27, S28, S41, S44, host functions
    {"device_config_test.cc", Area::kDevices},   // S45-S47, S50
    {"errors_test.cc", Area::kDevices},          // S17, S18, S20: the runtime's error state
    {"native_handles_test.cc", Area::kDevices},  // vendor handles
    {"memory_test.cc", Area::kMemory},           // S21-S26, S43 (S24, S61 below)
    {"copies_test.cc", Area::kMemory},           // S8-S11
    {"pitched_test.cc", Area::kMemory},          // S48, S49, S51
    {"ipc_test.cc", Area::kMemory},              // S62: memory shared between processes
    {"streams_test.cc", Area::kStreams},         // S1-S7, S40, S42, S60
    {"events_test.cc", Area::kEvents},           // S12-S16
    {"capture_test.cc", Area::kCapture},         // S29-S37
    {"graph_test.cc", Area::kGraphs},            // S38, S39
    {"graph_nodes_test.cc", Area::kGraphs},      // S52-S59
    {"cross_backend_copies_test.cc", Area::kCrossBackend},  // tools/selftest
};

// Statements placed by their number (the test name's "Snn_" prefix) instead of their file.
struct StatementArea {
  const char* prefix;
  Area area;
};
constexpr StatementArea kAreaOfStatement[] = {
    {"S24_", Area::kStreamOrderedMemory},  // MallocAsync, pools (memory_test.cc)
    {"S61_", Area::kStreamOrderedMemory},  // pools of one's own (memory_test.cc)
};

std::string BaseName(const std::string& path) {
  const size_t slash = path.find_last_of('/');
  return slash == std::string::npos ? path : path.substr(slash + 1);
}

bool StartsWith(const std::string& text, const char* prefix) {
  return text.compare(0, std::strlen(prefix), prefix) == 0;
}

}  // namespace

const std::vector<AreaName>& AllAreas() {
  static const std::vector<AreaName> kAreas = {
      {Area::kDevices, "devices", "devices"},
      {Area::kMemory, "memory", "memory"},
      {Area::kStreams, "streams", "streams"},
      {Area::kEvents, "events", "events"},
      {Area::kCapture, "capture", "capture"},
      {Area::kGraphs, "graphs", "graphs"},
      {Area::kStreamOrderedMemory, "stream-ordered-memory", "stream-ordered memory"},
      {Area::kCrossBackend, "cross-backend", "cross-backend copies"},
  };
  return kAreas;
}

const AreaName& NameOf(Area area) {
  for (const AreaName& name : AllAreas()) {
    if (name.area == area) return name;
  }
  return AllAreas().front();  // not reached: every Area is listed
}

std::optional<Area> AreaByKey(const std::string& key) {
  for (const AreaName& name : AllAreas()) {
    if (key == name.key) return name.area;
  }
  return std::nullopt;
}

std::optional<Area> AreaOfTest(const std::string& source_file, const std::string& test_name) {
  const std::string file = BaseName(source_file);
  std::optional<Area> area;
  for (const FileArea& rule : kAreaOfFile) {
    if (file == rule.file) area = rule.area;
  }
  if (!area) return std::nullopt;  // an unknown file: unmapped, even if the name looks known
  for (const StatementArea& rule : kAreaOfStatement) {
    if (StartsWith(test_name, rule.prefix)) area = rule.area;
  }
  return area;
}

std::vector<TestCase> RegisteredTests() {
  std::vector<TestCase> tests;
  const ::testing::UnitTest& unit = *::testing::UnitTest::GetInstance();
  for (int i = 0; i < unit.total_test_suite_count(); ++i) {
    const ::testing::TestSuite& suite = *unit.GetTestSuite(i);
    for (int j = 0; j < suite.total_test_count(); ++j) {
      const ::testing::TestInfo& info = *suite.GetTestInfo(j);
      TestCase test;
      test.name = std::string(suite.name()) + "." + info.name();
      test.source_file = info.file() ? info.file() : "";
      test.area = AreaOfTest(test.source_file, info.name());
      tests.push_back(std::move(test));
    }
  }
  return tests;
}

const char* OutcomeKey(Outcome outcome) {
  switch (outcome) {
    case Outcome::kPassed:
      return "passed";
    case Outcome::kFailed:
      return "failed";
    case Outcome::kNotSupported:
      return "not_supported";
    case Outcome::kSkipped:
      return "skipped";
    case Outcome::kTimeout:
      return "timeout";
    case Outcome::kCrashed:
      return "crashed";
    case Outcome::kNotRun:
      return "not_run";
  }
  return "unknown";
}

bool IsProblem(Outcome outcome) {
  return outcome == Outcome::kFailed || outcome == Outcome::kTimeout ||
         outcome == Outcome::kCrashed || outcome == Outcome::kNotRun;
}

}  // namespace infinirt::selftest
