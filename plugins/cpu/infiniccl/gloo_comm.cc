// The CPU engine's communicators across processes, on Gloo (gloo_comm.h).
#include "gloo_comm.h"

#include <gloo/allgather.h>
#include <gloo/allreduce.h>
#include <gloo/broadcast.h>
#include <gloo/reduce.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/store.h>
#include <gloo/transport/tcp/device.h>
#include <gloo/transport/unbound_buffer.h>
#include <gloo/types.h>
#include <pthread.h>
#include <signal.h>

#include <algorithm>
#include <chrono>
#include <cstring>
#include <exception>
#include <map>
#include <memory>
#include <mutex>
#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "cpu_ccl_compute.h"
#include "infinirt.h"

namespace infiniccl_cpu {

namespace {

// --- Rendezvous ----------------------------------------------------------------------------

// The store libinfiniccl lends, as Gloo's rendezvous uses it. Its deadline is the whole
// rendezvous's, so Gloo's own timeouts add nothing.
class LentStore : public gloo::rendezvous::Store {
 public:
  explicit LentStore(const infinicclBackendStore* store) : store_(store) {}

  void set(const std::string& key, const std::vector<char>& data) override {
    char why[INFINICCL_BACKEND_WHY_BYTES] = "";
    if (store_->Set(store_->context, ("gloo/" + key).c_str(), data.data(), data.size(), why,
                    sizeof why) != 0) {
      throw std::runtime_error(std::string("publishing this rank's address: ") + why);
    }
  }

  std::vector<char> get(const std::string& key) override {
    auto found = values_.find(key);
    return found != values_.end() ? found->second : Fetch(key);
  }

  void wait(const std::vector<std::string>& keys) override {
    for (const std::string& key : keys) get(key);
  }

  void wait(const std::vector<std::string>& keys, const std::chrono::milliseconds&) override {
    wait(keys);
  }

 private:
  std::vector<char> Fetch(const std::string& key) {
    std::vector<char> value(size_t{64} << 10);  // the store's largest value
    size_t size = 0;
    char why[INFINICCL_BACKEND_WHY_BYTES] = "";
    if (store_->Get(store_->context, ("gloo/" + key).c_str(), value.data(), value.size(), &size,
                    why, sizeof why) != 0) {
      throw std::runtime_error("rank " + key + " did not join: " + why);
    }
    value.resize(std::min(size, value.size()));
    return values_[key] = value;
  }

  const infinicclBackendStore* store_;
  std::map<std::string, std::vector<char>> values_;
};

// Gloo writes to its sockets without MSG_NOSIGNAL: a write to a rank that died would end this
// process with SIGPIPE instead of failing the operation. The signal is blocked in the threads that
// write: Gloo's event loop (a thread inherits the mask of the one that creates it) and the thread
// running an operation, which takes a SIGPIPE raised meanwhile before it unblocks the signal.
class SigpipeBlocked {
 public:
  SigpipeBlocked() {
    sigemptyset(&pipe_);
    sigaddset(&pipe_, SIGPIPE);
    pthread_sigmask(SIG_BLOCK, &pipe_, &previous_);
  }
  ~SigpipeBlocked() {
    if (sigismember(&previous_, SIGPIPE)) return;  // blocked before: leave it as it was
    const timespec now{0, 0};
    while (sigtimedwait(&pipe_, nullptr, &now) == SIGPIPE) {
    }
    pthread_sigmask(SIG_SETMASK, &previous_, nullptr);
  }
  SigpipeBlocked(const SigpipeBlocked&) = delete;
  SigpipeBlocked& operator=(const SigpipeBlocked&) = delete;

