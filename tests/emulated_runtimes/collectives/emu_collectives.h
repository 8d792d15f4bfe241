// The host emulation behind every emulated collective library (tests only): the emulated NCCL
// (and MCCL), HCCL and CNCL are this core with the vendor's function names, prototypes and
// numbers around it. It proves an engine's translation, not a vendor's library.
//
// The collectives of communicators made in one process are computed on the host, over the
// emulated runtime's "device" memory (host memory), in host functions queued on the emulated
// runtime's streams, so that stream order holds as on a device. A rank's host function waits
// (on a worker of the emulated runtime) until every rank's stream has reached the same
// collective, as a vendor's kernels wait for their peers; a Send waits for its Recv. A group's
// calls of one rank and stream are one host function (the library fuses them: a ring of Sends
// and Recvs cannot wait for itself); calls outside a group are one host function each.
//
// Every call is recorded ("<function> <arguments>", streams as %p) and may be failed on request:
// the emu* inspection functions of emu_inspect.h, exported by each library, reach the record.
#ifndef INFINIRT_TESTS_EMULATED_RUNTIMES_COLLECTIVES_EMU_COLLECTIVES_H_
#define INFINIRT_TESTS_EMULATED_RUNTIMES_COLLECTIVES_EMU_COLLECTIVES_H_

#include <chrono>
#include <cstddef>
#include <string>

#define EMU_EXPORT extern "C" __attribute__((visibility("default")))

namespace emu_ccl {

// The element types and operators the core computes with (each vendor maps its numbers).
enum class Elem { kI8, kU8, kI16, kU16, kI32, kU32, kI64, kU64, kF16, kBF16, kF32, kF64 };
enum class Op { kSum, kProd, kMax, kMin, kAvg };
enum class Kind { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter, kSend, kRecv };

// What went wrong, for the vendor to answer in its own numbers.
enum class Outcome {
  kOk,
  kInvalidArgument,
  kInvalidUsage,  // the ranks disagree, no group is open
  kRuntimeError,  // the emulated runtime refused
  kSystemError,   // the peers never came (timeout)
  kRemoteError,   // a rank of the clique aborted
};

// What every rank of a collective must agree on.
struct Operation {
  Kind kind;
  size_t count;
  Elem dtype;
  Op op;
  int root;  // the root, or the peer of Send and Recv
};

struct Part {
  const void* send = nullptr;
  void* recv = nullptr;
};

// The emulated runtime the library runs on (the instance the vendor plugin loaded).
struct Runtime {
  // Queues fn(data) on a stream; 0 on success.
  int (*launch_host_func)(void* stream, void (*fn)(void*), void* data) = nullptr;
  bool (*capturing)(void* stream) = nullptr;
  int (*current_device)() = nullptr;
  int (*device_count)() = nullptr;
  // The device of a stream, or nullptr where the runtime cannot tell (the current device is
  // then checked: an engine issues with the stream's device current).
  int (*stream_device)(void* stream) = nullptr;
  // Makes a device current on this thread (nullptr: launching needs no current device). A
  // group's end launches each rank's work with the rank's device current, then restores it.
  int (*set_device)(int device) = nullptr;
};

// A function of the runtime library named by environment variable `variable` (already loaded).
void* RuntimeFunction(const char* variable, const std::string& name);
void SetRuntime(const Runtime& runtime);

// Every exported function starts here: the record line, then an injected failure (the vendor's
// result) or 0.
int Enter(const std::string& function, const std::string& arguments);
void SetLastError(const std::string& text);
const char* LastError();

std::string Pointer(const void* p);
size_t SizeOf(Elem dtype);
// How long a rank waits for its peers: EMU_CCL_TIMEOUT_MS, else EMU_NCCL_TIMEOUT_MS, else 20 s.
std::chrono::milliseconds Timeout();

struct Comm;
std::string CommText(const Comm* comm);
int RankOf(const Comm* comm);
int CountOf(const Comm* comm);
int DeviceOf(const Comm* comm);

// n communicators of one clique, rank r on devices[r]. kInvalidArgument for a device out of
// range or given twice.
Outcome InitAll(int n, const int* devices, Comm** comms);
// One rank of a clique met by `id` (ranks of one process: other threads), on `device`.
Outcome InitRank(const std::string& id, int nranks, int rank, int device, Comm** comm);
// Waits for the rank's queued work, then frees it.
void Destroy(Comm* comm);
// Fails the clique's waiting ranks, then frees this one.
void Abort(Comm* comm);
Outcome AsyncError(Comm* comm);

// A call: checked, then queued at once or at the end of the thread's group. why says what a
// refusal is about.
Outcome Submit(Comm* comm, const Operation& operation, const Part& part, void* stream);
// "comm=r/n send=.. recv=.. count=.. dtype=.. stream=.. group=..".
std::string CallText(const Comm* comm, const void* send, const void* recv, size_t count, int dtype,
                     void* stream);

int GroupDepth();
void GroupStart();
// The outermost end queues the group's calls; `injected` (a failure of the end itself) drops
// them, as a library cleans up a failed group.
Outcome GroupEnd(bool injected);

}  // namespace emu_ccl

#endif  // INFINIRT_TESTS_EMULATED_RUNTIMES_COLLECTIVES_EMU_COLLECTIVES_H_
