// What every vendor plugin needs besides its translation: logging through the core's host
// table, a guard that keeps exceptions from crossing the C boundary, the per-thread device
// binding that vendor runtimes require, and name-based error translation.
#ifndef INFINIRT_PLUGINS_COMMON_PLUGIN_SUPPORT_H_
#define INFINIRT_PLUGINS_COMMON_PLUGIN_SUPPORT_H_

#include <atomic>
#include <cstdint>
#include <exception>
#include <new>
#include <string>

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

 private:
  const char* plugin_;
  std::atomic<const infinirtPluginHost*> host_{nullptr};
};

// Runs an entry's body: no exception crosses the C boundary.
template <class Body>
infinirtError_t Guarded(const PluginLog& log, Body&& body) noexcept {
  try {
    return body();
  } catch (const std::bad_alloc&) {
    return infinirtErrorMemoryAllocation;
  } catch (const std::exception& exception) {
    log(INFINIRT_LOG_ERROR, std::string("internal error: ") + exception.what());
    return infinirtErrorUnknown;
  } catch (...) {
    return infinirtErrorUnknown;
  }
}

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
  // Starts a new generation: every thread's binding becomes stale (call at Initialize).
  void Invalidate() { generation_.fetch_add(1); }

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
  std::atomic<uint64_t> generation_{1};
};

// Copies text into a fixed buffer, always terminated.
void CopyText(char* buffer, size_t size, const std::string& text);

}  // namespace infinirt::plugin

#endif  // INFINIRT_PLUGINS_COMMON_PLUGIN_SUPPORT_H_
