// infinirt-selftest: checks InfiniRT on this machine's devices with one command. It runs the
// conformance suite (tests/conformance, statements S1-S62 of docs/cuda-semantics.md) and a few
// cross-backend copies against every backend with a device, each test bounded in time, prints
// a matrix of areas and backends, and writes a JSON report to attach to a bug
// (docs/selftest.md).
//
// One program, three roles, chosen by its first argument:
//   infinirt-selftest [options]                 the driver (driver.cc, report.cc)
//   infinirt-selftest --child RESULTS TIMEOUT   a child the driver starts (child.cc)
//   infinirt-selftest export|import|pool-import ...
//                                               S62's and S63's other process (ipc_peer.cc)
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "driver.h"
#include "selftest.h"

int infinirt_ipc_peer_main(int argc, char** argv);  // tests/common/ipc_peer.cc's main

namespace infinirt::selftest {
namespace {

constexpr int kUsageError = 2;

// The names --area takes, in lines of at most 80 columns indented by two.
std::string AreaKeys() {
  const std::vector<AreaName>& areas = AllAreas();
  std::string text, line = " ";
  for (size_t i = 0; i < areas.size(); ++i) {
    const std::string word = std::string(areas[i].key) + (i + 1 < areas.size() ? "," : "");
    if (line.size() + 1 + word.size() > 80) {
      text += line + "\n";
      line = " ";
    }
    line += " " + word;
  }
  return text + line;
}

void PrintHelp() {
  std::printf(
      "usage: infinirt-selftest [--backend NAME]... [--area NAME]... [--test-timeout S]\n"
      "                         [--total-timeout S] [--json FILE] [-v]\n"
      "       infinirt-selftest --list | --help\n"
      "\n"
      "Runs InfiniRT's conformance suite (the CUDA Runtime semantics it implements)\n"
      "and cross-backend copies against every backend that has a device, one child\n"
      "process per backend, and prints a matrix of areas and backends. Attach the JSON\n"
      "report to an issue in the project's issue tracker.\n"
      "\n"
      "  --backend NAME     test this backend only (repeatable; see infinirt-info)\n"
      "  --area NAME        test this area only (repeatable; the areas are below)\n"
      "  --test-timeout S   seconds one test may run before it counts as timed out\n"
      "                     (default 60)\n"
      "  --total-timeout S  seconds the whole run may take; tests left count as not\n"
      "                     run (default 3600)\n"
      "  --json FILE        also write the report as JSON to FILE\n"
      "  --list             list the areas and their tests, and exit\n"
      "  -v, --verbose      also list the skipped tests with their reasons\n"
      "  -h, --help         this text\n"
      "\n"
      "Exit status: 0 when every test passed or was skipped (a backend's NotSupported\n"
      "answer is a skip), 1 when a test failed, timed out, crashed or was not run, 2\n"
      "for a bad argument or when there is nothing to test.\n"
      "\n"
      "Areas:\n%s\n",
      AreaKeys().c_str());
}

int UsageError(const std::string& message) {
  std::fprintf(stderr, "infinirt-selftest: %s (try --help)\n", message.c_str());
  return kUsageError;
}

// A whole number of seconds, at least 1.
bool ParseSeconds(const char* text, int* seconds) {
  char* end = nullptr;
  const long value = std::strtol(text, &end, 10);
  if (end == text || *end != '\0' || value < 1 || value > 24 * 3600) return false;
  *seconds = static_cast<int>(value);
  return true;
}

// Every area with its tests; a test no rule places is listed as unmapped and makes it fail.
int PrintList() {
  const std::vector<TestCase> tests = RegisteredTests();
  for (const AreaName& area : AllAreas()) {
    std::printf("%s:\n", area.key);
    for (const TestCase& test : tests) {
      if (test.area == area.area) std::printf("  %s\n", test.name.c_str());
    }
  }
  int unmapped = 0;
  for (const TestCase& test : tests) {
    if (test.area) continue;
    if (unmapped++ == 0) std::printf("unmapped (no area: tools/selftest/areas.cc):\n");
    std::printf("  %s (%s)\n", test.name.c_str(), test.source_file.c_str());
  }
  return unmapped == 0 ? 0 : 1;
}

void PrintBackends(const std::vector<Backend>& backends) {
  std::printf("Backends under test:\n");
  for (const Backend& backend : backends) {
    std::string devices;
    for (const std::string& name : backend.device_names) {
      devices += (devices.empty() ? "" : ", ") + name;
    }
    std::printf("  %s: %zu device(s)%s%s\n", backend.name.c_str(), backend.device_names.size(),
                devices.empty() ? "" : ": ", devices.c_str());
    if (backend.prop.runtimeVersion >= 0) {  // the CPU backend has no vendor runtime
      std::printf("    runtime %s, version %d%s\n", backend.prop.runtimeLibrary,
                  backend.prop.runtimeVersion,
                  backend.emulated ? " (EMULATED: a test runtime of InfiniRT, not hardware)" : "");
    }
    // What the plugin refuses of this runtime, and why (an attribute numbering it could not
    // confirm, ...): the first thing to read in a report.
    if (backend.prop.reason[0]) std::printf("    note: %s\n", backend.prop.reason);
  }
  std::printf("\n");
}

int RunDriver(const Options& options) {
  std::vector<Backend> backends;
  std::string error;
  if (!SelectBackends(options.backends, &backends, &error)) {
    std::fprintf(stderr, "infinirt-selftest: %s\n", error.c_str());
    return kUsageError;
  }
  const bool vendor = std::any_of(backends.begin(), backends.end(),
                                  [](const Backend& b) { return b.name != "cpu"; });
  if (!vendor && options.backends.empty()) {
    std::printf("no vendor device found: running the CPU backend only\n\n");
  }
  PrintBackends(backends);
  // The children use the devices: this process lets go of the runtimes (a device in an
  // exclusive compute mode takes one process only).
  infinirtFinalize();
  const Run run = RunSelfTest(options, backends);
  PrintMatrix(run, options);
  if (!options.json_path.empty()) {
    if (!WriteJsonReport(run, options, options.json_path, &error)) {
      std::fprintf(stderr, "infinirt-selftest: %s\n", error.c_str());
      return 1;
    }
    std::printf("JSON report written to %s\n", options.json_path.c_str());
  }
  return Passed(run) ? 0 : 1;
}

bool Is(const char* argument, const char* name) { return std::strcmp(argument, name) == 0; }

// Parses the driver's options; returns -1 to go on, else the exit status.
int ParseOptions(int argc, char** argv, Options* options) {
  bool list = false;
  for (int i = 1; i < argc; ++i) {
    const char* argument = argv[i];
    const bool takes_value = Is(argument, "--backend") || Is(argument, "--area") ||
                             Is(argument, "--test-timeout") || Is(argument, "--total-timeout") ||
                             Is(argument, "--json");
    if (takes_value && i + 1 >= argc) return UsageError(std::string(argument) + " needs a value");
    const char* value = takes_value ? argv[++i] : nullptr;
    if (Is(argument, "-h") || Is(argument, "--help")) {
      PrintHelp();
      return 0;
    } else if (Is(argument, "--list")) {
      list = true;
    } else if (Is(argument, "-v") || Is(argument, "--verbose")) {
      options->verbose = true;
    } else if (Is(argument, "--backend")) {
      options->backends.push_back(value);
    } else if (Is(argument, "--area")) {
      const std::optional<Area> area = AreaByKey(value);
      if (!area) return UsageError(std::string("unknown area '") + value + "'");
      options->areas.push_back(*area);
    } else if (Is(argument, "--test-timeout")) {
      if (!ParseSeconds(value, &options->test_timeout_seconds)) {
        return UsageError(std::string("--test-timeout wants whole seconds, not '") + value + "'");
      }
    } else if (Is(argument, "--total-timeout")) {
      if (!ParseSeconds(value, &options->total_timeout_seconds)) {
        return UsageError(std::string("--total-timeout wants whole seconds, not '") + value + "'");
      }
    } else if (Is(argument, "--json")) {
      options->json_path = value;
    } else {
      return UsageError(std::string("unknown argument '") + argument + "'");
    }
  }
  return list ? PrintList() : -1;
}

}  // namespace
}  // namespace infinirt::selftest

int main(int argc, char** argv) {
  using namespace infinirt::selftest;
  if (argc >= 2 && (Is(argv[1], "export") || Is(argv[1], "import") || Is(argv[1], "pool-import"))) {
    return infinirt_ipc_peer_main(argc, argv);
  }
  if (argc >= 4 && Is(argv[1], "--child")) {
    int timeout = 0;
    if (!ParseSeconds(argv[3], &timeout)) return UsageError("--child wants RESULTS SECONDS");
    argv[3] = argv[0];  // GoogleTest reads the arguments after the program's name
    return RunChild(argv[2], timeout, argc - 3, argv + 3);
  }
  Options options;
  const int status = ParseOptions(argc, argv, &options);
  return status >= 0 ? status : RunDriver(options);
}
