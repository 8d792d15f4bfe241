// The activations (y = f(x): Relu, Sigmoid, Silu, Gelu, GeluTanh) against references computed in
// double on the host, on every floating dtype and the layouts the binary operators are tested
// with (contiguous, transposed, broadcast input, strided, 0-sized, a scalar, one long row, large
// enough to be split across threads, in place), and at the edges of exp and erf (infinities, NaN,
// overflow). Tolerances are infiniop_test.cc's.
#include <cmath>
#include <random>
#include <string>
#include <vector>

#include "infiniop_test_support.h"

namespace infiniop_test {
namespace {

using UnaryCreate = infiniStatus_t (*)(infiniopHandle_t, infiniopReluDescriptor_t*,
                                       infiniopTensorDescriptor_t, infiniopTensorDescriptor_t);
using UnaryRun = infiniStatus_t (*)(infiniopReluDescriptor_t, void*, size_t, void*, const void*,
                                    void*);
using UnaryDestroy = infiniStatus_t (*)(infiniopReluDescriptor_t);
using UnaryWorkspace = infiniStatus_t (*)(infiniopReluDescriptor_t, size_t*);

struct Activation {
  const char* name;
  UnaryCreate create;
  UnaryWorkspace workspace;
  UnaryRun run;
  UnaryDestroy destroy;
  double (*reference)(double x);
};

double ReferenceSigmoid(double x) { return 1.0 / (1.0 + std::exp(-x)); }

const std::vector<Activation>& Activations() {
  static const std::vector<Activation> activations = {
      {"Relu", infiniopCreateReluDescriptor, infiniopGetReluWorkspaceSize, infiniopRelu,
       infiniopDestroyReluDescriptor,
       [](double x) { return std::isnan(x) ? x : std::max(x, 0.0); }},
      {"Sigmoid", infiniopCreateSigmoidDescriptor, infiniopGetSigmoidWorkspaceSize, infiniopSigmoid,
       infiniopDestroySigmoidDescriptor, ReferenceSigmoid},
      {"Silu", infiniopCreateSiluDescriptor, infiniopGetSiluWorkspaceSize, infiniopSilu,
       infiniopDestroySiluDescriptor, [](double x) { return x * ReferenceSigmoid(x); }},
      {"Gelu", infiniopCreateGeluDescriptor, infiniopGetGeluWorkspaceSize, infiniopGelu,
       infiniopDestroyGeluDescriptor,
       [](double x) { return 0.5 * x * (1.0 + std::erf(x / std::sqrt(2.0))); }},
      {"GeluTanh", infiniopCreateGeluTanhDescriptor, infiniopGetGeluTanhWorkspaceSize,
       infiniopGeluTanh, infiniopDestroyGeluTanhDescriptor,
       [](double x) {
         const double u = std::sqrt(2.0 / M_PI) * (x + 0.044715 * x * x * x);
         return 0.5 * x * (1.0 + std::tanh(u));
       }},
  };
  return activations;
}

const infiniDtype_t kActivationDtypes[] = {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32,
                                           INFINI_DTYPE_F64};

struct ActivationCase {
  const char* name;
  Layout y, x;
};

std::vector<ActivationCase> ActivationCases() {
  return {
      {"contiguous", Layout::Contiguous({13, 17}), Layout::Contiguous({13, 17})},
      {"transposed input", Layout::Contiguous({13, 17}), Layout{{13, 17}, {1, 13}}},
      {"transposed output", Layout{{13, 17}, {1, 13}}, Layout::Contiguous({13, 17})},
      {"broadcast input", Layout::Contiguous({13, 17}), Layout{{13, 17}, {0, 1}}},
      {"non-contiguous 3-D, odd sizes", Layout::Contiguous({3, 5, 7}),
       Layout{{3, 5, 7}, {80, 16, 2}}},
      {"a 0-sized dimension", Layout::Contiguous({0, 5}), Layout::Contiguous({0, 5})},
      {"a scalar", Layout::Contiguous({}), Layout::Contiguous({})},
      {"one long row", Layout::Contiguous({1, 1027}), Layout::Contiguous({1, 1027})},
      {"large", Layout::Contiguous({301, 1031}), Layout::Contiguous({301, 1031})},
      {"large, strided input", Layout::Contiguous({301, 1031}), Layout{{301, 1031}, {2062, 2}}},
  };
}

// Runs `op` on x into y on the test's stream and waits.
void RunActivation(InfiniopTest* test, const Activation& op, Tensor* y, Tensor* x) {
  infiniopReluDescriptor_t desc = nullptr;
  ASSERT_EQ(op.create(test->handle, &desc, y->desc(), x->desc()), INFINI_STATUS_SUCCESS);
  size_t workspace = 1;
  EXPECT_EQ(op.workspace(desc, &workspace), INFINI_STATUS_SUCCESS);
  DeviceBuffer buffer(workspace);
  ASSERT_EQ(op.run(desc, buffer.data(), workspace, y->data(), x->data(), test->stream),
            INFINI_STATUS_SUCCESS);
  y->Download(test->stream);
  ASSERT_EQ(infinirtStreamSynchronize(test->stream), infinirtSuccess);
  EXPECT_EQ(op.destroy(desc), INFINI_STATUS_SUCCESS);
}

TEST_F(InfiniopTest, ActivationsMatchTheReferenceForEveryDtypeAndLayout) {
  std::mt19937 random(17);
  for (const Activation& op : Activations()) {
    for (infiniDtype_t dtype : kActivationDtypes) {
      for (const ActivationCase& layouts : ActivationCases()) {
        SCOPED_TRACE(std::string(op.name) + ", dtype " + std::to_string(dtype) + ", " +
                     layouts.name);
        Tensor y(layouts.y, dtype), x(layouts.x, dtype);
        x.FillRandom(&random, false);
        x.Upload(stream);
        RunActivation(this, op, &y, &x);
        for (size_t i = 0; i < layouts.y.Elements(); ++i) {
          ExpectClose(dtype, Rounded(dtype, op.reference(x.At(i))), y.At(i), i);
        }
      }
    }
  }
}

// y and x one tensor: each element is read before it is written.
TEST_F(InfiniopTest, ActivationsComputeInPlace) {
  std::mt19937 random(19);
  for (const Activation& op : Activations()) {
    SCOPED_TRACE(op.name);
    Tensor x(Layout::Contiguous({7, 300}), INFINI_DTYPE_F32);
    x.FillRandom(&random, false);
    std::vector<double> before(x.layout().Elements());
    for (size_t i = 0; i < before.size(); ++i) before[i] = x.At(i);
    x.Upload(stream);
    RunActivation(this, op, &x, &x);
    for (size_t i = 0; i < before.size(); ++i) {
      ExpectClose(INFINI_DTYPE_F32, Rounded(INFINI_DTYPE_F32, op.reference(before[i])), x.At(i), i);
    }
  }
}

// Where exp or erf overflow or underflow, and on infinities and NaN: the reference's value (in
// double, rounded to F32); NaN where it is NaN, or where an infinity meets a 0 (GELU's
// x * (1 + erf(x / sqrt 2)) at -infinity, which the reference makes NaN too).
TEST_F(InfiniopTest, ActivationsAtTheEdgesOfExpAndErf) {
  const double values[] = {-1000, -104, -100, -88.5, -87.4, -87.3, -50, -1e-3, 0,         1e-3,
                           1,     20,   50,   87.3,  88.5,  88.8,  100, 1000,  -INFINITY, INFINITY,
                           NAN,   -2.5, 3.75, -60,   60,    -10,   10,  -0.5,  0.5,       -5.5};
  const size_t count = sizeof values / sizeof values[0];
  for (const Activation& op : Activations()) {
    SCOPED_TRACE(op.name);
    Tensor y(Layout::Contiguous({count}), INFINI_DTYPE_F32),
        x(Layout::Contiguous({count}), INFINI_DTYPE_F32);
    for (size_t i = 0; i < count; ++i) x.Set(i, values[i]);
    x.Upload(stream);
    RunActivation(this, op, &y, &x);
    for (size_t i = 0; i < count; ++i) {
      const double expected = Rounded(INFINI_DTYPE_F32, op.reference(values[i]));
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(y.At(i))) << "x " << values[i] << ": " << y.At(i);
      } else if (std::isinf(expected)) {
        EXPECT_EQ(y.At(i), expected) << "x " << values[i];
      } else {
        ExpectClose(INFINI_DTYPE_F32, expected, y.At(i), i);
      }
    }
  }
}

