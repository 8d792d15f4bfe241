// InfiniOP on the CPU backend: handles, tensor descriptors, the operators implemented so far
// (Add, Mul, SwiGLU, Rearrange) against references computed in double on the host, their
// validation and bad input, stream order and graph replay.
//
// Tolerances (relative to the reference's magnitude, with the same floor as an absolute bound):
// F64 1e-12, F32 1e-6, F16 1e-3 (11-bit significand), BF16 8e-3 (8-bit significand); integers
// exact (with wrap-around).
#include "infiniop.h"

#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <functional>
#include <numeric>
#include <random>
#include <vector>

#include "infinirt.h"
#include "test_support.h"

namespace {

// --- Host-side values of every dtype ---------------------------------------------------------

uint16_t FloatToBf16(float value) {
  uint32_t bits;
  std::memcpy(&bits, &value, 4);
  if (std::isnan(value)) return static_cast<uint16_t>((bits >> 16) | 0x40);
  bits += 0x7fff + ((bits >> 16) & 1);  // round to nearest even
  return static_cast<uint16_t>(bits >> 16);
}
float Bf16ToFloat(uint16_t half) {
  const uint32_t bits = static_cast<uint32_t>(half) << 16;
  float value;
  std::memcpy(&value, &bits, 4);
  return value;
}

size_t SizeOf(infiniDtype_t dtype) {
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

void Store(infiniDtype_t dtype, void* at, double value) {
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
    default:
      FAIL() << "no host value for dtype " << dtype;
  }
}

double Load(infiniDtype_t dtype, const void* at) {
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
    default:
      return NAN;
  }
}

