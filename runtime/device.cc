#include "infinirt/device.hpp"

#include <ostream>

#include "infinirt/error.hpp"

namespace infinirt {

namespace {

bool KnownType(Device::Type type) {
  return static_cast<int>(type) >= 0 && static_cast<int>(type) < INFINI_DEVICE_TYPE_COUNT;
}

}  // namespace

Device::Device(Type type, Index index) : type_(type), index_(index) {
  if (!KnownType(type)) {
    check(infinirtErrorInvalidValue,
          [&] { return "Device(type=" + std::to_string(static_cast<int>(type)) + ")"; });
  }
  if (index < 0) {
    check(infinirtErrorInvalidDevice, [&] {
      return "Device(" + std::string(typeName(type)) + ", index=" + std::to_string(index) + ")";
    });
  }
}

int Device::ordinal() const {
  int ordinal = -1;
  check(infinirtDeviceGetOrdinal(&ordinal, type_, index_),
        [&] { return "infinirtDeviceGetOrdinal(" + toString() + ")"; });
  return ordinal;
}

Device Device::fromOrdinal(int ordinal) {
  infiniDevice_t type;
  check(infinirtDeviceGetType(&type, ordinal),
        [&] { return "infinirtDeviceGetType(device=" + std::to_string(ordinal) + ")"; });
  // The index is the ordinal's place among the ordinals of its type.
  for (int index = 0;; ++index) {
    int candidate = -1;
    check(infinirtDeviceGetOrdinal(&candidate, type, index), [&] {
      return "infinirtDeviceGetOrdinal(" + std::string(typeName(type)) + ":" +
             std::to_string(index) + ")";
    });
    if (candidate == ordinal) return Device(type, index);
  }
}

const char* Device::typeName(Type type) {
  switch (type) {
#define INFINIRT_TYPE_NAME_(name, value, display, plugin) \
  case INFINI_DEVICE_##name:                              \
    return #plugin;
    INFINIRT_DEVICE_TYPES(INFINIRT_TYPE_NAME_)
#undef INFINIRT_TYPE_NAME_
    default:
      return "unknown";
  }
}

std::string Device::toString() const {
  return std::string(typeName(type_)) + ":" + std::to_string(index_);
}

std::ostream& operator<<(std::ostream& out, const Device& device) {
  return out << device.toString();
}

}  // namespace infinirt
