// A host-emulated HCCL (tests only): libhccl.so with CANN's function names, prototypes and numbers
// (hccl.h, hccl_types.h) for what the HCCL engine calls, over the shared collective core
// (collectives/emu_collectives.h) and the emulated AscendCL runtime (its aclrtLaunchHostFunc
// queues the work; found through INFINIRT_ASCEND_RUNTIME). It proves the engine's translation,
// not CANN's library. ACL cannot tell a stream's device: a call checks the current device, which
// the engine sets to the stream's. HCCL_DATA_TYPE_INT128 is refused (HCCL_E_NOT_SUPPORT).
// Built without HcclGroupStart/HcclGroupEnd (EMU_HCCL_NO_GROUPS), it stands for an older CANN:
// every call is then a host function of its own, so Sends and Recvs that wait for each other
// deadlock (until EMU_CCL_TIMEOUT_MS, then an asynchronous error), as HCCL's would.
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

// HcclResult.
constexpr int kSuccess = 0, kPara = 1, kPtr = 2, kInternal = 4, kNotSupport = 5, kTimeout = 9,
              kRuntime = 15, kRemote = 21;
constexpr int kInt128 = 12;

struct RootInfo {
  char internal[4108];  // HCCL_ROOT_INFO_BYTES
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
      return kPara;
    case Outcome::kRuntimeError:
      return kRuntime;
    case Outcome::kSystemError:
      return kTimeout;
    default:
      return kRemote;
  }
}

int Refuse(int result, const std::string& why) {
  emu_ccl::SetLastError("hccl: " + why);
  return result;
}

// --- The emulated AscendCL runtime ---------------------------------------------------------------

template <class Function>
Function Acl(const char* name) {
  return reinterpret_cast<Function>(emu_ccl::RuntimeFunction("INFINIRT_ASCEND_RUNTIME", name));
}

int CurrentDevice() {
  static const auto get = Acl<int (*)(int32_t*)>("aclrtGetDevice");
  int32_t device = -1;
  return get != nullptr && get(&device) == 0 ? device : -1;
}

int DeviceCount() {
  static const auto get = Acl<int (*)(uint32_t*)>("aclrtGetDeviceCount");
  uint32_t count = 0;
  return get != nullptr && get(&count) == 0 ? static_cast<int>(count) : 0;
}

bool Capturing(void* stream) {
  static const auto info = Acl<int (*)(void*, int*, void**)>("aclmdlRICaptureGetInfo");
  int status = 0;  // ACL_MODEL_RI_CAPTURE_STATUS_ACTIVE is 1
  return info != nullptr && info(stream, &status, nullptr) == 0 && status == 1;
}

void UseRuntime() {
  static const bool done = [] {
    emu_ccl::Runtime runtime;
    runtime.launch_host_func = Acl<int (*)(void*, void (*)(void*), void*)>("aclrtLaunchHostFunc");
    runtime.capturing = &Capturing;
    runtime.current_device = &CurrentDevice;
    runtime.device_count = &DeviceCount;
    runtime.set_device = Acl<int (*)(int32_t)>("aclrtSetDevice");
    emu_ccl::SetRuntime(runtime);
    return true;
  }();
  (void)done;
}

// HcclDataType, in order of their numbers (INT8 = 0 ... BFP16 = 11).
constexpr Elem kElems[] = {Elem::kI8,  Elem::kI16, Elem::kI32, Elem::kF16, Elem::kF32, Elem::kI64,
                           Elem::kU64, Elem::kU8,  Elem::kU16, Elem::kU32, Elem::kF64, Elem::kBF16};
constexpr Op kOps[] = {Op::kSum, Op::kProd, Op::kMax, Op::kMin};

