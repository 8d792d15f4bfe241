// InfiniCCL's refusals, timeouts and abort, and the stream order of its calls, on CPU devices:
// CommInitAll refusing bad device lists and creating nothing; every call refusing a null or
// destroyed communicator, a stream of another device, a root or peer out of range, null buffers,
// dtypes and operators it does not take; a refused call not counting as a collective; the last
// error and the error strings; a rank calling alone failing after INFINICCL_TIMEOUT_MS; CommAbort
// ending a waiting call; calls whose counts differ failing at once; a collective running after the
// earlier work of every rank's stream and before the later work. Every wait is bounded: the
// communicators time out after 2000 ms, and a call that could hang runs under Bounded, which ends
// the program, naming it, if it does.
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <string>
#include <thread>
#include <vector>

#include "infiniccl.h"
#include "infiniccl_test_support.h"
#include "infinirt.h"
#include "test_support.h"

namespace infiniccl_test {
namespace {

using std::chrono::milliseconds;
using Clock = std::chrono::steady_clock;

constexpr int kTimeoutMs = 2000;
// How long a call that should not wait may take before a test calls it hung.
constexpr milliseconds kHung{30000};

milliseconds Since(Clock::time_point start) {
  return std::chrono::duration_cast<milliseconds>(Clock::now() - start);
}

infiniDtype_t Dtype(int value) { return static_cast<infiniDtype_t>(value); }
infinicclReduceOp_t Op(int value) { return static_cast<infinicclReduceOp_t>(value); }

// --- CommInitAll ------------------------------------------------------------------------------

class CommInitAll : public ::testing::Test {
 protected:
  void SetUp() override {
    SetTimeoutMs(kTimeoutMs);
    ASSERT_GE(CpuDeviceCount(), 2) << "run with INFINIRT_BACKENDS=cpu INFINIRT_CPU_DEVICES=8";
  }

  // A refused CommInitAll hands out no communicator: every entry is still NULL, or one that
  // every call refuses (made and released again). The devices can still be given communicators.
  void ExpectNothingCreated(const std::vector<infinicclComm_t>& comms) {
    for (size_t i = 0; i < comms.size(); ++i) {
      if (comms[i] == nullptr) continue;
      int count = -1;
      EXPECT_CCL_FAILS(infinicclCommCount(comms[i], &count))
          << "entry " << i << " of a refused CommInitAll is a live communicator";
    }
    std::vector<infinicclComm_t> fresh(2, nullptr);
    const int ids[] = {0, 1};
    ASSERT_CCL_OK(infinicclCommInitAll(INFINI_DEVICE_CPU, fresh.data(), 2, ids));
    for (infinicclComm_t comm : fresh) EXPECT_CCL_OK(infinicclCommDestroy(comm));
  }
};

TEST_F(CommInitAll, RefusesDuplicateDeviceIds) {
  for (const std::vector<int>& ids : {std::vector<int>{0, 0}, std::vector<int>{0, 1, 0}}) {
    std::vector<infinicclComm_t> comms(ids.size(), nullptr);
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                  infinicclCommInitAll(INFINI_DEVICE_CPU, comms.data(),
                                       static_cast<int>(ids.size()), ids.data()));
    ExpectNothingCreated(comms);
  }
}

TEST_F(CommInitAll, RefusesACountBelowOne) {
  std::vector<infinicclComm_t> comms(2, nullptr);
  const int ids[] = {0, 1};
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                infinicclCommInitAll(INFINI_DEVICE_CPU, comms.data(), 0, ids));
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                infinicclCommInitAll(INFINI_DEVICE_CPU, comms.data(), -1, ids));
  ExpectNothingCreated(comms);
}

TEST_F(CommInitAll, RefusesNullArrays) {
  std::vector<infinicclComm_t> comms(2, nullptr);
  const int ids[] = {0, 1};
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclCommInitAll(INFINI_DEVICE_CPU, nullptr, 2, ids));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclCommInitAll(INFINI_DEVICE_CPU, comms.data(), 2, nullptr));
  ExpectNothingCreated(comms);
}

TEST_F(CommInitAll, RefusesAnIndexThatIsNoDevice) {
  const int cpus = CpuDeviceCount();
  for (const std::vector<int>& ids :
       {std::vector<int>{0, cpus}, std::vector<int>{-1}, std::vector<int>{1, 0, 1 << 20}}) {
    std::vector<infinicclComm_t> comms(ids.size(), nullptr);
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                  infinicclCommInitAll(INFINI_DEVICE_CPU, comms.data(),
                                       static_cast<int>(ids.size()), ids.data()))
        << "ids " << ids.front() << ".." << ids.back() << " with " << cpus << " CPU devices";
    ExpectNothingCreated(comms);
  }
}

TEST_F(CommInitAll, FailsForADeviceTypeWithNoDevices) {
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_OK(infinirtGetAllDeviceCount(counts));
  int empty_type = -1;
  for (int type = 0; type < INFINI_DEVICE_TYPE_COUNT && empty_type < 0; ++type) {
    if (counts[type] == 0) empty_type = type;
  }
  ASSERT_GE(empty_type, 0) << "every device type has devices: run with INFINIRT_BACKENDS=cpu";
  const int ids[] = {0};
  for (int type : {empty_type, static_cast<int>(INFINI_DEVICE_TYPE_COUNT), -1}) {
    infinicclComm_t comm = nullptr;
    EXPECT_CCL_FAILS(infinicclCommInitAll(static_cast<infiniDevice_t>(type), &comm, 1, ids))
        << "device type " << type;
    ExpectNothingCreated({comm});
  }
}

// --- Bad arguments ------------------------------------------------------------------------------