 private:
  sigset_t pipe_;
  sigset_t previous_;
};

// Gloo's TCP device (its sockets and event loop) for an address, one per process and address.
std::shared_ptr<gloo::transport::Device> DeviceFor(const std::string& address) {
  static std::mutex mutex;
  static auto* devices = new std::map<std::string, std::shared_ptr<gloo::transport::Device>>();
  std::lock_guard<std::mutex> lock(mutex);
  auto& device = (*devices)[address];
  if (!device) {
    SigpipeBlocked blocked;  // in the event loop's thread for good
    gloo::transport::tcp::attr attr;
    attr.hostname = address;
    device = gloo::transport::tcp::CreateDevice(attr);
  }
  return device;
}

// --- Objects -------------------------------------------------------------------------------

// What a rank and the work queued for it share: the Gloo context and the failure, if any.
struct Shared {
  std::shared_ptr<gloo::rendezvous::Context> context;
  int rank = 0;
  int nranks = 0;
  std::chrono::milliseconds timeout{0};
  std::mutex mutex;
  std::string failure;  // under mutex; once set, queued work is skipped and calls fail
  // What a failed operation leaves behind: its buffers (in its options, or posted for a send or
  // receive). Gloo's event loop may still complete a transfer of them after the operation threw,
  // so they go only after the context, whose connections are then closed.
  std::vector<std::shared_ptr<void>> abandoned;  // under mutex

  ~Shared() {
    context.reset();
    abandoned.clear();
  }

  std::string Failure() {
    std::lock_guard<std::mutex> lock(mutex);
    return failure;
  }
  void Fail(const std::string& why) {
    std::lock_guard<std::mutex> lock(mutex);
    if (failure.empty()) failure = why;
  }
  void Abandon(std::shared_ptr<void> leftover) {
    std::lock_guard<std::mutex> lock(mutex);
    abandoned.push_back(std::move(leftover));
  }
};

// Host memory an operation computes in, abandoned as its buffers are when it fails.
class Scratch {
 public:
  explicit Scratch(Shared& shared) : shared_(shared) {}
  ~Scratch() {
    if (std::uncaught_exceptions() <= unwinding_) return;
    for (auto& block : blocks_) shared_.Abandon(block);
  }
  Scratch(const Scratch&) = delete;
  Scratch& operator=(const Scratch&) = delete;

  void* Get(size_t bytes) {
    blocks_.push_back(std::make_shared<std::vector<char>>(bytes));
    return blocks_.back()->data();
  }

