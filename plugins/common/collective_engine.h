// What the collective engines of vendors with an API of their own (HCCL for Ascend, CNCL for
// Cambricon: libinfiniccl_hccl.so, libinfiniccl_cncl.so) share: finding the vendor's library with
// the plugins' discovery, the vendor device indices of InfiniRT ordinals, queueing a vendor call
// on the vendor stream behind an InfiniRT stream (infinirtLaunchNativeFunc), running a call with a
// rank's device current, sharing a root id through the rendezvous store, and groups where the
// library has none of its own; vendor_engine.h builds those engines' tables on it. The NCCL engine
// takes its operator translation (TranslateOp) from here too. A static library: each engine has
// its own copy (and its own thread-local group state).
#ifndef INFINIRT_PLUGINS_COMMON_COLLECTIVE_ENGINE_H_
#define INFINIRT_PLUGINS_COMMON_COLLECTIVE_ENGINE_H_

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#include "infiniccl_backend.h"
#include "infinicore.h"
#include "infinirt.h"

namespace infinirt::plugin {
class VendorLibrary;
}

namespace infiniccl_engine {

// Writes text to why (when there is room) and answers status.
infiniStatus_t Say(char* why, size_t why_size, infiniStatus_t status, const std::string& text);

// "<doing>: <error name> (<error string>)", clearing the runtime's last error.
std::string RuntimeFailure(const char* doing, infinirtError_t error);

// "Ascend", "Cambricon", ... (infinicore.h's display names).
const char* DeviceTypeName(infiniDevice_t type);

// The vendor's device index of every ordinal (what the vendor's SetDevice and device lists take);
// every ordinal must be a device of `type`.
infiniStatus_t VendorDevices(infiniDevice_t type, int count, const int* ordinals,
                             std::vector<int>* indices, std::string* why);

// Where an engine's library is looked for: generated from the vendor table, config/vendors.json.
struct LibraryData {
  infiniDevice_t device_type;
  const char* library;            // "HCCL", for messages
  const char* env;                // INFINICCL_<VENDOR>_LIBRARY, which replaces the candidates
  const char* const* candidates;  // ended by nullptr
};

// A vendor library, opened once with dlopen and never closed (communicators use its functions).
class EngineLibrary {
 public:
  // Opens it where a device of its type is present; otherwise, or when no candidate opens, false
  // with why naming what was looked for.
  bool Load(const LibraryData& data, std::string* why);
  // A function of the library, or nullptr.
  void* Symbol(const char* name) const;
  const std::string& path() const { return path_; }

 private:
  infinirt::plugin::VendorLibrary* opened_ = nullptr;  // kept open until the process ends
  std::string path_;
};

// Resolves `name` into *function; a required one that is missing is added to *missing.
template <class Function>
void Resolve(const EngineLibrary& library, const char* name, bool required, Function* function,
             std::string* missing) {
  *function = reinterpret_cast<Function>(library.Symbol(name));
  if (required && *function == nullptr) *missing += std::string(" ") + name;
}

// Work for the vendor stream behind an InfiniRT stream: Issue runs with the stream's device
// current, at once, or each time a graph that captured it is instantiated.
class NativeWork {
 public:
  virtual ~NativeWork() = default;
  // The vendor's result: 0 on success.
  virtual int Issue(void* native_stream) = 0;
};

// Queues work through infinirtLaunchNativeFunc, which then owns it. On failure either
// *vendor_result is the vendor's nonzero result (Issue failed), or why says what the runtime
// refused (INTERNAL_ERROR).
infiniStatus_t QueueNative(infinirtStream_t stream, std::unique_ptr<NativeWork> work,
                           int* vendor_result, std::string* why);

// Runs fn with `ordinal` current in the vendor's runtime (InfiniRT makes a device current lazily:
// a native launch on a new stream of the device runs with it current, on this thread), then
// restores the thread's device.
infiniStatus_t RunOnDevice(int ordinal, const std::function<void()>& fn, std::string* why);

// Rank 0 puts its `size` bytes at key of the store; the other ranks wait for them there.
infiniStatus_t ShareThroughStore(const infinicclBackendStore& store, const char* key, int rank,
                                 void* bytes, size_t size, char* why, size_t why_size);

// A rank's failure found after a call returned (CommGetAsyncError): every later call answers it.
class RankFailure {
 public:
  infiniStatus_t Get(std::string* why);
  void Set(infiniStatus_t status, const std::string& why);

