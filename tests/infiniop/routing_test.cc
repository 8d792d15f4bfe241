// TopK, the MoE routers Topksoftmax and Topkrouter, and MulScalar against references computed in
// double on the host from the stored inputs: every dtype they take, contiguous, strided and
// 0-sized layouts, ties and NaN; their refusals with InfiniCore's status codes, at Create and, for
// the scalars a call brings, at the call (a vendor backend without these operators skips the
// tests of their numbers).
#include <algorithm>
#include <cmath>
#include <cstdint>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "infiniop_test_support.h"
#include "operator_probes.h"

namespace infiniop_test {
namespace {

std::string Named(const std::string& what, infiniDtype_t dtype) {
  return what + ", dtype " + std::to_string(dtype);
}

// The order every selection of these operators follows: larger first (smaller first when not
// largest), NaN above every number, equal values by index.
bool Before(double a, size_t ia, double b, size_t ib, bool largest) {
  const bool a_nan = std::isnan(a), b_nan = std::isnan(b);
  if (a_nan != b_nan) return largest ? a_nan : b_nan;
  if (!a_nan && a != b) return largest ? a > b : a < b;
  return ia < ib;
}

// The indices of the k first of `values` in that order.
std::vector<size_t> Chosen(const std::vector<double>& values, size_t k, bool largest) {
  std::vector<size_t> order(values.size());
  std::iota(order.begin(), order.end(), size_t{0});
  std::sort(order.begin(), order.end(),
            [&](size_t a, size_t b) { return Before(values[a], a, values[b], b, largest); });
  order.resize(k);
  return order;
}

// --- TopK --------------------------------------------------------------------------------------

struct TopKCase {
  const char* name;
  Layout input;
  size_t dim, k;
  Layout values;  // its shape: input's with k along dim
};

std::vector<TopKCase> TopKCases() {
  return {
      {"2-D, last dim", Layout::Contiguous({5, 37}), 1, 4, Layout::Contiguous({5, 4})},
      {"2-D, first dim", Layout::Contiguous({9, 6}), 0, 3, Layout::Contiguous({3, 6})},
      {"3-D, middle dim, k = size", Layout::Contiguous({2, 7, 3}), 1, 7,
       Layout::Contiguous({2, 7, 3})},
      {"transposed input, strided values", Layout{{6, 11}, {1, 6}}, 1, 5, Layout{{6, 5}, {8, 1}}},
      {"1-D", Layout::Contiguous({300}), 0, 10, Layout::Contiguous({10})},
      {"long lines across threads", Layout::Contiguous({40, 4000}), 1, 8,
       Layout::Contiguous({40, 8})},
      {"k = 0", Layout::Contiguous({3, 4}), 1, 0, Layout::Contiguous({3, 0})},
      {"a 0-sized dimension", Layout::Contiguous({0, 8}), 1, 2, Layout::Contiguous({0, 2})},
  };
}

infiniStatus_t RunTopK(InfiniopTest& test, Tensor& values, Tensor& indices, Tensor& input, size_t k,
                       size_t dim, bool largest, bool sorted) {
  infiniopTopKDescriptor_t desc = nullptr;
  const infiniStatus_t created = infiniopCreateTopKDescriptor(
      test.handle, &desc, values.desc(), indices.desc(), input.desc(), k, dim, largest, sorted);
  if (created != INFINI_STATUS_SUCCESS) return created;
  size_t workspace_size = 0;
  EXPECT_EQ(infiniopGetTopKWorkspaceSize(desc, &workspace_size), INFINI_STATUS_SUCCESS);
  DeviceBuffer workspace(workspace_size);
  input.Upload(test.stream);
  const infiniStatus_t ran =
      infiniopTopK(desc, workspace.data(), workspace_size, values.data(), indices.data(),
                   input.data(), k, dim, largest, sorted, test.stream);
  values.Download(test.stream);
  indices.Download(test.stream);
  EXPECT_EQ(infinirtStreamSynchronize(test.stream), infinirtSuccess);
  EXPECT_EQ(infiniopDestroyTopKDescriptor(desc), INFINI_STATUS_SUCCESS);
  return ran;
}

// Checks values and indices against the selection of every line of input along dim.
void ExpectTopK(const Tensor& input, const Tensor& values, const Tensor& indices, size_t dim,
                size_t k, bool largest) {
  const std::vector<size_t>& shape = input.layout().shape;
  const std::vector<size_t>& out_shape = values.layout().shape;
  for (size_t i = 0; i < values.layout().Elements(); ++i) {
    if (WithCoordinate(out_shape, i, dim, 0) != i) continue;  // one line per first element
    // The input line's elements: the same coordinates, dim running over input's extent.
    std::vector<size_t> coordinates(shape.size());
    size_t rest = i;
    for (size_t d = out_shape.size(); d-- > 0;) {
      coordinates[d] = rest % out_shape[d];
      rest /= out_shape[d];
    }
    size_t first = 0;
    for (size_t d = 0; d < shape.size(); ++d) first = first * shape[d] + coordinates[d];
    std::vector<double> line(shape[dim]);
    for (size_t j = 0; j < shape[dim]; ++j)
      line[j] = input.At(WithCoordinate(shape, first, dim, j));
    const std::vector<size_t> chosen = Chosen(line, k, largest);
    for (size_t j = 0; j < k; ++j) {
      const size_t at = WithCoordinate(out_shape, i, dim, j);
      EXPECT_EQ(indices.At(at), static_cast<double>(chosen[j])) << "line " << i << ", rank " << j;
      const double expected = line[chosen[j]];
      if (std::isnan(expected)) {
        EXPECT_TRUE(std::isnan(values.At(at))) << "line " << i << ", rank " << j;
      } else {
        EXPECT_EQ(values.At(at), expected) << "line " << i << ", rank " << j;
      }
    }
  }
}

TEST_F(InfiniopTest, TopKMatchesTheReference) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_TopK)) {
    GTEST_SKIP() << "no TopK on this device's operator backend";
  }
  std::mt19937 random(29);
  for (infiniDtype_t dtype :
       {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64}) {
    for (const TopKCase& c : TopKCases()) {
      for (infiniDtype_t index_dtype : {INFINI_DTYPE_I32, INFINI_DTYPE_I64}) {
        for (bool largest : {true, false}) {
          SCOPED_TRACE(Named(std::string(c.name) + (largest ? ", largest" : ", smallest") +
                                 ", indices " + std::to_string(index_dtype),
                             dtype));
          Tensor input(c.input, dtype), values(c.values, dtype),
              indices(Layout::Contiguous(c.values.shape), index_dtype);
          input.FillRandom(&random, false);
          ASSERT_EQ(RunTopK(*this, values, indices, input, c.k, c.dim, largest, /*sorted=*/false),
                    INFINI_STATUS_SUCCESS);
          ExpectTopK(input, values, indices, c.dim, c.k, largest);
        }
      }
    }
  }
}

