// InfiniCCL's AllReduce across processes against Gloo called directly, on the same buffers and
// in the same processes: one rank of a job started by scripts/infiniccl-launch.sh (torchrun's
// variables), as scripts/bench-infiniccl-processes.sh does. For each size, F32 SUM in place:
//   - InfiniCCL: infinicclAllReduce on a stream, then infinirtStreamSynchronize (what a program
//     waiting for the result pays);
//   - Gloo: gloo::allreduce with its own sum, on its own context (its default algorithm, as the
//     CPU engine uses), over its own TCP connections, on the calling thread.
// The two alternate, a round of each at a time, and the median of the rounds counts. Rank 0
// prints, per size, the time per call, the bus bandwidth (algbw x 2(n-1)/n, as nccl-tests
// defines it) and InfiniCCL's bandwidth against Gloo's.
#include <gloo/allreduce.h>
#include <gloo/math.h>
#include <gloo/rendezvous/context.h>
#include <gloo/rendezvous/file_store.h>
#include <gloo/rendezvous/prefix_store.h>
#include <gloo/transport/tcp/device.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <functional>
#include <memory>
#include <string>
#include <vector>

#include "infiniccl.h"
#include "infinirt.h"

namespace {

using Clock = std::chrono::steady_clock;

int EnvNumber(const char* name, int fallback) {
  const char* text = std::getenv(name);
  return text != nullptr ? std::atoi(text) : fallback;
}

bool Check(bool ok, const char* what) {
  if (!ok) std::fprintf(stderr, "rank %d: %s failed\n", EnvNumber("RANK", -1), what);
  return ok;
}

// Gloo's own context, met through a file store in a directory the job's port names.
std::shared_ptr<gloo::Context> GlooContext(int rank, int ranks) {
  const std::string directory =
      "/tmp/infiniccl-bench-" + std::to_string(EnvNumber("MASTER_PORT", 0));
  mkdir(directory.c_str(), 0700);  // every rank; one makes it
  gloo::rendezvous::FileStore store(directory);
  gloo::transport::tcp::attr attr;
  attr.hostname = "127.0.0.1";
  auto device = gloo::transport::tcp::CreateDevice(attr);
  auto context = std::make_shared<gloo::rendezvous::Context>(rank, ranks);
  context->connectFullMesh(store, device);
  return context;
}

// One round: `calls` calls, the seconds per call appended to samples.
void Round(const std::function<void()>& call, int calls, std::vector<double>* samples) {
  const auto start = Clock::now();
  for (int i = 0; i < calls; ++i) call();
  samples->push_back(std::chrono::duration<double>(Clock::now() - start).count() / calls);
}

double Median(std::vector<double> values) {
  std::sort(values.begin(), values.end());
  return values[values.size() / 2];
}

}  // namespace

int main() {
  const int rank = EnvNumber("RANK", -1);
  const int ranks = EnvNumber("WORLD_SIZE", -1);
  if (rank < 0 || ranks < 1) {
    std::fprintf(stderr, "run me through scripts/infiniccl-launch.sh -n N -- %s\n", "this");
    return 2;
  }
  if (!Check(infinirtSetDevice(0) == infinirtSuccess, "infinirtSetDevice")) return 1;
  infinicclComm_t comm = nullptr;
  if (!Check(infinicclCommInitFromEnv(&comm) == INFINI_STATUS_SUCCESS, "CommInitFromEnv")) return 1;
  auto gloo_context = GlooContext(rank, ranks);
  infinirtStream_t stream = nullptr;
  infinirtStreamCreate(&stream);

  const size_t largest = size_t{256} << 20;
  void* buffer = nullptr;
  if (!Check(infinirtMalloc(&buffer, largest) == infinirtSuccess, "infinirtMalloc")) return 1;
  std::fill_n(static_cast<float*>(buffer), largest / 4, 1.0f);  // a CPU device's memory is host's
  uint32_t tag = 0;

  if (rank == 0) {
    std::printf("AllReduce F32 SUM in place, %d processes on loopback (median of 5 rounds)\n",
                ranks);
    std::printf("%10s %14s %14s %16s %16s %8s\n", "bytes", "gloo us", "infiniccl us",
                "gloo busbw GB/s", "iccl busbw GB/s", "ratio");
  }
  for (size_t bytes = 8; bytes <= largest; bytes *= (bytes < 1024 ? 8 : 4)) {
    const size_t count = bytes / 4;
    auto infiniccl_call = [&] {
      infinicclAllReduce(buffer, buffer, count, INFINI_DTYPE_F32, INFINICCL_SUM, comm, stream);
      infinirtStreamSynchronize(stream);
    };
    auto gloo_call = [&] {
      gloo::AllreduceOptions options(gloo_context);
      options.setOutput(static_cast<float*>(buffer), count);
      options.setReduceFunction(
          static_cast<void (*)(void*, const void*, const void*, size_t)>(&gloo::sum<float>));
      options.setTag(tag++);
      gloo::allreduce(options);
    };
    // About 0.2 s of calls per round at this size (at least 3 calls).
    const int calls =
        std::max<size_t>(3, std::min<size_t>(2000, (size_t{200} << 20) / (bytes * 4 + 4096)));
    infiniccl_call();  // warm-up: connections, pages
    gloo_call();
    std::vector<double> gloo_samples, infiniccl_samples;
    for (int round = 0; round < 5; ++round) {
      Round(gloo_call, calls, &gloo_samples);
      Round(infiniccl_call, calls, &infiniccl_samples);
    }
    infiniStatus_t failure = INFINI_STATUS_SUCCESS;
    infinicclCommGetAsyncError(comm, &failure);
    if (!Check(failure == INFINI_STATUS_SUCCESS, "an AllReduce")) return 1;
    const double gloo_s = Median(gloo_samples), iccl_s = Median(infiniccl_samples);
    const double factor = 2.0 * (ranks - 1) / ranks;
    if (rank == 0) {
      std::printf("%10zu %14.1f %14.1f %16.3f %16.3f %7.2fx\n", bytes, gloo_s * 1e6, iccl_s * 1e6,
                  bytes * factor / gloo_s / 1e9, bytes * factor / iccl_s / 1e9, gloo_s / iccl_s);
    }
  }
  // Every rank is past its file store's last read: rank 0 removes it.
  infinicclAllReduce(buffer, buffer, 1, INFINI_DTYPE_F32, INFINICCL_SUM, comm, stream);
  infinirtStreamSynchronize(stream);
  if (rank == 0) {
    const std::string directory =
        "/tmp/infiniccl-bench-" + std::to_string(EnvNumber("MASTER_PORT", 0));
    for (int r = 0; r < ranks; ++r) std::remove((directory + "/" + std::to_string(r)).c_str());
    rmdir(directory.c_str());
  }
  infinirtFree(buffer);
  infinirtStreamDestroy(stream);
  infinicclCommDestroy(comm);
  return 0;
}