// Two ranks on CPU devices 0 and 1, a 2000 ms timeout, and F32 buffers of kCount elements per
// rank (ReduceScatter's and AllGather's larger side included). Rank 0 makes each bad call alone:
// a refusal must come from the arguments, not from the absent rank 1.
class BadArguments : public ::testing::Test {
 protected:
  static constexpr size_t kCount = 16;

  void SetUp() override {
    SetTimeoutMs(kTimeoutMs);
    ASSERT_NO_FATAL_FAILURE(comms_.Init(2));
    for (int r = 0; r < 2; ++r) {
      send_.push_back(comms_.Allocate(r, 2 * kCount * sizeof(float)));
      recv_.push_back(comms_.Allocate(r, 2 * kCount * sizeof(float)));
      ASSERT_NE(send_.back().data(), nullptr);
      ASSERT_NE(recv_.back().data(), nullptr);
      FillForOp(INFINI_DTYPE_F32, INFINICCL_SUM, send_.back().data(), 2 * kCount, 17 + r);
    }
  }
  void TearDown() override {
    Bounded("destroying the communicators", kHung, [this] { comms_.Destroy(); });
  }

  void* send(int r) const { return send_[r].data(); }
  void* recv(int r) const { return recv_[r].data(); }

  // Rank 0's AllReduce of both ranks' buffers succeeds and sums them: the communicator is intact.
  void ExpectAllReduceStillWorks() {
    const RankStatuses statuses = comms_.RunOnAllRanks([this](int r) {
      return infinicclAllReduce(send(r), recv(r), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                                comms_.comm(r), comms_.stream(r));
    });
    ASSERT_TRUE(statuses.AllSucceeded());
    Bounded("synchronising the streams", kHung, [this] { comms_.SynchronizeAll(); });
    std::vector<float> expected(kCount);
    ReferenceReduce(INFINI_DTYPE_F32, INFINICCL_SUM, {send(0), send(1)}, kCount, expected.data());
    for (int r = 0; r < 2; ++r) {
      EXPECT_TRUE(ValuesMatch(INFINI_DTYPE_F32, recv(r), expected.data(), kCount,
                              RelativeTolerance(INFINI_DTYPE_F32, INFINICCL_SUM, 2)))
          << "rank " << r;
    }
  }

  CommunicatorSet comms_;
  std::vector<DeviceBuffer> send_, recv_;
};

TEST_F(BadArguments, NullCommunicatorIsRefusedByEveryCall) {
  infinirtStream_t stream = comms_.stream(0);
  int value = -1;
  const char* engine = nullptr;
  EXPECT_CCL_FAILS(infinicclAllReduce(send(0), recv(0), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                                      nullptr, stream));
  EXPECT_CCL_FAILS(
      infinicclBroadcast(send(0), recv(0), kCount, INFINI_DTYPE_F32, 0, nullptr, stream));
  EXPECT_CCL_FAILS(infinicclReduce(send(0), recv(0), kCount, INFINI_DTYPE_F32, INFINICCL_SUM, 0,
                                   nullptr, stream));
  EXPECT_CCL_FAILS(infinicclAllGather(send(0), recv(0), kCount, INFINI_DTYPE_F32, nullptr, stream));
  EXPECT_CCL_FAILS(infinicclReduceScatter(send(0), recv(0), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                                          nullptr, stream));
  EXPECT_CCL_FAILS(infinicclSend(send(0), kCount, INFINI_DTYPE_F32, 1, nullptr, stream));
  EXPECT_CCL_FAILS(infinicclRecv(recv(0), kCount, INFINI_DTYPE_F32, 1, nullptr, stream));
  EXPECT_CCL_FAILS(infinicclCommCount(nullptr, &value));
  EXPECT_CCL_FAILS(infinicclCommUserRank(nullptr, &value));
  EXPECT_CCL_FAILS(infinicclCommDevice(nullptr, &value));
  EXPECT_CCL_FAILS(infinicclCommGetEngine(nullptr, &engine));
}

TEST_F(BadArguments, CommDestroyOfNullIsANoOp) {
  EXPECT_CCL_OK(infinicclCommDestroy(nullptr));
  ExpectAllReduceStillWorks();
}

TEST_F(BadArguments, DestroyedCommunicatorIsRefusedWithoutACrash) {
  CommunicatorSet doomed;
  ASSERT_NO_FATAL_FAILURE(doomed.Init(2));
  const infinicclComm_t stale = doomed.comm(0);
  EXPECT_CCL_OK(infinicclCommDestroy(doomed.comm(0)));
  EXPECT_CCL_OK(infinicclCommDestroy(doomed.comm(1)));
  doomed.Forget(0);
  doomed.Forget(1);
  // The fixture's rank 0 stream is a stream of the same device. Bounded: a library that takes
  // the stale handle for a live one would wait for the other rank here.
  Bounded("calls with a destroyed communicator", kHung, [&] {
    infinirtStream_t stream = comms_.stream(0);
    int value = -1;
    const char* engine = nullptr;
    EXPECT_CCL_FAILS(infinicclCommCount(stale, &value));
    EXPECT_CCL_FAILS(infinicclCommUserRank(stale, &value));
    EXPECT_CCL_FAILS(infinicclCommDevice(stale, &value));
    EXPECT_CCL_FAILS(infinicclCommGetEngine(stale, &engine));
    EXPECT_CCL_FAILS(infinicclAllReduce(send(0), recv(0), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                                        stale, stream));
    EXPECT_CCL_FAILS(
        infinicclBroadcast(send(0), recv(0), kCount, INFINI_DTYPE_F32, 0, stale, stream));
    EXPECT_CCL_FAILS(infinicclReduce(send(0), recv(0), kCount, INFINI_DTYPE_F32, INFINICCL_SUM, 0,
                                     stale, stream));
    EXPECT_CCL_FAILS(infinicclAllGather(send(0), recv(0), kCount, INFINI_DTYPE_F32, stale, stream));
    EXPECT_CCL_FAILS(infinicclReduceScatter(send(0), recv(0), kCount, INFINI_DTYPE_F32,
                                            INFINICCL_SUM, stale, stream));
    EXPECT_CCL_FAILS(infinicclSend(send(0), kCount, INFINI_DTYPE_F32, 1, stale, stream));
    EXPECT_CCL_FAILS(infinicclRecv(recv(0), kCount, INFINI_DTYPE_F32, 1, stale, stream));
  });
}

