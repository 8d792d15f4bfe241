// At process exit InfiniRT tears itself down (queued work done, worker threads joined, plugins
// unloaded), and calls made after that — from atexit handlers or static destructors that run
// later — answer infinirtErrorCudartUnloading, as CUDA's runtime does, instead of loading the
// plugins again.
//
// Not a GoogleTest program: what it checks happens after main returns. The check runs in an
// atexit handler registered before InfiniRT's own, so it runs after InfiniRT's; it ends the
// process with _exit, whose status CTest reads.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>

#include "infinirt.h"
#include "test_support.h"

namespace {

// Threads before InfiniRT started: the main thread, and ThreadSanitizer's own thread, which it
// starts with the first other thread (ThreadsBeforeInfiniRT starts one to make it exist).
int g_threads_at_start = 0;

void CheckAfterTeardown() {
  int failures = 0;
  int count = -1;
  const infinirtError_t error = infinirtGetDeviceCount(&count);
  if (error != infinirtErrorCudartUnloading) {
    std::fprintf(stderr, "after exit: infinirtGetDeviceCount returned %s, expected %s\n",
                 infinirtGetErrorName(error), infinirtGetErrorName(infinirtErrorCudartUnloading));
    ++failures;
  }
  void* memory = nullptr;
  if (infinirtMalloc(&memory, 16) != infinirtErrorCudartUnloading) {
    std::fprintf(stderr, "after exit: infinirtMalloc did not answer CudartUnloading\n");
    ++failures;
  }
  // The worker threads of the CPU backend are gone: only the threads from before are left.
  const int threads = infinirt::testing::ProcessThreadCountAfterJoins(g_threads_at_start);
  if (threads != g_threads_at_start) {
    std::fprintf(stderr, "after exit: %d threads remain, expected %d\n", threads,
                 g_threads_at_start);
    ++failures;
  }
  std::fprintf(stderr, "exit teardown: %s\n", failures ? "FAILED" : "ok");
  std::fflush(stderr);
  _exit(failures ? 1 : 0);
}

void Run() {
  infinirtStream_t stream;
  static char source[1 << 16], destination[1 << 16];
  void* device = nullptr;
  if (infinirtStreamCreate(&stream) != infinirtSuccess ||
      infinirtMalloc(&device, sizeof source) != infinirtSuccess) {
    std::fprintf(stderr, "set-up failed\n");
    _exit(2);
  }
  // Leave work queued, a stream, and an allocation behind: teardown must handle them.
  for (int i = 0; i < 100; ++i) {
    infinirtMemcpyAsync(device, source, sizeof source, infinirtMemcpyHostToDevice, stream);
    infinirtMemcpyAsync(destination, device, sizeof source, infinirtMemcpyDeviceToHost, stream);
  }
}

}  // namespace

int main() {
  g_threads_at_start = infinirt::testing::ThreadsBeforeInfiniRT();
  std::atexit(CheckAfterTeardown);  // before InfiniRT registers its handler: runs after it
  Run();
  return 0;
}
