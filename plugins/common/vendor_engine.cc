#include "vendor_engine.h"

#include <cstdint>
#include <memory>
#include <string>
#include <vector>

namespace infiniccl_engine {

infiniStatus_t VendorEngine::BeforeCall(const EngineRank& /*rank*/,
                                        const infinicclBackendCall& /*call*/,
                                        infinirtStream_t /*stream*/, std::string* /*why*/) const {
  return INFINI_STATUS_SUCCESS;
}

namespace {

// The engine's vendor (VendorEngineTable keeps the first) and its library: one of each per
// engine, each engine having its own copy of this static library.
VendorEngine* g_vendor = nullptr;

VendorEngine& Vendor() { return *g_vendor; }
const VendorFacts& Facts() { return g_vendor->facts(); }
infiniDevice_t DeviceType() { return Facts().library->device_type; }

EngineLibrary& Library() {
  static auto* library = new EngineLibrary();  // kept: communicators use its functions
  return *library;
}

// --- The vendor's words --------------------------------------------------------------------------

// A function of the vendor: "HcclGroupStart" for "GroupStart".
std::string FunctionNamed(const char* what) { return std::string(Facts().prefix) + what; }

// The vendor function of a call, for messages: "HcclAllReduce".
std::string FunctionOf(infinicclCallKind_t kind) {
  switch (kind) {
#define ENGINE_CALL_FUNCTION_(name, reduces) \
  case INFINICCL_CALL_##name:                \
    return FunctionNamed(#name);
    INFINICCL_CALLS(ENGINE_CALL_FUNCTION_)
#undef ENGINE_CALL_FUNCTION_
    default:
      return FunctionNamed("?");
  }
}

// "<function> failed: <the library's words> (<result type> <n>)".
std::string Describe(const std::string& function, int result) {
  return DescribeFailure(*Facts().numbers, function.c_str(), result, Vendor().ErrorWords(result));
}

// A vendor failure: its status, and why in the library's words.
infiniStatus_t SayVendor(char* why, size_t why_size, const std::string& function, int result) {
  return Say(why, why_size, Vendor().StatusOf(result), Describe(function, result));
}

// --- Loading -------------------------------------------------------------------------------------

bool Load(std::string* why) {
  EngineLibrary& library = Library();
  if (!library.Load(*Facts().library, why)) return false;
  std::string missing;
  Vendor().ResolveFunctions(library, &missing);
  if (missing.empty()) return true;
  *why = library.path() + " lacks" + missing;
  return false;
}

infiniStatus_t Initialize(char* why, size_t why_size) {
  std::string reason;
  if (!Load(&reason)) return Say(why, why_size, INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, reason);
  return INFINI_STATUS_SUCCESS;
}

// --- Communicators -------------------------------------------------------------------------------

infiniStatus_t CommInitAll(int nranks, const int* ordinals, long /*timeout_ms: the vendor's own*/,
                           infinicclBackendComm_t* comms, char* why, size_t why_size) {
  std::vector<int> devices;
  std::string reason;
  if (auto status = VendorDevices(DeviceType(), nranks, ordinals, &devices, &reason)) {
    return Say(why, why_size, status, reason);
  }
  std::vector<void*> made(nranks, nullptr);
  if (const int result = Vendor().InitAll(devices, made.data()); result != kVendorSuccess) {
    return SayVendor(why, why_size, Facts().init_all, result);
  }
  const uint64_t clique = NewClique();
  for (int r = 0; r < nranks; ++r) comms[r] = MakeRank(made[r], clique, r);
  return INFINI_STATUS_SUCCESS;
}

// Rank 0's root id, made with its device current where the vendor needs it.
infiniStatus_t MakeRootId(int ordinal, void* root_id, char* why, size_t why_size) {
  int result = kVendorSuccess;
  const auto make = [&] { result = Vendor().MakeRootId(root_id); };
  if (Facts().root_id_needs_device) {
    std::string reason;
    if (auto status = RunOnDevice(ordinal, make, &reason)) {
      return Say(why, why_size, status, reason);
    }
  } else {
    make();
  }
  if (result != kVendorSuccess) return SayVendor(why, why_size, Facts().make_root_id, result);
  return INFINI_STATUS_SUCCESS;
}

// Rank 0 makes the root id and puts it in the store; the others wait for it there.
infiniStatus_t ShareRootId(int rank, int ordinal, const infinicclBackendStore& store,
                           std::vector<unsigned char>* root_id, char* why, size_t why_size) {
  if (rank == 0) {
    if (auto status = MakeRootId(ordinal, root_id->data(), why, why_size)) return status;
  }
  return ShareThroughStore(store, Facts().root_id_key, rank, root_id->data(), root_id->size(), why,
                           why_size);
}

infiniStatus_t CommInitRank(int nranks, int rank, int ordinal, long /*timeout_ms: the store's*/,
                            const infinicclBackendStore* store, infinicclBackendComm_t* comm,
                            char* why, size_t why_size) {
  std::vector<int> device;
  std::string reason;
  if (auto status = VendorDevices(DeviceType(), 1, &ordinal, &device, &reason)) {
    return Say(why, why_size, status, reason);
  }
  std::vector<unsigned char> root_id(Facts().root_id_bytes);
  if (auto status = ShareRootId(rank, ordinal, *store, &root_id, why, why_size)) return status;
  // The vendor binds the communicator to the device current on the calling thread.
  void* made = nullptr;
  int result = kVendorSuccess;
  if (auto status = RunOnDevice(
          ordinal,
          [&] { result = Vendor().InitRank(nranks, rank, device[0], root_id.data(), &made); },
          &reason)) {
    return Say(why, why_size, status, reason);
  }
  if (result != kVendorSuccess) return SayVendor(why, why_size, Facts().init_rank, result);
  // Ranks of other processes are never in this process's groups: the clique only has to differ
  // from the local ones.
  *comm = MakeRank(made, NewClique(), rank);
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t CommDestroy(infinicclBackendComm_t comm) {
  std::unique_ptr<EngineRank> rank(RankOf(comm));
  return Vendor().StatusOf(Vendor().Destroy(rank->comm));
}

infiniStatus_t CommAbort(infinicclBackendComm_t comm) {
  std::unique_ptr<EngineRank> rank(RankOf(comm));
  return Vendor().StatusOf(Vendor().Abort(rank->comm));
}

// --- Calls and groups ----------------------------------------------------------------------------

// Queues one translated call on stream, after what the vendor puts before it.
infiniStatus_t Issue(EngineRank& rank, const infinicclBackendCall& call, VendorElements elements,
                     int op, infinirtStream_t stream, char* why, size_t why_size) {
  std::string reason;
  if (auto status = Vendor().BeforeCall(rank, call, stream, &reason)) {
    return Say(why, why_size, status, reason);
  }
  int result = kVendorSuccess;
  const infiniStatus_t status =
      QueueNative(stream, Vendor().Work(rank.comm, call, elements, op), &result, &reason);
  if (status == INFINI_STATUS_SUCCESS) return status;
  if (result != kVendorSuccess) return SayVendor(why, why_size, FunctionOf(call.kind), result);
  return Say(why, why_size, status, reason);
}

infiniStatus_t StartLibraryGroup(char* why, size_t why_size) {
  const int result = Vendor().GroupStart();
  return result == kVendorSuccess ? INFINI_STATUS_SUCCESS
                                  : SayVendor(why, why_size, FunctionNamed("GroupStart"), result);
}

infiniStatus_t EndLibraryGroup(char* why, size_t why_size) {
  const int result = Vendor().GroupEnd();
  return result == kVendorSuccess ? INFINI_STATUS_SUCCESS
                                  : SayVendor(why, why_size, FunctionNamed("GroupEnd"), result);
}

infiniStatus_t Call(infinicclBackendComm_t comm, const infinicclBackendCall* call,
                    infinirtStream_t stream, char* why, size_t why_size) {
  LibraryGroupFn start_group;
  if (Vendor().HasGroups()) start_group = &StartLibraryGroup;
  return SubmitCall(*RankOf(comm), *call, stream, *Facts().numbers, start_group, &Issue, why,
                    why_size);
}

infiniStatus_t GroupEnd(char* why, size_t why_size) {
  LibraryGroupFn end_group;
  if (Vendor().HasGroups()) end_group = &EndLibraryGroup;
  const std::string library = "this " + std::string(Facts().numbers->library);
  return EndGroup(end_group, library.c_str(), why, why_size);
}

// --- Asynchronous failures -----------------------------------------------------------------------

infiniStatus_t CommGetAsyncError(infinicclBackendComm_t comm, infiniStatus_t* status, char* why,
                                 size_t why_size) {
  EngineRank& rank = *RankOf(comm);
  if (KnownFailure(rank, status, why, why_size)) return INFINI_STATUS_SUCCESS;
  const std::string query = FunctionNamed("GetCommAsyncError");
  if (!Vendor().HasAsyncErrorQuery()) {
    return Say(why, why_size, INFINI_STATUS_NOT_IMPLEMENTED, Library().path() + " has no " + query);
  }
  int result = kVendorSuccess;
  switch (Vendor().QueryAsyncError(rank.comm, &result)) {
    case AsyncState::kHealthy:
      return INFINI_STATUS_SUCCESS;
    case AsyncState::kQueryFailed:
      return SayVendor(why, why_size, query, result);
    case AsyncState::kFailed:
      RecordAsyncFailure(rank, Vendor().StatusOf(result), Describe(query, result), status, why,
                         why_size);
      return INFINI_STATUS_SUCCESS;
  }
  return INFINI_STATUS_SUCCESS;
}

}  // namespace

const infinicclBackendTable* VendorEngineTable(VendorEngine& vendor) {
  static const infinicclBackendTable table = [&vendor] {
    g_vendor = &vendor;
    return infinicclBackendTable{
        sizeof(infinicclBackendTable),
        INFINICCL_BACKEND_ABI_MAJOR,
        INFINICCL_BACKEND_ABI_MINOR,
        vendor.facts().engine,
        1u << DeviceType(),
        &Initialize,
        &CommInitAll,
        &CommDestroy,
        &CommAbort,
        &Call,
        &StartGroup,
        &GroupEnd,
        &CommInitRank,
        &CommGetAsyncError,
    };
  }();
  return &table;
}

}  // namespace infiniccl_engine