 private:
  Shared& shared_;
  const int unwinding_ = std::uncaught_exceptions();
  std::vector<std::shared_ptr<std::vector<char>>> blocks_;
};

// Runs a Gloo operation whose options (and the buffers in them) outlive it when it fails.
template <class Options, class Run>
void RunOrAbandon(Shared& shared, const std::shared_ptr<Options>& options, Run&& run) {
  try {
    run(*options);
  } catch (...) {
    shared.Abandon(options);
    throw;
  }
}

struct GlooRank : CommBase {
  GlooRank() : CommBase(CommKind::kAcrossProcesses) {}
  std::shared_ptr<Shared> shared;
  int ordinal = -1;
  bool host_memory = true;  // a CPU device: Gloo reads and writes its buffers directly
  std::mutex issue_mutex;   // one thread at a time queues work for the rank
  infinirtStream_t stream = nullptr;
  infinirtEvent_t ready = nullptr;  // recorded on a caller's stream; the rank's stream waits
  infinirtEvent_t done = nullptr;   // recorded on the rank's stream; callers' streams wait
  void* staging = nullptr;          // pinned host memory, for a device that is not the host's
  size_t staging_bytes = 0;
  uint32_t collectives = 0;            // collective calls queued so far (Gloo's tags)
  std::vector<uint32_t> sends, recvs;  // point-to-point calls queued so far, per peer
};

GlooRank* GlooRankOf(CommBase* comm) { return static_cast<GlooRank*>(comm); }

// One call as the host function runs it: buffers Gloo can touch (the caller's, or staging).
struct Step {
  infinicclBackendCall call;
  uint32_t tag = 0;   // collectives: Gloo's tag
  uint64_t slot = 0;  // point to point: Gloo's slot
};

struct Batch {
  std::shared_ptr<Shared> shared;
  std::vector<Step> steps;
};

std::string RuntimeError(const std::string& doing) {
  return doing + ": " + infinirtGetErrorString(infinirtGetLastError());
}

// --- The operations, on host memory --------------------------------------------------------

// Elements of N bytes, for Gloo, which sizes buffers by their element type.
template <size_t N>
struct Element {
  unsigned char bytes[N];
};

template <class F>
void WithElementSize(size_t size, F&& f) {
  switch (size) {
    case 1:
      return f(Element<1>{});
    case 2:
      return f(Element<2>{});
    case 4:
      return f(Element<4>{});
    default:
      return f(Element<8>{});  // reductions are of 1- to 8-byte types
  }
}

// What Gloo's AllreduceOptions and ReduceOptions share: tag, timeout, buffers (the input only
// out of place) and the reduction of two buffers into a third.
template <class Options>
void SetUpReduction(Options& options, const Shared& shared, const void* send, void* recv,
                    size_t count, infiniDtype_t dtype, infinicclReduceOp_t op, uint32_t tag) {
  options.setTag(tag);
  options.setTimeout(shared.timeout);
  WithElementSize(ElementSize(dtype), [&](auto element) {
    using E = decltype(element);
    if (send != recv) options.setInput(static_cast<E*>(const_cast<void*>(send)), count);
    options.setOutput(static_cast<E*>(recv), count);
  });
  options.setReduceFunction([dtype, op](void* c, const void* a, const void* b, size_t n) {
    Reduce(dtype, op, {a, b}, 0, {c}, 0, n);
  });
}

void GlooAllReduce(Shared& shared, const void* send, void* recv, size_t count, infiniDtype_t dtype,
                   infinicclReduceOp_t op, uint32_t tag) {
  auto options = std::make_shared<gloo::AllreduceOptions>(shared.context);
  SetUpReduction(*options, shared, send, recv, count, dtype, op, tag);
  RunOrAbandon(shared, options, [](auto& set) { gloo::allreduce(set); });
}

void GlooReduce(Shared& shared, const void* send, void* recv, size_t count, infiniDtype_t dtype,
                infinicclReduceOp_t op, int root, uint32_t tag) {
  auto options = std::make_shared<gloo::ReduceOptions>(shared.context);
  SetUpReduction(*options, shared, send, recv, count, dtype, op, tag);
  options->setRoot(root);
  RunOrAbandon(shared, options, [](auto& set) { gloo::reduce(set); });
}

// A reduction `run(send, recv, dtype, op)` does, with AVG taken as a sum (Gloo has no average):
// of the dtype itself for floats, of 64-bit integers for integers (as Compute averages them).
// The average is stored in recv where `stores` (Reduce's root, every rank otherwise).
template <class Run>
void Reduction(Shared& shared, const void* send, void* recv, size_t count, infiniDtype_t dtype,
               infinicclReduceOp_t op, bool stores, Run&& run) {
  if (op != INFINICCL_AVG) return run(send, recv, dtype, op);
  const infiniDtype_t sum = SumDtype(dtype);
  if (sum == dtype) {
    run(send, recv, dtype, INFINICCL_SUM);
    if (stores) StoreAverage(dtype, recv, recv, count, shared.nranks);
    return;
  }
  Scratch scratch(shared);
  void* wide = scratch.Get(count * sizeof(uint64_t));
  Widen(dtype, send, wide, count);
  run(wide, wide, sum, INFINICCL_SUM);
  if (stores) StoreAverage(dtype, wide, recv, count, shared.nranks);
}

void RunCollective(Shared& shared, const Step& step) {
  const infinicclBackendCall& call = step.call;
  const size_t element = ElementSize(call.dtype);
  const size_t bytes = call.count * element;
  switch (call.kind) {
    case INFINICCL_CALL_AllReduce:
      return Reduction(
          shared, call.sendbuf, call.recvbuf, call.count, call.dtype, call.op, true,
          [&](const void* send, void* recv, infiniDtype_t dtype, infinicclReduceOp_t op) {
            GlooAllReduce(shared, send, recv, call.count, dtype, op, step.tag);
          });
    case INFINICCL_CALL_Reduce: {
      const bool root = shared.rank == call.root;
      Scratch scratch(shared);  // the others' recvbuf is not used
      void* recv = root ? call.recvbuf : scratch.Get(bytes);
      return Reduction(
          shared, call.sendbuf, recv, call.count, call.dtype, call.op, root,
          [&](const void* send, void* out, infiniDtype_t dtype, infinicclReduceOp_t op) {
            GlooReduce(shared, send, out, call.count, dtype, op, call.root, step.tag);
          });
    }
    case INFINICCL_CALL_ReduceScatter: {
      // An all-reduce of every rank's whole buffer, of which the rank keeps its chunk: twice
      // the traffic of a ring reduce-scatter (Gloo's new API has none).
      const size_t all = call.count * static_cast<size_t>(shared.nranks);
      Scratch scratch(shared);
      char* reduced = static_cast<char*>(scratch.Get(all * element));
      Reduction(shared, call.sendbuf, reduced, all, call.dtype, call.op, true,
                [&](const void* send, void* recv, infiniDtype_t dtype, infinicclReduceOp_t op) {
                  GlooAllReduce(shared, send, recv, all, dtype, op, step.tag);
                });
      std::memcpy(call.recvbuf, reduced + static_cast<size_t>(shared.rank) * bytes, bytes);
      return;
    }
    case INFINICCL_CALL_Broadcast: {
      auto options = std::make_shared<gloo::BroadcastOptions>(shared.context);
      options->setTag(step.tag);
      options->setTimeout(shared.timeout);
      options->setRoot(call.root);
      auto* recv = static_cast<uint8_t*>(call.recvbuf);
      const auto* send = static_cast<const uint8_t*>(call.sendbuf);
      if (shared.rank == call.root && send != recv) {
        options->setInput(const_cast<uint8_t*>(send), bytes);
      }
      options->setOutput(recv, bytes);
      return RunOrAbandon(shared, options, [](auto& set) { gloo::broadcast(set); });
    }
    case INFINICCL_CALL_AllGather: {
      auto options = std::make_shared<gloo::AllgatherOptions>(shared.context);
      options->setTag(step.tag);
      options->setTimeout(shared.timeout);
      auto* recv = static_cast<uint8_t*>(call.recvbuf);
      const auto* send = static_cast<const uint8_t*>(call.sendbuf);
      // In place (sendbuf is the rank's chunk of recvbuf), Gloo takes the output alone.
      if (send != recv + static_cast<size_t>(shared.rank) * bytes) {
        options->setInput(const_cast<uint8_t*>(send), bytes);
      }
      options->setOutput(recv, bytes * static_cast<size_t>(shared.nranks));
      return RunOrAbandon(shared, options, [](auto& set) { gloo::allgather(set); });
    }
    default:
      return;
  }
}

bool IsPointToPoint(const infinicclBackendCall& call) {
  return call.kind == INFINICCL_CALL_Send || call.kind == INFINICCL_CALL_Recv;
}

// Runs a batch: its sends and receives are posted first, so that a group's exchange cannot wait
// on itself, then its collectives in order, then the sends and receives are waited for.
void RunSteps(Shared& shared, const std::vector<Step>& steps) {
  std::vector<std::pair<std::unique_ptr<gloo::transport::UnboundBuffer>, const Step*>> posted;
  try {
    for (const Step& step : steps) {
      if (!IsPointToPoint(step.call)) continue;
      const infinicclBackendCall& call = step.call;
      const size_t bytes = call.count * ElementSize(call.dtype);
      const bool send = call.kind == INFINICCL_CALL_Send;
      void* data = send ? const_cast<void*>(call.sendbuf) : call.recvbuf;
      posted.emplace_back(shared.context->createUnboundBuffer(data, bytes), &step);
      if (send) {
        posted.back().first->send(call.root, step.slot);
      } else {
        posted.back().first->recv(call.root, step.slot);
      }
    }
    for (const Step& step : steps) {
      if (!IsPointToPoint(step.call)) RunCollective(shared, step);
    }
    for (auto& [buffer, step] : posted) {
      const bool send = step->call.kind == INFINICCL_CALL_Send;
      const bool completed =
          send ? buffer->waitSend(shared.timeout) : buffer->waitRecv(nullptr, shared.timeout);
      if (!completed) throw std::runtime_error("a send or receive was aborted");
    }
  } catch (...) {
    for (auto& entry : posted) {
      shared.Abandon(std::shared_ptr<gloo::transport::UnboundBuffer>(std::move(entry.first)));
    }
    throw;
  }
}

// Closes the rank's connections, so that peers waiting on this rank fail now rather than at
// their timeout: a peer sending to a rank that failed otherwise waits for a receive that will
// never be posted, as nothing tells it this rank has given up.
void Disconnect(Shared& shared) {
  try {
    shared.context->closeConnections();
  } catch (...) {
  }
}

// Runs steps; a failure is kept in shared and passed on to the peers (false).
bool RunKeepingFailure(Shared& shared, const std::vector<Step>& steps) {
  SigpipeBlocked blocked;
  try {
    RunSteps(shared, steps);
    return true;
  } catch (const std::exception& error) {
    shared.Fail(std::string("rank ") + std::to_string(shared.rank) +
                ": a collective failed: " + error.what());
  } catch (...) {
    shared.Fail("rank " + std::to_string(shared.rank) + ": a collective failed");
  }
  Disconnect(shared);
  return false;
}

// The host function of a batch.
void RunBatch(void* data) {
  std::unique_ptr<Batch> batch(static_cast<Batch*>(data));
  Shared& shared = *batch->shared;
  if (!shared.Failure().empty()) return;  // an earlier operation failed: the ranks are apart
  RunKeepingFailure(shared, batch->steps);
}

// --- Queuing -------------------------------------------------------------------------------

// The bytes a call reads from sendbuf and writes to recvbuf on this rank.
void CallBytes(const GlooRank& rank, const infinicclBackendCall& call, size_t* send, size_t* recv) {
  const Shared& shared = *rank.shared;
  const size_t bytes = call.count * ElementSize(call.dtype);
  const size_t all = bytes * static_cast<size_t>(shared.nranks);
  const bool root = shared.rank == call.root;
  switch (call.kind) {
    case INFINICCL_CALL_Send:
      *send = bytes, *recv = 0;
      return;
    case INFINICCL_CALL_Recv:
      *send = 0, *recv = bytes;
      return;
    case INFINICCL_CALL_Broadcast:
      *send = root ? bytes : 0, *recv = bytes;
      return;
    case INFINICCL_CALL_Reduce:
      *send = bytes, *recv = root ? bytes : 0;
      return;
    case INFINICCL_CALL_AllGather:
      *send = bytes, *recv = all;
      return;
    case INFINICCL_CALL_ReduceScatter:
      *send = all, *recv = bytes;
      return;
    default:
      *send = bytes, *recv = bytes;
      return;
  }
}

size_t RoundUp(size_t bytes) { return (bytes + 255) / 256 * 256; }

// Pinned memory for the staged copies of a batch, grown when it is too small (after the work
// that uses it now).
bool EnsureStaging(GlooRank& rank, size_t bytes, std::string* why) {
  if (bytes <= rank.staging_bytes) return true;
  if (infinirtStreamSynchronize(rank.stream) != infinirtSuccess) {
    *why = RuntimeError("waiting for the rank's stream");
    return false;
  }
  if (rank.staging != nullptr) infinirtFreeHost(rank.staging);
  rank.staging = nullptr;
  rank.staging_bytes = 0;
  size_t size = size_t{1} << 20;
  while (size < bytes) size *= 2;
  if (infinirtMallocHost(&rank.staging, size) != infinirtSuccess) {
    *why = RuntimeError("allocating pinned memory to stage the rank's buffers");
    return false;
  }
  rank.staging_bytes = size;
  return true;
}

// Stages a batch's buffers: copies its inputs to pinned memory on the rank's stream, points its
// steps at the copies, and notes the copies back to make after it.
struct CopyBack {
  void* destination;
  const void* source;
  size_t bytes;
};

bool Stage(GlooRank& rank, std::vector<Step>* steps, std::vector<CopyBack>* copies,
           std::string* why) {
  size_t needed = 0;
  for (const Step& step : *steps) {
    size_t send = 0, recv = 0;
    CallBytes(rank, step.call, &send, &recv);
    needed += RoundUp(send) + RoundUp(recv);
  }
  if (!EnsureStaging(rank, needed, why)) return false;
  char* next = static_cast<char*>(rank.staging);
  for (Step& step : *steps) {
    size_t send = 0, recv = 0;
    CallBytes(rank, step.call, &send, &recv);
    if (send > 0) {
      if (infinirtMemcpyAsync(next, step.call.sendbuf, send, infinirtMemcpyDeviceToHost,
                              rank.stream) != infinirtSuccess) {
        *why = RuntimeError("staging an input");
        return false;
      }
      step.call.sendbuf = next;
      next += RoundUp(send);
    }
    if (recv > 0) {
      copies->push_back({step.call.recvbuf, next, recv});
      step.call.recvbuf = next;
      next += RoundUp(recv);
    }
  }
  return true;
}

// The steps of a rank's calls, with Gloo's tags and slots in call order.
std::vector<Step> StepsOf(GlooRank& rank, const std::vector<const Noted*>& calls) {
  std::vector<Step> steps;
  for (const Noted* noted : calls) {
    Step step;
    step.call = noted->call;
    if (step.call.kind == INFINICCL_CALL_Send) {
      step.slot = gloo::Slot::build(0x7e, rank.sends[step.call.root]++);
    } else if (step.call.kind == INFINICCL_CALL_Recv) {
      step.slot = gloo::Slot::build(0x7e, rank.recvs[step.call.root]++);
    } else {
      step.tag = rank.collectives++;
    }
    steps.push_back(step);
  }
  return steps;
}

bool Idle(infinirtStream_t stream) {
  if (infinirtStreamQuery(stream) == infinirtSuccess) return true;
  infinirtGetLastError();  // NotReady, or a capturing stream: not idle either way
  return false;
}

// Up to this many bytes per buffer, calls whose streams are idle run in the calling thread.
constexpr size_t kAtOnceBytes = size_t{64} << 10;

// Whether a rank's calls may run at once, in the calling thread: small, on host memory, with
// nothing queued before them on the caller's streams or the rank's. Handing them to a worker
// would cost more than they take; the call returns when they are done (which, as for any
// collective, waits for the other ranks). Only for the calls of one rank at a time: a thread
// issuing a group of several ranks' calls must not wait on one before issuing the next.
bool RunsAtOnce(GlooRank& rank, const std::vector<const Noted*>& calls) {
  if (!rank.host_memory) return false;
  for (const Noted* noted : calls) {
    size_t send = 0, recv = 0;
    CallBytes(rank, noted->call, &send, &recv);
    if (send > kAtOnceBytes || recv > kAtOnceBytes) return false;
  }
  if (!Idle(rank.stream)) return false;
  for (const Noted* noted : calls) {
    if (!Idle(noted->stream)) return false;
  }
  return true;
}

infiniStatus_t RunAtOnce(GlooRank& rank, const std::vector<Step>& steps, std::string* why) {
  if (RunKeepingFailure(*rank.shared, steps)) return INFINI_STATUS_SUCCESS;
  *why = rank.shared->Failure();
  return INFINI_STATUS_INTERNAL_ERROR;
}

// Queues one rank's calls (in call order) as one batch on its stream, or runs them at once.
infiniStatus_t Queue(GlooRank& rank, const std::vector<const Noted*>& calls, bool alone,
                     std::string* why) {
  std::lock_guard<std::mutex> lock(rank.issue_mutex);
  if (const std::string failure = rank.shared->Failure(); !failure.empty()) {
    *why = failure;
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  OnDevice device(rank.ordinal);
  if (alone && RunsAtOnce(rank, calls)) return RunAtOnce(rank, StepsOf(rank, calls), why);
  std::vector<infinirtStream_t> streams;
  for (const Noted* noted : calls) {
    if (std::find(streams.begin(), streams.end(), noted->stream) != streams.end()) continue;
    streams.push_back(noted->stream);
    if (infinirtEventRecord(rank.ready, noted->stream) != infinirtSuccess ||
        infinirtStreamWaitEvent(rank.stream, rank.ready, 0) != infinirtSuccess) {
      *why = RuntimeError("ordering the collective after the caller's stream");
      return INFINI_STATUS_INTERNAL_ERROR;
    }
  }
  auto batch = std::make_unique<Batch>();
  batch->shared = rank.shared;
  batch->steps = StepsOf(rank, calls);
  std::vector<CopyBack> copies;
  if (!rank.host_memory && !Stage(rank, &batch->steps, &copies, why)) {
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  if (infinirtLaunchHostFunc(rank.stream, &RunBatch, batch.get()) != infinirtSuccess) {
    *why = RuntimeError("queuing the collective");
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  batch.release();  // RunBatch owns it
  for (const CopyBack& copy : copies) {
    if (infinirtMemcpyAsync(copy.destination, copy.source, copy.bytes, infinirtMemcpyHostToDevice,
                            rank.stream) != infinirtSuccess) {
      *why = RuntimeError("copying an output back");
      return INFINI_STATUS_INTERNAL_ERROR;
    }
  }
  if (infinirtEventRecord(rank.done, rank.stream) != infinirtSuccess) {
    *why = RuntimeError("recording the collective's end");
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  for (infinirtStream_t stream : streams) {
    if (infinirtStreamWaitEvent(stream, rank.done, 0) != infinirtSuccess) {
      *why = RuntimeError("ordering the caller's stream after the collective");
      return INFINI_STATUS_INTERNAL_ERROR;
    }
  }
  return INFINI_STATUS_SUCCESS;
}

// The rank's stream: non-blocking, or, on a backend without them (Cambricon's queues), blocking.
infinirtError_t MakeStream(infinirtStream_t* stream) {
  const infinirtError_t made = infinirtStreamCreateWithFlags(stream, infinirtStreamNonBlocking);
  if (made != infinirtErrorNotSupported) return made;
  infinirtGetLastError();
  return infinirtStreamCreate(stream);
}

bool MakeStreamAndEvents(GlooRank& rank, std::string* why) {
  OnDevice device(rank.ordinal);
  if (MakeStream(&rank.stream) != infinirtSuccess ||
      infinirtEventCreateWithFlags(&rank.ready, infinirtEventDisableTiming) != infinirtSuccess ||
      infinirtEventCreateWithFlags(&rank.done, infinirtEventDisableTiming) != infinirtSuccess) {
    *why = RuntimeError("creating the rank's stream and events");
    return false;
  }
  return true;
}

// Releases the rank's stream, events and staging memory, after its queued work when `wait`.
// Otherwise the stream and events go once that work is done (as the runtime does for a stream
// or event destroyed while in use); pinned memory it may still use is left allocated.
void ReleaseRuntimeObjects(GlooRank& rank, bool wait) {
  OnDevice device(rank.ordinal);
  const bool idle = rank.stream == nullptr || infinirtStreamQuery(rank.stream) == infinirtSuccess;
  if (rank.stream != nullptr) {
    if (wait) infinirtStreamSynchronize(rank.stream);
    infinirtStreamDestroy(rank.stream);
  }
  if (rank.ready != nullptr) infinirtEventDestroy(rank.ready);
  if (rank.done != nullptr) infinirtEventDestroy(rank.done);
  // The context goes first (when nothing queued holds it): a failed operation may have left
  // a transfer into the staging memory that only closing its connections ends.
  if (wait || idle) rank.shared.reset();
  if (rank.staging != nullptr && (wait || idle)) infinirtFreeHost(rank.staging);
  infinirtGetLastError();
}

}  // namespace

infiniStatus_t GlooCommInitRank(int nranks, int rank, int ordinal, long timeout_ms,
                                const infinicclBackendStore* store, infinicclBackendComm_t* comm,
                                char* why, size_t why_size) {
  auto made = std::make_unique<GlooRank>();
  made->ordinal = ordinal;
  infiniDevice_t type = INFINI_DEVICE_CPU;
  if (infinirtDeviceGetType(&type, ordinal) != infinirtSuccess) {
    Say(why, why_size, RuntimeError("device " + std::to_string(ordinal)));
    return INFINI_STATUS_DEVICE_NOT_FOUND;
  }
  made->host_memory = type == INFINI_DEVICE_CPU;
  made->sends.assign(nranks, 0);
  made->recvs.assign(nranks, 0);
  made->shared = std::make_shared<Shared>();
  Shared& shared = *made->shared;
  shared.rank = rank;
  shared.nranks = nranks;
  shared.timeout = std::chrono::milliseconds(timeout_ms);
  std::string problem;
  if (!MakeStreamAndEvents(*made, &problem)) {
    ReleaseRuntimeObjects(*made, true);
    Say(why, why_size, problem);
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  try {
    SigpipeBlocked blocked;
    auto context = std::make_shared<gloo::rendezvous::Context>(rank, nranks);
    context->setTimeout(shared.timeout);
    LentStore lent(store);
    auto device = DeviceFor(store->local_address);
    context->connectFullMesh(lent, device);
    shared.context = std::move(context);
  } catch (const std::exception& error) {
    ReleaseRuntimeObjects(*made, true);
    Say(why, why_size, std::string("connecting the ranks (Gloo): ") + error.what());
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  *comm = HandleOf(made.release());
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t GlooIssue(const std::vector<Noted>& calls, char* why, size_t why_size) {
  std::vector<std::pair<GlooRank*, std::vector<const Noted*>>> by_rank;  // in call order
  for (const Noted& noted : calls) {
    GlooRank* rank = GlooRankOf(noted.comm);
    auto found = std::find_if(by_rank.begin(), by_rank.end(),
                              [&](const auto& entry) { return entry.first == rank; });
    if (found == by_rank.end()) found = by_rank.insert(by_rank.end(), {rank, {}});
    found->second.push_back(&noted);
  }
  for (const auto& [rank, noted] : by_rank) {
    std::string problem;
    if (const infiniStatus_t status = Queue(*rank, noted, by_rank.size() == 1, &problem)) {
      Say(why, why_size, problem);
      return status;
    }
  }
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t GlooRelease(CommBase* comm, bool abort) {
  std::unique_ptr<GlooRank> rank(GlooRankOf(comm));
  if (abort) {
    // The other ranks' operations with this one fail at once. Gloo offers no way to end this
    // rank's own waiting operation: it fails when a peer's connection does, or at the timeout,
    // and the queued work after it is skipped; the abort does not wait for it.
    rank->shared->Fail("the communicator was aborted");
    Disconnect(*rank->shared);
  }
  ReleaseRuntimeObjects(*rank, !abort);
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t GlooAsyncError(CommBase* comm, infiniStatus_t* status, char* why, size_t why_size) {
  const std::string failure = GlooRankOf(comm)->shared->Failure();
  *status = failure.empty() ? INFINI_STATUS_SUCCESS : INFINI_STATUS_INTERNAL_ERROR;
  Say(why, why_size, failure);
  return INFINI_STATUS_SUCCESS;
}

}  // namespace infiniccl_cpu
