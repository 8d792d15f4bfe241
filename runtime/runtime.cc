#include "infinirt/runtime.hpp"

#include <atomic>
#include <sstream>
#include <string>
#include <utility>

#include "caching_allocator.h"
#include "runtime_log.h"
#include "scoped_device.h"

namespace infinirt {

namespace {

const char* KindName(infinirtMemcpyKind kind) {
  switch (kind) {
    case infinirtMemcpyHostToDevice:
      return "infinirtMemcpyHostToDevice";
    case infinirtMemcpyDeviceToHost:
      return "infinirtMemcpyDeviceToHost";
    default:
      return "infinirtMemcpyDeviceToDevice";
  }
}

// A copy in the runtime's stream; `wait`: then waits for the stream (the copy and the work
// queued before it). Not the C API's synchronous infinirtMemcpy: that one is ordered with the
// legacy default stream, which would tie every thread's runtime to every other's (and fail
// while another thread's runtime records a graph).
void Copy(void* dst, const void* src, size_t size, infinirtMemcpyKind kind, infinirtStream_t stream,
          bool wait, const Device& device) {
  auto call = [&](const char* function) {
    return std::string(function) + "(size=" + std::to_string(size) + ", " + KindName(kind) +
           ") on " + device.toString();
  };
  check(infinirtMemcpyAsync(dst, src, size, kind, stream),
        [&] { return call("infinirtMemcpyAsync"); });
  if (wait) {
    check(infinirtStreamSynchronize(stream),
          [&] { return call("infinirtStreamSynchronize after infinirtMemcpyAsync"); });
  }
}

// The runtime's own stream: non-blocking, so that it is not ordered with the legacy default
// stream (nor, through it, with the other threads' runtimes). A backend without non-blocking
// streams gets a blocking one.
infinirtStream_t CreateRuntimeStream(const Device& device) {
  infinirtStream_t stream = nullptr;
  infinirtError_t status = infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking);
  if (status == infinirtErrorNotSupported) {
    infinirtGetLastError();
    status = infinirtStreamCreate(&stream);
  }
  check(status, [&] { return "infinirtStreamCreate on " + device.toString(); });
  return stream;
}

}  // namespace

Runtime::Runtime(Device device, int ordinal, std::shared_ptr<detail::CachingAllocator> allocator)
    : device_(device), ordinal_(ordinal), allocator_(std::move(allocator)) {
  detail::ScopedDevice on_device(ordinal_);
  stream_ = CreateRuntimeStream(device_);
  try {
    front_ = allocator_->OpenFront(stream_);
  } catch (...) {
    infinirtStreamDestroy(stream_);
    throw;
  }
}

Runtime::~Runtime() {
  if (recording_) {  // a recording never stopped: discarded
    infinirtGraph_t graph = nullptr;
    if (infinirtStreamEndCapture(stream_, &graph) == infinirtSuccess) {
      infinirtGraphDestroy(graph);
    } else {
      infinirtGetLastError();
    }
    try {
      allocator_->ReleasePinned(pin_owner_);  // also ends the stream's pin mode
    } catch (const std::exception& error) {
      Warn(error.what());
    }
  }
  if (infiniop_handle_ != nullptr) infiniopDestroyHandle(infiniop_handle_);
  // The stream's work may still use memory of the allocator: it finishes first; then the
  // allocator is let go, and the stream last.
  ReportIfFailed(infinirtStreamSynchronize(stream_), "infinirtStreamSynchronize in ~Runtime");
  try {
    allocator_->CloseFront(front_);
    allocator_->StreamGone(stream_);  // its blocks may now serve any stream
  } catch (const std::exception& error) {
    Warn(error.what());
  }
  allocator_.reset();
  ReportIfFailed(infinirtStreamDestroy(stream_), "infinirtStreamDestroy in ~Runtime");
}

Runtime* Runtime::activate() {
  check(infinirtSetDevice(ordinal_),
        [&] { return "infinirtSetDevice(" + device_.toString() + ")"; });
  return this;
}

void Runtime::syncStream() { INFINIRT_CHECK(infinirtStreamSynchronize(stream_)); }

void Runtime::syncDevice() {
  detail::ScopedDevice on_device(ordinal_);
  check(infinirtDeviceSynchronize(),
        [&] { return "infinirtDeviceSynchronize on " + device_.toString(); });
}

infiniopHandle_t Runtime::infiniopHandle() {
  if (infiniop_handle_ != nullptr) return infiniop_handle_;
  detail::ScopedDevice on_device(ordinal_);  // the handle is made for the current device
  infiniopHandle_t handle = nullptr;
  const infiniStatus_t status = infiniopCreateHandle(&handle);
  if (status != INFINI_STATUS_SUCCESS) {
    check(status == INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED ? infinirtErrorNotSupported
                                                            : infinirtErrorUnknown,
          "infiniopCreateHandle on " + device_.toString() + ": InfiniOP status " +
              std::to_string(static_cast<int>(status)));
  }
  infiniop_handle_ = handle;
  return handle;
}

