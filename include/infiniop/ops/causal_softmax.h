/* CausalSoftmax: softmax over the last dimension of x [(batch,) seq_len, total_seq_len], row i
 * seeing the columns j <= total_seq_len - seq_len + i (the others become 0). */
#ifndef __INFINIOP_CAUSAL_SOFTMAX_API_H__
#define __INFINIOP_CAUSAL_SOFTMAX_API_H__

#include "../operator_descriptor.h"

typedef struct InfiniopDescriptor* infiniopCausalSoftmaxDescriptor_t;

__INFINI_C __export infiniStatus_t infiniopCreateCausalSoftmaxDescriptor(
    infiniopHandle_t handle, infiniopCausalSoftmaxDescriptor_t* desc_ptr,
    infiniopTensorDescriptor_t y_desc, infiniopTensorDescriptor_t x_desc);

__INFINI_C __export infiniStatus_t
infiniopGetCausalSoftmaxWorkspaceSize(infiniopCausalSoftmaxDescriptor_t desc, size_t* size);

__INFINI_C __export infiniStatus_t infiniopCausalSoftmax(infiniopCausalSoftmaxDescriptor_t desc,
                                                         void* workspace, size_t workspace_size,
                                                         void* y, const void* x, void* stream);

__INFINI_C __export infiniStatus_t
infiniopDestroyCausalSoftmaxDescriptor(infiniopCausalSoftmaxDescriptor_t desc);

#endif
