/* What every emulated vendor runtime exports besides the vendor's functions, for tests: the
 * call record and fault injection. Tests find these with dlopen(path, RTLD_NOLOAD) + dlsym on
 * the emulated library the plugin loaded (tests/common/emulated_runtime.h). */
#ifndef INFINIRT_TESTS_EMULATED_RUNTIMES_COMMON_EMU_INSPECT_H_
#define INFINIRT_TESTS_EMULATED_RUNTIMES_COMMON_EMU_INSPECT_H_

#include <stddef.h>

#ifdef __cplusplus
extern "C" {
#endif

/* Calls of `function` (the vendor's name, e.g. "cudaMalloc") recorded since the last reset. */
int emuCallCount(const char* function);
/* The record, one call per line: "<function> dev=<device> <arguments>". Returns the size
 * needed including the terminating NUL; writes at most size bytes. */
size_t emuCallLog(char* buffer, size_t size);
void emuResetCalls(void);
/* From now on, the calls of `function` after the first after_calls return status (status 0
 * removes the failure). */
void emuFail(const char* function, int after_calls, int status);
void emuClearFailures(void);
/* Device and pinned host allocations not freed. */
int emuLiveAllocations(void);

#ifdef __cplusplus
}
#endif

#endif /* INFINIRT_TESTS_EMULATED_RUNTIMES_COMMON_EMU_INSPECT_H_ */
