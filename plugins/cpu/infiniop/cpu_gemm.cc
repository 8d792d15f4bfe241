// Gemm on the CPU: c = alpha * a @ b + beta * c through oneDNN where it is built in and serves
// (F32 and BF16: cpu_onednn_gemm.cc), otherwise through OpenBLAS (cblas_sgemm, cblas_dgemm),
// batch by batch. F32 and F64 go to BLAS as they lie in memory: a matrix whose columns are packed
// is row-major, one whose rows are packed is column-major (BLAS reads it transposed), and a
// column-major c is computed as c^T = b^T a^T. F16 and BF16 are converted to packed float
// matrices, multiplied with cblas_sgemm and converted back (rounded once).
#include <cblas.h>

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <memory>
#include <vector>

#include "cpu_common.h"
#include "cpu_convert.h"
#include "cpu_isa.h"
#include "cpu_onednn_gemm.h"
#include "cpu_parallel.h"

namespace infinirt::infiniop_cpu {

namespace {

// One operand: [batch,] rows x cols, with its strides in elements (batch stride 0: the same
// matrix for every batch).
struct Matrix {
  size_t rows = 0, cols = 0;
  ptrdiff_t batch_stride = 0, row_stride = 0, col_stride = 0;
};

Matrix MatrixOf(const infiniopBackendTensor& t) {
  const size_t first = t.ndim - 2;
  Matrix m;
  m.rows = t.shape[first];
  m.cols = t.shape[first + 1];
  m.row_stride = t.strides[first];
  m.col_stride = t.strides[first + 1];
  m.batch_stride = t.ndim == 3 && t.shape[0] > 1 ? t.strides[0] : 0;
  return m;
}

// How BLAS reads a matrix in row-major terms.
struct BlasView {
  CBLAS_TRANSPOSE trans = CblasNoTrans;
  blasint ld = 1;
  bool ok = false;
};

// A dimension of one element may carry any stride: it never moves.
BlasView ViewOf(const Matrix& m) {
  const auto rows = static_cast<ptrdiff_t>(std::max<size_t>(m.rows, 1));
  const auto cols = static_cast<ptrdiff_t>(std::max<size_t>(m.cols, 1));
  if (m.col_stride == 1 || m.cols <= 1) {
    const ptrdiff_t ld = m.rows <= 1 ? cols : m.row_stride;
    if (ld >= cols) return {CblasNoTrans, static_cast<blasint>(ld), true};
  }
  if (m.row_stride == 1 || m.rows <= 1) {
    const ptrdiff_t ld = m.cols <= 1 ? rows : m.col_stride;
    if (ld >= rows) return {CblasTrans, static_cast<blasint>(ld), true};
  }
  return {};
}

CBLAS_TRANSPOSE Flip(CBLAS_TRANSPOSE trans) {
  return trans == CblasNoTrans ? CblasTrans : CblasNoTrans;
}

void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k, float alpha,
          const float* a, blasint lda, const float* b, blasint ldb, float beta, float* c,
          blasint ldc) {
  cblas_sgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

void Gemm(CBLAS_TRANSPOSE ta, CBLAS_TRANSPOSE tb, blasint m, blasint n, blasint k, float alpha,
          const double* a, blasint lda, const double* b, blasint ldb, float beta, double* c,
          blasint ldc) {
  cblas_dgemm(CblasRowMajor, ta, tb, m, n, k, alpha, a, lda, b, ldb, beta, c, ldc);
}

struct GemmShape {
  size_t batch = 1, m = 0, n = 0, k = 0;
  Matrix a, b, c;
  BlasView a_view, b_view, c_view;
};

// F32 and F64: BLAS reads and writes the tensors where they are.
template <class T>
class BlasGemmPlan final : public Plan {
 public:
  explicit BlasGemmPlan(const GemmShape& shape)
      : Plan(3, shape.m == 0 || shape.n == 0, true), s_(shape) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& params) const override {
    const auto m = static_cast<blasint>(s_.m), n = static_cast<blasint>(s_.n);
    const auto k = static_cast<blasint>(s_.k);
    for (size_t batch = 0; batch < s_.batch; ++batch) {
      const auto step = static_cast<ptrdiff_t>(batch);
      T* c = static_cast<T*>(buffers[0]) + step * s_.c.batch_stride;
      const T* a = static_cast<const T*>(buffers[1]) + step * s_.a.batch_stride;
      const T* b = static_cast<const T*>(buffers[2]) + step * s_.b.batch_stride;
      if (s_.c_view.trans == CblasNoTrans) {
        Gemm(s_.a_view.trans, s_.b_view.trans, m, n, k, params.alpha, a, s_.a_view.ld, b,
             s_.b_view.ld, params.beta, c, s_.c_view.ld);
      } else {  // c is column-major: c^T = b^T a^T, row-major
        Gemm(Flip(s_.b_view.trans), Flip(s_.a_view.trans), n, m, k, params.alpha, b, s_.b_view.ld,
             a, s_.a_view.ld, params.beta, c, s_.c_view.ld);
      }
    }
  }

 private:
  GemmShape s_;
};

// The operands of a vector-matrix product a b: a [k] (a_step apart), b [k, n] with rows ld apart
// (or its transpose, b^T [n, k], rows ld apart).
struct VectorMatrix {
  const float* a;
  ptrdiff_t a_step;
  const float* b;
  ptrdiff_t ld;
  size_t k;

