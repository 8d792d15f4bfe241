// What the collective engines' tests share (nccl_engine_test.cc, vendor_engine_test.cc): statuses
// by name, the fields of an emulated library's record lines, values of every dtype, ranks with
// their communicators, streams and device buffers, a rendezvous store in this process, and an
// engine's table opened as libinfiniccl opens it.
#ifndef INFINIRT_TESTS_INFINICCL_ENGINE_TEST_SUPPORT_H_
#define INFINIRT_TESTS_INFINICCL_ENGINE_TEST_SUPPORT_H_

#include <dlfcn.h>
#include <gtest/gtest.h>

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <cstdint>
#include <cstdio>
#include <cstring>
#include <map>
#include <mutex>
#include <string>
#include <vector>

#include "infiniccl.h"
#include "infiniccl_backend.h"
#include "infinirt.h"

namespace infiniccl_engine_test {

inline std::string StatusName(infiniStatus_t status) {
  switch (status) {
#define ENGINE_TEST_STATUS_(name, value, text) \
  case INFINI_STATUS_##name:                   \
    return "INFINI_STATUS_" #name;
    INFINIRT_STATUS_LIST(ENGINE_TEST_STATUS_)
#undef ENGINE_TEST_STATUS_
    default:
      return "status " + std::to_string(static_cast<int>(status));
  }
}
#define EXPECT_STATUS(expected, call) EXPECT_EQ(StatusName(call), StatusName(expected)) << #call
#define ASSERT_STATUS(expected, call) ASSERT_EQ(StatusName(call), StatusName(expected)) << #call

inline std::string Pointer(const void* p) {
  char text[32];
  std::snprintf(text, sizeof text, "%p", p);
  return text;
}

// The value of "key=" in a record line, or "".
inline std::string Field(const std::string& line, const std::string& key) {
  const size_t at = line.find(" " + key + "=");
  if (at == std::string::npos) return "";
  const size_t begin = at + key.size() + 2;
  return line.substr(begin, line.find(' ', begin) - begin);
}

// --- Values of every dtype -------------------------------------------------------------------

inline size_t SizeOf(infiniDtype_t dtype) { return infinirtDtypeSize(dtype); }

inline void Encode(infiniDtype_t dtype, double value, void* out) {
  switch (dtype) {
    case INFINI_DTYPE_I8:
      *static_cast<int8_t*>(out) = static_cast<int8_t>(value);
      return;
    case INFINI_DTYPE_U8:
    case INFINI_DTYPE_BOOL:
      *static_cast<uint8_t*>(out) = static_cast<uint8_t>(value);
      return;
    case INFINI_DTYPE_I16:
      *static_cast<int16_t*>(out) = static_cast<int16_t>(value);
      return;
    case INFINI_DTYPE_U16:
      *static_cast<uint16_t*>(out) = static_cast<uint16_t>(value);
      return;
    case INFINI_DTYPE_I32:
      *static_cast<int32_t*>(out) = static_cast<int32_t>(value);
      return;
    case INFINI_DTYPE_U32:
      *static_cast<uint32_t*>(out) = static_cast<uint32_t>(value);
      return;
    case INFINI_DTYPE_I64:
      *static_cast<int64_t*>(out) = static_cast<int64_t>(value);
      return;
    case INFINI_DTYPE_U64:
      *static_cast<uint64_t*>(out) = static_cast<uint64_t>(value);
      return;
    case INFINI_DTYPE_F16:
      *static_cast<_Float16*>(out) = static_cast<_Float16>(value);
      return;
    case INFINI_DTYPE_F32:
      *static_cast<float*>(out) = static_cast<float>(value);
      return;
    case INFINI_DTYPE_F64:
      *static_cast<double*>(out) = value;
      return;
    case INFINI_DTYPE_BF16: {  // the values used are exact in bf16
      const float single = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &single, 4);
      *static_cast<uint16_t*>(out) = static_cast<uint16_t>(bits >> 16);
      return;
    }
    default:
      FAIL() << "no encoding for dtype " << dtype;
  }
}

