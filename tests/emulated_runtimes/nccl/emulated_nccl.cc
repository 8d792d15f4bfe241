// A host-emulated NCCL (tests only): libnccl.so.2 (and MetaX's libmccl.so) with NCCL's function
// names, prototypes and numbers for what the NCCL engine calls. It proves the engine's
// translation, not a vendor's library: the collectives of communicators made in this process are
// computed on the host, over the emulated CUDA runtime's "device" memory (host memory), in host
// functions queued on the emulated runtime's streams (its <prefix>LaunchHostFunc), so that stream
// order holds as on a device. A rank's host function waits (on a worker of the emulated runtime)
// until every rank's stream has reached the same collective, as NCCL's kernels wait for their
// peers; so at most as many ranks as the emulated runtime has workers (4 here) may wait at once.
//
// Built once per vendor whose library is tested (CMakeLists.txt): EMU_NCCL_PREFIX names the
// functions (nccl, mccl), EMU_RUNTIME_PREFIX and EMU_RUNTIME_VARIABLE find the emulated runtime
// (already loaded by the vendor's runtime plugin).
//
// For the tests, the inspection functions of the emulated runtimes (emu_inspect.h), here about
// this library: emuCallLog (one line per call: "<function> <arguments>", the stream as %p),
// emuCallCount, emuResetCalls, emuFail (the calls of a function after the first n answer a
// result), emuClearFailures, emuLiveAllocations (communicators not destroyed).
// EMU_NCCL_VERSION sets what GetVersion answers (default 22809, NCCL 2.28.9);
// EMU_NCCL_TIMEOUT_MS how long a rank waits for its peers (default 20000), after which the
// communicator has an asynchronous error.
#include <dlfcn.h>
#include <stdlib.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <memory>
#include <mutex>
#include <string>
#include <tuple>
#include <unordered_map>
#include <vector>

#define EMU_EXPORT extern "C" __attribute__((visibility("default")))

#ifndef EMU_NCCL_PREFIX
#define EMU_NCCL_PREFIX nccl
#define EMU_RUNTIME_PREFIX "cuda"
#define EMU_RUNTIME_VARIABLE "INFINIRT_NVIDIA_RUNTIME"
#endif
#define EMU_CONCAT_(a, b) a##b
#define EMU_CONCAT(a, b) EMU_CONCAT_(a, b)
#define EMU_FN(name) EMU_CONCAT(EMU_NCCL_PREFIX, name)
#define EMU_STR_(a) #a
#define EMU_STR(a) EMU_STR_(a)

