// Every function with an output pointer answers infinirtErrorInvalidValue for NULL, records it
// as the last error, and leaves the runtime usable.
#include <gtest/gtest.h>

#include "bad_input_support.h"
#include "infinirt.h"

namespace infinirt::testing {
namespace {

using NullOutPointerTest = BadInputTest;

TEST_F(NullOutPointerTest, DeviceQueriesRejectNull) {
  EXPECT_ANSWER(infinirtGetDeviceCount(nullptr), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtGetDevice(nullptr), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtGetDeviceProperties(nullptr, 0), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtDeviceGetAttribute(nullptr, infinirtDevAttrWarpSize, 0),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtRuntimeGetVersion(nullptr), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtDriverGetVersion(nullptr), infinirtErrorInvalidValue);
}

TEST_F(NullOutPointerTest, AllocationsRejectNull) {
  EXPECT_ANSWER(infinirtMalloc(nullptr, 64), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMallocHost(nullptr, 64), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtHostAlloc(nullptr, 64, infinirtHostAllocDefault),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtHostAlloc(nullptr, 64, infinirtHostAllocPortable),
                infinirtErrorInvalidValue);
}

// One NULL output is allowed, as on NVIDIA (the other is filled); both NULL is refused.
TEST_F(NullOutPointerTest, MemGetInfoRejectsBothOutputsNull) {
  size_t free_bytes = 0;
  size_t total_bytes = 0;
  EXPECT_ANSWER(infinirtMemGetInfo(nullptr, &total_bytes), infinirtSuccess);
  EXPECT_ANSWER(infinirtMemGetInfo(&free_bytes, nullptr), infinirtSuccess);
  EXPECT_ANSWER(infinirtMemGetInfo(nullptr, nullptr), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtMemGetInfo(&free_bytes, &total_bytes), infinirtSuccess);
  EXPECT_LE(free_bytes, total_bytes);
}

TEST_F(NullOutPointerTest, StreamAndEventCreationRejectNull) {
  EXPECT_ANSWER(infinirtStreamCreate(nullptr), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtStreamCreateWithFlags(nullptr, infinirtStreamDefault),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtStreamCreateWithFlags(nullptr, infinirtStreamNonBlocking),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtEventCreate(nullptr), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtEventCreateWithFlags(nullptr, infinirtEventDefault),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtEventCreateWithFlags(nullptr, infinirtEventDisableTiming),
                infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtEventCreate(nullptr, infinirtEventBlockingSync), infinirtErrorInvalidValue);
}

TEST_F(NullOutPointerTest, EventElapsedTimeRejectsNullResult) {
  infinirtEvent_t start = nullptr;
  infinirtEvent_t end = nullptr;
  ASSERT_OK(infinirtEventCreate(&start));
  ASSERT_OK(infinirtEventCreate(&end));
  ASSERT_OK(infinirtEventRecord(start, nullptr));
  ASSERT_OK(infinirtEventRecord(end, nullptr));
  ASSERT_OK(infinirtEventSynchronize(end));
  EXPECT_ANSWER(infinirtEventElapsedTime(nullptr, start, end), infinirtErrorInvalidValue);
  float ms = -1.0f;
  EXPECT_ANSWER(infinirtEventElapsedTime(&ms, start, end), infinirtSuccess);
  EXPECT_GE(ms, 0.0f);
  EXPECT_OK(infinirtEventDestroy(start));
  EXPECT_OK(infinirtEventDestroy(end));
}

TEST_F(NullOutPointerTest, PointerGetAttributesRejectsNull) {
  void* device = nullptr;
  ASSERT_OK(infinirtMalloc(&device, 64));
  EXPECT_ANSWER(infinirtPointerGetAttributes(nullptr, device), infinirtErrorInvalidValue);
  infinirtPointerAttributes attributes{};
  EXPECT_ANSWER(infinirtPointerGetAttributes(&attributes, nullptr), infinirtErrorInvalidValue);
  EXPECT_OK(infinirtFree(device));
}

TEST_F(NullOutPointerTest, StreamIsCapturingRejectsNullStatusOnEveryKindOfStream) {
  infinirtStream_t created = nullptr;
  ASSERT_OK(infinirtStreamCreate(&created));
  for (infinirtStream_t stream : {created, static_cast<infinirtStream_t>(nullptr),
                                  infinirtStreamLegacy, infinirtStreamPerThread}) {
    SCOPED_TRACE(::testing::Message() << "stream " << static_cast<void*>(stream));
    EXPECT_ANSWER(infinirtStreamIsCapturing(stream, nullptr), infinirtErrorInvalidValue);
  }
  EXPECT_OK(infinirtStreamDestroy(created));
}

TEST_F(NullOutPointerTest, StreamGetCaptureInfoRejectsNullStatusOnEveryKindOfStream) {
  infinirtStream_t created = nullptr;
  ASSERT_OK(infinirtStreamCreate(&created));
  for (infinirtStream_t stream : {created, static_cast<infinirtStream_t>(nullptr),
                                  infinirtStreamLegacy, infinirtStreamPerThread}) {
    SCOPED_TRACE(::testing::Message() << "stream " << static_cast<void*>(stream));
    unsigned long long id = 0;
    infinirtGraph_t graph = nullptr;
    EXPECT_ANSWER(infinirtStreamGetCaptureInfo(stream, nullptr), infinirtErrorInvalidValue);
    EXPECT_ANSWER(infinirtStreamGetCaptureInfo(stream, nullptr, &id, &graph),
                  infinirtErrorInvalidValue);
  }
  EXPECT_OK(infinirtStreamDestroy(created));
}

// Edge data come with the dependencies: asking for one without the other is InvalidValue.
TEST_F(NullOutPointerTest, StreamGetCaptureInfoRejectsEdgeDataWithoutDependencies) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusActive;
  const infinirtGraphEdgeData* edges = nullptr;
  size_t count = 0;
  EXPECT_ANSWER(
      infinirtStreamGetCaptureInfo(stream, &status, nullptr, nullptr, nullptr, &edges, &count),
      infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtStreamGetCaptureInfo(stream, &status), infinirtSuccess);
  EXPECT_EQ(status, infinirtStreamCaptureStatusNone);
  EXPECT_OK(infinirtStreamDestroy(stream));
}

TEST_F(NullOutPointerTest, ThreadExchangeStreamCaptureModeRejectsNull) {
  EXPECT_ANSWER(infinirtThreadExchangeStreamCaptureMode(nullptr), infinirtErrorInvalidValue);
}

// EndCapture(NULL graph) is refused before the capture is looked at: the capture goes on.
TEST_F(NullOutPointerTest, StreamEndCaptureRejectsNullGraph) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  EXPECT_ANSWER(infinirtStreamEndCapture(stream, nullptr), infinirtErrorInvalidValue);
  ASSERT_OK(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeRelaxed));
  const infinirtError_t answer = infinirtStreamEndCapture(stream, nullptr);
  infinirtStreamCaptureStatus status = infinirtStreamCaptureStatusNone;
  EXPECT_OK(infinirtStreamIsCapturing(stream, &status));
  EXPECT_EQ(status, infinirtStreamCaptureStatusActive);
  infinirtGraph_t graph = nullptr;
  EXPECT_OK(infinirtStreamEndCapture(stream, &graph));
  EXPECT_ANSWER(answer, infinirtErrorInvalidValue);
  EXPECT_OK(infinirtGraphDestroy(graph));
  EXPECT_OK(infinirtStreamDestroy(stream));
}

