// The HCCL collective engine, libinfiniccl_hccl.so: InfiniCCL's collectives for Ascend devices
// through CANN's libhccl.so, opened with dlopen (no CANN SDK is needed to build it). Each call is
// a translation: InfiniCore's dtype and operator as HCCL's, the InfiniRT stream as the aclrtStream
// behind it, queued through infinirtLaunchNativeFunc (so that a capturing stream records the call
// and the Ascend plugin's capture takes it in when the graph is instantiated). HCCL's results
// come back as infiniStatus_t, with the library's own words.
//
// Where HCCL differs from InfiniCCL's model:
//   - HcclBroadcast works in place on one buffer: the root first copies sendbuf to recvbuf, in
//     stream order, and every rank broadcasts recvbuf;
//   - HCCL has no average: AVG answers NOT_IMPLEMENTED;
//   - HCCL has no abort: CommAbort destroys the communicator (HcclCommDestroy);
//   - HcclGroupStart/End, HcclGetCommAsyncError and HcclGetErrorString are newer than the rest:
//     used where present. Without group calls a group's calls are issued one at a time at its end
//     (collective_engine.h), and a group whose Sends and Recvs would wait for each other is
//     refused (NOT_IMPLEMENTED).
#include <memory>
#include <string>
#include <vector>

#include "collective_engine.h"
#include "hccl_api.h"
#include "hccl_library_data.h"
#include "hccl_translation.h"
#include "infiniccl_backend.h"
#include "infinirt.h"