namespace {

// NCCL's numbers.
constexpr int kSuccess = 0, kUnhandledCudaError = 1, kSystemError = 2, kInternalError = 3,
              kInvalidArgument = 4, kInvalidUsage = 5, kRemoteError = 6;
constexpr int kInt8 = 0, kUint8 = 1, kInt32 = 2, kUint32 = 3, kInt64 = 4, kUint64 = 5, kFloat16 = 6,
              kFloat32 = 7, kFloat64 = 8, kBfloat16 = 9;
constexpr int kSum = 0, kProd = 1, kMax = 2, kMin = 3, kAvg = 4;

struct UniqueId {
  char internal[128];
};

std::string Name(const char* suffix) { return std::string(EMU_STR(EMU_NCCL_PREFIX)) + suffix; }

std::string Pointer(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

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

// Every function starts here: the record, then an injected failure (its result, else 0).
int Enter(const char* suffix, const std::string& arguments) {
  const std::string name = Name(suffix);
  Record& record = TheRecord();
  std::lock_guard<std::mutex> lock(record.mutex);
  // Always a space after the name, as the emulated runtimes record ("<function> <arguments>").
  record.calls.push_back(name + " " + arguments);
  ++record.counts[name];
  auto failure = record.failures.find(name);
  if (failure == record.failures.end() || failure->second.seen++ < failure->second.after_calls) {
    return kSuccess;
  }
  t_last_error = "injected failure of " + name;
  return failure->second.result;
}

#define ENTER(suffix, arguments)                                        \
  do {                                                                  \
    if (const int injected = Enter(suffix, arguments)) return injected; \
  } while (0)

int Refuse(int result, const std::string& why) {
  t_last_error = Name("") + ": " + why;
  return result;
}

// --- The emulated runtime ----------------------------------------------------------------------

using LaunchHostFunc = int (*)(void*, void (*)(void*), void*);
using StreamGetDevice = int (*)(void*, int*);
using GetDevice = int (*)(int*);
using GetDeviceCount = int (*)(int*);
using StreamIsCapturing = int (*)(void*, int*);

// A function of the emulated runtime (the instance the plugin loaded), e.g. "LaunchHostFunc".
void* RuntimeFunction(const char* name) {
  static void* runtime = [] {
    const char* path = getenv(EMU_RUNTIME_VARIABLE);
    return path != nullptr ? dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) : nullptr;
  }();
  return runtime != nullptr ? dlsym(runtime, (std::string(EMU_RUNTIME_PREFIX) + name).c_str())
                            : nullptr;
}

template <class Function>
Function Runtime(const char* name) {
  return reinterpret_cast<Function>(RuntimeFunction(name));
}

int CurrentDevice() {
  static const GetDevice get = Runtime<GetDevice>("GetDevice");
  int device = -1;
  return get != nullptr && get(&device) == 0 ? device : -1;
}

int DeviceCount() {
  static const GetDeviceCount get = Runtime<GetDeviceCount>("GetDeviceCount");
  int count = 0;
  return get != nullptr && get(&count) == 0 ? count : 0;
}

int DeviceOfStream(void* stream) {
  static const StreamGetDevice get = Runtime<StreamGetDevice>("StreamGetDevice");
  int device = -1;
  return get != nullptr && get(stream, &device) == 0 ? device : -1;
}

bool Capturing(void* stream) {
  static const StreamIsCapturing is_capturing = Runtime<StreamIsCapturing>("StreamIsCapturing");
  int status = 0;
  return is_capturing != nullptr && is_capturing(stream, &status) == 0 && status != 0;
}

std::chrono::milliseconds Timeout() {
  const char* text = getenv("EMU_NCCL_TIMEOUT_MS");
  return std::chrono::milliseconds(text != nullptr ? std::atol(text) : 20000);
}

// --- Communicators -----------------------------------------------------------------------------

enum class Kind { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kSend, kRecv };

// What every rank of a collective must agree on.
struct Operation {
  Kind kind;
  size_t count;
  int dtype, op, root;
  bool operator==(const Operation& o) const {
    return std::tie(kind, count, dtype, op, root) ==
           std::tie(o.kind, o.count, o.dtype, o.op, o.root);
  }
};

struct Part {
  const void* send = nullptr;
  void* recv = nullptr;
};

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

struct Comm {
  std::shared_ptr<Clique> clique;
  int rank = 0;
  int device = 0;
  // Under clique->mutex: what this rank's streams have executed, its queued host functions, and
  // the failure found after a call returned.
  uint64_t collectives = 0;
  std::vector<uint64_t> sent, received;
  int pending = 0;
  int async_error = kSuccess;
};

std::string CommText(const Comm* comm) {
  return comm == nullptr
             ? "comm=null"
             : "comm=" + std::to_string(comm->rank) + "/" + std::to_string(comm->clique->nranks);
}

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

// Waits for the rank's queued work, then frees it.
void ReleaseComm(Comm* comm) {
  {
    std::unique_lock<std::mutex> lock(comm->clique->mutex);
    comm->clique->cv.wait(lock, [&] { return comm->pending == 0; });
  }
  delete comm;
  std::lock_guard<std::mutex> lock(TheRecord().mutex);
  --TheRecord().live_comms;
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
Acc Combine(Acc a, Acc b, int op) {
  switch (op) {
    case kProd:
      return a * b;
    case kMax:
      return std::max(a, b);
    case kMin:
      return std::min(a, b);
    default:  // sum, and avg before its division
      return a + b;
  }
}

// out[i] = op over the inputs' element offset + i, accumulated in Acc.
template <class T, class Acc>
void ReduceTyped(const std::vector<const void*>& inputs, size_t offset, size_t count, int op,
                 void* out) {
  std::vector<T> result(count);
  for (size_t i = 0; i < count; ++i) {
    Acc acc = static_cast<Acc>(static_cast<const T*>(inputs[0])[offset + i]);
    for (size_t r = 1; r < inputs.size(); ++r) {
      acc = Combine(acc, static_cast<Acc>(static_cast<const T*>(inputs[r])[offset + i]), op);
    }
    if (op == kAvg) acc = acc / static_cast<Acc>(inputs.size());
    result[i] = static_cast<T>(acc);
  }
  std::memcpy(out, result.data(), count * sizeof(T));
}

size_t SizeOf(int dtype) {
  switch (dtype) {
    case kInt8:
    case kUint8:
      return 1;
    case kFloat16:
    case kBfloat16:
      return 2;
    case kInt32:
    case kUint32:
    case kFloat32:
      return 4;
    default:
      return 8;
  }
}

void Reduce(int dtype, const std::vector<const void*>& inputs, size_t offset, size_t count, int op,
            void* out) {
  switch (dtype) {
    case kInt8:
      return ReduceTyped<int8_t, int64_t>(inputs, offset, count, op, out);
    case kUint8:
      return ReduceTyped<uint8_t, uint64_t>(inputs, offset, count, op, out);
    case kInt32:
      return ReduceTyped<int32_t, int64_t>(inputs, offset, count, op, out);
    case kUint32:
      return ReduceTyped<uint32_t, uint64_t>(inputs, offset, count, op, out);
    case kInt64:
      return ReduceTyped<int64_t, int64_t>(inputs, offset, count, op, out);
    case kUint64:
      return ReduceTyped<uint64_t, uint64_t>(inputs, offset, count, op, out);
    case kFloat16:
      return ReduceTyped<_Float16, float>(inputs, offset, count, op, out);
    case kFloat32:
      return ReduceTyped<float, float>(inputs, offset, count, op, out);
    case kFloat64:
      return ReduceTyped<double, double>(inputs, offset, count, op, out);
    default:  // kBfloat16
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
  if (!clique.aborted && comm.async_error == kSuccess) {
    std::vector<std::shared_ptr<Meeting>> meetings;
    for (const Item& item : task.items) meetings.push_back(Arrive(clique, comm, item));
    const auto all_done = [&] {
      return std::all_of(meetings.begin(), meetings.end(),
                         [](const std::shared_ptr<Meeting>& m) { return m->done; });
    };
    clique.cv.wait_for(lock, Timeout(), [&] { return all_done() || clique.aborted; });
    for (const std::shared_ptr<Meeting>& meeting : meetings) {
      if (meeting->mismatch) {
        comm.async_error = kInvalidUsage;
      } else if (!meeting->done && comm.async_error == kSuccess) {
        comm.async_error = clique.aborted ? kRemoteError : kSystemError;
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
int Launch(Comm* comm, std::vector<Item> items, void* stream) {
  static const LaunchHostFunc launch = Runtime<LaunchHostFunc>("LaunchHostFunc");
  if (launch == nullptr) return Refuse(kUnhandledCudaError, "the emulated runtime is not loaded");
  const bool captured = Capturing(stream);
  auto task = std::make_unique<Task>(Task{comm, std::move(items), captured});
  if (!captured) {
    std::lock_guard<std::mutex> lock(comm->clique->mutex);
    ++comm->pending;
  }
  if (launch(stream, captured ? &RunCaptured : &RunQueued, task.get()) != 0) {
    if (!captured) {
      std::lock_guard<std::mutex> lock(comm->clique->mutex);
      --comm->pending;
    }
    return Refuse(kUnhandledCudaError, "the stream refused the work");
  }
  if (captured) {
    std::lock_guard<std::mutex> lock(g_captured_mutex);
    g_captured.push_back(std::move(task));
  } else {
    task.release();  // RunQueued frees it
  }
  return kSuccess;
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

// A call: checked, then queued at once or at the end of its group.
int Submit(Comm* comm, const Operation& o, const Part& part, void* stream) {
  if (comm == nullptr) return Refuse(kInvalidArgument, "comm is NULL");
  if (o.dtype < kInt8 || o.dtype > kBfloat16) return Refuse(kInvalidArgument, "unknown dtype");
  const bool reduces =
      o.kind == Kind::kAllReduce || o.kind == Kind::kReduce || o.kind == Kind::kReduceScatter;
  if (reduces && (o.op < kSum || o.op > kAvg)) return Refuse(kInvalidArgument, "unknown op");
  if (o.root < 0 || o.root >= comm->clique->nranks) return Refuse(kInvalidArgument, "bad root");
  const int device = DeviceOfStream(stream);
  if (device != comm->device) {
    return Refuse(kInvalidArgument, "the stream is of device " + std::to_string(device) +
                                        ", the communicator of device " +
                                        std::to_string(comm->device));
  }
  {
    std::lock_guard<std::mutex> lock(comm->clique->mutex);
    if (comm->async_error != kSuccess) return Refuse(comm->async_error, "the communicator failed");
  }
  if (o.count == 0) return kSuccess;
  if (t_group_depth > 0) {
    t_deferred.push_back(Deferred{comm, o, part, stream});
    return kSuccess;
  }
  return Launch(comm, {Item{o, part}}, stream);
}

std::string CallText(const Comm* comm, const void* send, const void* recv, size_t count, int dtype,
                     void* stream) {
  return CommText(comm) + " send=" + Pointer(send) + " recv=" + Pointer(recv) +
         " count=" + std::to_string(count) + " dtype=" + std::to_string(dtype) +
         " stream=" + Pointer(stream) + " group=" + std::to_string(t_group_depth);
}

int EnvironmentVersion() {
  const char* text = getenv("EMU_NCCL_VERSION");
  return text != nullptr ? std::atoi(text) : 22809;
}

}  // namespace

// --- NCCL's functions
// ------------------------------------------------------------------------------

EMU_EXPORT int EMU_FN(GetVersion)(int* version) {
  ENTER("GetVersion", "");
  if (version == nullptr) return Refuse(kInvalidArgument, "version is NULL");
  *version = EnvironmentVersion();
  return kSuccess;
}

EMU_EXPORT const char* EMU_FN(GetErrorString)(int result) {
  switch (result) {
    case kSuccess:
      return "no error";
    case kUnhandledCudaError:
      return "unhandled cuda error (emulated)";
    case kSystemError:
      return "unhandled system error (emulated)";
    case kInternalError:
      return "internal error (emulated)";
    case kInvalidArgument:
      return "invalid argument (emulated)";
    case kInvalidUsage:
      return "invalid usage (emulated)";
    case kRemoteError:
      return "remote process exited or there was a network error (emulated)";
    default:
      return "unknown result code (emulated)";
  }
}

EMU_EXPORT const char* EMU_FN(GetLastError)(void* /*comm*/) { return t_last_error.c_str(); }

EMU_EXPORT int EMU_FN(GetUniqueId)(UniqueId* id) {
  ENTER("GetUniqueId", "");
  if (id == nullptr) return Refuse(kInvalidArgument, "id is NULL");
  static std::mutex mutex;
  static uint64_t next = 1;
  std::lock_guard<std::mutex> lock(mutex);
  std::memset(id->internal, 0, sizeof id->internal);
  std::snprintf(id->internal, sizeof id->internal, "emulated-nccl-id-%llu",
                static_cast<unsigned long long>(next++));
  return kSuccess;
}

EMU_EXPORT int EMU_FN(CommInitAll)(Comm** comms, int ndev, const int* devlist) {
  std::string list;
  for (int i = 0; devlist != nullptr && i < ndev; ++i) {
    list += (i > 0 ? "," : "") + std::to_string(devlist[i]);
  }
  ENTER("CommInitAll", "ndev=" + std::to_string(ndev) + " devlist=" + list);
  if (comms == nullptr || ndev <= 0 || devlist == nullptr) {
    return Refuse(kInvalidArgument, "comms, ndev or devlist");
  }
  for (int i = 0; i < ndev; ++i) {
    if (devlist[i] < 0 || devlist[i] >= DeviceCount() ||
        std::count(devlist, devlist + ndev, devlist[i]) > 1) {
      return Refuse(kInvalidArgument, "devlist[" + std::to_string(i) + "] is no device, or twice");
    }
  }
  auto clique = std::make_shared<Clique>();
  clique->nranks = ndev;
  for (int r = 0; r < ndev; ++r) comms[r] = MakeComm(clique, r, devlist[r]);
  return kSuccess;
}

namespace {

// Ranks of communicators made by CommInitRank, meeting by their id.
struct Joining {
  std::shared_ptr<Clique> clique;
  int joined = 0;
};
std::mutex g_joining_mutex;
std::condition_variable g_joining_cv;
std::map<std::string, Joining> g_joining;

}  // namespace

EMU_EXPORT int EMU_FN(CommInitRank)(Comm** comm, int nranks, UniqueId id, int rank) {
  const int device = CurrentDevice();
  ENTER("CommInitRank", "nranks=" + std::to_string(nranks) + " rank=" + std::to_string(rank) +
                            " dev=" + std::to_string(device) + " id=" + id.internal);
  if (comm == nullptr || nranks <= 0 || rank < 0 || rank >= nranks || device < 0) {
    return Refuse(kInvalidArgument, "comm, nranks, rank or the current device");
  }
  const std::string key(id.internal, strnlen(id.internal, sizeof id.internal));
  std::unique_lock<std::mutex> lock(g_joining_mutex);
  Joining& joining = g_joining[key];
  if (!joining.clique) {
    joining.clique = std::make_shared<Clique>();
    joining.clique->nranks = nranks;
  }
  std::shared_ptr<Clique> clique = joining.clique;
  if (clique->nranks != nranks) return Refuse(kInvalidUsage, "the ranks disagree on nranks");
  if (++joining.joined == nranks) {
    g_joining.erase(key);
    g_joining_cv.notify_all();
  } else if (!g_joining_cv.wait_for(lock, Timeout(), [&] { return g_joining.count(key) == 0; })) {
    return Refuse(kSystemError, "the other ranks never joined");
  }
  lock.unlock();
  *comm = MakeComm(clique, rank, device);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(CommDestroy)(Comm* comm) {
  ENTER("CommDestroy", CommText(comm));
  if (comm == nullptr) return Refuse(kInvalidArgument, "comm is NULL");
  ReleaseComm(comm);
  return kSuccess;
}

// Fails the waiting ranks of the clique, then frees this one once its tasks returned.
EMU_EXPORT int EMU_FN(CommAbort)(Comm* comm) {
  ENTER("CommAbort", CommText(comm));
  if (comm == nullptr) return kSuccess;
  {
    std::lock_guard<std::mutex> lock(comm->clique->mutex);
    comm->clique->aborted = true;
    comm->clique->cv.notify_all();
  }
  ReleaseComm(comm);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(CommGetAsyncError)(Comm* comm, int* async_error) {
  ENTER("CommGetAsyncError", CommText(comm));
  if (comm == nullptr || async_error == nullptr) return Refuse(kInvalidArgument, "NULL");
  std::lock_guard<std::mutex> lock(comm->clique->mutex);
  *async_error = comm->async_error;
  return kSuccess;
}

EMU_EXPORT int EMU_FN(AllReduce)(const void* send, void* recv, size_t count, int dtype, int op,
                                 Comm* comm, void* stream) {
  ENTER("AllReduce",
        CallText(comm, send, recv, count, dtype, stream) + " op=" + std::to_string(op));
  return Submit(comm, Operation{Kind::kAllReduce, count, dtype, op, 0}, Part{send, recv}, stream);
}

EMU_EXPORT int EMU_FN(Broadcast)(const void* send, void* recv, size_t count, int dtype, int root,
                                 Comm* comm, void* stream) {
  ENTER("Broadcast",
        CallText(comm, send, recv, count, dtype, stream) + " root=" + std::to_string(root));
  return Submit(comm, Operation{Kind::kBroadcast, count, dtype, kSum, root}, Part{send, recv},
                stream);
}

EMU_EXPORT int EMU_FN(Reduce)(const void* send, void* recv, size_t count, int dtype, int op,
                              int root, Comm* comm, void* stream) {
  ENTER("Reduce", CallText(comm, send, recv, count, dtype, stream) + " op=" + std::to_string(op) +
                      " root=" + std::to_string(root));
  return Submit(comm, Operation{Kind::kReduce, count, dtype, op, root}, Part{send, recv}, stream);
}

EMU_EXPORT int EMU_FN(AllGather)(const void* send, void* recv, size_t count, int dtype, Comm* comm,
                                 void* stream) {
  ENTER("AllGather", CallText(comm, send, recv, count, dtype, stream));
  return Submit(comm, Operation{Kind::kAllGather, count, dtype, kSum, 0}, Part{send, recv}, stream);
}

EMU_EXPORT int EMU_FN(ReduceScatter)(const void* send, void* recv, size_t count, int dtype, int op,
                                     Comm* comm, void* stream) {
  ENTER("ReduceScatter",
        CallText(comm, send, recv, count, dtype, stream) + " op=" + std::to_string(op));
  return Submit(comm, Operation{Kind::kReduceScatter, count, dtype, op, 0}, Part{send, recv},
                stream);
}

EMU_EXPORT int EMU_FN(Send)(const void* send, size_t count, int dtype, int peer, Comm* comm,
                            void* stream) {
  ENTER("Send",
        CallText(comm, send, nullptr, count, dtype, stream) + " peer=" + std::to_string(peer));
  return Submit(comm, Operation{Kind::kSend, count, dtype, kSum, peer}, Part{send, nullptr},
                stream);
}

EMU_EXPORT int EMU_FN(Recv)(void* recv, size_t count, int dtype, int peer, Comm* comm,
                            void* stream) {
  ENTER("Recv",
        CallText(comm, nullptr, recv, count, dtype, stream) + " peer=" + std::to_string(peer));
  return Submit(comm, Operation{Kind::kRecv, count, dtype, kSum, peer}, Part{nullptr, recv},
                stream);
}

EMU_EXPORT int EMU_FN(GroupStart)(void) {
  ENTER("GroupStart", "depth=" + std::to_string(t_group_depth));
  ++t_group_depth;
  return kSuccess;
}

// The outermost end queues the group's calls, in their order. A failure (an injected one too)
// ends the group all the same, dropping its calls, as NCCL cleans up a failed group.
EMU_EXPORT int EMU_FN(GroupEnd)(void) {
  const int injected = Enter("GroupEnd", "depth=" + std::to_string(t_group_depth));
  if (t_group_depth == 0) return Refuse(kInvalidUsage, "no group is open");
  if (--t_group_depth > 0) return injected;
  std::vector<Deferred> deferred;
  deferred.swap(t_deferred);
  if (injected != kSuccess) return injected;
  // One task per rank and stream, its calls in their order.
  std::vector<std::pair<std::pair<Comm*, void*>, std::vector<Item>>> tasks;
  for (const Deferred& call : deferred) {
    const std::pair<Comm*, void*> key{call.comm, call.stream};
    auto found = std::find_if(tasks.begin(), tasks.end(),
                              [&](const auto& task) { return task.first == key; });
    if (found == tasks.end()) found = tasks.insert(tasks.end(), {key, {}});
    found->second.push_back(Item{call.operation, call.part});
  }
  int answer = kSuccess;
  for (auto& [key, items] : tasks) {
    const int result = Launch(key.first, std::move(items), key.second);
    if (answer == kSuccess) answer = result;
  }
  return answer;
}

// --- Inspection (emu_inspect.h's names, about this library) ------------------------------------

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
