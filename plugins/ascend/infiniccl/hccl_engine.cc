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
//
// What every vendor engine does the same way (communicators, the call flow, groups, failures) is
// vendor_engine.h's; this file is HCCL's functions and quirks.
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "collective_engine.h"
#include "hccl_api.h"
#include "hccl_library_data.h"
#include "hccl_translation.h"
#include "infiniccl_backend.h"
#include "infinirt.h"
#include "vendor_engine.h"

namespace infiniccl_hccl {

namespace {

namespace engine = infiniccl_engine;

static_assert(kHcclSuccess == engine::kVendorSuccess, "HCCL_SUCCESS is every vendor's success");

struct HcclFunctions {
#define HCCL_FUNCTION_POINTER_(required, ret, name, params) ret(*name) params = nullptr;
  HCCL_FUNCTIONS(HCCL_FUNCTION_POINTER_)
#undef HCCL_FUNCTION_POINTER_
};

// --- Calls on the aclrtStream ------------------------------------------------------------------

// One call as infinirtLaunchNativeFunc holds it.
struct HcclCall : engine::NativeWork {
  const HcclFunctions* fn;
  void* comm;
  infinicclCallKind_t kind;
  const void* sendbuf;
  void* recvbuf;
  engine::VendorElements elements;
  int op;
  int root;  // the root, or the peer of Send and Recv

  HcclCall(const HcclFunctions* f, void* c, const infinicclBackendCall& call,
           engine::VendorElements e, int o)
      : fn(f),
        comm(c),
        kind(call.kind),
        sendbuf(call.sendbuf),
        recvbuf(call.recvbuf),
        elements(e),
        op(o),
        root(call.root) {}

