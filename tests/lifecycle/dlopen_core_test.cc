// The core loaded with dlopen, as Python's ctypes loads it, by a program not linked with it. Its
// per-thread block uses the initial-exec TLS model (core/thread_state.h), which glibc serves from
// the static TLS space it keeps for dlopen, for the threads that already exist as well as for
// later ones. A thread started before the load and one started after it each keep their own
// last error.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <thread>

#include "infinirt.h"

namespace {

struct Core {
  void* library = nullptr;
  decltype(&infinirtSetDevice) set_device = nullptr;
  decltype(&infinirtGetDevice) get_device = nullptr;
  decltype(&infinirtPeekAtLastError) peek_at_last_error = nullptr;
};

// Makes the thread's last error InvalidDevice, and reports what the thread then reads back.
infinirtError_t FailAndPeek(const Core& core) {
  if (core.set_device(-1) != infinirtErrorInvalidDevice) return infinirtErrorUnknown;
  return core.peek_at_last_error();
}

// A successful call, and the thread's last error after it (success unless it failed before).
infinirtError_t SucceedAndPeek(const Core& core) {
  int device = -1;
  if (core.get_device(&device) != infinirtSuccess || device != 0) return infinirtErrorUnknown;
  return core.peek_at_last_error();
}

TEST(DlopenCore, ThreadsFromBeforeAndAfterTheLoadEachKeepTheirOwnLastError) {
  std::atomic<bool> loaded{false};
  Core core;
  infinirtError_t before_load_thread_saw = infinirtErrorUnknown;
  std::thread started_before([&] {
    while (!loaded.load()) std::this_thread::yield();
    before_load_thread_saw = FailAndPeek(core);
  });

  core.library = dlopen(INFINIRT_CORE_LIBRARY, RTLD_NOW | RTLD_LOCAL);
  ASSERT_NE(core.library, nullptr) << dlerror();
  core.set_device =
      reinterpret_cast<decltype(core.set_device)>(dlsym(core.library, "infinirtSetDevice"));
  core.get_device =
      reinterpret_cast<decltype(core.get_device)>(dlsym(core.library, "infinirtGetDevice"));
  core.peek_at_last_error = reinterpret_cast<decltype(core.peek_at_last_error)>(
      dlsym(core.library, "infinirtPeekAtLastError"));
  ASSERT_TRUE(core.set_device && core.get_device && core.peek_at_last_error);
  loaded.store(true);
  started_before.join();
  EXPECT_EQ(before_load_thread_saw, infinirtErrorInvalidDevice);

  infinirtError_t after_load_thread_saw = infinirtErrorUnknown;
  std::thread started_after([&] { after_load_thread_saw = SucceedAndPeek(core); });
  started_after.join();
  EXPECT_EQ(after_load_thread_saw, infinirtSuccess);
  // This thread has not failed a call either.
  EXPECT_EQ(SucceedAndPeek(core), infinirtSuccess);
}

}  // namespace
