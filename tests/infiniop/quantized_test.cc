// The quantized-weight operators against references computed on the host: DequantizeAWQ on
// nibbles packed in AWQ's interleaved order (row-major and column-major scales), and I8Gemm on
// int8 activations and weights (row-major and column-major weights, with and without bias) with
// per-token and per-channel scales, for F16, BF16 and F32 outputs; their refusals. Tolerances are
// infiniop_test.cc's.
#include <cstdint>
#include <random>
#include <string>
#include <vector>

#include "infiniop_test_support.h"
#include "operator_probes.h"

namespace infiniop_test {
namespace {

const infiniDtype_t kQuantizedDtypes[] = {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32};

// Logical column j of a pack of eight sits in nibble kNibble[j] (AWQ's order).
const int kNibble[8] = {0, 4, 1, 5, 2, 6, 3, 7};

// values [rows, cols] (0..15) packed into [rows, cols / 8] I32.
void Pack(const std::vector<std::vector<uint32_t>>& values, Tensor* packed) {
  const size_t cols = values[0].size() / 8;
  for (size_t r = 0; r < values.size(); ++r) {
    for (size_t p = 0; p < cols; ++p) {
      uint32_t word = 0;
      for (size_t j = 0; j < 8; ++j) word |= values[r][p * 8 + j] << (4 * kNibble[j]);
      packed->Set(r * cols + p, static_cast<double>(static_cast<int32_t>(word)));
    }
  }
}

TEST_F(InfiniopTest, DequantizeAWQUnpacksTheInterleavedNibbles) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_DequantizeAWQ)) {
    GTEST_SKIP() << "no DequantizeAWQ on this device's operator backend";
  }
  const size_t k = 64, n = 32, groups = 4, group = k / groups;
  std::mt19937 random(71);
  std::uniform_int_distribution<uint32_t> nibble(0, 15);
  for (infiniDtype_t dtype : kQuantizedDtypes) {
    for (bool column_major_scales : {false, true}) {
      SCOPED_TRACE("dtype " + std::to_string(dtype) +
                   (column_major_scales ? ", column-major scales" : ""));
      std::vector<std::vector<uint32_t>> q(k, std::vector<uint32_t>(n)),
          z(groups, std::vector<uint32_t>(n));
      for (auto& row : q) {
        for (uint32_t& v : row) v = nibble(random);
      }
      for (auto& row : z) {
        for (uint32_t& v : row) v = nibble(random);
      }
      Tensor qweight(Layout::Contiguous({k, n / 8}), INFINI_DTYPE_I32),
          zeros(Layout::Contiguous({groups, n / 8}), INFINI_DTYPE_I32),
          scales(column_major_scales ? Layout{{groups, n}, {1, static_cast<ptrdiff_t>(groups)}}
                                     : Layout::Contiguous({groups, n}),
                 dtype),
          out(Layout::Contiguous({k, n}), dtype);
      Pack(q, &qweight);
      Pack(z, &zeros);
      scales.FillRandom(&random, false);
      for (Tensor* t : {&qweight, &zeros, &scales}) t->Upload(stream);
      infiniopDequantizeAWQDescriptor_t desc = nullptr;
      ASSERT_EQ(infiniopCreateDequantizeAWQDescriptor(handle, &desc, out.desc(), qweight.desc(),
                                                      scales.desc(), zeros.desc()),
                INFINI_STATUS_SUCCESS);
      ASSERT_EQ(infiniopDequantizeAWQ(desc, nullptr, 0, out.data(), qweight.data(), scales.data(),
                                      zeros.data(), stream),
                INFINI_STATUS_SUCCESS);
      out.Download(stream);
      ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
      EXPECT_EQ(infiniopDestroyDequantizeAWQDescriptor(desc), INFINI_STATUS_SUCCESS);
      for (size_t r = 0; r < k; ++r) {
        for (size_t c = 0; c < n; ++c) {
          const double difference =
              static_cast<double>(q[r][c]) - static_cast<double>(z[r / group][c]);
          const double expected = Rounded(dtype, difference * scales.At((r / group) * n + c));
          EXPECT_EQ(out.At(r * n + c), expected) << "row " << r << ", column " << c;
        }
      }
    }
  }
}

