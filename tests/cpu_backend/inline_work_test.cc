// Small work on an idle stream completes in the calling thread: when the call returns, the copy,
// set, event record or wait is done, and no worker thread was needed (the CPU backend starts its
// workers with the first work it hands off). Work behind pending work keeps its order.
#include <gtest/gtest.h>

#include <array>
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "infinirt.h"
#include "test_support.h"

namespace infinirt::testing {
namespace {

constexpr size_t kSmall = 64;

// Every test starts from a fresh runtime, so the CPU backend has no workers yet.
class InlineWorkTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(infinirtFinalize());
    threads_before_ = ThreadsBeforeInfiniRT();
    ASSERT_OK(infinirtInit());
    ASSERT_OK(infinirtMalloc(&device_, 2 * kSmall));
    // Cleared directly (the CPU device's memory is the host's), not through a call that could
    // start a worker: a reused block could hold an earlier test's 7s.
    std::memset(device_, 0, 2 * kSmall);
    std::memset(host_.data(), 7, kSmall);
  }
  void TearDown() override {
    infinirtFree(device_);
    infinirtFinalize();
  }
  bool WorkersStarted() const { return ProcessThreadCount() > threads_before_; }
  // Restarts the runtime with `config` as its configuration file (INFINIRT_CONFIG).
  void RestartWith(const std::string& config) {
    char path[] = "/tmp/infinirt_inline_XXXXXX";
    const int fd = mkstemp(path);
    ASSERT_GE(fd, 0);
    ASSERT_EQ(write(fd, config.data(), config.size()), static_cast<ssize_t>(config.size()));
    close(fd);
    infinirtFree(device_);
    device_ = nullptr;
    ASSERT_OK(infinirtFinalize());
    setenv("INFINIRT_CONFIG", path, 1);
    ASSERT_OK(infinirtInit());
    unlink(path);
    unsetenv("INFINIRT_CONFIG");
    ASSERT_OK(infinirtMalloc(&device_, 2 * kSmall));
  }
  bool DeviceHolds(int value, size_t offset = 0) const {
    const auto* bytes = static_cast<const unsigned char*>(device_) + offset;
    for (size_t i = 0; i < kSmall; ++i) {
      if (bytes[i] != value) return false;
    }
    return true;
  }

  int threads_before_ = 0;
  void* device_ = nullptr;
  std::array<unsigned char, kSmall> host_{};
};

TEST_F(InlineWorkTest, SmallWorkOnIdleStreamsIsDoneWhenTheCallReturnsWithoutAWorker) {
  infinirtStream_t blocking = nullptr, non_blocking = nullptr;
  ASSERT_OK(infinirtStreamCreate(&blocking));
  ASSERT_OK(infinirtStreamCreateWithFlags(&non_blocking, infinirtStreamNonBlocking));
  for (infinirtStream_t stream :
       {blocking, non_blocking, infinirtStream_t{nullptr}, infinirtStreamPerThread}) {
    SCOPED_TRACE(stream == nullptr ? "legacy stream" : "another stream");
    ASSERT_OK(infinirtMemsetAsync(device_, 0, kSmall, stream));
    EXPECT_TRUE(DeviceHolds(0));
    ASSERT_OK(
        infinirtMemcpyAsync(device_, host_.data(), kSmall, infinirtMemcpyHostToDevice, stream));
    EXPECT_TRUE(DeviceHolds(7)) << "the copy was not done when MemcpyAsync returned";
    EXPECT_OK(infinirtStreamQuery(stream));
    EXPECT_OK(infinirtStreamSynchronize(stream));
  }
  infinirtEvent_t start = nullptr, end = nullptr;
  ASSERT_OK(infinirtEventCreate(&start));
  ASSERT_OK(infinirtEventCreate(&end));
  ASSERT_OK(infinirtEventRecord(start, blocking));
  EXPECT_OK(infinirtEventQuery(start));
  ASSERT_OK(infinirtStreamWaitEvent(non_blocking, start, 0));
  EXPECT_OK(infinirtStreamQuery(non_blocking));
  ASSERT_OK(infinirtEventRecord(end, non_blocking));
  EXPECT_OK(infinirtEventSynchronize(end));
  float ms = -1;
  EXPECT_OK(infinirtEventElapsedTime(&ms, start, end));
  EXPECT_GE(ms, 0.0f);
  ASSERT_OK(infinirtMemcpy(host_.data(), device_, kSmall, infinirtMemcpyDeviceToHost));
  ASSERT_OK(infinirtMemset(device_, 3, kSmall));
  EXPECT_TRUE(DeviceHolds(3));
  EXPECT_OK(infinirtDeviceSynchronize());
  EXPECT_FALSE(WorkersStarted()) << ProcessThreadCount() << " threads, " << threads_before_
                                 << " before InfiniRT";
  infinirtEventDestroy(start);
  infinirtEventDestroy(end);
  infinirtStreamDestroy(blocking);
  infinirtStreamDestroy(non_blocking);
}

