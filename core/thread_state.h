// What the core keeps per thread. Defined in a header (an inline variable with a constant
// initialiser) so that the hot paths read it directly, without a call, and in one structure so
// that a call that reads several fields finds the thread's block once.
#ifndef INFINIRT_CORE_THREAD_STATE_H_
#define INFINIRT_CORE_THREAD_STATE_H_

#include <cstdint>

#include "infinirt.h"

namespace infinirt::core {

struct ThreadState {
  // Whether this thread is counted among the threads that call InfiniRT (Runtime::Get counts a
  // thread at its first call and a thread-exit hook uncounts it): the teardown at process exit
  // frees nothing while another counted thread is alive. First in the block on purpose: GCC's
  // UndefinedBehaviorSanitizer takes a reference to thread-local data at offset 0 of a
  // program's own TLS block for a null reference (seen with the core's objects linked into a
  // test program), and this field is only ever read and written by value.
  bool counted_as_caller = false;
  infinirtError_t last_error = infinirtSuccess;  // infinirtGetLastError
  // The current device, valid for the runtime it was set in: after infinirtFinalize every
  // thread starts again from device 0, as in a fresh process.
  int current_ordinal = 0;
  uint64_t current_ordinal_generation = 0;
  // API calls this thread is inside (Guard; nested calls count twice). Written only by this
  // thread, with relaxed atomic stores (__atomic builtins: a std::atomic member would make this
  // block non-trivial); the teardown at exit reads it, after a process-wide memory barrier, to
  // wait until no other thread is inside a call (runtime.cc).
  int calls_in_progress = 0;
};
// The initial-exec model: every API call reads this block (Runtime::Get checks that the thread is
// counted), and at a fixed offset from the thread pointer that costs one load, where a TLS
// descriptor costs a call. Its price is a few bytes (this block's size) of the static TLS space
// that glibc keeps for libraries loaded with dlopen (512 bytes or more by default).
inline thread_local ThreadState tls_thread_state __attribute__((tls_model("initial-exec")));

}  // namespace infinirt::core

#endif  // INFINIRT_CORE_THREAD_STATE_H_
