// The public C API for interprocess sharing: device memory and events handed to another process
// of the same host as 64-byte handles, which the program copies there by any means.
#include <cstring>

#include "api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

constexpr unsigned int kIpcOpenFlags = infinirtIpcMemLazyEnablePeerAccess;

// Memory of infinirtMalloc that contains `pointer` (an interior address stands for its whole
// allocation, as the driver takes it); CUDA shares no pool, managed or host memory this way.
infinirtError_t FindShareable(Runtime& runtime, void* pointer, Allocation* found,
                              const char* function) {
  auto allocation = runtime.allocations().Find(reinterpret_cast<uintptr_t>(pointer));
  if (!allocation || allocation->kind != MemoryKind::kDevice) {
    return Fail(infinirtErrorInvalidValue,
                "{}: {} is not in a live allocation of infinirtMalloc (only such memory is "
                "shared between processes)",
                function, pointer);
  }
  *found = *allocation;
  return infinirtSuccess;
}

// Registers what IpcOpenMemHandle mapped, or counts one more open of an address already
// registered. Under the runtime's ipc_mutex().
infinirtError_t NoteOpened(Runtime& runtime, const Target& target, void* pointer, size_t size,
                           const char* function) {
  auto& opens = runtime.ipc_opens();
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  if (auto known = opens.find(address); known != opens.end()) {
    ++known->second;
    return infinirtSuccess;
  }
  if (size == 0) {
    return Fail(infinirtErrorNotSupported,
                "{}: backend '{}' cannot tell the size of the memory it opened, so InfiniRT "
                "could not route copies to it",
                function, target.backend->name);
  }
  if (auto error = RegisterAllocation(runtime, target, pointer, size, MemoryKind::kIpcOpened,
                                      /*owner=*/0, function)) {
    return error;
  }
  opens.emplace(address, 1);
  return infinirtSuccess;
}

}  // namespace

extern "C" {

infinirtError_t infinirtIpcGetMemHandle(infinirtIpcMemHandle_t* handle, void* devPtr) {
  return Guard(__func__, [&](const char* function) {
    if (handle == nullptr) return Fail(infinirtErrorInvalidValue, "{}: handle is NULL", function);
    if (devPtr == nullptr) return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function);
    Runtime& runtime = Runtime::Get();
    Allocation allocation;
    if (auto error = FindShareable(runtime, devPtr, &allocation, function)) return error;
    Backend& owner = runtime.backend(allocation.backend);
    infinirtIpcMemHandle_t made;
    std::memset(&made, 0, sizeof made);
    const infinirtError_t error = owner.table.IpcGetMemHandle(
        allocation.local_device, &made, reinterpret_cast<void*>(allocation.base));
    if (error == infinirtSuccess) *handle = made;
    return BackendAnswer(error, owner, function);
  });
}

infinirtError_t infinirtIpcOpenMemHandle(void** devPtr, infinirtIpcMemHandle_t handle,
                                         unsigned int flags) {
  return Guard(__func__, [&](const char* function) {
    if (devPtr == nullptr) return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function);
    if (flags & ~kIpcOpenFlags) {
      return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function, flags);
    }
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function)) return error;
    const infinirtPluginTable& table = target.backend->table;
    std::lock_guard<std::mutex> lock(runtime.ipc_mutex());
    void* pointer = nullptr;
    size_t size = 0;
    if (auto error = table.IpcOpenMemHandle(target.local, &pointer, &size, &handle, flags)) {
      return BackendAnswer(error, *target.backend, function);
    }
    if (auto error = NoteOpened(runtime, target, pointer, size, function)) {
      table.IpcCloseMemHandle(target.local, pointer);
      return error;
    }
    *devPtr = pointer;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtIpcCloseMemHandle(void* devPtr) {
  return Guard(__func__, [&](const char* function) {
    if (devPtr == nullptr) return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function);
    Runtime& runtime = Runtime::Get();
    const uintptr_t address = reinterpret_cast<uintptr_t>(devPtr);
    std::lock_guard<std::mutex> lock(runtime.ipc_mutex());
    auto& opens = runtime.ipc_opens();
    auto open = opens.find(address);
    auto allocation = runtime.allocations().Find(address);
    if (open == opens.end() || !allocation || allocation->base != address) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: {} is not an address infinirtIpcOpenMemHandle gave that is still open",
                  function, devPtr);
    }
    Backend& owner = runtime.backend(allocation->backend);
    if (auto error = owner.table.IpcCloseMemHandle(allocation->local_device, devPtr)) {
      return BackendAnswer(error, owner, function);
    }
    if (--open->second == 0) {
      opens.erase(open);
      runtime.allocations().RemoveExact(address, [](const Allocation&) { return true; });
    }
    return infinirtSuccess;
  });
}

infinirtError_t infinirtIpcGetEventHandle(infinirtIpcEventHandle_t* handle, infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function) {
    if (handle == nullptr) return Fail(infinirtErrorInvalidValue, "{}: handle is NULL", function);
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolveObject(runtime.events(), event, "event", &record, function)) {
      return error;
    }
    if (!(record.flags & infinirtEventInterprocess)) {
      return Fail(infinirtErrorInvalidResourceHandle,
                  "{}: the event was created without infinirtEventInterprocess", function);
    }
    Backend& owner = runtime.backend(record.backend);
    infinirtIpcEventHandle_t made;
    std::memset(&made, 0, sizeof made);
    const infinirtError_t error =
        owner.table.IpcGetEventHandle(record.local_device, &made, record.plugin_handle);
    if (error == infinirtSuccess) *handle = made;
    return BackendAnswer(error, owner, function);
  });
}

infinirtError_t infinirtIpcOpenEventHandle(infinirtEvent_t* event,
                                           infinirtIpcEventHandle_t handle) {
  return Guard(__func__, [&](const char* function) {
    if (event == nullptr) return Fail(infinirtErrorInvalidValue, "{}: event is NULL", function);
    Runtime& runtime = Runtime::Get();
    Target target;
    if (auto error = CurrentTarget(runtime, &target, function)) return error;
    const infinirtPluginTable& table = target.backend->table;
    void* opened = nullptr;
    if (auto error = table.IpcOpenEventHandle(target.local, &opened, &handle)) {
      return BackendAnswer(error, *target.backend, function);
    }
    // An opened event is an interprocess event like the one it was exported from.
    constexpr unsigned int kFlags = infinirtEventInterprocess | infinirtEventDisableTiming;
    return Publish(runtime.events(), target, opened, kFlags, event, table.EventDestroy, function);
  });
}

}  // extern "C"
