// InfiniCCL: an AllReduce, checked on the host, in one of two ways:
//   - in one process, over every CPU device of the process, each rank on its own stream, issued
//     from one thread inside a group. With INFINIRT_CPU_DEVICES unset, it asks for 4 CPU devices
//     (INFINIRT_CPU_DEVICES=8 runs it on 8);
//   - as one rank of a job of several processes, when a launcher set RANK (torchrun's variables;
//     scripts/infiniccl-launch.sh -n 4 -- allreduce) or OMPI_COMM_WORLD_RANK (mpirun).
#include <infiniccl.h>
#include <infinirt.h>

#include <cstdio>
#include <cstdlib>
#include <vector>

#define CHECK_RT(call)                                               \
  do {                                                               \
    infinirtError_t status_ = (call);                                \
    if (status_ != infinirtSuccess) {                                \
      std::printf("%s: %s\n", #call, infinirtGetErrorName(status_)); \
      return 1;                                                      \
    }                                                                \
  } while (0)
#define CHECK_CCL(call)                                                     \
  do {                                                                      \
    infiniStatus_t status_ = (call);                                        \
    if (status_ != INFINI_STATUS_SUCCESS) {                                 \
      std::printf("%s: %s (%s)\n", #call, infinicclGetErrorString(status_), \
                  infinicclGetLastError(nullptr));                          \
      return 1;                                                             \
    }                                                                       \
  } while (0)

namespace {

constexpr size_t kCount = 1 << 20;

int InOneProcess() {
  setenv("INFINIRT_CPU_DEVICES", "4", /*overwrite=*/0);  // before InfiniRT starts
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  CHECK_RT(infinirtGetAllDeviceCount(counts));
  const int ranks = counts[INFINI_DEVICE_CPU];

  std::vector<int> ids(ranks);
  for (int r = 0; r < ranks; ++r) ids[r] = r;  // indices among the CPU devices
  std::vector<infinicclComm_t> comms(ranks);
  CHECK_CCL(infinicclCommInitAll(INFINI_DEVICE_CPU, comms.data(), ranks, ids.data()));

  // Rank r holds r + 1 everywhere; after the sum every rank holds 1 + 2 + ... + ranks.
  std::vector<float> host(kCount);
  std::vector<void*> buffers(ranks);
  std::vector<infinirtStream_t> streams(ranks);
  for (int r = 0; r < ranks; ++r) {
    int device = -1;
    CHECK_CCL(infinicclCommDevice(comms[r], &device));
    CHECK_RT(infinirtSetDevice(device));
    CHECK_RT(infinirtStreamCreate(&streams[r]));
    CHECK_RT(infinirtMalloc(&buffers[r], kCount * sizeof(float)));
    for (float& value : host) value = static_cast<float>(r + 1);
    CHECK_RT(infinirtMemcpy(buffers[r], host.data(), kCount * sizeof(float),
                            infinirtMemcpyHostToDevice));
  }

  CHECK_CCL(infinicclGroupStart());  // one thread, several ranks: a group
  for (int r = 0; r < ranks; ++r) {
    CHECK_CCL(infinicclAllReduce(buffers[r], buffers[r], kCount, INFINI_DTYPE_F32, INFINICCL_SUM,
                                 comms[r], streams[r]));
  }
  CHECK_CCL(infinicclGroupEnd());

  const float expected = ranks * (ranks + 1) / 2.0f;
  size_t wrong = 0;
  for (int r = 0; r < ranks; ++r) {
    int device = -1;
    CHECK_CCL(infinicclCommDevice(comms[r], &device));
    CHECK_RT(infinirtSetDevice(device));
    // Queued after the AllReduce on the rank's stream: it sees the sum.
    CHECK_RT(infinirtMemcpyAsync(host.data(), buffers[r], kCount * sizeof(float),
                                 infinirtMemcpyDeviceToHost, streams[r]));
    CHECK_RT(infinirtStreamSynchronize(streams[r]));
    for (float value : host) wrong += value != expected;
    CHECK_RT(infinirtFree(buffers[r]));
    CHECK_RT(infinirtStreamDestroy(streams[r]));
  }
  const char* engine = "?";
  CHECK_CCL(infinicclCommGetEngine(comms[0], &engine));
  for (infinicclComm_t comm : comms) CHECK_CCL(infinicclCommDestroy(comm));
  std::printf(
      "AllReduce (sum) of %zu floats over %d ranks on the %s engine: every rank holds %g, "
      "%zu wrong\n",
      kCount, ranks, engine, expected, wrong);
  return wrong == 0 ? 0 : 1;
}

// One rank per process, on the device LOCAL_RANK names (the first device without it).
int AsOneRankOfAJob() {
  const char* local = std::getenv("LOCAL_RANK");
  int devices = 0;
  CHECK_RT(infinirtGetDeviceCount(&devices));
  CHECK_RT(infinirtSetDevice(local != nullptr ? std::atoi(local) % devices : 0));
  infinicclComm_t comm = nullptr;
  CHECK_CCL(infinicclCommInitFromEnv(&comm));
  int rank = 0, ranks = 0;
  CHECK_CCL(infinicclCommUserRank(comm, &rank));
  CHECK_CCL(infinicclCommCount(comm, &ranks));

  // Rank r holds r + 1 everywhere; after the sum every rank holds 1 + 2 + ... + ranks.
  std::vector<float> host(kCount, static_cast<float>(rank + 1));
  void* buffer = nullptr;
  infinirtStream_t stream = nullptr;
  CHECK_RT(infinirtStreamCreate(&stream));
  CHECK_RT(infinirtMalloc(&buffer, kCount * sizeof(float)));
  CHECK_RT(infinirtMemcpy(buffer, host.data(), kCount * sizeof(float), infinirtMemcpyHostToDevice));
  CHECK_CCL(
      infinicclAllReduce(buffer, buffer, kCount, INFINI_DTYPE_F32, INFINICCL_SUM, comm, stream));
  CHECK_RT(infinirtMemcpyAsync(host.data(), buffer, kCount * sizeof(float),
                               infinirtMemcpyDeviceToHost, stream));
  CHECK_RT(infinirtStreamSynchronize(stream));
  infiniStatus_t failure = INFINI_STATUS_SUCCESS;  // a failure after the call returned
  CHECK_CCL(infinicclCommGetAsyncError(comm, &failure));
  CHECK_CCL(failure);

  const float expected = ranks * (ranks + 1) / 2.0f;
  size_t wrong = 0;
  for (float value : host) wrong += value != expected;
  const char* engine = "?";
  CHECK_CCL(infinicclCommGetEngine(comm, &engine));
  CHECK_RT(infinirtFree(buffer));
  CHECK_RT(infinirtStreamDestroy(stream));
  CHECK_CCL(infinicclCommDestroy(comm));
  std::printf(
      "rank %d of %d: AllReduce (sum) of %zu floats on the %s engine: holds %g, %zu wrong\n", rank,
      ranks, kCount, engine, expected, wrong);
  return wrong == 0 ? 0 : 1;
}

}  // namespace

int main() {
  const bool launched =
      std::getenv("RANK") != nullptr || std::getenv("OMPI_COMM_WORLD_RANK") != nullptr;
  return launched ? AsOneRankOfAJob() : InOneProcess();
}
