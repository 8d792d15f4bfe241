// The public C API for pitched memory, 2D and 3D copies and memsets, and copies between the
// memory of two devices. They are built from the one-dimensional calls (api_memory_copy.cc): the
// whole region is checked first, so that a bad region changes nothing, then each row is copied
// or set as MemcpyAsync and MemsetAsync do it (one call where the rows are contiguous), which
// also records them when the stream captures. An asynchronous 2D copy or memset outside captures
// goes to the backend as one plane instead, where the backend takes planes.

#include <cstdint>
#include <functional>
#include <optional>
#include <vector>

#include "api_support.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

// Rows are this many bytes apart at least, as CUDA aligns them for the GPU's memory transactions.
constexpr size_t kPitchAlignment = 256;

// A box of linear memory: `depth` slices of `height` rows of `width` bytes.
struct Box {
  const unsigned char* base = nullptr;  // the first byte of the first row
  size_t pitch = 0;                     // bytes from a row to the next
  size_t slice_pitch = 0;               // bytes from a slice to the next
  size_t width = 0, height = 0, depth = 0;

  const unsigned char* Row(size_t y, size_t z) const { return base + z * slice_pitch + y * pitch; }
  bool Contiguous() const {
    return pitch == width && (depth == 1 || slice_pitch == width * height);
  }
};

Box PlaneBox(const void* base, size_t pitch, size_t width, size_t height) {
  Box box;
  box.base = static_cast<const unsigned char*>(base);
  box.pitch = pitch;
  box.slice_pitch = pitch * height;
  box.width = width;
  box.height = height;
  box.depth = 1;
  return box;
}

bool MultiplyAdd(size_t a, size_t b, size_t c, size_t* out) {
  size_t product = 0;
  return !__builtin_mul_overflow(a, b, &product) && !__builtin_add_overflow(product, c, out);
}

// Bytes from the box's first byte to one past its last; false when that overflows.
bool SpanOf(const Box& box, size_t* span) {
  size_t slices = 0, rows = 0;
  uintptr_t end = 0;
  return MultiplyAdd(box.depth - 1, box.slice_pitch, 0, &slices) &&
         MultiplyAdd(box.height - 1, box.pitch, box.width, &rows) &&
         !__builtin_add_overflow(slices, rows, span) &&
         !__builtin_add_overflow(reinterpret_cast<uintptr_t>(box.base), *span, &end);
}

// What a pitch narrower than the rows is: NVIDIA's runtime answers InvalidPitchValue for a copy's
// and InvalidValue for a memset's.
enum class Operation { kCopy, kSet };

infinirtError_t NarrowPitchError(Operation operation) {
  return operation == Operation::kCopy ? infinirtErrorInvalidPitchValue : infinirtErrorInvalidValue;
}

// Checks a box before any of it is touched: a pitch narrower than a row, a size that overflows,
// or a box that leaves its allocation (or runs from memory InfiniRT does not know into memory it
// does) is refused.
infinirtError_t CheckBox(Runtime& runtime, const Box& box, Operation operation, const char* what,
                         const char* function, size_t* span) {
  if (box.base == nullptr) return Fail(infinirtErrorInvalidValue, "{}: {} is NULL", function, what);
  if (box.pitch < box.width) {
    return Fail(NarrowPitchError(operation), "{}: {}'s pitch {} is less than the width {}",
                function, what, box.pitch, box.width);
  }
  if (!SpanOf(box, span)) {
    return Fail(infinirtErrorInvalidValue, "{}: {}'s size overflows", function, what);
  }
  const uintptr_t first = reinterpret_cast<uintptr_t>(box.base);
  const auto first_owner = runtime.allocations().Find(first);
  const auto last_owner = runtime.allocations().Find(first + *span - 1);
  const bool unknown_memory = !first_owner && !last_owner;
  if (!unknown_memory && !(first_owner && last_owner && first_owner->base == last_owner->base)) {
    return Fail(infinirtErrorInvalidValue,
                "{}: {} ({} bytes from {}) does not lie within one allocation", function, what,
                *span, static_cast<const void*>(box.base));
  }
  return infinirtSuccess;
}

