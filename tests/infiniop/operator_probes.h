// The tensors the operator support table probes each backend with: per operator and dtype, small
// contiguous tensors of the shapes the operator takes (operator_support_table.cc asks each
// backend's Describe; OperatorSupportTest checks Describe against Create on the device tested).
#ifndef INFINIRT_TESTS_INFINIOP_OPERATOR_PROBES_H_
#define INFINIRT_TESTS_INFINIOP_OPERATOR_PROBES_H_

#include <stddef.h>

#include <string>
#include <vector>

#include "infiniop_backend.h"

namespace infiniop_test {

struct ProbeTensor {
  infiniDtype_t dtype;
  std::vector<size_t> shape;
  std::vector<ptrdiff_t> strides;  // contiguous
};

struct Probe {
  infiniopOperator_t op;
  infiniDtype_t dtype;  // the dtype probed: of the data (RandomSample: of the scores)
  std::vector<ProbeTensor> tensors;
  infiniopBackendCreateParams params{1e-5f, 0};  // RoPE: GPT-J
};

inline ProbeTensor Contiguous(infiniDtype_t dtype, std::vector<size_t> shape) {
  std::vector<ptrdiff_t> strides(shape.size());
  ptrdiff_t stride = 1;
  for (size_t i = shape.size(); i-- > 0;) {
    strides[i] = stride;
    stride *= static_cast<ptrdiff_t>(shape[i]);
  }
  return {dtype, std::move(shape), std::move(strides)};
}

// Every dtype but INVALID, in the list's order.
inline std::vector<infiniDtype_t> ProbedDtypes() {
  std::vector<infiniDtype_t> dtypes;
#define PROBE_DTYPE_(name, value, size) \
  if (INFINI_DTYPE_##name != INFINI_DTYPE_INVALID) dtypes.push_back(INFINI_DTYPE_##name);
  INFINIRT_DTYPE_LIST(PROBE_DTYPE_)
#undef PROBE_DTYPE_
  return dtypes;
}

inline std::string DtypeName(infiniDtype_t dtype) {
  switch (dtype) {
#define PROBE_DTYPE_NAME_(name, value, size) \
  case INFINI_DTYPE_##name:                  \
    return #name;
    INFINIRT_DTYPE_LIST(PROBE_DTYPE_NAME_)
#undef PROBE_DTYPE_NAME_
    default:
      return "?";
  }
}

inline std::string OperatorName(infiniopOperator_t op) {
  switch (op) {
#define PROBE_OPERATOR_NAME_(name, number, tensors) \
  case INFINIOP_OPERATOR_##name:                    \
    return #name;
    INFINIOP_OPERATORS(PROBE_OPERATOR_NAME_)
#undef PROBE_OPERATOR_NAME_
    default:
      return "?";
  }
}

// The probe of `op` on `dtype`: the operator's tensors, outputs first, all of `dtype` except what
// has a dtype of its own (RoPE's positions I32, RandomSample's result I64).
inline Probe MakeProbe(infiniopOperator_t op, infiniDtype_t dtype) {
  Probe probe{op, dtype, {}};
  switch (op) {
    case INFINIOP_OPERATOR_Add:
    case INFINIOP_OPERATOR_Mul:
    case INFINIOP_OPERATOR_SwiGLU:
      probe.tensors.assign(3, Contiguous(dtype, {4, 8}));
      break;
    case INFINIOP_OPERATOR_Rearrange:
    case INFINIOP_OPERATOR_CausalSoftmax:
      probe.tensors.assign(2, Contiguous(dtype, {4, 8}));
      break;
    case INFINIOP_OPERATOR_Gemm:
      probe.tensors = {Contiguous(dtype, {4, 8}), Contiguous(dtype, {4, 16}),
                       Contiguous(dtype, {16, 8})};
      break;
    case INFINIOP_OPERATOR_RMSNorm:
      probe.tensors = {Contiguous(dtype, {4, 8}), Contiguous(dtype, {4, 8}),
                       Contiguous(dtype, {8})};
      break;
    case INFINIOP_OPERATOR_RoPE:
      probe.tensors = {Contiguous(dtype, {4, 2, 8}), Contiguous(dtype, {4, 2, 8}),
                       Contiguous(INFINI_DTYPE_I32, {4}), Contiguous(dtype, {16, 4}),
                       Contiguous(dtype, {16, 4})};
      break;
    case INFINIOP_OPERATOR_RandomSample:
      probe.tensors = {Contiguous(INFINI_DTYPE_I64, {}), Contiguous(dtype, {32})};
      break;
    default:
      break;
  }
  return probe;
}

// The probe's tensors as a backend sees them (pointing into the probe).
inline std::vector<infiniopBackendTensor> Views(const Probe& probe) {
  std::vector<infiniopBackendTensor> views;
  for (const ProbeTensor& t : probe.tensors) {
    views.push_back({t.dtype, t.shape.size(), t.shape.data(), t.strides.data()});
  }
  return views;
}

}  // namespace infiniop_test

#endif  // INFINIRT_TESTS_INFINIOP_OPERATOR_PROBES_H_
