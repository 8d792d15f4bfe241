// The process-wide runtime: loaded backends, the flat device ordinal space, the handle tables
// and the allocation registry. Created lazily by the first call (or infinirtInit) and torn down
// by infinirtFinalize.
#ifndef INFINIRT_CORE_RUNTIME_H_
#define INFINIRT_CORE_RUNTIME_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "allocation_registry.h"
#include "backend.h"
#include "capture.h"
#include "config.h"
#include "graph.h"
#include "handles.h"
#include "infinirt.h"
#include "memory_hints.h"
#include "thread_state.h"

namespace infinirt::core {

// One entry of the flat device ordinal space.
struct DeviceEntry {
  int backend = -1;       // index in Runtime::backends
  int local_device = -1;  // the backend's own device index
  infiniDevice_t type = INFINI_DEVICE_CPU;
};

// Thrown by Runtime::Get once the process is exiting and the runtime has been torn down; the
// API answers infinirtErrorCudartUnloading, as CUDA's runtime does.
struct RuntimeUnloading {};

// Thrown by Runtime::Get in a child process forked while the parent's runtime was initialised:
// the parent's worker threads do not exist in the child and its plugins' state cannot be
// trusted, so the child cannot use InfiniRT (the API answers infinirtErrorInitializationError,
// as CUDA's runtime does). A child of a process that had not initialised InfiniRT, or that had
// finalised it, initialises normally.
struct RuntimeForked {};

class Runtime {
 public:
  // The runtime, initialising it on first use. Never null; throws RuntimeUnloading once the
  // teardown at process exit has begun. A thread's first call counts it as a caller.
  static Runtime& Get() {
    if (__builtin_expect(!tls_thread_state.counted_as_caller, 0)) return GetCountingThisThread();
    Runtime* runtime = instance_.load(std::memory_order_acquire);
    return __builtin_expect(runtime != nullptr, 1) ? *runtime : InitializeSlow();
  }
  // The runtime when this thread can use it with no set-up (the thread is counted as a caller
  // and the runtime is initialised), else null: the start of the cheapest calls' fast paths,
  // which fall back to Get for everything else.
  static Runtime* IfReady() {
    if (__builtin_expect(!tls_thread_state.counted_as_caller, 0)) return nullptr;
    return instance_.load(std::memory_order_acquire);
  }
  // Throws RuntimeUnloading once the teardown at process exit has begun.
  static void Finalize();

  // Distinguishes this runtime from those before it (initialisations since the process began).
  uint64_t generation() const { return generation_; }

  Backend& backend(int index) { return *backends_[index]; }
  const std::vector<std::unique_ptr<Backend>>& backends() const { return backends_; }
  const std::vector<DeviceEntry>& devices() const { return devices_; }
  const std::vector<infinirtBackendProp>& listing() const { return listing_; }
  const Config& config() const { return config_; }
  // Why there is no device ("INFINIRT_VISIBLE_DEVICES='' hides all 4 device(s)"), or "" when
  // there is one.
  const std::string& no_device_reason() const { return no_device_reason_; }

  HandleTable& streams() { return streams_; }
  HandleTable& events() { return events_; }
  HandleTable& graphs() { return graphs_; }
  HandleTable& graph_execs() { return graph_execs_; }
  HandleTable& mem_pools() { return mem_pools_; }
  AllocationRegistry& allocations() { return allocations_; }
  Captures& captures() { return captures_; }
  GraphMemory& graph_memory() { return graph_memory_; }
  MemoryHints& memory_hints() { return memory_hints_; }

  // Graphs and execs are core objects (graph.h); these release one from its record.
  void DestroyGraph(const ObjectRecord& record);
  void DestroyExec(const ObjectRecord& record);
  // Removes a graph handle handed out during a capture that ended without a graph.
  void RetireGraphHandle(uint64_t handle);
  // The handle of a device's default memory pool, created on first use.
  uint64_t MemPoolHandle(int device);
  // The pool infinirtMallocAsync uses on a device (infinirtDeviceSetMemPool): its default pool
  // until another is set.
  uint64_t CurrentMemPool(int device);
  // handle 0: the device's default pool again.
  void SetCurrentMemPool(int device, uint64_t handle);
  // False until a program first sets a device's pool: MallocAsync skips the lookup of the
  // current pool until then.
  bool AnyChosenMemPool() const { return any_chosen_mem_pool_.load(std::memory_order_acquire); }

