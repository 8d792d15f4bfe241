// What libinfiniop keeps behind its opaque handles: handles, tensor descriptors and operator
// descriptors, each registered while live so that a destroyed or foreign pointer is answered
// with a status instead of being followed.
#ifndef INFINIOP_INFINIOP_INTERNAL_H_
#define INFINIOP_INFINIOP_INTERNAL_H_

#include <cstddef>
#include <mutex>
#include <unordered_set>
#include <vector>

#include "infiniop.h"
#include "infiniop_backend.h"

namespace infiniop {

struct Backend;

// The pointers of one kind of object that are live.
class LiveSet {
 public:
  void Add(const void* object) {
    std::lock_guard<std::mutex> lock(mutex_);
    live_.insert(object);
  }
  bool Contains(const void* object) const {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.count(object) != 0;
  }
  // False when it was not live.
  bool Remove(const void* object) {
    std::lock_guard<std::mutex> lock(mutex_);
    return live_.erase(object) != 0;
  }

 private:
  mutable std::mutex mutex_;
  std::unordered_set<const void*> live_;
};

LiveSet& LiveHandles();
LiveSet& LiveTensors();
LiveSet& LiveDescriptors();

}  // namespace infiniop

struct InfiniopHandle {
  infiniDevice_t device;
  int device_id;  // the index of the device within its type
  int ordinal;    // the device's InfiniRT ordinal
  const infiniop::Backend* backend;
};

struct InfiniopTensorDescriptor {
  infiniDtype_t dtype;
  std::vector<size_t> shape;
  std::vector<ptrdiff_t> strides;  // in elements

  size_t ndim() const { return shape.size(); }
  size_t Elements() const;
  // A dimension of more than one element with stride 0: several elements share one address.
  bool HasBroadcastDimension() const;
  infiniopBackendTensor View() const { return {dtype, shape.size(), shape.data(), strides.data()}; }
};

// Every operator's descriptor type names this struct; its first two members are those InfiniCore
// declares (device type and index).
struct InfiniopDescriptor {
  infiniDevice_t device_type;
  int device_id;
};

namespace infiniop {

struct OperatorDescriptor : InfiniopDescriptor {
  infiniopOperator_t op;
  int ordinal;  // the InfiniRT ordinal of its device: a call's stream must be that device's
  const Backend* backend;
  infiniopBackendKernel_t kernel;
  size_t workspace_size;
  // Per buffer of the call, in its order; SIZE_MAX for one Create had no descriptor for.
  std::vector<size_t> buffer_elements;
  infiniopBackendCreateParams params;  // Create's scalars, which a call may repeat
};

}  // namespace infiniop

#endif  // INFINIOP_INFINIOP_INTERNAL_H_
