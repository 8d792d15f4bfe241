// A host-emulated NCCL (tests only): libnccl.so.2 (and MetaX's libmccl.so) with NCCL's function
// names, prototypes and numbers for what the NCCL engine calls, over the shared collective core
// (collectives/emu_collectives.h: the collectives computed on the host, in host functions queued
// on the emulated CUDA runtime's streams, with the call record and injected failures). It proves
// the engine's translation, not a vendor's library; at most as many ranks as the emulated
// runtime has workers (4 here) may wait at once.
//
// Built once per vendor whose library is tested (CMakeLists.txt): EMU_NCCL_PREFIX names the
// functions (nccl, mccl), EMU_RUNTIME_PREFIX and EMU_RUNTIME_VARIABLE find the emulated runtime
// (already loaded by the vendor's runtime plugin).
// EMU_NCCL_VERSION sets what GetVersion answers (default 22809, NCCL 2.28.9);
// EMU_NCCL_TIMEOUT_MS how long a rank waits for its peers (default 20000), after which the
// communicator has an asynchronous error.
#include <stdlib.h>

#include <cstdint>
#include <cstdio>
#include <cstring>
#include <mutex>
#include <string>

#include "emu_collectives.h"

#ifndef EMU_NCCL_PREFIX
#define EMU_NCCL_PREFIX nccl
#endif
#ifndef EMU_RUNTIME_PREFIX
#define EMU_RUNTIME_PREFIX "cuda"
#endif
#ifndef EMU_RUNTIME_VARIABLE
#define EMU_RUNTIME_VARIABLE "INFINIRT_NVIDIA_RUNTIME"
#endif
#define EMU_CONCAT_(a, b) a##b
#define EMU_CONCAT(a, b) EMU_CONCAT_(a, b)
#define EMU_FN(name) EMU_CONCAT(EMU_NCCL_PREFIX, name)
#define EMU_STR_(a) #a
#define EMU_STR(a) EMU_STR_(a)