TEST_F(BadArguments, StreamOfAnotherDeviceIsBadParam) {
  infinicclComm_t comm = comms_.comm(0);
  infinirtStream_t other = comms_.stream(1);  // device 1's: rank 0 is on device 0
  EXPECT_STATUS(
      INFINI_STATUS_BAD_PARAM,
      infinicclAllReduce(send(0), recv(0), kCount, INFINI_DTYPE_F32, INFINICCL_SUM, comm, other));
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                infinicclBroadcast(send(0), recv(0), kCount, INFINI_DTYPE_F32, 0, comm, other));
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM, infinicclReduce(send(0), recv(0), kCount, INFINI_DTYPE_F32,
                                                         INFINICCL_SUM, 0, comm, other));
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                infinicclAllGather(send(0), recv(0), kCount, INFINI_DTYPE_F32, comm, other));
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                infinicclReduceScatter(send(0), recv(0), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                                       comm, other));
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                infinicclSend(send(0), kCount, INFINI_DTYPE_F32, 1, comm, other));
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                infinicclRecv(recv(0), kCount, INFINI_DTYPE_F32, 1, comm, other));
}

TEST_F(BadArguments, RootOrPeerOutOfRangeIsBadParam) {
  infinicclComm_t comm = comms_.comm(0);
  infinirtStream_t stream = comms_.stream(0);
  for (int outside : {2, -1, 1000}) {
    SCOPED_TRACE("rank " + std::to_string(outside) + " of 2");
    EXPECT_STATUS(
        INFINI_STATUS_BAD_PARAM,
        infinicclBroadcast(send(0), recv(0), kCount, INFINI_DTYPE_F32, outside, comm, stream));
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                  infinicclReduce(send(0), recv(0), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                                  outside, comm, stream));
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                  infinicclSend(send(0), kCount, INFINI_DTYPE_F32, outside, comm, stream));
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                  infinicclRecv(recv(0), kCount, INFINI_DTYPE_F32, outside, comm, stream));
  }
}

TEST_F(BadArguments, NullBufferWithElementsIsNullPointer) {
  // Rank 0 is the root, so its sendbuf (Broadcast) and recvbuf (Reduce) are used.
  infinicclComm_t comm = comms_.comm(0);
  infinirtStream_t stream = comms_.stream(0);
  const infiniDtype_t f32 = INFINI_DTYPE_F32;
  const infinicclReduceOp_t sum = INFINICCL_SUM;
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclAllReduce(nullptr, recv(0), kCount, f32, sum, comm, stream));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclAllReduce(send(0), nullptr, kCount, f32, sum, comm, stream));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclBroadcast(nullptr, recv(0), kCount, f32, 0, comm, stream));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclBroadcast(send(0), nullptr, kCount, f32, 0, comm, stream));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclReduce(nullptr, recv(0), kCount, f32, sum, 0, comm, stream));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclReduce(send(0), nullptr, kCount, f32, sum, 0, comm, stream));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclAllGather(nullptr, recv(0), kCount, f32, comm, stream));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclAllGather(send(0), nullptr, kCount, f32, comm, stream));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclReduceScatter(nullptr, recv(0), kCount, f32, sum, comm, stream));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclReduceScatter(send(0), nullptr, kCount, f32, sum, comm, stream));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER, infinicclSend(nullptr, kCount, f32, 1, comm, stream));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER, infinicclRecv(nullptr, kCount, f32, 1, comm, stream));
}

TEST_F(BadArguments, ReductionsRefuseDtypesWithoutArithmetic) {
  infinicclComm_t comm = comms_.comm(0);
  infinirtStream_t stream = comms_.stream(0);
  // BYTE, BOOL, F8, the complex types, INVALID, and numbers that are no dtype.
  for (int value : {1, 2, 11, 15, 16, 17, 18, 0, 20, -1, 1000}) {
    SCOPED_TRACE(DtypeName(Dtype(value)));
    EXPECT_STATUS(
        INFINI_STATUS_BAD_PARAM,
        infinicclAllReduce(send(0), recv(0), kCount, Dtype(value), INFINICCL_SUM, comm, stream));
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM, infinicclReduce(send(0), recv(0), kCount, Dtype(value),
                                                           INFINICCL_MAX, 0, comm, stream));
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                  infinicclReduceScatter(send(0), recv(0), kCount, Dtype(value), INFINICCL_MIN,
                                         comm, stream));
  }
}

TEST_F(BadArguments, DataMovementRefusesDtypesWithoutASize) {
  infinicclComm_t comm = comms_.comm(0);
  infinirtStream_t stream = comms_.stream(0);
  for (int value : {0, 20, -1, 1000}) {  // INVALID, and numbers that are no dtype
    SCOPED_TRACE(DtypeName(Dtype(value)));
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                  infinicclBroadcast(send(0), recv(0), kCount, Dtype(value), 0, comm, stream));
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                  infinicclAllGather(send(0), recv(0), kCount, Dtype(value), comm, stream));
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                  infinicclSend(send(0), kCount, Dtype(value), 1, comm, stream));
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                  infinicclRecv(recv(0), kCount, Dtype(value), 1, comm, stream));
  }
}

