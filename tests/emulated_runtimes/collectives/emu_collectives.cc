#include "emu_collectives.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <tuple>
#include <unordered_map>
#include <vector>

namespace emu_ccl {

bool operator==(const Operation& a, const Operation& b) {
  return std::tie(a.kind, a.count, a.dtype, a.op, a.root) ==
         std::tie(b.kind, b.count, b.dtype, b.op, b.root);
}

namespace {

// --- Record and injected failures ------------------------------------------------------------

struct Failure {
  int after_calls = 0;
  int result = 0;
  int seen = 0;
};

struct Record {
  std::mutex mutex;
  std::vector<std::string> calls;
  std::unordered_map<std::string, int> counts;
  std::unordered_map<std::string, Failure> failures;
  int live_comms = 0;
};

Record& TheRecord() {
  static auto* record = new Record();  // used until the process ends
  return *record;
}

thread_local std::string t_last_error;

Runtime g_runtime;

}  // namespace

void* RuntimeFunction(const char* variable, const std::string& name) {
  const char* path = getenv(variable);
  void* runtime = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) : nullptr;
  return runtime != nullptr ? dlsym(runtime, name.c_str()) : nullptr;
}

void SetRuntime(const Runtime& runtime) { g_runtime = runtime; }

int Enter(const std::string& name, const std::string& arguments) {
  Record& record = TheRecord();
  std::lock_guard<std::mutex> lock(record.mutex);
  // Always a space after the name, as the emulated runtimes record ("<function> <arguments>").
  record.calls.push_back(name + " " + arguments);
  ++record.counts[name];
  auto failure = record.failures.find(name);
  if (failure == record.failures.end() || failure->second.seen++ < failure->second.after_calls) {
    return 0;
  }
  t_last_error = "injected failure of " + name;
  return failure->second.result;
}

void SetLastError(const std::string& text) { t_last_error = text; }
const char* LastError() { return t_last_error.c_str(); }

