// S38, S39: launching executable graphs (order after prior stream work and after the previous
// launch of the same exec, relaunch on any stream, several execs of one graph, execs outliving
// their graph), captured host functions; a three-stream fork/join launched 100 times; and the
// validation of graph and exec handles and of instantiation flags.
#include <array>
#include <cstring>

#include "capture_support.h"

namespace infinirt::conformance {
namespace {

using Graph = Capture;

// ---------------------------------------------------------------------------------------------
// S38: a launch runs after prior work in its stream and after the previous launch of the same
// exec; an exec runs on any stream of its device, any number of times.

TEST_F(Graph, S38_LaunchRunsAfterPriorWorkInTheStream) {
  infinirtStream_t capturing = NewCaptureStream();
  infinirtStream_t stream = NewStream();
  auto& log = Keep<OrderLog>();
  auto& marks = Keep<std::array<Mark, 3>>();
  for (int i = 0; i < 3; ++i) marks[i] = Mark{&log, i};
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(capturing, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(capturing, AppendMark, &marks[1]));
  infinirtGraphExec_t exec = Instantiate(EndCapture(capturing));

  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, AppendMark, &marks[0]));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, AppendMark, &marks[2]));
  EXPECT_TRUE(HoldsFor([&] { return log.next.load() == 0; }))
      << "the launch did not wait for earlier work in its stream";
  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  ASSERT_EQ(log.next.load(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(log.slots[i], i);
}

TEST_F(Graph, S38_LaunchWaitsForThePreviousLaunchOfTheSameExecOnAnotherStream) {
  REQUIRE_NON_BLOCKING_STREAMS();
  infinirtStream_t first = NewStream();
  infinirtStream_t second = NewStream(infinirtStreamNonBlocking);
  infinirtStream_t capturing = NewCaptureStream();
  infinirtEvent_t second_done = NewEvent();
  auto& log = Keep<OrderLog>();
  auto& before = Keep<Mark>(Mark{&log, 1});
  auto& node = Keep<Mark>(Mark{&log, 2});
  auto& after = Keep<Mark>(Mark{&log, 3});
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(capturing, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(capturing, AppendMark, &node));
  infinirtGraphExec_t exec = Instantiate(EndCapture(capturing));

  // first: gate, 1, launch A.   second: launch B, 3.   B must follow A, which follows the gate.
  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(first));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(first, AppendMark, &before));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, first));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, second));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(second, AppendMark, &after));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(second_done, second));
  EXPECT_TRUE(HoldsFor([&] { return log.next.load() == 0 && IsPending(second_done); }))
      << "the second launch ran while the first one was held";
  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtEventSynchronize(second_done));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(first));
  ASSERT_EQ(log.next.load(), 4);
  EXPECT_EQ(log.slots[0], 1);
  EXPECT_EQ(log.slots[1], 2);
  EXPECT_EQ(log.slots[2], 2);
  EXPECT_EQ(log.slots[3], 3);
}

TEST_F(Graph, S38_ExecRunsManyTimesOnAnyStreamOfItsDevice) {
  REQUIRE_NON_BLOCKING_STREAMS();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  infinirtGraphExec_t exec = CounterExec(&runs);
  const infinirtStream_t streams[] = {NewStream(), NewStream(infinirtStreamNonBlocking),
                                      infinirtStreamPerThread, nullptr, infinirtStreamLegacy};
  constexpr int kRounds = 10;
  for (int round = 0; round < kRounds; ++round) {
    for (infinirtStream_t stream : streams) {
      ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
    }
  }
  ASSERT_OK_OR_SKIP(infinirtDeviceSynchronize());
  EXPECT_EQ(runs.load(), kRounds * static_cast<int>(std::size(streams)));
}

TEST_F(Graph, S38_GraphCanBeInstantiatedSeveralTimes) {
  infinirtStream_t stream = NewCaptureStream();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
  infinirtGraph_t graph = EndCapture(stream);
  infinirtGraphExec_t execs[3];
  for (infinirtGraphExec_t& exec : execs) exec = Instantiate(graph);
  EXPECT_NE(execs[0], execs[1]);
  EXPECT_NE(execs[1], execs[2]);
  for (infinirtGraphExec_t exec : execs) {
    ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  }
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(runs.load(), 3);
  // Destroying one exec leaves the graph and the other execs working.
  ASSERT_OK_OR_SKIP(infinirtGraphExecDestroy(execs[0]));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(execs[1], stream));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(Instantiate(graph), stream));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(runs.load(), 5);
}

