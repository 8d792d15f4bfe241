/*
 * The types that InfiniCore's libraries share, with InfiniCore's names and numbers: device types
 * (infiniDevice_t), status codes (infiniStatus_t) and data types (infiniDtype_t). InfiniRT's
 * infinirt.h, infiniop.h and infiniccl.h all take them from here. Valid C99 and C++17.
 *
 * A program may also see InfiniCore's own infinicore.h, which declares the same enums with the
 * same values under the include guard __INFINICORE_API_H__ (and, in older versions, per-enum
 * guards __INFINI_DEVICE__ and __INFINI_DTYPE__). The declarations below sit under the same
 * guards: whichever header comes first declares each enum once, and the other steps aside.
 * InfiniRT's own lists (INFINIRT_DEVICE_TYPES and the like) are always defined.
 */
#ifndef INFINIRT_INFINICORE_H_
#define INFINIRT_INFINICORE_H_

#include <stddef.h>

/* In C++ every InfiniRT enum has int as its fixed underlying type, so that any int a caller
 * passes (a bad memcpy kind, an unknown attribute) is a valid value that the library can reject
 * with an error code, rather than undefined behaviour. In C an enum is an int already. */
#ifdef __cplusplus
#define INFINIRT_ENUM_BASE : int
#else
#define INFINIRT_ENUM_BASE
#endif

/* ---------------------------------------------------------------------------------------------
 * Device types: the one list for C and C++. X(enumerator suffix, value, display name, plugin
 * name): X(NVIDIA, 1, "NVIDIA", nvidia) is INFINI_DEVICE_NVIDIA = 1, shown as "NVIDIA", served by
 * the plugin libinfinirt_nvidia.so (#plugin gives its name as a string). The values are
 * InfiniCore's numbering, consecutive from 0. Generated from the vendor table, config/vendors.json,
 * by tests/tools/vendor_table.cc: edit the table, then run vendor_table --write <source root>
 * (vendor_table_device_types_check fails until the two agree).
 * ------------------------------------------------------------------------------------------- */
#define INFINIRT_DEVICE_TYPES(X)          \
  X(CPU, 0, "CPU", cpu)                   \
  X(NVIDIA, 1, "NVIDIA", nvidia)          \
  X(CAMBRICON, 2, "Cambricon", cambricon) \
  X(ASCEND, 3, "Ascend", ascend)          \
  X(METAX, 4, "MetaX", metax)             \
  X(MOORE, 5, "Moore Threads", moore)     \
  X(ILUVATAR, 6, "Iluvatar", iluvatar)    \
  X(KUNLUN, 7, "Kunlun", kunlun)          \
  X(HYGON, 8, "Hygon", hygon)

/* Status codes: X(suffix, value, description). X(BAD_PARAM, 3, ...) is INFINI_STATUS_BAD_PARAM. */
#define INFINIRT_STATUS_LIST(X)                                                \
  X(SUCCESS, 0, "success")                                                     \
  X(INTERNAL_ERROR, 1, "internal error")                                       \
  X(NOT_IMPLEMENTED, 2, "not implemented")                                     \
  X(BAD_PARAM, 3, "bad parameter")                                             \
  X(NULL_POINTER, 4, "null pointer")                                           \
  X(DEVICE_TYPE_NOT_SUPPORTED, 5, "device type not supported")                 \
  X(DEVICE_NOT_FOUND, 6, "device not found")                                   \
  X(DEVICE_NOT_INITIALIZED, 7, "device not initialized")                       \
  X(DEVICE_ARCHITECTURE_NOT_SUPPORTED, 8, "device architecture not supported") \
  X(BAD_TENSOR_DTYPE, 10, "bad tensor data type")                              \
  X(BAD_TENSOR_SHAPE, 11, "bad tensor shape")                                  \
  X(BAD_TENSOR_STRIDES, 12, "bad tensor strides")                              \
  X(INSUFFICIENT_WORKSPACE, 13, "insufficient workspace")

