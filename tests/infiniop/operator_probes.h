// The tensors the operator support table probes each backend with: per operator and dtype, small
// contiguous tensors of the shapes the operator takes (operator_support_table.cc asks each
// backend's Describe; OperatorSupportTest checks Describe against Create on the device tested).
#ifndef INFINIRT_TESTS_INFINIOP_OPERATOR_PROBES_H_
#define INFINIRT_TESTS_INFINIOP_OPERATOR_PROBES_H_

#include <stddef.h>

#include <string>
#include <tuple>
#include <utility>
#include <vector>

#include "infiniop.h"
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
  infiniopBackendCreateParams params{};  // the list's defaults (MakeProbe)
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
#define PROBE_OPERATOR_NAME_(name, ...) \
  case INFINIOP_OPERATOR_##name:        \
    return #name;
    INFINIOP_OPERATORS(PROBE_OPERATOR_NAME_)
#undef PROBE_OPERATOR_NAME_
    default:
      return "?";
  }
}

// The probe of `op` on `dtype`, from the list: the operator's tensors of their probe shapes,
// outputs first, each of `dtype` or of the dtype the operator fixes for it (RoPE's positions I32,
// RandomSample's result I64), and its Create's scalars at their defaults.
inline Probe MakeProbe(infiniopOperator_t op, infiniDtype_t dtype) {
  Probe probe{op, dtype, {}};
  const infiniDtype_t PROBE_DTYPE_DATA = dtype;
  const infiniDtype_t PROBE_DTYPE_I32 = INFINI_DTYPE_I32;
  const infiniDtype_t PROBE_DTYPE_I64 = INFINI_DTYPE_I64;
  const infiniDtype_t PROBE_DTYPE_F32 = INFINI_DTYPE_F32;
  const infiniDtype_t PROBE_DTYPE_I8 = INFINI_DTYPE_I8;
#define INFINIOP_OUT(name, type, shape) Contiguous(PROBE_DTYPE_##type, {INFINIOP_EXPAND shape}),
#define INFINIOP_IN(name, type, shape) Contiguous(PROBE_DTYPE_##type, {INFINIOP_EXPAND shape}),
#define INFINIOP_SCALAR(type, name, default_value) probe.params.name = default_value;
#undef INFINIOP_SCALAR_AS
#define INFINIOP_SCALAR_AS(type, name, default_value, field) probe.params.field = default_value;
#define PROBE_OPERATOR_(name, snake, number, workspace, tensor_list, create, ...) \
  if (op == INFINIOP_OPERATOR_##name) {                                           \
    probe.tensors = {INFINIOP_EXPAND tensor_list};                                \
    INFINIOP_EXPAND create                                                        \
  }
  INFINIOP_OPERATORS(PROBE_OPERATOR_)
#undef PROBE_OPERATOR_
#undef INFINIOP_SCALAR_AS
#define INFINIOP_SCALAR_AS(type, name, default_value, field) \
  INFINIOP_SCALAR(type, name, default_value)
#undef INFINIOP_SCALAR
#undef INFINIOP_IN
#undef INFINIOP_OUT
  return probe;
}

// Calls an operator's Create, or its call, with the descriptors or buffers of `items` in order
// between the leading and the trailing arguments.
template <class Function, class Item, size_t... I, class... Leading, class... Trailing>
infiniStatus_t CallWith(Function function, const std::vector<Item>& items,
                        std::index_sequence<I...>, std::tuple<Leading...> leading,
                        std::tuple<Trailing...> trailing) {
  return std::apply(
      [&](auto... first) {
        return std::apply([&](auto... last) { return function(first..., items.at(I)..., last...); },
                          trailing);
      },
      leading);
}

// The tuple without its first element: the list's scalars expand with a leading comma, after a
// placeholder.
template <class First, class... Rest>
std::tuple<Rest...> Tail(std::tuple<First, Rest...> values) {
  return std::apply([](First, Rest... rest) { return std::make_tuple(rest...); }, values);
}

// Whether Create takes a descriptor for the operator's index-th tensor (all but
// INFINIOP_OUT_UNDESCRIBED's).
inline bool Described(infiniopOperator_t op, size_t index) {
  return infiniopOperatorUndescribedDtype(op, index) == INFINI_DTYPE_INVALID;
}

