/* A stand-in for InfiniCore's own infiniccl.h (tests only): the declarations it makes, as facts
 * recorded from InfiniCore's public header (its include guard, the operator names and values,
 * the communicator's struct tag, the three functions' prototypes), written out here so that the
 * coexistence test compiles against them. It is not InfiniCore's file. */
#ifndef __INFINICCL_API_H__
#define __INFINICCL_API_H__

#include <infinirt.h>

typedef enum {
  INFINICCL_SUM = 0,
  INFINICCL_PROD = 1,
  INFINICCL_MAX = 2,
  INFINICCL_MIN = 3,
  INFINICCL_AVG = 4,
} infinicclReduceOp_t;

struct InfinicclComm;
typedef struct InfinicclComm* infinicclComm_t;

__C __export infiniStatus_t infinicclCommInitAll(infiniDevice_t device_type, infinicclComm_t* comms,
                                                 int ndevice, const int* device_ids);
__C __export infiniStatus_t infinicclCommDestroy(infinicclComm_t comm);
__C __export infiniStatus_t infinicclAllReduce(void* sendbuf, void* recvbuf, size_t count,
                                               infiniDtype_t dataype, infinicclReduceOp_t op,
                                               infinicclComm_t comm, infinirtStream_t stream);

#endif
