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

infinirtError_t RawStreamBeginCapture(infinirtStream_t stream, int mode) {
  return infinirtStreamBeginCapture(stream, (enum infinirtStreamCaptureMode)mode);
}

infinirtError_t RawThreadExchangeStreamCaptureMode(int* mode) {
  const int requested = *mode;
  enum infinirtStreamCaptureMode value = (enum infinirtStreamCaptureMode)requested;
  const infinirtError_t error = infinirtThreadExchangeStreamCaptureMode(&value);
  *mode = (int)value;
  return error;
}

infinirtError_t RawMemPoolGetAttribute(infinirtMemPool_t pool, int attr, void* value) {
  return infinirtMemPoolGetAttribute(pool, (enum infinirtMemPoolAttr)attr, value);
}

infinirtError_t RawMemPoolSetAttribute(infinirtMemPool_t pool, int attr, void* value) {
  return infinirtMemPoolSetAttribute(pool, (enum infinirtMemPoolAttr)attr, value);
}
