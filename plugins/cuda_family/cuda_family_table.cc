// The CUDA-family plugin's table: every entry CudaFamilyPlugin provides, guarded.
#include "cuda_family_plugin.h"

INFINIRT_DEFINE_PLUGIN_TABLE(
    infinirt::plugin::MakePluginTable<infinirt::cuda_family::CudaFamilyPlugin>(
        infinirt::cuda_family::ThisVendor().name, infinirt::cuda_family::ThisVendor().device_type))
