// Owning wrappers of the C API's streams, events and graph executables, for code that prefers
// RAII to the Runtime's create/destroy calls. Each is movable, not copyable, and releases its
// handle in its destructor (which never throws).
#ifndef INFINIRT_HANDLES_HPP_
#define INFINIRT_HANDLES_HPP_

#include <utility>

#include "infinirt.h"
#include "infinirt/export.hpp"

namespace infinirt {

namespace detail {

// Reports a failed release (a destructor cannot throw) and clears the thread's last error.
INFINIRT_CXX_API void ReportFailedRelease(infinirtError_t code, const char* what) noexcept;

// Owns one handle of the C API, released by Destroy.
template <class Handle, infinirtError_t (*Destroy)(Handle)>
class UniqueHandle {
 public:
  UniqueHandle() = default;
  ~UniqueHandle() { reset(); }
  UniqueHandle(UniqueHandle&& other) noexcept : handle_(std::exchange(other.handle_, nullptr)) {}
  UniqueHandle& operator=(UniqueHandle&& other) noexcept {
    if (this != &other) {
      reset();
      handle_ = std::exchange(other.handle_, nullptr);
    }
    return *this;
  }
  UniqueHandle(const UniqueHandle&) = delete;
  UniqueHandle& operator=(const UniqueHandle&) = delete;

  Handle get() const { return handle_; }
  Handle* out() { return &handle_; }  // for the C call that creates it
  void reset() noexcept {
    if (handle_ == nullptr) return;
    ReportFailedRelease(Destroy(handle_), "releasing a handle in a destructor");
    handle_ = nullptr;
  }

 private:
  Handle handle_ = nullptr;
};

}  // namespace detail

class INFINIRT_CXX_API Stream {
 public:
  // A new stream on the calling thread's current device (the C API's).
  explicit Stream(unsigned int flags = infinirtStreamDefault);

  infinirtStream_t get() const { return stream_.get(); }
  void synchronize() const;
  // True when all work queued so far is done.
  bool query() const;
  void waitEvent(infinirtEvent_t event) const;

 private:
  detail::UniqueHandle<infinirtStream_t, &infinirtStreamDestroy> stream_;
};

class INFINIRT_CXX_API Event {
 public:
  explicit Event(unsigned int flags = infinirtEventDefault);

  infinirtEvent_t get() const { return event_.get(); }
  // Records the event in a stream (null: the legacy default stream).
  void record(infinirtStream_t stream = nullptr) const;
  // True when the work recorded before it is done.
  bool query() const;
  void synchronize() const;
  // Milliseconds from `start` to this event; both recorded and complete.
  float elapsedSince(const Event& start) const;

 private:
  detail::UniqueHandle<infinirtEvent_t, &infinirtEventDestroy> event_;
};

// An instantiated graph (infinirtGraphInstantiate); the graph it came from stays the caller's.
class INFINIRT_CXX_API GraphExec {
 public:
  explicit GraphExec(infinirtGraph_t graph);

  infinirtGraphExec_t get() const { return exec_.get(); }
  // Launches it in a stream (null: the legacy default stream).
  void launch(infinirtStream_t stream = nullptr) const;

 private:
  detail::UniqueHandle<infinirtGraphExec_t, &infinirtGraphExecDestroy> exec_;
};

}  // namespace infinirt

#endif  // INFINIRT_HANDLES_HPP_
