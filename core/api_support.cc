#include "api_support.h"

#include <algorithm>

namespace infinirt::core::api {

infinirtError_t DeviceTarget(Runtime& runtime, int device, Target* target, const char* function) {
  const auto& devices = runtime.devices();
  if (devices.empty()) {
    return Fail(infinirtErrorNoDevice, "{}: no device is available: {}", function,
                runtime.no_device_reason());
  }
  if (device < 0 || device >= static_cast<int>(devices.size())) {
    return Fail(infinirtErrorInvalidDevice, "{}: device {} is not in [0, {})", function, device,
                devices.size());
  }
  target->backend_index = devices[device].backend;
  target->backend = &runtime.backend(target->backend_index);
  target->device = device;
  target->local = devices[device].local_device;
  return infinirtSuccess;
}

infinirtError_t CurrentTarget(Runtime& runtime, Target* target, const char* function) {
  return DeviceTarget(runtime, CurrentOrdinal(runtime), target, function);
}

Target TargetOf(Runtime& runtime, const Allocation& allocation) {
  Target target;
  target.backend_index = allocation.backend;
  target.backend = &runtime.backend(allocation.backend);
  target.device = allocation.device;
  target.local = allocation.local_device;
  return target;
}

infinirtError_t ResolveDefaultStream(Runtime& runtime, infinirtStream_t stream,
                                     StreamTarget* target, const char* function) {
  const uint64_t value = HandleValue(stream);
  if (value != 0 && value != HandleValue(infinirtStreamLegacy) &&
      value != HandleValue(infinirtStreamPerThread)) {
    return InvalidHandle(stream, "stream", function);
  }
  if (infinirtError_t error = CurrentTarget(runtime, target, function)) return error;
  const bool per_thread = value == HandleValue(infinirtStreamPerThread);
  target->stream = per_thread ? INFINIRT_PLUGIN_STREAM_PER_THREAD : INFINIRT_PLUGIN_STREAM_LEGACY;
  target->ref = StreamRef{};
  target->ref.legacy = !per_thread;
  target->ref.per_thread = per_thread;
  target->ref.device = target->device;
  return infinirtSuccess;
}

void LogUnexplainedFailure(infinirtError_t error, const char* function) {
  Log().debug("{}: failed with {} ({})", function, infinirtGetErrorName(error),
              infinirtGetErrorString(error));
}

infinirtError_t LogBackendRefusal(infinirtError_t answer, const Backend& backend,
                                  const char* function, const char* meaning) {
  return Fail(answer, "{}: backend '{}' answered {} ({}){}{}", function, backend.name,
              infinirtGetErrorName(answer), infinirtGetErrorString(answer), meaning ? ": " : "",
              meaning ? meaning : "");
}

infinirtError_t InvalidHandle(const void* handle, const char* what, const char* function) {
  return Fail(infinirtErrorInvalidResourceHandle, "{}: {} is not a live {}", function, handle,
              what);
}

infinirtError_t RegisterAllocation(Runtime& runtime, const Target& target, void* pointer,
                                   size_t size, MemoryKind kind, uint64_t owner,
                                   const char* function) {
  if (size > UINTPTR_MAX - reinterpret_cast<uintptr_t>(pointer)) {
    return FailVisibly(infinirtErrorMemoryAllocation,
                       "{}: backend '{}' returned {} for {} bytes, which wraps around the address "
                       "space",
                       function, target.backend->name, pointer, size);
  }
  Allocation allocation;
  allocation.owner = owner;
  allocation.base = reinterpret_cast<uintptr_t>(pointer);
  allocation.size = size;
  allocation.kind = kind;
  allocation.backend = target.backend_index;
  allocation.device = target.device;
  allocation.local_device = target.local;
  if (!runtime.allocations().Add(allocation)) {
    return FailVisibly(infinirtErrorUnknown,
                       "{}: backend '{}' returned {} which is already allocated", function,
                       target.backend->name, pointer);
  }
  return infinirtSuccess;
}

namespace {

// Where the bytes of a copy or memset live: in `allocation` when `found`, else in host memory
// InfiniRT did not allocate.
struct Span {
  bool found = false;
  Allocation allocation;
  bool on_device() const { return found && allocation.IsDeviceMemory(); }
};

infinirtError_t LookUpSpan(Runtime& runtime, const void* pointer, size_t count, const char* role,
                           Span* span, const char* function) {
  const uintptr_t address = reinterpret_cast<uintptr_t>(pointer);
  span->found = runtime.allocations().Find(address, &span->allocation);
  if (span->found) {
    const uintptr_t end = span->allocation.base + span->allocation.size;
    if (count > end - address) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: {} bytes at {} ({}) run past the end of its {}-byte allocation", function,
                  count, pointer, role, span->allocation.size);
    }
  }
  return infinirtSuccess;
}

enum infinirtMemcpyKind InferKind(const Span& dst, const Span& src) {
  if (src.on_device()) {
    return dst.on_device() ? infinirtMemcpyDeviceToDevice : infinirtMemcpyDeviceToHost;
  }
  return dst.on_device() ? infinirtMemcpyHostToDevice : infinirtMemcpyHostToHost;
}

}  // namespace

