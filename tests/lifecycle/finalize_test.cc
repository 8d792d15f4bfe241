// infinirtFinalize as embedders and tests use it: with work still queued it waits for that work
// and releases what the program left; calls after it initialise a new runtime, in which the
// old handles are dead; and a hundred init/finalize cycles leave no thread and no file
// descriptor behind (leaks of memory are LeakSanitizer's to find: scripts/test.sh --sanitize).
#include <dirent.h>
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <atomic>
#include <string>
#include <vector>

#include "infinirt.h"
#include "test_support.h"

namespace {

using infinirt::testing::ProcessThreadCount;
using infinirt::testing::ProcessThreadCountAfterJoins;

int OpenFileDescriptors() {
  int count = 0;
  DIR* dir = opendir("/proc/self/fd");
  if (dir == nullptr) return -1;
  while (dirent* entry = readdir(dir)) count += entry->d_name[0] != '.';
  closedir(dir);
  return count - 1;  // the descriptor opendir itself holds
}

void CountCall(void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }

// A host function that keeps its stream busy for a while, so that work is still queued when
// the test finalises.
void BusyFor2Ms(void* counter) {
  const auto until = std::chrono::steady_clock::now() + std::chrono::milliseconds(2);
  while (std::chrono::steady_clock::now() < until) {
  }
  CountCall(counter);
}

TEST(Finalize, WaitsForQueuedWorkAndReleasesWhatTheProgramLeft) {
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  const int threads = infinirt::testing::ThreadsBeforeInfiniRT();
  constexpr int kStreams = 4, kPerStream = 25;
  std::atomic<int> done{0};
  static char host[kStreams][4096];
  for (int s = 0; s < kStreams; ++s) {
    infinirtStream_t stream = nullptr;
    void* device = nullptr;
    ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
    ASSERT_EQ(infinirtMalloc(&device, sizeof host[s]), infinirtSuccess);
    for (int i = 0; i < kPerStream; ++i) {
      ASSERT_EQ(infinirtLaunchHostFunc(stream, BusyFor2Ms, &done), infinirtSuccess);
      ASSERT_EQ(
          infinirtMemcpyAsync(device, host[s], sizeof host[s], infinirtMemcpyHostToDevice, stream),
          infinirtSuccess);
    }
  }
  EXPECT_LT(done.load(), kStreams * kPerStream) << "the work finished before the test finalised";
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  EXPECT_EQ(done.load(), kStreams * kPerStream);
  EXPECT_EQ(ProcessThreadCountAfterJoins(threads), threads)
      << "the CPU backend's workers are joined";
}

// Starting the workers is most of the CPU backend's start-up time: they start with the first
// work queued, and Finalize joins them.
TEST(Finalize, TheCpuBackendStartsItsWorkersWithTheFirstWorkQueued) {
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  const int threads = infinirt::testing::ThreadsBeforeInfiniRT();
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  EXPECT_EQ(ProcessThreadCount(), threads) << "a thread started before any work was queued";

  std::atomic<int> ran{0};
  ASSERT_EQ(infinirtLaunchHostFunc(stream, CountCall, &ran), infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(ran.load(), 1);
  infinirtDeviceProp prop{};
  ASSERT_EQ(infinirtGetDeviceProperties(&prop, 0), infinirtSuccess);
  EXPECT_EQ(ProcessThreadCount(), threads + prop.asyncEngineCount)
      << "asyncEngineCount reports the CPU backend's workers";

  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  EXPECT_EQ(ProcessThreadCountAfterJoins(threads), threads) << "the workers are joined";
}

TEST(Finalize, CallsAfterFinalizeInitialiseANewRuntimeWhereOldHandlesAreDead) {
  infinirtStream_t stream = nullptr;
  infinirtEvent_t event = nullptr;
  void* memory = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtEventCreate(&event), infinirtSuccess);
  ASSERT_EQ(infinirtMalloc(&memory, 64), infinirtSuccess);
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);

  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtEventQuery(event), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtFree(memory), infinirtErrorInvalidValue);
  void* fresh = nullptr;
  EXPECT_EQ(infinirtMalloc(&fresh, 64), infinirtSuccess);
  EXPECT_EQ(infinirtFree(fresh), infinirtSuccess);
  EXPECT_EQ(infinirtFinalize(), infinirtSuccess);
  EXPECT_EQ(infinirtFinalize(), infinirtSuccess) << "finalising twice is harmless";
}

// The CPU backend's initial-exec thread-locals take static TLS space, which dlclose does not give
// back: unloaded at every Finalize and loaded again at the next initialisation, it ran out of that
// space after a few cycles in a process that also loaded other plugins, and then failed to load.
// It is linked to stay mapped once loaded.
TEST(Finalize, TheCpuBackendStaysMappedAfterFinalize) {
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  std::string path;
  int count = 0;
  ASSERT_EQ(infinirtGetBackendCount(&count), infinirtSuccess);
  for (int i = 0; i < count; ++i) {
    infinirtBackendProp prop{};
    ASSERT_EQ(infinirtGetBackendProperties(&prop, i), infinirtSuccess);
    if (std::string(prop.name) == "cpu") path = prop.path;
  }
  ASSERT_FALSE(path.empty()) << "the CPU backend is not listed";
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  void* still_mapped = dlopen(path.c_str(), RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  EXPECT_NE(still_mapped, nullptr) << path << " was unloaded by Finalize";
  if (still_mapped != nullptr) dlclose(still_mapped);
}

TEST(Finalize, AHundredInitFinalizeCyclesLeaveNoThreadOrDescriptorBehind) {
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  const int threads = infinirt::testing::ThreadsBeforeInfiniRT();
  const int descriptors = OpenFileDescriptors();
  std::atomic<int> ran{0};
  for (int cycle = 0; cycle < 100; ++cycle) {
    ASSERT_EQ(infinirtInit(), infinirtSuccess);
    infinirtStream_t stream = nullptr;
    void* device = nullptr;
    void* pinned = nullptr;
    ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
    ASSERT_EQ(infinirtMalloc(&device, 1024), infinirtSuccess);
    ASSERT_EQ(infinirtMallocHost(&pinned, 1024), infinirtSuccess);
    ASSERT_EQ(infinirtMemcpyAsync(device, pinned, 1024, infinirtMemcpyHostToDevice, stream),
              infinirtSuccess);
    ASSERT_EQ(infinirtLaunchHostFunc(stream, CountCall, &ran), infinirtSuccess);
    // Half the cycles clean up, half leave everything to finalize.
    if (cycle % 2 == 0) {
      ASSERT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
      ASSERT_EQ(infinirtFree(device), infinirtSuccess);
      ASSERT_EQ(infinirtFreeHost(pinned), infinirtSuccess);
    }
    ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  }
  EXPECT_EQ(ran.load(), 100);
  EXPECT_EQ(ProcessThreadCountAfterJoins(threads), threads);
  EXPECT_EQ(OpenFileDescriptors(), descriptors);
}

}  // namespace
