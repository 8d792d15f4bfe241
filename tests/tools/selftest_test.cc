// infinirt-selftest as a user runs it: on the CPU backend it passes, prints the matrix and
// writes a JSON report that says what ran; a test that hangs or crashes costs only itself; a
// backend over one of the test suite's emulated runtimes is marked emulated; every test of the
// program has an area, and the program holds every test of the conformance suite; bad input is
// exit status 2. Each group runs as its own CTest test (tests/tools/CMakeLists.txt).
#include "selftest.h"

#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <fstream>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include "infinirt.h"
#include "test_support.h"

namespace infinirt::selftest {
namespace {

using ToolRun = infinirt::testing::CommandRun;

// Runs `environment program arguments` through the shell (environment: "A=1 B=2" or "").
ToolRun RunProgram(const std::string& program, const std::string& arguments,
                   const std::string& environment = "") {
  return infinirt::testing::RunCommand((environment.empty() ? "" : "env " + environment + " ") +
                                       "'" + program + "' " + arguments + " 2>&1");
}

ToolRun RunSelftest(const std::string& arguments, const std::string& environment = "") {
  return RunProgram(INFINIRT_SELFTEST, arguments, environment);
}

// A file name of its own for this test's report.
std::string ReportPath(const std::string& name) {
  return ::testing::TempDir() + "selftest_" + name + "_" + std::to_string(getpid()) + ".json";
}

nlohmann::json ReadJson(const std::string& path) {
  std::ifstream in(path);
  return nlohmann::json::parse(in, nullptr, /*allow_exceptions=*/false);
}

const nlohmann::json* FindBackend(const nlohmann::json& report, const std::string& name) {
  for (const nlohmann::json& backend : report["backends"]) {
    if (backend.value("name", "") == name) return &backend;
  }
  return nullptr;
}

const nlohmann::json* FindNotPassed(const nlohmann::json& backend, const std::string& test) {
  for (const nlohmann::json& entry : backend["not_passed"]) {
    if (entry.value("test", "") == test) return &entry;
  }
  return nullptr;
}

// The tests --list places in areas ("  Suite.Name" lines below an "area:" line).
std::set<std::string> ListedTests(const std::string& listing) {
  std::set<std::string> tests;
  std::istringstream lines(listing);
  for (std::string line; std::getline(lines, line);) {
    if (line.rfind("  ", 0) == 0) tests.insert(line.substr(2));
  }
  return tests;
}

// The tests of a GoogleTest program, from --gtest_list_tests.
std::set<std::string> GtestTests(const std::string& listing) {
  std::set<std::string> tests;
  std::istringstream lines(listing);
  std::string suite;
  for (std::string line; std::getline(lines, line);) {
    if (line.empty()) continue;
    if (line[0] != ' ') {
      suite = line.substr(0, line.find('.') + 1);
    } else {
      const std::string name = line.substr(2, line.find_first_of(" #", 2) - 2);
      tests.insert(suite + name);
    }
  }
  return tests;
}

TEST(SelftestCpu, PassesPrintsTheMatrixAndWritesTheJsonReport) {
  const std::string report_path = ReportPath("cpu");
  const ToolRun run = RunSelftest("--json '" + report_path + "'", "INFINIRT_BACKENDS=cpu");
  ASSERT_EQ(run.exit_status, 0) << run.output;
  EXPECT_NE(run.output.find("no vendor device found: running the CPU backend only"),
            std::string::npos)
      << run.output;
  for (const AreaName& area : AllAreas()) {
    EXPECT_NE(run.output.find(std::string("\n  ") + area.title + " "), std::string::npos)
        << "no matrix row for " << area.title << ":\n"
        << run.output;
  }
  EXPECT_NE(run.output.find("PASSED:"), std::string::npos) << run.output;
  EXPECT_NE(run.output.find("JSON report written to " + report_path), std::string::npos);

  const nlohmann::json report = ReadJson(report_path);
  ASSERT_TRUE(report.is_object()) << "not JSON: " << report_path;
  EXPECT_EQ(report.value("infinirt_version", ""), std::to_string(INFINIRT_VERSION_MAJOR) + "." +
                                                      std::to_string(INFINIRT_VERSION_MINOR) + "." +
                                                      std::to_string(INFINIRT_VERSION_PATCH));
  EXPECT_TRUE(report.value("passed", false));
  EXPECT_FALSE(report.value("vendor_device_found", true));
  for (const char* key : {"kernel", "machine", "cpu", "cpu_count"}) {
    EXPECT_TRUE(report["host"].contains(key)) << key;
  }
  ASSERT_EQ(report["backends"].size(), 1u);
  const nlohmann::json& cpu = report["backends"][0];
  EXPECT_EQ(cpu.value("name", ""), "cpu");
  EXPECT_FALSE(cpu.value("emulated", true));
  EXPECT_FALSE(cpu["devices"].empty());
  // Every area ran, nothing failed, and the counts add up to the tests the program holds.
  int total = 0;
  for (const AreaName& area : AllAreas()) {
    const nlohmann::json& counts = cpu["areas"][area.key];
    EXPECT_GT(counts.value("total", 0), 0) << area.key;
    EXPECT_EQ(counts.value("failed", -1), 0) << area.key;
    EXPECT_EQ(
        counts.value("passed", 0) + counts.value("skipped", 0) + counts.value("not_supported", 0),
        counts.value("total", -1))
        << area.key;
    total += counts.value("total", 0);
  }
  const ToolRun list = RunSelftest("--list");
  EXPECT_EQ(static_cast<size_t>(total), ListedTests(list.output).size());
  // Skipped tests are reported with their reason, never as passes.
  for (const nlohmann::json& entry : cpu["not_passed"]) {
    EXPECT_NE(entry.value("result", ""), "passed");
    EXPECT_FALSE(entry.value("message", "").empty()) << entry.dump();
  }
  std::remove(report_path.c_str());
}

// The hanging test is stopped after --test-timeout and reported as such; the other tests of
// its area still run (in a new child process).
TEST(SelftestBounds, AHangingTestTimesOutAndTheOthersStillRun) {
  const std::string hanging = "Conformance.S12_UnrecordedEventIsComplete";
  const std::string report_path = ReportPath("hang");
  const ToolRun run = RunSelftest("--area events --test-timeout 2 --json '" + report_path + "'",
                                  "INFINIRT_BACKENDS=cpu INFINIRT_SELFTEST_HANG=" + hanging);
  EXPECT_EQ(run.exit_status, 1) << run.output;
  EXPECT_LT(run.seconds, 30) << "the hang was not bounded";
  EXPECT_NE(run.output.find("timeout  " + hanging), std::string::npos) << run.output;
  const nlohmann::json report = ReadJson(report_path);
  ASSERT_TRUE(report.is_object());
  const nlohmann::json* cpu = FindBackend(report, "cpu");
  ASSERT_NE(cpu, nullptr);
  const nlohmann::json* entry = FindNotPassed(*cpu, hanging);
  ASSERT_NE(entry, nullptr) << report.dump(2);
  EXPECT_EQ(entry->value("result", ""), "timeout");
  const nlohmann::json& events = (*cpu)["areas"]["events"];
  EXPECT_EQ(events.value("timeout", 0), 1);
  EXPECT_GT(events.value("total", 0), 5);
  EXPECT_EQ(events.value("passed", 0) + events.value("skipped", 0) + 1, events.value("total", -1))
      << "the tests after the hanging one did not all run";
  std::remove(report_path.c_str());
}

// --total-timeout stops a run whose test would otherwise wait for its --test-timeout.
TEST(SelftestBounds, TheTotalTimeoutStopsTheRun) {
  const std::string hanging = "Conformance.S12_UnrecordedEventIsComplete";
  const std::string report_path = ReportPath("total");
  const ToolRun run =
      RunSelftest("--area events --test-timeout 600 --total-timeout 2 --json '" + report_path + "'",
                  "INFINIRT_BACKENDS=cpu INFINIRT_SELFTEST_HANG=" + hanging);
  EXPECT_EQ(run.exit_status, 1) << run.output;
  EXPECT_LT(run.seconds, 30) << "the run was not bounded";
  const nlohmann::json report = ReadJson(report_path);
  ASSERT_TRUE(report.is_object());
  const nlohmann::json* cpu = FindBackend(report, "cpu");
  ASSERT_NE(cpu, nullptr);
  const nlohmann::json* entry = FindNotPassed(*cpu, hanging);
  ASSERT_NE(entry, nullptr) << report.dump(2);
  EXPECT_EQ(entry->value("result", ""), "not_run");
  EXPECT_FALSE(report.value("passed", true));
  std::remove(report_path.c_str());
}

TEST(SelftestBounds, ACrashingTestIsReportedAndTheOthersStillRun) {
  const std::string crashing = "Conformance.S13_ReRecordOverwritesThePreviousRecord";
  const std::string report_path = ReportPath("crash");
  const ToolRun run = RunSelftest("--area events --json '" + report_path + "'",
                                  "INFINIRT_BACKENDS=cpu INFINIRT_SELFTEST_CRASH=" + crashing);
  EXPECT_EQ(run.exit_status, 1) << run.output;
  const nlohmann::json report = ReadJson(report_path);
  ASSERT_TRUE(report.is_object());
  const nlohmann::json* cpu = FindBackend(report, "cpu");
  ASSERT_NE(cpu, nullptr);
  const nlohmann::json* entry = FindNotPassed(*cpu, crashing);
  ASSERT_NE(entry, nullptr) << report.dump(2);
  EXPECT_EQ(entry->value("result", ""), "crashed");
  EXPECT_NE(entry->value("message", "").find("signal"), std::string::npos) << entry->dump();
  const nlohmann::json& events = (*cpu)["areas"]["events"];
  EXPECT_EQ(events.value("passed", 0) + events.value("skipped", 0) + 1, events.value("total", -1));
  std::remove(report_path.c_str());
}

// A backend over an emulated runtime is marked so in the matrix and the report.
TEST(SelftestEmulated, ABackendOverAnEmulatedRuntimeIsMarkedEmulated) {
  const std::string runtime = std::string(EMULATED_DIR) + "/nvidia/libcudart.so.13";
  const std::string report_path = ReportPath("emulated");
  const ToolRun run = RunSelftest(
      "--backend nvidia --area devices --area cross-backend --json '" + report_path + "'",
      "INFINIRT_BACKENDS=nvidia,cpu EMU_NVIDIA_DEVICES=1 INFINIRT_NVIDIA_RUNTIME=" + runtime);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_NE(run.output.find("| nvidia (emulated)"), std::string::npos) << run.output;
  const nlohmann::json report = ReadJson(report_path);
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["backends"].size(), 1u);
  const nlohmann::json& nvidia = report["backends"][0];
  EXPECT_EQ(nvidia.value("name", ""), "nvidia");
  EXPECT_TRUE(nvidia.value("emulated", false));
  EXPECT_EQ(nvidia.value("runtime_library", ""), runtime);
  EXPECT_TRUE(report.value("vendor_device_found", false));
  EXPECT_GT(nvidia["areas"]["cross-backend"].value("passed", 0), 0)
      << "the cross-backend copies did not run with the CPU backend beside";
  std::remove(report_path.c_str());
}

// What a plugin refuses of its runtime reaches the output and the report: here a MACA whose
// device attributes are numbered in HIP's order, which the MetaX plugin refuses.
TEST(SelftestEmulated, ThePluginsNoteIsInTheReport) {
  const std::string runtime = std::string(EMULATED_DIR) + "/metax_maca_hip/libmcruntime.so";
  const std::string report_path = ReportPath("note");
  const ToolRun run = RunSelftest(
      "--backend metax --area devices --json '" + report_path + "'",
      "INFINIRT_BACKENDS=metax,cpu EMU_METAX_DEVICES=1 INFINIRT_METAX_RUNTIME=" + runtime);
  EXPECT_EQ(run.exit_status, 0) << run.output;
  EXPECT_NE(run.output.find("note: device attributes NotSupported"), std::string::npos)
      << run.output;
  const nlohmann::json report = ReadJson(report_path);
  ASSERT_TRUE(report.is_object());
  ASSERT_EQ(report["backends"].size(), 1u);
  EXPECT_NE(report["backends"][0].value("note", "").find("numbering is not CUDA's"),
            std::string::npos)
      << report.dump();
  std::remove(report_path.c_str());
}

// The rule of areas.cc: a file it does not know leaves a test unmapped, which --list reports.
TEST(SelftestAreas, TheRulePlacesTestsByFileAndStatement) {
  EXPECT_EQ(AreaOfTest("tests/conformance/streams_test.cc", "S01_X"), Area::kStreams);
  EXPECT_EQ(AreaOfTest("/a/memory_test.cc", "S24_X"), Area::kStreamOrderedMemory);
  EXPECT_EQ(AreaOfTest("/a/memory_test.cc", "S21_X"), Area::kMemory);
  EXPECT_EQ(AreaOfTest("/a/a_new_file_test.cc", "S01_X"), std::nullopt);
}

// Every test of the conformance suite is in the self-test, in an area, and nothing is unmapped.
TEST(SelftestAreas, EveryConformanceTestHasAnArea) {
  const ToolRun list = RunSelftest("--list");
  ASSERT_EQ(list.exit_status, 0) << list.output;
  EXPECT_EQ(list.output.find("unmapped"), std::string::npos) << list.output;
  const std::set<std::string> listed = ListedTests(list.output);
  const ToolRun conformance = RunProgram(CONFORMANCE_TEST, "--gtest_list_tests");
  ASSERT_EQ(conformance.exit_status, 0) << conformance.output;
  const std::set<std::string> suite = GtestTests(conformance.output);
  ASSERT_GT(suite.size(), 100u) << conformance.output;
  for (const std::string& test : suite) {
    EXPECT_EQ(listed.count(test), 1u) << test << " has no area in infinirt-selftest --list";
  }
  EXPECT_GT(listed.size(), suite.size()) << "the cross-backend copies are missing";
}

TEST(SelftestOptions, BadInputIsExitStatus2WithAMessage) {
  const struct {
    const char* arguments;
    const char* message;
  } cases[] = {
      {"--no-such-option", "unknown argument '--no-such-option'"},
      {"--area nowhere", "unknown area 'nowhere'"},
      {"--backend nosuchbackend", "unknown backend 'nosuchbackend'"},
      {"--test-timeout 0", "--test-timeout wants whole seconds"},
      {"--test-timeout x", "--test-timeout wants whole seconds"},
      {"--json", "--json needs a value"},
  };
  for (const auto& c : cases) {
    const ToolRun run = RunSelftest(c.arguments, "INFINIRT_BACKENDS=cpu");
    EXPECT_EQ(run.exit_status, 2) << c.arguments << ": " << run.output;
    EXPECT_NE(run.output.find(c.message), std::string::npos) << c.arguments << ": " << run.output;
  }
  const ToolRun help = RunSelftest("--help");
  EXPECT_EQ(help.exit_status, 0);
  for (const char* option :
       {"--backend", "--area", "--test-timeout", "--json", "--list", "stream-ordered-memory"}) {
    EXPECT_NE(help.output.find(option), std::string::npos) << option;
  }
}

}  // namespace
}  // namespace infinirt::selftest
