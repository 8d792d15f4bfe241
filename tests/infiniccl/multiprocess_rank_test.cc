// One rank of a multi-process job, started by scripts/infiniccl-launch.sh with torchrun's
// variables (RANK, WORLD_SIZE, MASTER_ADDR, MASTER_PORT): every rank runs these tests in the same
// order, each test's collectives matching the other ranks'. The communicator comes from
// infinicclCommInitFromEnv, on the rank's current device: the first CPU device, or, with
// INFINICCL_TEST_MIXED=1, the first device of another type for the odd ranks (a job of several
// device types, which the CPU engine runs through pinned host memory).
//
// Each rank makes every rank's inputs (from seeds that name the case and the rank), so it can
// compute the reference for its own result; its own buffers are device memory, filled and read
// through copies.
#include <gtest/gtest.h>

#include <chrono>
#include <cstdlib>
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

struct Job {
  infinicclComm_t comm = nullptr;
  infinirtStream_t stream = nullptr;
  int rank = 0;
  int nranks = 0;
  int device = 0;
};
Job g_job;

int EnvNumber(const char* name) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::atoi(text) : -1;
}

// The first device that is (or, with cpu false, is not) a CPU device, or -1.
int FirstDevice(bool cpu) {
  int count = 0;
  infinirtGetDeviceCount(&count);
  for (int d = 0; d < count; ++d) {
    infiniDevice_t type = INFINI_DEVICE_CPU;
    if (infinirtDeviceGetType(&type, d) == infinirtSuccess && (type == INFINI_DEVICE_CPU) == cpu) {
      return d;
    }
  }
  return -1;
}

// The rank's device: the first CPU device, or for a mixed job's odd ranks the first device that
// is not a CPU (the job fails, saying so, when there is none).
int PickDevice(int rank) {
  const char* mixed = std::getenv("INFINICCL_TEST_MIXED");
  const bool other = mixed != nullptr && std::string(mixed) == "1" && rank % 2 == 1;
  return FirstDevice(!other);
}

class JobEnvironment : public ::testing::Environment {
 public:
  void SetUp() override {
    g_job.rank = EnvNumber("RANK");
    g_job.nranks = EnvNumber("WORLD_SIZE");
    ASSERT_GE(g_job.rank, 0) << "run me through scripts/infiniccl-launch.sh";
    if (std::getenv("INFINICCL_TIMEOUT_MS") == nullptr) SetTimeoutMs(60000);
    g_job.device = PickDevice(g_job.rank);
    ASSERT_GE(g_job.device, 0) << "INFINICCL_TEST_MIXED=1 needs a device that is not a CPU";
    ASSERT_EQ(infinirtSetDevice(g_job.device), infinirtSuccess);
    ASSERT_CCL_OK(infinicclCommInitFromEnv(&g_job.comm)) << infinicclGetLastError(nullptr);
    ASSERT_EQ(infinirtStreamCreate(&g_job.stream), infinirtSuccess);
  }
  void TearDown() override {
    if (g_job.stream != nullptr) {
      EXPECT_EQ(infinirtStreamDestroy(g_job.stream), infinirtSuccess);
    }
    if (g_job.comm != nullptr) {
      EXPECT_CCL_OK(infinicclCommDestroy(g_job.comm));
    }
  }
};
[[maybe_unused]] ::testing::Environment* const kJob =
    ::testing::AddGlobalTestEnvironment(new JobEnvironment);

// Device memory of the rank's device, with a host image to fill and read it through.
class Buffer {
 public:
  explicit Buffer(size_t bytes) : host_(bytes) {
    EXPECT_EQ(infinirtMalloc(&device_, std::max<size_t>(bytes, 1)), infinirtSuccess);
  }
  ~Buffer() { infinirtFree(device_); }
  Buffer(const Buffer&) = delete;
  Buffer& operator=(const Buffer&) = delete;

