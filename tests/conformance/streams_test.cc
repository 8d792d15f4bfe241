// S1-S7, S40 and S60: stream order, the legacy default stream, non-blocking and per-thread
// streams, stream query and synchronisation, stream destruction, a stream's device, stream
// attributes.
#include <array>
#include <atomic>
#include <cstdint>
#include <limits>
#include <thread>
#include <utility>
#include <vector>

#include "conformance.h"

namespace infinirt::conformance {
namespace {

// Host function that copies the first byte of a pinned buffer into a plain variable, so that a
// test can see which copies had completed when it ran.
struct Snapshot {
  const unsigned char* pinned = nullptr;
  int seen = -1;
};
void TakeSnapshot(void* snapshot) {
  auto* s = static_cast<Snapshot*>(snapshot);
  s->seen = s->pinned[0];
}

// ---------------------------------------------------------------------------------------------
// S1: work in one stream runs in issue order; a host function runs after all prior work and
// blocks later work.

TEST_F(Conformance, S01_StreamRunsWorkInIssueOrderIncludingHostFunctions) {
  constexpr int kRounds = 32;
  infinirtStream_t stream = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  unsigned char* pinned = NewPinnedMemory(kRounds);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(pinned, nullptr);
  auto& log = Keep<OrderLog>();
  auto& marks = Keep<std::array<Mark, kRounds>>();
  auto& snapshots = Keep<std::array<Snapshot, kRounds>>();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(stream));
  for (int i = 0; i < kRounds; ++i) {
    // memset -> copy one byte into pinned[i] -> host function reads pinned[i] and logs i.
    marks[i] = Mark{&log, i};
    snapshots[i].pinned = pinned + i;
    ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, i + 1, kBytes, stream));
    ASSERT_OK_OR_SKIP(
        infinirtMemcpyAsync(pinned + i, device, 1, infinirtMemcpyDeviceToHost, stream));
    ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, TakeSnapshot, &snapshots[i]));
    ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, AppendMark, &marks[i]));
  }

  // The gate (a host function) holds back everything issued after it.
  EXPECT_TRUE(HoldsFor([&] { return log.next.load() == 0; }));
  EXPECT_TRUE(AllBytesAre(pinned, kRounds, 0));
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);

  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  ASSERT_EQ(log.next.load(), kRounds);
  for (int i = 0; i < kRounds; ++i) {
    EXPECT_EQ(log.slots[i], i) << "host functions ran out of order";
    EXPECT_EQ(snapshots[i].seen, i + 1) << "host function " << i << " ran before the copy";
    EXPECT_EQ(pinned[i], i + 1);
  }
}

TEST_F(Conformance, S01_LaunchHostFuncRejectsNullFunction) {
  EXPECT_EQ(infinirtLaunchHostFunc(NewStream(), nullptr, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtLaunchHostFunc(nullptr, nullptr, nullptr), infinirtErrorInvalidValue);
}

// ---------------------------------------------------------------------------------------------
// S2: work on the legacy stream waits for all prior work in every blocking stream, and
// blocking streams wait for prior legacy work.

TEST_F(Conformance, S02_LegacyStreamWaitsForBlockingStreams) {
  infinirtStream_t blocking = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  unsigned char* pinned = NewPinnedMemory(1);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(pinned, nullptr);
  ASSERT_OK_OR_SKIP(infinirtMemset(device, 0, kBytes));
  auto& log = Keep<OrderLog>();
  auto& legacy_mark = Keep<Mark>(Mark{&log, 1});
  auto& blocking_mark = Keep<Mark>(Mark{&log, 2});
  auto& snapshot = Keep<Snapshot>();
  snapshot.pinned = pinned;
  Gate& gate = NewGate();

  // The reference test: block s, memset on NULL, then a host function on s sees the memset.
  ASSERT_OK_OR_SKIP(gate.Block(blocking));
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0x11, kBytes, nullptr));
  ASSERT_OK_OR_SKIP(infinirtMemcpyAsync(pinned, device, 1, infinirtMemcpyDeviceToHost, nullptr));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(nullptr, AppendMark, &legacy_mark));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(blocking, TakeSnapshot, &snapshot));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(blocking, AppendMark, &blocking_mark));

  // The legacy work waits for the gate in the blocking stream.
  EXPECT_TRUE(HoldsFor([&] { return log.next.load() == 0 && pinned[0] == 0; }));
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtErrorNotReady);

  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(blocking));
  ASSERT_EQ(log.next.load(), 2);
  EXPECT_EQ(log.slots[0], 1) << "the legacy host function did not run first";
  EXPECT_EQ(log.slots[1], 2);
  EXPECT_EQ(snapshot.seen, 0x11) << "the blocking stream did not wait for the legacy memset";
}

TEST_F(Conformance, S02_BlockingStreamsWaitForPriorLegacyWork) {
  infinirtStream_t first = NewStream();
  infinirtStream_t second = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  infinirtEvent_t first_done = NewEvent();
  infinirtEvent_t second_done = NewEvent();
  Gate& gate = NewGate();

  // infinirtStreamLegacy and NULL name the same stream.
  ASSERT_OK_OR_SKIP(gate.Block(infinirtStreamLegacy));
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtErrorNotReady);
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0x22, kBytes, first));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(first_done, first));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(second_done, second));

  EXPECT_TRUE(HoldsFor([&] { return IsPending(first_done) && IsPending(second_done); }))
      << "a blocking stream ran ahead of earlier legacy work";
  EXPECT_EQ(infinirtStreamQuery(first), infinirtErrorNotReady);

  gate.Open();
  EXPECT_EQ(infinirtEventSynchronize(first_done), infinirtSuccess);
  EXPECT_EQ(infinirtEventSynchronize(second_done), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(ReadBack(device, kBytes).data(), kBytes, 0x22));
}

