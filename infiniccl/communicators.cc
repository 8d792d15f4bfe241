// Communicators: made for a group of devices (CommInitAll) by the engine of their device type,
// kept in a registry of live ones so that a destroyed or foreign handle is refused without being
// read, and released by CommDestroy or CommAbort.
#include <cstddef>
#include <memory>
#include <mutex>
#include <set>
#include <string>
#include <unordered_set>
#include <vector>

#include "infiniccl_internal.h"

namespace infiniccl {

namespace {

std::mutex g_live_mutex;
std::unordered_set<const InfinicclComm*>& Live() {  // under g_live_mutex
  static auto* live = new std::unordered_set<const InfinicclComm*>();
  return *live;
}

// Takes a communicator out of the registry; false when it was not live.
bool Retire(infinicclComm_t comm) {
  std::lock_guard<std::mutex> lock(g_live_mutex);
  return Live().erase(comm) > 0;
}

// The InfiniRT ordinals of device_ids (indices among the devices of `type`).
infiniStatus_t Ordinals(infiniDevice_t type, int ndevice, const int* device_ids,
                        std::vector<int>* ordinals) {
  std::set<int> seen;
  for (int i = 0; i < ndevice; ++i) {
    int ordinal = -1;
    if (infinirtDeviceGetOrdinal(&ordinal, type, device_ids[i]) != infinirtSuccess) {
      infinirtGetLastError();
      return Fail(INFINI_STATUS_BAD_PARAM, "CommInitAll: device_ids[" + std::to_string(i) +
                                               "] = " + std::to_string(device_ids[i]) +
                                               " is no device of the type");
    }
    if (!seen.insert(ordinal).second) {
      return Fail(INFINI_STATUS_BAD_PARAM,
                  "CommInitAll: device " + std::to_string(device_ids[i]) + " appears twice");
    }
    ordinals->push_back(ordinal);
  }
  return INFINI_STATUS_SUCCESS;
}

}  // namespace

infiniStatus_t CheckComm(infinicclComm_t comm, const char* function) {
  if (comm == nullptr) {
    return Fail(INFINI_STATUS_NULL_POINTER, std::string(function) + ": comm is NULL");
  }
  std::lock_guard<std::mutex> lock(g_live_mutex);
  if (Live().count(comm) == 0) {
    return Fail(INFINI_STATUS_BAD_PARAM,
                std::string(function) + ": comm is not a live communicator (destroyed?)");
  }
  return INFINI_STATUS_SUCCESS;
}

infinicclComm_t Register(const Engine* engine, infinicclBackendComm_t backend, infiniDevice_t type,
                         int rank, int nranks, int ordinal, bool staged) {
  auto comm = std::make_unique<InfinicclComm>();
  comm->engine = engine;
  comm->backend = backend;
  comm->device_type = type;
  comm->rank = rank;
  comm->nranks = nranks;
  comm->ordinal = ordinal;
  comm->staged = staged;
  std::lock_guard<std::mutex> lock(g_live_mutex);
  Live().insert(comm.get());
  return comm.release();
}

}  // namespace infiniccl

using infiniccl::Fail;