TEST_F(InlineWorkTest, AHostToHostCopyOfAnySizeIsDoneByTheCaller) {
  std::vector<char> from(1 << 22, 5), to(1 << 22, 0);
  ASSERT_OK(infinirtMemcpyAsync(to.data(), from.data(), to.size(), infinirtMemcpyHostToHost,
                                infinirtStreamPerThread));
  EXPECT_EQ(to, from);
  EXPECT_FALSE(WorkersStarted());
}

void RecordThread(void* id) { *static_cast<std::thread::id*>(id) = std::this_thread::get_id(); }

TEST_F(InlineWorkTest, HostFunctionsNeverRunInTheCaller) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  std::thread::id ran_on;
  ASSERT_OK(infinirtLaunchHostFunc(stream, RecordThread, &ran_on));
  ASSERT_OK(infinirtStreamSynchronize(stream));
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_NE(ran_on, std::thread::id());
  infinirtStreamDestroy(stream);
}

TEST_F(InlineWorkTest, LargeCopiesGoToAWorker) {
  const size_t large = size_t{16} << 20;  // far above the default threshold
  void* big = nullptr;
  ASSERT_OK(infinirtMalloc(&big, large));
  std::vector<char> host(large, 1);
  ASSERT_OK(infinirtMemcpyAsync(big, host.data(), large, infinirtMemcpyHostToDevice,
                                infinirtStreamPerThread));
  ASSERT_OK(infinirtStreamSynchronize(infinirtStreamPerThread));
  EXPECT_TRUE(WorkersStarted());
  EXPECT_EQ(std::memcmp(big, host.data(), large), 0);
  infinirtFree(big);
}

// Work behind pending work waits for it; work in streams that need not wait still completes at
// once. The gate holds a blocking stream busy.
TEST_F(InlineWorkTest, WorkBehindPendingWorkKeepsItsOrder) {
  infinirtStream_t held = nullptr, other_blocking = nullptr, non_blocking = nullptr;
  ASSERT_OK(infinirtStreamCreate(&held));
  ASSERT_OK(infinirtStreamCreate(&other_blocking));
  ASSERT_OK(infinirtStreamCreateWithFlags(&non_blocking, infinirtStreamNonBlocking));
  Gate gate;
  ASSERT_OK(gate.Block(held));
  ASSERT_TRUE(gate.WaitEntered());

  std::array<unsigned char, kSmall> other{};
  other.fill(9);
  char* base = static_cast<char*>(device_);
  // Behind the gate in its own stream.
  ASSERT_OK(infinirtMemcpyAsync(base, host_.data(), kSmall, infinirtMemcpyHostToDevice, held));
  // The legacy stream waits for every blocking stream...
  ASSERT_OK(infinirtMemsetAsync(base + kSmall, 1, kSmall, nullptr));
  // ...and another blocking stream waits for the legacy stream.
  ASSERT_OK(infinirtMemcpyAsync(base + kSmall, other.data(), kSmall, infinirtMemcpyHostToDevice,
                                other_blocking));
  // A non-blocking stream waits for neither.
  unsigned char probe[kSmall] = {};
  std::array<unsigned char, kSmall> ones{};
  ones.fill(1);
  ASSERT_OK(
      infinirtMemcpyAsync(probe, ones.data(), kSmall, infinirtMemcpyHostToDevice, non_blocking));
  EXPECT_EQ(std::memcmp(probe, ones.data(), kSmall), 0);

  EXPECT_FALSE(DeviceHolds(7)) << "ran before the host function ahead of it";
  EXPECT_FALSE(DeviceHolds(1, kSmall)) << "the legacy stream did not wait";
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtErrorNotReady);
  EXPECT_EQ(infinirtStreamQuery(other_blocking), infinirtErrorNotReady);

  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(other_blocking));
  EXPECT_FALSE(gate.timed_out());
  EXPECT_TRUE(DeviceHolds(7));
  EXPECT_TRUE(DeviceHolds(9, kSmall)) << "the last copy did not run last";
  infinirtStreamDestroy(held);
  infinirtStreamDestroy(other_blocking);
  infinirtStreamDestroy(non_blocking);
}

