// One translation for the vendors whose runtime is the CUDA Runtime under another prefix (cuda*,
// musa*, mc*, hc*, ...): the rows of the vendor table, config/vendors.json, whose family is
// cuda_family. A vendor is a CudaFamilySpec: its name, device type, library candidates (its row's
// runtime section), symbol prefixes and enum values. plugins/<vendor>/ holds only that spec
// (plugins/<vendor>/<vendor>_spec.cc); cuda_family_plugin.cc is the plugin.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_CUDA_FAMILY_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_CUDA_FAMILY_H_

#include "infinirt.h"

namespace infinirt::cuda_family {

// The vendor's numeric values for what InfiniRT passes through. CUDA's own values where the
// vendor is CUDA-numbered; see docs/vendor-runtimes.md for which are confirmed.
struct CudaFamilyEnums {
  int memcpy_kind[5];  // indexed by infinirtMemcpyKind: H2H, H2D, D2H, D2D, Default
  unsigned int stream_non_blocking;
  unsigned int event_blocking_sync;
  unsigned int event_disable_timing;
  unsigned int event_interprocess;
  unsigned int host_alloc_portable;
  unsigned int host_alloc_mapped;
  unsigned int host_alloc_write_combined;
  int capture_mode_relaxed;
};

// A library file whose name contains `library_part` uses `prefix` (MetaX: libhcruntime -> hc).
struct PrefixRule {
  const char* library_part;
  const char* prefix;
};

struct CudaFamilySpec {
  const char* name;  // plugin name: libinfinirt_<name>.so
  infiniDevice_t device_type;
  const char* vendor_key;  // its row of config/vendors.json (its runtime section)
  const char* default_prefix;
  PrefixRule prefix_rules[2];  // checked in order; {nullptr, nullptr} ends the list
  CudaFamilyEnums enums;
  // True only where the runtime is verified to accept CUDA's handles for the legacy and
  // per-thread default streams (cudaStreamLegacy = 0x1, cudaStreamPerThread = 0x2): a runtime
  // that does not know them would take them for a stream object, a bogus pointer. Otherwise the
  // legacy stream is NULL (the default stream of a runtime called through its base symbol
  // names) and the plugin gives each thread a blocking stream of its own as its per-thread one.
  bool cuda_special_streams;
  // True where the runtime's error numbers are CUDA's (used when it cannot name an error).
  bool cuda_error_numbers;
  // True where the numbering of device attributes is verified to be CUDA's. Otherwise the
  // plugin checks a few attributes against its properties struct at start-up (attribute
  // numbering self-check in cuda_family_loading.cc) and refuses attributes on disagreement.
  bool attribute_numbers_verified;
  // The driver library the runtime needs (NVIDIA: libcuda.so.1), or nullptr where unknown. When
  // the runtime says the driver is missing or too old, the plugin opens it to tell which.
  const char* driver_library;
};

// CUDA's values, shared by the CUDA-numbered vendors.
constexpr CudaFamilyEnums kCudaEnums = {
    {0, 1, 2, 3, 4}, 0x01, 0x01, 0x02, 0x04, 0x01, 0x02, 0x04, 2,
};

// Where cudaDeviceProp holds the numbers the attribute numbering self-check compares, in CUDA
// 12's layout and in CUDA 13's (which dropped deviceOverlap, just before multiProcessorCount).
// cuda_prototype_check.cc proves CUDA 13's against its header.
struct DevicePropOffsets {
  unsigned warp_size;
  unsigned major;
  unsigned minor;
  unsigned multiprocessor_count;
};
constexpr DevicePropOffsets kCuda12PropOffsets = {308, 360, 364, 388};
constexpr DevicePropOffsets kCuda13PropOffsets = {308, 360, 364, 384};

// Defined by each vendor's folder (plugins/<vendor>/<vendor>_spec.cc).
const CudaFamilySpec& ThisVendor();

}  // namespace infinirt::cuda_family

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_CUDA_FAMILY_H_
