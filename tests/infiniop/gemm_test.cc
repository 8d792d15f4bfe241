// Gemm on the CPU backend (oneDNN, OpenBLAS) against a reference computed in double from the stored
// inputs: every float dtype; row- and column-major operands and result; batches, with a and b
// broadcast along the batch; beta 0 never reading c (NaN there stays out of the result); k = 0;
// and the validation of shapes, dtypes and strides. Tolerance: the dtype's (as elsewhere) times
// the sum of the magnitudes that make up each element, as BLAS accumulates in the input's
// precision (float for F16 and BF16).
#include <sys/resource.h>

#include <cstdlib>

#include "infiniop_test_support.h"

namespace infiniop_test {
namespace {

struct GemmCase {
  const char* name;
  Layout c, a, b;
  float alpha, beta;
};

double GemmTolerance(infiniDtype_t dtype) {
  return dtype == INFINI_DTYPE_F64   ? 1e-12
         : dtype == INFINI_DTYPE_F32 ? 2e-6
                                     : 2 * Tolerance(dtype);
}

std::vector<GemmCase> GemmCases() {
  return {
      {"2-D, row-major", Layout::Contiguous({5, 7}), Layout::Contiguous({5, 3}),
       Layout::Contiguous({3, 7}), 1.5f, 0.5f},
      {"a and b column-major", Layout::Contiguous({5, 7}), Layout{{5, 3}, {1, 5}},
       Layout{{3, 7}, {1, 3}}, 1.0f, 1.0f},
      {"c column-major, padded", Layout{{5, 7}, {1, 8}}, Layout::Contiguous({5, 3}),
       Layout{{3, 7}, {1, 4}}, -0.75f, 2.0f},
      {"batched", Layout::Contiguous({3, 4, 6}), Layout::Contiguous({3, 4, 5}),
       Layout::Contiguous({3, 5, 6}), 1.0f, 0.25f},
      {"a 2-D for every batch, b with a batch of 1", Layout::Contiguous({3, 4, 6}),
       Layout::Contiguous({4, 5}), Layout::Contiguous({1, 5, 6}), 0.5f, 1.0f},
      {"k = 0: c = beta c", Layout::Contiguous({4, 6}), Layout::Contiguous({4, 0}),
       Layout::Contiguous({0, 6}), 1.0f, 3.0f},
      {"one row", Layout::Contiguous({1, 33}), Layout::Contiguous({1, 65}),
       Layout::Contiguous({65, 33}), 1.0f, 0.0f},
      // One row is a matrix-vector product on the CPU: b by rows, b as a weight's transposed
      // view, strided a and c, beta, widths across its blocks of 2048 columns and threads, rows
      // and columns beyond its groups of four and its vectors of 16.
      {"one row, b a transposed view", Layout::Contiguous({1, 600}), Layout::Contiguous({1, 70}),
       Layout{{70, 600}, {1, 70}}, 0.5f, 0.0f},
      {"one row, strided a and c, beta", Layout{{1, 300}, {300, 2}}, Layout{{1, 40}, {40, 3}},
       Layout::Contiguous({40, 300}), 1.25f, -0.5f},
      {"one row of a long product", Layout::Contiguous({1, 520}), Layout::Contiguous({1, 2100}),
       Layout{{2100, 520}, {1, 2100}}, 1.0f, 1.0f},
      {"one row, b by rows across blocks", Layout::Contiguous({1, 4099}),
       Layout::Contiguous({1, 7}), Layout::Contiguous({7, 4099}), 1.0f, 0.0f},
      {"one row, b transposed, a strided, columns beyond fours", Layout::Contiguous({1, 603}),
       Layout{{1, 37}, {37, 2}}, Layout{{37, 603}, {1, 37}}, 1.0f, 0.5f},
  };
}

// Element (batch, i, j) of a tensor whose matrices may be shared by every batch.
double MatrixAt(const Tensor& t, size_t batch, size_t i, size_t j) {
  const std::vector<size_t>& shape = t.layout().shape;
  const size_t rows = shape[shape.size() - 2], cols = shape[shape.size() - 1];
  const size_t batches = shape.size() == 3 ? shape[0] : 1;
  const size_t b = batches == 1 ? 0 : batch;
  return t.At((b * rows + i) * cols + j);
}

void CheckGemm(infiniDtype_t dtype, const GemmCase& g, float alpha, float beta, const Tensor& a,
               const Tensor& b, const Tensor& c, const std::vector<double>& c_before);

// Runs g on one descriptor, with g's alpha and beta and then with each of `more`, c refilled
// with its first contents before each call.
void RunGemm(InfiniopTest* test, infiniDtype_t dtype, const GemmCase& g, bool nan_in_c,
             const std::vector<std::pair<float, float>>& more = {}) {
  SCOPED_TRACE(std::string(g.name) + ", dtype " + std::to_string(dtype) +
               (nan_in_c ? ", NaN in c" : ""));
  std::mt19937 random(31);
  Tensor c(g.c, dtype), a(g.a, dtype), b(g.b, dtype);
  a.FillRandom(&random, false);
  b.FillRandom(&random, false);
  c.FillRandom(&random, false);
  if (nan_in_c) {
    for (size_t i = 0; i < g.c.Elements(); ++i) c.Set(i, NAN);
  }
  std::vector<double> c_before(g.c.Elements());
  for (size_t i = 0; i < c_before.size(); ++i) c_before[i] = c.At(i);
  // c goes up before each call, from its host copy, which the loop refills: an upload here too
  // could still be reading that copy when the loop writes it.
  for (Tensor* t : {&a, &b}) t->Upload(test->stream);
  infiniopGemmDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateGemmDescriptor(test->handle, &desc, c.desc(), a.desc(), b.desc()),
            INFINI_STATUS_SUCCESS);
  size_t workspace_size = 0;
  ASSERT_EQ(infiniopGetGemmWorkspaceSize(desc, &workspace_size), INFINI_STATUS_SUCCESS);
  const DeviceBuffer workspace(workspace_size);
  std::vector<std::pair<float, float>> calls{{g.alpha, g.beta}};
  calls.insert(calls.end(), more.begin(), more.end());
  for (const auto& [alpha, beta] : calls) {
    SCOPED_TRACE("alpha " + std::to_string(alpha) + ", beta " + std::to_string(beta));
    for (size_t i = 0; i < c_before.size(); ++i) c.Set(i, c_before[i]);
    c.Upload(test->stream);
    ASSERT_EQ(infiniopGemm(desc, workspace.data(), workspace_size, c.data(), a.data(), b.data(),
                           alpha, beta, test->stream),
              INFINI_STATUS_SUCCESS);
    c.Download(test->stream);
    ASSERT_EQ(infinirtStreamSynchronize(test->stream), infinirtSuccess);
    CheckGemm(dtype, g, alpha, beta, a, b, c, c_before);
  }
  EXPECT_EQ(infiniopDestroyGemmDescriptor(desc), INFINI_STATUS_SUCCESS);
}

// c against the product computed in double from the stored a, b and c_before.
void CheckGemm(infiniDtype_t dtype, const GemmCase& g, float alpha, float beta, const Tensor& a,
               const Tensor& b, const Tensor& c, const std::vector<double>& c_before) {
  const std::vector<size_t>& shape = g.c.shape;
  const size_t m = shape[shape.size() - 2], n = shape[shape.size() - 1];
  const size_t k = g.a.shape[g.a.shape.size() - 1];
  const size_t batches = shape.size() == 3 ? shape[0] : 1;
  for (size_t batch = 0; batch < batches; ++batch) {
    for (size_t i = 0; i < m; ++i) {
      for (size_t j = 0; j < n; ++j) {
        double sum = 0, magnitude = 0;
        for (size_t p = 0; p < k; ++p) {
          const double product = MatrixAt(a, batch, i, p) * MatrixAt(b, batch, p, j);
          sum += product;
          magnitude += std::fabs(product);
        }
        const size_t index = (batch * m + i) * n + j;
        double expected = alpha * sum;
        magnitude = std::fabs(alpha) * magnitude;
        if (beta != 0) {
          expected += beta * c_before[index];
          magnitude += std::fabs(beta * c_before[index]);
        }
        const double bound = GemmTolerance(dtype) * std::max(1.0, magnitude);
        ASSERT_NEAR(c.At(index), expected, bound) << "element " << index;
      }
    }
  }
}

TEST_F(InfiniopTest, GemmMatchesTheReferenceForEveryDtypeAndLayout) {
  for (infiniDtype_t dtype :
       {INFINI_DTYPE_F32, INFINI_DTYPE_F64, INFINI_DTYPE_F16, INFINI_DTYPE_BF16}) {
    for (const GemmCase& g : GemmCases()) RunGemm(this, dtype, g, /*nan_in_c=*/false);
  }
}

// One descriptor called with several alphas and betas (the CPU backend's oneDNN path keeps a
// primitive per beta): each call computes with its own.
TEST_F(InfiniopTest, OneGemmDescriptorTakesEachCallsAlphaAndBeta) {
  const GemmCase g{"several calls",
                   Layout::Contiguous({2, 9, 17}),
                   Layout::Contiguous({2, 9, 12}),
                   Layout::Contiguous({2, 12, 17}),
                   1.0f,
                   0.0f};
  const std::vector<std::pair<float, float>> more{{2.0f, 1.0f},   {-0.5f, 0.25f}, {1.0f, 0.0f},
                                                  {0.75f, -2.0f}, {1.0f, 1.0f},   {3.0f, 0.25f}};
  for (infiniDtype_t dtype : {INFINI_DTYPE_F32, INFINI_DTYPE_BF16, INFINI_DTYPE_F64}) {
    RunGemm(this, dtype, g, /*nan_in_c=*/false, more);
  }
}

// A Gemm captured into a graph with the copies around it, replayed 100 times with new inputs in
// host memory each time: every replay computes with the values of its own launch. (On a
// CUDA-family device the vendor's own capture takes in the BLAS call when the graph is
// instantiated.)
TEST_F(InfiniopTest, AGemmCapturedInAGraphGivesTheSameResultsOverAHundredReplays) {
  const GemmCase g{"captured",
                   Layout::Contiguous({2, 6, 5}),
                   Layout::Contiguous({2, 6, 4}),
                   Layout::Contiguous({2, 4, 5}),
                   1.5f,
                   0.5f};
  for (infiniDtype_t dtype : {INFINI_DTYPE_F32, INFINI_DTYPE_BF16}) {
    SCOPED_TRACE("dtype " + std::to_string(dtype));
    std::mt19937 random(17);
    Tensor c(g.c, dtype), a(g.a, dtype), b(g.b, dtype);
    c.FillRandom(&random, false);
    std::vector<double> c_before(g.c.Elements());
    for (size_t i = 0; i < c_before.size(); ++i) c_before[i] = c.At(i);
    infiniopGemmDescriptor_t desc = nullptr;
    ASSERT_EQ(infiniopCreateGemmDescriptor(handle, &desc, c.desc(), a.desc(), b.desc()),
              INFINI_STATUS_SUCCESS);
    ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeThreadLocal),
              infinirtSuccess);
    for (Tensor* t : {&a, &b, &c}) t->Upload(stream);
    ASSERT_EQ(infiniopGemm(desc, nullptr, 0, c.data(), a.data(), b.data(), g.alpha, g.beta, stream),
              INFINI_STATUS_SUCCESS);
    c.Download(stream);
    infinirtGraph_t graph = nullptr;
    ASSERT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtSuccess);
    infinirtGraphExec_t exec = nullptr;
    ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
    for (int replay = 0; replay < 100; ++replay) {
      SCOPED_TRACE("replay " + std::to_string(replay));
      a.FillRandom(&random, false);
      b.FillRandom(&random, false);
      for (size_t i = 0; i < c_before.size(); ++i) c.Set(i, c_before[i]);
      ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
      ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
      CheckGemm(dtype, g, g.alpha, g.beta, a, b, c, c_before);
      if (HasFatalFailure()) break;
    }
    EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
    EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
    EXPECT_EQ(infiniopDestroyGemmDescriptor(desc), INFINI_STATUS_SUCCESS);
  }
}