TEST_F(InlineWorkTest, AWaitForAPendingEventOrdersLaterWork) {
  infinirtStream_t held = nullptr, waiting = nullptr;
  ASSERT_OK(infinirtStreamCreateWithFlags(&held, infinirtStreamNonBlocking));
  ASSERT_OK(infinirtStreamCreateWithFlags(&waiting, infinirtStreamNonBlocking));
  infinirtEvent_t event = nullptr;
  ASSERT_OK(infinirtEventCreate(&event));
  Gate gate;
  ASSERT_OK(gate.Block(held));
  ASSERT_OK(infinirtEventRecord(event, held));
  EXPECT_EQ(infinirtEventQuery(event), infinirtErrorNotReady);
  ASSERT_OK(infinirtStreamWaitEvent(waiting, event, 0));
  ASSERT_OK(
      infinirtMemcpyAsync(device_, host_.data(), kSmall, infinirtMemcpyHostToDevice, waiting));
  EXPECT_FALSE(DeviceHolds(7)) << "ran before the event it waits for";
  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(waiting));
  EXPECT_TRUE(DeviceHolds(7));
  EXPECT_OK(infinirtEventQuery(event));
  infinirtEventDestroy(event);
  infinirtStreamDestroy(held);
  infinirtStreamDestroy(waiting);
}

// Captures what issue() enqueues on stream into a graph, and instantiates it (the graph itself
// is destroyed: the exec does not need it).
template <class Issue>
void CaptureExec(infinirtStream_t stream, Issue issue, infinirtGraphExec_t* exec) {
  ASSERT_OK(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  issue();
  infinirtGraph_t graph = nullptr;
  ASSERT_OK(infinirtStreamEndCapture(stream, &graph));
  ASSERT_OK(infinirtGraphInstantiate(exec, graph, 0));
  ASSERT_OK(infinirtGraphDestroy(graph));
}

// A graph of small copies and sets, launched on an idle stream, runs in the caller too; one with a
// host node goes to a worker.
TEST_F(InlineWorkTest, ASmallGraphWithoutHostNodesRunsInTheCaller) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking));
  char* base = static_cast<char*>(device_);
  infinirtGraphExec_t exec = nullptr;
  ASSERT_NO_FATAL_FAILURE(CaptureExec(
      stream,
      [&] {
        EXPECT_OK(infinirtMemsetAsync(base, 0, kSmall, stream));
        EXPECT_OK(
            infinirtMemcpyAsync(base, host_.data(), kSmall, infinirtMemcpyHostToDevice, stream));
      },
      &exec));
  std::memset(device_, 1, kSmall);
  ASSERT_OK(infinirtGraphLaunch(exec, stream));
  EXPECT_TRUE(DeviceHolds(7)) << "the launch was not done when GraphLaunch returned";
  EXPECT_FALSE(WorkersStarted());

  std::thread::id ran_on;
  infinirtGraphExec_t host_exec = nullptr;
  ASSERT_NO_FATAL_FAILURE(CaptureExec(
      stream, [&] { EXPECT_OK(infinirtLaunchHostFunc(stream, RecordThread, &ran_on)); },
      &host_exec));
  ASSERT_OK(infinirtGraphLaunch(host_exec, stream));
  ASSERT_OK(infinirtStreamSynchronize(stream));
  EXPECT_NE(ran_on, std::this_thread::get_id());
  EXPECT_TRUE(WorkersStarted());
  infinirtGraphExecDestroy(exec);
  infinirtGraphExecDestroy(host_exec);
  infinirtStreamDestroy(stream);
}

// plugins.cpu.inline_bytes = 0: nothing asynchronous runs in the caller.
TEST_F(InlineWorkTest, AThresholdOfZeroHandsEverythingToTheWorkers) {
  ASSERT_NO_FATAL_FAILURE(RestartWith(R"({"plugins": {"cpu": {"inline_bytes": 0}}})"));
  ASSERT_OK(infinirtMemcpyAsync(device_, host_.data(), kSmall, infinirtMemcpyHostToDevice,
                                infinirtStreamPerThread));
  ASSERT_OK(infinirtStreamSynchronize(infinirtStreamPerThread));
  EXPECT_TRUE(DeviceHolds(7));
  EXPECT_TRUE(WorkersStarted());
}

// Host work (infinirtLaunchHostWork): run by the caller when small and the stream idle, else by
// a worker after the stream's pending work; captured as a host function.
struct HostWorkRecord {
  std::thread::id thread;
  int order = 0;
  std::atomic<int>* counter = nullptr;
};

void INFINIRT_CB RecordHostWork(void* data) {
  auto* record = static_cast<HostWorkRecord*>(data);
  record->thread = std::this_thread::get_id();
  record->order = ++*record->counter;
}

