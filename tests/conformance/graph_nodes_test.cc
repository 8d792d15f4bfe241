// S52-S59: graphs built node by node. A built graph runs its nodes in dependency order and the
// listing functions describe it (S52); a graph built by hand and the graph a capture of the same
// work produces are alike node for node (S53); editing a graph (edges, removals, parameters,
// clones) changes later instantiations only, and a cycle is refused (S54); event and memory
// nodes (S55); executable graphs changed in place (S56); the DOT file (S57). Bad input for every
// function: GraphNodes_BadInput*. User objects (S58); captures into the program's graph and
// changes to what a capture continues after (S59).
#include <unistd.h>

#include <algorithm>
#include <array>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <deque>
#include <fstream>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include "capture_support.h"

namespace infinirt::conformance {
namespace {

using GraphNodes = Capture;

// Every node of a graph, in the graph's order.
std::vector<infinirtGraphNode_t> NodesOf(infinirtGraph_t graph) {
  size_t count = 0;
  EXPECT_EQ(infinirtGraphGetNodes(graph, nullptr, &count), infinirtSuccess);
  std::vector<infinirtGraphNode_t> nodes(count);
  EXPECT_EQ(infinirtGraphGetNodes(graph, nodes.data(), &count), infinirtSuccess);
  EXPECT_EQ(count, nodes.size());
  return nodes;
}

// Edges as pairs of positions in NodesOf(graph), sorted.
std::vector<std::pair<size_t, size_t>> EdgesOf(infinirtGraph_t graph) {
  const std::vector<infinirtGraphNode_t> nodes = NodesOf(graph);
  size_t count = 0;
  EXPECT_EQ(infinirtGraphGetEdges(graph, nullptr, nullptr, nullptr, &count), infinirtSuccess);
  std::vector<infinirtGraphNode_t> from(count);
  std::vector<infinirtGraphNode_t> to(count);
  EXPECT_EQ(infinirtGraphGetEdges(graph, from.data(), to.data(), nullptr, &count), infinirtSuccess);
  auto position = [&](infinirtGraphNode_t node) {
    return static_cast<size_t>(std::find(nodes.begin(), nodes.end(), node) - nodes.begin());
  };
  std::vector<std::pair<size_t, size_t>> edges;
  for (size_t i = 0; i < count; ++i) edges.emplace_back(position(from[i]), position(to[i]));
  std::sort(edges.begin(), edges.end());
  return edges;
}

infinirtGraphNodeType TypeOf(infinirtGraphNode_t node) {
  infinirtGraphNodeType type = infinirtGraphNodeTypeCount;
  EXPECT_EQ(infinirtGraphNodeGetType(node, &type), infinirtSuccess);
  return type;
}

infinirtHostNodeParams HostParams(Mark* mark) { return infinirtHostNodeParams{AppendMark, mark}; }

infinirtMemsetParams SetParams(void* dst, unsigned int value, size_t width) {
  infinirtMemsetParams params{};
  params.dst = dst;
  params.value = value;
  params.elementSize = 1;
  params.width = width;
  params.height = 1;
  return params;
}

infinirtMemAllocNodeParams AllocParams(size_t bytes) {
  infinirtMemAllocNodeParams params{};
  params.poolProps.allocType = infinirtMemAllocationTypePinned;
  params.poolProps.location.type = infinirtMemLocationTypeDevice;
  params.poolProps.location.id = 0;
  params.bytesize = bytes;
  return params;
}

class Built : public GraphNodes {
 protected:
  infinirtGraph_t NewGraph() {
    infinirtGraph_t graph = nullptr;
    EXPECT_EQ(infinirtGraphCreate(&graph, 0), infinirtSuccess);
    return Own(graph);
  }

  // Runs an exec once on a new stream and waits for it. A backend that cannot run one of the
  // graph's nodes (NotSupported) skips the test: use LAUNCH_AND_WAIT.
  void LaunchAndWait(infinirtGraphExec_t exec) {
    infinirtStream_t stream = NewStream();
    ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, stream));
    ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  }
};

#define LAUNCH_AND_WAIT(exec)                     \
  do {                                            \
    LaunchAndWait(exec);                          \
    if (HasFatalFailure() || IsSkipped()) return; \
  } while (0)

// ---------------------------------------------------------------------------------------------
// S52: a built graph runs in dependency order; the listing functions describe it.

TEST_F(Built, S52_BuiltGraphRunsEveryNodeAfterItsDependencies) {
  auto& log = Keep<OrderLog>();
  auto& marks = Keep<std::array<Mark, 4>>();
  for (int i = 0; i < 4; ++i) marks[i] = Mark{&log, i};
  infinirtGraph_t graph = NewGraph();
  // Added in reverse: 3 <- {1, 2} <- 0, with the edges added afterwards.
  std::array<infinirtGraphNode_t, 4> node{};
  std::array<infinirtHostNodeParams, 4> params{};
  for (int i = 3; i >= 0; --i) {
    params[i] = HostParams(&marks[i]);
    ASSERT_EQ(infinirtGraphAddHostNode(&node[i], graph, nullptr, 0, &params[i]), infinirtSuccess);
  }
  const infinirtGraphNode_t from[] = {node[0], node[0], node[1], node[2]};
  const infinirtGraphNode_t to[] = {node[1], node[2], node[3], node[3]};
  ASSERT_EQ(infinirtGraphAddDependencies(graph, from, to, nullptr, 4), infinirtSuccess);

  infinirtGraphExec_t exec = Instantiate(graph);
  LAUNCH_AND_WAIT(exec);
  LAUNCH_AND_WAIT(exec);
  ASSERT_EQ(log.next.load(), 8);
  for (int run = 0; run < 2; ++run) {
    const int* slots = &log.slots[run * 4];
    EXPECT_EQ(slots[0], 0);
    EXPECT_EQ(slots[3], 3);
    EXPECT_TRUE((slots[1] == 1 && slots[2] == 2) || (slots[1] == 2 && slots[2] == 1));
  }
}

