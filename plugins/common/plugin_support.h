// What every vendor plugin needs besides its translation: logging through the core's host
// table, the per-thread device binding that vendor runtimes require, name-based error
// translation, and the marking of host functions. (The guard that keeps exceptions from crossing
// the C boundary is the table builder's: plugin_table_builder.h.)
#ifndef INFINIRT_PLUGINS_COMMON_PLUGIN_SUPPORT_H_
#define INFINIRT_PLUGINS_COMMON_PLUGIN_SUPPORT_H_

#include <atomic>
#include <cstdint>
#include <exception>
#include <new>
#include <string>
#include <utility>
#include <vector>

#include "infinirt_plugin.h"

namespace infinirt::plugin {

// Logging through the host table the core handed to Initialize (nothing before it, or after
// Finalize).
class PluginLog {
 public:
  explicit PluginLog(const char* plugin) : plugin_(plugin) {}
  void Attach(const infinirtPluginHost* host) { host_.store(host); }
  void Detach() { host_.store(nullptr); }
  void operator()(infinirtLogLevel_t level, const std::string& message) const {
    const infinirtPluginHost* host = host_.load();
    if (host != nullptr && host->log != nullptr) host->log(level, plugin_, message.c_str());
  }
  // The host table it logs through (nullptr before Initialize and after Finalize).
  const infinirtPluginHost* host() const { return host_.load(); }

 private:
  const char* plugin_;
  std::atomic<const infinirtPluginHost*> host_{nullptr};
};

// The error whose name is "infinirt" + suffix (suffix as in "ErrorInvalidValue" or "Success"),
// or infinirtErrorUnknown when InfiniRT has no such error.
infinirtError_t ErrorFromSuffix(const std::string& suffix);

// The error with this number (CUDA's numbering), or infinirtErrorUnknown when there is none.
infinirtError_t ErrorFromNumber(int value);

// Vendor runtimes make "the current device" a property of the calling host thread. Each plugin
// keeps one binding per thread and re-selects the device only when the thread's binding is
// stale: another device, or bound before the runtime was (re)initialised.
class ThreadDeviceBinding {
 public:
  ThreadDeviceBinding() { Invalidate(); }
  // Starts a new generation: every thread's binding becomes stale. Generations are unique in
  // the process, so a binding made for an earlier object at the same address is stale too.
  void Invalidate() { generation_.store(NextGeneration()); }

  // Calls select(device) unless this thread is already bound to device in this generation.
  // select returns the vendor's status; its failure is returned and nothing is remembered.
  template <class Select>
  auto Bind(int device, Select&& select) -> decltype(select(device)) {
    Slot& slot = ThisThread();
    const uint64_t generation = generation_.load();
    if (slot.owner == this && slot.device == device && slot.generation == generation) {
      return decltype(select(device)){};
    }
    auto status = select(device);
    if (status == decltype(status){}) slot = Slot{this, device, generation};
    return status;
  }

 private:
  struct Slot {
    const ThreadDeviceBinding* owner = nullptr;
    int device = -1;
    uint64_t generation = 0;
  };
  static Slot& ThisThread() {
    thread_local Slot slot;
    return slot;
  }
  static uint64_t NextGeneration() {
    static std::atomic<uint64_t> next{1};
    return next.fetch_add(1);
  }
  std::atomic<uint64_t> generation_{0};
};

// Per-thread default streams for vendors without CUDA's cudaStreamPerThread handle: each host
// thread gets a blocking stream of its own per device, created on first use, which has the same
// semantics. The streams of a thread are destroyed when it exits, unless the plugin was
// finalised (or re-initialised: a new epoch) in between. One object per plugin.
class PerThreadStreams {
 public:
  using Create = void* (*)(int device);  // nullptr on failure
  using Destroy = void (*)(int device, void* stream);

  PerThreadStreams(Create create, Destroy destroy) : create_(create), destroy_(destroy) {}
  // Starts a new epoch: streams made before it are forgotten (call at Initialize).
  void NewEpoch() { epoch_.fetch_add(1); }
  // Stops destroying streams at thread exit (call at Finalize).
  void Retire() { epoch_.fetch_add(1); }

  // The calling thread's stream for device, or nullptr when it could not be created.
  void* Get(int device);

 private:
  Create create_;
  Destroy destroy_;
  std::atomic<uint64_t> epoch_{1};
};

// Host functions. Vendor runtimes forbid their own calls inside a host function without promising
// an answer (an error, or a deadlock). InfiniRT answers NotPermitted to the blocking ones: a plugin
// hands the vendor runtime HostCall::Run with a HostCall, which marks the thread while the caller's
// function runs, and its blocking entries refuse when InHostFunction() says so, before any vendor
// call.
struct HostCall {
  infinirtHostFn_t fn;
  void* user_data;
  bool once;  // deletes itself after running; false: a graph's, owned by its exec
  static void Run(void* call);
};
bool InHostFunction();
// NotPermitted, with a debug line naming the refused entry.
infinirtError_t RefuseInHostFunction(const PluginLog& log, const char* entry);

// Copies text into a fixed buffer, always terminated.
void CopyText(char* buffer, size_t size, const std::string& text);

}  // namespace infinirt::plugin

#endif  // INFINIRT_PLUGINS_COMMON_PLUGIN_SUPPORT_H_
