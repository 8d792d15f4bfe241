// S27, S28: device reset and device selection; and InfiniRT's rules for host functions (they run
// on the runtime's threads, and blocking calls made from them are refused, not deadlocked).
#include <cctype>
#include <climits>
#include <cstdio>
#include <cstring>
#include <thread>
#include <utility>

#include "conformance.h"

namespace infinirt::conformance {
namespace {

// ---------------------------------------------------------------------------------------------
// S27: DeviceReset destroys the device's allocations, streams and events; the device works
// afterwards.

TEST_F(Conformance, S27_DeviceResetDestroysAllocationsStreamsAndEvents) {
  REQUIRE_NON_BLOCKING_STREAMS();
  infinirtStream_t stream = NewStream();
  infinirtStream_t non_blocking = NewStream(infinirtStreamNonBlocking);
  infinirtEvent_t event = NewEvent();
  unsigned char* device = NewDeviceMemory(kBytes);
  unsigned char* pinned = NewPinnedMemory(kBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(pinned, nullptr);
  ASSERT_OK_OR_SKIP(infinirtEventRecord(event, stream));
  ASSERT_OK_OR_SKIP(infinirtDeviceSynchronize());

  ASSERT_OK_OR_SKIP(infinirtDeviceReset());

  EXPECT_EQ(infinirtFree(device), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtFreeHost(pinned), infinirtErrorInvalidValue);
  for (infinirtStream_t dead : {stream, non_blocking}) {  // destroyed streams: S7
    EXPECT_EQ(infinirtStreamQuery(dead), infinirtErrorContextIsDestroyed);
    EXPECT_EQ(infinirtStreamSynchronize(dead), infinirtErrorContextIsDestroyed);
    EXPECT_EQ(infinirtMemsetAsync(nullptr, 0, 0, dead), infinirtErrorContextIsDestroyed);
    EXPECT_EQ(infinirtStreamDestroy(dead), infinirtErrorContextIsDestroyed);
  }
  EXPECT_EQ(infinirtEventQuery(event), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtEventRecord(event, nullptr), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtEventDestroy(event), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidResourceHandle);

  // The device works afterwards, the special streams included.
  infinirtStream_t fresh = NewStream();
  infinirtEvent_t fresh_event = NewEvent();
  unsigned char* fresh_device = NewDeviceMemory(kBytes);
  unsigned char* fresh_pinned = NewPinnedMemory(kBytes);
  ASSERT_NE(fresh_device, nullptr);
  ASSERT_NE(fresh_pinned, nullptr);
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(fresh_device, 0x27, kBytes, fresh));
  ASSERT_OK_OR_SKIP(
      infinirtMemcpyAsync(fresh_pinned, fresh_device, kBytes, infinirtMemcpyDeviceToHost, fresh));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(fresh_event, fresh));
  ASSERT_OK_OR_SKIP(infinirtEventSynchronize(fresh_event));
  EXPECT_TRUE(AllBytesAre(fresh_pinned, kBytes, 0x27));
  EXPECT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(infinirtStreamPerThread), infinirtSuccess);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtSuccess);
}

// InfiniRT's documented choice (infinirt.h): DeviceReset waits for the device's queued work
// before destroying anything.
TEST_F(Conformance, S27_DeviceResetWaitsForQueuedWork) {
  infinirtStream_t stream = NewStream();
  auto& ran = Keep<std::atomic<bool>>(false);
  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, SetFlag, &ran));

  DelayedOpen release(gate);
  EXPECT_EQ(infinirtDeviceReset(), infinirtSuccess);
  EXPECT_TRUE(release.started()) << "DeviceReset did not wait for queued work";
  EXPECT_TRUE(ran.load());
}

// ---------------------------------------------------------------------------------------------
// S28: SetDevice does not synchronise; objects belong to the device current at creation.

