// InfiniCCL's AllReduce (F32 SUM, out of place) in one process, on 2 and 4 CPU devices, from 8 B
// to 256 MiB: bus bandwidth as nccl-tests defines it, busbw = algbw x 2(n-1)/n with algbw the
// bytes of one rank's buffer over the time. Each benchmark reports it as its bytes per second.
// The baseline is std::memcpy of busbw's bytes (n = 2: the buffer; n = 4: 1.5 times it), so that
// the ratio of the two times is the ratio of busbw to memcpy's bandwidth.
//
// INFINIRT_CPU_DEVICES is read when InfiniRT initialises: each benchmark sets it and starts a
// fresh runtime, and restores both when it ends.
#include <benchmark/benchmark.h>

#include <cstdlib>
#include <cstring>
#include <optional>
#include <string>
#include <vector>

#include "bench_support.h"
#include "infiniccl.h"

namespace infinirt::bench {
namespace {

// INFINIRT_CPU_DEVICES=n for a fresh runtime, restored (with a fresh runtime again) at the end.
class CpuDevices {
 public:
  explicit CpuDevices(int n) {
    if (const char* value = std::getenv("INFINIRT_CPU_DEVICES")) previous_ = value;
    setenv("INFINIRT_CPU_DEVICES", std::to_string(n).c_str(), 1);
    infinirtFinalize();
  }
  ~CpuDevices() {
    if (previous_) {
      setenv("INFINIRT_CPU_DEVICES", previous_->c_str(), 1);
    } else {
      unsetenv("INFINIRT_CPU_DEVICES");
    }
    infinirtFinalize();
  }
  CpuDevices(const CpuDevices&) = delete;
  CpuDevices& operator=(const CpuDevices&) = delete;

 private:
  std::optional<std::string> previous_;
};

double BusFactor(int ranks) { return 2.0 * (ranks - 1) / ranks; }

void AllReduce(benchmark::State& state, int ranks, size_t bytes) {
  CpuDevices devices(ranks);
  std::vector<int> ids(ranks);
  std::vector<infinicclComm_t> comms(ranks);
  for (int r = 0; r < ranks; ++r) ids[r] = r;
  if (infinicclCommInitAll(INFINI_DEVICE_CPU, comms.data(), ranks, ids.data()) !=
      INFINI_STATUS_SUCCESS) {
    state.SkipWithError(
        (std::string("infinicclCommInitAll: ") + infinicclGetLastError(nullptr)).c_str());
    return;
  }
  const size_t count = bytes / sizeof(float);
  std::vector<void*> send(ranks), recv(ranks);
  std::vector<infinirtStream_t> streams(ranks);
  for (int r = 0; r < ranks; ++r) {
    Check(state, infinirtSetDevice(r), "infinirtSetDevice");
    Check(state, infinirtStreamCreate(&streams[r]), "infinirtStreamCreate");
    Check(state, infinirtMalloc(&send[r], bytes), "infinirtMalloc");
    Check(state, infinirtMalloc(&recv[r], bytes), "infinirtMalloc");
    std::memset(send[r], 0, bytes);  // CPU devices' memory is the host's: touched once here
    std::memset(recv[r], 0, bytes);
  }
  for (auto _ : state) {
    infinicclGroupStart();
    for (int r = 0; r < ranks; ++r) {
      infinicclAllReduce(send[r], recv[r], count, INFINI_DTYPE_F32, INFINICCL_SUM, comms[r],
                         streams[r]);
    }
    if (infinicclGroupEnd() != INFINI_STATUS_SUCCESS) {
      state.SkipWithError(infinicclGetLastError(nullptr));
      break;
    }
    for (int r = 0; r < ranks; ++r) infinirtStreamSynchronize(streams[r]);
  }
  state.SetBytesProcessed(
      static_cast<int64_t>(static_cast<double>(state.iterations()) * bytes * BusFactor(ranks)));
  for (int r = 0; r < ranks; ++r) {
    infinicclCommDestroy(comms[r]);
    infinirtSetDevice(r);
    infinirtFree(send[r]);
    infinirtFree(recv[r]);
    infinirtStreamDestroy(streams[r]);
  }
}

// std::memcpy of state.range(0) bytes, reported as that many bytes per copy.
void Memcpy(benchmark::State& state) {
  const size_t bytes = static_cast<size_t>(state.range(0));
  std::vector<char> from(bytes, 1), to(bytes, 0);
  for (auto _ : state) {
    std::memcpy(to.data(), from.data(), bytes);
    benchmark::ClobberMemory();
  }
  state.SetBytesProcessed(static_cast<int64_t>(state.iterations() * bytes));
}

std::string SizeName(size_t bytes) {
  if (bytes >= (size_t{1} << 20)) return std::to_string(bytes >> 20) + "MiB";
  if (bytes >= 1024) return std::to_string(bytes >> 10) + "KiB";
  return std::to_string(bytes) + "B";
}

const bool registered = [] {
  const size_t sizes[] = {
      8, size_t{64} << 10, size_t{1} << 20, size_t{16} << 20, size_t{64} << 20, size_t{256} << 20};
  for (int ranks : {2, 4}) {
    for (size_t bytes : sizes) {
      Register("InfiniCCL/AllReduce/F32/" + std::to_string(ranks) + "ranks/" + SizeName(bytes),
               [ranks, bytes](benchmark::State& s) { AllReduce(s, ranks, bytes); })
          ->Unit(bytes >= (size_t{1} << 20) ? benchmark::kMillisecond : benchmark::kMicrosecond);
    }
  }
  // busbw's bytes at 16 and 64 MiB: the buffer for 2 ranks, 1.5 times it for 4.
  for (size_t bytes : {size_t{16} << 20, size_t{24} << 20, size_t{64} << 20, size_t{96} << 20}) {
    Register("InfiniCCL/std::memcpy", Memcpy)
        ->Arg(static_cast<int64_t>(bytes))
        ->Unit(benchmark::kMillisecond);
  }
  return true;
}();

}  // namespace
}  // namespace infinirt::bench