TEST_F(InfiniopTest, TopKOrdersTiesByIndexAndNanAboveEveryNumber) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_TopK)) {
    GTEST_SKIP() << "no TopK on this device's operator backend";
  }
  const double nan = std::numeric_limits<double>::quiet_NaN();
  const std::vector<double> line = {1, 3, nan, 3, -1, 1, nan, -5};
  for (bool largest : {true, false}) {
    SCOPED_TRACE(largest ? "largest" : "smallest");
    Tensor input(Layout::Contiguous({line.size()}), INFINI_DTYPE_F32),
        values(Layout::Contiguous({line.size()}), INFINI_DTYPE_F32),
        indices(Layout::Contiguous({line.size()}), INFINI_DTYPE_I64);
    for (size_t i = 0; i < line.size(); ++i) input.Set(i, line[i]);
    ASSERT_EQ(RunTopK(*this, values, indices, input, line.size(), 0, largest, true),
              INFINI_STATUS_SUCCESS);
    const std::vector<double> expected = largest ? std::vector<double>{2, 6, 1, 3, 0, 5, 4, 7}
                                                 : std::vector<double>{7, 4, 0, 5, 1, 3, 2, 6};
    for (size_t i = 0; i < line.size(); ++i) EXPECT_EQ(indices.At(i), expected[i]) << i;
  }
}

