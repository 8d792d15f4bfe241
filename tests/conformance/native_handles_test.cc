// InfiniRT's native-handle extensions (not CUDA statements): the vendor's own stream and event
// behind InfiniRT's, and an InfiniRT stream adopted from a vendor stream another library made
// (infinirtStreamCreateFromNativeHandle). The CPU backend has no vendor streams or events: it
// answers NotSupported, as documented, and that answer is what is checked there. A vendor
// plugin that declares them unsupported skips.
#include <utility>

#include "conformance.h"

namespace infinirt::conformance {
namespace {

bool IsCpu() { return BackendName() == "cpu"; }

// An adopted stream, destroyed at the end of a test that skips (or fails) before destroying it.
struct AdoptedStream {
  infinirtStream_t stream = nullptr;
  ~AdoptedStream() {
    if (stream != nullptr) infinirtStreamDestroy(stream);
  }
  // Destroys it now; the handle, no longer valid.
  infinirtStream_t Destroy(infinirtError_t* error) {
    *error = infinirtStreamDestroy(stream);
    return std::exchange(stream, nullptr);
  }
};

// An InfiniRT stream over the vendor stream behind `stream`, on device 0.
infinirtError_t Adopt(infinirtStream_t stream, infinirtStream_t* adopted) {
  void* native = nullptr;
  if (auto error = infinirtStreamGetNativeHandle(&native, stream)) return error;
  return infinirtStreamCreateFromNativeHandle(adopted, 0, native);
}

TEST_F(Conformance, NativeHandles_TheCpuBackendHasNone) {
  if (!IsCpu()) GTEST_SKIP() << "device 0 is " << BackendName() << ", not the CPU";
  infinirtStream_t stream = NewStream();
  infinirtEvent_t event = NewEvent();
  void* native = nullptr;
  EXPECT_EQ(infinirtStreamGetNativeHandle(&native, stream), infinirtErrorNotSupported);
  EXPECT_EQ(infinirtEventGetNativeHandle(&native, event), infinirtErrorNotSupported);
  infinirtStream_t adopted = nullptr;
  int token = 0;
  EXPECT_EQ(infinirtStreamCreateFromNativeHandle(&adopted, 0, &token), infinirtErrorNotSupported);
  EXPECT_EQ(adopted, nullptr);
  infinirtGetLastError();
}

// Work issued to the adopted stream goes to the same vendor stream: it waits behind a gate that
// holds the original stream. Ending the adopted stream leaves the vendor stream to its maker.
TEST_F(Conformance, NativeHandles_AnAdoptedStreamIsTheVendorStreamItWraps) {
  if (IsCpu()) GTEST_SKIP() << "the CPU backend has no vendor streams";
  infinirtStream_t stream = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  unsigned char* pinned = NewPinnedMemory(kBytes);
  AdoptedStream owned;
  ASSERT_OK_OR_SKIP(Adopt(stream, &owned.stream));
  infinirtStream_t adopted = owned.stream;
  ASSERT_NE(adopted, nullptr);
  void* first = nullptr;
  void* second = nullptr;
  ASSERT_OK_OR_SKIP(infinirtStreamGetNativeHandle(&first, stream));
  ASSERT_OK_OR_SKIP(infinirtStreamGetNativeHandle(&second, adopted));
  EXPECT_EQ(first, second);

  Gate& gate = NewGate();
  ASSERT_OK_OR_SKIP(gate.Block(stream));
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0x5A, kBytes, adopted));
  ASSERT_OK_OR_SKIP(
      infinirtMemcpyAsync(pinned, device, kBytes, infinirtMemcpyDeviceToHost, adopted));
  EXPECT_TRUE(HoldsFor([&] { return pinned[0] == 0; })) << "ran past the original's gate";
  EXPECT_EQ(infinirtStreamQuery(adopted), infinirtErrorNotReady);
  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(adopted));
  EXPECT_TRUE(AllBytesAre(pinned, kBytes, 0x5A));

  infinirtError_t destroyed = infinirtErrorUnknown;
  owned.Destroy(&destroyed);
  ASSERT_EQ(destroyed, infinirtSuccess);
  EXPECT_EQ(infinirtStreamQuery(adopted), infinirtErrorContextIsDestroyed);
  infinirtGetLastError();
  // The vendor stream was not destroyed with it.
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0x33, kBytes, stream));
  ASSERT_OK_OR_SKIP(
      infinirtMemcpyAsync(pinned, device, kBytes, infinirtMemcpyDeviceToHost, stream));
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_TRUE(AllBytesAre(pinned, kBytes, 0x33));
}