extern "C" {

infiniStatus_t infinicclCommInitAll(infiniDevice_t device_type, infinicclComm_t* comms, int ndevice,
                                    const int* device_ids) {
  if (ndevice <= 0) {
    return Fail(INFINI_STATUS_BAD_PARAM,
                "CommInitAll: ndevice is " + std::to_string(ndevice) + ", not positive");
  }
  if (comms == nullptr || device_ids == nullptr) {
    return Fail(INFINI_STATUS_NULL_POINTER, "CommInitAll: comms or device_ids is NULL");
  }
  std::string why;
  const infiniccl::Engine* engine = infiniccl::EngineFor(device_type, &why);
  if (engine == nullptr && infiniccl::LoadedEngine(device_type) == nullptr) {
    return Fail(INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED, "CommInitAll: " + why);
  }
  std::vector<int> ordinals;
  if (auto status = infiniccl::Ordinals(device_type, ndevice, device_ids, &ordinals)) {
    return status;
  }
  // Without an engine that serves the type here, the CPU engine stands in (staged).
  if (engine == nullptr) return infiniccl::StagedCommInitAll(device_type, ordinals, comms, why);
  std::vector<infinicclBackendComm_t> made(ndevice, nullptr);
  char engine_why[INFINICCL_BACKEND_WHY_BYTES] = "";
  const infiniStatus_t status = engine->table->CommInitAll(
      ndevice, ordinals.data(), infiniccl::TimeoutMs(), made.data(), engine_why, sizeof engine_why);
  if (status == INFINI_STATUS_DEVICE_TYPE_NOT_SUPPORTED && device_type != INFINI_DEVICE_CPU) {
    engine_why[sizeof engine_why - 1] = '\0';  // the engine lacks the type's library here
    return infiniccl::StagedCommInitAll(device_type, ordinals, comms, engine_why);
  }
  if (status != INFINI_STATUS_SUCCESS) {
    engine_why[sizeof engine_why - 1] = '\0';
    return Fail(status, std::string("CommInitAll: ") + engine_why);
  }
  for (int rank = 0; rank < ndevice; ++rank) {
    comms[rank] =
        infiniccl::Register(engine, made[rank], device_type, rank, ndevice, ordinals[rank], false);
  }
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinicclCommDestroy(infinicclComm_t comm) {
  if (comm == nullptr) return INFINI_STATUS_SUCCESS;
  if (!infiniccl::Retire(comm)) {
    return Fail(INFINI_STATUS_BAD_PARAM, "CommDestroy: comm is not a live communicator");
  }
  std::unique_ptr<InfinicclComm> owned(comm);
  return owned->engine->table->CommDestroy(owned->backend);
}

infiniStatus_t infinicclCommAbort(infinicclComm_t comm) {
  if (comm == nullptr) return INFINI_STATUS_SUCCESS;
  if (!infiniccl::Retire(comm)) {
    return Fail(INFINI_STATUS_BAD_PARAM, "CommAbort: comm is not a live communicator");
  }
  std::unique_ptr<InfinicclComm> owned(comm);
  return owned->engine->table->CommAbort(owned->backend);
}

infiniStatus_t infinicclCommCount(infinicclComm_t comm, int* count) {
  if (auto status = infiniccl::CheckComm(comm, "CommCount")) return status;
  if (count == nullptr) return Fail(INFINI_STATUS_NULL_POINTER, "CommCount: count is NULL");
  *count = comm->nranks;
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinicclCommUserRank(infinicclComm_t comm, int* rank) {
  if (auto status = infiniccl::CheckComm(comm, "CommUserRank")) return status;
  if (rank == nullptr) return Fail(INFINI_STATUS_NULL_POINTER, "CommUserRank: rank is NULL");
  *rank = comm->rank;
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinicclCommDevice(infinicclComm_t comm, int* device) {
  if (auto status = infiniccl::CheckComm(comm, "CommDevice")) return status;
  if (device == nullptr) return Fail(INFINI_STATUS_NULL_POINTER, "CommDevice: device is NULL");
  *device = comm->ordinal;
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinicclCommGetEngine(infinicclComm_t comm, const char** engine) {
  if (auto status = infiniccl::CheckComm(comm, "CommGetEngine")) return status;
  if (engine == nullptr) return Fail(INFINI_STATUS_NULL_POINTER, "CommGetEngine: engine is NULL");
  *engine = comm->staged ? "cpu-staged" : comm->engine->table->name;
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t infinicclCommGetAsyncError(infinicclComm_t comm, infiniStatus_t* asyncError) {
  if (auto status = infiniccl::CheckComm(comm, "CommGetAsyncError")) return status;
  if (asyncError == nullptr) {
    return Fail(INFINI_STATUS_NULL_POINTER, "CommGetAsyncError: asyncError is NULL");
  }
  const infinicclBackendTable* table = comm->engine->table;
  *asyncError = INFINI_STATUS_SUCCESS;
  if (table->struct_size <= offsetof(infinicclBackendTable, CommGetAsyncError) ||
      table->CommGetAsyncError == nullptr) {
    return INFINI_STATUS_SUCCESS;
  }
  char why[INFINICCL_BACKEND_WHY_BYTES] = "";
  const infiniStatus_t status =
      table->CommGetAsyncError(comm->backend, asyncError, why, sizeof why);
  why[sizeof why - 1] = '\0';
  if (status != INFINI_STATUS_SUCCESS)
    return Fail(status, std::string("CommGetAsyncError: ") + why);
  if (*asyncError != INFINI_STATUS_SUCCESS)
    Fail(*asyncError, std::string("CommGetAsyncError: ") + why);
  return INFINI_STATUS_SUCCESS;
}

}  // extern "C"
