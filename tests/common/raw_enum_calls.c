/* See raw_enum_calls.h. */
#include "raw_enum_calls.h"

infinirtError_t RawKindMemcpy(void* dst, const void* src, size_t count, int kind) {
  return infinirtMemcpy(dst, src, count, (enum infinirtMemcpyKind)kind);
}

infinirtError_t RawKindMemcpyAsync(void* dst, const void* src, size_t count, int kind,
                                   infinirtStream_t stream) {
  return infinirtMemcpyAsync(dst, src, count, (enum infinirtMemcpyKind)kind, stream);
}

infinirtError_t RawDeviceGetAttribute(int* value, int attr, int device) {
  return infinirtDeviceGetAttribute(value, (enum infinirtDeviceAttr)attr, device);
}

infinirtError_t RawDeviceGetOrdinal(int* device, int type, int index) {
  return infinirtDeviceGetOrdinal(device, (infiniDevice_t)type, index);
}
