/*
 * InfiniCCL: collective communication between InfiniRT devices, with InfiniCore's interface
 * (infinicclCommInitAll, infinicclCommDestroy, infinicclAllReduce) and NCCL's model for the rest.
 * A communicator is one rank of a group of ranks on devices of one type; its calls are queued on
 * an InfiniRT stream of the rank's device and run in that stream's order. Each device type's
 * collectives run on an engine found at run time (libinfiniccl_<engine>.so beside the runtime's
 * plugins): the CPU engine for CPU devices. Every function returns an infiniStatus_t, except the
 * two that return text. Valid C99 and C++17.
 *
 * Semantics, as NCCL's:
 *   - The k-th call of every rank of a communicator belongs to the same collective: every rank
 *     makes the same calls in the same order, with the same count, dtype and op (and root).
 *   - A call returns once the work is queued; the collective's data moves when every rank's
 *     stream has reached its call. Work queued on a rank's stream after the call waits for it.
 *   - A thread that issues the calls of several ranks must put them between infinicclGroupStart
 *     and infinicclGroupEnd: alone, each call waits for the other ranks to make theirs (at most
 *     INFINICCL_TIMEOUT_MS, then it fails).
 *   - Buffers are device memory of the rank's device (or memory that device can use directly);
 *     in place means sendbuf == recvbuf (for AllGather, sendbuf at rank * count elements of
 *     recvbuf; for ReduceScatter, recvbuf at rank * count elements of sendbuf).
 *
 * A program may also see InfiniCore's own infiniccl.h, which declares infinicclReduceOp_t, the
 * communicator type and its three functions under the include guard __INFINICCL_API_H__. They sit
 * under the same guard here: whichever header comes first declares them once.
 */
#ifndef INFINIRT_INFINICCL_H_
#define INFINIRT_INFINICCL_H_

#include <stddef.h>

#include "infinicore.h"
#include "infinirt.h"

