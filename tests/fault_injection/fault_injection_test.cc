// Fault injection: the faulty backend (faulty_plugin.cc: the CPU backend behind switches) fails
// chosen entries, fails after N calls, returns late or lacks entries. For every fault the core
// must return the plugin's error, keep the last error right, leave nothing registered (the
// allocation registry and the handle tables are back to what they were), and the CPU backend in
// the same process must keep working.
//
// Each test sets its switches and initialises the runtime; the fixture finalises it. Device 0
// is the faulty backend (an accelerator), device 1 the CPU.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstdlib>
#include <functional>
#include <string>
#include <thread>
#include <vector>

#include "infinirt.h"
#include "runtime.h"
#include "test_support.h"

namespace {

using infinirt::core::Runtime;

constexpr int kFaulty = 0, kCpu = 1;

// What the core holds: allocations and live handles of each kind.
struct Holdings {
  size_t allocations, streams, events, graphs, execs;
  bool operator==(const Holdings& other) const {
    return allocations == other.allocations && streams == other.streams && events == other.events &&
           graphs == other.graphs && execs == other.execs;
  }
};

std::ostream& operator<<(std::ostream& out, const Holdings& h) {
  return out << "{allocations " << h.allocations << ", streams " << h.streams << ", events "
             << h.events << ", graphs " << h.graphs << ", execs " << h.execs << "}";
}

Holdings CoreHoldings() {
  Runtime& runtime = Runtime::Get();
  return {runtime.allocations().size(), runtime.streams().live_count(),
          runtime.events().live_count(), runtime.graphs().live_count(),
          runtime.graph_execs().live_count()};
}

constexpr Holdings kNothing{0, 0, 0, 0, 0};

class FaultInjection : public ::testing::Test {
 protected:
  void TearDown() override {
    EXPECT_EQ(infinirtFinalize(), infinirtSuccess);
    for (const char* name :
         {"FAULTY_FAULTS", "FAULTY_DELAY_MS", "FAULTY_MISSING", "FAULTY_THROWS"}) {
      unsetenv(name);
    }
  }

  // Sets the switches and initialises; the faulty backend must have loaded with its device.
  void Start(const std::string& faults, const std::string& delays = "",
             const std::string& missing = "") {
    SetOrClear("FAULTY_FAULTS", faults);
    SetOrClear("FAULTY_DELAY_MS", delays);
    SetOrClear("FAULTY_MISSING", missing);
    ASSERT_EQ(infinirtInit(), infinirtSuccess);
    infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
    ASSERT_EQ(infinirtDeviceGetType(&type, kFaulty), infinirtSuccess);
    ASSERT_EQ(type, INFINI_DEVICE_NVIDIA) << "the faulty backend did not load";
    ASSERT_EQ(infinirtDeviceGetType(&type, kCpu), infinirtSuccess);
    ASSERT_EQ(type, INFINI_DEVICE_CPU);
    ASSERT_EQ(infinirtSetDevice(kFaulty), infinirtSuccess);
    infinirtGetLastError();  // start clean
  }

