/* Tensor descriptors: shape, strides (in elements) and data type; no data. */
#ifndef __INFINIOP_TENSOR_DESCRIPTOR_API_H__
#define __INFINIOP_TENSOR_DESCRIPTOR_API_H__

#include "../infinicore.h"

struct InfiniopTensorDescriptor;

typedef struct InfiniopTensorDescriptor* infiniopTensorDescriptor_t;

/* ndim dimensions (0: a scalar); strides in elements, NULL for contiguous row-major; a stride may
 * be 0 (broadcast) or negative. BAD_TENSOR_DTYPE for INVALID or an unknown dtype, NULL_POINTER for
 * a null desc_ptr or a null shape with ndim > 0. */
__INFINI_C __export infiniStatus_t
infiniopCreateTensorDescriptor(infiniopTensorDescriptor_t* desc_ptr, size_t ndim,
                               const size_t* shape, const ptrdiff_t* strides, infiniDtype_t dtype);

__INFINI_C __export infiniStatus_t infiniopDestroyTensorDescriptor(infiniopTensorDescriptor_t desc);

#endif
