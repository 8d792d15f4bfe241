// A backend without native graphs (tests/loader/fake_plugin.cc built with FAKE_ASYNC: streams,
// events and the asynchronous entries, a GraphInstantiate that declines). Capture is the core's,
// so it works there as anywhere; launching replays the captured nodes through the plugin's
// ordinary entries (core/api_graph.cc, Replay). The fake runs work when it is enqueued, so the
// results are there when the launch returns; its call counts (fakeAsyncCalls, found with
// dlsym) show which entries a launch went through.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <string>
#include <vector>

#include "infinirt.h"
#include "loader_support.h"

namespace infinirt::loader_test {
namespace {

constexpr int kFakeDevice = 0;  // accelerators come before the CPU
constexpr size_t kBytes = 512;

// The fake's listing (device 0's backend).
infinirtBackendProp FakeListing() {
  infinirtBackendProp prop{};
  int count = 0;
  EXPECT_EQ(infinirtGetBackendCount(&count), infinirtSuccess);
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(infinirtGetBackendProperties(&prop, i), infinirtSuccess);
    if (std::string(prop.name).rfind("fake_async", 0) == 0) return prop;
  }
  ADD_FAILURE() << "no fake_async backend is listed";
  return infinirtBackendProp{};
}

// Calls of a fake entry since the runtime initialised it (or its live streams / events).
int FakeCalls(const char* entry) {
  void* library = dlopen(FakeListing().path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  EXPECT_NE(library, nullptr) << "the fake plugin is not loaded";
  if (library == nullptr) return -1;
  using CallsFn = int (*)(const char*);
  auto calls = reinterpret_cast<CallsFn>(dlsym(library, "fakeAsyncCalls"));
  EXPECT_NE(calls, nullptr) << dlerror();
  const int count = calls ? calls(entry) : -1;
  dlclose(library);
  return count;
}

std::vector<unsigned char> Bytes(unsigned char seed) {
  std::vector<unsigned char> bytes(kBytes);
  for (size_t i = 0; i < kBytes; ++i) bytes[i] = static_cast<unsigned char>(seed + i * 13);
  return bytes;
}

// Overwrites a buffer in place: a graph holds the address it captured.
void Refill(std::vector<unsigned char>* buffer, unsigned char seed) {
  const std::vector<unsigned char> bytes = Bytes(seed);
  std::copy(bytes.begin(), bytes.end(), buffer->begin());
}

// A host function node: records, at each run, the first byte of the device buffer, which the
// copy before it in the graph has just written.
struct HostLog {
  const unsigned char* device = nullptr;
  std::vector<int> first_bytes;
};
void RecordFirstByte(void* data) {
  auto* log = static_cast<HostLog*>(data);
  log->first_bytes.push_back(log->device[0]);
}

class GraphReplay : public RuntimeTest {
 protected:
  void SetUp() override {
    RuntimeTest::SetUp();
    ASSERT_EQ(infinirtSetDevice(kFakeDevice), infinirtSuccess);
    infinirtDeviceProp prop{};
    ASSERT_EQ(infinirtGetDeviceProperties(&prop, kFakeDevice), infinirtSuccess);
    ASSERT_EQ(std::string(prop.backendName).rfind("fake_async", 0), 0u) << prop.backendName;
    ASSERT_EQ(infinirtStreamCreate(&stream_), infinirtSuccess);
    ASSERT_EQ(infinirtMalloc(&device_, kBytes), infinirtSuccess);
  }

  void TearDown() override {
    EXPECT_EQ(infinirtFree(device_), infinirtSuccess);
    EXPECT_EQ(infinirtStreamDestroy(stream_), infinirtSuccess);
    EXPECT_EQ(FakeCalls("live_streams"), 0) << "a stream of the fake was not destroyed";
    EXPECT_EQ(FakeCalls("live_events"), 0) << "an event of the fake was not destroyed";
    RuntimeTest::TearDown();
  }

  void BeginCapture() {
    ASSERT_EQ(infinirtStreamBeginCapture(stream_, infinirtStreamCaptureModeGlobal),
              infinirtSuccess);
  }

  infinirtGraph_t EndCapture() {
    infinirtGraph_t graph = nullptr;
    EXPECT_EQ(infinirtStreamEndCapture(stream_, &graph), infinirtSuccess);
    EXPECT_NE(graph, nullptr);
    return graph;
  }

  infinirtStream_t stream_ = nullptr;
  void* device_ = nullptr;  // the fake's memory
};

TEST_F(GraphReplay, CopyHostFunctionAndMemsetReplayAtEveryLaunch) {
  std::vector<unsigned char> in = Bytes(1);
  std::vector<unsigned char> out(kBytes, 0);
  HostLog log;
  log.device = static_cast<const unsigned char*>(device_);
  auto* device = static_cast<unsigned char*>(device_);

  BeginCapture();
  ASSERT_EQ(infinirtMemcpyAsync(device, in.data(), kBytes, infinirtMemcpyHostToDevice, stream_),
            infinirtSuccess);
  ASSERT_EQ(infinirtLaunchHostFunc(stream_, &RecordFirstByte, &log), infinirtSuccess);
  ASSERT_EQ(infinirtMemsetAsync(device + kBytes / 2, 0xEE, kBytes / 2, stream_), infinirtSuccess);
  ASSERT_EQ(infinirtMemcpyAsync(out.data(), device, kBytes, infinirtMemcpyDeviceToHost, stream_),
            infinirtSuccess);
  infinirtGraph_t graph = EndCapture();
  // Captured, not run: nothing reached the plugin.
  EXPECT_EQ(FakeCalls("MemcpyAsync"), 0);
  EXPECT_EQ(FakeCalls("MemsetAsync"), 0);
  EXPECT_EQ(FakeCalls("LaunchHostFunc"), 0);
  EXPECT_TRUE(log.first_bytes.empty());
  EXPECT_EQ(out, std::vector<unsigned char>(kBytes, 0));

  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  for (int launch = 1; launch <= 4; ++launch) {
    SCOPED_TRACE("launch " + std::to_string(launch));
    Refill(&in, static_cast<unsigned char>(10 * launch));
    // Even launches go to the legacy stream: the exec's order event keeps them in sequence.
    infinirtStream_t stream = launch % 2 ? stream_ : nullptr;
    ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
    ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    std::vector<unsigned char> expected = in;
    std::memset(expected.data() + kBytes / 2, 0xEE, kBytes / 2);
    EXPECT_EQ(out, expected);
    ASSERT_EQ(log.first_bytes.size(), static_cast<size_t>(launch));
    EXPECT_EQ(log.first_bytes.back(), in[0]) << "the host function ran before the copy";
    // Each launch went through the plugin's entries, node by node.
    EXPECT_EQ(FakeCalls("MemcpyAsync"), 2 * launch);
    EXPECT_EQ(FakeCalls("MemsetAsync"), launch);
    EXPECT_EQ(FakeCalls("LaunchHostFunc"), launch);
    EXPECT_EQ(FakeCalls("EventRecord"), launch);
    EXPECT_EQ(FakeCalls("StreamWaitEvent"), launch - 1);
  }
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
}

TEST_F(GraphReplay, AGraphCanBeInstantiatedTwiceAndOutliveItsGraph) {
  std::vector<unsigned char> out(kBytes, 0);
  ASSERT_EQ(infinirtMemset(device_, 0x5C, kBytes), infinirtSuccess);
  BeginCapture();
  ASSERT_EQ(infinirtMemcpyAsync(out.data(), device_, kBytes, infinirtMemcpyDeviceToHost, stream_),
            infinirtSuccess);
  infinirtGraph_t graph = EndCapture();
  infinirtGraphExec_t first = nullptr;
  infinirtGraphExec_t second = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&first, graph, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGraphInstantiate(&second, graph, 0), infinirtSuccess);
  EXPECT_EQ(FakeCalls("live_events"), 2) << "one order event per replayed exec";
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  ASSERT_EQ(infinirtGraphLaunch(first, stream_), infinirtSuccess);
  EXPECT_EQ(out, std::vector<unsigned char>(kBytes, 0x5C));
  ASSERT_EQ(infinirtMemset(device_, 0x6D, kBytes), infinirtSuccess);
  ASSERT_EQ(infinirtGraphLaunch(second, stream_), infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(stream_), infinirtSuccess);
  EXPECT_EQ(out, std::vector<unsigned char>(kBytes, 0x6D));
  EXPECT_EQ(infinirtGraphExecDestroy(first), infinirtSuccess);
  EXPECT_EQ(infinirtGraphExecDestroy(second), infinirtSuccess);
}

// The fake has no MallocAsync: outside capture it is honestly not supported, but memory nodes
// need only Malloc (the graph owns the memory), so they replay like any other node, with the
// relaunch rule of S38.
TEST_F(GraphReplay, GraphMemoryNodesReplayOnABackendWithoutMallocAsync) {
  void* pointer = nullptr;
  EXPECT_EQ(infinirtMallocAsync(&pointer, kBytes, stream_), infinirtErrorNotSupported);
  infinirtGetLastError();

  std::vector<unsigned char> in = Bytes(3);
  std::vector<unsigned char> out(kBytes, 0);
  BeginCapture();
  void* memory = nullptr;
  ASSERT_EQ(infinirtMallocAsync(&memory, kBytes, stream_), infinirtSuccess);
  ASSERT_NE(memory, nullptr);
  ASSERT_EQ(infinirtMemcpyAsync(memory, in.data(), kBytes, infinirtMemcpyHostToDevice, stream_),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemsetAsync(memory, 0x11, 8, stream_), infinirtSuccess);
  ASSERT_EQ(infinirtMemcpyAsync(out.data(), memory, kBytes, infinirtMemcpyDeviceToHost, stream_),
            infinirtSuccess);
  infinirtGraph_t graph = EndCapture();

  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  for (int launch = 1; launch <= 3; ++launch) {
    SCOPED_TRACE("launch " + std::to_string(launch));
    Refill(&in, static_cast<unsigned char>(20 * launch));
    ASSERT_EQ(infinirtGraphLaunch(exec, stream_), infinirtSuccess);
    std::vector<unsigned char> expected = in;
    std::memset(expected.data(), 0x11, 8);
    EXPECT_EQ(out, expected);
    // Not freed yet: no relaunch.
    EXPECT_EQ(infinirtGraphLaunch(exec, stream_), infinirtErrorInvalidValue);
    EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
    EXPECT_EQ(infinirtFreeAsync(memory, stream_), infinirtSuccess);
  }
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);