 private:
  std::mutex mutex_;
  infiniStatus_t status_ = INFINI_STATUS_SUCCESS;
  std::string why_;
};

// --- Translation -------------------------------------------------------------------------------

// A vendor's operator number where it has none.
constexpr int kNoOperator = -1;

// A vendor library's reduction operators: its numbers for sum, prod, max and min, and for average
// where it has one. Where it has none, no_average says why (after "<library> has no average: ");
// a library that has one only from some version on says so here (the NCCL engine).
struct VendorOps {
  int sum, prod, max, min;
  int avg = kNoOperator;
  const char* no_average = "its operators are sum, prod, max and min";
};

// A vendor library's numbers for InfiniCCL's: its dtype for each InfiniCore dtype it has (-1 where
// it has none), its byte type, and its operators.
struct VendorNumbers {
  const char* library;      // "HCCL", for messages
  const char* result_type;  // "HcclResult"
  struct Type {
    infiniDtype_t dtype;
    int vendor;
  };
  const Type* types;  // ended by {INFINI_DTYPE_INVALID, -1}
  int byte_type;
  VendorOps ops;
};

// What the vendor is asked to move: its dtype and the element count in that dtype.
struct VendorElements {
  int dtype = 0;
  size_t count = 0;
};

// The vendor dtype and count of a call. A reduction needs the vendor's own type
// (NOT_IMPLEMENTED where it has none); data that only moves goes as bytes where it has none.
// Which of its types the library reduces is its own answer.
infiniStatus_t TranslateElements(const VendorNumbers& numbers, const infinicclBackendCall& call,
                                 VendorElements* elements, std::string* why);

// The vendor's operator of a reduction; AVG answers NOT_IMPLEMENTED where ops has none, saying
// why. library names the library in that message ("HCCL", "NCCL (version 20804)").
infiniStatus_t TranslateOp(const char* library, const VendorOps& ops, infinicclReduceOp_t op,
                           int* vendor_op, std::string* why);

// "<function> failed: <words> (<result type> <n>)".
std::string DescribeFailure(const VendorNumbers& numbers, const char* function, int result,
                            const char* words);

// --- Ranks and calls -----------------------------------------------------------------------------

// What an engine keeps for one rank.
struct EngineRank {
  void* comm = nullptr;  // the vendor's communicator
  uint64_t clique = 0;   // shared by the communicators made together (NewClique)
  int rank = 0;
  RankFailure failure;
};

uint64_t NewClique();
infinicclBackendComm_t MakeRank(void* comm, uint64_t clique, int rank);
inline EngineRank* RankOf(infinicclBackendComm_t comm) {
  return reinterpret_cast<EngineRank*>(comm);
}

// Queues one translated call on stream (the engine's vendor call).
using IssueFn = std::function<infiniStatus_t(EngineRank& rank, const infinicclBackendCall& call,
                                             VendorElements elements, int op,
                                             infinirtStream_t stream, char* why, size_t why_size)>;
// Starts the library's group (empty where the library has no group calls).
using LibraryGroupFn = std::function<infiniStatus_t(char* why, size_t why_size)>;

// A call of a rank: refused after an asynchronous failure, nothing for count 0, translated, then
// issued at once (inside the library's group, where one is open) or, in a group of a library
// without group calls, deferred to the group's end.
infiniStatus_t SubmitCall(EngineRank& rank, const infinicclBackendCall& call,
                          infinirtStream_t stream, const VendorNumbers& numbers,
                          const LibraryGroupFn& start_library_group, const IssueFn& issue,
                          char* why, size_t why_size);

// CommGetAsyncError's start: true, with *status and why set, when the rank already failed.
bool KnownFailure(EngineRank& rank, infiniStatus_t* status, char* why, size_t why_size);

// Records an asynchronous failure of the rank (every later call answers it) and says it.
void RecordAsyncFailure(EngineRank& rank, infiniStatus_t failure, const std::string& what,
                        infiniStatus_t* status, char* why, size_t why_size);

// The data of a call that moves without reducing, as bytes: the count in bytes (BAD_PARAM when
// it overflows a size_t).
infiniStatus_t CountInBytes(const infinicclBackendCall& call, size_t* bytes, std::string* why);

// --- Groups ------------------------------------------------------------------------------------
//
// The calling thread's group (nested: only the outermost end issues). Where the library has
// group calls of its own, the engine issues a group's calls at once inside one library group
// (JoinLibraryGroup, then EndGroup with end_library). Where it has none, the calls are deferred
// to the group's end and issued there in their order, each on its own; point-to-point calls
// then wait for their peers one at a time, so a group whose Sends and Recvs would wait for each
// other (a ring) is refused whole (NOT_IMPLEMENTED) before anything is issued.

// One deferred call. queue names the rank's stream (the order its calls execute in); clique,
// rank and peer match a Send with its Recv.
struct DeferredCall {
  const void* queue_rank;
  infinirtStream_t stream;
  uint64_t clique;
  int rank;
  infinicclCallKind_t kind;
  int peer;  // Send's and Recv's peer
  std::function<infiniStatus_t(char* why, size_t why_size)> issue;
};

// The table's GroupStart.
infiniStatus_t StartGroup();
bool InGroup();
// Starts the library's group once per group of this thread (start answers the vendor's call).
infiniStatus_t JoinLibraryGroup(const std::function<infiniStatus_t(char*, size_t)>& start,
                                char* why, size_t why_size);
void Defer(DeferredCall call);
// Ends the thread's group; the outermost end issues what was deferred, then ends the library's
// group where one was started (end_library may be empty).
infiniStatus_t EndGroup(const std::function<infiniStatus_t(char*, size_t)>& end_library,
                        const char* library, char* why, size_t why_size);

// Whether the point-to-point calls of deferred, issued one at a time in their streams' order,
// would wait for each other forever; why names one that would.
bool WouldDeadlock(const std::vector<DeferredCall>& deferred, std::string* why);

}  // namespace infiniccl_engine

#endif  // INFINIRT_PLUGINS_COMMON_COLLECTIVE_ENGINE_H_