TEST_F(Graph, S38_ExecStillLaunchesAfterItsGraphIsDestroyed) {
  infinirtStream_t stream = NewCaptureStream();
  unsigned char* source = NewPinnedMemory(kBytes, 0x6B);
  unsigned char* target = NewPinnedMemory(kBytes, 0);
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(source, nullptr);
  ASSERT_NE(target, nullptr);
  ASSERT_NE(device, nullptr);
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(
      infinirtMemcpyAsync(device, source, kBytes, infinirtMemcpyHostToDevice, stream));
  ASSERT_OK_OR_SKIP(
      infinirtMemcpyAsync(target, device, kBytes, infinirtMemcpyDeviceToHost, stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
  infinirtGraph_t graph = nullptr;
  ASSERT_OK_OR_SKIP(infinirtStreamEndCapture(stream, &graph));
  infinirtGraphExec_t exec = Instantiate(graph);
  ASSERT_OK_OR_SKIP(infinirtGraphDestroy(graph));

  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(runs.load(), 2);
  EXPECT_TRUE(AllBytesAre(target, kBytes, 0x6B));
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
}

TEST_F(Graph, S38_ExecDestroyedWhileItsLaunchIsPendingStillCompletes) {
  infinirtStream_t stream = NewCaptureStream();
  unsigned char* source = NewPinnedMemory(kBytes, 0x4D);
  unsigned char* target = NewPinnedMemory(kBytes, 0);
  ASSERT_NE(source, nullptr);
  ASSERT_NE(target, nullptr);
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtMemcpyAsync(target, source, kBytes, infinirtMemcpyHostToHost, stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
  infinirtGraph_t graph = nullptr;
  ASSERT_OK_OR_SKIP(infinirtStreamEndCapture(stream, &graph));
  infinirtGraphExec_t exec = nullptr;
  ASSERT_OK_OR_SKIP(infinirtGraphInstantiate(&exec, graph, 0));

  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  ASSERT_OK_OR_SKIP(infinirtGraphExecDestroy(exec));
  ASSERT_OK_OR_SKIP(infinirtGraphDestroy(graph));
  EXPECT_EQ(runs.load(), 0);
  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(runs.load(), 2) << "pending launches of a destroyed exec did not complete";
  EXPECT_TRUE(AllBytesAre(target, kBytes, 0x4D));
}

// The same with a host function alone, which a vendor graph holds as a host node of its own (the
// host-to-host copy above makes the core replay the graph instead): what the node runs must
// outlive the exec until its pending launches are done.
TEST_F(Graph, S38_ExecWithAHostNodeDestroyedWhileItsLaunchIsPendingStillRunsIt) {
  infinirtStream_t stream = NewCaptureStream();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
  infinirtGraph_t graph = nullptr;
  ASSERT_OK_OR_SKIP(infinirtStreamEndCapture(stream, &graph));
  infinirtGraphExec_t exec = nullptr;
  ASSERT_OK_OR_SKIP(infinirtGraphInstantiate(&exec, graph, 0));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));  // one launch complete before the gate
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));

  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
  ASSERT_OK_OR_SKIP(infinirtGraphExecDestroy(exec));
  ASSERT_OK_OR_SKIP(infinirtGraphDestroy(graph));
  EXPECT_EQ(runs.load(), 1);
  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(runs.load(), 3) << "pending launches of a destroyed exec did not run its host node";
}

