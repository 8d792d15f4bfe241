// Every operator's public entry points (include/infiniop/ops/): each packs its tensors, buffers
// and parameters and goes through the same four steps (Create, WorkspaceSize, Run, Destroy),
// which check the handle and descriptors, validate (validation.h) and call the backend.
#include <initializer_list>
#include <new>
#include <string>
#include <vector>

#include "backends.h"
#include "infiniop_internal.h"
#include "status_log.h"
#include "validation.h"

namespace infiniop {

LiveSet& LiveDescriptors() {
  static auto* live = new LiveSet();
  return *live;
}

namespace {

const char* OperatorName(infiniopOperator_t op) {
  switch (op) {
#define INFINIOP_OPERATOR_NAME_(name, number, tensors) \
  case INFINIOP_OPERATOR_##name:                       \
    return #name;
    INFINIOP_OPERATORS(INFINIOP_OPERATOR_NAME_)
#undef INFINIOP_OPERATOR_NAME_
    default:
      return "?";
  }
}

infiniStatus_t Create(infiniopOperator_t op, infiniopHandle_t handle, InfiniopDescriptor** desc_ptr,
                      std::initializer_list<infiniopTensorDescriptor_t> tensors,
                      const infiniopBackendCreateParams& params = {}) {
  const std::string call = std::string("infiniopCreate") + OperatorName(op) + "Descriptor: ";
  if (handle == nullptr || desc_ptr == nullptr) {
    return Refuse(INFINI_STATUS_NULL_POINTER, call + "NULL handle or desc_ptr");
  }
  if (!LiveHandles().Contains(handle))
    return Refuse(INFINI_STATUS_BAD_PARAM, call + "not a live handle");
  std::vector<const InfiniopTensorDescriptor*> described;
  std::vector<infiniopBackendTensor> views;
  for (infiniopTensorDescriptor_t tensor : tensors) {
    if (tensor == nullptr)
      return Refuse(INFINI_STATUS_NULL_POINTER, call + "NULL tensor descriptor");
    if (!LiveTensors().Contains(tensor)) {
      return Refuse(INFINI_STATUS_BAD_PARAM, call + "not a live tensor descriptor");
    }
    described.push_back(tensor);
    views.push_back(tensor->View());
  }
  std::string why;
  const infiniStatus_t valid = Validate(op, described.data(), described.size(), params, &why);
  if (valid != INFINI_STATUS_SUCCESS) return Refuse(valid, call + why);
  auto* desc = new (std::nothrow) OperatorDescriptor();
  if (desc == nullptr) return INFINI_STATUS_INTERNAL_ERROR;
  desc->device_type = handle->device;
  desc->device_id = handle->device_id;
  desc->ordinal = handle->ordinal;
  desc->op = op;
  desc->backend = handle->backend;
  for (const InfiniopTensorDescriptor* tensor : described) {
    desc->buffer_elements.push_back(tensor->Elements());
  }
  const infiniStatus_t created =
      handle->backend->table->Create(op, handle->device_id, views.data(), views.size(), &params,
                                     &desc->kernel, &desc->workspace_size);
  if (created != INFINI_STATUS_SUCCESS) {
    delete desc;
    return Refuse(created, call + "the " + handle->backend->table->name + " backend refused");
  }
  LiveDescriptors().Add(static_cast<InfiniopDescriptor*>(desc));
  *desc_ptr = desc;
  return INFINI_STATUS_SUCCESS;
}

// The live descriptor of operator `op` that desc is, or null.
OperatorDescriptor* Live(infiniopOperator_t op, InfiniopDescriptor* desc) {
  if (desc == nullptr || !LiveDescriptors().Contains(desc)) return nullptr;
  auto* described = static_cast<OperatorDescriptor*>(desc);
  return described->op == op ? described : nullptr;
}

infiniStatus_t WorkspaceSize(infiniopOperator_t op, InfiniopDescriptor* desc, size_t* size) {
  if (desc == nullptr || size == nullptr)
    return Refuse(INFINI_STATUS_NULL_POINTER, "workspace size: NULL");
  OperatorDescriptor* described = Live(op, desc);
  if (described == nullptr)
    return Refuse(INFINI_STATUS_BAD_PARAM,
                  "workspace size: not a live descriptor of this operator");
  *size = described->workspace_size;
  return INFINI_STATUS_SUCCESS;
}

// The most buffers a call passes (RoPE's five).
constexpr size_t kMostBuffers = 5;

// On every call's path: no allocation (the message of a refusal is composed only then).
infiniStatus_t Run(infiniopOperator_t op, InfiniopDescriptor* desc, void* workspace,
                   size_t workspace_size, std::initializer_list<const void*> buffers, void* stream,
                   const infiniopBackendRunParams& params = {}) {
  auto refuse = [op](infiniStatus_t status, const std::string& why) {
    return Refuse(status, std::string("infiniop") + OperatorName(op) + ": " + why);
  };
  if (desc == nullptr) return refuse(INFINI_STATUS_NULL_POINTER, "NULL descriptor");
  OperatorDescriptor* described = Live(op, desc);
  if (described == nullptr) {
    return refuse(INFINI_STATUS_BAD_PARAM, "not a live descriptor of this operator");
  }
  if (workspace_size < described->workspace_size) {
    return refuse(INFINI_STATUS_INSUFFICIENT_WORKSPACE,
                  std::to_string(described->workspace_size) + " bytes of workspace needed");
  }
  if (described->workspace_size > 0 && workspace == nullptr) {
    return refuse(INFINI_STATUS_NULL_POINTER, "NULL workspace");
  }
  int stream_device = -1;
  if (infinirtStreamGetDevice(static_cast<infinirtStream_t>(stream), &stream_device) !=
      infinirtSuccess) {
    infinirtGetLastError();
    return refuse(INFINI_STATUS_BAD_PARAM, "not a live stream");
  }
  if (stream_device != described->ordinal) {
    return refuse(INFINI_STATUS_BAD_PARAM, "a stream of device " + std::to_string(stream_device) +
                                               " for a descriptor of device " +
                                               std::to_string(described->ordinal));
  }
  void* pointers[kMostBuffers] = {};
  size_t count = 0;
  for (const void* buffer : buffers) {
    if (buffer == nullptr && described->buffer_elements[count] > 0) {
      return refuse(INFINI_STATUS_NULL_POINTER, "NULL tensor data");
    }
    pointers[count++] = const_cast<void*>(buffer);
  }
  const infiniStatus_t status =
      described->backend->table->Run(described->kernel, workspace, workspace_size, pointers, count,
                                     &params, static_cast<infinirtStream_t>(stream));
  return status == INFINI_STATUS_SUCCESS ? status : refuse(status, "the backend failed");
}

infiniStatus_t Destroy(infiniopOperator_t op, InfiniopDescriptor* desc) {
  if (desc == nullptr) return Refuse(INFINI_STATUS_NULL_POINTER, "destroy: NULL descriptor");
  OperatorDescriptor* described = Live(op, desc);
  if (described == nullptr || !LiveDescriptors().Remove(desc)) {
    return Refuse(INFINI_STATUS_BAD_PARAM, "destroy: not a live descriptor of this operator");
  }
  const infiniStatus_t status = described->backend->table->Destroy(described->kernel);
  delete described;
  return status;
}

}  // namespace
}  // namespace infiniop

