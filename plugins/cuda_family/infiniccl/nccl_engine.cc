// The NCCL collective engine, libinfiniccl_nccl.so: InfiniCCL's collectives for the devices of
// the CUDA-family vendors whose engine it is in the vendor table (config/vendors.json), through
// the vendor's NCCL-shaped library (nccl_libraries.h). Each call is a translation: InfiniCore's
// dtype and operator as NCCL's, the InfiniRT stream as the vendor's own stream behind it, queued
// through infinirtLaunchNativeFunc so that a capturing stream records the call and the vendor's own
// capture takes it in when the graph is instantiated (as InfiniOP's CUDA-family operators are).
// NCCL's results come back as infiniStatus_t, with the library's own words.
//
// One engine serves several device types, each with its own library: Initialize succeeds when
// the library of at least one type that has devices opened, and CommInitAll refuses a type whose
// library is absent, saying what was looked for.
#include <cstdio>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "collective_engine.h"
#include "infiniccl_backend.h"
#include "infinirt.h"
#include "nccl_libraries.h"
#include "nccl_translation.h"

namespace infiniccl_nccl {

namespace {

// The store key of a communicator's ncclUniqueId (libinfiniccl keeps communicators' keys apart).
constexpr const char* kUniqueIdKey = "nccl/unique_id";

struct Rank {
  const NcclLibrary* library = nullptr;
  void* comm = nullptr;  // the library's ncclComm_t
  std::mutex mutex;
  // Set once CommGetAsyncError found the rank failed: every later call answers it.
  infiniStatus_t failure = INFINI_STATUS_SUCCESS;
  std::string failure_why;
};

Rank* RankOf(infinicclBackendComm_t comm) { return reinterpret_cast<Rank*>(comm); }

using infiniccl_engine::RuntimeFailure;
using infiniccl_engine::Say;

// An NCCL failure: its status, and why in the library's words.
infiniStatus_t SayNccl(char* why, size_t why_size, const NcclLibrary& library, const char* function,
                       int result, void* comm) {
  return Say(why, why_size, StatusOf(result), Describe(library, function, result, comm));
}

// The device type of an InfiniRT ordinal and its index among the vendor's devices (what NCCL's
// devlist and the vendor's SetDevice take).
infiniStatus_t VendorDevice(int ordinal, infiniDevice_t* type, int* index, std::string* why) {
  infinirtDeviceProp prop;
  if (const infinirtError_t error = infinirtGetDeviceProperties(&prop, ordinal)) {
    *why = RuntimeFailure(("the properties of device " + std::to_string(ordinal)).c_str(), error);
    return INFINI_STATUS_BAD_PARAM;
  }
  *type = prop.deviceType;
  *index = prop.vendorDeviceIndex;
  return INFINI_STATUS_SUCCESS;
}

// --- Groups ----------------------------------------------------------------------------------

// The calling thread's group, and the libraries told of it (ncclGroupStart, once per group, when
// its first call to that library is made).
thread_local int t_group_depth = 0;
thread_local std::vector<const NcclLibrary*> t_group_libraries;

infiniStatus_t JoinGroup(const NcclLibrary& library, char* why, size_t why_size) {
  if (t_group_depth == 0) return INFINI_STATUS_SUCCESS;
  for (const NcclLibrary* joined : t_group_libraries) {
    if (joined == &library) return INFINI_STATUS_SUCCESS;
  }
  if (const int result = library.fn.GroupStart(); result != kNcclSuccess) {
    return SayNccl(why, why_size, library, "GroupStart", result, nullptr);
  }
  t_group_libraries.push_back(&library);
  return INFINI_STATUS_SUCCESS;
}

// --- Calls on the vendor's stream ------------------------------------------------------------

// One call as infinirtLaunchNativeFunc holds it: issued at once, or each time a graph that
// recorded it is instantiated.
struct NativeCall {
  const NcclLibrary* library;
  void* comm;
  infinicclCallKind_t kind;
  const void* sendbuf;
  void* recvbuf;
  size_t count;
  int dtype;
  int op;
  int root;  // the root, or the peer of Send and Recv
};

int Issue(const NativeCall& c, void* stream) {
  const NcclFunctions& fn = c.library->fn;
  switch (c.kind) {
    case INFINICCL_CALL_AllReduce:
      return fn.AllReduce(c.sendbuf, c.recvbuf, c.count, c.dtype, c.op, c.comm, stream);
    case INFINICCL_CALL_Broadcast:
      return fn.Broadcast(c.sendbuf, c.recvbuf, c.count, c.dtype, c.root, c.comm, stream);
    case INFINICCL_CALL_Reduce:
      return fn.Reduce(c.sendbuf, c.recvbuf, c.count, c.dtype, c.op, c.root, c.comm, stream);
    case INFINICCL_CALL_AllGather:
      return fn.AllGather(c.sendbuf, c.recvbuf, c.count, c.dtype, c.comm, stream);
    case INFINICCL_CALL_ReduceScatter:
      return fn.ReduceScatter(c.sendbuf, c.recvbuf, c.count, c.dtype, c.op, c.comm, stream);
    case INFINICCL_CALL_Send:
      return fn.Send(c.sendbuf, c.count, c.dtype, c.root, c.comm, stream);
    case INFINICCL_CALL_Recv:
      return fn.Recv(c.recvbuf, c.count, c.dtype, c.root, c.comm, stream);
    default:
      return kNcclInvalidArgument;
  }
}

const char* FunctionOf(infinicclCallKind_t kind) {
  switch (kind) {
#define NCCL_CALL_FUNCTION_(name, reduces) \
  case INFINICCL_CALL_##name:              \
    return #name;
    INFINICCL_CALLS(NCCL_CALL_FUNCTION_)
#undef NCCL_CALL_FUNCTION_
    default:
      return "?";
  }
}

// What the last issue on this thread answered: infinirtLaunchNativeFunc carries only an
// infinirtError_t back, and an issue made at once runs on the calling thread.
thread_local int t_issued = kNcclSuccess;

infinirtError_t INFINIRT_CB RunNativeCall(void* native_stream, void* data) {
  t_issued = Issue(*static_cast<const NativeCall*>(data), native_stream);
  return t_issued == kNcclSuccess ? infinirtSuccess : infinirtErrorLaunchFailure;
}

void INFINIRT_CB ReleaseNativeCall(void* data) { delete static_cast<NativeCall*>(data); }

// The rank's failure found by CommGetAsyncError, if any.
infiniStatus_t EarlierFailure(Rank& rank, std::string* why) {
  std::lock_guard<std::mutex> lock(rank.mutex);
  *why = rank.failure_why;
  return rank.failure;
}

// --- Communicators across processes ----------------------------------------------------------

// ncclCommInitRank needs the rank's device current in the vendor's runtime, and InfiniRT makes
// it current lazily (at a call that needs it): a native launch on a stream of the device runs
// with it current, on the calling thread.
struct InitRank {
  const NcclLibrary* library;
  int nranks;
  int rank;
  NcclUniqueIdBytes id;
  void* comm = nullptr;
  int result = kNcclSuccess;
};

infinirtError_t INFINIRT_CB RunInitRank(void*, void* data) {
  auto* init = static_cast<InitRank*>(data);
  init->result = init->library->fn.CommInitRank(&init->comm, init->nranks, init->id, init->rank);
  return infinirtSuccess;  // the NCCL result is read from init
}

// Runs the rank's ncclCommInitRank with `ordinal` current, then restores the thread's device.
infiniStatus_t InitRankOnDevice(int ordinal, InitRank* init, std::string* why) {
  int previous = 0;
  if (const infinirtError_t error = infinirtGetDevice(&previous)) {
    *why = RuntimeFailure("reading the current device", error);
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  infinirtStream_t stream = nullptr;
  infinirtError_t error = infinirtSetDevice(ordinal);
  if (error == infinirtSuccess)
    error = infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking);
  // A new stream never captures: the function runs at once, before the launch returns.
  if (error == infinirtSuccess)
    error = infinirtLaunchNativeFunc(stream, &RunInitRank, init, nullptr);
  if (error != infinirtSuccess) *why = RuntimeFailure("making the rank's device current", error);
  if (stream != nullptr) infinirtStreamDestroy(stream);
  infinirtSetDevice(previous);
  infinirtGetLastError();
  return error == infinirtSuccess ? INFINI_STATUS_SUCCESS : INFINI_STATUS_INTERNAL_ERROR;
}

// Rank 0 makes the id and puts it in the store; the others wait for it there.
infiniStatus_t ShareUniqueId(const NcclLibrary& library, int rank,
                             const infinicclBackendStore& store, NcclUniqueIdBytes* id, char* why,
                             size_t why_size) {
  if (rank == 0) {
    if (const int result = library.fn.GetUniqueId(id); result != kNcclSuccess) {
      return SayNccl(why, why_size, library, "GetUniqueId", result, nullptr);
    }
    if (store.Set(store.context, kUniqueIdKey, id, sizeof *id, why, why_size) != 0) {
      return INFINI_STATUS_INTERNAL_ERROR;  // the store said why
    }
    return INFINI_STATUS_SUCCESS;
  }
  size_t size = 0;
  if (store.Get(store.context, kUniqueIdKey, id, sizeof *id, &size, why, why_size) != 0) {
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  if (size != sizeof *id) {
    return Say(why, why_size, INFINI_STATUS_INTERNAL_ERROR,
               "the store's " + std::string(kUniqueIdKey) + " is " + std::to_string(size) +
                   " bytes, not an id of " + std::to_string(sizeof *id));
  }
  return INFINI_STATUS_SUCCESS;
}

// --- The table's entries ---------------------------------------------------------------------

infiniStatus_t Initialize(char* why, size_t why_size) {
  std::string reason;
  if (!LoadLibraries(&reason)) {
    return Say(why, why_size, INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, reason);
  }
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t CommInitAll(int nranks, const int* ordinals, long /*timeout_ms: NCCL's own*/,
                           infinicclBackendComm_t* comms, char* why, size_t why_size) {
  infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
  std::vector<int> devlist(nranks);
  std::string reason;
  for (int r = 0; r < nranks; ++r) {
    infiniDevice_t rank_type = INFINI_DEVICE_TYPE_COUNT;
    if (auto status = VendorDevice(ordinals[r], &rank_type, &devlist[r], &reason)) {
      return Say(why, why_size, status, reason);
    }
    if (r > 0 && rank_type != type) {
      return Say(why, why_size, INFINI_STATUS_BAD_PARAM, "the ranks' devices are of several types");
    }
    type = rank_type;
  }
  const NcclLibrary* library = LibraryFor(type, &reason);
  if (library == nullptr)
    return Say(why, why_size, INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, reason);
  std::vector<void*> made(nranks, nullptr);
  if (const int result = library->fn.CommInitAll(made.data(), nranks, devlist.data());
      result != kNcclSuccess) {
    return SayNccl(why, why_size, *library, "CommInitAll", result, nullptr);
  }
  for (int r = 0; r < nranks; ++r) {
    auto rank = std::make_unique<Rank>();
    rank->library = library;
    rank->comm = made[r];
    comms[r] = reinterpret_cast<infinicclBackendComm_t>(rank.release());
  }
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t CommInitRank(int nranks, int rank, int ordinal, long /*timeout_ms: the store's*/,
                            const infinicclBackendStore* store, infinicclBackendComm_t* comm,
                            char* why, size_t why_size) {
  infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
  int index = 0;
  std::string reason;
  if (auto status = VendorDevice(ordinal, &type, &index, &reason)) {
    return Say(why, why_size, status, reason);
  }
  const NcclLibrary* library = LibraryFor(type, &reason);
  if (library == nullptr)
    return Say(why, why_size, INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, reason);
  InitRank init{library, nranks, rank, {}};
  if (auto status = ShareUniqueId(*library, rank, *store, &init.id, why, why_size)) return status;
  if (auto status = InitRankOnDevice(ordinal, &init, &reason)) {
    return Say(why, why_size, status, reason);
  }
  if (init.result != kNcclSuccess) {
    return SayNccl(why, why_size, *library, "CommInitRank", init.result, nullptr);
  }
  auto made = std::make_unique<Rank>();
  made->library = library;
  made->comm = init.comm;
  *comm = reinterpret_cast<infinicclBackendComm_t>(made.release());
  return INFINI_STATUS_SUCCESS;
}

// ncclCommDestroy waits for the communicator's queued work (it finalizes first since NCCL 2.14;
// earlier releases wait as well).
infiniStatus_t CommDestroy(infinicclBackendComm_t comm) {
  std::unique_ptr<Rank> rank(RankOf(comm));
  return StatusOf(rank->library->fn.CommDestroy(rank->comm));
}

infiniStatus_t CommAbort(infinicclBackendComm_t comm) {
  std::unique_ptr<Rank> rank(RankOf(comm));
  return StatusOf(rank->library->fn.CommAbort(rank->comm));
}

infiniStatus_t Call(infinicclBackendComm_t comm, const infinicclBackendCall* call,
                    infinirtStream_t stream, char* why, size_t why_size) {
  Rank& rank = *RankOf(comm);
  const NcclLibrary& library = *rank.library;
  std::string reason;
  if (auto status = EarlierFailure(rank, &reason)) return Say(why, why_size, status, reason);
  if (call->count == 0) return INFINI_STATUS_SUCCESS;  // nothing to move, nothing to match
  NcclElements elements;
  if (auto status = TranslateElements(library, *call, &elements, &reason)) {
    return Say(why, why_size, status, reason);
  }
  int op = kNcclSum;
  if (infinicclCallReduces(call->kind)) {
    if (auto status = infiniccl_engine::TranslateOp(library.name.c_str(), NcclOps(library),
                                                    call->op, &op, &reason)) {
      return Say(why, why_size, status, reason);
    }
  }
  if (auto status = JoinGroup(library, why, why_size)) return status;
  auto native = std::make_unique<NativeCall>(
      NativeCall{&library, rank.comm, call->kind, call->sendbuf, call->recvbuf, elements.count,
                 elements.dtype, op, call->root});
  // The runtime calls RunNativeCall with the stream's device current and the vendor's stream;
  // on success it owns the call and releases it once nothing can issue it again.
  t_issued = kNcclSuccess;
  const infinirtError_t queued =
      infinirtLaunchNativeFunc(stream, &RunNativeCall, native.get(), &ReleaseNativeCall);
  if (queued != infinirtSuccess) {
    if (t_issued != kNcclSuccess) {
      infinirtGetLastError();
      return SayNccl(why, why_size, library, FunctionOf(call->kind), t_issued, rank.comm);
    }
    return Say(why, why_size, INFINI_STATUS_INTERNAL_ERROR,
               RuntimeFailure("queueing on the vendor's stream", queued));
  }
  native.release();
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t GroupStart() {
  ++t_group_depth;
  return INFINI_STATUS_SUCCESS;
}

// The outermost end ends the group in every library it reached; the first failure is the answer.
infiniStatus_t GroupEnd(char* why, size_t why_size) {
  if (t_group_depth == 0) return Say(why, why_size, INFINI_STATUS_BAD_PARAM, "no group is open");
  if (--t_group_depth > 0) return INFINI_STATUS_SUCCESS;
  std::vector<const NcclLibrary*> libraries;
  libraries.swap(t_group_libraries);
  infiniStatus_t answer = INFINI_STATUS_SUCCESS;
  for (const NcclLibrary* library : libraries) {
    const int result = library->fn.GroupEnd();
    if (result != kNcclSuccess && answer == INFINI_STATUS_SUCCESS) {
      answer = SayNccl(why, why_size, *library, "GroupEnd", result, nullptr);
    }
  }
  return answer;
}

infiniStatus_t CommGetAsyncError(infinicclBackendComm_t comm, infiniStatus_t* status, char* why,
                                 size_t why_size) {
  Rank& rank = *RankOf(comm);
  const NcclLibrary& library = *rank.library;
  std::string reason;
  if ((*status = EarlierFailure(rank, &reason)) != INFINI_STATUS_SUCCESS) {
    Say(why, why_size, *status, reason);
    return INFINI_STATUS_SUCCESS;
  }
  if (library.fn.CommGetAsyncError == nullptr) {
    return Say(why, why_size, INFINI_STATUS_NOT_IMPLEMENTED,
               library.path + " has no " + library.Symbol("CommGetAsyncError"));
  }
  int async = kNcclSuccess;
  if (const int result = library.fn.CommGetAsyncError(rank.comm, &async); result != kNcclSuccess) {
    return SayNccl(why, why_size, library, "CommGetAsyncError", result, rank.comm);
  }
  // In progress: a communicator still being made, not a failure.
  if (async == kNcclSuccess || async == kNcclInProgress) return INFINI_STATUS_SUCCESS;
  std::lock_guard<std::mutex> lock(rank.mutex);
  rank.failure = StatusOf(async);
  rank.failure_why = "the communicator failed after a call returned: " +
                     Describe(library, "CommGetAsyncError", async, rank.comm);
  *status = rank.failure;
  Say(why, why_size, *status, rank.failure_why);
  return INFINI_STATUS_SUCCESS;
}

const infinicclBackendTable kTable = {
    sizeof(infinicclBackendTable),
    INFINICCL_BACKEND_ABI_MAJOR,
    INFINICCL_BACKEND_ABI_MINOR,
    "nccl",
    ServedDeviceTypes(),
    &Initialize,
    &CommInitAll,
    &CommDestroy,
    &CommAbort,
    &Call,
    &GroupStart,
    &GroupEnd,
    &CommInitRank,
    &CommGetAsyncError,
};

}  // namespace

}  // namespace infiniccl_nccl

extern "C" __attribute__((visibility("default"))) const infinicclBackendTable*
infinicclBackendGetTable(void) {
  return &infiniccl_nccl::kTable;
}
