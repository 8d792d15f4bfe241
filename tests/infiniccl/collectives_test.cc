// InfiniCCL's collectives on 1, 2, 3, 4 and 8 CPU devices against a host reference: AllReduce,
// Reduce and ReduceScatter for every reducible dtype and every operator; Broadcast, AllGather and
// Send/Recv for every dtype with a size; counts 0, 1 and 7, and 1000003 for F32, I32 and F16
// (where a bulk path with a remainder runs); in place and out of place; Broadcast's and Reduce's
// root first and last; over 3 ranks, every dtype at 1000003 (every operator through AllReduce).
// At 64 MiB of F32: AllReduce SUM over 2 and 8 ranks, every other operator and every other
// collective over 2. Most cases
// issue every rank's call from this thread inside a group; some use one thread per rank instead.
// Every case also checks that nothing is written past a buffer's end, that out-of-place sendbufs
// keep their contents and that Reduce writes the root's recvbuf only.
#include <gtest/gtest.h>

#include <atomic>
#include <cstring>
#include <memory>
#include <string>
#include <thread>
#include <tuple>
#include <vector>

#include "infiniccl.h"
#include "infiniccl_test_support.h"
#include "infinirt.h"
#include "test_support.h"

namespace infiniccl_test {
namespace {

// A matching error (a rank that never makes its call) fails after this instead of hanging the
// run, unless the environment sets the timeout itself. Long enough for the 64 MiB cases on a
// slow machine: the timeout bounds a wait for the other ranks' calls, not the data's movement.
class TimeoutEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    if (std::getenv("INFINICCL_TIMEOUT_MS") == nullptr) SetTimeoutMs(60000);
  }
};
[[maybe_unused]] ::testing::Environment* const kTimeoutEnvironment =
    ::testing::AddGlobalTestEnvironment(new TimeoutEnvironment);

enum class Collective { kAllReduce, kBroadcast, kReduce, kAllGather, kReduceScatter };

const char* CollectiveName(Collective collective) {
  switch (collective) {
    case Collective::kAllReduce:
      return "AllReduce";
    case Collective::kBroadcast:
      return "Broadcast";
    case Collective::kReduce:
      return "Reduce";
    case Collective::kAllGather:
      return "AllGather";
    case Collective::kReduceScatter:
      return "ReduceScatter";
  }
  return "?";
}

bool IsReduction(Collective collective) {
  return collective == Collective::kAllReduce || collective == Collective::kReduce ||
         collective == Collective::kReduceScatter;
}

enum class Issue { kGroup, kThreadPerRank };

struct Case {
  Collective collective;
  infiniDtype_t dtype;
  infinicclReduceOp_t op;  // reductions only
  size_t count;            // AllGather: sendcount; ReduceScatter: recvcount
  bool in_place;
  int root;  // Broadcast and Reduce only
};

std::string Describe(const Case& c, int nranks) {
  std::string text = std::string(CollectiveName(c.collective)) + " ";
  if (IsReduction(c.collective)) text += OpName(c.op) + " ";
  text += DtypeName(c.dtype) + ", count " + std::to_string(c.count) +
          (c.in_place ? ", in place" : ", out of place");
  if (c.collective == Collective::kBroadcast || c.collective == Collective::kReduce) {
    text += ", root " + std::to_string(c.root);
  }
  return text + ", " + std::to_string(nranks) + " ranks";
}

// A prime, so that no split into equal pieces per thread or per rank comes out even.
constexpr size_t kLargeCount = 1000003;

std::vector<size_t> CountsFor(infiniDtype_t dtype) {
  if (dtype == INFINI_DTYPE_F32 || dtype == INFINI_DTYPE_I32 || dtype == INFINI_DTYPE_F16) {
    return {0, 1, 7, kLargeCount};
  }
  return {0, 1, 7};
}

// At the large count every operator and placement runs as at the small ones (about half a
// minute on two cores), except under a sanitizer, whose slowdown would take the program past its
// CTest timeout: there AllReduce runs every operator out of place and SUM in place, Reduce and
// ReduceScatter SUM out of place and one other operator in place (in place is where a chunked
// implementation can overwrite input that another rank still reads).
bool LargeCaseRuns(Collective collective, infinicclReduceOp_t op, bool in_place) {
  if (!INFINIRT_TEST_UNDER_SANITIZER) return true;
  switch (collective) {
    case Collective::kAllReduce:
      return !in_place || op == INFINICCL_SUM;
    case Collective::kReduce:
      return in_place ? op == INFINICCL_MAX : op == INFINICCL_SUM;
    case Collective::kReduceScatter:
      return in_place ? op == INFINICCL_MIN : op == INFINICCL_SUM;
    default:
      return true;
  }
}

// One case on a communicator set: the ranks' buffers (inputs filled, the rest kSentinel, a guard
// after each), the reference computed before the call, the rank's call, and the checks.
class CaseRun {
 public:
  // A fatal failure (no memory) leaves the run unprepared: check HasFatalFailure() before
  // issuing it.
  CaseRun(const CommunicatorSet& comms, const Case& c)
      : comms_(comms), case_(c), nranks_(comms.size()), element_(DtypeSize(c.dtype)) {
    Prepare();
  }