  static void SetOrClear(const char* name, const std::string& value) {
    if (value.empty()) {
      unsetenv(name);
    } else {
      setenv(name, value.c_str(), 1);
    }
  }
};

// The CPU backend works: a stream, an allocation, a copy through it, all released.
void ExpectTheCpuBackendWorks(int cpu = kCpu) {
  int previous = -1;
  ASSERT_EQ(infinirtGetDevice(&previous), infinirtSuccess);
  ASSERT_EQ(infinirtSetDevice(cpu), infinirtSuccess);
  infinirtStream_t stream = nullptr;
  void* device = nullptr;
  char in[64] = "the other backend keeps working", out[64] = {};
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtMalloc(&device, sizeof in), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(device, in, sizeof in, infinirtMemcpyHostToDevice, stream),
            infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(out, device, sizeof in, infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_STREQ(out, in);
  EXPECT_EQ(infinirtFree(device), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
  ASSERT_EQ(infinirtSetDevice(previous), infinirtSuccess);
}

// --- An exception escaping an entry ----------------------------------------------------------

// Every plugin's entries run in one guard (plugin_table_builder.h): an exception that escapes
// an entry is an error code, nothing is registered, and the runtime goes on.
TEST_F(FaultInjection, AnExceptionEscapingAnEntryBecomesAnErrorCode) {
  setenv("FAULTY_THROWS", "Malloc:bad_alloc,StreamCreate:exception,EventCreate:other", 1);
  Start("");
  void* memory = nullptr;
  EXPECT_EQ(infinirtMalloc(&memory, 64), infinirtErrorMemoryAllocation);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorMemoryAllocation);
  infinirtStream_t stream = nullptr;
  EXPECT_EQ(infinirtStreamCreate(&stream), infinirtErrorUnknown);
  infinirtEvent_t event = nullptr;
  EXPECT_EQ(infinirtEventCreate(&event), infinirtErrorUnknown);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorUnknown);
  EXPECT_EQ(CoreHoldings(), kNothing);
  // The faulty backend's other entries still work, and so does the CPU backend.
  void* host = nullptr;
  EXPECT_EQ(infinirtMallocHost(&host, 64), infinirtSuccess);
  EXPECT_EQ(infinirtFreeHost(host), infinirtSuccess);
  ExpectTheCpuBackendWorks();
  EXPECT_EQ(CoreHoldings(), kNothing);
}

// --- An entry that creates something fails: nothing is registered ----------------------------

struct CreationCase {
  const char* entry;
  std::function<infinirtError_t()> call;
};

void PrintTo(const CreationCase& c, std::ostream* out) { *out << c.entry; }

class FailedCreation : public FaultInjection, public ::testing::WithParamInterface<CreationCase> {};

TEST_P(FailedCreation, ReturnsThePluginsErrorAndRegistersNothing) {
  const CreationCase& c = GetParam();
  Start(std::string(c.entry) + ":" + std::to_string(infinirtErrorMemoryAllocation));
  EXPECT_EQ(c.call(), infinirtErrorMemoryAllocation);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtErrorMemoryAllocation);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorMemoryAllocation);
  EXPECT_EQ(infinirtGetLastError(), infinirtSuccess) << "GetLastError resets it";
  EXPECT_EQ(CoreHoldings(), kNothing);
  ExpectTheCpuBackendWorks();
  EXPECT_EQ(CoreHoldings(), kNothing);
}

infinirtError_t CaptureAndInstantiate() {
  infinirtStream_t stream = nullptr;
  infinirtGraph_t graph = nullptr;
  infinirtGraphExec_t exec = nullptr;
  static char buffer[64];
  if (auto e = infinirtStreamCreateWithFlags(&stream, infinirtStreamNonBlocking)) return e;
  infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal);
  infinirtMemsetAsync(buffer, 0, sizeof buffer, stream);  // host memory: refused, harmless
  infinirtLaunchHostFunc(
      stream, [](void*) {}, nullptr);
  if (auto e = infinirtStreamEndCapture(stream, &graph)) return e;
  const infinirtError_t instantiated = infinirtGraphInstantiate(&exec, graph, 0);
  EXPECT_EQ(exec, nullptr) << "no exec is handed out when instantiation fails";
  infinirtGraphDestroy(graph);
  infinirtStreamDestroy(stream);
  return instantiated;
}

INSTANTIATE_TEST_SUITE_P(EveryCreatingEntry, FailedCreation,
                         ::testing::Values(CreationCase{"Malloc",
                                                        [] {
                                                          void* p = nullptr;
                                                          return infinirtMalloc(&p, 256);
                                                        }},
                                           CreationCase{"HostAlloc",
                                                        [] {
                                                          void* p = nullptr;
                                                          return infinirtMallocHost(&p, 256);
                                                        }},
                                           CreationCase{"MallocAsync",
                                                        [] {
                                                          void* p = nullptr;
                                                          return infinirtMallocAsync(&p, 256,
                                                                                     nullptr);
                                                        }},
                                           CreationCase{"StreamCreate",
                                                        [] {
                                                          infinirtStream_t s = nullptr;
                                                          return infinirtStreamCreateWithFlags(
                                                              &s, infinirtStreamNonBlocking);
                                                        }},
                                           CreationCase{"EventCreate",
                                                        [] {
                                                          infinirtEvent_t e = nullptr;
                                                          return infinirtEventCreateWithFlags(
                                                              &e, infinirtEventDisableTiming);
                                                        }},
                                           CreationCase{"GraphInstantiate", CaptureAndInstantiate}),
                         [](const ::testing::TestParamInfo<CreationCase>& info) {
                           return info.param.entry;
                         });