// The adopted stream synchronises with the legacy stream as the vendor stream does: capture shows
// it (using the legacy stream while a blocking stream captures invalidates the capture).
TEST_F(Conformance, NativeHandles_AnAdoptedStreamKeepsTheVendorStreamsFlags) {
  if (IsCpu()) GTEST_SKIP() << "the CPU backend has no vendor streams";
  REQUIRE_NON_BLOCKING_STREAMS();
  unsigned char* device = NewDeviceMemory(kBytes);
  for (const unsigned int flags : {infinirtStreamDefault, infinirtStreamNonBlocking}) {
    // (No SCOPED_TRACE: a skip's message goes into the support matrix, and a trace would put
    // this file's path there.)
    const char* kind = flags == infinirtStreamDefault ? "blocking" : "non-blocking";
    AdoptedStream owned;
    ASSERT_OK_OR_SKIP(Adopt(NewStream(flags), &owned.stream));
    infinirtStream_t adopted = owned.stream;
    ASSERT_OK_OR_SKIP(infinirtStreamBeginCapture(adopted, infinirtStreamCaptureModeRelaxed));
    const infinirtError_t legacy = infinirtMemsetAsync(device, 1, kBytes, infinirtStreamLegacy);
    infinirtGraph_t graph = nullptr;
    const infinirtError_t ended = infinirtStreamEndCapture(adopted, &graph);
    infinirtGetLastError();
    if (flags == infinirtStreamDefault) {
      EXPECT_EQ(legacy, infinirtErrorStreamCaptureImplicit) << kind;
      EXPECT_EQ(ended, infinirtErrorStreamCaptureInvalidated) << kind;
    } else {
      EXPECT_EQ(legacy, infinirtSuccess) << kind;
      EXPECT_EQ(ended, infinirtSuccess) << kind;
      infinirtGraphDestroy(graph);
    }
    infinirtError_t destroyed = infinirtErrorUnknown;
    owned.Destroy(&destroyed);
    EXPECT_EQ(destroyed, infinirtSuccess) << kind;
  }
  ASSERT_EQ(infinirtDeviceSynchronize(), infinirtSuccess);
}

TEST_F(Conformance, NativeHandles_AnEventsVendorHandleIsItsOwn) {
  if (IsCpu()) GTEST_SKIP() << "the CPU backend has no vendor events";
  infinirtEvent_t first = NewEvent();
  infinirtEvent_t second = NewEvent();
  void* natives[2] = {};
  ASSERT_OK_OR_SKIP(infinirtEventGetNativeHandle(&natives[0], first));
  ASSERT_OK_OR_SKIP(infinirtEventGetNativeHandle(&natives[1], second));
  EXPECT_NE(natives[0], nullptr);
  EXPECT_NE(natives[0], natives[1]);
}

TEST_F(Conformance, NativeHandles_BadInputIsRefused) {
  infinirtStream_t stream = NewStream();
  infinirtEvent_t event = NewEvent();
  int token = 0;
  infinirtStream_t adopted = nullptr;
  EXPECT_EQ(infinirtStreamCreateFromNativeHandle(nullptr, 0, &token), infinirtErrorInvalidValue);
  for (void* special : {static_cast<void*>(nullptr), static_cast<void*>(infinirtStreamLegacy),
                        static_cast<void*>(infinirtStreamPerThread)}) {
    EXPECT_EQ(infinirtStreamCreateFromNativeHandle(&adopted, 0, special), infinirtErrorInvalidValue)
        << special;
  }
  int count = 0;
  ASSERT_EQ(infinirtGetDeviceCount(&count), infinirtSuccess);
  EXPECT_EQ(infinirtStreamCreateFromNativeHandle(&adopted, count, &token),
            infinirtErrorInvalidDevice);
  EXPECT_EQ(infinirtStreamCreateFromNativeHandle(&adopted, -1, &token), infinirtErrorInvalidDevice);
  EXPECT_EQ(adopted, nullptr);
  EXPECT_EQ(infinirtStreamGetNativeHandle(nullptr, stream), infinirtErrorInvalidValue);
  EXPECT_EQ(infinirtEventGetNativeHandle(nullptr, event), infinirtErrorInvalidValue);
  void* native = nullptr;
  infinirtEvent_t destroyed = nullptr;
  ASSERT_EQ(infinirtEventCreate(&destroyed), infinirtSuccess);
  ASSERT_EQ(infinirtEventDestroy(destroyed), infinirtSuccess);
  EXPECT_EQ(infinirtEventGetNativeHandle(&native, destroyed), infinirtErrorInvalidResourceHandle);
  infinirtGetLastError();
}

}  // namespace
}  // namespace infinirt::conformance
