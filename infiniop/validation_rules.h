// What the operators' validation rules share (validation*.cc): the checks every rule uses, and
// the declaration of each operator's rule, Validate<Name> (one per entry of the list), which
// validation.cc's dispatch calls.
#ifndef INFINIOP_VALIDATION_RULES_H_
#define INFINIOP_VALIDATION_RULES_H_

#include <cstddef>
#include <initializer_list>
#include <string>
#include <vector>

#include "infiniop_internal.h"

namespace infiniop::rules {

inline bool OneOf(infiniDtype_t dtype, std::initializer_list<infiniDtype_t> allowed) {
  for (infiniDtype_t candidate : allowed) {
    if (dtype == candidate) return true;
  }
  return false;
}

inline infiniStatus_t Fail(infiniStatus_t status, const std::string& text, std::string* why) {
  *why = text;
  return status;
}

inline bool IsFloating(infiniDtype_t dtype) {
  return OneOf(dtype, {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32, INFINI_DTYPE_F64});
}

inline bool IsInteger(infiniDtype_t dtype) {
  return OneOf(dtype, {INFINI_DTYPE_I8, INFINI_DTYPE_I16, INFINI_DTYPE_I32, INFINI_DTYPE_I64,
                       INFINI_DTYPE_U8, INFINI_DTYPE_U16, INFINI_DTYPE_U32, INFINI_DTYPE_U64});
}

inline ptrdiff_t LastStride(const InfiniopTensorDescriptor& t) { return t.strides.back(); }

inline bool IsContiguous(const InfiniopTensorDescriptor& t) {
  ptrdiff_t expected = 1;
  for (size_t i = t.ndim(); i-- > 0;) {
    if (t.shape[i] != 1 && t.strides[i] != expected) return false;
    expected *= static_cast<ptrdiff_t>(t.shape[i]);
  }
  return true;
}

// The shape without its last dimension.
inline std::vector<size_t> LeadingShape(const InfiniopTensorDescriptor& t) {
  return std::vector<size_t>(t.shape.begin(), t.shape.end() - (t.shape.empty() ? 0 : 1));
}

inline bool IsIndex(infiniDtype_t dtype) {
  return OneOf(dtype, {INFINI_DTYPE_I32, INFINI_DTYPE_I64});
}

inline bool IsAttentionDtype(infiniDtype_t dtype) {
  return OneOf(dtype, {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32});
}

inline bool HeadDimPacked(const InfiniopTensorDescriptor& t) {
  return t.ndim() > 0 && (LastStride(t) == 1 || t.shape.back() == 1);
}

// Each operator's rule: tensors in the order of its public Create call (absent ones NULL).
#define INFINIOP_DECLARE_RULE_(name, ...)                                               \
  infiniStatus_t Validate##name(const InfiniopTensorDescriptor* const* t, size_t count, \
                                const infiniopBackendCreateParams& params, std::string* why);
INFINIOP_OPERATORS(INFINIOP_DECLARE_RULE_)
#undef INFINIOP_DECLARE_RULE_

}  // namespace infiniop::rules

#endif  // INFINIOP_VALIDATION_RULES_H_