TEST_F(Built, S52_ListingFunctionsDescribeTheGraph) {
  infinirtGraph_t graph = NewGraph();
  infinirtGraphNode_t root = nullptr;
  infinirtGraphNode_t left = nullptr;
  infinirtGraphNode_t right = nullptr;
  ASSERT_EQ(infinirtGraphAddEmptyNode(&root, graph, nullptr, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddEmptyNode(&left, graph, &root, 1), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddEmptyNode(&right, graph, &root, 1), infinirtSuccess);

  EXPECT_EQ(NodesOf(graph), (std::vector<infinirtGraphNode_t>{root, left, right}));
  EXPECT_EQ(TypeOf(root), infinirtGraphNodeTypeEmpty);
  size_t count = 0;
  ASSERT_EQ(infinirtGraphGetRootNodes(graph, nullptr, &count), infinirtSuccess);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(EdgesOf(graph), (std::vector<std::pair<size_t, size_t>>{{0, 1}, {0, 2}}));

  // A longer array than needed: the rest is set to NULL and the count says how many.
  std::array<infinirtGraphNode_t, 4> dependents{};
  dependents.fill(root);
  std::array<infinirtGraphEdgeData, 4> edge_data{};
  edge_data.fill(infinirtGraphEdgeData{1, 1, 1, {1, 1, 1, 1, 1}});
  count = dependents.size();
  ASSERT_EQ(infinirtGraphNodeGetDependentNodes(root, dependents.data(), edge_data.data(), &count),
            infinirtSuccess);
  EXPECT_EQ(count, 2u);
  EXPECT_EQ(dependents[0], left);
  EXPECT_EQ(dependents[1], right);
  EXPECT_EQ(dependents[2], nullptr);
  EXPECT_EQ(dependents[3], nullptr);
  EXPECT_EQ(edge_data[0].type, 0);
  // A shorter one: filled, the count unchanged.
  infinirtGraphNode_t first = nullptr;
  count = 1;
  ASSERT_EQ(infinirtGraphNodeGetDependentNodes(root, &first, nullptr, &count), infinirtSuccess);
  EXPECT_EQ(count, 1u);
  EXPECT_EQ(first, left);
  infinirtGraphNode_t dependency = nullptr;
  count = 1;
  ASSERT_EQ(infinirtGraphNodeGetDependencies(right, &dependency, nullptr, &count), infinirtSuccess);
  EXPECT_EQ(dependency, root);
  ASSERT_EQ(infinirtGraphNodeGetDependencies(root, nullptr, nullptr, &count), infinirtSuccess);
  EXPECT_EQ(count, 0u);
}

TEST_F(Built, S52_ChildGraphRunsAsOneNodeOfItsParent) {
  auto& log = Keep<OrderLog>();
  auto& marks = Keep<std::array<Mark, 3>>();
  for (int i = 0; i < 3; ++i) marks[i] = Mark{&log, i};
  const infinirtHostNodeParams first = HostParams(&marks[0]);
  const infinirtHostNodeParams inner = HostParams(&marks[1]);
  const infinirtHostNodeParams last = HostParams(&marks[2]);
  infinirtGraph_t child = NewGraph();
  infinirtGraphNode_t child_node = nullptr;
  ASSERT_EQ(infinirtGraphAddHostNode(&child_node, child, nullptr, 0, &inner), infinirtSuccess);
  infinirtGraph_t parent = NewGraph();
  infinirtGraphNode_t a = nullptr;
  infinirtGraphNode_t b = nullptr;
  infinirtGraphNode_t c = nullptr;
  ASSERT_EQ(infinirtGraphAddHostNode(&a, parent, nullptr, 0, &first), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddChildGraphNode(&b, parent, &a, 1, child), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddHostNode(&c, parent, &b, 1, &last), infinirtSuccess);
  EXPECT_EQ(TypeOf(b), infinirtGraphNodeTypeGraph);
  // The node holds a copy: a node added to the child afterwards does not run.
  ASSERT_EQ(infinirtGraphAddHostNode(&child_node, child, nullptr, 0, &last), infinirtSuccess);

  LAUNCH_AND_WAIT(Instantiate(parent));
  ASSERT_EQ(log.next.load(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(log.slots[i], i);
}

// The node copies the child as it is at the call, so a graph may be its own child: the parent
// runs its node, then the copy's.
TEST_F(Built, S52_AGraphMayBeAChildOfItself) {
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  const infinirtHostNodeParams count{CountRun, &runs};
  infinirtGraph_t graph = NewGraph();
  infinirtGraphNode_t own = nullptr;
  infinirtGraphNode_t child = nullptr;
  ASSERT_EQ(infinirtGraphAddHostNode(&own, graph, nullptr, 0, &count), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddChildGraphNode(&child, graph, &own, 1, graph), infinirtSuccess);
  EXPECT_EQ(NodesOf(graph).size(), 2u);
  LAUNCH_AND_WAIT(Instantiate(graph));
  EXPECT_EQ(runs.load(), 2);
}

// A child whose dependencies form a cycle is accepted when added and refused when the parent is
// instantiated, as NVIDIA's runtime does.
TEST_F(Built, S52_AChildWithACycleIsRefusedAtInstantiation) {
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  const infinirtHostNodeParams count{CountRun, &runs};
  infinirtGraph_t child = NewGraph();
  infinirtGraphNode_t a = nullptr;
  infinirtGraphNode_t b = nullptr;
  ASSERT_EQ(infinirtGraphAddHostNode(&a, child, nullptr, 0, &count), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddHostNode(&b, child, &a, 1, &count), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddDependencies(child, &b, &a, nullptr, 1), infinirtSuccess);
  infinirtGraph_t parent = NewGraph();
  infinirtGraphNode_t node = nullptr;
  ASSERT_EQ(infinirtGraphAddChildGraphNode(&node, parent, nullptr, 0, child), infinirtSuccess);
  infinirtGraphExec_t exec = nullptr;
  EXPECT_EQ(infinirtGraphInstantiate(&exec, parent, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(exec, nullptr);
  infinirtGraphInstantiateParams params{};
  EXPECT_EQ(infinirtGraphInstantiateWithParams(&exec, parent, &params), infinirtErrorInvalidValue);
  EXPECT_EQ(params.result_out, infinirtGraphInstantiateInvalidStructure);
  EXPECT_EQ(runs.load(), 0);
  infinirtGetLastError();
}

// What NVIDIA's runtime refuses of copy nodes beyond MemcpyAsync's checks: nothing to copy, a
// region that starts before the allocation it runs into, and an exec's copy changing direction.
TEST_F(Built, S52_CopyNodesRefuseNothingToCopyAStartBeforeTheAllocationAndANewDirection) {
  unsigned char* device = NewDeviceMemory(128);
  unsigned char* host = NewPinnedMemory(128, 0);
  ASSERT_NE(device, nullptr);
  std::vector<unsigned char> pageable(256, 0);
  infinirtGraph_t graph = NewGraph();
  infinirtGraphNode_t copy = nullptr;
  EXPECT_EQ(infinirtGraphAddMemcpyNode1D(&copy, graph, nullptr, 0, host, device, 0,
                                         infinirtMemcpyDeviceToHost),
            infinirtErrorInvalidValue);
  // A source 16 bytes before the device allocation, running into it.
  EXPECT_EQ(infinirtGraphAddMemcpyNode1D(&copy, graph, nullptr, 0, pageable.data(), device - 16, 64,
                                         infinirtMemcpyDefault),
            infinirtErrorInvalidValue);
  EXPECT_TRUE(NodesOf(graph).empty()) << "a refused node joined the graph";
  ASSERT_EQ(infinirtGraphAddMemcpyNode1D(&copy, graph, nullptr, 0, host, device, 64,
                                         infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  EXPECT_EQ(infinirtGraphMemcpyNodeSetParams1D(copy, host, device, 0, infinirtMemcpyDeviceToHost),
            infinirtErrorInvalidValue);
  infinirtGraphExec_t exec = Instantiate(graph);
  ASSERT_NE(exec, nullptr);
  EXPECT_EQ(infinirtGraphExecMemcpyNodeSetParams1D(exec, copy, host, device, 0,
                                                   infinirtMemcpyDeviceToHost),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphExecMemcpyNodeSetParams1D(exec, copy, device, host, 64,
                                                   infinirtMemcpyHostToDevice),
            infinirtErrorInvalidValue)
      << "an exec's copy node changed its direction";
  // The same direction with other addresses is taken.
  EXPECT_EQ(infinirtGraphExecMemcpyNodeSetParams1D(exec, copy, host + 64, device + 64, 64,
                                                   infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  infinirtGetLastError();
}

// A copy node from 3-D parameters moves a box between pitched volumes at each launch; its
// parameters read back as given; the graph's node may change shape, an exec's keeps its shape and
// direction.
TEST_F(Built, S52_CopyNodesOf3DParametersMoveABox) {
  constexpr size_t kPitch = 64, kRows = 4, kSlices = 2;
  constexpr size_t kVolume = kPitch * kRows * kSlices;
  unsigned char* device = NewDeviceMemory(kVolume);
  unsigned char* host = NewPinnedMemory(kVolume, 0);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(host, nullptr);
  std::vector<unsigned char> image(kVolume);
  for (size_t i = 0; i < kVolume; ++i) image[i] = static_cast<unsigned char>(i * 7 + 1);
  ASSERT_EQ(infinirtMemcpy(device, image.data(), kVolume, infinirtMemcpyHostToDevice),
            infinirtSuccess);
  // A 10 x 2 x 2 box from (3, 1, 0) of the device volume to (5, 0, 0) of the host's.
  infinirtMemcpy3DParms p{};
  p.srcPtr = make_infinirtPitchedPtr(device, kPitch, kPitch, kRows);
  p.srcPos = make_infinirtPos(3, 1, 0);
  p.dstPtr = make_infinirtPitchedPtr(host, kPitch, kPitch, kRows);
  p.dstPos = make_infinirtPos(5, 0, 0);
  p.extent = make_infinirtExtent(10, 2, 2);
  p.kind = infinirtMemcpyDefault;
  infinirtGraph_t graph = NewGraph();
  infinirtGraphNode_t copy = nullptr;
  ASSERT_EQ(infinirtGraphAddMemcpyNode(&copy, graph, nullptr, 0, &p), infinirtSuccess);
  EXPECT_EQ(TypeOf(copy), infinirtGraphNodeTypeMemcpy);
  infinirtMemcpy3DParms read{};
  ASSERT_EQ(infinirtGraphMemcpyNodeGetParams(copy, &read), infinirtSuccess);
  EXPECT_EQ(read.srcPtr.ptr, p.srcPtr.ptr);
  EXPECT_EQ(read.srcPos.y, 1u);
  EXPECT_EQ(read.dstPos.x, 5u);
  EXPECT_EQ(read.extent.depth, 2u);
  EXPECT_EQ(read.kind, infinirtMemcpyDeviceToHost) << "the kind, resolved";
  infinirtGraphExec_t exec = Instantiate(graph);
  LAUNCH_AND_WAIT(exec);
  auto expect_box = [&](size_t sx, size_t sy, size_t dx) {
    for (size_t z = 0; z < 2; ++z) {
      for (size_t y = 0; y < 2; ++y) {
        for (size_t x = 0; x < 10; ++x) {
          ASSERT_EQ(host[(z * kRows + y) * kPitch + dx + x],
                    image[(z * kRows + sy + y) * kPitch + sx + x])
              << x << "," << y << "," << z;
        }
      }
    }
  };
  expect_box(3, 1, 5);
  EXPECT_EQ(host[0], 0) << "copied outside the box";

  // The exec's node takes a box of the same shape elsewhere...
  p.srcPos = make_infinirtPos(20, 2, 0);
  p.dstPos = make_infinirtPos(30, 0, 0);
  ASSERT_EQ(infinirtGraphExecMemcpyNodeSetParams(exec, copy, &p), infinirtSuccess);
  LAUNCH_AND_WAIT(exec);
  expect_box(20, 2, 30);
  // ...but neither another shape nor another direction.
  infinirtMemcpy3DParms taller = p;
  taller.srcPos.y = 0;
  taller.extent.height = 3;
  EXPECT_EQ(infinirtGraphExecMemcpyNodeSetParams(exec, copy, &taller), infinirtErrorInvalidValue);
  infinirtMemcpy3DParms back = p;
  std::swap(back.srcPtr, back.dstPtr);
  std::swap(back.srcPos, back.dstPos);
  EXPECT_EQ(infinirtGraphExecMemcpyNodeSetParams(exec, copy, &back), infinirtErrorInvalidValue);
  // The graph's node may change shape.
  EXPECT_EQ(infinirtGraphMemcpyNodeSetParams(copy, &taller), infinirtSuccess);
  ASSERT_EQ(infinirtGraphMemcpyNodeGetParams(copy, &read), infinirtSuccess);
  EXPECT_EQ(read.extent.height, 3u);

  // Refused: no parameters, an empty extent, CUDA arrays, a box leaving its volume.
  infinirtGraphNode_t made = nullptr;
  EXPECT_EQ(infinirtGraphAddMemcpyNode(&made, graph, nullptr, 0, nullptr),
            infinirtErrorInvalidValue);
  infinirtMemcpy3DParms bad = p;
  bad.extent = make_infinirtExtent(0, 2, 2);
  EXPECT_EQ(infinirtGraphAddMemcpyNode(&made, graph, nullptr, 0, &bad), infinirtErrorInvalidValue);
  bad = p;
  bad.srcArray = reinterpret_cast<infinirtArray_t>(&bad);
  EXPECT_EQ(infinirtGraphAddMemcpyNode(&made, graph, nullptr, 0, &bad), infinirtErrorInvalidValue);
  bad = p;
  bad.srcPos.z = 1;  // the second slice runs past the volume
  EXPECT_EQ(infinirtGraphAddMemcpyNode(&made, graph, nullptr, 0, &bad), infinirtErrorInvalidValue);
  EXPECT_EQ(NodesOf(graph).size(), 1u) << "a refused node joined the graph";
  infinirtGetLastError();
}

// Memset nodes of 2- and 4-byte elements whose bytes differ (what cuMemsetD16/D32 set) write the
// element pattern, row by row, whether the backend runs the graph or the core replays it (a graph
// with an event record node is replayed). A backend that sets bytes only answers NotSupported
// when the node is made.
TEST_F(Built, S52_MemsetNodesOfElementsWhoseBytesDiffer) {
  constexpr size_t kPitch = 64, kWidth = 5, kRows = 3;
  for (const bool replayed : {false, true}) {
    for (const unsigned int size : {2u, 4u}) {
      unsigned char* device = NewDeviceMemory(kPitch * kRows);
      unsigned char* host = NewPinnedMemory(kPitch * kRows, 0);
      ASSERT_NE(device, nullptr);
      ASSERT_EQ(infinirtMemset(device, 0xEE, kPitch * kRows), infinirtSuccess);
      infinirtMemsetParams set{};
      set.dst = device + 2;  // elements need not be aligned
      set.pitch = kPitch;
      set.value = size == 2 ? 0xA1B2u : 0x11223344u;
      set.elementSize = size;
      set.width = kWidth;
      set.height = kRows;
      infinirtGraph_t graph = NewGraph();
      infinirtGraphNode_t memset = nullptr;
      infinirtGraphNode_t copy = nullptr;
      ASSERT_OK_OR_SKIP(infinirtGraphAddMemsetNode(&memset, graph, nullptr, 0, &set));
      ASSERT_EQ(infinirtGraphAddMemcpyNode1D(&copy, graph, &memset, 1, host, device, kPitch * kRows,
                                             infinirtMemcpyDeviceToHost),
                infinirtSuccess);
      if (replayed) {
        infinirtGraphNode_t record = nullptr;
        ASSERT_EQ(infinirtGraphAddEventRecordNode(&record, graph, &copy, 1, NewEvent()),
                  infinirtSuccess);
      }
      infinirtMemsetParams read{};
      ASSERT_EQ(infinirtGraphMemsetNodeGetParams(memset, &read), infinirtSuccess);
      EXPECT_EQ(read.value, set.value);
      EXPECT_EQ(read.elementSize, size);
      LAUNCH_AND_WAIT(Instantiate(graph));
      for (size_t y = 0; y < kRows; ++y) {
        for (size_t x = 0; x < kPitch; ++x) {
          const size_t offset = y * kPitch + x;
          const bool inside = x >= 2 && x < 2 + kWidth * size;
          unsigned char expected = 0xEE;
          if (inside) {
            const unsigned int element = set.value;
            unsigned char pattern[4];
            std::memcpy(pattern, &element, sizeof pattern);  // the host's byte order
            expected = pattern[(x - 2) % size];
          }
          ASSERT_EQ(host[offset], expected)
              << size << "-byte elements, replayed " << replayed << ": x " << x << " y " << y;
        }
      }
    }
  }
}

TEST_F(Built, S52_CopyAndMemsetNodesMoveData) {
  constexpr size_t kBytes = 64;
  unsigned char* device = NewDeviceMemory(kBytes * 4);
  unsigned char* host = NewPinnedMemory(kBytes * 4, 0);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(host, nullptr);
  infinirtGraph_t graph = NewGraph();
  // Rows 0 and 2 of a 2-row image with a pitch of 2 * kBytes, elements of 4 bytes 0x5A5A5A5A.
  infinirtMemsetParams set{};
  set.dst = device;
  set.pitch = 2 * kBytes;
  set.value = 0x5A5A5A5Au;
  set.elementSize = 4;
  set.width = kBytes / 4;
  set.height = 2;
  infinirtMemsetParams clear = SetParams(device, 0, kBytes * 4);
  infinirtGraphNode_t cleared = nullptr;
  infinirtGraphNode_t memset = nullptr;
  infinirtGraphNode_t copy = nullptr;
  ASSERT_EQ(infinirtGraphAddMemsetNode(&cleared, graph, nullptr, 0, &clear), infinirtSuccess);
  ASSERT_OK_OR_SKIP(infinirtGraphAddMemsetNode(&memset, graph, &cleared, 1, &set));
  ASSERT_EQ(infinirtGraphAddMemcpyNode1D(&copy, graph, &memset, 1, host, device, kBytes * 4,
                                         infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  infinirtMemsetParams read{};
  ASSERT_EQ(infinirtGraphMemsetNodeGetParams(memset, &read), infinirtSuccess);
  EXPECT_EQ(read.dst, set.dst);
  EXPECT_EQ(read.pitch, set.pitch);
  EXPECT_EQ(read.value, set.value);
  EXPECT_EQ(read.elementSize, set.elementSize);
  EXPECT_EQ(read.width, set.width);
  EXPECT_EQ(read.height, set.height);
  // The pitch comes back as the node was made with it: 0 for the one-row memset made with 0.
  ASSERT_EQ(infinirtGraphMemsetNodeGetParams(cleared, &read), infinirtSuccess);
  EXPECT_EQ(read.pitch, 0u);
  EXPECT_EQ(read.height, 1u);

  LAUNCH_AND_WAIT(Instantiate(graph));
  EXPECT_TRUE(AllBytesAre(host, kBytes, 0x5A));
  EXPECT_TRUE(AllBytesAre(host + kBytes, kBytes, 0));
  EXPECT_TRUE(AllBytesAre(host + 2 * kBytes, kBytes, 0x5A));
  EXPECT_TRUE(AllBytesAre(host + 3 * kBytes, kBytes, 0));
}

// ---------------------------------------------------------------------------------------------
// S53: built by hand, the graph a capture produces is the same, node for node.

TEST_F(Built, S53_HandBuiltGraphMatchesTheCapturedOneNodeForNode) {
  constexpr size_t kBytes = 256;
  unsigned char* device = NewDeviceMemory(kBytes);
  unsigned char* host = NewPinnedMemory(kBytes, 0);
  ASSERT_NE(device, nullptr);
  auto& log = Keep<OrderLog>();
  auto& marks = Keep<std::array<Mark, 2>>();
  marks[0] = Mark{&log, 0};
  marks[1] = Mark{&log, 1};

  // Captured: memset A; fork: copy B on the origin, host C on the other; join: host D.
  infinirtStream_t origin = NewCaptureStream();
  infinirtStream_t side = NewCaptureStream();
  infinirtEvent_t fork = NewEvent();
  infinirtEvent_t join = NewEvent();
  ASSERT_EQ(infinirtStreamBeginCapture(origin, infinirtStreamCaptureModeGlobal), infinirtSuccess);
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0x33, kBytes, origin));
  ASSERT_EQ(infinirtEventRecord(fork, origin), infinirtSuccess);
  ASSERT_EQ(infinirtStreamWaitEvent(side, fork, 0), infinirtSuccess);
  ASSERT_OK_OR_SKIP(infinirtMemcpyAsync(host, device, kBytes, infinirtMemcpyDeviceToHost, origin));
  ASSERT_EQ(infinirtLaunchHostFunc(side, AppendMark, &marks[0]), infinirtSuccess);
  ASSERT_EQ(infinirtEventRecord(join, side), infinirtSuccess);
  ASSERT_EQ(infinirtStreamWaitEvent(origin, join, 0), infinirtSuccess);
  ASSERT_EQ(infinirtLaunchHostFunc(origin, AppendMark, &marks[1]), infinirtSuccess);
  infinirtGraph_t captured = EndCapture(origin);

  infinirtGraph_t built = NewGraph();
  const infinirtMemsetParams set = SetParams(device, 0x33, kBytes);
  const infinirtHostNodeParams c_params = HostParams(&marks[0]);
  const infinirtHostNodeParams d_params = HostParams(&marks[1]);
  infinirtGraphNode_t a = nullptr;
  infinirtGraphNode_t b = nullptr;
  infinirtGraphNode_t c = nullptr;
  infinirtGraphNode_t d = nullptr;
  ASSERT_EQ(infinirtGraphAddMemsetNode(&a, built, nullptr, 0, &set), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddMemcpyNode1D(&b, built, &a, 1, host, device, kBytes,
                                         infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddHostNode(&c, built, &a, 1, &c_params), infinirtSuccess);
  const infinirtGraphNode_t b_and_c[] = {b, c};
  ASSERT_EQ(infinirtGraphAddHostNode(&d, built, b_and_c, 2, &d_params), infinirtSuccess);

  const std::vector<infinirtGraphNode_t> ours = NodesOf(built);
  const std::vector<infinirtGraphNode_t> theirs = NodesOf(captured);
  ASSERT_EQ(ours.size(), theirs.size());
  EXPECT_EQ(EdgesOf(built), EdgesOf(captured));
  for (size_t i = 0; i < ours.size(); ++i) {
    const infinirtGraphNodeType type = TypeOf(ours[i]);
    ASSERT_EQ(type, TypeOf(theirs[i])) << "node " << i;
    if (type == infinirtGraphNodeTypeHost) {
      infinirtHostNodeParams x{};
      infinirtHostNodeParams y{};
      ASSERT_EQ(infinirtGraphHostNodeGetParams(ours[i], &x), infinirtSuccess);
      ASSERT_EQ(infinirtGraphHostNodeGetParams(theirs[i], &y), infinirtSuccess);
      EXPECT_EQ(x.fn, y.fn);
      EXPECT_EQ(x.userData, y.userData) << "node " << i;
    } else if (type == infinirtGraphNodeTypeMemcpy) {
      infinirtMemcpy3DParms x{};
      infinirtMemcpy3DParms y{};
      ASSERT_EQ(infinirtGraphMemcpyNodeGetParams(ours[i], &x), infinirtSuccess);
      ASSERT_EQ(infinirtGraphMemcpyNodeGetParams(theirs[i], &y), infinirtSuccess);
      EXPECT_EQ(x.dstPtr.ptr, y.dstPtr.ptr);
      EXPECT_EQ(x.srcPtr.ptr, y.srcPtr.ptr);
      EXPECT_EQ(x.extent.width, y.extent.width);
      EXPECT_EQ(x.kind, y.kind);
    } else if (type == infinirtGraphNodeTypeMemset) {
      infinirtMemsetParams x{};
      infinirtMemsetParams y{};
      ASSERT_EQ(infinirtGraphMemsetNodeGetParams(ours[i], &x), infinirtSuccess);
      ASSERT_EQ(infinirtGraphMemsetNodeGetParams(theirs[i], &y), infinirtSuccess);
      EXPECT_EQ(x.dst, y.dst);
      EXPECT_EQ(x.value, y.value);
      EXPECT_EQ(x.elementSize, y.elementSize);
      EXPECT_EQ(x.width, y.width);
      EXPECT_EQ(x.height, y.height);
    }
  }
  // And both run to the same result.
  for (infinirtGraph_t graph : {captured, built}) {
    std::memset(host, 0, kBytes);
    LAUNCH_AND_WAIT(Instantiate(graph));
    EXPECT_TRUE(AllBytesAre(host, kBytes, 0x33));
  }
  ASSERT_EQ(log.next.load(), 4);
  EXPECT_EQ(log.slots[1], 1);
  EXPECT_EQ(log.slots[3], 1);
}

TEST_F(Built, S53_LaunchingAnExecIntoACaptureAddsAChildGraphNode) {
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  infinirtGraphExec_t exec = CounterExec(&runs, 2);
  infinirtStream_t stream = NewCaptureStream();
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), infinirtSuccess);
  ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
  infinirtGraph_t captured = EndCapture(stream);
  const std::vector<infinirtGraphNode_t> nodes = NodesOf(captured);
  ASSERT_EQ(nodes.size(), 1u);
  EXPECT_EQ(TypeOf(nodes[0]), infinirtGraphNodeTypeGraph);
  LAUNCH_AND_WAIT(Instantiate(captured));
  EXPECT_EQ(runs.load(), 2);
}

// ---------------------------------------------------------------------------------------------
// S54: editing a graph.

TEST_F(Built, S54_EditsReachLaterInstantiationsOnly) {
  std::atomic<int>& first = Keep<std::atomic<int>>(0);
  std::atomic<int>& second = Keep<std::atomic<int>>(0);
  infinirtGraph_t graph = NewGraph();
  const infinirtHostNodeParams count_first{CountRun, &first};
  const infinirtHostNodeParams count_second{CountRun, &second};
  infinirtGraphNode_t node = nullptr;
  ASSERT_EQ(infinirtGraphAddHostNode(&node, graph, nullptr, 0, &count_first), infinirtSuccess);
  infinirtGraphExec_t before = Instantiate(graph);
  ASSERT_EQ(infinirtGraphHostNodeSetParams(node, &count_second), infinirtSuccess);
  infinirtHostNodeParams read{};
  ASSERT_EQ(infinirtGraphHostNodeGetParams(node, &read), infinirtSuccess);
  EXPECT_EQ(read.userData, &second);
  infinirtGraphExec_t after = Instantiate(graph);
  LAUNCH_AND_WAIT(before);
  LAUNCH_AND_WAIT(after);
  EXPECT_EQ(first.load(), 1);
  EXPECT_EQ(second.load(), 1);
}

TEST_F(Built, S54_DestroyingANodeRemovesItsEdges) {
  infinirtGraph_t graph = NewGraph();
  infinirtGraphNode_t a = nullptr;
  infinirtGraphNode_t b = nullptr;
  infinirtGraphNode_t c = nullptr;
  ASSERT_EQ(infinirtGraphAddEmptyNode(&a, graph, nullptr, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddEmptyNode(&b, graph, &a, 1), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddEmptyNode(&c, graph, &b, 1), infinirtSuccess);
  ASSERT_EQ(infinirtGraphDestroyNode(b), infinirtSuccess);
  EXPECT_EQ(NodesOf(graph), (std::vector<infinirtGraphNode_t>{a, c}));
  EXPECT_TRUE(EdgesOf(graph).empty());
  infinirtGraphNodeType type{};
  EXPECT_EQ(infinirtGraphNodeGetType(b, &type), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphDestroyNode(b), infinirtErrorInvalidValue);
  infinirtGetLastError();
}

TEST_F(Built, S54_EdgeEditsAreCheckedAndACycleIsRefused) {
  infinirtGraph_t graph = NewGraph();
  infinirtGraphNode_t a = nullptr;
  infinirtGraphNode_t b = nullptr;
  ASSERT_EQ(infinirtGraphAddEmptyNode(&a, graph, nullptr, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddEmptyNode(&b, graph, &a, 1), infinirtSuccess);
  EXPECT_EQ(infinirtGraphAddDependencies(graph, &a, &b, nullptr, 1), infinirtErrorInvalidValue)
      << "an edge that exists";
  EXPECT_EQ(infinirtGraphAddDependencies(graph, &a, &a, nullptr, 1), infinirtErrorInvalidValue)
      << "a node on itself";
  EXPECT_EQ(infinirtGraphRemoveDependencies(graph, &b, &a, nullptr, 1), infinirtErrorInvalidValue)
      << "an edge that does not exist";
  const infinirtGraphEdgeData programmatic{0, 0, infinirtGraphDependencyTypeProgrammatic, {}};
  EXPECT_EQ(infinirtGraphAddDependencies(graph, &b, &a, &programmatic, 1),
            infinirtErrorInvalidValue);
  EXPECT_EQ(EdgesOf(graph), (std::vector<std::pair<size_t, size_t>>{{0, 1}})) << "changed";

  ASSERT_EQ(infinirtGraphAddDependencies(graph, &b, &a, nullptr, 1), infinirtSuccess);
  infinirtGraphExec_t exec = nullptr;
  EXPECT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtErrorInvalidValue) << "a cycle";
  EXPECT_EQ(exec, nullptr);
  ASSERT_EQ(infinirtGraphRemoveDependencies(graph, &a, &b, nullptr, 1), infinirtSuccess);
  EXPECT_EQ(EdgesOf(graph), (std::vector<std::pair<size_t, size_t>>{{1, 0}}));
  Instantiate(graph);
  infinirtGetLastError();
}

TEST_F(Built, S54_CloneKeepsNodesAndIsIndependent) {
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  infinirtGraph_t graph = NewGraph();
  const infinirtHostNodeParams count{CountRun, &runs};
  infinirtGraphNode_t node = nullptr;
  ASSERT_EQ(infinirtGraphAddHostNode(&node, graph, nullptr, 0, &count), infinirtSuccess);
  infinirtGraph_t clone = nullptr;
  ASSERT_EQ(infinirtGraphClone(&clone, graph), infinirtSuccess);
  Own(clone);
  infinirtGraphNode_t in_clone = nullptr;
  ASSERT_EQ(infinirtGraphNodeFindInClone(&in_clone, node, clone), infinirtSuccess);
  EXPECT_NE(in_clone, node);
  EXPECT_EQ(TypeOf(in_clone), infinirtGraphNodeTypeHost);
  // Changing the original leaves the clone alone.
  ASSERT_EQ(infinirtGraphDestroyNode(node), infinirtSuccess);
  EXPECT_EQ(NodesOf(clone).size(), 1u);
  EXPECT_EQ(infinirtGraphNodeFindInClone(&in_clone, in_clone, graph), infinirtErrorInvalidValue)
      << "the original is not a clone of the clone";
  LAUNCH_AND_WAIT(Instantiate(clone));
  EXPECT_EQ(runs.load(), 1);
  infinirtGetLastError();
}

// ---------------------------------------------------------------------------------------------
// S55: event and memory nodes.

TEST_F(Built, S55_EventRecordNodeOrdersWorkOfAnotherStream) {
  unsigned char* device = NewDeviceMemory(64);
  unsigned char* host = NewPinnedMemory(64, 0);
  ASSERT_NE(device, nullptr);
  ASSERT_EQ(infinirtMemset(device, 0x77, 64), infinirtSuccess);
  infinirtEvent_t event = NewEvent();
  infinirtGraph_t graph = NewGraph();
  infinirtGraphNode_t record = nullptr;
  ASSERT_OK_OR_SKIP(infinirtGraphAddEventRecordNode(&record, graph, nullptr, 0, event));
  infinirtEvent_t read = nullptr;
  ASSERT_EQ(infinirtGraphEventRecordNodeGetEvent(record, &read), infinirtSuccess);
  EXPECT_EQ(read, event);
  EXPECT_EQ(TypeOf(record), infinirtGraphNodeTypeEventRecord);
  infinirtGraphExec_t exec = Instantiate(graph);

  infinirtStream_t held = NewStream();
  infinirtStream_t other = NewStream();
  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(held));
  ASSERT_EQ(infinirtGraphLaunch(exec, held), infinirtSuccess);
  ASSERT_EQ(infinirtStreamWaitEvent(other, event, 0), infinirtSuccess);
  ASSERT_EQ(infinirtMemcpyAsync(host, device, 64, infinirtMemcpyDeviceToHost, other),
            infinirtSuccess);
  EXPECT_TRUE(HoldsFor([&] { return host[0] == 0; }))
      << "work waiting for the node's event ran before the graph";
  gate.Open();
  ASSERT_EQ(infinirtStreamSynchronize(other), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(host, 64, 0x77));
}

TEST_F(Built, S55_EventWaitNodeWaitsForTheEvent) {
  unsigned char* device = NewDeviceMemory(64);
  unsigned char* host = NewPinnedMemory(64, 0);
  ASSERT_NE(device, nullptr);
  ASSERT_EQ(infinirtMemset(device, 0x42, 64), infinirtSuccess);
  infinirtEvent_t event = NewEvent();
  infinirtGraph_t graph = NewGraph();
  infinirtGraphNode_t wait = nullptr;
  infinirtGraphNode_t copy = nullptr;
  ASSERT_OK_OR_SKIP(infinirtGraphAddEventWaitNode(&wait, graph, nullptr, 0, event));
  ASSERT_EQ(infinirtGraphAddMemcpyNode1D(&copy, graph, &wait, 1, host, device, 64,
                                         infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  infinirtGraphExec_t exec = Instantiate(graph);
  infinirtStream_t held = NewStream();
  infinirtStream_t runner = NewStream();
  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(held));
  ASSERT_EQ(infinirtEventRecord(event, held), infinirtSuccess);
  ASSERT_EQ(infinirtGraphLaunch(exec, runner), infinirtSuccess);
  EXPECT_TRUE(HoldsFor([&] { return host[0] == 0; })) << "the graph did not wait for the event";
  gate.Open();
  ASSERT_EQ(infinirtStreamSynchronize(runner), infinirtSuccess);
  EXPECT_TRUE(AllBytesAre(host, 64, 0x42));
}

TEST_F(Built, S55_MemoryNodesAllocateUseAndFree) {
  constexpr size_t kBytes = 512;
  unsigned char* host = NewPinnedMemory(kBytes, 0);
  infinirtGraph_t graph = NewGraph();
  infinirtMemAllocNodeParams alloc = AllocParams(kBytes);
  infinirtGraphNode_t allocated = nullptr;
  ASSERT_OK_OR_SKIP(infinirtGraphAddMemAllocNode(&allocated, graph, nullptr, 0, &alloc));
  ASSERT_NE(alloc.dptr, nullptr);
  infinirtMemAllocNodeParams read{};
  ASSERT_EQ(infinirtGraphMemAllocNodeGetParams(allocated, &read), infinirtSuccess);
  EXPECT_EQ(read.dptr, alloc.dptr);
  EXPECT_EQ(read.bytesize, kBytes);
  EXPECT_EQ(read.poolProps.location.id, 0);

  const infinirtMemsetParams set = SetParams(alloc.dptr, 0x19, kBytes);
  infinirtGraphNode_t memset = nullptr;
  infinirtGraphNode_t copy = nullptr;
  infinirtGraphNode_t freed = nullptr;
  ASSERT_EQ(infinirtGraphAddMemsetNode(&memset, graph, &allocated, 1, &set), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddMemcpyNode1D(&copy, graph, &memset, 1, host, alloc.dptr, kBytes,
                                         infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddMemFreeNode(&freed, graph, &copy, 1, alloc.dptr), infinirtSuccess);
  void* freed_pointer = nullptr;
  ASSERT_EQ(infinirtGraphMemFreeNodeGetParams(freed, &freed_pointer), infinirtSuccess);
  EXPECT_EQ(freed_pointer, alloc.dptr);
  EXPECT_EQ(TypeOf(freed), infinirtGraphNodeTypeMemFree);
  infinirtGraphNode_t twice = nullptr;
  EXPECT_EQ(infinirtGraphAddMemFreeNode(&twice, graph, &freed, 1, alloc.dptr),
            infinirtErrorInvalidValue);

  infinirtGraphExec_t exec = Instantiate(graph);
  LAUNCH_AND_WAIT(exec);
  EXPECT_TRUE(AllBytesAre(host, kBytes, 0x19));
  std::memset(host, 0, kBytes);
  LAUNCH_AND_WAIT(exec);  // freed by its own free node: relaunching is allowed
  EXPECT_TRUE(AllBytesAre(host, kBytes, 0x19));
  infinirtGetLastError();
}

TEST_F(Built, S55_MemoryNodesRefuseWhatTheyCannotDo) {
  infinirtGraph_t graph = NewGraph();
  infinirtGraphNode_t node = nullptr;
  infinirtMemAllocNodeParams alloc = AllocParams(128);
  alloc.poolProps.allocType = infinirtMemAllocationTypeManaged;
  EXPECT_EQ(infinirtGraphAddMemAllocNode(&node, graph, nullptr, 0, &alloc),
            infinirtErrorInvalidValue);
  alloc = AllocParams(0);
  EXPECT_EQ(infinirtGraphAddMemAllocNode(&node, graph, nullptr, 0, &alloc),
            infinirtErrorInvalidValue);
  alloc = AllocParams(128);
  alloc.poolProps.location.id = device_count();  // no such device
  EXPECT_EQ(infinirtGraphAddMemAllocNode(&node, graph, nullptr, 0, &alloc),
            infinirtErrorInvalidValue);
  // Memory of infinirtMalloc is not the graph's to free.
  unsigned char* device = NewDeviceMemory(64);
  EXPECT_EQ(infinirtGraphAddMemFreeNode(&node, graph, nullptr, 0, device),
            infinirtErrorNotSupported);
  int on_stack = 0;
  EXPECT_EQ(infinirtGraphAddMemFreeNode(&node, graph, nullptr, 0, &on_stack),
            infinirtErrorInvalidValue);
  EXPECT_TRUE(NodesOf(graph).empty()) << "a refused node joined the graph";

  // More access descriptors than there are devices.
  std::vector<infinirtMemAccessDesc> access(
      device_count() + 1, infinirtMemAccessDesc{{infinirtMemLocationTypeDevice, 0},
                                                infinirtMemAccessFlagsProtReadWrite});
  alloc = AllocParams(128);
  alloc.accessDescs = access.data();
  alloc.accessDescCount = access.size();
  EXPECT_EQ(infinirtGraphAddMemAllocNode(&node, graph, nullptr, 0, &alloc),
            infinirtErrorInvalidValue);
  EXPECT_TRUE(NodesOf(graph).empty()) << "a refused node joined the graph";

  // A graph with memory nodes cannot be a child, be cloned, lose dependencies or have a second
  // exec: NotSupported, as NVIDIA's runtime answers.
  alloc = AllocParams(128);
  infinirtGraphNode_t allocation = nullptr;
  ASSERT_OK_OR_SKIP(infinirtGraphAddMemAllocNode(&allocation, graph, nullptr, 0, &alloc));
  infinirtGraphNode_t freeing = nullptr;
  ASSERT_EQ(infinirtGraphAddMemFreeNode(&freeing, graph, &allocation, 1, alloc.dptr),
            infinirtSuccess);
  infinirtGraph_t parent = NewGraph();
  EXPECT_EQ(infinirtGraphAddChildGraphNode(&node, parent, nullptr, 0, graph),
            infinirtErrorNotSupported);
  infinirtGraph_t clone = nullptr;
  EXPECT_EQ(infinirtGraphClone(&clone, graph), infinirtErrorNotSupported);
  EXPECT_EQ(clone, nullptr);
  EXPECT_EQ(infinirtGraphRemoveDependencies(graph, &allocation, &freeing, nullptr, 1),
            infinirtErrorNotSupported);
  infinirtGraphExec_t exec = Instantiate(graph);
  ASSERT_NE(exec, nullptr);
  infinirtGraphExec_t second = nullptr;
  EXPECT_EQ(infinirtGraphInstantiate(&second, graph, 0), infinirtErrorNotSupported);
  EXPECT_EQ(second, nullptr);
  infinirtGetLastError();
}

// ---------------------------------------------------------------------------------------------
// S56: changing an executable graph in place.

TEST_F(Built, S56_ExecUpdateTakesTheParametersOfAGraphOfTheSameShape) {
  std::atomic<int>& first = Keep<std::atomic<int>>(0);
  std::atomic<int>& second = Keep<std::atomic<int>>(0);
  unsigned char* device = NewDeviceMemory(64);
  unsigned char* host = NewPinnedMemory(64, 0);
  ASSERT_NE(device, nullptr);
  // Two graphs of the same shape: memset -> copy to host -> host function.
  auto build = [&](std::atomic<int>* counter, unsigned int value) {
    infinirtGraph_t graph = NewGraph();
    const infinirtMemsetParams set = SetParams(device, value, 64);
    const infinirtHostNodeParams count{CountRun, counter};
    infinirtGraphNode_t a = nullptr;
    infinirtGraphNode_t b = nullptr;
    infinirtGraphNode_t c = nullptr;
    EXPECT_EQ(infinirtGraphAddMemsetNode(&a, graph, nullptr, 0, &set), infinirtSuccess);
    EXPECT_EQ(infinirtGraphAddMemcpyNode1D(&b, graph, &a, 1, host, device, 64,
                                           infinirtMemcpyDeviceToHost),
              infinirtSuccess);
    EXPECT_EQ(infinirtGraphAddHostNode(&c, graph, &b, 1, &count), infinirtSuccess);
    return graph;
  };
  infinirtGraphExec_t exec = Instantiate(build(&first, 0x11));
  LAUNCH_AND_WAIT(exec);
  EXPECT_TRUE(AllBytesAre(host, 64, 0x11));

  infinirtGraphExecUpdateResultInfo info{};
  ASSERT_EQ(infinirtGraphExecUpdate(exec, build(&second, 0x22), &info), infinirtSuccess);
  EXPECT_EQ(info.result, infinirtGraphExecUpdateSuccess);
  LAUNCH_AND_WAIT(exec);
  EXPECT_TRUE(AllBytesAre(host, 64, 0x22));
  EXPECT_EQ(first.load(), 1);
  EXPECT_EQ(second.load(), 1);

  // Another shape is refused, with the reason, and the exec keeps what it had.
  infinirtGraph_t other = NewGraph();
  infinirtGraphNode_t lone = nullptr;
  ASSERT_EQ(infinirtGraphAddEmptyNode(&lone, other, nullptr, 0), infinirtSuccess);
  // Another number of nodes: NotSupported; a node of another type: TopologyChanged (NVIDIA's
  // runtime's results).
  EXPECT_EQ(infinirtGraphExecUpdate(exec, other, &info), infinirtErrorGraphExecUpdateFailure);
  EXPECT_EQ(info.result, infinirtGraphExecUpdateErrorNotSupported);
  infinirtGraph_t retyped = build(&first, 0x33);
  std::vector<infinirtGraphNode_t> nodes = NodesOf(retyped);
  ASSERT_EQ(nodes.size(), 3u);
  ASSERT_EQ(infinirtGraphDestroyNode(nodes[2]), infinirtSuccess);
  infinirtGraphNode_t empty = nullptr;
  ASSERT_EQ(infinirtGraphAddEmptyNode(&empty, retyped, &nodes[1], 1), infinirtSuccess);
  EXPECT_EQ(infinirtGraphExecUpdate(exec, retyped, &info), infinirtErrorGraphExecUpdateFailure);
  EXPECT_EQ(info.result, infinirtGraphExecUpdateErrorTopologyChanged);
  EXPECT_EQ(info.errorNode, empty);
  // A copy in the other direction: ParametersChanged.
  infinirtGraph_t reversed = NewGraph();
  {
    const infinirtMemsetParams set = SetParams(device, 0x44, 64);
    const infinirtHostNodeParams count{CountRun, &first};
    infinirtGraphNode_t a = nullptr, b = nullptr, c = nullptr;
    ASSERT_EQ(infinirtGraphAddMemsetNode(&a, reversed, nullptr, 0, &set), infinirtSuccess);
    ASSERT_EQ(infinirtGraphAddMemcpyNode1D(&b, reversed, &a, 1, device, host, 64,
                                           infinirtMemcpyHostToDevice),
              infinirtSuccess);
    ASSERT_EQ(infinirtGraphAddHostNode(&c, reversed, &b, 1, &count), infinirtSuccess);
    EXPECT_EQ(infinirtGraphExecUpdate(exec, reversed, &info), infinirtErrorGraphExecUpdateFailure);
    EXPECT_EQ(info.result, infinirtGraphExecUpdateErrorParametersChanged);
    EXPECT_EQ(info.errorNode, b);
  }
  LAUNCH_AND_WAIT(exec);
  EXPECT_TRUE(AllBytesAre(host, 64, 0x22));
  EXPECT_EQ(second.load(), 2);
  infinirtGetLastError();
}

TEST_F(Built, S56_ExecNodeParametersChangeTheExecNotTheGraph) {
  std::atomic<int>& first = Keep<std::atomic<int>>(0);
  std::atomic<int>& second = Keep<std::atomic<int>>(0);
  unsigned char* device = NewDeviceMemory(128);
  unsigned char* host = NewPinnedMemory(128, 0);
  ASSERT_NE(device, nullptr);
  infinirtGraph_t graph = NewGraph();
  const infinirtMemsetParams set = SetParams(device, 0x44, 64);
  const infinirtHostNodeParams count{CountRun, &first};
  infinirtGraphNode_t memset = nullptr;
  infinirtGraphNode_t copy = nullptr;
  infinirtGraphNode_t host_node = nullptr;
  ASSERT_EQ(infinirtGraphAddMemsetNode(&memset, graph, nullptr, 0, &set), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddMemcpyNode1D(&copy, graph, &memset, 1, host, device, 64,
                                         infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddHostNode(&host_node, graph, &copy, 1, &count), infinirtSuccess);
  infinirtGraphExec_t exec = Instantiate(graph);

  // Now: set the second half of the device memory, copy it to the second half of the host's.
  const infinirtMemsetParams moved = SetParams(device + 64, 0x55, 64);
  const infinirtHostNodeParams recount{CountRun, &second};
  ASSERT_EQ(infinirtGraphExecMemsetNodeSetParams(exec, memset, &moved), infinirtSuccess);
  ASSERT_EQ(infinirtGraphExecMemcpyNodeSetParams1D(exec, copy, host + 64, device + 64, 64,
                                                   infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  ASSERT_EQ(infinirtGraphExecHostNodeSetParams(exec, host_node, &recount), infinirtSuccess);
  LAUNCH_AND_WAIT(exec);
  EXPECT_TRUE(AllBytesAre(host, 64, 0));
  EXPECT_TRUE(AllBytesAre(host + 64, 64, 0x55));
  EXPECT_EQ(first.load(), 0);
  EXPECT_EQ(second.load(), 1);
  // The graph is unchanged.
  infinirtHostNodeParams read{};
  ASSERT_EQ(infinirtGraphHostNodeGetParams(host_node, &read), infinirtSuccess);
  EXPECT_EQ(read.userData, &first);

  // Another shape, another type, a node of another graph: refused.
  const infinirtMemsetParams wider = SetParams(device, 0x66, 128);
  EXPECT_EQ(infinirtGraphExecMemsetNodeSetParams(exec, memset, &wider), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphExecHostNodeSetParams(exec, copy, &recount), infinirtErrorInvalidValue);
  infinirtGraph_t other = NewGraph();
  infinirtGraphNode_t foreign = nullptr;
  ASSERT_EQ(infinirtGraphAddHostNode(&foreign, other, nullptr, 0, &count), infinirtSuccess);
  EXPECT_EQ(infinirtGraphExecHostNodeSetParams(exec, foreign, &recount), infinirtErrorInvalidValue);
  infinirtGetLastError();
}

TEST_F(Built, S56_UpdatedExecStillNeverRunsConcurrentlyWithItself) {
  auto& log = Keep<OrderLog>();
  auto& marks = Keep<std::array<Mark, 2>>();
  marks[0] = Mark{&log, 0};
  marks[1] = Mark{&log, 1};
  infinirtGraph_t graph = NewGraph();
  const infinirtHostNodeParams params = HostParams(&marks[0]);
  infinirtGraphNode_t node = nullptr;
  ASSERT_EQ(infinirtGraphAddHostNode(&node, graph, nullptr, 0, &params), infinirtSuccess);
  infinirtGraphExec_t exec = Instantiate(graph);
  infinirtStream_t held = NewStream();
  infinirtStream_t other = NewStream();
  infinirtEvent_t done = NewEvent();
  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(held));
  ASSERT_OK_OR_SKIP(infinirtGraphLaunch(exec, held));
  const infinirtHostNodeParams changed = HostParams(&marks[1]);
  ASSERT_EQ(infinirtGraphExecHostNodeSetParams(exec, node, &changed), infinirtSuccess);
  ASSERT_EQ(infinirtGraphLaunch(exec, other), infinirtSuccess);
  ASSERT_EQ(infinirtEventRecord(done, other), infinirtSuccess);
  EXPECT_TRUE(HoldsFor([&] { return log.next.load() == 0 && IsPending(done); }))
      << "the updated exec ran while its previous launch was held";
  gate.Open();
  ASSERT_EQ(infinirtEventSynchronize(done), infinirtSuccess);
  ASSERT_EQ(log.next.load(), 2);
  EXPECT_EQ(log.slots[0], 0);
  EXPECT_EQ(log.slots[1], 1);
}

TEST_F(Built, S56_UploadAndInstantiateWithParams) {
  std::atomic<int>& runs = Keep<std::atomic<int>>(0);
  infinirtGraph_t graph = NewGraph();
  const infinirtHostNodeParams count{CountRun, &runs};
  infinirtGraphNode_t node = nullptr;
  ASSERT_EQ(infinirtGraphAddHostNode(&node, graph, nullptr, 0, &count), infinirtSuccess);
  infinirtStream_t stream = NewStream();
  infinirtGraphInstantiateParams params{};
  params.flags = infinirtGraphInstantiateFlagUpload;
  params.uploadStream = stream;
  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiateWithParams(&exec, graph, &params), infinirtSuccess);
  Own(exec);
  EXPECT_EQ(params.result_out, infinirtGraphInstantiateSuccess);
  EXPECT_EQ(params.errNode_out, nullptr);
  ASSERT_EQ(infinirtGraphUpload(exec, stream), infinirtSuccess);
  LAUNCH_AND_WAIT(exec);
  EXPECT_EQ(runs.load(), 1);

  // A cycle: InvalidStructure.
  infinirtGraphNode_t next = nullptr;
  ASSERT_EQ(infinirtGraphAddEmptyNode(&next, graph, &node, 1), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddDependencies(graph, &next, &node, nullptr, 1), infinirtSuccess);
  params = infinirtGraphInstantiateParams{};
  infinirtGraphExec_t none = nullptr;
  EXPECT_EQ(infinirtGraphInstantiateWithParams(&none, graph, &params), infinirtErrorInvalidValue);
  EXPECT_EQ(params.result_out, infinirtGraphInstantiateInvalidStructure);
  EXPECT_EQ(infinirtGraphInstantiateWithParams(&none, graph, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphUpload(nullptr, stream), infinirtErrorInvalidValue);
  infinirtGetLastError();
}

// ---------------------------------------------------------------------------------------------
// S57: infinirtGraphDebugDotPrint.

std::string ReadFile(const std::string& path) {
  std::ifstream file(path);
  std::stringstream text;
  text << file.rdbuf();
  return text.str();
}

TEST_F(Built, S57_DotPrintWritesEveryNodeAndEdge) {
  infinirtGraph_t child = NewGraph();
  infinirtGraphNode_t inner = nullptr;
  ASSERT_EQ(infinirtGraphAddEmptyNode(&inner, child, nullptr, 0), infinirtSuccess);
  infinirtGraph_t graph = NewGraph();
  unsigned char* device = NewDeviceMemory(64);
  const infinirtMemsetParams set = SetParams(device, 0x7, 64);
  infinirtGraphNode_t a = nullptr;
  infinirtGraphNode_t b = nullptr;
  ASSERT_EQ(infinirtGraphAddMemsetNode(&a, graph, nullptr, 0, &set), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddChildGraphNode(&b, graph, &a, 1, child), infinirtSuccess);
  // One file per process: CTest runs the suite over several backends at once.
  const std::string path =
      ::testing::TempDir() + "infinirt_graph_dot_test_" + std::to_string(getpid()) + ".dot";
  ASSERT_EQ(infinirtGraphDebugDotPrint(graph, path.c_str(), infinirtGraphDebugDotFlagsVerbose),
            infinirtSuccess);
  const std::string dot = ReadFile(path);
  EXPECT_EQ(dot.rfind("digraph", 0), 0u) << dot;
  EXPECT_NE(dot.find("Memset"), std::string::npos) << dot;
  EXPECT_NE(dot.find("value 0x7"), std::string::npos) << dot;
  EXPECT_NE(dot.find("\"n0\" -> \"n1\""), std::string::npos) << dot;
  EXPECT_NE(dot.find("subgraph \"cluster_n1\""), std::string::npos) << dot;

  // Parsed by Graphviz where the test is given its `dot` (the graph_dot_parses test).
  if (const char* dot_program = std::getenv("INFINIRT_TEST_DOT")) {
    if (*dot_program == '\0') GTEST_SKIP() << "Graphviz's dot is not installed";
    const std::string command =
        std::string(dot_program) + " -Tcanon -o /dev/null '" + path + "' 2>&1";
    EXPECT_EQ(std::system(command.c_str()), 0) << "dot rejected:\n" << dot;
  }
  std::remove(path.c_str());

  EXPECT_EQ(infinirtGraphDebugDotPrint(graph, nullptr, 0), infinirtErrorInvalidValue);
  // Unknown flag bits are ignored, as NVIDIA's runtime ignores them.
  EXPECT_EQ(infinirtGraphDebugDotPrint(graph, path.c_str(), 1u << 20), infinirtSuccess);
  std::remove(path.c_str());
  EXPECT_EQ(infinirtGraphDebugDotPrint(graph, "/nonexistent-directory/graph.dot", 0),
            infinirtErrorOperatingSystem);
  EXPECT_EQ(infinirtGraphDebugDotPrint(nullptr, path.c_str(), 0), infinirtErrorInvalidValue);
  infinirtGetLastError();
}

// ---------------------------------------------------------------------------------------------
// S59: capturing into the program's graph, and changing what a capture continues after.

TEST_F(Built, S59_CaptureToGraphAppendsAfterTheNodesGiven) {
  auto& log = Keep<OrderLog>();
  auto& marks = Keep<std::array<Mark, 3>>();
  for (int i = 0; i < 3; ++i) marks[i] = Mark{&log, i};
  infinirtGraph_t graph = NewGraph();
  const infinirtHostNodeParams first = HostParams(&marks[0]);
  infinirtGraphNode_t a = nullptr;
  infinirtGraphNode_t unrelated = nullptr;
  ASSERT_EQ(infinirtGraphAddHostNode(&a, graph, nullptr, 0, &first), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddEmptyNode(&unrelated, graph, nullptr, 0), infinirtSuccess);
  infinirtStream_t stream = NewCaptureStream();
  ASSERT_EQ(infinirtStreamBeginCaptureToGraph(stream, graph, &a, nullptr, 1,
                                              infinirtStreamCaptureModeGlobal),
            infinirtSuccess);
  ASSERT_EQ(infinirtLaunchHostFunc(stream, AppendMark, &marks[1]), infinirtSuccess);
  ASSERT_EQ(infinirtLaunchHostFunc(stream, AppendMark, &marks[2]), infinirtSuccess);
  infinirtGraph_t ended = nullptr;
  ASSERT_EQ(infinirtStreamEndCapture(stream, &ended), infinirtSuccess);
  EXPECT_EQ(ended, graph) << "the capture ends in the program's graph";
  EXPECT_EQ(NodesOf(graph).size(), 4u);
  EXPECT_EQ(EdgesOf(graph), (std::vector<std::pair<size_t, size_t>>{{0, 2}, {2, 3}}));
  LAUNCH_AND_WAIT(Instantiate(graph));
  ASSERT_EQ(log.next.load(), 3);
  for (int i = 0; i < 3; ++i) EXPECT_EQ(log.slots[i], i);
}

TEST_F(Built, S59_UpdateCaptureDependenciesSetsWhatTheNextNodeFollows) {
  infinirtStream_t stream = NewCaptureStream();
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), infinirtSuccess);
  ASSERT_EQ(infinirtLaunchHostFunc(stream, CountRun, &Keep<std::atomic<int>>(0)), infinirtSuccess);
  infinirtStreamCaptureStatus status{};
  infinirtGraph_t graph = nullptr;
  const infinirtGraphNode_t* current = nullptr;
  size_t count = 0;
  ASSERT_EQ(
      infinirtStreamGetCaptureInfo(stream, &status, nullptr, &graph, &current, nullptr, &count),
      infinirtSuccess);
  ASSERT_EQ(count, 1u);
  const infinirtGraphNode_t captured = current[0];
  // A node added by hand beside the captured one; the next captured node follows both.
  infinirtGraphNode_t side = nullptr;
  ASSERT_EQ(infinirtGraphAddEmptyNode(&side, graph, nullptr, 0), infinirtSuccess);
  ASSERT_EQ(infinirtStreamUpdateCaptureDependencies(stream, &side, nullptr, 1,
                                                    infinirtStreamAddCaptureDependencies),
            infinirtSuccess);
  ASSERT_EQ(infinirtLaunchHostFunc(stream, CountRun, &Keep<std::atomic<int>>(0)), infinirtSuccess);
  // Then only the side node: the last node follows it alone.
  ASSERT_EQ(infinirtStreamUpdateCaptureDependencies(stream, &side, nullptr, 1,
                                                    infinirtStreamSetCaptureDependencies),
            infinirtSuccess);
  ASSERT_EQ(infinirtLaunchHostFunc(stream, CountRun, &Keep<std::atomic<int>>(0)), infinirtSuccess);
  infinirtGraphNode_t bogus = captured;
  EXPECT_EQ(infinirtStreamUpdateCaptureDependencies(stream, &bogus, nullptr, 1, 7),
            infinirtErrorInvalidValue);
  infinirtGraph_t ended = EndCapture(stream);
  ASSERT_EQ(ended, graph);
  // Nodes: 0 captured, 1 side, 2 after both, 3 after side alone.
  EXPECT_EQ(EdgesOf(graph), (std::vector<std::pair<size_t, size_t>>{{0, 2}, {1, 2}, {1, 3}}));
  infinirtGetLastError();
}

TEST_F(Built, S59_BadCaptureToGraphCallsAreRefused) {
  infinirtGraph_t graph = NewGraph();
  infinirtGraph_t other = NewGraph();
  infinirtGraphNode_t foreign = nullptr;
  ASSERT_EQ(infinirtGraphAddEmptyNode(&foreign, other, nullptr, 0), infinirtSuccess);
  infinirtStream_t stream = NewCaptureStream();
  EXPECT_EQ(infinirtStreamBeginCaptureToGraph(stream, graph, &foreign, nullptr, 1,
                                              infinirtStreamCaptureModeGlobal),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtStreamBeginCaptureToGraph(stream, nullptr, nullptr, nullptr, 0,
                                              infinirtStreamCaptureModeGlobal),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtStreamBeginCaptureToGraph(stream, graph, nullptr, nullptr, 0,
                                              static_cast<infinirtStreamCaptureMode>(9)),
            infinirtErrorInvalidValue);
  infinirtGraphNode_t none = nullptr;
  EXPECT_EQ(infinirtStreamUpdateCaptureDependencies(stream, &none, nullptr, 0,
                                                    infinirtStreamAddCaptureDependencies),
            infinirtErrorIllegalState)
      << "not capturing";
  EXPECT_EQ(StatusOf(stream), infinirtStreamCaptureStatusNone) << "a refused begin began";

  // A capture into the program's graph that fails leaves the graph to the program.
  ASSERT_EQ(infinirtStreamBeginCaptureToGraph(stream, graph, nullptr, nullptr, 0,
                                              infinirtStreamCaptureModeGlobal),
            infinirtSuccess);
  EXPECT_EQ(infinirtStreamUpdateCaptureDependencies(stream, &foreign, nullptr, 1,
                                                    infinirtStreamAddCaptureDependencies),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtErrorStreamCaptureUnsupported);
  infinirtGraph_t ended = nullptr;
  EXPECT_EQ(infinirtStreamEndCapture(stream, &ended), infinirtErrorStreamCaptureInvalidated);
  EXPECT_EQ(ended, nullptr);
  size_t count = 0;
  EXPECT_EQ(infinirtGraphGetNodes(graph, nullptr, &count), infinirtSuccess)
      << "the program's graph was destroyed with the failed capture";
  infinirtGetLastError();
}

// ---------------------------------------------------------------------------------------------
// S58: user objects.

void CountDestruction(void* counter) { static_cast<std::atomic<int>*>(counter)->fetch_add(1); }

// A destruction counter that outlives the runtime: an object that a failed or skipped test
// leaves behind is destroyed when the process exits, and counts then.
std::atomic<int>& NewCounter() {
  static std::deque<std::atomic<int>> counters;
  return counters.emplace_back(0);
}

infinirtUserObject_t NewUserObject(std::atomic<int>* destroyed, unsigned int references) {
  infinirtUserObject_t object = nullptr;
  EXPECT_EQ(infinirtUserObjectCreate(&object, destroyed, CountDestruction, references,
                                     infinirtUserObjectNoDestructorSync),
            infinirtSuccess);
  return object;
}

bool Becomes(const std::atomic<int>& value, int expected) {
  const auto end = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (value.load() != expected && std::chrono::steady_clock::now() < end) {
    std::this_thread::sleep_for(std::chrono::milliseconds(1));
  }
  return value.load() == expected;
}

TEST_F(Built, S58_DestructorRunsWhenTheLastReferenceGoes) {
  std::atomic<int>& destroyed = NewCounter();
  infinirtUserObject_t object = NewUserObject(&destroyed, 2);
  ASSERT_EQ(infinirtUserObjectRetain(object, 3), infinirtSuccess);
  ASSERT_EQ(infinirtUserObjectRelease(object, 4), infinirtSuccess);
  EXPECT_EQ(destroyed.load(), 0);
  ASSERT_EQ(infinirtUserObjectRelease(object), infinirtSuccess);
  EXPECT_TRUE(Becomes(destroyed, 1));
  EXPECT_EQ(infinirtUserObjectRetain(object), infinirtErrorInvalidValue) << "a released object";
  infinirtGetLastError();
}

TEST_F(Built, S58_GraphsAndTheirClonesHoldReferences) {
  std::atomic<int>& destroyed = NewCounter();
  infinirtUserObject_t object = NewUserObject(&destroyed, 1);
  infinirtGraph_t graph = nullptr;
  ASSERT_EQ(infinirtGraphCreate(&graph, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGraphRetainUserObject(graph, object, 2, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGraphReleaseUserObject(graph, object, 1), infinirtSuccess);
  ASSERT_EQ(infinirtUserObjectRelease(object), infinirtSuccess);  // the program's
  infinirtGraph_t clone = nullptr;
  ASSERT_EQ(infinirtGraphClone(&clone, graph), infinirtSuccess);
  ASSERT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  EXPECT_EQ(destroyed.load(), 0) << "the clone holds a reference";
  ASSERT_EQ(infinirtGraphDestroy(clone), infinirtSuccess);
  EXPECT_TRUE(Becomes(destroyed, 1));

  // Moved: the program's reference becomes the graph's.
  std::atomic<int>& moved = NewCounter();
  infinirtUserObject_t other = NewUserObject(&moved, 1);
  ASSERT_EQ(infinirtGraphCreate(&graph, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGraphRetainUserObject(graph, other, 1, infinirtGraphUserObjectMove),
            infinirtSuccess);
  EXPECT_EQ(moved.load(), 0);
  ASSERT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  EXPECT_TRUE(Becomes(moved, 1));
}

TEST_F(Built, S58_AnExecReleasesItsReferencesAfterItsLaunches) {
  infinirtStream_t stream = NewStream();
  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  std::atomic<int>& destroyed = NewCounter();
  std::atomic<int>& runs = NewCounter();
  infinirtUserObject_t object = NewUserObject(&destroyed, 1);
  infinirtGraph_t graph = nullptr;
  ASSERT_EQ(infinirtGraphCreate(&graph, 0), infinirtSuccess);
  const infinirtHostNodeParams count{CountRun, &runs};
  infinirtGraphNode_t node = nullptr;
  ASSERT_EQ(infinirtGraphAddHostNode(&node, graph, nullptr, 0, &count), infinirtSuccess);
  ASSERT_EQ(infinirtGraphRetainUserObject(graph, object, 1, infinirtGraphUserObjectMove),
            infinirtSuccess);
  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  EXPECT_EQ(destroyed.load(), 0) << "the exec holds a reference";

  const infinirtError_t launched = infinirtGraphLaunch(exec, stream);
  ASSERT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
  ASSERT_OK_OR_SKIP(launched);
  EXPECT_TRUE(HoldsFor([&] { return destroyed.load() == 0; }))
      << "released while the exec's launch was pending";
  gate.Open();
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_TRUE(Becomes(destroyed, 1));
  EXPECT_EQ(runs.load(), 1);
}

TEST_F(Built, S58_BadUserObjectCallsAreRefused) {
  std::atomic<int>& destroyed = NewCounter();
  infinirtUserObject_t object = nullptr;
  EXPECT_EQ(infinirtUserObjectCreate(nullptr, &destroyed, CountDestruction, 1,
                                     infinirtUserObjectNoDestructorSync),
            infinirtErrorInvalidValue);
  EXPECT_EQ(
      infinirtUserObjectCreate(&object, &destroyed, nullptr, 1, infinirtUserObjectNoDestructorSync),
      infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtUserObjectCreate(&object, &destroyed, CountDestruction, 0,
                                     infinirtUserObjectNoDestructorSync),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtUserObjectCreate(&object, &destroyed, CountDestruction, 1, 0),
            infinirtErrorInvalidValue);
  object = NewUserObject(&destroyed, 1);
  const auto garbage = reinterpret_cast<infinirtUserObject_t>(static_cast<uintptr_t>(0x99));
  EXPECT_EQ(infinirtUserObjectRetain(object, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtUserObjectRetain(garbage), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtUserObjectRetain(nullptr), infinirtErrorInvalidValue);
  infinirtGraph_t graph = NewGraph();
  EXPECT_EQ(infinirtGraphRetainUserObject(graph, object, 1, 2), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphRetainUserObject(graph, garbage, 1, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphRetainUserObject(nullptr, object, 1, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(destroyed.load(), 0) << "a refused call released a reference";
  ASSERT_EQ(infinirtUserObjectRelease(object), infinirtSuccess);
  EXPECT_TRUE(Becomes(destroyed, 1));
  infinirtGetLastError();
}

// Releasing more references than held answers Success, as NVIDIA's runtime does: the program's
// release drops the references the program holds (not a graph's), a graph's drops what the graph
// holds.
TEST_F(Built, S58_ReleasingMoreReferencesThanHeldSucceeds) {
  std::atomic<int>& destroyed = NewCounter();
  infinirtUserObject_t object = NewUserObject(&destroyed, 1);
  infinirtGraph_t graph = NewGraph();
  EXPECT_EQ(infinirtGraphReleaseUserObject(graph, object, 1), infinirtSuccess)
      << "the graph holds none";
  ASSERT_EQ(infinirtGraphRetainUserObject(graph, object, 1, 0), infinirtSuccess);
  EXPECT_EQ(infinirtUserObjectRelease(object, 3), infinirtSuccess) << "more than held";
  EXPECT_TRUE(HoldsFor([&] { return destroyed.load() == 0; }))
      << "the graph's reference went with the program's";
  EXPECT_EQ(infinirtGraphReleaseUserObject(graph, object, 5), infinirtSuccess);
  EXPECT_TRUE(Becomes(destroyed, 1));
  EXPECT_EQ(infinirtGetLastError(), infinirtSuccess);
}

// ---------------------------------------------------------------------------------------------
// Bad input: an error, no crash, nothing changed.

TEST_F(Built, GraphNodes_BadInputIsRefusedAndChangesNothing) {
  infinirtGraph_t graph = NewGraph();
  infinirtGraph_t other = NewGraph();
  infinirtGraphNode_t node = nullptr;
  infinirtGraphNode_t foreign = nullptr;
  ASSERT_EQ(infinirtGraphAddEmptyNode(&node, graph, nullptr, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGraphAddEmptyNode(&foreign, other, nullptr, 0), infinirtSuccess);
  const auto garbage = reinterpret_cast<infinirtGraphNode_t>(static_cast<uintptr_t>(0x1234));
  infinirtGraphNode_t made = nullptr;

  EXPECT_EQ(infinirtGraphCreate(nullptr, 0), infinirtErrorInvalidValue);
  infinirtGraph_t flagged = nullptr;
  EXPECT_EQ(infinirtGraphCreate(&flagged, 1), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddEmptyNode(nullptr, graph, nullptr, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddEmptyNode(&made, nullptr, nullptr, 0), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddEmptyNode(&made, graph, nullptr, 1), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddEmptyNode(&made, graph, &foreign, 1), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddEmptyNode(&made, graph, &garbage, 1), infinirtErrorInvalidValue);
  const infinirtGraphNode_t twice[] = {node, node};
  EXPECT_EQ(infinirtGraphAddEmptyNode(&made, graph, twice, 2), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddHostNode(&made, graph, nullptr, 0, nullptr), infinirtErrorInvalidValue);
  const infinirtHostNodeParams no_function{nullptr, nullptr};
  EXPECT_EQ(infinirtGraphAddHostNode(&made, graph, nullptr, 0, &no_function),
            infinirtErrorInvalidValue);
  unsigned char* device = NewDeviceMemory(64);
  EXPECT_EQ(infinirtGraphAddMemcpyNode1D(&made, graph, nullptr, 0, device, nullptr, 64,
                                         infinirtMemcpyDeviceToDevice),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddMemcpyNode1D(&made, graph, nullptr, 0, device, device + 32, 64,
                                         infinirtMemcpyDeviceToDevice),
            infinirtErrorInvalidValue)
      << "a source running past its allocation";
  EXPECT_EQ(infinirtGraphAddMemcpyNode1D(&made, graph, nullptr, 0, device, device, 8,
                                         static_cast<infinirtMemcpyKind>(9)),
            infinirtErrorInvalidMemcpyDirection);
  infinirtMemsetParams set = SetParams(device, 0, 64);
  set.elementSize = 3;
  EXPECT_EQ(infinirtGraphAddMemsetNode(&made, graph, nullptr, 0, &set), infinirtErrorInvalidValue);
  set = SetParams(device, 0, 32);
  set.height = 2;
  set.pitch = 16;  // narrower than a row
  EXPECT_EQ(infinirtGraphAddMemsetNode(&made, graph, nullptr, 0, &set), infinirtErrorInvalidValue);
  set.pitch = 64;  // the second row leaves the allocation
  EXPECT_EQ(infinirtGraphAddMemsetNode(&made, graph, nullptr, 0, &set), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddEventRecordNode(&made, graph, nullptr, 0, nullptr),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddMemAllocNode(&made, graph, nullptr, 0, nullptr),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddMemFreeNode(&made, graph, nullptr, 0, nullptr),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddDependencies(graph, &node, &foreign, nullptr, 1),
            infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddDependencies(graph, nullptr, &node, nullptr, 1),
            infinirtErrorInvalidValue);
  EXPECT_EQ(NodesOf(graph), (std::vector<infinirtGraphNode_t>{node})) << "a node was added";

  size_t count = 0;
  EXPECT_EQ(infinirtGraphGetNodes(graph, nullptr, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphGetRootNodes(nullptr, nullptr, &count), infinirtErrorInvalidValue);
  infinirtGraphNode_t from = nullptr;
  EXPECT_EQ(infinirtGraphGetEdges(graph, &from, nullptr, nullptr, &count),
            infinirtErrorInvalidValue);
  infinirtGraphNodeType type{};
  EXPECT_EQ(infinirtGraphNodeGetType(node, nullptr), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphNodeGetType(garbage, &type), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphNodeGetType(nullptr, &type), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphNodeGetDependencies(node, nullptr, nullptr, nullptr),
            infinirtErrorInvalidValue);
  infinirtHostNodeParams host{};
  EXPECT_EQ(infinirtGraphHostNodeGetParams(node, &host), infinirtErrorInvalidValue)
      << "an empty node has no host parameters";
  infinirtMemsetParams read{};
  EXPECT_EQ(infinirtGraphMemsetNodeGetParams(node, &read), infinirtErrorInvalidValue);
  EXPECT_EQ(
      infinirtGraphMemcpyNodeSetParams1D(node, device, device, 1, infinirtMemcpyDeviceToDevice),
      infinirtErrorInvalidValue);
  infinirtEvent_t event = nullptr;
  EXPECT_EQ(infinirtGraphEventWaitNodeGetEvent(node, &event), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphClone(nullptr, graph), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphNodeFindInClone(&made, node, other), infinirtErrorInvalidValue);

  // A destroyed graph's nodes are gone with it.
  infinirtGraph_t doomed = nullptr;
  ASSERT_EQ(infinirtGraphCreate(&doomed, 0), infinirtSuccess);
  infinirtGraphNode_t orphan = nullptr;
  ASSERT_EQ(infinirtGraphAddEmptyNode(&orphan, doomed, nullptr, 0), infinirtSuccess);
  ASSERT_EQ(infinirtGraphDestroy(doomed), infinirtSuccess);
  EXPECT_EQ(infinirtGraphNodeGetType(orphan, &type), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphDestroyNode(orphan), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGraphAddEmptyNode(&made, doomed, nullptr, 0),
            infinirtErrorInvalidResourceHandle);
  infinirtGetLastError();
}

TEST_F(Built, GraphNodes_DestroyedEventFailsTheLaunchNotThePlugin) {
  infinirtEvent_t event = nullptr;
  ASSERT_EQ(infinirtEventCreate(&event), infinirtSuccess);
  infinirtGraph_t graph = NewGraph();
  infinirtGraphNode_t wait = nullptr;
  ASSERT_OK_OR_SKIP(infinirtGraphAddEventWaitNode(&wait, graph, nullptr, 0, event));
  infinirtGraphExec_t exec = Instantiate(graph);
  ASSERT_EQ(infinirtEventDestroy(event), infinirtSuccess);
  infinirtStream_t stream = NewStream();
  EXPECT_EQ(infinirtGraphLaunch(exec, stream), infinirtErrorInvalidResourceHandle);
  infinirtGraphExec_t again = nullptr;
  EXPECT_EQ(infinirtGraphInstantiate(&again, graph, 0), infinirtErrorInvalidResourceHandle);
  infinirtGetLastError();
}

}  // namespace
}  // namespace infinirt::conformance
