// simpleMultiCopy without a kernel: two streams each take a slice through a copy in, a "kernel"
// (a host function that increments every byte, in stream order) and a copy out, so that one
// stream's copies overlap the other's work. Events time the whole; every byte comes back
// incremented once per pass.
#include <cstring>
#include <vector>

#include "sample_check.h"

namespace {

struct Slice {
  unsigned char* pinned = nullptr;
  size_t bytes = 0;
};

// The sample's increment kernel, as a host function: in stream order, it increments the slice
// in pinned memory once the copy back has brought it there.
void CUDART_CB Increment(void* data) {
  Slice* slice = static_cast<Slice*>(data);
  for (size_t i = 0; i < slice->bytes; ++i) ++slice->pinned[i];
}

}  // namespace

int main() {
  const int kStreams = 2;
  const int kPasses = 10;
  const size_t kBytes = size_t{4} << 20;
  CHECK(cudaSetDevice(0));
  cudaStream_t streams[kStreams];
  unsigned char* in[kStreams];
  unsigned char* out[kStreams];
  unsigned char* device_in[kStreams];
  unsigned char* device_out[kStreams];
  Slice slices[kStreams];
  for (int i = 0; i < kStreams; ++i) {
    CHECK(cudaStreamCreateWithFlags(&streams[i], cudaStreamNonBlocking));
    CHECK(cudaMallocHost(reinterpret_cast<void**>(&in[i]), kBytes));
    CHECK(cudaMallocHost(reinterpret_cast<void**>(&out[i]), kBytes));
    CHECK(cudaMalloc(reinterpret_cast<void**>(&device_in[i]), kBytes));
    CHECK(cudaMalloc(reinterpret_cast<void**>(&device_out[i]), kBytes));
    std::memset(in[i], i, kBytes);
    slices[i] = Slice{out[i], kBytes};
  }
  cudaEvent_t start, stop;
  CHECK(cudaEventCreate(&start));
  CHECK(cudaEventCreate(&stop));
  CHECK(cudaEventRecord(start, 0));
  for (int pass = 0; pass < kPasses; ++pass) {
    for (int i = 0; i < kStreams; ++i) {
      CHECK(cudaMemcpyAsync(device_in[i], in[i], kBytes, cudaMemcpyHostToDevice, streams[i]));
      CHECK(cudaMemcpyAsync(device_out[i], device_in[i], kBytes, cudaMemcpyDeviceToDevice,
                            streams[i]));
      CHECK(cudaMemcpyAsync(out[i], device_out[i], kBytes, cudaMemcpyDeviceToHost, streams[i]));
      CHECK(cudaLaunchHostFunc(streams[i], Increment, &slices[i]));
      // The next pass copies the incremented bytes in.
      CHECK(cudaMemcpyAsync(in[i], out[i], kBytes, cudaMemcpyHostToHost, streams[i]));
    }
  }
  for (int i = 0; i < kStreams; ++i) CHECK(cudaStreamSynchronize(streams[i]));
  CHECK(cudaEventRecord(stop, 0));
  CHECK(cudaEventSynchronize(stop));
  float ms = -1;
  CHECK(cudaEventElapsedTime(&ms, start, stop));
  EXPECT(ms >= 0);
  for (int i = 0; i < kStreams; ++i) {
    for (size_t b = 0; b < kBytes; b += 4093) EXPECT(out[i][b] == i + kPasses);
    CHECK(cudaStreamDestroy(streams[i]));
    CHECK(cudaFreeHost(in[i]));
    CHECK(cudaFreeHost(out[i]));
    CHECK(cudaFree(device_in[i]));
    CHECK(cudaFree(device_out[i]));
  }
  CHECK(cudaEventDestroy(start));
  CHECK(cudaEventDestroy(stop));
  std::printf("simpleMultiCopy: %d streams x %d passes of %zu bytes in %.2f ms: PASSED\n", kStreams,
              kPasses, kBytes, ms);
  return 0;
}
