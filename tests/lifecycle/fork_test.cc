// fork(): a child of a process whose runtime is initialised cannot use it (its worker threads
// are not in the child) and every call answers infinirtErrorInitializationError, as CUDA's
// runtime does; the child exits without hanging or crashing, and the parent is unaffected. A
// child forked before initialisation (or after infinirtFinalize) initialises its own runtime.
//
// Each child reports through its exit status: 0 when every check passed, otherwise the number
// of the first failed check. The parent waits for it with a bound.
#include <gtest/gtest.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <thread>

#include "infinirt.h"
#include "test_support.h"

namespace {

using infinirt::testing::Gate;

// Set in a forked child only.
bool in_forked_child = false;

}  // namespace

// LeakSanitizer's documented opt-out hook, consulted when its leak check at exit begins. The
// check locks every allocator lock; the sanitizer runtime of GCC <= 13 does not take those locks
// around fork(), so in a child forked while a parent thread was inside malloc one of them is
// held forever and the check hangs. The children therefore skip it; the parent's check at exit
// is unchanged. Outside sanitizer builds nothing calls this. Default visibility: the sanitizer
// runtime finds it through the dynamic symbol table, and the project builds hidden by default.
extern "C" __attribute__((visibility("default"))) int __lsan_is_turned_off() {
  return in_forked_child ? 1 : 0;
}

namespace {

// The child's exit status, or -1 when it did not exit normally (a crash), -2 when it did not
// end within the bound (a hang; it is killed).
int RunInChild(const std::function<int()>& body) {
  const pid_t pid = fork();
  if (pid == 0) {
    in_forked_child = true;
    std::exit(body());  // exit, not _exit: InfiniRT's exit teardown runs too
  }
  if (pid < 0) return -3;
  const auto deadline = std::chrono::steady_clock::now() + infinirt::testing::kTimeout;
  int status = 0;
  while (waitpid(pid, &status, WNOHANG) == 0) {
    if (std::chrono::steady_clock::now() > deadline) {
      kill(pid, SIGKILL);
      waitpid(pid, &status, 0);
      return -2;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return WIFEXITED(status) ? WEXITSTATUS(status) : -1;
}

// Every kind of call the child might make answers InitializationError.
int UseTheParentsRuntime(infinirtStream_t parents_stream, void* parents_memory) {
  int count = 0;
  if (infinirtGetDeviceCount(&count) != infinirtErrorInitializationError) return 1;
  void* memory = nullptr;
  if (infinirtMalloc(&memory, 64) != infinirtErrorInitializationError) return 2;
  if (infinirtStreamSynchronize(parents_stream) != infinirtErrorInitializationError) return 3;
  if (infinirtMemset(parents_memory, 1, 64) != infinirtErrorInitializationError) return 4;
  if (infinirtInit() != infinirtErrorInitializationError) return 5;
  if (infinirtFinalize() != infinirtErrorInitializationError) return 6;
  if (infinirtGetLastError() != infinirtErrorInitializationError) return 7;
  return 0;
}

// A child that owns its runtime: allocate, copy through a stream, verify.
int UseAFreshRuntime() {
  infinirtStream_t stream = nullptr;
  void* device = nullptr;
  char source[256], result[256] = {};
  for (int i = 0; i < 256; ++i) source[i] = static_cast<char>(i);
  if (infinirtStreamCreate(&stream) != infinirtSuccess) return 1;
  if (infinirtMalloc(&device, sizeof source) != infinirtSuccess) return 2;
  if (infinirtMemcpyAsync(device, source, sizeof source, infinirtMemcpyHostToDevice, stream) ||
      infinirtMemcpyAsync(result, device, sizeof source, infinirtMemcpyDeviceToHost, stream) ||
      infinirtStreamSynchronize(stream)) {
    return 3;
  }
  if (std::memcmp(source, result, sizeof source) != 0) return 4;
  return 0;  // the stream and the allocation are left for the exit teardown
}

void ExpectTheParentStillWorks(infinirtStream_t stream, void* memory) {
  EXPECT_EQ(infinirtMemsetAsync(memory, 7, 64, stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(static_cast<unsigned char*>(memory)[63], 7);
}

TEST(Fork, ChildOfAnInitialisedProcessGetsInitializationErrorAndExitsCleanly) {
  infinirtStream_t stream = nullptr;
  void* memory = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtMalloc(&memory, 64), infinirtSuccess);
  EXPECT_EQ(RunInChild([&] { return UseTheParentsRuntime(stream, memory); }), 0);
  ExpectTheParentStillWorks(stream, memory);
  EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
}

TEST(Fork, ChildForkedWhileTheParentsStreamsAreBusyExitsWithoutWaitingForThem) {
  infinirtStream_t stream = nullptr;
  void* memory = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtMalloc(&memory, 64), infinirtSuccess);
  Gate gate;
  ASSERT_EQ(gate.Block(stream), infinirtSuccess);
  ASSERT_TRUE(gate.WaitEntered());
  // The work queued behind the gate belongs to the parent's worker threads.
  ASSERT_EQ(infinirtMemsetAsync(memory, 1, 64, stream), infinirtSuccess);
  EXPECT_EQ(RunInChild([&] { return UseTheParentsRuntime(stream, memory); }), 0);
  gate.Open();
  ExpectTheParentStillWorks(stream, memory);
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
}

TEST(Fork, ChildOfAFinalisedProcessInitialisesItsOwnRuntime) {
  int count = 0;
  ASSERT_EQ(infinirtGetDeviceCount(&count), infinirtSuccess);
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  EXPECT_EQ(RunInChild(UseAFreshRuntime), 0);
  // The parent initialises again, as after any finalize.
  EXPECT_EQ(UseAFreshRuntime(), 0);
}

}  // namespace