  int Issue(void* stream) override {
    void* send = const_cast<void*>(sendbuf);  // HCCL's prototypes take non-const buffers
    const uint64_t n = elements.count;
    const int type = elements.dtype;
    const auto peer = static_cast<uint32_t>(root);
    switch (kind) {
      case INFINICCL_CALL_AllReduce:
        return fn->HcclAllReduce(send, recvbuf, n, type, op, comm, stream);
      case INFINICCL_CALL_Broadcast:  // in place: the root's data is in recvbuf by now
        return fn->HcclBroadcast(recvbuf, n, type, peer, comm, stream);
      case INFINICCL_CALL_Reduce:
        return fn->HcclReduce(send, recvbuf, n, type, op, peer, comm, stream);
      case INFINICCL_CALL_AllGather:
        return fn->HcclAllGather(send, recvbuf, n, type, comm, stream);
      case INFINICCL_CALL_ReduceScatter:
        return fn->HcclReduceScatter(send, recvbuf, n, type, op, comm, stream);
      case INFINICCL_CALL_Send:
        return fn->HcclSend(send, n, type, peer, comm, stream);
      case INFINICCL_CALL_Recv:
        return fn->HcclRecv(recvbuf, n, type, peer, comm, stream);
      default:
        return kHcclParameterError;
    }
  }
};

// HcclBroadcast's buffer is recvbuf: the root's data goes there first, in stream order.
infiniStatus_t StageBroadcastRoot(const engine::EngineRank& rank, const infinicclBackendCall& call,
                                  infinirtStream_t stream, std::string* why) {
  if (call.kind != INFINICCL_CALL_Broadcast || call.root != rank.rank ||
      call.sendbuf == call.recvbuf) {
    return INFINI_STATUS_SUCCESS;
  }
  size_t bytes = 0;
  if (auto status = engine::CountInBytes(call, &bytes, why)) return status;
  if (const infinirtError_t error = infinirtMemcpyAsync(call.recvbuf, call.sendbuf, bytes,
                                                        infinirtMemcpyDeviceToDevice, stream)) {
    *why = engine::RuntimeFailure("copying the broadcast root's data to recvbuf", error);
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  return INFINI_STATUS_SUCCESS;
}

// --- The engine --------------------------------------------------------------------------------

engine::VendorFacts HcclFacts() {
  engine::VendorFacts facts{};
  facts.engine = "hccl";
  facts.library = &kLibraryData;
  facts.numbers = &HcclNumbers();
  facts.prefix = "Hccl";
  facts.init_all = "HcclCommInitAll";
  facts.make_root_id = "HcclGetRootInfo";
  facts.init_rank = "HcclCommInitRootInfo";
  // The store key of a communicator's HcclRootInfo (libinfiniccl keeps communicators' keys apart).
  facts.root_id_key = "hccl/root_info";
  facts.root_id_bytes = sizeof(HcclRootInfoBytes);
  facts.root_id_needs_device = true;  // HcclGetRootInfo runs on rank 0's device
  return facts;
}

class HcclEngine : public engine::VendorEngine {
 public:
  HcclEngine() : VendorEngine(HcclFacts()) {}

  void ResolveFunctions(const engine::EngineLibrary& library, std::string* missing) override {
#define HCCL_RESOLVE_(required, ret, name, params) \
  engine::Resolve(library, #name, required, &fn_.name, missing);
    HCCL_FUNCTIONS(HCCL_RESOLVE_)
#undef HCCL_RESOLVE_
  }

  const char* ErrorWords(int result) const override {
    return fn_.HcclGetErrorString != nullptr ? fn_.HcclGetErrorString(result) : nullptr;
  }
  infiniStatus_t StatusOf(int result) const override { return infiniccl_hccl::StatusOf(result); }

  int InitAll(const std::vector<int>& devices, void** comms) const override {
    std::vector<int32_t> device_list(devices.begin(), devices.end());
    return fn_.HcclCommInitAll(static_cast<uint32_t>(devices.size()), device_list.data(), comms);
  }
  int MakeRootId(void* root_id) const override {
    return fn_.HcclGetRootInfo(static_cast<HcclRootInfoBytes*>(root_id));
  }
  // HcclCommInitRootInfo binds the communicator to the device current on the calling thread.
  int InitRank(int nranks, int rank, int /*device: current*/, void* root_id,
               void** comm) const override {
    return fn_.HcclCommInitRootInfo(static_cast<uint32_t>(nranks),
                                    static_cast<const HcclRootInfoBytes*>(root_id),
                                    static_cast<uint32_t>(rank), comm);
  }
  // HcclCommDestroy waits for the communicator's work (assumed, as ncclCommDestroy does: the
  // header does not say).
  int Destroy(void* comm) const override { return fn_.HcclCommDestroy(comm); }
  // HCCL has no abort (hccl.h has HcclCommSuspend/Resume, not an abort): the rank is destroyed.
  int Abort(void* comm) const override { return Destroy(comm); }

  std::unique_ptr<engine::NativeWork> Work(void* comm, const infinicclBackendCall& call,
                                           engine::VendorElements elements, int op) const override {
    return std::make_unique<HcclCall>(&fn_, comm, call, elements, op);
  }
  infiniStatus_t BeforeCall(const engine::EngineRank& rank, const infinicclBackendCall& call,
                            infinirtStream_t stream, std::string* why) const override {
    return StageBroadcastRoot(rank, call, stream, why);
  }

  bool HasGroups() const override {
    return fn_.HcclGroupStart != nullptr && fn_.HcclGroupEnd != nullptr;
  }
  int GroupStart() const override { return fn_.HcclGroupStart(); }
  int GroupEnd() const override { return fn_.HcclGroupEnd(); }

  bool HasAsyncErrorQuery() const override { return fn_.HcclGetCommAsyncError != nullptr; }
  // HcclGetCommAsyncError's result is the query's; the communicator's failure is its asyncError.
  engine::AsyncState QueryAsyncError(void* comm, int* result) const override {
    int async = kHcclSuccess;
    *result = fn_.HcclGetCommAsyncError(comm, &async);
    if (*result != kHcclSuccess) return engine::AsyncState::kQueryFailed;
    *result = async;
    return async == kHcclSuccess ? engine::AsyncState::kHealthy : engine::AsyncState::kFailed;
  }

 private:
  HcclFunctions fn_;
};

}  // namespace

}  // namespace infiniccl_hccl

extern "C" __attribute__((visibility("default"))) const infinicclBackendTable*
infinicclBackendGetTable(void) {
  static auto* engine = new infiniccl_hccl::HcclEngine();  // kept: communicators use its functions
  return infiniccl_engine::VendorEngineTable(*engine);
}
