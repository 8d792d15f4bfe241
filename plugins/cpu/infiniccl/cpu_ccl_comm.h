// What the CPU engine's two kinds of communicator share: a rank of a clique of CPU devices in
// this process (cpu_ccl_engine.cc), or a rank of a job spread over processes, on Gloo
// (gloo_comm.h). The engine's handle points at a CommBase, which says which.
#ifndef INFINIRT_PLUGINS_CPU_INFINICCL_CPU_CCL_COMM_H_
#define INFINIRT_PLUGINS_CPU_INFINICCL_CPU_CCL_COMM_H_

#include <cstdio>
#include <string>

#include "infiniccl_backend.h"
#include "infinirt.h"

namespace infiniccl_cpu {

enum class CommKind { kInProcess, kAcrossProcesses };

struct CommBase {
  explicit CommBase(CommKind kind) : kind(kind) {}
  virtual ~CommBase() = default;
  const CommKind kind;
};

inline CommBase* CommOf(infinicclBackendComm_t comm) { return reinterpret_cast<CommBase*>(comm); }
inline infinicclBackendComm_t HandleOf(CommBase* comm) {
  return reinterpret_cast<infinicclBackendComm_t>(comm);
}

// One call of one rank, noted until its group ends (or issued at once).
struct Noted {
  CommBase* comm;
  infinicclBackendCall call;
  infinirtStream_t stream;
};

// Runs with `ordinal` as the calling thread's current device, then restores the previous one.
class OnDevice {
 public:
  explicit OnDevice(int ordinal) {
    infinirtGetDevice(&previous_);
    infinirtSetDevice(ordinal);
  }
  ~OnDevice() { infinirtSetDevice(previous_); }
  OnDevice(const OnDevice&) = delete;
  OnDevice& operator=(const OnDevice&) = delete;

 private:
  int previous_ = 0;
};

inline void Say(char* why, size_t why_size, const std::string& text) {
  if (why != nullptr && why_size > 0) std::snprintf(why, why_size, "%s", text.c_str());
}

}  // namespace infiniccl_cpu

#endif  // INFINIRT_PLUGINS_CPU_INFINICCL_CPU_CCL_COMM_H_
