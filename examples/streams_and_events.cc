// A CUDA-style program on InfiniRT: two streams, asynchronous copies, a host function in each
// stream, an event dependency between them, and events timing the work. Written as a CUDA
// program would be, with "cuda" renamed to "infinirt".
#include <cstdio>
#include <cstdlib>
#include <vector>

#include "infinirt.h"

#define CHECK(call)                                                                  \
  do {                                                                               \
    infinirtError_t error_ = (call);                                                 \
    if (error_ != infinirtSuccess) {                                                 \
      std::fprintf(stderr, "%s:%d: %s failed: %s (%s)\n", __FILE__, __LINE__, #call, \
                   infinirtGetErrorName(error_), infinirtGetErrorString(error_));    \
      std::exit(1);                                                                  \
    }                                                                                \
  } while (0)

namespace {

struct Work {
  float* data;
  size_t count;
};

// Host functions run in stream order on InfiniRT's worker threads; they touch pinned host
// memory only, so the same program is valid on a GPU.
void ScaleOnHost(void* user_data) {
  auto* work = static_cast<Work*>(user_data);
  for (size_t i = 0; i < work->count; ++i) work->data[i] *= 2.0f;
}

}  // namespace

int main() {
  int device_count = 0;
  CHECK(infinirtGetDeviceCount(&device_count));
  infinirtDeviceProp prop;
  CHECK(infinirtGetDeviceProperties(&prop, 0));
  std::printf("device 0 of %d: %s (backend %s)\n", device_count, prop.name, prop.backendName);

  const size_t count = 1 << 20;
  const size_t bytes = count * sizeof(float);
  float *host_in, *host_out, *device_a, *device_b;
  CHECK(infinirtMallocHost(&host_in, bytes));
  CHECK(infinirtMallocHost(&host_out, bytes));
  CHECK(infinirtMalloc(&device_a, bytes));
  CHECK(infinirtMalloc(&device_b, bytes));
  for (size_t i = 0; i < count; ++i) host_in[i] = static_cast<float>(i);

  infinirtStream_t upload, download;
  CHECK(infinirtStreamCreate(&upload));
  CHECK(infinirtStreamCreateWithFlags(&download, infinirtStreamNonBlocking));
  infinirtEvent_t start, uploaded, stop;
  CHECK(infinirtEventCreate(&start));
  CHECK(infinirtEventCreate(&uploaded));
  CHECK(infinirtEventCreate(&stop));

  // upload: host_in -> device_a -> device_b, then mark the point.
  CHECK(infinirtEventRecord(start, upload));
  CHECK(infinirtMemcpyAsync(device_a, host_in, bytes, infinirtMemcpyHostToDevice, upload));
  CHECK(infinirtMemcpyAsync(device_b, device_a, bytes, infinirtMemcpyDeviceToDevice, upload));
  CHECK(infinirtEventRecord(uploaded, upload));

  // download waits for the upload, copies back, and scales the result with a host function.
  Work work{host_out, count};
  CHECK(infinirtStreamWaitEvent(download, uploaded, 0));
  CHECK(infinirtMemcpyAsync(host_out, device_b, bytes, infinirtMemcpyDeviceToHost, download));
  CHECK(infinirtLaunchHostFunc(download, ScaleOnHost, &work));
  CHECK(infinirtEventRecord(stop, download));

  CHECK(infinirtEventSynchronize(stop));
  float milliseconds = 0;
  CHECK(infinirtEventElapsedTime(&milliseconds, start, stop));

  size_t wrong = 0;
  for (size_t i = 0; i < count; ++i) wrong += host_out[i] != 2.0f * static_cast<float>(i);
  std::printf("copied and scaled %zu floats in %.3f ms (events); %zu wrong\n", count, milliseconds,
              wrong);

  CHECK(infinirtEventDestroy(start));
  CHECK(infinirtEventDestroy(uploaded));
  CHECK(infinirtEventDestroy(stop));
  CHECK(infinirtStreamDestroy(upload));
  CHECK(infinirtStreamDestroy(download));
  CHECK(infinirtFree(device_a));
  CHECK(infinirtFree(device_b));
  CHECK(infinirtFreeHost(host_in));
  CHECK(infinirtFreeHost(host_out));
  return wrong == 0 ? 0 : 1;
}
