// At process exit InfiniRT tears itself down (queued work done, worker threads joined, plugins
// unloaded), and calls made after that — from atexit handlers or static destructors that run
// later — answer infinirtErrorCudartUnloading, as CUDA's runtime does, instead of loading the
// plugins again.
//
// Over a vendor runtime (ctest: lifecycle_exit_teardown_nvidia_emulated), the teardown also runs
// before the runtime's own teardown at exit, so it can still call it.
//
// With --idle-thread a thread that has called InfiniRT is still alive at exit. It might be inside
// a call, so the teardown frees nothing then (the worker threads stay); it still waits for queued
// work, and every call after it, that thread's included, answers CudartUnloading.
//
// Not a GoogleTest program: what it checks happens after main returns. The check runs in an
// atexit handler registered before InfiniRT's own, so it runs after InfiniRT's; it ends the
// process with _exit, whose status CTest reads.
#include <unistd.h>

#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <thread>

#include "infinirt.h"
#include "test_support.h"

namespace {

// Threads before InfiniRT started: the main thread, and ThreadSanitizer's own thread, which it
// starts with the first other thread (ThreadsBeforeInfiniRT starts one to make it exist).
int g_threads_at_start = 0;
bool g_idle_thread = false;
bool g_on_cpu = false;  // device 0 is the CPU backend's
char g_source[1 << 16], g_destination[1 << 16];
infinirtStream_t g_stream;

// The idle thread: it has made its first call; it may make its call after the teardown; that
// call's answer plus one (0 until it has made it).
std::atomic<bool> g_idle_thread_called{false};
std::atomic<bool> g_wake_idle_thread{false};
std::atomic<int> g_idle_thread_answer{0};

void IdleThread() {
  int device = -1;
  if (infinirtGetDevice(&device) != infinirtSuccess) _exit(2);
  g_idle_thread_called.store(true);
  while (!g_wake_idle_thread.load()) std::this_thread::yield();
  g_idle_thread_answer.store(static_cast<int>(infinirtStreamSynchronize(g_stream)) + 1);
  for (;;) std::this_thread::yield();  // alive until the process ends
}

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
  if (infinirtFinalize() != infinirtErrorCudartUnloading) {
    std::fprintf(stderr, "after exit: infinirtFinalize did not answer CudartUnloading\n");
    ++failures;
  }
  if (std::memcmp(g_source, g_destination, sizeof g_source) != 0) {
    std::fprintf(stderr, "after exit: the queued copies had not completed\n");
    ++failures;
  }
  if (g_idle_thread) {
    g_wake_idle_thread.store(true);
    while (g_idle_thread_answer.load() == 0) std::this_thread::yield();
    const auto answer = static_cast<infinirtError_t>(g_idle_thread_answer.load() - 1);
    if (answer != infinirtErrorCudartUnloading) {
      std::fprintf(stderr, "after exit: the idle thread's infinirtStreamSynchronize returned %s\n",
                   infinirtGetErrorName(answer));
      ++failures;
    }
  }
  // The worker threads of the CPU backend are gone: only the threads from before are left
  // (unless a calling thread was alive, when the teardown leaves them). A vendor runtime's own
  // threads are the vendor's to end.
  if (!g_idle_thread && g_on_cpu) {
    const int threads = infinirt::testing::ProcessThreadCountAfterJoins(g_threads_at_start);
    if (threads != g_threads_at_start) {
      std::fprintf(stderr, "after exit: %d threads remain, expected %d\n", threads,
                   g_threads_at_start);
      ++failures;
    }
  }
  std::fprintf(stderr, "exit teardown: %s\n", failures ? "FAILED" : "ok");
  std::fflush(stderr);
  _exit(failures ? 1 : 0);
}

void Run() {
  for (size_t i = 0; i < sizeof g_source; ++i) g_source[i] = static_cast<char>(i * 7 + 1);
  void* device = nullptr;
  if (infinirtStreamCreate(&g_stream) != infinirtSuccess ||
      infinirtMalloc(&device, sizeof g_source) != infinirtSuccess) {
    std::fprintf(stderr, "set-up failed\n");
    _exit(2);
  }
  infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
  g_on_cpu = infinirtDeviceGetType(&type, 0) == infinirtSuccess && type == INFINI_DEVICE_CPU;
  if (g_idle_thread) {
    std::thread(IdleThread).detach();
    while (!g_idle_thread_called.load()) std::this_thread::yield();
  }
  // Leave work queued, a stream, and an allocation behind: teardown must handle them.
  for (int i = 0; i < 100; ++i) {
    infinirtMemcpyAsync(device, g_source, sizeof g_source, infinirtMemcpyHostToDevice, g_stream);
    infinirtMemcpyAsync(g_destination, device, sizeof g_source, infinirtMemcpyDeviceToHost,
                        g_stream);
  }
}

}  // namespace

int main(int argc, char** argv) {
  g_idle_thread = argc > 1 && std::strcmp(argv[1], "--idle-thread") == 0;
  g_threads_at_start = infinirt::testing::ThreadsBeforeInfiniRT();
  std::atexit(CheckAfterTeardown);  // before InfiniRT registers its handler: runs after it
  Run();
  return 0;
}