TEST_F(InfiniopTest, TopKFindsANanLateInALongLine) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_TopK)) {
    GTEST_SKIP() << "no TopK on this device's operator backend";
  }
  // k small against the line: the CPU keeps a heap of the best seen, which a NaN must leave.
  const size_t n = 400, k = 5;
  std::mt19937 random(47);
  for (bool largest : {true, false}) {
    SCOPED_TRACE(largest ? "largest" : "smallest");
    Tensor input(Layout::Contiguous({n}), INFINI_DTYPE_F32),
        values(Layout::Contiguous({k}), INFINI_DTYPE_F32),
        indices(Layout::Contiguous({k}), INFINI_DTYPE_I32);
    input.FillRandom(&random, false);
    input.Set(333, std::numeric_limits<double>::quiet_NaN());
    ASSERT_EQ(RunTopK(*this, values, indices, input, k, 0, largest, true), INFINI_STATUS_SUCCESS);
    ExpectTopK(input, values, indices, 0, k, largest);
    if (largest) {
      EXPECT_EQ(indices.At(0), 333.0);
    }
  }
}

TEST_F(InfiniopTest, TopKRefusesBadInputWithInfiniCoresCodes) {
  const auto status = [&](const Layout& in, const Layout& out, infiniDtype_t dtype,
                          infiniDtype_t index_dtype, size_t k, size_t dim) {
    Tensor input(in, dtype), values(out, dtype),
        indices(Layout::Contiguous(out.shape), index_dtype);
    infiniopTopKDescriptor_t desc = nullptr;
    const infiniStatus_t created = infiniopCreateTopKDescriptor(
        handle, &desc, values.desc(), indices.desc(), input.desc(), k, dim, true, true);
    if (created == INFINI_STATUS_SUCCESS) infiniopDestroyTopKDescriptor(desc);
    return created;
  };
  const Layout in = Layout::Contiguous({4, 8}), out = Layout::Contiguous({4, 2});
  EXPECT_EQ(status(in, out, INFINI_DTYPE_F32, INFINI_DTYPE_I64, 2, 1), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(status(in, out, INFINI_DTYPE_I32, INFINI_DTYPE_I64, 2, 1),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(status(in, out, INFINI_DTYPE_F32, INFINI_DTYPE_F32, 2, 1),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(status(in, out, INFINI_DTYPE_F32, INFINI_DTYPE_I64, 3, 1),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(status(in, Layout::Contiguous({4, 9}), INFINI_DTYPE_F32, INFINI_DTYPE_I64, 9, 1),
            INFINI_STATUS_BAD_PARAM)
      << "k beyond the dimension";
  EXPECT_EQ(status(in, out, INFINI_DTYPE_F32, INFINI_DTYPE_I64, 2, 2), INFINI_STATUS_BAD_PARAM)
      << "dim beyond the dimensions";
  EXPECT_EQ(status(in, out, INFINI_DTYPE_F32, INFINI_DTYPE_I64, 2, SIZE_MAX),
            INFINI_STATUS_BAD_PARAM)
      << "a dim no int holds";
  EXPECT_EQ(status(in, Layout{{4, 2}, {0, 1}}, INFINI_DTYPE_F32, INFINI_DTYPE_I64, 2, 1),
            INFINI_STATUS_BAD_TENSOR_STRIDES)
      << "broadcast values";
}

TEST_F(InfiniopTest, ATopKCallRepeatingOtherScalarsThanCreatesIsRefused) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_TopK)) {
    GTEST_SKIP() << "no TopK on this device's operator backend";
  }
  Tensor input(Layout::Contiguous({4, 8}), INFINI_DTYPE_F32),
      values(Layout::Contiguous({4, 2}), INFINI_DTYPE_F32),
      indices(Layout::Contiguous({4, 2}), INFINI_DTYPE_I32);
  infiniopTopKDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateTopKDescriptor(handle, &desc, values.desc(), indices.desc(), input.desc(),
                                         2, 1, true, false),
            INFINI_STATUS_SUCCESS);
  void* v = values.data();
  void* i = indices.data();
  const void* x = input.data();
  size_t workspace_size = 0;
  ASSERT_EQ(infiniopGetTopKWorkspaceSize(desc, &workspace_size), INFINI_STATUS_SUCCESS);
  DeviceBuffer workspace(workspace_size);
  void* w = workspace.data();
  EXPECT_EQ(infiniopTopK(desc, w, workspace_size, v, i, x, 3, 1, true, false, stream),
            INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopTopK(desc, w, workspace_size, v, i, x, 2, 0, true, false, stream),
            INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopTopK(desc, w, workspace_size, v, i, x, 2, 1, false, false, stream),
            INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopTopK(desc, w, workspace_size, v, i, x, 2, 1, true, true, stream),
            INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopTopK(desc, w, workspace_size, v, i, x, 2, 1, true, false, stream),
            INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(infiniopDestroyTopKDescriptor(desc), INFINI_STATUS_SUCCESS);
}

// --- Topksoftmax -------------------------------------------------------------------------------

// Runs a router (Topksoftmax, or Topkrouter with bias) on x into values and indices.
infiniStatus_t RunRouter(InfiniopTest& test, infiniopOperator_t op, Tensor& values, Tensor& indices,
                         Tensor& x, Tensor* bias, size_t topk, int norm, float scaling) {
  InfiniopDescriptor* desc = nullptr;
  const infiniStatus_t created =
      op == INFINIOP_OPERATOR_Topksoftmax
          ? infiniopCreateTopksoftmaxDescriptor(test.handle, &desc, x.desc())
          : infiniopCreateTopkrouterDescriptor(test.handle, &desc, x.desc(), bias->desc());
  if (created != INFINI_STATUS_SUCCESS) return created;
  size_t workspace_size = 0;
  EXPECT_EQ(WorkspaceSize(op, desc, &workspace_size), INFINI_STATUS_SUCCESS);
  DeviceBuffer workspace(workspace_size);
  x.Upload(test.stream);
  if (bias != nullptr) bias->Upload(test.stream);
  const infiniStatus_t ran =
      op == INFINIOP_OPERATOR_Topksoftmax
          ? infiniopTopksoftmax(desc, workspace.data(), workspace_size, values.data(),
                                indices.data(), x.data(), topk, norm, test.stream)
          : infiniopTopkrouter(desc, workspace.data(), workspace_size, values.data(),
                               indices.data(), x.data(), bias->data(), scaling, topk, test.stream);
  values.Download(test.stream);
  indices.Download(test.stream);
  EXPECT_EQ(infinirtStreamSynchronize(test.stream), infinirtSuccess);
  EXPECT_EQ(DestroyDescriptor(op, desc), INFINI_STATUS_SUCCESS);
  return ran;
}

// x's row r, as stored.
std::vector<double> Row(const Tensor& x, size_t r) {
  const size_t experts = x.layout().shape[1];
  std::vector<double> row(experts);
  for (size_t e = 0; e < experts; ++e) row[e] = x.At(r * experts + e);
  return row;
}

TEST_F(InfiniopTest, TopksoftmaxMatchesTheReference) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_Topksoftmax)) {
    GTEST_SKIP() << "no Topksoftmax on this device's operator backend";
  }
  struct Case {
    const char* name;
    Layout x;
    size_t topk;
  };
  const Case cases[] = {
      {"8 experts, 2 chosen", Layout::Contiguous({6, 8}), 2},
      {"64 experts, 6 chosen", Layout::Contiguous({33, 64}), 6},
      {"rows strided", Layout{{5, 16}, {20, 1}}, 4},
      {"32 chosen of 128", Layout::Contiguous({3, 128}), 32},
      {"every expert chosen", Layout::Contiguous({2, 7}), 7},
      {"no token", Layout::Contiguous({0, 8}), 2},
      {"none chosen", Layout::Contiguous({3, 8}), 0},
  };
  std::mt19937 random(31);
  for (infiniDtype_t dtype : {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32}) {
    for (const Case& c : cases) {
      for (int norm : {0, 1}) {
        SCOPED_TRACE(Named(std::string(c.name) + (norm ? ", norm" : ""), dtype));
        const size_t tokens = c.x.shape[0];
        Tensor x(c.x, dtype), values(Layout::Contiguous({tokens, c.topk}), INFINI_DTYPE_F32),
            indices(Layout::Contiguous({tokens, c.topk}), INFINI_DTYPE_I32);
        x.FillRandom(&random, false);
        ASSERT_EQ(RunRouter(*this, INFINIOP_OPERATOR_Topksoftmax, values, indices, x, nullptr,
                            c.topk, norm, 0),
                  INFINI_STATUS_SUCCESS);
        for (size_t r = 0; r < tokens; ++r) {
          std::vector<double> row = Row(x, r);
          const std::vector<size_t> chosen = Chosen(row, c.topk, true);
          const double max = *std::max_element(row.begin(), row.end());
          double sum = 0, chosen_sum = 0;
          for (double v : row) sum += std::exp(v - max);
          for (size_t j = 0; j < c.topk; ++j) chosen_sum += std::exp(row[chosen[j]] - max) / sum;
          for (size_t j = 0; j < c.topk; ++j) {
            const size_t at = r * c.topk + j;
            EXPECT_EQ(indices.At(at), static_cast<double>(chosen[j])) << "row " << r;
            const double p = std::exp(row[chosen[j]] - max) / sum;
            ExpectClose(INFINI_DTYPE_F32, norm ? p / chosen_sum : p, values.At(at), at);
          }
        }
      }
    }
  }
}

