// The Ascend plugin's table: every entry AscendPlugin provides, guarded.
#include "ascend_state.h"

INFINIRT_DEFINE_PLUGIN_TABLE(infinirt::plugin::MakePluginTable<infinirt::ascend::AscendPlugin>(
    "ascend", INFINI_DEVICE_ASCEND))
