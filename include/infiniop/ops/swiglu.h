/* SwiGLU: c = a * b * sigmoid(b), elementwise (a: the "up" projection, b: the gate). */
#ifndef __INFINIOP_SWIGLU_API_H__
#define __INFINIOP_SWIGLU_API_H__

#include "../operator_descriptor.h"

typedef struct InfiniopDescriptor* infiniopSwiGLUDescriptor_t;

__INFINI_C __export infiniStatus_t
infiniopCreateSwiGLUDescriptor(infiniopHandle_t handle, infiniopSwiGLUDescriptor_t* desc_ptr,
                               infiniopTensorDescriptor_t c_desc, infiniopTensorDescriptor_t a_desc,
                               infiniopTensorDescriptor_t b_desc);

__INFINI_C __export infiniStatus_t infiniopGetSwiGLUWorkspaceSize(infiniopSwiGLUDescriptor_t desc,
                                                                  size_t* size);

__INFINI_C __export infiniStatus_t infiniopSwiGLU(infiniopSwiGLUDescriptor_t desc, void* workspace,
                                                  size_t workspace_size, void* c, const void* a,
                                                  const void* b, void* stream);

__INFINI_C __export infiniStatus_t infiniopDestroySwiGLUDescriptor(infiniopSwiGLUDescriptor_t desc);

#endif
