// The quantized-weight operators on the host: DequantizeAWQ (4-bit AWQ packing to floats) and
// I8Gemm (int8 activations times int8 weights, summed in int32, then both scales and the bias).
// The plans cpu_operators.cc's Create makes and its Run queues.
#include <algorithm>
#include <cstdint>
#include <memory>
#include <vector>

#include "cpu_common.h"
#include "cpu_parallel.h"
#include "infiniop_backend.h"

namespace infinirt::infiniop_cpu {

namespace {

// A matrix's geometry: rows, columns, their strides in elements.
struct Matrix {
  size_t rows = 0, cols = 0;
  ptrdiff_t row_stride = 0, col_stride = 0;
};

Matrix MatrixOf(const infiniopBackendTensor& t) {
  return {t.shape[0], t.shape[1], t.strides[0], t.strides[1]};
}

// A vector's stride: the one dimension of more than one element (x_scale may be [M, 1]).
ptrdiff_t VectorStride(const infiniopBackendTensor& t) {
  for (size_t d = 0; d < t.ndim; ++d) {
    if (t.shape[d] > 1) return t.strides[d];
  }
  return 0;
}

// --- DequantizeAWQ -----------------------------------------------------------------------------

// Logical column j of a pack of eight is in nibble kNibbleOf[j] (AWQ's interleave).
constexpr int kNibbleOf[8] = {0, 4, 1, 5, 2, 6, 3, 7};

// Tensors (out [K, N], qweight [K, N / 8], scales [groups, N], zeros [groups, N / 8]).
template <class T>
class DequantizeAWQPlan final : public Plan {
 public:
  explicit DequantizeAWQPlan(const infiniopBackendTensor* tensors)
      : Plan(4, tensors[0].shape[0] == 0 || tensors[0].shape[1] == 0, /*uses_run_params=*/false),
        out_(MatrixOf(tensors[0])),
        qweight_(MatrixOf(tensors[1])),
        scales_(MatrixOf(tensors[2])),
        zeros_(MatrixOf(tensors[3])) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    const size_t group = out_.rows / scales_.rows;
    T* out = static_cast<T*>(buffers[0]);
    const int32_t* qweight = static_cast<const int32_t*>(buffers[1]);
    const T* scales = static_cast<const T*>(buffers[2]);
    const int32_t* zeros = static_cast<const int32_t*>(buffers[3]);
    ParallelFor(
        out_.rows, std::max<size_t>(1, kParallelGrain / out_.cols), [&](size_t begin, size_t end) {
          for (size_t k = begin; k < end; ++k) {
            const ptrdiff_t g = static_cast<ptrdiff_t>(k / group);
            for (size_t pack = 0; pack < qweight_.cols; ++pack) {
              const uint32_t q = static_cast<uint32_t>(
                  qweight[static_cast<ptrdiff_t>(k) * qweight_.row_stride +
                          static_cast<ptrdiff_t>(pack) * qweight_.col_stride]);
              const uint32_t z = static_cast<uint32_t>(
                  zeros[g * zeros_.row_stride + static_cast<ptrdiff_t>(pack) * zeros_.col_stride]);
              for (size_t j = 0; j < 8; ++j) {
                const ptrdiff_t n = static_cast<ptrdiff_t>(pack * 8 + j);
                const int shift = 4 * kNibbleOf[j];
                const float difference =
                    static_cast<float>((q >> shift) & 0xF) - static_cast<float>((z >> shift) & 0xF);
                const float scale = Load(scales[g * scales_.row_stride + n * scales_.col_stride]);
                out[static_cast<ptrdiff_t>(k) * out_.row_stride + n * out_.col_stride] =
                    Store<T>(difference * scale);
              }
            }
          }
        });
  }

