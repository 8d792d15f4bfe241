// Gemm through oneDNN (cpu_onednn_gemm.cc), where the build found it (INFINIOP_CPU_HAS_ONEDNN).
#ifndef INFINIOP_CPU_ONEDNN_GEMM_H_
#define INFINIOP_CPU_ONEDNN_GEMM_H_

#include <cstddef>
#include <cstdint>

#include "cpu_common.h"

#ifndef INFINIOP_CPU_HAS_ONEDNN
#define INFINIOP_CPU_HAS_ONEDNN 0
#endif

namespace infinirt::infiniop_cpu {

// One operand of a product, rows x cols, with its strides in elements (each at least 0; a row or
// column stride of 1 on one side).
struct MatmulOperand {
  size_t rows = 0, cols = 0;
  int64_t batch_stride = 0, row_stride = 0, col_stride = 0;
};

// c[batch] = alpha * a[batch] @ b[batch] + beta * c[batch]; a batch count of 1 (a_batch, b_batch)
// is the same matrix for every batch.
struct MatmulShape {
  size_t batch = 1, a_batch = 1, b_batch = 1, m = 0, n = 0, k = 0;
  MatmulOperand a, b, c;
};

// A plan computing the product with oneDNN, for F32 and BF16; false (leaving *plan alone) where
// oneDNN is absent or would only have its slow reference kernels for it.
#if INFINIOP_CPU_HAS_ONEDNN
bool MakeOneDnnGemmPlan(const MatmulShape& shape, infiniDtype_t dtype, PlanPtr* plan);
#else
inline bool MakeOneDnnGemmPlan(const MatmulShape&, infiniDtype_t, PlanPtr*) { return false; }
#endif

}  // namespace infinirt::infiniop_cpu

#endif  // INFINIOP_CPU_ONEDNN_GEMM_H_