  // Peer access enabled from one device to another's memory (infinirtDeviceEnablePeerAccess).
  // Enable answers false when it already was, Disable when it was not.
  bool EnablePeerAccess(int device, int peer);
  bool DisablePeerAccess(int device, int peer);
  // A reset device loses its access to peers, and theirs to it.
  void ForgetPeerAccess(int device);
  // Closes memory of another process the program opened, as many times as it opened it.
  void CloseIpcOpens(Backend& owner, const Allocation& opened);

  // How many times the program has opened each address infinirtIpcOpenMemHandle gave (a handle
  // opened again gives the same address, and each open is closed once). Under ipc_mutex().
  std::mutex& ipc_mutex() { return ipc_mutex_; }
  std::map<uintptr_t, int>& ipc_opens() { return ipc_opens_; }

  // The device a thread starts on until it calls infinirtSetDevice (infinirtSetValidDevices).
  int first_device() const { return first_device_.load(std::memory_order_relaxed); }
  void set_first_device(int device) { first_device_.store(device, std::memory_order_relaxed); }

  // Waits for a device's work, then releases every stream, event, graph and allocation of the
  // device that the core knows (stream-ordered allocations excepted), as infinirtDeviceReset.
  // If the wait is refused (called from a host function), releases nothing and returns why.
  infinirtError_t ReleaseDeviceObjects(int device);

 private:
  Runtime();
  ~Runtime();
  static Runtime& InitializeSlow();
  static Runtime& GetCountingThisThread();
  // Registered with atexit when the library is loaded, at the first initialisation, and after
  // the first initialisation of each kind of backend.
  // From its start every call answers RuntimeUnloading and nothing initialises again. If no
  // other thread that has called InfiniRT is alive, it waits for queued work, releases
  // everything, joins the backends' threads and finalizes the plugins. Otherwise such a thread
  // may be inside a call, using the runtime: it waits for queued work and frees nothing.
  static void TearDownAtExit();
  // Registers TearDownAtExit once more when a kind of backend initialised for the first time,
  // so that it runs before the teardown its vendor runtime registered (called under the lock).
  void RegisterTeardownAfterNewBackends();
  // Waits for the work queued on every device (the first step of a teardown).
  void WaitForQueuedWork();
  // Registered with pthread_atfork at the first initialisation: no initialisation runs across
  // a fork, and a child abandons its copy of the parent's runtime (see RuntimeForked).
  static void BeforeFork();
  static void AfterForkInParent();
  static void AfterForkInChild();
  void BuildDeviceList(const std::vector<int>& listing_of_backend);
  void ApplyVisibleDevices(const std::string& spec);
  std::string NoDeviceReason(size_t devices_found, const std::string& visibility) const;

  static std::atomic<Runtime*> instance_;
  static std::atomic<uint64_t> generations_;
  static std::atomic<bool> unloading_;
  static const bool registered_at_load_;
  static std::atomic<bool> forked_child_;
  // The parent's runtime in a forked child: never used or destroyed (its threads are gone),
  // kept reachable so that leak checkers do not report it.
  static Runtime* abandoned_by_fork_;
  // The runtime left in place at exit because other threads were still calling InfiniRT; kept
  // reachable for the same reason.
  static Runtime* abandoned_at_exit_;

  const uint64_t generation_;

  Config config_;
  std::vector<std::unique_ptr<Backend>> backends_;
  std::vector<DeviceEntry> devices_;
  std::vector<infinirtBackendProp> listing_;
  std::vector<int> listing_of_backend_;
  std::string no_device_reason_;
  HandleTable streams_{HandleKind::kStream};
  HandleTable events_{HandleKind::kEvent};
  HandleTable graphs_{HandleKind::kGraph};
  HandleTable graph_execs_{HandleKind::kGraphExec};
  HandleTable mem_pools_{HandleKind::kMemPool};
  std::mutex mem_pool_mutex_;
  std::vector<uint64_t> mem_pool_handles_;   // by device; 0 until asked for
  std::vector<uint64_t> current_mem_pools_;  // by device; 0 for the default pool
  std::atomic<bool> any_chosen_mem_pool_{false};
  std::atomic<int> first_device_{0};
  std::mutex peer_mutex_;
  std::set<std::pair<int, int>> peer_access_;  // (device, peer)
  std::mutex ipc_mutex_;
  std::map<uintptr_t, int> ipc_opens_;
  AllocationRegistry allocations_;
  Captures captures_;
  GraphMemory graph_memory_;
  MemoryHints memory_hints_;
};

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_RUNTIME_H_
