// Test support for InfiniOP: host values of every dtype, tensor layouts, tensors with host and
// device copies, tolerances, and a fixture with a CPU handle and a stream.
#ifndef INFINIRT_TESTS_INFINIOP_INFINIOP_TEST_SUPPORT_H_
#define INFINIRT_TESTS_INFINIOP_INFINIOP_TEST_SUPPORT_H_

#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstdlib>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "infiniop.h"
#include "infinirt.h"
#include "test_support.h"

namespace infiniop_test {

// --- Host-side values of every dtype ---------------------------------------------------------

inline uint16_t FloatToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}
inline float Bf16ToFloat(uint16_t half) {
  const uint32_t bits = static_cast<uint32_t>(half) << 16;
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

inline size_t SizeOf(infiniDtype_t dtype) {
  switch (dtype) {
#define SIZE_CASE_(name, value, size) \
  case INFINI_DTYPE_##name:           \
    return size;
    INFINIRT_DTYPE_LIST(SIZE_CASE_)
#undef SIZE_CASE_
    default:
      return 0;
  }
}

inline void Store(infiniDtype_t dtype, void* at, double value) {
  switch (dtype) {
    case INFINI_DTYPE_F64:
      *static_cast<double*>(at) = value;
      break;
    case INFINI_DTYPE_F32:
      *static_cast<float*>(at) = static_cast<float>(value);
      break;
    case INFINI_DTYPE_F16:
      *static_cast<_Float16*>(at) = static_cast<_Float16>(value);
      break;
    case INFINI_DTYPE_BF16:
      *static_cast<uint16_t*>(at) = FloatToBf16(static_cast<float>(value));
      break;
    case INFINI_DTYPE_I32:
      *static_cast<int32_t*>(at) = static_cast<int32_t>(value);
      break;
    case INFINI_DTYPE_I64:
      *static_cast<int64_t*>(at) = static_cast<int64_t>(value);
      break;
    case INFINI_DTYPE_I8:
      *static_cast<int8_t*>(at) = static_cast<int8_t>(value);
      break;
    case INFINI_DTYPE_I16:
      *static_cast<int16_t*>(at) = static_cast<int16_t>(value);
      break;
    case INFINI_DTYPE_U8:
      *static_cast<uint8_t*>(at) = static_cast<uint8_t>(value);
      break;
    case INFINI_DTYPE_U16:
      *static_cast<uint16_t*>(at) = static_cast<uint16_t>(value);
      break;
    case INFINI_DTYPE_U32:
      *static_cast<uint32_t*>(at) = static_cast<uint32_t>(value);
      break;
    case INFINI_DTYPE_U64:
      *static_cast<uint64_t*>(at) = static_cast<uint64_t>(value);
      break;
    default:
      FAIL() << "no host value for dtype " << dtype;
  }
}

inline double Load(infiniDtype_t dtype, const void* at) {
  switch (dtype) {
    case INFINI_DTYPE_F64:
      return *static_cast<const double*>(at);
    case INFINI_DTYPE_F32:
      return *static_cast<const float*>(at);
    case INFINI_DTYPE_F16:
      return static_cast<double>(*static_cast<const _Float16*>(at));
    case INFINI_DTYPE_BF16:
      return Bf16ToFloat(*static_cast<const uint16_t*>(at));
    case INFINI_DTYPE_I32:
      return *static_cast<const int32_t*>(at);
    case INFINI_DTYPE_I64:
      return static_cast<double>(*static_cast<const int64_t*>(at));
    case INFINI_DTYPE_I8:
      return *static_cast<const int8_t*>(at);
    case INFINI_DTYPE_I16:
      return static_cast<double>(*static_cast<const int16_t*>(at));
    case INFINI_DTYPE_U8:
      return static_cast<double>(*static_cast<const uint8_t*>(at));
    case INFINI_DTYPE_U16:
      return static_cast<double>(*static_cast<const uint16_t*>(at));
    case INFINI_DTYPE_U32:
      return static_cast<double>(*static_cast<const uint32_t*>(at));
    case INFINI_DTYPE_U64:
      return static_cast<double>(*static_cast<const uint64_t*>(at));
    default:
      return NAN;
  }
}

inline double Tolerance(infiniDtype_t dtype) {
  switch (dtype) {
    case INFINI_DTYPE_F64:
      return 1e-12;
    case INFINI_DTYPE_F32:
      return 1e-6;
    case INFINI_DTYPE_F16:
      return 1e-3;
    case INFINI_DTYPE_BF16:
      return 8e-3;
    default:
      return 0;
  }
}

// --- Tensors: a layout, host values, device memory --------------------------------------------

struct Layout {
  std::vector<size_t> shape;
  std::vector<ptrdiff_t> strides;  // in elements

  static Layout Contiguous(std::vector<size_t> shape) {
    Layout layout{shape, std::vector<ptrdiff_t>(shape.size())};
    ptrdiff_t stride = 1;
    for (size_t i = shape.size(); i-- > 0;) {
      layout.strides[i] = stride;
      stride *= static_cast<ptrdiff_t>(shape[i] == 0 ? 1 : shape[i]);
    }
    return layout;
  }
  size_t Elements() const {
    return std::accumulate(shape.begin(), shape.end(), size_t{1}, std::multiplies<size_t>());
  }
  // Elements the strides reach: the memory the tensor needs (strides here are never negative).
  size_t Span() const {
    if (Elements() == 0) return 0;
    size_t last = 0;
    for (size_t i = 0; i < shape.size(); ++i) last += (shape[i] - 1) * strides[i];
    return last + 1;
  }
  // The element offset of the index-th element in row-major order.
  size_t Offset(size_t index) const {
    size_t offset = 0;
    for (size_t i = shape.size(); i-- > 0;) {
      offset += (index % shape[i]) * strides[i];
      index /= shape[i];
    }
    return offset;
  }
};

// The row-major index of element `index` of `shape` with coordinate `axis` replaced by k.
inline size_t WithCoordinate(const std::vector<size_t>& shape, size_t index, size_t axis,
                             size_t k) {
  size_t stride = 1;
  for (size_t d = shape.size(); d-- > axis + 1;) stride *= shape[d];
  const size_t coordinate = (index / stride) % shape[axis];
  return index - coordinate * stride + k * stride;
}

class Tensor {
 public:
  Tensor(const Layout& layout, infiniDtype_t dtype) : layout_(layout), dtype_(dtype) {
    EXPECT_EQ(infiniopCreateTensorDescriptor(&desc_, layout.shape.size(), layout.shape.data(),
                                             layout.strides.data(), dtype),
              INFINI_STATUS_SUCCESS);
    bytes_ = std::max<size_t>(layout.Span(), 1) * SizeOf(dtype);
    // Pinned: an async copy from pageable memory makes the caller wait for the stream on CUDA.
    EXPECT_EQ(infinirtMallocHost(&host_, bytes_), infinirtSuccess);
    if (host_ != nullptr) std::memset(host_, 0, bytes_);
    EXPECT_EQ(infinirtMalloc(&device_, bytes_), infinirtSuccess);
  }
  ~Tensor() {
    infiniopDestroyTensorDescriptor(desc_);
    infinirtFree(device_);
    infinirtFreeHost(host_);
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  infiniopTensorDescriptor_t desc() const { return desc_; }
  void* data() const { return device_; }
  const Layout& layout() const { return layout_; }
  infiniDtype_t dtype() const { return dtype_; }

  // Element i (row-major) of the host copy.
  double At(size_t i) const { return Load(dtype_, &host_[layout_.Offset(i) * SizeOf(dtype_)]); }
  void Set(size_t i, double value) {
    Store(dtype_, &host_[layout_.Offset(i) * SizeOf(dtype_)], value);
  }

  void Upload(infinirtStream_t stream = nullptr) {
    ASSERT_EQ(infinirtMemcpyAsync(device_, host_, bytes_, infinirtMemcpyHostToDevice, stream),
              infinirtSuccess);
  }
  void Download(infinirtStream_t stream = nullptr) {
    ASSERT_EQ(infinirtMemcpyAsync(host_, device_, bytes_, infinirtMemcpyDeviceToHost, stream),
              infinirtSuccess);
  }
  void FillRandom(std::mt19937* random, bool integers) {
    std::uniform_real_distribution<double> real(-2.0, 2.0);
    std::uniform_int_distribution<int> integer(-100, 100);
    for (size_t i = 0; i < layout_.Elements(); ++i) {
      Set(i, integers ? integer(*random) : real(*random));
    }
  }

 private:
  Layout layout_;
  infiniDtype_t dtype_;
  infiniopTensorDescriptor_t desc_ = nullptr;
  unsigned char* host_ = nullptr;  // pinned
  size_t bytes_ = 0;
  void* device_ = nullptr;
};

inline bool IsInteger(infiniDtype_t dtype) {
  for (infiniDtype_t integer :
       {INFINI_DTYPE_I8, INFINI_DTYPE_I16, INFINI_DTYPE_I32, INFINI_DTYPE_I64, INFINI_DTYPE_U8,
        INFINI_DTYPE_U16, INFINI_DTYPE_U32, INFINI_DTYPE_U64}) {
    if (dtype == integer) return true;
  }
  return false;
}

// The host value a dtype stores for a double (the reference rounds its result the same way).
inline double Rounded(infiniDtype_t dtype, double value) {
  unsigned char bytes[16];
  Store(dtype, bytes, value);
  return Load(dtype, bytes);
}

inline void ExpectClose(infiniDtype_t dtype, double expected, double found, size_t index) {
  if (IsInteger(dtype)) {
    EXPECT_EQ(found, expected) << "element " << index;
    return;
  }
  const double bound = Tolerance(dtype) * std::max(1.0, std::fabs(expected));
  EXPECT_NEAR(found, expected, bound) << "element " << index << ", dtype " << dtype;
}

// Device memory of the current device: an operator's workspace.
class DeviceBuffer {
 public:
  explicit DeviceBuffer(size_t size) {
    EXPECT_EQ(infinirtMalloc(&data_, std::max<size_t>(size, 1)), infinirtSuccess);
  }
  ~DeviceBuffer() { infinirtFree(data_); }
  DeviceBuffer(const DeviceBuffer&) = delete;
  DeviceBuffer& operator=(const DeviceBuffer&) = delete;
  void* data() const { return data_; }

 private:
  void* data_ = nullptr;
};

// The device type the tests run on: INFINIOP_TEST_DEVICE names its plugin ("nvidia"); the CPU
// when unset. INFINI_DEVICE_TYPE_COUNT for a name that is no device type's.
inline infiniDevice_t TestDeviceType() {
  const char* name = std::getenv("INFINIOP_TEST_DEVICE");
  if (name == nullptr || *name == '\0') return INFINI_DEVICE_CPU;
#define TEST_DEVICE_TYPE_(type, value, display, plugin) \
  if (std::string(name) == #plugin) return INFINI_DEVICE_##type;
  INFINIRT_DEVICE_TYPES(TEST_DEVICE_TYPE_)
#undef TEST_DEVICE_TYPE_
  return INFINI_DEVICE_TYPE_COUNT;
}

// A handle and a stream on the first device of the tested type; skipped, saying why, where there
// is none.
class InfiniopTest : public ::testing::Test {
 public:
  void SetUp() override {
    device_type = TestDeviceType();
    ASSERT_NE(device_type, INFINI_DEVICE_TYPE_COUNT)
        << "INFINIOP_TEST_DEVICE=" << std::getenv("INFINIOP_TEST_DEVICE") << " is no device type";
    int device = -1;
    if (infinirtDeviceGetOrdinal(&device, device_type, 0) != infinirtSuccess) {
      infinirtGetLastError();
      GTEST_SKIP() << "no device of type " << device_type << " is present";
    }
    ASSERT_EQ(infinirtSetDevice(device), infinirtSuccess);
    ASSERT_EQ(infiniopCreateHandle(&handle), INFINI_STATUS_SUCCESS);
    ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  }
  void TearDown() override {
    if (stream != nullptr) infinirtStreamDestroy(stream);
    if (handle != nullptr) {
      EXPECT_EQ(infiniopDestroyHandle(handle), INFINI_STATUS_SUCCESS);
    }
  }
  // Public: the tests' helper functions take the fixture.
  infiniDevice_t device_type = INFINI_DEVICE_CPU;
  infiniopHandle_t handle = nullptr;
  infinirtStream_t stream = nullptr;
};

}  // namespace infiniop_test

#endif  // INFINIRT_TESTS_INFINIOP_INFINIOP_TEST_SUPPORT_H_