  // AutoFreeOnLaunch: relaunch without freeing.
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, infinirtGraphInstantiateFlagAutoFreeOnLaunch),
            infinirtSuccess);
  for (int launch = 1; launch <= 3; ++launch) {
    SCOPED_TRACE("auto-free launch " + std::to_string(launch));
    Refill(&in, static_cast<unsigned char>(30 * launch));
    ASSERT_EQ(infinirtGraphLaunch(exec, stream_), infinirtSuccess);
    std::vector<unsigned char> expected = in;
    std::memset(expected.data(), 0x11, 8);
    EXPECT_EQ(out, expected);
  }
  EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
}

// --- Native functions (infinirtLaunchNativeFunc) ----------------------------------------------

// What a native function saw at each call, and how often its data was released.
struct NativeLog {
  const unsigned char* device = nullptr;  // read at each call: the copy before it has run
  std::vector<void*> streams;
  std::vector<int> first_bytes;
  int releases = 0;
  infinirtError_t answer = infinirtSuccess;
};
infinirtError_t RecordNativeCall(void* native_stream, void* data) {
  auto* log = static_cast<NativeLog*>(data);
  log->streams.push_back(native_stream);
  log->first_bytes.push_back(log->device[0]);
  return log->answer;
}
void ReleaseNativeLog(void* data) { ++static_cast<NativeLog*>(data)->releases; }