TEST_F(InfiniopTest, GemmWithBetaZeroNeverReadsC) {
  const GemmCase g{"beta 0",
                   Layout::Contiguous({6, 5}),
                   Layout::Contiguous({6, 4}),
                   Layout::Contiguous({4, 5}),
                   2.0f,
                   0.0f};
  for (infiniDtype_t dtype : {INFINI_DTYPE_F32, INFINI_DTYPE_F16, INFINI_DTYPE_BF16}) {
    RunGemm(this, dtype, g, /*nan_in_c=*/true);
  }
}

// a @ I in F16 returns a exactly: the conversions to float and back (in vectors on the CPU, at each
// ISA level CTest runs) keep subnormals, the largest half and signs. 40 columns: whole vectors
// and a tail.
TEST_F(InfiniopTest, F16GemmByTheIdentityKeepsEveryValue) {
  constexpr size_t kN = 40;
  const double values[] = {0x1p-24, -0x1p-24, 0x1.ff8p-15, 65504, -65504, -0.5, 0x1p-14, 3.0};
  Tensor c(Layout::Contiguous({3, kN}), INFINI_DTYPE_F16),
      a(Layout::Contiguous({3, kN}), INFINI_DTYPE_F16),
      identity(Layout::Contiguous({kN, kN}), INFINI_DTYPE_F16);
  for (size_t i = 0; i < 3 * kN; ++i) a.Set(i, values[i % (sizeof values / sizeof values[0])]);
  for (size_t i = 0; i < kN; ++i) identity.Set(i * kN + i, 1.0);
  for (Tensor* t : {&a, &identity}) t->Upload(stream);
  infiniopGemmDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateGemmDescriptor(handle, &desc, c.desc(), a.desc(), identity.desc()),
            INFINI_STATUS_SUCCESS);
  ASSERT_EQ(infiniopGemm(desc, nullptr, 0, c.data(), a.data(), identity.data(), 1.0f, 0.0f, stream),
            INFINI_STATUS_SUCCESS);
  c.Download(stream);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  for (size_t i = 0; i < 3 * kN; ++i) EXPECT_EQ(c.At(i), a.At(i)) << "element " << i;
  EXPECT_EQ(infiniopDestroyGemmDescriptor(desc), INFINI_STATUS_SUCCESS);
}

