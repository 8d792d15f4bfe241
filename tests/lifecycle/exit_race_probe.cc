// One run of the exit race (exit_race_test runs it 200 times): threads call InfiniRT in a loop
// while main calls exit(0). Every call must answer success or, once the teardown at exit has
// begun, infinirtErrorCudartUnloading; the process must end with status 0, not a crash.
//
//   lifecycle_exit_race_probe <run>
//
// <run> varies the timing: how long main lets the threads work before exit(0) (0 to ~2 ms) and
// whether main has called InfiniRT itself. Two threads call from the start; two make their first
// call only once main is about to exit, so that first calls (which count a thread as a caller)
// race the teardown too.
#include <unistd.h>

#include <atomic>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <thread>
#include <vector>

#include "infinirt.h"

// ThreadSanitizer sleeps a second at exit by default, to let threads run into a report; 50 ms is
// enough here and keeps 200 runs short.
extern "C" const char* __tsan_default_options() { return "atexit_sleep_ms=50"; }

namespace {

std::atomic<long> g_iterations{0};
std::atomic<bool> g_exit_near{false};

// Ends the process at once on an answer other than success or CudartUnloading.
void Check(infinirtError_t error, const char* call) {
  if (error == infinirtSuccess || error == infinirtErrorCudartUnloading) return;
  std::fprintf(stderr, "%s returned %s\n", call, infinirtGetErrorName(error));
  std::fflush(stderr);
  _exit(3);
}

// Copies to and from device memory on the per-thread stream, with an allocation and an event
// now and then, until the process ends.
void Hammer(bool wait_for_exit) {
  while (wait_for_exit && !g_exit_near.load()) std::this_thread::yield();
  char host[256] = {};  // this thread never returns: pending copies may use it
  void* device = nullptr;
  Check(infinirtMalloc(&device, sizeof host), "infinirtMalloc");
  for (long i = 0;; ++i) {
    if (device != nullptr) {
      Check(infinirtMemcpyAsync(device, host, sizeof host, infinirtMemcpyHostToDevice,
                                infinirtStreamPerThread),
            "infinirtMemcpyAsync");
      Check(infinirtMemcpyAsync(host, device, 64, infinirtMemcpyDeviceToHost,
                                infinirtStreamPerThread),
            "infinirtMemcpyAsync");
    }
    Check(infinirtStreamSynchronize(infinirtStreamPerThread), "infinirtStreamSynchronize");
    if (i % 16 == 0) {
      void* scratch = nullptr;
      const infinirtError_t allocated = infinirtMalloc(&scratch, 4096);
      Check(allocated, "infinirtMalloc");
      if (allocated == infinirtSuccess) Check(infinirtFree(scratch), "infinirtFree");
      infinirtEvent_t event;
      const infinirtError_t created = infinirtEventCreate(&event);
      Check(created, "infinirtEventCreate");
      if (created == infinirtSuccess) {
        Check(infinirtEventRecord(event, infinirtStreamPerThread), "infinirtEventRecord");
        Check(infinirtEventSynchronize(event), "infinirtEventSynchronize");
        Check(infinirtEventDestroy(event), "infinirtEventDestroy");
      }
    }
    g_iterations.fetch_add(1);
  }
}

}  // namespace

int main(int argc, char** argv) {
  const int run = argc > 1 ? std::atoi(argv[1]) : 0;
  if (run % 2 == 0) {
    int count = 0;
    Check(infinirtGetDeviceCount(&count), "infinirtGetDeviceCount");
  }
  std::vector<std::thread> threads;
  for (int t = 0; t < 4; ++t) threads.emplace_back(Hammer, /*wait_for_exit=*/t >= 2);
  for (std::thread& thread : threads) thread.detach();
  while (g_iterations.load() < 8) std::this_thread::yield();
  g_exit_near.store(true);
  std::this_thread::sleep_for(std::chrono::microseconds((run * 37) % 2000));
  std::exit(0);
}