// --- An operation fails mid-stream --------------------------------------------------------

TEST_F(FaultInjection, AnOperationFailingMidStreamIsTheLastErrorAndTheStreamGoesOn) {
  // The second asynchronous copy fails, once.
  Start("MemcpyAsync:" + std::to_string(infinirtErrorLaunchFailure) + ":1:1");
  infinirtStream_t stream = nullptr;
  void* device = nullptr;
  char in[32] = "after the failure", out[32] = {};
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtMalloc(&device, sizeof in), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(device, in, sizeof in, infinirtMemcpyHostToDevice, stream),
            infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(out, device, sizeof in, infinirtMemcpyDeviceToHost, stream),
            infinirtErrorLaunchFailure);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtErrorLaunchFailure);
  EXPECT_EQ(infinirtMemcpyAsync(out, device, sizeof in, infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_STREQ(out, in);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorLaunchFailure) << "kept until read";
  EXPECT_EQ(infinirtFree(device), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
  EXPECT_EQ(CoreHoldings(), kNothing);
  ExpectTheCpuBackendWorks();
}

TEST_F(FaultInjection, AFailingFreeOrDestroyKeepsTheObjectSoThatARetryReleasesIt) {
  const std::string error = std::to_string(infinirtErrorLaunchFailure);
  Start("Free:" + error + ":0:1,StreamDestroy:" + error + ":0:1,EventDestroy:" + error + ":0:1");
  void* device = nullptr;
  infinirtStream_t stream = nullptr;
  infinirtEvent_t event = nullptr;
  ASSERT_EQ(infinirtMalloc(&device, 128), infinirtSuccess);
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtEventCreate(&event), infinirtSuccess);
  const Holdings held = CoreHoldings();

  EXPECT_EQ(infinirtFree(device), infinirtErrorLaunchFailure);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtErrorLaunchFailure);
  EXPECT_EQ(infinirtEventDestroy(event), infinirtErrorLaunchFailure);
  EXPECT_EQ(CoreHoldings(), held) << "a refused release has no effect";
  infinirtPointerAttributes attributes{};
  ASSERT_EQ(infinirtPointerGetAttributes(&attributes, device), infinirtSuccess);
  EXPECT_EQ(attributes.type, infinirtMemoryTypeDevice);
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtSuccess) << "the stream is still usable";

  EXPECT_EQ(infinirtFree(device), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
  EXPECT_EQ(infinirtEventDestroy(event), infinirtSuccess);
  EXPECT_EQ(CoreHoldings(), kNothing);
  ExpectTheCpuBackendWorks();
}

// --- Fail after N calls: every call of a workload fails in turn -------------------------------

// A workload that checks every call and, when one fails, releases what it holds and returns
// that error. Success: infinirtSuccess.
infinirtError_t Workload() {
  infinirtStream_t stream = nullptr;
  infinirtEvent_t event = nullptr;
  void* device = nullptr;
  void* pinned = nullptr;
  infinirtError_t error = infinirtSuccess;
  auto step = [&](infinirtError_t result) {
    if (error == infinirtSuccess) error = result;
    return error == infinirtSuccess;
  };
  step(infinirtStreamCreate(&stream)) && step(infinirtEventCreate(&event)) &&
      step(infinirtMalloc(&device, 4096)) && step(infinirtMallocHost(&pinned, 4096)) &&
      step(infinirtMemsetAsync(device, 3, 4096, stream)) &&
      step(infinirtMemcpyAsync(pinned, device, 4096, infinirtMemcpyDeviceToHost, stream)) &&
      step(infinirtEventRecord(event, stream)) && step(infinirtEventSynchronize(event)) &&
      step(static_cast<unsigned char*>(pinned)[4095] == 3 ? infinirtSuccess
                                                          : infinirtErrorIllegalState);
  // Release whatever was created, whatever happened; a release may be the failing call too.
  if (pinned) step(infinirtFreeHost(pinned));
  if (device) step(infinirtFree(device));
  if (event) step(infinirtEventDestroy(event));
  if (stream) step(infinirtStreamDestroy(stream));
  return error;
}