TEST_F(Conformance, S28_SetDeviceDoesNotSynchronize) {
  infinirtStream_t stream = NewStream();
  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(gate.Block(nullptr));  // the legacy stream too

  for (int device = device_count() - 1; device >= 0; --device) {
    EXPECT_EQ(infinirtSetDevice(device), infinirtSuccess);
  }
  EXPECT_FALSE(gate.timed_out()) << "SetDevice waited for the device";
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtErrorNotReady);
  gate.Open();
}

TEST_F(Conformance, S28_SetDeviceValidatesTheOrdinalAndGetDeviceReportsIt) {
  static_assert(infinirtErrorInvalidDevice == 101, "CUDA's value");
  for (int device = 0; device < device_count(); ++device) {
    ASSERT_OK_OR_SKIP(infinirtSetDevice(device));
    int current = -1;
    ASSERT_OK_OR_SKIP(infinirtGetDevice(&current));
    EXPECT_EQ(current, device);
  }
  ASSERT_OK_OR_SKIP(infinirtSetDevice(0));
  for (int invalid : {device_count(), device_count() + 1, -1, INT_MIN}) {
    EXPECT_EQ(infinirtSetDevice(invalid), infinirtErrorInvalidDevice) << invalid;
    int current = -1;
    ASSERT_OK_OR_SKIP(infinirtGetDevice(&current));
    EXPECT_EQ(current, 0) << "a rejected SetDevice changed the current device";
  }
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtGetDevice(nullptr), infinirtErrorInvalidValue);
}

TEST_F(Conformance, S28_ObjectsBelongToTheDeviceCurrentAtCreation) {
  unsigned char* device_memory = NewDeviceMemory(kBytes);
  ASSERT_NE(device_memory, nullptr);
  infinirtStream_t stream = NewStream();
  infinirtPointerAttributes attributes{};
  ASSERT_OK_OR_SKIP(infinirtPointerGetAttributes(&attributes, device_memory));
  EXPECT_EQ(attributes.device, 0);
  if (device_count() < 2) GTEST_SKIP() << "the rest needs two devices";

  ASSERT_OK_OR_SKIP(infinirtSetDevice(1));
  // Switching devices does not move existing objects.
  ASSERT_OK_OR_SKIP(infinirtPointerGetAttributes(&attributes, device_memory));
  EXPECT_EQ(attributes.device, 0);
  infinirtEvent_t event_on_1 = NewEvent();
  EXPECT_EQ(infinirtEventRecord(event_on_1, stream), infinirtErrorInvalidResourceHandle)
      << "an event of device 1 was recorded into a stream of device 0";
  // The current device is per host thread.
  int other_current = -1;
  ScopedThread other([&] { infinirtGetDevice(&other_current); });
  other.Join();
  EXPECT_EQ(other_current, 0);
  ASSERT_OK_OR_SKIP(infinirtSetDevice(0));
}

// ---------------------------------------------------------------------------------------------
// Host functions (InfiniRT, CPU backend): they run on the runtime's worker threads, and
// blocking calls made from them return NotPermitted instead of deadlocking (CUDA forbids API
// calls in host functions).

struct ThreadProbe {
  std::atomic<bool> ran{false};
  std::thread::id id;
};
void RecordThread(void* probe) {
  auto* p = static_cast<ThreadProbe*>(probe);
  p->id = std::this_thread::get_id();
  p->ran.store(true);
}

