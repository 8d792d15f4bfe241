// A rank of the failure scenarios of multiprocess_failure_test.cc, which starts it with torchrun's
// variables set. `multiprocess_child <scenario>` exits 0 when the rank saw what the scenario
// expects of it, and otherwise prints what it saw and exits non-zero:
//   die          rank 2 is killed after a first AllReduce; every other rank must see its
//                collectives fail (a call's status, or CommGetAsyncError), at the latest at
//                INFINICCL_TIMEOUT_MS (a rank that was writing to rank 2 waits for it: Gloo does
//                not fail a send it has partly written), never hang;
//   join         rank WORLD_SIZE-1 is never started: CommInitFromEnv must fail within the timeout,
//                saying which rank did not join;
//   abort        rank 0 aborts its communicator while its AllReduce waits for rank 1, which calls
//                nothing for a while: the abort returns at once, and rank 1's later AllReduce
//                fails instead of waiting for the timeout. (Rank 0's own AllReduce fails only
//                at the timeout: Gloo cannot end a local wait; the process exits without it.)
//   relay        (3 ranks) rank 2 aborts and stays alive; rank 0's Recv from it fails; rank 1
//                then Sends to rank 0, which will never receive it: rank 1 must fail at once,
//                told by rank 0 (which stays alive too), not at the timeout.
//   sum          every rank's AllReduce (SUM) of rank + 1 must give the sum over the ranks, and
//                the communicator must say the rank and size the launcher's variables gave.
// The rank and size are torchrun's RANK and WORLD_SIZE, or, where RANK is unset, OpenMPI's
// OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE (as CommInitFromEnv reads them).
#include <signal.h>
#include <unistd.h>

#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <thread>

#include "infiniccl.h"
#include "infinirt.h"

namespace {

using Clock = std::chrono::steady_clock;

int EnvNumber(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::atoi(text) : -1;
}

double SecondsSince(Clock::time_point start) {
  return std::chrono::duration<double>(Clock::now() - start).count();
}

int Problem(int rank, const std::string& what) {
  std::fprintf(stderr, "rank %d: %s\n", rank, what.c_str());
  return 1;
}

constexpr size_t kSmall = size_t{1} << 18;  // floats: 1 MiB
constexpr size_t kLarge = size_t{1} << 24;  // 64 MiB

// AllReduces of `count` floats until one fails (its status, or the communicator's asynchronous
// error): true when a failure was seen, within `calls` calls.
bool SeesFailure(infinicclComm_t comm, void* buffer, size_t count, int calls, std::string* why) {
  infinirtStream_t stream = nullptr;
  infinirtStreamCreate(&stream);
  bool failed = false;
  for (int i = 0; i < calls && !failed; ++i) {
    const infiniStatus_t status =
        infinicclAllReduce(buffer, buffer, count, INFINI_DTYPE_F32, INFINICCL_SUM, comm, stream);
    infinirtStreamSynchronize(stream);
    infiniStatus_t async = INFINI_STATUS_SUCCESS;
    infinicclCommGetAsyncError(comm, &async);
    failed = status != INFINI_STATUS_SUCCESS || async != INFINI_STATUS_SUCCESS;
    if (failed) *why = infinicclGetLastError(comm);
  }
  infinirtStreamDestroy(stream);
  return failed;
}

int Die(int rank, infinicclComm_t comm, void* buffer) {
  // One AllReduce that every rank completes (every connection is made), then rank 2 dies in the
  // middle of a large one, while the others write to it.
  std::string why;
  if (SeesFailure(comm, buffer, kSmall, 1, &why)) {
    return Problem(rank, "the first AllReduce failed: " + why);
  }
  if (rank == 2) {
    infinirtStream_t stream = nullptr;
    infinirtStreamCreate(&stream);
    infinicclAllReduce(buffer, buffer, kLarge, INFINI_DTYPE_F32, INFINICCL_SUM, comm, stream);
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
    raise(SIGKILL);
  }
  const auto start = Clock::now();
  if (!SeesFailure(comm, buffer, kLarge, 20, &why)) {
    return Problem(rank, "no failure after rank 2 died");
  }
  const double seconds = SecondsSince(start);
  std::printf("rank %d: failed after %.2f s: %s\n", rank, seconds, why.c_str());
  // A later call fails at once, with the same failure.
  infinirtStream_t stream = nullptr;
  infinirtStreamCreate(&stream);
  const infiniStatus_t later =
      infinicclAllReduce(buffer, buffer, 1, INFINI_DTYPE_F32, INFINICCL_SUM, comm, stream);
  infinirtStreamDestroy(stream);
  if (later != INFINI_STATUS_INTERNAL_ERROR) return Problem(rank, "a later call did not fail");
  infinicclCommDestroy(comm);
  // By the timeout, with a margin for a loaded machine.
  const double bound = EnvNumber("INFINICCL_TIMEOUT_MS") / 1000.0 + 5.0;
  return seconds < bound ? 0 : Problem(rank, "the failure took " + std::to_string(seconds) + " s");
}

int Abort(int rank, infinicclComm_t comm, void* buffer) {
  if (rank == 1) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1500));
    const auto start = Clock::now();
    std::string why;
    if (!SeesFailure(comm, buffer, kSmall, 1, &why)) {
      return Problem(rank, "no failure after the abort");
    }
    const double seconds = SecondsSince(start);
    infinicclCommDestroy(comm);
    std::printf("rank 1: failed after %.2f s: %s\n", seconds, why.c_str());
    return seconds < 4.0 ? 0 : Problem(rank, "the failure took " + std::to_string(seconds) + " s");
  }
  infinirtStream_t stream = nullptr;
  infinirtStreamCreate(&stream);
  if (infinicclAllReduce(buffer, buffer, kSmall, INFINI_DTYPE_F32, INFINICCL_SUM, comm, stream) !=
      INFINI_STATUS_SUCCESS) {
    return Problem(rank, "the AllReduce was refused");
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(300));  // it now waits for rank 1
  const auto start = Clock::now();
  if (infinicclCommAbort(comm) != INFINI_STATUS_SUCCESS) return Problem(rank, "abort failed");
  const double seconds = SecondsSince(start);
  std::printf("rank 0: abort returned after %.2f s\n", seconds);
  return seconds < 5.0 ? 0 : Problem(rank, "abort took " + std::to_string(seconds) + " s");
}

