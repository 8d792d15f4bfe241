// Cross-backend copies: device 0 (the backend under test) and the last device, which the
// driver makes the CPU backend's (INFINIRT_BACKENDS=<backend>,cpu: the CPU's devices come last)
// or, for the CPU backend itself, its second device (INFINIRT_CPU_DEVICES=2). The core stages
// copies between backends through host memory and makes a stream wait for another backend's
// event on the host (docs/architecture.md); tests/vendor_plugins/cross_backend_test.cc tests
// the same over emulated runtimes with fixed device numbers.
#include <memory>
#include <vector>

#include "conformance.h"

namespace infinirt::selftest {
namespace {

using ::infinirt::conformance::DelayedOpen;
using ::infinirt::testing::Gate;

// Larger than the core's 4 MiB staging chunk, and not a multiple of it.
constexpr size_t kLargeBytes = (9u << 20) + 123;
constexpr size_t kBytes = 64 * 1024;

std::vector<unsigned char> Pattern(size_t bytes, unsigned char seed) {
  std::vector<unsigned char> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(seed + i * 31 + i / 7);
  return data;
}

class CrossBackendCopies : public ::testing::Test {
 protected:
  void SetUp() override {
    int count = 0;
    ASSERT_EQ(infinirtGetDeviceCount(&count), infinirtSuccess);
    if (count < 2) GTEST_SKIP() << "needs a second device (the CPU backend's)";
    peer_ = count - 1;
    infinirtDeviceProp under_test{}, peer{};
    ASSERT_EQ(infinirtGetDeviceProperties(&under_test, 0), infinirtSuccess);
    ASSERT_EQ(infinirtGetDeviceProperties(&peer, peer_), infinirtSuccess);
    ASSERT_STREQ(peer.backendName, "cpu") << "the last device is expected to be the CPU's";
  }

  void TearDown() override {
    for (auto& gate : gates_) gate->Open();
    for (auto& [device, stream] : streams_) {
      infinirtSetDevice(device);
      infinirtStreamSynchronize(stream);
      infinirtStreamDestroy(stream);
    }
    for (infinirtEvent_t event : events_) infinirtEventDestroy(event);
    for (auto& [device, memory] : memory_) {
      infinirtSetDevice(device);
      infinirtDeviceSynchronize();
      infinirtFree(memory);
    }
    infinirtSetDevice(0);
    infinirtGetLastError();
  }

  unsigned char* Allocate(int device, size_t bytes) {
    void* memory = nullptr;
    EXPECT_EQ(infinirtSetDevice(device), infinirtSuccess);
    EXPECT_EQ(infinirtMalloc(&memory, bytes), infinirtSuccess);
    if (memory != nullptr) memory_.emplace_back(device, memory);
    return static_cast<unsigned char*>(memory);
  }
  // Device memory of `device` holding `data`, written by that device's own backend.
  unsigned char* Upload(int device, const std::vector<unsigned char>& data) {
    unsigned char* memory = Allocate(device, data.size());
    EXPECT_EQ(infinirtMemcpy(memory, data.data(), data.size(), infinirtMemcpyHostToDevice),
              infinirtSuccess);
    return memory;
  }
  std::vector<unsigned char> Download(int device, const void* memory, size_t bytes) {
    std::vector<unsigned char> data(bytes);
    EXPECT_EQ(infinirtSetDevice(device), infinirtSuccess);
    EXPECT_EQ(infinirtMemcpy(data.data(), memory, bytes, infinirtMemcpyDeviceToHost),
              infinirtSuccess);
    return data;
  }
  infinirtStream_t NewStream(int device) {
    infinirtStream_t stream = nullptr;
    EXPECT_EQ(infinirtSetDevice(device), infinirtSuccess);
    EXPECT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
    if (stream != nullptr) streams_.emplace_back(device, stream);
    return stream;
  }
  infinirtEvent_t NewEvent(int device) {
    infinirtEvent_t event = nullptr;
    EXPECT_EQ(infinirtSetDevice(device), infinirtSuccess);
    EXPECT_EQ(infinirtEventCreate(&event), infinirtSuccess);
    if (event != nullptr) events_.push_back(event);
    return event;
  }

  // Owned by the fixture, so that a host function still spinning on it when a failed assertion
  // ends the test early never reads a destroyed gate.
  Gate& NewGate() {
    gates_.push_back(std::make_unique<Gate>());
    return *gates_.back();
  }

  // Host memory that outlives the test's queued work, even when an assertion ends it early.
  const std::vector<unsigned char>& Keep(std::vector<unsigned char> data) {
    kept_.push_back(std::make_unique<std::vector<unsigned char>>(std::move(data)));
    return *kept_.back();
  }

  int peer() const { return peer_; }