int Submit(Comm* comm, Kind kind, uint64_t count, int dtype, int op, uint32_t root,
           const emu_ccl::Part& part, void* stream) {
  UseRuntime();
  if (comm == nullptr) return Refuse(kPtr, "comm is NULL");
  if (dtype == kInt128) return Refuse(kNotSupport, "int128 is not emulated");
  if (dtype < 0 || dtype > kInt128) return Refuse(kPara, "unknown dtype");
  const bool reduces =
      kind == Kind::kAllReduce || kind == Kind::kReduce || kind == Kind::kReduceScatter;
  if (reduces && (op < 0 || op > 3)) return Refuse(kPara, "unknown op");
  const emu_ccl::Operation operation{kind, count, kElems[dtype], reduces ? kOps[op] : Op::kSum,
                                     static_cast<int>(root)};
  return ResultOf(emu_ccl::Submit(comm, operation, part, stream));
}

}  // namespace

// --- HCCL's functions ----------------------------------------------------------------------------

EMU_EXPORT const char* HcclGetErrorString(int code) {
  switch (code) {
    case kSuccess:
      return "success (emulated)";
    case kPara:
      return "parameter error (emulated)";
    case kPtr:
      return "empty pointer (emulated)";
    case kInternal:
      return "internal error (emulated)";
    case kNotSupport:
      return "not support feature (emulated)";
    case kTimeout:
      return "timeout (emulated)";
    case kRuntime:
      return "call runtime api fail (emulated)";
    case kRemote:
      return "error cqe (emulated)";
    default:
      return "unknown HcclResult (emulated)";
  }
}

EMU_EXPORT int HcclGetRootInfo(RootInfo* root_info) {
  ENTER("HcclGetRootInfo", "dev=" + std::to_string(CurrentDevice()));
  if (root_info == nullptr) return Refuse(kPtr, "rootInfo is NULL");
  static std::mutex mutex;
  static uint64_t next = 1;
  std::lock_guard<std::mutex> lock(mutex);
  std::memset(root_info->internal, 0, sizeof root_info->internal);
  std::snprintf(root_info->internal, sizeof root_info->internal, "emulated-hccl-root-%llu",
                static_cast<unsigned long long>(next++));
  return kSuccess;
}

EMU_EXPORT int HcclCommInitAll(uint32_t ndev, int32_t* devices, Comm** comms) {
  UseRuntime();
  std::string list;
  for (uint32_t i = 0; devices != nullptr && i < ndev; ++i) {
    list += (i > 0 ? "," : "") + std::to_string(devices[i]);
  }
  ENTER("HcclCommInitAll", "ndev=" + std::to_string(ndev) + " devices=" + list);
  if (comms == nullptr || devices == nullptr) return Refuse(kPtr, "comms or devices is NULL");
  if (ndev == 0) return Refuse(kPara, "ndev is 0");
  const std::vector<int> as_int(devices, devices + ndev);
  return ResultOf(emu_ccl::InitAll(static_cast<int>(ndev), as_int.data(), comms));
}

EMU_EXPORT int HcclCommInitRootInfo(uint32_t nranks, const RootInfo* root_info, uint32_t rank,
                                    Comm** comm) {
  UseRuntime();
  const int device = CurrentDevice();
  ENTER("HcclCommInitRootInfo",
        "nranks=" + std::to_string(nranks) + " rank=" + std::to_string(rank) +
            " dev=" + std::to_string(device) +
            " root=" + (root_info != nullptr ? root_info->internal : "null"));
  if (root_info == nullptr || comm == nullptr) return Refuse(kPtr, "rootInfo or comm is NULL");
  const std::string key(root_info->internal, strnlen(root_info->internal, 64));
  return ResultOf(
      emu_ccl::InitRank(key, static_cast<int>(nranks), static_cast<int>(rank), device, comm));
}

EMU_EXPORT int HcclCommDestroy(Comm* comm) {
  ENTER("HcclCommDestroy", emu_ccl::CommText(comm));
  if (comm == nullptr) return Refuse(kPtr, "comm is NULL");
  emu_ccl::Destroy(comm);
  return kSuccess;
}