  void* device() const { return device_; }
  uint8_t* host() { return host_.data(); }
  void Upload() {
    if (host_.empty()) return;
    EXPECT_EQ(infinirtMemcpy(device_, host_.data(), host_.size(), infinirtMemcpyHostToDevice),
              infinirtSuccess);
  }
  void Download() {
    if (host_.empty()) return;
    EXPECT_EQ(infinirtMemcpy(host_.data(), device_, host_.size(), infinirtMemcpyDeviceToHost),
              infinirtSuccess);
  }

 private:
  void* device_ = nullptr;
  std::vector<uint8_t> host_;
};

enum class Kind { kAllReduce, kReduce, kReduceScatter, kBroadcast, kAllGather };

struct Case {
  Kind kind;
  infiniDtype_t dtype;
  infinicclReduceOp_t op;
  size_t count;  // AllGather's sendcount, ReduceScatter's recvcount
  bool in_place;
  int root;
};

std::string Describe(const Case& c) {
  static const char* kNames[] = {"AllReduce", "Reduce", "ReduceScatter", "Broadcast", "AllGather"};
  return std::string(kNames[static_cast<int>(c.kind)]) + " " + DtypeName(c.dtype) + " " +
         OpName(c.op) + " count " + std::to_string(c.count) +
         (c.in_place ? " in place" : " out of place") + " root " + std::to_string(c.root) +
         " on rank " + std::to_string(g_job.rank) + " of " + std::to_string(g_job.nranks);
}

bool Reduces(Kind kind) {
  return kind == Kind::kAllReduce || kind == Kind::kReduce || kind == Kind::kReduceScatter;
}

// Rank r's input for a case: the same bytes on every rank that makes it.
std::vector<uint8_t> InputOf(const Case& c, int r, size_t elements) {
  std::vector<uint8_t> input(elements * DtypeSize(c.dtype));
  const uint64_t seed =
      MixSeed({static_cast<uint64_t>(c.kind), static_cast<uint64_t>(c.dtype),
               static_cast<uint64_t>(c.op), c.count, static_cast<uint64_t>(r), 0x9e11});
  if (Reduces(c.kind)) {
    FillForOp(c.dtype, c.op, input.data(), elements, seed);
  } else {
    FillRandomBytes(input.data(), input.size(), seed);
  }
  return input;
}

// The rank's expected recvbuf, or empty where it is not written (Reduce off the root).
std::vector<uint8_t> Expected(const Case& c, const std::vector<std::vector<uint8_t>>& inputs) {
  const size_t element = DtypeSize(c.dtype);
  const size_t chunk = c.count * element;
  const int me = g_job.rank;
  std::vector<uint8_t> out;
  std::vector<const void*> sources;
  switch (c.kind) {
    case Kind::kAllReduce:
    case Kind::kReduce:
      if (c.kind == Kind::kReduce && me != c.root) return out;
      out.resize(chunk);
      for (const auto& input : inputs) sources.push_back(input.data());
      ReferenceReduce(c.dtype, c.op, sources, c.count, out.data());
      return out;
    case Kind::kReduceScatter:
      out.resize(chunk);
      for (const auto& input : inputs) sources.push_back(input.data() + me * chunk);
      ReferenceReduce(c.dtype, c.op, sources, c.count, out.data());
      return out;
    case Kind::kBroadcast:
      return inputs[c.root];
    case Kind::kAllGather:
      for (const auto& input : inputs) out.insert(out.end(), input.begin(), input.end());
      return out;
  }
  return out;
}

infiniStatus_t Issue(const Case& c, const void* send, void* recv) {
  switch (c.kind) {
    case Kind::kAllReduce:
      return infinicclAllReduce(const_cast<void*>(send), recv, c.count, c.dtype, c.op, g_job.comm,
                                g_job.stream);
    case Kind::kReduce:
      return infinicclReduce(send, recv, c.count, c.dtype, c.op, c.root, g_job.comm, g_job.stream);
    case Kind::kReduceScatter:
      return infinicclReduceScatter(send, recv, c.count, c.dtype, c.op, g_job.comm, g_job.stream);
    case Kind::kBroadcast:
      return infinicclBroadcast(send, recv, c.count, c.dtype, c.root, g_job.comm, g_job.stream);
    case Kind::kAllGather:
      return infinicclAllGather(send, recv, c.count, c.dtype, g_job.comm, g_job.stream);
  }
  return INFINI_STATUS_INTERNAL_ERROR;
}

