// The CUDA-family plugin's translation, checked in the emulated runtime's call record: the
// exact vendor functions and arguments it produces. Run once per emulated variant of every
// CUDA-family vendor (config/vendors.json), with VENDOR_TEST_VARIANT naming it and
// VENDOR_TEST_EMULATION saying what it is, the plugin and the CPU as backends, and 2 emulated
// devices (ordinals 0 and 1; the CPU is 2).
#include <gtest/gtest.h>

#include <atomic>
#include <climits>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <memory>
#include <string>
#include <thread>
#include <vector>

#include "emulated_runtime.h"
#include "infinirt.h"
#include "test_support.h"
#include "vendor_test_support.h"

namespace infinirt::vendor_test {
namespace {

using infinirt::testing::EmulatedRuntime;
using infinirt::testing::Gate;

constexpr size_t kBytes = 1024;
constexpr int kCpuDevice = 2;

// What distinguishes the variants: the switches the emulated runtime was built with
// (tests/emulated_runtimes/cuda_family/emulated_cuda_family.cc lists them).
struct Variant {
  std::string prefix;
  std::string instantiate;    // the instantiate function the plugin must use
  int instantiate_args;       // of <prefix>GraphInstantiate as the runtime exports it
  bool cuda_special_streams;  // only a runtime that knows them is passed 0x1 and 0x2
  bool hip_attributes;        // numbers device attributes in HIP's order
  bool host_alloc;            // has <prefix>HostAlloc (else the plugin uses MallocHost)
};

// The emulated runtime's definitions, "EMU_PREFIX=mc,EMU_INSTANTIATE_ARGS=5,EMU_ASYNC_ALLOC":
// name to value ("" for a switch).
std::map<std::string, std::string> EmulationDefinitions(const std::string& text) {
  std::map<std::string, std::string> definitions;
  size_t begin = 0;
  while (begin < text.size()) {
    size_t end = text.find(',', begin);
    if (end == std::string::npos) end = text.size();
    const std::string definition = text.substr(begin, end - begin);
    const size_t equals = definition.find('=');
    definitions[definition.substr(0, equals)] =
        equals == std::string::npos ? "" : definition.substr(equals + 1);
    begin = end + 1;
  }
  return definitions;
}

// The variant VENDOR_TEST_EMULATION describes: a runtime with <prefix>GraphInstantiateWithFlags
// must be instantiated through it, one that knows CUDA's special stream handles is passed them.
Variant VariantOf(const std::map<std::string, std::string>& definitions) {
  const auto has = [&](const char* name) { return definitions.count(name) != 0; };
  Variant variant;
  variant.prefix = has("EMU_PREFIX") ? definitions.at("EMU_PREFIX") : "";
  variant.instantiate = has("EMU_WITH_FLAGS") ? "GraphInstantiateWithFlags" : "GraphInstantiate";
  variant.instantiate_args =
      has("EMU_INSTANTIATE_ARGS") ? std::atoi(definitions.at("EMU_INSTANTIATE_ARGS").c_str()) : 0;
  variant.cuda_special_streams = has("EMU_SPECIAL_STREAMS");
  variant.hip_attributes = has("EMU_HIP_ATTRIBUTES");
  variant.host_alloc = !has("EMU_OMIT_HOST_ALLOC");
  return variant;
}

const Variant& ThisVariant() {
  static const Variant variant = [] {
    const char* emulation = std::getenv("VENDOR_TEST_EMULATION");
    return VariantOf(EmulationDefinitions(emulation != nullptr ? emulation : ""));
  }();
  return variant;
}

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class CudaFamily : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_FALSE(ThisVariant().prefix.empty()) << "VENDOR_TEST_EMULATION is not set";
    backend_ = LoadedVendorBackend();
    ASSERT_FALSE(backend_.name.empty());
    runtime_ = std::make_unique<EmulatedRuntime>(backend_.runtime_library);
    ASSERT_TRUE(runtime_->loaded());
    ASSERT_EQ(backend_.listing.deviceCount, 2);
    ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);
    ASSERT_EQ(infinirtMalloc(&device_, kBytes), infinirtSuccess);
    ASSERT_EQ(infinirtMallocHost(&pinned_, kBytes), infinirtSuccess);
    runtime_->Reset();
  }
  void TearDown() override {
    runtime_->ClearFailures();
    infinirtSetDevice(0);
    infinirtDeviceSynchronize();
    infinirtFree(device_);
    infinirtFreeHost(pinned_);
    infinirtGetLastError();
  }
  std::string F(const std::string& name) const { return ThisVariant().prefix + name; }
  std::vector<std::string> LogOf(const std::string& name) const { return runtime_->LogOf(F(name)); }

  VendorBackend backend_;
  std::unique_ptr<EmulatedRuntime> runtime_;
  void* device_ = nullptr;
  void* pinned_ = nullptr;
  std::vector<unsigned char> host_ = std::vector<unsigned char>(kBytes, 5);
};