/* Data types: X(suffix, value, size in bytes). X(F16, 12, 2) is INFINI_DTYPE_F16, 2 bytes; INVALID
 * has no size (0). */
#define INFINIRT_DTYPE_LIST(X) \
  X(INVALID, 0, 0)             \
  X(BYTE, 1, 1)                \
  X(BOOL, 2, 1)                \
  X(I8, 3, 1)                  \
  X(I16, 4, 2)                 \
  X(I32, 5, 4)                 \
  X(I64, 6, 8)                 \
  X(U8, 7, 1)                  \
  X(U16, 8, 2)                 \
  X(U32, 9, 4)                 \
  X(U64, 10, 8)                \
  X(F8, 11, 1)                 \
  X(F16, 12, 2)                \
  X(F32, 13, 4)                \
  X(F64, 14, 8)                \
  X(C16, 15, 2)                \
  X(C32, 16, 4)                \
  X(C64, 17, 8)                \
  X(C128, 18, 16)              \
  X(BF16, 19, 2)

#ifndef __INFINICORE_API_H__
#define __INFINICORE_API_H__

/* InfiniCore's linkage and export markers, for headers written against its infinicore.h. */
#ifndef __export
#if defined(_WIN32)
#define __export __declspec(dllexport)
#else
#define __export __attribute__((visibility("default")))
#endif
#endif
#ifndef __C
#ifdef __cplusplus
#define __C extern "C"
#else
#define __C
#endif
#endif
#ifndef __INFINI_C
#define __INFINI_C __C
#endif

/* clang-format off */
#ifndef __INFINI_DEVICE__
#define __INFINI_DEVICE__
#define INFINIRT_DEVICE_ENUMERATOR_(name, value, display, plugin) INFINI_DEVICE_##name = value,
typedef enum INFINIRT_ENUM_BASE {
  INFINIRT_DEVICE_TYPES(INFINIRT_DEVICE_ENUMERATOR_)
  INFINI_DEVICE_TYPE_COUNT /* one past the last value, as the values are consecutive */
} infiniDevice_t;
#undef INFINIRT_DEVICE_ENUMERATOR_
#endif

#define INFINIRT_STATUS_ENUMERATOR_(name, value, description) INFINI_STATUS_##name = value,
typedef enum INFINIRT_ENUM_BASE {
  INFINIRT_STATUS_LIST(INFINIRT_STATUS_ENUMERATOR_)
} infiniStatus_t;
#undef INFINIRT_STATUS_ENUMERATOR_

#ifndef __INFINI_DTYPE__
#define __INFINI_DTYPE__
#define INFINIRT_DTYPE_ENUMERATOR_(name, value, size) INFINI_DTYPE_##name = value,
typedef enum INFINIRT_ENUM_BASE {
  INFINIRT_DTYPE_LIST(INFINIRT_DTYPE_ENUMERATOR_)
} infiniDtype_t;
#undef INFINIRT_DTYPE_ENUMERATOR_
#endif

typedef enum INFINIRT_ENUM_BASE {
  INFINIOP_ATTENTION_MASK_TYPE_NONE = 0,
  INFINIOP_ATTENTION_MASK_TYPE_FULL = 1,
  INFINIOP_ATTENTION_MASK_TYPE_CAUSAL = 2
} infiniopAttentionMaskType_t;
/* clang-format on */

#endif /* __INFINICORE_API_H__ */

/* The bytes of one element of a dtype; 0 for INVALID and for a value that is no dtype. */
static inline size_t infinirtDtypeSize(infiniDtype_t dtype) {
  switch (dtype) {
#define INFINIRT_DTYPE_SIZE_(name, value, size) \
  case INFINI_DTYPE_##name:                     \
    return size;
    INFINIRT_DTYPE_LIST(INFINIRT_DTYPE_SIZE_)
#undef INFINIRT_DTYPE_SIZE_
    default:
      return 0;
  }
}

#endif /* INFINIRT_INFINICORE_H_ */
