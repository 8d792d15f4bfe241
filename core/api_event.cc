// The public C API for events: creation and destruction, records, synchronisation and queries,
// timing, native handles. A stream's wait on an event is with the streams (api_stream.cc).

#include "api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

// Resolves an event, applies capture's rules for synchronising or querying it, and calls the
// owning backend's entry on it, as CallOnStream (api_stream.cc) does for a stream.
template <HandleEntry entry>
infinirtError_t CallOnEvent(infinirtEvent_t event, bool synchronizes, const char* function) {
  Runtime& runtime = Runtime::Get();
  ObjectRecord record;
  if (auto error = ResolveObject(runtime.events(), event, "event", &record, function)) {
    return error;
  }
  if (auto error = runtime.captures().CheckEventUse(HandleValue(event), synchronizes)) {
    return error;
  }
  Backend& owner = runtime.backend(record.backend);
  return BackendAnswer((owner.table.*entry)(record.local_device, record.plugin_handle), owner,
                       function);
}

}  // namespace

extern "C" {

// ------------------------------------------------------------------------------------------
// Events
// ------------------------------------------------------------------------------------------

infinirtError_t infinirtEventGetNativeHandle(void** nativeEvent, infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function_name) {
    if (nativeEvent == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: nativeEvent is NULL", function_name);
    }
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolveObject(runtime.events(), event, "event", &record, function_name)) {
      return error;
    }
    Backend& owner = runtime.backend(record.backend);
    return BackendAnswer(
        owner.table.EventGetNativeHandle(record.local_device, record.plugin_handle, nativeEvent),
        owner, function_name);
  });
}

infinirtError_t infinirtEventCreateWithFlags(infinirtEvent_t* event, unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) {
    if (event == nullptr)
      return Fail(infinirtErrorInvalidValue, "{}: event is NULL", function_name);
    constexpr unsigned int kKnownFlags =
        infinirtEventBlockingSync | infinirtEventDisableTiming | infinirtEventInterprocess;
    if (flags & ~kKnownFlags) {
      return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function_name, flags);
    }
    if ((flags & infinirtEventInterprocess) && !(flags & infinirtEventDisableTiming)) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: infinirtEventInterprocess requires infinirtEventDisableTiming",
                  function_name);
    }
    Runtime& runtime = Runtime::Get();
    return CreateOnCurrentDevice(runtime, runtime.events(), &infinirtPluginTable::EventCreate,
                                 &infinirtPluginTable::EventDestroy, flags, event, function_name);
  });
}

infinirtError_t infinirtEventCreate(infinirtEvent_t* event) {
  return infinirtEventCreateWithFlags(event, infinirtEventDefault);
}

infinirtError_t infinirtEventRecord(infinirtEvent_t event, infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (auto error = ResolveObject(runtime.events(), event, "event", &record, function_name)) {
      return error;
    }
    StreamTarget target;
    if (auto error = ResolveStream(runtime, stream, &target, function_name)) return error;
    if (target.device != record.device) {
      return Fail(infinirtErrorInvalidResourceHandle,
                  "{}: the event belongs to device {} and the stream to device {}", function_name,
                  record.device, target.device);
    }
    infinirtError_t captured;
    if (runtime.captures().RecordEvent(target.ref, HandleValue(event), &captured)) {
      return captured;
    }
    runtime.captures().ForgetEvent(HandleValue(event));  // it stands for real work again
    return BackendAnswer(
        target.backend->table.EventRecord(target.local, record.plugin_handle, target.stream),
        *target.backend, function_name);
  });
}

infinirtError_t infinirtEventRecordWithFlags(infinirtEvent_t event, infinirtStream_t stream,
                                             unsigned int flags) {
  return Guard(__func__, [&](const char* function_name) -> infinirtError_t {
    if (flags & ~static_cast<unsigned int>(infinirtEventRecordExternal)) {
      return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function_name, flags);
    }
    if (flags & infinirtEventRecordExternal) {
      // An external record is a record outside capture; inside one it would be an event record
      // node of the graph, which InfiniRT's graphs do not have yet.
      Runtime& runtime = Runtime::Get();
      StreamTarget target;
      if (auto error = ResolveStream(runtime, stream, &target, function_name)) return error;
      if (auto error = RefuseInCapture(runtime, target, "an external event record",
                                       "an external event record cannot be captured yet "
                                       "(InfiniRT's graphs have no event record nodes)",
                                       function_name)) {
        return error;
      }
    }
    return infinirtEventRecord(event, stream);
  });
}

infinirtError_t infinirtEventQuery(infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function_name) {
    return CallOnEvent<&infinirtPluginTable::EventQuery>(event, /*synchronizes=*/false,
                                                         function_name);
  });
}

infinirtError_t infinirtEventSynchronize(infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function_name) {
    return CallOnEvent<&infinirtPluginTable::EventSynchronize>(event, /*synchronizes=*/true,
                                                               function_name);
  });
}

infinirtError_t infinirtEventDestroy(infinirtEvent_t event) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    ObjectRecord record;
    if (!runtime.events().Remove(HandleValue(event), &record)) {
      return InvalidHandle(event, "event", function_name);
    }
    if (auto e = runtime.backend(record.backend)
                     .table.EventDestroy(record.local_device, record.plugin_handle)) {
      return RestoreRefused(runtime.events(), HandleValue(event), record, e, function_name);
    }
    runtime.captures().ForgetEvent(HandleValue(event));
    return infinirtSuccess;
  });
}

infinirtError_t infinirtEventElapsedTime(float* ms, infinirtEvent_t start, infinirtEvent_t end) {
  return Guard(__func__, [&](const char* function_name) {
    if (ms == nullptr) return Fail(infinirtErrorInvalidValue, "{}: ms is NULL", function_name);
    Runtime& runtime = Runtime::Get();
    ObjectRecord first, last;
    if (auto e = ResolveObject(runtime.events(), start, "event", &first, function_name)) {
      return e;
    }
    if (auto e = ResolveObject(runtime.events(), end, "event", &last, function_name)) {
      return e;
    }
    if (first.device != last.device) {
      return Fail(infinirtErrorInvalidResourceHandle,
                  "{}: the events belong to different devices ({} and {})", function_name,
                  first.device, last.device);
    }
    for (const ObjectRecord* event : {&first, &last}) {
      if (event->flags & infinirtEventDisableTiming) {
        return Fail(infinirtErrorInvalidResourceHandle,
                    "{}: the {} event was created with infinirtEventDisableTiming", function_name,
                    event == &first ? "start" : "end");
      }
    }
    if (auto e = runtime.captures().CheckEventUse(HandleValue(start), false)) return e;
    if (auto e = runtime.captures().CheckEventUse(HandleValue(end), false)) return e;
    Backend& owner = runtime.backend(first.backend);
    const infinirtError_t answer = owner.table.EventElapsedTime(
        first.local_device, ms, first.plugin_handle, last.plugin_handle);
    // Both events exist, are timed and are on one device: CUDA answers InvalidResourceHandle
    // then only for an event that was never recorded.
    return BackendAnswer(answer, owner, function_name,
                         answer == infinirtErrorInvalidResourceHandle
                             ? "the start or the end event was never recorded"
                             : nullptr);
  });
}

}  // extern "C"
