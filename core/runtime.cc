#include "runtime.h"

#include <dlfcn.h>
#include <pthread.h>

#include <algorithm>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <mutex>

#include "env.h"
#include "loader.h"
#include "log.h"

namespace infinirt::core {

std::atomic<Runtime*> Runtime::instance_{nullptr};
std::atomic<uint64_t> Runtime::generations_{0};
std::atomic<bool> Runtime::unloading_{false};
std::atomic<bool> Runtime::forked_child_{false};
Runtime* Runtime::abandoned_by_fork_ = nullptr;
Runtime* Runtime::abandoned_at_exit_ = nullptr;

namespace {

// Threads that have called InfiniRT and have not exited (ThreadState::counted_as_caller).
std::atomic<int> g_calling_threads{0};

void UncountExitingThread(void*) {
  // A thread-exit hook that runs later may call InfiniRT again: that call counts the thread anew.
  tls_thread_state.counted_as_caller = false;
  g_calling_threads.fetch_sub(1);
}

// A thread-specific key whose destructor uncounts a calling thread when it exits.
struct ThreadExitHook {
  bool created = false;
  pthread_key_t key{};
};

const ThreadExitHook& ExitHook() {
  static const ThreadExitHook hook = [] {
    ThreadExitHook created;
    created.created = pthread_key_create(&created.key, &UncountExitingThread) == 0;
    return created;
  }();
  return hook;
}

std::mutex& InitMutex() {
  static std::mutex mutex;
  return mutex;
}

// Parses one INFINIRT_VISIBLE_DEVICES token: a flat ordinal ("2") or "<backend>:<index>"
// ("nvidia:1"). Returns the ordinal in the full device list, or -1.
int ParseDeviceToken(const std::string& token, const std::vector<DeviceEntry>& all,
                     const std::vector<std::unique_ptr<Backend>>& backends) {
  auto parse_index = [](const std::string& text) -> int {
    if (text.empty() || text.size() > 9 ||
        !std::all_of(text.begin(), text.end(), [](char c) { return c >= '0' && c <= '9'; })) {
      return -1;
    }
    return std::stoi(text);
  };
  const size_t colon = token.find(':');
  if (colon == std::string::npos) {
    const int ordinal = parse_index(token);
    return ordinal >= 0 && ordinal < static_cast<int>(all.size()) ? ordinal : -1;
  }
  const std::string name = ToLower(token.substr(0, colon));  // backend names are lower case
  const int index = parse_index(token.substr(colon + 1));
  for (size_t ordinal = 0; ordinal < all.size(); ++ordinal) {
    if (backends[all[ordinal].backend]->name == name && all[ordinal].local_device == index) {
      return static_cast<int>(ordinal);
    }
  }
  return -1;
}

// Adds a sentence to a listing entry's reason.
void AppendReason(infinirtBackendProp* listing, const std::string& text) {
  std::string reason = listing->reason;
  reason += (reason.empty() ? "" : "; ") + text;
  std::snprintf(listing->reason, sizeof(listing->reason), "%s", reason.c_str());
}

}  // namespace

Runtime::Runtime() : generation_(++generations_) {
  ResetLogLevel();
  const std::string library_dir = LibraryDirectory();
  config_ = LoadConfig(library_dir);
  if (!GetEnv(EnvVar::INFINIRT_LOG_LEVEL) && config_.log_level) {
    if (!SetLogLevel(*config_.log_level)) {
      Log().error("config: {}: log_level '{}' is not one of off/error/warn/info/debug/trace",
                  config_.source, *config_.log_level);
    }
  }
  LoadResult loaded = LoadPlugins(config_, library_dir);
  backends_ = std::move(loaded.backends);
  listing_ = std::move(loaded.listing);
  listing_of_backend_ = std::move(loaded.listing_of_backend);
  BuildDeviceList(listing_of_backend_);
}

void Runtime::BuildDeviceList(const std::vector<int>& listing_of_backend) {
  std::vector<DeviceEntry> all;
  for (size_t b = 0; b < backends_.size(); ++b) {
    for (int local = 0; local < backends_[b]->device_count; ++local) {
      all.push_back({static_cast<int>(b), local, backends_[b]->device_type});
    }
  }
  // Accelerators first, by device type, then load order, then local index; the CPU last.
  auto rank = [](infiniDevice_t type) { return type == INFINI_DEVICE_CPU ? INT_MAX : int(type); };
  std::stable_sort(all.begin(), all.end(), [&](const DeviceEntry& a, const DeviceEntry& b) {
    return rank(a.type) < rank(b.type);
  });
  devices_ = all;
  std::string visibility;  // what chose the visible devices, for messages
  if (auto visible = GetEnv(EnvVar::INFINIRT_VISIBLE_DEVICES)) {
    visibility = "INFINIRT_VISIBLE_DEVICES='" + *visible + "'";
    ApplyVisibleDevices(*visible);
  } else if (config_.visible_devices) {
    visibility = "the \"visible_devices\" '" + *config_.visible_devices + "' of " + config_.source;
    ApplyVisibleDevices(*config_.visible_devices);
  }
  for (size_t b = 0; b < backends_.size(); ++b) {
    infinirtBackendProp& listing = listing_[listing_of_backend[b]];
    listing.deviceCount =
        static_cast<int>(std::count_if(devices_.begin(), devices_.end(), [&](const DeviceEntry& d) {
          return d.backend == static_cast<int>(b);
        }));
    const int hidden = backends_[b]->device_count - listing.deviceCount;
    if (hidden > 0) {
      AppendReason(&listing, std::to_string(hidden) + " of " +
                                 std::to_string(backends_[b]->device_count) +
                                 " device(s) hidden by " + visibility);
    }
  }
  no_device_reason_ = NoDeviceReason(all.size(), visibility);
  if (devices_.empty() && !all.empty()) Log().warn("no device is available: {}", no_device_reason_);
}

std::string Runtime::NoDeviceReason(size_t devices_found, const std::string& visibility) const {
  if (!devices_.empty()) return "";
  if (devices_found > 0) {
    return visibility + " hides all " + std::to_string(devices_found) + " device(s)";
  }
  if (backends_.empty()) return "no backend loaded (infinirt-info -v says why)";
  return "no loaded backend has a device (infinirt-info -v says why)";
}

void Runtime::ApplyVisibleDevices(const std::string& spec) {
  // As CUDA_VISIBLE_DEVICES: the listed devices, in the listed order; parsing stops at the first
  // token that names no device.
  const std::vector<DeviceEntry> all = devices_;
  devices_.clear();
  std::vector<bool> taken(all.size(), false);
  for (const std::string& token : SplitList(spec, ',')) {
    const int ordinal = ParseDeviceToken(token, all, backends_);
    if (ordinal < 0) {
      Log().warn("INFINIRT_VISIBLE_DEVICES: '{}' names no device; ignoring it and what follows",
                 token);
      break;
    }
    if (taken[ordinal]) continue;
    taken[ordinal] = true;
    devices_.push_back(all[ordinal]);
  }
  Log().debug("INFINIRT_VISIBLE_DEVICES='{}': {} of {} devices visible", spec, devices_.size(),
              all.size());
}

// Registered when the library is loaded, so that it runs late in exit (after the handlers of what
// was loaded or registered later): from then on nothing initialises, even in a process that had
// not initialised InfiniRT. Running it twice is harmless.
const bool Runtime::registered_at_load_ = std::atexit(&Runtime::TearDownAtExit) == 0;

Runtime& Runtime::GetCountingThisThread() {
  // Without the hook the thread stays counted after it exits: the teardown at exit then frees
  // less, never more.
  const ThreadExitHook& hook = ExitHook();
  if (hook.created) pthread_setspecific(hook.key, &tls_thread_state);
  tls_thread_state.counted_as_caller = true;
  // Sequentially consistent with TearDownAtExit's exchange of instance_ and its count of the
  // callers: either the teardown sees this thread counted and frees nothing, or this load
  // already sees no runtime and the call is refused.
  g_calling_threads.fetch_add(1, std::memory_order_seq_cst);
  Runtime* runtime = instance_.load(std::memory_order_seq_cst);
  return runtime ? *runtime : InitializeSlow();
}

Runtime& Runtime::InitializeSlow() {
  // Checked before the lock too: the teardown at exit holds it while it waits for queued work,
  // and a host function that calls InfiniRT must then be refused, not wait for it.
  if (unloading_.load()) throw RuntimeUnloading{};
  std::lock_guard<std::mutex> lock(InitMutex());
  if (Runtime* existing = instance_.load(std::memory_order_acquire)) return *existing;
  if (unloading_.load()) throw RuntimeUnloading{};
  if (forked_child_.load()) throw RuntimeForked{};
  // Once per process. The logger is created first: statics destroyed after this handler runs
  // must have been constructed before it was registered.
  static const bool registered = [] {
    Log();
    const bool at_fork = pthread_atfork(&Runtime::BeforeFork, &Runtime::AfterForkInParent,
                                        &Runtime::AfterForkInChild) == 0;
    return std::atexit(&Runtime::TearDownAtExit) == 0 && at_fork;
  }();
  if (!registered) Log().warn("could not register the teardown at exit or the fork handlers");
  Runtime* runtime = new Runtime();
  runtime->RegisterTeardownAfterNewBackends();
  instance_.store(runtime, std::memory_order_release);
  return *runtime;
}

// A vendor runtime registers its own teardown at exit when it first initialises, which happens
// while its plugin loads. Exit runs handlers in reverse order of registration, so the teardown is
// registered again after a kind of backend initialises for the first time: it then runs before
// the vendor runtime tears itself down, while the plugins can still call it, and refuses the
// calls of other threads before they reach a runtime being torn down.
void Runtime::RegisterTeardownAfterNewBackends() {
  static uint64_t types_seen = 0;  // bit t: a backend of device type t has initialised (locked)
  bool new_type = false;
  for (const auto& backend : backends_) {
    const uint64_t bit = uint64_t{1} << (std::min<int>(backend->device_type, 63));
    new_type |= (types_seen & bit) == 0;
    types_seen |= bit;
  }
  if (new_type && std::atexit(&Runtime::TearDownAtExit) != 0) {
    Log().warn("could not register the teardown at exit");
  }
}

void Runtime::Finalize() {
  if (unloading_.load()) throw RuntimeUnloading{};
  std::lock_guard<std::mutex> lock(InitMutex());
  if (unloading_.load()) throw RuntimeUnloading{};
  if (forked_child_.load()) throw RuntimeForked{};
  Runtime* runtime = instance_.exchange(nullptr, std::memory_order_acq_rel);
  delete runtime;
}

void Runtime::TearDownAtExit() {
  try {
    // Before the lock: calls made from now on are refused without waiting for it.
    unloading_.store(true, std::memory_order_seq_cst);
    std::lock_guard<std::mutex> lock(InitMutex());
    Runtime* runtime = instance_.exchange(nullptr, std::memory_order_seq_cst);
    if (runtime == nullptr) return;
    const int other_callers = g_calling_threads.load(std::memory_order_seq_cst) -
                              (tls_thread_state.counted_as_caller ? 1 : 0);
    if (other_callers > 0) {
      // Such a thread may be inside a call holding the runtime: its memory, handles and plugins
      // stay as they are, and the process's end reclaims them.
      Log().debug(
          "exit: {} other thread(s) that called InfiniRT are alive; waiting for queued "
          "work and leaving the runtime in place",
          other_callers);
      runtime->WaitForQueuedWork();
      abandoned_at_exit_ = runtime;
      return;
    }
    for (auto& backend : runtime->backends_) backend->keep_loaded = true;
    delete runtime;
  } catch (...) {
    // Nothing may escape an atexit handler.
  }
}

void Runtime::WaitForQueuedWork() {
  for (const DeviceEntry& entry : devices_) {
    backends_[entry.backend]->table.DeviceSynchronize(entry.local_device);
  }
}

// The init mutex is held across fork() so that the child never inherits it locked by a thread
// that does not exist there.
void Runtime::BeforeFork() { InitMutex().lock(); }

void Runtime::AfterForkInParent() { InitMutex().unlock(); }

void Runtime::AfterForkInChild() {
  // Only the forking thread exists in the child.
  g_calling_threads.store(tls_thread_state.counted_as_caller ? 1 : 0);
  Runtime* parents = instance_.exchange(nullptr, std::memory_order_acq_rel);
  if (parents != nullptr) {
    abandoned_by_fork_ = parents;
    forked_child_.store(true);
  }
  InitMutex().unlock();
}

infinirtError_t Runtime::ReleaseDeviceObjects(int device) {
  const DeviceEntry entry = devices_[device];
  Backend& owner = *backends_[entry.backend];
  if (auto error = owner.table.DeviceSynchronize(entry.local_device)) return error;
  ForgetPeerAccess(device);
  std::vector<uint64_t> retired;
  captures_.DiscardDevice(device, &retired);
  for (uint64_t handle : retired) RetireGraphHandle(handle);
  auto on_device = [&](const ObjectRecord& record) { return record.device == device; };
  auto release_all = [&](HandleTable& table, auto destroy) {
    ObjectRecord record;
    for (const auto& live : table.Snapshot(on_device)) {
      if (table.Remove(live.first, &record)) destroy(record);
    }
  };
  auto plugin_entry = [&](auto entry) {
    return [&owner, entry](const ObjectRecord& record) {
      (owner.table.*entry)(record.local_device, record.plugin_handle);
    };
  };
  // Execs before graphs, events before streams: a dependent goes before what it depends on.
  release_all(graph_execs_, [this](const ObjectRecord& record) { DestroyExec(record); });
  release_all(graphs_, [this](const ObjectRecord& record) { DestroyGraph(record); });
  release_all(events_, plugin_entry(&infinirtPluginTable::EventDestroy));
  release_all(streams_, [&owner](const ObjectRecord& record) {
    const auto end =
        (record.flags & kStreamAdopted) ? owner.table.StreamRelease : owner.table.StreamDestroy;
    end(record.local_device, record.plugin_handle);
  });
  // Stream-ordered allocations survive a device reset (CUDA); graph memory goes with its graph.
  const auto allocations = allocations_.Snapshot([&](const Allocation& a) {
    return a.device == device &&
           (a.kind == MemoryKind::kDevice || a.kind == MemoryKind::kPinnedHost ||
            a.kind == MemoryKind::kRegisteredHost || a.kind == MemoryKind::kManaged ||
            a.kind == MemoryKind::kIpcOpened);
  });
  for (const Allocation& allocation : allocations) {
    auto removed =
        allocations_.RemoveExact(allocation.base, [](const Allocation&) { return true; });
    if (!removed) continue;
    void* pointer = reinterpret_cast<void*>(removed->base);
    if (removed->kind == MemoryKind::kPinnedHost) {
      owner.table.FreeHost(removed->local_device, pointer);
    } else if (removed->kind == MemoryKind::kRegisteredHost) {
      owner.table.HostUnregister(removed->local_device, pointer);  // the memory is the program's
    } else if (removed->kind == MemoryKind::kIpcOpened) {
      CloseIpcOpens(owner, *removed);  // the memory is another process's
    } else {
      if (removed->kind == MemoryKind::kManaged) memory_hints_.Forget(removed->base, removed->size);
      owner.table.Free(removed->local_device, pointer);
    }
  }
  return infinirtSuccess;
}

void Runtime::DestroyGraph(const ObjectRecord& record) {
  delete static_cast<GraphHolder*>(record.plugin_handle);
}

void Runtime::DestroyExec(const ObjectRecord& record) {
  auto* exec = static_cast<ExecData*>(record.plugin_handle);
  Backend& owner = *backends_[record.backend];
  if (exec->plugin_exec) owner.table.GraphExecDestroy(record.local_device, exec->plugin_exec);
  if (exec->order_event) owner.table.EventDestroy(record.local_device, exec->order_event);
  {
    std::lock_guard<std::mutex> lock(exec->graph->allocations().exec_mutex());
    --exec->graph->allocations().live_execs;
  }
  graph_memory_.Release(exec->graph->AllocationsLeftLive());
  delete exec;
}

void Runtime::RetireGraphHandle(uint64_t handle) {
  ObjectRecord record;
  if (graphs_.Remove(handle, &record)) DestroyGraph(record);
}

uint64_t Runtime::MemPoolHandle(int device) {
  std::lock_guard<std::mutex> lock(mem_pool_mutex_);
  if (mem_pool_handles_.size() < devices_.size()) mem_pool_handles_.resize(devices_.size(), 0);
  uint64_t& handle = mem_pool_handles_[device];
  if (handle == 0) {
    ObjectRecord record;
    record.backend = devices_[device].backend;
    record.device = device;
    record.local_device = devices_[device].local_device;
    handle = mem_pools_.Insert(record);
  }
  return handle;
}

uint64_t Runtime::CurrentMemPool(int device) {
  {
    std::lock_guard<std::mutex> lock(mem_pool_mutex_);
    if (static_cast<size_t>(device) < current_mem_pools_.size() &&
        current_mem_pools_[device] != 0) {
      return current_mem_pools_[device];
    }
  }
  return MemPoolHandle(device);
}

void Runtime::SetCurrentMemPool(int device, uint64_t handle) {
  std::lock_guard<std::mutex> lock(mem_pool_mutex_);
  if (current_mem_pools_.size() < devices_.size()) current_mem_pools_.resize(devices_.size(), 0);
  current_mem_pools_[device] = handle;
  if (handle != 0) any_chosen_mem_pool_.store(true, std::memory_order_release);
}

bool Runtime::EnablePeerAccess(int device, int peer) {
  std::lock_guard<std::mutex> lock(peer_mutex_);
  return peer_access_.emplace(device, peer).second;
}

bool Runtime::DisablePeerAccess(int device, int peer) {
  std::lock_guard<std::mutex> lock(peer_mutex_);
  return peer_access_.erase({device, peer}) == 1;
}

void Runtime::CloseIpcOpens(Backend& owner, const Allocation& opened) {
  int opens = 0;
  {
    std::lock_guard<std::mutex> lock(ipc_mutex_);
    auto found = ipc_opens_.find(opened.base);
    if (found != ipc_opens_.end()) {
      opens = found->second;
      ipc_opens_.erase(found);
    }
  }
  for (int i = 0; i < opens; ++i) {
    owner.table.IpcCloseMemHandle(opened.local_device, reinterpret_cast<void*>(opened.base));
  }
}

void Runtime::ForgetPeerAccess(int device) {
  std::lock_guard<std::mutex> lock(peer_mutex_);
  for (auto pair = peer_access_.begin(); pair != peer_access_.end();) {
    pair = pair->first == device || pair->second == device ? peer_access_.erase(pair) : ++pair;
  }
}

Runtime::~Runtime() {
  // Everything the program left behind is released, device by device, before the plugins go.
  for (size_t device = 0; device < devices_.size(); ++device) {
    ReleaseDeviceObjects(static_cast<int>(device));
  }
  // Stream-ordered allocations survive a device reset but not finalize: back to their pools.
  for (const Allocation& allocation : allocations_.Snapshot(
           [](const Allocation& a) { return a.kind == MemoryKind::kStreamOrdered; })) {
    if (allocations_.RemoveExact(allocation.base, [](const Allocation&) { return true; })) {
      Backend& owner = *backends_[allocation.backend];
      owner.table.FreeAsync(allocation.local_device, reinterpret_cast<void*>(allocation.base),
                            INFINIRT_PLUGIN_STREAM_LEGACY);
    }
  }
  // Then the pools of the program's own (the default pools have no plugin handle).
  for (const auto& live : mem_pools_.Snapshot(
           [](const ObjectRecord& record) { return record.plugin_handle != nullptr; })) {
    ObjectRecord record;
    if (mem_pools_.Remove(live.first, &record)) {
      backends_[record.backend]->table.MemPoolDestroy(record.local_device, record.plugin_handle);
    }
  }
  // Backends' destructors finalize and unload the plugins, last loaded first.
  while (!backends_.empty()) backends_.pop_back();
}

Backend::~Backend() {
  if (initialized) table.Finalize();
  if (library && !keep_loaded) dlclose(library);
}

}  // namespace infinirt::core