// A graph launched into a capturing stream is recorded (its nodes join the capture), not run.
TEST_F(Graph, S38_GraphLaunchIntoACapturingStreamIsRecordedNotRun) {
  infinirtStream_t stream = NewCaptureStream();
  auto& log = Keep<OrderLog>();
  auto& marks = Keep<std::array<Mark, 3>>();
  for (int i = 0; i < 3; ++i) marks[i] = Mark{&log, i};
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, AppendMark, &marks[1]));
  infinirtGraphExec_t inner = Instantiate(EndCapture(stream));

  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, AppendMark, &marks[0]));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(inner, stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, AppendMark, &marks[2]));
  infinirtGraphExec_t outer = Instantiate(EndCapture(stream));
  EXPECT_TRUE(HoldsFor([&] { return log.next.load() == 0; })) << "a launch during capture ran";

  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(outer, stream));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  ASSERT_EQ(log.next.load(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(log.slots[i], i);
}

// ---------------------------------------------------------------------------------------------
// S39: LaunchHostFunc is capturable; the host node runs once per launch, in graph order.

struct Snapshot {
  const unsigned char* pinned = nullptr;
  std::atomic<int> runs{0};
  std::atomic<int> last_seen{-1};
};
void TakeSnapshot(void* snapshot) {
  auto* s = static_cast<Snapshot*>(snapshot);
  s->last_seen.store(s->pinned[0]);
  s->runs.fetch_add(1);
}

TEST_F(Graph, S39_CapturedHostFunctionRunsOncePerLaunchAfterItsDependencies) {
  infinirtStream_t stream = NewCaptureStream();
  unsigned char* counter = NewPinnedMemory(1, 0);  // the launch number, written by the host
  unsigned char* staged = NewPinnedMemory(1, 0);
  unsigned char* device = NewDeviceMemory(1);
  ASSERT_NE(counter, nullptr);
  ASSERT_NE(staged, nullptr);
  ASSERT_NE(device, nullptr);
  auto& snapshot = Keep<Snapshot>();
  snapshot.pinned = staged;

  // counter -> device -> staged, then the host node reads staged.
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtMemcpyAsync(device, counter, 1, infinirtMemcpyHostToDevice, stream));
  ASSERT_OK_OR_SKIP(infinirtMemcpyAsync(staged, device, 1, infinirtMemcpyDeviceToHost, stream));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, TakeSnapshot, &snapshot));
  infinirtGraphExec_t exec = Instantiate(EndCapture(stream));
  EXPECT_EQ(snapshot.runs.load(), 0);

  for (int launch = 1; launch <= 5; ++launch) {
    counter[0] = static_cast<unsigned char>(launch);
    ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
    ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
    EXPECT_EQ(snapshot.runs.load(), launch);
    EXPECT_EQ(snapshot.last_seen.load(), launch) << "the host node ran before the copies";
  }
}

// ---------------------------------------------------------------------------------------------
// A fork/join across three streams, captured once and launched 100 times (S35, S38, S39).
//
//   origin: Start --+--> left:  copy input->deviceL, copy deviceL->outL, Left  --+--> origin: Join
//                   +--> right: copy input->deviceR, copy deviceR->outR, Right --+
//
// Start writes the launch number into `input`; Left and Right check that their copies carry
// it, Join checks both outputs. Every node appends its id to the log. Launches go to the three
// streams in turn, so launch k+1 often sits in another stream than launch k.

struct ForkJoinState {
  OrderLog log;
  unsigned char* input = nullptr;
  unsigned char* left_out = nullptr;
  unsigned char* right_out = nullptr;
  std::atomic<int> started{0};   // Start runs
  std::atomic<int> finished{0};  // Join runs
  std::atomic<int> left_runs{0};
  std::atomic<int> right_runs{0};
  std::atomic<int> overlaps{0};      // Start of launch k+1 before Join of launch k
  std::atomic<int> stale_copies{0};  // a copy did not carry this launch's number
};

constexpr int kStart = 0, kLeft = 1, kRight = 2, kJoin = 3, kNodes = 4;

