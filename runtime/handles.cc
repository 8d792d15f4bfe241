#include "infinirt/handles.hpp"

#include <string>
#include <utility>

#include "infinirt/error.hpp"
#include "runtime_log.h"

namespace infinirt {

namespace {

std::string Flags(const char* call, unsigned int flags) {
  return std::string(call) + "(flags=" + std::to_string(flags) + ")";
}

}  // namespace

Stream::Stream(unsigned int flags) {
  check(infinirtStreamCreateWithFlags(&stream_, flags),
        [&] { return Flags("infinirtStreamCreateWithFlags", flags); });
}

Stream::~Stream() { reset(); }

Stream::Stream(Stream&& other) noexcept : stream_(std::exchange(other.stream_, nullptr)) {}

Stream& Stream::operator=(Stream&& other) noexcept {
  if (this != &other) {
    reset();
    stream_ = std::exchange(other.stream_, nullptr);
  }
  return *this;
}

void Stream::reset() noexcept {
  if (stream_ == nullptr) return;
  ReportIfFailed(infinirtStreamDestroy(stream_), "infinirtStreamDestroy in ~Stream");
  stream_ = nullptr;
}

void Stream::synchronize() const { INFINIRT_CHECK(infinirtStreamSynchronize(stream_)); }

bool Stream::query() const {
  const infinirtError_t status = infinirtStreamQuery(stream_);
  if (status == infinirtErrorNotReady) return false;
  INFINIRT_CHECK(status);
  return true;
}

void Stream::waitEvent(infinirtEvent_t event) const {
  INFINIRT_CHECK(infinirtStreamWaitEvent(stream_, event, 0));
}

Event::Event(unsigned int flags) {
  check(infinirtEventCreateWithFlags(&event_, flags),
        [&] { return Flags("infinirtEventCreateWithFlags", flags); });
}

Event::~Event() { reset(); }

Event::Event(Event&& other) noexcept : event_(std::exchange(other.event_, nullptr)) {}

Event& Event::operator=(Event&& other) noexcept {
  if (this != &other) {
    reset();
    event_ = std::exchange(other.event_, nullptr);
  }
  return *this;
}

void Event::reset() noexcept {
  if (event_ == nullptr) return;
  ReportIfFailed(infinirtEventDestroy(event_), "infinirtEventDestroy in ~Event");
  event_ = nullptr;
}

void Event::record(infinirtStream_t stream) const {
  INFINIRT_CHECK(infinirtEventRecord(event_, stream));
}

bool Event::query() const {
  const infinirtError_t status = infinirtEventQuery(event_);
  if (status == infinirtErrorNotReady) return false;
  INFINIRT_CHECK(status);
  return true;
}

void Event::synchronize() const { INFINIRT_CHECK(infinirtEventSynchronize(event_)); }

float Event::elapsedSince(const Event& start) const {
  float milliseconds = 0;
  INFINIRT_CHECK(infinirtEventElapsedTime(&milliseconds, start.event_, event_));
  return milliseconds;
}

GraphExec::GraphExec(infinirtGraph_t graph) {
  INFINIRT_CHECK(infinirtGraphInstantiate(&exec_, graph, 0));
}

GraphExec::~GraphExec() { reset(); }

GraphExec::GraphExec(GraphExec&& other) noexcept : exec_(std::exchange(other.exec_, nullptr)) {}

GraphExec& GraphExec::operator=(GraphExec&& other) noexcept {
  if (this != &other) {
    reset();
    exec_ = std::exchange(other.exec_, nullptr);
  }
  return *this;
}

void GraphExec::reset() noexcept {
  if (exec_ == nullptr) return;
  ReportIfFailed(infinirtGraphExecDestroy(exec_), "infinirtGraphExecDestroy in ~GraphExec");
  exec_ = nullptr;
}

void GraphExec::launch(infinirtStream_t stream) const {
  INFINIRT_CHECK(infinirtGraphLaunch(exec_, stream));
}

}  // namespace infinirt
