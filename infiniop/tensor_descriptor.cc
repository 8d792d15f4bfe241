// infiniopCreateTensorDescriptor and infiniopDestroyTensorDescriptor
// (include/infiniop/tensor_descriptor.h).
#include <new>

#include "infiniop_internal.h"
#include "status_log.h"

namespace infiniop {

LiveSet& LiveTensors() {
  static auto* live = new LiveSet();
  return *live;
}

namespace {

bool IsKnownDtype(infiniDtype_t dtype) {
  switch (dtype) {
#define INFINIOP_DTYPE_CASE_(name, value, size) case INFINI_DTYPE_##name:
    INFINIRT_DTYPE_LIST(INFINIOP_DTYPE_CASE_)
#undef INFINIOP_DTYPE_CASE_
    return dtype != INFINI_DTYPE_INVALID;
    default:
      return false;
  }
}

}  // namespace
}  // namespace infiniop

size_t InfiniopTensorDescriptor::Elements() const {
  size_t elements = 1;
  for (size_t extent : shape) elements *= extent;
  return elements;
}

bool InfiniopTensorDescriptor::HasBroadcastDimension() const {
  for (size_t i = 0; i < shape.size(); ++i) {
    if (shape[i] > 1 && strides[i] == 0) return true;
  }
  return false;
}

extern "C" {

infiniStatus_t infiniopCreateTensorDescriptor(infiniopTensorDescriptor_t* desc_ptr, size_t ndim,
                                              const size_t* shape, const ptrdiff_t* strides,
                                              infiniDtype_t dtype) {
  using namespace infiniop;  // NOLINT
  if (desc_ptr == nullptr || (ndim > 0 && shape == nullptr)) {
    return Refuse(INFINI_STATUS_NULL_POINTER, "infiniopCreateTensorDescriptor: NULL argument");
  }
  if (!IsKnownDtype(dtype)) {
    return Refuse(INFINI_STATUS_BAD_TENSOR_DTYPE,
                  "infiniopCreateTensorDescriptor: dtype " + std::to_string(dtype));
  }
  // Element counts must fit a size_t (and a ptrdiff_t, for strides to reach every element).
  size_t elements = 1;
  for (size_t i = 0; i < ndim; ++i) {
    if (shape[i] != 0 && elements > static_cast<size_t>(PTRDIFF_MAX) / shape[i]) {
      return Refuse(INFINI_STATUS_BAD_TENSOR_SHAPE, "infiniopCreateTensorDescriptor: too large");
    }
    elements *= shape[i];
  }
  auto* desc = new (std::nothrow) InfiniopTensorDescriptor();
  if (desc == nullptr) return INFINI_STATUS_INTERNAL_ERROR;
  desc->dtype = dtype;
  desc->shape.assign(shape, shape + ndim);
  desc->strides.resize(ndim);
  ptrdiff_t contiguous = 1;
  for (size_t i = ndim; i-- > 0;) {
    desc->strides[i] = strides != nullptr ? strides[i] : contiguous;
    contiguous *= static_cast<ptrdiff_t>(shape[i] == 0 ? 1 : shape[i]);
  }
  LiveTensors().Add(desc);
  *desc_ptr = desc;
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniopDestroyTensorDescriptor(infiniopTensorDescriptor_t desc) {
  using namespace infiniop;  // NOLINT
  if (desc == nullptr)
    return Refuse(INFINI_STATUS_NULL_POINTER, "infiniopDestroyTensorDescriptor: NULL");
  if (!LiveTensors().Remove(desc)) {
    return Refuse(INFINI_STATUS_BAD_PARAM, "infiniopDestroyTensorDescriptor: not live");
  }
  delete desc;
  return INFINI_STATUS_SUCCESS;
}

}  // extern "C"