  CaseRun(const CaseRun&) = delete;
  CaseRun& operator=(const CaseRun&) = delete;

  // The rank's call, on `stream`.
  infiniStatus_t Issue(int r, infinirtStream_t stream) const {
    const Rank& rank = ranks_[r];
    const Case& c = case_;
    infinicclComm_t comm = comms_.comm(r);
    switch (c.collective) {
      case Collective::kAllReduce:
        return infinicclAllReduce(rank.send, rank.recv, c.count, c.dtype, c.op, comm, stream);
      case Collective::kBroadcast:
        return infinicclBroadcast(rank.send, rank.recv, c.count, c.dtype, c.root, comm, stream);
      case Collective::kReduce:
        return infinicclReduce(rank.send, rank.recv, c.count, c.dtype, c.op, c.root, comm, stream);
      case Collective::kAllGather:
        return infinicclAllGather(rank.send, rank.recv, c.count, c.dtype, comm, stream);
      case Collective::kReduceScatter:
        return infinicclReduceScatter(rank.send, rank.recv, c.count, c.dtype, c.op, comm, stream);
    }
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  infiniStatus_t Issue(int r) const { return Issue(r, comms_.stream(r)); }

  // After every rank's stream has been synchronised.
  void Check() const {
    const Case& c = case_;
    const size_t recv_bytes = recv_count_ * element_;
    const double tolerance = RelativeTolerance(c.dtype, c.op, nranks_);
    for (int r = 0; r < nranks_; ++r) {
      SCOPED_TRACE("rank " + std::to_string(r) + " of " + Describe(c, nranks_));
      const Rank& rank = ranks_[r];
      if (rank.expected != nullptr) {
        if (IsReduction(c.collective)) {
          EXPECT_TRUE(
              ValuesMatch(c.dtype, rank.recv, rank.expected->data(), recv_count_, tolerance))
              << "recvbuf";
        } else {
          EXPECT_TRUE(BytesMatch(rank.recv, rank.expected->data(), recv_bytes, element_))
              << "recvbuf";
        }
      } else if (c.in_place) {  // Reduce, not the root: its one buffer is its input
        EXPECT_EQ(HashBytes(rank.recv, recv_bytes), rank.send_digest)
            << "Reduce changed the in-place buffer of a rank other than the root";
      } else {
        EXPECT_TRUE(AllBytesAre(rank.recv, recv_bytes, kSentinel))
            << "Reduce wrote the recvbuf of a rank other than the root";
      }
      if (!c.in_place) {
        EXPECT_EQ(HashBytes(rank.send, send_count_ * element_), rank.send_digest)
            << "the sendbuf changed";
      }
      EXPECT_TRUE(AllBytesAre(rank.first.data() + rank.first_payload, kGuardBytes, kSentinel))
          << "written past the end of " << (c.in_place ? "the buffer" : "sendbuf");
      if (!c.in_place) {
        EXPECT_TRUE(AllBytesAre(rank.second.data() + rank.second_payload, kGuardBytes, kSentinel))
            << "written past the end of recvbuf";
      }
    }
  }

 private:
  using Bytes = std::vector<uint8_t>;
  struct Rank {
    DeviceBuffer first, second;  // out of place: sendbuf, recvbuf; in place: the one buffer
    size_t first_payload = 0, second_payload = 0;
    uint8_t* send = nullptr;
    uint8_t* recv = nullptr;
    uint64_t send_digest = 0;
    std::shared_ptr<const Bytes> expected;  // null: recvbuf must not be written
  };

  void Prepare() {
    const Case& c = case_;
    const size_t n = static_cast<size_t>(nranks_);
    send_count_ = c.collective == Collective::kReduceScatter ? n * c.count : c.count;
    recv_count_ = c.collective == Collective::kAllGather ? n * c.count : c.count;
    const size_t send_bytes = send_count_ * element_, recv_bytes = recv_count_ * element_;
    ranks_.resize(n);
    for (int r = 0; r < nranks_; ++r) {
      Rank& rank = ranks_[r];
      if (c.in_place) {
        rank.first_payload = std::max(send_bytes, recv_bytes);
        rank.first = comms_.Allocate(r, rank.first_payload + kGuardBytes);
        ASSERT_NE(rank.first.data(), nullptr);
        rank.send = rank.recv = rank.first.data();
        // In place: AllGather's sendbuf is the rank's chunk of recvbuf, ReduceScatter's recvbuf
        // the rank's chunk of sendbuf.
        const size_t chunk = static_cast<size_t>(r) * c.count * element_;
        if (c.collective == Collective::kAllGather) rank.send += chunk;
        if (c.collective == Collective::kReduceScatter) rank.recv += chunk;
      } else {
        rank.first_payload = send_bytes;
        rank.second_payload = recv_bytes;
        rank.first = comms_.Allocate(r, send_bytes + kGuardBytes);
        rank.second = comms_.Allocate(r, recv_bytes + kGuardBytes);
        ASSERT_NE(rank.first.data(), nullptr);
        ASSERT_NE(rank.second.data(), nullptr);
        rank.send = rank.first.data();
        rank.recv = rank.second.data();
      }
      const uint64_t seed =
          MixSeed({static_cast<uint64_t>(c.collective), static_cast<uint64_t>(c.dtype),
                   static_cast<uint64_t>(c.op), c.count, c.in_place, static_cast<uint64_t>(c.root),
                   n, static_cast<uint64_t>(r)});
      if (IsReduction(c.collective)) {
        FillForOp(c.dtype, c.op, rank.send, send_count_, seed);
      } else {
        FillRandomBytes(rank.send, send_bytes, seed);
      }
      rank.send_digest = HashBytes(rank.send, send_bytes);
    }
    ComputeExpected();
  }

  void ComputeExpected() {
    const Case& c = case_;
    const size_t n = static_cast<size_t>(nranks_);
    const size_t chunk_bytes = c.count * element_;
    std::vector<const void*> sends(n);
    for (size_t r = 0; r < n; ++r) sends[r] = ranks_[r].send;
    auto same_for_all = [&](std::shared_ptr<const Bytes> expected) {
      for (Rank& rank : ranks_) rank.expected = expected;
    };
    switch (c.collective) {
      case Collective::kAllReduce:
      case Collective::kReduce: {
        auto reduced = std::make_shared<Bytes>(chunk_bytes);
        ReferenceReduce(c.dtype, c.op, sends, c.count, reduced->data());
        if (c.collective == Collective::kAllReduce) {
          same_for_all(reduced);
        } else {
          ranks_[c.root].expected = reduced;
        }
        break;
      }
      case Collective::kBroadcast:
        same_for_all(
            std::make_shared<Bytes>(ranks_[c.root].send, ranks_[c.root].send + chunk_bytes));
        break;
      case Collective::kAllGather: {
        auto gathered = std::make_shared<Bytes>(n * chunk_bytes);
        for (size_t r = 0; r < n && chunk_bytes > 0; ++r) {
          std::memcpy(gathered->data() + r * chunk_bytes, ranks_[r].send, chunk_bytes);
        }
        same_for_all(gathered);
        break;
      }
      case Collective::kReduceScatter:
        for (size_t r = 0; r < n; ++r) {
          std::vector<const void*> chunks(n);
          for (size_t q = 0; q < n; ++q) chunks[q] = ranks_[q].send + r * chunk_bytes;
          auto reduced = std::make_shared<Bytes>(chunk_bytes);
          ReferenceReduce(c.dtype, c.op, chunks, c.count, reduced->data());
          ranks_[r].expected = reduced;
        }
        break;
    }
  }

  const CommunicatorSet& comms_;
  Case case_;
  int nranks_;
  size_t element_;
  size_t send_count_ = 0, recv_count_ = 0;
  std::vector<Rank> ranks_;
};

// Issues one case (every rank's call), waits for the streams and checks the buffers.
void RunAndCheck(const CommunicatorSet& comms, const Case& c, Issue issue = Issue::kGroup) {
  SCOPED_TRACE(Describe(c, comms.size()));
  CaseRun run(comms, c);
  if (::testing::Test::HasFatalFailure()) return;
  auto call = [&run](int r) { return run.Issue(r); };
  const RankStatuses statuses =
      issue == Issue::kGroup ? comms.RunOnAllRanks(call) : comms.RunOnRankThreads(call);
  ASSERT_TRUE(statuses.AllSucceeded());
  comms.SynchronizeAll();
  run.Check();
}

std::vector<int> RootsFor(int nranks) {
  // The last rank catches a root that is ignored (taken as 0).
  if (nranks == 1) return {0};
  return {0, nranks - 1};
}

std::string RanksAndDtypeName(
    const ::testing::TestParamInfo<std::tuple<int, infiniDtype_t>>& info) {
  return "Ranks" + std::to_string(std::get<0>(info.param)) + "_" +
         DtypeName(std::get<1>(info.param));
}
std::string RanksName(const ::testing::TestParamInfo<int>& info) {
  return "Ranks" + std::to_string(info.param);
}

// --- Reductions: every reducible dtype, operator, count and placement ----------------------------

class Reductions : public CommunicatorTest<std::tuple<int, infiniDtype_t>> {
 protected:
  infiniDtype_t dtype() const { return std::get<1>(GetParam()); }

