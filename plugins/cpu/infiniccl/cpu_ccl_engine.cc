// The CPU collective engine, libinfiniccl_cpu.so: InfiniCCL's collectives between CPU devices of
// one process (INFINIRT_CPU_DEVICES), through their shared memory, in stream order.
//
// How a collective is matched and queued without holding a worker thread while it waits:
//   - The k-th collective call of every rank of a clique (the ranks CommInitAll made together) is
//     one operation; a Send and the peer's Recv, in their order between the pair, are another.
//   - When a rank's call is issued (at once, or at the end of its group), an event is recorded on
//     its stream: the point where its data is ready. The call that brings the last rank issues
//     the operation on the clique's own streams ("lanes"): a wait on every rank's event, host
//     functions that move the data (cpu_ccl_compute.h; a large operation split across the lanes,
//     so that it moves on several cores), and a `done` event once they are all done.
//   - Each rank's call then makes its stream wait on `done`, so later work there comes after the
//     collective. A call waits (on the host, at most the timeout) for the operation to be issued
//     before it returns: hence one thread issuing several ranks must group them, as with NCCL.
// Streams waiting on events hold no worker of the CPU backend, and the data moves in host
// functions that run once everything is there: 8 ranks complete on a pool of any size. Small work
// whose ranks' streams have all reached their calls already moves at once instead (RunsAtOnce).
#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdio>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <thread>
#include <tuple>
#include <utility>
#include <vector>

#include "cpu_ccl_comm.h"
#include "cpu_ccl_compute.h"
#include "gloo_comm.h"
#include "infiniccl_backend.h"
#include "infinirt.h"

namespace infiniccl_cpu {

namespace {

// --- Objects -------------------------------------------------------------------------------

struct Clique;

// One matched operation.
struct Operation {
  Work work;                           // parts filled in rank order as ranks arrive
  std::vector<bool> arrived;           // by part index
  std::vector<infinirtEvent_t> ready;  // by part index: the rank's data is ready
  int expected = 0;
  int count = 0;     // parts arrived
  int consumed = 0;  // parts whose stream waits on `done` (or that gave up)
  bool issued = false;
  infinirtEvent_t done = nullptr;
};

struct Clique {
  int nranks = 0;
  std::vector<int> ordinals;
  std::chrono::milliseconds timeout{0};
  std::mutex mutex;
  std::condition_variable issued_cv;
  std::string failure;  // set once the clique failed (a timeout, an abort): every call fails
  std::map<uint64_t, std::shared_ptr<Operation>> collectives;  // by collective sequence number
  std::map<std::tuple<int, int, uint64_t>, std::shared_ptr<Operation>> transfers;
  // Where the data moves: non-blocking streams of ordinals[0], one per hardware thread up to 4;
  // a large operation is split across them.
  std::vector<infinirtStream_t> lanes;
  int live_ranks = 0;