std::string Pointer(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

size_t SizeOf(Elem dtype) {
  switch (dtype) {
    case Elem::kI8:
    case Elem::kU8:
      return 1;
    case Elem::kI16:
    case Elem::kU16:
    case Elem::kF16:
    case Elem::kBF16:
      return 2;
    case Elem::kI32:
    case Elem::kU32:
    case Elem::kF32:
      return 4;
    default:
      return 8;
  }
}

std::chrono::milliseconds Timeout() {
  const char* text = getenv("EMU_CCL_TIMEOUT_MS");
  if (text == nullptr) text = getenv("EMU_NCCL_TIMEOUT_MS");
  return std::chrono::milliseconds(text != nullptr ? std::atol(text) : 20000);
}

// --- Communicators -----------------------------------------------------------------------------

// The ranks' parts of one collective (or of a Send and its Recv), met as their streams reach it.
struct Meeting {
  Operation operation;
  std::vector<Part> parts;
  int expected = 0;
  int arrived = 0;
  bool done = false;
  bool mismatch = false;
};

struct Clique {
  int nranks = 0;
  std::mutex mutex;
  std::condition_variable cv;
  std::map<uint64_t, std::shared_ptr<Meeting>> collectives;
  std::map<std::tuple<int, int, uint64_t>, std::shared_ptr<Meeting>> transfers;
  bool aborted = false;
};

// One rank (declared in the header: the vendors' functions pass it around).
struct Comm {
  std::shared_ptr<Clique> clique;
  int rank = 0;
  int device = 0;
  // Under clique->mutex: what this rank's streams have executed, its queued host functions, and
  // the failure found after a call returned.
  uint64_t collectives = 0;
  std::vector<uint64_t> sent, received;
  int pending = 0;
  Outcome async_error = Outcome::kOk;
};

std::string CommText(const Comm* comm) {
  return comm == nullptr
             ? "comm=null"
             : "comm=" + std::to_string(comm->rank) + "/" + std::to_string(comm->clique->nranks);
}

int RankOf(const Comm* comm) { return comm->rank; }
int CountOf(const Comm* comm) { return comm->clique->nranks; }
int DeviceOf(const Comm* comm) { return comm->device; }

namespace {

Comm* MakeComm(const std::shared_ptr<Clique>& clique, int rank, int device) {
  auto* comm = new Comm();
  comm->clique = clique;
  comm->rank = rank;
  comm->device = device;
  comm->sent.assign(clique->nranks, 0);
  comm->received.assign(clique->nranks, 0);
  std::lock_guard<std::mutex> lock(TheRecord().mutex);
  ++TheRecord().live_comms;
  return comm;
}

// --- Arithmetic --------------------------------------------------------------------------------

struct Bf16 {
  uint16_t bits;
  Bf16() = default;
  explicit Bf16(float value) {
    uint32_t word;
    std::memcpy(&word, &value, 4);
    word += 0x7fff + ((word >> 16) & 1);  // round to nearest even
    bits = static_cast<uint16_t>(word >> 16);
  }
  explicit operator float() const {
    const uint32_t word = static_cast<uint32_t>(bits) << 16;
    float value;
    std::memcpy(&value, &word, 4);
    return value;
  }
};

template <class Acc>
Acc Combine(Acc a, Acc b, Op op) {
  switch (op) {
    case Op::kProd:
      return a * b;
    case Op::kMax:
      return std::max(a, b);
    case Op::kMin:
      return std::min(a, b);
    default:  // sum, and avg before its division
      return a + b;
  }
}

// out[i] = op over the inputs' element offset + i, accumulated in Acc.
template <class T, class Acc>
void ReduceTyped(const std::vector<const void*>& inputs, size_t offset, size_t count, Op op,
                 void* out) {
  std::vector<T> result(count);
  for (size_t i = 0; i < count; ++i) {
    Acc acc = static_cast<Acc>(static_cast<const T*>(inputs[0])[offset + i]);
    for (size_t r = 1; r < inputs.size(); ++r) {
      acc = Combine(acc, static_cast<Acc>(static_cast<const T*>(inputs[r])[offset + i]), op);
    }
    if (op == Op::kAvg) acc = acc / static_cast<Acc>(inputs.size());
    result[i] = static_cast<T>(acc);
  }
  std::memcpy(out, result.data(), count * sizeof(T));
}

void Reduce(Elem dtype, const std::vector<const void*>& inputs, size_t offset, size_t count, Op op,
            void* out) {
  switch (dtype) {
    case Elem::kI8:
      return ReduceTyped<int8_t, int64_t>(inputs, offset, count, op, out);
    case Elem::kU8:
      return ReduceTyped<uint8_t, uint64_t>(inputs, offset, count, op, out);
    case Elem::kI16:
      return ReduceTyped<int16_t, int64_t>(inputs, offset, count, op, out);
    case Elem::kU16:
      return ReduceTyped<uint16_t, uint64_t>(inputs, offset, count, op, out);
    case Elem::kI32:
      return ReduceTyped<int32_t, int64_t>(inputs, offset, count, op, out);
    case Elem::kU32:
      return ReduceTyped<uint32_t, uint64_t>(inputs, offset, count, op, out);
    case Elem::kI64:
      return ReduceTyped<int64_t, int64_t>(inputs, offset, count, op, out);
    case Elem::kU64:
      return ReduceTyped<uint64_t, uint64_t>(inputs, offset, count, op, out);
    case Elem::kF16:
      return ReduceTyped<_Float16, float>(inputs, offset, count, op, out);
    case Elem::kF32:
      return ReduceTyped<float, float>(inputs, offset, count, op, out);
    case Elem::kF64:
      return ReduceTyped<double, double>(inputs, offset, count, op, out);
    default:  // kBF16
      return ReduceTyped<Bf16, float>(inputs, offset, count, op, out);
  }
}

// Moves the data of a met collective: results are computed aside first, since buffers may be in
// place.
void Compute(const Meeting& meeting) {
  const Operation& o = meeting.operation;
  const size_t bytes = o.count * SizeOf(o.dtype);
  const int n = static_cast<int>(meeting.parts.size());
  std::vector<const void*> sends;
  for (const Part& part : meeting.parts) sends.push_back(part.send);
  std::vector<char> result;
  switch (o.kind) {
    case Kind::kAllReduce:
    case Kind::kReduce:
      result.resize(bytes);
      Reduce(o.dtype, sends, 0, o.count, o.op, result.data());
      for (int r = 0; r < n; ++r) {
        if (o.kind == Kind::kAllReduce || r == o.root) {
          std::memcpy(meeting.parts[r].recv, result.data(), bytes);
        }
      }
      return;
    case Kind::kBroadcast:
      result.assign(static_cast<const char*>(sends[o.root]),
                    static_cast<const char*>(sends[o.root]) + bytes);
      for (const Part& part : meeting.parts) std::memcpy(part.recv, result.data(), bytes);
      return;
    case Kind::kAllGather:
      result.resize(bytes * n);
      for (int r = 0; r < n; ++r) std::memcpy(result.data() + r * bytes, sends[r], bytes);
      for (const Part& part : meeting.parts) std::memcpy(part.recv, result.data(), result.size());
      return;
    case Kind::kReduceScatter: {
      std::vector<std::vector<char>> scattered(n, std::vector<char>(bytes));
      for (int r = 0; r < n; ++r) {
        Reduce(o.dtype, sends, r * o.count, o.count, o.op, scattered[r].data());
      }
      for (int r = 0; r < n; ++r) std::memcpy(meeting.parts[r].recv, scattered[r].data(), bytes);
      return;
    }
    default:  // a Send (part 0) and its Recv (part 1)
      std::memmove(meeting.parts[1].recv, meeting.parts[0].send, bytes);
      return;
  }
}

// --- Execution on the streams --------------------------------------------------------------------

// One rank's calls on one stream: one call, or those of a group (which NCCL fuses: a rank's Send
// and Recv of a group progress together, so a ring of them cannot wait for itself).
struct Item {
  Operation operation;
  Part part;
};
struct Task {
  Comm* comm;
  std::vector<Item> items;
  bool captured;
};

// The meeting a rank's task belongs to, in the order this rank's streams execute; its part.
std::shared_ptr<Meeting> MeetingOf(Clique& clique, Comm& comm, const Operation& o, int* part) {
  std::shared_ptr<Meeting>* slot;
  int expected;
  if (o.kind == Kind::kSend || o.kind == Kind::kRecv) {
    const bool sends = o.kind == Kind::kSend;
    const int sender = sends ? comm.rank : o.root;
    const int receiver = sends ? o.root : comm.rank;
    const uint64_t sequence = sends ? comm.sent[o.root]++ : comm.received[o.root]++;
    slot = &clique.transfers[{sender, receiver, sequence}];
    expected = 2;
    *part = sends ? 0 : 1;
  } else {
    slot = &clique.collectives[comm.collectives++];
    expected = clique.nranks;
    *part = comm.rank;
  }
  if (!*slot) {
    auto made = std::make_shared<Meeting>();
    made->operation = o;
    // A Send and its Recv are one transfer: kind and peer differ, the rest must agree.
    if (o.kind == Kind::kRecv) made->operation.kind = Kind::kSend;
    made->operation.root = 0;
    if (o.kind != Kind::kSend && o.kind != Kind::kRecv) made->operation.root = o.root;
    made->parts.resize(expected);
    made->expected = expected;
    *slot = made;
  }
  return *slot;
}

bool Agrees(const Meeting& meeting, const Operation& o) {
  Operation mine = o;
  if (mine.kind == Kind::kSend || mine.kind == Kind::kRecv) {
    mine.kind = Kind::kSend;
    mine.root = 0;
  }
  return meeting.operation == mine;
}

void Forget(Clique& clique, const std::shared_ptr<Meeting>& meeting) {
  for (auto it = clique.collectives.begin(); it != clique.collectives.end(); ++it) {
    if (it->second == meeting) return void(clique.collectives.erase(it));
  }
  for (auto it = clique.transfers.begin(); it != clique.transfers.end(); ++it) {
    if (it->second == meeting) return void(clique.transfers.erase(it));
  }
}

// A rank's stream reached its call: join the meeting; the last rank moves the data; the others
// wait for it (or the timeout, or an abort: then the communicator has an asynchronous error).
// Joins a meeting with one item; the last part moves the data.
std::shared_ptr<Meeting> Arrive(Clique& clique, Comm& comm, const Item& item) {
  int part = 0;
  std::shared_ptr<Meeting> meeting = MeetingOf(clique, comm, item.operation, &part);
  if (!Agrees(*meeting, item.operation)) meeting->mismatch = true;
  meeting->parts[part] = item.part;
  if (++meeting->arrived == meeting->expected) {
    if (!meeting->mismatch) Compute(*meeting);
    meeting->done = true;
    Forget(clique, meeting);
    clique.cv.notify_all();
  }
  return meeting;
}

void Execute(const Task& task) {
  Comm& comm = *task.comm;
  Clique& clique = *comm.clique;
  std::unique_lock<std::mutex> lock(clique.mutex);
  if (!clique.aborted && comm.async_error == Outcome::kOk) {
    std::vector<std::shared_ptr<Meeting>> meetings;
    for (const Item& item : task.items) meetings.push_back(Arrive(clique, comm, item));
    const auto all_done = [&] {
      return std::all_of(meetings.begin(), meetings.end(),
                         [](const std::shared_ptr<Meeting>& m) { return m->done; });
    };
    clique.cv.wait_for(lock, Timeout(), [&] { return all_done() || clique.aborted; });
    for (const std::shared_ptr<Meeting>& meeting : meetings) {
      if (meeting->mismatch) {
        comm.async_error = Outcome::kInvalidUsage;
      } else if (!meeting->done && comm.async_error == Outcome::kOk) {
        comm.async_error = clique.aborted ? Outcome::kRemoteError : Outcome::kSystemError;
      }
    }
  }
  if (!task.captured) {
    --comm.pending;
    clique.cv.notify_all();
  }
}

void RunQueued(void* data) {
  std::unique_ptr<Task> task(static_cast<Task*>(data));
  Execute(*task);
}

void RunCaptured(void* data) { Execute(*static_cast<const Task*>(data)); }

std::mutex g_captured_mutex;
std::vector<std::unique_ptr<Task>> g_captured;  // kept: a graph may launch them again

// Queues a rank's calls on its stream (in a capture: recorded for every launch of the graph).
Outcome Refuse(Outcome outcome, const std::string& why) {
  t_last_error = why;
  return outcome;
}

Outcome Launch(Comm* comm, std::vector<Item> items, void* stream) {
  const auto launch = g_runtime.launch_host_func;
  if (launch == nullptr)
    return Refuse(Outcome::kRuntimeError, "the emulated runtime is not loaded");
  const bool captured = g_runtime.capturing != nullptr && g_runtime.capturing(stream);
  const int previous = g_runtime.current_device != nullptr ? g_runtime.current_device() : -1;
  const bool switch_device = g_runtime.set_device != nullptr && previous != comm->device;
  if (switch_device) g_runtime.set_device(comm->device);
  auto task = std::make_unique<Task>(Task{comm, std::move(items), captured});
  if (!captured) {
    std::lock_guard<std::mutex> lock(comm->clique->mutex);
    ++comm->pending;
  }
  const int launched = launch(stream, captured ? &RunCaptured : &RunQueued, task.get());
  if (switch_device && previous >= 0) g_runtime.set_device(previous);
  if (launched != 0) {
    if (!captured) {
      std::lock_guard<std::mutex> lock(comm->clique->mutex);
      --comm->pending;
    }
    return Refuse(Outcome::kRuntimeError, "the stream refused the work");
  }
  if (captured) {
    std::lock_guard<std::mutex> lock(g_captured_mutex);
    g_captured.push_back(std::move(task));
  } else {
    task.release();  // RunQueued frees it
  }
  return Outcome::kOk;
}

// --- Groups --------------------------------------------------------------------------------------

struct Deferred {
  Comm* comm;
  Operation operation;
  Part part;
  void* stream;
};

thread_local int t_group_depth = 0;
thread_local std::vector<Deferred> t_deferred;

// The device a call's stream belongs to (the current one where the runtime cannot tell).
int DeviceOfStream(void* stream) {
  if (g_runtime.stream_device != nullptr) return g_runtime.stream_device(stream);
  return g_runtime.current_device != nullptr ? g_runtime.current_device() : -1;
}

bool Reduces(Kind kind) {
  return kind == Kind::kAllReduce || kind == Kind::kReduce || kind == Kind::kReduceScatter;
}

// Ranks of communicators made by InitRank, meeting by their id.
struct Joining {
  std::shared_ptr<Clique> clique;
  int joined = 0;
};
std::mutex g_joining_mutex;
std::condition_variable g_joining_cv;
std::map<std::string, Joining> g_joining;

}  // namespace

Outcome InitAll(int n, const int* devices, Comm** comms) {
  const int count = g_runtime.device_count != nullptr ? g_runtime.device_count() : 0;
  for (int i = 0; i < n; ++i) {
    if (devices[i] < 0 || devices[i] >= count || std::count(devices, devices + n, devices[i]) > 1) {
      return Refuse(Outcome::kInvalidArgument,
                    "device " + std::to_string(i) + " is no device, or given twice");
    }
  }
  auto clique = std::make_shared<Clique>();
  clique->nranks = n;
  for (int r = 0; r < n; ++r) comms[r] = MakeComm(clique, r, devices[r]);
  return Outcome::kOk;
}

Outcome InitRank(const std::string& id, int nranks, int rank, int device, Comm** comm) {
  if (comm == nullptr || nranks <= 0 || rank < 0 || rank >= nranks || device < 0) {
    return Refuse(Outcome::kInvalidArgument, "comm, nranks, rank or the device");
  }
  std::unique_lock<std::mutex> lock(g_joining_mutex);
  Joining& joining = g_joining[id];
  if (!joining.clique) {
    joining.clique = std::make_shared<Clique>();
    joining.clique->nranks = nranks;
  }
  std::shared_ptr<Clique> clique = joining.clique;
  if (clique->nranks != nranks)
    return Refuse(Outcome::kInvalidUsage, "the ranks disagree on nranks");
  if (++joining.joined == nranks) {
    g_joining.erase(id);
    g_joining_cv.notify_all();
  } else if (!g_joining_cv.wait_for(lock, Timeout(), [&] { return g_joining.count(id) == 0; })) {
    return Refuse(Outcome::kSystemError, "the other ranks never joined");
  }
  lock.unlock();
  *comm = MakeComm(clique, rank, device);
  return Outcome::kOk;
}

void Destroy(Comm* comm) {
  {
    std::unique_lock<std::mutex> lock(comm->clique->mutex);
    comm->clique->cv.wait(lock, [&] { return comm->pending == 0; });
  }
  delete comm;
  std::lock_guard<std::mutex> lock(TheRecord().mutex);
  --TheRecord().live_comms;
}

void Abort(Comm* comm) {
  {
    std::lock_guard<std::mutex> lock(comm->clique->mutex);
    comm->clique->aborted = true;
    comm->clique->cv.notify_all();
  }
  Destroy(comm);
}

Outcome AsyncError(Comm* comm) {
  std::lock_guard<std::mutex> lock(comm->clique->mutex);
  return comm->async_error;
}

Outcome Submit(Comm* comm, const Operation& o, const Part& part, void* stream) {
  if (comm == nullptr) return Refuse(Outcome::kInvalidArgument, "comm is NULL");
  if (o.root < 0 || o.root >= comm->clique->nranks) {
    return Refuse(Outcome::kInvalidArgument, "bad root or peer");
  }
  const int device = DeviceOfStream(stream);
  if (device != comm->device) {
    return Refuse(Outcome::kInvalidArgument, "the stream is of device " + std::to_string(device) +
                                                 ", the communicator of device " +
                                                 std::to_string(comm->device));
  }
  {
    std::lock_guard<std::mutex> lock(comm->clique->mutex);
    if (comm->async_error != Outcome::kOk) {
      return Refuse(comm->async_error, "the communicator failed");
    }
  }
  if (o.count == 0) return Outcome::kOk;
  Operation checked = o;
  if (!Reduces(o.kind)) checked.op = Op::kSum;
  if (t_group_depth > 0) {
    t_deferred.push_back(Deferred{comm, checked, part, stream});
    return Outcome::kOk;
  }
  return Launch(comm, {Item{checked, part}}, stream);
}

std::string CallText(const Comm* comm, const void* send, const void* recv, size_t count, int dtype,
                     void* stream) {
  return CommText(comm) + " send=" + Pointer(send) + " recv=" + Pointer(recv) +
         " count=" + std::to_string(count) + " dtype=" + std::to_string(dtype) +
         " stream=" + Pointer(stream) + " group=" + std::to_string(t_group_depth);
}

int GroupDepth() { return t_group_depth; }

void GroupStart() { ++t_group_depth; }

Outcome GroupEnd(bool injected) {
  if (t_group_depth == 0) return Refuse(Outcome::kInvalidUsage, "no group is open");
  if (--t_group_depth > 0) return Outcome::kOk;
  std::vector<Deferred> deferred;
  deferred.swap(t_deferred);
  if (injected) return Outcome::kOk;  // the caller answers its injected failure
  // One task per rank and stream, its calls in their order.
  std::vector<std::pair<std::pair<Comm*, void*>, std::vector<Item>>> tasks;
  for (const Deferred& call : deferred) {
    const std::pair<Comm*, void*> key{call.comm, call.stream};
    auto found = std::find_if(tasks.begin(), tasks.end(),
                              [&](const auto& task) { return task.first == key; });
    if (found == tasks.end()) found = tasks.insert(tasks.end(), {key, {}});
    found->second.push_back(Item{call.operation, call.part});
  }
  Outcome answer = Outcome::kOk;
  for (auto& [key, items] : tasks) {
    const Outcome result = Launch(key.first, std::move(items), key.second);
    if (answer == Outcome::kOk) answer = result;
  }
  return answer;
}

}  // namespace emu_ccl