inline double Decode(infiniDtype_t dtype, const void* in) {
  switch (dtype) {
    case INFINI_DTYPE_I8:
      return *static_cast<const int8_t*>(in);
    case INFINI_DTYPE_U8:
    case INFINI_DTYPE_BOOL:
      return *static_cast<const uint8_t*>(in);
    case INFINI_DTYPE_I16:
      return *static_cast<const int16_t*>(in);
    case INFINI_DTYPE_U16:
      return *static_cast<const uint16_t*>(in);
    case INFINI_DTYPE_I32:
      return *static_cast<const int32_t*>(in);
    case INFINI_DTYPE_U32:
      return *static_cast<const uint32_t*>(in);
    case INFINI_DTYPE_I64:
      return static_cast<double>(*static_cast<const int64_t*>(in));
    case INFINI_DTYPE_U64:
      return static_cast<double>(*static_cast<const uint64_t*>(in));
    case INFINI_DTYPE_F16:
      return static_cast<double>(*static_cast<const _Float16*>(in));
    case INFINI_DTYPE_F32:
      return *static_cast<const float*>(in);
    case INFINI_DTYPE_F64:
      return *static_cast<const double*>(in);
    case INFINI_DTYPE_BF16: {
      const uint32_t bits = static_cast<uint32_t>(*static_cast<const uint16_t*>(in)) << 16;
      float value;
      std::memcpy(&value, &bits, 4);
      return value;
    }
    default:
      return -1;
  }
}

// --- Ranks: communicators, streams, device buffers ------------------------------------------

class Ranks {
 public:
  Ranks(infiniDevice_t type, int n) : type_(type) {
    std::vector<int> ids(n);
    for (int i = 0; i < n; ++i) ids[i] = i;
    comms_.assign(n, nullptr);
    status_ = infinicclCommInitAll(type, comms_.data(), n, ids.data());
    if (status_ != INFINI_STATUS_SUCCESS) {
      comms_.clear();
      return;
    }
    for (int i = 0; i < n; ++i) {
      int ordinal = -1;
      EXPECT_EQ(infinirtDeviceGetOrdinal(&ordinal, type, i), infinirtSuccess);
      ordinals_.push_back(ordinal);
      infinirtSetDevice(ordinal);
      infinirtStream_t stream = nullptr;
      EXPECT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
      streams_.push_back(stream);
    }
  }
  ~Ranks() {
    Synchronize();
    for (void* buffer : buffers_) infinirtFree(buffer);
    for (infinirtStream_t stream : streams_) infinirtStreamDestroy(stream);
    for (infinicclComm_t comm : comms_)
      EXPECT_STATUS(INFINI_STATUS_SUCCESS, infinicclCommDestroy(comm));
  }
  Ranks(const Ranks&) = delete;
  Ranks& operator=(const Ranks&) = delete;

  infiniStatus_t status() const { return status_; }
  int size() const { return static_cast<int>(comms_.size()); }
  infinicclComm_t comm(int r) const { return comms_[r]; }
  infinirtStream_t stream(int r) const { return streams_[r]; }
  int ordinal(int r) const { return ordinals_[r]; }

  // A device buffer of rank r holding `values` (as dtype), or `count` zeros.
  void* Buffer(int r, infiniDtype_t dtype, const std::vector<double>& values, size_t count = 0) {
    count = std::max(count, values.size());
    std::vector<char> host(count * SizeOf(dtype), 0);
    for (size_t i = 0; i < values.size(); ++i) Encode(dtype, values[i], &host[i * SizeOf(dtype)]);
    infinirtSetDevice(ordinals_[r]);
    void* buffer = nullptr;
    EXPECT_EQ(infinirtMalloc(&buffer, host.size()), infinirtSuccess);
    EXPECT_EQ(infinirtMemcpy(buffer, host.data(), host.size(), infinirtMemcpyHostToDevice),
              infinirtSuccess);
    buffers_.push_back(buffer);
    return buffer;
  }

  std::vector<double> Read(int r, infiniDtype_t dtype, const void* buffer, size_t count) {
    Synchronize();
    std::vector<char> host(count * SizeOf(dtype));
    infinirtSetDevice(ordinals_[r]);
    EXPECT_EQ(infinirtMemcpy(host.data(), buffer, host.size(), infinirtMemcpyDeviceToHost),
              infinirtSuccess);
    std::vector<double> values(count);
    for (size_t i = 0; i < count; ++i) values[i] = Decode(dtype, &host[i * SizeOf(dtype)]);
    return values;
  }

  void Synchronize() {
    for (infinirtStream_t stream : streams_)
      EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  }

  std::string NativeStream(int r) const {
    void* native = nullptr;
    EXPECT_EQ(infinirtStreamGetNativeHandle(&native, streams_[r]), infinirtSuccess);
    return Pointer(native);
  }

