// A program built with INFINIRT_API_PER_THREAD_DEFAULT_STREAM (this file is): the stream 0 is
// the calling thread's per-thread default stream, and the synchronous copies and memsets run
// there, as CUDA's per-thread builds have it; infinirtStreamLegacy is still the legacy stream.
//
// The legacy stream waits for every blocking stream, other threads' per-thread streams included
// (S4). So while another thread's per-thread stream is held, work on the legacy stream cannot
// finish, and work on this thread's per-thread stream can: what finishes tells the two apart.
#ifndef INFINIRT_API_PER_THREAD_DEFAULT_STREAM
#error "this test must be compiled with INFINIRT_API_PER_THREAD_DEFAULT_STREAM"
#endif

#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "infinirt.h"
#include "test_support.h"

namespace infinirt::testing {
namespace {

#define INFINIRT_TEST_TEXT_(x) #x
#define INFINIRT_TEST_TEXT(x) INFINIRT_TEST_TEXT_(x)

TEST(PerThreadBuild, TheHeaderCallsTheVariants) {
  EXPECT_STREQ(INFINIRT_TEST_TEXT(infinirtMemcpyAsync), "infinirtMemcpyAsync_ptsz");
  EXPECT_STREQ(INFINIRT_TEST_TEXT(infinirtMemcpy), "infinirtMemcpy_ptds");
  EXPECT_STREQ(INFINIRT_TEST_TEXT(infinirtStreamSynchronize), "infinirtStreamSynchronize_ptsz");
  EXPECT_STREQ(INFINIRT_TEST_TEXT(infinirtMalloc), "infinirtMalloc") << "no stream, no variant";
}

TEST(PerThreadBuild, StreamZeroIsThePerThreadStream) {
  unsigned long long zero = 0, per_thread = 1, legacy = 2;
  ASSERT_OK(infinirtStreamGetId(nullptr, &zero));
  ASSERT_OK(infinirtStreamGetId(infinirtStreamPerThread, &per_thread));
  ASSERT_OK(infinirtStreamGetId(infinirtStreamLegacy, &legacy));
  EXPECT_EQ(zero, per_thread);
  EXPECT_NE(zero, legacy);
}

// Holds another thread's per-thread stream until released.
class HeldPerThreadStream {
 public:
  HeldPerThreadStream()
      : thread_([this] {
          blocked_ = gate_.Block(infinirtStreamPerThread);
          gate_.WaitEntered();
          held_.store(true);
          WaitUntil([this] { return released_.load(); });
        }) {
    WaitUntil([this] { return held_.load(); });
  }
  ~HeldPerThreadStream() {
    Release();
    thread_.join();
  }
  bool held() const { return held_.load() && blocked_ == infinirtSuccess; }
  void Release() {
    gate_.Open();
    released_.store(true);
  }

 private:
  Gate gate_;
  infinirtError_t blocked_ = infinirtErrorUnknown;
  std::atomic<bool> held_{false}, released_{false};
  std::thread thread_;
};

// Runs `work` in a thread of its own; true when it finished within a few seconds.
template <class Work>
bool FinishesWhileHeld(HeldPerThreadStream& held, Work work) {
  std::atomic<bool> done{false};
  std::thread worker([&] {
    work();
    done.store(true);
  });
  const bool finished = WaitUntil([&] { return done.load(); }, std::chrono::seconds(5));
  held.Release();  // lets the work finish either way
  worker.join();
  return finished;
}

TEST(PerThreadBuild, WorkOnStreamZeroDoesNotWaitForOtherThreads) {
  void* device = nullptr;
  ASSERT_OK(infinirtMalloc(&device, 4096));
  std::vector<unsigned char> host(4096, 0);
  HeldPerThreadStream held;
  ASSERT_TRUE(held.held());
  infinirtError_t results[5] = {};
  EXPECT_TRUE(FinishesWhileHeld(held, [&] {
    results[0] = infinirtMemsetAsync(device, 7, 4096, 0);
    results[1] = infinirtStreamSynchronize(0);
    results[2] = infinirtMemcpy(host.data(), device, 4096, infinirtMemcpyDeviceToHost);
    results[3] = infinirtMemset(device, 9, 4096);
    results[4] = infinirtStreamQuery(0);
  })) << "work on stream 0 waited for another thread's per-thread stream";
  for (infinirtError_t result : results) EXPECT_EQ(result, infinirtSuccess);
  EXPECT_EQ(host[0], 7);
  EXPECT_EQ(host[4095], 7);
  ASSERT_OK(infinirtMemcpy(host.data(), device, 4096, infinirtMemcpyDeviceToHost));
  EXPECT_EQ(host[0], 9);
  ASSERT_OK(infinirtFree(device));
}

TEST(PerThreadBuild, TheLegacyStreamIsStillTheLegacyStream) {
  HeldPerThreadStream held;
  ASSERT_TRUE(held.held());
  // The legacy stream covers the other thread's held per-thread stream (S5).
  EXPECT_EQ(infinirtStreamQuery(infinirtStreamLegacy), infinirtErrorNotReady);
  EXPECT_EQ(infinirtStreamQuery(0), infinirtSuccess);
  held.Release();
  EXPECT_EQ(infinirtStreamSynchronize(infinirtStreamLegacy), infinirtSuccess);
}

}  // namespace
}  // namespace infinirt::testing