// Run in a child process: its address space is limited so that an F16 Gemm's float copies
// (192 MiB for 4096 x 4096) cannot be allocated. The call must leave c as it was, and the
// stream must go on. Exit code 0 when all holds.
void GemmWhoseCopiesCannotBeAllocated(InfiniopTest* test) {
  constexpr size_t kSide = 4096;
  Tensor c(Layout::Contiguous({kSide, kSide}), INFINI_DTYPE_F16),
      a(Layout::Contiguous({kSide, kSide}), INFINI_DTYPE_F16),
      b(Layout::Contiguous({kSide, kSide}), INFINI_DTYPE_F16);
  for (size_t i = 0; i < kSide * kSide; i += 4097) c.Set(i, 2.0);
  for (Tensor* t : {&a, &b, &c}) t->Upload(test->stream);
  infiniopGemmDescriptor_t desc = nullptr;
  if (infiniopCreateGemmDescriptor(test->handle, &desc, c.desc(), a.desc(), b.desc()) !=
          INFINI_STATUS_SUCCESS ||
      infinirtStreamSynchronize(test->stream) != infinirtSuccess) {
    std::exit(2);
  }
  // Room for what the runtime and the threads already hold, and a little more; not for the copies.
  rlimit limit{};
  getrlimit(RLIMIT_AS, &limit);
  limit.rlim_cur = infinirt::testing::VirtualMemoryBytes() + (size_t{64} << 20);
  if (setrlimit(RLIMIT_AS, &limit) != 0) std::exit(3);
  if (infiniopGemm(desc, nullptr, 0, c.data(), a.data(), b.data(), 1.0f, 0.0f, test->stream) !=
      INFINI_STATUS_SUCCESS) {
    std::exit(4);
  }
  c.Download(test->stream);
  if (infinirtStreamSynchronize(test->stream) != infinirtSuccess) std::exit(5);
  for (size_t i = 0; i < kSide * kSide; i += 4097) {
    if (c.At(i) != 2.0) std::exit(6);
  }
  std::exit(0);
}