 private:
  int peer_ = 0;
  std::vector<std::unique_ptr<Gate>> gates_;
  std::vector<std::unique_ptr<std::vector<unsigned char>>> kept_;
  std::vector<std::pair<int, infinirtStream_t>> streams_;
  std::vector<infinirtEvent_t> events_;
  std::vector<std::pair<int, void*>> memory_;
};

TEST_F(CrossBackendCopies, MemcpyToTheCpuDeviceAndBack) {
  const std::vector<unsigned char> data = Pattern(kBytes, 3);
  unsigned char* device = Upload(0, data);
  unsigned char* cpu = Allocate(peer(), kBytes);
  unsigned char* back = Allocate(0, kBytes);
  ASSERT_NE(back, nullptr);
  ASSERT_EQ(infinirtMemcpy(cpu, device, kBytes, infinirtMemcpyDeviceToDevice), infinirtSuccess);
  ASSERT_EQ(infinirtMemcpy(back, cpu, kBytes, infinirtMemcpyDefault), infinirtSuccess);
  EXPECT_EQ(Download(peer(), cpu, kBytes), data);
  EXPECT_EQ(Download(0, back, kBytes), data);
}

TEST_F(CrossBackendCopies, LargeMemcpyBothWays) {
  const std::vector<unsigned char> data = Pattern(kLargeBytes, 11);
  unsigned char* cpu = Upload(peer(), data);
  unsigned char* device = Allocate(0, kLargeBytes);
  unsigned char* back = Allocate(peer(), kLargeBytes);
  ASSERT_NE(back, nullptr);
  ASSERT_EQ(infinirtMemcpy(device, cpu, kLargeBytes, infinirtMemcpyDefault), infinirtSuccess);
  ASSERT_EQ(infinirtMemcpy(back, device, kLargeBytes, infinirtMemcpyDeviceToDevice),
            infinirtSuccess);
  EXPECT_EQ(Download(0, device, kLargeBytes), data);
  EXPECT_EQ(Download(peer(), back, kLargeBytes), data);
}

// Each direction issued to a stream of either side: the copy comes after its stream's earlier
// work (held by a gate that another thread opens: a copy between backends may wait for it on the
// host) and has arrived when its stream is synchronized.
TEST_F(CrossBackendCopies, MemcpyAsyncBothWaysAfterTheStreamsEarlierWork) {
  const std::vector<unsigned char>& later = Keep(Pattern(kBytes, 6));
  unsigned char* device = Upload(0, Pattern(kBytes, 5));
  unsigned char* cpu = Allocate(peer(), kBytes);
  unsigned char* back = Allocate(0, kBytes);
  ASSERT_NE(back, nullptr);
  infinirtStream_t device_stream = NewStream(0);
  infinirtStream_t cpu_stream = NewStream(peer());
  {
    Gate& gate = NewGate();
    ASSERT_EQ(gate.Block(device_stream), infinirtSuccess);
    ASSERT_EQ(infinirtMemcpyAsync(device, later.data(), kBytes, infinirtMemcpyHostToDevice,
                                  device_stream),
              infinirtSuccess);
    DelayedOpen open(gate);
    ASSERT_EQ(infinirtMemcpyAsync(cpu, device, kBytes, infinirtMemcpyDeviceToDevice, device_stream),
              infinirtSuccess);
    ASSERT_EQ(infinirtStreamSynchronize(device_stream), infinirtSuccess);
  }
  EXPECT_EQ(Download(peer(), cpu, kBytes), later) << "the copy did not follow the stream's work";
  {
    Gate& gate = NewGate();
    ASSERT_EQ(gate.Block(cpu_stream), infinirtSuccess);
    ASSERT_EQ(infinirtMemsetAsync(cpu, 9, kBytes, cpu_stream), infinirtSuccess);
    DelayedOpen open(gate);
    ASSERT_EQ(infinirtMemcpyAsync(back, cpu, kBytes, infinirtMemcpyDefault, cpu_stream),
              infinirtSuccess);
    ASSERT_EQ(infinirtStreamSynchronize(cpu_stream), infinirtSuccess);
  }
  EXPECT_EQ(Download(0, back, kBytes), std::vector<unsigned char>(kBytes, 9))
      << "the copy did not follow the stream's work";
}

// A CPU stream waiting for an event of the backend under test (the wait may happen on the
// host): what it does afterwards sees the event's work.
TEST_F(CrossBackendCopies, AStreamWaitsForAnEventOfTheOtherBackend) {
  unsigned char* device = Allocate(0, kBytes);
  unsigned char* cpu = Allocate(peer(), kBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(cpu, nullptr);
  ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);
  ASSERT_EQ(infinirtMemset(device, 1, kBytes), infinirtSuccess);
  infinirtStream_t device_stream = NewStream(0);
  infinirtStream_t cpu_stream = NewStream(peer());
  infinirtEvent_t written = NewEvent(0);
  {
    Gate& gate = NewGate();
    ASSERT_EQ(gate.Block(device_stream), infinirtSuccess);
    ASSERT_EQ(infinirtMemsetAsync(device, 7, kBytes, device_stream), infinirtSuccess);
    ASSERT_EQ(infinirtEventRecord(written, device_stream), infinirtSuccess);
    DelayedOpen open(gate);
    ASSERT_EQ(infinirtSetDevice(peer()), infinirtSuccess);
    ASSERT_EQ(infinirtStreamWaitEvent(cpu_stream, written, 0), infinirtSuccess);
    ASSERT_EQ(infinirtMemcpyAsync(cpu, device, kBytes, infinirtMemcpyDeviceToDevice, cpu_stream),
              infinirtSuccess);
    ASSERT_EQ(infinirtStreamSynchronize(cpu_stream), infinirtSuccess);
  }
  EXPECT_EQ(Download(peer(), cpu, kBytes), std::vector<unsigned char>(kBytes, 7))
      << "the CPU stream did not wait for the other backend's event";
}

}  // namespace
}  // namespace infinirt::selftest
