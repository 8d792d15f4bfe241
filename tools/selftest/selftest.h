// infinirt-selftest's shared vocabulary: the areas of the matrix, the outcome of one test, and
// the entry points of its three roles (driver, child, IPC peer). See docs/selftest.md.
#ifndef INFINIRT_TOOLS_SELFTEST_SELFTEST_H_
#define INFINIRT_TOOLS_SELFTEST_SELFTEST_H_

#include <optional>
#include <string>
#include <vector>

namespace infinirt::selftest {

// The rows of the matrix. Every test of the program belongs to exactly one (areas.cc).
enum class Area {
  kDevices,
  kMemory,
  kStreams,
  kEvents,
  kCapture,
  kGraphs,
  kStreamOrderedMemory,
  kCrossBackend,
};

struct AreaName {
  Area area;
  const char* key;    // for --area and the JSON report
  const char* title;  // for the matrix
};

// Every area, in the matrix's order.
const std::vector<AreaName>& AllAreas();
const AreaName& NameOf(Area area);
std::optional<Area> AreaByKey(const std::string& key);

// The area of a test, from the source file that defines it and its name; nothing when no rule
// places it (the self-test's own tests check that this never happens).
std::optional<Area> AreaOfTest(const std::string& source_file, const std::string& test_name);

// A test of this program, "Suite.Name" as --gtest_filter spells it.
struct TestCase {
  std::string name;
  std::string source_file;
  std::optional<Area> area;
};

// Every test compiled into this program, in GoogleTest's order.
std::vector<TestCase> RegisteredTests();

enum class Outcome {
  kPassed,
  kFailed,
  kNotSupported,  // skipped because the backend answered NotSupported ("not supported by ...")
  kSkipped,       // skipped for another reason (one device where the test needs two, ...)
  kTimeout,       // ran longer than --test-timeout
  kCrashed,       // the test process ended while the test ran
  kNotRun,        // the run's total time was over, or the test process could not start
};

const char* OutcomeKey(Outcome outcome);
// Whether the outcome makes the self-test fail.
bool IsProblem(Outcome outcome);

struct TestResult {
  std::string name;
  Area area = Area::kDevices;
  Outcome outcome = Outcome::kNotRun;
  std::string message;
};

// The child role: runs the tests GoogleTest's arguments select and writes one JSON line per
// test start and end into results_path; a test that runs longer than timeout_seconds is
// recorded as timed out and ends the process.
int RunChild(const std::string& results_path, int timeout_seconds, int argc, char** argv);

}  // namespace infinirt::selftest

#endif  // INFINIRT_TOOLS_SELFTEST_SELFTEST_H_
