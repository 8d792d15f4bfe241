// Each operator's rules for its tensors, checked when a descriptor is made, with InfiniCore's
// status codes, so that every backend gets tensors that passed the same rules.
#ifndef INFINIOP_VALIDATION_H_
#define INFINIOP_VALIDATION_H_

#include <cstddef>
#include <string>

#include "infiniop_internal.h"

namespace infiniop {

// tensors: in the order of the operator's public Create call. On failure *why says what is
// wrong. INFINI_STATUS_NOT_IMPLEMENTED for an operator whose rules are not written yet.
infiniStatus_t Validate(infiniopOperator_t op, const InfiniopTensorDescriptor* const* tensors,
                        size_t count, const infiniopBackendCreateParams& params, std::string* why);

}  // namespace infiniop

#endif  // INFINIOP_VALIDATION_H_