// ---------------------------------------------------------------------------------------------
// S3: non-blocking streams never synchronise implicitly with the legacy stream.

TEST_F(Conformance, S03_NonBlockingStreamDoesNotDelayLegacyStream) {
  REQUIRE_NON_BLOCKING_STREAMS();
  infinirtStream_t non_blocking = NewStream(infinirtStreamNonBlocking);
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  infinirtEvent_t legacy_done = NewEvent();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(non_blocking));
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0x33, kBytes, nullptr));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(legacy_done, nullptr));
  EXPECT_TRUE(Completes(legacy_done));
  // Synchronous calls on the legacy stream complete too.
  EXPECT_TRUE(AllBytesAre(ReadBack(device, kBytes).data(), kBytes, 0x33));
  EXPECT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  // ... all while the non-blocking stream was still held.
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(infinirtStreamQuery(non_blocking), infinirtErrorNotReady);
  gate.Open();
}

TEST_F(Conformance, S03_LegacyStreamDoesNotDelayNonBlockingStream) {
  REQUIRE_NON_BLOCKING_STREAMS();
  infinirtStream_t non_blocking = NewStream(infinirtStreamNonBlocking);
  infinirtStream_t blocking = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  infinirtEvent_t non_blocking_done = NewEvent();
  infinirtEvent_t blocking_done = NewEvent();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(nullptr));
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0x44, kBytes, non_blocking));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(non_blocking_done, non_blocking));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(blocking_done, blocking));

  EXPECT_TRUE(Completes(non_blocking_done));
  EXPECT_EQ(infinirtStreamQuery(non_blocking), infinirtSuccess);
  // For contrast, the blocking stream does wait for the legacy stream (S2).
  EXPECT_TRUE(IsPending(blocking_done));
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtErrorNotReady);
  gate.Open();
  EXPECT_EQ(infinirtEventSynchronize(blocking_done), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S4: infinirtStreamPerThread is local to the calling host thread, does not synchronise with
// other created streams, and synchronises with the legacy stream.

TEST_F(Conformance, S04_PerThreadStreamsOfTwoThreadsDoNotBlockEachOther) {
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  infinirtEvent_t other_done = NewEvent();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(infinirtStreamPerThread));
  ASSERT_EQ(infinirtStreamQuery(infinirtStreamPerThread), infinirtErrorNotReady);

  infinirtError_t other_query = infinirtErrorUnknown;
  infinirtError_t other_memset = infinirtErrorUnknown;
  infinirtError_t other_record = infinirtErrorUnknown;
  bool other_completed = false;
  infinirtError_t other_sync = infinirtErrorUnknown;
  ScopedThread other([&] {
    // This thread's per-thread stream is another stream: idle, and not held by the gate.
    other_query = infinirtStreamQuery(infinirtStreamPerThread);
    other_memset = infinirtMemsetAsync(device, 0x55, kBytes, infinirtStreamPerThread);
    other_record = infinirtEventRecord(other_done, infinirtStreamPerThread);
    other_completed = Completes(other_done);
    other_sync = infinirtStreamSynchronize(infinirtStreamPerThread);
  });
  other.Join();

  EXPECT_EQ(other_query, infinirtSuccess);
  EXPECT_EQ(other_memset, infinirtSuccess);
  EXPECT_EQ(other_record, infinirtSuccess);
  EXPECT_TRUE(other_completed) << "another thread's per-thread stream waited for this one's";
  EXPECT_EQ(other_sync, infinirtSuccess);
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(infinirtStreamQuery(infinirtStreamPerThread), infinirtErrorNotReady);
  gate.Open();
  EXPECT_EQ(infinirtStreamSynchronize(infinirtStreamPerThread), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(ReadBack(device, kBytes).data(), kBytes, 0x55));
}

TEST_F(Conformance, S04_PerThreadStreamDoesNotWaitForOtherBlockingStreams) {
  infinirtStream_t blocking = NewStream();
  infinirtEvent_t per_thread_done = NewEvent();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(blocking));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(per_thread_done, infinirtStreamPerThread));
  EXPECT_TRUE(Completes(per_thread_done));
  EXPECT_EQ(infinirtStreamQuery(blocking), infinirtErrorNotReady);
  gate.Open();
}

TEST_F(Conformance, S04_LegacyStreamWaitsForPerThreadStream) {
  infinirtEvent_t legacy_done = NewEvent();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(infinirtStreamPerThread));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(legacy_done, nullptr));
  EXPECT_TRUE(HoldsFor([&] { return IsPending(legacy_done); }))
      << "the legacy stream ran ahead of the per-thread stream";
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtErrorNotReady);
  gate.Open();
  EXPECT_EQ(infinirtEventSynchronize(legacy_done), infinirtSuccess);
}