void* NativeOf(infinirtStream_t stream) {
  void* native = nullptr;
  EXPECT_EQ(infinirtStreamGetNativeHandle(&native, stream), infinirtSuccess);
  return native;
}

// GraphInstantiate calls the fake has had.
int Instantiations() { return FakeCalls("GraphInstantiate"); }

TEST_F(GraphReplay, ANativeFunctionRunsAtOnceOutsideCaptureAndIsReleasedThen) {
  NativeLog log;
  log.device = static_cast<const unsigned char*>(device_);
  ASSERT_EQ(infinirtMemset(device_, 0x21, kBytes), infinirtSuccess);
  ASSERT_EQ(infinirtLaunchNativeFunc(stream_, &RecordNativeCall, &log, &ReleaseNativeLog),
            infinirtSuccess);
  ASSERT_EQ(log.streams.size(), 1u);
  EXPECT_EQ(log.streams[0], NativeOf(stream_));
  EXPECT_EQ(log.first_bytes[0], 0x21);
  EXPECT_EQ(log.releases, 1);
  EXPECT_EQ(infinirtLaunchNativeFunc(nullptr, &RecordNativeCall, &log, nullptr), infinirtSuccess);
  EXPECT_EQ(log.streams.back(), NativeOf(nullptr)) << "the legacy stream's";
  EXPECT_EQ(log.releases, 1) << "no release function, nothing released";

  // A failure is the call's answer, and the caller keeps its data.
  log.answer = infinirtErrorLaunchFailure;
  EXPECT_EQ(infinirtLaunchNativeFunc(stream_, &RecordNativeCall, &log, &ReleaseNativeLog),
            infinirtErrorLaunchFailure);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorLaunchFailure);
  EXPECT_EQ(log.releases, 1);
}

