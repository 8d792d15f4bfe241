// Copies with a memcpy kind that is no enumerator (5, -1, ...), made from C (raw_kind.c) as a C
// program would make them: there an enum parameter accepts any int, so the runtime must reject
// the value with infinirtErrorInvalidMemcpyDirection rather than assume a valid kind.
#ifndef INFINIRT_TESTS_CONFORMANCE_RAW_KIND_H_
#define INFINIRT_TESTS_CONFORMANCE_RAW_KIND_H_

#include <stddef.h>

#include "infinirt.h"

#ifdef __cplusplus
extern "C" {
#endif

infinirtError_t ConformanceMemcpyRawKind(void* dst, const void* src, size_t count, int kind);
infinirtError_t ConformanceMemcpyAsyncRawKind(void* dst, const void* src, size_t count, int kind,
                                              infinirtStream_t stream);

#ifdef __cplusplus
}
#endif

#endif  // INFINIRT_TESTS_CONFORMANCE_RAW_KIND_H_