namespace {

using emu_ccl::CallText;
using emu_ccl::Comm;
using emu_ccl::Elem;
using emu_ccl::Kind;
using emu_ccl::Op;
using emu_ccl::Outcome;

// NCCL's numbers.
constexpr int kSuccess = 0, kUnhandledCudaError = 1, kSystemError = 2, kInternalError = 3,
              kInvalidArgument = 4, kInvalidUsage = 5, kRemoteError = 6;
constexpr int kBfloat16 = 9, kAvg = 4;

struct UniqueId {
  char internal[128];
};

std::string Name(const char* suffix) { return std::string(EMU_STR(EMU_NCCL_PREFIX)) + suffix; }

#define ENTER(suffix, arguments)                                                       \
  do {                                                                                 \
    if (const int injected = emu_ccl::Enter(Name(suffix), arguments)) return injected; \
  } while (0)

int ResultOf(Outcome outcome) {
  switch (outcome) {
    case Outcome::kOk:
      return kSuccess;
    case Outcome::kInvalidArgument:
      return kInvalidArgument;
    case Outcome::kInvalidUsage:
      return kInvalidUsage;
    case Outcome::kRuntimeError:
      return kUnhandledCudaError;
    case Outcome::kSystemError:
      return kSystemError;
    default:
      return kRemoteError;
  }
}

int Refuse(int result, const std::string& why) {
  emu_ccl::SetLastError(Name("") + ": " + why);
  return result;
}

// --- The emulated runtime ----------------------------------------------------------------------

template <class Function>
Function RuntimeFn(const char* name) {
  return reinterpret_cast<Function>(
      emu_ccl::RuntimeFunction(EMU_RUNTIME_VARIABLE, std::string(EMU_RUNTIME_PREFIX) + name));
}

int CurrentDevice() {
  static const auto get = RuntimeFn<int (*)(int*)>("GetDevice");
  int device = -1;
  return get != nullptr && get(&device) == 0 ? device : -1;
}

int DeviceCount() {
  static const auto get = RuntimeFn<int (*)(int*)>("GetDeviceCount");
  int count = 0;
  return get != nullptr && get(&count) == 0 ? count : 0;
}

int StreamDevice(void* stream) {
  static const auto get = RuntimeFn<int (*)(void*, int*)>("StreamGetDevice");
  int device = -1;
  return get != nullptr && get(stream, &device) == 0 ? device : -1;
}

bool Capturing(void* stream) {
  static const auto is_capturing = RuntimeFn<int (*)(void*, int*)>("StreamIsCapturing");
  int status = 0;
  return is_capturing != nullptr && is_capturing(stream, &status) == 0 && status != 0;
}

// Connects the core to the emulated runtime, once.
void UseRuntime() {
  static const bool done = [] {
    emu_ccl::Runtime runtime;
    runtime.launch_host_func = RuntimeFn<int (*)(void*, void (*)(void*), void*)>("LaunchHostFunc");
    runtime.capturing = &Capturing;
    runtime.current_device = &CurrentDevice;
    runtime.device_count = &DeviceCount;
    runtime.stream_device = &StreamDevice;
    emu_ccl::SetRuntime(runtime);
    return true;
  }();
  (void)done;
}

// NCCL's dtypes, in order of their numbers (ncclInt8 = 0 ... ncclBfloat16 = 9).
constexpr Elem kElems[] = {Elem::kI8,  Elem::kU8,  Elem::kI32, Elem::kU32, Elem::kI64,
                           Elem::kU64, Elem::kF16, Elem::kF32, Elem::kF64, Elem::kBF16};
constexpr Op kOps[] = {Op::kSum, Op::kProd, Op::kMax, Op::kMin, Op::kAvg};

// A call: NCCL's numbers checked and translated, then the core's.
int Submit(Comm* comm, Kind kind, size_t count, int dtype, int op, int root,
           const emu_ccl::Part& part, void* stream) {
  UseRuntime();
  if (dtype < 0 || dtype > kBfloat16) return Refuse(kInvalidArgument, "unknown dtype");
  const bool reduces =
      kind == Kind::kAllReduce || kind == Kind::kReduce || kind == Kind::kReduceScatter;
  if (reduces && (op < 0 || op > kAvg)) return Refuse(kInvalidArgument, "unknown op");
  const emu_ccl::Operation operation{kind, count, kElems[dtype], reduces ? kOps[op] : Op::kSum,
                                     root};
  return ResultOf(emu_ccl::Submit(comm, operation, part, stream));
}

int EnvironmentVersion() {
  const char* text = getenv("EMU_NCCL_VERSION");
  return text != nullptr ? std::atoi(text) : 22809;
}

}  // namespace

// --- NCCL's functions ----------------------------------------------------------------------------

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

EMU_EXPORT const char* EMU_FN(GetLastError)(void* /*comm*/) { return emu_ccl::LastError(); }

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
  UseRuntime();
  std::string list;
  for (int i = 0; devlist != nullptr && i < ndev; ++i) {
    list += (i > 0 ? "," : "") + std::to_string(devlist[i]);
  }
  ENTER("CommInitAll", "ndev=" + std::to_string(ndev) + " devlist=" + list);
  if (comms == nullptr || ndev <= 0 || devlist == nullptr) {
    return Refuse(kInvalidArgument, "comms, ndev or devlist");
  }
  return ResultOf(emu_ccl::InitAll(ndev, devlist, comms));
}

EMU_EXPORT int EMU_FN(CommInitRank)(Comm** comm, int nranks, UniqueId id, int rank) {
  UseRuntime();
  const int device = CurrentDevice();
  ENTER("CommInitRank", "nranks=" + std::to_string(nranks) + " rank=" + std::to_string(rank) +
                            " dev=" + std::to_string(device) + " id=" + id.internal);
  const std::string key(id.internal, strnlen(id.internal, sizeof id.internal));
  return ResultOf(emu_ccl::InitRank(key, nranks, rank, device, comm));
}

EMU_EXPORT int EMU_FN(CommDestroy)(Comm* comm) {
  ENTER("CommDestroy", emu_ccl::CommText(comm));
  if (comm == nullptr) return Refuse(kInvalidArgument, "comm is NULL");
  emu_ccl::Destroy(comm);
  return kSuccess;
}

