#include "infinirt/handles.hpp"

#include <string>

#include "infinirt/error.hpp"
#include "runtime_log.h"

namespace infinirt {

namespace detail {

void ReportFailedRelease(infinirtError_t code, const char* what) noexcept {
  ReportIfFailed(code, what);
}

}  // namespace detail

namespace {

std::string Flags(const char* call, unsigned int flags) {
  return std::string(call) + "(flags=" + std::to_string(flags) + ")";
}

// True when done, false while not ready; throws on anything else.
bool Ready(infinirtError_t status, const char* call) {
  if (status == infinirtErrorNotReady) return false;
  check(status, call);
  return true;
}

}  // namespace

Stream::Stream(unsigned int flags) {
  check(infinirtStreamCreateWithFlags(stream_.out(), flags),
        [&] { return Flags("infinirtStreamCreateWithFlags", flags); });
}

void Stream::synchronize() const { INFINIRT_CHECK(infinirtStreamSynchronize(get())); }

bool Stream::query() const { return Ready(infinirtStreamQuery(get()), "infinirtStreamQuery"); }

void Stream::waitEvent(infinirtEvent_t event) const {
  INFINIRT_CHECK(infinirtStreamWaitEvent(get(), event, 0));
}

Event::Event(unsigned int flags) {
  check(infinirtEventCreateWithFlags(event_.out(), flags),
        [&] { return Flags("infinirtEventCreateWithFlags", flags); });
}

void Event::record(infinirtStream_t stream) const {
  INFINIRT_CHECK(infinirtEventRecord(get(), stream));
}

bool Event::query() const { return Ready(infinirtEventQuery(get()), "infinirtEventQuery"); }

void Event::synchronize() const { INFINIRT_CHECK(infinirtEventSynchronize(get())); }

float Event::elapsedSince(const Event& start) const {
  float milliseconds = 0;
  INFINIRT_CHECK(infinirtEventElapsedTime(&milliseconds, start.get(), get()));
  return milliseconds;
}

GraphExec::GraphExec(infinirtGraph_t graph) {
  INFINIRT_CHECK(infinirtGraphInstantiate(exec_.out(), graph, 0));
}

void GraphExec::launch(infinirtStream_t stream) const {
  INFINIRT_CHECK(infinirtGraphLaunch(get(), stream));
}

}  // namespace infinirt
