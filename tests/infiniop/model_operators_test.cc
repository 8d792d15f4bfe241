// LayerNorm, AddRMSNorm, Softmax, LogSoftmax and Embedding against references computed in double
// on the host from the stored inputs, every floating dtype, on contiguous, strided, broadcast and
// in-place layouts, odd sizes and 0-sized dimensions; their refusals with InfiniCore's status
// codes (a vendor backend without these operators skips the tests of their numbers). Tolerances
// are infiniop_test.cc's, but LayerNorm's in F32 and F64, 16 times theirs: its mean is computed in
// the dtype's precision, and x - mean carries the mean's rounding, divided by the standard
// deviation.
#include <cmath>
#include <limits>
#include <random>
#include <string>
#include <unordered_map>
#include <utility>
#include <vector>

#include "infiniop_test_support.h"
#include "operator_probes.h"

namespace infiniop_test {
namespace {

const infiniDtype_t kModelDtypes[] = {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32,
                                      INFINI_DTYPE_F64};

// ExpectClose for a normalisation's results (see above).
void ExpectNormClose(infiniDtype_t dtype, double expected, double found, size_t index) {
  const bool wide = dtype == INFINI_DTYPE_F32 || dtype == INFINI_DTYPE_F64;
  const double bound = Tolerance(dtype) * (wide ? 16 : 1) * std::max(1.0, std::fabs(expected));
  EXPECT_NEAR(found, expected, bound) << "element " << index << ", dtype " << dtype;
}

std::string Traced(const char* what, infiniDtype_t dtype) {
  return std::string(what) + ", dtype " + std::to_string(dtype);
}

// --- LayerNorm ---------------------------------------------------------------------------------

struct LayerNormCase {
  const char* name;
  Layout input, output;
  bool bias;
};

std::vector<LayerNormCase> LayerNormCases() {
  return {
      {"2-D, with bias", Layout::Contiguous({6, 33}), Layout::Contiguous({6, 33}), true},
      {"3-D, without bias", Layout::Contiguous({2, 3, 40}), Layout::Contiguous({2, 3, 40}), false},
      {"1-D", Layout::Contiguous({19}), Layout::Contiguous({19}), true},
      {"strided input, transposed output", Layout{{5, 7}, {1, 10}}, Layout{{5, 7}, {1, 5}}, true},
      {"long rows across threads", Layout::Contiguous({70, 1100}), Layout::Contiguous({70, 1100}),
       true},
      {"a 0-sized dimension", Layout::Contiguous({0, 8}), Layout::Contiguous({0, 8}), true},
  };
}

TEST_F(InfiniopTest, LayerNormMatchesTheReference) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_LayerNorm)) {
    GTEST_SKIP() << "no LayerNorm on this device's operator backend";
  }
  std::mt19937 random(23);
  for (infiniDtype_t dtype : kModelDtypes) {
    for (const LayerNormCase& c : LayerNormCases()) {
      SCOPED_TRACE(Traced(c.name, dtype));
      const size_t dim = c.input.shape.back();
      std::vector<size_t> leading(c.input.shape.begin(), c.input.shape.end() - 1);
      Tensor input(c.input, dtype), output(c.output, dtype), standardized(c.output, dtype),
          deviation(Layout::Contiguous(leading), dtype), weight(Layout::Contiguous({dim}), dtype),
          bias(Layout::Contiguous({dim}), dtype);
      input.FillRandom(&random, false);
      // An offset, so that the mean matters.
      for (size_t i = 0; i < c.input.Elements(); ++i) input.Set(i, input.At(i) + 3);
      weight.FillRandom(&random, false);
      bias.FillRandom(&random, false);
      input.Upload(stream);
      weight.Upload(stream);
      bias.Upload(stream);
      infiniopLayerNormDescriptor_t desc = nullptr;
      ASSERT_EQ(infiniopCreateLayerNormDescriptor(handle, &desc, output.desc(), standardized.desc(),
                                                  deviation.desc(), input.desc(), weight.desc(),
                                                  c.bias ? bias.desc() : nullptr, 1e-5f),
                INFINI_STATUS_SUCCESS);
      size_t workspace = 0;
      ASSERT_EQ(infiniopGetLayerNormWorkspaceSize(desc, &workspace), INFINI_STATUS_SUCCESS);
      DeviceBuffer buffer(workspace);
      ASSERT_EQ(infiniopLayerNorm(desc, buffer.data(), workspace, output.data(),
                                  standardized.data(), deviation.data(), input.data(),
                                  weight.data(), c.bias ? bias.data() : nullptr, stream),
                INFINI_STATUS_SUCCESS);
      output.Download(stream);
      standardized.Download(stream);
      deviation.Download(stream);
      ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
      EXPECT_EQ(infiniopDestroyLayerNormDescriptor(desc), INFINI_STATUS_SUCCESS);
      for (size_t row = 0; dim > 0 && row < c.input.Elements() / dim; ++row) {
        double mean = 0, variance = 0;
        for (size_t j = 0; j < dim; ++j) mean += input.At(row * dim + j);
        mean /= dim;
        for (size_t j = 0; j < dim; ++j) {
          variance += (input.At(row * dim + j) - mean) * (input.At(row * dim + j) - mean);
        }
        variance /= dim;
        const double std_deviation = std::sqrt(variance + 1e-5);
        ExpectNormClose(dtype, Rounded(dtype, std_deviation), deviation.At(row), row);
        for (size_t j = 0; j < dim; ++j) {
          const size_t i = row * dim + j;
          const double normalized = (input.At(i) - mean) / std_deviation;
          ExpectNormClose(dtype, Rounded(dtype, normalized), standardized.At(i), i);
          const double expected = normalized * weight.At(j) + (c.bias ? bias.At(j) : 0.0);
          ExpectNormClose(dtype, Rounded(dtype, expected), output.At(i), i);
        }
      }
    }
  }
}

