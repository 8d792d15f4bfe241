// Every operator's public entry points (include/infiniop/ops/): each packs its tensors, buffers
// and parameters and goes through the same four steps (Create, WorkspaceSize, Run, Destroy),
// which check the handle and descriptors, validate (validation.h) and call the backend.
#include <cstdint>
#include <initializer_list>
#include <new>
#include <string>
#include <type_traits>
#include <vector>

#include "backends.h"
#include "infiniop_backend_support.h"
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
#define INFINIOP_OPERATOR_NAME_(name, ...) \
  case INFINIOP_OPERATOR_##name:                       \
    return #name;
    INFINIOP_OPERATORS(INFINIOP_OPERATOR_NAME_)
#undef INFINIOP_OPERATOR_NAME_
    default:
      return "?";
  }
}

// Stores a scalar in its parameter field; false when the field cannot hold the value (a size_t
// beyond an int field's range, say), which the entry point refuses.
template <class Field, class Value>
bool Store(Field* field, Value value) {
  *field = static_cast<Field>(value);
  if constexpr (std::is_same_v<Field, Value>) {
    return true;
  } else {
    return static_cast<Value>(*field) == value && (*field < Field{}) == (value < Value{});
  }
}

// Whether the scalars a call repeats from Create (INFINIOP_SCALAR_AGAIN) equal Create's.
bool RepeatsCreated(infiniopOperator_t op, const infiniopBackendCreateParams& created,
                    const infiniopBackendCreateParams& again) {
  switch (op) {
#undef INFINIOP_SCALAR_AGAIN
#define INFINIOP_SCALAR(type, name, default_value)
#define INFINIOP_SCALAR_AGAIN(type, name) &&created.name == again.name
#define INFINIOP_OPERATOR_REPEATS_(name, snake, number, workspace, tensors, create, call, ...) \
  case INFINIOP_OPERATOR_##name:                                                               \
    return true INFINIOP_EXPAND call;
    INFINIOP_OPERATORS(INFINIOP_OPERATOR_REPEATS_)
#undef INFINIOP_OPERATOR_REPEATS_
#undef INFINIOP_SCALAR_AGAIN
#undef INFINIOP_SCALAR
#define INFINIOP_SCALAR_AGAIN(type, name) INFINIOP_SCALAR(type, name, 0)
    default:
      return true;
  }
}

infiniStatus_t Create(infiniopOperator_t op, infiniopHandle_t handle, InfiniopDescriptor** desc_ptr,
                      std::initializer_list<infiniopTensorDescriptor_t> tensors,
                      const infiniopBackendCreateParams& params = {}, bool fits = true) {
  const std::string call = std::string("infiniopCreate") + OperatorName(op) + "Descriptor: ";
  if (handle == nullptr || desc_ptr == nullptr) {
    return Refuse(INFINI_STATUS_NULL_POINTER, call + "NULL handle or desc_ptr");
  }
  if (!LiveHandles().Contains(handle))
    return Refuse(INFINI_STATUS_BAD_PARAM, call + "not a live handle");
  if (!fits) return Refuse(INFINI_STATUS_BAD_PARAM, call + "a scalar out of its range");
  std::vector<const InfiniopTensorDescriptor*> described;
  std::vector<infiniopBackendTensor> views;
  for (infiniopTensorDescriptor_t tensor : tensors) {
    const infiniDtype_t undescribed = infiniopOperatorUndescribedDtype(op, described.size());
    if (undescribed != INFINI_DTYPE_INVALID) {
      described.push_back(nullptr);  // the call's buffer: its dtype, no dimensions
      views.push_back(infiniopBackendTensor{undescribed, 0, nullptr, nullptr});
      continue;
    }
    if (tensor == nullptr && infiniopOperatorTensorOptional(op, described.size())) {
      described.push_back(nullptr);  // absent: the backend sees no dtype and no dimensions
      views.push_back(infiniopBackendTensor{INFINI_DTYPE_INVALID, 0, nullptr, nullptr});
      continue;
    }
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
  desc->params = params;
  for (size_t t = 0; t < described.size(); ++t) {
    // An absent input's buffer may be NULL (Run checks only buffers with elements); an output
    // without a descriptor has a size only the call's scalars tell, and must be given.
    const bool undescribed = infiniopOperatorUndescribedDtype(op, t) != INFINI_DTYPE_INVALID;
    desc->buffer_elements.push_back(undescribed               ? SIZE_MAX
                                    : described[t] != nullptr ? described[t]->Elements()
                                                              : 0);
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

// The most buffers a call passes: the most tensors an operator of the list has.
constexpr size_t kMostBuffers = infiniop_backend::MostOperatorTensors();

// On every call's path: no allocation (the message of a refusal is composed only then).
infiniStatus_t Run(infiniopOperator_t op, InfiniopDescriptor* desc, void* workspace,
                   size_t workspace_size, std::initializer_list<const void*> buffers, void* stream,
                   const infiniopBackendRunParams& params = {}, bool fits = true,
                   const infiniopBackendCreateParams* again = nullptr) {
  auto refuse = [op](infiniStatus_t status, const std::string& why) {
    return Refuse(status, std::string("infiniop") + OperatorName(op) + ": " + why);
  };
  if (desc == nullptr) return refuse(INFINI_STATUS_NULL_POINTER, "NULL descriptor");
  OperatorDescriptor* described = Live(op, desc);
  if (described == nullptr) {
    return refuse(INFINI_STATUS_BAD_PARAM, "not a live descriptor of this operator");
  }
  if (!fits) return refuse(INFINI_STATUS_BAD_PARAM, "a scalar out of its range");
  if (again != nullptr && !RepeatsCreated(op, described->params, *again)) {
    return refuse(INFINI_STATUS_BAD_PARAM, "the call's scalars differ from the descriptor's");
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
using infiniop::Store;
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

// Every operator's Create, WorkspaceSize, call and Destroy, generated from INFINIOP_OPERATORS
// (tests/tools/operator_sources.cc).
#include "operator_entry_points.inc"

}  // extern "C"
