// The engine of a vendor with a collective API of its own (HCCL for Ascend, CNCL for Cambricon),
// built on collective_engine.h. VendorEngineTable answers every entry of the engine's table the
// same way for each vendor: loading its library, communicators in one process and across
// processes, calls on the vendor stream behind an InfiniRT stream, groups, asynchronous failures,
// and the vendor's results as infiniStatus_t with the library's own words. A vendor's engine says
// only what is its own (a VendorEngine): its names and numbers, its functions, its quirks.
#ifndef INFINIRT_PLUGINS_COMMON_VENDOR_ENGINE_H_
#define INFINIRT_PLUGINS_COMMON_VENDOR_ENGINE_H_

#include <cstddef>
#include <memory>
#include <string>
#include <vector>

#include "collective_engine.h"
#include "infiniccl_backend.h"
#include "infinirt.h"

namespace infiniccl_engine {

// Every vendor's success result (HCCL_SUCCESS, CNCL_RET_SUCCESS); any other is a failure.
constexpr int kVendorSuccess = 0;

// A vendor's names and numbers. Its functions are named "<prefix><what>" in messages
// ("HcclAllReduce", "cnclGroupStart", "HcclGetCommAsyncError"), except those named here.
struct VendorFacts {
  const char* engine;            // the table's name: "hccl"
  const LibraryData* library;    // where its library is looked for, and the device type it serves
  const VendorNumbers* numbers;  // its dtypes, operators and result type
  const char* prefix;            // of its functions' names: "Hccl", "cncl"
  const char* init_all;          // the function CommInitAll calls: "HcclCommInitAll"
  const char* make_root_id;      // the function rank 0 makes the root id with: "HcclGetRootInfo"
  const char* init_rank;         // the function CommInitRank calls: "HcclCommInitRootInfo"
  const char* root_id_key;       // the store's key of the root id: "hccl/root_info"
  size_t root_id_bytes;          // the root id's size
  bool root_id_needs_device;     // whether rank 0 makes the root id with its device current
};

// How a communicator stands by the vendor's query of its asynchronous errors.
enum class AsyncState {
  kHealthy,      // no failure (or not one yet: still in progress)
  kQueryFailed,  // the query itself failed, with result
  kFailed,       // the communicator failed, with result
};

// What a vendor's engine does its own way. Results are the vendor's (kVendorSuccess or a
// failure); comm is the vendor's communicator. It lives as long as the process: communicators use
// its functions.
class VendorEngine {
 public:
  explicit VendorEngine(const VendorFacts& facts) : facts_(facts) {}
  virtual ~VendorEngine() = default;
  const VendorFacts& facts() const { return facts_; }

  // Resolves its functions in the library just opened; the required ones the library lacks are
  // added to *missing (Resolve of collective_engine.h).
  virtual void ResolveFunctions(const EngineLibrary& library, std::string* missing) = 0;
  // The library's words for a result, or nullptr.
  virtual const char* ErrorWords(int result) const = 0;
  virtual infiniStatus_t StatusOf(int result) const = 0;

  // One communicator per device of this process, in rank order (the vendor's device indices).
  virtual int InitAll(const std::vector<int>& devices, void** comms) const = 0;
  // Rank 0's root id (facts().root_id_bytes at root_id), which every rank's InitRank takes.
  virtual int MakeRootId(void* root_id) const = 0;
  // One rank of a job, with its device (the vendor's index) current.
  virtual int InitRank(int nranks, int rank, int device, void* root_id, void** comm) const = 0;
  virtual int Destroy(void* comm) const = 0;
  // Stops the communicator's work and releases it (a vendor without an abort destroys it).
  virtual int Abort(void* comm) const = 0;

  // The translated call, for the vendor stream (QueueNative).
  virtual std::unique_ptr<NativeWork> Work(void* comm, const infinicclBackendCall& call,
                                           VendorElements elements, int op) const = 0;
  // What goes on the stream before the call, in stream order (nothing unless the vendor's call
  // needs it); on failure why says what.
  virtual infiniStatus_t BeforeCall(const EngineRank& rank, const infinicclBackendCall& call,
                                    infinirtStream_t stream, std::string* why) const;

  // Whether the library has group calls (optional in older releases).
  virtual bool HasGroups() const = 0;
  virtual int GroupStart() const = 0;
  virtual int GroupEnd() const = 0;

  // Whether the library has <prefix>GetCommAsyncError (optional in older releases).
  virtual bool HasAsyncErrorQuery() const = 0;
  virtual AsyncState QueryAsyncError(void* comm, int* result) const = 0;

 private:
  VendorFacts facts_;
};

// The engine's table, its entries answered for vendor. An engine serves one vendor: the first
// given is kept, and must live as long as the process.
const infinicclBackendTable* VendorEngineTable(VendorEngine& vendor);

}  // namespace infiniccl_engine

#endif  // INFINIRT_PLUGINS_COMMON_VENDOR_ENGINE_H_
