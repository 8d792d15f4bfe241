// Stream capture and replay, CUDA-style: a fork/join across three streams is captured once
// into a graph, instantiated, and launched many times. Stream-ordered allocation (MallocAsync /
// FreeAsync) inside the capture becomes the graph's own memory.
#include <atomic>
#include <cstdio>
#include <cstdlib>
#include <initializer_list>

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

constexpr int kCount = 1024;
constexpr int kLaunches = 50;

std::atomic<int> branches_done{0};

// Runs on the host in stream order: doubles the staged input in place (pinned memory).
void Double(void* data) {
  auto* values = static_cast<float*>(data);
  for (int i = 0; i < kCount; ++i) values[i] *= 2.0f;
  branches_done.fetch_add(1);
}

}  // namespace

int main() {
  const size_t bytes = kCount * sizeof(float);
  float *input, *left, *right;
  CHECK(infinirtMallocHost(&input, bytes));
  CHECK(infinirtMallocHost(&left, bytes));
  CHECK(infinirtMallocHost(&right, bytes));
  for (int i = 0; i < kCount; ++i) input[i] = static_cast<float>(i);

  infinirtStream_t main_stream, side_a, side_b;
  CHECK(infinirtStreamCreateWithFlags(&main_stream, infinirtStreamNonBlocking));
  CHECK(infinirtStreamCreateWithFlags(&side_a, infinirtStreamNonBlocking));
  CHECK(infinirtStreamCreateWithFlags(&side_b, infinirtStreamNonBlocking));
  infinirtEvent_t forked, a_done, b_done;
  CHECK(infinirtEventCreateWithFlags(&forked, infinirtEventDisableTiming));
  CHECK(infinirtEventCreateWithFlags(&a_done, infinirtEventDisableTiming));
  CHECK(infinirtEventCreateWithFlags(&b_done, infinirtEventDisableTiming));

  // Capture: nothing below runs now; it is recorded.
  CHECK(infinirtStreamBeginCapture(main_stream, infinirtStreamCaptureModeGlobal));
  float* scratch = nullptr;  // graph-owned device memory
  CHECK(infinirtMallocAsync(&scratch, bytes, main_stream));
  CHECK(infinirtMemcpyAsync(scratch, input, bytes, infinirtMemcpyHostToDevice, main_stream));
  CHECK(infinirtEventRecord(forked, main_stream));
  CHECK(infinirtStreamWaitEvent(side_a, forked, 0));  // fork: side_a joins the capture
  CHECK(infinirtStreamWaitEvent(side_b, forked, 0));  // fork: side_b joins the capture
  CHECK(infinirtMemcpyAsync(left, scratch, bytes, infinirtMemcpyDeviceToHost, side_a));
  CHECK(infinirtLaunchHostFunc(side_a, Double, left));
  CHECK(infinirtMemcpyAsync(right, scratch, bytes, infinirtMemcpyDeviceToHost, side_b));
  CHECK(infinirtLaunchHostFunc(side_b, Double, right));
  CHECK(infinirtEventRecord(a_done, side_a));
  CHECK(infinirtEventRecord(b_done, side_b));
  CHECK(infinirtStreamWaitEvent(main_stream, a_done, 0));  // join
  CHECK(infinirtStreamWaitEvent(main_stream, b_done, 0));  // join
  CHECK(infinirtFreeAsync(scratch, main_stream));
  infinirtGraph_t graph;
  CHECK(infinirtStreamEndCapture(main_stream, &graph));
  std::printf("captured; host functions run so far: %d\n", branches_done.load());

  infinirtGraphExec_t exec;
  CHECK(infinirtGraphInstantiate(&exec, graph, 0));
  infinirtEvent_t start, stop;
  CHECK(infinirtEventCreate(&start));
  CHECK(infinirtEventCreate(&stop));
  CHECK(infinirtEventRecord(start, main_stream));
  for (int launch = 0; launch < kLaunches; ++launch) CHECK(infinirtGraphLaunch(exec, main_stream));
  CHECK(infinirtEventRecord(stop, main_stream));
  CHECK(infinirtStreamSynchronize(main_stream));
  float milliseconds = 0;
  CHECK(infinirtEventElapsedTime(&milliseconds, start, stop));

  int wrong = 0;
  for (int i = 0; i < kCount; ++i) {
    wrong += left[i] != 2.0f * i;
    wrong += right[i] != 2.0f * i;
  }
  std::printf("%d launches in %.3f ms; host functions run: %d (expected %d); %d wrong values\n",
              kLaunches, milliseconds, branches_done.load(), 2 * kLaunches, wrong);

  CHECK(infinirtGraphExecDestroy(exec));
  CHECK(infinirtGraphDestroy(graph));
  for (infinirtEvent_t event : {forked, a_done, b_done, start, stop}) {
    CHECK(infinirtEventDestroy(event));
  }
  for (infinirtStream_t stream : {main_stream, side_a, side_b})
    CHECK(infinirtStreamDestroy(stream));
  for (float* buffer : {input, left, right}) CHECK(infinirtFreeHost(buffer));
  return wrong == 0 && branches_done.load() == 2 * kLaunches ? 0 : 1;
}