TEST_F(BadArguments, OperatorsOutsideTheFiveAreBadParam) {
  infinicclComm_t comm = comms_.comm(0);
  infinirtStream_t stream = comms_.stream(0);
  for (int value : {INFINICCL_REDUCE_OP_COUNT, -1, 100}) {
    SCOPED_TRACE("operator " + std::to_string(value));
    EXPECT_STATUS(
        INFINI_STATUS_BAD_PARAM,
        infinicclAllReduce(send(0), recv(0), kCount, INFINI_DTYPE_F32, Op(value), comm, stream));
    EXPECT_STATUS(
        INFINI_STATUS_BAD_PARAM,
        infinicclReduce(send(0), recv(0), kCount, INFINI_DTYPE_F32, Op(value), 0, comm, stream));
    EXPECT_STATUS(INFINI_STATUS_BAD_PARAM,
                  infinicclReduceScatter(send(0), recv(0), kCount, INFINI_DTYPE_F32, Op(value),
                                         comm, stream));
  }
}

TEST_F(BadArguments, QueriesRefuseNullOutputs) {
  EXPECT_CCL_FAILS(infinicclCommCount(comms_.comm(0), nullptr));
  EXPECT_CCL_FAILS(infinicclCommUserRank(comms_.comm(0), nullptr));
  EXPECT_CCL_FAILS(infinicclCommDevice(comms_.comm(0), nullptr));
  EXPECT_CCL_FAILS(infinicclCommGetEngine(comms_.comm(0), nullptr));
}

TEST_F(BadArguments, RefusedCallsDoNotCountAsCollectives) {
  // Rank 0 alone makes refused calls of every kind; then both ranks make one AllReduce. Had a
  // refusal taken a place in rank 0's sequence of calls, the AllReduce would not match rank 1's.
  infinicclComm_t comm = comms_.comm(0);
  infinirtStream_t stream = comms_.stream(0);
  EXPECT_CCL_FAILS(
      infinicclAllReduce(send(0), recv(0), kCount, INFINI_DTYPE_BOOL, INFINICCL_SUM, comm, stream));
  EXPECT_CCL_FAILS(
      infinicclAllReduce(send(0), recv(0), kCount, INFINI_DTYPE_F32, Op(7), comm, stream));
  EXPECT_CCL_FAILS(
      infinicclAllReduce(nullptr, recv(0), kCount, INFINI_DTYPE_F32, INFINICCL_SUM, comm, stream));
  EXPECT_CCL_FAILS(infinicclAllReduce(send(0), recv(0), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                                      comm, comms_.stream(1)));
  EXPECT_CCL_FAILS(infinicclBroadcast(send(0), recv(0), kCount, INFINI_DTYPE_F32, 5, comm, stream));
  EXPECT_CCL_FAILS(infinicclSend(send(0), kCount, INFINI_DTYPE_F32, 9, comm, stream));
  ExpectAllReduceStillWorks();
}

TEST_F(BadArguments, LastErrorDescribesTheCallingThreadsFailedCall) {
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER,
                infinicclAllReduce(nullptr, recv(0), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                                   comms_.comm(0), comms_.stream(0)));
  const char* text = infinicclGetLastError(nullptr);
  ASSERT_NE(text, nullptr);
  EXPECT_GT(std::strlen(text), 0u) << "no last error after a failed call";
  // A thread that made no failed call has none.
  std::string other = "(not read)";
  std::thread([&other] {
    const char* fresh = infinicclGetLastError(nullptr);
    other = fresh == nullptr ? "(null)" : fresh;
  }).join();
  EXPECT_EQ(other, "") << "the last error of another thread";
}

