// What operator backends share of reading a descriptor's tensors, so that every backend walks the
// same shapes and refuses the same layouts. Header-only, on the public headers alone, for the
// backends under plugins/<vendor>/infiniop/.
#ifndef INFINIOP_BACKEND_SUPPORT_INFINIOP_BACKEND_SUPPORT_H_
#define INFINIOP_BACKEND_SUPPORT_INFINIOP_BACKEND_SUPPORT_H_

#include <stddef.h>

#include <algorithm>

#include "infiniop/ops/rope.h"
#include "infiniop_backend.h"

namespace infiniop_backend {

// The most tensors an operator of the list takes.
constexpr size_t MostOperatorTensors() {
  size_t most = 0;
#define INFINIOP_OUT(name, dtype, shape) +1
#define INFINIOP_IN(name, dtype, shape) +1
#define INFINIOP_TENSOR_COUNT_(name, snake, number, workspace, tensors, ...) \
  most = (0 INFINIOP_EXPAND tensors) > most ? (0 INFINIOP_EXPAND tensors) : most;
  INFINIOP_OPERATORS(INFINIOP_TENSOR_COUNT_)
#undef INFINIOP_TENSOR_COUNT_
#undef INFINIOP_IN
#undef INFINIOP_OUT
  return most;
}

// Whether a router's call may select `topk` of `experts` per row: Topksoftmax at most 32 of them
// (InfiniCore's limit), Topkrouter at most the experts of the 4 groups of 8 it keeps (half).
inline bool RouterTopkFits(infiniopOperator_t op, size_t experts, long long topk) {
  if (topk < 0) return false;
  const size_t wanted = static_cast<size_t>(topk);
  if (op == INFINIOP_OPERATOR_Topksoftmax) return wanted <= 32 && wanted <= experts;
  return wanted <= experts / 2;
}

// Whether two tensors have one shape.
inline bool SameShape(const infiniopBackendTensor& a, const infiniopBackendTensor& b) {
  return a.ndim == b.ndim && (a.ndim == 0 || std::equal(a.shape, a.shape + a.ndim, b.shape));
}

// RMSNorm's tensors (y, x, w) as a kernel walks them: y and x as [batch, nhead, dim] (nhead 1,
// stride 0, for a 2-D tensor), the last dimension contiguous in y, x and w.
struct NormRows {
  size_t batch = 0;
  size_t nhead = 0;
  size_t dim = 0;
  ptrdiff_t y_strides[2] = {};  // batch, head
  ptrdiff_t x_strides[2] = {};
  float epsilon = 0;
};

// The rows of validated RMSNorm tensors. BAD_PARAM for tensors breaking RMSNorm's shapes,
// NOT_IMPLEMENTED for a last dimension that is not contiguous or y of another dtype than x's. The
// combination of x's and w's dtypes is the backend's to check.
inline infiniStatus_t ReadNormRows(const infiniopBackendTensor* tensors, float epsilon,
                                   NormRows* rows) {
  const infiniopBackendTensor& y = tensors[0];
  const infiniopBackendTensor& x = tensors[1];
  const infiniopBackendTensor& w = tensors[2];
  if ((x.ndim != 2 && x.ndim != 3) || !SameShape(x, y) || w.ndim != 1 ||
      w.shape[0] != x.shape[x.ndim - 1]) {
    return INFINI_STATUS_BAD_PARAM;
  }
  const size_t last = x.ndim - 1;
  rows->batch = x.shape[0];
  rows->nhead = x.ndim == 3 ? x.shape[1] : 1;
  rows->dim = x.shape[last];
  rows->y_strides[0] = y.strides[0];
  rows->x_strides[0] = x.strides[0];
  rows->y_strides[1] = x.ndim == 3 ? y.strides[1] : 0;
  rows->x_strides[1] = x.ndim == 3 ? x.strides[1] : 0;
  rows->epsilon = epsilon;
  if (rows->dim > 1 && (y.strides[last] != 1 || x.strides[last] != 1 || w.strides[0] != 1)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  if (y.dtype != x.dtype) return INFINI_STATUS_NOT_IMPLEMENTED;
  return INFINI_STATUS_SUCCESS;
}

// CausalSoftmax's tensors (y, x) as a kernel walks them: [batch, seq_len, total_seq_len] (batch 1,
// stride 0, for a 2-D tensor), with any strides.
struct SoftmaxRows {
  size_t batch = 0;
  size_t seq_len = 0;
  size_t total_seq_len = 0;  // at least seq_len
  ptrdiff_t y_strides[3] = {};
  ptrdiff_t x_strides[3] = {};
};

// The rows of validated CausalSoftmax tensors. BAD_PARAM for tensors breaking its shapes (more
// queries than keys), NOT_IMPLEMENTED for y of another dtype than x's.
inline infiniStatus_t ReadSoftmaxRows(const infiniopBackendTensor* tensors, SoftmaxRows* rows) {
  const infiniopBackendTensor& y = tensors[0];
  const infiniopBackendTensor& x = tensors[1];
  if ((x.ndim != 2 && x.ndim != 3) || !SameShape(x, y)) return INFINI_STATUS_BAD_PARAM;
  const size_t first = x.ndim - 2;  // the seq_len dimension
  rows->batch = x.ndim == 3 ? x.shape[0] : 1;
  rows->seq_len = x.shape[first];
  rows->total_seq_len = x.shape[first + 1];
  if (rows->total_seq_len < rows->seq_len) return INFINI_STATUS_BAD_PARAM;
  rows->y_strides[0] = x.ndim == 3 ? y.strides[0] : 0;
  rows->x_strides[0] = x.ndim == 3 ? x.strides[0] : 0;
  for (size_t d = 0; d < 2; ++d) {
    rows->y_strides[d + 1] = y.strides[first + d];
    rows->x_strides[d + 1] = x.strides[first + d];
  }
  if (y.dtype != x.dtype) return INFINI_STATUS_NOT_IMPLEMENTED;
  return INFINI_STATUS_SUCCESS;
}

// RoPE's tensors (y, x, pos_ids, sin_table, cos_table) as a kernel walks them: y and x as
// [batch, seq_len, nhead, dhead] (batch 1, stride 0, for a 3-D tensor) with dhead contiguous;
// pos_ids as [batch, seq_len] (batch stride 0 for a 1-D pos_ids, shared by every batch); the tables
// [table_len, half] with their columns contiguous. Strides in elements.
struct RoPELayout {
  size_t batch = 0;
  size_t seq_len = 0;
  size_t nhead = 0;
  size_t half = 0;  // dhead / 2
  size_t table_len = 0;
  ptrdiff_t y_strides[3] = {};  // batch, token, head
  ptrdiff_t x_strides[3] = {};
  ptrdiff_t pos_strides[2] = {};  // batch, token
  ptrdiff_t sin_row_stride = 0;
  ptrdiff_t cos_row_stride = 0;
  bool neox = false;  // GPT-NeoX's pairs (i, i + half), else GPT-J's (2i, 2i + 1)
};

// The layout of validated RoPE tensors. BAD_PARAM for tensors breaking RoPE's shapes,
// NOT_IMPLEMENTED for an unknown algorithm, a last dimension that is not contiguous or tables of
// another dtype than x's. The position dtype is the backend's to check.
inline infiniStatus_t ReadRoPELayout(const infiniopBackendTensor* tensors, int rope_algo,
                                     RoPELayout* layout) {
  const infiniopBackendTensor& y = tensors[0];
  const infiniopBackendTensor& x = tensors[1];
  const infiniopBackendTensor& pos = tensors[2];
  const infiniopBackendTensor& sin_table = tensors[3];
  const infiniopBackendTensor& cos_table = tensors[4];
  if (rope_algo != INFINIOP_ROPE_ALGO_GPT_J && rope_algo != INFINIOP_ROPE_ALGO_GPT_NEOX) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  layout->neox = rope_algo == INFINIOP_ROPE_ALGO_GPT_NEOX;
  if ((x.ndim != 3 && x.ndim != 4) || !SameShape(x, y) || sin_table.ndim != 2 ||
      !SameShape(sin_table, cos_table)) {
    return INFINI_STATUS_BAD_PARAM;
  }
  const size_t first = x.ndim - 3;  // the seq_len dimension
  layout->batch = x.ndim == 4 ? x.shape[0] : 1;
  layout->seq_len = x.shape[first];
  layout->nhead = x.shape[first + 1];
  const size_t dhead = x.shape[first + 2];
  layout->half = sin_table.shape[1];
  layout->table_len = sin_table.shape[0];
  if (dhead != 2 * layout->half) return INFINI_STATUS_BAD_PARAM;
  if (pos.ndim == 1 && pos.shape[0] == layout->seq_len) {
    layout->pos_strides[0] = 0;
    layout->pos_strides[1] = pos.strides[0];
  } else if (pos.ndim == 2 && x.ndim == 4 && pos.shape[0] == layout->batch &&
             pos.shape[1] == layout->seq_len) {
    layout->pos_strides[0] = pos.strides[0];
    layout->pos_strides[1] = pos.strides[1];
  } else {
    return INFINI_STATUS_BAD_PARAM;
  }
  layout->y_strides[0] = x.ndim == 4 ? y.strides[0] : 0;
  layout->x_strides[0] = x.ndim == 4 ? x.strides[0] : 0;
  for (size_t d = 0; d < 2; ++d) {
    layout->y_strides[d + 1] = y.strides[first + d];
    layout->x_strides[d + 1] = x.strides[first + d];
  }
  layout->sin_row_stride = sin_table.strides[0];
  layout->cos_row_stride = cos_table.strides[0];
  const size_t last = x.ndim - 1;
  if (dhead > 1 && (y.strides[last] != 1 || x.strides[last] != 1)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  if (layout->half > 1 && (sin_table.strides[1] != 1 || cos_table.strides[1] != 1)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  if (y.dtype != x.dtype || sin_table.dtype != x.dtype || cos_table.dtype != x.dtype) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  return INFINI_STATUS_SUCCESS;
}

// Whether a layout has nothing to rotate.
inline bool IsEmpty(const RoPELayout& layout) {
  return layout.batch == 0 || layout.seq_len == 0 || layout.nhead == 0 || layout.half == 0;
}

}  // namespace infiniop_backend

#endif  // INFINIOP_BACKEND_SUPPORT_INFINIOP_BACKEND_SUPPORT_H_
