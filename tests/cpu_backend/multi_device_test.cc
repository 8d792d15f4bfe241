// The CPU backend as several devices (INFINIRT_CPU_DEVICES, plugins.cpu.devices): each has its
// own streams and legacy stream, its own share of memory, and work on one never waits for work on
// another unless told to (an event), while copies between them and waits across them work. CTest
// runs it with 3 devices from the variable and from the config file, and with malformed values,
// which leave one device (CPU_DEVICES_EXPECTED says how many the run must see).
#include <gtest/gtest.h>

#include <cstdlib>
#include <cstring>
#include <memory>
#include <string>
#include <type_traits>
#include <vector>

#include "infinirt.h"
#include "test_support.h"

namespace infinirt::testing {
namespace {

constexpr size_t kBytes = 4096;

int ExpectedDevices() {
  const char* expected = std::getenv("CPU_DEVICES_EXPECTED");
  return expected != nullptr ? std::atoi(expected) : 0;
}

class CpuDevices : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_GT(ExpectedDevices(), 0) << "CPU_DEVICES_EXPECTED is not set";
    ASSERT_OK(infinirtGetDeviceCount(&count_));
  }
  void TearDown() override {
    infinirtSetDevice(0);
    infinirtDeviceSynchronize();
    infinirtGetLastError();
  }

  // Device memory of `device`, filled with `value` (freed at the end of the test).
  unsigned char* DeviceBuffer(int device, unsigned char value) {
    void* memory = nullptr;
    EXPECT_OK(infinirtSetDevice(device));
    EXPECT_OK(infinirtMalloc(&memory, kBytes));
    EXPECT_OK(infinirtMemset(memory, value, kBytes));
    buffers_.emplace_back(memory);
    return static_cast<unsigned char*>(memory);
  }
  infinirtStream_t StreamOn(int device) {
    infinirtStream_t stream = nullptr;
    EXPECT_OK(infinirtSetDevice(device));
    EXPECT_OK(infinirtStreamCreate(&stream));
    streams_.emplace_back(stream);
    return stream;
  }

  struct Freed {
    void operator()(void* memory) const { infinirtFree(memory); }
  };
  struct Destroyed {
    void operator()(infinirtStream_t stream) const { infinirtStreamDestroy(stream); }
  };
  int count_ = 0;
  std::vector<std::unique_ptr<void, Freed>> buffers_;
  std::vector<std::unique_ptr<std::remove_pointer_t<infinirtStream_t>, Destroyed>> streams_;
};

bool AllBytesAre(const unsigned char* memory, unsigned char value) {
  for (size_t i = 0; i < kBytes; ++i) {
    if (memory[i] != value) return false;
  }
  return true;
}

TEST_F(CpuDevices, EachDeviceHasItsOrdinalNameAndShareOfMemory) {
  ASSERT_EQ(count_, ExpectedDevices());
  size_t total = 0;
  std::vector<std::string> names;
  for (int device = 0; device < count_; ++device) {
    infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
    ASSERT_OK(infinirtDeviceGetType(&type, device));
    EXPECT_EQ(type, INFINI_DEVICE_CPU);
    int ordinal = -1;
    ASSERT_OK(infinirtDeviceGetOrdinal(&ordinal, INFINI_DEVICE_CPU, device));
    EXPECT_EQ(ordinal, device);
    infinirtDeviceProp prop{};
    ASSERT_OK(infinirtGetDeviceProperties(&prop, device));
    names.push_back(prop.name);
    total += prop.totalGlobalMem;
    ASSERT_OK(infinirtSetDevice(device));
    size_t free_bytes = 0, total_bytes = 0;
    ASSERT_OK(infinirtMemGetInfo(&free_bytes, &total_bytes));
    EXPECT_EQ(total_bytes, prop.totalGlobalMem);
    EXPECT_LE(free_bytes, total_bytes);
  }
  if (count_ > 1) {
    EXPECT_EQ(names[1].rfind("CPU 1", 0), 0u) << names[1];
    EXPECT_NE(names[0], names[1]);
  } else {
    EXPECT_EQ(names[0].rfind("CPU", 0), 0u) << names[0];
  }
  infinirtDeviceProp first{};
  ASSERT_OK(infinirtGetDeviceProperties(&first, 0));
  EXPECT_LE(total, first.totalGlobalMem * static_cast<size_t>(count_) + count_)
      << "the shares add up to the host's memory";
}

