/*
 * InfiniOP: operators on every InfiniRT device, with InfiniCore's interface. A handle belongs to
 * one device (the calling thread's current one when it is made); tensor descriptors say shape,
 * strides and dtype; each operator has a descriptor made for a handle and tensors, a workspace
 * size, a call that queues the work on an InfiniRT stream, and a destroy. Every function returns
 * an infiniStatus_t. The operators of a device type come from its operator backend
 * (libinfiniop_<plugin name>.so), found beside the runtime's plugins. Valid C99 and C++17.
 */
#ifndef __INFINIOP_API_H__
#define __INFINIOP_API_H__

#include "infiniop/backend_info.h"
#include "infiniop/handle.h"
#include "infiniop/operator_descriptor.h"
#include "infiniop/ops/add.h"
#include "infiniop/ops/causal_softmax.h"
#include "infiniop/ops/gemm.h"
#include "infiniop/ops/mul.h"
#include "infiniop/ops/random_sample.h"
#include "infiniop/ops/rearrange.h"
#include "infiniop/ops/rms_norm.h"
#include "infiniop/ops/rope.h"
#include "infiniop/ops/swiglu.h"
#include "infiniop/tensor_descriptor.h"

#endif
