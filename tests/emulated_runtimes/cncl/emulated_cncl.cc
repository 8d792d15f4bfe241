// A host-emulated CNCL (tests only): libcncl.so with Cambricon's function names, prototypes and
// numbers (cncl.h, CNCL 1.25) for what the CNCL engine calls, over the shared collective core
// (collectives/emu_collectives.h) and the emulated CNRT (its cnrtInvokeHostFunc queues the work;
// found through INFINIRT_CAMBRICON_RUNTIME). It proves the engine's translation, not Cambricon's
// library. CNRT cannot tell a queue's device: a call checks the current device, which the engine
// sets to the queue's.
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>
#include <vector>

#include "emu_collectives.h"

namespace {

using emu_ccl::CallText;
using emu_ccl::Comm;
using emu_ccl::Elem;
using emu_ccl::Kind;
using emu_ccl::Op;
using emu_ccl::Outcome;

// cnclResult_t.
constexpr int kSuccess = 0x0, kInternal = 0x01, kUnsupported = 0x11, kNullPointer = 0x21,
              kSystem = 0x02, kMluRuntime = 0x03, kAsyncError = 0x16, kArguments = 0x07;

struct CliqueId {
  char data[128];  // CNCL_CLIQUE_ID_BYTES_SIZE
  uint64_t hash;
};

#define ENTER(name, arguments)                                                 \
  do {                                                                         \
    if (const int injected = emu_ccl::Enter(name, arguments)) return injected; \
  } while (0)

int ResultOf(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return kSuccess;
    case Outcome::kInvalidArgument:
    case Outcome::kInvalidUsage:
      return kArguments;
    case Outcome::kRuntimeError:
      return kMluRuntime;
    default:  // a timeout, an aborted peer
      return kSystem;
  }
}

int Refuse(int result, const std::string& why) {
  emu_ccl::SetLastError("cncl: " + why);
  return result;
}

// --- The emulated CNRT ---------------------------------------------------------------------------

template <class Function>
Function Cnrt(const char* name) {
  return reinterpret_cast<Function>(emu_ccl::RuntimeFunction("INFINIRT_CAMBRICON_RUNTIME", name));
}

int CurrentDevice() {
  static const auto get = Cnrt<int (*)(int*)>("cnrtGetDevice");
  int device = -1;
  return get != nullptr && get(&device) == 0 ? device : -1;
}

int DeviceCount() {
  static const auto get = Cnrt<int (*)(unsigned int*)>("cnrtGetDeviceCount");
  unsigned int count = 0;
  return get != nullptr && get(&count) == 0 ? static_cast<int>(count) : 0;
}

bool Capturing(void* queue) {
  static const auto is_capturing = Cnrt<int (*)(void*, int*)>("cnrtQueueIsCapturing");
  int status = 0;
  return is_capturing != nullptr && is_capturing(queue, &status) == 0 && status != 0;
}

void UseRuntime() {
  static const bool done = [] {
    emu_ccl::Runtime runtime;
    runtime.launch_host_func = Cnrt<int (*)(void*, void (*)(void*), void*)>("cnrtInvokeHostFunc");
    runtime.capturing = &Capturing;
    runtime.current_device = &CurrentDevice;
    runtime.device_count = &DeviceCount;
    runtime.set_device = Cnrt<int (*)(int)>("cnrtSetDevice");
    emu_ccl::SetRuntime(runtime);
    return true;
  }();
  (void)done;
}

// cnclDataType_t: no f64.
bool ElemOf(int dtype, Elem* elem) {
  static const std::pair<int, Elem> kTypes[] = {
      {0x10, Elem::kF16}, {0x11, Elem::kBF16}, {0x12, Elem::kF32}, {0x20, Elem::kI8},
      {0x21, Elem::kI16}, {0x22, Elem::kI32},  {0x23, Elem::kI64}, {0x30, Elem::kU8},
      {0x31, Elem::kU16}, {0x32, Elem::kU32},  {0x33, Elem::kU64}};
  for (const auto& [number, type] : kTypes) {
    if (number == dtype) return *elem = type, true;
  }
  return false;
}

constexpr Op kOps[] = {Op::kSum, Op::kProd, Op::kMax, Op::kMin};

int Submit(Comm* comm, Kind kind, size_t count, int dtype, int op, int root,
           const emu_ccl::Part& part, void* queue) {
  UseRuntime();
  if (comm == nullptr) return Refuse(kNullPointer, "comm is NULL");
  Elem elem;
  if (!ElemOf(dtype, &elem)) return Refuse(kUnsupported, "unknown dtype");
  const bool reduces =
      kind == Kind::kAllReduce || kind == Kind::kReduce || kind == Kind::kReduceScatter;
  if (reduces && (op < 0 || op > 3)) return Refuse(kArguments, "unknown op");
  const emu_ccl::Operation operation{kind, count, elem, reduces ? kOps[op] : Op::kSum, root};
  return ResultOf(emu_ccl::Submit(comm, operation, part, queue));
}