// One Send to or Recv from `peer` of a few floats: true when it failed (its status, or the
// communicator's asynchronous error).
bool PointToPointFails(infinicclComm_t comm, void* buffer, int peer, bool send, std::string* why) {
  infinirtStream_t stream = nullptr;
  infinirtStreamCreate(&stream);
  const infiniStatus_t status =
      send ? infinicclSend(buffer, 16, INFINI_DTYPE_F32, peer, comm, stream)
           : infinicclRecv(buffer, 16, INFINI_DTYPE_F32, peer, comm, stream);
  infinirtStreamSynchronize(stream);
  infinirtStreamDestroy(stream);
  infiniStatus_t async = INFINI_STATUS_SUCCESS;
  infinicclCommGetAsyncError(comm, &async);
  const bool failed = status != INFINI_STATUS_SUCCESS || async != INFINI_STATUS_SUCCESS;
  if (failed) *why = infinicclGetLastError(comm);
  return failed;
}

int Relay(int rank, infinicclComm_t comm, void* buffer) {
  std::string why;
  if (SeesFailure(comm, buffer, kSmall, 1, &why)) {
    return Problem(rank, "the first AllReduce failed: " + why);
  }
  // Ranks 0 and 2 outlive rank 1's wait, so their processes' ending closes nothing early.
  constexpr auto kStayAlive = std::chrono::seconds(8);
  if (rank == 2) {
    infinicclCommAbort(comm);
    std::this_thread::sleep_for(kStayAlive);
    return 0;
  }
  if (rank == 0) {
    if (!PointToPointFails(comm, buffer, 2, false, &why)) {
      return Problem(rank, "the Recv from the aborted rank did not fail");
    }
    std::printf("rank 0: its Recv failed: %s\n", why.c_str());
    std::this_thread::sleep_for(kStayAlive);
    return 0;
  }
  std::this_thread::sleep_for(std::chrono::milliseconds(1000));  // rank 0 has failed by now
  const auto start = Clock::now();
  if (!PointToPointFails(comm, buffer, 0, true, &why)) {
    return Problem(rank, "the Send to rank 0 completed");
  }
  const double seconds = SecondsSince(start);
  std::printf("rank 1: its Send failed after %.2f s: %s\n", seconds, why.c_str());
  return seconds < 4.0 ? 0 : Problem(rank, "the failure took " + std::to_string(seconds) + " s");
}

}  // namespace