void StartNode(void* data) {
  auto* s = static_cast<ForkJoinState*>(data);
  const int launch = s->started.fetch_add(1) + 1;
  if (s->finished.load() != launch - 1) s->overlaps.fetch_add(1);
  std::memset(s->input, launch & 0xFF, kBytes);
  s->log.Append(kStart);
}
void LeftNode(void* data) {
  auto* s = static_cast<ForkJoinState*>(data);
  if (!AllBytesAre(s->left_out, kBytes, s->started.load() & 0xFF)) s->stale_copies.fetch_add(1);
  s->left_runs.fetch_add(1);
  s->log.Append(kLeft);
}
void RightNode(void* data) {
  auto* s = static_cast<ForkJoinState*>(data);
  if (!AllBytesAre(s->right_out, kBytes, s->started.load() & 0xFF)) s->stale_copies.fetch_add(1);
  s->right_runs.fetch_add(1);
  s->log.Append(kRight);
}
void JoinNode(void* data) {
  auto* s = static_cast<ForkJoinState*>(data);
  const int launch = s->started.load() & 0xFF;
  if (!AllBytesAre(s->left_out, kBytes, launch) || !AllBytesAre(s->right_out, kBytes, launch)) {
    s->stale_copies.fetch_add(1);
  }
  s->log.Append(kJoin);
  s->finished.fetch_add(1);
}

TEST_F(Graph, ForkJoin_ThreeStreamCaptureLaunched100TimesRunsEveryNodeOnceInOrder) {
  REQUIRE_NON_BLOCKING_STREAMS();
  constexpr int kLaunches = 100;
  static_assert(kLaunches * kNodes <= 1024, "the order log holds 1024 entries");
  infinirtStream_t origin = NewCaptureStream();
  infinirtStream_t left = NewCaptureStream();
  infinirtStream_t right = NewCaptureStream(infinirtStreamNonBlocking);
  infinirtEvent_t fork = NewEvent(infinirtEventDisableTiming);
  infinirtEvent_t left_done = NewEvent(infinirtEventDisableTiming);
  infinirtEvent_t right_done = NewEvent(infinirtEventDisableTiming);
  unsigned char* left_device = NewDeviceMemory(kBytes);
  unsigned char* right_device = NewDeviceMemory(kBytes);
  auto& state = Keep<ForkJoinState>();
  state.input = NewPinnedMemory(kBytes, 0);
  state.left_out = NewPinnedMemory(kBytes, 0);
  state.right_out = NewPinnedMemory(kBytes, 0);
  ASSERT_NE(left_device, nullptr);
  ASSERT_NE(right_device, nullptr);
  ASSERT_NE(state.input, nullptr);
  ASSERT_NE(state.left_out, nullptr);
  ASSERT_NE(state.right_out, nullptr);

  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(origin, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(origin, StartNode, &state));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(fork, origin));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(left, fork, 0));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(right, fork, 0));
  ASSERT_OK_OR_SKIP(
      infinirtMemcpyAsync(left_device, state.input, kBytes, infinirtMemcpyHostToDevice, left));
  ASSERT_OK_OR_SKIP(
      infinirtMemcpyAsync(right_device, state.input, kBytes, infinirtMemcpyHostToDevice, right));
  ASSERT_OK_OR_SKIP(
      infinirtMemcpyAsync(state.left_out, left_device, kBytes, infinirtMemcpyDeviceToHost, left));
  ASSERT_OK_OR_SKIP(infinirtMemcpyAsync(state.right_out, right_device, kBytes,
                                        infinirtMemcpyDeviceToHost, right));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(left, LeftNode, &state));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(right, RightNode, &state));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(left_done, left));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(right_done, right));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(origin, left_done, 0));
  ASSERT_OK_OR_SKIP(infinirtStreamWaitEvent(origin, right_done, 0));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(origin, JoinNode, &state));
  infinirtGraph_t graph = EndCapture(origin);
  for (infinirtStream_t stream : {origin, left, right}) {
    EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusNone);
  }
  infinirtGraphExec_t exec = Instantiate(graph);
  ASSERT_EQ(state.log.next.load(), 0) << "captured work ran before any launch";

  const infinirtStream_t streams[] = {origin, left, right};
  for (int launch = 0; launch < kLaunches; ++launch) {
    ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, streams[launch % 3])) << launch;
  }
  ASSERT_OK_OR_SKIP(infinirtDeviceSynchronize());

  // Every node ran once per launch ...
  EXPECT_EQ(state.started.load(), kLaunches);
  EXPECT_EQ(state.left_runs.load(), kLaunches);
  EXPECT_EQ(state.right_runs.load(), kLaunches);
  EXPECT_EQ(state.finished.load(), kLaunches);
  ASSERT_EQ(state.log.next.load(), kLaunches * kNodes);
  // ... launches did not overlap, copies ran between Start and the node that reads them ...
  EXPECT_EQ(state.overlaps.load(), 0) << "a launch began before the previous one ended";
  EXPECT_EQ(state.stale_copies.load(), 0) << "a node ran before the copies it depends on";
  // ... and each launch's four log entries are contiguous: Start, the branches, Join.
  int misplaced = 0;
  for (int launch = 0; launch < kLaunches; ++launch) {
    const int* entry = state.log.slots + launch * kNodes;
    const bool branches =
        (entry[1] == kLeft && entry[2] == kRight) || (entry[1] == kRight && entry[2] == kLeft);
    if (entry[0] != kStart || !branches || entry[3] != kJoin) {
      ADD_FAILURE() << "launch " << launch << " logged " << entry[0] << entry[1] << entry[2]
                    << entry[3];
      if (++misplaced == 3) break;
    }
  }
}

