// Graph recording: operators captured on the runtime's stream, replayed as a graph, with the
// memory they allocated while recording kept for the graph (pin mode).
#include <gtest/gtest.h>

#include <algorithm>
#include <cstring>
#include <set>
#include <stdexcept>
#include <thread>
#include <vector>

#include "error_of.h"
#include "infinirt/runtime.hpp"

namespace infinirt {
namespace {

using testing::ErrorOf;

constexpr size_t kSize = 64 << 10;

// Copies `source` (pinned host memory or device memory) to `target` through a scratch block it
// allocates while it runs and releases before it returns: during a recording, the block belongs
// to the graph.
class CopyThroughScratch : public GraphOperator {
 public:
  CopyThroughScratch(Runtime* runtime, Memory* source, Memory* target)
      : runtime_(runtime), source_(source), target_(target) {}
  void run(infinirtStream_t stream) override {
    std::shared_ptr<Memory> scratch = runtime_->allocateMemory(kSize);
    scratch_addresses.insert(scratch->data());
    INFINIRT_CHECK(infinirtMemcpyAsync(
        scratch->data(), source_->data(), kSize,
        source_->is_pinned() ? infinirtMemcpyHostToDevice : infinirtMemcpyDeviceToDevice, stream));
    INFINIRT_CHECK(infinirtMemcpyAsync(target_->data(), scratch->data(), kSize,
                                       infinirtMemcpyDeviceToDevice, stream));
  }
  std::set<std::byte*> scratch_addresses;

