/* Calls that pass arbitrary integers where the API takes an enumeration. They are compiled as C,
 * where an enumeration is an integer type and every int value may be passed: in C++ a cast of
 * 100 or -1 to these enumerations would itself be undefined behaviour, so the caller's side of
 * the call stays well-defined and anything the sanitizers find is in the runtime. */
#ifndef INFINIRT_TESTS_COMMON_RAW_ENUM_CALLS_H_
#define INFINIRT_TESTS_COMMON_RAW_ENUM_CALLS_H_

#include <stddef.h>

#include "infinirt.h"

#ifdef __cplusplus
extern "C" {
#endif

infinirtError_t RawKindMemcpy(void* dst, const void* src, size_t count, int kind);
infinirtError_t RawKindMemcpyAsync(void* dst, const void* src, size_t count, int kind,
                                   infinirtStream_t stream);
infinirtError_t RawDeviceGetAttribute(int* value, int attr, int device);
infinirtError_t RawDeviceGetOrdinal(int* device, int type, int index);
infinirtError_t RawStreamBeginCapture(infinirtStream_t stream, int mode);
/* *mode goes in as the mode to set and comes back as the thread's previous mode. */
infinirtError_t RawThreadExchangeStreamCaptureMode(int* mode);
infinirtError_t RawMemPoolGetAttribute(infinirtMemPool_t pool, int attr, void* value);
infinirtError_t RawMemPoolSetAttribute(infinirtMemPool_t pool, int attr, void* value);

#ifdef __cplusplus
}
#endif

#endif /* INFINIRT_TESTS_COMMON_RAW_ENUM_CALLS_H_ */
