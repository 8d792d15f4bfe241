// The Ascend plugin's state, shared by its sources: the resolved AscendCL functions, the device
// binding, error translation, and the objects the plugin hands the core (streams and graph
// execs are plugin structs around the ACL handles; events are ACL events as they are).
#ifndef INFINIRT_PLUGINS_ASCEND_ASCEND_STATE_H_
#define INFINIRT_PLUGINS_ASCEND_ASCEND_STATE_H_

#include <atomic>
#include <cstdint>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include "ascend_api.h"
#include "infinirt_plugin.h"
#include "plugin_support.h"
#include "plugin_table_builder.h"
#include "vendor_library.h"
#include "vendor_plugin.h"

namespace infinirt::ascend {

// The resolved vendor functions: one pointer per entry of the lists in ascend_api.h.
struct Functions {
#define ASCEND_POINTER_(name, params) AclError(*name) params = nullptr;
  ASCEND_REQUIRED_FUNCTIONS(ASCEND_POINTER_)
  ASCEND_OPTIONAL_FUNCTIONS(ASCEND_POINTER_)
#undef ASCEND_POINTER_
  // Two functions that return text rather than an aclError (acl_base_rt.h, acl.h).
  const char* (*aclrtGetSocName)() = nullptr;
  const char* (*aclGetRecentErrMsg)() = nullptr;
};

// A host function as the plugin launches it: through the trampoline that marks the thread while
// the function runs (plugin_support.h). A call launched outside capture runs once and frees
// itself; a captured one belongs to the exec, which may run it many times.
using plugin::HostCall;

// A stream the plugin hands the core. ACL streams never synchronise implicitly with the default
// stream (CANN: "all Runtime streams are non-blocking"), so the plugin gives the blocking ones
// CUDA's legacy-stream ordering itself, with events (ascend_order.cc).
struct Stream {
  void* acl = nullptr;  // the ACL stream
  int device = 0;
  bool blocking = false;
  void* joined = nullptr;                // blocking: recorded when the legacy stream joins it
  std::atomic<uint64_t> issued{0};       // blocking: work items issued so far
  uint64_t joined_at = 0;                // blocking: `issued` at the last join (device mutex)
  std::atomic<uint64_t> legacy_seen{0};  // blocking: legacy generation it last waited for
  bool capturing = false;                // in the plugin's own capture (GraphInstantiate)
  bool adopted = false;  // another library's ACL stream (StreamAdopt): never destroyed here
  std::vector<std::unique_ptr<HostCall>> captured_calls;
};

// A graph exec: the aclmdlRI that capture produced, and an event recorded after each launch so
// that the next launch (on any stream) runs after it.
struct Exec {
  void* model = nullptr;  // aclmdlRI, destroyed exactly once
  void* done = nullptr;   // ACL event
  bool launched = false;
  std::vector<std::unique_ptr<HostCall>> host_calls;  // what the model's host tasks run
};

// CUDA's legacy-stream ordering on one device, and the objects whose destruction waits for
// their work (ACL's destroy calls would block, InfiniRT's return at once).
struct DeviceOrder {
  std::mutex mutex;
  std::vector<Stream*> blocking;               // live and retired blocking streams
  std::vector<Stream*> retired;                // destroyed by the program, work still pending
  std::vector<Exec*> retired_execs;            // destroyed by the program, a launch still pending
  void* legacy_done = nullptr;                 // ACL event recorded after each legacy work item
  std::atomic<uint64_t> legacy_generation{0};  // legacy work items so far
  // The legacy stream's handle was handed out (StreamGetNativeHandle): work another library
  // queued on it is covered by a legacy_done recorded when a blocking stream next waits.
  bool legacy_mark_pending = false;
};

struct State : plugin::VendorRuntimeState {
  State() : VendorRuntimeState("ascend") {}
  Functions fn;
  std::vector<std::unique_ptr<DeviceOrder>> devices;
  // Pinned host memory from aclrtMallocHost (base -> size): ACL captures copies only between
  // device memory and such memory.
  std::mutex pinned_mutex;
  std::map<uintptr_t, size_t> pinned;
};

State& TheState();
bool HasState();
void Log(infinirtLogLevel_t level, const std::string& message);

// The InfiniRT error for an aclError (ascend_errors.cc); unknown codes are infinirtErrorUnknown.
infinirtError_t TranslateStatus(AclError status);
// "207001 (ACL_ERROR_RT_MEMORY_ALLOCATION): <aclGetRecentErrMsg>", for messages.
std::string ErrorText(AclError status);
// Translates and, for anything but success, logs which vendor call failed, at debug level.
infinirtError_t Check(const char* function, AclError status);

#define ACL_CALL(name, ...) ::infinirt::ascend::Check(#name, TheState().fn.name(__VA_ARGS__))

// Creates an ACL event: with aclrtCreateEventExWithFlag where the runtime has it (CANN documents
// CUDA's rules for its events: each record replaces the last, a wait uses the record current
// at the time of the call, an unrecorded event is complete), else aclrtCreateEventWithFlag.
infinirtError_t CreateEvent(void** event, uint32_t flags);
const char* EventCreateFunction();

// Selects the device for the calling thread: ACL needs aclrtSetDevice in every host thread
// before any other aclrt call.
infinirtError_t Bind(int device);

// ascend_order.cc: streams, and CUDA's legacy-stream ordering over them.
DeviceOrder& Order(int device);
// aclrtStreamQuery as an InfiniRT answer: Success, NotReady or the call's error.
infinirtError_t QueryStream(void* acl_stream);
// priority: ACL's (aclrtCreateStreamWithConfig), or none for aclrtCreateStream.
infinirtError_t CreateStream(int device, bool blocking, Stream** stream,
                             std::optional<uint32_t> priority = std::nullopt);
// A plugin stream over another library's ACL stream (StreamAdopt): blocking when it is the ACL
// stream of one of the plugin's own blocking streams, else non-blocking, as ACL streams are.
infinirtError_t AdoptStream(int device, void* acl_stream, Stream** stream);
// Before another library queues work on the ACL stream behind `stream` (nullptr: the legacy
// stream), which bypasses Enqueue: keeps CUDA's legacy ordering around that work.
infinirtError_t PrepareForeignWork(int device, Stream* stream);
// Destroys at once when the stream is idle, else once its work is done (ReapRetired).
infinirtError_t DestroyStream(Stream* stream);
infinirtError_t DestroyExec(int device, Exec* exec);
// Destroys what was retired and is now idle; with wait, waits for it first (Finalize).
void ReapRetired(int device, bool wait);
// Before a blocking stream's next work item: wait for the legacy work issued so far.
infinirtError_t WaitForLegacyWork(Stream& stream);
// Before a legacy work item (device mutex held): wait for the blocking streams' work so far.
infinirtError_t JoinBlockingStreams(DeviceOrder& order);
// After a legacy work item (device mutex held): later blocking-stream work waits for it.
infinirtError_t MarkLegacyWork(DeviceOrder& order);
// StreamSynchronize / StreamQuery of the legacy stream: they cover the blocking streams.
infinirtError_t SynchronizeLegacy(int device);
infinirtError_t QueryLegacy(int device);
// Waits for everything issued to `stream` (nullptr: the legacy stream), with legacy ordering.
infinirtError_t SynchronizeTarget(int device, Stream* stream);
// Releases the ordering objects of every device (Finalize).
void ReleaseOrders();

// Issues one work item into `stream` (nullptr: the device's legacy stream) with CUDA's
// legacy-stream ordering; issue(acl_stream) enqueues it and returns the translated status.
template <class Issue>
infinirtError_t Enqueue(int device, Stream* stream, Issue&& issue) {
  if (stream == nullptr) {
    DeviceOrder& order = Order(device);
    std::lock_guard<std::mutex> lock(order.mutex);
    if (const infinirtError_t e = JoinBlockingStreams(order)) return e;
    if (const infinirtError_t e = issue(static_cast<void*>(nullptr))) return e;
    return MarkLegacyWork(order);
  }
  if (!stream->blocking) return issue(stream->acl);
  if (const infinirtError_t e = WaitForLegacyWork(*stream)) return e;
  const infinirtError_t e = issue(stream->acl);
  if (e == infinirtSuccess) stream->issued.fetch_add(1, std::memory_order_release);
  return e;
}

bool HasNativeGraphs();

// Start and end the per-thread default streams' epochs (ascend_translation.cc).
void StartPerThreadStreams();
void RetirePerThreadStreams();

// The entries (plugin_table_builder.h finds them by name). Left out, so NotSupported:
// DeviceGetAttribute, DriverGetVersion and the memory-pool entries, which no ACL function of
// the lists serves (the declarations say so).
struct AscendPlugin : plugin::VendorPluginBase<AscendPlugin> {
  // ascend_loading.cc
  INFINIRT_PLUGIN_ENTRY(Initialize);
  INFINIRT_PLUGIN_ENTRY(Finalize);
  // ascend_translation.cc
  INFINIRT_PLUGIN_ENTRY(GetDeviceProperties);
  INFINIRT_PLUGIN_ENTRY(DeviceSynchronize);
  INFINIRT_PLUGIN_ENTRY(DeviceReset);
  INFINIRT_PLUGIN_ENTRY(MemGetInfo);
  INFINIRT_PLUGIN_ENTRY(Malloc);
  INFINIRT_PLUGIN_ENTRY(Free);
  INFINIRT_PLUGIN_ENTRY(HostAlloc);
  INFINIRT_PLUGIN_ENTRY(FreeHost);
  INFINIRT_PLUGIN_ENTRY(MallocAsync);
  INFINIRT_PLUGIN_ENTRY(FreeAsync);
  INFINIRT_PLUGIN_ENTRY(Memcpy);
  INFINIRT_PLUGIN_ENTRY(MemcpyAsync);
  INFINIRT_PLUGIN_ENTRY(Memset);
  INFINIRT_PLUGIN_ENTRY(MemsetAsync);
  INFINIRT_PLUGIN_ENTRY(StreamCreate);
  INFINIRT_PLUGIN_ENTRY(DeviceGetStreamPriorityRange);
  INFINIRT_PLUGIN_ENTRY(StreamCreateWithPriority);
  INFINIRT_PLUGIN_ENTRY(DeviceCanAccessPeer);
  INFINIRT_PLUGIN_ENTRY(DeviceEnablePeerAccess);
  INFINIRT_PLUGIN_ENTRY(DeviceDisablePeerAccess);
  INFINIRT_PLUGIN_ENTRY(StreamDestroy);
  INFINIRT_PLUGIN_ENTRY(StreamSynchronize);
  INFINIRT_PLUGIN_ENTRY(StreamQuery);
  INFINIRT_PLUGIN_ENTRY(StreamWaitEvent);
  INFINIRT_PLUGIN_ENTRY(StreamGetNativeHandle);
  INFINIRT_PLUGIN_ENTRY(StreamAdopt);
  INFINIRT_PLUGIN_ENTRY(StreamRelease);
  INFINIRT_PLUGIN_ENTRY(LaunchHostFunc);
  INFINIRT_PLUGIN_ENTRY(EventCreate);
  INFINIRT_PLUGIN_ENTRY(EventDestroy);
  INFINIRT_PLUGIN_ENTRY(EventRecord);
  INFINIRT_PLUGIN_ENTRY(EventQuery);
  INFINIRT_PLUGIN_ENTRY(EventSynchronize);
  INFINIRT_PLUGIN_ENTRY(EventElapsedTime);
  INFINIRT_PLUGIN_ENTRY(EventGetNativeHandle);
  INFINIRT_PLUGIN_ENTRY(GraphInstantiate);
  INFINIRT_PLUGIN_ENTRY(GraphLaunch);
  INFINIRT_PLUGIN_ENTRY(GraphExecDestroy);

  // ascend_declarations.cc
  static std::optional<plugin::Declaration> Declare(infinirtPluginEntry_t entry);

  // For VendorPluginBase, which answers GetInfo and GetDeviceCount and gives the guard its log.
  static const plugin::VendorRuntimeState* Current() { return HasState() ? &TheState() : nullptr; }
  static const char* Name() { return "ascend"; }
};

}  // namespace infinirt::ascend

#endif  // INFINIRT_PLUGINS_ASCEND_ASCEND_STATE_H_
