// The C++ runtime layer: #include <infinirt/runtime.hpp> brings in all of it.
//
// A Runtime belongs to one thread and one device and has its own stream. Runtimes are made and
// kept by the thread's context (context.hpp); the names and meanings of its methods are those of
// InfiniCore's Runtime. Every failing C call throws infinirt::Error (error.hpp).
#ifndef INFINIRT_RUNTIME_HPP_
#define INFINIRT_RUNTIME_HPP_

#include <cstddef>
#include <cstdint>
#include <memory>
#include <string>
#include <vector>

#include "infiniop/handle.h"
#include "infinirt.h"
#include "infinirt/allocator.hpp"
#include "infinirt/context.hpp"
#include "infinirt/device.hpp"
#include "infinirt/error.hpp"
#include "infinirt/export.hpp"
#include "infinirt/graph.hpp"
#include "infinirt/handles.hpp"
#include "infinirt/memory.hpp"

namespace infinirt {

namespace detail {
class CachingAllocator;
struct FrontCache;
class ThreadRuntimes;
}  // namespace detail

class INFINIRT_CXX_API Runtime {
 public:
  // Waits for the stream's work, then releases the stream; never throws (a failure is logged).
  ~Runtime();
  Runtime(const Runtime&) = delete;
  Runtime& operator=(const Runtime&) = delete;

  // Makes this runtime's device the calling thread's current device; returns this runtime.
  Runtime* activate();
  Device device() const { return device_; }
  // The runtime's own stream: a non-blocking one (not ordered with the legacy default stream,
  // so runtimes of different threads do not wait for each other), or a blocking one on a
  // backend without non-blocking streams.
  infinirtStream_t stream() const { return stream_; }
  // The InfiniOP handle of this runtime's device (infiniop.h), made on first use and released
  // with the runtime. infinirt::Error (NotSupported) when the device type has no operator
  // backend.
  infiniopHandle_t infiniopHandle();

  // Waits for the runtime's stream; for the whole device.
  void syncStream();
  void syncDevice();

  // Device memory of at least `size` bytes (size > 0), freed when the last pointer goes.
  std::shared_ptr<Memory> allocateMemory(size_t size);
  // Page-locked host memory for copies to and from this device. On the CPU backend that is
  // ordinary memory (a warning says so once per process).
  std::shared_ptr<Memory> allocatePinnedHostMemory(size_t size);

  // Copies in the runtime's stream; `async` false then waits for the stream (the copy and
  // what came before it). memcpyD2H always waits: the caller reads the bytes next.
  void memcpyH2D(void* dst, const void* src, size_t size, bool async = true);
  void memcpyD2H(void* dst, const void* src, size_t size);
  void memcpyD2D(void* dst, const void* src, size_t size, bool async = true);

  // Events, created on this runtime's device.
  infinirtEvent_t createEvent();
  infinirtEvent_t createEventWithFlags(uint32_t flags);
  // Records in `stream`, or in the runtime's stream when null.
  void recordEvent(infinirtEvent_t event, infinirtStream_t stream = nullptr);
  // True when the work recorded before the event is done.
  bool queryEvent(infinirtEvent_t event);
  void synchronizeEvent(infinirtEvent_t event);
  void destroyEvent(infinirtEvent_t event);
  // Milliseconds between two recorded, completed events.
  float elapsedTime(infinirtEvent_t start, infinirtEvent_t end);
  // Work queued on `stream` after this waits for the event (null: the runtime's stream).
  void streamWaitEvent(infinirtStream_t stream, infinirtEvent_t event);

  // Graph recording. startGraphRecording begins capturing the runtime's stream (in the
  // thread-local capture mode: other threads' runtimes go on as usual) and turns the allocator's
  // pin mode on for it; addGraphOperator runs an operator on the stream, its work captured;
  // stopGraphRecording ends the capture, instantiates the graph and turns pin mode off.
  // Starting twice, adding or stopping without a start: infinirt::Error (IllegalState).
  bool isGraphRecording() const { return recording_; }
  void startGraphRecording();
  void addGraphOperator(std::shared_ptr<GraphOperator> op);
  std::shared_ptr<Graph> stopGraphRecording();

  // "Runtime(nvidia:0, stream 0x...)".
  std::string toString() const;

 private:
  friend class detail::ThreadRuntimes;
  // `ordinal`: the device's in the C API, which the caller has looked up already.
  Runtime(Device device, int ordinal, std::shared_ptr<detail::CachingAllocator> allocator);

  Device device_;
  int ordinal_;  // the C API's ordinal of device_
  infinirtStream_t stream_ = nullptr;
  std::shared_ptr<detail::CachingAllocator> allocator_;
  detail::FrontCache* front_ = nullptr;         // the allocator's front cache for stream_
  infiniopHandle_t infiniop_handle_ = nullptr;  // made by infiniopHandle()
  bool recording_ = false;
  uint64_t pin_owner_ = 0;  // while recording
  std::vector<std::shared_ptr<GraphOperator>> recorded_;
};

}  // namespace infinirt

#endif  // INFINIRT_RUNTIME_HPP_
