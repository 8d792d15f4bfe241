// Test access to a host-emulated vendor runtime (tests/emulated_runtimes) that a plugin has
// loaded in this process: its call record and fault injection (emu_inspect.h), reached with
// dlopen(RTLD_NOLOAD) on the library file, so that two emulated runtimes loaded side by side
// (one per vendor) are told apart.
#ifndef INFINIRT_TESTS_COMMON_EMULATED_RUNTIME_H_
#define INFINIRT_TESTS_COMMON_EMULATED_RUNTIME_H_

#include <dlfcn.h>

#include <sstream>
#include <string>
#include <vector>

namespace infinirt::testing {

class EmulatedRuntime {
 public:
  // path: the emulated library file, as given to INFINIRT_<VENDOR>_RUNTIME.
  explicit EmulatedRuntime(const std::string& path)
      : handle_(dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD)) {
    if (handle_ == nullptr) return;
    call_count_ = reinterpret_cast<int (*)(const char*)>(dlsym(handle_, "emuCallCount"));
    call_log_ = reinterpret_cast<size_t (*)(char*, size_t)>(dlsym(handle_, "emuCallLog"));
    reset_ = reinterpret_cast<void (*)()>(dlsym(handle_, "emuResetCalls"));
    fail_ = reinterpret_cast<void (*)(const char*, int, int)>(dlsym(handle_, "emuFail"));
    clear_ = reinterpret_cast<void (*)()>(dlsym(handle_, "emuClearFailures"));
    live_ = reinterpret_cast<int (*)()>(dlsym(handle_, "emuLiveAllocations"));
  }
  ~EmulatedRuntime() {
    if (handle_ != nullptr) dlclose(handle_);  // drops only the reference taken above
  }
  EmulatedRuntime(const EmulatedRuntime&) = delete;
  EmulatedRuntime& operator=(const EmulatedRuntime&) = delete;

  // False when the library is not loaded in this process (or is not an emulated runtime).
  bool loaded() const { return handle_ != nullptr && call_count_ != nullptr; }

  int Calls(const std::string& function) const { return call_count_(function.c_str()); }
  // One line per call: "<function> dev=<device> <arguments>".
  std::vector<std::string> Log() const {
    std::string text(call_log_(nullptr, 0), '\0');
    call_log_(text.data(), text.size());
    std::vector<std::string> lines;
    std::istringstream stream(text.c_str());
    for (std::string line; std::getline(stream, line);) lines.push_back(line);
    return lines;
  }
  // The recorded calls of one function.
  std::vector<std::string> LogOf(const std::string& function) const {
    std::vector<std::string> lines;
    for (const std::string& line : Log()) {
      if (line.compare(0, function.size() + 1, function + " ") == 0) lines.push_back(line);
    }
    return lines;
  }
  void Reset() const { reset_(); }
  void Fail(const std::string& function, int after_calls, int status) const {
    fail_(function.c_str(), after_calls, status);
  }
  void ClearFailures() const { clear_(); }
  int LiveAllocations() const { return live_(); }
  // One of the runtime's own functions (a test queueing vendor work itself); NULL if absent.
  void* Symbol(const std::string& name) const { return dlsym(handle_, name.c_str()); }

 private:
  void* handle_ = nullptr;
  int (*call_count_)(const char*) = nullptr;
  size_t (*call_log_)(char*, size_t) = nullptr;
  void (*reset_)() = nullptr;
  void (*fail_)(const char*, int, int) = nullptr;
  void (*clear_)() = nullptr;
  int (*live_)() = nullptr;
};

}  // namespace infinirt::testing

#endif  // INFINIRT_TESTS_COMMON_EMULATED_RUNTIME_H_