TEST_F(Conformance, S41_AttributesProgramsDivideByAreNeverZero) {
  int device = -1;
  ASSERT_EQ(infinirtGetDevice(&device), infinirtSuccess);
  for (auto [attribute, name] :
       {std::pair{infinirtDevAttrClockRate, "ClockRate"},
        std::pair{infinirtDevAttrMemoryClockRate, "MemoryClockRate"},
        std::pair{infinirtDevAttrGlobalMemoryBusWidth, "GlobalMemoryBusWidth"},
        std::pair{infinirtDevAttrMultiProcessorCount, "MultiProcessorCount"},
        std::pair{infinirtDevAttrWarpSize, "WarpSize"},
        std::pair{infinirtDevAttrMaxThreadsPerBlock, "MaxThreadsPerBlock"}}) {
    int value = 0;
    ASSERT_OK_OR_SKIP(infinirtDeviceGetAttribute(&value, attribute, device));
    EXPECT_GT(value, 0) << name;
  }
  infinirtDeviceProp prop{};
  ASSERT_EQ(infinirtGetDeviceProperties(&prop, device), infinirtSuccess);
  EXPECT_GT(prop.memoryBusWidth, 0);
  EXPECT_GT(prop.multiProcessorCount, 0);
}

TEST_F(Conformance, S44_DeviceFlagsAreKeptPerDevice) {
  unsigned int flags = 0;
  ASSERT_EQ(infinirtGetDeviceFlags(&flags), infinirtSuccess);
  EXPECT_TRUE(flags & infinirtDeviceMapHost) << "implicit for the runtime";
  ASSERT_EQ(infinirtSetDeviceFlags(infinirtDeviceScheduleBlockingSync), infinirtSuccess);
  ASSERT_EQ(infinirtGetDeviceFlags(&flags), infinirtSuccess);
  EXPECT_EQ(flags,
            static_cast<unsigned int>(infinirtDeviceScheduleBlockingSync | infinirtDeviceMapHost));
  for (unsigned int bad : {0x3u, 0x5u, 0x7u, 0x20u, 0x100u}) {
    EXPECT_EQ(infinirtSetDeviceFlags(bad), infinirtErrorInvalidValue) << bad;
  }
  EXPECT_EQ(infinirtGetDeviceFlags(nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
  ASSERT_EQ(infinirtGetDeviceFlags(&flags), infinirtSuccess);
  EXPECT_EQ(flags & infinirtDeviceScheduleMask,
            static_cast<unsigned int>(infinirtDeviceScheduleBlockingSync))
      << "a refused call changed the flags";
  if (device_count() > 1) {  // another device has its own
    ASSERT_EQ(infinirtSetDevice(1), infinirtSuccess);
    ASSERT_EQ(infinirtGetDeviceFlags(&flags), infinirtSuccess);
    EXPECT_EQ(flags & infinirtDeviceScheduleMask,
              static_cast<unsigned int>(infinirtDeviceScheduleAuto));
    ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);
  }
  ASSERT_EQ(infinirtSetDeviceFlags(infinirtDeviceScheduleAuto), infinirtSuccess);
}

TEST_F(Conformance, S44_PciBusIdsRoundTrip) {
  for (int device = 0; device < device_count(); ++device) {
    char bus_id[32] = {};
    ASSERT_OK_OR_SKIP(infinirtDeviceGetPCIBusId(bus_id, sizeof bus_id, device));
    EXPECT_EQ(std::strlen(bus_id), 12u) << bus_id;
    infinirtDeviceProp prop{};
    ASSERT_EQ(infinirtGetDeviceProperties(&prop, device), infinirtSuccess);
    char expected[32];
    std::snprintf(expected, sizeof expected, "%04x:%02x:%02x.0", prop.pciDomainID, prop.pciBusID,
                  prop.pciDeviceID);
    EXPECT_STREQ(bus_id, expected);
    int found = -1;
    ASSERT_EQ(infinirtDeviceGetByPCIBusId(&found, bus_id), infinirtSuccess);
    EXPECT_EQ(found, device) << bus_id;
    // Upper case, and without the domain when it is 0.
    for (char& c : bus_id) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
    ASSERT_EQ(infinirtDeviceGetByPCIBusId(&found, bus_id), infinirtSuccess);
    EXPECT_EQ(found, device);
    // A buffer too short for the id (and its terminator): InvalidValue, as NVIDIA's runtime
    // answers, not a truncated id.
    char short_id[12] = {};
    EXPECT_EQ(infinirtDeviceGetPCIBusId(short_id, sizeof short_id, device),
              infinirtErrorInvalidValue);
    EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
    char exact_id[13] = {};
    ASSERT_EQ(infinirtDeviceGetPCIBusId(exact_id, sizeof exact_id, device), infinirtSuccess);
    EXPECT_STREQ(exact_id, expected);
  }
  char bus_id[32];
  int found = -1;
  EXPECT_EQ(infinirtDeviceGetPCIBusId(nullptr, 32, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtDeviceGetPCIBusId(bus_id, 0, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtDeviceGetPCIBusId(bus_id, 32, device_count()), infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtDeviceGetByPCIBusId(nullptr, "0000:00:00.0"), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtDeviceGetByPCIBusId(&found, nullptr), infinirtErrorInvalidValue);
  for (const char* bad :
       {"", "zz:00.0", "0000:00:00", "0000:00:00.0 ", "1:2:3:4.0", "0000:100:00.0"}) {
    EXPECT_EQ(infinirtDeviceGetByPCIBusId(&found, bad), infinirtErrorInvalidValue) << bad;
  }
  EXPECT_EQ(infinirtDeviceGetByPCIBusId(&found, "fffe:fe:1f.0"), infinirtErrorInvalidDevice);
  EXPECT_EQ(found, -1);
  infinirtGetLastError();
}

TEST_F(Conformance, HostFunction_RunsOnAnotherThread) {
  infinirtStream_t stream = NewStream();
  for (infinirtStream_t target :
       {stream, static_cast<infinirtStream_t>(nullptr), infinirtStreamPerThread}) {
    auto& probe = Keep<ThreadProbe>();
    ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(target, RecordThread, &probe));
    ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(target));
    ASSERT_TRUE(probe.ran.load());
    EXPECT_NE(probe.id, std::this_thread::get_id());
  }
}

// What a host function got from the blocking calls it made.
struct BlockingCalls {
  infinirtStream_t own_stream = nullptr;
  infinirtEvent_t pending_event = nullptr;  // recorded after the host function, in its stream
  void* device = nullptr;                   // freed from the host function
  void* pinned = nullptr;                   // freed from the host function
  void* copy_source = nullptr;              // device memory
  void* copy_target = nullptr;              // pinned memory
  infinirtError_t stream_sync = infinirtErrorUnknown;
  infinirtError_t legacy_sync = infinirtErrorUnknown;
  infinirtError_t device_sync = infinirtErrorUnknown;
  infinirtError_t event_sync = infinirtErrorUnknown;
  infinirtError_t memcpy = infinirtErrorUnknown;
  infinirtError_t memset = infinirtErrorUnknown;
  infinirtError_t free = infinirtErrorUnknown;
  infinirtError_t free_host = infinirtErrorUnknown;
  infinirtError_t last_error = infinirtErrorUnknown;
  std::atomic<bool> event_recorded{false};
  std::atomic<bool> done{false};
};

void CallBlockingApis(void* calls) {
  auto* c = static_cast<BlockingCalls*>(calls);
  // Until the event is recorded behind this function, synchronising with it could not block.
  WaitUntil([&] { return c->event_recorded.load(); });
  c->stream_sync = infinirtStreamSynchronize(c->own_stream);
  c->legacy_sync = infinirtStreamSynchronize(nullptr);
  c->device_sync = infinirtDeviceSynchronize();
  c->event_sync = infinirtEventSynchronize(c->pending_event);
  c->memcpy = infinirtMemcpy(c->copy_target, c->copy_source, 64, infinirtMemcpyDeviceToHost);
  c->memset = infinirtMemset(c->copy_source, 0, 64);
  c->free = infinirtFree(c->device);
  c->free_host = infinirtFreeHost(c->pinned);
  c->last_error = infinirtGetLastError();
  c->done.store(true);
}

// Runs CallBlockingApis in a host function of `stream`, with the pending event recorded after it
// in the same stream: every wait it attempts would wait for itself. Nothing else holds a stream
// with a host function meanwhile: a runtime may run the host functions of all streams on one
// thread (CUDA does), and one spinning elsewhere would keep this one from starting.
void RunBlockingCallsInHostFunction(BlockingCalls& calls, infinirtStream_t stream) {
  calls.own_stream = stream;
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CallBlockingApis, &calls));
  const infinirtError_t recorded = infinirtEventRecord(calls.pending_event, stream);
  calls.event_recorded.store(true);  // also on failure: the function must not wait for ever
  ASSERT_OK_OR_SKIP(recorded);
  EXPECT_TRUE(WaitUntil([&] { return calls.done.load(); }))
      << "a blocking call made in a host function did not return";
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
}