  float A(size_t i) const { return a[static_cast<ptrdiff_t>(i) * a_step]; }
  const float* Row(size_t i) const { return b + static_cast<ptrdiff_t>(i) * ld; }
};

// b [k, n] by rows: sums[j - j0] = sum over i of a[i] * b[i][j], four rows a pass (a quarter of
// the loads and stores of sums; four streams for the prefetchers).
[[gnu::always_inline]] inline void SumRowsLoop(const VectorMatrix& p, size_t j0, size_t j1,
                                               float* sums) {
  const size_t width = j1 - j0;
  for (size_t j = 0; j < width; ++j) sums[j] = 0;
  size_t i = 0;
  for (; i + 4 <= p.k; i += 4) {
    const float a0 = p.A(i), a1 = p.A(i + 1), a2 = p.A(i + 2), a3 = p.A(i + 3);
    const float *r0 = p.Row(i) + j0, *r1 = r0 + p.ld, *r2 = r1 + p.ld, *r3 = r2 + p.ld;
    INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
    for (size_t j = 0; j < width; ++j) {
      sums[j] += (a0 * r0[j] + a1 * r1[j]) + (a2 * r2[j] + a3 * r3[j]);
    }
  }
  for (; i < p.k; ++i) {
    const float ai = p.A(i);
    const float* row = p.Row(i) + j0;
    INFINIOP_CPU_NO_LOOP_CARRIED_DEPENDENCE
    for (size_t j = 0; j < width; ++j) sums[j] += ai * row[j];
  }
}

// b^T [n, k] by rows (a weight's transposed view): sums[j - j0] = b^T[j] . a, four rows at a time
// where a is packed (each load of a serves four rows; four streams for the prefetchers).
[[gnu::always_inline]] inline void DotColumnsLoop(const VectorMatrix& p, size_t j0, size_t j1,
                                                  float* sums) {
  // 16 floats as one value (by reference, so that no function passes a 64-byte vector by value,
  // whose ABI differs between the versions compiled for AVX-512 and the others).
  typedef float Vec16 __attribute__((vector_size(64)));
  Vec16 x, y;
  const auto load = [](Vec16& v, const float* from) { std::memcpy(&v, from, sizeof v); };
  const auto total = [](const Vec16& v) {
    float sum = 0;
    for (int l = 0; l < 16; ++l) sum += v[l];
    return sum;
  };
  const bool packed = p.k <= 1 || p.a_step == 1;
  const size_t whole = packed ? p.k / 16 * 16 : 0;  // the part read 16 at a time
  size_t j = j0;
  for (; packed && j + 4 <= j1; j += 4) {
    const float *w0 = p.Row(j), *w1 = w0 + p.ld, *w2 = w1 + p.ld, *w3 = w2 + p.ld;
    Vec16 s0 = {}, s1 = {}, s2 = {}, s3 = {};
    for (size_t i = 0; i < whole; i += 16) {
      load(x, p.a + i);
      load(y, w0 + i);
      s0 += x * y;
      load(y, w1 + i);
      s1 += x * y;
      load(y, w2 + i);
      s2 += x * y;
      load(y, w3 + i);
      s3 += x * y;
    }
    float d0 = total(s0), d1 = total(s1), d2 = total(s2), d3 = total(s3);
    for (size_t i = whole; i < p.k; ++i) {
      d0 += p.a[i] * w0[i];
      d1 += p.a[i] * w1[i];
      d2 += p.a[i] * w2[i];
      d3 += p.a[i] * w3[i];
    }
    sums[j - j0] = d0;
    sums[j + 1 - j0] = d1;
    sums[j + 2 - j0] = d2;
    sums[j + 3 - j0] = d3;
  }
  for (; j < j1; ++j) {
    const float* w = p.Row(j);
    Vec16 s0 = {};
    for (size_t i = 0; i < whole; i += 16) {
      load(x, p.a + i);
      load(y, w + i);
      s0 += x * y;
    }
    float dot = total(s0);
    for (size_t i = whole; i < p.k; ++i) dot += p.A(i) * w[i];
    sums[j - j0] = dot;
  }
}

// Each compiled for its instructions (cpu_isa.h).
void SumRowsBaseline(VectorMatrix p, size_t j0, size_t j1, float* sums) {
  SumRowsLoop(p, j0, j1, sums);
}
void DotColumnsBaseline(VectorMatrix p, size_t j0, size_t j1, float* sums) {
  DotColumnsLoop(p, j0, j1, sums);
}
#if INFINIOP_CPU_HAS_X86_KERNELS
INFINIOP_CPU_TARGET_AVX2 void SumRowsAvx2(VectorMatrix p, size_t j0, size_t j1, float* sums) {
  SumRowsLoop(p, j0, j1, sums);
}
INFINIOP_CPU_TARGET_AVX512 void SumRowsAvx512(VectorMatrix p, size_t j0, size_t j1, float* sums) {
  SumRowsLoop(p, j0, j1, sums);
}
INFINIOP_CPU_TARGET_AVX2 void DotColumnsAvx2(VectorMatrix p, size_t j0, size_t j1, float* sums) {
  DotColumnsLoop(p, j0, j1, sums);
}
INFINIOP_CPU_TARGET_AVX512 void DotColumnsAvx512(VectorMatrix p, size_t j0, size_t j1,
                                                 float* sums) {
  DotColumnsLoop(p, j0, j1, sums);
}
#endif

// One row (m = 1, one batch) in F32: a matrix-vector product, c = b^T a, computed here across
// the backend's threads. A general product of one row goes through the matrix kernels' packing,
// and OpenBLAS's gemv, called from the stream's worker, runs its own threads against the
// backend's: 2 to 7 ms on 2 cores for a decode step's [1, 2048] @ [2048, 2048] that takes 0.25 ms
// on one thread.
class GemvPlan final : public Plan {
 public:
  explicit GemvPlan(const GemmShape& shape) : Plan(3, shape.n == 0, true), s_(shape) {}

