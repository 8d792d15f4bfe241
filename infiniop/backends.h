// The operator backends: libinfiniop_<plugin name>.so for a device type, found and checked by the
// runtime's rules (infinirtOpenExtensionLibrary), loaded on first use and kept until the process
// exits.
#ifndef INFINIOP_BACKENDS_H_
#define INFINIOP_BACKENDS_H_

#include <string>

#include "infiniop_backend.h"

namespace infiniop {

struct Backend {
  const infiniopBackendTable* table;
  infinirtBackendProp listing;  // where it was found, or why it is absent or refused
};

// The backend of a device type, loaded on first use whether it is present or not; null for a
// value that is no device type.
const Backend* LoadedBackend(infiniDevice_t type);

// The backend of a device type, or null (then *why says why).
const Backend* BackendFor(infiniDevice_t type, std::string* why);

}  // namespace infiniop

#endif  // INFINIOP_BACKENDS_H_