TEST_F(Conformance, S04_PerThreadStreamWaitsForLegacyStream) {
  infinirtEvent_t per_thread_done = NewEvent();
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(nullptr));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(per_thread_done, infinirtStreamPerThread));
  EXPECT_TRUE(HoldsFor([&] { return IsPending(per_thread_done); }))
      << "the per-thread stream ran ahead of the legacy stream";
  gate.Open();
  EXPECT_EQ(infinirtEventSynchronize(per_thread_done), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S5: querying or synchronising the legacy stream covers all blocking streams, but not the
// non-blocking ones.

TEST_F(Conformance, S05_LegacyQueryAndSynchronizeCoverBlockingStreams) {
  // Three held streams: one worker of the CPU backend's minimum of four stays free.
  constexpr int kStreams = 3;
  std::array<infinirtStream_t, kStreams> streams;
  std::array<infinirtEvent_t, kStreams> done;
  Gate& gate = NewGate();
  for (int i = 0; i < kStreams; ++i) {
    streams[i] = NewStream();
    done[i] = NewEvent();
    ASSERT_OK_OR_SKIP(gate.Block(streams[i]));
    ASSERT_OK_OR_SKIP(infinirtEventRecord(done[i], streams[i]));
  }
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtErrorNotReady);
  EXPECT_EQ(infinirtStreamQuery(infinirtStreamLegacy), infinirtErrorNotReady);

  DelayedOpen release(gate);
  EXPECT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  EXPECT_TRUE(release.started()) << "StreamSynchronize(0) returned before the blocking streams";
  for (int i = 0; i < kStreams; ++i) {
    EXPECT_EQ(infinirtStreamQuery(streams[i]), infinirtSuccess) << "stream " << i;
    EXPECT_EQ(infinirtEventQuery(done[i]), infinirtSuccess) << "stream " << i;
  }
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtSuccess);
}

TEST_F(Conformance, S05_LegacyQueryAndSynchronizeIgnoreNonBlockingStreams) {
  REQUIRE_NON_BLOCKING_STREAMS();
  infinirtStream_t non_blocking = NewStream(infinirtStreamNonBlocking);
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(non_blocking));
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(infinirtStreamLegacy), infinirtSuccess);
  EXPECT_FALSE(gate.timed_out()) << "StreamSynchronize(0) waited for a non-blocking stream";
  EXPECT_EQ(infinirtStreamQuery(non_blocking), infinirtErrorNotReady);
  gate.Open();
}

// ---------------------------------------------------------------------------------------------
// S6: StreamQuery answers Success iff all work is complete, else NotReady (600);
// DeviceSynchronize waits for every stream, non-blocking ones included.

TEST_F(Conformance, S06_StreamQueryReportsPendingWork) {
  static_assert(infinirtErrorNotReady == 600, "CUDA's value");
  infinirtStream_t stream = NewStream();
  Gate& gate = NewGate();

  EXPECT_EQ(infinirtStreamQuery(stream), infinirtSuccess);
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  EXPECT_TRUE(gate.WaitEntered());
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  gate.Open();
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtSuccess);
}

TEST_F(Conformance, S06_DeviceSynchronizeWaitsForNonBlockingStreams) {
  REQUIRE_NON_BLOCKING_STREAMS();
  infinirtStream_t non_blocking = NewStream(infinirtStreamNonBlocking);
  infinirtStream_t blocking = NewStream();
  infinirtEvent_t done = NewEvent();
  auto& after_gate = Keep<std::atomic<bool>>(false);
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(non_blocking));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(non_blocking, SetFlag, &after_gate));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(done, non_blocking));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(NewEvent(), blocking));

  DelayedOpen release(gate);
  EXPECT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  EXPECT_TRUE(release.started()) << "DeviceSynchronize returned before the non-blocking stream";
  EXPECT_TRUE(after_gate.load());
  EXPECT_EQ(infinirtEventQuery(done), infinirtSuccess);
  EXPECT_EQ(infinirtStreamQuery(non_blocking), infinirtSuccess);
  EXPECT_EQ(infinirtStreamQuery(blocking), infinirtSuccess);
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S7: StreamDestroy returns at once, pending work still completes; the special streams cannot
// be destroyed.

TEST_F(Conformance, S07_StreamDestroyWithPendingWorkReturnsAndWorkCompletes) {
  infinirtStream_t stream = NewStream();
  infinirtEvent_t done = NewEvent();
  auto& ran = Keep<std::atomic<bool>>(false);
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, SetFlag, &ran));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(done, stream));

  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
  // Returned while the work was still held back.
  EXPECT_FALSE(gate.timed_out());
  EXPECT_FALSE(ran.load());
  EXPECT_TRUE(IsPending(done));
  // A destroyed stream answers ContextIsDestroyed, as NVIDIA's runtime does.
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorContextIsDestroyed);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtErrorContextIsDestroyed);

  gate.Open();
  EXPECT_TRUE(WaitUntil([&] { return ran.load(); })) << "work of a destroyed stream was dropped";
  EXPECT_EQ(infinirtEventSynchronize(done), infinirtSuccess);
}

