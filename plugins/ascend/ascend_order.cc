// Streams, and CUDA's legacy-default-stream ordering built from ACL events.
//
// ACL streams, the default stream included, never wait for one another implicitly (CANN's
// stream-management guide). InfiniRT promises CUDA's rules: work on the legacy stream waits for
// all prior work of the blocking streams of its device, and blocking-stream work waits for prior
// legacy work. The plugin keeps those rules with events:
//   - after each legacy work item it records the device's legacy_done event on the ACL default
//     stream; a blocking stream whose last wait is older waits for it before its next item;
//   - before each legacy work item it records each blocking stream that has issued work since
//     the last join on that stream's own event, and makes the default stream wait for it.
// Non-blocking streams take no part. Destroying a stream or exec with pending work would block
// in ACL, so the plugin retires it and destroys it once its work is done.
#include <algorithm>

#include "ascend_state.h"

namespace infinirt::ascend {
namespace {

bool ExecIdle(Exec& exec) {
  if (!exec.launched) return true;
  int status = acl::kEventRecordedNotReady;
  return ACL_CALL(aclrtQueryEventStatus, exec.done, &status) == infinirtSuccess &&
         status == acl::kEventRecordedComplete;
}

infinirtError_t ReleaseStream(DeviceOrder& order, Stream* stream) {
  // Adopted twins of a stream the plugin destroys no longer take part in the legacy ordering:
  // their ACL stream is gone (using them is the program's error, as in CUDA).
  const auto leaves = [stream](const Stream* other) {
    return other == stream || (!stream->adopted && other->adopted && other->acl == stream->acl);
  };
  order.blocking.erase(std::remove_if(order.blocking.begin(), order.blocking.end(), leaves),
                       order.blocking.end());
  // An adopted stream is its maker's: only the plugin's own parts of it are released.
  infinirtError_t error =
      stream->adopted ? infinirtSuccess : ACL_CALL(aclrtDestroyStream, stream->acl);
  if (stream->joined != nullptr) ACL_CALL(aclrtDestroyEvent, stream->joined);
  delete stream;
  return error;
}

infinirtError_t ReleaseExec(Exec* exec) {
  const infinirtError_t error = ACL_CALL(aclmdlRIDestroy, exec->model);
  if (exec->done != nullptr) ACL_CALL(aclrtDestroyEvent, exec->done);
  delete exec;
  return error;
}

// Records the device's legacy_done after everything queued so far on the ACL default stream.
infinirtError_t RecordLegacyDone(DeviceOrder& order) {
  if (order.legacy_done == nullptr) {
    if (const infinirtError_t e = CreateEvent(&order.legacy_done, acl::kEventSync)) return e;
  }
  if (const infinirtError_t e = ACL_CALL(aclrtRecordEvent, order.legacy_done, nullptr)) return e;
  order.legacy_mark_pending = false;
  return infinirtSuccess;
}

}  // namespace

DeviceOrder& Order(int device) { return *TheState().devices.at(static_cast<size_t>(device)); }

// ACL reports "not ready" in the status out-parameter, with ACL_SUCCESS as the return value.
infinirtError_t QueryStream(void* acl_stream) {
  int status = acl::kStreamStatusNotReady;
  if (const infinirtError_t e = ACL_CALL(aclrtStreamQuery, acl_stream, &status)) return e;
  if (status == acl::kStreamStatusComplete) return infinirtSuccess;
  if (status == acl::kStreamStatusNotReady) return infinirtErrorNotReady;
  Log(INFINIRT_LOG_DEBUG, "aclrtStreamQuery gave status " + std::to_string(status));
  return infinirtErrorUnknown;
}

namespace {

// A blocking stream takes part in the legacy ordering: its own event, and a place in the list.
infinirtError_t JoinLegacyOrdering(Stream* stream) {
  if (const infinirtError_t e = CreateEvent(&stream->joined, acl::kEventSync)) return e;
  DeviceOrder& order = Order(stream->device);
  std::lock_guard<std::mutex> lock(order.mutex);
  order.blocking.push_back(stream);
  return infinirtSuccess;
}

}  // namespace

infinirtError_t CreateStream(int device, bool blocking, Stream** out,
                             std::optional<uint32_t> priority) {
  auto stream = std::make_unique<Stream>();
  stream->device = device;
  stream->blocking = blocking;
  const infinirtError_t created =
      priority ? ACL_CALL(aclrtCreateStreamWithConfig, &stream->acl, *priority, 0u)
               : ACL_CALL(aclrtCreateStream, &stream->acl);
  if (created != infinirtSuccess) return created;
  if (blocking) {
    if (const infinirtError_t e = JoinLegacyOrdering(stream.get())) {
      ACL_CALL(aclrtDestroyStream, stream->acl);
      return e;
    }
  }
  *out = stream.release();
  ReapRetired(device, false);
  return infinirtSuccess;
}

// ACL has no query for a stream's flags or device. aclrtStreamQuery, with the device bound,
// refuses a handle ACL does not know (or, in CANN's runtime, one of another device's context).
infinirtError_t AdoptStream(int device, void* acl_stream, Stream** out) {
  if (const infinirtError_t e = QueryStream(acl_stream); e != infinirtErrorNotReady && e) return e;
  bool blocking = false;
  {
    DeviceOrder& order = Order(device);
    std::lock_guard<std::mutex> lock(order.mutex);
    for (const Stream* own : order.blocking) blocking = blocking || own->acl == acl_stream;
  }
  auto stream = std::make_unique<Stream>();
  stream->acl = acl_stream;
  stream->device = device;
  stream->blocking = blocking;
  stream->adopted = true;
  if (blocking) {
    if (const infinirtError_t e = JoinLegacyOrdering(stream.get())) return e;
  }
  *out = stream.release();
  return infinirtSuccess;
}

infinirtError_t PrepareForeignWork(int device, Stream* stream) {
  if (stream == nullptr) {
    DeviceOrder& order = Order(device);
    std::lock_guard<std::mutex> lock(order.mutex);
    if (const infinirtError_t e = JoinBlockingStreams(order)) return e;
    order.legacy_mark_pending = true;
    order.legacy_generation.fetch_add(1, std::memory_order_acq_rel);
    return infinirtSuccess;
  }
  if (!stream->blocking) return infinirtSuccess;
  if (const infinirtError_t e = WaitForLegacyWork(*stream)) return e;
  // The next legacy item joins the stream, which covers what was queued on it meanwhile.
  stream->issued.fetch_add(1, std::memory_order_release);
  return infinirtSuccess;
}

infinirtError_t DestroyStream(Stream* stream) {
  const int device = stream->device;
  {
    DeviceOrder& order = Order(device);
    std::lock_guard<std::mutex> lock(order.mutex);
    const infinirtError_t state = QueryStream(stream->acl);
    if (state == infinirtErrorNotReady) {
      order.retired.push_back(stream);  // still joined by legacy work until it is destroyed
      return infinirtSuccess;
    }
    if (state != infinirtSuccess) return state;
    if (const infinirtError_t e = ReleaseStream(order, stream)) return e;
  }
  ReapRetired(device, false);
  return infinirtSuccess;
}

infinirtError_t DestroyExec(int device, Exec* exec) {
  DeviceOrder& order = Order(device);
  std::lock_guard<std::mutex> lock(order.mutex);
  if (!ExecIdle(*exec)) {
    order.retired_execs.push_back(exec);  // ACL refuses to destroy a running model
    return infinirtSuccess;
  }
  return ReleaseExec(exec);
}

void ReapRetired(int device, bool wait) {
  DeviceOrder& order = Order(device);
  std::lock_guard<std::mutex> lock(order.mutex);
  std::vector<Stream*> streams;
  for (Stream* stream : order.retired) {
    if (wait) ACL_CALL(aclrtSynchronizeStream, stream->acl);
    if (QueryStream(stream->acl) == infinirtSuccess) {
      ReleaseStream(order, stream);
    } else {
      streams.push_back(stream);
    }
  }
  order.retired.swap(streams);
  std::vector<Exec*> execs;
  for (Exec* exec : order.retired_execs) {
    if (wait && exec->launched) ACL_CALL(aclrtSynchronizeEvent, exec->done);
    if (ExecIdle(*exec)) {
      ReleaseExec(exec);
    } else {
      execs.push_back(exec);
    }
  }
  order.retired_execs.swap(execs);
}

infinirtError_t WaitForLegacyWork(Stream& stream) {
  DeviceOrder& order = Order(stream.device);
  if (stream.legacy_seen.load(std::memory_order_acquire) ==
      order.legacy_generation.load(std::memory_order_acquire)) {
    return infinirtSuccess;
  }
  std::lock_guard<std::mutex> lock(order.mutex);
  const uint64_t generation = order.legacy_generation.load();
  if (stream.legacy_seen.load() == generation) return infinirtSuccess;
  if (order.legacy_mark_pending) {
    if (const infinirtError_t e = RecordLegacyDone(order)) return e;
  }
  if (const infinirtError_t e = ACL_CALL(aclrtStreamWaitEvent, stream.acl, order.legacy_done)) {
    return e;
  }
  stream.legacy_seen.store(generation, std::memory_order_release);
  return infinirtSuccess;
}

infinirtError_t JoinBlockingStreams(DeviceOrder& order) {
  for (Stream* stream : order.blocking) {
    const uint64_t issued = stream->issued.load(std::memory_order_acquire);
    if (issued == stream->joined_at) continue;
    if (const infinirtError_t e = ACL_CALL(aclrtRecordEvent, stream->joined, stream->acl)) return e;
    if (const infinirtError_t e = ACL_CALL(aclrtStreamWaitEvent, nullptr, stream->joined)) return e;
    stream->joined_at = issued;
  }
  return infinirtSuccess;
}

infinirtError_t MarkLegacyWork(DeviceOrder& order) {
  if (const infinirtError_t e = RecordLegacyDone(order)) return e;
  order.legacy_generation.fetch_add(1, std::memory_order_acq_rel);
  return infinirtSuccess;
}

infinirtError_t SynchronizeLegacy(int device) {
  {
    DeviceOrder& order = Order(device);
    std::lock_guard<std::mutex> lock(order.mutex);
    if (const infinirtError_t e = JoinBlockingStreams(order)) return e;
  }
  if (const infinirtError_t e = ACL_CALL(aclrtSynchronizeStream, nullptr)) return e;
  ReapRetired(device, false);
  return infinirtSuccess;
}

infinirtError_t QueryLegacy(int device) {
  DeviceOrder& order = Order(device);
  std::lock_guard<std::mutex> lock(order.mutex);
  for (Stream* stream : order.blocking) {
    if (const infinirtError_t e = QueryStream(stream->acl)) return e;
  }
  return QueryStream(nullptr);
}

infinirtError_t SynchronizeTarget(int device, Stream* stream) {
  if (stream == nullptr) return SynchronizeLegacy(device);
  if (stream->blocking) {
    if (const infinirtError_t e = WaitForLegacyWork(*stream)) return e;
  }
  return ACL_CALL(aclrtSynchronizeStream, stream->acl);
}

void ReleaseOrders() {
  for (size_t device = 0; device < TheState().devices.size(); ++device) {
    if (Bind(static_cast<int>(device)) != infinirtSuccess) continue;
    ReapRetired(static_cast<int>(device), true);
    DeviceOrder& order = Order(static_cast<int>(device));
    if (order.legacy_done != nullptr) ACL_CALL(aclrtDestroyEvent, order.legacy_done);
    order.legacy_done = nullptr;
  }
}

}  // namespace infinirt::ascend
