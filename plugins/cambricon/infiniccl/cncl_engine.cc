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
//
// What every vendor engine does the same way (communicators, the call flow, groups, failures) is
// vendor_engine.h's; this file is CNCL's functions and quirks.
#include <memory>
#include <string>
#include <vector>

#include "cncl_api.h"
#include "cncl_library_data.h"
#include "cncl_translation.h"
#include "collective_engine.h"
#include "infiniccl_backend.h"
#include "infinirt.h"
#include "vendor_engine.h"

namespace infiniccl_cncl {

namespace {

namespace engine = infiniccl_engine;

static_assert(kCnclSuccess == engine::kVendorSuccess, "CNCL_RET_SUCCESS is every vendor's success");

struct CnclFunctions {
#define CNCL_FUNCTION_POINTER_(required, ret, name, params) ret(*name) params = nullptr;
  CNCL_FUNCTIONS(CNCL_FUNCTION_POINTER_)
#undef CNCL_FUNCTION_POINTER_
};

// --- Calls on the cnrtQueue_t ------------------------------------------------------------------

// One call as infinirtLaunchNativeFunc holds it.
struct CnclCall : engine::NativeWork {
  const CnclFunctions* fn;
  void* comm;
  infinicclBackendCall call;  // its dtype and count replaced by CNCL's
  int dtype;
  int op;

  int Issue(void* queue) override {
    const void* send = call.sendbuf;
    void* recv = call.recvbuf;
    const size_t n = call.count;
    switch (call.kind) {
      case INFINICCL_CALL_AllReduce:
        return fn->cnclAllReduce(send, recv, n, dtype, op, comm, queue);
      case INFINICCL_CALL_Broadcast:
        return fn->cnclBroadcast(send, recv, n, dtype, call.root, comm, queue);
      case INFINICCL_CALL_Reduce:
        return fn->cnclReduce(send, recv, n, dtype, op, call.root, comm, queue);
      case INFINICCL_CALL_AllGather:
        return fn->cnclAllGather(send, recv, n, dtype, comm, queue);
      case INFINICCL_CALL_ReduceScatter:
        return fn->cnclReduceScatter(send, recv, n, dtype, op, comm, queue);
      case INFINICCL_CALL_Send:  // cnclSend's buffer is not const in cncl.h
        return fn->cnclSend(const_cast<void*>(send), n, dtype, call.root, comm, queue);
      case INFINICCL_CALL_Recv:
        return fn->cnclRecv(recv, n, dtype, call.root, comm, queue);
      default:
        return kCnclArguments;
    }
  }
};

// --- The engine --------------------------------------------------------------------------------

engine::VendorFacts CnclFacts() {
  engine::VendorFacts facts{};
  facts.engine = "cncl";
  facts.library = &kLibraryData;
  facts.numbers = &CnclNumbers();
  facts.prefix = "cncl";
  facts.init_all = "cnclInitComms";
  facts.make_root_id = "cnclGetCliqueId";
  facts.init_rank = "cnclInitComms";
  // The store key of a communicator's cnclCliqueId (libinfiniccl keeps communicators' keys apart).
  facts.root_id_key = "cncl/clique_id";
  facts.root_id_bytes = sizeof(CnclCliqueIdBytes);
  facts.root_id_needs_device = false;
  return facts;
}

class CnclEngine : public engine::VendorEngine {
 public:
  CnclEngine() : VendorEngine(CnclFacts()) {}

  void ResolveFunctions(const engine::EngineLibrary& library, std::string* missing) override {
#define CNCL_RESOLVE_(required, ret, name, params) \
  engine::Resolve(library, #name, required, &fn_.name, missing);
    CNCL_FUNCTIONS(CNCL_RESOLVE_)
#undef CNCL_RESOLVE_
  }

  const char* ErrorWords(int result) const override { return fn_.cnclGetErrorStr(result); }
  infiniStatus_t StatusOf(int result) const override { return infiniccl_cncl::StatusOf(result); }

  // One process: ranks 0..n-1 and no clique id (cncl.h: CNCL acquires one itself then, which it
  // supports in single-process communication only).
  int InitAll(const std::vector<int>& devices, void** comms) const override {
    const int nranks = static_cast<int>(devices.size());
    std::vector<int> ranks(nranks);
    for (int r = 0; r < nranks; ++r) ranks[r] = r;
    return fn_.cnclInitComms(comms, nranks, devices.data(), ranks.data(), nranks, nullptr);
  }
  int MakeRootId(void* root_id) const override {
    return fn_.cnclGetCliqueId(static_cast<CnclCliqueIdBytes*>(root_id));
  }
  // Every rank makes its communicator with its device current (the vendor's index, as
  // cnclInitComms's dev_list takes).
  int InitRank(int nranks, int rank, int device, void* root_id, void** comm) const override {
    return fn_.cnclInitComms(comm, 1, &device, &rank, nranks,
                             static_cast<CnclCliqueIdBytes*>(root_id));
  }
  // cnclFreeComm waits for the communicator's running tasks (cncl.h). cncl.h asks that a clique's
  // communicators be released together: InfiniCCL releases each rank on its own, as cncl.h's own
  // cnclFreeComm example does, one after another.
  int Destroy(void* comm) const override { return fn_.cnclFreeComm(comm); }
  // cnclAbortComm stops the running tasks and releases the communicator; a CNCL without it frees
  // the communicator instead (which waits).
  int Abort(void* comm) const override {
    return fn_.cnclAbortComm != nullptr ? fn_.cnclAbortComm(comm) : Destroy(comm);
  }

  std::unique_ptr<engine::NativeWork> Work(void* comm, const infinicclBackendCall& call,
                                           engine::VendorElements elements, int op) const override {
    auto work = std::make_unique<CnclCall>();
    work->fn = &fn_;
    work->comm = comm;
    work->call = call;
    work->call.count = elements.count;
    work->dtype = elements.dtype;
    work->op = op;
    return work;
  }

  bool HasGroups() const override {
    return fn_.cnclGroupStart != nullptr && fn_.cnclGroupEnd != nullptr;
  }
  int GroupStart() const override { return fn_.cnclGroupStart(); }
  int GroupEnd() const override { return fn_.cnclGroupEnd(); }

  bool HasAsyncErrorQuery() const override { return fn_.cnclGetCommAsyncError != nullptr; }
  // cnclGetCommAsyncError answers the communicator's state as its result: success, in progress
  // (not a failure), a failure of the query itself (its arguments), or the communicator's failure.
  engine::AsyncState QueryAsyncError(void* comm, int* result) const override {
    *result = fn_.cnclGetCommAsyncError(comm);
    if (*result == kCnclSuccess || *result == kCnclAsyncInProgress) {
      return engine::AsyncState::kHealthy;
    }
    if (*result == kCnclArguments || *result == kCnclNullPointer) {
      return engine::AsyncState::kQueryFailed;
    }
    return engine::AsyncState::kFailed;
  }

 private:
  CnclFunctions fn_;
};

}  // namespace

}  // namespace infiniccl_cncl

extern "C" __attribute__((visibility("default"))) const infinicclBackendTable*
infinicclBackendGetTable(void) {
  static auto* engine = new infiniccl_cncl::CnclEngine();  // kept: communicators use its functions
  return infiniccl_engine::VendorEngineTable(*engine);
}