// Every call that takes a stream answers ContextIsDestroyed for a destroyed one, and changes
// nothing; a value that never was a stream's handle stays InvalidResourceHandle.
TEST_F(Conformance, S07_ADestroyedStreamIsContextIsDestroyedWhereverItIsPassed) {
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
  unsigned char* memory = NewDeviceMemory(kBytes);
  ASSERT_NE(memory, nullptr);
  unsigned char host[16] = {};
  infinirtEvent_t event = NewEvent();
  infinirtGraph_t graph = nullptr;
  int device = -1;
  void* allocated = nullptr;
  auto& ran = Keep<std::atomic<bool>>(false);
  const infinirtError_t destroyed = infinirtErrorContextIsDestroyed;
  EXPECT_EQ(infinirtStreamSynchronize(stream), destroyed);
  EXPECT_EQ(infinirtStreamQuery(stream), destroyed);
  EXPECT_EQ(infinirtStreamGetDevice(stream, &device), destroyed);
  EXPECT_EQ(infinirtStreamWaitEvent(stream, event, 0), destroyed);
  EXPECT_EQ(infinirtEventRecord(event, stream), destroyed);
  EXPECT_EQ(infinirtLaunchHostFunc(stream, SetFlag, &ran), destroyed);
  EXPECT_EQ(infinirtMemcpyAsync(host, memory, sizeof host, infinirtMemcpyDeviceToHost, stream),
            destroyed);
  EXPECT_EQ(infinirtMemsetAsync(memory, 1, kBytes, stream), destroyed);
  EXPECT_EQ(infinirtMallocAsync(&allocated, 64, stream), destroyed);
  EXPECT_EQ(allocated, nullptr);
  EXPECT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), destroyed);
  EXPECT_EQ(infinirtStreamEndCapture(stream, &graph), destroyed);
  EXPECT_EQ(infinirtStreamDestroy(stream), destroyed);
  EXPECT_EQ(infinirtGetLastError(), destroyed);
  EXPECT_FALSE(ran.load());
  // Never a handle: a forged value of no stream.
  const auto never = reinterpret_cast<infinirtStream_t>(uintptr_t{0x1234567});
  EXPECT_EQ(infinirtStreamQuery(never), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtStreamDestroy(never), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidResourceHandle);
}

// The pending work of a destroyed blocking stream is still device work: later legacy work and
// DeviceSynchronize wait for it.
TEST_F(Conformance, S07_PendingWorkOfDestroyedStreamStillOrdersBeforeLegacyWork) {
  infinirtStream_t stream = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_OK_OR_SKIP(infinirtMemset(device, 0, kBytes));
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0x66, kBytes, stream));
  ASSERT_OK_OR_SKIP(infinirtStreamDestroy(stream));
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtErrorNotReady);
  std::vector<unsigned char>& host = NewPageableMemory(kBytes);
  {
    DelayedOpen release(gate);
    EXPECT_EQ(infinirtMemcpy(host.data(), device, kBytes, infinirtMemcpyDeviceToHost),
              infinirtSuccess);
    EXPECT_TRUE(release.started()) << "Memcpy did not wait for the destroyed stream's work";
  }
  EXPECT_TRUE(AllBytesAre(host.data(), kBytes, 0x66));

  // DeviceSynchronize, likewise.
  infinirtStream_t second = NewStream();
  auto& ran = Keep<std::atomic<bool>>(false);
  Gate& second_gate = NewGate();
  ASSERT_OK_OR_SKIP(second_gate.Block(second));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(second, SetFlag, &ran));
  ASSERT_OK_OR_SKIP(infinirtStreamDestroy(second));
  DelayedOpen release(second_gate);
  EXPECT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  EXPECT_TRUE(release.started()) << "DeviceSynchronize did not wait for a destroyed stream";
  EXPECT_TRUE(ran.load());
}

