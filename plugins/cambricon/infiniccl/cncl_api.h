// The CNCL functions and numbers the CNCL engine uses, declared here: no Neuware SDK is needed to
// build it. X(required, return type, name, parameters); the symbol is the name.
//
// Verified against a public copy of Cambricon's cncl.h for CNCL 1.25.0 (copyright 2019-2025):
// every prototype, cnclResult_t, cnclDataType_t, cnclReduceOp_t, cnclCliqueId (128 bytes of
// data and a uint64_t hash). Which releases added the optional functions is not known here:
// cnclAbortComm, cnclGetCommAsyncError and the group calls are used where present. The types are
// plain C types: cnclComm_t and cnrtQueue_t are pointers, the enums int.
#ifndef INFINIRT_PLUGINS_CAMBRICON_INFINICCL_CNCL_API_H_
#define INFINIRT_PLUGINS_CAMBRICON_INFINICCL_CNCL_API_H_

#include <stddef.h>
#include <stdint.h>

// cnclCliqueId: CNCL_CLIQUE_ID_BYTES_SIZE (128) bytes and a hash.
struct CnclCliqueIdBytes {
  char data[128];
  uint64_t hash;
};

#ifndef CNCL_API_COMM
#define CNCL_API_COMM void*
#define CNCL_API_QUEUE void*
#define CNCL_API_RESULT int
#define CNCL_API_DATA_TYPE int
#define CNCL_API_REDUCE_OP int
#define CNCL_API_CLIQUE_ID CnclCliqueIdBytes
#endif

#define CNCL_FUNCTIONS(X)                                                                       \
  X(true, CNCL_API_RESULT, cnclInitComms,                                                       \
    (CNCL_API_COMM * comms, int num_comm, const int* dev_list, const int* rank_list, int nrank, \
     CNCL_API_CLIQUE_ID* clique_id))                                                            \
  X(true, CNCL_API_RESULT, cnclGetCliqueId, (CNCL_API_CLIQUE_ID * clique_id))                   \
  X(true, CNCL_API_RESULT, cnclFreeComm, (CNCL_API_COMM comm))                                  \
  X(true, CNCL_API_RESULT, cnclAllReduce,                                                       \
    (const void* send_buffer, void* recv_buffer, size_t count, CNCL_API_DATA_TYPE data_type,    \
     CNCL_API_REDUCE_OP reduce_op, CNCL_API_COMM comm, CNCL_API_QUEUE queue))                   \
  X(true, CNCL_API_RESULT, cnclBroadcast,                                                       \
    (const void* send_buffer, void* recv_buffer, size_t count, CNCL_API_DATA_TYPE data_type,    \
     int root, CNCL_API_COMM comm, CNCL_API_QUEUE queue))                                       \
  X(true, CNCL_API_RESULT, cnclReduce,                                                          \
    (const void* send_buffer, void* recv_buffer, size_t count, CNCL_API_DATA_TYPE data_type,    \
     CNCL_API_REDUCE_OP reduce_op, int root, CNCL_API_COMM comm, CNCL_API_QUEUE queue))         \
  X(true, CNCL_API_RESULT, cnclAllGather,                                                       \
    (const void* send_buffer, void* recv_buffer, size_t count, CNCL_API_DATA_TYPE data_type,    \
     CNCL_API_COMM comm, CNCL_API_QUEUE queue))                                                 \
  X(true, CNCL_API_RESULT, cnclReduceScatter,                                                   \
    (const void* send_buffer, void* recv_buffer, size_t count, CNCL_API_DATA_TYPE data_type,    \
     CNCL_API_REDUCE_OP reduce_op, CNCL_API_COMM comm, CNCL_API_QUEUE queue))                   \
  X(true, CNCL_API_RESULT, cnclSend,                                                            \
    (void* buffer, size_t count, CNCL_API_DATA_TYPE data_type, int dest, CNCL_API_COMM comm,    \
     CNCL_API_QUEUE queue))                                                                     \
  X(true, CNCL_API_RESULT, cnclRecv,                                                            \
    (void* buffer, size_t count, CNCL_API_DATA_TYPE data_type, int source, CNCL_API_COMM comm,  \
     CNCL_API_QUEUE queue))                                                                     \
  X(true, const char*, cnclGetErrorStr, (CNCL_API_RESULT ret))                                  \
  X(false, CNCL_API_RESULT, cnclAbortComm, (CNCL_API_COMM comm))                                \
  X(false, CNCL_API_RESULT, cnclGetCommAsyncError, (CNCL_API_COMM comm))                        \
  X(false, CNCL_API_RESULT, cnclGroupStart, (void))                                             \
  X(false, CNCL_API_RESULT, cnclGroupEnd, (void))

namespace infiniccl_cncl {

// cnclResult_t (those the engine tells apart).
constexpr int kCnclSuccess = 0x0;
constexpr int kCnclInternal = 0x01;
constexpr int kCnclUnsupported = 0x11;
constexpr int kCnclNullPointer = 0x21;
constexpr int kCnclSystem = 0x02;
constexpr int kCnclAsyncInProgress = 0x06;
constexpr int kCnclAsyncError = 0x16;
constexpr int kCnclArguments = 0x07;

// cnclDataType_t: no 64-bit float.
constexpr int kCnclFloat16 = 0x10;
constexpr int kCnclBfloat16 = 0x11;
constexpr int kCnclFloat32 = 0x12;
constexpr int kCnclInt8 = 0x20;
constexpr int kCnclInt16 = 0x21;
constexpr int kCnclInt32 = 0x22;
constexpr int kCnclInt64 = 0x23;
constexpr int kCnclUint8 = 0x30;
constexpr int kCnclUint16 = 0x31;
constexpr int kCnclUint32 = 0x32;
constexpr int kCnclUint64 = 0x33;

// cnclReduceOp_t: no average.
constexpr int kCnclSum = 0;
constexpr int kCnclProd = 1;
constexpr int kCnclMax = 2;
constexpr int kCnclMin = 3;

}  // namespace infiniccl_cncl

#endif  // INFINIRT_PLUGINS_CAMBRICON_INFINICCL_CNCL_API_H_