 private:
  Matrix out_, qweight_, scales_, zeros_;
};

// --- I8Gemm ------------------------------------------------------------------------------------

// The int32 dot product of n int8 pairs, contiguous on both sides (vectorised).
[[gnu::always_inline]] inline int32_t DotI8(const int8_t* a, const int8_t* b, size_t n) {
  int32_t lanes[kBlock] = {};
  size_t i = 0;
  for (; i + kBlock <= n; i += kBlock) {
    for (size_t k = 0; k < kBlock; ++k) lanes[k] += int32_t{a[i + k]} * int32_t{b[i + k]};
  }
  int32_t sum = 0;
  for (size_t k = 0; k < kBlock; ++k) sum += lanes[k];
  for (; i < n; ++i) sum += int32_t{a[i]} * int32_t{b[i]};
  return sum;
}

// Tensors (out, bias, x, x_scale, weights, weights_scale). x's rows and weights' columns are
// packed along K first where they are not (a copy per call), so that each output element is one
// contiguous int8 dot product.
template <class T>
class I8GemmPlan final : public Plan {
 public:
  explicit I8GemmPlan(const infiniopBackendTensor* tensors)
      : Plan(6, tensors[0].shape[0] == 0 || tensors[0].shape[1] == 0, /*uses_run_params=*/false),
        out_(MatrixOf(tensors[0])),
        x_(MatrixOf(tensors[2])),
        w_(MatrixOf(tensors[4])),
        has_bias_(tensors[1].dtype != INFINI_DTYPE_INVALID),
        bias_stride_(has_bias_ ? tensors[1].strides[0] : 0),
        x_scale_stride_(VectorStride(tensors[3])),
        w_scale_stride_(VectorStride(tensors[5])) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& /*params*/) const override {
    const size_t m = out_.rows, n = out_.cols, k = x_.cols;
    // x as rows of K contiguous values, weights as columns of K contiguous values.
    std::vector<int8_t> x_packed, w_packed;
    const int8_t* x = Packed(static_cast<const int8_t*>(buffers[2]), x_, false, &x_packed);
    const int8_t* w = Packed(static_cast<const int8_t*>(buffers[4]), w_, true, &w_packed);
    const ptrdiff_t x_row = x == x_packed.data() ? static_cast<ptrdiff_t>(k) : x_.row_stride;
    const ptrdiff_t w_col = w == w_packed.data() ? static_cast<ptrdiff_t>(k) : w_.col_stride;
    const float* x_scale = static_cast<const float*>(buffers[3]);
    const float* w_scale = static_cast<const float*>(buffers[5]);
    const T* bias = has_bias_ ? static_cast<const T*>(buffers[1]) : nullptr;
    T* out = static_cast<T*>(buffers[0]);
    ParallelFor(m, std::max<size_t>(1, kParallelGrain / std::max<size_t>(1, n * k)),
                [&](size_t begin, size_t end) {
                  for (size_t i = begin; i < end; ++i) {
                    const int8_t* row = x + static_cast<ptrdiff_t>(i) * x_row;
                    const float row_scale = x_scale[static_cast<ptrdiff_t>(i) * x_scale_stride_];
                    for (size_t j = 0; j < n; ++j) {
                      const int32_t dot = DotI8(row, w + static_cast<ptrdiff_t>(j) * w_col, k);
                      float value = static_cast<float>(dot) * row_scale *
                                    w_scale[static_cast<ptrdiff_t>(j) * w_scale_stride_];
                      if (bias != nullptr) {
                        value += Load(bias[static_cast<ptrdiff_t>(j) * bias_stride_]);
                      }
                      out[static_cast<ptrdiff_t>(i) * out_.row_stride +
                          static_cast<ptrdiff_t>(j) * out_.col_stride] = Store<T>(value);
                    }
                  }
                });
  }

 private:
  // The matrix's rows (by_columns: columns) as contiguous runs of K values: the matrix itself
  // where they already are, else a packed copy in *storage.
  static const int8_t* Packed(const int8_t* data, const Matrix& matrix, bool by_columns,
                              std::vector<int8_t>* storage) {
    const size_t lines = by_columns ? matrix.cols : matrix.rows;
    const size_t length = by_columns ? matrix.rows : matrix.cols;
    const ptrdiff_t along = by_columns ? matrix.row_stride : matrix.col_stride;
    const ptrdiff_t across = by_columns ? matrix.col_stride : matrix.row_stride;
    if (along == 1 || length <= 1) return data;
    storage->resize(lines * length);
    for (size_t l = 0; l < lines; ++l) {
      for (size_t e = 0; e < length; ++e) {
        (*storage)[l * length + e] =
            data[static_cast<ptrdiff_t>(l) * across + static_cast<ptrdiff_t>(e) * along];
      }
    }
    return storage->data();
  }

  Matrix out_, x_, w_;
  bool has_bias_;
  ptrdiff_t bias_stride_, x_scale_stride_, w_scale_stride_;
};

template <class Make>
infiniStatus_t WithQuantizedOutputType(infiniDtype_t dtype, Make make) {
  if (dtype == INFINI_DTYPE_F64) return INFINI_STATUS_NOT_IMPLEMENTED;
  return WithFloatType(dtype, make);
}

}  // namespace

infiniStatus_t MakeDequantizeAWQPlan(const infiniopBackendTensor* tensors, PlanPtr* plan) {
  const infiniopBackendTensor &out = tensors[0], &qweight = tensors[1], &scales = tensors[2],
                              &zeros = tensors[3];
  if (out.ndim != 2 || qweight.ndim != 2 || scales.ndim != 2 || zeros.ndim != 2 ||
      out.shape[1] != 8 * qweight.shape[1] || scales.shape[0] == 0 ||
      out.shape[0] % scales.shape[0] != 0 || qweight.dtype != INFINI_DTYPE_I32 ||
      zeros.dtype != INFINI_DTYPE_I32) {
    return INFINI_STATUS_BAD_PARAM;
  }
  return WithQuantizedOutputType(out.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    *plan = std::make_shared<DequantizeAWQPlan<T>>(tensors);
  });
}

infiniStatus_t MakeI8GemmPlan(const infiniopBackendTensor* tensors, PlanPtr* plan) {
  const infiniopBackendTensor &out = tensors[0], &x = tensors[2], &w = tensors[4];
  if (out.ndim != 2 || x.ndim != 2 || w.ndim != 2 || x.dtype != INFINI_DTYPE_I8 ||
      w.dtype != INFINI_DTYPE_I8 || x.shape[1] != w.shape[0] || out.shape[0] != x.shape[0] ||
      out.shape[1] != w.shape[1]) {
    return INFINI_STATUS_BAD_PARAM;
  }
  return WithQuantizedOutputType(out.dtype, [&](auto type) {
    using T = typename decltype(type)::T;
    *plan = std::make_shared<I8GemmPlan<T>>(tensors);
  });
}

}  // namespace infinirt::infiniop_cpu
