// The child role: GoogleTest runs the selected tests in this process while a listener writes
// what happens to the results file, one JSON line per event, and a watchdog bounds each test.
//   {"event":"start","test":"Suite.Name"}
//   {"event":"end","test":"Suite.Name","result":"passed|failed|skipped","message":"..."}
//   {"event":"timeout","test":"Suite.Name","seconds":60}   (then the process ends)
// A test that started and has neither an end nor a timeout crashed the process; the driver
// (driver.cc) tells so and runs the remaining tests in a new child.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <unistd.h>

#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <cstdlib>
#include <mutex>
#include <nlohmann/json.hpp>
#include <string>
#include <thread>

#include "selftest.h"

namespace infinirt::selftest {
namespace {

// The exit status of a child its watchdog ended (as timeout(1)'s).
constexpr int kTimedOutExit = 124;
// Failure messages beyond this are cut: the report is for people.
constexpr size_t kMaxMessage = 4000;

// Appends whole lines to the results file, each with one write(2), so that a line is either
// there or not when the process ends abruptly.
class ResultsFile {
 public:
  explicit ResultsFile(const std::string& path)
      : fd_(open(path.c_str(), O_WRONLY | O_CREAT | O_APPEND | O_CLOEXEC, 0600)) {}
  ~ResultsFile() {
    if (fd_ >= 0) close(fd_);
  }
  ResultsFile(const ResultsFile&) = delete;
  ResultsFile& operator=(const ResultsFile&) = delete;

  bool ok() const { return fd_ >= 0; }
  void Write(const nlohmann::json& line) const {
    const std::string text =
        line.dump(-1, ' ', false, nlohmann::json::error_handler_t::replace) + "\n";
    size_t written = 0;
    while (written < text.size()) {
      const ssize_t n = write(fd_, text.data() + written, text.size() - written);
      if (n <= 0) return;
      written += static_cast<size_t>(n);
    }
  }

 private:
  int fd_;
};

// Ends the process when the armed test runs past its deadline, after recording the timeout.
// Runs on its own thread, so a test blocked forever in the runtime cannot stop it.
class Watchdog {
 public:
  Watchdog(const ResultsFile& results, int timeout_seconds)
      : results_(results), timeout_(timeout_seconds), thread_([this] { Watch(); }) {}
  ~Watchdog() {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      stopping_ = true;
    }
    changed_.notify_all();
    thread_.join();
  }
  Watchdog(const Watchdog&) = delete;
  Watchdog& operator=(const Watchdog&) = delete;

  void Arm(const std::string& test) {
    std::lock_guard<std::mutex> lock(mutex_);
    test_ = test;
    deadline_ = std::chrono::steady_clock::now() + timeout_;
    armed_ = true;
    changed_.notify_all();
  }
  void Disarm() {
    std::lock_guard<std::mutex> lock(mutex_);
    armed_ = false;
    changed_.notify_all();
  }

 private:
  void Watch() {
    std::unique_lock<std::mutex> lock(mutex_);
    while (!stopping_) {
      if (!armed_) {
        changed_.wait(lock);
      } else if (changed_.wait_until(lock, deadline_) == std::cv_status::timeout && armed_ &&
                 std::chrono::steady_clock::now() >= deadline_) {
        results_.Write({{"event", "timeout"}, {"test", test_}, {"seconds", timeout_.count()}});
        _exit(kTimedOutExit);  // the test still runs: no destructor, no atexit handler
      }
    }
  }

  const ResultsFile& results_;
  const std::chrono::seconds timeout_;
  std::mutex mutex_;
  std::condition_variable changed_;
  bool armed_ = false;
  bool stopping_ = false;
  std::string test_;
  std::chrono::steady_clock::time_point deadline_;
  std::thread thread_;  // last: starts once the rest is ready
};

// For the self-test's own tests only: INFINIRT_SELFTEST_HANG=Suite.Name makes that test hang
// and INFINIRT_SELFTEST_CRASH=Suite.Name makes it crash, as a broken runtime would, so that the
// bounds can be tested on a runtime that works.
void InjectFault(const std::string& test) {
  const char* hang = std::getenv("INFINIRT_SELFTEST_HANG");
  if (hang != nullptr && test == hang) {
    for (;;) std::this_thread::sleep_for(std::chrono::seconds(1));
  }
  const char* crash = std::getenv("INFINIRT_SELFTEST_CRASH");
  if (crash != nullptr && test == crash) std::abort();
}

class ResultWriter : public ::testing::EmptyTestEventListener {
 public:
  ResultWriter(const ResultsFile& results, Watchdog& watchdog)
      : results_(results), watchdog_(watchdog) {}

  // The name is kept here: inside OnTestPartResult GoogleTest holds the lock that
  // current_test_info() takes (as in tests/conformance/skip_record.cc).
  void OnTestStart(const ::testing::TestInfo& test) override {
    current_ = std::string(test.test_suite_name()) + "." + test.name();
    messages_.clear();
    results_.Write({{"event", "start"}, {"test", current_}});
    watchdog_.Arm(current_);
    InjectFault(current_);
  }

  void OnTestPartResult(const ::testing::TestPartResult& part) override {
    std::string message = part.message() ? part.message() : "";
    if (!part.skipped() && part.file_name() != nullptr) {
      message =
          std::string(part.file_name()) + ":" + std::to_string(part.line_number()) + ": " + message;
    }
    if (!messages_.empty()) messages_ += "\n";
    messages_ += message;
  }

  void OnTestEnd(const ::testing::TestInfo& test) override {
    watchdog_.Disarm();
    const ::testing::TestResult& result = *test.result();
    const char* outcome = result.Skipped() ? "skipped" : result.Failed() ? "failed" : "passed";
    if (messages_.size() > kMaxMessage) messages_ = messages_.substr(0, kMaxMessage) + " [...]";
    results_.Write(
        {{"event", "end"}, {"test", current_}, {"result", outcome}, {"message", messages_}});
  }

 private:
  const ResultsFile& results_;
  Watchdog& watchdog_;
  std::string current_;
  std::string messages_;
};

}  // namespace

int RunChild(const std::string& results_path, int timeout_seconds, int argc, char** argv) {
  // The output goes to a file the driver quotes when the process crashes: line by line, so that
  // a crash loses none of it.
  std::setvbuf(stdout, nullptr, _IOLBF, 0);
  ::testing::InitGoogleTest(&argc, argv);
  ResultsFile results(results_path);
  if (!results.ok()) {
    std::fprintf(stderr, "infinirt-selftest: cannot write %s\n", results_path.c_str());
    return 2;
  }
  Watchdog watchdog(results, timeout_seconds);
  // GoogleTest owns the listener; it is released with GoogleTest's state at exit, after the
  // watchdog and the file, so it is removed again before they go.
  auto* writer = new ResultWriter(results, watchdog);
  ::testing::TestEventListeners& listeners = ::testing::UnitTest::GetInstance()->listeners();
  listeners.Append(writer);
  const int status = RUN_ALL_TESTS();
  delete listeners.Release(writer);
  return status;
}

}  // namespace infinirt::selftest
