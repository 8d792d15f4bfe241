// Every environment variable the core reads, with what it does: the one list. GetEnv (env.h)
// takes only these, and infinirt-info --help prints them (the plugins' INFINIRT_<VENDOR>_RUNTIME
// variables come from config/vendors.json). X(name, value syntax, what it does).
#ifndef INFINIRT_CORE_ENV_VARIABLES_H_
#define INFINIRT_CORE_ENV_VARIABLES_H_

#define INFINIRT_CORE_ENVIRONMENT(X)                                                          \
  X(INFINIRT_PLUGIN_PATH, "DIR|FILE[:...]",                                                   \
    "where to look for plugins (absolute paths), instead of infinirt/ beside libinfinirt.so " \
    "and the config file's plugin_search_paths")                                              \
  X(INFINIRT_BACKENDS, "NAME[,...]",                                                          \
    "load only these backends (cpu, nvidia, ...); overrides the config file's backends")      \
  X(INFINIRT_VISIBLE_DEVICES, "ORDINAL|BACKEND:INDEX[,...]",                                  \
    "expose only these devices, in this order (2, nvidia:1); empty hides every device")       \
  X(INFINIRT_LOG_LEVEL, "LEVEL",                                                              \
    "off, error, warn (the default), info, debug or trace; debug says why each call failed")  \
  X(INFINIRT_CONFIG, "FILE",                                                                  \
    "the JSON configuration file, instead of share/infinirt/infinirt.json beside lib/")       \
  X(INFINIRT_ALLOW_INSECURE_PLUGINS, "1",                                                     \
    "load plugins that another user could change (refused otherwise)")                        \
  X(INFINIRT_CPU_DEVICES, "N",                                                                \
    "the CPU backend exposes N devices (1 to 64, default 1); overrides plugins.cpu.devices")  \
  X(INFINIRT_CPU_SHAREABLE_MEMORY, "0|1",                                                     \
    "1: the CPU backend's Malloc gives memory other processes can open (infinirtIpc*); "      \
    "overrides plugins.cpu.shareable_memory")

#endif  // INFINIRT_CORE_ENV_VARIABLES_H_