TEST_F(InlineWorkTest, SmallHostWorkOnAnIdleStreamRunsInTheCaller) {
  std::atomic<int> counter{0};
  HostWorkRecord small{{}, 0, &counter};
  for (infinirtStream_t stream : {infinirtStream_t{nullptr}, infinirtStreamPerThread}) {
    small.order = 0;
    ASSERT_OK(infinirtLaunchHostWork(stream, &RecordHostWork, &small, 1024));
    EXPECT_NE(small.order, 0) << "not run when the call returned";
    EXPECT_EQ(small.thread, std::this_thread::get_id());
  }
  EXPECT_FALSE(WorkersStarted());
  // Host work has a threshold of its own (plugins.cpu.work_inline_bytes, 64 MiB by default),
  // above the copies' (16 KiB): 1 MiB runs in the caller too.
  HostWorkRecord medium{{}, 0, &counter};
  ASSERT_OK(infinirtLaunchHostWork(nullptr, &RecordHostWork, &medium, size_t{1} << 20));
  EXPECT_NE(medium.order, 0) << "not run when the call returned";
  EXPECT_EQ(medium.thread, std::this_thread::get_id());
  EXPECT_FALSE(WorkersStarted());
  // Too large: a worker runs it.
  HostWorkRecord large{{}, 0, &counter};
  ASSERT_OK(infinirtLaunchHostWork(nullptr, &RecordHostWork, &large, size_t{1} << 30));
  ASSERT_OK(infinirtStreamSynchronize(nullptr));
  EXPECT_NE(large.order, 0);
  EXPECT_NE(large.thread, std::this_thread::get_id());
  EXPECT_EQ(infinirtLaunchHostWork(nullptr, nullptr, &small, 0), infinirtErrorInvalidValue);
  infinirtGetLastError();
}

// plugins.cpu.work_inline_bytes: host work above it is handed to a worker, and at 0 all of it.
TEST_F(InlineWorkTest, HostWorkAboveItsThresholdRunsOnAWorker) {
  ASSERT_NO_FATAL_FAILURE(RestartWith(R"({"plugins": {"cpu": {"work_inline_bytes": 4096}}})"));
  std::atomic<int> counter{0};
  HostWorkRecord small{{}, 0, &counter}, large{{}, 0, &counter};
  ASSERT_OK(infinirtLaunchHostWork(nullptr, &RecordHostWork, &small, 4096));
  EXPECT_EQ(small.thread, std::this_thread::get_id());
  EXPECT_FALSE(WorkersStarted());
  ASSERT_OK(infinirtLaunchHostWork(nullptr, &RecordHostWork, &large, 4097));
  ASSERT_OK(infinirtStreamSynchronize(nullptr));
  EXPECT_NE(large.order, 0);
  EXPECT_NE(large.thread, std::this_thread::get_id());

  ASSERT_NO_FATAL_FAILURE(RestartWith(R"({"plugins": {"cpu": {"work_inline_bytes": 0}}})"));
  HostWorkRecord tiny{{}, 0, &counter};
  ASSERT_OK(infinirtLaunchHostWork(nullptr, &RecordHostWork, &tiny, 1));
  ASSERT_OK(infinirtStreamSynchronize(nullptr));
  EXPECT_NE(tiny.order, 0);
  EXPECT_NE(tiny.thread, std::this_thread::get_id());
}

TEST_F(InlineWorkTest, SmallHostWorkBehindPendingWorkKeepsItsPlace) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  Gate gate;
  ASSERT_OK(gate.Block(stream));
  std::atomic<int> counter{0};
  HostWorkRecord first{{}, 0, &counter}, second{{}, 0, &counter};
  ASSERT_OK(infinirtLaunchHostFunc(stream, &RecordHostWork, &first));
  ASSERT_OK(infinirtLaunchHostWork(stream, &RecordHostWork, &second, 8));
  EXPECT_EQ(second.order, 0) << "ran before the work queued ahead of it";
  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(stream));
  EXPECT_EQ(first.order, 1);
  EXPECT_EQ(second.order, 2);
  EXPECT_NE(second.thread, std::this_thread::get_id());
  ASSERT_OK(infinirtStreamDestroy(stream));
}

TEST_F(InlineWorkTest, HostWorkIsCapturedAndRunsAtEveryLaunch) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  std::atomic<int> counter{0};
  HostWorkRecord record{{}, 0, &counter};
  ASSERT_OK(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeThreadLocal));
  ASSERT_OK(infinirtLaunchHostWork(stream, &RecordHostWork, &record, 8));
  infinirtGraph_t graph = nullptr;
  ASSERT_OK(infinirtStreamEndCapture(stream, &graph));
  EXPECT_EQ(record.order, 0) << "run while being captured";
  infinirtGraphExec_t exec = nullptr;
  ASSERT_OK(infinirtGraphInstantiate(&exec, graph, 0));
  for (int launch = 1; launch <= 3; ++launch) {
    ASSERT_OK(infinirtGraphLaunch(exec, stream));
    ASSERT_OK(infinirtStreamSynchronize(stream));
    EXPECT_EQ(record.order, launch);
  }
  ASSERT_OK(infinirtGraphExecDestroy(exec));
  ASSERT_OK(infinirtGraphDestroy(graph));
  ASSERT_OK(infinirtStreamDestroy(stream));
}

}  // namespace
}  // namespace infinirt::testing