using infiniop::Create;
using infiniop::Destroy;
using infiniop::Run;
using infiniop::WorkspaceSize;

extern "C" {

infiniStatus_t infiniopGetDescriptorDeviceType(const InfiniopDescriptor* desc_ptr,
                                               infiniDevice_t* device_type) {
  if (desc_ptr == nullptr || device_type == nullptr) return INFINI_STATUS_NULL_POINTER;
  if (!infiniop::LiveDescriptors().Contains(desc_ptr)) return INFINI_STATUS_BAD_PARAM;
  *device_type = desc_ptr->device_type;
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniopGetDescriptorDeviceId(const InfiniopDescriptor* desc_ptr, int* device_id) {
  if (desc_ptr == nullptr || device_id == nullptr) return INFINI_STATUS_NULL_POINTER;
  if (!infiniop::LiveDescriptors().Contains(desc_ptr)) return INFINI_STATUS_BAD_PARAM;
  *device_id = desc_ptr->device_id;
  return INFINI_STATUS_SUCCESS;
}

// Destroy and workspace size have one shape for every operator (Rearrange has no workspace).
#define INFINIOP_DEFINE_DESTROY_(name, number, tensors)                                 \
  infiniStatus_t infiniopDestroy##name##Descriptor(infiniop##name##Descriptor_t desc) { \
    return Destroy(INFINIOP_OPERATOR_##name, desc);                                     \
  }
INFINIOP_OPERATORS(INFINIOP_DEFINE_DESTROY_)
#undef INFINIOP_DEFINE_DESTROY_

#define INFINIOP_DEFINE_WORKSPACE_SIZE_(name)                                        \
  infiniStatus_t infiniopGet##name##WorkspaceSize(infiniop##name##Descriptor_t desc, \
                                                  size_t* size) {                    \
    return WorkspaceSize(INFINIOP_OPERATOR_##name, desc, size);                      \
  }
INFINIOP_DEFINE_WORKSPACE_SIZE_(Add)
INFINIOP_DEFINE_WORKSPACE_SIZE_(Mul)
INFINIOP_DEFINE_WORKSPACE_SIZE_(Gemm)
INFINIOP_DEFINE_WORKSPACE_SIZE_(RMSNorm)
INFINIOP_DEFINE_WORKSPACE_SIZE_(RoPE)
INFINIOP_DEFINE_WORKSPACE_SIZE_(SwiGLU)
INFINIOP_DEFINE_WORKSPACE_SIZE_(CausalSoftmax)
INFINIOP_DEFINE_WORKSPACE_SIZE_(RandomSample)
#undef INFINIOP_DEFINE_WORKSPACE_SIZE_

// --- Create and run, operator by operator ------------------------------------------------------

infiniStatus_t infiniopCreateAddDescriptor(infiniopHandle_t handle,
                                           infiniopAddDescriptor_t* desc_ptr,
                                           infiniopTensorDescriptor_t c,
                                           infiniopTensorDescriptor_t a,
                                           infiniopTensorDescriptor_t b) {
  return Create(INFINIOP_OPERATOR_Add, handle, desc_ptr, {c, a, b});
}
infiniStatus_t infiniopAdd(infiniopAddDescriptor_t desc, void* workspace, size_t workspace_size,
                           void* c, const void* a, const void* b, void* stream) {
  return Run(INFINIOP_OPERATOR_Add, desc, workspace, workspace_size, {c, a, b}, stream);
}

infiniStatus_t infiniopCreateMulDescriptor(infiniopHandle_t handle,
                                           infiniopMulDescriptor_t* desc_ptr,
                                           infiniopTensorDescriptor_t c,
                                           infiniopTensorDescriptor_t a,
                                           infiniopTensorDescriptor_t b) {
  return Create(INFINIOP_OPERATOR_Mul, handle, desc_ptr, {c, a, b});
}
infiniStatus_t infiniopMul(infiniopMulDescriptor_t desc, void* workspace, size_t workspace_size,
                           void* c, const void* a, const void* b, void* stream) {
  return Run(INFINIOP_OPERATOR_Mul, desc, workspace, workspace_size, {c, a, b}, stream);
}

infiniStatus_t infiniopCreateSwiGLUDescriptor(infiniopHandle_t handle,
                                              infiniopSwiGLUDescriptor_t* desc_ptr,
                                              infiniopTensorDescriptor_t c_desc,
                                              infiniopTensorDescriptor_t a_desc,
                                              infiniopTensorDescriptor_t b_desc) {
  return Create(INFINIOP_OPERATOR_SwiGLU, handle, desc_ptr, {c_desc, a_desc, b_desc});
}
infiniStatus_t infiniopSwiGLU(infiniopSwiGLUDescriptor_t desc, void* workspace,
                              size_t workspace_size, void* c, void const* a, void const* b,
                              void* stream) {
  return Run(INFINIOP_OPERATOR_SwiGLU, desc, workspace, workspace_size, {c, a, b}, stream);
}

infiniStatus_t infiniopCreateGemmDescriptor(infiniopHandle_t handle,
                                            infiniopGemmDescriptor_t* desc_ptr,
                                            infiniopTensorDescriptor_t c_desc,
                                            infiniopTensorDescriptor_t a_desc,
                                            infiniopTensorDescriptor_t b_desc) {
  return Create(INFINIOP_OPERATOR_Gemm, handle, desc_ptr, {c_desc, a_desc, b_desc});
}
infiniStatus_t infiniopGemm(infiniopGemmDescriptor_t desc, void* workspace, size_t workspace_size,
                            void* c, void const* a, void const* b, float alpha, float beta,
                            void* stream) {
  infiniopBackendRunParams params{};
  params.alpha = alpha;
  params.beta = beta;
  return Run(INFINIOP_OPERATOR_Gemm, desc, workspace, workspace_size, {c, a, b}, stream, params);
}

infiniStatus_t infiniopCreateRMSNormDescriptor(infiniopHandle_t handle,
                                               infiniopRMSNormDescriptor_t* desc_ptr,
                                               infiniopTensorDescriptor_t y_desc,
                                               infiniopTensorDescriptor_t x_desc,
                                               infiniopTensorDescriptor_t w_desc, float epsilon) {
  infiniopBackendCreateParams params{};
  params.epsilon = epsilon;
  return Create(INFINIOP_OPERATOR_RMSNorm, handle, desc_ptr, {y_desc, x_desc, w_desc}, params);
}
infiniStatus_t infiniopRMSNorm(infiniopRMSNormDescriptor_t desc, void* workspace,
                               size_t workspace_size, void* y, const void* x, const void* w,
                               void* stream) {
  return Run(INFINIOP_OPERATOR_RMSNorm, desc, workspace, workspace_size, {y, x, w}, stream);
}

infiniStatus_t infiniopCreateRoPEDescriptor(
    infiniopHandle_t handle, infiniopRoPEDescriptor_t* desc_ptr, infiniopTensorDescriptor_t y,
    infiniopTensorDescriptor_t x, infiniopTensorDescriptor_t pos_ids,
    infiniopTensorDescriptor_t sin_table, infiniopTensorDescriptor_t cos_table,
    infiniopRoPEAlgo_t algo) {
  infiniopBackendCreateParams params{};
  params.rope_algo = algo;
  return Create(INFINIOP_OPERATOR_RoPE, handle, desc_ptr, {y, x, pos_ids, sin_table, cos_table},
                params);
}
infiniStatus_t infiniopRoPE(infiniopRoPEDescriptor_t desc, void* workspace, size_t workspace_size,
                            void* y, const void* x, void const* pos_ids, void const* sin_table,
                            void const* cos_table, void* stream) {
  return Run(INFINIOP_OPERATOR_RoPE, desc, workspace, workspace_size,
             {y, x, pos_ids, sin_table, cos_table}, stream);
}

infiniStatus_t infiniopCreateCausalSoftmaxDescriptor(infiniopHandle_t handle,
                                                     infiniopCausalSoftmaxDescriptor_t* desc_ptr,
                                                     infiniopTensorDescriptor_t y_desc,
                                                     infiniopTensorDescriptor_t x_desc) {
  return Create(INFINIOP_OPERATOR_CausalSoftmax, handle, desc_ptr, {y_desc, x_desc});
}
infiniStatus_t infiniopCausalSoftmax(infiniopCausalSoftmaxDescriptor_t desc, void* workspace,
                                     size_t workspace_size, void* y, const void* x, void* stream) {
  return Run(INFINIOP_OPERATOR_CausalSoftmax, desc, workspace, workspace_size, {y, x}, stream);
}

infiniStatus_t infiniopCreateRearrangeDescriptor(infiniopHandle_t handle,
                                                 infiniopRearrangeDescriptor_t* desc_ptr,
                                                 infiniopTensorDescriptor_t dst,
                                                 infiniopTensorDescriptor_t src) {
  return Create(INFINIOP_OPERATOR_Rearrange, handle, desc_ptr, {dst, src});
}
infiniStatus_t infiniopRearrange(infiniopRearrangeDescriptor_t desc, void* dst, const void* src,
                                 void* stream) {
  return Run(INFINIOP_OPERATOR_Rearrange, desc, nullptr, 0, {dst, src}, stream);
}

infiniStatus_t infiniopCreateRandomSampleDescriptor(infiniopHandle_t handle,
                                                    infiniopRandomSampleDescriptor_t* desc_ptr,
                                                    infiniopTensorDescriptor_t result,
                                                    infiniopTensorDescriptor_t probs) {
  return Create(INFINIOP_OPERATOR_RandomSample, handle, desc_ptr, {result, probs});
}
infiniStatus_t infiniopRandomSample(infiniopRandomSampleDescriptor_t desc, void* workspace,
                                    size_t workspace_size, void* result, const void* probs,
                                    float random_val, float topp, int topk, float temperature,
                                    void* stream) {
  infiniopBackendRunParams params{};
  params.random_val = random_val;
  params.topp = topp;
  params.topk = topk;
  params.temperature = temperature;
  return Run(INFINIOP_OPERATOR_RandomSample, desc, workspace, workspace_size, {result, probs},
             stream, params);
}

}  // extern "C"
