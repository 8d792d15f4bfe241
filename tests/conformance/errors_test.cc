// S17, S18, S20: the per-thread last-error variable.
#include "conformance.h"

namespace infinirt::conformance {
namespace {

// S18: the reference sequence, exactly.
TEST_F(Conformance, S18_PeekKeepsAndGetLastErrorResetsTheLastError) {
  EXPECT_EQ(infinirtMalloc(nullptr, 1), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtSuccess);
  EXPECT_EQ(infinirtGetLastError(), infinirtSuccess);
}

// S17: successful calls leave the last error alone; every failure overwrites it.
TEST_F(Conformance, S17_SuccessfulCallsDoNotClearTheLastError) {
  ASSERT_EQ(infinirtMalloc(nullptr, 1), infinirtErrorInvalidValue);
  int count = 0;
  EXPECT_EQ(infinirtGetDeviceCount(&count), infinirtSuccess);
  void* memory = nullptr;
  EXPECT_EQ(infinirtMalloc(&memory, 64), infinirtSuccess);
  EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
  EXPECT_EQ(infinirtStreamSynchronize(nullptr), infinirtSuccess);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtErrorInvalidValue);

  // A later failure overwrites it.
  EXPECT_EQ(infinirtStreamDestroy(nullptr), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtSuccess);
}

// S17: one variable per host thread, starting at Success.
TEST_F(Conformance, S17_LastErrorIsPerThread) {
  ASSERT_EQ(infinirtMalloc(nullptr, 1), infinirtErrorInvalidValue);

  infinirtError_t other_initial = infinirtErrorUnknown;
  infinirtError_t other_after_failure = infinirtErrorUnknown;
  infinirtError_t other_after_get = infinirtErrorUnknown;
  ScopedThread other([&] {
    other_initial = infinirtPeekAtLastError();
    infinirtStreamDestroy(nullptr);
    other_after_failure = infinirtGetLastError();
    other_after_get = infinirtPeekAtLastError();
  });
  other.Join();

  EXPECT_EQ(other_initial, infinirtSuccess) << "another thread sees this thread's error";
  EXPECT_EQ(other_after_failure, infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(other_after_get, infinirtSuccess);
  // Neither the other thread's failure nor its GetLastError touched this thread's variable.
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidValue);
}

// S20 (InfiniRT decision): NotReady from StreamQuery/EventQuery answers a query and is NOT
// latched into the last error (CUDA is observed to latch it; InfiniRT does not).
TEST_F(Conformance, S20_NotReadyIsNotLatchedIntoTheLastError) {
  infinirtStream_t stream = NewStream();
  infinirtEvent_t event = NewEvent();
  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtEventRecord(event, stream));

  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  EXPECT_EQ(infinirtEventQuery(event), infinirtErrorNotReady);
  EXPECT_EQ(infinirtStreamQuery(nullptr), infinirtErrorNotReady);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtSuccess);
  EXPECT_EQ(infinirtGetLastError(), infinirtSuccess);
  gate.Open();
}

}  // namespace
}  // namespace infinirt::conformance