// Runs one case on this rank and checks its recvbuf (and, out of place, that sendbuf is intact).
void RunCase(const Case& c) {
  SCOPED_TRACE(Describe(c));
  const size_t n = static_cast<size_t>(g_job.nranks);
  const size_t element = DtypeSize(c.dtype);
  const size_t send_count = c.kind == Kind::kReduceScatter ? c.count * n : c.count;
  const size_t recv_count = c.kind == Kind::kAllGather ? c.count * n : c.count;
  std::vector<std::vector<uint8_t>> inputs;
  for (int r = 0; r < g_job.nranks; ++r) inputs.push_back(InputOf(c, r, send_count));
  const std::vector<uint8_t> expected = Expected(c, inputs);
  const std::vector<uint8_t>& mine = inputs[g_job.rank];

  // In place, one buffer: AllGather's sendbuf is the rank's chunk of recvbuf, ReduceScatter's
  // recvbuf the rank's chunk of sendbuf.
  const size_t one = std::max(send_count, recv_count) * element;
  Buffer first(c.in_place ? one : send_count * element);
  Buffer second(c.in_place ? 0 : recv_count * element);
  uint8_t* send_host = first.host();
  auto* send = static_cast<uint8_t*>(first.device());
  auto* recv = static_cast<uint8_t*>(c.in_place ? first.device() : second.device());
  const size_t my_chunk = static_cast<size_t>(g_job.rank) * c.count * element;
  if (c.in_place && c.kind == Kind::kAllGather) send += my_chunk, send_host += my_chunk;
  if (c.in_place && c.kind == Kind::kReduceScatter) recv += my_chunk;
  if (!mine.empty()) std::memcpy(send_host, mine.data(), mine.size());
  first.Upload();
  second.Upload();

  ASSERT_CCL_OK(Issue(c, send, recv));
  ASSERT_EQ(infinirtStreamSynchronize(g_job.stream), infinirtSuccess);
  infiniStatus_t async = INFINI_STATUS_INTERNAL_ERROR;
  ASSERT_CCL_OK(infinicclCommGetAsyncError(g_job.comm, &async));
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, async) << infinicclGetLastError(g_job.comm);

  first.Download();
  second.Download();
  if (expected.empty()) {  // Reduce off the root: its recvbuf is not used, its sendbuf kept
    EXPECT_EQ(HashBytes(first.host(), mine.size()), HashBytes(mine.data(), mine.size()));
    return;
  }
  const uint8_t* got = (c.in_place ? first.host() : second.host()) +
                       (c.in_place && c.kind == Kind::kReduceScatter ? my_chunk : 0);
  if (Reduces(c.kind)) {
    EXPECT_TRUE(ValuesMatch(c.dtype, got, expected.data(), recv_count,
                            RelativeTolerance(c.dtype, c.op, g_job.nranks)));
  } else {
    EXPECT_TRUE(BytesMatch(got, expected.data(), expected.size(), element));
  }
  if (!c.in_place) {
    EXPECT_EQ(HashBytes(first.host(), mine.size()), HashBytes(mine.data(), mine.size()))
        << "the sendbuf changed";
  }
}

TEST(MultiProcess, TheCommunicatorKnowsItsRankSizeDeviceAndEngine) {
  int count = 0, rank = -1, device = -1;
  EXPECT_CCL_OK(infinicclCommCount(g_job.comm, &count));
  EXPECT_CCL_OK(infinicclCommUserRank(g_job.comm, &rank));
  EXPECT_CCL_OK(infinicclCommDevice(g_job.comm, &device));
  EXPECT_EQ(count, g_job.nranks);
  EXPECT_EQ(rank, g_job.rank);
  EXPECT_EQ(device, g_job.device);
  const char* engine = nullptr;
  EXPECT_CCL_OK(infinicclCommGetEngine(g_job.comm, &engine));
  const bool mixed = std::getenv("INFINICCL_TEST_MIXED") != nullptr && g_job.nranks > 1;
  EXPECT_STREQ(engine, mixed ? "cpu-staged" : "cpu");
}

