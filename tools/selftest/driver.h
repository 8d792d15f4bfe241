// The driver role: finds the backends to test, runs the tests of each in child processes of
// this program and collects their results (driver.cc); prints them and writes the JSON report
// (report.cc).
#ifndef INFINIRT_TOOLS_SELFTEST_DRIVER_H_
#define INFINIRT_TOOLS_SELFTEST_DRIVER_H_

#include <string>
#include <vector>

#include "infinirt.h"
#include "selftest.h"

namespace infinirt::selftest {

struct Options {
  std::vector<std::string> backends;  // --backend; empty: every backend with a device
  std::vector<Area> areas;            // --area; empty: every area
  int test_timeout_seconds = 60;
  int total_timeout_seconds = 3600;
  std::string json_path;
  bool verbose = false;
};

// A backend under test, as the public API describes it.
struct Backend {
  infinirtBackendProp prop{};
  std::string name;
  std::vector<std::string> device_names;
  // Its vendor runtime is one of the test suite's host-emulated runtimes, not the vendor's.
  bool emulated = false;
  // What the cross-backend tests pair its device 0 with: "cpu" (the CPU backend's device), or
  // "cpu device 1" when the backend is the CPU's itself.
  std::string cross_peer;
  std::vector<TestResult> results;
};

struct Run {
  std::vector<Backend> backends;
  bool vendor_device_found = false;
  double seconds = 0;
};

// Every backend the public API lists (loaded or not).
std::vector<infinirtBackendProp> ListBackends();

// Whether the runtime library loaded in this process is one of the host-emulated runtimes of
// tests/emulated_runtimes (they export the symbol infinirt_emulated_runtime).
bool IsEmulatedRuntime(const std::string& runtime_library);

// Runs the tests; the backends must have devices (main.cc checks --backend first).
Run RunSelfTest(const Options& options, const std::vector<Backend>& backends);

// The backends to test: those named (all of them must exist and have a device; an error
// message otherwise) or, with none named, every backend with a device.
bool SelectBackends(const std::vector<std::string>& names, std::vector<Backend>* selected,
                    std::string* error);

// report.cc
void PrintMatrix(const Run& run, const Options& options);
bool WriteJsonReport(const Run& run, const Options& options, const std::string& path,
                     std::string* error);
// Whether nothing failed, timed out, crashed or stayed unrun.
bool Passed(const Run& run);

}  // namespace infinirt::selftest

#endif  // INFINIRT_TOOLS_SELFTEST_DRIVER_H_
