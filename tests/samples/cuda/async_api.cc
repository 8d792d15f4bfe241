// asyncAPI without a kernel: the host queues a memset, a copy back and an event, then counts how
// long it can keep working before the event says the device is done. The work is queued
// asynchronously, so the queuing returns before it completes, and the result is the memset's.
#include <cstring>
#include <vector>

#include "sample_check.h"

int main() {
  const int n = 16 * 1024 * 1024;
  const int value = 26;
  int device = 0;
  CHECK(cudaSetDevice(device));
  cudaDeviceProp prop;
  CHECK(cudaGetDeviceProperties(&prop, device));
  std::printf("asyncAPI on [%s]\n", prop.name);

  int* host = nullptr;
  CHECK(cudaMallocHost(reinterpret_cast<void**>(&host), n * sizeof(int)));
  std::memset(host, 0, n * sizeof(int));
  int* device_data = nullptr;
  CHECK(cudaMalloc(reinterpret_cast<void**>(&device_data), n * sizeof(int)));
  CHECK(cudaMemset(device_data, 255, n * sizeof(int)));

  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaDeviceSynchronize());

  // Every byte set to `value`, in place of the sample's kernel that adds to each element.
  CHECK(cudaEventRecord(start, 0));
  CHECK(cudaMemcpyAsync(device_data, host, n * sizeof(int), cudaMemcpyHostToDevice, 0));
  CHECK(cudaMemsetAsync(device_data, value, n * sizeof(int), 0));
  CHECK(cudaMemcpyAsync(host, device_data, n * sizeof(int), cudaMemcpyDeviceToHost, 0));
  CHECK(cudaEventRecord(stop, 0));

  unsigned long counter = 0;
  cudaError_t state;
  while ((state = cudaEventQuery(stop)) == cudaErrorNotReady) ++counter;
  CHECK(state);
  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  std::printf("time spent by the device: %.2f ms; the CPU counted to %lu meanwhile\n", ms, counter);
  EXPECT(ms >= 0);

  int expected = 0;
  std::memset(&expected, value, sizeof(expected));
  for (int i = 0; i < n; ++i) EXPECT(host[i] == expected);

  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  CHECK(cudaFreeHost(host));
  CHECK(cudaFree(device_data));
  std::printf("asyncAPI: PASSED\n");
  return 0;
}
