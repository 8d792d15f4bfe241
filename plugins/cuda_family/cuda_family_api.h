// The vendor functions the CUDA-family plugin resolves, as one list: X(name, parameters).
// The symbol is the vendor's prefix followed by the name ("cuda" + "Malloc", "musa" + "Malloc",
// "mc" + "Malloc"). Every function returns the vendor's error type.
//
// The parameter types are macros: the plugin sees plain C types (a vendor's stream is a
// pointer, its enums are ints), and cuda_prototype_check.cc, compiled where the CUDA Toolkit is
// installed, redefines them as CUDA's types and proves every entry equal to the prototype in
// the real cuda_runtime_api.h.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_CUDA_FAMILY_API_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_CUDA_FAMILY_API_H_

#ifndef CF_ERROR
typedef void (*CfHostFn)(void*);
#define CF_ERROR int
#define CF_STREAM void*
#define CF_EVENT void*
#define CF_GRAPH void*
#define CF_EXEC void*
#define CF_KIND int
#define CF_CAPTURE_MODE int
#define CF_ATTR int
#define CF_LIMIT int
#define CF_FUNC_CACHE int
#define CF_P2P_ATTR int
#define CF_STREAM_ATTR int
#define CF_STREAM_ATTR_VALUE union infinirtLaunchAttributeValue
#define CF_POOL void*
#define CF_POOL_ATTR int
#define CF_POOL_PROPS struct infinirtMemPoolProps
#define CF_ACCESS_DESC struct infinirtMemAccessDesc
#define CF_ACCESS_FLAGS enum infinirtMemAccessFlags
#define CF_LOCATION struct infinirtMemLocation
#define CF_HOST_FN CfHostFn
#define CF_IPC_MEM_HANDLE infinirtIpcMemHandle_t
#define CF_IPC_EVENT_HANDLE infinirtIpcEventHandle_t
#define CF_ENTRY_STATUS int
#define CF_ADVICE int
#define CF_HANDLE_TYPE int
#define CF_POOL_EXPORT_DATA struct infinirtMemPoolPtrExportData
#endif

// Without these the runtime is not usable: the backend reports which one is missing.
#define CUDA_FAMILY_REQUIRED_FUNCTIONS(X)                                                    \
  X(GetDeviceCount, (int* count))                                                            \
  X(SetDevice, (int device))                                                                 \
  X(DeviceSynchronize, (void))                                                               \
  X(Malloc, (void** ptr, size_t size))                                                       \
  X(Free, (void* ptr))                                                                       \
  X(MallocHost, (void** ptr, size_t size))                                                   \
  X(FreeHost, (void* ptr))                                                                   \
  X(Memcpy, (void* dst, const void* src, size_t count, CF_KIND kind))                        \
  X(MemcpyAsync, (void* dst, const void* src, size_t count, CF_KIND kind, CF_STREAM stream)) \
  X(Memset, (void* ptr, int value, size_t count))                                            \
  X(MemsetAsync, (void* ptr, int value, size_t count, CF_STREAM stream))                     \
  X(StreamCreateWithFlags, (CF_STREAM * stream, unsigned int flags))                         \
  X(StreamDestroy, (CF_STREAM stream))                                                       \
  X(StreamSynchronize, (CF_STREAM stream))                                                   \
  X(StreamQuery, (CF_STREAM stream))                                                         \
  X(StreamWaitEvent, (CF_STREAM stream, CF_EVENT event, unsigned int flags))                 \
  X(EventCreateWithFlags, (CF_EVENT * event, unsigned int flags))                            \
  X(EventRecord, (CF_EVENT event, CF_STREAM stream))                                         \
  X(EventQuery, (CF_EVENT event))                                                            \
  X(EventSynchronize, (CF_EVENT event))                                                      \
  X(EventDestroy, (CF_EVENT event))                                                          \
  X(EventElapsedTime, (float* ms, CF_EVENT start, CF_EVENT end))