TEST_F(CudaFamily, CopiesPassTheVendorsDirectionValues) {
  ASSERT_EQ(infinirtMemcpy(device_, host_.data(), kBytes, infinirtMemcpyHostToDevice),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemcpy(host_.data(), device_, kBytes, infinirtMemcpyDefault), infinirtSuccess);
  ASSERT_EQ(infinirtMemcpy(device_, device_, kBytes / 2, infinirtMemcpyDeviceToDevice),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemcpy(pinned_, host_.data(), kBytes, infinirtMemcpyHostToHost),
            infinirtSuccess);
  const std::vector<std::string> copies = LogOf("Memcpy");
  ASSERT_EQ(copies.size(), 4u);
  EXPECT_TRUE(Contains(copies[0], "kind=1")) << copies[0];
  EXPECT_TRUE(Contains(copies[1], "kind=2")) << copies[1] << " (Default resolved by the core)";
  EXPECT_TRUE(Contains(copies[2], "kind=3")) << copies[2];
  EXPECT_TRUE(Contains(copies[3], "kind=0")) << copies[3];
}

TEST_F(CudaFamily, StreamWaitEventPassesAllThreeArguments) {
  infinirtStream_t stream = nullptr;
  infinirtEvent_t event = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtEventCreate(&event), infinirtSuccess);
  ASSERT_EQ(infinirtEventRecord(event, stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamWaitEvent(stream, event, 0), infinirtSuccess);
  const std::vector<std::string> waits = LogOf("StreamWaitEvent");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_TRUE(Contains(waits[0], "flags=0")) << waits[0];
  EXPECT_EQ(infinirtEventDestroy(event), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
}

TEST_F(CudaFamily, EventFlagsAreTranslated) {
  infinirtEvent_t event = nullptr;
  ASSERT_EQ(
      infinirtEventCreateWithFlags(&event, infinirtEventDisableTiming | infinirtEventBlockingSync),
      infinirtSuccess);
  const std::vector<std::string> creates = LogOf("EventCreateWithFlags");
  ASSERT_EQ(creates.size(), 1u);
  EXPECT_TRUE(Contains(creates[0], "flags=3")) << creates[0];
  EXPECT_EQ(infinirtEventDestroy(event), infinirtSuccess);
}

// Vendor runtimes keep the current device per host thread: the plugin selects it in every
// thread that uses one, once.
TEST_F(CudaFamily, TheDeviceIsSelectedInEveryThreadOnce) {
  auto allocate_on_device_1 = [] {
    void* memory = nullptr;
    EXPECT_EQ(infinirtSetDevice(1), infinirtSuccess);
    EXPECT_EQ(infinirtMalloc(&memory, 64), infinirtSuccess);
    EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
  };
  std::thread first(allocate_on_device_1);
  first.join();
  std::thread second([&] {
    allocate_on_device_1();
    allocate_on_device_1();
  });
  second.join();
  const std::vector<std::string> mallocs = LogOf("Malloc");
  ASSERT_EQ(mallocs.size(), 3u);
  for (const std::string& line : mallocs) EXPECT_TRUE(Contains(line, " dev=1 ")) << line;
  EXPECT_EQ(LogOf("SetDevice").size(), 2u) << "one selection per thread";
}

// The properties' numbers are the runtime's attributes (the emulated runtime answers the CPU
// backend's: a grid of INT_MAX x 65535 x 65535 blocks of 1 x 1 x 1 threads, no shared memory).
TEST_F(CudaFamily, PropertiesAreTheRuntimesAttributes) {
  if (ThisVariant().hip_attributes) {
    GTEST_SKIP() << "this runtime's attributes are refused (AttributesNumberedOtherwiseAreRefused)";
  }
  infinirtDeviceProp prop;
  ASSERT_EQ(infinirtGetDeviceProperties(&prop, 0), infinirtSuccess);
  auto attribute = [](enum infinirtDeviceAttr attr) {
    int value = -7;
    EXPECT_EQ(infinirtDeviceGetAttribute(&value, attr, 0), infinirtSuccess);
    return value;
  };
  EXPECT_EQ(prop.maxThreadsPerBlock, attribute(infinirtDevAttrMaxThreadsPerBlock));
  EXPECT_EQ(prop.multiProcessorCount, attribute(infinirtDevAttrMultiProcessorCount));
  for (int axis = 0; axis < 3; ++axis) {
    EXPECT_EQ(prop.maxThreadsDim[axis],
              attribute(static_cast<enum infinirtDeviceAttr>(infinirtDevAttrMaxBlockDimX + axis)));
    EXPECT_EQ(prop.maxGridSize[axis],
              attribute(static_cast<enum infinirtDeviceAttr>(infinirtDevAttrMaxGridDimX + axis)));
  }
  EXPECT_EQ(prop.maxGridSize[0], INT_MAX);
  EXPECT_EQ(prop.maxGridSize[1], 65535);
  EXPECT_EQ(prop.sharedMemPerBlock,
            static_cast<size_t>(attribute(infinirtDevAttrMaxSharedMemoryPerBlock)));
  EXPECT_EQ(prop.totalConstMem, static_cast<size_t>(attribute(infinirtDevAttrTotalConstantMemory)));
}

// Attributes asked by CUDA's numbers must agree with the properties struct (the emulated devices
// have a warp of 32 threads, 6 multiprocessors, compute capability 8.9). A runtime numbering them
// in HIP's order fails the plugin's check at start-up: every attribute is then NotSupported, the
// listing and the support declaration say why, and the properties keep only what is known.
TEST_F(CudaFamily, AttributesNumberedOtherwiseAreRefused) {
  int warp = -1;
  const infinirtError_t answer = infinirtDeviceGetAttribute(&warp, infinirtDevAttrWarpSize, 0);
  infinirtDeviceProp prop;
  ASSERT_EQ(infinirtGetDeviceProperties(&prop, 0), infinirtSuccess);
  const std::string reason = backend_.listing.reason;
  infinirtPluginSupport support{};
  support.struct_size = sizeof(support);
  ASSERT_EQ(backend_.table->GetSupport("DeviceGetAttribute", &support), infinirtSuccess);
  if (!ThisVariant().hip_attributes) {
    EXPECT_EQ(answer, infinirtSuccess);
    EXPECT_EQ(warp, 32);
    EXPECT_EQ(prop.warpSize, 32);
    EXPECT_EQ(prop.major * 10 + prop.minor, 89);
    EXPECT_EQ(prop.multiProcessorCount, 6);
    EXPECT_EQ(reason, "");
    EXPECT_NE(support.level, INFINIRT_SUPPORT_NONE);
    return;
  }
  EXPECT_EQ(answer, infinirtErrorNotSupported);
  EXPECT_TRUE(Contains(prop.name, "Emulated METAX device 0")) << "the name is still read";
  EXPECT_EQ(prop.warpSize, 0);
  EXPECT_EQ(prop.multiProcessorCount, 0);
  EXPECT_TRUE(Contains(reason, "numbering is not CUDA's")) << reason;
  EXPECT_TRUE(Contains(reason, "attribute 10 (warp size) is 0, the properties say 32")) << reason;
  EXPECT_EQ(support.level, INFINIRT_SUPPORT_NONE);
  EXPECT_TRUE(Contains(support.note, "numbering is not CUDA's")) << support.note;
}

// Pinned host memory without flags: the runtime's HostAlloc where it has one, else its
// MallocHost, always given a flags argument of 0 (MACA's mcMallocHost reads one).
TEST_F(CudaFamily, HostAllocationPassesFlagsZero) {
  void* pinned = nullptr;
  ASSERT_EQ(infinirtMallocHost(&pinned, kBytes), infinirtSuccess);
  const std::vector<std::string> calls =
      LogOf(ThisVariant().host_alloc ? "HostAlloc" : "MallocHost");
  ASSERT_EQ(calls.size(), 1u);
  EXPECT_TRUE(Contains(calls[0], "flags=0")) << calls[0];
  if (!ThisVariant().host_alloc) {
    void* portable = nullptr;
    EXPECT_EQ(infinirtHostAlloc(&portable, kBytes, infinirtHostAllocPortable),
              infinirtErrorNotSupported);
  }
  EXPECT_EQ(infinirtFreeHost(pinned), infinirtSuccess);
}

// The native handle of a stream is the vendor's stream the plugin queues the stream's work on.
// (The per-thread stream is another thread's: the plugin makes one per thread, and
// DefaultStreamsAreTheVendors counts this thread's.)
TEST_F(CudaFamily, TheNativeHandleIsTheStreamTheWorkGoesTo) {
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  runtime_->Reset();
  void* natives[3] = {};
  ASSERT_EQ(infinirtMemsetAsync(device_, 1, kBytes, stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamGetNativeHandle(&natives[0], stream), infinirtSuccess);
  ASSERT_EQ(infinirtMemsetAsync(device_, 2, kBytes, nullptr), infinirtSuccess);
  ASSERT_EQ(infinirtStreamGetNativeHandle(&natives[1], nullptr), infinirtSuccess);
  std::thread other([&] {
    ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);
    ASSERT_EQ(infinirtMemsetAsync(device_, 3, kBytes, infinirtStreamPerThread), infinirtSuccess);
    ASSERT_EQ(infinirtStreamGetNativeHandle(&natives[2], infinirtStreamPerThread), infinirtSuccess);
    ASSERT_EQ(infinirtStreamSynchronize(infinirtStreamPerThread), infinirtSuccess);
  });
  other.join();
  const std::vector<std::string> sets = LogOf("MemsetAsync");
  ASSERT_EQ(sets.size(), 3u);
  for (int i = 0; i < 3; ++i) {
    char named[48];
    std::snprintf(named, sizeof named, "stream=%p", natives[i]);  // as the runtime's log writes it
    EXPECT_TRUE(Contains(sets[i], named)) << sets[i] << " vs " << named;
  }
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
}

TEST_F(CudaFamily, DefaultStreamsAreTheVendors) {
  ASSERT_EQ(infinirtMemsetAsync(device_, 1, kBytes, infinirtStreamLegacy), infinirtSuccess);
  ASSERT_EQ(infinirtMemsetAsync(device_, 2, kBytes, infinirtStreamPerThread), infinirtSuccess);
  ASSERT_EQ(infinirtMemsetAsync(device_, 3, kBytes, infinirtStreamPerThread), infinirtSuccess);
  ASSERT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
  const std::vector<std::string> sets = LogOf("MemsetAsync");
  ASSERT_EQ(sets.size(), 3u);
  if (ThisVariant().cuda_special_streams) {
    EXPECT_TRUE(Contains(sets[0], "stream=0x1")) << sets[0];
    EXPECT_TRUE(Contains(sets[1], "stream=0x2")) << sets[1];
    EXPECT_TRUE(LogOf("StreamCreateWithFlags").empty());
  } else {
    EXPECT_TRUE(Contains(sets[0], "stream=(nil)")) << sets[0];
    // The per-thread stream is a blocking stream the plugin made, once for this thread.
    ASSERT_EQ(LogOf("StreamCreateWithFlags").size(), 1u);
    EXPECT_TRUE(Contains(LogOf("StreamCreateWithFlags")[0], "flags=0"));
    EXPECT_FALSE(Contains(sets[1], "stream=(nil)")) << sets[1];
    EXPECT_EQ(sets[1].substr(sets[1].find("stream=")), sets[2].substr(sets[2].find("stream=")));
  }
  std::vector<unsigned char> result(kBytes);
  ASSERT_EQ(infinirtMemcpy(result.data(), device_, kBytes, infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  EXPECT_EQ(result, std::vector<unsigned char>(kBytes, 3));
}

TEST_F(CudaFamily, GraphsAreCapturedAndInstantiatedByTheRuntime) {
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), infinirtSuccess);
  ASSERT_EQ(infinirtMemsetAsync(device_, 0x42, kBytes, stream), infinirtSuccess);
  ASSERT_EQ(infinirtMemcpyAsync(pinned_, device_, kBytes, infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  infinirtGraph_t graph = nullptr;
  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtSuccess);
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  ASSERT_EQ(LogOf("StreamBeginCapture").size(), 1u);
  EXPECT_TRUE(Contains(LogOf("StreamBeginCapture")[0], "mode=2")) << "relaxed capture";
  EXPECT_EQ(LogOf("StreamEndCapture").size(), 1u);
  const std::vector<std::string> instantiations = LogOf(ThisVariant().instantiate);
  ASSERT_EQ(instantiations.size(), 1u) << ThisVariant().instantiate;
  if (ThisVariant().instantiate == "GraphInstantiate") {
    EXPECT_TRUE(LogOf("GraphInstantiateWithFlags").empty());
    // The 5-argument call (exec, graph, NULL, NULL, 0) reads as flags = 0 in the 3-argument form.
    EXPECT_TRUE(Contains(instantiations[0],
                         ThisVariant().instantiate_args == 5 ? "(nil) (nil) 0" : "flags=0"))
        << instantiations[0];
  }
  EXPECT_EQ(LogOf("GraphDestroy").size(), 1u) << "the vendor graph is released after instantiation";
  std::memset(pinned_, 0, kBytes);
  for (int launch = 0; launch < 2; ++launch) {
    ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
  }
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(LogOf("GraphLaunch").size(), 2u);
  EXPECT_EQ(static_cast<unsigned char*>(pinned_)[kBytes - 1], 0x42);
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
  EXPECT_EQ(LogOf("GraphExecDestroy").size(), 1u);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
}

// Vendor work queued by a native function (infinirtLaunchNativeFunc): here a host function
// launched with the vendor's own LaunchHostFunc, which the vendor's capture records.
struct VendorWork {
  using LaunchHostFn = int (*)(void* stream, void (*fn)(void*), void* data);
  LaunchHostFn launch_host_func = nullptr;
  std::vector<void*> streams;  // what the native function was called with
  std::atomic<int> runs{0};    // of the host function it queued
  int releases = 0;
};
void CountVendorRun(void* data) { ++static_cast<VendorWork*>(data)->runs; }
infinirtError_t QueueVendorWork(void* native_stream, void* data) {
  auto* work = static_cast<VendorWork*>(data);
  work->streams.push_back(native_stream);
  return work->launch_host_func(native_stream, &CountVendorRun, work) == 0
             ? infinirtSuccess
             : infinirtErrorLaunchFailure;
}
void ReleaseVendorWork(void* data) { ++static_cast<VendorWork*>(data)->releases; }

// Captured, the function is called once, at instantiation, on the stream the plugin captures
// with the vendor's capture: its work is then in the vendor's graph, and every launch runs it.
TEST_F(CudaFamily, NativeFunctionsAreCapturedIntoTheVendorsGraph) {
  VendorWork work;
  work.launch_host_func =
      reinterpret_cast<VendorWork::LaunchHostFn>(runtime_->Symbol(F("LaunchHostFunc")));
  ASSERT_NE(work.launch_host_func, nullptr);
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  void* native = nullptr;
  ASSERT_EQ(infinirtStreamGetNativeHandle(&native, stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), infinirtSuccess);
  ASSERT_EQ(infinirtLaunchNativeFunc(stream, &QueueVendorWork, &work, &ReleaseVendorWork),
            infinirtSuccess);
  infinirtGraph_t graph = nullptr;
  ASSERT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtSuccess);
  EXPECT_TRUE(work.streams.empty()) << "recorded, not called";
  runtime_->Reset();
  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  ASSERT_EQ(work.streams.size(), 1u);
  EXPECT_NE(work.streams[0], native) << "the plugin's private capture stream";
  char named[48];
  std::snprintf(named, sizeof named, "%p", work.streams[0]);  // as the runtime's log writes it
  ASSERT_EQ(LogOf("StreamBeginCapture").size(), 1u);
  EXPECT_TRUE(Contains(LogOf("StreamBeginCapture")[0], named)) << LogOf("StreamBeginCapture")[0];
  EXPECT_EQ(work.runs.load(), 0);
  for (int launch = 0; launch < 3; ++launch) {
    ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
  }
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(work.runs.load(), 3);
  EXPECT_EQ(work.streams.size(), 1u) << "the vendor's graph replays the work, not the function";
  EXPECT_EQ(LogOf("GraphLaunch").size(), 3u);
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
  EXPECT_EQ(work.releases, 0) << "the graph can still be instantiated";
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  EXPECT_EQ(work.releases, 1);

  // Outside capture: called at once with the stream's own vendor stream.
  ASSERT_EQ(infinirtLaunchNativeFunc(stream, &QueueVendorWork, &work, &ReleaseVendorWork),
            infinirtSuccess);
  ASSERT_EQ(work.streams.size(), 2u);
  EXPECT_EQ(work.streams[1], native);
  EXPECT_EQ(work.releases, 2);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(work.runs.load(), 4);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
}

// A function that fails while the plugin captures it fails the instantiation, and leaves no
// vendor capture behind.
TEST_F(CudaFamily, ANativeFunctionFailingAtInstantiationFailsIt) {
  VendorWork work;  // its releases only: the function below fails before queueing anything
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), infinirtSuccess);
  auto fails = [](void*, void*) { return infinirtErrorLaunchFailure; };
  ASSERT_EQ(infinirtLaunchNativeFunc(stream, fails, &work, &ReleaseVendorWork), infinirtSuccess);
  infinirtGraph_t graph = nullptr;
  ASSERT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtSuccess);
  runtime_->Reset();
  infinirtGraphExec_t exec = nullptr;
  EXPECT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtErrorLaunchFailure);
  infinirtGetLastError();
  EXPECT_EQ(LogOf("StreamEndCapture").size(), 1u) << "the vendor capture was ended";
  EXPECT_EQ(LogOf(ThisVariant().instantiate).size(), 0u);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  EXPECT_EQ(work.releases, 1);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
}

