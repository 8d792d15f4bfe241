// A refused call's status, with a line on standard error when INFINIRT_LOG_LEVEL is debug or
// trace (the runtime's variable, read once).
#ifndef INFINIOP_STATUS_LOG_H_
#define INFINIOP_STATUS_LOG_H_

#include <string>

#include "infinicore.h"

namespace infiniop {

infiniStatus_t Refuse(infiniStatus_t status, const std::string& why);

}  // namespace infiniop

#endif  // INFINIOP_STATUS_LOG_H_
