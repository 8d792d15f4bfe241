// A heterogeneous fleet in one process: emulated NVIDIA with 2 devices, emulated Ascend with 1,
// and the CPU. docs/architecture.md#devices orders ordinals by device type (NVIDIA 1, Ascend 3), by
// the vendor's index, with the CPU last: 0, 1 = NVIDIA 0, 1; 2 = Ascend 0; 3 = CPU. Work on
// each ordinal must reach the right runtime and device (checked in the emulated runtimes' call
// records), and a buffer must travel NVIDIA -> Ascend -> CPU byte for byte.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "emulated_runtime.h"
#include "infinirt.h"
#include "vendor_test_support.h"

namespace infinirt::vendor_test {
namespace {

using infinirt::testing::EmulatedRuntime;

struct Ordinal {
  int device;
  infiniDevice_t type;
  int index;
};
constexpr Ordinal kFleet[] = {
    {0, INFINI_DEVICE_NVIDIA, 0},
    {1, INFINI_DEVICE_NVIDIA, 1},
    {2, INFINI_DEVICE_ASCEND, 0},
    {3, INFINI_DEVICE_CPU, 0},
};

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

class Fleet : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(infinirtInit(), infinirtSuccess);
    nvidia_ = std::make_unique<EmulatedRuntime>(BackendListing("nvidia").runtimeLibrary);
    ascend_ = std::make_unique<EmulatedRuntime>(BackendListing("ascend").runtimeLibrary);
    ASSERT_TRUE(nvidia_->loaded()) << "emulated NVIDIA runtime expected";
    ASSERT_TRUE(ascend_->loaded()) << "emulated Ascend runtime expected";
    nvidia_->Reset();
    ascend_->Reset();
  }
  std::unique_ptr<EmulatedRuntime> nvidia_;
  std::unique_ptr<EmulatedRuntime> ascend_;
};

TEST_F(Fleet, OrdinalsFollowDeviceTypeThenVendorIndexWithTheCpuLast) {
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
  EXPECT_EQ(counts[INFINI_DEVICE_NVIDIA], 2);
  EXPECT_EQ(counts[INFINI_DEVICE_ASCEND], 1);
  EXPECT_EQ(counts[INFINI_DEVICE_CPU], 1);
  int total = 0;
  ASSERT_EQ(infinirtGetDeviceCount(&total), infinirtSuccess);
  EXPECT_EQ(total, 4);
  for (const Ordinal& ordinal : kFleet) {
    infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
    EXPECT_EQ(infinirtDeviceGetType(&type, ordinal.device), infinirtSuccess);
    EXPECT_EQ(type, ordinal.type) << "ordinal " << ordinal.device;
    int device = -1;
    EXPECT_EQ(infinirtDeviceGetOrdinal(&device, ordinal.type, ordinal.index), infinirtSuccess);
    EXPECT_EQ(device, ordinal.device);
  }
}

