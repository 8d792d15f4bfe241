#include "infinirt/context.hpp"

#include <memory>
#include <vector>

#include "caching_allocator.h"
#include "infinirt/runtime.hpp"
#include "scoped_device.h"

namespace infinirt {

namespace detail {

// The calling thread's runtimes, one per device, destroyed with the thread (the newest first).
class ThreadRuntimes {
 public:
  ~ThreadRuntimes() {
    while (!runtimes_.empty()) runtimes_.pop_back();
  }

  static ThreadRuntimes& OfThisThread() {
    thread_local ThreadRuntimes runtimes;
    return runtimes;
  }

  Runtime* For(const Device& device) {
    for (const auto& runtime : runtimes_) {
      if (runtime->device() == device) return runtime.get();
    }
    const int ordinal = device.ordinal();
    runtimes_.push_back(std::unique_ptr<Runtime>(
        new Runtime(device, ordinal, CachingAllocator::For(device, ordinal))));
    return runtimes_.back().get();
  }

  Device Current() {
    if (!has_current_) {
      int ordinal = 0;
      INFINIRT_CHECK(infinirtGetDevice(&ordinal));
      current_ = Device::fromOrdinal(ordinal);
      has_current_ = true;
    }
    return current_;
  }

  void SetCurrent(const Device& device) {
    current_ = device;
    has_current_ = true;
  }

 private:
  std::vector<std::unique_ptr<Runtime>> runtimes_;
  Device current_;
  bool has_current_ = false;
};

}  // namespace detail

namespace context {

void setDevice(Device device) {
  detail::ThreadRuntimes& runtimes = detail::ThreadRuntimes::OfThisThread();
  runtimes.For(device)->activate();
  runtimes.SetCurrent(device);
}

Device getDevice() { return detail::ThreadRuntimes::OfThisThread().Current(); }

Runtime* getRuntime() {
  detail::ThreadRuntimes& runtimes = detail::ThreadRuntimes::OfThisThread();
  return runtimes.For(runtimes.Current());
}

}  // namespace context
}  // namespace infinirt