// The create scalars of an operator at their defaults (what a call repeating them passes).
inline infiniopBackendCreateParams CreateDefaults(infiniopOperator_t op) {
  return MakeProbe(op, INFINI_DTYPE_F32).params;
}

// infiniopCreate<Op>Descriptor(handle, desc, t..., its Create's scalars at their defaults): t has
// one entry per tensor of the operator, those Create takes no descriptor for left out.
inline infiniStatus_t CreateDescriptor(infiniopOperator_t op, infiniopHandle_t handle,
                                       InfiniopDescriptor** desc,
                                       const std::vector<infiniopTensorDescriptor_t>& t) {
  std::vector<infiniopTensorDescriptor_t> described;
  for (size_t i = 0; i < t.size(); ++i) {
    if (Described(op, i)) described.push_back(t[i]);
  }
#undef INFINIOP_OUT_UNDESCRIBED
#define INFINIOP_OUT(name, type, shape) +1
#define INFINIOP_IN(name, type, shape) +1
#define INFINIOP_OUT_UNDESCRIBED(name, dtype, rows_of, cols_of, shape)
#define INFINIOP_SCALAR(type, name, default_value) , static_cast<type>(default_value)
#define PROBE_CREATE_(name, snake, number, workspace, tensor_list, create, ...) \
  if (op == INFINIOP_OPERATOR_##name) {                                         \
    return CallWith(&infiniopCreate##name##Descriptor, described,               \
                    std::make_index_sequence<0 INFINIOP_EXPAND tensor_list>(),  \
                    std::make_tuple(handle, desc),                              \
                    Tail(std::make_tuple(0 INFINIOP_EXPAND create)));           \
  }
  INFINIOP_OPERATORS(PROBE_CREATE_)
#undef PROBE_CREATE_
#undef INFINIOP_OUT_UNDESCRIBED
#define INFINIOP_OUT_UNDESCRIBED(name, dtype, rows_of, cols_of, shape) \
  INFINIOP_OUT(name, dtype, shape)
  return INFINI_STATUS_BAD_PARAM;
}