infinirtError_t RouteCopy(Runtime& runtime, void* dst, const void* src, size_t count,
                          enum infinirtMemcpyKind kind, const StreamTarget* stream, Target* target,
                          enum infinirtMemcpyKind* resolved_kind, CrossBackendCopy* cross,
                          const char* function) {
  if (static_cast<unsigned>(kind) > static_cast<unsigned>(infinirtMemcpyDefault)) {
    return Fail(infinirtErrorInvalidMemcpyDirection, "{}: {} is not a memcpy kind", function,
                static_cast<int>(kind));
  }
  if (dst == nullptr || src == nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: {} pointer is NULL", function,
                dst == nullptr ? "destination" : "source");
  }
  Span dst_span, src_span;
  if (auto e = LookUpSpan(runtime, dst, count, "destination", &dst_span, function)) return e;
  if (auto e = LookUpSpan(runtime, src, count, "source", &src_span, function)) return e;
  *cross = CrossBackendCopy{};
  const Span* device_sides[] = {&dst_span, &src_span};
  for (const Span* side : device_sides) {
    if (!side->on_device()) continue;
    const int owner = side->allocation.backend;
    const int performer = stream ? stream->backend_index
                                 : (dst_span.on_device() ? dst_span.allocation.backend : owner);
    if (owner != performer) cross->needed = true;
  }
  if (cross->needed) {
    if (src_span.on_device()) cross->source = TargetOf(runtime, src_span.allocation);
    if (dst_span.on_device()) cross->destination = TargetOf(runtime, dst_span.allocation);
    *resolved_kind = InferKind(dst_span, src_span);
    return infinirtSuccess;
  }
  if (stream) {
    *target = *stream;
  } else if (dst_span.on_device()) {
    *target = TargetOf(runtime, dst_span.allocation);
  } else if (src_span.on_device()) {
    *target = TargetOf(runtime, src_span.allocation);
  } else if (auto error = CurrentTarget(runtime, target, function)) {
    return error;
  }
  *resolved_kind = kind == infinirtMemcpyDefault ? InferKind(dst_span, src_span) : kind;
  return infinirtSuccess;
}

namespace {

constexpr size_t kStagingChunk = size_t{4} << 20;

// Host memory pinned by one backend, freed at scope exit.
class StagingBuffer {
 public:
  StagingBuffer(const Target& owner, size_t size) : owner_(owner) {
    error_ = owner_.backend->table.HostAlloc(owner_.local, &memory_, size, 0);
  }
  ~StagingBuffer() {
    if (error_ == infinirtSuccess) owner_.backend->table.FreeHost(owner_.local, memory_);
  }
  StagingBuffer(const StagingBuffer&) = delete;
  StagingBuffer& operator=(const StagingBuffer&) = delete;
  infinirtError_t error() const { return error_; }
  void* data() const { return memory_; }

 private:
  Target owner_;
  void* memory_ = nullptr;
  infinirtError_t error_;
};

}  // namespace

infinirtError_t StagedCopy(Runtime&, void* dst, const void* src, size_t count,
                           const CrossBackendCopy& cross, const StreamTarget* stream) {
  if (stream) {
    if (auto e = stream->backend->table.StreamSynchronize(stream->local, stream->stream)) return e;
  }
  if (!cross.source) {  // host to device
    const Target& to = *cross.destination;
    return to.backend->table.Memcpy(to.local, dst, src, count, infinirtMemcpyHostToDevice);
  }
  const Target& from = *cross.source;
  if (!cross.destination) {  // device to host
    return from.backend->table.Memcpy(from.local, dst, src, count, infinirtMemcpyDeviceToHost);
  }
  const Target& to = *cross.destination;
  StagingBuffer staging(from, std::min(count, kStagingChunk));
  if (staging.error()) return staging.error();
  for (size_t done = 0; done < count; done += kStagingChunk) {
    const size_t chunk = std::min(kStagingChunk, count - done);
    const auto* source = static_cast<const unsigned char*>(src) + done;
    auto* target = static_cast<unsigned char*>(dst) + done;
    if (auto e = from.backend->table.Memcpy(from.local, staging.data(), source, chunk,
                                            infinirtMemcpyDeviceToHost)) {
      return e;
    }
    if (auto e = to.backend->table.Memcpy(to.local, target, staging.data(), chunk,
                                          infinirtMemcpyHostToDevice)) {
      return e;
    }
  }
  return infinirtSuccess;
}

infinirtError_t RouteMemset(Runtime& runtime, void* pointer, size_t count,
                            const StreamTarget* stream, Target* target, const char* function) {
  if (pointer == nullptr) return Fail(infinirtErrorInvalidValue, "{}: devPtr is NULL", function);
  Span span;
  if (auto e = LookUpSpan(runtime, pointer, count, "memset target", &span, function)) return e;
  if (!span.found) {
    return Fail(infinirtErrorInvalidValue, "{}: {} was not allocated by InfiniRT", function,
                pointer);
  }
  if (stream) {
    if (span.on_device() && span.allocation.backend != stream->backend_index) {
      return Fail(infinirtErrorNotSupported,
                  "{}: memory of backend '{}' cannot be set from a stream of backend '{}'",
                  function, runtime.backend(span.allocation.backend).name, stream->backend->name);
    }
    *target = *stream;
  } else {
    *target = TargetOf(runtime, span.allocation);
  }
  return infinirtSuccess;
}

std::optional<infinirtError_t> ReleaseGraphMemory(Runtime& runtime, void* pointer,
                                                  const char* function) {
  auto found = runtime.allocations().FindExact(reinterpret_cast<uintptr_t>(pointer));
  if (!found || found->kind != MemoryKind::kGraph) return std::nullopt;
  if (runtime.graph_memory().Release(pointer)) return infinirtSuccess;
  return Fail(infinirtErrorInvalidValue, "{}: graph memory {} is not live (already freed)",
              function, pointer);
}

}  // namespace infinirt::core::api