// The engines' listings are written once and read without a lock: threads asking at once get the
// same answers (and, under ThreadSanitizer, race on nothing).
TEST(EngineInfo, ManyThreadsMayAskAtOnce) {
  std::vector<std::thread> threads;
  std::atomic<int> wrong{0};
  for (int t = 0; t < 4; ++t) {
    threads.emplace_back([&] {
      for (int i = 0; i < 200; ++i) {
        for (infiniDevice_t type : {INFINI_DEVICE_CPU, INFINI_DEVICE_KUNLUN}) {
          infinirtBackendProp info{};
          if (infinicclGetEngineInfo(type, &info) != INFINI_STATUS_SUCCESS ||
              (info.status == infinirtBackendLoaded) != (type == INFINI_DEVICE_CPU)) {
            ++wrong;
          }
        }
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
  EXPECT_EQ(wrong.load(), 0);
}

TEST(ErrorStrings, DescribeEveryStatus) {
#define EXPECT_DESCRIBED_(name, value, text)                          \
  {                                                                   \
    const char* line = infinicclGetErrorString(INFINI_STATUS_##name); \
    ASSERT_NE(line, nullptr) << #name;                                \
    EXPECT_GT(std::strlen(line), 0u) << #name;                        \
  }
  INFINIRT_STATUS_LIST(EXPECT_DESCRIBED_)
#undef EXPECT_DESCRIBED_
  EXPECT_STRNE(infinicclGetErrorString(INFINI_STATUS_BAD_PARAM),
               infinicclGetErrorString(INFINI_STATUS_NULL_POINTER));
}

// --- Timeouts and abort
// ---------------------------------------------------------------------------

class Timeouts : public ::testing::Test {
 protected:
  static constexpr size_t kCount = 1024;

  void SetUp() override {
    SetTimeoutMs(kTimeoutMs);
    ASSERT_NO_FATAL_FAILURE(comms_.Init(2));
    send_ = comms_.Allocate(0, kCount * sizeof(float));
    recv_ = comms_.Allocate(0, kCount * sizeof(float));
    ASSERT_NE(send_.data(), nullptr);
    ASSERT_NE(recv_.data(), nullptr);
  }
  void TearDown() override {
    // After a failed collective the communicators are aborted rather than destroyed, as NCCL's
    // users do: abort does not wait for the other ranks.
    Bounded("aborting the communicators", kHung, [this] {
      for (int r = 0; r < comms_.size(); ++r) {
        if (comms_.comm(r) != nullptr) {
          EXPECT_CCL_OK(infinicclCommAbort(comms_.comm(r)));
        }
        comms_.Forget(r);
      }
      comms_.Destroy();
    });
  }

  struct Outcome {
    infiniStatus_t status = INFINI_STATUS_SUCCESS;
    milliseconds took{0};
    std::string last_error;
  };
  // Runs rank 0's call alone and times it (the last error is read on the calling thread).
  Outcome Alone(const std::string& what, const std::function<infiniStatus_t()>& call) {
    return Bounded(what, milliseconds(kTimeoutMs) + kHung, [&call] {
      Outcome outcome;
      const auto start = Clock::now();
      outcome.status = call();
      outcome.took = Since(start);
      const char* text = infinicclGetLastError(nullptr);
      outcome.last_error = text == nullptr ? "" : text;
      return outcome;
    });
  }
  // Failed, after waiting about the timeout: at least half of it (it did wait for rank 1), at
  // most the timeout and a generous margin for a loaded machine.
  void ExpectTimedOut(const Outcome& outcome) {
    EXPECT_NE(StatusName(outcome.status), StatusName(INFINI_STATUS_SUCCESS));
    EXPECT_GE(outcome.took.count(), kTimeoutMs / 2) << "failed without waiting for rank 1";
    EXPECT_LE(outcome.took.count(), kTimeoutMs + 8000) << "INFINICCL_TIMEOUT_MS was 2000";
    EXPECT_FALSE(outcome.last_error.empty()) << "no last error after the timeout";
  }

  CommunicatorSet comms_;
  DeviceBuffer send_, recv_;
};

TEST_F(Timeouts, AllReduceOfOneRankAloneFailsAfterTheTimeout) {
  ExpectTimedOut(Alone("rank 0's AllReduce, alone", [this] {
    return infinicclAllReduce(send_.data(), recv_.data(), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                              comms_.comm(0), comms_.stream(0));
  }));
}

TEST_F(Timeouts, SendWithoutTheMatchingRecvFailsAfterTheTimeout) {
  ExpectTimedOut(Alone("rank 0's Send, alone", [this] {
    return infinicclSend(send_.data(), kCount, INFINI_DTYPE_F32, 1, comms_.comm(0),
                         comms_.stream(0));
  }));
}

TEST(Abort, FromAnotherThreadEndsAWaitingCallPromptly) {
  // A timeout far longer than the wait allowed after the abort, so that the call's return can
  // only be the abort's doing.
  SetTimeoutMs(30000);
  CommunicatorSet comms;
  ASSERT_NO_FATAL_FAILURE(comms.Init(2));
  SetTimeoutMs(kTimeoutMs);
  constexpr size_t kCount = 1024;
  DeviceBuffer send = comms.Allocate(0, kCount * sizeof(float));
  DeviceBuffer recv = comms.Allocate(0, kCount * sizeof(float));
  ASSERT_NE(send.data(), nullptr);
  ASSERT_NE(recv.data(), nullptr);
  const infinicclComm_t aborted = comms.comm(0);

  std::atomic<bool> returned{false};
  std::atomic<int> status{-1};
  std::atomic<Clock::rep> returned_at{0};
  std::thread waiter([&] {
    status = infinicclAllReduce(send.data(), recv.data(), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                                aborted, comms.stream(0));
    returned_at = Clock::now().time_since_epoch().count();
    returned = true;
  });
  std::this_thread::sleep_for(milliseconds(300));
  EXPECT_FALSE(returned.load()) << "rank 0's AllReduce returned before rank 1 made its call";

  const auto aborted_at = Clock::now();
  EXPECT_CCL_OK(Bounded("CommAbort", kHung, [&] { return infinicclCommAbort(aborted); }));
  comms.Forget(0);
  if (!infinirt::testing::WaitUntil([&] { return returned.load(); }, kHung)) {
    std::fprintf(stderr, "[  FAILED  ] the AllReduce still waits %lld ms after CommAbort\n",
                 static_cast<long long>(kHung.count()));
    std::fflush(stderr);
    std::_Exit(1);  // the waiting thread cannot be joined
  }
  waiter.join();
  EXPECT_NE(StatusName(static_cast<infiniStatus_t>(status.load())),
            StatusName(INFINI_STATUS_SUCCESS));
  const auto waited = std::chrono::duration_cast<milliseconds>(
      Clock::time_point(Clock::duration(returned_at.load())) - aborted_at);
  EXPECT_LT(waited.count(), 5000) << "the call ended " << waited.count()
                                  << " ms after CommAbort (its timeout is 30000 ms)";

  // Later calls of the aborted communicator fail too (it is released).
  Bounded("a call of the aborted communicator", kHung, [&] {
    EXPECT_CCL_FAILS(infinicclAllReduce(send.data(), recv.data(), kCount, INFINI_DTYPE_F32,
                                        INFINICCL_SUM, aborted, comms.stream(0)));
  });
  Bounded("releasing rank 1", kHung, [&] {
    EXPECT_CCL_OK(infinicclCommAbort(comms.comm(1)));
    comms.Forget(1);
    comms.Destroy();
  });
}

// --- Calls that do not match ------------------------------------------------------------------

// Ranks whose calls differ (here the count; also kind, dtype, op or root) cannot be matched: the
// CPU engine compares each rank's call with the first rank's. The rank that finds the difference
// is refused with BAD_PARAM, naming it; the rank already waiting fails too, at once rather than
// at the timeout; the communicator stays failed. (Across processes the ranks' calls are not
// compared: docs/infiniccl.md.)
TEST(Mismatch, RanksWhoseCountsDifferFailPromptly) {
  SetTimeoutMs(30000);  // far longer than the failure may take
  CommunicatorSet comms;
  ASSERT_NO_FATAL_FAILURE(comms.Init(2));
  constexpr size_t kCount = 64;
  std::vector<DeviceBuffer> buffers;
  for (int r = 0; r < 2; ++r) {
    buffers.push_back(comms.Allocate(r, 2 * kCount * sizeof(float)));
    ASSERT_NE(buffers.back().data(), nullptr);
  }
  std::vector<std::string> last_errors(2);  // each rank thread's own
  const auto start = Clock::now();
  const RankStatuses statuses = Bounded("AllReduces of different counts", kHung, [&] {
    return comms.RunOnRankThreads([&](int r) {
      if (r == 1) std::this_thread::sleep_for(milliseconds(200));  // rank 0 waits first
      const infiniStatus_t status =
          infinicclAllReduce(buffers[r].data(), buffers[r].data(), kCount * (r + 1),
                             INFINI_DTYPE_F32, INFINICCL_SUM, comms.comm(r), comms.stream(r));
      const char* text = infinicclGetLastError(nullptr);
      last_errors[r] = text == nullptr ? "" : text;
      return status;
    });
  });
  EXPECT_LT(Since(start).count(), 10000) << "the mismatch was found only at the timeout";
  ASSERT_EQ(statuses.ranks.size(), 2u);
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM, statuses.ranks[1]);
  EXPECT_NE(statuses.ranks[0], INFINI_STATUS_SUCCESS) << "rank 0's call succeeded";
  EXPECT_NE(last_errors[1].find("do not match"), std::string::npos) << last_errors[1];
  EXPECT_FALSE(last_errors[0].empty()) << "rank 0's failure has no message";
  // The communicator stays failed: a later, matching call fails too.
  Bounded("a later call", kHung, [&] {
    EXPECT_CCL_FAILS(infinicclAllReduce(buffers[0].data(), buffers[0].data(), kCount,
                                        INFINI_DTYPE_F32, INFINICCL_SUM, comms.comm(0),
                                        comms.stream(0)));
  });
  Bounded("aborting the communicators", kHung, [&] {
    for (int r = 0; r < 2; ++r) {
      EXPECT_CCL_OK(infinicclCommAbort(comms.comm(r)));
      comms.Forget(r);
    }
    comms.Destroy();
  });
}

// --- Stream order
// ---------------------------------------------------------------------------------

// Three ranks and an out-of-place F32 SUM AllReduce whose inputs are small multiples of 1/2
// (rank r holds r + 1 + (i % 64) / 2), so every order of summation gives the exact sum.
class StreamOrder : public ::testing::Test {
 protected:
  static constexpr size_t kCount = 4096;
  static constexpr int kRanks = 3;
  // How long the tests hold a stream before looking: time enough for a collective that does
  // not wait for the held stream to have written its result (well below the 2000 ms timeout).
  static constexpr milliseconds kHold{250};

  void SetUp() override {
    SetTimeoutMs(kTimeoutMs);
    ASSERT_NO_FATAL_FAILURE(comms_.Init(kRanks));
    for (int r = 0; r < kRanks; ++r) {
      send_.push_back(comms_.Allocate(r, kCount * sizeof(float)));
      recv_.push_back(comms_.Allocate(r, kCount * sizeof(float)));
      ASSERT_NE(send_.back().data(), nullptr);
      ASSERT_NE(recv_.back().data(), nullptr);
      for (size_t i = 0; i < kCount; ++i) send(r)[i] = Input(r, i);
    }
  }
  void TearDown() override {
    Bounded("destroying the communicators", kHung, [this] { comms_.Destroy(); });
  }

  static float Input(int r, size_t i) { return static_cast<float>(r + 1) + (i % 64) * 0.5f; }
  float* send(int r) const { return reinterpret_cast<float*>(send_[r].data()); }
  float* recv(int r) const { return reinterpret_cast<float*>(recv_[r].data()); }

  std::vector<float> Sums() const {
    std::vector<float> sums(kCount, 0.0f);
    for (int r = 0; r < kRanks; ++r) {
      for (size_t i = 0; i < kCount; ++i) sums[i] += send(r)[i];
    }
    return sums;
  }
  // Issues the AllReduce of every rank in one group, on `streams` (the ranks' own by default),
  // and checks that it returned without waiting for a held stream.
  void IssueAllReduce(std::vector<infinirtStream_t> streams = {}) {
    if (streams.empty()) {
      for (int r = 0; r < kRanks; ++r) streams.push_back(comms_.stream(r));
    }
    const auto start = Clock::now();
    const RankStatuses statuses = comms_.RunOnAllRanks([&](int r) {
      return infinicclAllReduce(send(r), recv(r), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                                comms_.comm(r), streams[r]);
    });
    EXPECT_TRUE(statuses.AllSucceeded());
    EXPECT_LT(Since(start).count(), 5000) << "the calls waited for the held stream to run";
  }
  void ExpectNoRecvWritten() {
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_TRUE(AllBytesAre(recv(r), kCount * sizeof(float), kSentinel))
          << "rank " << r << "'s recvbuf was written while a stream was held";
    }
  }
  void ExpectSums(const std::vector<float>& sums, const std::vector<const float*>& results) {
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_TRUE(ValuesMatch(INFINI_DTYPE_F32, results[r], sums.data(), kCount, 0.0))
          << "rank " << r;
    }
  }

  CommunicatorSet comms_;
  std::vector<DeviceBuffer> send_, recv_;
};

TEST_F(StreamOrder, CollectiveWaitsForEarlierWorkOnAnyRanksStream) {
  const std::vector<float> sums = Sums();
  std::vector<infinirtEvent_t> after(kRanks, nullptr);
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_OK(infinirtSetDevice(comms_.device(r)));
    ASSERT_OK(infinirtEventCreate(&after[r]));
  }
  infinirt::testing::Gate gate;
  ASSERT_OK(gate.Block(comms_.stream(0)));
  ASSERT_TRUE(gate.WaitEntered());
  IssueAllReduce();
  for (int r = 0; r < kRanks; ++r) ASSERT_OK(infinirtEventRecord(after[r], comms_.stream(r)));
  std::this_thread::sleep_for(kHold);
  // Rank 0's stream has not reached the collective: no rank's part of it may have run.
  ExpectNoRecvWritten();
  for (int r = 1; r < kRanks; ++r) {
    EXPECT_EQ(infinirt::testing::ErrorText(infinirtEventQuery(after[r])),
              infinirt::testing::ErrorText(infinirtErrorNotReady))
        << "rank " << r << "'s stream went past the collective while rank 0's was held";
  }
  gate.Open();
  Bounded("synchronising the streams", kHung, [this] { comms_.SynchronizeAll(); });
  EXPECT_FALSE(gate.timed_out());
  ExpectSums(sums, {recv(0), recv(1), recv(2)});
  for (infinirtEvent_t event : after) EXPECT_OK(infinirtEventDestroy(event));
}

TEST_F(StreamOrder, LaterWorkOnTheStreamSeesTheResultWithoutASynchronisation) {
  const std::vector<float> sums = Sums();
  std::vector<DeviceBuffer> copies;
  for (int r = 0; r < kRanks; ++r) {
    copies.push_back(comms_.Allocate(r, kCount * sizeof(float)));
    ASSERT_NE(copies.back().data(), nullptr);
  }
  infinirt::testing::Gate gate;
  ASSERT_OK(gate.Block(comms_.stream(0)));  // so that the copies are queued before it runs
  ASSERT_TRUE(gate.WaitEntered());
  IssueAllReduce();
  for (int r = 0; r < kRanks; ++r) {
    ASSERT_OK(infinirtMemcpyAsync(copies[r].data(), recv(r), kCount * sizeof(float),
                                  infinirtMemcpyDeviceToDevice, comms_.stream(r)));
  }
  gate.Open();
  Bounded("synchronising the streams", kHung, [this] { comms_.SynchronizeAll(); });
  EXPECT_FALSE(gate.timed_out());
  std::vector<const float*> copied;
  for (const DeviceBuffer& copy : copies) copied.push_back(reinterpret_cast<float*>(copy.data()));
  ExpectSums(sums, copied);
}

TEST_F(StreamOrder, CollectiveReadsWhatEarlierWorkOnTheStreamWrote) {
  // Rank 1's sendbuf is rewritten by a copy queued on its stream behind a gate: the collective,
  // queued after the copy, must sum the new values, although every other rank reaches it first.
  DeviceBuffer staging = comms_.Allocate(1, kCount * sizeof(float));
  ASSERT_NE(staging.data(), nullptr);
  float* fresh = reinterpret_cast<float*>(staging.data());
  for (size_t i = 0; i < kCount; ++i) fresh[i] = 100.0f + static_cast<float>(i % 32);
  std::vector<float> sums(kCount);
  for (size_t i = 0; i < kCount; ++i) sums[i] = send(0)[i] + fresh[i] + send(2)[i];

  infinirt::testing::Gate gate;
  ASSERT_OK(gate.Block(comms_.stream(1)));
  ASSERT_TRUE(gate.WaitEntered());
  ASSERT_OK(infinirtMemcpyAsync(send(1), fresh, kCount * sizeof(float),
                                infinirtMemcpyDeviceToDevice, comms_.stream(1)));
  IssueAllReduce();
  std::this_thread::sleep_for(kHold);
  ExpectNoRecvWritten();
  gate.Open();
  Bounded("synchronising the streams", kHung, [this] { comms_.SynchronizeAll(); });
  EXPECT_FALSE(gate.timed_out());
  ExpectSums(sums, {recv(0), recv(1), recv(2)});
}

TEST_F(StreamOrder, NullStreamCollectiveRunsInTheLegacyStreamsOrder) {
  // Device 0's legacy stream is held; each rank's call names NULL with its device current.
  const std::vector<float> sums = Sums();
  infinirt::testing::Gate gate;
  ASSERT_OK(infinirtSetDevice(comms_.device(0)));
  ASSERT_OK(gate.Block(nullptr));
  ASSERT_TRUE(gate.WaitEntered());
  const auto start = Clock::now();
  const RankStatuses statuses = comms_.RunOnAllRanks([&](int r) {
    if (infinirtSetDevice(comms_.device(r)) != infinirtSuccess) return INFINI_STATUS_INTERNAL_ERROR;
    return infinicclAllReduce(send(r), recv(r), kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                              comms_.comm(r), nullptr);
  });
  EXPECT_TRUE(statuses.AllSucceeded());
  EXPECT_LT(Since(start).count(), 5000) << "the calls waited for the held stream to run";
  std::this_thread::sleep_for(kHold);
  ExpectNoRecvWritten();
  gate.Open();
  Bounded("synchronising the legacy streams", kHung, [this] {
    for (int r = 0; r < kRanks; ++r) {
      EXPECT_OK(infinirtSetDevice(comms_.device(r)));
      EXPECT_OK(infinirtStreamSynchronize(nullptr));
    }
  });
  EXPECT_FALSE(gate.timed_out());
  ExpectSums(sums, {recv(0), recv(1), recv(2)});
}

// --- Communicators across processes: the id and the environment ------------------------------
// (The jobs of several processes are multiprocess_*_test; these are the refusals and the ranks a
// single process can hold.)

TEST(MultiProcessIds, RefusalsNameWhatIsWrong) {
  infinicclComm_t comm = nullptr;
  infinicclUniqueId id{};
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER, infinicclGetUniqueId(nullptr));
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER, infinicclCommInitRank(nullptr, 1, id, 0));
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM, infinicclCommInitRank(&comm, 1, id, 0));  // all zeros
  EXPECT_NE(std::string(infinicclGetLastError(nullptr)).find("infinicclGetUniqueId"),
            std::string::npos);
  ASSERT_CCL_OK(infinicclGetUniqueId(&id));
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM, infinicclCommInitRank(&comm, 2, id, 2));
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM, infinicclCommInitRank(&comm, 2, id, -1));
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM, infinicclCommInitRank(&comm, 0, id, 0));
  EXPECT_EQ(comm, nullptr);
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER, infinicclCommInitFromEnv(nullptr));
  infiniStatus_t async = INFINI_STATUS_SUCCESS;
  EXPECT_STATUS(INFINI_STATUS_NULL_POINTER, infinicclCommGetAsyncError(nullptr, &async));
}

