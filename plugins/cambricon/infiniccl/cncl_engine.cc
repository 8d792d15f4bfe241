// The CNCL collective engine, libinfiniccl_cncl.so: InfiniCCL's collectives for Cambricon devices
// through Neuware's libcncl.so, opened with dlopen (no Neuware SDK is needed to build it). Each
// call is a translation: InfiniCore's dtype and operator as CNCL's, the InfiniRT stream as the
// cnrtQueue_t behind it, queued through infinirtLaunchNativeFunc. CNCL's results come back as
// infiniStatus_t, with the library's own words.
//
// Where CNCL differs from InfiniCCL's model:
//   - CNCL has no average (AVG: NOT_IMPLEMENTED) and no 64-bit float (f64 reductions:
//     NOT_IMPLEMENTED; f64 data moves as bytes);
//   - cnclAbortComm, cnclGetCommAsyncError and the group calls are used where present; without
//     an abort, CommAbort frees the communicator; without group calls a group's calls are issued
//     one at a time at its end (collective_engine.h).
#include <memory>
#include <string>
#include <vector>

#include "cncl_api.h"
#include "cncl_library_data.h"
#include "cncl_translation.h"
#include "collective_engine.h"
#include "infiniccl_backend.h"
#include "infinirt.h"

namespace infiniccl_cncl {

namespace {

namespace engine = infiniccl_engine;
using engine::EngineRank;
using engine::RankOf;
using engine::Say;

// The store key of a communicator's cnclCliqueId (libinfiniccl keeps communicators' keys apart).
constexpr const char* kCliqueIdKey = "cncl/clique_id";

// --- The library -------------------------------------------------------------------------------

struct CnclFunctions {
#define CNCL_FUNCTION_POINTER_(required, ret, name, params) ret(*name) params = nullptr;
  CNCL_FUNCTIONS(CNCL_FUNCTION_POINTER_)
#undef CNCL_FUNCTION_POINTER_
};

struct CnclLibrary {
  engine::EngineLibrary opened;
  CnclFunctions fn;
};

CnclLibrary& Library() {
  static auto* library = new CnclLibrary();  // kept: communicators use its functions
  return *library;
}

const CnclFunctions& Cncl() { return Library().fn; }

bool Load(std::string* why) {
  CnclLibrary& library = Library();
  if (!library.opened.Load(kLibraryData, why)) return false;
  std::string missing;
#define CNCL_RESOLVE_(required, ret, name, params) \
  engine::Resolve(library.opened, #name, required, &library.fn.name, &missing);
  CNCL_FUNCTIONS(CNCL_RESOLVE_)
#undef CNCL_RESOLVE_
  if (missing.empty()) return true;
  *why = library.opened.path() + " lacks" + missing;
  return false;
}

// "<function> failed: <cnclGetErrorStr's words> (cnclResult_t <n>)".
std::string Describe(const char* function, int result) {
  return engine::DescribeFailure(CnclNumbers(), function, result, Cncl().cnclGetErrorStr(result));
}

// A CNCL failure: its status, and why in the library's words.
infiniStatus_t SayCncl(char* why, size_t why_size, const char* function, int result) {
  return Say(why, why_size, StatusOf(result), Describe(function, result));
}

// --- Calls on the cnrtQueue_t ------------------------------------------------------------------

// One call as infinirtLaunchNativeFunc holds it.
struct CnclCall : engine::NativeWork {
  void* comm;
  infinicclBackendCall call;  // its dtype and count replaced by CNCL's
  int dtype;
  int op;

  int Issue(void* queue) override {
    const CnclFunctions& fn = Cncl();
    const void* send = call.sendbuf;
    void* recv = call.recvbuf;
    const size_t n = call.count;
    switch (call.kind) {
      case INFINICCL_CALL_AllReduce:
        return fn.cnclAllReduce(send, recv, n, dtype, op, comm, queue);
      case INFINICCL_CALL_Broadcast:
        return fn.cnclBroadcast(send, recv, n, dtype, call.root, comm, queue);
      case INFINICCL_CALL_Reduce:
        return fn.cnclReduce(send, recv, n, dtype, op, call.root, comm, queue);
      case INFINICCL_CALL_AllGather:
        return fn.cnclAllGather(send, recv, n, dtype, comm, queue);
      case INFINICCL_CALL_ReduceScatter:
        return fn.cnclReduceScatter(send, recv, n, dtype, op, comm, queue);
      case INFINICCL_CALL_Send:  // cnclSend's buffer is not const in cncl.h
        return fn.cnclSend(const_cast<void*>(send), n, dtype, call.root, comm, queue);
      case INFINICCL_CALL_Recv:
        return fn.cnclRecv(recv, n, dtype, call.root, comm, queue);
      default:
        return kCnclArguments;
    }
  }
};

const char* FunctionOf(infinicclCallKind_t kind) {
  switch (kind) {
#define CNCL_CALL_FUNCTION_(name, reduces) \
  case INFINICCL_CALL_##name:              \
    return "cncl" #name;
    INFINICCL_CALLS(CNCL_CALL_FUNCTION_)
#undef CNCL_CALL_FUNCTION_
    default:
      return "cncl?";
  }
}

infiniStatus_t Issue(EngineRank& rank, const infinicclBackendCall& call,
                     engine::VendorElements elements, int op, infinirtStream_t stream, char* why,
                     size_t why_size) {
  auto work = std::make_unique<CnclCall>();
  work->comm = rank.comm;
  work->call = call;
  work->call.count = elements.count;
  work->dtype = elements.dtype;
  work->op = op;
  int result = kCnclSuccess;
  std::string reason;
  const infiniStatus_t status = engine::QueueNative(stream, std::move(work), &result, &reason);
  if (status == INFINI_STATUS_SUCCESS) return status;
  if (result != kCnclSuccess) return SayCncl(why, why_size, FunctionOf(call.kind), result);
  return Say(why, why_size, status, reason);
}

infiniStatus_t StartLibraryGroup(char* why, size_t why_size) {
  const int result = Cncl().cnclGroupStart();
  return result == kCnclSuccess ? INFINI_STATUS_SUCCESS
                                : SayCncl(why, why_size, "cnclGroupStart", result);
}

infiniStatus_t EndLibraryGroup(char* why, size_t why_size) {
  const int result = Cncl().cnclGroupEnd();
  return result == kCnclSuccess ? INFINI_STATUS_SUCCESS
                                : SayCncl(why, why_size, "cnclGroupEnd", result);
}

bool HasGroups() { return Cncl().cnclGroupStart != nullptr && Cncl().cnclGroupEnd != nullptr; }

// --- The table's entries -----------------------------------------------------------------------

infiniStatus_t Initialize(char* why, size_t why_size) {
  std::string reason;
  if (!Load(&reason)) return Say(why, why_size, INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, reason);
  return INFINI_STATUS_SUCCESS;
}

// One process: ranks 0..n-1 and no clique id (cncl.h: CNCL acquires one itself then, which it
// supports in single-process communication only).
infiniStatus_t CommInitAll(int nranks, const int* ordinals, long /*timeout_ms: CNCL's own*/,
                           infinicclBackendComm_t* comms, char* why, size_t why_size) {
  std::vector<int> devices;
  std::string reason;
  if (auto status =
          engine::VendorDevices(INFINI_DEVICE_CAMBRICON, nranks, ordinals, &devices, &reason)) {
    return Say(why, why_size, status, reason);
  }
  std::vector<int> ranks(nranks);
  for (int r = 0; r < nranks; ++r) ranks[r] = r;
  std::vector<void*> made(nranks, nullptr);
  if (const int result =
          Cncl().cnclInitComms(made.data(), nranks, devices.data(), ranks.data(), nranks, nullptr);
      result != kCnclSuccess) {
    return SayCncl(why, why_size, "cnclInitComms", result);
  }
  const uint64_t clique = engine::NewClique();
  for (int r = 0; r < nranks; ++r) comms[r] = engine::MakeRank(made[r], clique, r);
  return INFINI_STATUS_SUCCESS;
}

// Rank 0 makes the clique id and puts it in the store; every rank then makes its communicator
// with its device current (the vendor's index, as cnclInitComms's dev_list takes).
infiniStatus_t CommInitRank(int nranks, int rank, int ordinal, long /*timeout_ms: the store's*/,
                            const infinicclBackendStore* store, infinicclBackendComm_t* comm,
                            char* why, size_t why_size) {
  std::vector<int> device;
  std::string reason;
  if (auto status = engine::VendorDevices(INFINI_DEVICE_CAMBRICON, 1, &ordinal, &device, &reason)) {
    return Say(why, why_size, status, reason);
  }
  CnclCliqueIdBytes id{};
  if (rank == 0) {
    if (const int result = Cncl().cnclGetCliqueId(&id); result != kCnclSuccess) {
      return SayCncl(why, why_size, "cnclGetCliqueId", result);
    }
  }
  if (auto status =
          engine::ShareThroughStore(*store, kCliqueIdKey, rank, &id, sizeof id, why, why_size)) {
    return status;
  }
  void* made = nullptr;
  int result = kCnclSuccess;
  if (auto status = engine::RunOnDevice(
          ordinal,
          [&] { result = Cncl().cnclInitComms(&made, 1, device.data(), &rank, nranks, &id); },
          &reason)) {
    return Say(why, why_size, status, reason);
  }
  if (result != kCnclSuccess) return SayCncl(why, why_size, "cnclInitComms", result);
  *comm = engine::MakeRank(made, engine::NewClique(), rank);
  return INFINI_STATUS_SUCCESS;
}

// cnclFreeComm waits for the communicator's running tasks (cncl.h). cncl.h asks that a clique's
// communicators be released together: InfiniCCL releases each rank on its own, as cncl.h's own
// cnclFreeComm example does, one after another.
infiniStatus_t CommDestroy(infinicclBackendComm_t comm) {
  std::unique_ptr<EngineRank> rank(RankOf(comm));
  return StatusOf(Cncl().cnclFreeComm(rank->comm));
}

// cnclAbortComm stops the running tasks and releases the communicator; a CNCL without it frees
// the communicator instead (which waits).
infiniStatus_t CommAbort(infinicclBackendComm_t comm) {
  if (Cncl().cnclAbortComm == nullptr) return CommDestroy(comm);
  std::unique_ptr<EngineRank> rank(RankOf(comm));
  return StatusOf(Cncl().cnclAbortComm(rank->comm));
}

infiniStatus_t Call(infinicclBackendComm_t comm, const infinicclBackendCall* call,
                    infinirtStream_t stream, char* why, size_t why_size) {
  engine::LibraryGroupFn start_group;
  if (HasGroups()) start_group = &StartLibraryGroup;
  return engine::SubmitCall(*RankOf(comm), *call, stream, CnclNumbers(), start_group, &Issue, why,
                            why_size);
}

infiniStatus_t GroupEnd(char* why, size_t why_size) {
  engine::LibraryGroupFn end_group;
  if (HasGroups()) end_group = &EndLibraryGroup;
  return engine::EndGroup(end_group, "this CNCL", why, why_size);
}

// cnclGetCommAsyncError answers the communicator's state as its result: success, in progress
// (not a failure), or the failure.
infiniStatus_t CommGetAsyncError(infinicclBackendComm_t comm, infiniStatus_t* status, char* why,
                                 size_t why_size) {
  EngineRank& rank = *RankOf(comm);
  if (engine::KnownFailure(rank, status, why, why_size)) return INFINI_STATUS_SUCCESS;
  if (Cncl().cnclGetCommAsyncError == nullptr) {
    return Say(why, why_size, INFINI_STATUS_NOT_IMPLEMENTED,
               Library().opened.path() + " has no cnclGetCommAsyncError");
  }
  const int state = Cncl().cnclGetCommAsyncError(rank.comm);
  if (state == kCnclSuccess || state == kCnclAsyncInProgress) return INFINI_STATUS_SUCCESS;
  if (state == kCnclArguments || state == kCnclNullPointer) {
    return SayCncl(why, why_size, "cnclGetCommAsyncError", state);
  }
  engine::RecordAsyncFailure(rank, StatusOf(state), Describe("cnclGetCommAsyncError", state),
                             status, why, why_size);
  return INFINI_STATUS_SUCCESS;
}

const infinicclBackendTable kTable = {
    sizeof(infinicclBackendTable),
    INFINICCL_BACKEND_ABI_MAJOR,
    INFINICCL_BACKEND_ABI_MINOR,
    "cncl",
    1u << INFINI_DEVICE_CAMBRICON,
    &Initialize,
    &CommInitAll,
    &CommDestroy,
    &CommAbort,
    &Call,
    &engine::StartGroup,
    &GroupEnd,
    &CommInitRank,
    &CommGetAsyncError,
};

}  // namespace

}  // namespace infiniccl_cncl

extern "C" __attribute__((visibility("default"))) const infinicclBackendTable*
infinicclBackendGetTable(void) {
  return &infiniccl_cncl::kTable;
}