TEST_F(InfiniopTest, LayerNormRefusesWhatDoesNotFit) {
  Tensor x(Layout::Contiguous({4, 8}), INFINI_DTYPE_F32),
      d(Layout::Contiguous({4}), INFINI_DTYPE_F32), w(Layout::Contiguous({8}), INFINI_DTYPE_F32),
      w7(Layout::Contiguous({7}), INFINI_DTYPE_F32), d5(Layout::Contiguous({5}), INFINI_DTYPE_F32),
      w16(Layout::Contiguous({8}), INFINI_DTYPE_F16),
      xi(Layout::Contiguous({4, 8}), INFINI_DTYPE_I32),
      broadcast(Layout{{4, 8}, {0, 1}}, INFINI_DTYPE_F32);
  infiniopLayerNormDescriptor_t desc = nullptr;
  auto create = [&](const Tensor& out, const Tensor& dev, const Tensor& in, const Tensor& weight,
                    const Tensor* bias) {
    return infiniopCreateLayerNormDescriptor(handle, &desc, out.desc(), x.desc(), dev.desc(),
                                             in.desc(), weight.desc(),
                                             bias != nullptr ? bias->desc() : nullptr, 1e-5f);
  };
  EXPECT_EQ(create(x, d, x, w7, &w), INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(create(x, d, x, w, &w7), INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(create(x, d5, x, w, nullptr), INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(create(x, d, x, w16, nullptr), INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(create(xi, d, xi, w, nullptr), INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(create(broadcast, d, x, w, nullptr), INFINI_STATUS_BAD_TENSOR_STRIDES);
  EXPECT_EQ(desc, nullptr);
}

// --- AddRMSNorm --------------------------------------------------------------------------------

TEST_F(InfiniopTest, AddRMSNormMatchesTheReferenceAndComputesInPlace) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_AddRMSNorm)) {
    GTEST_SKIP() << "no AddRMSNorm on this device's operator backend";
  }
  std::mt19937 random(29);
  const std::vector<std::vector<size_t>> shapes = {{4, 33}, {2, 3, 64}, {1, 2048}, {0, 16}};
  for (infiniDtype_t dtype : kModelDtypes) {
    for (const std::vector<size_t>& shape : shapes) {
      for (bool in_place : {false, true}) {
        SCOPED_TRACE(Traced(in_place ? "residual_out is a" : "separate", dtype) + ", " +
                     std::to_string(shape.size()) + "-D, last " + std::to_string(shape.back()));
        const Layout layout = Layout::Contiguous(shape);
        const size_t dim = shape.back();
        Tensor y(layout, dtype), residual(layout, dtype), a(layout, dtype), b(layout, dtype),
            w(Layout::Contiguous({dim}), dtype);
        a.FillRandom(&random, false);
        b.FillRandom(&random, false);
        w.FillRandom(&random, false);
        std::vector<double> sum(layout.Elements());
        for (size_t i = 0; i < sum.size(); ++i) sum[i] = a.At(i) + b.At(i);
        a.Upload(stream);
        b.Upload(stream);
        w.Upload(stream);
        Tensor& residual_out = in_place ? a : residual;
        infiniopAddRMSNormDescriptor_t desc = nullptr;
        ASSERT_EQ(infiniopCreateAddRMSNormDescriptor(handle, &desc, y.desc(), residual_out.desc(),
                                                     a.desc(), b.desc(), w.desc(), 1e-6f),
                  INFINI_STATUS_SUCCESS);
        ASSERT_EQ(infiniopAddRMSNorm(desc, nullptr, 0, y.data(), residual_out.data(), a.data(),
                                     b.data(), w.data(), stream),
                  INFINI_STATUS_SUCCESS);
        y.Download(stream);
        residual_out.Download(stream);
        ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
        EXPECT_EQ(infiniopDestroyAddRMSNormDescriptor(desc), INFINI_STATUS_SUCCESS);
        for (size_t row = 0; row < layout.Elements() / dim; ++row) {
          double squares = 0;
          for (size_t j = 0; j < dim; ++j) squares += sum[row * dim + j] * sum[row * dim + j];
          const double rms = 1.0 / std::sqrt(squares / dim + 1e-6);
          for (size_t j = 0; j < dim; ++j) {
            const size_t i = row * dim + j;
            ExpectClose(dtype, Rounded(dtype, sum[i]), residual_out.At(i), i);
            ExpectClose(dtype, Rounded(dtype, sum[i] * w.At(j) * rms), y.At(i), i);
          }
        }
      }
    }
  }
}

TEST_F(InfiniopTest, AddRMSNormTakesFloatWeightsForHalfActivationsAndRefusesTheRest) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_AddRMSNorm)) {
    GTEST_SKIP() << "no AddRMSNorm on this device's operator backend";
  }
  Tensor x(Layout::Contiguous({2, 8}), INFINI_DTYPE_F16),
      w32(Layout::Contiguous({8}), INFINI_DTYPE_F32),
      w64(Layout::Contiguous({8}), INFINI_DTYPE_F64), w7(Layout::Contiguous({7}), INFINI_DTYPE_F16),
      strided(Layout{{2, 8}, {16, 2}}, INFINI_DTYPE_F16);
  infiniopAddRMSNormDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateAddRMSNormDescriptor(handle, &desc, x.desc(), x.desc(), x.desc(),
                                               x.desc(), w32.desc(), 1e-6f),
            INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopDestroyAddRMSNormDescriptor(desc), INFINI_STATUS_SUCCESS);
  desc = nullptr;
  EXPECT_EQ(infiniopCreateAddRMSNormDescriptor(handle, &desc, x.desc(), x.desc(), x.desc(),
                                               x.desc(), w64.desc(), 1e-6f),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateAddRMSNormDescriptor(handle, &desc, x.desc(), x.desc(), x.desc(),
                                               x.desc(), w7.desc(), 1e-6f),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(infiniopCreateAddRMSNormDescriptor(handle, &desc, x.desc(), x.desc(), strided.desc(),
                                               x.desc(), w7.desc(), 1e-6f),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  Tensor w16(Layout::Contiguous({8}), INFINI_DTYPE_F16);
  EXPECT_EQ(infiniopCreateAddRMSNormDescriptor(handle, &desc, x.desc(), x.desc(), strided.desc(),
                                               x.desc(), w16.desc(), 1e-6f),
            INFINI_STATUS_BAD_TENSOR_STRIDES);
  EXPECT_EQ(desc, nullptr);
}

// --- Softmax and LogSoftmax --------------------------------------------------------------------

struct SoftmaxCase {
  const char* name;
  Layout x, y;
  int axis;
};

std::vector<SoftmaxCase> SoftmaxCases() {
  const Layout cube = Layout::Contiguous({3, 5, 7});
  const Layout strided{{3, 5, 7}, {1, 3 * 7 * 2, 3 * 2}};  // every dimension strided, none packed
  return {
      {"last axis", cube, cube, -1},
      {"axis 0", cube, cube, 0},
      {"axis 1 of a strided input", strided, cube, 1},
      {"axis 2 into a strided output", cube, strided, 2},
      {"a long row across threads", Layout::Contiguous({40, 3000}), Layout::Contiguous({40, 3000}),
       1},
      {"a broadcast input", Layout{{4, 9}, {0, 1}}, Layout::Contiguous({4, 9}), -1},
      {"a 0-sized dimension", Layout::Contiguous({0, 4}), Layout::Contiguous({0, 4}), 1},
      {"a single element per line", Layout::Contiguous({6, 1}), Layout::Contiguous({6, 1}), 1},
  };
}

// Runs Softmax (or LogSoftmax) of x into y and compares with the reference.
void CheckSoftmax(InfiniopTest* test, bool log, const SoftmaxCase& c, infiniDtype_t dtype,
                  std::mt19937* random) {
  Tensor x(c.x, dtype), y(c.y, dtype);
  x.FillRandom(random, false);
  for (size_t i = 0; i < c.x.Elements(); ++i) x.Set(i, x.At(i) * 8);  // large enough to need max
  x.Upload(test->stream);
  InfiniopDescriptor* desc = nullptr;
  if (log) {
    ASSERT_EQ(infiniopCreateLogSoftmaxDescriptor(test->handle, &desc, y.desc(), x.desc(), c.axis),
              INFINI_STATUS_SUCCESS);
    ASSERT_EQ(infiniopLogSoftmax(desc, nullptr, 0, y.data(), x.data(), test->stream),
              INFINI_STATUS_SUCCESS);
  } else {
    ASSERT_EQ(infiniopCreateSoftmaxDescriptor(test->handle, &desc, y.desc(), x.desc(), c.axis),
              INFINI_STATUS_SUCCESS);
    ASSERT_EQ(infiniopSoftmax(desc, nullptr, 0, y.data(), x.data(), test->stream),
              INFINI_STATUS_SUCCESS);
  }
  y.Download(test->stream);
  ASSERT_EQ(infinirtStreamSynchronize(test->stream), infinirtSuccess);
  EXPECT_EQ(
      log ? infiniopDestroyLogSoftmaxDescriptor(desc) : infiniopDestroySoftmaxDescriptor(desc),
      INFINI_STATUS_SUCCESS);
  const std::vector<size_t>& shape = c.x.shape;
  const size_t axis = c.axis < 0 ? shape.size() + c.axis : c.axis;
  // Each line's max and sum of exp(x - max), by the index of its first element.
  std::unordered_map<size_t, std::pair<double, double>> lines;
  for (size_t i = 0; i < c.x.Elements(); ++i) {
    const size_t first = WithCoordinate(shape, i, axis, 0);
    auto found = lines.find(first);
    if (found == lines.end()) {
      double max = -std::numeric_limits<double>::infinity(), sum = 0;
      for (size_t k = 0; k < shape[axis]; ++k) {
        max = std::max(max, x.At(WithCoordinate(shape, i, axis, k)));
      }
      for (size_t k = 0; k < shape[axis]; ++k) {
        sum += std::exp(x.At(WithCoordinate(shape, i, axis, k)) - max);
      }
      found = lines.emplace(first, std::make_pair(max, sum)).first;
    }
    const auto [max, sum] = found->second;
    const double expected = log ? x.At(i) - max - std::log(sum) : std::exp(x.At(i) - max) / sum;
    ExpectClose(dtype, Rounded(dtype, expected), y.At(i), i);
  }
}

TEST_F(InfiniopTest, SoftmaxAndLogSoftmaxMatchTheReferenceAlongAnyAxis) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_Softmax)) {
    GTEST_SKIP() << "no Softmax on this device's operator backend";
  }
  std::mt19937 random(31);
  for (bool log : {false, true}) {
    for (infiniDtype_t dtype : kModelDtypes) {
      for (const SoftmaxCase& c : SoftmaxCases()) {
        SCOPED_TRACE(Traced(c.name, dtype) + (log ? ", LogSoftmax" : ", Softmax"));
        CheckSoftmax(this, log, c, dtype, &random);
      }
    }
  }
}