double Tolerance(infiniDtype_t dtype) {
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

class Tensor {
 public:
  Tensor(const Layout& layout, infiniDtype_t dtype) : layout_(layout), dtype_(dtype) {
    EXPECT_EQ(infiniopCreateTensorDescriptor(&desc_, layout.shape.size(), layout.shape.data(),
                                             layout.strides.data(), dtype),
              INFINI_STATUS_SUCCESS);
    host_.assign(std::max<size_t>(layout.Span(), 1) * SizeOf(dtype), 0);
    EXPECT_EQ(infinirtMalloc(&device_, host_.size()), infinirtSuccess);
  }
  ~Tensor() {
    infiniopDestroyTensorDescriptor(desc_);
    infinirtFree(device_);
  }
  Tensor(const Tensor&) = delete;
  Tensor& operator=(const Tensor&) = delete;

  infiniopTensorDescriptor_t desc() const { return desc_; }
  void* data() const { return device_; }
  const Layout& layout() const { return layout_; }

  // Element i (row-major) of the host copy.
  double At(size_t i) const { return Load(dtype_, &host_[layout_.Offset(i) * SizeOf(dtype_)]); }
  void Set(size_t i, double value) {
    Store(dtype_, &host_[layout_.Offset(i) * SizeOf(dtype_)], value);
  }

  void Upload(infinirtStream_t stream = nullptr) {
    ASSERT_EQ(infinirtMemcpyAsync(device_, host_.data(), host_.size(), infinirtMemcpyHostToDevice,
                                  stream),
              infinirtSuccess);
  }
  void Download(infinirtStream_t stream = nullptr) {
    ASSERT_EQ(infinirtMemcpyAsync(host_.data(), device_, host_.size(), infinirtMemcpyDeviceToHost,
                                  stream),
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
  std::vector<unsigned char> host_;
  void* device_ = nullptr;
};

bool IsInteger(infiniDtype_t dtype) {
  return dtype == INFINI_DTYPE_I32 || dtype == INFINI_DTYPE_I64 || dtype == INFINI_DTYPE_I8;
}

// The host value a dtype stores for a double (the reference rounds its result the same way).
double Rounded(infiniDtype_t dtype, double value) {
  unsigned char bytes[16];
  Store(dtype, bytes, value);
  return Load(dtype, bytes);
}

void ExpectClose(infiniDtype_t dtype, double expected, double found, size_t index) {
  if (IsInteger(dtype)) {
    EXPECT_EQ(found, expected) << "element " << index;
    return;
  }
  const double bound = Tolerance(dtype) * std::max(1.0, std::fabs(expected));
  EXPECT_NEAR(found, expected, bound) << "element " << index << ", dtype " << dtype;
}

class InfiniopTest : public ::testing::Test {
 protected:
  void SetUp() override {
    int cpu = -1;
    ASSERT_EQ(infinirtDeviceGetOrdinal(&cpu, INFINI_DEVICE_CPU, 0), infinirtSuccess);
    ASSERT_EQ(infinirtSetDevice(cpu), infinirtSuccess);
    ASSERT_EQ(infiniopCreateHandle(&handle), INFINI_STATUS_SUCCESS);
    ASSERT_EQ(infinirtStreamCreate(&stream), infinirtSuccess);
  }
  void TearDown() override {
    infinirtStreamDestroy(stream);
    EXPECT_EQ(infiniopDestroyHandle(handle), INFINI_STATUS_SUCCESS);
  }

  infiniopHandle_t handle = nullptr;
  infinirtStream_t stream = nullptr;
};

// --- Handles and tensor descriptors ----------------------------------------------------------

TEST_F(InfiniopTest, AHandleBelongsToTheCurrentDeviceAndGoesOnce) {
  infiniopHandle_t second = nullptr;
  ASSERT_EQ(infiniopCreateHandle(&second), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopDestroyHandle(second), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopDestroyHandle(second), INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopDestroyHandle(nullptr), INFINI_STATUS_NULL_POINTER);
  EXPECT_EQ(infiniopCreateHandle(nullptr), INFINI_STATUS_NULL_POINTER);
}

TEST_F(InfiniopTest, TensorDescriptorsRefuseBadInput) {
  const size_t shape[] = {2, 3};
  infiniopTensorDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateTensorDescriptor(&desc, 2, shape, nullptr, INFINI_DTYPE_INVALID),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(
      infiniopCreateTensorDescriptor(&desc, 2, shape, nullptr, static_cast<infiniDtype_t>(99)),
      INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateTensorDescriptor(nullptr, 2, shape, nullptr, INFINI_DTYPE_F32),
            INFINI_STATUS_NULL_POINTER);
  EXPECT_EQ(infiniopCreateTensorDescriptor(&desc, 2, nullptr, nullptr, INFINI_DTYPE_F32),
            INFINI_STATUS_NULL_POINTER);
  const size_t huge[] = {size_t{1} << 40, size_t{1} << 40};
  EXPECT_EQ(infiniopCreateTensorDescriptor(&desc, 2, huge, nullptr, INFINI_DTYPE_F32),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  ASSERT_EQ(infiniopCreateTensorDescriptor(&desc, 0, nullptr, nullptr, INFINI_DTYPE_F32),
            INFINI_STATUS_SUCCESS);  // a scalar
  EXPECT_EQ(infiniopDestroyTensorDescriptor(desc), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopDestroyTensorDescriptor(desc), INFINI_STATUS_BAD_PARAM);
}

// --- Elementwise operators against the reference ---------------------------------------------

using Binary = infiniStatus_t (*)(infiniopHandle_t, infiniopAddDescriptor_t*,
                                  infiniopTensorDescriptor_t, infiniopTensorDescriptor_t,
                                  infiniopTensorDescriptor_t);
using BinaryRun = infiniStatus_t (*)(infiniopAddDescriptor_t, void*, size_t, void*, const void*,
                                     const void*, void*);
using BinaryDestroy = infiniStatus_t (*)(infiniopAddDescriptor_t);

struct ElementwiseOperator {
  const char* name;
  Binary create;
  BinaryRun run;
  BinaryDestroy destroy;
  double (*reference)(double a, double b);
  std::vector<infiniDtype_t> dtypes;
};

const std::vector<ElementwiseOperator>& ElementwiseOperators() {
  static const std::vector<ElementwiseOperator> operators = {
      {"Add",
       infiniopCreateAddDescriptor,
       infiniopAdd,
       infiniopDestroyAddDescriptor,
       [](double a, double b) { return a + b; },
       {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64, INFINI_DTYPE_I32,
        INFINI_DTYPE_I64}},
      {"Mul",
       infiniopCreateMulDescriptor,
       infiniopMul,
       infiniopDestroyMulDescriptor,
       [](double a, double b) { return a * b; },
       {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64, INFINI_DTYPE_I32,
        INFINI_DTYPE_I64}},
      {"SwiGLU",
       infiniopCreateSwiGLUDescriptor,
       infiniopSwiGLU,
       infiniopDestroySwiGLUDescriptor,
       [](double a, double b) { return a * b / (1.0 + std::exp(-b)); },
       {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64}},
  };
  return operators;
}

// c, a, b layouts of one case.
struct Case {
  const char* name;
  Layout c, a, b;
};

std::vector<Case> Cases() {
  Layout transposed{{13, 17}, {1, 13}};  // a column-major 13 x 17
  Layout row_broadcast{{13, 17}, {0, 1}};
  Layout sliced{{3, 5, 7}, {80, 16, 2}};  // every other element of a larger tensor
  return {
      {"contiguous", Layout::Contiguous({13, 17}), Layout::Contiguous({13, 17}),
       Layout::Contiguous({13, 17})},
      {"transposed input", Layout::Contiguous({13, 17}), transposed, Layout::Contiguous({13, 17})},
      {"broadcast input", Layout::Contiguous({13, 17}), Layout::Contiguous({13, 17}),
       row_broadcast},
      {"non-contiguous 3-D, odd sizes", Layout::Contiguous({3, 5, 7}), sliced, sliced},
      {"a 0-sized dimension", Layout::Contiguous({0, 5}), Layout::Contiguous({0, 5}),
       Layout::Contiguous({0, 5})},
      {"a scalar", Layout::Contiguous({}), Layout::Contiguous({}), Layout::Contiguous({})},
      {"one long row", Layout::Contiguous({1, 1027}), Layout::Contiguous({1, 1027}),
       Layout::Contiguous({1, 1027})},
  };
}

TEST_F(InfiniopTest, ElementwiseOperatorsMatchTheReferenceForEveryDtypeAndLayout) {
  std::mt19937 random(11);
  for (const ElementwiseOperator& op : ElementwiseOperators()) {
    for (infiniDtype_t dtype : op.dtypes) {
      for (const Case& layouts : Cases()) {
        SCOPED_TRACE(std::string(op.name) + ", dtype " + std::to_string(dtype) + ", " +
                     layouts.name);
        Tensor c(layouts.c, dtype), a(layouts.a, dtype), b(layouts.b, dtype);
        a.FillRandom(&random, IsInteger(dtype));
        b.FillRandom(&random, IsInteger(dtype));
        a.Upload(stream);
        b.Upload(stream);
        infiniopAddDescriptor_t desc = nullptr;
        ASSERT_EQ(op.create(handle, &desc, c.desc(), a.desc(), b.desc()), INFINI_STATUS_SUCCESS);
        ASSERT_EQ(op.run(desc, nullptr, 0, c.data(), a.data(), b.data(), stream),
                  INFINI_STATUS_SUCCESS);
        c.Download(stream);
        ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
        for (size_t i = 0; i < layouts.c.Elements(); ++i) {
          // The inputs as stored, the result computed exactly and rounded once.
          const double expected = Rounded(dtype, op.reference(a.At(i), b.At(i)));
          ExpectClose(dtype, expected, c.At(i), i);
        }
        EXPECT_EQ(op.destroy(desc), INFINI_STATUS_SUCCESS);
      }
    }
  }
}

TEST_F(InfiniopTest, RearrangeCopiesAnyStridesOfAnyDtype) {
  for (infiniDtype_t dtype :
       {INFINI_DTYPE_F32, INFINI_DTYPE_I8, INFINI_DTYPE_I64, INFINI_DTYPE_F16}) {
    SCOPED_TRACE("dtype " + std::to_string(dtype));
    Layout dst_layout{{6, 9}, {1, 7}};  // column-major with padding
    Tensor dst(dst_layout, dtype), src(Layout::Contiguous({6, 9}), dtype);
    std::mt19937 random(3);
    src.FillRandom(&random, true);
    src.Upload(stream);
    infiniopRearrangeDescriptor_t desc = nullptr;
    ASSERT_EQ(infiniopCreateRearrangeDescriptor(handle, &desc, dst.desc(), src.desc()),
              INFINI_STATUS_SUCCESS);
    ASSERT_EQ(infiniopRearrange(desc, dst.data(), src.data(), stream), INFINI_STATUS_SUCCESS);
    dst.Download(stream);
    ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    for (size_t i = 0; i < dst_layout.Elements(); ++i) EXPECT_EQ(dst.At(i), src.At(i)) << i;
    EXPECT_EQ(infiniopDestroyRearrangeDescriptor(desc), INFINI_STATUS_SUCCESS);
  }
}

// --- Stream order and graphs ------------------------------------------------------------------

// Copies in, the operator and the copy out are queued behind a closed gate: the operator sees the
// copies' data and the copy out sees its result, with no synchronisation in between.
TEST_F(InfiniopTest, AnOperatorRunsInStreamOrderBetweenAsyncCopies) {
  const Layout layout = Layout::Contiguous({64, 33});
  Tensor c(layout, INFINI_DTYPE_F32), a(layout, INFINI_DTYPE_F32), b(layout, INFINI_DTYPE_F32);
  std::mt19937 random(5);
  a.FillRandom(&random, false);
  b.FillRandom(&random, false);
  infiniopAddDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateAddDescriptor(handle, &desc, c.desc(), a.desc(), b.desc()),
            INFINI_STATUS_SUCCESS);
  infinirt::testing::Gate gate;
  ASSERT_EQ(gate.Block(stream), infinirtSuccess);
  a.Upload(stream);
  b.Upload(stream);
  ASSERT_EQ(infiniopAdd(desc, nullptr, 0, c.data(), a.data(), b.data(), stream),
            INFINI_STATUS_SUCCESS);
  c.Download(stream);
  EXPECT_EQ(infinirtStreamQuery(stream), infinirtErrorNotReady);  // nothing ran yet
  infinirtGetLastError();
  gate.Open();
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  for (size_t i = 0; i < layout.Elements(); ++i) {
    ExpectClose(INFINI_DTYPE_F32, Rounded(INFINI_DTYPE_F32, a.At(i) + b.At(i)), c.At(i), i);
  }
  EXPECT_FALSE(gate.timed_out());
  EXPECT_EQ(infiniopDestroyAddDescriptor(desc), INFINI_STATUS_SUCCESS);
}

TEST_F(InfiniopTest, AnOperatorCapturedInAGraphGivesTheSameResultsOverAHundredReplays) {
  const Layout layout = Layout::Contiguous({31, 7});
  Tensor c(layout, INFINI_DTYPE_F32), a(layout, INFINI_DTYPE_F32), b(layout, INFINI_DTYPE_F32);
  infiniopMulDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateMulDescriptor(handle, &desc, c.desc(), a.desc(), b.desc()),
            INFINI_STATUS_SUCCESS);
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeThreadLocal),
            infinirtSuccess);
  a.Upload(stream);  // captured: each replay copies the host values as they are then
  ASSERT_EQ(infiniopMul(desc, nullptr, 0, c.data(), a.data(), b.data(), stream),
            INFINI_STATUS_SUCCESS);
  infinirtGraph_t graph = nullptr;
  ASSERT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtSuccess);
  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  std::mt19937 random(9);
  b.FillRandom(&random, false);
  b.Upload(stream);
  for (int replay = 0; replay < 100; ++replay) {
    a.FillRandom(&random, false);
    ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
    c.Download(stream);
    ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    for (size_t i = 0; i < layout.Elements(); ++i) {
      ASSERT_NEAR(c.At(i), Rounded(INFINI_DTYPE_F32, a.At(i) * b.At(i)), 1e-6 * 4)
          << "replay " << replay << ", element " << i;
    }
  }
  infinirtGraphExecDestroy(exec);
  infinirtGraphDestroy(graph);
  EXPECT_EQ(infiniopDestroyMulDescriptor(desc), INFINI_STATUS_SUCCESS);
}