std::string List(const int* values, int n) {
  std::string list;
  for (int i = 0; values != nullptr && i < n; ++i) {
    list += (i > 0 ? "," : "") + std::to_string(values[i]);
  }
  return list;
}

// Communicators of one process, no clique id: ranks 0..n-1 over dev_list, in rank_list's order.
int InitLocal(Comm** comms, int n, const int* dev_list, const int* rank_list) {
  std::vector<int> by_rank(n, -1);
  for (int i = 0; i < n; ++i) {
    if (rank_list[i] < 0 || rank_list[i] >= n || by_rank[rank_list[i]] >= 0) {
      return Refuse(kArguments, "rank_list is no permutation of 0..nrank-1");
    }
    by_rank[rank_list[i]] = dev_list[i];
  }
  std::vector<Comm*> made(n, nullptr);
  if (const int result = ResultOf(emu_ccl::InitAll(n, by_rank.data(), made.data()))) return result;
  for (int i = 0; i < n; ++i) comms[i] = made[rank_list[i]];
  return kSuccess;
}

}  // namespace

// --- CNCL's functions ----------------------------------------------------------------------------

EMU_EXPORT const char* cnclGetErrorStr(int ret) {
  switch (ret) {
    case kSuccess:
      return "CNCL_RET_SUCCESS (emulated)";
    case kInternal:
      return "CNCL_RET_ERR_INTERNAL (emulated)";
    case kUnsupported:
      return "CNCL_RET_ERR_UNSUPPORTED (emulated)";
    case kNullPointer:
      return "CNCL_RET_ERR_NULL_POINTER (emulated)";
    case kSystem:
      return "CNCL_RET_ERR_SYSTEM (emulated)";
    case kMluRuntime:
      return "CNCL_RET_ERR_MLU_RUNTIME (emulated)";
    case kAsyncError:
      return "CNCL_RET_ASYNC_ERROR (emulated)";
    case kArguments:
      return "CNCL_RET_ERR_ARGUMENTS (emulated)";
    default:
      return "unknown cnclResult_t (emulated)";
  }
}

EMU_EXPORT int cnclGetCliqueId(CliqueId* clique_id) {
  ENTER("cnclGetCliqueId", "");
  if (clique_id == nullptr) return Refuse(kNullPointer, "clique_id is NULL");
  static std::mutex mutex;
  static uint64_t next = 1;
  std::lock_guard<std::mutex> lock(mutex);
  std::memset(clique_id->data, 0, sizeof clique_id->data);
  clique_id->hash = next;
  std::snprintf(clique_id->data, sizeof clique_id->data, "emulated-cncl-clique-%llu",
                static_cast<unsigned long long>(next++));
  return kSuccess;
}

// With a clique id, one communicator per call here (ranks of one process meet on other threads).
EMU_EXPORT int cnclInitComms(Comm** comms, int num_comm, const int* dev_list, const int* rank_list,
                             int nrank, CliqueId* clique_id) {
  UseRuntime();
  ENTER("cnclInitComms",
        "num_comm=" + std::to_string(num_comm) + " devs=" + List(dev_list, num_comm) +
            " ranks=" + List(rank_list, num_comm) + " nrank=" + std::to_string(nrank) +
            " clique=" + (clique_id != nullptr ? clique_id->data : "null") +
            " current=" + std::to_string(CurrentDevice()));
  if (comms == nullptr || dev_list == nullptr || rank_list == nullptr) {
    return Refuse(kNullPointer, "comms, dev_list or rank_list is NULL");
  }
  if (num_comm <= 0 || nrank < num_comm) return Refuse(kArguments, "num_comm or nrank");
  if (clique_id == nullptr) {
    if (num_comm != nrank) return Refuse(kArguments, "no clique id, but ranks elsewhere");
    return InitLocal(comms, num_comm, dev_list, rank_list);
  }
  if (num_comm != 1) return Refuse(kUnsupported, "one communicator per call with a clique id");
  const std::string key(clique_id->data, strnlen(clique_id->data, sizeof clique_id->data));
  return ResultOf(emu_ccl::InitRank(key, nrank, rank_list[0], dev_list[0], comms));
}