  void RunEveryCase(Collective collective, const std::vector<int>& roots) {
    for (infinicclReduceOp_t op : AllOps()) {
      for (size_t count : CountsFor(dtype())) {
        for (bool in_place : {false, true}) {
          for (int root : roots) {
            if (count == kLargeCount &&
                (!LargeCaseRuns(collective, op, in_place) || root != roots.back())) {
              continue;
            }
            RunAndCheck(comms_, {collective, dtype(), op, count, in_place, root});
            if (HasFailure()) return;  // the first failing case says enough
          }
        }
      }
    }
  }
};

TEST_P(Reductions, AllReduceGivesEveryRankTheReduction) {
  RunEveryCase(Collective::kAllReduce, {0});
}

TEST_P(Reductions, ReduceGivesTheRootTheReductionAndWritesNoOtherRank) {
  RunEveryCase(Collective::kReduce, RootsFor(nranks()));
}

TEST_P(Reductions, ReduceScatterGivesEachRankTheReductionOfItsChunk) {
  RunEveryCase(Collective::kReduceScatter, {0});
}

INSTANTIATE_TEST_SUITE_P(Ranks, Reductions,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4, 8),
                                            ::testing::ValuesIn(ReductionDtypes())),
                         RanksAndDtypeName);

// --- Data movement: every dtype with a size -----------------------------------------------------

