// The operators an LLM decoder needs beyond the elementwise ones, on the CPU backend, against
// references computed in double from the stored inputs: RMSNorm, CausalSoftmax, RoPE (both
// pairings, 1-D and 2-D positions, in place) and RandomSample (the arg max, and draws by the
// caller's random value). Tolerances as in infiniop_test_support.h, with a factor for the
// reductions (a row's sum is rounded once per element in the lower precisions).
#include "infiniop_test_support.h"

namespace infiniop_test {
namespace {

// The reductions accumulate in float for F16/BF16/F32 (and round the result once): a few units
// of the output's precision.
double ReductionTolerance(infiniDtype_t dtype) {
  return dtype == INFINI_DTYPE_F32 ? 1e-5 : 4 * Tolerance(dtype);
}

void ExpectNear(infiniDtype_t dtype, double expected, double found, size_t index) {
  const double bound = ReductionTolerance(dtype) * std::max(1.0, std::fabs(expected));
  EXPECT_NEAR(found, expected, bound) << "element " << index << ", dtype " << dtype;
}

const infiniDtype_t kFloatDtypes[] = {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32,
                                      INFINI_DTYPE_F64};

// --- RMSNorm -----------------------------------------------------------------------------------

TEST_F(InfiniopTest, RMSNormMatchesTheReference) {
  struct RmsCase {
    const char* name;
    Layout x;
  };
  const RmsCase cases[] = {
      {"[5, 67]", Layout::Contiguous({5, 67})},
      {"[2, 3, 16], rows apart", Layout{{2, 3, 16}, {100, 20, 1}}},
      {"[40, 4099], split across threads", Layout::Contiguous({40, 4099})},
  };
  std::mt19937 random(21);
  const float epsilon = 1e-5f;
  for (infiniDtype_t dtype : kFloatDtypes) {
    for (const RmsCase& c : cases) {
      SCOPED_TRACE(std::string(c.name) + ", dtype " + std::to_string(dtype));
      const size_t dim = c.x.shape.back();
      const Layout y_layout = Layout::Contiguous(c.x.shape);
      Tensor y(y_layout, dtype), x(c.x, dtype), w(Layout::Contiguous({dim}), dtype);
      x.FillRandom(&random, false);
      w.FillRandom(&random, false);
      x.Upload(stream);
      w.Upload(stream);
      infiniopRMSNormDescriptor_t desc = nullptr;
      ASSERT_EQ(
          infiniopCreateRMSNormDescriptor(handle, &desc, y.desc(), x.desc(), w.desc(), epsilon),
          INFINI_STATUS_SUCCESS);
      ASSERT_EQ(infiniopRMSNorm(desc, nullptr, 0, y.data(), x.data(), w.data(), stream),
                INFINI_STATUS_SUCCESS);
      y.Download(stream);
      ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
      const size_t rows = y_layout.Elements() / dim;
      for (size_t row = 0; row < rows; ++row) {
        double sum = 0;
        for (size_t j = 0; j < dim; ++j) sum += x.At(row * dim + j) * x.At(row * dim + j);
        const double scale = 1.0 / std::sqrt(sum / static_cast<double>(dim) + epsilon);
        for (size_t j = 0; j < dim; ++j) {
          const size_t i = row * dim + j;
          ExpectNear(dtype, x.At(i) * w.At(j) * scale, y.At(i), i);
        }
      }
      EXPECT_EQ(infiniopDestroyRMSNormDescriptor(desc), INFINI_STATUS_SUCCESS);
    }
  }
}

// F16 activations may come with F32 weights; F32 activations need F32 weights.
TEST_F(InfiniopTest, RMSNormValidatesItsTensors) {
  Tensor x16(Layout::Contiguous({2, 8}), INFINI_DTYPE_F16);
  Tensor w32(Layout::Contiguous({8}), INFINI_DTYPE_F32),
      w16(Layout::Contiguous({8}), INFINI_DTYPE_F16);
  Tensor x32(Layout::Contiguous({2, 8}), INFINI_DTYPE_F32),
      w7(Layout::Contiguous({7}), INFINI_DTYPE_F32);
  Tensor strided(Layout{{2, 8}, {16, 2}}, INFINI_DTYPE_F32);
  infiniopRMSNormDescriptor_t desc = nullptr;
  ASSERT_EQ(
      infiniopCreateRMSNormDescriptor(handle, &desc, x16.desc(), x16.desc(), w32.desc(), 1e-6f),
      INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopDestroyRMSNormDescriptor(desc), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(
      infiniopCreateRMSNormDescriptor(handle, &desc, x32.desc(), x32.desc(), w16.desc(), 1e-6f),
      INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(
      infiniopCreateRMSNormDescriptor(handle, &desc, x32.desc(), x32.desc(), w7.desc(), 1e-6f),
      INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(
      infiniopCreateRMSNormDescriptor(handle, &desc, x32.desc(), strided.desc(), w32.desc(), 1e-6f),
      INFINI_STATUS_BAD_TENSOR_STRIDES);
}

// --- CausalSoftmax -----------------------------------------------------------------------------

// Row i of [seq, total] sees columns j <= total - seq + i; the others are 0.
void ExpectCausalSoftmax(infiniDtype_t dtype, const Tensor& x_before, const Tensor& y,
                         const Layout& layout) {
  const size_t ndim = layout.shape.size();
  const size_t seq = layout.shape[ndim - 2], total = layout.shape[ndim - 1];
  const size_t batches = layout.Elements() / (seq * total);
  for (size_t b = 0; b < batches; ++b) {
    for (size_t i = 0; i < seq; ++i) {
      const size_t base = (b * seq + i) * total;
      const size_t visible = total - seq + i + 1;
      double max = -INFINITY;
      for (size_t j = 0; j < visible; ++j) max = std::max(max, x_before.At(base + j));
      double sum = 0;
      for (size_t j = 0; j < visible; ++j) sum += std::exp(x_before.At(base + j) - max);
      for (size_t j = 0; j < total; ++j) {
        const double expected = j < visible ? std::exp(x_before.At(base + j) - max) / sum : 0.0;
        ExpectNear(dtype, expected, y.At(base + j), base + j);
      }
    }
  }
}

TEST_F(InfiniopTest, CausalSoftmaxMatchesTheReferenceAlsoInPlace) {
  std::mt19937 random(22);
  const Layout layouts[] = {Layout::Contiguous({5, 9}), Layout::Contiguous({2, 3, 3}),
                            Layout{{2, 4, 7}, {64, 8, 1}},
                            Layout::Contiguous({2, 20, 4000})};  // split across threads
  for (infiniDtype_t dtype : kFloatDtypes) {
    for (const Layout& layout : layouts) {
      SCOPED_TRACE("dtype " + std::to_string(dtype) + ", " + std::to_string(layout.shape.size()) +
                   "-D");
      Tensor x(layout, dtype), y(Layout::Contiguous(layout.shape), dtype);
      x.FillRandom(&random, false);
      x.Upload(stream);
      infiniopCausalSoftmaxDescriptor_t desc = nullptr;
      ASSERT_EQ(infiniopCreateCausalSoftmaxDescriptor(handle, &desc, y.desc(), x.desc()),
                INFINI_STATUS_SUCCESS);
      ASSERT_EQ(infiniopCausalSoftmax(desc, nullptr, 0, y.data(), x.data(), stream),
                INFINI_STATUS_SUCCESS);
      y.Download(stream);
      ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
      ExpectCausalSoftmax(dtype, x, y, layout);
      EXPECT_EQ(infiniopDestroyCausalSoftmaxDescriptor(desc), INFINI_STATUS_SUCCESS);

      // In place: y is x.
      ASSERT_EQ(infiniopCreateCausalSoftmaxDescriptor(handle, &desc, x.desc(), x.desc()),
                INFINI_STATUS_SUCCESS);
      ASSERT_EQ(infiniopCausalSoftmax(desc, nullptr, 0, x.data(), x.data(), stream),
                INFINI_STATUS_SUCCESS);
      Tensor in_place(layout, dtype);  // x's values before, kept on the host
      for (size_t i = 0; i < layout.Elements(); ++i) in_place.Set(i, x.At(i));
      x.Download(stream);
      ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
      ExpectCausalSoftmax(dtype, in_place, x, layout);
      EXPECT_EQ(infiniopDestroyCausalSoftmaxDescriptor(desc), INFINI_STATUS_SUCCESS);
    }
  }
}

TEST_F(InfiniopTest, CausalSoftmaxRefusesMoreQueriesThanKeys) {
  Tensor wide(Layout::Contiguous({5, 4}), INFINI_DTYPE_F32);
  infiniopCausalSoftmaxDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateCausalSoftmaxDescriptor(handle, &desc, wide.desc(), wide.desc()),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
}

// --- RoPE --------------------------------------------------------------------------------------

struct RopeCase {
  const char* name;
  std::vector<size_t> x_shape;  // [(batch,) seq, nhead, dhead]
  bool two_d_positions;
  infiniopRoPEAlgo_t algo;
  bool in_place;
};

void RunRope(InfiniopTest* test, infiniDtype_t dtype, infiniDtype_t pos_dtype, const RopeCase& c) {
  SCOPED_TRACE(std::string(c.name) + ", dtype " + std::to_string(dtype));
  const size_t ndim = c.x_shape.size();
  const size_t dhead = c.x_shape[ndim - 1], nhead = c.x_shape[ndim - 2], seq = c.x_shape[ndim - 3];
  const size_t batch = ndim == 4 ? c.x_shape[0] : 1;
  const size_t half = dhead / 2, table_len = 2 * seq + 3;
  std::mt19937 random(23);
  Tensor x(Layout::Contiguous(c.x_shape), dtype), y(Layout::Contiguous(c.x_shape), dtype);
  Tensor pos(Layout::Contiguous(c.two_d_positions ? std::vector<size_t>{batch, seq}
                                                  : std::vector<size_t>{seq}),
             pos_dtype);
  Tensor sin_table(Layout::Contiguous({table_len, half}), dtype);
  Tensor cos_table(Layout::Contiguous({table_len, half}), dtype);
  x.FillRandom(&random, false);
  for (size_t i = 0; i < pos.layout().Elements(); ++i)
    pos.Set(i, static_cast<double>(random() % table_len));
  for (size_t p = 0; p < table_len; ++p) {
    for (size_t i = 0; i < half; ++i) {
      const double angle = static_cast<double>(p) / std::pow(10000.0, 2.0 * i / dhead);
      sin_table.Set(p * half + i, std::sin(angle));
      cos_table.Set(p * half + i, std::cos(angle));
    }
  }
  for (Tensor* t : {&x, &pos, &sin_table, &cos_table}) t->Upload(test->stream);
  Tensor& out = c.in_place ? x : y;
  infiniopRoPEDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateRoPEDescriptor(test->handle, &desc, out.desc(), x.desc(), pos.desc(),
                                         sin_table.desc(), cos_table.desc(), c.algo),
            INFINI_STATUS_SUCCESS);
  ASSERT_EQ(infiniopRoPE(desc, nullptr, 0, out.data(), x.data(), pos.data(), sin_table.data(),
                         cos_table.data(), test->stream),
            INFINI_STATUS_SUCCESS);
  std::vector<double> before(x.layout().Elements());
  for (size_t i = 0; i < before.size(); ++i) before[i] = x.At(i);
  out.Download(test->stream);
  ASSERT_EQ(infinirtStreamSynchronize(test->stream), infinirtSuccess);
  for (size_t b = 0; b < batch; ++b) {
    for (size_t t = 0; t < seq; ++t) {
      const auto p = static_cast<size_t>(pos.At(c.two_d_positions ? b * seq + t : t));
      for (size_t h = 0; h < nhead; ++h) {
        const size_t base = ((b * seq + t) * nhead + h) * dhead;
        for (size_t i = 0; i < half; ++i) {
          const size_t a0 = c.algo == INFINIOP_ROPE_ALGO_GPT_J ? 2 * i : i;
          const size_t a1 = c.algo == INFINIOP_ROPE_ALGO_GPT_J ? 2 * i + 1 : i + half;
          const double s = sin_table.At(p * half + i), co = cos_table.At(p * half + i);
          ExpectNear(dtype, before[base + a0] * co - before[base + a1] * s, out.At(base + a0),
                     base + a0);
          ExpectNear(dtype, before[base + a0] * s + before[base + a1] * co, out.At(base + a1),
                     base + a1);
        }
      }
    }
  }
  EXPECT_EQ(infiniopDestroyRoPEDescriptor(desc), INFINI_STATUS_SUCCESS);
}

TEST_F(InfiniopTest, RoPEMatchesTheReferenceForBothPairingsAndPositionLayouts) {
  const RopeCase cases[] = {
      {"GPT-J, [seq, nhead, dhead]", {5, 3, 8}, false, INFINIOP_ROPE_ALGO_GPT_J, false},
      {"GPT-NeoX, [seq, nhead, dhead]", {5, 3, 8}, false, INFINIOP_ROPE_ALGO_GPT_NEOX, false},
      {"GPT-J, batched, 2-D positions", {2, 4, 2, 6}, true, INFINIOP_ROPE_ALGO_GPT_J, false},
      {"GPT-NeoX, batched, 1-D positions, in place",
       {2, 4, 2, 6},
       false,
       INFINIOP_ROPE_ALGO_GPT_NEOX,
       true},
      {"GPT-NeoX, 1200 tokens, split across threads",
       {1, 1200, 4, 32},
       false,
       INFINIOP_ROPE_ALGO_GPT_NEOX,
       false},
  };
  for (infiniDtype_t dtype : kFloatDtypes) {
    for (const RopeCase& c : cases) RunRope(this, dtype, INFINI_DTYPE_I32, c);
  }
  RunRope(this, INFINI_DTYPE_F32, INFINI_DTYPE_U64, cases[0]);
  RunRope(this, INFINI_DTYPE_F32, INFINI_DTYPE_I8, cases[1]);
}

TEST_F(InfiniopTest, RoPEValidatesItsTensorsAndAlgorithm) {
  Tensor x(Layout::Contiguous({4, 2, 8}), INFINI_DTYPE_F32);
  Tensor pos(Layout::Contiguous({4}), INFINI_DTYPE_I32),
      pos_f(Layout::Contiguous({4}), INFINI_DTYPE_F32);
  Tensor table(Layout::Contiguous({16, 4}), INFINI_DTYPE_F32),
      narrow(Layout::Contiguous({16, 3}), INFINI_DTYPE_F32);
  infiniopRoPEDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateRoPEDescriptor(handle, &desc, x.desc(), x.desc(), pos_f.desc(),
                                         table.desc(), table.desc(), INFINIOP_ROPE_ALGO_GPT_J),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateRoPEDescriptor(handle, &desc, x.desc(), x.desc(), pos.desc(),
                                         narrow.desc(), narrow.desc(), INFINIOP_ROPE_ALGO_GPT_J),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(infiniopCreateRoPEDescriptor(handle, &desc, x.desc(), x.desc(), pos.desc(),
                                         table.desc(), table.desc(), INFINIOP_ROPE_ALGO_COUNT),
            INFINI_STATUS_BAD_PARAM);
}

// --- RandomSample ------------------------------------------------------------------------------

// InfiniCore's rule, in double: sort descending, cumulative exp((v - max) / temperature), the
// threshold random_val * min(cum[k - 1], cum[voc - 1] * topp), the first position at or above it.
int64_t ReferenceSample(const std::vector<double>& scores, float random_val, float topp, int topk,
                        float temperature) {
  const size_t voc = scores.size();
  std::vector<size_t> order(voc);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(),
                   [&](size_t a, size_t b) { return scores[a] > scores[b]; });
  if (random_val == 0 || topp == 0 || topk == 1 || temperature == 0) {
    return static_cast<int64_t>(order[0]);
  }
  std::vector<double> cumulative(voc);
  cumulative[0] = 1;
  for (size_t i = 1; i < voc; ++i) {
    cumulative[i] =
        cumulative[i - 1] + std::exp((scores[order[i]] - scores[order[0]]) / temperature);
  }
  const size_t k = topk <= 0 ? voc : std::min<size_t>(static_cast<size_t>(topk), voc);
  const double limit = random_val * std::min(cumulative[k - 1], cumulative[voc - 1] * topp);
  for (size_t i = 0; i < k; ++i) {
    if (limit <= cumulative[i]) return static_cast<int64_t>(order[i]);
  }
  return static_cast<int64_t>(order[k - 1]);
}

TEST_F(InfiniopTest, RandomSamplesArgMaxIsTheFirstMaximumAndIgnoresNan) {
  const double nan = std::numeric_limits<double>::quiet_NaN();
  struct Case {
    const char* name;
    size_t voc;
    std::vector<std::pair<size_t, double>> set;  // over -1
    int64_t expected;
  };
  // 100,000 scores are split across threads on the CPU (parts of at least 16 Ki).
  const Case cases[] = {
      {"two maxima: the first", 100, {{70, 5.0}, {30, 5.0}, {99, 4.0}}, 30},
      {"a NaN in the middle is ignored", 100, {{50, nan}, {98, 3.0}}, 98},
      {"the maximum in the remainder", 100, {{99, 2.0}}, 99},
      {"a NaN first wins", 100, {{0, nan}, {10, 9.0}}, 0},
      {"maxima in two threads' parts: the first", 100000, {{90000, 5.0}, {20001, 5.0}}, 20001},
      {"two maxima in one lane: the first", 100000, {{64, 5.0}, {16, 5.0}, {32, 5.0}}, 16},
      {"a NaN opening the second part", 100000, {{50000, nan}, {99999, 3.0}}, 99999},
      {"the maximum in the last part's remainder", 100000, {{99999, 2.0}}, 99999},
      {"every score -inf but NaNs: the first", 100000, {{0, -HUGE_VAL}, {1, nan}}, 0},
  };
  for (infiniDtype_t dtype : kFloatDtypes) {
    for (const Case& c : cases) {
      SCOPED_TRACE(std::string(c.name) + ", dtype " + std::to_string(dtype));
      Tensor probs(Layout::Contiguous({c.voc}), dtype),
          result(Layout::Contiguous({}), INFINI_DTYPE_I64);
      const bool all_infinite = c.set.front().second == -HUGE_VAL;
      for (size_t i = 0; i < c.voc; ++i) probs.Set(i, all_infinite ? -HUGE_VAL : -1.0);
      for (const auto& [at, value] : c.set) probs.Set(at, value);
      probs.Upload(stream);
      infiniopRandomSampleDescriptor_t desc = nullptr;
      ASSERT_EQ(infiniopCreateRandomSampleDescriptor(handle, &desc, result.desc(), probs.desc()),
                INFINI_STATUS_SUCCESS);
      size_t workspace_size = 0;
      ASSERT_EQ(infiniopGetRandomSampleWorkspaceSize(desc, &workspace_size), INFINI_STATUS_SUCCESS);
      const DeviceBuffer workspace(workspace_size);
      ASSERT_EQ(infiniopRandomSample(desc, workspace.data(), workspace_size, result.data(),
                                     probs.data(), 0.0f, 1.0f, 1, 1.0f, stream),
                INFINI_STATUS_SUCCESS);
      result.Download(stream);
      ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
      EXPECT_EQ(static_cast<int64_t>(result.At(0)), c.expected);
      EXPECT_EQ(infiniopDestroyRandomSampleDescriptor(desc), INFINI_STATUS_SUCCESS);
    }
  }
}

TEST_F(InfiniopTest, RandomSampleIsTheArgMaxOrTheReferenceDrawForEachRandomValue) {
  struct Draw {
    float random_val, topp;
    int topk;
    float temperature;
  };
  const Draw draws[] = {{0.0f, 0.9f, 50, 1.0f},  {0.5f, 0.9f, 1, 1.0f},   {0.8f, 0.8f, 3, 0.5f},
                        {0.08f, 1.0f, 25, 1.0f}, {0.37f, 0.95f, 0, 0.7f}, {0.99f, 1.0f, -1, 2.0f},
                        {0.61f, 0.5f, 40, 1.3f}};
  std::mt19937 random(24);
  for (infiniDtype_t dtype : kFloatDtypes) {
    for (infiniDtype_t result_dtype : {INFINI_DTYPE_I64, INFINI_DTYPE_I32, INFINI_DTYPE_U64}) {
      SCOPED_TRACE("probs dtype " + std::to_string(dtype) + ", result " +
                   std::to_string(result_dtype));
      constexpr size_t kVoc = 517;
      Tensor probs(Layout::Contiguous({kVoc}), dtype), result(Layout::Contiguous({}), result_dtype);
      probs.FillRandom(&random, false);
      probs.Upload(stream);
      std::vector<double> scores(kVoc);
      for (size_t i = 0; i < kVoc; ++i) scores[i] = probs.At(i);  // as stored
      infiniopRandomSampleDescriptor_t desc = nullptr;
      ASSERT_EQ(infiniopCreateRandomSampleDescriptor(handle, &desc, result.desc(), probs.desc()),
                INFINI_STATUS_SUCCESS);
      size_t workspace_size = 0;
      ASSERT_EQ(infiniopGetRandomSampleWorkspaceSize(desc, &workspace_size), INFINI_STATUS_SUCCESS);
      const DeviceBuffer workspace(workspace_size);
      for (const Draw& d : draws) {
        ASSERT_EQ(
            infiniopRandomSample(desc, workspace.data(), workspace_size, result.data(),
                                 probs.data(), d.random_val, d.topp, d.topk, d.temperature, stream),
            INFINI_STATUS_SUCCESS);
        result.Download(stream);
        ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
        EXPECT_EQ(static_cast<int64_t>(result.At(0)),
                  ReferenceSample(scores, d.random_val, d.topp, d.topk, d.temperature))
            << "random_val " << d.random_val << ", topp " << d.topp << ", topk " << d.topk
            << ", temperature " << d.temperature;
      }
      EXPECT_EQ(infiniopDestroyRandomSampleDescriptor(desc), INFINI_STATUS_SUCCESS);
    }
  }
}

TEST_F(InfiniopTest, RandomSampleValidatesItsTensors) {
  Tensor probs(Layout::Contiguous({10}), INFINI_DTYPE_F32),
      scalar(Layout::Contiguous({}), INFINI_DTYPE_I64);
  Tensor vector_result(Layout::Contiguous({1}), INFINI_DTYPE_I64),
      float_result(Layout::Contiguous({}), INFINI_DTYPE_F32);
  Tensor strided(Layout{{10}, {2}}, INFINI_DTYPE_F32);
  infiniopRandomSampleDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateRandomSampleDescriptor(handle, &desc, vector_result.desc(), probs.desc()),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(infiniopCreateRandomSampleDescriptor(handle, &desc, float_result.desc(), probs.desc()),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateRandomSampleDescriptor(handle, &desc, scalar.desc(), strided.desc()),
            INFINI_STATUS_BAD_TENSOR_STRIDES);
}

}  // namespace
}  // namespace infiniop_test