TEST_F(InfiniopTest, TopksoftmaxRefusesBadInputWithInfiniCoresCodes) {
  Tensor values(Layout::Contiguous({4, 64}), INFINI_DTYPE_F32),
      indices(Layout::Contiguous({4, 64}), INFINI_DTYPE_I32);
  const auto created = [&](const Layout& layout, infiniDtype_t dtype) {
    Tensor x(layout, dtype);
    InfiniopDescriptor* desc = nullptr;
    const infiniStatus_t status = infiniopCreateTopksoftmaxDescriptor(handle, &desc, x.desc());
    if (status == INFINI_STATUS_SUCCESS) infiniopDestroyTopksoftmaxDescriptor(desc);
    return status;
  };
  EXPECT_EQ(created(Layout::Contiguous({4, 8}), INFINI_DTYPE_F64), INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(created(Layout::Contiguous({2, 4, 8}), INFINI_DTYPE_F32),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(created(Layout{{4, 8}, {1, 4}}, INFINI_DTYPE_F32), INFINI_STATUS_BAD_TENSOR_STRIDES);
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_Topksoftmax)) return;

  // The call's topk: at most 32 and at most the experts; a NULL output.
  Tensor x(Layout::Contiguous({4, 40}), INFINI_DTYPE_F32);
  EXPECT_EQ(RunRouter(*this, INFINIOP_OPERATOR_Topksoftmax, values, indices, x, nullptr, 33, 0, 0),
            INFINI_STATUS_BAD_PARAM);
  Tensor small(Layout::Contiguous({4, 8}), INFINI_DTYPE_F32);
  EXPECT_EQ(
      RunRouter(*this, INFINIOP_OPERATOR_Topksoftmax, values, indices, small, nullptr, 9, 0, 0),
      INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(RunRouter(*this, INFINIOP_OPERATOR_Topksoftmax, values, indices, x, nullptr,
                      size_t{1} << 40, 0, 0),
            INFINI_STATUS_BAD_PARAM)
      << "a topk no int holds";
  InfiniopDescriptor* desc = nullptr;
  ASSERT_EQ(infiniopCreateTopksoftmaxDescriptor(handle, &desc, x.desc()), INFINI_STATUS_SUCCESS);
  size_t workspace_size = 0;
  ASSERT_EQ(infiniopGetTopksoftmaxWorkspaceSize(desc, &workspace_size), INFINI_STATUS_SUCCESS);
  DeviceBuffer workspace(workspace_size);
  EXPECT_EQ(infiniopTopksoftmax(desc, workspace.data(), workspace_size, nullptr, indices.data(),
                                x.data(), 2, 0, stream),
            INFINI_STATUS_NULL_POINTER);
  EXPECT_EQ(infiniopTopksoftmax(desc, workspace.data(), workspace_size, values.data(), nullptr,
                                x.data(), 2, 0, stream),
            INFINI_STATUS_NULL_POINTER);
  EXPECT_EQ(infiniopDestroyTopksoftmaxDescriptor(desc), INFINI_STATUS_SUCCESS);
}

// --- Topkrouter --------------------------------------------------------------------------------

// DeepSeek-V3's choice for one row of logits, in double: (indices, weights).
std::pair<std::vector<size_t>, std::vector<double>> GroupedChoice(const std::vector<double>& logits,
                                                                  const std::vector<double>& bias,
                                                                  size_t topk, double scaling) {
  const size_t experts = logits.size(), group_size = experts / 8;
  std::vector<double> s(experts), b(experts);
  for (size_t e = 0; e < experts; ++e) {
    s[e] = 1 / (1 + std::exp(-logits[e]));
    b[e] = s[e] + bias[e];
  }
  std::vector<double> group_scores(8);
  for (size_t g = 0; g < 8; ++g) {
    std::vector<double> members(b.begin() + g * group_size, b.begin() + (g + 1) * group_size);
    const std::vector<size_t> best = Chosen(members, 2, true);
    group_scores[g] = members[best[0]] + members[best[1]];
  }
  const std::vector<size_t> kept = Chosen(group_scores, 4, true);
  std::vector<double> masked(experts, 0.0);
  for (size_t g : kept) {
    for (size_t e = g * group_size; e < (g + 1) * group_size; ++e) masked[e] = b[e];
  }
  const std::vector<size_t> chosen = Chosen(masked, topk, true);
  double sum = 0;
  for (size_t e : chosen) sum += s[e];
  std::vector<double> weights;
  for (size_t e : chosen) weights.push_back(scaling * s[e] / (sum + 1e-20));
  return {chosen, weights};
}

TEST_F(InfiniopTest, TopkrouterMatchesTheReference) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_Topkrouter)) {
    GTEST_SKIP() << "no Topkrouter on this device's operator backend";
  }
  struct Case {
    const char* name;
    Layout x;
    size_t topk;
  };
  const Case cases[] = {
      {"DeepSeek-V3's 256 experts, 8 chosen", Layout::Contiguous({9, 256}), 8},
      {"64 experts, 6 chosen", Layout::Contiguous({17, 64}), 6},
      {"16 experts, every kept one chosen", Layout::Contiguous({3, 16}), 8},
      {"rows strided", Layout{{4, 64}, {100, 1}}, 8},
      {"no token", Layout::Contiguous({0, 64}), 8},
  };
  std::mt19937 random(37);
  for (infiniDtype_t dtype : {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(Named(c.name, dtype));
      const size_t tokens = c.x.shape[0], experts = c.x.shape[1];
      Tensor x(c.x, dtype), bias(Layout::Contiguous({experts}), INFINI_DTYPE_F32),
          values(Layout::Contiguous({tokens, c.topk}), INFINI_DTYPE_F32),
          indices(Layout::Contiguous({tokens, c.topk}), INFINI_DTYPE_I32);
      x.FillRandom(&random, false);
      bias.FillRandom(&random, false);
      for (size_t e = 0; e < experts; ++e) bias.Set(e, bias.At(e) / 8);  // small, both signs
      const float scaling = 2.5f;
      ASSERT_EQ(RunRouter(*this, INFINIOP_OPERATOR_Topkrouter, values, indices, x, &bias, c.topk, 0,
                          scaling),
                INFINI_STATUS_SUCCESS);
      std::vector<double> bias_values(experts);
      for (size_t e = 0; e < experts; ++e) bias_values[e] = bias.At(e);
      for (size_t r = 0; r < tokens; ++r) {
        const auto [chosen, weights] = GroupedChoice(Row(x, r), bias_values, c.topk, scaling);
        for (size_t j = 0; j < c.topk; ++j) {
          const size_t at = r * c.topk + j;
          EXPECT_EQ(indices.At(at), static_cast<double>(chosen[j])) << "row " << r << ", " << j;
          ExpectClose(INFINI_DTYPE_F32, weights[j], values.At(at), at);
        }
      }
    }
  }
}