std::shared_ptr<Memory> Runtime::allocateMemory(size_t size) {
  // While recording, blocks belong to the graph (pin mode): none from or to the front cache.
  if (recording_) return allocator_->Allocate(size, stream_, nullptr);
  if (std::shared_ptr<Memory> memory = allocator_->AllocateFromFront(front_, size)) return memory;
  return allocator_->Allocate(size, stream_, front_);
}

std::shared_ptr<Memory> Runtime::allocatePinnedHostMemory(size_t size) {
  return allocator_->AllocatePinnedHost(size);
}

void Runtime::memcpyH2D(void* dst, const void* src, size_t size, bool async) {
  Copy(dst, src, size, infinirtMemcpyHostToDevice, stream_, !async, device_);
}

void Runtime::memcpyD2H(void* dst, const void* src, size_t size) {
  Copy(dst, src, size, infinirtMemcpyDeviceToHost, stream_, /*wait=*/true, device_);
}

void Runtime::memcpyD2D(void* dst, const void* src, size_t size, bool async) {
  Copy(dst, src, size, infinirtMemcpyDeviceToDevice, stream_, !async, device_);
}

infinirtEvent_t Runtime::createEvent() { return createEventWithFlags(infinirtEventDefault); }

infinirtEvent_t Runtime::createEventWithFlags(uint32_t flags) {
  detail::ScopedDevice on_device(ordinal_);
  infinirtEvent_t event = nullptr;
  check(infinirtEventCreateWithFlags(&event, flags), [&] {
    return "infinirtEventCreateWithFlags(flags=" + std::to_string(flags) + ") on " +
           device_.toString();
  });
  return event;
}

void Runtime::recordEvent(infinirtEvent_t event, infinirtStream_t stream) {
  INFINIRT_CHECK(infinirtEventRecord(event, stream != nullptr ? stream : stream_));
}

bool Runtime::queryEvent(infinirtEvent_t event) {
  const infinirtError_t status = infinirtEventQuery(event);
  if (status == infinirtErrorNotReady) return false;
  INFINIRT_CHECK(status);
  return true;
}

void Runtime::synchronizeEvent(infinirtEvent_t event) {
  INFINIRT_CHECK(infinirtEventSynchronize(event));
}

void Runtime::destroyEvent(infinirtEvent_t event) { INFINIRT_CHECK(infinirtEventDestroy(event)); }

float Runtime::elapsedTime(infinirtEvent_t start, infinirtEvent_t end) {
  float milliseconds = 0;
  INFINIRT_CHECK(infinirtEventElapsedTime(&milliseconds, start, end));
  return milliseconds;
}

void Runtime::streamWaitEvent(infinirtStream_t stream, infinirtEvent_t event) {
  INFINIRT_CHECK(infinirtStreamWaitEvent(stream != nullptr ? stream : stream_, event, 0));
}

// --- Graph recording ----------------------------------------------------------------------------

namespace {

[[noreturn]] void RefuseState(const char* what, const Device& device) {
  check(infinirtErrorIllegalState, std::string(what) + " on " + device.toString());
  __builtin_unreachable();
}

}  // namespace

void Runtime::startGraphRecording() {
  if (recording_) RefuseState("startGraphRecording: already recording", device_);
  check(infinirtStreamBeginCapture(stream_, infinirtStreamCaptureModeThreadLocal),
        [&] { return "infinirtStreamBeginCapture(thread-local) on " + device_.toString(); });
  pin_owner_ = detail::CachingAllocator::NewPinOwner();
  allocator_->BeginPin(stream_, pin_owner_);
  recording_ = true;
}

void Runtime::addGraphOperator(std::shared_ptr<GraphOperator> op) {
  if (op == nullptr) check(infinirtErrorInvalidValue, "addGraphOperator(nullptr)");
  if (!recording_) RefuseState("addGraphOperator: not recording", device_);
  op->run(stream_);
  recorded_.push_back(std::move(op));
}

std::shared_ptr<Graph> Runtime::stopGraphRecording() {
  if (!recording_) RefuseState("stopGraphRecording: not recording", device_);
  recording_ = false;
  allocator_->EndPin(stream_);
  std::vector<std::shared_ptr<GraphOperator>> operators = std::move(recorded_);
  recorded_.clear();
  const uint64_t owner = pin_owner_;
  infinirtGraph_t graph = nullptr;
  infinirtGraphExec_t exec = nullptr;
  infinirtError_t status = infinirtStreamEndCapture(stream_, &graph);
  if (status == infinirtSuccess) {
    status = infinirtGraphInstantiate(&exec, graph, 0);
    if (status != infinirtSuccess) infinirtGraphDestroy(graph);
  }
  if (status != infinirtSuccess) {
    allocator_->ReleasePinned(owner);  // nothing will replay the work
    check(status, [&] { return "stopGraphRecording on " + device_.toString(); });
  }
  try {
    return std::shared_ptr<Graph>(
        new Graph(graph, exec, stream_, std::move(operators), allocator_, owner));
  } catch (...) {
    infinirtGraphExecDestroy(exec);
    infinirtGraphDestroy(graph);
    allocator_->ReleasePinned(owner);
    throw;
  }
}

std::string Runtime::toString() const {
  std::ostringstream out;
  out << "Runtime(" << device_ << ", stream " << static_cast<const void*>(stream_) << ")";
  return out.str();
}

}  // namespace infinirt