EMU_EXPORT int cnclFreeComm(Comm* comm) {
  ENTER("cnclFreeComm", emu_ccl::CommText(comm));
  if (comm == nullptr) return Refuse(kArguments, "comm is NULL");
  emu_ccl::Destroy(comm);
  return kSuccess;
}

EMU_EXPORT int cnclDestroyComms(Comm** comms, int num_comm) {
  ENTER("cnclDestroyComms", "num_comm=" + std::to_string(num_comm));
  if (comms == nullptr) return Refuse(kArguments, "comms is NULL");
  for (int i = 0; i < num_comm; ++i) emu_ccl::Destroy(comms[i]);
  return kSuccess;
}

EMU_EXPORT int cnclAbortComm(Comm* comm) {
  ENTER("cnclAbortComm", emu_ccl::CommText(comm));
  if (comm != nullptr) emu_ccl::Abort(comm);
  return kSuccess;
}

// The communicator's state as the result: success, or CNCL_RET_ASYNC_ERROR.
EMU_EXPORT int cnclGetCommAsyncError(Comm* comm) {
  ENTER("cnclGetCommAsyncError", emu_ccl::CommText(comm));
  if (comm == nullptr) return Refuse(kArguments, "comm is NULL");
  return emu_ccl::AsyncError(comm) == Outcome::kOk ? kSuccess : kAsyncError;
}

EMU_EXPORT int cnclAllReduce(const void* send, void* recv, size_t count, int dtype, int op,
                             Comm* comm, void* queue) {
  ENTER("cnclAllReduce",
        CallText(comm, send, recv, count, dtype, queue) + " op=" + std::to_string(op));
  return Submit(comm, Kind::kAllReduce, count, dtype, op, 0, {send, recv}, queue);
}

EMU_EXPORT int cnclBroadcast(const void* send, void* recv, size_t count, int dtype, int root,
                             Comm* comm, void* queue) {
  ENTER("cnclBroadcast",
        CallText(comm, send, recv, count, dtype, queue) + " root=" + std::to_string(root));
  return Submit(comm, Kind::kBroadcast, count, dtype, 0, root, {send, recv}, queue);
}

EMU_EXPORT int cnclReduce(const void* send, void* recv, size_t count, int dtype, int op, int root,
                          Comm* comm, void* queue) {
  ENTER("cnclReduce", CallText(comm, send, recv, count, dtype, queue) +
                          " op=" + std::to_string(op) + " root=" + std::to_string(root));
  return Submit(comm, Kind::kReduce, count, dtype, op, root, {send, recv}, queue);
}

EMU_EXPORT int cnclAllGather(const void* send, void* recv, size_t count, int dtype, Comm* comm,
                             void* queue) {
  ENTER("cnclAllGather", CallText(comm, send, recv, count, dtype, queue));
  return Submit(comm, Kind::kAllGather, count, dtype, 0, 0, {send, recv}, queue);
}

EMU_EXPORT int cnclReduceScatter(const void* send, void* recv, size_t count, int dtype, int op,
                                 Comm* comm, void* queue) {
  ENTER("cnclReduceScatter",
        CallText(comm, send, recv, count, dtype, queue) + " op=" + std::to_string(op));
  return Submit(comm, Kind::kReduceScatter, count, dtype, op, 0, {send, recv}, queue);
}

EMU_EXPORT int cnclSend(void* send, size_t count, int dtype, int dest, Comm* comm, void* queue) {
  ENTER("cnclSend",
        CallText(comm, send, nullptr, count, dtype, queue) + " peer=" + std::to_string(dest));
  return Submit(comm, Kind::kSend, count, dtype, 0, dest, {send, nullptr}, queue);
}

EMU_EXPORT int cnclRecv(void* recv, size_t count, int dtype, int source, Comm* comm, void* queue) {
  ENTER("cnclRecv",
        CallText(comm, nullptr, recv, count, dtype, queue) + " peer=" + std::to_string(source));
  return Submit(comm, Kind::kRecv, count, dtype, 0, source, {nullptr, recv}, queue);
}

EMU_EXPORT int cnclGroupStart(void) {
  ENTER("cnclGroupStart", "depth=" + std::to_string(emu_ccl::GroupDepth()));
  emu_ccl::GroupStart();
  return kSuccess;
}

EMU_EXPORT int cnclGroupEnd(void) {
  const int injected =
      emu_ccl::Enter("cnclGroupEnd", "depth=" + std::to_string(emu_ccl::GroupDepth()));
  if (emu_ccl::GroupDepth() == 0) return Refuse(kArguments, "no group is open");
  const int result = ResultOf(emu_ccl::GroupEnd(injected != kSuccess));
  return injected != kSuccess ? injected : result;
}