// Whether a row of one box shares a byte with a row of the other. Planes of the same pitch are
// compared row against row (copying one column range of an image to another is no overlap);
// otherwise any shared byte of their spans counts.
bool BoxesOverlap(const Box& a, size_t span_a, const Box& b, size_t span_b) {
  const auto start_a = reinterpret_cast<intptr_t>(a.base);
  const auto start_b = reinterpret_cast<intptr_t>(b.base);
  if (start_a >= start_b + static_cast<intptr_t>(span_b) ||
      start_b >= start_a + static_cast<intptr_t>(span_a)) {
    return false;
  }
  if (a.depth != 1 || b.depth != 1 || a.pitch != b.pitch || a.pitch == 0) return true;
  // Row i of a starts at delta + (i - j) * pitch from row j of b: overlap when that offset is
  // within (-width, width) for some difference k = i - j of row indices.
  const intptr_t delta = start_a - start_b;
  const auto pitch = static_cast<intptr_t>(a.pitch);
  const auto width = static_cast<intptr_t>(a.width);
  const auto rows = static_cast<intptr_t>(a.height);
  const intptr_t nearest = -delta / pitch;
  for (intptr_t k = nearest - 1; k <= nearest + 1; ++k) {
    if (k <= -rows || k >= rows) continue;
    const intptr_t offset = delta + k * pitch;
    if (offset > -width && offset < width) return true;
  }
  return false;
}

using RowCopy = std::function<infinirtError_t(void* dst, const void* src, size_t count)>;
using RowSet = std::function<infinirtError_t(void* ptr, size_t count)>;
// A whole plane (a box of one slice) in one backend call; nullopt where the backend cannot take
// it, and the rows are issued one by one instead.
using PlaneCopy = std::function<std::optional<infinirtError_t>(const Box& dst, const Box& src)>;
using PlaneSet = std::function<std::optional<infinirtError_t>(const Box& box)>;

// Copies a checked box, row by row (or at once when both are contiguous).
infinirtError_t CopyBox(const Box& dst, const Box& src, const RowCopy& copy) {
  if (dst.Contiguous() && src.Contiguous()) {
    return copy(const_cast<unsigned char*>(dst.base), src.base, dst.width * dst.height * dst.depth);
  }
  for (size_t z = 0; z < dst.depth; ++z) {
    for (size_t y = 0; y < dst.height; ++y) {
      if (auto error = copy(const_cast<unsigned char*>(dst.Row(y, z)), src.Row(y, z), dst.width)) {
        return error;
      }
    }
  }
  return infinirtSuccess;
}

infinirtError_t SetBox(const Box& box, const RowSet& set) {
  if (box.Contiguous()) {
    return set(const_cast<unsigned char*>(box.base), box.width * box.height * box.depth);
  }
  for (size_t z = 0; z < box.depth; ++z) {
    for (size_t y = 0; y < box.height; ++y) {
      if (auto error = set(const_cast<unsigned char*>(box.Row(y, z)), box.width)) return error;
    }
  }
  return infinirtSuccess;
}

bool IsEmpty(const Box& box) { return box.width == 0 || box.height == 0 || box.depth == 0; }

// Rows that one backend call can take instead of one call each.
bool IsPlane(const Box& box) { return box.depth == 1 && box.height > 1 && !box.Contiguous(); }

// Checks both boxes of a copy, and that the destination does not overlap the source.
infinirtError_t CheckCopyBoxes(const Box& dst, const Box& src, const char* function) {
  Runtime& runtime = Runtime::Get();
  size_t dst_span = 0, src_span = 0;
  if (auto error =
          CheckBox(runtime, dst, Operation::kCopy, "the destination", function, &dst_span)) {
    return error;
  }
  if (auto error = CheckBox(runtime, src, Operation::kCopy, "the source", function, &src_span)) {
    return error;
  }
  if (BoxesOverlap(dst, dst_span, src, src_span)) {
    return Fail(infinirtErrorInvalidValue, "{}: the destination overlaps the source", function);
  }
  return infinirtSuccess;
}

