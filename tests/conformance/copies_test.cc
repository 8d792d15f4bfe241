// S8-S11: synchronous and asynchronous copies and memsets, and the direction of
// infinirtMemcpyDefault.
#include <algorithm>
#include <functional>
#include <vector>

#include "conformance.h"
#include "raw_enum_calls.h"

namespace infinirt::conformance {
namespace {

std::vector<unsigned char> Pattern(size_t bytes, unsigned char seed) {
  std::vector<unsigned char> pattern(bytes);
  for (size_t i = 0; i < bytes; ++i) pattern[i] = static_cast<unsigned char>(seed + i * 13);
  return pattern;
}

// Fills fixture-owned pageable memory with a pattern.
std::vector<unsigned char>& WithPattern(std::vector<unsigned char>& memory, unsigned char seed) {
  memory = Pattern(memory.size(), seed);
  return memory;
}

// ---------------------------------------------------------------------------------------------
// S8: infinirtMemcpy is issued into the legacy stream (so it orders after prior work in
// blocking streams) and returns with the copy done.

TEST_F(Conformance, S08_MemcpyOrdersAfterBlockingStreamWorkAndReturnsCompleted) {
  infinirtStream_t blocking = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_OK_OR_SKIP(infinirtMemset(device, 0, kBytes));
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(blocking));
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0x5C, kBytes, blocking));
  std::vector<unsigned char>& host = NewPageableMemory(kBytes, 0xEE);
  DelayedOpen release(gate);
  EXPECT_EQ(infinirtMemcpy(host.data(), device, kBytes, infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  EXPECT_TRUE(release.started()) << "Memcpy did not wait for the blocking stream";
  EXPECT_TRUE(AllBytesAre(host.data(), kBytes, 0x5C)) << "Memcpy returned before it copied";
}

TEST_F(Conformance, S08_MemcpyFromPageableMemoryHasReadTheSourceOnReturn) {
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  std::vector<unsigned char>& source = WithPattern(NewPageableMemory(kBytes), 1);
  const std::vector<unsigned char> original = source;
  ASSERT_OK_OR_SKIP(infinirtMemcpy(device, source.data(), kBytes, infinirtMemcpyHostToDevice));
  std::fill(source.begin(), source.end(), 0);  // the caller may reuse the buffer at once
  EXPECT_EQ(ReadBack(device, kBytes), original);
}

// ---------------------------------------------------------------------------------------------
// S9: MemcpyAsync between pinned host memory and device memory is asynchronous.

TEST_F(Conformance, S09_MemcpyAsyncWithPinnedMemoryReturnsBeforeTheCopyRuns) {
  infinirtStream_t stream = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  unsigned char* source = NewPinnedMemory(kBytes, 0xA1);
  unsigned char* result = NewPinnedMemory(kBytes, 0x00);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(source, nullptr);
  ASSERT_NE(result, nullptr);
  ASSERT_OK_OR_SKIP(infinirtMemset(device, 0, kBytes));
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(stream));
  EXPECT_EQ(infinirtMemcpyAsync(device, source, kBytes, infinirtMemcpyHostToDevice, stream),
            infinirtSuccess);
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  EXPECT_EQ(infinirtMemcpyAsync(result, device, kBytes, infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  EXPECT_FALSE(gate.timed_out()) << "MemcpyAsync waited for the stream";
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  EXPECT_TRUE(HoldsFor([&] { return AllBytesAre(result, kBytes, 0); }))
      << "the copy ran before the work ahead of it";

  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_TRUE(AllBytesAre(result, kBytes, 0xA1));
}

// A device-to-host copy into pageable memory returns once the copy is done, as NVIDIA's runtime
// documents for pageable memory: 1-D, 2-D and 3-D.
TEST_F(Conformance, S09_MemcpyAsyncIntoPageableMemoryReturnsWithTheCopyDone) {
  infinirtStream_t stream = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_OK_OR_SKIP(infinirtMemset(device, 0, kBytes));
  constexpr size_t kRow = 64, kRows = 4;
  const std::function<infinirtError_t(unsigned char*)> copies[] = {
      [&](unsigned char* host) {
        return infinirtMemcpyAsync(host, device, kBytes, infinirtMemcpyDeviceToHost, stream);
      },
      [&](unsigned char* host) {
        return infinirtMemcpy2DAsync(host, kRow, device, 2 * kRow, kRow, kRows,
                                     infinirtMemcpyDeviceToHost, stream);
      },
      [&](unsigned char* host) {
        infinirtMemcpy3DParms p{};
        p.srcPtr = make_infinirtPitchedPtr(device, 2 * kRow, kRow, kRows);
        p.dstPtr = make_infinirtPitchedPtr(host, kRow, kRow, kRows);
        p.extent = make_infinirtExtent(kRow, kRows, 1);
        p.kind = infinirtMemcpyDeviceToHost;
        return infinirtMemcpy3DAsync(&p, stream);
      }};
  unsigned char value = 0x40;
  for (const auto& copy : copies) {
    SCOPED_TRACE(::testing::Message() << "copy " << static_cast<int>(value - 0x40));
    ++value;
    Gate& gate = NewGate();
    ASSERT_OK_OR_SKIP(gate.Block(stream));
    ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, value, kBytes, stream));
    std::vector<unsigned char>& host = NewPageableMemory(kBytes, 0xEE);
    DelayedOpen release(gate);
    EXPECT_EQ(copy(host.data()), infinirtSuccess);
    EXPECT_TRUE(release.started()) << "the copy returned before the work ahead of it ran";
    EXPECT_TRUE(AllBytesAre(host.data(), kRow * kRows, value)) << "returned before it copied";
  }
}

