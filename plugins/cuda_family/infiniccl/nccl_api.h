// The NCCL functions and numbers the NCCL engine uses, declared here: no NCCL SDK is needed to
// build it. X(return type, name without the "nccl" prefix, parameters); a vendor's library has
// the same functions under its own prefix (mcclAllReduce), config/vendors.json.
//
// The parameter types are macros, as in plugins/cuda_family/infiniop/family_vendor_api.h: the
// engine sees plain C types (handles are pointers, enums int), and nccl_api_check.cc, compiled
// where nccl.h is installed, redefines them as NCCL's types and proves every entry and number
// equal to the real header's.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_API_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_API_H_

#include <stddef.h>

// ncclUniqueId: NCCL_UNIQUE_ID_BYTES (128) opaque bytes, passed by value.
struct NcclUniqueIdBytes {
  char internal[128];
};

#ifndef NCCL_API_COMM
#define NCCL_API_COMM void*
#define NCCL_API_STREAM void*
#define NCCL_API_RESULT int
#define NCCL_API_DATA_TYPE int
#define NCCL_API_RED_OP int
#define NCCL_API_UNIQUE_ID NcclUniqueIdBytes
#endif

// Every library must have these (NCCL 2.7 and later do: Send and Recv came with 2.7).
#define NCCL_REQUIRED_FUNCTIONS(X)                                                              \
  X(NCCL_API_RESULT, GetUniqueId, (NCCL_API_UNIQUE_ID * uniqueId))                              \
  X(NCCL_API_RESULT, CommInitRank,                                                              \
    (NCCL_API_COMM * comm, int nranks, NCCL_API_UNIQUE_ID commId, int rank))                    \
  X(NCCL_API_RESULT, CommInitAll, (NCCL_API_COMM * comm, int ndev, const int* devlist))         \
  X(NCCL_API_RESULT, CommDestroy, (NCCL_API_COMM comm))                                         \
  X(NCCL_API_RESULT, CommAbort, (NCCL_API_COMM comm))                                           \
  X(NCCL_API_RESULT, AllReduce,                                                                 \
    (const void* sendbuff, void* recvbuff, size_t count, NCCL_API_DATA_TYPE datatype,           \
     NCCL_API_RED_OP op, NCCL_API_COMM comm, NCCL_API_STREAM stream))                           \
  X(NCCL_API_RESULT, Broadcast,                                                                 \
    (const void* sendbuff, void* recvbuff, size_t count, NCCL_API_DATA_TYPE datatype, int root, \
     NCCL_API_COMM comm, NCCL_API_STREAM stream))                                               \
  X(NCCL_API_RESULT, Reduce,                                                                    \
    (const void* sendbuff, void* recvbuff, size_t count, NCCL_API_DATA_TYPE datatype,           \
     NCCL_API_RED_OP op, int root, NCCL_API_COMM comm, NCCL_API_STREAM stream))                 \
  X(NCCL_API_RESULT, AllGather,                                                                 \
    (const void* sendbuff, void* recvbuff, size_t sendcount, NCCL_API_DATA_TYPE datatype,       \
     NCCL_API_COMM comm, NCCL_API_STREAM stream))                                               \
  X(NCCL_API_RESULT, ReduceScatter,                                                             \
    (const void* sendbuff, void* recvbuff, size_t recvcount, NCCL_API_DATA_TYPE datatype,       \
     NCCL_API_RED_OP op, NCCL_API_COMM comm, NCCL_API_STREAM stream))                           \
  X(NCCL_API_RESULT, Send,                                                                      \
    (const void* sendbuff, size_t count, NCCL_API_DATA_TYPE datatype, int peer,                 \
     NCCL_API_COMM comm, NCCL_API_STREAM stream))                                               \
  X(NCCL_API_RESULT, Recv,                                                                      \
    (void* recvbuff, size_t count, NCCL_API_DATA_TYPE datatype, int peer, NCCL_API_COMM comm,   \
     NCCL_API_STREAM stream))                                                                   \
  X(NCCL_API_RESULT, GroupStart, (void))                                                        \
  X(NCCL_API_RESULT, GroupEnd, (void))                                                          \
  X(const char*, GetErrorString, (NCCL_API_RESULT result))

// Used where present: the version (bf16 and ncclAvg need 2.10.3), the last error's text (2.13),
// errors found after a call returned (2.4).
#define NCCL_OPTIONAL_FUNCTIONS(X)                   \
  X(NCCL_API_RESULT, GetVersion, (int* version))     \
  X(const char*, GetLastError, (NCCL_API_COMM comm)) \
  X(NCCL_API_RESULT, CommGetAsyncError, (NCCL_API_COMM comm, NCCL_API_RESULT * asyncError))

namespace infiniccl_nccl {

// ncclResult_t.
constexpr int kNcclSuccess = 0;
constexpr int kNcclUnhandledCudaError = 1;
constexpr int kNcclSystemError = 2;
constexpr int kNcclInternalError = 3;
constexpr int kNcclInvalidArgument = 4;
constexpr int kNcclInvalidUsage = 5;
constexpr int kNcclRemoteError = 6;
constexpr int kNcclInProgress = 7;

// ncclDataType_t.
constexpr int kNcclInt8 = 0;
constexpr int kNcclUint8 = 1;
constexpr int kNcclInt32 = 2;
constexpr int kNcclUint32 = 3;
constexpr int kNcclInt64 = 4;
constexpr int kNcclUint64 = 5;
constexpr int kNcclFloat16 = 6;
constexpr int kNcclFloat32 = 7;
constexpr int kNcclFloat64 = 8;
constexpr int kNcclBfloat16 = 9;

// ncclRedOp_t.
constexpr int kNcclSum = 0;
constexpr int kNcclProd = 1;
constexpr int kNcclMax = 2;
constexpr int kNcclMin = 3;
constexpr int kNcclAvg = 4;

// NCCL_VERSION_CODE of the release that added ncclBfloat16 and ncclAvg (2.10.3; codes from 2.9 on
// are major * 10000 + minor * 100 + patch, earlier ones smaller).
constexpr int kNcclVersionWithBfloat16AndAvg = 21003;

}  // namespace infiniccl_nccl

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_API_H_
