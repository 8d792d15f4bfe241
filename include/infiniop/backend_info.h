/* InfiniRT's addition to InfiniCore's InfiniOP API: which operator backend serves a device type,
 * or why none does (what infinirt-info lists). */
#ifndef INFINIOP_BACKEND_INFO_H_
#define INFINIOP_BACKEND_INFO_H_

#include "../infinicore.h"
#include "../infinirt.h"

/* Loads the operator backend of a device type if that was not tried yet (as infiniopCreateHandle
 * does) and describes it in *info: status infinirtBackendLoaded with its path, or why it is
 * absent (infinirtBackendNotFound: no libinfiniop_<plugin name>.so), refused (Insecure,
 * DlopenFailed, NoEntryPoint, BadTable) or failed (InitFailed), with the reason. SUCCESS whenever
 * *info is filled, present or not; NULL_POINTER for a null info, BAD_PARAM for a value that is no
 * device type. */
__INFINI_C __export infiniStatus_t infiniopGetBackendInfo(infiniDevice_t device_type,
                                                          infinirtBackendProp* info);

#endif
