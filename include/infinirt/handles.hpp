// Owning wrappers of the C API's streams and events, for code that prefers RAII to the
// Runtime's create/destroy calls. Each is movable, not copyable, and releases its handle in its
// destructor (which never throws).
#ifndef INFINIRT_HANDLES_HPP_
#define INFINIRT_HANDLES_HPP_

#include "infinirt.h"
#include "infinirt/export.hpp"

namespace infinirt {

class INFINIRT_CXX_API Stream {
 public:
  // A new stream on the calling thread's current device (the C API's).
  explicit Stream(unsigned int flags = infinirtStreamDefault);
  ~Stream();
  Stream(Stream&& other) noexcept;
  Stream& operator=(Stream&& other) noexcept;
  Stream(const Stream&) = delete;
  Stream& operator=(const Stream&) = delete;

  infinirtStream_t get() const { return stream_; }
  void synchronize() const;
  // True when all work queued so far is done.
  bool query() const;
  void waitEvent(infinirtEvent_t event) const;

 private:
  void reset() noexcept;
  infinirtStream_t stream_ = nullptr;
};

class INFINIRT_CXX_API Event {
 public:
  explicit Event(unsigned int flags = infinirtEventDefault);
  ~Event();
  Event(Event&& other) noexcept;
  Event& operator=(Event&& other) noexcept;
  Event(const Event&) = delete;
  Event& operator=(const Event&) = delete;

  infinirtEvent_t get() const { return event_; }
  // Records the event in a stream (null: the legacy default stream).
  void record(infinirtStream_t stream = nullptr) const;
  // True when the work recorded before it is done.
  bool query() const;
  void synchronize() const;
  // Milliseconds from `start` to this event; both recorded and complete.
  float elapsedSince(const Event& start) const;

 private:
  void reset() noexcept;
  infinirtEvent_t event_ = nullptr;
};

// An instantiated graph (infinirtGraphInstantiate); the graph it came from stays the caller's.
class INFINIRT_CXX_API GraphExec {
 public:
  explicit GraphExec(infinirtGraph_t graph);
  ~GraphExec();
  GraphExec(GraphExec&& other) noexcept;
  GraphExec& operator=(GraphExec&& other) noexcept;
  GraphExec(const GraphExec&) = delete;
  GraphExec& operator=(const GraphExec&) = delete;

  infinirtGraphExec_t get() const { return exec_; }
  // Launches it in a stream (null: the legacy default stream).
  void launch(infinirtStream_t stream = nullptr) const;

 private:
  void reset() noexcept;
  infinirtGraphExec_t exec_ = nullptr;
};

}  // namespace infinirt

#endif  // INFINIRT_HANDLES_HPP_
