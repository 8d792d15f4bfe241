/* The descriptor every operator's descriptor type names: struct InfiniopDescriptor. */
#ifndef __INFINIOP_OPERATOR_DESCRIPTOR_API_H__
#define __INFINIOP_OPERATOR_DESCRIPTOR_API_H__

#include "handle.h"
#include "tensor_descriptor.h"

struct InfiniopDescriptor;

/* The device type and the device's index within its type, of the handle a descriptor was made
 * with. */
__INFINI_C __export infiniStatus_t infiniopGetDescriptorDeviceType(
    const struct InfiniopDescriptor* desc_ptr, infiniDevice_t* device_type);
__INFINI_C __export infiniStatus_t
infiniopGetDescriptorDeviceId(const struct InfiniopDescriptor* desc_ptr, int* device_id);

#endif
