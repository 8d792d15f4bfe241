// Every method of infinirt::Runtime, on the calling thread's runtime of device 0 (the CPU
// backend, or a vendor plugin over its emulated runtime).
#include "infinirt/runtime.hpp"

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <numeric>
#include <string>
#include <vector>

#include "error_of.h"
#include "infiniop.h"
#include "infinirt_vendor_table.h"
#include "test_support.h"

namespace infinirt {
namespace {

using testing::ErrorOf;

std::vector<unsigned char> Pattern(size_t size, unsigned char seed) {
  std::vector<unsigned char> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = static_cast<unsigned char>(seed + i * 7);
  return bytes;
}

class RuntimeTest : public ::testing::Test {
 protected:
  Runtime* runtime = context::getRuntime();
};

TEST_F(RuntimeTest, BelongsToTheCurrentDeviceAndHasItsOwnStream) {
  EXPECT_EQ(runtime->device(), context::getDevice());
  EXPECT_NE(runtime->stream(), nullptr);
  EXPECT_EQ(context::getRuntime(), runtime);  // the same one, for the same thread and device
  EXPECT_NE(runtime->toString().find(runtime->device().toString()), std::string::npos);
}

// Whether the vendor table gives a device type an operator backend.
bool HasOperatorBackend(infiniDevice_t device_type) {
  switch (device_type) {
#define RUNTIME_TEST_OPERATOR_BACKEND_(name, enumerator, family, engine, dlpack, operator_backend) \
  case INFINI_DEVICE_##enumerator:                                                                 \
    return operator_backend != 0;
    INFINIRT_VENDOR_TABLE(RUNTIME_TEST_OPERATOR_BACKEND_)
#undef RUNTIME_TEST_OPERATOR_BACKEND_
    default:
      return false;
  }
}

// The InfiniOP handle: made once, for the runtime's device, where the device type has an operator
// backend (config/vendors.json); elsewhere NotSupported.
TEST_F(RuntimeTest, InfiniopHandleIsMadeOnceForTheRuntimesDevice) {
  const infiniDevice_t device_type = runtime->device().type();
  if (!HasOperatorBackend(device_type)) {
    EXPECT_EQ(ErrorOf([&] { runtime->infiniopHandle(); }), infinirtErrorNotSupported);
    return;
  }
  infiniopHandle_t handle = runtime->infiniopHandle();
  ASSERT_NE(handle, nullptr);
  EXPECT_EQ(runtime->infiniopHandle(), handle);
  // The emulated CUDA-family runtimes cannot run kernels: the descriptor's side is the CPU's here.
  if (device_type != INFINI_DEVICE_CPU) return;
  const size_t shape[] = {4};
  infiniopTensorDescriptor_t tensor = nullptr;
  ASSERT_EQ(infiniopCreateTensorDescriptor(&tensor, 1, shape, nullptr, INFINI_DTYPE_F32),
            INFINI_STATUS_SUCCESS);
  infiniopAddDescriptor_t add = nullptr;
  ASSERT_EQ(infiniopCreateAddDescriptor(handle, &add, tensor, tensor, tensor),
            INFINI_STATUS_SUCCESS);
  infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
  int index = -1;
  EXPECT_EQ(infiniopGetDescriptorDeviceType(add, &type), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopGetDescriptorDeviceId(add, &index), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(type, runtime->device().type());
  EXPECT_EQ(index, runtime->device().index());
  EXPECT_EQ(infiniopDestroyAddDescriptor(add), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopDestroyTensorDescriptor(tensor), INFINI_STATUS_SUCCESS);
}

TEST_F(RuntimeTest, ActivateMakesItsDeviceCurrentAndReturnsItself) {
  EXPECT_EQ(runtime->activate(), runtime);
  int ordinal = -1;
  ASSERT_EQ(infinirtGetDevice(&ordinal), infinirtSuccess);
  EXPECT_EQ(ordinal, runtime->device().ordinal());
}

TEST_F(RuntimeTest, CopiesRoundTripThroughDeviceMemory) {
  constexpr size_t kSize = 1 << 16;
  const std::vector<unsigned char> source = Pattern(kSize, 3);
  std::shared_ptr<Memory> first = runtime->allocateMemory(kSize);
  std::shared_ptr<Memory> second = runtime->allocateMemory(kSize);
  ASSERT_NE(first->data(), nullptr);
  EXPECT_EQ(first->size(), kSize);
  EXPECT_EQ(first->device(), runtime->device());
  EXPECT_FALSE(first->is_pinned());

  runtime->memcpyH2D(first->data(), source.data(), kSize);  // on the stream
  runtime->memcpyD2D(second->data(), first->data(), kSize);
  runtime->syncStream();
  std::vector<unsigned char> back(kSize, 0);
  runtime->memcpyD2H(back.data(), second->data(), kSize);
  EXPECT_EQ(back, source);

  const std::vector<unsigned char> other = Pattern(kSize, 99);
  runtime->memcpyH2D(first->data(), other.data(), kSize, /*async=*/false);
  runtime->memcpyD2D(second->data(), first->data(), kSize, /*async=*/false);
  runtime->memcpyD2H(back.data(), second->data(), kSize);
  EXPECT_EQ(back, other);
  runtime->syncDevice();
}

TEST_F(RuntimeTest, CopiesOnTheStreamAreOrderedWithTheSynchronousRead) {
  // memcpyD2H waits for what the runtime's stream was given before it.
  constexpr size_t kSize = 256 << 10;
  const std::vector<unsigned char> source = Pattern(kSize, 11);
  std::shared_ptr<Memory> device = runtime->allocateMemory(kSize);
  std::vector<unsigned char> back(kSize, 0);
  for (int round = 0; round < 10; ++round) {
    runtime->memcpyH2D(device->data(), source.data(), kSize);
    runtime->memcpyD2H(back.data(), device->data(), kSize);
    ASSERT_EQ(back, source) << "round " << round;
    std::fill(back.begin(), back.end(), 0);
  }
}

TEST_F(RuntimeTest, PinnedHostMemoryIsUsableForCopies) {
  constexpr size_t kSize = 4096;
  std::shared_ptr<Memory> pinned = runtime->allocatePinnedHostMemory(kSize);
  std::shared_ptr<Memory> device = runtime->allocateMemory(kSize);
  EXPECT_TRUE(pinned->is_pinned());
  EXPECT_EQ(pinned->size(), kSize);
  const std::vector<unsigned char> source = Pattern(kSize, 5);
  std::memcpy(pinned->data(), source.data(), kSize);
  runtime->memcpyH2D(device->data(), pinned->data(), kSize);
  runtime->syncStream();  // the asynchronous copy reads the pinned memory until it is done
  std::memset(pinned->data(), 0, kSize);
  runtime->memcpyD2H(pinned->data(), device->data(), kSize);
  EXPECT_EQ(std::memcmp(pinned->data(), source.data(), kSize), 0);
}

TEST_F(RuntimeTest, ZeroAndAbsurdSizesAreErrors) {
  EXPECT_EQ(ErrorOf([&] { runtime->allocateMemory(0); }), infinirtErrorInvalidValue);
  EXPECT_EQ(ErrorOf([&] { runtime->allocatePinnedHostMemory(0); }), infinirtErrorInvalidValue);
  EXPECT_EQ(ErrorOf([&] { runtime->allocateMemory(SIZE_MAX); }), infinirtErrorMemoryAllocation);
  EXPECT_EQ(ErrorOf([&] { runtime->allocatePinnedHostMemory(SIZE_MAX / 2); }),
            infinirtErrorMemoryAllocation);
  // Still usable afterwards, and the failures left no sticky last error behind.
  EXPECT_EQ(infinirtGetLastError(), infinirtSuccess);
  EXPECT_NE(runtime->allocateMemory(64)->data(), nullptr);
}

TEST_F(RuntimeTest, BadCopyArgumentsAreErrors) {
  std::shared_ptr<Memory> device = runtime->allocateMemory(64);
  char host[128] = {};
  EXPECT_EQ(ErrorOf([&] { runtime->memcpyH2D(nullptr, host, 64); }), infinirtErrorInvalidValue);
  EXPECT_EQ(ErrorOf([&] { runtime->memcpyD2H(host, nullptr, 64); }), infinirtErrorInvalidValue);
  // Past the end of device memory. The core checks copies against what the device handed out,
  // the allocator's segments; so the copy runs past the end of a fresh segment of exactly 2 MiB
  // (no cached block of the large pool is left to serve the request instead).
  allocator::emptyCache(runtime->device());
  const int64_t segments_taken = allocator::stats(runtime->device()).device_allocs;
  std::shared_ptr<Memory> segment = runtime->allocateMemory(2 << 20);
  ASSERT_EQ(allocator::stats(runtime->device()).device_allocs, segments_taken + 1);
  std::byte* last_bytes = segment->data() + segment->size() - 64;
  EXPECT_EQ(ErrorOf([&] { runtime->memcpyH2D(last_bytes, host, 128, false); }),
            infinirtErrorInvalidValue);
  try {
    runtime->memcpyD2D(last_bytes, host, 128);
    FAIL() << "no infinirt::Error";
  } catch (const Error& error) {
    const std::string what = error.what();
    EXPECT_NE(what.find("infinirtMemcpyAsync(size=128, infinirtMemcpyDeviceToDevice) on " +
                        runtime->device().toString()),
              std::string::npos)
        << what;
  }
}

TEST_F(RuntimeTest, EventsTimeTheStreamsWork) {
  infinirtEvent_t start = runtime->createEvent();
  infinirtEvent_t end = runtime->createEventWithFlags(infinirtEventDefault);
  std::shared_ptr<Memory> device = runtime->allocateMemory(1 << 20);
  const std::vector<unsigned char> source = Pattern(1 << 20, 1);
  runtime->recordEvent(start);
  runtime->memcpyH2D(device->data(), source.data(), source.size());
  runtime->recordEvent(end, runtime->stream());
  runtime->synchronizeEvent(end);
  EXPECT_TRUE(runtime->queryEvent(end));
  EXPECT_TRUE(runtime->queryEvent(start));
  EXPECT_GE(runtime->elapsedTime(start, end), 0.0f);
  runtime->destroyEvent(start);
  runtime->destroyEvent(end);
  EXPECT_EQ(ErrorOf([&] { runtime->destroyEvent(end); }), infinirtErrorInvalidResourceHandle);
  EXPECT_EQ(ErrorOf([&] { runtime->recordEvent(nullptr); }), infinirtErrorInvalidResourceHandle);
}

TEST_F(RuntimeTest, AnEventWithoutTimingCannotBeTimed) {
  infinirtEvent_t plain = runtime->createEventWithFlags(infinirtEventDisableTiming);
  infinirtEvent_t timed = runtime->createEvent();
  runtime->recordEvent(timed);
  runtime->recordEvent(plain);
  runtime->syncStream();
  EXPECT_EQ(ErrorOf([&] { runtime->elapsedTime(timed, plain); }),
            infinirtErrorInvalidResourceHandle);
  runtime->destroyEvent(plain);
  runtime->destroyEvent(timed);
}

TEST_F(RuntimeTest, AStreamWaitsForAnEventOfTheRuntimesStream) {
  Stream other;
  constexpr size_t kSize = 1 << 20;
  const std::vector<unsigned char> source = Pattern(kSize, 21);
  std::shared_ptr<Memory> first = runtime->allocateMemory(kSize);
  std::shared_ptr<Memory> second = runtime->allocateMemory(kSize);
  infinirtEvent_t written = runtime->createEvent();
  runtime->memcpyH2D(first->data(), source.data(), kSize);
  runtime->recordEvent(written);
  runtime->streamWaitEvent(other.get(), written);
  ASSERT_EQ(infinirtMemcpyAsync(second->data(), first->data(), kSize, infinirtMemcpyDeviceToDevice,
                                other.get()),
            infinirtSuccess);
  other.synchronize();
  std::vector<unsigned char> back(kSize);
  runtime->memcpyD2H(back.data(), second->data(), kSize);
  EXPECT_EQ(back, source);
  runtime->streamWaitEvent(nullptr, written);  // the runtime's own stream
  runtime->destroyEvent(written);
}

TEST_F(RuntimeTest, TenThousandMemoryCyclesReleaseEverything) {
  // LSan (the sanitizer runs) reports any block not released.
  for (int i = 0; i < 10000; ++i) {
    std::shared_ptr<Memory> memory = runtime->allocateMemory(64 + (i % 7) * 512);
    std::shared_ptr<Memory> copy = memory;
    memory.reset();
    ASSERT_NE(copy->data(), nullptr);
  }
}

TEST_F(RuntimeTest, MemoryDroppedWithACopyQueuedIsReleasedAfterTheCopy) {
  testing::Gate gate;
  const infinirtError_t blocked = gate.Block(runtime->stream());
  if (blocked == infinirtErrorNotSupported) GTEST_SKIP() << "no host functions on this backend";
  ASSERT_EQ(blocked, infinirtSuccess);
  constexpr size_t kSize = 1 << 16;
  const std::vector<unsigned char> source = Pattern(kSize, 8);
  std::shared_ptr<Memory> target = runtime->allocateMemory(kSize);
  std::vector<unsigned char> back(kSize, 0);
  {
    std::shared_ptr<Memory> staging = runtime->allocateMemory(kSize);
    runtime->memcpyH2D(staging->data(), source.data(), kSize);  // queued behind the gate
    runtime->memcpyD2D(target->data(), staging->data(), kSize);
    // staging goes here: its release must wait for the two copies, which wait for the gate.
    std::thread opener([&] {
      gate.WaitEntered();
      gate.Open();
    });
    staging.reset();
    opener.join();
  }
  runtime->memcpyD2H(back.data(), target->data(), kSize);
  EXPECT_EQ(back, source);
  EXPECT_FALSE(gate.timed_out());
}

}  // namespace
}  // namespace infinirt
