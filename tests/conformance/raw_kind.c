#include "raw_kind.h"

infinirtError_t ConformanceMemcpyRawKind(void* dst, const void* src, size_t count, int kind) {
  return infinirtMemcpy(dst, src, count, (enum infinirtMemcpyKind)kind);
}

infinirtError_t ConformanceMemcpyAsyncRawKind(void* dst, const void* src, size_t count, int kind,
                                              infinirtStream_t stream) {
  return infinirtMemcpyAsync(dst, src, count, (enum infinirtMemcpyKind)kind, stream);
}