// Allocations, streams and events made on each ordinal reach its runtime, for its device.
TEST_F(Fleet, WorkOnEachOrdinalReachesTheRightRuntimeAndDevice) {
  for (const Ordinal& ordinal : kFleet) {
    SCOPED_TRACE(ordinal.device);
    ASSERT_EQ(infinirtSetDevice(ordinal.device), infinirtSuccess);
    void* memory = nullptr;
    infinirtStream_t stream = nullptr;
    infinirtEvent_t event = nullptr;
    ASSERT_EQ(infinirtMalloc(&memory, 4096), infinirtSuccess);
    ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
    ASSERT_EQ(infinirtEventCreate(&event), infinirtSuccess);
    ASSERT_EQ(infinirtMemsetAsync(memory, 1, 4096, stream), infinirtSuccess);
    ASSERT_EQ(infinirtEventRecord(event, stream), infinirtSuccess);
    ASSERT_EQ(infinirtEventSynchronize(event), infinirtSuccess);
    EXPECT_EQ(infinirtEventDestroy(event), infinirtSuccess);
    EXPECT_EQ(infinirtStreamDestroy(stream), infinirtSuccess);
    EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
  }
  // NVIDIA saw ordinals 0 and 1 as its devices 0 and 1, and nothing else.
  for (int device = 0; device < 2; ++device) {
    const std::string dev = " dev=" + std::to_string(device) + " ";
    int mallocs = 0, streams = 0, events = 0;
    for (const std::string& line : nvidia_->LogOf("cudaMalloc")) mallocs += Contains(line, dev);
    for (const std::string& line : nvidia_->LogOf("cudaStreamCreateWithFlags")) {
      streams += Contains(line, dev);
    }
    for (const std::string& line : nvidia_->LogOf("cudaEventCreateWithFlags")) {
      events += Contains(line, dev);
    }
    EXPECT_EQ(mallocs, 1) << "cudaMalloc on device " << device;
    EXPECT_EQ(streams, 1) << "cudaStreamCreateWithFlags on device " << device;
    EXPECT_EQ(events, 1) << "cudaEventCreateWithFlags on device " << device;
  }
  EXPECT_EQ(nvidia_->Calls("cudaMalloc"), 2);
  // Ascend saw ordinal 2 as its device 0.
  ASSERT_EQ(ascend_->LogOf("aclrtMalloc").size(), 1u);
  EXPECT_TRUE(Contains(ascend_->LogOf("aclrtMalloc")[0], " dev=0 "))
      << ascend_->LogOf("aclrtMalloc")[0];
  EXPECT_GE(ascend_->Calls("aclrtCreateStream") + ascend_->Calls("aclrtCreateStreamWithConfig"), 1);
  EXPECT_GE(
      ascend_->Calls("aclrtCreateEventExWithFlag") + ascend_->Calls("aclrtCreateEventWithFlag"), 1);
  EXPECT_GE(ascend_->Calls("aclrtMemsetAsync"), 1);
  EXPECT_EQ(ascend_->Calls("cudaMalloc"), 0);
}

TEST_F(Fleet, ABufferTravelsNvidiaToAscendToCpuByteForByte) {
  constexpr size_t kBytes = (5u << 20) + 17;  // more than one staging chunk
  std::vector<unsigned char> data(kBytes);
  for (size_t i = 0; i < kBytes; ++i) data[i] = static_cast<unsigned char>(i * 7 + i / 251);
  void* on_device[3] = {};
  const int ordinals[3] = {1, 2, 3};  // NVIDIA device 1, Ascend, CPU
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(infinirtSetDevice(ordinals[i]), infinirtSuccess);
    ASSERT_EQ(infinirtMalloc(&on_device[i], kBytes), infinirtSuccess);
  }
  ASSERT_EQ(infinirtMemcpy(on_device[0], data.data(), kBytes, infinirtMemcpyHostToDevice),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemcpy(on_device[1], on_device[0], kBytes, infinirtMemcpyDeviceToDevice),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemcpy(on_device[2], on_device[1], kBytes, infinirtMemcpyDefault),
            infinirtSuccess);
  std::vector<unsigned char> arrived(kBytes);
  ASSERT_EQ(infinirtMemcpy(arrived.data(), on_device[2], kBytes, infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  EXPECT_TRUE(arrived == data) << "the buffer changed on its way";
  // Each runtime moved the bytes of its own device.
  EXPECT_GE(nvidia_->Calls("cudaMemcpy"), 2);
  EXPECT_GE(ascend_->Calls("aclrtMemcpy"), 2);
  for (int i = 0; i < 3; ++i) {
    ASSERT_EQ(infinirtSetDevice(ordinals[i]), infinirtSuccess);
    EXPECT_EQ(infinirtFree(on_device[i]), infinirtSuccess);
  }
}

}  // namespace
}  // namespace infinirt::vendor_test
