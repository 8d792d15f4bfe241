// The NCCL engine's vendor libraries: one NCCL-shaped library per CUDA-family device type
// (config/vendors.json), found with the runtime plugins' discovery (candidate lists,
// ${VAR} and globs, the INFINICCL_<VENDOR>_LIBRARY override: plugins/common/vendor_library.h),
// opened with dlopen, never closed.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_LIBRARIES_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_LIBRARIES_H_

#include <string>

#include "infinicore.h"
#include "nccl_api.h"
#include "nccl_libraries_data.h"

namespace infiniccl_nccl {

// A library's functions; the optional ones are null where the library lacks them.
struct NcclFunctions {
#define NCCL_FUNCTION_POINTER_(ret, name, params) ret(*name) params = nullptr;
  NCCL_REQUIRED_FUNCTIONS(NCCL_FUNCTION_POINTER_)
  NCCL_OPTIONAL_FUNCTIONS(NCCL_FUNCTION_POINTER_)
#undef NCCL_FUNCTION_POINTER_
};

struct NcclLibrary {
  const CollectiveLibraryData* data = nullptr;
  bool loaded = false;
  std::string path;  // the file opened
  std::string why;   // why it is not loaded (what was looked for, what dlopen said)
  int version = -1;  // its NCCL_VERSION_CODE; -1 when it cannot say
  std::string name;  // for messages, with its version: "NCCL (version 21003)", "(version unknown)"
  NcclFunctions fn;

  // The name of one of its functions: "mcclAllReduce" for "AllReduce".
  std::string Symbol(const char* name) const { return data->symbol_prefix + std::string(name); }
  // Whether it has ncclBfloat16 and ncclAvg (assumed so when it cannot say its version).
  bool HasBfloat16AndAvg() const {
    return version < 0 || version >= kNcclVersionWithBfloat16AndAvg;
  }
};

// Opens the library of every device type served that has InfiniRT devices. False, with why naming
// what was looked for, when none opened (or no such device is present).
bool LoadLibraries(std::string* why);

// The library of a device type, or null with why (absent, or a type the engine does not serve).
const NcclLibrary* LibraryFor(infiniDevice_t type, std::string* why);

// The device types the engine serves, as the table's bit mask: those of the data.
constexpr unsigned ServedDeviceTypes() {
  unsigned mask = 0;
  for (const CollectiveLibraryData& entry : kCollectiveLibraries) {
    mask |= 1u << static_cast<unsigned>(entry.device_type);
  }
  return mask;
}

// "NVIDIA", "MetaX", ... (infinicore.h's display names).
const char* DeviceTypeName(infiniDevice_t type);

}  // namespace infiniccl_nccl

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINICCL_NCCL_LIBRARIES_H_