// --- Validation and bad input -----------------------------------------------------------------

TEST_F(InfiniopTest, DescriptorsValidateShapesDtypesAndStrides) {
  const Layout layout = Layout::Contiguous({4, 5});
  Tensor c(layout, INFINI_DTYPE_F32), a(layout, INFINI_DTYPE_F32);
  Tensor other_shape(Layout::Contiguous({5, 4}), INFINI_DTYPE_F32);
  Tensor other_dtype(layout, INFINI_DTYPE_F64);
  Tensor bytes(layout, INFINI_DTYPE_I8);
  Tensor broadcast(Layout{{4, 5}, {0, 1}}, INFINI_DTYPE_F32);
  infiniopAddDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateAddDescriptor(handle, &desc, c.desc(), a.desc(), other_shape.desc()),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(infiniopCreateAddDescriptor(handle, &desc, c.desc(), a.desc(), other_dtype.desc()),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateAddDescriptor(handle, &desc, bytes.desc(), bytes.desc(), bytes.desc()),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateSwiGLUDescriptor(handle, &desc, other_dtype.desc(), other_dtype.desc(),
                                           other_dtype.desc()),
            INFINI_STATUS_SUCCESS);  // F64 is one of SwiGLU's
  EXPECT_EQ(infiniopDestroySwiGLUDescriptor(desc), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopCreateAddDescriptor(handle, &desc, broadcast.desc(), a.desc(), a.desc()),
            INFINI_STATUS_BAD_TENSOR_STRIDES);
  EXPECT_EQ(infiniopCreateRearrangeDescriptor(handle, &desc, c.desc(), other_shape.desc()),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(infiniopCreateRearrangeDescriptor(handle, &desc, c.desc(), other_dtype.desc()),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
}

TEST_F(InfiniopTest, BadHandlesDescriptorsAndPointersGetAStatusNeverACrash) {
  const Layout layout = Layout::Contiguous({4, 5});
  Tensor c(layout, INFINI_DTYPE_F32), a(layout, INFINI_DTYPE_F32);
  infiniopAddDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateAddDescriptor(nullptr, &desc, c.desc(), a.desc(), a.desc()),
            INFINI_STATUS_NULL_POINTER);
  EXPECT_EQ(infiniopCreateAddDescriptor(handle, nullptr, c.desc(), a.desc(), a.desc()),
            INFINI_STATUS_NULL_POINTER);
  EXPECT_EQ(infiniopCreateAddDescriptor(handle, &desc, c.desc(), nullptr, a.desc()),
            INFINI_STATUS_NULL_POINTER);
  // A handle and a tensor descriptor that were destroyed.
  infiniopHandle_t gone = nullptr;
  ASSERT_EQ(infiniopCreateHandle(&gone), INFINI_STATUS_SUCCESS);
  ASSERT_EQ(infiniopDestroyHandle(gone), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopCreateAddDescriptor(gone, &desc, c.desc(), a.desc(), a.desc()),
            INFINI_STATUS_BAD_PARAM);
  const size_t shape[] = {4, 5};
  infiniopTensorDescriptor_t destroyed = nullptr;
  ASSERT_EQ(infiniopCreateTensorDescriptor(&destroyed, 2, shape, nullptr, INFINI_DTYPE_F32),
            INFINI_STATUS_SUCCESS);
  ASSERT_EQ(infiniopDestroyTensorDescriptor(destroyed), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopCreateAddDescriptor(handle, &desc, c.desc(), destroyed, a.desc()),
            INFINI_STATUS_BAD_PARAM);

  ASSERT_EQ(infiniopCreateAddDescriptor(handle, &desc, c.desc(), a.desc(), a.desc()),
            INFINI_STATUS_SUCCESS);
  size_t workspace = 99;
  EXPECT_EQ(infiniopGetAddWorkspaceSize(desc, &workspace), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(workspace, 0u);
  EXPECT_EQ(infiniopGetAddWorkspaceSize(desc, nullptr), INFINI_STATUS_NULL_POINTER);
  EXPECT_EQ(infiniopAdd(desc, nullptr, 0, nullptr, a.data(), a.data(), stream),
            INFINI_STATUS_NULL_POINTER);
  // A descriptor of another operator.
  EXPECT_EQ(infiniopMul(desc, nullptr, 0, c.data(), a.data(), a.data(), stream),
            INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopDestroyMulDescriptor(desc), INFINI_STATUS_BAD_PARAM);
  infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
  int id = -1;
  EXPECT_EQ(infiniopGetDescriptorDeviceType(desc, &type), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(type, INFINI_DEVICE_CPU);
  EXPECT_EQ(infiniopGetDescriptorDeviceId(desc, &id), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(id, 0);
  EXPECT_EQ(infiniopDestroyAddDescriptor(desc), INFINI_STATUS_SUCCESS);
  // Used after it was destroyed.
  EXPECT_EQ(infiniopAdd(desc, nullptr, 0, c.data(), a.data(), a.data(), stream),
            INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopDestroyAddDescriptor(desc), INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopGetDescriptorDeviceType(desc, &type), INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopAdd(nullptr, nullptr, 0, c.data(), a.data(), a.data(), stream),
            INFINI_STATUS_NULL_POINTER);
}

// The operators whose rules and kernels come later say so, honestly.
TEST_F(InfiniopTest, OperatorsNotImplementedYetAnswerNotImplemented) {
  Tensor matrix(Layout::Contiguous({4, 4}), INFINI_DTYPE_F32);
  Tensor vector(Layout::Contiguous({4}), INFINI_DTYPE_F32);
  Tensor scalar(Layout::Contiguous({}), INFINI_DTYPE_I64);
  infiniopGemmDescriptor_t desc = nullptr;
  EXPECT_EQ(
      infiniopCreateGemmDescriptor(handle, &desc, matrix.desc(), matrix.desc(), matrix.desc()),
      INFINI_STATUS_NOT_IMPLEMENTED);
  EXPECT_EQ(infiniopCreateRMSNormDescriptor(handle, &desc, matrix.desc(), matrix.desc(),
                                            vector.desc(), 1e-6f),
            INFINI_STATUS_NOT_IMPLEMENTED);
  EXPECT_EQ(infiniopCreateCausalSoftmaxDescriptor(handle, &desc, matrix.desc(), matrix.desc()),
            INFINI_STATUS_NOT_IMPLEMENTED);
  EXPECT_EQ(infiniopCreateRandomSampleDescriptor(handle, &desc, scalar.desc(), vector.desc()),
            INFINI_STATUS_NOT_IMPLEMENTED);
  EXPECT_EQ(infiniopCreateRoPEDescriptor(handle, &desc, matrix.desc(), matrix.desc(), vector.desc(),
                                         matrix.desc(), matrix.desc(), INFINIOP_ROPE_ALGO_GPT_J),
            INFINI_STATUS_NOT_IMPLEMENTED);
}

}  // namespace
