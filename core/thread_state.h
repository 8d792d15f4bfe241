// What the core keeps per thread. Defined in a header (an inline variable with a constant
// initialiser) so that the hot paths read it directly, without a call, and in one structure so
// that a call that reads several fields finds the thread's block once.
#ifndef INFINIRT_CORE_THREAD_STATE_H_
#define INFINIRT_CORE_THREAD_STATE_H_

#include <cstdint>

#include "infinirt.h"

namespace infinirt::core {

struct ThreadState {
  infinirtError_t last_error = infinirtSuccess;  // infinirtGetLastError
  // The current device, valid for the runtime it was set in: after infinirtFinalize every
  // thread starts again from device 0, as in a fresh process.
  int current_ordinal = 0;
  uint64_t current_ordinal_generation = 0;
  // Whether this thread is counted among the threads that call InfiniRT (Runtime::Get counts a
  // thread at its first call and a thread-exit hook uncounts it): the teardown at process exit
  // frees nothing while another counted thread is alive.
  bool counted_as_caller = false;
  // The allocation registry's answers kept by this thread (allocation_registry.cc), reached
  // through this block so that a lookup reads no other thread-local variable; null until the
  // thread's first lookup.
  void* kept_registry_answers = nullptr;
};
// The initial-exec model: every API call reads this block (Runtime::Get checks that the thread is
// counted), and at a fixed offset from the thread pointer that costs one load, where a TLS
// descriptor costs a call. Its price is a few bytes (this block's size) of the static TLS space
// that glibc keeps for libraries loaded with dlopen (512 bytes or more by default).
inline thread_local ThreadState tls_thread_state __attribute__((tls_model("initial-exec")));

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_THREAD_STATE_H_
