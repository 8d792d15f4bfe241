// InfiniOP on the CPU backend: handles, tensor descriptors, the binary elementwise operators (Add,
// Sub, Mul, SwiGLU) and Rearrange against references computed in double on the host, their
// validation and bad input, stream order and graph replay. The activations: activation_test.cc;
// the other operators: llm_operators_test.cc.
//
// Tolerances (relative to the reference's magnitude, with the same floor as an absolute bound):
// F64 1e-12, F32 1e-6, F16 1e-3 (11-bit significand), BF16 8e-3 (8-bit significand); integers
// exact (with wrap-around).
#include "infiniop_test_support.h"

namespace infiniop_test {
namespace {

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
      {"Sub",
       infiniopCreateSubDescriptor,
       infiniopSub,
       infiniopDestroySubDescriptor,
       [](double a, double b) { return a - b; },
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
      // Enough elements for the CPU backend to split the work across its threads: one flat
      // loop, then rows (a broadcast input keeps the dimensions apart).
      {"large", Layout::Contiguous({301, 1031}), Layout::Contiguous({301, 1031}),
       Layout::Contiguous({301, 1031})},
      {"large, broadcast input", Layout::Contiguous({301, 1031}), Layout::Contiguous({301, 1031}),
       Layout{{301, 1031}, {0, 1}}},
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

// SwiGLU where exp overflows or underflows, and on infinities and NaN: the reference's value (in
// double, rounded to F32), NaN where it is NaN.
TEST_F(InfiniopTest, SwiGLUAtTheEdgesOfExp) {
  const double gates[] = {-1000, -104, -100, -88.5, -87.4, -87.3, -50, -1e-3, 0,        1e-3,
                          1,     20,   50,   87.3,  88.5,  88.8,  100, 1000,  INFINITY, -INFINITY,
                          NAN,   -2.5, 3.75, -60,   60,    -10,   10,  -0.5,  0.5,      7};
  const size_t count = sizeof gates / sizeof gates[0];
  Tensor c(Layout::Contiguous({count}), INFINI_DTYPE_F32),
      a(Layout::Contiguous({count}), INFINI_DTYPE_F32),
      b(Layout::Contiguous({count}), INFINI_DTYPE_F32);
  for (size_t i = 0; i < count; ++i) {
    a.Set(i, 1.5);
    b.Set(i, gates[i]);
  }
  a.Upload(stream);
  b.Upload(stream);
  infiniopSwiGLUDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateSwiGLUDescriptor(handle, &desc, c.desc(), a.desc(), b.desc()),
            INFINI_STATUS_SUCCESS);
  ASSERT_EQ(infiniopSwiGLU(desc, nullptr, 0, c.data(), a.data(), b.data(), stream),
            INFINI_STATUS_SUCCESS);
  c.Download(stream);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  for (size_t i = 0; i < count; ++i) {
    const double gate = b.At(i);
    const double expected = Rounded(INFINI_DTYPE_F32, 1.5 * gate / (1.0 + std::exp(-gate)));
    if (std::isnan(expected)) {
      EXPECT_TRUE(std::isnan(c.At(i))) << "gate " << gate << ": " << c.At(i);
    } else if (std::isinf(expected)) {
      EXPECT_EQ(c.At(i), expected) << "gate " << gate;
    } else {
      // Results below F32's normal range may be flushed to 0.
      ExpectClose(INFINI_DTYPE_F32, expected, c.At(i), i);
    }
  }
  EXPECT_EQ(infiniopDestroySwiGLUDescriptor(desc), INFINI_STATUS_SUCCESS);
}

// Copies src into dst for four dtypes of 1, 2, 4 and 8 bytes, and compares every element.
void RearrangeEveryDtype(InfiniopTest* test, const Layout& dst_layout, const Layout& src_layout);
// Rearranges *src (filled on the host) into a tensor of dst_layout on the test's stream; how many
// elements differ from src's.
size_t RearrangeAndCountWrong(InfiniopTest* test, const Layout& dst_layout, Tensor* src);

TEST_F(InfiniopTest, RearrangeCopiesAnyStridesOfAnyDtype) {
  // Column-major with padding; then batches of transposes that end in partial tiles of the CPU
  // backend's (64 x 8) along both dimensions.
  const std::pair<Layout, Layout> cases[] = {
      {Layout{{6, 9}, {1, 7}}, Layout::Contiguous({6, 9})},
      {Layout{{3, 37, 45}, {37 * 45, 1, 37}}, Layout::Contiguous({3, 37, 45})},
      {Layout::Contiguous({3, 37, 45}), Layout{{3, 37, 45}, {37 * 45, 1, 37}}},
      {Layout::Contiguous({600, 700}), Layout{{600, 700}, {1, 600}}},  // split across threads
  };
  for (const auto& [dst_layout, src_layout] : cases) {
    RearrangeEveryDtype(this, dst_layout, src_layout);
  }
}

// Transposes of 4-byte elements, which the CPU backend moves in 16 x 16 tiles in vector registers
// where the processor has AVX2 (CTest runs this again with INFINIOP_CPU_ISA=baseline and avx2):
// either side contiguous, partial tiles at both edges, batches, and a destination past 4 MiB with
// 64-byte aligned rows, written with streaming stores under AVX-512.
TEST_F(InfiniopTest, RearrangeTransposesFourByteElementsInTiles) {
  const std::pair<Layout, Layout> cases[] = {
      {Layout::Contiguous({40, 50}), Layout{{40, 50}, {1, 40}}},
      {Layout{{50, 40}, {1, 50}}, Layout::Contiguous({50, 40})},
      {Layout::Contiguous({3, 33, 48}), Layout{{3, 33, 48}, {33 * 48, 1, 33}}},
      {Layout{{2, 48, 33}, {48 * 33, 1, 48}}, Layout::Contiguous({2, 48, 33})},
      {Layout::Contiguous({1043, 1088}), Layout{{1043, 1088}, {1, 1043}}},
      {Layout{{1043, 1088}, {1, 1043}}, Layout::Contiguous({1043, 1088})},
  };
  for (const auto& [dst_layout, src_layout] : cases) {
    for (infiniDtype_t dtype : {INFINI_DTYPE_F32, INFINI_DTYPE_I32}) {
      SCOPED_TRACE("dtype " + std::to_string(dtype) + ", shape " +
                   std::to_string(dst_layout.shape[0]) + " x " +
                   std::to_string(dst_layout.shape[1]));
      Tensor src(src_layout, dtype);
      // Every element its own value (exact in F32 below 2^24), so that one out of place shows.
      for (size_t i = 0; i < src_layout.Elements(); ++i) src.Set(i, static_cast<double>(i));
      EXPECT_EQ(RearrangeAndCountWrong(this, dst_layout, &src), 0u);
    }
  }
}

void RearrangeEveryDtype(InfiniopTest* test, const Layout& dst_layout, const Layout& src_layout) {
  for (infiniDtype_t dtype :
       {INFINI_DTYPE_F32, INFINI_DTYPE_I8, INFINI_DTYPE_I64, INFINI_DTYPE_F16}) {
    SCOPED_TRACE("dtype " + std::to_string(dtype) + ", " + std::to_string(dst_layout.shape.size()) +
                 "-D");
    Tensor src(src_layout, dtype);
    std::mt19937 random(3);
    src.FillRandom(&random, true);
    EXPECT_EQ(RearrangeAndCountWrong(test, dst_layout, &src), 0u);
  }
}

size_t RearrangeAndCountWrong(InfiniopTest* test, const Layout& dst_layout, Tensor* src) {
  Tensor dst(dst_layout, src->dtype());
  src->Upload(test->stream);
  infiniopRearrangeDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateRearrangeDescriptor(test->handle, &desc, dst.desc(), src->desc()),
            INFINI_STATUS_SUCCESS);
  if (desc == nullptr) return dst_layout.Elements();
  EXPECT_EQ(infiniopRearrange(desc, dst.data(), src->data(), test->stream), INFINI_STATUS_SUCCESS);
  dst.Download(test->stream);
  EXPECT_EQ(infinirtStreamSynchronize(test->stream), infinirtSuccess);
  EXPECT_EQ(infiniopDestroyRearrangeDescriptor(desc), INFINI_STATUS_SUCCESS);
  size_t wrong = 0;
  for (size_t i = 0; i < dst_layout.Elements(); ++i) wrong += dst.At(i) != src->At(i);
  return wrong;
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
  EXPECT_EQ(type, device_type);
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

}  // namespace
}  // namespace infiniop_test
