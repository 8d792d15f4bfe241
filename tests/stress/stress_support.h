// Helpers for the stress tests: patterns unique to (thread, iteration), a failure log that
// worker threads fill instead of flooding GoogleTest, and a stopwatch.
#ifndef INFINIRT_TESTS_STRESS_STRESS_SUPPORT_H_
#define INFINIRT_TESTS_STRESS_STRESS_SUPPORT_H_

#include <atomic>
#include <chrono>
#include <cstddef>
#include <cstdint>
#include <mutex>
#include <string>

#include "infinirt.h"

namespace infinirt::testing {

// The byte at offset i of the pattern of (thread, iteration). The first eight bytes spell the
// pair itself, so two patterns never coincide.
inline unsigned char StressByte(uint32_t thread, uint32_t iteration, size_t i) {
  if (i < 4) return static_cast<unsigned char>(thread >> (8 * i));
  if (i < 8) return static_cast<unsigned char>(iteration >> (8 * (i - 4)));
  uint64_t x = (uint64_t{thread} << 32 | iteration) * 0x9E3779B97F4A7C15ull + i;
  x ^= x >> 29;
  x *= 0xBF58476D1CE4E5B9ull;
  return static_cast<unsigned char>(x >> 56);
}

inline void FillStressPattern(unsigned char* bytes, size_t size, uint32_t thread,
                              uint32_t iteration) {
  for (size_t i = 0; i < size; ++i) bytes[i] = StressByte(thread, iteration, i);
}

// The first offset where bytes differ from the pattern, or size when all match.
inline size_t FirstPatternMismatch(const unsigned char* bytes, size_t size, uint32_t thread,
                                   uint32_t iteration) {
  for (size_t i = 0; i < size; ++i) {
    if (bytes[i] != StressByte(thread, iteration, i)) return i;
  }
  return size;
}

// Collects failures from many threads; keeps the first message and a count.
class FailureLog {
 public:
  void Record(const std::string& message) {
    if (count_.fetch_add(1) == 0) {
      std::lock_guard<std::mutex> lock(mutex_);
      first_ = message;
    }
  }
  int count() const { return count_.load(); }
  std::string first() const {
    std::lock_guard<std::mutex> lock(mutex_);
    return first_;
  }

 private:
  std::atomic<int> count_{0};
  mutable std::mutex mutex_;
  std::string first_;
};

// For worker threads: records a failed call with where it happened and returns false.
inline bool CallOk(infinirtError_t error, const char* call, const std::string& where,
                   FailureLog* log) {
  if (error == infinirtSuccess) return true;
  log->Record(where + ": " + call + " answered " + infinirtGetErrorName(error));
  return false;
}

#define STRESS_CALL(call, where, log) ::infinirt::testing::CallOk((call), #call, (where), (log))

class Stopwatch {
 public:
  double Seconds() const {
    return std::chrono::duration<double>(std::chrono::steady_clock::now() - start_).count();
  }

 private:
  std::chrono::steady_clock::time_point start_ = std::chrono::steady_clock::now();
};

}  // namespace infinirt::testing

#endif  // INFINIRT_TESTS_STRESS_STRESS_SUPPORT_H_