TEST_F(Conformance, S07_DestroyingSpecialStreamsIsInvalidResourceHandle) {
  EXPECT_EQ(infinirtStreamDestroy(nullptr), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtStreamDestroy(infinirtStreamLegacy), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtStreamDestroy(infinirtStreamPerThread), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidResourceHandle);
  // Both still work.
  infinirtEvent_t event = NewEvent();
  EXPECT_EQ(infinirtEventRecord(event, nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtEventRecord(event, infinirtStreamPerThread), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(infinirtStreamPerThread), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S40: a stream's device.

TEST_F(Conformance, S40_StreamGetDeviceNamesTheStreamsDeviceOrTheCurrentOne) {
  int current = -1;
  ASSERT_EQ(infinirtGetDevice(&current), infinirtSuccess);
  infinirtStream_t stream = NewStream();
  int device = -1;
  EXPECT_EQ(infinirtStreamGetDevice(stream, &device), infinirtSuccess);
  EXPECT_EQ(device, current);
  for (infinirtStream_t special :
       {infinirtStream_t{}, infinirtStreamLegacy, infinirtStreamPerThread}) {
    device = -1;
    EXPECT_EQ(infinirtStreamGetDevice(special, &device), infinirtSuccess);
    EXPECT_EQ(device, current);
  }
  EXPECT_EQ(infinirtStreamGetDevice(stream, nullptr), infinirtErrorInvalidValue);
  infinirtStream_t destroyed = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&destroyed), infinirtSuccess);
  ASSERT_EQ(infinirtStreamDestroy(destroyed), infinirtSuccess);
  EXPECT_EQ(infinirtStreamGetDevice(destroyed, &device), infinirtErrorContextIsDestroyed);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorContextIsDestroyed);
  if (device_count() < 2) return;  // the rest needs a second device
  const int other = current == 0 ? 1 : 0;
  ASSERT_EQ(infinirtSetDevice(other), infinirtSuccess);
  EXPECT_EQ(infinirtStreamGetDevice(stream, &device), infinirtSuccess);
  EXPECT_EQ(device, current) << "a stream keeps its device when another is current";
  EXPECT_EQ(infinirtStreamGetDevice(nullptr, &device), infinirtSuccess);
  EXPECT_EQ(device, other);
  ASSERT_EQ(infinirtSetDevice(current), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// S42: stream priorities, flags and ids; stream callbacks; EventRecordWithFlags.

TEST_F(Conformance, S42_PrioritiesAreClampedIntoTheDevicesRange) {
  int least = 99, greatest = 99;
  ASSERT_EQ(infinirtDeviceGetStreamPriorityRange(&least, &greatest), infinirtSuccess);
  EXPECT_LE(greatest, least);
  int only_least = 99;
  EXPECT_EQ(infinirtDeviceGetStreamPriorityRange(&only_least, nullptr), infinirtSuccess);
  EXPECT_EQ(only_least, least);
  EXPECT_EQ(infinirtDeviceGetStreamPriorityRange(nullptr, nullptr), infinirtSuccess);
  struct Case {
    int asked, expected;
  };
  for (const Case& c : {Case{least, least}, Case{greatest, greatest},
                        Case{greatest - 100, greatest}, Case{least + 100, least}}) {
    infinirtStream_t stream = nullptr;
    ASSERT_OK_OR_SKIP(
        infinirtStreamCreateWithPriority(&stream, infinirtStreamNonBlocking, c.asked));
    int priority = 12345;
    EXPECT_EQ(infinirtStreamGetPriority(stream, &priority), infinirtSuccess);
    EXPECT_EQ(priority, c.expected) << "asked for " << c.asked;
    unsigned int flags = 99;
    EXPECT_EQ(infinirtStreamGetFlags(stream, &flags), infinirtSuccess);
    EXPECT_EQ(flags, static_cast<unsigned int>(infinirtStreamNonBlocking));
    // Work runs on it as on any stream.
    auto& ran = Keep<std::atomic<bool>>(false);
    ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, SetFlag, &ran));
    EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    EXPECT_TRUE(ran.load());
    EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
  }
  infinirtStream_t stream = nullptr;
  EXPECT_EQ(infinirtStreamCreateWithPriority(nullptr, 0, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtStreamCreateWithPriority(&stream, 0x4, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
}

TEST_F(Conformance, S42_DefaultStreamsHavePriorityZeroAndDefaultFlags) {
  for (infinirtStream_t special :
       {infinirtStream_t{}, infinirtStreamLegacy, infinirtStreamPerThread}) {
    int priority = 99;
    unsigned int flags = 99;
    EXPECT_EQ(infinirtStreamGetPriority(special, &priority), infinirtSuccess);
    EXPECT_EQ(priority, 0);
    EXPECT_EQ(infinirtStreamGetFlags(special, &flags), infinirtSuccess);
    EXPECT_EQ(flags, static_cast<unsigned int>(infinirtStreamDefault));
  }
  infinirtStream_t blocking = NewStream();
  unsigned int flags = 99;
  EXPECT_EQ(infinirtStreamGetFlags(blocking, &flags), infinirtSuccess);
  EXPECT_EQ(flags, static_cast<unsigned int>(infinirtStreamDefault));
  int priority = 99;
  EXPECT_EQ(infinirtStreamGetPriority(blocking, &priority), infinirtSuccess);
  EXPECT_EQ(priority, 0) << "a stream created without a priority has the default one";
  EXPECT_EQ(infinirtStreamGetPriority(blocking, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtStreamGetFlags(blocking, nullptr), infinirtErrorInvalidValue);
  infinirtStream_t destroyed = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&destroyed), infinirtSuccess);
  ASSERT_EQ(infinirtStreamDestroy(destroyed), infinirtSuccess);
  EXPECT_EQ(infinirtStreamGetPriority(destroyed, &priority), infinirtErrorContextIsDestroyed);
  EXPECT_EQ(infinirtStreamGetFlags(destroyed, &flags), infinirtErrorContextIsDestroyed);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorContextIsDestroyed);
}

TEST_F(Conformance, S42_StreamIdsAreDistinctAndStable) {
  infinirtStream_t a = NewStream();
  infinirtStream_t b = NewStream();
  unsigned long long id_a = 0, id_a_again = 1, id_b = 0, id_legacy = 1, id_per_thread = 0;
  ASSERT_EQ(infinirtStreamGetId(a, &id_a), infinirtSuccess);
  ASSERT_EQ(infinirtStreamGetId(a, &id_a_again), infinirtSuccess);
  ASSERT_EQ(infinirtStreamGetId(b, &id_b), infinirtSuccess);
  ASSERT_EQ(infinirtStreamGetId(nullptr, &id_legacy), infinirtSuccess);
  ASSERT_EQ(infinirtStreamGetId(infinirtStreamPerThread, &id_per_thread), infinirtSuccess);
  EXPECT_EQ(id_a, id_a_again);
  std::vector<unsigned long long> ids = {id_a, id_b, id_legacy, id_per_thread};
  // A stream made after another was destroyed (perhaps in its place) gets a new id.
  infinirtStream_t gone = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&gone), infinirtSuccess);
  unsigned long long id_gone = 0;
  ASSERT_EQ(infinirtStreamGetId(gone, &id_gone), infinirtSuccess);
  ASSERT_EQ(infinirtStreamDestroy(gone), infinirtSuccess);
  infinirtStream_t next = NewStream();
  unsigned long long id_next = 0;
  ASSERT_EQ(infinirtStreamGetId(next, &id_next), infinirtSuccess);
  ids.push_back(id_gone);
  ids.push_back(id_next);
  for (size_t i = 0; i < ids.size(); ++i) {
    for (size_t j = i + 1; j < ids.size(); ++j) EXPECT_NE(ids[i], ids[j]) << i << " and " << j;
  }
  // Another thread's per-thread stream is another stream.
  unsigned long long theirs = id_per_thread;
  std::thread([&] {
    infinirtSetDevice(0);
    infinirtStreamGetId(infinirtStreamPerThread, &theirs);
  }).join();
  EXPECT_NE(theirs, id_per_thread);
  EXPECT_EQ(infinirtStreamGetId(a, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtStreamGetId(gone, &id_gone), infinirtErrorContextIsDestroyed);
  infinirtGetLastError();
}

