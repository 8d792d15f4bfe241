// The driver role: one child process of this program per backend and group of areas, each
// with the environment that makes that backend device 0 (docs/selftest.md says why). A child
// that ends during a test (its watchdog's timeout, a crash) is replaced by a new one that runs
// the tests not yet run, so that one bad test costs only itself.
#include "driver.h"

#include <dlfcn.h>
#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/stat.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <fstream>
#include <map>
#include <nlohmann/json.hpp>
#include <set>
#include <sstream>
#include <thread>

extern char** environ;

namespace infinirt::selftest {
namespace {

using Clock = std::chrono::steady_clock;

// How long the driver waits past --test-timeout for a child that writes nothing before it
// kills it (its own watchdog should have ended it long before).
constexpr std::chrono::seconds kStallGrace{30};
// How much of a crashed child's output the report quotes.
constexpr size_t kLogTail = 1500;

std::string Lower(std::string text) {
  for (char& c : text) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return text;
}

bool HasDevices(const infinirtBackendProp& prop) {
  return prop.status == infinirtBackendLoaded && prop.deviceCount > 0;
}

// The names of the devices of each backend, by backend name.
std::map<std::string, std::vector<std::string>> DeviceNamesByBackend() {
  std::map<std::string, std::vector<std::string>> names;
  int count = 0;
  if (infinirtGetDeviceCount(&count) != infinirtSuccess) count = 0;
  for (int i = 0; i < count; ++i) {
    infinirtDeviceProp prop{};
    if (infinirtGetDeviceProperties(&prop, i) == infinirtSuccess) {
      names[prop.backendName].push_back(prop.name);
    }
  }
  infinirtGetLastError();  // no device is an answer here, not an error of the tool
  return names;
}

// Why a backend cannot be tested, for the error message of --backend.
std::string WhyNoDevice(const infinirtBackendProp& prop) {
  if (prop.status == infinirtBackendLoaded) {
    return prop.reason[0] ? prop.reason : "its runtime reports no device";
  }
  return std::string("not loaded") + (prop.reason[0] ? ": " + std::string(prop.reason) : "");
}

Backend Describe(const infinirtBackendProp& prop,
                 const std::map<std::string, std::vector<std::string>>& device_names) {
  Backend backend;
  backend.prop = prop;
  backend.name = prop.name;
  const auto names = device_names.find(backend.name);
  if (names != device_names.end()) backend.device_names = names->second;
  backend.emulated = IsEmulatedRuntime(prop.runtimeLibrary);
  backend.cross_peer = backend.name == "cpu" ? "cpu device 1" : "cpu";
  return backend;
}

// --- Child processes ------------------------------------------------------------------------

std::string SelfPath() {
  char path[4096];
  const ssize_t n = readlink("/proc/self/exe", path, sizeof(path) - 1);
  if (n <= 0) return "/proc/self/exe";
  path[n] = '\0';
  return path;
}

// This process's environment with `changes` applied (an empty value removes the variable).
std::vector<std::string> ChildEnvironment(const std::map<std::string, std::string>& changes) {
  std::vector<std::string> environment;
  for (char** entry = environ; *entry != nullptr; ++entry) {
    const std::string variable(*entry);
    if (changes.count(variable.substr(0, variable.find('='))) == 0) environment.push_back(variable);
  }
  for (const auto& [name, value] : changes) {
    if (!value.empty()) environment.push_back(name + "=" + value);
  }
  return environment;
}

std::vector<char*> Pointers(std::vector<std::string>& strings) {
  std::vector<char*> pointers;
  for (std::string& text : strings) pointers.push_back(text.data());
  pointers.push_back(nullptr);
  return pointers;
}

struct ChildEnd {
  bool started = false;
  int exit_code = -1;  // when it exited
  int signal = 0;      // when a signal ended it
  enum class Killed { kNo, kStalled, kTotalTimeout } killed = Killed::kNo;
};

off_t FileSize(const std::string& path) {
  struct stat info {};
  return stat(path.c_str(), &info) == 0 ? info.st_size : 0;
}

// Starts the child with its output in log_path and waits for it, killing it when it writes no
// result for longer than a test may take, or when the run's total time is over.
ChildEnd SpawnAndWait(std::vector<std::string> arguments, std::vector<std::string> environment,
                      const std::string& log_path, const std::string& results_path,
                      std::chrono::seconds test_timeout, Clock::time_point deadline) {
  ChildEnd end;
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 0, "/dev/null", O_RDONLY, 0);
  posix_spawn_file_actions_addopen(&actions, 1, log_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC,
                                   0600);
  posix_spawn_file_actions_adddup2(&actions, 1, 2);
  pid_t pid = -1;
  std::vector<char*> argv = Pointers(arguments);
  std::vector<char*> envp = Pointers(environment);
  const int spawned = posix_spawn(&pid, argv[0], &actions, nullptr, argv.data(), envp.data());
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) return end;
  end.started = true;
  off_t last_size = -1;
  Clock::time_point last_progress = Clock::now();
  for (;;) {
    int status = 0;
    if (waitpid(pid, &status, WNOHANG) == pid) {
      if (WIFEXITED(status)) end.exit_code = WEXITSTATUS(status);
      if (WIFSIGNALED(status)) end.signal = WTERMSIG(status);
      return end;
    }
    const off_t size = FileSize(results_path);
    if (size != last_size) {
      last_size = size;
      last_progress = Clock::now();
    }
    if (end.killed == ChildEnd::Killed::kNo) {
      if (Clock::now() > deadline) {
        end.killed = ChildEnd::Killed::kTotalTimeout;
        kill(pid, SIGKILL);
      } else if (Clock::now() - last_progress > test_timeout + kStallGrace) {
        end.killed = ChildEnd::Killed::kStalled;
        kill(pid, SIGKILL);
      }
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
}

// What the results file of one child says.
struct ChildResults {
  std::map<std::string, nlohmann::json> ended;  // test -> its "end" line
  std::string started_not_ended;                // the test it was running when it ended
  std::string timed_out;                        // the test its watchdog stopped
};

ChildResults ReadResults(const std::string& path) {
  ChildResults results;
  std::ifstream in(path);
  for (std::string line; std::getline(in, line);) {
    const nlohmann::json event = nlohmann::json::parse(line, nullptr, /*allow_exceptions=*/false);
    if (!event.is_object() || !event.contains("test")) continue;  // a line cut short
    const std::string test = event.value("test", "");
    const std::string kind = event.value("event", "");
    if (kind == "start") results.started_not_ended = test;
    if (kind == "end") {
      results.ended[test] = event;
      results.started_not_ended.clear();
    }
    if (kind == "timeout") results.timed_out = test;
  }
  return results;
}

std::string Tail(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream buffer;
  buffer << in.rdbuf();
  std::string text = buffer.str();
  if (text.size() > kLogTail) text = "[...]" + text.substr(text.size() - kLogTail);
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  return text;
}

std::string DescribeEnd(const ChildEnd& end) {
  if (end.signal != 0) {
    return "the test process was killed by signal " + std::to_string(end.signal) + " (" +
           strsignal(end.signal) + ")";
  }
  return "the test process exited with status " + std::to_string(end.exit_code);
}

Outcome OutcomeOf(const nlohmann::json& end) {
  const std::string result = end.value("result", "");
  if (result == "passed") return Outcome::kPassed;
  if (result == "skipped") {
    return end.value("message", "").find("not supported by") != std::string::npos
               ? Outcome::kNotSupported
               : Outcome::kSkipped;
  }
  return Outcome::kFailed;
}

// A group of tests run with one environment, in as many children as it takes.
struct Job {
  std::string label;
  std::map<std::string, std::string> environment;
  std::vector<TestCase> tests;
};

// Files in one temporary directory, removed at the end of the run.
class WorkDirectory {
 public:
  WorkDirectory() {
    const char* tmp = std::getenv("TMPDIR");
    std::string pattern = std::string(tmp && *tmp ? tmp : "/tmp") + "/infinirt-selftest.XXXXXX";
    if (mkdtemp(pattern.data()) != nullptr) path_ = pattern;
  }
  ~WorkDirectory() {
    for (const std::string& file : files_) unlink(file.c_str());
    if (!path_.empty()) rmdir(path_.c_str());
  }
  WorkDirectory(const WorkDirectory&) = delete;
  WorkDirectory& operator=(const WorkDirectory&) = delete;

  bool ok() const { return !path_.empty(); }
  std::string NewFile(const std::string& name) {
    files_.push_back(path_ + "/" + name);
    return files_.back();
  }

 private:
  std::string path_;
  std::vector<std::string> files_;
};

TestResult ResultOf(const TestCase& test, Outcome outcome, std::string message) {
  TestResult result;
  result.name = test.name;
  result.area = test.area.value_or(Area::kDevices);
  result.outcome = outcome;
  result.message = std::move(message);
  return result;
}

// The result of the test a child was running when it ended without finishing it.
TestResult Unfinished(const TestCase& test, const ChildEnd& end, const ChildResults& results,
                      const std::string& log_path, int timeout_seconds) {
  if (results.timed_out == test.name) {
    return ResultOf(test, Outcome::kTimeout,
                    "ran longer than " + std::to_string(timeout_seconds) + " s (--test-timeout)");
  }
  switch (end.killed) {
    case ChildEnd::Killed::kTotalTimeout:
      return ResultOf(test, Outcome::kNotRun,
                      "stopped: the run's total time (--total-timeout) "
                      "was over");
    case ChildEnd::Killed::kStalled:
      return ResultOf(test, Outcome::kTimeout,
                      "the test process answered nothing for " +
                          std::to_string(timeout_seconds + kStallGrace.count()) +
                          " s and was killed");
    case ChildEnd::Killed::kNo:
      break;
  }
  std::string message = DescribeEnd(end) + " during the test";
  const std::string tail = Tail(log_path);
  if (!tail.empty()) message += "; its last output:\n" + tail;
  return ResultOf(test, Outcome::kCrashed, message);
}

std::string FilterOf(const std::vector<TestCase>& tests) {
  std::string filter = "--gtest_filter=";
  for (size_t i = 0; i < tests.size(); ++i) filter += (i ? ":" : "") + tests[i].name;
  return filter;
}

std::vector<TestResult> RunJob(const Job& job, const Options& options, Clock::time_point deadline,
                               WorkDirectory& work, int job_index) {
  std::vector<TestResult> results;
  std::vector<TestCase> remaining = job.tests;
  const std::vector<std::string> environment = ChildEnvironment(job.environment);
  for (int attempt = 0; !remaining.empty(); ++attempt) {
    const std::string stem = "job" + std::to_string(job_index) + "-" + std::to_string(attempt);
    const std::string results_path = work.NewFile(stem + ".jsonl");
    const std::string log_path = work.NewFile(stem + ".log");
    if (Clock::now() > deadline) {
      for (const TestCase& test : remaining) {
        results.push_back(ResultOf(test, Outcome::kNotRun,
                                   "not started: the run's total time (--total-timeout) was over"));
      }
      break;
    }
    const ChildEnd end = SpawnAndWait(
        {SelfPath(), "--child", results_path, std::to_string(options.test_timeout_seconds),
         FilterOf(remaining), "--gtest_color=no", "--gtest_brief=1"},
        environment, log_path, results_path, std::chrono::seconds(options.test_timeout_seconds),
        deadline);
    const ChildResults child = ReadResults(results_path);
    std::vector<TestCase> still_remaining;
    for (const TestCase& test : remaining) {
      const auto ended = child.ended.find(test.name);
      if (ended != child.ended.end()) {
        results.push_back(
            ResultOf(test, OutcomeOf(ended->second), ended->second.value("message", "")));
      } else if (test.name == child.started_not_ended || test.name == child.timed_out) {
        results.push_back(Unfinished(test, end, child, log_path, options.test_timeout_seconds));
      } else {
        still_remaining.push_back(test);
      }
    }
    if (still_remaining.size() == remaining.size()) {  // no progress: do not try again
      std::string why = end.started ? DescribeEnd(end) + " before running them"
                                    : "the test process could not be started";
      const std::string tail = Tail(log_path);
      if (!tail.empty()) why += "; its last output:\n" + tail;
      for (const TestCase& test : remaining) {
        results.push_back(ResultOf(test, Outcome::kNotRun, why));
      }
      break;
    }
    remaining = std::move(still_remaining);
  }
  return results;
}

// The environment that makes `backend` device 0 (and, for the cross-backend tests, the CPU
// backend's device the last one). The CPU backend shares memory between processes only when
// asked (S62 tests that), and must support everything the suite asks of it.
std::map<std::string, std::string> JobEnvironment(const Backend& backend, bool cross_backend) {
  std::map<std::string, std::string> environment;
  const bool cpu = backend.name == "cpu";
  environment["INFINIRT_BACKENDS"] = cross_backend && !cpu ? backend.name + ",cpu" : backend.name;
  if (cross_backend && cpu) environment["INFINIRT_CPU_DEVICES"] = "2";
  if (std::getenv("INFINIRT_CPU_SHAREABLE_MEMORY") == nullptr) {
    environment["INFINIRT_CPU_SHAREABLE_MEMORY"] = "1";
  }
  if (cpu && !cross_backend) environment["INFINIRT_CONFORMANCE_ALL_SUPPORTED"] = "1";
  return environment;
}

bool Selected(const Options& options, Area area) {
  return options.areas.empty() ||
         std::find(options.areas.begin(), options.areas.end(), area) != options.areas.end();
}

std::vector<Job> JobsOf(const Backend& backend, const Options& options) {
  Job conformance{backend.name, JobEnvironment(backend, false), {}};
  Job cross{backend.name + " with " + backend.cross_peer, JobEnvironment(backend, true), {}};
  for (const TestCase& test : RegisteredTests()) {
    if (!test.area || !Selected(options, *test.area)) continue;
    (*test.area == Area::kCrossBackend ? cross : conformance).tests.push_back(test);
  }
  std::vector<Job> jobs;
  for (Job* job : {&conformance, &cross}) {
    if (!job->tests.empty()) jobs.push_back(std::move(*job));
  }
  return jobs;
}

}  // namespace

std::vector<infinirtBackendProp> ListBackends() {
  infinirtInit();  // no device is reported with the backends, not here
  int count = 0;
  if (infinirtGetBackendCount(&count) != infinirtSuccess) count = 0;
  std::vector<infinirtBackendProp> backends(count);
  for (int i = 0; i < count; ++i) infinirtGetBackendProperties(&backends[i], i);
  infinirtGetLastError();
  return backends;
}

bool IsEmulatedRuntime(const std::string& runtime_library) {
  if (runtime_library.empty()) return false;
  // RTLD_NOLOAD: only the library the plugin already loaded, never a new one.
  void* library = dlopen(runtime_library.c_str(), RTLD_NOLOAD | RTLD_LAZY);
  if (library == nullptr) return false;
  const bool emulated = dlsym(library, "infinirt_emulated_runtime") != nullptr;
  dlclose(library);
  return emulated;
}

bool SelectBackends(const std::vector<std::string>& names, std::vector<Backend>* selected,
                    std::string* error) {
  const std::vector<infinirtBackendProp> all = ListBackends();
  const auto device_names = DeviceNamesByBackend();
  if (names.empty()) {
    for (const infinirtBackendProp& prop : all) {
      if (HasDevices(prop)) selected->push_back(Describe(prop, device_names));
    }
    if (selected->empty()) *error = "no backend has a device (infinirt-info -v says why)";
    return !selected->empty();
  }
  for (const std::string& name : names) {
    const auto found = std::find_if(all.begin(), all.end(), [&](const infinirtBackendProp& p) {
      return Lower(p.name) == Lower(name);
    });
    if (found == all.end()) {
      std::string known;
      for (const infinirtBackendProp& prop : all)
        known += (known.empty() ? "" : ", ") + std::string(prop.name);
      *error = "unknown backend '" + name + "' (backends: " + known + ")";
      return false;
    }
    if (!HasDevices(*found)) {
      *error = "backend '" + std::string(found->name) + "' has no device: " + WhyNoDevice(*found);
      return false;
    }
    const bool duplicate = std::any_of(selected->begin(), selected->end(),
                                       [&](const Backend& b) { return b.name == found->name; });
    if (!duplicate) selected->push_back(Describe(*found, device_names));
  }
  return true;
}

Run RunSelfTest(const Options& options, const std::vector<Backend>& backends) {
  const Clock::time_point start = Clock::now();
  const Clock::time_point deadline = start + std::chrono::seconds(options.total_timeout_seconds);
  Run run;
  run.backends = backends;
  for (const Backend& backend : run.backends) {
    run.vendor_device_found = run.vendor_device_found || backend.name != "cpu";
  }
  WorkDirectory work;
  int job_index = 0;
  for (Backend& backend : run.backends) {
    for (const Job& job : JobsOf(backend, options)) {
      std::printf("running %zu tests on %s ...", job.tests.size(), job.label.c_str());
      std::fflush(stdout);
      const Clock::time_point job_start = Clock::now();
      std::vector<TestResult> results;
      if (work.ok()) {
        results = RunJob(job, options, deadline, work, job_index++);
      } else {
        for (const TestCase& test : job.tests) {
          results.push_back(ResultOf(test, Outcome::kNotRun, "no temporary directory"));
        }
      }
      const std::chrono::duration<double> took = Clock::now() - job_start;
      const size_t problems = std::count_if(results.begin(), results.end(),
                                            [](const auto& r) { return IsProblem(r.outcome); });
      std::printf(" %.1f s%s\n", took.count(),
                  problems ? (", " + std::to_string(problems) + " not passing").c_str() : "");
      backend.results.insert(backend.results.end(), results.begin(), results.end());
    }
  }
  run.seconds = std::chrono::duration<double>(Clock::now() - start).count();
  return run;
}

}  // namespace infinirt::selftest