TEST(MultiProcessIds, CommInitFromEnvWithoutTheLaunchersVariablesIsBadParam) {
  if (std::getenv("RANK") != nullptr || std::getenv("OMPI_COMM_WORLD_RANK") != nullptr) {
    GTEST_SKIP() << "started by a launcher";
  }
  infinicclComm_t comm = nullptr;
  EXPECT_STATUS(INFINI_STATUS_BAD_PARAM, infinicclCommInitFromEnv(&comm));
  EXPECT_NE(std::string(infinicclGetLastError(nullptr)).find("WORLD_SIZE"), std::string::npos);
}

TEST(MultiProcessIds, ARankNobodyJoinsFailsAtTheTimeoutNamingTheMissingRank) {
  SetTimeoutMs(kTimeoutMs);
  infinicclUniqueId id{};
  ASSERT_CCL_OK(infinicclGetUniqueId(&id));
  ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);
  infinicclComm_t comm = nullptr;
  const auto start = Clock::now();
  std::string why;  // the last error is the calling thread's: Bounded's
  const infiniStatus_t status = Bounded("CommInitRank", kHung, [&] {
    const infiniStatus_t made = infinicclCommInitRank(&comm, 2, id, 0);
    why = infinicclGetLastError(nullptr);
    return made;
  });
  EXPECT_STATUS(INFINI_STATUS_INTERNAL_ERROR, status);
  EXPECT_GE(Since(start), milliseconds(kTimeoutMs - 100));
  EXPECT_NE(why.find("rank 1 did not join"), std::string::npos) << why;
}