// --- Inspection (emu_inspect.h's names, about the library) --------------------------------------

using emu_ccl::Failure;
using emu_ccl::Record;
using emu_ccl::TheRecord;
EMU_EXPORT int emuCallCount(const char* function) {
  Record& record = TheRecord();
  std::lock_guard<std::mutex> lock(record.mutex);
  auto found = record.counts.find(function);
  return found == record.counts.end() ? 0 : found->second;
}

EMU_EXPORT size_t emuCallLog(char* buffer, size_t size) {
  Record& record = TheRecord();
  std::lock_guard<std::mutex> lock(record.mutex);
  std::string text;
  for (const std::string& call : record.calls) text += call + "\n";
  if (buffer != nullptr && size > 0) {
    const size_t copied = std::min(size - 1, text.size());
    std::memcpy(buffer, text.data(), copied);
    buffer[copied] = '\0';
  }
  return text.size() + 1;
}

EMU_EXPORT void emuResetCalls(void) {
  Record& record = TheRecord();
  std::lock_guard<std::mutex> lock(record.mutex);
  record.calls.clear();
  record.counts.clear();
}

EMU_EXPORT void emuFail(const char* function, int after_calls, int result) {
  Record& record = TheRecord();
  std::lock_guard<std::mutex> lock(record.mutex);
  if (result == 0) {
    record.failures.erase(function);
  } else {
    record.failures[function] = Failure{after_calls, result, 0};
  }
}

EMU_EXPORT void emuClearFailures(void) {
  Record& record = TheRecord();
  std::lock_guard<std::mutex> lock(record.mutex);
  record.failures.clear();
}

EMU_EXPORT int emuLiveAllocations(void) {
  Record& record = TheRecord();
  std::lock_guard<std::mutex> lock(record.mutex);
  return record.live_comms;
}
