// Failures of multi-process communicators, each a job of real processes on loopback started here
// (multiprocess_child.cc, whose path INFINICCL_TEST_CHILD gives) with torchrun's variables: a
// rank killed after joining, a rank that never starts, an abort while a collective waits, a failure
// passed on; and a job made from torchrun's variables and one from OpenMPI's. Every job is bounded:
// a rank still running at its limit is killed, and that is a failure.
#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <signal.h>
#include <spawn.h>
#include <sys/socket.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <thread>
#include <vector>

extern char** environ;

namespace {

using Clock = std::chrono::steady_clock;

// How one rank's process ended.
struct Ended {
  bool exited = false;  // normally, with `code`
  int code = -1;
  int signal = 0;  // or killed by this signal
  bool overran = false;
};

// A free port on loopback, for MASTER_PORT: one the kernel picks, released for rank 0 to bind.
int FreePort() {
  const int listener = socket(AF_INET, SOCK_STREAM, 0);
  sockaddr_in address{};
  address.sin_family = AF_INET;
  address.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
  socklen_t length = sizeof address;
  int port = -1;
  if (bind(listener, reinterpret_cast<sockaddr*>(&address), sizeof address) == 0 &&
      getsockname(listener, reinterpret_cast<sockaddr*>(&address), &length) == 0) {
    port = ntohs(address.sin_port);
  }
  close(listener);
  return port;
}

// The variables a launcher gives each rank: torchrun's, or OpenMPI's mpirun's (which has no
// address of its own for the rendezvous: MASTER_ADDR and MASTER_PORT are passed with -x).
enum class Launcher { kTorchrun, kOpenMpi };

pid_t StartRank(const std::string& scenario, int rank, int world, int port, int timeout_ms,
                Launcher launcher = Launcher::kTorchrun) {
  const bool torchrun = launcher == Launcher::kTorchrun;
  std::vector<std::string> variables;
  for (char** e = environ; *e != nullptr; ++e) variables.emplace_back(*e);
  variables.push_back((torchrun ? "RANK=" : "OMPI_COMM_WORLD_RANK=") + std::to_string(rank));
  variables.push_back((torchrun ? "WORLD_SIZE=" : "OMPI_COMM_WORLD_SIZE=") + std::to_string(world));
  variables.push_back("MASTER_ADDR=127.0.0.1");
  variables.push_back("MASTER_PORT=" + std::to_string(port));
  variables.push_back("INFINICCL_TIMEOUT_MS=" + std::to_string(timeout_ms));
  std::vector<char*> envp;
  for (std::string& v : variables) envp.push_back(v.data());
  envp.push_back(nullptr);
  const char* child = std::getenv("INFINICCL_TEST_CHILD");
  std::string program = child != nullptr ? child : "";
  std::string argument = scenario;
  char* argv[] = {program.data(), argument.data(), nullptr};
  pid_t pid = -1;
  if (posix_spawn(&pid, program.c_str(), nullptr, nullptr, argv, envp.data()) != 0) return -1;
  return pid;
}

// Waits for every rank, at most `limit` in all; ranks still running then are killed.
std::vector<Ended> WaitAll(const std::vector<pid_t>& pids, std::chrono::seconds limit) {
  std::vector<Ended> ended(pids.size());
  std::vector<bool> done(pids.size(), false);
  const auto deadline = Clock::now() + limit;
  size_t left = pids.size();
  while (left > 0) {
    for (size_t i = 0; i < pids.size(); ++i) {
      if (done[i]) continue;
      int status = 0;
      const bool over = Clock::now() >= deadline;
      if (over) {
        kill(pids[i], SIGKILL);
        ended[i].overran = true;
      }
      if (waitpid(pids[i], &status, over ? 0 : WNOHANG) != pids[i]) continue;
      done[i] = true;
      --left;
      ended[i].exited = WIFEXITED(status);
      ended[i].code = WIFEXITED(status) ? WEXITSTATUS(status) : -1;
      ended[i].signal = WIFSIGNALED(status) ? WTERMSIG(status) : 0;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  return ended;
}

std::vector<Ended> RunJob(const std::string& scenario, int world, int started, int timeout_ms,
                          std::chrono::seconds limit, Launcher launcher = Launcher::kTorchrun) {
  const int port = FreePort();
  std::vector<pid_t> pids;
  for (int rank = 0; rank < started; ++rank) {
    const pid_t pid = StartRank(scenario, rank, world, port, timeout_ms, launcher);
    EXPECT_GT(pid, 0) << "cannot start the child (INFINICCL_TEST_CHILD)";
    if (pid > 0) pids.push_back(pid);
  }
  return WaitAll(pids, limit);
}

void ExpectSucceeded(const Ended& ended, int rank) {
  EXPECT_FALSE(ended.overran) << "rank " << rank << " still ran at the job's limit";
  EXPECT_TRUE(ended.exited && ended.code == 0)
      << "rank " << rank << " exited " << ended.code << ", signal " << ended.signal;
}

TEST(MultiProcessFailure, AKilledRankMakesTheOthersFailNotHang) {
  // Most fail at once; one writing to the killed rank may wait for the timeout (10 s).
  const auto ended = RunJob("die", 4, 4, 10000, std::chrono::seconds(60));
  ASSERT_EQ(ended.size(), 4u);
  EXPECT_EQ(ended[2].signal, SIGKILL) << "rank 2 should have been killed";
  for (int rank : {0, 1, 3}) ExpectSucceeded(ended[rank], rank);
}

TEST(MultiProcessFailure, ARankThatNeverStartsFailsTheOthersAtTheTimeout) {
  const auto start = Clock::now();
  const auto ended = RunJob("join", 4, 3, 2000, std::chrono::seconds(30));
  ASSERT_EQ(ended.size(), 3u);
  for (int rank = 0; rank < 3; ++rank) ExpectSucceeded(ended[rank], rank);
  EXPECT_GE(Clock::now() - start, std::chrono::milliseconds(1900)) << "refused before the timeout";
}

TEST(MultiProcessFailure, AbortReturnsAtOnceAndThePeerFailsInsteadOfWaiting) {
  // A timeout of 8 s: rank 1 must fail well before it (the abort, not the timeout).
  const auto ended = RunJob("abort", 2, 2, 8000, std::chrono::seconds(60));
  ASSERT_EQ(ended.size(), 2u);
  for (int rank = 0; rank < 2; ++rank) ExpectSucceeded(ended[rank], rank);
}

TEST(MultiProcessFailure, ARankThatFailedTellsThePeersWaitingOnIt) {
  // A timeout of 20 s: rank 1's Send must fail well before it, rank 0 having passed on its
  // failure by closing its connections.
  const auto ended = RunJob("relay", 3, 3, 20000, std::chrono::seconds(60));
  ASSERT_EQ(ended.size(), 3u);
  for (int rank = 0; rank < 3; ++rank) ExpectSucceeded(ended[rank], rank);
}

// The launchers' variables, with every rank completing a collective: torchrun's, and OpenMPI's
// OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE (with MASTER_ADDR and MASTER_PORT, as
// docs/infiniccl.md says to pass them to mpirun).
TEST(MultiProcessLaunchers, TorchrunsVariablesMakeAJob) {
  const auto ended = RunJob("sum", 3, 3, 20000, std::chrono::seconds(60));
  ASSERT_EQ(ended.size(), 3u);
  for (int rank = 0; rank < 3; ++rank) ExpectSucceeded(ended[rank], rank);
}

TEST(MultiProcessLaunchers, OpenMpisVariablesMakeAJob) {
  const auto ended = RunJob("sum", 3, 3, 20000, std::chrono::seconds(60), Launcher::kOpenMpi);
  ASSERT_EQ(ended.size(), 3u);
  for (int rank = 0; rank < 3; ++rank) ExpectSucceeded(ended[rank], rank);
}

}  // namespace