// A prime count, so that no split into equal pieces comes out even.
constexpr size_t kLarge = 1000003;

TEST(MultiProcess, AllReduceOfEveryDtypeAndOperatorInAndOutOfPlace) {
  for (infiniDtype_t dtype : ReductionDtypes()) {
    for (infinicclReduceOp_t op : AllOps()) {
      for (size_t count : {size_t{0}, size_t{1}, size_t{7}}) {
        for (bool in_place : {false, true})
          RunCase({Kind::kAllReduce, dtype, op, count, in_place, 0});
      }
    }
  }
}

TEST(MultiProcess, LargeAllReducesAreExactOrWithinTheReductionOrderTolerance) {
  for (infiniDtype_t dtype : {INFINI_DTYPE_F32, INFINI_DTYPE_I32, INFINI_DTYPE_BF16}) {
    for (infinicclReduceOp_t op : AllOps())
      RunCase({Kind::kAllReduce, dtype, op, kLarge, op == INFINICCL_SUM, 0});
  }
  RunCase(
      {Kind::kAllReduce, INFINI_DTYPE_F32, INFINICCL_SUM, size_t{16} << 20, false, 0});  // 64 MiB
}

TEST(MultiProcess, ReduceGivesTheRootTheReduction) {
  for (int root = 0; root < g_job.nranks; ++root) {
    for (infiniDtype_t dtype : ReductionDtypes()) {
      for (infinicclReduceOp_t op : AllOps())
        RunCase({Kind::kReduce, dtype, op, 7, root % 2 == 1, root});
    }
  }
  RunCase({Kind::kReduce, INFINI_DTYPE_F32, INFINICCL_SUM, kLarge, false, g_job.nranks - 1});
}

TEST(MultiProcess, ReduceScatterGivesEachRankTheReductionOfItsChunk) {
  for (infiniDtype_t dtype : ReductionDtypes()) {
    for (infinicclReduceOp_t op : AllOps()) {
      for (bool in_place : {false, true})
        RunCase({Kind::kReduceScatter, dtype, op, 7, in_place, 0});
    }
  }
  RunCase({Kind::kReduceScatter, INFINI_DTYPE_I32, INFINICCL_AVG, kLarge, true, 0});
}

TEST(MultiProcess, BroadcastAndAllGatherMoveEveryDtype) {
  for (infiniDtype_t dtype : MovementDtypes()) {
    for (size_t count : {size_t{0}, size_t{1}, size_t{7}}) {
      for (bool in_place : {false, true}) {
        RunCase({Kind::kBroadcast, dtype, INFINICCL_SUM, count, in_place, g_job.nranks - 1});
        RunCase({Kind::kAllGather, dtype, INFINICCL_SUM, count, in_place, 0});
      }
    }
  }
  RunCase({Kind::kBroadcast, INFINI_DTYPE_F16, INFINICCL_SUM, kLarge, false, 0});
  RunCase({Kind::kAllGather, INFINI_DTYPE_F64, INFINICCL_SUM, kLarge, true, 0});
}

