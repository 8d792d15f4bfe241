#include "infinirt/runtime.hpp"

#include <sstream>
#include <string>
#include <utility>

#include "device_allocator.h"
#include "runtime_log.h"

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

// A copy in `stream` (asynchronous) or a synchronous one (stream null), checked.
void Copy(void* dst, const void* src, size_t size, infinirtMemcpyKind kind, infinirtStream_t stream,
          const Device& device) {
  const infinirtError_t status = stream != nullptr
                                     ? infinirtMemcpyAsync(dst, src, size, kind, stream)
                                     : infinirtMemcpy(dst, src, size, kind);
  check(status, [&] {
    return std::string(stream != nullptr ? "infinirtMemcpyAsync" : "infinirtMemcpy") +
           "(size=" + std::to_string(size) + ", " + KindName(kind) + ") on " + device.toString();
  });
}

}  // namespace

Runtime::Runtime(Device device, std::shared_ptr<detail::DeviceAllocator> allocator)
    : device_(device), ordinal_(device.ordinal()), allocator_(std::move(allocator)) {
  detail::ScopedDevice on_device(ordinal_);
  check(infinirtStreamCreate(&stream_),
        [&] { return "infinirtStreamCreate on " + device_.toString(); });
}

Runtime::~Runtime() {
  // The stream's work may still use memory of the allocator: it finishes first; then the
  // allocator is let go, and the stream last.
  ReportIfFailed(infinirtStreamSynchronize(stream_), "infinirtStreamSynchronize in ~Runtime");
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

std::shared_ptr<Memory> Runtime::allocateMemory(size_t size) { return allocator_->Allocate(size); }

std::shared_ptr<Memory> Runtime::allocatePinnedHostMemory(size_t size) {
  return allocator_->AllocatePinnedHost(size);
}

void Runtime::memcpyH2D(void* dst, const void* src, size_t size, bool async) {
  Copy(dst, src, size, infinirtMemcpyHostToDevice, async ? stream_ : nullptr, device_);
}

void Runtime::memcpyD2H(void* dst, const void* src, size_t size) {
  Copy(dst, src, size, infinirtMemcpyDeviceToHost, nullptr, device_);
}

void Runtime::memcpyD2D(void* dst, const void* src, size_t size, bool async) {
  Copy(dst, src, size, infinirtMemcpyDeviceToDevice, async ? stream_ : nullptr, device_);
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

std::string Runtime::toString() const {
  std::ostringstream out;
  out << "Runtime(" << device_ << ", stream " << static_cast<const void*>(stream_) << ")";
  return out.str();
}

}  // namespace infinirt
