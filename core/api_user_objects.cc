// The public C API for user objects (user_objects.h): created and released by the program,
// retained by graphs.
#include <climits>

#include "api_support.h"
#include "user_objects.h"

using namespace infinirt::core;       // NOLINT: this file implements the core's C API
using namespace infinirt::core::api;  // NOLINT

namespace {

infinirtError_t CheckCount(unsigned int count, const char* function) {
  if (count == 0 || count > INT_MAX) {
    return Fail(infinirtErrorInvalidValue, "{}: count {} is not in 1..INT_MAX", function, count);
  }
  return infinirtSuccess;
}

infinirtError_t ResolveUserObject(infinirtUserObject_t object, std::shared_ptr<UserObject>* found,
                                  const char* function) {
  *found = FindUserObject(HandleValue(object));
  if (!*found) {
    return Fail(infinirtErrorInvalidValue, "{}: {} is not a live user object", function,
                static_cast<const void*>(object));
  }
  return infinirtSuccess;
}

}  // namespace

extern "C" {

infinirtError_t infinirtUserObjectCreate(infinirtUserObject_t* object_out, void* ptr,
                                         infinirtHostFn_t destroy, unsigned int initialRefcount,
                                         unsigned int flags) {
  return Guard(__func__, [&](const char* function) {
    if (object_out == nullptr) {
      return Fail(infinirtErrorInvalidValue, "{}: object_out is NULL", function);
    }
    if (destroy == nullptr) return Fail(infinirtErrorInvalidValue, "{}: destroy is NULL", function);
    if (auto error = CheckCount(initialRefcount, function)) return error;
    if (flags != infinirtUserObjectNoDestructorSync) {
      return Fail(infinirtErrorInvalidValue,
                  "{}: flags must be infinirtUserObjectNoDestructorSync, not {:#x}", function,
                  flags);
    }
    auto object = CreateUserObject(ptr, destroy, initialRefcount);
    *object_out = reinterpret_cast<infinirtUserObject_t>(static_cast<uintptr_t>(object->handle()));
    return infinirtSuccess;
  });
}

infinirtError_t infinirtUserObjectRetain(infinirtUserObject_t object, unsigned int count) {
  return Guard(__func__, [&](const char* function) {
    if (auto error = CheckCount(count, function)) return error;
    std::shared_ptr<UserObject> found;
    if (auto error = ResolveUserObject(object, &found, function)) return error;
    if (!found->Retain(count)) {
      return Fail(infinirtErrorInvalidValue, "{}: the object was released", function);
    }
    return infinirtSuccess;
  });
}

infinirtError_t infinirtUserObjectRelease(infinirtUserObject_t object, unsigned int count) {
  return Guard(__func__, [&](const char* function) {
    if (auto error = CheckCount(count, function)) return error;
    std::shared_ptr<UserObject> found;
    if (auto error = ResolveUserObject(object, &found, function)) return error;
    if (found->Release(count)) return infinirtSuccess;
    // More than it holds: NVIDIA's runtime answers Success. The program's own references go;
    // those graphs and execs hold stay theirs.
    const uint64_t released = found->ReleaseUnheld(count);
    Log().debug("{}: the object holds fewer than {} references; released the {} the program held",
                function, count, released);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphRetainUserObject(infinirtGraph_t graph, infinirtUserObject_t object,
                                              unsigned int count, unsigned int flags) {
  return Guard(__func__, [&](const char* function) {
    std::shared_ptr<GraphData> data;
    if (auto error = ResolveGraph(Runtime::Get(), graph, &data, function)) return error;
    if (auto error = CheckCount(count, function)) return error;
    if (flags != 0 && flags != infinirtGraphUserObjectMove) {
      return Fail(infinirtErrorInvalidValue, "{}: unknown flags {:#x}", function, flags);
    }
    std::shared_ptr<UserObject> found;
    if (auto error = ResolveUserObject(object, &found, function)) return error;
    // Moved references are the caller's already: the count stays, their owner changes.
    if (flags != infinirtGraphUserObjectMove && !found->Retain(count)) {
      return Fail(infinirtErrorInvalidValue, "{}: the object was released", function);
    }
    std::lock_guard<std::recursive_mutex> lock(data->mutex());
    data->user_objects().Add(found, count);
    return infinirtSuccess;
  });
}

infinirtError_t infinirtGraphReleaseUserObject(infinirtGraph_t graph, infinirtUserObject_t object,
                                               unsigned int count) {
  return Guard(__func__, [&](const char* function) {
    std::shared_ptr<GraphData> data;
    if (auto error = ResolveGraph(Runtime::Get(), graph, &data, function)) return error;
    if (auto error = CheckCount(count, function)) return error;
    std::shared_ptr<UserObject> found;
    if (auto error = ResolveUserObject(object, &found, function)) return error;
    unsigned int released = 0;
    {
      std::lock_guard<std::recursive_mutex> lock(data->mutex());
      released = data->user_objects().ReleaseAtMost(found, count);
    }
    // Releasing more than the graph holds releases what it holds: NVIDIA's runtime answers
    // Success.
    if (released < count) {
      Log().debug("{}: the graph held {} of the {} references released", function, released, count);
    }
    return infinirtSuccess;
  });
}

}  // extern "C"