// A call whose computation fails on the CPU backend's stream does not end the process.
TEST_F(InfiniopTest, AGemmWhoseCopiesCannotBeAllocatedLeavesCAsItWas) {
  if (device_type != INFINI_DEVICE_CPU) GTEST_SKIP() << "the CPU backend's float copies";
  if (INFINIRT_TEST_UNDER_SANITIZER) {
    GTEST_SKIP() << "the sanitizers reserve address space in bulk and end the process on a "
                    "failed operator new";
  }
  GTEST_FLAG_SET(death_test_style, "threadsafe");  // the child starts afresh, with its own threads
  EXPECT_EXIT(GemmWhoseCopiesCannotBeAllocated(this), ::testing::ExitedWithCode(0),
              "an operator call failed");
}

TEST_F(InfiniopTest, GemmValidatesShapesDtypesAndStrides) {
  Tensor c(Layout::Contiguous({4, 6}), INFINI_DTYPE_F32),
      a(Layout::Contiguous({4, 5}), INFINI_DTYPE_F32);
  Tensor b(Layout::Contiguous({5, 6}), INFINI_DTYPE_F32),
      b_wrong(Layout::Contiguous({4, 6}), INFINI_DTYPE_F32);
  Tensor b64(Layout::Contiguous({5, 6}), INFINI_DTYPE_F64),
      vector(Layout::Contiguous({6}), INFINI_DTYPE_F32);
  Tensor scattered(Layout{{5, 6}, {14, 2}}, INFINI_DTYPE_F32);
  Tensor c3(Layout::Contiguous({3, 4, 6}), INFINI_DTYPE_F32),
      a2(Layout::Contiguous({2, 4, 5}), INFINI_DTYPE_F32);
  Tensor i32(Layout::Contiguous({4, 6}), INFINI_DTYPE_I32);
  infiniopGemmDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateGemmDescriptor(handle, &desc, c.desc(), a.desc(), b_wrong.desc()),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(infiniopCreateGemmDescriptor(handle, &desc, c.desc(), a.desc(), b64.desc()),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateGemmDescriptor(handle, &desc, i32.desc(), i32.desc(), i32.desc()),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateGemmDescriptor(handle, &desc, c.desc(), a.desc(), vector.desc()),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(infiniopCreateGemmDescriptor(handle, &desc, c.desc(), a.desc(), scattered.desc()),
            INFINI_STATUS_BAD_TENSOR_STRIDES);
  EXPECT_EQ(infiniopCreateGemmDescriptor(handle, &desc, c3.desc(), a2.desc(), b.desc()),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
}

}  // namespace
}  // namespace infiniop_test