// Ranks of an id-made communicator in threads of one process, each on its CPU device: they meet
// over loopback like processes would.
TEST(MultiProcessIds, RanksInThreadsOfOneProcessMeetThroughTheId) {
  SetTimeoutMs(30000);
  constexpr int kRanks = 3;
  ASSERT_GE(CpuDeviceCount(), kRanks);
  infinicclUniqueId id{};
  ASSERT_CCL_OK(infinicclGetUniqueId(&id));
  std::vector<infiniStatus_t> statuses(kRanks, INFINI_STATUS_INTERNAL_ERROR);
  std::vector<std::string> engines(kRanks);
  std::vector<double> sums(kRanks, 0.0);
  std::vector<std::thread> threads;
  for (int r = 0; r < kRanks; ++r) {
    threads.emplace_back([&, r] {
      infinirtSetDevice(r);
      infinicclComm_t comm = nullptr;
      statuses[r] = infinicclCommInitRank(&comm, kRanks, id, r);
      if (statuses[r] != INFINI_STATUS_SUCCESS) return;
      const char* engine = nullptr;
      infinicclCommGetEngine(comm, &engine);
      engines[r] = engine;
      double* value = nullptr;
      infinirtMalloc(reinterpret_cast<void**>(&value), sizeof(double));
      *value = r + 1.0;  // a CPU device's memory is host memory
      statuses[r] =
          infinicclAllReduce(value, value, 1, INFINI_DTYPE_F64, INFINICCL_SUM, comm, nullptr);
      infinirtDeviceSynchronize();
      sums[r] = *value;
      infinirtFree(value);
      infinicclCommDestroy(comm);
    });
  }
  for (std::thread& thread : threads) thread.join();
  for (int r = 0; r < kRanks; ++r) {
    EXPECT_STATUS(INFINI_STATUS_SUCCESS, statuses[r]) << "rank " << r;
    EXPECT_EQ(engines[r], "cpu");
    EXPECT_EQ(sums[r], 6.0) << "rank " << r;
  }
}

}  // namespace
}  // namespace infiniccl_test