// Checks both boxes, then copies.
infinirtError_t CheckedCopy(const Box& dst, const Box& src, const RowCopy& copy,
                            const char* function, const PlaneCopy& plane = nullptr) {
  if (IsEmpty(dst)) return infinirtSuccess;
  if (auto error = CheckCopyBoxes(dst, src, function)) return error;
  if (plane && (IsPlane(dst) || IsPlane(src))) {
    if (auto done = plane(dst, src)) return *done;
  }
  return CopyBox(dst, src, copy);
}

infinirtError_t CheckedSet(const Box& box, const RowSet& set, const char* function,
                           const PlaneSet& plane = nullptr) {
  if (IsEmpty(box)) return infinirtSuccess;
  size_t span = 0;
  if (auto error = CheckBox(Runtime::Get(), box, Operation::kSet, "devPtr", function, &span)) {
    return error;
  }
  if (plane && IsPlane(box)) {
    if (auto done = plane(box)) return *done;
  }
  return SetBox(box, set);
}

// A checked plane copied by the stream's backend in one call (Memcpy2DAsync), routed as
// MemcpyAsync routes its first row: the rest of the plane lies in the same allocations. Not while
// a capture is active anywhere (captured copies are nodes of one row each) nor between backends
// (staged through the host row by row).
PlaneCopy NativePlaneCopy(enum infinirtMemcpyKind kind, infinirtStream_t stream,
                          const char* function) {
  return [=](const Box& dst, const Box& src) -> std::optional<infinirtError_t> {
    Runtime& runtime = Runtime::Get();
    if (runtime.captures().Active()) return std::nullopt;
    StreamTarget stream_target;
    if (auto error = ResolveStream(runtime, stream, &stream_target, function)) return error;
    void* to = const_cast<unsigned char*>(dst.base);
    Target target;
    enum infinirtMemcpyKind resolved;
    CrossBackendCopy cross;
    if (auto error = RouteCopy(runtime, to, src.base, dst.width, kind, &stream_target, &target,
                               &resolved, &cross, function)) {
      return error;
    }
    if (cross.needed) return std::nullopt;
    const infinirtError_t copied =
        CopyWaitingIfPageable(stream_target, IntoPageableHost(runtime, to, resolved), [&] {
          return stream_target.backend->table.Memcpy2DAsync(
              stream_target.local, to, dst.pitch, src.base, src.pitch, dst.width, dst.height,
              resolved, stream_target.stream);
        });
    if (copied == infinirtErrorNotSupported) return std::nullopt;
    return BackendAnswer(copied, *stream_target.backend, function);
  };
}

// The same for a memset (Memset2DAsync).
PlaneSet NativePlaneSet(int value, infinirtStream_t stream, const char* function) {
  return [=](const Box& box) -> std::optional<infinirtError_t> {
    Runtime& runtime = Runtime::Get();
    if (runtime.captures().Active()) return std::nullopt;
    StreamTarget stream_target;
    if (auto error = ResolveStream(runtime, stream, &stream_target, function)) return error;
    void* rows = const_cast<unsigned char*>(box.base);
    Target target;
    if (auto error = RouteMemset(runtime, rows, box.width, &stream_target, &target, function)) {
      return error;
    }
    const infinirtError_t set = stream_target.backend->table.Memset2DAsync(
        stream_target.local, rows, box.pitch, value, box.width, box.height, stream_target.stream);
    if (set == infinirtErrorNotSupported) return std::nullopt;
    return BackendAnswer(set, *stream_target.backend, function);
  };
}

RowCopy SyncCopy(enum infinirtMemcpyKind kind) {
  return [kind](void* dst, const void* src, size_t count) {
    return infinirtMemcpy(dst, src, count, kind);
  };
}

RowCopy AsyncCopy(enum infinirtMemcpyKind kind, infinirtStream_t stream) {
  return [kind, stream](void* dst, const void* src, size_t count) {
    return infinirtMemcpyAsync(dst, src, count, kind, stream);
  };
}

