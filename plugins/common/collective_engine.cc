#include "collective_engine.h"

#include <atomic>
#include <cstdio>
#include <limits>
#include <map>
#include <tuple>
#include <utility>

#include "plugin_support.h"
#include "vendor_library.h"

namespace infiniccl_engine {

namespace plugin = infinirt::plugin;

infiniStatus_t Say(char* why, size_t why_size, infiniStatus_t status, const std::string& text) {
  if (why != nullptr && why_size > 0) std::snprintf(why, why_size, "%s", text.c_str());
  return status;
}

std::string RuntimeFailure(const char* doing, infinirtError_t error) {
  infinirtGetLastError();
  return std::string(doing) + ": " + infinirtGetErrorName(error) + " (" +
         infinirtGetErrorString(error) + ")";
}

const char* DeviceTypeName(infiniDevice_t type) {
  switch (type) {
#define ENGINE_DEVICE_NAME_(name, value, display, plugin_name) \
  case INFINI_DEVICE_##name:                                   \
    return display;
    INFINIRT_DEVICE_TYPES(ENGINE_DEVICE_NAME_)
#undef ENGINE_DEVICE_NAME_
    default:
      return "an unknown device type";
  }
}

infiniStatus_t VendorDevices(infiniDevice_t type, int count, const int* ordinals,
                             std::vector<int>* indices, std::string* why) {
  indices->assign(count, 0);
  for (int r = 0; r < count; ++r) {
    infinirtDeviceProp prop;
    if (const infinirtError_t error = infinirtGetDeviceProperties(&prop, ordinals[r])) {
      *why = RuntimeFailure(("the properties of device " + std::to_string(ordinals[r])).c_str(),
                            error);
      return INFINI_STATUS_BAD_PARAM;
    }
    if (prop.deviceType != type) {
      *why = "device " + std::to_string(ordinals[r]) + " is not an " + DeviceTypeName(type) +
             " device";
      return INFINI_STATUS_BAD_PARAM;
    }
    (*indices)[r] = prop.vendorDeviceIndex;
  }
  return INFINI_STATUS_SUCCESS;
}

// --- The library ---------------------------------------------------------------------------------

namespace {

// An engine has no host table to log through (it is no runtime plugin): the discovery's log lines
// are dropped, and what it found or tried goes to the listing instead.
const plugin::PluginLog& SilentLog() {
  static const plugin::PluginLog* log = new plugin::PluginLog("infiniccl");
  return *log;
}

int DeviceCount(infiniDevice_t type) {
  std::vector<int> counts(INFINI_DEVICE_TYPE_COUNT, 0);
  if (infinirtGetAllDeviceCount(counts.data()) != infinirtSuccess) {
    infinirtGetLastError();
    return 0;
  }
  return counts[type];
}

}  // namespace

bool EngineLibrary::Load(const LibraryData& data, std::string* why) {
  if (DeviceCount(data.device_type) == 0) {
    *why = std::string("no ") + DeviceTypeName(data.device_type) + " device is present, so " +
           data.library + " was not looked for";
    return false;
  }
  const plugin::CandidateList candidates = plugin::ListedCandidates(
      data.env, data.candidates, "the built-in list (config/vendors.json)", SilentLog());
  auto* opened = new plugin::VendorLibrary();  // never closed, never freed
  if (!opened->Open(candidates, SilentLog())) {
    *why = std::string(data.library) + " not found: tried " + opened->tried() +
           (opened->attempts().empty() ? "" : " (" + opened->attempts() + ")");
    delete opened;
    return false;
  }
  opened_ = opened;
  path_ = opened->path();
  return true;
}

void* EngineLibrary::Symbol(const char* name) const {
  return opened_ != nullptr ? opened_->Symbol(name) : nullptr;
}

// --- Work on the vendor's stream -----------------------------------------------------------------

namespace {

// What the last issue on this thread answered: infinirtLaunchNativeFunc carries only an
// infinirtError_t back, and an issue made at once runs on the calling thread.
thread_local int t_issued = 0;

infinirtError_t INFINIRT_CB RunNativeWork(void* native_stream, void* data) {
  t_issued = static_cast<NativeWork*>(data)->Issue(native_stream);
  return t_issued == 0 ? infinirtSuccess : infinirtErrorLaunchFailure;
}

void INFINIRT_CB ReleaseNativeWork(void* data) { delete static_cast<NativeWork*>(data); }

}  // namespace

infiniStatus_t QueueNative(infinirtStream_t stream, std::unique_ptr<NativeWork> work,
                           int* vendor_result, std::string* why) {
  *vendor_result = 0;
  t_issued = 0;
  const infinirtError_t queued =
      infinirtLaunchNativeFunc(stream, &RunNativeWork, work.get(), &ReleaseNativeWork);
  if (queued == infinirtSuccess) {
    work.release();  // the runtime releases it once nothing can issue it again
    return INFINI_STATUS_SUCCESS;
  }
  if (t_issued != 0) {
    infinirtGetLastError();
    *vendor_result = t_issued;
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  *why = RuntimeFailure("queueing on the vendor's stream", queued);
  return INFINI_STATUS_INTERNAL_ERROR;
}

namespace {

infinirtError_t INFINIRT_CB RunFunction(void*, void* data) {
  (*static_cast<const std::function<void()>*>(data))();
  return infinirtSuccess;
}

}  // namespace

infiniStatus_t RunOnDevice(int ordinal, const std::function<void()>& fn, std::string* why) {
  int previous = 0;
  if (const infinirtError_t error = infinirtGetDevice(&previous)) {
    *why = RuntimeFailure("reading the current device", error);
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  infinirtStream_t stream = nullptr;
  infinirtError_t error = infinirtSetDevice(ordinal);
  // A blocking stream: every backend has those (Cambricon has no non-blocking one).
  if (error == infinirtSuccess) error = infinirtStreamCreate(&stream);
  // A new stream never captures: the function runs at once, before the launch returns.
  std::function<void()> run = fn;
  if (error == infinirtSuccess)
    error = infinirtLaunchNativeFunc(stream, &RunFunction, &run, nullptr);
  if (error != infinirtSuccess) *why = RuntimeFailure("making the rank's device current", error);
  if (stream != nullptr) infinirtStreamDestroy(stream);
  infinirtSetDevice(previous);
  infinirtGetLastError();
  return error == infinirtSuccess ? INFINI_STATUS_SUCCESS : INFINI_STATUS_INTERNAL_ERROR;
}

infiniStatus_t ShareThroughStore(const infinicclBackendStore& store, const char* key, int rank,
                                 void* bytes, size_t size, char* why, size_t why_size) {
  if (rank == 0) {
    if (store.Set(store.context, key, bytes, size, why, why_size) != 0) {
      return INFINI_STATUS_INTERNAL_ERROR;  // the store said why
    }
    return INFINI_STATUS_SUCCESS;
  }
  size_t stored = 0;
  if (store.Get(store.context, key, bytes, size, &stored, why, why_size) != 0) {
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  if (stored != size) {
    return Say(why, why_size, INFINI_STATUS_INTERNAL_ERROR,
               "the store's " + std::string(key) + " is " + std::to_string(stored) +
                   " bytes, not " + std::to_string(size));
  }
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t RankFailure::Get(std::string* why) {
  std::lock_guard<std::mutex> lock(mutex_);
  *why = why_;
  return status_;
}

void RankFailure::Set(infiniStatus_t status, const std::string& why) {
  std::lock_guard<std::mutex> lock(mutex_);
  status_ = status;
  why_ = why;
}

infiniStatus_t CountInBytes(const infinicclBackendCall& call, size_t* bytes, std::string* why) {
  const size_t size = infinirtDtypeSize(call.dtype);
  if (size == 0 || call.count > std::numeric_limits<size_t>::max() / size) {
    *why = std::to_string(call.count) + " elements of dtype " +
           std::to_string(static_cast<int>(call.dtype)) + " are more bytes than a size_t holds";
    return INFINI_STATUS_BAD_PARAM;
  }
  *bytes = call.count * size;
  return INFINI_STATUS_SUCCESS;
}

// --- Translation ---------------------------------------------------------------------------------

infiniStatus_t TranslateElements(const VendorNumbers& numbers, const infinicclBackendCall& call,
                                 VendorElements* elements, std::string* why) {
  for (const VendorNumbers::Type* type = numbers.types; type->vendor >= 0; ++type) {
    if (type->dtype != call.dtype) continue;
    *elements = VendorElements{type->vendor, call.count};
    return INFINI_STATUS_SUCCESS;
  }
  if (infinicclCallReduces(call.kind)) {
    *why = std::string(numbers.library) + " cannot reduce dtype " +
           std::to_string(static_cast<int>(call.dtype)) + ": it has no such type";
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  size_t bytes = 0;  // moving data needs no type: its bytes move as they are
  if (auto status = CountInBytes(call, &bytes, why)) return status;
  *elements = VendorElements{numbers.byte_type, bytes};
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t TranslateOp(const char* library, const VendorOps& ops, infinicclReduceOp_t op,
                           int* vendor_op, std::string* why) {
  switch (op) {
    case INFINICCL_SUM:
      *vendor_op = ops.sum;
      return INFINI_STATUS_SUCCESS;
    case INFINICCL_PROD:
      *vendor_op = ops.prod;
      return INFINI_STATUS_SUCCESS;
    case INFINICCL_MAX:
      *vendor_op = ops.max;
      return INFINI_STATUS_SUCCESS;
    case INFINICCL_MIN:
      *vendor_op = ops.min;
      return INFINI_STATUS_SUCCESS;
    case INFINICCL_AVG:
      if (ops.avg == kNoOperator) {
        *why = std::string(library) + " has no average: " + ops.no_average;
        return INFINI_STATUS_NOT_IMPLEMENTED;
      }
      *vendor_op = ops.avg;
      return INFINI_STATUS_SUCCESS;
    default:
      *why = "op " + std::to_string(static_cast<int>(op)) + " is no operator";
      return INFINI_STATUS_BAD_PARAM;
  }
}

std::string DescribeFailure(const VendorNumbers& numbers, const char* function, int result,
                            const char* words) {
  return std::string(function) + " failed: " +
         (words != nullptr && words[0] != '\0' ? words : "no description from the library") + " (" +
         numbers.result_type + " " + std::to_string(result) + ")";
}

// --- Ranks and calls -----------------------------------------------------------------------------

uint64_t NewClique() {
  static std::atomic<uint64_t> next{1};
  return next++;
}

infinicclBackendComm_t MakeRank(void* comm, uint64_t clique, int rank) {
  auto made = std::make_unique<EngineRank>();
  made->comm = comm;
  made->clique = clique;
  made->rank = rank;
  return reinterpret_cast<infinicclBackendComm_t>(made.release());
}

infiniStatus_t SubmitCall(EngineRank& rank, const infinicclBackendCall& call,
                          infinirtStream_t stream, const VendorNumbers& numbers,
                          const LibraryGroupFn& start_library_group, const IssueFn& issue,
                          char* why, size_t why_size) {
  std::string reason;
  if (auto status = rank.failure.Get(&reason)) return Say(why, why_size, status, reason);
  if (call.count == 0) return INFINI_STATUS_SUCCESS;  // nothing to move, nothing to match
  VendorElements elements;
  if (auto status = TranslateElements(numbers, call, &elements, &reason)) {
    return Say(why, why_size, status, reason);
  }
  int op = numbers.ops.sum;
  if (infinicclCallReduces(call.kind)) {
    if (auto status = TranslateOp(numbers.library, numbers.ops, call.op, &op, &reason)) {
      return Say(why, why_size, status, reason);
    }
  }
  if (InGroup() && !start_library_group) {
    Defer({&rank, stream, rank.clique, rank.rank, call.kind, call.root,
           [&rank, call, elements, op, stream, issue](char* w, size_t ws) {
             return issue(rank, call, elements, op, stream, w, ws);
           }});
    return INFINI_STATUS_SUCCESS;
  }
  if (start_library_group) {
    if (auto status = JoinLibraryGroup(start_library_group, why, why_size)) return status;
  }
  return issue(rank, call, elements, op, stream, why, why_size);
}

bool KnownFailure(EngineRank& rank, infiniStatus_t* status, char* why, size_t why_size) {
  std::string reason;
  *status = rank.failure.Get(&reason);
  if (*status == INFINI_STATUS_SUCCESS) return false;
  Say(why, why_size, *status, reason);
  return true;
}

void RecordAsyncFailure(EngineRank& rank, infiniStatus_t failure, const std::string& what,
                        infiniStatus_t* status, char* why, size_t why_size) {
  // An asynchronous failure is never the caller's bad parameter: the rank is broken.
  *status = failure == INFINI_STATUS_BAD_PARAM ? INFINI_STATUS_INTERNAL_ERROR : failure;
  const std::string text = "the communicator failed after a call returned: " + what;
  rank.failure.Set(*status, text);
  Say(why, why_size, *status, text);
}

// --- Groups --------------------------------------------------------------------------------------

namespace {

thread_local int t_group_depth = 0;
thread_local bool t_library_group = false;
thread_local std::vector<DeferredCall> t_deferred;

bool IsPointToPoint(infinicclCallKind_t kind) {
  return kind == INFINICCL_CALL_Send || kind == INFINICCL_CALL_Recv;
}

// A transfer: the clique, its sender and its receiver.
using Transfer = std::tuple<uint64_t, int, int>;

Transfer TransferOf(const DeferredCall& call) {
  const bool sends = call.kind == INFINICCL_CALL_Send;
  return {call.clique, sends ? call.rank : call.peer, sends ? call.peer : call.rank};
}

// Pairs the k-th Send of a transfer with its k-th Recv; -1 for a call whose partner is not in
// the group (its peer's calls are made elsewhere: it is taken to complete).
std::vector<int> Partners(const std::vector<DeferredCall>& calls) {
  std::vector<int> partner(calls.size(), -1);
  std::map<Transfer, std::pair<std::vector<int>, std::vector<int>>> transfers;
  for (size_t i = 0; i < calls.size(); ++i) {
    if (!IsPointToPoint(calls[i].kind)) continue;
    auto& sides = transfers[TransferOf(calls[i])];
    (calls[i].kind == INFINICCL_CALL_Send ? sides.first : sides.second)
        .push_back(static_cast<int>(i));
  }
  for (const auto& [transfer, sides] : transfers) {
    for (size_t k = 0; k < sides.first.size() && k < sides.second.size(); ++k) {
      partner[sides.first[k]] = sides.second[k];
      partner[sides.second[k]] = sides.first[k];
    }
  }
  return partner;
}

std::string Describe(const DeferredCall& call) {
  return std::string(call.kind == INFINICCL_CALL_Send ? "the Send of rank " : "the Recv of rank ") +
         std::to_string(call.rank) + (call.kind == INFINICCL_CALL_Send ? " to " : " from ") +
         std::to_string(call.peer);
}

}  // namespace

bool WouldDeadlock(const std::vector<DeferredCall>& calls, std::string* why) {
  const std::vector<int> partner = Partners(calls);
  // Each stream of each rank runs its calls in order: the call indices of every queue.
  std::map<std::pair<const void*, infinirtStream_t>, std::vector<int>> queues;
  for (size_t i = 0; i < calls.size(); ++i) {
    queues[{calls[i].queue_rank, calls[i].stream}].push_back(static_cast<int>(i));
  }
  std::map<std::pair<const void*, infinirtStream_t>, size_t> heads;
  const auto at_head = [&](int call) {
    const auto& queue = queues[{calls[call].queue_rank, calls[call].stream}];
    const size_t head = heads[{calls[call].queue_rank, calls[call].stream}];
    return head < queue.size() && queue[head] == call;
  };
  // Collectives and unpaired calls complete alone; a pair completes when both are at the heads.
  for (bool progressed = true; progressed;) {
    progressed = false;
    for (auto& [key, queue] : queues) {
      size_t& head = heads[key];
      while (head < queue.size()) {
        const int call = queue[head];
        if (partner[call] >= 0) {
          if (!at_head(partner[call])) break;
          ++heads[{calls[partner[call]].queue_rank, calls[partner[call]].stream}];
        }
        ++head;
        progressed = true;
      }
    }
  }
  for (auto& [key, queue] : queues) {
    if (heads[key] < queue.size()) {
      *why = Describe(calls[queue[heads[key]]]) + " would wait forever for its peer";
      return true;
    }
  }
  return false;
}

infiniStatus_t StartGroup() {
  ++t_group_depth;
  return INFINI_STATUS_SUCCESS;
}

bool InGroup() { return t_group_depth > 0; }

infiniStatus_t JoinLibraryGroup(const std::function<infiniStatus_t(char*, size_t)>& start,
                                char* why, size_t why_size) {
  if (t_group_depth == 0 || t_library_group) return INFINI_STATUS_SUCCESS;
  if (auto status = start(why, why_size)) return status;
  t_library_group = true;
  return INFINI_STATUS_SUCCESS;
}

void Defer(DeferredCall call) { t_deferred.push_back(std::move(call)); }

infiniStatus_t EndGroup(const std::function<infiniStatus_t(char*, size_t)>& end_library,
                        const char* library, char* why, size_t why_size) {
  if (t_group_depth == 0) return Say(why, why_size, INFINI_STATUS_BAD_PARAM, "no group is open");
  if (--t_group_depth > 0) return INFINI_STATUS_SUCCESS;
  std::vector<DeferredCall> deferred;
  deferred.swap(t_deferred);
  const bool library_group = t_library_group;
  t_library_group = false;
  infiniStatus_t answer = INFINI_STATUS_SUCCESS;
  std::string reason;
  if (WouldDeadlock(deferred, &reason)) {
    answer = Say(why, why_size, INFINI_STATUS_NOT_IMPLEMENTED,
                 std::string(library) +
                     " has no group calls, so a group's calls run one at a time, and " + reason +
                     ": nothing of the group was issued (give each direction a stream of its "
                     "own, or order the calls so that every Send meets its Recv)");
    deferred.clear();
  }
  for (const DeferredCall& call : deferred) {
    if (auto status = call.issue(why, why_size)) {
      answer = status;
      break;
    }
  }
  if (library_group && end_library) {
    char end_why[INFINICCL_BACKEND_WHY_BYTES] = "";
    const infiniStatus_t ended = end_library(end_why, sizeof end_why);
    if (ended != INFINI_STATUS_SUCCESS && answer == INFINI_STATUS_SUCCESS) {
      answer = Say(why, why_size, ended, end_why);
    }
  }
  return answer;
}

}  // namespace infiniccl_engine
