// bandwidthTest: host-to-device, device-to-host and device-to-device copies, from pinned and
// from pageable memory, timed with events. Every copy's data is checked, and every rate must be
// a positive number.
#include <cstring>
#include <vector>

#include "sample_check.h"

namespace {

const size_t kBytes = size_t{32} << 20;
const int kRepeats = 10;

// MB/s of kRepeats copies, timed by events on the legacy stream.
double Measure(void* dst, const void* src, cudaMemcpyKind kind) {
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, 0));
  for (int i = 0; i < kRepeats; ++i) CHECK(cudaMemcpyAsync(dst, src, kBytes, kind, 0));
  CHECK(cudaEventRecord(stop, 0));
  CHECK(cudaEventSynchronize(stop));
  float ms = 0;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  const double seconds = (ms > 0 ? ms : 0.001f) / 1e3;
  return static_cast<double>(kBytes) * kRepeats / seconds / 1e6;
}

}  // namespace

int main() {
  CHECK(cudaSetDevice(0));
  unsigned char* device_a = nullptr;
  unsigned char* device_b = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void**>(&device_a), kBytes));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&device_b), kBytes));
  unsigned char* pinned = nullptr;
  CHECK(cudaHostAlloc(reinterpret_cast<void**>(&pinned), kBytes, cudaHostAllocDefault));
  std::vector<unsigned char> pageable(kBytes);
  for (int memory = 0; memory < 2; ++memory) {
    unsigned char* host = memory == 0 ? pinned : pageable.data();
    const char* name = memory == 0 ? "pinned" : "pageable";
    std::memset(host, 0x3c + memory, kBytes);
    const double h2d = Measure(device_a, host, cudaMemcpyHostToDevice);
    const double d2d = Measure(device_b, device_a, cudaMemcpyDeviceToDevice);
    std::memset(host, 0, kBytes);
    const double d2h = Measure(host, device_b, cudaMemcpyDeviceToHost);
    for (size_t i = 0; i < kBytes; i += 4099) EXPECT(host[i] == 0x3c + memory);
    std::printf(
        "%-8s host-to-device %10.1f MB/s  device-to-host %10.1f MB/s  "
        "device-to-device %10.1f MB/s\n",
        name, h2d, d2h, d2d);
    EXPECT(h2d > 0 && d2h > 0 && d2d > 0);
  }
  CHECK(cudaFree(device_a));
  CHECK(cudaFree(device_b));
  CHECK(cudaFreeHost(pinned));
  std::printf("bandwidthTest: PASSED\n");
  return 0;
}