// The box of `extent` at `pos` in a pitched volume (3D copies and memsets). As NVIDIA's runtime
// answers: a pitch narrower than the rows is NarrowPitchError, rows that fit the pitch but leave
// it from their position InvalidValue, and so are rows that leave a slice of `ysize` rows; a NULL
// pointer, or an offset that overflows, gives a NULL base, which CheckBox refuses.
infinirtError_t BoxOf(const infinirtPitchedPtr& ptr, const infinirtPos& pos,
                      const infinirtExtent& extent, Operation operation, const char* what,
                      const char* function, Box* box) {
  if (extent.width > ptr.pitch) {
    return Fail(NarrowPitchError(operation), "{}: {}'s pitch {} is less than the width {}",
                function, what, ptr.pitch, extent.width);
  }
  if (extent.width != 0 && pos.x > ptr.pitch - extent.width) {
    return Fail(infinirtErrorInvalidValue, "{}: {} rows of {} bytes from x {} leave the pitch {}",
                function, what, extent.width, pos.x, ptr.pitch);
  }
  if ((extent.depth > 1 || pos.z > 0) && pos.y + extent.height > ptr.ysize) {
    return Fail(infinirtErrorInvalidValue, "{}: {} rows from y {} leave the slice of {} rows",
                function, what, extent.height, pos.y, ptr.ysize);
  }
  box->pitch = ptr.pitch;
  box->slice_pitch = ptr.pitch * ptr.ysize;
  box->width = extent.width;
  box->height = extent.height;
  box->depth = extent.depth;
  size_t offset = 0;
  const bool placed = ptr.ptr != nullptr && MultiplyAdd(pos.z, box->slice_pitch, pos.x, &offset) &&
                      MultiplyAdd(pos.y, ptr.pitch, offset, &offset);
  box->base = placed ? static_cast<const unsigned char*>(ptr.ptr) + offset : nullptr;
  return infinirtSuccess;
}

// A pitch above what the current device takes (its infinirtDevAttrMaxPitch, where it tells) is
// InvalidValue, as NVIDIA's runtime answers for a 3D copy.
infinirtError_t CheckMaxPitch(size_t pitch, const char* function) {
  Runtime& runtime = Runtime::Get();
  Target target;
  if (CurrentTarget(runtime, &target, function) != infinirtSuccess) return infinirtSuccess;
  int max_pitch = 0;
  if (target.backend->table.DeviceGetAttribute(target.local, &max_pitch, infinirtDevAttrMaxPitch) !=
          infinirtSuccess ||
      max_pitch <= 0 || pitch <= static_cast<size_t>(max_pitch)) {
    return infinirtSuccess;
  }
  return Fail(infinirtErrorInvalidValue, "{}: the pitch {} exceeds the device's maximum {}",
              function, pitch, max_pitch);
}

// The source and destination boxes of a 3D copy of linear memory.
infinirtError_t BoxesOf3DCopy(const infinirtMemcpy3DParms* p, Box* dst, Box* src,
                              const char* function) {
  if (p == nullptr) return Fail(infinirtErrorInvalidValue, "{}: p is NULL", function);
  if (p->srcArray != nullptr || p->dstArray != nullptr) {
    return Fail(infinirtErrorInvalidValue, "{}: InfiniRT has no CUDA arrays (srcArray, dstArray)",
                function);
  }
  for (const size_t pitch : {p->dstPtr.pitch, p->srcPtr.pitch}) {
    if (auto error = CheckMaxPitch(pitch, function)) return error;
  }
  if (auto error = BoxOf(p->dstPtr, p->dstPos, p->extent, Operation::kCopy, "the destination",
                         function, dst)) {
    return error;
  }
  return BoxOf(p->srcPtr, p->srcPos, p->extent, Operation::kCopy, "the source", function, src);
}

// The whole volume a 3D memset sets.
infinirtError_t BoxOfMemset3D(const infinirtPitchedPtr& ptr, const infinirtExtent& extent,
                              const char* function, Box* box) {
  return BoxOf(ptr, make_infinirtPos(0, 0, 0), extent, Operation::kSet, "devPtr", function, box);
}

