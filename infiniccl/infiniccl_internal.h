// What libinfiniccl's files share: the communicator object, the engines, and failing with a
// message (the calling thread's last error).
#ifndef INFINICCL_INFINICCL_INTERNAL_H_
#define INFINICCL_INFINICCL_INTERNAL_H_

#include <memory>
#include <string>
#include <vector>

#include "infiniccl.h"
#include "infiniccl_backend.h"

namespace infiniccl {

// A collective engine: its table (null when absent) and its listing.
struct Engine {
  const infinicclBackendTable* table = nullptr;
  infinirtBackendProp listing{};
};

// The engine of a device type, loaded on first use; null for a value that is no device type.
const Engine* LoadedEngine(infiniDevice_t type);
// The engine of a device type, or null (then *why says why).
const Engine* EngineFor(infiniDevice_t type, std::string* why);

// How long a call may wait for the other ranks: INFINICCL_TIMEOUT_MS, read when a communicator
// is made (default 300000 ms).
long TimeoutMs();

// Sets the calling thread's last error and returns status (and logs it at debug).
infiniStatus_t Fail(infiniStatus_t status, const std::string& why);

}  // namespace infiniccl

// One rank's communicator (the public handle points at it).
struct InfinicclComm {
  const infiniccl::Engine* engine = nullptr;
  infinicclBackendComm_t backend = nullptr;
  infiniDevice_t device_type = INFINI_DEVICE_CPU;
  int rank = 0;
  int nranks = 0;
  int ordinal = -1;     // the rank's InfiniRT device
  bool staged = false;  // run by the CPU engine through host memory (a mixed or engine-less job)
};

namespace infiniccl {

// SUCCESS when comm is a live communicator, found in the registry of live ones without reading
// it; otherwise the status to answer, recorded as the last error.
infiniStatus_t CheckComm(infinicclComm_t comm, const char* function);

// A live communicator (known to CheckComm) for a rank an engine made.
infinicclComm_t Register(const Engine* engine, infinicclBackendComm_t backend, infiniDevice_t type,
                         int rank, int nranks, int ordinal, bool staged);

// CommInitAll's ranks through the CPU engine, their buffers staged through host memory, for a
// device type no engine here serves (why_no_engine says why).
infiniStatus_t StagedCommInitAll(infiniDevice_t type, const std::vector<int>& ordinals,
                                 infinicclComm_t* comms, const std::string& why_no_engine);

}  // namespace infiniccl

#endif  // INFINICCL_INFINICCL_INTERNAL_H_