// ---------------------------------------------------------------------------------------------
// Misuse of graph and exec handles and of the instantiation flags.

TEST_F(Graph, Misuse_NullGraphOrExecIsInvalidValue) {
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  infinirtGraphExec_t exec = CounterExec(&runs);
  infinirtStream_t stream = NewStream();
  infinirtGraphExec_t made = nullptr;
  EXPECT_EQ(infinirtGraphInstantiate(&made, nullptr, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphInstantiateWithFlags(&made, nullptr, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphLaunch(nullptr, stream), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphExecDestroy(nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphDestroy(nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(made, nullptr);
  // A valid exec with an invalid stream.
  EXPECT_EQ(infinirtGraphLaunch(exec, Garbage<infinirtStream_t>()),
            infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(runs.load(), 0);
}

TEST_F(Graph, Misuse_GarbageOrDestroyedHandlesAreInvalidResourceHandle) {
  static_assert(infinirtErrorInvalidResourceHandle == 400, "CUDA's value");
  infinirtStream_t stream = NewCaptureStream();
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
  infinirtGraph_t graph = nullptr;
  ASSERT_OK_OR_SKIP(infinirtStreamEndCapture(stream, &graph));
  infinirtGraphExec_t exec = nullptr;
  ASSERT_OK_OR_SKIP(infinirtGraphInstantiate(&exec, graph, 0));

  // Garbage values, and live handles of another kind.
  const infinirtGraph_t bad_graphs[] = {Garbage<infinirtGraph_t>(),
                                        reinterpret_cast<infinirtGraph_t>(exec),
                                        reinterpret_cast<infinirtGraph_t>(stream)};
  for (infinirtGraph_t bad : bad_graphs) {
    infinirtGraphExec_t made = nullptr;
    EXPECT_EQ(infinirtGraphInstantiate(&made, bad, 0), infinirtErrorInvalidResourceHandle);
    EXPECT_EQ(infinirtGraphDestroy(bad), infinirtErrorInvalidResourceHandle);
  }
  const infinirtGraphExec_t bad_execs[] = {Garbage<infinirtGraphExec_t>(),
                                           reinterpret_cast<infinirtGraphExec_t>(graph),
                                           reinterpret_cast<infinirtGraphExec_t>(stream)};
  for (infinirtGraphExec_t bad : bad_execs) {
    EXPECT_EQ(infinirtGraphLaunch(bad, stream), infinirtErrorInvalidResourceHandle);
    EXPECT_EQ(infinirtGraphUpload(bad, stream), infinirtErrorInvalidResourceHandle);
    EXPECT_EQ(infinirtGraphExecDestroy(bad), infinirtErrorInvalidResourceHandle);
  }

  // Destroyed handles; destroying twice.
  ASSERT_OK_OR_SKIP(infinirtGraphDestroy(graph));
  infinirtGraphExec_t made = nullptr;
  EXPECT_EQ(infinirtGraphInstantiate(&made, graph, 0), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtErrorInvalidResourceHandle);
  ASSERT_OK_OR_SKIP(infinirtGraphExecDestroy(exec));
  // Launching or uploading an exec destroyed before: InvalidValue, as NVIDIA's runtime answers.
  EXPECT_EQ(infinirtGraphLaunch(exec, stream), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphUpload(exec, stream), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(runs.load(), 0) << "a refused launch ran";
}

TEST_F(Graph, Misuse_InstantiateFlags) {
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  infinirtStream_t stream = NewCaptureStream();
  ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  ASSERT_OK_OR_SKIP(infinirtLaunchHostFunc(stream, CountRun, &runs));
  infinirtGraph_t graph = EndCapture(stream);

  for (unsigned long long flags : {0x10ull, 0x80ull, 1ull << 40, ~0ull}) {
    infinirtGraphExec_t exec = nullptr;
    EXPECT_EQ(infinirtGraphInstantiate(&exec, graph, flags), infinirtErrorInvalidValue) << flags;
    EXPECT_EQ(infinirtGraphInstantiateWithFlags(&exec, graph, flags), infinirtErrorInvalidValue)
        << flags;
    EXPECT_EQ(exec, nullptr);
  }
  infinirtGraphExec_t exec = nullptr;
  EXPECT_EQ(infinirtGraphInstantiate(&exec, graph, infinirtGraphInstantiateFlagDeviceLaunch),
            infinirtErrorNotSupported);
  EXPECT_EQ(
      infinirtGraphInstantiateWithFlags(&exec, graph, infinirtGraphInstantiateFlagDeviceLaunch),
      infinirtErrorNotSupported);
  EXPECT_EQ(exec, nullptr);
  EXPECT_EQ(infinirtGraphInstantiate(nullptr, graph, 0), infinirtErrorInvalidValue);
  // Upload names no stream here: only GraphInstantiateWithParams takes it (NVIDIA's answer).
  for (unsigned long long flags :
       {static_cast<unsigned long long>(infinirtGraphInstantiateFlagUpload),
        static_cast<unsigned long long>(infinirtGraphInstantiateFlagUpload |
                                        infinirtGraphInstantiateFlagUseNodePriority)}) {
    EXPECT_EQ(infinirtGraphInstantiateWithFlags(&exec, graph, flags), infinirtErrorInvalidValue)
        << flags;
    EXPECT_EQ(infinirtGraphInstantiate(&exec, graph, flags), infinirtErrorInvalidValue) << flags;
    EXPECT_EQ(exec, nullptr);
  }

  // The other documented flags are accepted, and the execs run.
  for (unsigned long long flags :
       {static_cast<unsigned long long>(infinirtGraphInstantiateFlagAutoFreeOnLaunch),
        static_cast<unsigned long long>(infinirtGraphInstantiateFlagUseNodePriority),
        static_cast<unsigned long long>(infinirtGraphInstantiateFlagAutoFreeOnLaunch |
                                        infinirtGraphInstantiateFlagUseNodePriority)}) {
    exec = nullptr;
    EXPECT_EQ(infinirtGraphInstantiateWithFlags(&exec, graph, flags), infinirtSuccess) << flags;
    Own(exec);
    if (exec != nullptr) {
      ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));  // NotSupported without host functions
    }
  }
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(runs.load(), 3);
}

TEST_F(Graph, Misuse_LaunchOnAStreamOfAnotherDeviceIsInvalidValue) {
  if (device_count() < 2) GTEST_SKIP() << "needs two devices";
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  infinirtGraphExec_t exec = CounterExec(&runs);  // device 0
  ASSERT_OK_OR_SKIP(infinirtSetDevice(1));
  infinirtStream_t other = NewStream();
  EXPECT_EQ(infinirtGraphLaunch(exec, other), infinirtErrorInvalidValue);
  // The legacy stream of the current device (1) is another device's stream too.
  EXPECT_EQ(infinirtGraphLaunch(exec, nullptr), infinirtErrorInvalidValue);
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(other));
  ASSERT_OK_OR_SKIP(infinirtSetDevice(0));
  ASSERT_OK_OR_SKIP(infinirtDeviceSynchronize());
  EXPECT_EQ(runs.load(), 0);
}

}  // namespace
}  // namespace infinirt::conformance