size_t RoundUpToPitch(size_t width) {
  return (width + kPitchAlignment - 1) / kPitchAlignment * kPitchAlignment;
}

// A device's memory for MemcpyPeer: memory InfiniRT knows as device memory must be that
// device's; other memory (pinned, host) is taken as it is.
infinirtError_t CheckPeerPointer(Runtime& runtime, const void* ptr, int device, const char* what,
                                 const char* function) {
  Target target;
  if (auto error = DeviceTarget(runtime, device, &target, function)) return error;
  const auto owner = runtime.allocations().Find(reinterpret_cast<uintptr_t>(ptr));
  if (owner && owner->IsDeviceMemory() && owner->device != device) {
    return Fail(infinirtErrorInvalidValue, "{}: {} is memory of device {}, not {}", function, what,
                owner->device, device);
  }
  return infinirtSuccess;
}

infinirtError_t PeerCopy(void* dst, int dstDevice, const void* src, int srcDevice, size_t count,
                         const std::function<infinirtError_t()>& copy, const char* function_name) {
  return Guard(function_name, [&](const char* function) {
    Runtime& runtime = Runtime::Get();
    if (auto error = CheckPeerPointer(runtime, dst, dstDevice, "dst", function)) return error;
    if (auto error = CheckPeerPointer(runtime, src, srcDevice, "src", function)) return error;
    if (count == 0) return infinirtSuccess;
    return copy();
  });
}

}  // namespace

namespace infinirt::core::api {

infinirtError_t RowsOf3DCopy(const infinirtMemcpy3DParms* p, std::vector<CopyRow>* rows,
                             const char* function) {
  Box dst, src;
  if (auto error = BoxesOf3DCopy(p, &dst, &src, function)) return error;
  if (IsEmpty(dst)) return Fail(infinirtErrorInvalidValue, "{}: the extent is empty", function);
  if (auto error = CheckCopyBoxes(dst, src, function)) return error;
  rows->clear();
  return CopyBox(dst, src, [rows](void* to, const void* from, size_t count) {
    rows->push_back(CopyRow{to, from, count});
    return infinirtSuccess;
  });
}

}  // namespace infinirt::core::api

extern "C" {

infinirtError_t infinirtMallocPitch(void** devPtr, size_t* pitch, size_t width, size_t height) {
  return Guard(__func__, [&](const char* function) {
    if (devPtr == nullptr || pitch == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: {} is NULL", function,
                  devPtr == nullptr ? "devPtr" : "pitch");
    }
    const size_t row = RoundUpToPitch(width);
    size_t bytes = 0;
    // A width that no pitch can hold is a bad value (NVIDIA's answer); a height that makes the
    // size overflow asks for more memory than there is.
    if (row < width) {
      return Fail(infinirtErrorInvalidValue, "{}: no pitch holds rows of {} bytes", function,
                  width);
    }
    if (__builtin_mul_overflow(row, height, &bytes)) {
      return Fail(infinirtErrorMemoryAllocation, "{}: {} rows of {} bytes overflow", function,
                  height, width);
    }
    if (auto error = infinirtMalloc(devPtr, bytes)) return error;
    *pitch = row;
    return infinirtSuccess;
  });
}