TEST_F(GraphReplay, ANativeFunctionIsRefusedWithoutAFunctionOrAVendorStream) {
  NativeLog log;
  log.device = static_cast<const unsigned char*>(device_);
  EXPECT_EQ(infinirtLaunchNativeFunc(stream_, nullptr, &log, &ReleaseNativeLog),
            infinirtErrorInvalidValue);
  infinirtStream_t destroyed = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&destroyed), infinirtSuccess);
  ASSERT_EQ(infinirtStreamDestroy(destroyed), infinirtSuccess);
  EXPECT_EQ(infinirtLaunchNativeFunc(destroyed, &RecordNativeCall, &log, &ReleaseNativeLog),
            infinirtErrorContextIsDestroyed);
  // The CPU backend (device 1) has no vendor stream, capturing or not.
  ASSERT_EQ(infinirtSetDevice(1), infinirtSuccess);
  infinirtStream_t cpu_stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&cpu_stream), infinirtSuccess);
  EXPECT_EQ(infinirtLaunchNativeFunc(cpu_stream, &RecordNativeCall, &log, &ReleaseNativeLog),
            infinirtErrorNotSupported);
  ASSERT_EQ(infinirtStreamBeginCapture(cpu_stream, infinirtStreamCaptureModeGlobal),
            infinirtSuccess);
  EXPECT_EQ(infinirtLaunchNativeFunc(cpu_stream, &RecordNativeCall, &log, &ReleaseNativeLog),
            infinirtErrorNotSupported);
  infinirtGraph_t graph = nullptr;
  ASSERT_EQ(infinirtStreamEndCapture(cpu_stream, &graph), infinirtSuccess);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(cpu_stream), infinirtSuccess);
  infinirtGetLastError();
  EXPECT_TRUE(log.streams.empty());
  EXPECT_EQ(log.releases, 0) << "refused: the caller keeps its data";
}

