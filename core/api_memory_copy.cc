// The public C API for one-dimensional copies and memsets, synchronous and asynchronous (recorded
// as nodes while the stream captures). The 2D and 3D ones are built from them
// (api_memory_2d.cc).
#include "api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

// Node makers for work recorded during stream capture.
auto CopyNode(void* dst, const void* src, size_t count, enum infinirtMemcpyKind kind) {
  return [=](GraphData&, GraphNode* node) {
    DescribeCopy(node, dst, src, count, kind);
    return infinirtSuccess;
  };
}

auto SetNode(void* pointer, int value, size_t count) {
  return [=](GraphData&, GraphNode* node) {
    DescribeSet(node, pointer, value, count);
    return infinirtSuccess;
  };
}

}  // namespace

extern "C" {

infinirtError_t infinirtMemcpy(void* dst, const void* src, size_t count,
                               enum infinirtMemcpyKind kind) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    if (count == 0 && static_cast<unsigned>(kind) <= infinirtMemcpyDefault) return infinirtSuccess;
    Target target;
    enum infinirtMemcpyKind resolved;
    CrossBackendCopy cross;
    if (auto error = RouteCopy(runtime, dst, src, count, kind, nullptr, &target, &resolved, &cross,
                               function_name)) {
      return error;
    }
    if (cross.needed) {
      for (const auto& side : {cross.source, cross.destination}) {
        if (!side) continue;
        if (auto error = runtime.captures().CheckLegacyUse(side->device)) return error;
      }
      if (auto error = runtime.captures().CheckUnsafeCall()) return error;
      return StagedCopy(runtime, dst, src, count, cross, nullptr);
    }
    if (auto error = runtime.captures().CheckLegacyUse(target.device)) return error;
    if (auto error = runtime.captures().CheckUnsafeCall()) return error;
    return BackendAnswer(target.backend->table.Memcpy(target.local, dst, src, count, resolved),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtMemcpyAsync(void* dst, const void* src, size_t count,
                                    enum infinirtMemcpyKind kind, infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    StreamTarget stream_target;
    if (auto error = ResolveStream(runtime, stream, &stream_target, function_name)) return error;
    if (count == 0 && static_cast<unsigned>(kind) <= infinirtMemcpyDefault) return infinirtSuccess;
    Target target;
    enum infinirtMemcpyKind resolved;
    CrossBackendCopy cross;
    if (auto error = RouteCopy(runtime, dst, src, count, kind, &stream_target, &target, &resolved,
                               &cross, function_name)) {
      return error;
    }
    if (cross.needed) {
      infinirtError_t captured;
      if (runtime.captures().RefuseUncapturable(
              stream_target.ref, "a copy between backends (the host stages it)", &captured)) {
        return Fail(captured, "{}: a copy between backends cannot be captured", function_name);
      }
      return StagedCopy(runtime, dst, src, count, cross, &stream_target);
    }
    infinirtError_t captured;
    if (runtime.captures().Record(stream_target.ref, CopyNode(dst, src, count, resolved),
                                  &captured)) {
      return captured;
    }
    // A host-to-host copy is synchronous with respect to the host (CUDA); the plugin ABI makes
    // that the plugin's job, since only it can refuse before enqueuing (in a host function).
    const infinirtError_t answer =
        CopyWaitingIfPageable(stream_target, IntoPageableHost(runtime, dst, resolved), [&] {
          return stream_target.backend->table.MemcpyAsync(stream_target.local, dst, src, count,
                                                          resolved, stream_target.stream);
        });
    return BackendAnswer(answer, *stream_target.backend, function_name);
  });
}

infinirtError_t infinirtMemset(void* devPtr, int value, size_t count) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    if (count == 0) return infinirtSuccess;
    Target target;
    if (auto error = RouteMemset(runtime, devPtr, count, nullptr, &target, function_name)) {
      return error;
    }
    if (auto error = runtime.captures().CheckLegacyUse(target.device)) return error;
    if (auto error = runtime.captures().CheckUnsafeCall()) return error;
    return BackendAnswer(target.backend->table.Memset(target.local, devPtr, value, count),
                         *target.backend, function_name);
  });
}

infinirtError_t infinirtMemsetAsync(void* devPtr, int value, size_t count,
                                    infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function_name) {
    Runtime& runtime = Runtime::Get();
    StreamTarget stream_target;
    if (auto error = ResolveStream(runtime, stream, &stream_target, function_name)) return error;
    if (count == 0) return infinirtSuccess;
    Target target;
    if (auto error = RouteMemset(runtime, devPtr, count, &stream_target, &target, function_name)) {
      return error;
    }
    infinirtError_t captured;
    if (runtime.captures().Record(stream_target.ref, SetNode(devPtr, value, count), &captured)) {
      return captured;
    }
    return BackendAnswer(stream_target.backend->table.MemsetAsync(
                             stream_target.local, devPtr, value, count, stream_target.stream),
                         *stream_target.backend, function_name);
  });
}

}  // extern "C"