infinirtError_t infinirtMalloc3D(struct infinirtPitchedPtr* pitchedDevPtr,
                                 struct infinirtExtent extent) {
  return Guard(__func__, [&](const char* function) {
    if (pitchedDevPtr == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: pitchedDevPtr is NULL", function);
    }
    size_t rows = 0;
    if (__builtin_mul_overflow(extent.height, extent.depth, &rows)) {
      return Fail(infinirtErrorMemoryAllocation, "{}: the extent overflows", function);
    }
    void* ptr = nullptr;
    size_t pitch = 0;
    if (auto error = infinirtMallocPitch(&ptr, &pitch, extent.width, rows)) return error;
    *pitchedDevPtr = make_infinirtPitchedPtr(ptr, pitch, extent.width, extent.height);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtMemcpy2D(void* dst, size_t dpitch, const void* src, size_t spitch,
                                 size_t width, size_t height, enum infinirtMemcpyKind kind) {
  return Guard(__func__, [&](const char* function) {
    return CheckedCopy(PlaneBox(dst, dpitch, width, height), PlaneBox(src, spitch, width, height),
                       SyncCopy(kind), function);
  });
}

infinirtError_t infinirtMemcpy2DAsync(void* dst, size_t dpitch, const void* src, size_t spitch,
                                      size_t width, size_t height, enum infinirtMemcpyKind kind,
                                      infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function) {
    return CheckedCopy(PlaneBox(dst, dpitch, width, height), PlaneBox(src, spitch, width, height),
                       AsyncCopy(kind, stream), function, NativePlaneCopy(kind, stream, function));
  });
}

infinirtError_t infinirtMemset2D(void* devPtr, size_t pitch, int value, size_t width,
                                 size_t height) {
  return Guard(__func__, [&](const char* function) {
    return CheckedSet(
        PlaneBox(devPtr, pitch, width, height),
        [value](void* ptr, size_t count) { return infinirtMemset(ptr, value, count); }, function);
  });
}

infinirtError_t infinirtMemset2DAsync(void* devPtr, size_t pitch, int value, size_t width,
                                      size_t height, infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function) {
    return CheckedSet(
        PlaneBox(devPtr, pitch, width, height),
        [value, stream](void* ptr, size_t count) {
          return infinirtMemsetAsync(ptr, value, count, stream);
        },
        function, NativePlaneSet(value, stream, function));
  });
}

infinirtError_t infinirtMemcpy3D(const struct infinirtMemcpy3DParms* p) {
  return Guard(__func__, [&](const char* function) {
    Box dst, src;
    if (auto error = BoxesOf3DCopy(p, &dst, &src, function)) return error;
    return CheckedCopy(dst, src, SyncCopy(p->kind), function);
  });
}

infinirtError_t infinirtMemcpy3DAsync(const struct infinirtMemcpy3DParms* p,
                                      infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function) {
    Box dst, src;
    if (auto error = BoxesOf3DCopy(p, &dst, &src, function)) return error;
    return CheckedCopy(dst, src, AsyncCopy(p->kind, stream), function);
  });
}

infinirtError_t infinirtMemset3D(struct infinirtPitchedPtr pitchedDevPtr, int value,
                                 struct infinirtExtent extent) {
  return Guard(__func__, [&](const char* function) {
    Box box;
    if (auto error = BoxOfMemset3D(pitchedDevPtr, extent, function, &box)) return error;
    return CheckedSet(
        box, [value](void* ptr, size_t count) { return infinirtMemset(ptr, value, count); },
        function);
  });
}

infinirtError_t infinirtMemset3DAsync(struct infinirtPitchedPtr pitchedDevPtr, int value,
                                      struct infinirtExtent extent, infinirtStream_t stream) {
  return Guard(__func__, [&](const char* function) {
    Box box;
    if (auto error = BoxOfMemset3D(pitchedDevPtr, extent, function, &box)) return error;
    return CheckedSet(
        box,
        [value, stream](void* ptr, size_t count) {
          return infinirtMemsetAsync(ptr, value, count, stream);
        },
        function);
  });
}

infinirtError_t infinirtMemcpyPeer(void* dst, int dstDevice, const void* src, int srcDevice,
                                   size_t count) {
  return PeerCopy(
      dst, dstDevice, src, srcDevice, count,
      [&] { return infinirtMemcpy(dst, src, count, infinirtMemcpyDefault); }, __func__);
}

infinirtError_t infinirtMemcpyPeerAsync(void* dst, int dstDevice, const void* src, int srcDevice,
                                        size_t count, infinirtStream_t stream) {
  return PeerCopy(
      dst, dstDevice, src, srcDevice, count,
      [&] { return infinirtMemcpyAsync(dst, src, count, infinirtMemcpyDefault, stream); },
      __func__);
}

}  // extern "C"
