// Copies and event waits between devices of different backends, which the core stages through
// host memory (core/api_support.h, StagedCopy). Runs with two emulated vendor backends and the
// CPU: emulated NVIDIA (2 devices) and emulated MetaX (1 device), so the ordinals are
// 0, 1 = NVIDIA, 2 = MetaX, 3 = CPU (docs/architecture.md#devices: by device type, CPU last).
#include <gtest/gtest.h>

#include <atomic>
#include <chrono>
#include <cstring>
#include <thread>
#include <vector>

#include "infinirt.h"
#include "test_support.h"

namespace infinirt::vendor_test {
namespace {

using infinirt::testing::Gate;
using infinirt::testing::WaitUntil;

constexpr int kNvidia0 = 0;
constexpr int kNvidia1 = 1;
constexpr int kMetax = 2;
constexpr int kCpu = 3;

std::vector<unsigned char> Pattern(size_t bytes, unsigned char seed) {
  std::vector<unsigned char> data(bytes);
  for (size_t i = 0; i < bytes; ++i) data[i] = static_cast<unsigned char>(seed + i * 31 + i / 7);
  return data;
}

class CrossBackend : public ::testing::Test {
 protected:
  void SetUp() override {
    int counts[INFINI_DEVICE_TYPE_COUNT] = {};
    ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
    ASSERT_EQ(counts[INFINI_DEVICE_NVIDIA], 2) << "emulated NVIDIA with 2 devices expected";
    ASSERT_EQ(counts[INFINI_DEVICE_METAX], 1) << "emulated MetaX expected";
    ASSERT_EQ(counts[INFINI_DEVICE_CPU], 1);
  }
  void TearDown() override {
    for (auto& [device, memory] : allocations_) {
      infinirtSetDevice(device);
      infinirtDeviceSynchronize();
      infinirtFree(memory);
    }
    infinirtSetDevice(0);
    infinirtGetLastError();
  }

  void* Allocate(int device, size_t bytes) {
    void* memory = nullptr;
    EXPECT_EQ(infinirtSetDevice(device), infinirtSuccess);
    EXPECT_EQ(infinirtMalloc(&memory, bytes), infinirtSuccess);
    if (memory != nullptr) allocations_.emplace_back(device, memory);
    return memory;
  }
  // Device memory on `device` holding `data` (written by that device's own backend).
  void* Upload(int device, const std::vector<unsigned char>& data) {
    void* memory = Allocate(device, data.size());
    EXPECT_EQ(infinirtMemcpy(memory, data.data(), data.size(), infinirtMemcpyHostToDevice),
              infinirtSuccess);
    return memory;
  }
  std::vector<unsigned char> Download(const void* memory, size_t bytes) {
    std::vector<unsigned char> data(bytes);
    EXPECT_EQ(infinirtMemcpy(data.data(), memory, bytes, infinirtMemcpyDeviceToHost),
              infinirtSuccess);
    return data;
  }

 private:
  std::vector<std::pair<int, void*>> allocations_;
};

TEST_F(CrossBackend, DeviceToDeviceCopiesArriveByteForByte) {
  const std::vector<unsigned char> data = Pattern(100000, 3);
  void* nvidia = Upload(kNvidia0, data);
  void* metax = Allocate(kMetax, data.size());
  void* cpu = Allocate(kCpu, data.size());
  ASSERT_EQ(infinirtMemcpy(metax, nvidia, data.size(), infinirtMemcpyDeviceToDevice),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemcpy(cpu, metax, data.size(), infinirtMemcpyDefault), infinirtSuccess);
  EXPECT_EQ(Download(metax, data.size()), data);
  EXPECT_EQ(Download(cpu, data.size()), data);
}

// Larger than the 4 MiB staging chunk, and not a multiple of it.
TEST_F(CrossBackend, LargeCopiesGoThroughInChunks) {
  const std::vector<unsigned char> data = Pattern((9u << 20) + 123, 11);
  void* cpu = Upload(kCpu, data);
  void* nvidia = Allocate(kNvidia1, data.size());
  ASSERT_EQ(infinirtMemcpy(nvidia, cpu, data.size(), infinirtMemcpyDefault), infinirtSuccess);
  EXPECT_EQ(Download(nvidia, data.size()), data);
}

// An asynchronous copy issued to a stream of one backend starts after the stream's earlier
// work, even when the other side of the copy belongs to another backend.
TEST_F(CrossBackend, AsyncCopyWaitsForTheStreamsEarlierWork) {
  const size_t bytes = 4096;
  const std::vector<unsigned char> first = Pattern(bytes, 1);
  const std::vector<unsigned char> second = Pattern(bytes, 2);
  void* metax = Upload(kMetax, first);
  void* cpu = Allocate(kCpu, bytes);
  ASSERT_EQ(infinirtSetDevice(kMetax), infinirtSuccess);
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  // The stream first overwrites the MetaX memory, behind a gate; the copy to the CPU must see
  // the second pattern.
  std::vector<unsigned char>& staged = *new std::vector<unsigned char>(second);  // outlives
  Gate gate;
  ASSERT_EQ(gate.Block(stream), infinirtSuccess);
  ASSERT_EQ(infinirtMemcpyAsync(metax, staged.data(), bytes, infinirtMemcpyHostToDevice, stream),
            infinirtSuccess);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.Open();
  });
  ASSERT_EQ(infinirtMemcpyAsync(cpu, metax, bytes, infinirtMemcpyDeviceToDevice, stream),
            infinirtSuccess);
  opener.join();
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(Download(cpu, bytes), second);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
  delete &staged;
}

