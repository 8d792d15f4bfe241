/* InfiniOP handles: one per device, made on the calling thread's current InfiniRT device. */
#ifndef __INFINIOP_HANDLE_API_H__
#define __INFINIOP_HANDLE_API_H__

#include "../infinicore.h"

struct InfiniopHandle;

typedef struct InfiniopHandle* infiniopHandle_t;

/* A handle for the calling thread's current device (infinirtGetDevice), served by that device
 * type's operator backend (libinfiniop_<plugin name>.so). NULL_POINTER for a null handle_ptr;
 * DEVICE_TYPE_NOT_SUPPORTED when no operator backend of that device type is present (infinirt-info
 * lists the reason). */
__INFINI_C __export infiniStatus_t infiniopCreateHandle(infiniopHandle_t* handle_ptr);

/* BAD_PARAM for a handle that is not live (destroyed already, or never made). */
__INFINI_C __export infiniStatus_t infiniopDestroyHandle(infiniopHandle_t handle);

#endif
