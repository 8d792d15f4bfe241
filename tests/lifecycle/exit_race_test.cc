// Threads calling InfiniRT across exit(): runs lifecycle_exit_race_probe 200 times, four at a
// time, and requires every run to end with status 0 within 30 seconds. Before the teardown at
// exit knew about calling threads, a thread's call could use the runtime while exit freed it
// (or re-initialise it), and about a third of the runs died in free() or with SIGSEGV.
#include <fcntl.h>
#include <gtest/gtest.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstring>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

constexpr int kRuns = 200;
constexpr int kParallel = 4;
constexpr auto kRunLimit = std::chrono::seconds(30);

struct ProbeRun {
  int index = 0;
  pid_t pid = -1;
  std::chrono::steady_clock::time_point started;
  std::string stderr_path;
};

std::string ReadFile(const std::string& path) {
  std::ifstream in(path);
  std::stringstream text;
  text << in.rdbuf();
  return text.str();
}

std::string ScratchDirectory() {
  char pattern[] = "/tmp/infinirt_exit_race_XXXXXX";
  const char* made = mkdtemp(pattern);
  return made ? made : "";
}

ProbeRun Start(int index, const std::string& scratch) {
  ProbeRun run;
  run.index = index;
  run.stderr_path = scratch + "/stderr." + std::to_string(index);
  posix_spawn_file_actions_t actions;
  posix_spawn_file_actions_init(&actions);
  posix_spawn_file_actions_addopen(&actions, 2, run.stderr_path.c_str(),
                                   O_WRONLY | O_CREAT | O_TRUNC, 0600);
  const std::string argument = std::to_string(index);
  char* argv[] = {const_cast<char*>(INFINIRT_EXIT_RACE_PROBE), const_cast<char*>(argument.c_str()),
                  nullptr};
  const int spawned =
      posix_spawn(&run.pid, INFINIRT_EXIT_RACE_PROBE, &actions, nullptr, argv, environ);
  posix_spawn_file_actions_destroy(&actions);
  if (spawned != 0) {
    ADD_FAILURE() << "posix_spawn " << INFINIRT_EXIT_RACE_PROBE << ": " << std::strerror(spawned);
    run.pid = -1;
  }
  run.started = std::chrono::steady_clock::now();
  return run;
}

// What went wrong with a finished run, or "" when it ended with status 0.
std::string Outcome(const ProbeRun& run, int status, bool timed_out) {
  std::string what;
  if (timed_out) {
    what = "did not end within 30 s (killed)";
  } else if (WIFSIGNALED(status)) {
    what = std::string("died of signal ") + strsignal(WTERMSIG(status));
  } else if (WIFEXITED(status) && WEXITSTATUS(status) != 0) {
    what = "exited with status " + std::to_string(WEXITSTATUS(status));
  } else {
    return "";
  }
  return "run " + std::to_string(run.index) + " " + what + "; its stderr:\n" +
         ReadFile(run.stderr_path);
}

TEST(ExitRace, ThreadsCallingAcrossExitNeverCrashTheProcess) {
  const std::string scratch = ScratchDirectory();
  ASSERT_FALSE(scratch.empty());
  std::vector<ProbeRun> running;
  std::vector<std::string> failures;
  int next = 0;
  while (next < kRuns || !running.empty()) {
    while (next < kRuns && running.size() < kParallel) {
      ProbeRun run = Start(next++, scratch);
      if (run.pid > 0) running.push_back(run);
    }
    for (size_t i = 0; i < running.size();) {
      int status = 0;
      const pid_t done = waitpid(running[i].pid, &status, WNOHANG);
      const bool timed_out =
          done == 0 && std::chrono::steady_clock::now() - running[i].started > kRunLimit;
      if (timed_out) {
        kill(running[i].pid, SIGKILL);
        waitpid(running[i].pid, &status, 0);
      }
      if (done == 0 && !timed_out) {
        ++i;
        continue;
      }
      const std::string failure = Outcome(running[i], status, timed_out);
      if (!failure.empty()) failures.push_back(failure);
      unlink(running[i].stderr_path.c_str());
      running.erase(running.begin() + i);
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(2));
  }
  rmdir(scratch.c_str());
  EXPECT_TRUE(failures.empty()) << failures.size() << " of " << kRuns << " runs failed; first:\n"
                                << (failures.empty() ? "" : failures.front());
}

}  // namespace