TEST_F(InfiniopTest, SoftmaxRefusesAnAxisOutsideTheTensorAndMismatchedTensors) {
  Tensor x(Layout::Contiguous({3, 4}), INFINI_DTYPE_F32),
      y16(Layout::Contiguous({3, 4}), INFINI_DTYPE_F16),
      y5(Layout::Contiguous({3, 5}), INFINI_DTYPE_F32);
  InfiniopDescriptor* desc = nullptr;
  EXPECT_EQ(infiniopCreateSoftmaxDescriptor(handle, &desc, x.desc(), x.desc(), 2),
            INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopCreateSoftmaxDescriptor(handle, &desc, x.desc(), x.desc(), -3),
            INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopCreateLogSoftmaxDescriptor(handle, &desc, x.desc(), x.desc(), 5),
            INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopCreateSoftmaxDescriptor(handle, &desc, y16.desc(), x.desc(), 1),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateLogSoftmaxDescriptor(handle, &desc, y5.desc(), x.desc(), 1),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(desc, nullptr);
}

// --- SiluAndMul --------------------------------------------------------------------------------

TEST_F(InfiniopTest, SiluAndMulGatesWithTheFirstHalf) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_SiluAndMul)) {
    GTEST_SKIP() << "no SiluAndMul on this device's operator backend";
  }
  std::mt19937 random(59);
  struct Case {
    const char* name;
    Layout y, x;
  };
  const Case cases[] = {
      {"2-D", Layout::Contiguous({5, 7}), Layout::Contiguous({5, 14})},
      {"3-D", Layout::Contiguous({2, 3, 40}), Layout::Contiguous({2, 3, 80})},
      {"strided x", Layout::Contiguous({4, 6}), Layout{{4, 12}, {30, 2}}},
      {"0 rows", Layout::Contiguous({0, 6}), Layout::Contiguous({0, 12})},
  };
  for (infiniDtype_t dtype : kModelDtypes) {
    for (const Case& c : cases) {
      SCOPED_TRACE(Traced(c.name, dtype));
      Tensor y(c.y, dtype), x(c.x, dtype);
      x.FillRandom(&random, false);
      x.Upload(stream);
      infiniopSiluAndMulDescriptor_t desc = nullptr;
      ASSERT_EQ(infiniopCreateSiluAndMulDescriptor(handle, &desc, y.desc(), x.desc()),
                INFINI_STATUS_SUCCESS);
      ASSERT_EQ(infiniopSiluAndMul(desc, nullptr, 0, y.data(), x.data(), stream),
                INFINI_STATUS_SUCCESS);
      y.Download(stream);
      ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
      EXPECT_EQ(infiniopDestroySiluAndMulDescriptor(desc), INFINI_STATUS_SUCCESS);
      const size_t d = c.y.shape.back();
      for (size_t i = 0; i < c.y.Elements(); ++i) {
        const size_t row = i / d, j = i % d;
        const double gate = x.At(row * 2 * d + j), up = x.At(row * 2 * d + d + j);
        ExpectClose(dtype, Rounded(dtype, gate / (1 + std::exp(-gate)) * up), y.At(i), i);
      }
    }
  }
  Tensor y(Layout::Contiguous({4, 6}), INFINI_DTYPE_F32),
      x13(Layout::Contiguous({4, 13}), INFINI_DTYPE_F32),
      x3d(Layout::Contiguous({1, 4, 12}), INFINI_DTYPE_F32);
  infiniopSiluAndMulDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateSiluAndMulDescriptor(handle, &desc, y.desc(), x13.desc()),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(infiniopCreateSiluAndMulDescriptor(handle, &desc, y.desc(), x3d.desc()),
            INFINI_STATUS_BAD_PARAM);
}

