/*
 * The InfiniCCL engine ABI: what a collective engine, libinfiniccl_<engine>.so, exports for
 * libinfiniccl.so. An engine serves the device types it names; it is found beside the runtime's
 * plugins (infinirtOpenExtensionLibrary) and uses the public InfiniRT API only.
 *
 * libinfiniccl validates every call (communicator, buffers, count, dtype, op, root, stream of the
 * rank's device) before an engine sees it. Valid C99 and C++17.
 *
 * Compatibility: the table starts with its size and ABI version; libinfiniccl refuses an engine of
 * another major version and reads only the fields the engine's struct_size covers.
 */
#ifndef INFINICCL_BACKEND_H_
#define INFINICCL_BACKEND_H_

#include <stddef.h>

#include "infiniccl.h"
#include "infinicore.h"
#include "infinirt.h"

#define INFINICCL_BACKEND_ABI_MAJOR 1
#define INFINICCL_BACKEND_ABI_MINOR 1

/* The symbol every engine exports: infinicclBackendGetTable, an infinicclBackendGetTableFn. */
#define INFINICCL_BACKEND_ENTRY_SYMBOL "infinicclBackendGetTable"

#ifdef __cplusplus
extern "C" {
#endif

/* The calls an engine runs: X(name, whether it reduces). */
#define INFINICCL_CALLS(X) \
  X(AllReduce, 1)          \
  X(Broadcast, 0)          \
  X(Reduce, 1)             \
  X(AllGather, 0)          \
  X(ReduceScatter, 1)      \
  X(Send, 0)               \
  X(Recv, 0)

#define INFINICCL_CALL_ENUMERATOR_(name, reduces) INFINICCL_CALL_##name,
typedef enum INFINIRT_ENUM_BASE {
  INFINICCL_CALLS(INFINICCL_CALL_ENUMERATOR_) INFINICCL_CALL_COUNT
} infinicclCallKind_t;
#undef INFINICCL_CALL_ENUMERATOR_

/* One call of one rank, validated. count is the call's own: the elements of AllReduce,
 * Broadcast, Reduce, Send and Recv; AllGather's sendcount; ReduceScatter's recvcount. root is
 * Broadcast's and Reduce's root, and the peer of Send and Recv. Unused fields are 0 (sendbuf is
 * NULL for Recv, recvbuf for Send). */
typedef struct infinicclBackendCall {
  infinicclCallKind_t kind;
  const void* sendbuf;
  void* recvbuf;
  size_t count;
  infiniDtype_t dtype;
  infinicclReduceOp_t op;
  int root;
} infinicclBackendCall;

/* What an engine keeps for one rank. */
typedef struct infinicclBackendComm* infinicclBackendComm_t;

/* The bytes of an engine's answer to why a call failed (a NUL-terminated line). */
#define INFINICCL_BACKEND_WHY_BYTES 512

/* The rendezvous of a communicator whose ranks are in several processes: a key-value store that
 * every rank of the job reaches, lent by libinfiniccl for the length of CommInitRank. The keys are
 * the engine's own; libinfiniccl keeps them apart from other communicators'. Set and Get answer 0
 * on success; otherwise why says what failed (the store is unreachable, the timeout passed). */
typedef struct infinicclBackendStore {
  void* context;
  /* This host's address on the network the store was reached over, for the engine's own
   * listening sockets ("127.0.0.1" when the job is on one host). */
  const char* local_address;
  int (*Set)(void* context, const char* key, const void* value, size_t size, char* why,
             size_t why_size);
  /* Waits, up to the communicator's timeout, until key has a value; copies at most capacity
   * bytes of it to value and its whole size to *size. */
  int (*Get)(void* context, const char* key, void* value, size_t capacity, size_t* size, char* why,
             size_t why_size);
} infinicclBackendStore;

typedef struct infinicclBackendTable {
  size_t struct_size; /* sizeof(infinicclBackendTable) as the engine was built */
  int abi_major;      /* INFINICCL_BACKEND_ABI_MAJOR */
  int abi_minor;
  const char* name;          /* "cpu", "nccl", ... (the file's libinfiniccl_<name>.so) */
  unsigned int device_types; /* a bit (1u << type) per infiniDevice_t it serves */

  /* Called once, after loading. On failure, why says what is missing (it is listed). */
  infiniStatus_t (*Initialize)(char* why, size_t why_size);

  /* One communicator per rank, rank i on InfiniRT device ordinals[i] (distinct, of a type the
   * engine serves). timeout_ms: how long a call may wait for the other ranks (> 0). */
  infiniStatus_t (*CommInitAll)(int nranks, const int* ordinals, long timeout_ms,
                                infinicclBackendComm_t* comms, char* why, size_t why_size);

  /* Waits for the rank's queued work, then releases it. */
  infiniStatus_t (*CommDestroy)(infinicclBackendComm_t comm);

  /* Fails the rank's waiting and later calls, without waiting for the other ranks; the engine
   * then releases the rank as CommDestroy does. */
  infiniStatus_t (*CommAbort)(infinicclBackendComm_t comm);

  /* Queues one call of one rank on `stream` (of the rank's device). Inside a group it may only
   * be noted, and queued at the group's end. */
  infiniStatus_t (*Call)(infinicclBackendComm_t comm, const infinicclBackendCall* call,
                         infinirtStream_t stream, char* why, size_t why_size);

  /* The calling thread's group (nested: only the outermost GroupEnd issues). */
  infiniStatus_t (*GroupStart)(void);
  infiniStatus_t (*GroupEnd)(char* why, size_t why_size);

  /* Since ABI 1.1 (NULL: the engine has no communicators across processes). One rank of nranks,
   * on InfiniRT device `ordinal`, meeting the others through `store`; returns once every rank has
   * joined, or fails after timeout_ms. The CPU engine also takes ranks on devices of other types
   * (their buffers staged through host memory): libinfiniccl sends it the ranks of a job whose
   * devices are of several types or whose type has no engine here. */
  infiniStatus_t (*CommInitRank)(int nranks, int rank, int ordinal, long timeout_ms,
                                 const infinicclBackendStore* store, infinicclBackendComm_t* comm,
                                 char* why, size_t why_size);

  /* Since ABI 1.1 (NULL: the engine reports failures at the calls only). Whether work already
   * queued for the rank failed after its call returned (a rank of another process died, the
   * timeout passed): *status is SUCCESS, or the failure, which every later call of the rank
   * answers too; why says what happened. */
  infiniStatus_t (*CommGetAsyncError)(infinicclBackendComm_t comm, infiniStatus_t* status,
                                      char* why, size_t why_size);
} infinicclBackendTable;

typedef const infinicclBackendTable* (*infinicclBackendGetTableFn)(void);

/* Whether a call kind reduces (takes an op). */
static inline int infinicclCallReduces(infinicclCallKind_t kind) {
  switch (kind) {
#define INFINICCL_CALL_REDUCES_(name, reduces) \
  case INFINICCL_CALL_##name:                  \
    return reduces;
    INFINICCL_CALLS(INFINICCL_CALL_REDUCES_)
#undef INFINICCL_CALL_REDUCES_
    default:
      return 0;
  }
}

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* INFINICCL_BACKEND_H_ */