// Each rank sends to the next and receives from the one before, in one group; then two sends
// to one peer arrive in call order.
TEST(MultiProcess, SendAndRecvInAGroupPassARing) {
  const int n = g_job.nranks, me = g_job.rank;
  const int next = (me + 1) % n, previous = (me + n - 1) % n;
  constexpr size_t kCount = 100003;
  std::vector<uint32_t> mine(kCount), first(kCount), second(kCount);
  for (size_t i = 0; i < kCount; ++i) mine[i] = static_cast<uint32_t>(me * 1000003 + i);
  Buffer out(kCount * 4), in(kCount * 4), in2(kCount * 4);
  std::memcpy(out.host(), mine.data(), kCount * 4);
  out.Upload();
  ASSERT_CCL_OK(infinicclGroupStart());
  ASSERT_CCL_OK(
      infinicclSend(out.device(), kCount, INFINI_DTYPE_U32, next, g_job.comm, g_job.stream));
  ASSERT_CCL_OK(
      infinicclRecv(in.device(), kCount, INFINI_DTYPE_U32, previous, g_job.comm, g_job.stream));
  ASSERT_CCL_OK(infinicclGroupEnd());
  // Then rank 0 sends two buffers to rank 1 (1 receives them in order), each its own call.
  if (n > 1 && me == 0) {
    ASSERT_CCL_OK(
        infinicclSend(out.device(), kCount, INFINI_DTYPE_U32, 1, g_job.comm, g_job.stream));
    ASSERT_CCL_OK(
        infinicclSend(in.device(), kCount, INFINI_DTYPE_U32, 1, g_job.comm, g_job.stream));
  } else if (n > 1 && me == 1) {
    ASSERT_CCL_OK(
        infinicclRecv(in2.device(), kCount, INFINI_DTYPE_U32, 0, g_job.comm, g_job.stream));
    ASSERT_CCL_OK(
        infinicclRecv(out.device(), kCount, INFINI_DTYPE_U32, 0, g_job.comm, g_job.stream));
  }
  ASSERT_EQ(infinirtStreamSynchronize(g_job.stream), infinirtSuccess);
  in.Download();
  for (size_t i = 0; i < kCount; i += 997) {
    ASSERT_EQ(reinterpret_cast<uint32_t*>(in.host())[i],
              static_cast<uint32_t>(previous * 1000003 + i));
  }
  if (n > 1 && me == 1) {
    in2.Download();
    out.Download();
    // Rank 0's first send was its own values, its second what it had received from rank n-1.
    EXPECT_EQ(reinterpret_cast<uint32_t*>(in2.host())[5], 5u);
    EXPECT_EQ(reinterpret_cast<uint32_t*>(out.host())[5],
              static_cast<uint32_t>((n - 1) * 1000003 + 5));
  }
}

void WriteOnes(void* data) {
  std::this_thread::sleep_for(std::chrono::milliseconds(50));  // the collective must wait
  auto* values = static_cast<float*>(data);
  for (int i = 0; i < 1024; ++i) values[i] = 1.0f;
}

// Earlier work on the stream (a host function writing the input late, then its copy to the
// device) comes before the collective, and later work (the copy of the result back) after it.
TEST(MultiProcess, ACollectiveRunsInItsStreamsOrder) {
  constexpr size_t kBytes = 1024 * sizeof(float);
  void* pinned = nullptr;
  ASSERT_EQ(infinirtMallocHost(&pinned, 2 * kBytes), infinirtSuccess);
  auto* input = static_cast<float*>(pinned);
  float* result = input + 1024;
  for (int i = 0; i < 1024; ++i) input[i] = -5.0f, result[i] = 0.0f;
  Buffer data(kBytes);
  ASSERT_EQ(infinirtLaunchHostFunc(g_job.stream, &WriteOnes, input), infinirtSuccess);
  ASSERT_EQ(
      infinirtMemcpyAsync(data.device(), input, kBytes, infinirtMemcpyHostToDevice, g_job.stream),
      infinirtSuccess);
  ASSERT_CCL_OK(infinicclAllReduce(data.device(), data.device(), 1024, INFINI_DTYPE_F32,
                                   INFINICCL_SUM, g_job.comm, g_job.stream));
  ASSERT_EQ(
      infinirtMemcpyAsync(result, data.device(), kBytes, infinirtMemcpyDeviceToHost, g_job.stream),
      infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(g_job.stream), infinirtSuccess);
  for (int i = 0; i < 1024; ++i) {
    ASSERT_EQ(result[i], static_cast<float>(g_job.nranks)) << i;
  }
  EXPECT_EQ(infinirtFreeHost(pinned), infinirtSuccess);
}

}  // namespace
}  // namespace infiniccl_test
