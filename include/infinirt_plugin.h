/*
 * InfiniRT plugin ABI: the only header a plugin includes.
 *
 * A plugin is a shared library named libinfinirt_<name>.so that exports exactly one symbol,
 * infinirtPluginGetTable, returning a pointer to a static infinirtPluginTable. The core:
 *   - rejects a table whose abi_major differs from INFINIRT_PLUGIN_ABI_MAJOR;
 *   - reads only the entries that struct_size covers, so a plugin built against an older minor
 *     version keeps working (its missing entries answer infinirtErrorNotSupported);
 *   - treats a NULL entry as infinirtErrorNotSupported.
 * Entries are appended at the end of INFINIRT_PLUGIN_ENTRIES only, raising the minor version and
 * appending the new entry count to INFINIRT_PLUGIN_ABI_ENTRY_COUNTS (a CTest entry,
 * contract_plugin_abi_test, fails when the two disagree); removing, reordering or retyping one
 * raises the major version.
 *
 * Plugins never link the core or spdlog; they log through the host table handed to Initialize.
 * No C++ exception may leave an entry point.
 *
 * Initialize and Finalize: a repeated Initialize (no Finalize since the last successful one)
 * returns infinirtSuccess and changes nothing; the first host table stays in use. Finalize
 * without a successful Initialize returns infinirtSuccess. Initialize after Finalize starts
 * afresh. The core calls the other entries only in between, except GetSupport (any time).
 *
 * Stream capture is the core's: while a stream captures, the core records the work into a graph
 * and no entry sees it. GraphInstantiate receives the captured nodes; a plugin that leaves it
 * NULL still runs graphs, because the core then replays the nodes through the ordinary
 * asynchronous entries. GraphLaunch must order the work after prior work in the stream and
 * after the previous launch of the same exec.
 *
 * MemcpyAsync with kind infinirtMemcpyHostToHost must return with the copy done, as CUDA makes
 * host-to-host copies synchronous; where that is impossible (inside a host function) it refuses
 * before enqueuing anything.
 *
 * Device arguments are the plugin's own device indices (0 .. GetDeviceCount-1). Stream arguments
 * are the plugin's own handles, or INFINIRT_PLUGIN_STREAM_LEGACY / _PER_THREAD for the device's
 * legacy default stream and the calling thread's per-thread default stream. Before calling an
 * entry the core has validated every handle, pointer and flag that the public API documents.
 */
#ifndef INFINIRT_PLUGIN_H_
#define INFINIRT_PLUGIN_H_

#include "infinirt.h"