// Captured, the function is a node: the fake declines native graphs, so the core calls the
// function at every launch, with the launch stream's vendor stream, in order with the copies around
// it. Its data lives as long as the graph and its execs.
TEST_F(GraphReplay, ACapturedNativeFunctionIsCalledAtEveryLaunchAndReleasedWithTheLastHolder) {
  std::vector<unsigned char> in = Bytes(7);
  std::vector<unsigned char> out(kBytes, 0);
  NativeLog log;
  log.device = static_cast<const unsigned char*>(device_);
  BeginCapture();
  ASSERT_EQ(infinirtMemcpyAsync(device_, in.data(), kBytes, infinirtMemcpyHostToDevice, stream_),
            infinirtSuccess);
  ASSERT_EQ(infinirtLaunchNativeFunc(stream_, &RecordNativeCall, &log, &ReleaseNativeLog),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemcpyAsync(out.data(), device_, kBytes, infinirtMemcpyDeviceToHost, stream_),
            infinirtSuccess);
  infinirtGraph_t graph = EndCapture();
  EXPECT_TRUE(log.streams.empty()) << "recorded, not called";

  const int offered = Instantiations();
  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  EXPECT_EQ(Instantiations() - offered, 1) << "offered to the plugin, which declined";
  EXPECT_TRUE(log.streams.empty());
  for (int launch = 1; launch <= 3; ++launch) {
    SCOPED_TRACE("launch " + std::to_string(launch));
    Refill(&in, static_cast<unsigned char>(40 * launch));
    infinirtStream_t stream = launch % 2 ? stream_ : nullptr;
    ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
    ASSERT_EQ(log.streams.size(), static_cast<size_t>(launch));
    EXPECT_EQ(log.streams.back(), NativeOf(stream));
    EXPECT_EQ(log.first_bytes.back(), in[0]) << "called before the copy ahead of it";
    EXPECT_EQ(out, in);
  }
  // A failing function fails the launch.
  log.answer = infinirtErrorLaunchFailure;
  EXPECT_EQ(infinirtGraphLaunch(exec, stream_), infinirtErrorLaunchFailure);
  infinirtGetLastError();
  log.answer = infinirtSuccess;

  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  EXPECT_EQ(log.releases, 0) << "the exec still launches it";
  ASSERT_EQ(infinirtGraphLaunch(exec, stream_), infinirtSuccess);
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
  EXPECT_EQ(log.releases, 1);
}

// A graph launched into a capture is copied into the new graph: the function's data is shared,
// and released once, with the last graph that holds it.
TEST_F(GraphReplay, ANativeFunctionInAChildGraphIsReleasedOnceWithTheLastGraph) {
  NativeLog log;
  log.device = static_cast<const unsigned char*>(device_);
  BeginCapture();
  ASSERT_EQ(infinirtLaunchNativeFunc(stream_, &RecordNativeCall, &log, &ReleaseNativeLog),
            infinirtSuccess);
  infinirtGraph_t child = EndCapture();
  infinirtGraphExec_t child_exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&child_exec, child, 0), infinirtSuccess);
  BeginCapture();
  ASSERT_EQ(infinirtGraphLaunch(child_exec, stream_), infinirtSuccess);
  ASSERT_EQ(infinirtGraphLaunch(child_exec, stream_), infinirtSuccess);
  infinirtGraph_t parent = EndCapture();
  EXPECT_EQ(infinirtGraphExecDestroy(child_exec), infinirtSuccess);
  EXPECT_EQ(infinirtGraphDestroy(child), infinirtSuccess);
  EXPECT_EQ(log.releases, 0) << "the parent graph holds the node twice";

  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&exec, parent, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGraphLaunch(exec, stream_), infinirtSuccess);
  EXPECT_EQ(log.streams.size(), 2u);
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
  EXPECT_EQ(infinirtGraphDestroy(parent), infinirtSuccess);
  EXPECT_EQ(log.releases, 1);
}

// An invalidated capture records nothing: the caller keeps its data.
TEST_F(GraphReplay, ANativeFunctionOnAnInvalidatedCaptureIsRefusedAndNotReleased) {
  NativeLog log;
  log.device = static_cast<const unsigned char*>(device_);
  BeginCapture();
  EXPECT_EQ(infinirtStreamSynchronize(stream_), infinirtErrorStreamCaptureUnsupported);
  EXPECT_EQ(infinirtLaunchNativeFunc(stream_, &RecordNativeCall, &log, &ReleaseNativeLog),
            infinirtErrorStreamCaptureInvalidated);
  infinirtGraph_t graph = nullptr;
  EXPECT_EQ(infinirtStreamEndCapture(stream_, &graph), infinirtErrorStreamCaptureInvalidated);
  infinirtGetLastError();
  EXPECT_TRUE(log.streams.empty());
  EXPECT_EQ(log.releases, 0);
}

}  // namespace
}  // namespace infinirt::loader_test
