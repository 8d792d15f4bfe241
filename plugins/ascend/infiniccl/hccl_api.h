// The HCCL functions and numbers the HCCL engine uses, declared here: no CANN SDK is needed to
// build it. X(return type, name, parameters); the symbol is the name.
//
// Verified against CANN's public hccl.h and hccl_types.h (CANN Open Software, 2024-2025), as
// vendored by Ascend/pytorch (third_party/hccl/inc/hccl/, commits 00ac88a9 and b460dfb9):
// every prototype, HcclResult, HcclDataType, HcclReduceOp, HCCL_ROOT_INFO_BYTES (4108). Older
// CANN releases lack some of the optional functions (the group calls are the newest), which is
// why they are optional. The types are plain C types here: HcclComm and aclrtStream are
// pointers, the enums int, uint64_t counts, uint32_t ranks, as in the header. hccl_api_check.cc,
// compiled where hccl.h is installed, proves them equal to the real header's.
#ifndef INFINIRT_PLUGINS_ASCEND_INFINICCL_HCCL_API_H_
#define INFINIRT_PLUGINS_ASCEND_INFINICCL_HCCL_API_H_

#include <stdint.h>

// HcclRootInfo: HCCL_ROOT_INFO_BYTES (4108) opaque bytes.
struct HcclRootInfoBytes {
  char internal[4108];
};

#ifndef HCCL_API_COMM
#define HCCL_API_COMM void*
#define HCCL_API_STREAM void*
#define HCCL_API_RESULT int
#define HCCL_API_DATA_TYPE int
#define HCCL_API_REDUCE_OP int
#define HCCL_API_ROOT_INFO HcclRootInfoBytes
#endif

// Every libhccl.so has these (X(required, return type, name, parameters)).
#define HCCL_FUNCTIONS(X)                                                                       \
  X(true, HCCL_API_RESULT, HcclGetRootInfo, (HCCL_API_ROOT_INFO * rootInfo))                    \
  X(true, HCCL_API_RESULT, HcclCommInitRootInfo,                                                \
    (uint32_t nRanks, const HCCL_API_ROOT_INFO* rootInfo, uint32_t rank, HCCL_API_COMM* comm))  \
  X(true, HCCL_API_RESULT, HcclCommInitAll,                                                     \
    (uint32_t ndev, int32_t * devices, HCCL_API_COMM * comms))                                  \
  X(true, HCCL_API_RESULT, HcclCommDestroy, (HCCL_API_COMM comm))                               \
  X(true, HCCL_API_RESULT, HcclAllReduce,                                                       \
    (void* sendBuf, void* recvBuf, uint64_t count, HCCL_API_DATA_TYPE dataType,                 \
     HCCL_API_REDUCE_OP op, HCCL_API_COMM comm, HCCL_API_STREAM stream))                        \
  X(true, HCCL_API_RESULT, HcclBroadcast,                                                       \
    (void* buf, uint64_t count, HCCL_API_DATA_TYPE dataType, uint32_t root, HCCL_API_COMM comm, \
     HCCL_API_STREAM stream))                                                                   \
  X(true, HCCL_API_RESULT, HcclReduce,                                                          \
    (void* sendBuf, void* recvBuf, uint64_t count, HCCL_API_DATA_TYPE dataType,                 \
     HCCL_API_REDUCE_OP op, uint32_t root, HCCL_API_COMM comm, HCCL_API_STREAM stream))         \
  X(true, HCCL_API_RESULT, HcclAllGather,                                                       \
    (void* sendBuf, void* recvBuf, uint64_t sendCount, HCCL_API_DATA_TYPE dataType,             \
     HCCL_API_COMM comm, HCCL_API_STREAM stream))                                               \
  X(true, HCCL_API_RESULT, HcclReduceScatter,                                                   \
    (void* sendBuf, void* recvBuf, uint64_t recvCount, HCCL_API_DATA_TYPE dataType,             \
     HCCL_API_REDUCE_OP op, HCCL_API_COMM comm, HCCL_API_STREAM stream))                        \
  X(true, HCCL_API_RESULT, HcclSend,                                                            \
    (void* sendBuf, uint64_t count, HCCL_API_DATA_TYPE dataType, uint32_t destRank,             \
     HCCL_API_COMM comm, HCCL_API_STREAM stream))                                               \
  X(true, HCCL_API_RESULT, HcclRecv,                                                            \
    (void* recvBuf, uint64_t count, HCCL_API_DATA_TYPE dataType, uint32_t srcRank,              \
     HCCL_API_COMM comm, HCCL_API_STREAM stream))                                               \
  X(false, const char*, HcclGetErrorString, (HCCL_API_RESULT code))                             \
  X(false, HCCL_API_RESULT, HcclGetCommAsyncError,                                              \
    (HCCL_API_COMM comm, HCCL_API_RESULT * asyncError))                                         \
  X(false, HCCL_API_RESULT, HcclGroupStart, (void))                                             \
  X(false, HCCL_API_RESULT, HcclGroupEnd, (void))

namespace infiniccl_hccl {

// HcclResult (those the engine tells apart; the rest are failures of the library or system).
constexpr int kHcclSuccess = 0;
constexpr int kHcclParameterError = 1;  // HCCL_E_PARA
constexpr int kHcclNullPointer = 2;     // HCCL_E_PTR
constexpr int kHcclNotSupported = 5;    // HCCL_E_NOT_SUPPORT
constexpr int kHcclInternal = 4;        // HCCL_E_INTERNAL
constexpr int kHcclTimeout = 9;         // HCCL_E_TIMEOUT
constexpr int kHcclRemote = 21;         // HCCL_E_REMOTE

// HcclDataType.
constexpr int kHcclInt8 = 0;
constexpr int kHcclInt16 = 1;
constexpr int kHcclInt32 = 2;
constexpr int kHcclFp16 = 3;
constexpr int kHcclFp32 = 4;
constexpr int kHcclInt64 = 5;
constexpr int kHcclUint64 = 6;
constexpr int kHcclUint8 = 7;
constexpr int kHcclUint16 = 8;
constexpr int kHcclUint32 = 9;
constexpr int kHcclFp64 = 10;
constexpr int kHcclBfp16 = 11;

// HcclReduceOp: no average (HCCL_REDUCE_RESERVED follows MIN).
constexpr int kHcclReduceSum = 0;
constexpr int kHcclReduceProd = 1;
constexpr int kHcclReduceMax = 2;
constexpr int kHcclReduceMin = 3;

}  // namespace infiniccl_hccl

#endif  // INFINIRT_PLUGINS_ASCEND_INFINICCL_HCCL_API_H_
