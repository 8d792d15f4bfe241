// The Cambricon plugin's table: every entry CambriconPlugin provides, guarded.
#include "cambricon_internal.h"

INFINIRT_DEFINE_PLUGIN_TABLE(
    infinirt::plugin::MakePluginTable<infinirt::cambricon::CambriconPlugin>(
        infinirt::cambricon::kPluginName, INFINI_DEVICE_CAMBRICON))