#ifdef __cplusplus
extern "C" {
#endif

#if defined(_WIN32)
#define INFINICCL_API __declspec(dllimport)
#else
#define INFINICCL_API __attribute__((visibility("default")))
#endif

/* InfiniCore's reduction operators, with its numbers: X(suffix, value, name). */
#define INFINICCL_REDUCE_OPS(X) \
  X(SUM, 0, "sum")              \
  X(PROD, 1, "prod")            \
  X(MAX, 2, "max")              \
  X(MIN, 3, "min")              \
  X(AVG, 4, "avg")

/* InfiniCore's three functions: X(return type, name after the prefix, parameter list). */
#define INFINICCL_INFINICORE_FUNCTIONS(X)                                                        \
  /* One communicator per device, ranks 0..ndevice-1 in the order of device_ids, which are       \
     indices among the devices of device_type (as infinirtDeviceGetOrdinal takes them). */       \
  X(infiniStatus_t, CommInitAll,                                                                 \
    (infiniDevice_t device_type, infinicclComm_t * comms, int ndevice, const int* device_ids))   \
  /* Waits for the communicator's queued work and releases it. NULL is a no-op. */               \
  X(infiniStatus_t, CommDestroy, (infinicclComm_t comm))                                         \
  /* recvbuf of every rank = op over the ranks' sendbuf, element by element. */                  \
  X(infiniStatus_t, AllReduce,                                                                   \
    (void* sendbuf, void* recvbuf, size_t count, infiniDtype_t datatype, infinicclReduceOp_t op, \
     infinicclComm_t comm, infinirtStream_t stream))

#ifndef __INFINICCL_API_H__
#define __INFINICCL_API_H__

#define INFINICCL_REDUCE_OP_ENUMERATOR_(name, value, text) INFINICCL_##name = value,
typedef enum INFINIRT_ENUM_BASE {
  INFINICCL_REDUCE_OPS(INFINICCL_REDUCE_OP_ENUMERATOR_)
} infinicclReduceOp_t;
#undef INFINICCL_REDUCE_OP_ENUMERATOR_

struct InfinicclComm;
typedef struct InfinicclComm* infinicclComm_t;

#define INFINICCL_DECLARE_(ret, name, params) INFINICCL_API ret infiniccl##name params;
INFINICCL_INFINICORE_FUNCTIONS(INFINICCL_DECLARE_)
#undef INFINICCL_DECLARE_

#endif /* __INFINICCL_API_H__ */

#define INFINICCL_REDUCE_OP_COUNT 5

/* What a process hands the others of a multi-process job (NCCL's ncclUniqueId). */
#define INFINICCL_UNIQUE_ID_BYTES 128
typedef struct {
  char internal[INFINICCL_UNIQUE_ID_BYTES];
} infinicclUniqueId;

/* The functions InfiniCore does not have, in NCCL's shapes. */
#define INFINICCL_EXTENSION_FUNCTIONS(X)                                                         \
  /* Multi-process jobs (NCCL's model): rank 0 makes the id and hands it to the others, which    \
     all call CommInitRank on the calling thread's current InfiniRT device. */                   \
  X(infiniStatus_t, GetUniqueId, (infinicclUniqueId * id))                                       \
  X(infiniStatus_t, CommInitRank,                                                                \
    (infinicclComm_t * comm, int nranks, infinicclUniqueId id, int rank))                        \
  /* CommInitRank from the variables launchers set: RANK, WORLD_SIZE, MASTER_ADDR and            \
     MASTER_PORT (torchrun), or OpenMPI's OMPI_COMM_WORLD_RANK and OMPI_COMM_WORLD_SIZE. */      \
  X(infiniStatus_t, CommInitFromEnv, (infinicclComm_t * comm))                                   \
  /* recvbuf of every rank = root's sendbuf. */                                                  \
  X(infiniStatus_t, Broadcast,                                                                   \
    (const void* sendbuf, void* recvbuf, size_t count, infiniDtype_t datatype, int root,         \
     infinicclComm_t comm, infinirtStream_t stream))                                             \
  /* recvbuf of the root = op over the ranks' sendbuf (recvbuf of the others is not used). */    \
  X(infiniStatus_t, Reduce,                                                                      \
    (const void* sendbuf, void* recvbuf, size_t count, infiniDtype_t datatype,                   \
     infinicclReduceOp_t op, int root, infinicclComm_t comm, infinirtStream_t stream))           \
  /* recvbuf (nranks * sendcount elements) of every rank = the ranks' sendbuf, in rank order. */ \
  X(infiniStatus_t, AllGather,                                                                   \
    (const void* sendbuf, void* recvbuf, size_t sendcount, infiniDtype_t datatype,               \
     infinicclComm_t comm, infinirtStream_t stream))                                             \
  /* recvbuf (recvcount elements) of rank r = op over the ranks' sendbuf (nranks * recvcount     \
     elements) at r * recvcount. */                                                              \
  X(infiniStatus_t, ReduceScatter,                                                               \
    (const void* sendbuf, void* recvbuf, size_t recvcount, infiniDtype_t datatype,               \
     infinicclReduceOp_t op, infinicclComm_t comm, infinirtStream_t stream))                     \
  /* Point to point: a Send to peer matches that peer's Recv from this rank, in call order. */   \
  X(infiniStatus_t, Send,                                                                        \
    (const void* sendbuf, size_t count, infiniDtype_t datatype, int peer, infinicclComm_t comm,  \
     infinirtStream_t stream))                                                                   \
  X(infiniStatus_t, Recv,                                                                        \
    (void* recvbuf, size_t count, infiniDtype_t datatype, int peer, infinicclComm_t comm,        \
     infinirtStream_t stream))                                                                   \
  /* Calls between GroupStart and GroupEnd are issued together at GroupEnd (they nest). */       \
  X(infiniStatus_t, GroupStart, (void))                                                          \
  X(infiniStatus_t, GroupEnd, (void))                                                            \
  X(infiniStatus_t, CommCount, (infinicclComm_t comm, int* count))                               \
  X(infiniStatus_t, CommUserRank, (infinicclComm_t comm, int* rank))                             \
  /* The rank's device, as an InfiniRT ordinal. */                                               \
  X(infiniStatus_t, CommDevice, (infinicclComm_t comm, int* device))                             \
  /* The engine the communicator's collectives run on ("cpu", "nccl", ...; "cpu-staged" when the \
     CPU engine runs them through host memory for ranks of several device types or of a type     \
     whose engine is not here). */                                                               \
  X(infiniStatus_t, CommGetEngine, (infinicclComm_t comm, const char** engine))                  \
  /* Makes every call of the communicator that waits, and every later one, fail; then            \
     releases it as CommDestroy does, without waiting for the other ranks. */                    \
  X(infiniStatus_t, CommAbort, (infinicclComm_t comm))                                           \
  /* Whether the communicator's queued work failed after its call returned (NCCL's               \
     ncclCommGetAsyncError): *asyncError is SUCCESS, or the failure (INTERNAL_ERROR: a rank died \
     or the timeout passed), which every later call answers too; GetLastError says why. */       \
  X(infiniStatus_t, CommGetAsyncError, (infinicclComm_t comm, infiniStatus_t * asyncError))      \
  /* Loads the engine of a device type if that was not tried yet and describes it in *info:      \
     status infinirtBackendLoaded with its path, or why there is none (NotFound: no engine for   \
     the type, or its library is absent; Insecure, DlopenFailed, NoEntryPoint, BadTable,         \
     InitFailed) with the reason. SUCCESS whenever *info is filled. */                           \
  X(infiniStatus_t, GetEngineInfo, (infiniDevice_t device_type, infinirtBackendProp * info))     \
  /* A line describing a status ("bad parameter"). */                                            \
  X(const char*, GetErrorString, (infiniStatus_t status))                                        \
  /* What the calling thread's last failed call said, or "" (comm is unused, as in NCCL). */     \
  X(const char*, GetLastError, (infinicclComm_t comm))

#define INFINICCL_DECLARE_(ret, name, params) INFINICCL_API ret infiniccl##name params;
INFINICCL_EXTENSION_FUNCTIONS(INFINICCL_DECLARE_)
#undef INFINICCL_DECLARE_

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* INFINIRT_INFINICCL_H_ */