class DataMovement : public CommunicatorTest<std::tuple<int, infiniDtype_t>> {
 protected:
  infiniDtype_t dtype() const { return std::get<1>(GetParam()); }

  void RunEveryCase(Collective collective, const std::vector<int>& roots) {
    for (size_t count : CountsFor(dtype())) {
      for (bool in_place : {false, true}) {
        for (int root : roots) {
          if (count == kLargeCount && root != roots.back()) continue;
          RunAndCheck(comms_, {collective, dtype(), INFINICCL_SUM, count, in_place, root});
          if (HasFailure()) return;
        }
      }
    }
  }
};

TEST_P(DataMovement, BroadcastCopiesTheRootsBufferToEveryRank) {
  RunEveryCase(Collective::kBroadcast, RootsFor(nranks()));
}

TEST_P(DataMovement, AllGatherConcatenatesTheRanksBuffersInRankOrder) {
  RunEveryCase(Collective::kAllGather, {0});
}

// Rank r sends to r + 1 and receives from r - 1 (modulo nranks; one rank sends to itself):
// each recvbuf ends up with the previous rank's sendbuf.
void RunRing(const CommunicatorSet& comms, infiniDtype_t dtype, size_t count, Issue issue) {
  const int n = comms.size();
  const size_t bytes = count * DtypeSize(dtype);
  SCOPED_TRACE("Send/Recv ring of " + DtypeName(dtype) + ", count " + std::to_string(count) + ", " +
               std::to_string(n) + " ranks" +
               (issue == Issue::kGroup ? ", one group" : ", one thread per rank"));
  std::vector<DeviceBuffer> sends, recvs;
  std::vector<uint64_t> digests;
  for (int r = 0; r < n; ++r) {
    sends.push_back(comms.Allocate(r, bytes + kGuardBytes));
    recvs.push_back(comms.Allocate(r, bytes + kGuardBytes));
    ASSERT_NE(sends.back().data(), nullptr);
    ASSERT_NE(recvs.back().data(), nullptr);
    FillRandomBytes(sends.back().data(), bytes,
                    MixSeed({0x5e9d, static_cast<uint64_t>(dtype), count, static_cast<uint64_t>(n),
                             static_cast<uint64_t>(r)}));
    digests.push_back(HashBytes(sends.back().data(), bytes));
  }
  auto exchange = [&](int r) {
    const int next = (r + 1) % n, previous = (r + n - 1) % n;
    const infiniStatus_t sent =
        infinicclSend(sends[r].data(), count, dtype, next, comms.comm(r), comms.stream(r));
    const infiniStatus_t received =
        infinicclRecv(recvs[r].data(), count, dtype, previous, comms.comm(r), comms.stream(r));
    return sent != INFINI_STATUS_SUCCESS ? sent : received;
  };
  RankStatuses statuses;
  if (issue == Issue::kGroup) {
    statuses = comms.RunOnAllRanks(exchange);
  } else {
    // Each thread groups its own Send and Recv: alone, every rank's Send would wait for a Recv
    // its peer makes only after its own Send (NCCL's ring idiom).
    statuses = comms.RunOnRankThreads([&](int r) {
      const infiniStatus_t started = infinicclGroupStart();
      if (started != INFINI_STATUS_SUCCESS) return started;
      const infiniStatus_t issued = exchange(r);
      const infiniStatus_t ended = infinicclGroupEnd();
      return issued != INFINI_STATUS_SUCCESS ? issued : ended;
    });
  }
  ASSERT_TRUE(statuses.AllSucceeded());
  comms.SynchronizeAll();
  for (int r = 0; r < n; ++r) {
    SCOPED_TRACE("rank " + std::to_string(r));
    const int previous = (r + n - 1) % n;
    EXPECT_TRUE(BytesMatch(recvs[r].data(), sends[previous].data(), bytes, DtypeSize(dtype)))
        << "recvbuf against the sendbuf of rank " << previous;
    EXPECT_EQ(HashBytes(sends[r].data(), bytes), digests[r]) << "the sendbuf changed";
    EXPECT_TRUE(AllBytesAre(sends[r].data() + bytes, kGuardBytes, kSentinel));
    EXPECT_TRUE(AllBytesAre(recvs[r].data() + bytes, kGuardBytes, kSentinel))
        << "written past the end of recvbuf";
  }
}