// ---------------------------------------------------------------------------------------------
// S10: Memset is issued into the legacy stream, so a later Memcpy observes it; MemsetAsync is
// asynchronous.

TEST_F(Conformance, S10_MemsetIsObservedByFollowingMemcpy) {
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  ASSERT_OK_OR_SKIP(infinirtMemset(device, 0x3C, kBytes));
  ASSERT_OK_OR_SKIP(infinirtMemset(device + 10, 0x01, 5));
  ASSERT_OK_OR_SKIP(infinirtMemset(device + 100, 0x1FF, 3));  // value as a byte: 0xFF
  const std::vector<unsigned char> host = ReadBack(device, kBytes);
  for (size_t i = 0; i < kBytes; ++i) {
    const unsigned char expected = (i >= 10 && i < 15) ? 0x01 : (i >= 100 && i < 103) ? 0xFF : 0x3C;
    ASSERT_EQ(host[i], expected) << "byte " << i;
  }
}

TEST_F(Conformance, S10_MemsetOrdersAfterBlockingStreamWork) {
  infinirtStream_t blocking = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(blocking));
  ASSERT_OK_OR_SKIP(infinirtMemsetAsync(device, 0xA0, kBytes, blocking));
  {
    DelayedOpen release(gate);
    // Memset may return before it runs, but it runs after the blocking stream's memset.
    EXPECT_EQ(infinirtMemset(device, 0xB0, kBytes), infinirtSuccess);
  }
  EXPECT_TRUE(AllBytesAre(ReadBack(device, kBytes).data(), kBytes, 0xB0));
}

TEST_F(Conformance, S10_MemsetAsyncIsAsynchronous) {
  infinirtStream_t stream = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  unsigned char* result = NewPinnedMemory(kBytes, 0x00);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(result, nullptr);
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(stream));
  EXPECT_EQ(infinirtMemsetAsync(device, 0x77, kBytes, stream), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(result, device, kBytes, infinirtMemcpyDeviceToHost, stream),
            infinirtSuccess);
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  EXPECT_TRUE(AllBytesAre(result, kBytes, 0));
  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_TRUE(AllBytesAre(result, kBytes, 0x77));
}

// ---------------------------------------------------------------------------------------------
// S11: infinirtMemcpyDefault infers the direction from the pointers; other kinds beyond
// Default are rejected; zero-byte copies succeed.

TEST_F(Conformance, S11_UnifiedAddressingIsReported) {
  int unified = -1;
  ASSERT_OK_OR_SKIP(infinirtDeviceGetAttribute(&unified, infinirtDevAttrUnifiedAddressing, 0));
  EXPECT_EQ(unified, 1);
}

TEST_F(Conformance, S11_MemcpyDefaultCopiesInAllFourDirections) {
  unsigned char* first = NewDeviceMemory(kBytes);
  unsigned char* second = NewDeviceMemory(kBytes);
  unsigned char* pinned = NewPinnedMemory(kBytes);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_NE(pinned, nullptr);
  const std::vector<unsigned char>& source = WithPattern(NewPageableMemory(kBytes), 7);
  std::vector<unsigned char>& result = NewPageableMemory(kBytes);

  EXPECT_EQ(infinirtMemcpy(first, source.data(), kBytes, infinirtMemcpyDefault),
            infinirtSuccess);                                                                 // H2D
  EXPECT_EQ(infinirtMemcpy(second, first, kBytes, infinirtMemcpyDefault), infinirtSuccess);   // D2D
  EXPECT_EQ(infinirtMemcpy(pinned, second, kBytes, infinirtMemcpyDefault), infinirtSuccess);  // D2H
  EXPECT_EQ(infinirtMemcpy(result.data(), pinned, kBytes, infinirtMemcpyDefault),
            infinirtSuccess);  // H2H
  EXPECT_EQ(result, source);
}