TEST_F(InfiniopTest, TopkrouterRefusesBadInputWithInfiniCoresCodes) {
  const auto created = [&](const Layout& x_layout, infiniDtype_t dtype, const Layout& bias_layout,
                           infiniDtype_t bias_dtype) {
    Tensor x(x_layout, dtype), bias(bias_layout, bias_dtype);
    InfiniopDescriptor* desc = nullptr;
    const infiniStatus_t status =
        infiniopCreateTopkrouterDescriptor(handle, &desc, x.desc(), bias.desc());
    if (status == INFINI_STATUS_SUCCESS) infiniopDestroyTopkrouterDescriptor(desc);
    return status;
  };
  const Layout x = Layout::Contiguous({4, 64}), bias = Layout::Contiguous({64});
  EXPECT_EQ(created(x, INFINI_DTYPE_F64, bias, INFINI_DTYPE_F32), INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(created(x, INFINI_DTYPE_F32, bias, INFINI_DTYPE_F16), INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(created(x, INFINI_DTYPE_F32, Layout::Contiguous({32}), INFINI_DTYPE_F32),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(created(Layout::Contiguous({4, 60}), INFINI_DTYPE_F32, Layout::Contiguous({60}),
                    INFINI_DTYPE_F32),
            INFINI_STATUS_BAD_PARAM)
      << "experts not in 8 groups";
  EXPECT_EQ(created(Layout::Contiguous({4, 8}), INFINI_DTYPE_F32, Layout::Contiguous({8}),
                    INFINI_DTYPE_F32),
            INFINI_STATUS_BAD_PARAM)
      << "groups of one expert";
  EXPECT_EQ(created(Layout{{4, 64}, {1, 4}}, INFINI_DTYPE_F32, bias, INFINI_DTYPE_F32),
            INFINI_STATUS_BAD_TENSOR_STRIDES);
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_Topkrouter)) return;
  Tensor scores(x, INFINI_DTYPE_F32), correction(bias, INFINI_DTYPE_F32),
      values(Layout::Contiguous({4, 64}), INFINI_DTYPE_F32),
      indices(Layout::Contiguous({4, 64}), INFINI_DTYPE_I32);
  EXPECT_EQ(RunRouter(*this, INFINIOP_OPERATOR_Topkrouter, values, indices, scores, &correction, 33,
                      0, 1),
            INFINI_STATUS_BAD_PARAM)
      << "more than the kept groups' experts";
  EXPECT_EQ(RunRouter(*this, INFINIOP_OPERATOR_Topkrouter, values, indices, scores, &correction, 32,
                      0, 1),
            INFINI_STATUS_SUCCESS);
}

// --- MulScalar ---------------------------------------------------------------------------------

TEST_F(InfiniopTest, MulScalarMatchesTheReference) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_MulScalar)) {
    GTEST_SKIP() << "no MulScalar on this device's operator backend";
  }
  struct Case {
    const char* name;
    Layout input, output;
  };
  const Case cases[] = {
      {"contiguous", Layout::Contiguous({7, 33}), Layout::Contiguous({7, 33})},
      {"transposed input", Layout{{5, 6}, {1, 5}}, Layout::Contiguous({5, 6})},
      {"broadcast input", Layout{{4, 9}, {0, 1}}, Layout::Contiguous({4, 9})},
      {"many elements", Layout::Contiguous({300000}), Layout::Contiguous({300000})},
      {"a 0-sized dimension", Layout::Contiguous({0, 3}), Layout::Contiguous({0, 3})},
  };
  std::mt19937 random(43);
  for (infiniDtype_t dtype :
       {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64}) {
    for (const Case& c : cases) {
      SCOPED_TRACE(Named(c.name, dtype));
      Tensor input(c.input, dtype), output(c.output, dtype);
      input.FillRandom(&random, false);
      const double alpha = 0.1;  // not a float: F64 keeps it whole
      infiniopMulScalarDescriptor_t desc = nullptr;
      ASSERT_EQ(infiniopCreateMulScalarDescriptor(handle, &desc, output.desc(), input.desc()),
                INFINI_STATUS_SUCCESS);
      size_t workspace_size = 0;
      ASSERT_EQ(infiniopGetMulScalarWorkspaceSize(desc, &workspace_size), INFINI_STATUS_SUCCESS);
      DeviceBuffer workspace(workspace_size);
      input.Upload(stream);
      ASSERT_EQ(infiniopMulScalar(desc, workspace.data(), workspace_size, output.data(),
                                  input.data(), alpha, stream),
                INFINI_STATUS_SUCCESS);
      output.Download(stream);
      ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
      EXPECT_EQ(infiniopDestroyMulScalarDescriptor(desc), INFINI_STATUS_SUCCESS);
      for (size_t i = 0; i < c.output.Elements(); ++i) {
        const double expected = Rounded(dtype, input.At(i) * alpha);
        if (dtype == INFINI_DTYPE_F64) {
          ASSERT_EQ(output.At(i), expected) << i;
        } else {
          ExpectClose(dtype, expected, output.At(i), i);
        }
      }
    }
  }
}

}  // namespace
}  // namespace infiniop_test