  // Whether the product is one row (F32 is the caller's to check).
  static bool Fits(const GemmShape& shape) {
    return shape.m == 1 && shape.batch == 1 && shape.k > 0 && shape.b_view.ok;
  }

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& params) const override {
    float* c = static_cast<float*>(buffers[0]);
    const float* a = static_cast<const float*>(buffers[1]);
    const float* b = static_cast<const float*>(buffers[2]);
    const size_t grain = std::max<size_t>(kLeastColumns, kParallelGrain / s_.k);
    ParallelFor(s_.n, grain, [&](size_t first, size_t end) {
      for (size_t j0 = first; j0 < end; j0 += kColumns) {
        const size_t j1 = std::min(end, j0 + kColumns);
        float sums[kColumns];
        const VectorMatrix product{a, s_.a.col_stride, b, s_.b_view.ld, s_.k};
        if (s_.b_view.trans == CblasNoTrans) {
          RunForIsa(INFINIOP_CPU_X86_ONLY(&SumRowsAvx512), INFINIOP_CPU_X86_ONLY(&SumRowsAvx2),
                    &SumRowsBaseline, product, j0, j1, sums);
        } else {
          RunForIsa(INFINIOP_CPU_X86_ONLY(&DotColumnsAvx512),
                    INFINIOP_CPU_X86_ONLY(&DotColumnsAvx2), &DotColumnsBaseline, product, j0, j1,
                    sums);
        }
        for (size_t j = j0; j < j1; ++j) {
          float& out = c[static_cast<ptrdiff_t>(j) * s_.c.col_stride];
          out = params.alpha * sums[j - j0] + (params.beta == 0 ? 0.0f : params.beta * out);
        }
      }
    });
  }

 private:
  // Columns a thread computes at a time (their sums stay in the first-level cache), and the
  // fewest a thread is given. Wide, because b by rows is read kColumns floats of a row at a time:
  // at 256 (1 KiB of each 16 KiB row of a 4096-wide b), every read was on another page, and the
  // product ran at a third of the memory's speed.
  static constexpr size_t kColumns = 2048;
  static constexpr size_t kLeastColumns = 256;

  GemmShape s_;
};