 private:
  infiniDevice_t type_;
  infiniStatus_t status_ = INFINI_STATUS_INTERNAL_ERROR;
  std::vector<infinicclComm_t> comms_;
  std::vector<infinirtStream_t> streams_;
  std::vector<int> ordinals_;
  std::vector<void*> buffers_;
};

// Runs issue(r) for every rank inside one group, from this thread.
template <class Issue>
inline void Grouped(int n, Issue issue) {
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupStart());
  for (int r = 0; r < n; ++r) {
    EXPECT_STATUS(INFINI_STATUS_SUCCESS, issue(r)) << infinicclGetLastError(nullptr);
  }
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclGroupEnd()) << infinicclGetLastError(nullptr);
}

// With no engine library for the type here, CommInitAll's ranks run through the CPU engine,
// their buffers staged through host memory: an AllReduce over n ranks is right, and the engine is
// reported as "cpu-staged".
inline void ExpectStagedAllReduce(infiniDevice_t type, int n) {
  Ranks ranks(type, n);
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, ranks.status()) << infinicclGetLastError(nullptr);
  const char* engine = nullptr;
  ASSERT_STATUS(INFINI_STATUS_SUCCESS, infinicclCommGetEngine(ranks.comm(0), &engine));
  EXPECT_STREQ(engine, "cpu-staged");
  std::vector<void*> buffers(n);
  for (int r = 0; r < n; ++r) {
    buffers[r] = ranks.Buffer(r, INFINI_DTYPE_F32, {r + 1.0, 10.0 * (r + 1), -1.0});
  }
  Grouped(n, [&](int r) {
    return infinicclAllReduce(buffers[r], buffers[r], 3, INFINI_DTYPE_F32, INFINICCL_SUM,
                              ranks.comm(r), ranks.stream(r));
  });
  const double sum = n * (n + 1) / 2.0;
  for (int r = 0; r < n; ++r) {
    EXPECT_EQ(ranks.Read(r, INFINI_DTYPE_F32, buffers[r], 3),
              (std::vector<double>{sum, 10.0 * sum, -1.0 * n}))
        << "rank " << r;
  }
}

// A store in this process, as libinfiniccl lends one.
class MemoryStore {
 public:
  infinicclBackendStore Lend() { return {this, "127.0.0.1", &Set, &Get}; }
  int sets = 0;

 private:
  static int Set(void* context, const char* key, const void* value, size_t size, char*, size_t) {
    auto* store = static_cast<MemoryStore*>(context);
    std::lock_guard<std::mutex> lock(store->mutex_);
    store->values_[key].assign(static_cast<const char*>(value),
                               static_cast<const char*>(value) + size);
    ++store->sets;
    store->cv_.notify_all();
    return 0;
  }
  static int Get(void* context, const char* key, void* value, size_t capacity, size_t* size,
                 char* why, size_t why_size) {
    auto* store = static_cast<MemoryStore*>(context);
    std::unique_lock<std::mutex> lock(store->mutex_);
    if (!store->cv_.wait_for(lock, std::chrono::seconds(10),
                             [&] { return store->values_.count(key) > 0; })) {
      std::snprintf(why, why_size, "no %s in the store", key);
      return 1;
    }
    const std::vector<char>& stored = store->values_[key];
    std::memcpy(value, stored.data(), std::min(capacity, stored.size()));
    *size = stored.size();
    return 0;
  }
  std::mutex mutex_;
  std::condition_variable cv_;
  std::map<std::string, std::vector<char>> values_;
};

// The table of engine `file` (libinfiniccl_nccl.so), opened as libinfiniccl opens it.
inline const infinicclBackendTable* EngineTable(const char* file) {
  void* library = nullptr;
  infinirtBackendProp prop;
  if (infinirtOpenExtensionLibrary(file, &library, &prop) != infinirtSuccess) {
    return nullptr;
  }
  auto get =
      reinterpret_cast<infinicclBackendGetTableFn>(dlsym(library, INFINICCL_BACKEND_ENTRY_SYMBOL));
  return get != nullptr ? get() : nullptr;  // the library stays open, as libinfiniccl's does
}

}  // namespace infiniccl_engine_test

#endif  // INFINIRT_TESTS_INFINICCL_ENGINE_TEST_SUPPORT_H_