TEST_F(Conformance, HostFunction_BlockingCallsReturnNotPermitted) {
  static_assert(infinirtErrorNotPermitted == 800, "CUDA's value");
  auto& calls = Keep<BlockingCalls>();
  calls.pending_event = NewEvent();
  calls.device = NewDeviceMemory(kBytes);
  calls.pinned = NewPinnedMemory(kBytes);
  calls.copy_source = NewDeviceMemory(kBytes);
  calls.copy_target = NewPinnedMemory(kBytes);
  ASSERT_NE(calls.device, nullptr);
  ASSERT_NE(calls.pinned, nullptr);
  ASSERT_NE(calls.copy_source, nullptr);
  ASSERT_NE(calls.copy_target, nullptr);
  RunBlockingCallsInHostFunction(calls, NewStream());
  if (IsSkipped()) return;  // the backend has no host functions

  EXPECT_EQ(calls.stream_sync, infinirtErrorNotPermitted) << "StreamSynchronize(own stream)";
  EXPECT_EQ(calls.legacy_sync, infinirtErrorNotPermitted) << "StreamSynchronize(0)";
  EXPECT_EQ(calls.device_sync, infinirtErrorNotPermitted) << "DeviceSynchronize";
  EXPECT_EQ(calls.event_sync, infinirtErrorNotPermitted) << "EventSynchronize(pending)";
  EXPECT_EQ(calls.memcpy, infinirtErrorNotPermitted) << "Memcpy";
  EXPECT_EQ(calls.memset, infinirtErrorNotPermitted) << "Memset";
  EXPECT_EQ(calls.free, infinirtErrorNotPermitted) << "Free";
  EXPECT_EQ(calls.free_host, infinirtErrorNotPermitted) << "FreeHost";
  // The refusals are the worker thread's last error, not this thread's (S17).
  EXPECT_EQ(calls.last_error, infinirtErrorNotPermitted);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtSuccess);
}