TEST_F(CrossBackend, HostMemoryOfOneBackendWithDeviceMemoryOfAnother) {
  const size_t bytes = 8192;
  const std::vector<unsigned char> data = Pattern(bytes, 9);
  ASSERT_EQ(infinirtSetDevice(kNvidia0), infinirtSuccess);
  void* pinned = nullptr;  // pinned by NVIDIA
  ASSERT_EQ(infinirtMallocHost(&pinned, bytes), infinirtSuccess);
  std::memcpy(pinned, data.data(), bytes);
  void* metax = Allocate(kMetax, bytes);
  ASSERT_EQ(infinirtMemcpy(metax, pinned, bytes, infinirtMemcpyDefault), infinirtSuccess);
  EXPECT_EQ(Download(metax, bytes), data);
  EXPECT_EQ(infinirtFreeHost(pinned), infinirtSuccess);
}

// A stream of NVIDIA device 0 copying from MetaX memory into host memory: the MetaX backend
// reads, after the NVIDIA stream's earlier work.
TEST_F(CrossBackend, StreamOfOneBackendCopyingOtherBackendsMemoryToHost) {
  const size_t bytes = 2048;
  const std::vector<unsigned char> data = Pattern(bytes, 21);
  void* metax = Upload(kMetax, data);
  ASSERT_EQ(infinirtSetDevice(kNvidia0), infinirtSuccess);
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  std::vector<unsigned char> host(bytes);
  ASSERT_EQ(infinirtMemcpyAsync(host.data(), metax, bytes, infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(host, data);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
}

TEST_F(CrossBackend, CopiesBetweenBackendsCannotBeCaptured) {
  void* nvidia = Allocate(kNvidia0, 64);
  void* metax = Allocate(kMetax, 64);
  ASSERT_EQ(infinirtSetDevice(kNvidia0), infinirtSuccess);
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(metax, nvidia, 64, infinirtMemcpyDefault, stream),
            infinirtErrorStreamCaptureUnsupported);
  infinirtGraph_t graph = nullptr;
  EXPECT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtErrorStreamCaptureInvalidated)
      << "the refused copy must invalidate the capture";
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
  infinirtGetLastError();
}

TEST_F(CrossBackend, WaitsOnAnotherBackendsEventCannotBeCaptured) {
  ASSERT_EQ(infinirtSetDevice(kMetax), infinirtSuccess);
  infinirtEvent_t event = nullptr;
  ASSERT_EQ(infinirtEventCreate(&event), infinirtSuccess);
  ASSERT_EQ(infinirtEventRecord(event, infinirtStreamLegacy), infinirtSuccess);
  ASSERT_EQ(infinirtSetDevice(kNvidia0), infinirtSuccess);
  infinirtStream_t stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal), infinirtSuccess);
  EXPECT_EQ(infinirtStreamWaitEvent(stream, event, 0), infinirtErrorStreamCaptureUnsupported);
  infinirtGraph_t graph = nullptr;
  EXPECT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtErrorStreamCaptureInvalidated);
  EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
  EXPECT_EQ(infinirtEventDestroy(event), infinirtSuccess);
  infinirtGetLastError();
}

// A stream waiting on another backend's event: work issued to it afterwards runs after the
// event's work (the host waits for the event).
TEST_F(CrossBackend, StreamWaitsForAnEventOfAnotherBackend) {
  ASSERT_EQ(infinirtSetDevice(kMetax), infinirtSuccess);
  infinirtStream_t metax_stream = nullptr;
  infinirtEvent_t event = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&metax_stream), infinirtSuccess);
  ASSERT_EQ(infinirtEventCreate(&event), infinirtSuccess);
  Gate gate;
  ASSERT_EQ(gate.Block(metax_stream), infinirtSuccess);
  ASSERT_EQ(infinirtEventRecord(event, metax_stream), infinirtSuccess);

  ASSERT_EQ(infinirtSetDevice(kNvidia0), infinirtSuccess);
  infinirtStream_t nvidia_stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&nvidia_stream), infinirtSuccess);
  std::thread opener([&] {
    std::this_thread::sleep_for(std::chrono::milliseconds(50));
    gate.Open();
  });
  ASSERT_EQ(infinirtStreamWaitEvent(nvidia_stream, event, 0), infinirtSuccess);
  EXPECT_GE(gate.entered(), 1);
  EXPECT_EQ(infinirtEventQuery(event), infinirtSuccess) << "the wait returned before the event";
  opener.join();
  EXPECT_EQ(infinirtStreamDestroy(nvidia_stream), infinirtSuccess);
  ASSERT_EQ(infinirtSetDevice(kMetax), infinirtSuccess);
  EXPECT_EQ(infinirtStreamDestroy(metax_stream), infinirtSuccess);
  EXPECT_EQ(infinirtEventDestroy(event), infinirtSuccess);
}

}  // namespace
}  // namespace infinirt::vendor_test
