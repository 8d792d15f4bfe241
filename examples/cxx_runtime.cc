// The C++ runtime layer: the thread's Runtime for its current device, memory from the device's
// caching allocator, copies on the runtime's stream, events that time them, and a graph recorded
// once and replayed. Every failure is an infinirt::Error.
#include <cstdio>
#include <infinirt/runtime.hpp>
#include <vector>

namespace {

// An operator: issues work on the stream it is given (recorded, during a graph recording).
class Scale2ByCopies : public infinirt::GraphOperator {
 public:
  Scale2ByCopies(infinirt::Runtime* runtime, const infinirt::Memory& from,
                 const infinirt::Memory& to)
      : runtime_(runtime), from_(from), to_(to) {}
  void run(infinirtStream_t stream) override {
    // Scratch memory allocated while recording stays the graph's until the graph goes.
    auto scratch = runtime_->allocateMemory(from_.size());
    INFINIRT_CHECK(infinirtMemcpyAsync(scratch->data(), from_.data(), from_.size(),
                                       infinirtMemcpyDeviceToDevice, stream));
    INFINIRT_CHECK(infinirtMemcpyAsync(to_.data(), scratch->data(), from_.size(),
                                       infinirtMemcpyDeviceToDevice, stream));
  }

 private:
  infinirt::Runtime* runtime_;
  const infinirt::Memory& from_;
  const infinirt::Memory& to_;
};

}  // namespace

int main() {
  try {
    infinirt::Runtime* runtime = infinirt::context::getRuntime();
    std::printf("%s\n", runtime->toString().c_str());

    const size_t count = 1 << 20;
    const size_t bytes = count * sizeof(float);
    std::shared_ptr<infinirt::Memory> staging = runtime->allocatePinnedHostMemory(bytes);
    std::shared_ptr<infinirt::Memory> a = runtime->allocateMemory(bytes);
    std::shared_ptr<infinirt::Memory> b = runtime->allocateMemory(bytes);
    auto* values = reinterpret_cast<float*>(staging->data());
    for (size_t i = 0; i < count; ++i) values[i] = static_cast<float>(i);

    infinirtEvent_t start = runtime->createEvent();
    infinirtEvent_t stop = runtime->createEvent();
    runtime->recordEvent(start);
    runtime->memcpyH2D(a->data(), staging->data(), bytes);  // asynchronous, on the stream
    runtime->memcpyD2D(b->data(), a->data(), bytes);
    runtime->recordEvent(stop);
    std::vector<float> back(count);
    runtime->memcpyD2H(back.data(), b->data(), bytes);  // waits for the stream's copies
    runtime->synchronizeEvent(stop);
    std::printf("copied %zu MiB there and back in %.3f ms (events)\n", bytes >> 20,
                runtime->elapsedTime(start, stop));
    runtime->destroyEvent(start);
    runtime->destroyEvent(stop);

    size_t wrong = 0;
    for (size_t i = 0; i < count; ++i) wrong += back[i] != static_cast<float>(i);

    // Record a -> scratch -> b once, replay it ten times.
    runtime->startGraphRecording();
    runtime->addGraphOperator(std::make_shared<Scale2ByCopies>(runtime, *a, *b));
    std::shared_ptr<infinirt::Graph> graph = runtime->stopGraphRecording();
    for (int replay = 0; replay < 10; ++replay) {
      values[0] = static_cast<float>(replay);
      runtime->memcpyH2D(a->data(), staging->data(), bytes);
      graph->execute();
      runtime->memcpyD2H(back.data(), b->data(), bytes);
      wrong += back[0] != static_cast<float>(replay);
    }
    std::printf("a graph of %zu operator(s) replayed 10 times\n", graph->operatorCount());
    std::printf("%zu wrong\n", wrong);
    std::printf("%s", infinirt::allocator::summary(runtime->device()).c_str());

    // Bad input is an exception with the C API's error code, never a crash.
    try {
      runtime->allocateMemory(0);
    } catch (const infinirt::Error& error) {
      std::printf("allocateMemory(0): %s\n", error.name());
    }
    return wrong == 0 ? 0 : 1;
  } catch (const infinirt::Error& error) {
    std::fprintf(stderr, "%s\n", error.what());
    return 1;
  }
}