TEST_F(FaultInjection, FailingEachCallOfAWorkloadInTurnLeavesNothingBehind) {
  Start("");
  ASSERT_EQ(Workload(), infinirtSuccess);
  ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  int failures = 0;
  for (int after = 0; after < 64; ++after) {
    SCOPED_TRACE("the call after " + std::to_string(after) + " fails");
    // One failure, at call number `after` of the faulty backend.
    Start("*:" + std::to_string(infinirtErrorLaunchFailure) + ":" + std::to_string(after) + ":1");
    const infinirtError_t error = Workload();
    if (error == infinirtSuccess) break;  // past the last call: every call has failed once
    ++failures;
    EXPECT_EQ(error, infinirtErrorLaunchFailure);
    EXPECT_EQ(infinirtGetLastError(), infinirtErrorLaunchFailure);
    // A release that failed keeps its object: the workload is the program and does not retry,
    // so finalize releases it. Everything else is gone already.
    const Holdings left = CoreHoldings();
    EXPECT_LE(left.allocations + left.streams + left.events, 1u) << left;
    EXPECT_EQ(Workload(), infinirtSuccess) << "the fault was injected once";
    ExpectTheCpuBackendWorks();
    ASSERT_EQ(infinirtFinalize(), infinirtSuccess);
  }
  EXPECT_GE(failures, 10) << "the workload makes more plugin calls than this";
}

// --- Entries that return late -------------------------------------------------------------

TEST_F(FaultInjection, ASlowPluginCallDoesNotHoldUpOtherBackendsOrThreads) {
  Start("", "Malloc:400");
  std::atomic<bool> slow_call_returned{false};
  std::thread slow([&] {
    infinirtSetDevice(kFaulty);
    void* memory = nullptr;
    EXPECT_EQ(infinirtMalloc(&memory, 64), infinirtSuccess);
    slow_call_returned = true;
    EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
  });
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // let it enter the slow call
  const auto started = std::chrono::steady_clock::now();
  ExpectTheCpuBackendWorks();
  const auto elapsed = std::chrono::steady_clock::now() - started;
  EXPECT_FALSE(slow_call_returned.load()) << "the CPU backend waited for the slow call";
  EXPECT_LT(elapsed, std::chrono::milliseconds(300));
  slow.join();
  EXPECT_EQ(CoreHoldings(), kNothing);
}

TEST_F(FaultInjection, LateAnswersKeepStreamOrder) {
  Start("", "MemcpyAsync:20,LaunchHostFunc:20,EventRecord:20");
  infinirtStream_t stream = nullptr;
  void* device = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtMalloc(&device, sizeof(int)), infinirtSuccess);
  std::vector<int> seen;
  static int values[5];
  for (int i = 0; i < 5; ++i) {
    values[i] = i;
    ASSERT_EQ(
        infinirtMemcpyAsync(device, &values[i], sizeof(int), infinirtMemcpyHostToDevice, stream),
        infinirtSuccess);
    int read = -1;
    ASSERT_EQ(infinirtMemcpyAsync(&read, device, sizeof(int), infinirtMemcpyDeviceToHost, stream),
              infinirtSuccess);
    ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    seen.push_back(read);
  }
  EXPECT_EQ(seen, (std::vector<int>{0, 1, 2, 3, 4}));
  EXPECT_EQ(infinirtFree(device), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
}

// --- Missing entries ----------------------------------------------------------------------