// Float memory for the copies, kept by each thread that computes them, from one call to the next
// (until the thread ends): allocating and zeroing fresh copies cost more than converting into them.
float* Scratch(size_t floats) {
  thread_local std::unique_ptr<float[]> buffer;
  thread_local size_t capacity = 0;
  if (capacity < floats) {
    buffer.reset(new float[floats]);  // not zeroed: every element read is written first
    capacity = floats;
  }
  return buffer.get();
}

// F16 and BF16: packed float copies, cblas_sgemm, the result rounded back once.
template <class T>
class ConvertingGemmPlan final : public Plan {
 public:
  explicit ConvertingGemmPlan(const GemmShape& shape)
      : Plan(3, shape.m == 0 || shape.n == 0, true), s_(shape) {}

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& params) const override {
    float* const a = Scratch(s_.m * s_.k + s_.k * s_.n + s_.m * s_.n);
    float* const b = a + s_.m * s_.k;
    float* const c = b + s_.k * s_.n;
    for (size_t batch = 0; batch < s_.batch; ++batch) {
      const auto step = static_cast<ptrdiff_t>(batch);
      T* c_in = static_cast<T*>(buffers[0]) + step * s_.c.batch_stride;
      const T* a_in = static_cast<const T*>(buffers[1]) + step * s_.a.batch_stride;
      const T* b_in = static_cast<const T*>(buffers[2]) + step * s_.b.batch_stride;
      Pack(a_in, s_.a, a);
      Pack(b_in, s_.b, b);
      if (params.beta != 0) Pack(c_in, s_.c, c);  // beta 0: c is not read, as in BLAS
      cblas_sgemm(CblasRowMajor, CblasNoTrans, CblasNoTrans, static_cast<blasint>(s_.m),
                  static_cast<blasint>(s_.n), static_cast<blasint>(s_.k), params.alpha, a,
                  static_cast<blasint>(std::max<size_t>(s_.k, 1)), b,
                  static_cast<blasint>(std::max<size_t>(s_.n, 1)), params.beta, c,
                  static_cast<blasint>(std::max<size_t>(s_.n, 1)));
      Unpack(c, s_.c, c_in);
    }
  }

 private:
  // Rows whose elements lie next to each other convert in vectors (cpu_convert.h); the threads
  // take ranges of rows.
  static void Pack(const T* from, const Matrix& m, float* to) {
    ParallelFor(m.rows, RowGrain(m), [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        const T* row = from + static_cast<ptrdiff_t>(i) * m.row_stride;
        if (m.col_stride == 1) {
          ToFloat(row, to + i * m.cols, m.cols);
          continue;
        }
        for (size_t j = 0; j < m.cols; ++j) {
          to[i * m.cols + j] = Arithmetic<T>::Load(row[static_cast<ptrdiff_t>(j) * m.col_stride]);
        }
      }
    });
  }
  static void Unpack(const float* from, const Matrix& m, T* to) {
    ParallelFor(m.rows, RowGrain(m), [&](size_t begin, size_t end) {
      for (size_t i = begin; i < end; ++i) {
        T* row = to + static_cast<ptrdiff_t>(i) * m.row_stride;
        if (m.col_stride == 1) {
          FromFloat(from + i * m.cols, row, m.cols);
          continue;
        }
        for (size_t j = 0; j < m.cols; ++j) {
          row[static_cast<ptrdiff_t>(j) * m.col_stride] =
              Arithmetic<T>::Store(from[i * m.cols + j]);
        }
      }
    });
  }
  static size_t RowGrain(const Matrix& m) {
    return std::max<size_t>(1, kParallelGrain / std::max<size_t>(m.cols, 1));
  }

  GemmShape s_;
};

// The operand as oneDNN takes it: its strides as BLAS would read it (a dimension of one element
// given the stride its view implies).
MatmulOperand OperandOf(const Matrix& m, const BlasView& view) {
  MatmulOperand operand;
  operand.rows = m.rows;
  operand.cols = m.cols;
  operand.batch_stride = m.batch_stride;
  operand.row_stride = view.trans == CblasNoTrans ? view.ld : 1;
  operand.col_stride = view.trans == CblasNoTrans ? 1 : view.ld;
  return operand;
}

// How many matrices a batched operand has: 1 when every batch reads the same.
size_t BatchOf(const infiniopBackendTensor& t, const Matrix& m) {
  return t.ndim == 3 && m.batch_stride != 0 ? t.shape[0] : 1;
}