// Fails the waiting ranks of the clique, then frees this one once its tasks returned.
EMU_EXPORT int EMU_FN(CommAbort)(Comm* comm) {
  ENTER("CommAbort", emu_ccl::CommText(comm));
  if (comm != nullptr) emu_ccl::Abort(comm);
  return kSuccess;
}

EMU_EXPORT int EMU_FN(CommGetAsyncError)(Comm* comm, int* async_error) {
  ENTER("CommGetAsyncError", emu_ccl::CommText(comm));
  if (comm == nullptr || async_error == nullptr) return Refuse(kInvalidArgument, "NULL");
  *async_error = ResultOf(emu_ccl::AsyncError(comm));
  return kSuccess;
}

EMU_EXPORT int EMU_FN(AllReduce)(const void* send, void* recv, size_t count, int dtype, int op,
                                 Comm* comm, void* stream) {
  ENTER("AllReduce",
        CallText(comm, send, recv, count, dtype, stream) + " op=" + std::to_string(op));
  return Submit(comm, Kind::kAllReduce, count, dtype, op, 0, {send, recv}, stream);
}

EMU_EXPORT int EMU_FN(Broadcast)(const void* send, void* recv, size_t count, int dtype, int root,
                                 Comm* comm, void* stream) {
  ENTER("Broadcast",
        CallText(comm, send, recv, count, dtype, stream) + " root=" + std::to_string(root));
  return Submit(comm, Kind::kBroadcast, count, dtype, 0, root, {send, recv}, stream);
}

EMU_EXPORT int EMU_FN(Reduce)(const void* send, void* recv, size_t count, int dtype, int op,
                              int root, Comm* comm, void* stream) {
  ENTER("Reduce", CallText(comm, send, recv, count, dtype, stream) + " op=" + std::to_string(op) +
                      " root=" + std::to_string(root));
  return Submit(comm, Kind::kReduce, count, dtype, op, root, {send, recv}, stream);
}

EMU_EXPORT int EMU_FN(AllGather)(const void* send, void* recv, size_t count, int dtype, Comm* comm,
                                 void* stream) {
  ENTER("AllGather", CallText(comm, send, recv, count, dtype, stream));
  return Submit(comm, Kind::kAllGather, count, dtype, 0, 0, {send, recv}, stream);
}

EMU_EXPORT int EMU_FN(ReduceScatter)(const void* send, void* recv, size_t count, int dtype, int op,
                                     Comm* comm, void* stream) {
  ENTER("ReduceScatter",
        CallText(comm, send, recv, count, dtype, stream) + " op=" + std::to_string(op));
  return Submit(comm, Kind::kReduceScatter, count, dtype, op, 0, {send, recv}, stream);
}

EMU_EXPORT int EMU_FN(Send)(const void* send, size_t count, int dtype, int peer, Comm* comm,
                            void* stream) {
  ENTER("Send",
        CallText(comm, send, nullptr, count, dtype, stream) + " peer=" + std::to_string(peer));
  return Submit(comm, Kind::kSend, count, dtype, 0, peer, {send, nullptr}, stream);
}

EMU_EXPORT int EMU_FN(Recv)(void* recv, size_t count, int dtype, int peer, Comm* comm,
                            void* stream) {
  ENTER("Recv",
        CallText(comm, nullptr, recv, count, dtype, stream) + " peer=" + std::to_string(peer));
  return Submit(comm, Kind::kRecv, count, dtype, 0, peer, {nullptr, recv}, stream);
}

EMU_EXPORT int EMU_FN(GroupStart)(void) {
  ENTER("GroupStart", "depth=" + std::to_string(emu_ccl::GroupDepth()));
  emu_ccl::GroupStart();
  return kSuccess;
}

// The outermost end queues the group's calls, in their order. A failure (an injected one too)
// ends the group all the same, dropping its calls, as NCCL cleans up a failed group.
EMU_EXPORT int EMU_FN(GroupEnd)(void) {
  const int injected =
      emu_ccl::Enter(Name("GroupEnd"), "depth=" + std::to_string(emu_ccl::GroupDepth()));
  if (emu_ccl::GroupDepth() == 0) return Refuse(kInvalidUsage, "no group is open");
  const int result = ResultOf(emu_ccl::GroupEnd(injected != kSuccess));
  return injected != kSuccess ? injected : result;
}