TEST_F(CpuDevices, AllocationsCountAgainstTheirOwnDevicesShareOnly) {
  if (count_ < 2) GTEST_SKIP() << "one CPU device: it reports the host's figures";
  constexpr size_t kHeld = size_t{64} << 20;
  ASSERT_OK(infinirtSetDevice(1));
  size_t free_before = 0, total = 0;
  ASSERT_OK(infinirtMemGetInfo(&free_before, &total));
  if (free_before < total / 2) {
    GTEST_SKIP() << "the host has less memory available than this device's share: the figures "
                    "follow what is available, not the share";
  }
  void* held = nullptr;
  ASSERT_OK(infinirtMalloc(&held, kHeld));
  size_t free_after = 0;
  ASSERT_OK(infinirtMemGetInfo(&free_after, &total));
  EXPECT_LE(free_after, total - kHeld);
  EXPECT_LE(free_after, free_before);
  // Stream-ordered memory the device's pool holds counts too.
  infinirtStream_t stream = StreamOn(1);
  void* pooled = nullptr;
  ASSERT_OK(infinirtMallocAsync(&pooled, kHeld, stream));
  ASSERT_OK(infinirtStreamSynchronize(stream));
  size_t free_pooled = 0;
  ASSERT_OK(infinirtMemGetInfo(&free_pooled, &total));
  EXPECT_LE(free_pooled, total - 2 * kHeld);
  ASSERT_OK(infinirtFreeAsync(pooled, stream));
  ASSERT_OK(infinirtFree(held));
  // Device 0 holds none of it.
  ASSERT_OK(infinirtSetDevice(0));
  ASSERT_OK(infinirtMalloc(&held, kHeld));
  ASSERT_OK(infinirtSetDevice(1));
  size_t free_again = 0;
  ASSERT_OK(infinirtMemGetInfo(&free_again, &total));
  EXPECT_GT(free_again, free_pooled) << "device 0's allocation counted against device 1";
  ASSERT_OK(infinirtSetDevice(0));
  ASSERT_OK(infinirtFree(held));
}

TEST_F(CpuDevices, StreamsAndLegacyStreamsAreEachDevicesOwn) {
  if (count_ < 2) GTEST_SKIP() << "needs two CPU devices";
  infinirtStream_t held = StreamOn(0);
  int owner = -1;
  ASSERT_OK(infinirtStreamGetDevice(held, &owner));
  EXPECT_EQ(owner, 0);
  unsigned char* held_memory = DeviceBuffer(0, 0);
  unsigned char* memory = DeviceBuffer(1, 0);
  Gate gate;
  ASSERT_OK(infinirtSetDevice(0));
  ASSERT_OK(gate.Block(nullptr));  // device 0's legacy stream
  ASSERT_TRUE(gate.WaitEntered(1));
  // A blocking stream of device 0 waits for device 0's legacy stream.
  ASSERT_OK(infinirtMemsetAsync(held_memory, 9, kBytes, held));
  // Device 1's legacy stream, a stream of its own, and its DeviceSynchronize do not wait for
  // device 0's held streams.
  ASSERT_OK(infinirtSetDevice(1));
  infinirtStream_t free_running = StreamOn(1);
  ASSERT_OK(infinirtMemsetAsync(memory, 1, kBytes, nullptr));
  ASSERT_OK(infinirtMemsetAsync(memory, 2, kBytes, free_running));
  ASSERT_OK(infinirtDeviceSynchronize());
  EXPECT_TRUE(AllBytesAre(memory, 2));
  EXPECT_EQ(infinirtStreamQuery(held), infinirtErrorNotReady) << "device 0 is still held";
  EXPECT_TRUE(AllBytesAre(held_memory, 0));
  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(held));
  EXPECT_TRUE(AllBytesAre(held_memory, 9));
  EXPECT_FALSE(gate.timed_out());
}

TEST_F(CpuDevices, CopiesGoBetweenDevicesAndEventsOrderStreamsAcrossThem) {
  if (count_ < 2) GTEST_SKIP() << "needs two CPU devices";
  unsigned char* source = DeviceBuffer(0, 0x11);
  unsigned char* destination = DeviceBuffer(1, 0);
  infinirtStream_t producer = StreamOn(0);
  infinirtStream_t consumer = StreamOn(1);
  infinirtEvent_t produced = nullptr;
  ASSERT_OK(infinirtSetDevice(0));
  ASSERT_OK(infinirtEventCreate(&produced));
  Gate gate;
  ASSERT_OK(gate.Block(producer));
  ASSERT_OK(infinirtMemsetAsync(source, 0x22, kBytes, producer));
  ASSERT_OK(infinirtEventRecord(produced, producer));
  ASSERT_OK(infinirtSetDevice(1));
  ASSERT_OK(infinirtStreamWaitEvent(consumer, produced, 0));
  ASSERT_OK(
      infinirtMemcpyAsync(destination, source, kBytes, infinirtMemcpyDeviceToDevice, consumer));
  EXPECT_EQ(infinirtStreamQuery(consumer), infinirtErrorNotReady) << "ran past the wait";
  EXPECT_TRUE(AllBytesAre(destination, 0));
  gate.Open();
  ASSERT_OK(infinirtStreamSynchronize(consumer));
  EXPECT_TRUE(AllBytesAre(destination, 0x22)) << "copied before device 0's memset";
  // A synchronous copy with the default kind, between the devices.
  ASSERT_OK(infinirtMemset(destination, 0x33, kBytes));
  ASSERT_OK(infinirtSetDevice(0));
  ASSERT_OK(infinirtMemcpy(source, destination, kBytes, infinirtMemcpyDefault));
  EXPECT_TRUE(AllBytesAre(source, 0x33));
  EXPECT_OK(infinirtEventDestroy(produced));
}

}  // namespace
}  // namespace infinirt::testing