#ifdef __cplusplus
extern "C" {
#endif

/* 2.0: infinirtDeviceProp took CUDA 13's whole cudaDeviceProp layout (1.4's entries, unchanged
 * otherwise, with the device limit and cache-configuration entries appended).
 * 2.1: peer access (DeviceCanAccessPeer ... DeviceGetP2PAttribute), managed memory and advice,
 * stream attributes, memory pools (MemPoolCreate ... MemPoolGetAccess), Memcpy2DAsync and
 * Memset2DAsync, IPC handles, MemsetElementsAsync with the graph node kind
 * INFINIRT_GRAPH_NODE_MEMSET_ELEMENTS, and the shareable pool entries
 * (MemPoolExportToShareableHandle ... MemPoolImportPointer).
 * 2.2: LaunchHostWork (host work that may run in the caller when small). */
#define INFINIRT_PLUGIN_ABI_MAJOR 2
#define INFINIRT_PLUGIN_ABI_MINOR 2
/* How many entries of INFINIRT_PLUGIN_ENTRIES each minor version of this major has, minor 0
 * first: a table of minor m has the first INFINIRT_PLUGIN_ABI_ENTRY_COUNTS[m] entries. */
#define INFINIRT_PLUGIN_ABI_ENTRY_COUNTS 52, 81, 82

#define INFINIRT_PLUGIN_ENTRY_SYMBOL "infinirtPluginGetTable"

typedef void* infinirtPluginStream_t;
typedef void* infinirtPluginEvent_t;
typedef void* infinirtPluginGraphExec_t;
typedef void* infinirtPluginMemPool_t;

#define INFINIRT_PLUGIN_STREAM_LEGACY ((infinirtPluginStream_t)0x1)
#define INFINIRT_PLUGIN_STREAM_PER_THREAD ((infinirtPluginStream_t)0x2)

typedef enum INFINIRT_ENUM_BASE {
  INFINIRT_LOG_TRACE = 0,
  INFINIRT_LOG_DEBUG = 1,
  INFINIRT_LOG_INFO = 2,
  INFINIRT_LOG_WARN = 3,
  INFINIRT_LOG_ERROR = 4
} infinirtLogLevel_t;

/* What the core hands a plugin's Initialize entry. Valid until Finalize returns. */
typedef struct infinirtPluginHost {
  size_t struct_size;
  uint32_t abi_major;
  uint32_t abi_minor;
  /* Logs a message through the core's logger; plugin is the plugin's name. */
  void (*log)(infinirtLogLevel_t level, const char* plugin, const char* message);
  /* The plugin's section of the configuration file as JSON text ("{}" when absent). */
  const char* config_json;
  /* Since ABI 1.1 (a plugin checks struct_size before reading it). Nonzero only when
   * dlopen(name) called from the plugin would certainly fail for want of a file: name is a bare
   * file name (no '/') that the dynamic loader finds in no directory it searches, no entry of
   * its cache and no loaded object. The plugin may then skip that dlopen, whose message would
   * be "<name>: cannot open shared object file: No such file or directory". 0 when the file may
   * exist or the core cannot tell. It answers only during Initialize, on the thread the core
   * calls Initialize on (0 elsewhere). */
  int (*library_certainly_absent)(const char* name);
} infinirtPluginHost;

/* What a plugin reports about itself for the backend listing. The core zero-fills it and sets
 * struct_size before calling GetInfo. */
typedef struct infinirtPluginInfo {
  size_t struct_size;
  int runtime_version;        /* vendor runtime version, -1 when unknown or absent */
  char runtime_library[1024]; /* vendor runtime library loaded, or the candidates tried */
  int runtime_missing;        /* nonzero when the vendor runtime could not be loaded */
  char reason[2048];          /* why the plugin has no devices, if it has none; with devices,
                                 what it refuses that its runtime may have (else empty) */
  int runtime_failed;         /* nonzero when the vendor runtime was found but is unusable:
                                 a required function missing, or its initialisation failed */
} infinirtPluginInfo;

/* A node of a graph (captured or built), handed to GraphInstantiate. The nodes come in an order
 * where every dependency precedes its dependent; dependencies index earlier nodes. */
typedef enum INFINIRT_ENUM_BASE {
  INFINIRT_GRAPH_NODE_EMPTY = 0,      /* ordering only */
  INFINIRT_GRAPH_NODE_MEMCPY = 1,     /* params.copy */
  INFINIRT_GRAPH_NODE_MEMSET = 2,     /* params.set */
  INFINIRT_GRAPH_NODE_HOST = 3,       /* params.host */
  INFINIRT_GRAPH_NODE_MEM_ALLOC = 4,  /* params.memory: memory owned by the graph becomes live */
  INFINIRT_GRAPH_NODE_MEM_FREE = 5,   /* params.memory: ... and is released again */
  INFINIRT_GRAPH_NODE_EVENT_WAIT = 6, /* params.wait: waits for the event's latest record */
  /* params.native (infinirtLaunchNativeFunc): fn queues work on the vendor stream behind a plugin
   * stream (StreamGetNativeHandle). */
  INFINIRT_GRAPH_NODE_NATIVE = 7,
  /* params.record: records the event when the node runs. A plugin answers GraphInstantiate with
   * infinirtErrorNotSupported for a kind it does not handle; the core then replays the graph
   * through the plugin's asynchronous entries. */
  INFINIRT_GRAPH_NODE_EVENT_RECORD = 8,
  /* params.elements: a memset of 2- or 4-byte elements whose bytes differ (one of equal bytes
   * comes as INFINIRT_GRAPH_NODE_MEMSET); replayed through MemsetElementsAsync. */
  INFINIRT_GRAPH_NODE_MEMSET_ELEMENTS = 9
} infinirtPluginGraphNodeKind_t;

typedef struct infinirtPluginGraphNode {
  infinirtPluginGraphNodeKind_t kind;
  const uint32_t* dependencies;
  size_t dependency_count;
  union {
    struct {
      void* dst;
      const void* src;
      size_t count;
      enum infinirtMemcpyKind kind; /* resolved: never infinirtMemcpyDefault */
    } copy;
    struct {
      void* ptr;
      int value;
      size_t count;
    } set;
    struct {
      infinirtHostFn_t fn;
      void* user_data;
    } host;
    struct {
      void* ptr;
      size_t size;
    } memory;
    struct {
      infinirtPluginEvent_t event;
    } wait;
    struct {
      infinirtPluginEvent_t event;
    } record;
    struct {
      infinirtNativeFn_t fn;
      void* user_data;
    } native;
    struct {
      void* ptr;
      unsigned int value;        /* the element's bits (the low element_size bytes) */
      unsigned int element_size; /* 2 or 4 */
      size_t count;              /* elements */
    } elements;
  } params;
} infinirtPluginGraphNode;

/* What a plugin declares about one of its entries (GetSupport), for the support matrix
 * (docs/support-matrix.md). The declaration describes the plugin with a complete vendor runtime;
 * tests check it against what the entry does over the host-emulated runtime. */
typedef enum INFINIRT_ENUM_BASE {
  INFINIRT_SUPPORT_NONE = 0,    /* the entry answers infinirtErrorNotSupported */
  INFINIRT_SUPPORT_NATIVE = 1,  /* done by the vendor function(s) named */
  INFINIRT_SUPPORT_EMULATED = 2 /* done by the plugin, with the vendor function(s) named */
} infinirtPluginSupportLevel_t;

typedef struct infinirtPluginSupport {
  size_t struct_size;
  infinirtPluginSupportLevel_t level;
  char vendor_functions[256]; /* comma-separated vendor function names, "" when none */
  char note[256];             /* how it is emulated, or why it is not supported */
} infinirtPluginSupport;

/* The one list of plugin entry points: X(name, parameter list). Every entry returns
 * infinirtError_t. Append only. */
#define INFINIRT_PLUGIN_ENTRIES(X)                                                                 \
  X(Initialize, (const infinirtPluginHost* host))                                                  \
  X(Finalize, (void))                                                                              \
  X(GetInfo, (infinirtPluginInfo * info))                                                          \
  X(GetDeviceCount, (int* count))                                                                  \
  X(GetDeviceProperties, (int device, struct infinirtDeviceProp* prop))                            \
  X(DeviceGetAttribute, (int device, int* value, enum infinirtDeviceAttr attr))                    \
  X(DriverGetVersion, (int device, int* version))                                                  \
  X(DeviceSynchronize, (int device))                                                               \
  X(DeviceReset, (int device))                                                                     \
  X(MemGetInfo, (int device, size_t* free_bytes, size_t* total_bytes))                             \
  X(Malloc, (int device, void** ptr, size_t size))                                                 \
  X(Free, (int device, void* ptr))                                                                 \
  X(HostAlloc, (int device, void** ptr, size_t size, unsigned int flags))                          \
  X(FreeHost, (int device, void* ptr))                                                             \
  X(MallocAsync, (int device, void** ptr, size_t size, infinirtPluginStream_t stream))             \
  X(FreeAsync, (int device, void* ptr, infinirtPluginStream_t stream))                             \
  X(Memcpy, (int device, void* dst, const void* src, size_t count, enum infinirtMemcpyKind kind))  \
  X(MemcpyAsync, (int device, void* dst, const void* src, size_t count,                            \
                  enum infinirtMemcpyKind kind, infinirtPluginStream_t stream))                    \
  X(Memset, (int device, void* ptr, int value, size_t count))                                      \
  X(MemsetAsync, (int device, void* ptr, int value, size_t count, infinirtPluginStream_t stream))  \
  X(StreamCreate, (int device, infinirtPluginStream_t* stream, unsigned int flags))                \
  X(StreamDestroy, (int device, infinirtPluginStream_t stream))                                    \
  X(StreamSynchronize, (int device, infinirtPluginStream_t stream))                                \
  X(StreamQuery, (int device, infinirtPluginStream_t stream))                                      \
  X(StreamWaitEvent,                                                                               \
    (int device, infinirtPluginStream_t stream, infinirtPluginEvent_t event, unsigned int flags))  \
  X(LaunchHostFunc,                                                                                \
    (int device, infinirtPluginStream_t stream, infinirtHostFn_t fn, void* user_data))             \
  X(EventCreate, (int device, infinirtPluginEvent_t* event, unsigned int flags))                   \
  X(EventDestroy, (int device, infinirtPluginEvent_t event))                                       \
  X(EventRecord, (int device, infinirtPluginEvent_t event, infinirtPluginStream_t stream))         \
  X(EventQuery, (int device, infinirtPluginEvent_t event))                                         \
  X(EventSynchronize, (int device, infinirtPluginEvent_t event))                                   \
  X(EventElapsedTime,                                                                              \
    (int device, float* ms, infinirtPluginEvent_t start, infinirtPluginEvent_t end))               \
  X(MemPoolGetAttribute, (int device, enum infinirtMemPoolAttr attr, void* value))                 \
  X(MemPoolSetAttribute, (int device, enum infinirtMemPoolAttr attr, void* value))                 \
  X(MemPoolTrimTo, (int device, size_t min_bytes_to_keep))                                         \
  X(GraphInstantiate,                                                                              \
    (int device, infinirtPluginGraphExec_t* exec, const infinirtPluginGraphNode* nodes,            \
     size_t node_count, unsigned long long flags))                                                 \
  X(GraphLaunch, (int device, infinirtPluginGraphExec_t exec, infinirtPluginStream_t stream))      \
  X(GraphExecDestroy, (int device, infinirtPluginGraphExec_t exec))                                \
  X(GetSupport, (const char* entry, infinirtPluginSupport* support))                               \
  X(StreamGetNativeHandle, (int device, infinirtPluginStream_t stream, void** native_stream))      \
  X(EventGetNativeHandle, (int device, infinirtPluginEvent_t event, void** native_event))          \
  /* StreamAdopt: a plugin stream for a vendor stream another library made                         \
   * (StreamCreateFromNativeHandle); *flags gets infinirtStreamNonBlocking where it does not       \
   * synchronise with the legacy stream. The core ends it with StreamRelease, never with           \
   * StreamDestroy: the vendor stream stays its maker's. */                                        \
  X(StreamAdopt,                                                                                   \
    (int device, void* native_stream, infinirtPluginStream_t* stream, unsigned int* flags))        \
  X(StreamRelease, (int device, infinirtPluginStream_t stream))                                    \
  /* Stream priorities (lower numbers first; *greatest <= *least); host memory registration        \
   * (flags as CUDA's) and the device's address of pinned or registered memory. */                 \
  X(DeviceGetStreamPriorityRange, (int device, int* least, int* greatest))                         \
  X(StreamCreateWithPriority,                                                                      \
    (int device, infinirtPluginStream_t* stream, unsigned int flags, int priority))                \
  X(HostRegister, (int device, void* ptr, size_t size, unsigned int flags))                        \
  X(HostUnregister, (int device, void* ptr))                                                       \
  X(HostGetDevicePointer, (int device, void** device_ptr, void* host_ptr))                         \
  /* Limits and the cache split; the core has checked the enum values. A limit the device does     \
   * not have answers infinirtErrorUnsupportedLimit. */                                            \
  X(DeviceGetLimit, (int device, enum infinirtLimit limit, size_t* value))                         \
  X(DeviceSetLimit, (int device, enum infinirtLimit limit, size_t value))                          \
  X(DeviceGetCacheConfig, (int device, enum infinirtFuncCache* config))                            \
  X(DeviceSetCacheConfig, (int device, enum infinirtFuncCache config))                             \
  /* Peers among the plugin's own devices (the core never asks about another backend's): */        \
  /* whether `device` can reach `peer`'s memory, and its access to it. */                          \
  X(DeviceCanAccessPeer, (int device, int* can_access, int peer))                                  \
  X(DeviceEnablePeerAccess, (int device, int peer))                                                \
  X(DeviceDisablePeerAccess, (int device, int peer))                                               \
  X(DeviceGetP2PAttribute, (int device, int* value, enum infinirtDeviceP2PAttr attr, int peer))    \
  /* Managed memory. A location of type Device names one of the plugin's own devices. */           \
  X(MallocManaged, (int device, void** ptr, size_t size, unsigned int flags))                      \
  X(MemPrefetchAsync, (int device, const void* ptr, size_t count,                                  \
                       struct infinirtMemLocation location, infinirtPluginStream_t stream))        \
  X(MemAdvise, (int device, const void* ptr, size_t count, enum infinirtMemoryAdvise advice,       \
                struct infinirtMemLocation location))                                              \
  /* The five stream attributes (infinirtStreamAttributeXxx); the core has checked the id and,     \
   * for Set, the value (a priority clamped into the device's range). Get fills the member         \
   * of a zeroed value. */                                                                         \
  X(StreamGetAttribute,                                                                            \
    (int device, infinirtPluginStream_t stream, enum infinirtLaunchAttributeID attr,               \
     union infinirtLaunchAttributeValue* value))                                                   \
  X(StreamSetAttribute,                                                                            \
    (int device, infinirtPluginStream_t stream, enum infinirtLaunchAttributeID attr,               \
     const union infinirtLaunchAttributeValue* value))                                             \
  /* Pools of the program's own (the default pool is the MemPool* entries' above). MemPoolCreate   \
   * gets props with the location's device as the plugin's own index; FreeAsync frees memory       \
   * of any pool. MemPoolDestroy with memory still allocated releases the pool once it is all      \
   * freed. Access descriptors and locations name the plugin's own devices; a NULL pool in the     \
   * access entries is the device's default pool. */                                               \
  X(MemPoolCreate,                                                                                 \
    (int device, infinirtPluginMemPool_t* pool, const struct infinirtMemPoolProps* props))         \
  X(MemPoolDestroy, (int device, infinirtPluginMemPool_t pool))                                    \
  X(MallocFromPoolAsync, (int device, void** ptr, size_t size, infinirtPluginMemPool_t pool,       \
                          infinirtPluginStream_t stream))                                          \
  X(PoolGetAttribute,                                                                              \
    (int device, infinirtPluginMemPool_t pool, enum infinirtMemPoolAttr attr, void* value))        \
  X(PoolSetAttribute,                                                                              \
    (int device, infinirtPluginMemPool_t pool, enum infinirtMemPoolAttr attr, void* value))        \
  X(PoolTrimTo, (int device, infinirtPluginMemPool_t pool, size_t min_bytes_to_keep))              \
  X(MemPoolSetAccess, (int device, infinirtPluginMemPool_t pool,                                   \
                       const struct infinirtMemAccessDesc* descs, size_t count))                   \
  X(MemPoolGetAccess, (int device, enum infinirtMemAccessFlags* flags,                             \
                       infinirtPluginMemPool_t pool, const struct infinirtMemLocation* location))  \
  /* Pitched copies and memsets in one call: `height` rows of `width` bytes, `dpitch`/`spitch`     \
   * (`pitch`) bytes apart. The core has checked the rows against their allocations and the        \
   * copy's direction, as for MemcpyAsync (kind is never Default; host-to-host completes before    \
   * the call returns); where these are NULL it issues the rows one by one. */                     \
  X(Memcpy2DAsync,                                                                                 \
    (int device, void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,           \
     size_t height, enum infinirtMemcpyKind kind, infinirtPluginStream_t stream))                  \
  X(Memset2DAsync, (int device, void* ptr, size_t pitch, int value, size_t width, size_t height,   \
                    infinirtPluginStream_t stream))                                                \
  /* Interprocess sharing. The core passes the base of a device allocation of this device;         \
   * IpcOpenMemHandle maps memory another process exported on this device and gives its size       \
   * (0 where the backend cannot tell); opening one handle again gives the same address, and       \
   * each open is closed once. An event handle is asked only of an event created with              \
   * infinirtEventInterprocess; an opened event is destroyed with EventDestroy. */                 \
  X(IpcGetMemHandle, (int device, infinirtIpcMemHandle_t* handle, void* ptr))                      \
  X(IpcOpenMemHandle, (int device, void** ptr, size_t* size, const infinirtIpcMemHandle_t* handle, \
                       unsigned int flags))                                                        \
  X(IpcCloseMemHandle, (int device, void* ptr))                                                    \
  X(IpcGetEventHandle,                                                                             \
    (int device, infinirtIpcEventHandle_t* handle, infinirtPluginEvent_t event))                   \
  X(IpcOpenEventHandle,                                                                            \
    (int device, infinirtPluginEvent_t* event, const infinirtIpcEventHandle_t* handle))            \
  /* Sets count elements of element_size (2 or 4) bytes to value, in stream order: memset nodes    \
   * of elements whose bytes differ (ABI 2.1). */                                                  \
  X(MemsetElementsAsync, (int device, void* ptr, unsigned int value, unsigned int element_size,    \
                          size_t count, infinirtPluginStream_t stream))                            \
  /* Pools other processes open (MemPoolCreate with props->handleTypes). ImportFromShareableHandle \
   * makes a pool of this device that imports allocations only; ImportPointer maps one (its        \
   * size in *size), which FreeAsync (or Free) releases. ExportPointer takes the start of an       \
   * allocation of a shareable pool. (ABI 2.1) */                                                  \
  X(MemPoolExportToShareableHandle,                                                                \
    (int device, void* handle, infinirtPluginMemPool_t pool,                                       \
     enum infinirtMemAllocationHandleType type, unsigned int flags))                               \
  X(MemPoolImportFromShareableHandle,                                                              \
    (int device, infinirtPluginMemPool_t* pool, void* handle,                                      \
     enum infinirtMemAllocationHandleType type, unsigned int flags))                               \
  X(MemPoolExportPointer, (int device, struct infinirtMemPoolPtrExportData* data, void* ptr))      \
  X(MemPoolImportPointer, (int device, void** ptr, size_t* size, infinirtPluginMemPool_t pool,     \
                           struct infinirtMemPoolPtrExportData* data))                             \
  X(LaunchHostWork, (int device, infinirtPluginStream_t stream, infinirtHostFn_t fn,               \
                     void* user_data, size_t bytes))

/* An id per entry, in the list's order: INFINIRT_PLUGIN_ENTRY_Initialize, ... Plugins index
 * their support declarations by it (GetSupport itself takes the entry's name). */
#define INFINIRT_PLUGIN_ENTRY_ID_(name, params) INFINIRT_PLUGIN_ENTRY_##name,
typedef enum INFINIRT_ENUM_BASE {
  INFINIRT_PLUGIN_ENTRIES(INFINIRT_PLUGIN_ENTRY_ID_) INFINIRT_PLUGIN_ENTRY_COUNT
} infinirtPluginEntry_t;
#undef INFINIRT_PLUGIN_ENTRY_ID_

#define INFINIRT_PLUGIN_FIELD_(name, params) infinirtError_t(*name) params;

typedef struct infinirtPluginTable {
  size_t struct_size; /* sizeof(infinirtPluginTable) as the plugin was compiled */
  uint32_t abi_major; /* INFINIRT_PLUGIN_ABI_MAJOR as the plugin was compiled */
  uint32_t abi_minor;
  const char* name; /* short lowercase name, e.g. "cpu"; matches libinfinirt_<name>.so */
  infiniDevice_t device_type;
  INFINIRT_PLUGIN_ENTRIES(INFINIRT_PLUGIN_FIELD_)
} infinirtPluginTable;

#undef INFINIRT_PLUGIN_FIELD_

/* The size of the table header that every ABI version has. */
#define INFINIRT_PLUGIN_TABLE_HEADER_SIZE offsetof(infinirtPluginTable, Initialize)

typedef const infinirtPluginTable* (*infinirtPluginGetTableFn)(void);

/* Declares and exports the entry point; use once in a plugin's source. */
#if defined(_WIN32)
#define INFINIRT_PLUGIN_EXPORT __declspec(dllexport)
#else
#define INFINIRT_PLUGIN_EXPORT __attribute__((visibility("default")))
#endif

INFINIRT_PLUGIN_EXPORT const infinirtPluginTable* infinirtPluginGetTable(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* INFINIRT_PLUGIN_H_ */
