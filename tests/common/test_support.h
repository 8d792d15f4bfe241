// Helpers shared by the tests: deterministic ways to hold a stream busy (a host function
// spinning on a flag the test releases, never a sleep), bounded waits, and process facts.
#ifndef INFINIRT_TESTS_COMMON_TEST_SUPPORT_H_
#define INFINIRT_TESTS_COMMON_TEST_SUPPORT_H_

#include <sys/syscall.h>
#include <sys/wait.h>
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <fstream>
#include <functional>
#include <string>
#include <thread>

#include "infinirt.h"

// 1 in a build with AddressSanitizer or ThreadSanitizer, whose allocators reserve address space in
// bulk and end the process where a failed operator new would throw.
#if defined(__SANITIZE_ADDRESS__) || defined(__SANITIZE_THREAD__)
#define INFINIRT_TEST_UNDER_SANITIZER 1
#else
#define INFINIRT_TEST_UNDER_SANITIZER 0
#endif

namespace infinirt::testing {

// A shell command line run to its end: what it wrote to the pipe (redirect stderr in the command
// to have it), its exit status (-1 when it did not exit normally) and how long it took.
struct CommandRun {
  int exit_status = -1;
  std::string output;
  double seconds = 0;
};

inline CommandRun RunCommand(const std::string& command) {
  CommandRun run;
  const auto start = std::chrono::steady_clock::now();
  FILE* pipe = popen(command.c_str(), "r");
  if (pipe == nullptr) return run;
  char buffer[4096];
  size_t read = 0;
  while ((read = fread(buffer, 1, sizeof(buffer), pipe)) > 0) run.output.append(buffer, read);
  const int status = pclose(pipe);
  if (status != -1 && WIFEXITED(status)) run.exit_status = WEXITSTATUS(status);
  run.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  return run;
}

// "infinirtErrorInvalidValue (1)": how the tests print an error, so a failure names it.
inline std::string ErrorText(infinirtError_t error) {
  return std::string(infinirtGetErrorName(error)) + " (" + std::to_string(static_cast<int>(error)) +
         ")";
}

// Asserts (or expects) that a call answered infinirtSuccess, naming the error it gave instead.
#define ASSERT_OK(call)                                                                            \
  ASSERT_EQ(::infinirt::testing::ErrorText(call), ::infinirt::testing::ErrorText(infinirtSuccess)) \
      << #call
#define EXPECT_OK(call)                                                                            \
  EXPECT_EQ(::infinirt::testing::ErrorText(call), ::infinirt::testing::ErrorText(infinirtSuccess)) \
      << #call

// Every wait in the tests is bounded by this, so a broken build fails instead of hanging.
constexpr std::chrono::seconds kTimeout{30};

// Polls until predicate() is true or the timeout passes; returns the last value.
inline bool WaitUntil(const std::function<bool()>& predicate,
                      std::chrono::milliseconds timeout = kTimeout) {
  const auto deadline = std::chrono::steady_clock::now() + timeout;
  while (!predicate()) {
    if (std::chrono::steady_clock::now() > deadline) return predicate();
    std::this_thread::yield();
  }
  return true;
}

// Holds streams busy: Block(stream) enqueues a host function that spins until Open() is
// called (or kTimeout passes, which sets timed_out()). The destructor opens the gate.
class Gate {
 public:
  Gate() = default;
  Gate(const Gate&) = delete;
  Gate& operator=(const Gate&) = delete;
  ~Gate() { Open(); }

  infinirtError_t Block(infinirtStream_t stream) {
    return infinirtLaunchHostFunc(stream, &Gate::Spin, this);
  }
  void Open() { open_.store(true); }
  // Waits until n host functions of this gate have started running.
  bool WaitEntered(int n = 1) {
    return WaitUntil([&] { return entered_.load() >= n; });
  }
  int entered() const { return entered_.load(); }
  bool timed_out() const { return timed_out_.load(); }

 private:
  static void Spin(void* self) {
    auto* gate = static_cast<Gate*>(self);
    gate->entered_.fetch_add(1);
    const auto deadline = std::chrono::steady_clock::now() + kTimeout;
    while (!gate->open_.load()) {
      if (std::chrono::steady_clock::now() > deadline) {
        gate->timed_out_.store(true);
        return;
      }
      std::this_thread::yield();
    }
  }

  std::atomic<bool> open_{false};
  std::atomic<int> entered_{0};
  std::atomic<bool> timed_out_{false};
};

// Host function that appends a value to a log, for checking execution order.
struct OrderLog {
  std::atomic<int> next{0};
  int slots[1024] = {};
  void Append(int value) { slots[next.fetch_add(1)] = value; }
};

// Threads of this process, from /proc/self/status.
inline int ProcessThreadCount() {
  std::ifstream status("/proc/self/status");
  std::string key;
  while (status >> key) {
    if (key == "Threads:") {
      int threads = 0;
      status >> threads;
      return threads;
    }
  }
  return -1;
}

// The kernel wakes pthread_join a moment before it removes the thread from /proc (seen here
// about once in 7,000 joins), so a count taken right after joins can include a thread already
// joined. This count waits, up to 2 s, for it to fall to `expected`, and returns it then.
inline int ProcessThreadCountAfterJoins(int expected) {
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  int count = ProcessThreadCount();
  while (count > expected && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
    count = ProcessThreadCount();
  }
  return count;
}

// The process's threads when InfiniRT has none: ThreadSanitizer starts a thread of its own
// with the first other thread, so one is started and joined first to count it in, and the
// count is taken once /proc no longer lists that thread.
inline int ThreadsBeforeInfiniRT() {
  std::atomic<pid_t> helper{0};
  std::thread([&helper] { helper = static_cast<pid_t>(syscall(SYS_gettid)); }).join();
  const std::string task = "/proc/self/task/" + std::to_string(helper.load());
  const auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(2);
  while (access(task.c_str(), F_OK) == 0 && std::chrono::steady_clock::now() < deadline) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return ProcessThreadCount();
}

// The process's virtual memory (the address space RLIMIT_AS bounds), from /proc/self/statm.
inline size_t VirtualMemoryBytes() {
  std::ifstream statm("/proc/self/statm");
  size_t pages = 0;
  statm >> pages;
  return pages * static_cast<size_t>(sysconf(_SC_PAGESIZE));
}

}  // namespace infinirt::testing

#endif  // INFINIRT_TESTS_COMMON_TEST_SUPPORT_H_
