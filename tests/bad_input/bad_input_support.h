// Shared by the bad-input tests: a fixture that checks each rejected call the same way.
//
// EXPECT_ANSWER(call, code) checks that the call answers `code`, that the thread's last error
// became `code` (Success and NotReady are never recorded), that infinirtGetLastError returns and
// clears it, and that the runtime still works afterwards: a stream, a device buffer and a pinned
// buffer are created, a few bytes go through the stream and come back intact.
#ifndef INFINIRT_TESTS_BAD_INPUT_BAD_INPUT_SUPPORT_H_
#define INFINIRT_TESTS_BAD_INPUT_BAD_INPUT_SUPPORT_H_

#include <gtest/gtest.h>

#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "infinirt.h"
#include "test_support.h"

namespace infinirt::testing {

// The byte a test pattern holds at offset i; seed tells patterns apart.
inline unsigned char PatternByte(uint32_t seed, size_t i) {
  uint32_t x = seed * 2654435761u + static_cast<uint32_t>(i) * 40503u;
  x ^= x >> 15;
  return static_cast<unsigned char>(x * 2246822519u >> 24);
}

inline std::vector<unsigned char> Pattern(uint32_t seed, size_t size) {
  std::vector<unsigned char> bytes(size);
  for (size_t i = 0; i < size; ++i) bytes[i] = PatternByte(seed, i);
  return bytes;
}

// Proves the runtime is usable: allocate, copy through a stream, verify, release.
inline void ExpectRuntimeWorks() {
  static uint32_t round = 0;
  constexpr size_t kBytes = 96;
  const std::vector<unsigned char> expected = Pattern(++round, kBytes);

  infinirtStream_t stream = nullptr;
  ASSERT_OK(infinirtStreamCreate(&stream));
  void* device = nullptr;
  ASSERT_OK(infinirtMalloc(&device, kBytes));
  unsigned char* pinned = nullptr;
  ASSERT_OK(infinirtMallocHost(reinterpret_cast<void**>(&pinned), 2 * kBytes));
  std::memcpy(pinned, expected.data(), kBytes);
  std::memset(pinned + kBytes, 0, kBytes);
  EXPECT_OK(infinirtMemcpyAsync(device, pinned, kBytes, infinirtMemcpyHostToDevice, stream));
  EXPECT_OK(
      infinirtMemcpyAsync(pinned + kBytes, device, kBytes, infinirtMemcpyDeviceToHost, stream));
  EXPECT_OK(infinirtStreamSynchronize(stream));
  EXPECT_EQ(std::memcmp(pinned + kBytes, expected.data(), kBytes), 0)
      << "bytes copied through a stream after a rejected call came back wrong";
  EXPECT_OK(infinirtFreeHost(pinned));
  EXPECT_OK(infinirtFree(device));
  EXPECT_OK(infinirtStreamDestroy(stream));
  EXPECT_EQ(ErrorText(infinirtPeekAtLastError()), ErrorText(infinirtSuccess))
      << "the usability check itself left an error behind";
}

// Checks the answer of one call and everything a rejected call must leave behind.
inline void CheckAnswer(infinirtError_t actual, infinirtError_t expected) {
  EXPECT_EQ(ErrorText(actual), ErrorText(expected)) << "answer of the call";
  const bool recorded = expected != infinirtSuccess && expected != infinirtErrorNotReady;
  const infinirtError_t last = recorded ? expected : infinirtSuccess;
  EXPECT_EQ(ErrorText(infinirtPeekAtLastError()), ErrorText(last)) << "PeekAtLastError";
  EXPECT_EQ(ErrorText(infinirtGetLastError()), ErrorText(last)) << "GetLastError";
  EXPECT_EQ(ErrorText(infinirtPeekAtLastError()), ErrorText(infinirtSuccess))
      << "PeekAtLastError after GetLastError cleared it";
  ExpectRuntimeWorks();
}

#define EXPECT_ANSWER(call, expected)                     \
  do {                                                    \
    SCOPED_TRACE(#call);                                  \
    ::infinirt::testing::CheckAnswer((call), (expected)); \
  } while (0)

// Starts every test with an initialised runtime and a clear last error, and ends it with no
// error left behind.
class BadInputTest : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_OK(infinirtInit());
    infinirtGetLastError();
  }
  void TearDown() override {
    EXPECT_EQ(ErrorText(infinirtGetLastError()), ErrorText(infinirtSuccess))
        << "a test left an error behind";
  }
};

}  // namespace infinirt::testing

#endif  // INFINIRT_TESTS_BAD_INPUT_BAD_INPUT_SUPPORT_H_