TEST_F(CudaFamily, NotReadyIsRecognised) {
  infinirtStream_t stream = nullptr;
  infinirtEvent_t event = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtEventCreate(&event), infinirtSuccess);
  Gate gate;
  ASSERT_EQ(gate.Block(stream), infinirtSuccess);
  ASSERT_EQ(infinirtEventRecord(event, stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  EXPECT_EQ(infinirtEventQuery(event), infinirtErrorNotReady);
  EXPECT_EQ(infinirtGetLastError(), infinirtSuccess) << "not ready is not an error";
  gate.Open();
  EXPECT_EQ(infinirtEventSynchronize(event), infinirtSuccess);
  EXPECT_EQ(infinirtEventQuery(event), infinirtSuccess);
  EXPECT_EQ(infinirtEventDestroy(event), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
}

// A runtime that cannot tell a stream's priority as an attribute (older than the attribute):
// StreamGetPriority gives the priority the stream was created with, without an error.
TEST_F(CudaFamily, APriorityTheRuntimeCannotTellIsTheCreationPriority) {
  int least = 0, greatest = 0;
  ASSERT_EQ(infinirtDeviceGetStreamPriorityRange(&least, &greatest), infinirtSuccess);
  if (least == greatest) GTEST_SKIP() << "this runtime has no priorities";
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreateWithPriority(&stream, 0, greatest), infinirtSuccess);
  runtime_->Fail(F("StreamGetAttribute"), 0, /*cudaErrorInvalidValue*/ 1);
  int priority = 99;
  EXPECT_EQ(infinirtStreamGetPriority(stream, &priority), infinirtSuccess);
  EXPECT_EQ(priority, greatest);
  EXPECT_EQ(infinirtGetLastError(), infinirtSuccess);
  runtime_->ClearFailures();
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
}

// A vendor call failing mid-stream: the error is translated (by name where the runtime names
// it), becomes the last error, is logged, and the runtime and the other backends go on.
TEST_F(CudaFamily, VendorErrorsMidStreamAreTranslatedLoggedAndRecoverable) {
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtMemsetAsync(device_, 1, kBytes, stream), infinirtSuccess);
  runtime_->Fail(F("MemcpyAsync"), 0, /*cudaErrorMemoryAllocation*/ 2);
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(infinirtMemcpyAsync(pinned_, device_, kBytes, infinirtMemcpyDeviceToHost, stream),
            infinirtErrorMemoryAllocation);
  const std::string log = ::testing::internal::GetCapturedStderr();
  EXPECT_TRUE(Contains(log, F("MemcpyAsync") + " returned 2 (" + F("ErrorMemoryAllocation") + ")"))
      << log;
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorMemoryAllocation);

  runtime_->Fail(F("MemcpyAsync"), 0, 54321);  // a code InfiniRT does not know
  EXPECT_EQ(infinirtMemcpyAsync(pinned_, device_, kBytes, infinirtMemcpyDeviceToHost, stream),
            infinirtErrorUnknown);
  infinirtGetLastError();

  runtime_->ClearFailures();
  ASSERT_EQ(infinirtMemcpyAsync(pinned_, device_, kBytes, infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(static_cast<unsigned char*>(pinned_)[0], 1);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);

  // The CPU backend never noticed.
  ASSERT_EQ(infinirtSetDevice(kCpuDevice), infinirtSuccess);
  void* cpu = nullptr;
  ASSERT_EQ(infinirtMalloc(&cpu, kBytes), infinirtSuccess);
  EXPECT_EQ(infinirtMemset(cpu, 9, kBytes), infinirtSuccess);
  EXPECT_EQ(infinirtFree(cpu), infinirtSuccess);
}

TEST_F(CudaFamily, EveryAllocationIsReturnedToTheRuntime) {
  infinirtFree(device_);
  infinirtFreeHost(pinned_);
  device_ = pinned_ = nullptr;
  EXPECT_EQ(runtime_->LiveAllocations(), 0);
}

}  // namespace
}  // namespace infinirt::vendor_test
