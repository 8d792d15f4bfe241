// The per-thread context: one Runtime per thread and device, made at first use, gone with the
// thread.
#include <gtest/gtest.h>

#include <thread>
#include <vector>

#include "infinirt/runtime.hpp"

namespace infinirt {
namespace {

TEST(ContextTest, TheCurrentDeviceStartsAsTheCApisAndFollowsSetDevice) {
  std::thread([] {
    int ordinal = -1;
    ASSERT_EQ(infinirtGetDevice(&ordinal), infinirtSuccess);
    EXPECT_EQ(context::getDevice(), Device::fromOrdinal(ordinal));
    const Device device = Device::fromOrdinal(0);
    context::setDevice(device);
    EXPECT_EQ(context::getDevice(), device);
    EXPECT_EQ(context::getRuntime()->device(), device);
    ASSERT_EQ(infinirtGetDevice(&ordinal), infinirtSuccess);
    EXPECT_EQ(ordinal, 0);
  }).join();
}

TEST(ContextTest, SettingADeviceTheProcessLacksThrowsAndChangesNothing) {
  const Device before = context::getDevice();
  try {
    context::setDevice(Device(INFINI_DEVICE_CPU, 1000));
    FAIL() << "no infinirt::Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), infinirtErrorInvalidDevice);
  }
  EXPECT_EQ(context::getDevice(), before);
}

TEST(ContextTest, EachThreadHasItsOwnRuntimeAndStream) {
  Runtime* mine = context::getRuntime();
  infinirtStream_t theirs = nullptr;
  Runtime* their_runtime = nullptr;
  std::thread([&] {
    their_runtime = context::getRuntime();
    theirs = their_runtime->stream();
    EXPECT_EQ(infinirtStreamQuery(theirs), infinirtSuccess);
  }).join();
  EXPECT_NE(their_runtime, mine);
  EXPECT_NE(theirs, mine->stream());
  // The thread's runtime went with it, and its stream with the runtime.
  EXPECT_EQ(infinirtStreamQuery(theirs), infinirtErrorContextIsDestroyed);
  infinirtGetLastError();
}

TEST(ContextTest, MemoryOutlivesTheThreadAndRuntimeThatMadeIt) {
  std::shared_ptr<Memory> kept;
  std::thread([&] {
    kept = context::getRuntime()->allocateMemory(4096);
    std::vector<unsigned char> bytes(4096, 42);
    context::getRuntime()->memcpyH2D(kept->data(), bytes.data(), bytes.size(), false);
  }).join();
  std::vector<unsigned char> back(4096, 0);
  context::getRuntime()->memcpyD2H(back.data(), kept->data(), back.size());
  EXPECT_EQ(back, std::vector<unsigned char>(4096, 42));
  kept.reset();  // released through the device's allocator, which the memory kept alive
}

TEST(ContextTest, ManyThreadsMakeAndDropTheirRuntimes) {
  std::vector<std::thread> threads;
  for (int t = 0; t < 8; ++t) {
    threads.emplace_back([] {
      for (int i = 0; i < 50; ++i) {
        Runtime* runtime = context::getRuntime();
        auto memory = runtime->allocateMemory(1024);
        std::vector<char> bytes(1024, static_cast<char>(i));
        runtime->memcpyH2D(memory->data(), bytes.data(), bytes.size());
        runtime->syncStream();
      }
    });
  }
  for (std::thread& thread : threads) thread.join();
}

}  // namespace
}  // namespace infinirt