TEST_P(DataMovement, SendRecvRingInOneGroupPassesEachBufferToTheNextRank) {
  for (size_t count : CountsFor(dtype())) {
    RunRing(comms_, dtype(), count, Issue::kGroup);
    if (HasFailure()) return;
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, DataMovement,
                         ::testing::Combine(::testing::Values(1, 2, 3, 4, 8),
                                            ::testing::ValuesIn(MovementDtypes())),
                         RanksAndDtypeName);

// --- Communicators: properties, rank order, threads, groups, the legacy stream -------------------

class Communicators : public CommunicatorTest<int> {};

TEST_P(Communicators, ReportTheirRankCountDeviceAndEngine) {
  // The fixture's set (rank r on CPU device r), and one with the device indices reversed: a
  // rank's device is its entry of device_ids, not its position among the devices.
  CommunicatorSet reversed;
  std::vector<int> ids;
  for (int i = nranks() - 1; i >= 0; --i) ids.push_back(i);
  ASSERT_NO_FATAL_FAILURE(reversed.Init(ids));
  for (const CommunicatorSet* set : {&comms_, &reversed}) {
    for (int r = 0; r < nranks(); ++r) {
      const int index = set == &comms_ ? r : nranks() - 1 - r;
      SCOPED_TRACE("rank " + std::to_string(r) + " on CPU device index " + std::to_string(index));
      int expected_device = -1;
      ASSERT_OK(infinirtDeviceGetOrdinal(&expected_device, INFINI_DEVICE_CPU, index));
      int count = -1, rank = -1, device = -1;
      const char* engine = nullptr;
      EXPECT_CCL_OK(infinicclCommCount(set->comm(r), &count));
      EXPECT_CCL_OK(infinicclCommUserRank(set->comm(r), &rank));
      EXPECT_CCL_OK(infinicclCommDevice(set->comm(r), &device));
      EXPECT_CCL_OK(infinicclCommGetEngine(set->comm(r), &engine));
      EXPECT_EQ(count, nranks());
      EXPECT_EQ(rank, r);
      EXPECT_EQ(device, expected_device);
      ASSERT_NE(engine, nullptr);
      EXPECT_STREQ(engine, "cpu");
    }
  }
}

TEST_P(Communicators, RankOrderNotDeviceOrderPlacesChunksAndPicksTheRoot) {
  // Rank r on CPU device nranks-1-r: AllGather's chunks, ReduceScatter's chunks and the root
  // follow the ranks.
  CommunicatorSet reversed;
  std::vector<int> ids;
  for (int i = nranks() - 1; i >= 0; --i) ids.push_back(i);
  ASSERT_NO_FATAL_FAILURE(reversed.Init(ids));
  RunAndCheck(reversed, {Collective::kAllGather, INFINI_DTYPE_I32, INFINICCL_SUM, 7, false, 0});
  RunAndCheck(reversed, {Collective::kReduceScatter, INFINI_DTYPE_I32, INFINICCL_SUM, 7, false, 0});
  RunAndCheck(reversed,
              {Collective::kBroadcast, INFINI_DTYPE_I32, INFINICCL_SUM, 7, false, nranks() - 1});
  RunAndCheck(reversed,
              {Collective::kReduce, INFINI_DTYPE_I32, INFINICCL_MAX, 7, true, nranks() - 1});
}

TEST_P(Communicators, CollectivesWorkFromOneThreadPerRankWithoutAGroup) {
  for (size_t count : {size_t{0}, size_t{1}, size_t{7}, kLargeCount}) {
    for (bool in_place : {false, true}) {
      RunAndCheck(comms_,
                  {Collective::kAllReduce, INFINI_DTYPE_F32, INFINICCL_SUM, count, in_place, 0},
                  Issue::kThreadPerRank);
      if (HasFailure()) return;
    }
  }
  const int last = nranks() - 1;
  for (const Case& c : std::vector<Case>{
           {Collective::kBroadcast, INFINI_DTYPE_F32, INFINICCL_SUM, 7, false, last},
           {Collective::kReduce, INFINI_DTYPE_F32, INFINICCL_SUM, 7, false, last},
           {Collective::kAllGather, INFINI_DTYPE_F32, INFINICCL_SUM, 7, true, 0},
           {Collective::kReduceScatter, INFINI_DTYPE_F32, INFINICCL_MAX, 7, true, 0}}) {
    RunAndCheck(comms_, c, Issue::kThreadPerRank);
    if (HasFailure()) return;
  }
}

TEST_P(Communicators, SendRecvRingWorksFromOneThreadPerRank) {
  for (size_t count : {size_t{1}, size_t{7}, kLargeCount}) {
    RunRing(comms_, INFINI_DTYPE_F32, count, Issue::kThreadPerRank);
    if (HasFailure()) return;
  }
  RunRing(comms_, INFINI_DTYPE_I8, 7, Issue::kThreadPerRank);
}

// Several collectives, each a CaseRun, issued without waiting in between: the k-th call of every
// rank belongs to the k-th collective.
std::vector<std::unique_ptr<CaseRun>> FourCollectives(const CommunicatorSet& comms) {
  const int last = comms.size() - 1;
  std::vector<std::unique_ptr<CaseRun>> runs;
  for (const Case& c : std::vector<Case>{
           {Collective::kAllReduce, INFINI_DTYPE_F32, INFINICCL_SUM, 7, false, 0},
           {Collective::kBroadcast, INFINI_DTYPE_F32, INFINICCL_SUM, 7, false, last},
           {Collective::kAllGather, INFINI_DTYPE_I16, INFINICCL_SUM, 5, false, 0},
           {Collective::kReduceScatter, INFINI_DTYPE_I64, INFINICCL_MIN, 3, false, 0}}) {
    runs.push_back(std::make_unique<CaseRun>(comms, c));
  }
  return runs;
}

infiniStatus_t IssueAll(const std::vector<std::unique_ptr<CaseRun>>& runs, int rank) {
  for (const auto& run : runs) {
    const infiniStatus_t status = run->Issue(rank);
    if (status != INFINI_STATUS_SUCCESS) return status;
  }
  return INFINI_STATUS_SUCCESS;
}

TEST_P(Communicators, ConsecutiveCallsOfEachThreadMatchInCallOrder) {
  const auto runs = FourCollectives(comms_);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(comms_.RunOnRankThreads([&](int r) { return IssueAll(runs, r); }).AllSucceeded());
  comms_.SynchronizeAll();
  for (const auto& run : runs) run->Check();
}

TEST_P(Communicators, SeveralCollectivesInOneGroupMatchInCallOrder) {
  const auto runs = FourCollectives(comms_);
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_TRUE(comms_.RunOnAllRanks([&](int r) { return IssueAll(runs, r); }).AllSucceeded());
  comms_.SynchronizeAll();
  for (const auto& run : runs) run->Check();
}

TEST_P(Communicators, NestedGroupsIssueTheCallsAtTheOutermostGroupEnd) {
  CaseRun run(comms_, {Collective::kAllReduce, INFINI_DTYPE_F32, INFINICCL_SUM, 7, false, 0});
  ASSERT_FALSE(HasFatalFailure());
  ASSERT_CCL_OK(infinicclGroupStart());
  ASSERT_CCL_OK(infinicclGroupStart());
  EXPECT_CCL_OK(run.Issue(0));
  EXPECT_CCL_OK(infinicclGroupEnd());
  if (nranks() > 1) {
    // Had the inner GroupEnd issued rank 0's call, rank 0's stream would now hold a collective
    // that cannot finish before rank 1's call: nothing may be queued yet.
    EXPECT_OK(infinirtStreamQuery(comms_.stream(0))) << "the inner GroupEnd issued the call";
  }
  for (int r = 1; r < nranks(); ++r) EXPECT_CCL_OK(run.Issue(r));
  ASSERT_CCL_OK(infinicclGroupEnd());
  comms_.SynchronizeAll();
  run.Check();
}

TEST_P(Communicators, NullStreamIsTheLegacyStreamOfTheRanksDevice) {
  CaseRun run(comms_, {Collective::kAllReduce, INFINI_DTYPE_F64, INFINICCL_SUM, 7, false, 0});
  ASSERT_FALSE(HasFatalFailure());
  const RankStatuses statuses = comms_.RunOnAllRanks([&](int r) {
    // NULL means the legacy stream of the current device, which must be the rank's.
    if (infinirtSetDevice(comms_.device(r)) != infinirtSuccess) return INFINI_STATUS_INTERNAL_ERROR;
    return run.Issue(r, nullptr);
  });
  ASSERT_TRUE(statuses.AllSucceeded());
  for (int r = 0; r < nranks(); ++r) {
    ASSERT_OK(infinirtSetDevice(comms_.device(r)));
    EXPECT_OK(infinirtStreamSynchronize(nullptr));
  }
  run.Check();
}

INSTANTIATE_TEST_SUITE_P(Ranks, Communicators, ::testing::Values(1, 2, 3, 4, 8), RanksName);

// --- Point to point between pairs, and in call order -------------------------------------------

class PointToPoint : public CommunicatorTest<int> {};

TEST_P(PointToPoint, SendMatchesThePeersRecvAcrossThreadsWithoutAGroup) {
  // Even rank r sends to r + 1, which receives from r; each thread makes one call, alone, and
  // waits in it for its peer's (a last even rank with no partner makes none).
  const int n = nranks();
  constexpr size_t kCount = 1000;
  const size_t bytes = kCount * sizeof(int64_t);
  std::vector<DeviceBuffer> buffers;
  for (int r = 0; r < n; ++r) {
    buffers.push_back(comms_.Allocate(r, bytes + kGuardBytes));
    ASSERT_NE(buffers.back().data(), nullptr);
    if (r % 2 == 0)
      FillRandomBytes(buffers.back().data(), bytes, MixSeed({0x9a1, 7, static_cast<uint64_t>(r)}));
  }
  const RankStatuses statuses = comms_.RunOnRankThreads([&](int r) {
    if (r % 2 == 0) {
      if (r + 1 >= n) return INFINI_STATUS_SUCCESS;
      return infinicclSend(buffers[r].data(), kCount, INFINI_DTYPE_I64, r + 1, comms_.comm(r),
                           comms_.stream(r));
    }
    return infinicclRecv(buffers[r].data(), kCount, INFINI_DTYPE_I64, r - 1, comms_.comm(r),
                         comms_.stream(r));
  });
  ASSERT_TRUE(statuses.AllSucceeded());
  comms_.SynchronizeAll();
  for (int r = 1; r < n; r += 2) {
    EXPECT_TRUE(BytesMatch(buffers[r].data(), buffers[r - 1].data(), bytes, sizeof(int64_t)))
        << "rank " << r << " against rank " << r - 1;
    EXPECT_TRUE(AllBytesAre(buffers[r].data() + bytes, kGuardBytes, kSentinel));
  }
}

TEST_P(PointToPoint, SendsToOnePeerMatchItsRecvsInCallOrder) {
  // Every rank sends two different buffers to the next rank and receives two from the previous
  // one: the first Recv gets the first Send.
  const int n = nranks();
  constexpr size_t kCount = 33;
  const size_t bytes = kCount * sizeof(float);
  std::vector<DeviceBuffer> first_sent, second_sent, first_received, second_received;
  for (int r = 0; r < n; ++r) {
    first_sent.push_back(comms_.Allocate(r, bytes));
    second_sent.push_back(comms_.Allocate(r, bytes));
    first_received.push_back(comms_.Allocate(r, bytes));
    second_received.push_back(comms_.Allocate(r, bytes));
    ASSERT_FALSE(HasFailure());
    FillForOp(INFINI_DTYPE_F32, INFINICCL_SUM, first_sent[r].data(), kCount,
              MixSeed({1, static_cast<uint64_t>(r)}));
    FillForOp(INFINI_DTYPE_F32, INFINICCL_SUM, second_sent[r].data(), kCount,
              MixSeed({2, static_cast<uint64_t>(r)}));
  }
  const RankStatuses statuses = comms_.RunOnAllRanks([&](int r) {
    const int next = (r + 1) % n, previous = (r + n - 1) % n;
    infinicclComm_t comm = comms_.comm(r);
    infinirtStream_t stream = comms_.stream(r);
    for (infiniStatus_t status :
         {infinicclSend(first_sent[r].data(), kCount, INFINI_DTYPE_F32, next, comm, stream),
          infinicclSend(second_sent[r].data(), kCount, INFINI_DTYPE_F32, next, comm, stream),
          infinicclRecv(first_received[r].data(), kCount, INFINI_DTYPE_F32, previous, comm, stream),
          infinicclRecv(second_received[r].data(), kCount, INFINI_DTYPE_F32, previous, comm,
                        stream)}) {
      if (status != INFINI_STATUS_SUCCESS) return status;
    }
    return INFINI_STATUS_SUCCESS;
  });
  ASSERT_TRUE(statuses.AllSucceeded());
  comms_.SynchronizeAll();
  for (int r = 0; r < n; ++r) {
    const int previous = (r + n - 1) % n;
    EXPECT_TRUE(BytesMatch(first_received[r].data(), first_sent[previous].data(), bytes, 4))
        << "rank " << r << "'s first Recv";
    EXPECT_TRUE(BytesMatch(second_received[r].data(), second_sent[previous].data(), bytes, 4))
        << "rank " << r << "'s second Recv";
  }
}

INSTANTIATE_TEST_SUITE_P(Ranks, PointToPoint, ::testing::Values(2, 3, 4, 8), RanksName);

// --- 64 MiB -------------------------------------------------------------------------------------

constexpr size_t kSixtyFourMiBOfF32 = size_t{16} << 20;

TEST(LargeAllReduce, SixtyFourMiBOfF32SumOverTwoRanks) {
  CommunicatorSet comms;
  ASSERT_NO_FATAL_FAILURE(comms.Init(2));
  RunAndCheck(comms, {Collective::kAllReduce, INFINI_DTYPE_F32, INFINICCL_SUM, kSixtyFourMiBOfF32,
                      false, 0});
}

TEST(LargeAllReduce, SixtyFourMiBOfF32SumOverEightRanksInPlace) {
  // In place: one 64 MiB buffer per rank rather than two.
  CommunicatorSet comms;
  ASSERT_NO_FATAL_FAILURE(comms.Init(8));
  RunAndCheck(comms, {Collective::kAllReduce, INFINI_DTYPE_F32, INFINICCL_SUM, kSixtyFourMiBOfF32,
                      true, 0});
}

// F32 and F64 results of 4 MiB and more are written with streaming stores (cpu_ccl_compute.cc):
// 16 MiB of F64 and of F32 over three ranks, each split into slices of 4 MiB or more, with an
// odd count so that the stores' tails are exercised too.
TEST(LargeAllReduce, StreamedF64AndF32ResultsAreExact) {
  CommunicatorSet comms;
  ASSERT_NO_FATAL_FAILURE(comms.Init(3));
  constexpr size_t kElements = (size_t{16} << 20) / sizeof(double) + 3;
  RunAndCheck(comms,
              {Collective::kAllReduce, INFINI_DTYPE_F64, INFINICCL_MAX, kElements, false, 0});
  RunAndCheck(comms,
              {Collective::kAllReduce, INFINI_DTYPE_F32, INFINICCL_AVG, 2 * kElements, true, 0});
}

// --- Every dtype at the large count ------------------------------------------------------------

// The suites above take 1000003 elements for F32, I32 and F16 only (the dtypes whose bulk paths
// differ). Here every dtype at that count, over 3 ranks (no split comes out even): every
// reducible dtype with every operator through AllReduce, then Reduce and ReduceScatter (SUM, the
// root last) and, for every dtype with a size, Broadcast and AllGather. Under a sanitizer,
// AllReduce takes SUM and MAX only (the others' arithmetic is the same code per dtype).
TEST(LargeCount, EveryReducibleDtypeWithEveryOperatorThroughAllReduce) {
  CommunicatorSet comms;
  ASSERT_NO_FATAL_FAILURE(comms.Init(3));
  for (infiniDtype_t dtype : ReductionDtypes()) {
    for (infinicclReduceOp_t op : AllOps()) {
      if (INFINIRT_TEST_UNDER_SANITIZER && op != INFINICCL_SUM && op != INFINICCL_MAX) continue;
      RunAndCheck(comms, {Collective::kAllReduce, dtype, op, kLargeCount, false, 0});
      if (HasFailure()) return;
    }
  }
}

TEST(LargeCount, EveryDtypeThroughTheOtherCollectives) {
  CommunicatorSet comms;
  ASSERT_NO_FATAL_FAILURE(comms.Init(3));
  for (infiniDtype_t dtype : ReductionDtypes()) {
    RunAndCheck(comms, {Collective::kReduce, dtype, INFINICCL_SUM, kLargeCount, false, 2});
    RunAndCheck(comms, {Collective::kReduceScatter, dtype, INFINICCL_SUM, kLargeCount, true, 0});
    if (HasFailure()) return;
  }
  for (infiniDtype_t dtype : MovementDtypes()) {
    RunAndCheck(comms, {Collective::kBroadcast, dtype, INFINICCL_SUM, kLargeCount, true, 2});
    RunAndCheck(comms, {Collective::kAllGather, dtype, INFINICCL_SUM, kLargeCount, false, 0});
    if (HasFailure()) return;
  }
}

// --- Every collective and operator at 64 MiB --------------------------------------------------

// 64 MiB of F32 per rank's buffer over 2 ranks: Broadcast, Reduce, AllGather and ReduceScatter
// (whose larger side is then 128 MiB), and AllReduce with the operators other than SUM (SUM is
// LargeAllReduce's). Under a sanitizer, AllReduce takes MAX only.
TEST(SixtyFourMiB, EveryCollectiveOfF32OverTwoRanks) {
  CommunicatorSet comms;
  ASSERT_NO_FATAL_FAILURE(comms.Init(2));
  RunAndCheck(comms, {Collective::kBroadcast, INFINI_DTYPE_F32, INFINICCL_SUM, kSixtyFourMiBOfF32,
                      false, 1});
  RunAndCheck(comms,
              {Collective::kReduce, INFINI_DTYPE_F32, INFINICCL_SUM, kSixtyFourMiBOfF32, true, 0});
  RunAndCheck(comms, {Collective::kAllGather, INFINI_DTYPE_F32, INFINICCL_SUM, kSixtyFourMiBOfF32,
                      false, 0});
  RunAndCheck(comms, {Collective::kReduceScatter, INFINI_DTYPE_F32, INFINICCL_SUM,
                      kSixtyFourMiBOfF32, false, 0});
}

TEST(SixtyFourMiB, EveryOtherOperatorOfAllReduceOverTwoRanks) {
  CommunicatorSet comms;
  ASSERT_NO_FATAL_FAILURE(comms.Init(2));
  for (infinicclReduceOp_t op : {INFINICCL_PROD, INFINICCL_MAX, INFINICCL_MIN, INFINICCL_AVG}) {
    if (INFINIRT_TEST_UNDER_SANITIZER && op != INFINICCL_MAX) continue;
    RunAndCheck(comms,
                {Collective::kAllReduce, INFINI_DTYPE_F32, op, kSixtyFourMiBOfF32, false, 0});
    if (HasFailure()) return;
  }
}

}  // namespace
}  // namespace infiniccl_test