// A refused call has no effect: Free and FreeHost refused in a host function leave the memory
// allocated, so the program can free it later from a host thread.
TEST_F(Conformance, HostFunction_RefusedFreeKeepsTheAllocation) {
  auto& calls = Keep<BlockingCalls>();
  calls.pending_event = NewEvent();
  calls.copy_source = NewDeviceMemory(kBytes);
  calls.copy_target = NewPinnedMemory(kBytes);
  ASSERT_OK_OR_SKIP(infinirtMalloc(&calls.device, kBytes));
  ASSERT_OK_OR_SKIP(infinirtMallocHost(&calls.pinned, kBytes));
  RunBlockingCallsInHostFunction(calls, NewStream());
  if (IsSkipped()) return;  // the backend has no host functions
  ASSERT_EQ(calls.free, infinirtErrorNotPermitted);
  ASSERT_EQ(calls.free_host, infinirtErrorNotPermitted);

  infinirtPointerAttributes attributes{};
  ASSERT_OK_OR_SKIP(infinirtPointerGetAttributes(&attributes, calls.device));
  EXPECT_EQ(attributes.type, infinirtMemoryTypeDevice) << "the refused Free unregistered it";
  ASSERT_OK_OR_SKIP(infinirtPointerGetAttributes(&attributes, calls.pinned));
  EXPECT_EQ(attributes.type, infinirtMemoryTypeHost) << "the refused FreeHost unregistered it";
  EXPECT_EQ(infinirtFree(calls.device), infinirtSuccess);
  EXPECT_EQ(infinirtFreeHost(calls.pinned), infinirtSuccess);
}