TEST_F(NullOutPointerTest, GraphInstantiateRejectsNullExec) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  ASSERT_OK(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeGlobal));
  infinirtGraph_t graph = nullptr;
  ASSERT_OK(infinirtStreamEndCapture(stream, &graph));
  EXPECT_ANSWER(infinirtGraphInstantiate(nullptr, graph, 0), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtGraphInstantiateWithFlags(nullptr, graph, 0), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtGraphInstantiate(nullptr, nullptr, 0), infinirtErrorInvalidValue);
  EXPECT_OK(infinirtGraphDestroy(graph));
  EXPECT_OK(infinirtStreamDestroy(stream));
}

TEST_F(NullOutPointerTest, MallocAsyncAndDefaultMemPoolRejectNull) {
  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  for (infinirtStream_t target :
       {stream, static_cast<infinirtStream_t>(nullptr), infinirtStreamPerThread}) {
    SCOPED_TRACE(::testing::Message() << "stream " << static_cast<void*>(target));
    EXPECT_ANSWER(infinirtMallocAsync(nullptr, 64, target), infinirtErrorInvalidValue);
    EXPECT_ANSWER(infinirtMallocAsync(nullptr, 0, target), infinirtErrorInvalidValue);
  }
  EXPECT_ANSWER(infinirtDeviceGetDefaultMemPool(nullptr, 0), infinirtErrorInvalidValue);
  EXPECT_OK(infinirtStreamDestroy(stream));
}

TEST_F(NullOutPointerTest, MemPoolAttributesRejectNullValue) {
  infinirtMemPool_t pool = nullptr;
  ASSERT_OK(infinirtDeviceGetDefaultMemPool(&pool, 0));
  for (infinirtMemPoolAttr attr :
       {infinirtMemPoolReuseFollowEventDependencies, infinirtMemPoolReuseAllowOpportunistic,
        infinirtMemPoolReuseAllowInternalDependencies, infinirtMemPoolAttrReleaseThreshold,
        infinirtMemPoolAttrReservedMemCurrent, infinirtMemPoolAttrReservedMemHigh,
        infinirtMemPoolAttrUsedMemCurrent, infinirtMemPoolAttrUsedMemHigh}) {
    SCOPED_TRACE(::testing::Message() << "attribute " << attr);
    EXPECT_ANSWER(infinirtMemPoolGetAttribute(pool, attr, nullptr), infinirtErrorInvalidValue);
    EXPECT_ANSWER(infinirtMemPoolSetAttribute(pool, attr, nullptr), infinirtErrorInvalidValue);
  }
}

TEST_F(NullOutPointerTest, ExtensionsRejectNull) {
  EXPECT_ANSWER(infinirtGetAllDeviceCount(nullptr), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtDeviceGetType(nullptr, 0), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtDeviceGetOrdinal(nullptr, INFINI_DEVICE_CPU, 0), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtGetBackendCount(nullptr), infinirtErrorInvalidValue);
  EXPECT_ANSWER(infinirtGetBackendProperties(nullptr, 0), infinirtErrorInvalidValue);
}

}  // namespace
}  // namespace infinirt::testing