namespace infiniccl_hccl {

namespace {

namespace engine = infiniccl_engine;
using engine::Say;

// The store key of a communicator's HcclRootInfo (libinfiniccl keeps communicators' keys apart).
constexpr const char* kRootInfoKey = "hccl/root_info";

// --- The library -------------------------------------------------------------------------------

struct HcclFunctions {
#define HCCL_FUNCTION_POINTER_(required, ret, name, params) ret(*name) params = nullptr;
  HCCL_FUNCTIONS(HCCL_FUNCTION_POINTER_)
#undef HCCL_FUNCTION_POINTER_
};

struct HcclLibrary {
  engine::EngineLibrary opened;
  HcclFunctions fn;
};

HcclLibrary& Library() {
  static auto* library = new HcclLibrary();  // kept: communicators use its functions
  return *library;
}

const HcclFunctions& Hccl() { return Library().fn; }

bool Load(std::string* why) {
  HcclLibrary& library = Library();
  if (!library.opened.Load(kLibraryData, why)) return false;
  std::string missing;
#define HCCL_RESOLVE_(required, ret, name, params) \
  engine::Resolve(library.opened, #name, required, &library.fn.name, &missing);
  HCCL_FUNCTIONS(HCCL_RESOLVE_)
#undef HCCL_RESOLVE_
  if (missing.empty()) return true;
  *why = library.opened.path() + " lacks" + missing;
  return false;
}

// "<function> failed: <HcclGetErrorString's words> (HcclResult <n>)".
std::string Describe(const char* function, int result) {
  const auto error_string = Hccl().HcclGetErrorString;
  return engine::DescribeFailure(HcclNumbers(), function, result,
                                 error_string != nullptr ? error_string(result) : nullptr);
}

// An HCCL failure: its status, and why in the library's words.
infiniStatus_t SayHccl(char* why, size_t why_size, const char* function, int result) {
  return Say(why, why_size, StatusOf(result), Describe(function, result));
}

using engine::EngineRank;
using engine::RankOf;

// --- Calls on the aclrtStream ------------------------------------------------------------------

// One call as infinirtLaunchNativeFunc holds it.
struct HcclCall : engine::NativeWork {
  void* comm;
  infinicclCallKind_t kind;
  const void* sendbuf;
  void* recvbuf;
  engine::VendorElements elements;
  int op;
  int root;  // the root, or the peer of Send and Recv

  HcclCall(void* c, const infinicclBackendCall& call, engine::VendorElements e, int o)
      : comm(c),
        kind(call.kind),
        sendbuf(call.sendbuf),
        recvbuf(call.recvbuf),
        elements(e),
        op(o),
        root(call.root) {}

  int Issue(void* stream) override {
    const HcclFunctions& fn = Hccl();
    void* send = const_cast<void*>(sendbuf);  // HCCL's prototypes take non-const buffers
    const uint64_t n = elements.count;
    const int type = elements.dtype;
    const auto peer = static_cast<uint32_t>(root);
    switch (kind) {
      case INFINICCL_CALL_AllReduce:
        return fn.HcclAllReduce(send, recvbuf, n, type, op, comm, stream);
      case INFINICCL_CALL_Broadcast:  // in place: the root's data is in recvbuf by now
        return fn.HcclBroadcast(recvbuf, n, type, peer, comm, stream);
      case INFINICCL_CALL_Reduce:
        return fn.HcclReduce(send, recvbuf, n, type, op, peer, comm, stream);
      case INFINICCL_CALL_AllGather:
        return fn.HcclAllGather(send, recvbuf, n, type, comm, stream);
      case INFINICCL_CALL_ReduceScatter:
        return fn.HcclReduceScatter(send, recvbuf, n, type, op, comm, stream);
      case INFINICCL_CALL_Send:
        return fn.HcclSend(send, n, type, peer, comm, stream);
      case INFINICCL_CALL_Recv:
        return fn.HcclRecv(recvbuf, n, type, peer, comm, stream);
      default:
        return kHcclParameterError;
    }
  }
};

const char* FunctionOf(infinicclCallKind_t kind) {
  switch (kind) {
#define HCCL_CALL_FUNCTION_(name, reduces) \
  case INFINICCL_CALL_##name:              \
    return "Hccl" #name;
    INFINICCL_CALLS(HCCL_CALL_FUNCTION_)
#undef HCCL_CALL_FUNCTION_
    default:
      return "Hccl?";
  }
}

// HcclBroadcast's buffer is recvbuf: the root's data goes there first, in stream order.
infiniStatus_t StageBroadcastRoot(const EngineRank& rank, const infinicclBackendCall& call,
                                  infinirtStream_t stream, char* why, size_t why_size) {
  if (call.kind != INFINICCL_CALL_Broadcast || call.root != rank.rank ||
      call.sendbuf == call.recvbuf) {
    return INFINI_STATUS_SUCCESS;
  }
  size_t bytes = 0;
  std::string reason;
  if (auto status = engine::CountInBytes(call, &bytes, &reason)) {
    return Say(why, why_size, status, reason);
  }
  if (const infinirtError_t error = infinirtMemcpyAsync(call.recvbuf, call.sendbuf, bytes,
                                                        infinirtMemcpyDeviceToDevice, stream)) {
    return Say(why, why_size, INFINI_STATUS_INTERNAL_ERROR,
               engine::RuntimeFailure("copying the broadcast root's data to recvbuf", error));
  }
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t Issue(EngineRank& rank, const infinicclBackendCall& call,
                     engine::VendorElements elements, int op, infinirtStream_t stream, char* why,
                     size_t why_size) {
  if (auto status = StageBroadcastRoot(rank, call, stream, why, why_size)) return status;
  int result = kHcclSuccess;
  std::string reason;
  const infiniStatus_t status = engine::QueueNative(
      stream, std::make_unique<HcclCall>(rank.comm, call, elements, op), &result, &reason);
  if (status == INFINI_STATUS_SUCCESS) return status;
  if (result != kHcclSuccess) return SayHccl(why, why_size, FunctionOf(call.kind), result);
  return Say(why, why_size, status, reason);
}

// --- Communicators across processes --------------------------------------------------------------

// Rank 0 makes the root info (on its device) and puts it in the store; the others wait for it.
infiniStatus_t ShareRootInfo(int rank, int ordinal, const infinicclBackendStore& store,
                             HcclRootInfoBytes* root_info, char* why, size_t why_size) {
  if (rank == 0) {
    int result = kHcclSuccess;
    std::string reason;
    if (auto status = engine::RunOnDevice(
            ordinal, [&] { result = Hccl().HcclGetRootInfo(root_info); }, &reason)) {
      return Say(why, why_size, status, reason);
    }
    if (result != kHcclSuccess) return SayHccl(why, why_size, "HcclGetRootInfo", result);
  }
  return engine::ShareThroughStore(store, kRootInfoKey, rank, root_info, sizeof *root_info, why,
                                   why_size);
}

// --- The table's entries -----------------------------------------------------------------------

infiniStatus_t Initialize(char* why, size_t why_size) {
  std::string reason;
  if (!Load(&reason)) return Say(why, why_size, INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, reason);
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t CommInitAll(int nranks, const int* ordinals, long /*timeout_ms: HCCL's own*/,
                           infinicclBackendComm_t* comms, char* why, size_t why_size) {
  std::vector<int> devices;
  std::string reason;
  if (auto status =
          engine::VendorDevices(INFINI_DEVICE_ASCEND, nranks, ordinals, &devices, &reason)) {
    return Say(why, why_size, status, reason);
  }
  std::vector<int32_t> device_list(devices.begin(), devices.end());
  std::vector<void*> made(nranks, nullptr);
  if (const int result =
          Hccl().HcclCommInitAll(static_cast<uint32_t>(nranks), device_list.data(), made.data());
      result != kHcclSuccess) {
    return SayHccl(why, why_size, "HcclCommInitAll", result);
  }
  const uint64_t clique = engine::NewClique();
  for (int r = 0; r < nranks; ++r) comms[r] = engine::MakeRank(made[r], clique, r);
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t CommInitRank(int nranks, int rank, int ordinal, long /*timeout_ms: the store's*/,
                            const infinicclBackendStore* store, infinicclBackendComm_t* comm,
                            char* why, size_t why_size) {
  std::vector<int> device;
  std::string reason;
  if (auto status = engine::VendorDevices(INFINI_DEVICE_ASCEND, 1, &ordinal, &device, &reason)) {
    return Say(why, why_size, status, reason);
  }
  auto root_info = std::make_unique<HcclRootInfoBytes>();
  if (auto status = ShareRootInfo(rank, ordinal, *store, root_info.get(), why, why_size)) {
    return status;
  }
  // HcclCommInitRootInfo binds the communicator to the device current on the calling thread.
  void* made = nullptr;
  int result = kHcclSuccess;
  if (auto status = engine::RunOnDevice(
          ordinal,
          [&] {
            result = Hccl().HcclCommInitRootInfo(static_cast<uint32_t>(nranks), root_info.get(),
                                                 static_cast<uint32_t>(rank), &made);
          },
          &reason)) {
    return Say(why, why_size, status, reason);
  }
  if (result != kHcclSuccess) return SayHccl(why, why_size, "HcclCommInitRootInfo", result);
  // Ranks of other processes are never in this process's groups: the clique only has to differ
  // from the local ones.
  *comm = engine::MakeRank(made, engine::NewClique(), rank);
  return INFINI_STATUS_SUCCESS;
}

// HcclCommDestroy waits for the communicator's work (assumed, as ncclCommDestroy does: the
// header does not say).
infiniStatus_t CommDestroy(infinicclBackendComm_t comm) {
  std::unique_ptr<EngineRank> rank(RankOf(comm));
  return StatusOf(Hccl().HcclCommDestroy(rank->comm));
}

// HCCL has no abort (hccl.h has HcclCommSuspend/Resume, not an abort): the rank is destroyed.
infiniStatus_t CommAbort(infinicclBackendComm_t comm) { return CommDestroy(comm); }

infiniStatus_t StartLibraryGroup(char* why, size_t why_size) {
  const int result = Hccl().HcclGroupStart();
  return result == kHcclSuccess ? INFINI_STATUS_SUCCESS
                                : SayHccl(why, why_size, "HcclGroupStart", result);
}

infiniStatus_t EndLibraryGroup(char* why, size_t why_size) {
  const int result = Hccl().HcclGroupEnd();
  return result == kHcclSuccess ? INFINI_STATUS_SUCCESS
                                : SayHccl(why, why_size, "HcclGroupEnd", result);
}

bool HasGroups() { return Hccl().HcclGroupStart != nullptr && Hccl().HcclGroupEnd != nullptr; }

infiniStatus_t Call(infinicclBackendComm_t comm, const infinicclBackendCall* call,
                    infinirtStream_t stream, char* why, size_t why_size) {
  engine::LibraryGroupFn start_group;
  if (HasGroups()) start_group = &StartLibraryGroup;
  return engine::SubmitCall(*RankOf(comm), *call, stream, HcclNumbers(), start_group, &Issue, why,
                            why_size);
}

infiniStatus_t GroupEnd(char* why, size_t why_size) {
  engine::LibraryGroupFn end_group;
  if (HasGroups()) end_group = &EndLibraryGroup;
  return engine::EndGroup(end_group, "this HCCL", why, why_size);
}

infiniStatus_t CommGetAsyncError(infinicclBackendComm_t comm, infiniStatus_t* status, char* why,
                                 size_t why_size) {
  EngineRank& rank = *RankOf(comm);
  if (engine::KnownFailure(rank, status, why, why_size)) return INFINI_STATUS_SUCCESS;
  if (Hccl().HcclGetCommAsyncError == nullptr) {
    return Say(why, why_size, INFINI_STATUS_NOT_IMPLEMENTED,
               Library().opened.path() + " has no HcclGetCommAsyncError");
  }
  int async = kHcclSuccess;
  if (const int result = Hccl().HcclGetCommAsyncError(rank.comm, &async); result != kHcclSuccess) {
    return SayHccl(why, why_size, "HcclGetCommAsyncError", result);
  }
  if (async == kHcclSuccess) return INFINI_STATUS_SUCCESS;
  engine::RecordAsyncFailure(rank, StatusOf(async), Describe("HcclGetCommAsyncError", async),
                             status, why, why_size);
  return INFINI_STATUS_SUCCESS;
}

const infinicclBackendTable kTable = {
    sizeof(infinicclBackendTable),
    INFINICCL_BACKEND_ABI_MAJOR,
    INFINICCL_BACKEND_ABI_MINOR,
    "hccl",
    1u << INFINI_DEVICE_ASCEND,
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

}  // namespace infiniccl_hccl

extern "C" __attribute__((visibility("default"))) const infinicclBackendTable*
infinicclBackendGetTable(void) {
  return &infiniccl_hccl::kTable;
}