 private:
  Runtime* runtime_;
  Memory* source_;
  Memory* target_;
};

class Throws : public GraphOperator {
 public:
  void run(infinirtStream_t) override { throw std::runtime_error("an operator failed"); }
};

class GraphRecordingTest : public ::testing::Test {
 protected:
  Runtime* runtime = context::getRuntime();
};

TEST_F(GraphRecordingTest, ARecordedGraphReplaysAHundredTimesOnMemoryKeptForIt) {
  std::shared_ptr<Memory> source = runtime->allocatePinnedHostMemory(kSize);
  std::shared_ptr<Memory> middle = runtime->allocateMemory(kSize);
  std::shared_ptr<Memory> target = runtime->allocateMemory(kSize);
  auto first = std::make_shared<CopyThroughScratch>(runtime, source.get(), middle.get());
  auto second = std::make_shared<CopyThroughScratch>(runtime, middle.get(), target.get());

  EXPECT_FALSE(runtime->isGraphRecording());
  runtime->startGraphRecording();
  EXPECT_TRUE(runtime->isGraphRecording());
  runtime->addGraphOperator(first);
  runtime->addGraphOperator(second);
  std::shared_ptr<Graph> graph = runtime->stopGraphRecording();
  EXPECT_FALSE(runtime->isGraphRecording());
  EXPECT_EQ(graph->operatorCount(), 2u);
  std::set<std::byte*> kept = first->scratch_addresses;
  kept.insert(second->scratch_addresses.begin(), second->scratch_addresses.end());
  ASSERT_EQ(kept.size(), 2u) << "the second operator reused the first one's scratch block";

  auto given_out = [&](std::byte* address) { return kept.count(address) != 0; };
  std::vector<unsigned char> back(kSize);
  for (int replay = 0; replay < 100; ++replay) {
    std::memset(source->data(), replay, kSize);
    graph->execute();
    // Meanwhile, allocations of the same size, on this stream and on another thread's.
    std::shared_ptr<Memory> here = runtime->allocateMemory(kSize);
    EXPECT_FALSE(given_out(here->data())) << "replay " << replay;
    if (replay % 25 == 0) {
      std::thread([&] {
        auto there = context::getRuntime()->allocateMemory(kSize);
        EXPECT_FALSE(given_out(there->data())) << "replay " << replay;
      }).join();
    }
    runtime->memcpyD2H(back.data(), target->data(), kSize);  // waits for the replay
    ASSERT_EQ(back, std::vector<unsigned char>(kSize, static_cast<unsigned char>(replay)))
        << "replay " << replay;
  }

  graph.reset();  // the kept blocks return to the cache, and serve this stream again
  std::vector<std::shared_ptr<Memory>> after;
  bool reused = false;
  for (int i = 0; i < 4 && !reused; ++i) {
    after.push_back(runtime->allocateMemory(kSize));
    reused = given_out(after.back()->data());
  }
  EXPECT_TRUE(reused) << "the graph's blocks were not released with it";
}

TEST_F(GraphRecordingTest, MisuseIsAnErrorWithTheRightCode) {
  auto op = std::make_shared<Throws>();
  EXPECT_EQ(ErrorOf([&] { runtime->addGraphOperator(op); }), infinirtErrorIllegalState);
  EXPECT_EQ(ErrorOf([&] { runtime->stopGraphRecording(); }), infinirtErrorIllegalState);
  runtime->startGraphRecording();
  EXPECT_EQ(ErrorOf([&] { runtime->startGraphRecording(); }), infinirtErrorIllegalState);
  EXPECT_EQ(ErrorOf([&] { runtime->addGraphOperator(nullptr); }), infinirtErrorInvalidValue);
  EXPECT_THROW(runtime->addGraphOperator(op), std::runtime_error);  // the operator's own
  EXPECT_TRUE(runtime->isGraphRecording());
  std::shared_ptr<Graph> graph = runtime->stopGraphRecording();
  EXPECT_EQ(graph->operatorCount(), 0u);
  graph->execute();  // an empty graph
  runtime->syncStream();
  graph->destroy();
  graph->destroy();  // once is enough; twice is harmless
  EXPECT_EQ(ErrorOf([&] { graph->execute(); }), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGetLastError(), infinirtSuccess);
}

TEST_F(GraphRecordingTest, OtherThreadsRuntimesWorkWhileOneRecords) {
  std::shared_ptr<Memory> source = runtime->allocatePinnedHostMemory(kSize);
  std::shared_ptr<Memory> target = runtime->allocateMemory(kSize);
  runtime->startGraphRecording();
  runtime->addGraphOperator(
      std::make_shared<CopyThroughScratch>(runtime, source.get(), target.get()));
  std::thread([] {
    Runtime* theirs = context::getRuntime();
    auto memory = theirs->allocateMemory(4096);
    std::vector<unsigned char> bytes(4096, 9), back(4096);
    theirs->memcpyH2D(memory->data(), bytes.data(), bytes.size());
    theirs->memcpyD2H(back.data(), memory->data(), back.size());
    EXPECT_EQ(back, bytes);
  }).join();
  std::shared_ptr<Graph> graph = runtime->stopGraphRecording();
  std::memset(source->data(), 42, kSize);
  graph->execute();
  std::vector<unsigned char> back(kSize);
  runtime->memcpyD2H(back.data(), target->data(), kSize);
  EXPECT_EQ(back, std::vector<unsigned char>(kSize, 42));
}

TEST(GraphExecTest, InstantiatesLaunchesAndReleasesACapturedGraph) {
  Stream stream;
  std::vector<unsigned char> from(256, 5), to(256, 0);
  ASSERT_EQ(infinirtStreamBeginCapture(stream.get(), infinirtStreamCaptureModeThreadLocal),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemcpyAsync(to.data(), from.data(), from.size(), infinirtMemcpyHostToHost,
                                stream.get()),
            infinirtSuccess);
  infinirtGraph_t graph = nullptr;
  ASSERT_EQ(infinirtStreamEndCapture(stream.get(), &graph), infinirtSuccess);
  bool launched = true;
  {
    GraphExec exec(graph);
    launched = ErrorOf([&] { exec.launch(stream.get()); }) != infinirtErrorNotSupported;
    if (launched) {
      stream.synchronize();
      EXPECT_EQ(to, from);
    }
    GraphExec moved(std::move(exec));
    EXPECT_EQ(exec.get(), nullptr);  // NOLINT(bugprone-use-after-move): moved-from is empty
  }
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  if (!launched) GTEST_SKIP() << "this backend cannot launch a graph of a host-to-host copy";
  EXPECT_EQ(ErrorOf([&] { GraphExec bad(nullptr); }), infinirtErrorInvalidValue);
  infinirtGetLastError();
}

}  // namespace
}  // namespace infinirt