TEST_F(FaultInjection, MissingEntriesAnswerNotSupportedAndRegisterNothing) {
  Start("", "", "StreamCreate,MemsetAsync,EventElapsedTime");
  infinirtStream_t stream = nullptr;
  EXPECT_EQ(infinirtStreamCreate(&stream), infinirtErrorNotSupported);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorNotSupported);
  void* device = nullptr;
  ASSERT_EQ(infinirtMalloc(&device, 64), infinirtSuccess);
  EXPECT_EQ(infinirtMemsetAsync(device, 0, 64, nullptr), infinirtErrorNotSupported);
  EXPECT_EQ(infinirtMemset(device, 0, 64), infinirtSuccess) << "Memset is still there";
  infinirtEvent_t start = nullptr, end = nullptr;
  ASSERT_EQ(infinirtEventCreate(&start), infinirtSuccess);
  ASSERT_EQ(infinirtEventCreate(&end), infinirtSuccess);
  ASSERT_EQ(infinirtEventRecord(start, nullptr), infinirtSuccess);
  ASSERT_EQ(infinirtEventRecord(end, nullptr), infinirtSuccess);
  ASSERT_EQ(infinirtEventSynchronize(end), infinirtSuccess);
  float ms = -1;
  EXPECT_EQ(infinirtEventElapsedTime(&ms, start, end), infinirtErrorNotSupported);
  EXPECT_EQ(infinirtEventDestroy(start), infinirtSuccess);
  EXPECT_EQ(infinirtEventDestroy(end), infinirtSuccess);
  EXPECT_EQ(infinirtFree(device), infinirtSuccess);
  EXPECT_EQ(CoreHoldings(), kNothing);
  ExpectTheCpuBackendWorks();
}

TEST_F(FaultInjection, WithoutGraphEntriesTheCoreReplaysGraphs) {
  Start("", "", "GraphInstantiate,GraphLaunch,GraphExecDestroy");
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  std::atomic<int> runs{0};
  infinirtGraph_t graph = nullptr;
  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), infinirtSuccess);
  ASSERT_EQ(infinirtLaunchHostFunc(
                stream, [](void* n) { static_cast<std::atomic<int>*>(n)->fetch_add(1); }, &runs),
            infinirtSuccess);
  ASSERT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtSuccess);
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  for (int i = 0; i < 3; ++i) ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(runs.load(), 3);
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
  EXPECT_EQ(CoreHoldings(), kNothing);
}

// --- Initialisation fails -----------------------------------------------------------------

class FailedInitialisation : public FaultInjection,
                             public ::testing::WithParamInterface<const char*> {};

TEST_P(FailedInitialisation, TheBackendIsListedAsInitFailedAndTheCpuWorks) {
  setenv("FAULTY_FAULTS", (std::string(GetParam()) + ":3").c_str(), 1);
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  int count = 0;
  ASSERT_EQ(infinirtGetDeviceCount(&count), infinirtSuccess);
  EXPECT_EQ(count, 1) << "only the CPU";
  int backends = 0;
  ASSERT_EQ(infinirtGetBackendCount(&backends), infinirtSuccess);
  bool listed = false;
  for (int i = 0; i < backends; ++i) {
    infinirtBackendProp prop{};
    ASSERT_EQ(infinirtGetBackendProperties(&prop, i), infinirtSuccess);
    if (std::string(prop.name) != "faulty") continue;
    listed = true;
    EXPECT_EQ(prop.status, infinirtBackendInitFailed);
    EXPECT_NE(std::string(prop.reason).find("infinirtErrorInitializationError"), std::string::npos)
        << prop.reason;
  }
  EXPECT_TRUE(listed);
  ExpectTheCpuBackendWorks(/*cpu=*/0);
}

INSTANTIATE_TEST_SUITE_P(InitializeOrDeviceCount, FailedInitialisation,
                         ::testing::Values("Initialize", "GetDeviceCount"));

TEST_F(FaultInjection, AMalformedSwitchIsNotSilentlyIgnored) {
  setenv("FAULTY_FAULTS", "NoSuchEntry:2", 1);
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
  EXPECT_EQ(counts[INFINI_DEVICE_NVIDIA], 0) << "the faulty backend refused to start";
}

}  // namespace