TEST_F(InfiniopTest, I8GemmScalesTheInt32ProductsAndAddsTheBias) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_I8Gemm)) {
    GTEST_SKIP() << "no I8Gemm on this device's operator backend";
  }
  const size_t m = 5, n = 7, k = 67;
  std::mt19937 random(73);
  std::uniform_int_distribution<int> int8(-128, 127);
  std::uniform_real_distribution<double> scale(0.001, 0.02);
  for (infiniDtype_t dtype : kQuantizedDtypes) {
    for (bool column_major : {true, false}) {
      for (bool with_bias : {true, false}) {
        SCOPED_TRACE("dtype " + std::to_string(dtype) +
                     (column_major ? ", column-major weights" : ", row-major weights") +
                     (with_bias ? ", bias" : ""));
        const Layout w_layout = column_major ? Layout{{k, n}, {1, static_cast<ptrdiff_t>(k)}}
                                             : Layout::Contiguous({k, n});
        Tensor out(Layout::Contiguous({m, n}), dtype), bias(Layout::Contiguous({n}), dtype),
            x(Layout::Contiguous({m, k}), INFINI_DTYPE_I8),
            x_scale(Layout::Contiguous({m, 1}), INFINI_DTYPE_F32), w(w_layout, INFINI_DTYPE_I8),
            w_scale(Layout::Contiguous({n}), INFINI_DTYPE_F32);
        for (size_t i = 0; i < m * k; ++i) x.Set(i, int8(random));
        for (size_t i = 0; i < k * n; ++i) w.Set(i, int8(random));
        for (size_t i = 0; i < m; ++i) x_scale.Set(i, scale(random));
        for (size_t i = 0; i < n; ++i) w_scale.Set(i, scale(random));
        bias.FillRandom(&random, false);
        for (Tensor* t : {&bias, &x, &x_scale, &w, &w_scale}) t->Upload(stream);
        infiniopI8GemmDescriptor_t desc = nullptr;
        ASSERT_EQ(infiniopCreateI8GemmDescriptor(handle, &desc, out.desc(),
                                                 with_bias ? bias.desc() : nullptr, x.desc(),
                                                 x_scale.desc(), w.desc(), w_scale.desc()),
                  INFINI_STATUS_SUCCESS);
        size_t workspace = 0;
        ASSERT_EQ(infiniopGetI8GemmWorkspaceSize(desc, &workspace), INFINI_STATUS_SUCCESS);
        DeviceBuffer buffer(workspace);
        ASSERT_EQ(infiniopI8Gemm(desc, buffer.data(), workspace, out.data(),
                                 with_bias ? bias.data() : nullptr, x.data(), x_scale.data(),
                                 w.data(), w_scale.data(), stream),
                  INFINI_STATUS_SUCCESS);
        out.Download(stream);
        ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
        EXPECT_EQ(infiniopDestroyI8GemmDescriptor(desc), INFINI_STATUS_SUCCESS);
        for (size_t i = 0; i < m; ++i) {
          for (size_t j = 0; j < n; ++j) {
            double dot = 0;
            for (size_t e = 0; e < k; ++e) dot += x.At(i * k + e) * w.At(e * n + j);
            const double expected =
                dot * x_scale.At(i) * w_scale.At(j) + (with_bias ? bias.At(j) : 0.0);
            ExpectClose(dtype, Rounded(dtype, expected), out.At(i * n + j), i * n + j);
          }
        }
      }
    }
  }
}

TEST_F(InfiniopTest, QuantizedOperatorsRefuseWhatDoesNotFit) {
  Tensor out(Layout::Contiguous({4, 8}), INFINI_DTYPE_F16),
      x(Layout::Contiguous({4, 16}), INFINI_DTYPE_I8),
      xf(Layout::Contiguous({4, 16}), INFINI_DTYPE_F16),
      w(Layout::Contiguous({16, 8}), INFINI_DTYPE_I8),
      w9(Layout::Contiguous({16, 9}), INFINI_DTYPE_I8),
      xs(Layout::Contiguous({4}), INFINI_DTYPE_F32), ws(Layout::Contiguous({8}), INFINI_DTYPE_F32),
      ws16(Layout::Contiguous({8}), INFINI_DTYPE_F16),
      strided(Layout{{16, 8}, {16, 2}}, INFINI_DTYPE_I8);
  infiniopI8GemmDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateI8GemmDescriptor(handle, &desc, out.desc(), nullptr, xf.desc(), xs.desc(),
                                           w.desc(), ws.desc()),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateI8GemmDescriptor(handle, &desc, out.desc(), nullptr, x.desc(), xs.desc(),
                                           w.desc(), ws16.desc()),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreateI8GemmDescriptor(handle, &desc, out.desc(), nullptr, x.desc(), xs.desc(),
                                           w9.desc(), ws.desc()),
            INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(infiniopCreateI8GemmDescriptor(handle, &desc, out.desc(), nullptr, x.desc(), xs.desc(),
                                           strided.desc(), ws.desc()),
            INFINI_STATUS_BAD_TENSOR_STRIDES);
  Tensor qweight(Layout::Contiguous({32, 2}), INFINI_DTYPE_I32),
      scales(Layout::Contiguous({3, 16}), INFINI_DTYPE_F16),
      zeros(Layout::Contiguous({3, 2}), INFINI_DTYPE_I32),
      out32(Layout::Contiguous({32, 16}), INFINI_DTYPE_F16);
  infiniopDequantizeAWQDescriptor_t awq = nullptr;
  EXPECT_EQ(infiniopCreateDequantizeAWQDescriptor(handle, &awq, out32.desc(), qweight.desc(),
                                                  scales.desc(), zeros.desc()),
            INFINI_STATUS_BAD_TENSOR_SHAPE);  // 32 rows in 3 groups
  EXPECT_EQ(desc, nullptr);
  EXPECT_EQ(awq, nullptr);
}

}  // namespace
}  // namespace infiniop_test