  // Operations left behind by a failure (some rank never came) still hold events.
  ~Clique() {
    for (auto& entry : collectives) ReleaseEvents(*entry.second);
    for (auto& entry : transfers) ReleaseEvents(*entry.second);
  }
  static void ReleaseEvents(Operation& operation) {
    for (infinirtEvent_t ready : operation.ready) {
      if (ready != nullptr) infinirtEventDestroy(ready);
    }
    if (operation.done != nullptr) infinirtEventDestroy(operation.done);
  }
};

struct Rank : CommBase {
  Rank() : CommBase(CommKind::kInProcess) {}
  std::shared_ptr<Clique> clique;
  int rank = 0;
  uint64_t collectives = 0;            // calls made so far
  std::vector<uint64_t> sends, recvs;  // per peer
};

Rank* RankOf(CommBase* comm) { return static_cast<Rank*>(comm); }

// --- Issuing -------------------------------------------------------------------------------

// One lane's share of an operation's elements.
struct Slice {
  std::shared_ptr<Operation> operation;
  size_t begin = 0;
  size_t end = 0;
};

void RunSlice(void* data) {
  std::unique_ptr<Slice> slice(static_cast<Slice*>(data));
  Compute(slice->operation->work, slice->begin, slice->end);
}

// How many lanes an operation's elements are split across: a large one uses them all, so that
// its data moves on as many workers (and cores) as there are lanes.
size_t SlicesFor(const Clique& clique, const Work& work) {
  constexpr size_t kSplitBytes = size_t{1} << 20;  // of one rank's buffer
  constexpr size_t kAlignment = 4096;              // elements a slice is a multiple of
  if (work.count * ElementSize(work.dtype) < kSplitBytes) return 1;
  return std::min(clique.lanes.size(), (work.count + kAlignment - 1) / kAlignment);
}

std::string LastRuntimeError(const char* doing) {
  return std::string(doing) + ": " + infinirtGetErrorString(infinirtGetLastError());
}

// Queues elements [begin, end) of the operation on a lane, after every rank's ready point.
bool QueueSlice(infinirtStream_t lane, const std::shared_ptr<Operation>& operation, size_t begin,
                size_t end, std::string* why) {
  for (infinirtEvent_t ready : operation->ready) {
    if (infinirtStreamWaitEvent(lane, ready, 0) != infinirtSuccess) {
      *why = LastRuntimeError("waiting for a rank on a lane of the communicator");
      return false;
    }
  }
  auto slice = std::make_unique<Slice>(Slice{operation, begin, end});
  if (infinirtLaunchHostFunc(lane, &RunSlice, slice.get()) != infinirtSuccess) {
    *why = LastRuntimeError("queueing the data movement");
    return false;
  }
  slice.release();  // RunSlice frees it
  return true;
}

// Makes the first lane wait for another's work so far.
bool JoinLane(infinirtStream_t first, infinirtStream_t lane, std::string* why) {
  infinirtEvent_t joined = nullptr;
  const bool ok =
      infinirtEventCreateWithFlags(&joined, infinirtEventDisableTiming) == infinirtSuccess &&
      infinirtEventRecord(joined, lane) == infinirtSuccess &&
      infinirtStreamWaitEvent(first, joined, 0) == infinirtSuccess;
  if (!ok) *why = LastRuntimeError("joining the lanes");
  if (joined != nullptr) infinirtEventDestroy(joined);  // the wait holds what it needs
  return ok;
}

// Small work whose every rank's stream has already reached its call moves at once, in the calling
// thread: handing it to a lane, and the ranks' streams waiting for the lane, would cost tens of
// microseconds for a copy of nanoseconds. Nothing is pending before it on any rank's stream, and
// it is done before the call returns, so nothing after it needs to wait.
bool RunsAtOnce(const Operation& operation) {
  constexpr size_t kAtOnceBytes = size_t{64} << 10;  // of one rank's buffer
  if (operation.work.count * ElementSize(operation.work.dtype) > kAtOnceBytes) return false;
  for (infinirtEvent_t ready : operation.ready) {
    if (infinirtEventQuery(ready) != infinirtSuccess) return false;
  }
  return true;
}

// The operation is queued (or done): its ranks may follow it. Under clique.mutex.
void MarkIssuedLocked(Clique& clique, Operation& operation) {
  for (infinirtEvent_t ready : operation.ready) infinirtEventDestroy(ready);
  operation.ready.clear();
  operation.issued = true;
  clique.issued_cv.notify_all();
}

// Queues the operation (every rank has arrived) on the communicator's lanes, split into slices
// when it is large, and records `done` on the first lane once every slice is done. Under
// clique.mutex.
bool IssueLocked(Clique& clique, const std::shared_ptr<Operation>& operation, std::string* why) {
  if (RunsAtOnce(*operation)) {
    Compute(operation->work, 0, operation->work.count);
    MarkIssuedLocked(clique, *operation);
    return true;
  }
  OnDevice device(clique.ordinals[0]);
  const size_t slices = SlicesFor(clique, operation->work);
  const size_t count = operation->work.count;
  const size_t per_slice = (count + slices - 1) / slices;
  for (size_t l = 0; l < slices; ++l) {
    const size_t begin = std::min(count, l * per_slice);
    const size_t end = std::min(count, begin + per_slice);
    if (!QueueSlice(clique.lanes[l], operation, begin, end, why)) return false;
    if (l > 0 && !JoinLane(clique.lanes[0], clique.lanes[l], why)) return false;
  }
  if (infinirtEventCreateWithFlags(&operation->done, infinirtEventDisableTiming) !=
          infinirtSuccess ||
      infinirtEventRecord(operation->done, clique.lanes[0]) != infinirtSuccess) {
    *why = LastRuntimeError("recording the operation's end");
    return false;
  }
  MarkIssuedLocked(clique, *operation);
  return true;
}

// --- A rank's part -------------------------------------------------------------------------

thread_local int t_group_depth = 0;
thread_local std::vector<Noted> t_noted;

bool SameOperation(const Work& work, const infinicclBackendCall& call) {
  const bool send_recv = work.kind == INFINICCL_CALL_Send;
  const bool call_is_p2p = call.kind == INFINICCL_CALL_Send || call.kind == INFINICCL_CALL_Recv;
  if (send_recv != call_is_p2p) return false;
  if (!send_recv && (work.kind != call.kind || work.op != call.op || work.root != call.root)) {
    return false;
  }
  return work.count == call.count && work.dtype == call.dtype;
}

// The operation a call belongs to, made on first arrival; its part index in *part.
std::shared_ptr<Operation> OperationOf(Clique& clique, Rank& rank, const infinicclBackendCall& call,
                                       int* part) {
  std::shared_ptr<Operation>* slot;
  int expected;
  if (call.kind == INFINICCL_CALL_Send || call.kind == INFINICCL_CALL_Recv) {
    const bool sends = call.kind == INFINICCL_CALL_Send;
    const int sender = sends ? rank.rank : call.root;
    const int receiver = sends ? call.root : rank.rank;
    const uint64_t sequence = sends ? rank.sends[call.root]++ : rank.recvs[call.root]++;
    slot = &clique.transfers[{sender, receiver, sequence}];
    expected = 2;
    *part = sends ? 0 : 1;
  } else {
    slot = &clique.collectives[rank.collectives++];
    expected = clique.nranks;
    *part = rank.rank;
  }
  if (!*slot) {
    auto made = std::make_shared<Operation>();
    made->expected = expected;
    made->work.kind = call.kind == INFINICCL_CALL_Recv ? INFINICCL_CALL_Send : call.kind;
    made->work.count = call.count;
    made->work.dtype = call.dtype;
    made->work.op = call.op;
    made->work.root =
        call.kind == INFINICCL_CALL_Send || call.kind == INFINICCL_CALL_Recv ? 0 : call.root;
    made->work.parts.resize(expected);
    made->arrived.assign(expected, false);
    made->ready.assign(expected, nullptr);
    *slot = made;
  }
  return *slot;
}

// Forgets an operation once every part has consumed it: each rank's stream holds its own wait
// for `done` by then. Under clique.mutex.
void ForgetLocked(Clique& clique, const std::shared_ptr<Operation>& operation) {
  if (++operation->consumed < operation->expected) return;
  if (operation->done != nullptr) infinirtEventDestroy(operation->done);
  for (infinirtEvent_t ready : operation->ready) {
    if (ready != nullptr) infinirtEventDestroy(ready);
  }
  operation->ready.clear();
  for (auto it = clique.collectives.begin(); it != clique.collectives.end(); ++it) {
    if (it->second == operation) {
      clique.collectives.erase(it);
      return;
    }
  }
  for (auto it = clique.transfers.begin(); it != clique.transfers.end(); ++it) {
    if (it->second == operation) {
      clique.transfers.erase(it);
      return;
    }
  }
}

// Records where the rank's data is ready and joins the operation; the last rank issues it.
infiniStatus_t Arrive(Rank& rank, const infinicclBackendCall& call, infinirtStream_t stream,
                      std::shared_ptr<Operation>* joined, int* part, std::string* why) {
  Clique& clique = *rank.clique;
  infinirtEvent_t ready = nullptr;
  {
    OnDevice device(clique.ordinals[rank.rank]);
    if (infinirtEventCreateWithFlags(&ready, infinirtEventDisableTiming) != infinirtSuccess ||
        infinirtEventRecord(ready, stream) != infinirtSuccess) {
      *why = std::string("recording the rank's point: ") +
             infinirtGetErrorString(infinirtGetLastError());
      if (ready != nullptr) infinirtEventDestroy(ready);
      return INFINI_STATUS_INTERNAL_ERROR;
    }
  }
  std::lock_guard<std::mutex> lock(clique.mutex);
  if (!clique.failure.empty()) {
    infinirtEventDestroy(ready);
    *why = clique.failure;
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  std::shared_ptr<Operation> operation = OperationOf(clique, rank, call, part);
  if (!SameOperation(operation->work, call)) {
    infinirtEventDestroy(ready);
    *why = "the ranks' calls do not match (kind, count, dtype, op or root differ)";
    clique.failure = "the communicator failed: " + *why;
    clique.issued_cv.notify_all();
    return INFINI_STATUS_BAD_PARAM;
  }
  Part& mine = operation->work.parts[*part];
  mine.rank = rank.rank;
  mine.sendbuf = call.sendbuf;
  mine.recvbuf = call.recvbuf;
  operation->ready[*part] = ready;
  operation->arrived[*part] = true;
  *joined = operation;
  if (++operation->count == operation->expected && !IssueLocked(clique, operation, why)) {
    clique.failure = "the communicator failed: " + *why;
    clique.issued_cv.notify_all();
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  return INFINI_STATUS_SUCCESS;
}

// The ranks an operation still waits for, for a message.
std::string Missing(const Operation& operation) {
  const bool transfer = operation.work.kind == INFINICCL_CALL_Send;
  std::string missing;
  for (size_t p = 0; p < operation.arrived.size(); ++p) {
    if (operation.arrived[p]) continue;
    missing += missing.empty() ? "" : ", ";
    missing += transfer ? (p == 0 ? "the sender" : "the receiver") : "rank " + std::to_string(p);
  }
  return missing;
}

// Waits until the operation is issued, then makes the rank's stream wait for it.
infiniStatus_t Follow(Rank& rank, const std::shared_ptr<Operation>& operation,
                      infinirtStream_t stream, std::string* why) {
  Clique& clique = *rank.clique;
  std::unique_lock<std::mutex> lock(clique.mutex);
  clique.issued_cv.wait_for(lock, clique.timeout,
                            [&] { return operation->issued || !clique.failure.empty(); });
  if (!operation->issued) {
    if (clique.failure.empty()) {
      clique.failure =
          "the communicator failed: a collective waited " + std::to_string(clique.timeout.count()) +
          " ms (INFINICCL_TIMEOUT_MS) for ranks that never called it (" + Missing(*operation) + ")";
      clique.issued_cv.notify_all();
    }
    *why = clique.failure;
    ForgetLocked(clique, operation);
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  // No `done`: the operation ran at once, in the call that issued it (RunsAtOnce).
  const infinirtError_t waited = operation->done == nullptr
                                     ? infinirtSuccess
                                     : infinirtStreamWaitEvent(stream, operation->done, 0);
  ForgetLocked(clique, operation);
  if (waited != infinirtSuccess) {
    *why = std::string("making the rank's stream wait: ") +
           infinirtGetErrorString(infinirtGetLastError());
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  return INFINI_STATUS_SUCCESS;
}

// Issues calls of in-process cliques (a group's, or one), then follows each.
infiniStatus_t IssueInProcess(const std::vector<Noted>& calls, char* why, size_t why_size) {
  std::vector<std::pair<std::shared_ptr<Operation>, const Noted*>> joined;
  std::string reason;
  infiniStatus_t answer = INFINI_STATUS_SUCCESS;
  for (const Noted& noted : calls) {
    std::shared_ptr<Operation> operation;
    int part = 0;
    answer = Arrive(*RankOf(noted.comm), noted.call, noted.stream, &operation, &part, &reason);
    if (answer != INFINI_STATUS_SUCCESS) break;
    joined.emplace_back(operation, &noted);
  }
  for (const auto& [operation, noted] : joined) {
    std::string followed;
    const infiniStatus_t status = Follow(*RankOf(noted->comm), operation, noted->stream, &followed);
    if (status != INFINI_STATUS_SUCCESS && answer == INFINI_STATUS_SUCCESS) {
      answer = status;
      reason = followed;
    }
  }
  if (answer != INFINI_STATUS_SUCCESS) Say(why, why_size, reason);
  return answer;
}

// Issues calls (a group's, or one): those of in-process cliques, then those across processes.
infiniStatus_t IssueCalls(const std::vector<Noted>& calls, char* why, size_t why_size) {
  std::vector<Noted> in_process, across_processes;
  for (const Noted& noted : calls) {
    (noted.comm->kind == CommKind::kInProcess ? in_process : across_processes).push_back(noted);
  }
  if (!in_process.empty()) {
    if (const infiniStatus_t status = IssueInProcess(in_process, why, why_size)) return status;
  }
  return across_processes.empty() ? INFINI_STATUS_SUCCESS
                                  : GlooIssue(across_processes, why, why_size);
}

// --- Releasing -----------------------------------------------------------------------------

// Waits for the data movement queued so far when `wait` (it may still read the rank's buffers),
// then drops the rank; the last one releases the clique's stream. Without `wait` (an abort) the
// clique fails first, so that the other ranks' waiting calls return.
infiniStatus_t Release(Rank* rank, bool wait) {
  std::unique_ptr<Rank> owned(rank);
  Clique& clique = *owned->clique;
  if (wait) {
    OnDevice device(clique.ordinals[0]);
    for (infinirtStream_t lane : clique.lanes) infinirtStreamSynchronize(lane);
  }
  bool last = false;
  {
    std::lock_guard<std::mutex> lock(clique.mutex);
    if (!wait && clique.failure.empty()) clique.failure = "the communicator was aborted";
    clique.issued_cv.notify_all();
    last = --clique.live_ranks == 0;
  }
  if (last) {
    OnDevice device(clique.ordinals[0]);
    for (infinirtStream_t lane : clique.lanes) {
      infinirtStreamSynchronize(lane);
      infinirtStreamDestroy(lane);
    }
  }
  infinirtGetLastError();
  return INFINI_STATUS_SUCCESS;
}

// --- The table's entries -------------------------------------------------------------------

infiniStatus_t Initialize(char*, size_t) { return INFINI_STATUS_SUCCESS; }

// The communicator's lanes: one per hardware thread, 1 to 4.
bool MakeLanes(Clique* clique, char* why, size_t why_size) {
  OnDevice device(clique->ordinals[0]);
  const unsigned lanes = std::clamp(std::thread::hardware_concurrency(), 1u, 4u);
  for (unsigned l = 0; l < lanes; ++l) {
    infinirtStream_t lane = nullptr;
    if (infinirtStreamCreateWithFlags(&lane, infinirtStreamNonBlocking) != infinirtSuccess) {
      Say(why, why_size, LastRuntimeError("creating the communicator's streams"));
      for (infinirtStream_t made : clique->lanes) infinirtStreamDestroy(made);
      clique->lanes.clear();
      return false;
    }
    clique->lanes.push_back(lane);
  }
  return true;
}

infiniStatus_t CommInitAll(int nranks, const int* ordinals, long timeout_ms,
                           infinicclBackendComm_t* comms, char* why, size_t why_size) {
  auto clique = std::make_shared<Clique>();
  clique->nranks = nranks;
  clique->ordinals.assign(ordinals, ordinals + nranks);
  clique->timeout = std::chrono::milliseconds(timeout_ms);
  clique->live_ranks = nranks;
  for (int r = 0; r < nranks; ++r) {
    infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
    if (infinirtDeviceGetType(&type, ordinals[r]) != infinirtSuccess || type != INFINI_DEVICE_CPU) {
      infinirtGetLastError();
      Say(why, why_size, "device " + std::to_string(ordinals[r]) + " is not a CPU device");
      return INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED;
    }
  }
  if (!MakeLanes(clique.get(), why, why_size)) return INFINI_STATUS_INTERNAL_ERROR;
  for (int r = 0; r < nranks; ++r) {
    auto rank = std::make_unique<Rank>();
    rank->clique = clique;
    rank->rank = r;
    rank->sends.assign(nranks, 0);
    rank->recvs.assign(nranks, 0);
    comms[r] = HandleOf(rank.release());
  }
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t CommDestroy(infinicclBackendComm_t comm) {
  CommBase* base = CommOf(comm);
  return base->kind == CommKind::kInProcess ? Release(RankOf(base), true)
                                            : GlooRelease(base, false);
}

infiniStatus_t CommAbort(infinicclBackendComm_t comm) {
  CommBase* base = CommOf(comm);
  return base->kind == CommKind::kInProcess ? Release(RankOf(base), false)
                                            : GlooRelease(base, true);
}

infiniStatus_t CommGetAsyncError(infinicclBackendComm_t comm, infiniStatus_t* status, char* why,
                                 size_t why_size) {
  CommBase* base = CommOf(comm);
  if (base->kind == CommKind::kAcrossProcesses) return GlooAsyncError(base, status, why, why_size);
  Clique& clique = *RankOf(base)->clique;
  std::lock_guard<std::mutex> lock(clique.mutex);
  *status = clique.failure.empty() ? INFINI_STATUS_SUCCESS : INFINI_STATUS_INTERNAL_ERROR;
  Say(why, why_size, clique.failure);
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t Call(infinicclBackendComm_t comm, const infinicclBackendCall* call,
                    infinirtStream_t stream, char* why, size_t why_size) {
  if (call->count == 0) return INFINI_STATUS_SUCCESS;  // nothing to move, nothing to match
  Noted noted{CommOf(comm), *call, stream};
  if (t_group_depth > 0) {
    t_noted.push_back(noted);
    return INFINI_STATUS_SUCCESS;
  }
  return IssueCalls({noted}, why, why_size);
}

infiniStatus_t GroupStart() {
  ++t_group_depth;
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t GroupEnd(char* why, size_t why_size) {
  if (t_group_depth == 0) {
    Say(why, why_size, "no group is open");
    return INFINI_STATUS_BAD_PARAM;
  }
  if (--t_group_depth > 0) return INFINI_STATUS_SUCCESS;
  std::vector<Noted> calls;
  calls.swap(t_noted);
  return IssueCalls(calls, why, why_size);
}

const infinicclBackendTable kTable = {
    sizeof(infinicclBackendTable),
    INFINICCL_BACKEND_ABI_MAJOR,
    INFINICCL_BACKEND_ABI_MINOR,
    "cpu",
    1u << INFINI_DEVICE_CPU,
    &Initialize,
    &CommInitAll,
    &CommDestroy,
    &CommAbort,
    &Call,
    &GroupStart,
    &GroupEnd,
    &GlooCommInitRank,
    &CommGetAsyncError,
};

}  // namespace

}  // namespace infiniccl_cpu

extern "C" __attribute__((visibility("default"))) const infinicclBackendTable*
infinicclBackendGetTable(void) {
  return &infiniccl_cpu::kTable;
}