// --- Embedding ---------------------------------------------------------------------------------

TEST_F(InfiniopTest, EmbeddingGathersRowsForBothIndexTypesAndMarksIndicesOutOfRange) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_Embedding)) {
    GTEST_SKIP() << "no Embedding on this device's operator backend";
  }
  const size_t vocab = 11, dim = 13;
  std::mt19937 random(37);
  for (infiniDtype_t dtype : kModelDtypes) {
    for (infiniDtype_t index_dtype : {INFINI_DTYPE_I32, INFINI_DTYPE_I64}) {
      for (bool transposed_weight : {false, true}) {
        SCOPED_TRACE(Traced(transposed_weight ? "column-major weight" : "row-major weight", dtype) +
                     ", indices " + std::to_string(index_dtype));
        const Layout weight_layout =
            transposed_weight ? Layout{{vocab, dim}, {1, vocab}} : Layout::Contiguous({vocab, dim});
        Tensor weight(weight_layout, dtype), input(Layout::Contiguous({2, 3}), index_dtype),
            output(Layout::Contiguous({2, 3, dim}), dtype);
        weight.FillRandom(&random, false);
        const double indices[] = {3, 0, 10, 3, -1, 11};  // the last two outside [0, vocab)
        for (size_t i = 0; i < 6; ++i) input.Set(i, indices[i]);
        weight.Upload(stream);
        input.Upload(stream);
        infiniopEmbeddingDescriptor_t desc = nullptr;
        ASSERT_EQ(infiniopCreateEmbeddingDescriptor(handle, &desc, output.desc(), input.desc(),
                                                    weight.desc()),
                  INFINI_STATUS_SUCCESS);
        ASSERT_EQ(infiniopEmbedding(desc, output.data(), input.data(), weight.data(), stream),
                  INFINI_STATUS_SUCCESS);
        output.Download(stream);
        ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
        EXPECT_EQ(infiniopDestroyEmbeddingDescriptor(desc), INFINI_STATUS_SUCCESS);
        for (size_t t = 0; t < 6; ++t) {
          for (size_t j = 0; j < dim; ++j) {
            const double found = output.At(t * dim + j);
            if (t >= 4) {
              EXPECT_TRUE(std::isnan(found)) << "index " << indices[t] << ": " << found;
            } else {
              EXPECT_EQ(found, weight.At(static_cast<size_t>(indices[t]) * dim + j)) << t;
            }
          }
        }
      }
    }
  }
}