TEST_F(Conformance, S11_MemcpyAsyncDefaultCopiesInAllFourDirections) {
  infinirtStream_t stream = NewStream();
  unsigned char* first = NewDeviceMemory(kBytes);
  unsigned char* second = NewDeviceMemory(kBytes);
  unsigned char* source = NewPinnedMemory(kBytes);
  unsigned char* staged = NewPinnedMemory(kBytes);
  ASSERT_NE(first, nullptr);
  ASSERT_NE(second, nullptr);
  ASSERT_NE(source, nullptr);
  ASSERT_NE(staged, nullptr);
  const std::vector<unsigned char> pattern = Pattern(kBytes, 9);
  std::copy(pattern.begin(), pattern.end(), source);
  std::vector<unsigned char>& result = NewPageableMemory(kBytes);

  const auto kDefault = infinirtMemcpyDefault;
  EXPECT_EQ(infinirtMemcpyAsync(first, source, kBytes, kDefault, stream), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(second, first, kBytes, kDefault, stream), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(staged, second, kBytes, kDefault, stream), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(result.data(), staged, kBytes, kDefault, stream), infinirtSuccess);
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_EQ(result, pattern);
}

// Default between pinned and device memory is inferred as H2D / D2H, which are asynchronous
// (S9); a host-to-host copy would be synchronous.
TEST_F(Conformance, S11_MemcpyAsyncDefaultBetweenPinnedAndDeviceIsAsynchronous) {
  infinirtStream_t stream = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  unsigned char* source = NewPinnedMemory(kBytes, 0x5A);
  unsigned char* result = NewPinnedMemory(kBytes, 0x00);
  ASSERT_NE(device, nullptr);
  ASSERT_NE(source, nullptr);
  ASSERT_NE(result, nullptr);
  Gate& gate = NewGate();

  ASSERT_OK_OR_SKIP(gate.Block(stream));
  EXPECT_EQ(infinirtMemcpyAsync(device, source, kBytes, infinirtMemcpyDefault, stream),
            infinirtSuccess);
  EXPECT_EQ(infinirtMemcpyAsync(result, device, kBytes, infinirtMemcpyDefault, stream),
            infinirtSuccess);
  EXPECT_FALSE(gate.timed_out()) << "a pinned<->device copy was treated as host-to-host";
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);
  EXPECT_TRUE(AllBytesAre(result, kBytes, 0));
  gate.Open();
  ASSERT_OK_OR_SKIP(infinirtStreamSynchronize(stream));
  EXPECT_TRUE(AllBytesAre(result, kBytes, 0x5A));
}

// Host to host, MemcpyAsync is fully synchronous [SYNC]: with Default it must be recognised.
TEST_F(Conformance, S11_MemcpyAsyncDefaultBetweenHostBuffersIsSynchronous) {
  infinirtStream_t stream = NewStream();
  Gate& gate = NewGate();
  const std::vector<unsigned char>& source = WithPattern(NewPageableMemory(kBytes), 3);
  std::vector<unsigned char>& result = NewPageableMemory(kBytes);

  ASSERT_OK_OR_SKIP(gate.Block(stream));
  DelayedOpen release(gate);
  EXPECT_EQ(
      infinirtMemcpyAsync(result.data(), source.data(), kBytes, infinirtMemcpyDefault, stream),
      infinirtSuccess);
  EXPECT_TRUE(release.started()) << "a host-to-host copy returned before the stream ran it";
  EXPECT_EQ(result, source);
}

TEST_F(Conformance, S11_InvalidKindIsInvalidMemcpyDirection) {
  static_assert(infinirtErrorInvalidMemcpyDirection == 21, "CUDA's value");
  infinirtStream_t stream = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  std::vector<unsigned char>& host = NewPageableMemory(kBytes);
  for (int kind : {5, -1, 100}) {
    SCOPED_TRACE(kind);
    EXPECT_EQ(RawKindMemcpy(device, host.data(), kBytes, kind),
              infinirtErrorInvalidMemcpyDirection);
    EXPECT_EQ(RawKindMemcpyAsync(host.data(), device, kBytes, kind, stream),
              infinirtErrorInvalidMemcpyDirection);
    EXPECT_EQ(infinirtGetLastError(), infinirtErrorInvalidMemcpyDirection);
  }
}

TEST_F(Conformance, S11_ZeroByteCopiesSucceed) {
  infinirtStream_t stream = NewStream();
  unsigned char* device = NewDeviceMemory(kBytes);
  ASSERT_NE(device, nullptr);
  std::vector<unsigned char>& host = NewPageableMemory(kBytes);
  for (auto kind :
       {infinirtMemcpyHostToHost, infinirtMemcpyHostToDevice, infinirtMemcpyDeviceToHost,
        infinirtMemcpyDeviceToDevice, infinirtMemcpyDefault}) {
    SCOPED_TRACE(kind);
    void* dst = kind == infinirtMemcpyHostToDevice || kind == infinirtMemcpyDeviceToDevice
                    ? static_cast<void*>(device)
                    : host.data();
    const void* src = kind == infinirtMemcpyDeviceToHost || kind == infinirtMemcpyDeviceToDevice
                          ? static_cast<const void*>(device)
                          : host.data();
    EXPECT_EQ(infinirtMemcpy(dst, src, 0, kind), infinirtSuccess);
    EXPECT_EQ(infinirtMemcpyAsync(dst, src, 0, kind, stream), infinirtSuccess);
  }
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(infinirtPeekAtLastError(), infinirtSuccess);
}

}  // namespace
}  // namespace infinirt::conformance
