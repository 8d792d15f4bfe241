// infiniopCreateHandle and infiniopDestroyHandle (include/infiniop/handle.h).
#include <new>
#include <string>

#include "backends.h"
#include "infiniop_internal.h"
#include "infinirt.h"
#include "status_log.h"

namespace infiniop {

LiveSet& LiveHandles() {
  static auto* live = new LiveSet();  // never destroyed: handles may be released at exit
  return *live;
}

namespace {

// The index within its type of the device with flat ordinal `ordinal`.
int IndexWithinType(infiniDevice_t type, int ordinal) {
  for (int index = 0;; ++index) {
    int found = -1;
    if (infinirtDeviceGetOrdinal(&found, type, index) != infinirtSuccess) {
      infinirtGetLastError();
      return -1;
    }
    if (found == ordinal) return index;
  }
}

}  // namespace
}  // namespace infiniop

extern "C" {

infiniStatus_t infiniopCreateHandle(infiniopHandle_t* handle_ptr) {
  using namespace infiniop;  // NOLINT
  if (handle_ptr == nullptr)
    return Refuse(INFINI_STATUS_NULL_POINTER, "infiniopCreateHandle: handle_ptr is NULL");
  int ordinal = -1;
  infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
  if (infinirtGetDevice(&ordinal) != infinirtSuccess ||
      infinirtDeviceGetType(&type, ordinal) != infinirtSuccess) {
    const infinirtError_t error = infinirtGetLastError();
    return Refuse(
        INFINI_STATUS_DEVICE_NOT_INITIALIZED,
        std::string("infiniopCreateHandle: no current device: ") + infinirtGetErrorName(error));
  }
  const int index = IndexWithinType(type, ordinal);
  if (index < 0)
    return Refuse(INFINI_STATUS_DEVICE_NOT_FOUND, "infiniopCreateHandle: device not found");
  std::string why;
  const Backend* backend = BackendFor(type, &why);
  if (backend == nullptr) {
    return Refuse(INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED,
                  "infiniopCreateHandle: no operator backend for this device type: " + why);
  }
  auto* handle = new (std::nothrow) InfiniopHandle{type, index, ordinal, backend};
  if (handle == nullptr) return INFINI_STATUS_INTERNAL_ERROR;
  LiveHandles().Add(handle);
  *handle_ptr = handle;
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infiniopDestroyHandle(infiniopHandle_t handle) {
  using namespace infiniop;  // NOLINT
  if (handle == nullptr) return Refuse(INFINI_STATUS_NULL_POINTER, "infiniopDestroyHandle: NULL");
  if (!LiveHandles().Remove(handle)) {
    return Refuse(INFINI_STATUS_BAD_PARAM, "infiniopDestroyHandle: not a live handle");
  }
  delete handle;
  return INFINI_STATUS_SUCCESS;
}

}  // extern "C"
