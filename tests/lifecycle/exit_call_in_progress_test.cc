// The teardown at exit waits for the calls other threads are inside: no call is still running
// in a plugin (and so, possibly, in a vendor runtime) when the teardown returns, which matters
// because a vendor runtime's own teardown runs right after InfiniRT's.
//
// Run over the faulty plugin with FAULTY_DELAY_MS=Malloc:500: a thread calls infinirtMalloc,
// which sleeps 500 ms in the plugin; main calls exit(0) 50 ms into it. A check registered before
// InfiniRT initialised runs after its teardown, and fails unless 500 ms have passed since the
// call began (the time is the test, not a flag the thread sets after the call: the teardown may
// end between the call's return and such a store). Not a GoogleTest program: the check happens
// after main returns; its _exit status is what CTest reads.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>

#include "infinirt.h"

namespace {

using Clock = std::chrono::steady_clock;
constexpr std::chrono::milliseconds kPluginDelay{500};  // FAULTY_DELAY_MS in CMakeLists.txt

std::atomic<bool> g_call_started{false};
Clock::time_point g_call_start;  // written before g_call_started

void CheckAfterTeardown() {
  const auto elapsed =
      std::chrono::duration_cast<std::chrono::milliseconds>(Clock::now() - g_call_start);
  const bool waited = elapsed >= kPluginDelay;
  std::fprintf(stderr, "teardown at exit ended %lld ms after the call began: %s\n",
               static_cast<long long>(elapsed.count()),
               waited ? "it waited for the call (ok)" : "the call was still running (FAILED)");
  std::fflush(stderr);
  _exit(waited ? 0 : 1);
}

void CallingThread() {
  int device = -1;
  if (infinirtGetDevice(&device) != infinirtSuccess) _exit(2);  // counted as a caller
  g_call_start = Clock::now();
  g_call_started.store(true);
  void* memory = nullptr;
  infinirtMalloc(&memory, 64);         // sleeps kPluginDelay in the plugin
  for (;;) std::this_thread::yield();  // alive until the process ends
}

}  // namespace

int main() {
  std::atexit(CheckAfterTeardown);  // before InfiniRT's handlers: runs after them
  int count = 0;
  if (infinirtGetDeviceCount(&count) != infinirtSuccess || count < 1) {
    std::fprintf(stderr, "no device\n");
    return 2;
  }
  std::thread(CallingThread).detach();
  while (!g_call_started.load()) std::this_thread::yield();
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // well inside the delayed call
  std::exit(0);
}