struct CallbackLog {
  std::atomic<int> calls{0};
  infinirtStream_t stream = nullptr;
  infinirtError_t status = infinirtErrorUnknown;
  void* user_data = nullptr;
  OrderLog* order = nullptr;
};
void INFINIRT_CB RecordCallback(infinirtStream_t stream, infinirtError_t status, void* data) {
  auto* log = static_cast<CallbackLog*>(data);
  log->stream = stream;
  log->status = status;
  log->user_data = data;
  log->order->Append(2);
  log->calls.fetch_add(1);
}

TEST_F(Conformance, S42_StreamCallbacksRunInStreamOrderWithTheirArguments) {
  infinirtStream_t stream = NewStream();
  auto& order = Keep<OrderLog>();
  auto& log = Keep<CallbackLog>();
  log.order = &order;
  auto& before = Keep<Mark>(Mark{&order, 1});
  auto& after = Keep<Mark>(Mark{&order, 3});
  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, AppendMark, &before));
  ASSERT_EQ(infinirtStreamAddCallback(stream, RecordCallback, &log, 0), infinirtSuccess);
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, AppendMark, &after));
  EXPECT_EQ(log.calls.load(), 0) << "ran before the work queued ahead of it";
  gate.Open();
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(log.calls.load(), 1);
  EXPECT_EQ(log.stream, stream);
  EXPECT_EQ(log.status, infinirtSuccess);
  EXPECT_EQ(log.user_data, &log);
  ASSERT_EQ(order.next.load(), 3);
  EXPECT_EQ(order.slots[0], 1);
  EXPECT_EQ(order.slots[1], 2);
  EXPECT_EQ(order.slots[2], 3);
  // The legacy stream too.
  EXPECT_EQ(infinirtStreamAddCallback(nullptr, RecordCallback, &log, 0), infinirtSuccess);
  ASSERT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  EXPECT_EQ(log.calls.load(), 2);
  EXPECT_EQ(log.stream, nullptr);

  EXPECT_EQ(infinirtStreamAddCallback(stream, nullptr, &log, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtStreamAddCallback(stream, RecordCallback, &log, 1), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
  ASSERT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  EXPECT_EQ(log.calls.load(), 2) << "a refused callback ran";
}

TEST_F(Conformance, S42_StreamCallbacksCannotBeCaptured) {
  infinirtStream_t stream = NewStream();
  auto& order = Keep<OrderLog>();
  auto& log = Keep<CallbackLog>();
  log.order = &order;
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  EXPECT_EQ(infinirtStreamAddCallback(stream, RecordCallback, &log, 0),
            infinirtErrorStreamCaptureUnsupported);
  infinirtGraph_t graph = nullptr;
  EXPECT_NE(infinirtStreamEndCapture(stream, &graph), infinirtSuccess) << "the capture went on";
  if (graph != nullptr) infinirtGraphDestroy(graph);
  infinirtGetLastError();
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(log.calls.load(), 0);
}

TEST_F(Conformance, S42_EventRecordWithFlagsRecordsAsEventRecord) {
  infinirtStream_t stream = NewStream();
  for (unsigned int flags : {infinirtEventRecordDefault, infinirtEventRecordExternal}) {
    infinirtEvent_t event = NewEvent();
    Gate& gate = NewGate();
    ASSERT_OK_OR_SKIP(gate.Block(stream));
    ASSERT_EQ(infinirtEventRecordWithFlags(event, stream, flags), infinirtSuccess);
    EXPECT_TRUE(IsPending(event)) << "flags " << flags;
    gate.Open();
    EXPECT_EQ(infinirtEventSynchronize(event), infinirtSuccess);
    EXPECT_EQ(infinirtEventQuery(event), infinirtSuccess);
  }
  infinirtEvent_t event = NewEvent();
  EXPECT_EQ(infinirtEventRecordWithFlags(event, stream, 0x2), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtEventRecordWithFlags(nullptr, stream, 0), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidResourceHandle);
}

// ---------------------------------------------------------------------------------------------
// S60: stream attributes.

// Every stream attribute set to something other than its default.
struct AttributeValues {
  infinirtStreamAttrValue window{}, sync{}, domain_map{}, domain{}, priority{};
  explicit AttributeValues(void* base, int priority_value) {
    window.accessPolicyWindow = {base, 256, 0.5f, infinirtAccessPropertyPersisting,
                                 infinirtAccessPropertyStreaming};
    sync.syncPolicy = infinirtSyncPolicyBlockingSync;
    domain_map.memSyncDomainMap = {1, 0};
    domain.memSyncDomain = infinirtLaunchMemSyncDomainRemote;
    priority.priority = priority_value;
  }
};

infinirtError_t SetAll(infinirtStream_t stream, const AttributeValues& v) {
  for (auto [attr, value] : {std::pair{infinirtStreamAttributeAccessPolicyWindow, &v.window},
                             std::pair{infinirtStreamAttributeSynchronizationPolicy, &v.sync},
                             std::pair{infinirtStreamAttributeMemSyncDomainMap, &v.domain_map},
                             std::pair{infinirtStreamAttributeMemSyncDomain, &v.domain},
                             std::pair{infinirtStreamAttributePriority, &v.priority}}) {
    if (const infinirtError_t e = infinirtStreamSetAttribute(stream, attr, value)) return e;
  }
  return infinirtSuccess;
}

// Whether a stream's attributes read back as `v`.
::testing::AssertionResult HasAll(infinirtStream_t stream, const AttributeValues& v) {
  infinirtStreamAttrValue got{};
  auto read = [&](infinirtStreamAttrID attr) {
    got = infinirtStreamAttrValue{};
    return infinirtStreamGetAttribute(stream, attr, &got) == infinirtSuccess;
  };
  if (!read(infinirtStreamAttributeAccessPolicyWindow) ||
      got.accessPolicyWindow.base_ptr != v.window.accessPolicyWindow.base_ptr ||
      got.accessPolicyWindow.num_bytes != 256 || got.accessPolicyWindow.hitRatio != 0.5f ||
      got.accessPolicyWindow.hitProp != infinirtAccessPropertyPersisting ||
      got.accessPolicyWindow.missProp != infinirtAccessPropertyStreaming) {
    return ::testing::AssertionFailure() << "the access policy window differs";
  }
  if (!read(infinirtStreamAttributeSynchronizationPolicy) ||
      got.syncPolicy != infinirtSyncPolicyBlockingSync) {
    return ::testing::AssertionFailure() << "the synchronization policy is " << got.syncPolicy;
  }
  if (!read(infinirtStreamAttributeMemSyncDomainMap) || got.memSyncDomainMap.default_ != 1 ||
      got.memSyncDomainMap.remote != 0) {
    return ::testing::AssertionFailure() << "the domain map differs";
  }
  if (!read(infinirtStreamAttributeMemSyncDomain) ||
      got.memSyncDomain != infinirtLaunchMemSyncDomainRemote) {
    return ::testing::AssertionFailure() << "the domain is " << got.memSyncDomain;
  }
  if (!read(infinirtStreamAttributePriority) || got.priority != v.priority.priority) {
    return ::testing::AssertionFailure() << "the priority is " << got.priority;
  }
  return ::testing::AssertionSuccess();
}

TEST_F(Conformance, S60_StreamAttributesReadBackAsSet) {
  infinirtStream_t stream = NewStream();
  infinirtStreamAttrValue value{};
  ASSERT_OK_OR_SKIP(
      infinirtStreamGetAttribute(stream, infinirtStreamAttributeAccessPolicyWindow, &value));
  EXPECT_EQ(value.accessPolicyWindow.num_bytes, 0u) << "a new stream has no window";
  int least = 0, greatest = 0;
  ASSERT_EQ(infinirtDeviceGetStreamPriorityRange(&least, &greatest), infinirtSuccess);
  const AttributeValues values(NewDeviceMemory(kBytes), greatest);
  ASSERT_EQ(SetAll(stream, values), infinirtSuccess);
  EXPECT_TRUE(HasAll(stream, values));
  // The priority attribute is the stream's priority.
  int priority = 99;
  EXPECT_EQ(infinirtStreamGetPriority(stream, &priority), infinirtSuccess);
  EXPECT_EQ(priority, greatest);
  // Clamped into the device's range, as at creation.
  infinirtStreamAttrValue beyond{};
  beyond.priority = least + 100;
  EXPECT_EQ(infinirtStreamSetAttribute(stream, infinirtStreamAttributePriority, &beyond),
            infinirtSuccess);
  EXPECT_EQ(infinirtStreamGetPriority(stream, &priority), infinirtSuccess);
  EXPECT_EQ(priority, least);
  // Work still runs on it.
  auto& ran = Keep<std::atomic<bool>>(false);
  ASSERT_EQ(infinirtLaunchHostFunc(stream, SetFlag, &ran), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_TRUE(ran.load());
}

TEST_F(Conformance, S60_BadStreamAttributesAreInvalidValueAndChangeNothing) {
  infinirtStream_t stream = NewStream();
  infinirtStreamAttrValue value{};
  ASSERT_OK_OR_SKIP(
      infinirtStreamGetAttribute(stream, infinirtStreamAttributeSynchronizationPolicy, &value));
  int least = 0, greatest = 0;
  ASSERT_EQ(infinirtDeviceGetStreamPriorityRange(&least, &greatest), infinirtSuccess);
  const AttributeValues values(NewDeviceMemory(kBytes), greatest);
  ASSERT_EQ(SetAll(stream, values), infinirtSuccess);
  // Kernel attributes, and ids that are no attribute.
  for (int attr : {0, 2, 4, 5, 6, 7, 11, 12, 13, 14, 15, 16, 99, -1}) {
    const auto id = static_cast<infinirtStreamAttrID>(attr);
    EXPECT_EQ(infinirtStreamGetAttribute(stream, id, &value), infinirtErrorInvalidValue) << attr;
    EXPECT_EQ(infinirtStreamSetAttribute(stream, id, &value), infinirtErrorInvalidValue) << attr;
  }
  EXPECT_EQ(infinirtStreamGetAttribute(stream, infinirtStreamAttributePriority, nullptr),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtStreamSetAttribute(stream, infinirtStreamAttributePriority, nullptr),
            infinirtErrorInvalidValue);
  auto refused = [&](infinirtStreamAttrID attr, const infinirtStreamAttrValue& bad) {
    return infinirtStreamSetAttribute(stream, attr, &bad) == infinirtErrorInvalidValue;
  };
  for (float ratio : {-0.25f, 1.5f, std::numeric_limits<float>::quiet_NaN()}) {
    infinirtStreamAttrValue bad = values.window;
    bad.accessPolicyWindow.hitRatio = ratio;
    EXPECT_TRUE(refused(infinirtStreamAttributeAccessPolicyWindow, bad)) << ratio;
  }
  infinirtStreamAttrValue bad = values.window;
  bad.accessPolicyWindow.missProp = infinirtAccessPropertyPersisting;
  EXPECT_TRUE(refused(infinirtStreamAttributeAccessPolicyWindow, bad));
  bad = values.window;
  bad.accessPolicyWindow.hitProp = static_cast<infinirtAccessProperty>(7);
  EXPECT_TRUE(refused(infinirtStreamAttributeAccessPolicyWindow, bad));
  for (int policy : {0, 5}) {
    bad = {};
    bad.syncPolicy = static_cast<infinirtSynchronizationPolicy>(policy);
    EXPECT_TRUE(refused(infinirtStreamAttributeSynchronizationPolicy, bad)) << policy;
  }
  bad = {};
  bad.memSyncDomain = static_cast<infinirtLaunchMemSyncDomain>(2);
  EXPECT_TRUE(refused(infinirtStreamAttributeMemSyncDomain, bad));
  EXPECT_TRUE(HasAll(stream, values)) << "a refused call changed an attribute";
  // Handles.
  infinirtStream_t destroyed = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&destroyed), infinirtSuccess);
  ASSERT_EQ(infinirtStreamDestroy(destroyed), infinirtSuccess);
  EXPECT_EQ(infinirtStreamGetAttribute(destroyed, infinirtStreamAttributePriority, &value),
            infinirtErrorContextIsDestroyed);
  EXPECT_EQ(infinirtStreamSetAttribute(destroyed, infinirtStreamAttributePriority, &value),
            infinirtErrorContextIsDestroyed);
  auto* garbage = reinterpret_cast<infinirtStream_t>(uintptr_t{0x5a5a5a50});
  EXPECT_EQ(infinirtStreamGetAttribute(garbage, infinirtStreamAttributePriority, &value),
            infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtStreamCopyAttributes(stream, destroyed), infinirtErrorContextIsDestroyed);
  EXPECT_EQ(infinirtStreamCopyAttributes(destroyed, stream), infinirtErrorContextIsDestroyed);
  EXPECT_TRUE(HasAll(stream, values));
}