TEST_F(InfiniopTest, ActivationsRefuseIntegersAndMismatchedTensors) {
  for (const Activation& op : Activations()) {
    SCOPED_TRACE(op.name);
    infiniopReluDescriptor_t desc = nullptr;
    Tensor yi(Layout::Contiguous({4}), INFINI_DTYPE_I32),
        xi(Layout::Contiguous({4}), INFINI_DTYPE_I32);
    EXPECT_EQ(op.create(handle, &desc, yi.desc(), xi.desc()), INFINI_STATUS_BAD_TENSOR_DTYPE);
    Tensor y(Layout::Contiguous({4}), INFINI_DTYPE_F32),
        x16(Layout::Contiguous({4}), INFINI_DTYPE_F16);
    EXPECT_EQ(op.create(handle, &desc, y.desc(), x16.desc()), INFINI_STATUS_BAD_TENSOR_DTYPE);
    Tensor x5(Layout::Contiguous({5}), INFINI_DTYPE_F32);
    EXPECT_EQ(op.create(handle, &desc, y.desc(), x5.desc()), INFINI_STATUS_BAD_TENSOR_SHAPE);
    Tensor broadcast_y(Layout{{4}, {0}}, INFINI_DTYPE_F32);
    EXPECT_EQ(op.create(handle, &desc, broadcast_y.desc(), y.desc()),
              INFINI_STATUS_BAD_TENSOR_STRIDES);
    EXPECT_EQ(desc, nullptr);
  }
}

}  // namespace
}  // namespace infiniop_test