// F32 and BF16 through oneDNN where it is built in and has fast kernels for the layouts (and the
// batch strides are not negative, which it does not take).
bool MakeMatmulPlan(const infiniopBackendTensor* tensors, const GemmShape& shape, PlanPtr* plan) {
  if (shape.a.batch_stride < 0 || shape.b.batch_stride < 0 || shape.c.batch_stride < 0) {
    return false;
  }
  MatmulShape matmul;
  matmul.batch = shape.batch;
  matmul.a_batch = BatchOf(tensors[1], shape.a);
  matmul.b_batch = BatchOf(tensors[2], shape.b);
  matmul.m = shape.m;
  matmul.n = shape.n;
  matmul.k = shape.k;
  matmul.a = OperandOf(shape.a, shape.a_view);
  matmul.b = OperandOf(shape.b, shape.b_view);
  matmul.c = OperandOf(shape.c, shape.c_view);
  return MakeOneDnnGemmPlan(matmul, tensors[0].dtype, plan);
}

}  // namespace

const char* GemmLibraries(infiniDtype_t dtype) {
  const bool onednn = INFINIOP_CPU_HAS_ONEDNN;
  switch (dtype) {
    case INFINI_DTYPE_F32:
      return onednn ? "oneDNN matmul, else OpenBLAS cblas_sgemm; one row: host loops"
                    : "OpenBLAS cblas_sgemm; one row: host loops";
    case INFINI_DTYPE_BF16:
      return onednn ? "oneDNN matmul, else OpenBLAS cblas_sgemm on float copies"
                    : "OpenBLAS cblas_sgemm on float copies";
    case INFINI_DTYPE_F64:
      return "OpenBLAS cblas_dgemm";
    default:
      return "OpenBLAS cblas_sgemm on float copies";
  }
}

// Tensors (c, a, b): [(batch,) m, n], [(batch,) m, k], [(batch,) k, n]; a and b may have a batch
// of 1 (or be 2-D) for every batch of c.
infiniStatus_t MakeGemmPlan(const infiniopBackendTensor* tensors, PlanPtr* plan) {
  const infiniopBackendTensor &c = tensors[0], &a = tensors[1], &b = tensors[2];
  for (const infiniopBackendTensor* t : {&c, &a, &b}) {
    if (t->ndim != 2 && t->ndim != 3) return INFINI_STATUS_BAD_PARAM;
    if (t->dtype != c.dtype) return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  GemmShape shape;
  shape.c = MatrixOf(c);
  shape.a = MatrixOf(a);
  shape.b = MatrixOf(b);
  shape.batch = c.ndim == 3 ? c.shape[0] : 1;
  shape.m = shape.c.rows;
  shape.n = shape.c.cols;
  shape.k = shape.a.cols;
  if (shape.a.rows != shape.m || shape.b.rows != shape.k || shape.b.cols != shape.n) {
    return INFINI_STATUS_BAD_PARAM;
  }
  shape.a_view = ViewOf(shape.a);
  shape.b_view = ViewOf(shape.b);
  shape.c_view = ViewOf(shape.c);
  const bool blas_layouts = shape.a_view.ok && shape.b_view.ok && shape.c_view.ok;
  const bool empty = shape.m == 0 || shape.n == 0 || shape.k == 0 || shape.batch == 0;
  if (!empty && c.dtype == INFINI_DTYPE_F32 && GemvPlan::Fits(shape)) {
    *plan = std::make_shared<GemvPlan>(shape);
    return INFINI_STATUS_SUCCESS;
  }
  if (blas_layouts && !empty && MakeMatmulPlan(tensors, shape, plan)) return INFINI_STATUS_SUCCESS;
  switch (c.dtype) {
    case INFINI_DTYPE_F32:
      if (!blas_layouts) return INFINI_STATUS_NOT_IMPLEMENTED;
      *plan = std::make_shared<BlasGemmPlan<float>>(shape);
      return INFINI_STATUS_SUCCESS;
    case INFINI_DTYPE_F64:
      if (!blas_layouts) return INFINI_STATUS_NOT_IMPLEMENTED;
      *plan = std::make_shared<BlasGemmPlan<double>>(shape);
      return INFINI_STATUS_SUCCESS;
    case INFINI_DTYPE_F16:
      *plan = std::make_shared<ConvertingGemmPlan<Half>>(shape);
      return INFINI_STATUS_SUCCESS;
    case INFINI_DTYPE_BF16:
      *plan = std::make_shared<ConvertingGemmPlan<BFloat16>>(shape);
      return INFINI_STATUS_SUCCESS;
    default:
      return INFINI_STATUS_NOT_IMPLEMENTED;
  }
}

}  // namespace infinirt::infiniop_cpu