TEST_F(Conformance, S60_CopyAttributesCopiesEveryStreamAttribute) {
  infinirtStream_t source = NewStream();
  infinirtStream_t target = NewStream();
  infinirtStreamAttrValue value{};
  ASSERT_OK_OR_SKIP(
      infinirtStreamGetAttribute(source, infinirtStreamAttributeMemSyncDomain, &value));
  int least = 0, greatest = 0;
  ASSERT_EQ(infinirtDeviceGetStreamPriorityRange(&least, &greatest), infinirtSuccess);
  const AttributeValues values(NewDeviceMemory(kBytes), greatest);
  ASSERT_EQ(SetAll(source, values), infinirtSuccess);
  ASSERT_FALSE(HasAll(target, values));
  EXPECT_EQ(infinirtStreamCopyAttributes(target, source), infinirtSuccess);
  EXPECT_TRUE(HasAll(target, values));
  EXPECT_TRUE(HasAll(source, values)) << "the source changed";
  int priority = 99;
  EXPECT_EQ(infinirtStreamGetPriority(target, &priority), infinirtSuccess);
  EXPECT_EQ(priority, greatest);
  if (device_count() < 2) return;  // the rest needs a second device
  int current = 0;
  ASSERT_EQ(infinirtGetDevice(&current), infinirtSuccess);
  ASSERT_EQ(infinirtSetDevice(current == 0 ? 1 : 0), infinirtSuccess);
  infinirtStream_t elsewhere = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&elsewhere), infinirtSuccess);
  EXPECT_EQ(infinirtStreamCopyAttributes(elsewhere, source), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtStreamDestroy(elsewhere), infinirtSuccess);
  ASSERT_EQ(infinirtSetDevice(current), infinirtSuccess);
}

}  // namespace
}  // namespace infinirt::conformance