// infiniopDestroy<Op>Descriptor(desc).
inline infiniStatus_t DestroyDescriptor(infiniopOperator_t op, InfiniopDescriptor* desc) {
#define PROBE_DESTROY_(name, ...) \
  if (op == INFINIOP_OPERATOR_##name) return infiniopDestroy##name##Descriptor(desc);
  INFINIOP_OPERATORS(PROBE_DESTROY_)
#undef PROBE_DESTROY_
  return INFINI_STATUS_BAD_PARAM;
}

// infiniop<Op>(desc, [workspace, workspace_size,] buffers..., its scalars at their defaults
// (those repeating Create's at Create's defaults), stream).
inline infiniStatus_t CallOperator(infiniopOperator_t op, InfiniopDescriptor* desc, void* workspace,
                                   size_t workspace_size, const std::vector<void*>& buffers,
                                   void* stream) {
#undef INFINIOP_SCALAR_AGAIN
#define INFINIOP_SCALAR_AGAIN(type, name) , static_cast<type>(CreateDefaults(op).name)
#define PROBE_CALL_(name, snake, number, workspace_rule, tensor_list, create, call, ...)           \
  if (op == INFINIOP_OPERATOR_##name) {                                                            \
    constexpr auto kTensors = std::make_index_sequence<0 INFINIOP_EXPAND tensor_list>();           \
    if constexpr (workspace_rule == INFINIOP_WORKSPACE) {                                          \
      return CallWith(                                                                             \
          &infiniop##name, buffers, kTensors, std::make_tuple(desc, workspace, workspace_size),    \
          std::tuple_cat(Tail(std::make_tuple(0 INFINIOP_EXPAND call)), std::make_tuple(stream))); \
    } else {                                                                                       \
      return CallWith(                                                                             \
          &infiniop##name, buffers, kTensors, std::make_tuple(desc),                               \
          std::tuple_cat(Tail(std::make_tuple(0 INFINIOP_EXPAND call)), std::make_tuple(stream))); \
    }                                                                                              \
  }
  INFINIOP_OPERATORS(PROBE_CALL_)
#undef PROBE_CALL_
#undef INFINIOP_SCALAR_AGAIN
#define INFINIOP_SCALAR_AGAIN(type, name) INFINIOP_SCALAR(type, name, 0)
#undef INFINIOP_SCALAR
#undef INFINIOP_IN
#undef INFINIOP_OUT
  return INFINI_STATUS_BAD_PARAM;
}

// Which of the operator's tensors are outputs (first, but for Attention's caches).
inline std::vector<bool> OutputFlags(infiniopOperator_t op) {
#define INFINIOP_OUT(name, type, shape) true,
#define INFINIOP_IN(name, type, shape) false,
#define PROBE_OUTPUTS_(name, snake, number, workspace, tensor_list, ...) \
  if (op == INFINIOP_OPERATOR_##name) return {INFINIOP_EXPAND tensor_list};
  INFINIOP_OPERATORS(PROBE_OUTPUTS_)
#undef PROBE_OUTPUTS_
#undef INFINIOP_IN
#undef INFINIOP_OUT
  return {};
}

// infiniopGet<Op>WorkspaceSize(desc, size); 0 bytes for an operator whose call takes none (and
// has no such function: the entry's workspace rule picks the line, by name).
#define PROBE_WORKSPACE_INFINIOP_WORKSPACE(name) \
  return infiniopGet##name##WorkspaceSize(desc, size);
#define PROBE_WORKSPACE_INFINIOP_NO_WORKSPACE(name) return INFINI_STATUS_SUCCESS;
inline infiniStatus_t WorkspaceSize(infiniopOperator_t op, InfiniopDescriptor* desc, size_t* size) {
  *size = 0;
#define PROBE_WORKSPACE_(name, snake, number, workspace_rule, ...) \
  if (op == INFINIOP_OPERATOR_##name) {                            \
    PROBE_WORKSPACE_##workspace_rule(name)                         \
  }
  INFINIOP_OPERATORS(PROBE_WORKSPACE_)
#undef PROBE_WORKSPACE_
  return INFINI_STATUS_BAD_PARAM;
}
#undef PROBE_WORKSPACE_INFINIOP_NO_WORKSPACE
#undef PROBE_WORKSPACE_INFINIOP_WORKSPACE

// Whether the handle's backend answers NOT_IMPLEMENTED for the operator on its F32 probe where
// the backend is not the CPU's, which implements every operator: a vendor backend's tests skip
// the operators it has no kernels for (docs/infiniop-support.md says which).
inline bool VendorLacksOperator(infiniopHandle_t handle, infiniDevice_t device_type,
                                infiniopOperator_t op) {
  if (device_type == INFINI_DEVICE_CPU) return false;
  const Probe probe = MakeProbe(op, INFINI_DTYPE_F32);
  std::vector<infiniopTensorDescriptor_t> descriptors;
  for (const ProbeTensor& t : probe.tensors) {
    infiniopTensorDescriptor_t desc = nullptr;
    infiniopCreateTensorDescriptor(&desc, t.shape.size(), t.shape.data(), t.strides.data(),
                                   t.dtype);
    descriptors.push_back(desc);
  }
  InfiniopDescriptor* desc = nullptr;
  const infiniStatus_t created = CreateDescriptor(op, handle, &desc, descriptors);
  if (created == INFINI_STATUS_SUCCESS) DestroyDescriptor(op, desc);
  for (infiniopTensorDescriptor_t d : descriptors) infiniopDestroyTensorDescriptor(d);
  return created == INFINI_STATUS_NOT_IMPLEMENTED;
}

// The probe's tensors as a backend sees them (pointing into the probe; one Create takes no
// descriptor for with its dtype and no dimensions).
inline std::vector<infiniopBackendTensor> Views(const Probe& probe) {
  std::vector<infiniopBackendTensor> views;
  for (size_t i = 0; i < probe.tensors.size(); ++i) {
    const ProbeTensor& t = probe.tensors[i];
    if (Described(probe.op, i)) {
      views.push_back({t.dtype, t.shape.size(), t.shape.data(), t.strides.data()});
    } else {
      views.push_back({t.dtype, 0, nullptr, nullptr});
    }
  }
  return views;
}

}  // namespace infiniop_test

#endif  // INFINIRT_TESTS_INFINIOP_OPERATOR_PROBES_H_