EMU_EXPORT int HcclGetCommAsyncError(Comm* comm, int* async_error) {
  ENTER("HcclGetCommAsyncError", emu_ccl::CommText(comm));
  if (comm == nullptr || async_error == nullptr) return Refuse(kPtr, "NULL");
  *async_error = ResultOf(emu_ccl::AsyncError(comm));
  return kSuccess;
}

EMU_EXPORT int HcclAllReduce(void* send, void* recv, uint64_t count, int dtype, int op, Comm* comm,
                             void* stream) {
  ENTER("HcclAllReduce",
        CallText(comm, send, recv, count, dtype, stream) + " op=" + std::to_string(op));
  return Submit(comm, Kind::kAllReduce, count, dtype, op, 0, {send, recv}, stream);
}

// In place: the root's buf goes to every rank's buf.
EMU_EXPORT int HcclBroadcast(void* buf, uint64_t count, int dtype, uint32_t root, Comm* comm,
                             void* stream) {
  ENTER("HcclBroadcast",
        CallText(comm, buf, buf, count, dtype, stream) + " root=" + std::to_string(root));
  return Submit(comm, Kind::kBroadcast, count, dtype, 0, root, {buf, buf}, stream);
}

EMU_EXPORT int HcclReduce(void* send, void* recv, uint64_t count, int dtype, int op, uint32_t root,
                          Comm* comm, void* stream) {
  ENTER("HcclReduce", CallText(comm, send, recv, count, dtype, stream) +
                          " op=" + std::to_string(op) + " root=" + std::to_string(root));
  return Submit(comm, Kind::kReduce, count, dtype, op, root, {send, recv}, stream);
}

EMU_EXPORT int HcclAllGather(void* send, void* recv, uint64_t count, int dtype, Comm* comm,
                             void* stream) {
  ENTER("HcclAllGather", CallText(comm, send, recv, count, dtype, stream));
  return Submit(comm, Kind::kAllGather, count, dtype, 0, 0, {send, recv}, stream);
}

EMU_EXPORT int HcclReduceScatter(void* send, void* recv, uint64_t count, int dtype, int op,
                                 Comm* comm, void* stream) {
  ENTER("HcclReduceScatter",
        CallText(comm, send, recv, count, dtype, stream) + " op=" + std::to_string(op));
  return Submit(comm, Kind::kReduceScatter, count, dtype, op, 0, {send, recv}, stream);
}

EMU_EXPORT int HcclSend(void* send, uint64_t count, int dtype, uint32_t dest, Comm* comm,
                        void* stream) {
  ENTER("HcclSend",
        CallText(comm, send, nullptr, count, dtype, stream) + " peer=" + std::to_string(dest));
  return Submit(comm, Kind::kSend, count, dtype, 0, dest, {send, nullptr}, stream);
}

EMU_EXPORT int HcclRecv(void* recv, uint64_t count, int dtype, uint32_t source, Comm* comm,
                        void* stream) {
  ENTER("HcclRecv",
        CallText(comm, nullptr, recv, count, dtype, stream) + " peer=" + std::to_string(source));
  return Submit(comm, Kind::kRecv, count, dtype, 0, source, {nullptr, recv}, stream);
}

#ifndef EMU_HCCL_NO_GROUPS
EMU_EXPORT int HcclGroupStart(void) {
  ENTER("HcclGroupStart", "depth=" + std::to_string(emu_ccl::GroupDepth()));
  emu_ccl::GroupStart();
  return kSuccess;
}

EMU_EXPORT int HcclGroupEnd(void) {
  const int injected =
      emu_ccl::Enter("HcclGroupEnd", "depth=" + std::to_string(emu_ccl::GroupDepth()));
  if (emu_ccl::GroupDepth() == 0) return Refuse(kPara, "no group is open");
  const int result = ResultOf(emu_ccl::GroupEnd(injected != kSuccess));
  return injected != kSuccess ? injected : result;
}
#endif  // EMU_HCCL_NO_GROUPS