TEST_F(InfiniopTest, EmbeddingRefusesWhatDoesNotFit) {
  Tensor weight(Layout::Contiguous({11, 8}), INFINI_DTYPE_F32),
      input(Layout::Contiguous({4}), INFINI_DTYPE_I64),
      output(Layout::Contiguous({4, 8}), INFINI_DTYPE_F32),
      floats(Layout::Contiguous({4}), INFINI_DTYPE_F32),
      output9(Layout::Contiguous({4, 9}), INFINI_DTYPE_F32),
      output16(Layout::Contiguous({4, 8}), INFINI_DTYPE_F16),
      flat(Layout::Contiguous({88}), INFINI_DTYPE_F32);
  infiniopEmbeddingDescriptor_t desc = nullptr;
  EXPECT_EQ(
      infiniopCreateEmbeddingDescriptor(handle, &desc, output.desc(), floats.desc(), weight.desc()),
      INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateEmbeddingDescriptor(handle, &desc, output16.desc(), input.desc(),
                                              weight.desc()),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(
      infiniopCreateEmbeddingDescriptor(handle, &desc, output9.desc(), input.desc(), weight.desc()),
      INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(
      infiniopCreateEmbeddingDescriptor(handle, &desc, output.desc(), input.desc(), flat.desc()),
      INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(desc, nullptr);
}

}  // namespace
}  // namespace infiniop_test
