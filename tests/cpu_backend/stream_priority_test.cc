// Stream priorities on the CPU backend: with one worker thread, ready streams of a higher
// priority are run first, whatever order they became ready in.
#include <gtest/gtest.h>

#include <vector>

#include "infinirt.h"
#include "test_support.h"

namespace infinirt::testing {
namespace {

struct Mark {
  OrderLog* log;
  int value;
};
void AppendMark(void* mark) {
  auto* m = static_cast<Mark*>(mark);
  m->log->Append(m->value);
}

infinirtStream_t WithPriority(int priority) {
  infinirtStream_t stream = nullptr;
  EXPECT_OK(infinirtStreamCreateWithPriority(&stream, infinirtStreamNonBlocking, priority));
  return stream;
}

TEST(StreamPriorityTest, TheRangeIsZeroToMinusFive) {
  int least = 99, greatest = 99;
  ASSERT_OK(infinirtDeviceGetStreamPriorityRange(&least, &greatest));
  EXPECT_EQ(least, 0);
  EXPECT_EQ(greatest, -5);
}

// The only worker is held by a gate while one stream of each priority gets work, the least
// urgent first; once the gate opens the worker takes them most urgent first.
TEST(StreamPriorityTest, TheWorkerTakesReadyStreamsOfHigherPriorityFirst) {
  infinirtStream_t holder = WithPriority(0);
  Gate gate;
  ASSERT_OK(gate.Block(holder));
  ASSERT_TRUE(gate.WaitEntered());  // the worker is busy from now on
  OrderLog log;
  std::vector<Mark> marks;
  const std::vector<int> priorities = {0, -2, -5, -1, -4, -3};
  marks.reserve(priorities.size());
  std::vector<infinirtStream_t> streams;
  for (int priority : priorities) {
    streams.push_back(WithPriority(priority));
    marks.push_back(Mark{&log, priority});
    ASSERT_OK(infinirtLaunchHostFunc(streams.back(), AppendMark, &marks.back()));
  }
  gate.Open();
  ASSERT_OK(infinirtDeviceSynchronize());
  ASSERT_EQ(log.next.load(), 6);
  EXPECT_EQ(std::vector<int>(log.slots, log.slots + 6), (std::vector<int>{-5, -4, -3, -2, -1, 0}));
  for (infinirtStream_t stream : streams) EXPECT_OK(infinirtStreamDestroy(stream));
  EXPECT_OK(infinirtStreamDestroy(holder));
  EXPECT_FALSE(gate.timed_out());
}

// A priority given later (infinirtStreamSetAttribute) orders the stream as one given at
// creation: streams all created with the least priority, then given others.
TEST(StreamPriorityTest, APriorityAttributeSetLaterOrdersTheStream) {
  infinirtStream_t holder = WithPriority(0);
  Gate gate;
  ASSERT_OK(gate.Block(holder));
  ASSERT_TRUE(gate.WaitEntered());
  OrderLog log;
  std::vector<Mark> marks;
  const std::vector<int> priorities = {-1, 0, -5, -3};
  marks.reserve(priorities.size());
  std::vector<infinirtStream_t> streams;
  for (int priority : priorities) {
    streams.push_back(WithPriority(0));
    infinirtStreamAttrValue value{};
    value.priority = priority;
    ASSERT_OK(infinirtStreamSetAttribute(streams.back(), infinirtStreamAttributePriority, &value));
    marks.push_back(Mark{&log, priority});
    ASSERT_OK(infinirtLaunchHostFunc(streams.back(), AppendMark, &marks.back()));
  }
  gate.Open();
  ASSERT_OK(infinirtDeviceSynchronize());
  ASSERT_EQ(log.next.load(), 4);
  EXPECT_EQ(std::vector<int>(log.slots, log.slots + 4), (std::vector<int>{-5, -3, -1, 0}));
  for (infinirtStream_t stream : streams) EXPECT_OK(infinirtStreamDestroy(stream));
  EXPECT_OK(infinirtStreamDestroy(holder));
  EXPECT_FALSE(gate.timed_out());
}

}  // namespace
}  // namespace infinirt::testing