// Every rank adds rank + 1: the sum over the ranks, exact in F32 for small jobs.
int Sum(int rank, int world, infinicclComm_t comm, void* buffer) {
  int comm_rank = -1, comm_size = -1;
  infinicclCommUserRank(comm, &comm_rank);
  infinicclCommCount(comm, &comm_size);
  if (comm_rank != rank || comm_size != world) {
    return Problem(rank, "the communicator says rank " + std::to_string(comm_rank) + " of " +
                             std::to_string(comm_size));
  }
  float* values = static_cast<float*>(buffer);  // a CPU device's memory is host memory
  for (size_t i = 0; i < 1024; ++i) values[i] = static_cast<float>(rank + 1);
  infinirtStream_t stream = nullptr;
  infinirtStreamCreate(&stream);
  const infiniStatus_t status =
      infinicclAllReduce(buffer, buffer, 1024, INFINI_DTYPE_F32, INFINICCL_SUM, comm, stream);
  infinirtStreamSynchronize(stream);
  infinirtStreamDestroy(stream);
  if (status != INFINI_STATUS_SUCCESS) {
    return Problem(rank, std::string("AllReduce: ") + infinicclGetLastError(comm));
  }
  const float expected = static_cast<float>(world * (world + 1) / 2);
  for (size_t i = 0; i < 1024; ++i) {
    if (values[i] != expected) {
      return Problem(rank, "element " + std::to_string(i) + " is " + std::to_string(values[i]) +
                               ", not " + std::to_string(expected));
    }
  }
  infinicclCommDestroy(comm);
  return 0;
}

int main(int argc, char** argv) {
  const std::string scenario = argc > 1 ? argv[1] : "";
  const bool torchrun = std::getenv("RANK") != nullptr;
  const int rank = EnvNumber(torchrun ? "RANK" : "OMPI_COMM_WORLD_RANK");
  const int world = EnvNumber(torchrun ? "WORLD_SIZE" : "OMPI_COMM_WORLD_SIZE");
  if (infinirtSetDevice(0) != infinirtSuccess) return Problem(rank, "no device 0");
  const auto start = Clock::now();
  infinicclComm_t comm = nullptr;
  const infiniStatus_t joined = infinicclCommInitFromEnv(&comm);
  if (scenario == "join") {
    if (joined == INFINI_STATUS_SUCCESS) return Problem(rank, "joined without the last rank");
    const std::string why = infinicclGetLastError(nullptr);
    std::printf("rank %d: refused after %.2f s: %s\n", rank, SecondsSince(start), why.c_str());
    const std::string missing = "rank " + std::to_string(world - 1);
    if (why.find(missing) == std::string::npos) return Problem(rank, "the message names no rank");
    return SecondsSince(start) < 10.0 ? 0 : Problem(rank, "the refusal came late");
  }
  if (joined != INFINI_STATUS_SUCCESS) {
    return Problem(rank, std::string("CommInitFromEnv: ") + infinicclGetLastError(nullptr));
  }
  void* buffer = nullptr;
  if (infinirtMalloc(&buffer, sizeof(float) * kLarge) != infinirtSuccess) {
    return Problem(rank, "no memory");
  }
  if (scenario == "die") return Die(rank, comm, buffer);
  if (scenario == "abort") return Abort(rank, comm, buffer);
  if (scenario == "relay") return Relay(rank, comm, buffer);
  if (scenario == "sum") return Sum(rank, world, comm, buffer);
  return Problem(rank, "unknown scenario " + scenario);
}