// DeviceReset waits for the device's queued work (infinirt.h), so from a host function it is
// refused like the other blocking calls, and a refused reset destroys nothing.
struct ResetCall {
  infinirtError_t result = infinirtErrorUnknown;
  std::atomic<bool> done{false};
};
void CallDeviceReset(void* call) {
  auto* c = static_cast<ResetCall*>(call);
  c->result = infinirtDeviceReset();
  c->done.store(true);
}

TEST_F(Conformance, HostFunction_RefusedDeviceResetDestroysNothing) {
  infinirtStream_t stream = NewStream();
  infinirtStream_t other = NewStream();
  infinirtEvent_t event = NewEvent();
  unsigned char* device = NewDeviceMemory(kBytes);
  unsigned char* pinned = NewPinnedMemory(kBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(pinned, nullptr);
  auto& call = Keep<ResetCall>();

  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CallDeviceReset, &call));
  ASSERT_TRUE(WaitUntil([&] { return call.done.load(); })) << "DeviceReset did not return";
  EXPECT_EQ(call.result, infinirtErrorNotPermitted);

  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess) << "the stream was destroyed";
  EXPECT_EQ(infinirtStreamQuery(other), infinirtSuccess) << "the stream was destroyed";
  EXPECT_EQ(infinirtEventRecord(event, other), infinirtSuccess) << "the event was destroyed";
  infinirtPointerAttributes attributes{};
  ASSERT_OK_OR_SKIP(infinirtPointerGetAttributes(&attributes, device));
  EXPECT_EQ(attributes.type, infinirtMemoryTypeDevice) << "the device memory was released";
  ASSERT_OK_OR_SKIP(infinirtPointerGetAttributes(&attributes, pinned));
  EXPECT_EQ(attributes.type, infinirtMemoryTypeHost) << "the pinned memory was released";
}

// A host-to-host infinirtMemcpyAsync is synchronous (S9), so from a host function it is
// refused like the other blocking calls — and refused before anything is enqueued: the copy
// must not happen later behind the caller's back.
struct HostCopyCall {
  unsigned char* source = nullptr;  // pinned
  unsigned char* target = nullptr;  // pinned
  infinirtStream_t stream = nullptr;
  infinirtError_t result = infinirtErrorUnknown;
  std::atomic<bool> done{false};
};
void CallHostToHostCopy(void* call) {
  auto* c = static_cast<HostCopyCall*>(call);
  c->result = infinirtMemcpyAsync(c->target, c->source, 64, infinirtMemcpyHostToHost, c->stream);
  c->done.store(true);
}

TEST_F(Conformance, HostFunction_RefusedHostToHostCopyDoesNotHappen) {
  auto& call = Keep<HostCopyCall>();
  call.source = NewPinnedMemory(kBytes);
  call.target = NewPinnedMemory(kBytes);
  ASSERT_NE(call.source, nullptr);
  ASSERT_NE(call.target, nullptr);
  std::memset(call.source, 0x5A, 64);
  std::memset(call.target, 0, 64);
  call.stream = NewStream();
  infinirtStream_t caller = NewStream();
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(caller, CallHostToHostCopy, &call));
  ASSERT_TRUE(WaitUntil([&] { return call.done.load(); }));
  EXPECT_EQ(call.result, infinirtErrorNotPermitted);
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(call.stream));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(caller));
  EXPECT_EQ(call.target[0], 0) << "the refused copy was carried out";
}

}  // namespace
}  // namespace infinirt::conformance
