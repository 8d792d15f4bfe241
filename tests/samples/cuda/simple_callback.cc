// simpleCallback without a kernel: several host threads each queue work on a stream of their own
// and a stream callback after it; each callback sees its stream's data done, its stream and
// success, and runs once.
#include <atomic>
#include <thread>
#include <vector>

#include "sample_check.h"

namespace {

struct Worker {
  int id = 0;
  cudaStream_t stream = nullptr;
  unsigned char* device_data = nullptr;
  unsigned char* host_data = nullptr;
  size_t bytes = 1 << 20;
  std::atomic<int> callbacks{0};
  bool data_was_ready = false;
  bool status_was_success = false;
  bool stream_matched = false;
};

void CUDART_CB WorkerDone(cudaStream_t stream, cudaError_t status, void* data) {
  Worker* worker = static_cast<Worker*>(data);
  worker->status_was_success = status == cudaSuccess;
  worker->stream_matched = stream == worker->stream;
  bool ready = true;
  for (size_t i = 0; i < worker->bytes; ++i) {
    ready = ready && worker->host_data[i] == static_cast<unsigned char>(worker->id + 1);
  }
  worker->data_was_ready = ready;
  ++worker->callbacks;
}

void RunWorker(Worker* worker) {
  CHECK(cudaSetDevice(0));
  CHECK(cudaStreamCreate(&worker->stream));
  CHECK(cudaMalloc(reinterpret_cast<void**>(&worker->device_data), worker->bytes));
  CHECK(cudaMallocHost(reinterpret_cast<void**>(&worker->host_data), worker->bytes));
  CHECK(cudaMemsetAsync(worker->device_data, worker->id + 1, worker->bytes, worker->stream));
  CHECK(cudaMemcpyAsync(worker->host_data, worker->device_data, worker->bytes,
                        cudaMemcpyDeviceToHost, worker->stream));
  CHECK(cudaStreamAddCallback(worker->stream, WorkerDone, worker, 0));
}

}  // namespace

int main() {
  const int kWorkers = 8;
  std::vector<Worker> workers(kWorkers);
  std::vector<std::thread> threads;
  for (int i = 0; i < kWorkers; ++i) {
    workers[i].id = i;
    threads.emplace_back(RunWorker, &workers[i]);
  }
  for (std::thread& thread : threads) thread.join();
  CHECK(cudaDeviceSynchronize());
  for (Worker& worker : workers) {
    EXPECT(worker.callbacks.load() == 1);
    EXPECT(worker.status_was_success);
    EXPECT(worker.stream_matched);
    EXPECT(worker.data_was_ready);
    CHECK(cudaStreamDestroy(worker.stream));
    CHECK(cudaFree(worker.device_data));
    CHECK(cudaFreeHost(worker.host_data));
  }
  std::printf("simpleCallback: %d workers, each callback ran once after its work: PASSED\n",
              kWorkers);
  return 0;
}
