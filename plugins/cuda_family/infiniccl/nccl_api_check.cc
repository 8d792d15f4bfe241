// Compile-time proof that the NCCL engine's declarations (nccl_api.h) are NCCL's: with the lists'
// type macros set to the real types, every entry must have the type of the function of that name
// in the real nccl.h, and every number must be the header's. Compiled only where nccl.h is
// installed beside the CUDA Toolkit's headers; nothing of it is linked. (The vendors' own headers,
// mccl.h and RCCL's, are not checked: their numbers are assumed to be NCCL's.)
#include <nccl.h>

#include <type_traits>

#define NCCL_API_COMM ncclComm_t
#define NCCL_API_STREAM cudaStream_t
#define NCCL_API_RESULT ncclResult_t
#define NCCL_API_DATA_TYPE ncclDataType_t
#define NCCL_API_RED_OP ncclRedOp_t
#define NCCL_API_UNIQUE_ID ncclUniqueId
#include "nccl_api.h"

#define NCCL_CHECK_FUNCTION_(ret, name, params)                       \
  static_assert(std::is_same_v<decltype(&nccl##name), ret(*) params>, \
                "nccl" #name ": the engine's declaration disagrees with nccl.h");
NCCL_REQUIRED_FUNCTIONS(NCCL_CHECK_FUNCTION_)
NCCL_OPTIONAL_FUNCTIONS(NCCL_CHECK_FUNCTION_)
#undef NCCL_CHECK_FUNCTION_

// The engine calls through pointers with plain C types: the substitutions must keep the calling
// convention, and the id is passed by value as 128 bytes.
static_assert(sizeof(ncclResult_t) == sizeof(int) && sizeof(ncclDataType_t) == sizeof(int) &&
              sizeof(ncclRedOp_t) == sizeof(int));
static_assert(std::is_pointer_v<ncclComm_t> && std::is_pointer_v<cudaStream_t>);
static_assert(NCCL_UNIQUE_ID_BYTES == 128 && sizeof(ncclUniqueId) == sizeof(NcclUniqueIdBytes) &&
              std::is_trivially_copyable_v<ncclUniqueId>);

namespace nccl = infiniccl_nccl;
static_assert(nccl::kNcclSuccess == ncclSuccess &&
              nccl::kNcclUnhandledCudaError == ncclUnhandledCudaError &&
              nccl::kNcclSystemError == ncclSystemError &&
              nccl::kNcclInternalError == ncclInternalError &&
              nccl::kNcclInvalidArgument == ncclInvalidArgument &&
              nccl::kNcclInvalidUsage == ncclInvalidUsage &&
              nccl::kNcclRemoteError == ncclRemoteError && nccl::kNcclInProgress == ncclInProgress);
static_assert(nccl::kNcclInt8 == ncclInt8 && nccl::kNcclUint8 == ncclUint8 &&
              nccl::kNcclInt32 == ncclInt32 && nccl::kNcclUint32 == ncclUint32 &&
              nccl::kNcclInt64 == ncclInt64 && nccl::kNcclUint64 == ncclUint64 &&
              nccl::kNcclFloat16 == ncclFloat16 && nccl::kNcclFloat32 == ncclFloat32 &&
              nccl::kNcclFloat64 == ncclFloat64 && nccl::kNcclBfloat16 == ncclBfloat16);
static_assert(nccl::kNcclSum == ncclSum && nccl::kNcclProd == ncclProd &&
              nccl::kNcclMax == ncclMax && nccl::kNcclMin == ncclMin && nccl::kNcclAvg == ncclAvg);
// The header this is checked against is at least the release the version gate names.
static_assert(NCCL_VERSION_CODE >= nccl::kNcclVersionWithBfloat16AndAvg &&
              NCCL_VERSION(2, 10, 3) == nccl::kNcclVersionWithBfloat16AndAvg);