// Used where present; an InfiniRT call that needs a missing one answers NotSupported, or is
// emulated as the support matrix says (MallocAsync/FreeAsync).
#define CUDA_FAMILY_OPTIONAL_FUNCTIONS(X)                                                  \
  X(RuntimeGetVersion, (int* version))                                                     \
  X(DriverGetVersion, (int* version))                                                      \
  X(DeviceReset, (void))                                                                   \
  X(DeviceGetAttribute, (int* value, CF_ATTR attr, int device))                            \
  X(MemGetInfo, (size_t * free_bytes, size_t * total_bytes))                               \
  X(HostAlloc, (void** ptr, size_t size, unsigned int flags))                              \
  X(MallocAsync, (void** ptr, size_t size, CF_STREAM stream))                              \
  X(FreeAsync, (void* ptr, CF_STREAM stream))                                              \
  X(LaunchHostFunc, (CF_STREAM stream, CF_HOST_FN fn, void* user_data))                    \
  X(StreamGetFlags, (CF_STREAM stream, unsigned int* flags))                               \
  X(StreamGetDevice, (CF_STREAM stream, int* device))                                      \
  X(DeviceGetStreamPriorityRange, (int* least, int* greatest))                             \
  X(StreamCreateWithPriority, (CF_STREAM * stream, unsigned int flags, int priority))      \
  X(HostRegister, (void* ptr, size_t size, unsigned int flags))                            \
  X(HostUnregister, (void* ptr))                                                           \
  X(HostGetDevicePointer, (void** device_ptr, void* host_ptr, unsigned int flags))         \
  X(DeviceGetLimit, (size_t * value, CF_LIMIT limit))                                      \
  X(DeviceSetLimit, (CF_LIMIT limit, size_t value))                                        \
  X(DeviceGetCacheConfig, (CF_FUNC_CACHE * config))                                        \
  X(DeviceSetCacheConfig, (CF_FUNC_CACHE config))                                          \
  X(DeviceCanAccessPeer, (int* can_access, int device, int peer))                          \
  X(MallocManaged, (void** ptr, size_t size, unsigned int flags))                          \
  X(DeviceEnablePeerAccess, (int peer, unsigned int flags))                                \
  X(DeviceDisablePeerAccess, (int peer))                                                   \
  X(DeviceGetP2PAttribute, (int* value, CF_P2P_ATTR attr, int src, int dst))               \
  X(StreamGetAttribute, (CF_STREAM stream, CF_STREAM_ATTR attr, CF_STREAM_ATTR_VALUE * value))  \
  X(StreamSetAttribute,                                                                    \
    (CF_STREAM stream, CF_STREAM_ATTR attr, const CF_STREAM_ATTR_VALUE* value))           \
  X(DeviceGetDefaultMemPool, (CF_POOL * pool, int device))                                 \
  X(MemPoolCreate, (CF_POOL * pool, const CF_POOL_PROPS* props))                           \
  X(MemPoolDestroy, (CF_POOL pool))                                                        \
  X(MallocFromPoolAsync, (void** ptr, size_t size, CF_POOL pool, CF_STREAM stream))        \
  X(MemPoolGetAttribute, (CF_POOL pool, CF_POOL_ATTR attr, void* value))                   \
  X(MemPoolSetAttribute, (CF_POOL pool, CF_POOL_ATTR attr, void* value))                   \
  X(MemPoolTrimTo, (CF_POOL pool, size_t min_bytes_to_keep))                               \
  X(MemPoolSetAccess, (CF_POOL pool, const CF_ACCESS_DESC* descs, size_t count))           \
  X(MemPoolGetAccess, (CF_ACCESS_FLAGS * flags, CF_POOL pool, CF_LOCATION * location))     \
  X(MemPoolExportToShareableHandle,                                                        \
    (void* handle, CF_POOL pool, CF_HANDLE_TYPE type, unsigned int flags))                 \
  X(MemPoolImportFromShareableHandle,                                                      \
    (CF_POOL * pool, void* handle, CF_HANDLE_TYPE type, unsigned int flags))               \
  X(MemPoolExportPointer, (CF_POOL_EXPORT_DATA * data, void* ptr))                         \
  X(MemPoolImportPointer, (void** ptr, CF_POOL pool, CF_POOL_EXPORT_DATA* data))           \
  X(Memcpy2DAsync, (void* dst, size_t dpitch, const void* src, size_t spitch, size_t width,\
                   size_t height, CF_KIND kind, CF_STREAM stream))                         \
  X(Memset2DAsync,                                                                         \
    (void* ptr, size_t pitch, int value, size_t width, size_t height, CF_STREAM stream))   \
  X(IpcGetMemHandle, (CF_IPC_MEM_HANDLE * handle, void* ptr))                              \
  X(IpcOpenMemHandle, (void** ptr, CF_IPC_MEM_HANDLE handle, unsigned int flags))          \
  X(IpcCloseMemHandle, (void* ptr))                                                        \
  X(IpcGetEventHandle, (CF_IPC_EVENT_HANDLE * handle, CF_EVENT event))                     \
  X(IpcOpenEventHandle, (CF_EVENT * event, CF_IPC_EVENT_HANDLE handle))                    \
  X(MemPrefetchAsync, (const void* ptr, size_t count, CF_LOCATION location,                \
                      unsigned int flags, CF_STREAM stream))                               \
  X(MemAdvise, (const void* ptr, size_t count, CF_ADVICE advice, CF_LOCATION location))    \
  X(GetDriverEntryPointByVersion, (const char* symbol, void** function,                    \
                                   unsigned int version, unsigned long long flags,         \
                                   CF_ENTRY_STATUS* status))                               \
  X(StreamBeginCapture, (CF_STREAM stream, CF_CAPTURE_MODE mode))                          \
  X(StreamEndCapture, (CF_STREAM stream, CF_GRAPH * graph))                                \
  X(GraphInstantiateWithFlags, (CF_EXEC * exec, CF_GRAPH graph, unsigned long long flags)) \
  X(GraphLaunch, (CF_EXEC exec, CF_STREAM stream))                                         \
  X(GraphExecDestroy, (CF_EXEC exec))                                                      \
  X(GraphDestroy, (CF_GRAPH graph))

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_CUDA_FAMILY_API_H_
