// The C++ runtime layer: the thread's Runtime for its current device, memory from the device's
// allocator, copies on the runtime's stream, and events that time them. Every failure is an
// infinirt::Error.
#include <cstdio>
#include <infinirt/runtime.hpp>
#include <vector>

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
    std::printf("%zu wrong\n", wrong);

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
