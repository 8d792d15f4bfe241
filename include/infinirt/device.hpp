// A device of one type, by its index among the devices of that type: nvidia:0, cpu:0.
#ifndef INFINIRT_DEVICE_HPP_
#define INFINIRT_DEVICE_HPP_

#include <cstddef>
#include <functional>
#include <iosfwd>
#include <string>

#include "infinirt.h"
#include "infinirt/export.hpp"

namespace infinirt {

class INFINIRT_CXX_API Device {
 public:
  using Type = infiniDevice_t;
  using Index = int;

  // Any type of the C API's list and any index from 0 (infinirt::Error, InvalidValue or
  // InvalidDevice, otherwise). Whether such a device is present is known only when it is used.
  Device(Type type = INFINI_DEVICE_CPU, Index index = 0);

  Type type() const { return type_; }
  Index index() const { return index_; }

  // The C API's flat ordinal of this device (infinirtDeviceGetOrdinal); infinirt::Error
  // (InvalidDevice) when the process has no such device.
  int ordinal() const;
  // The device with that flat ordinal.
  static Device fromOrdinal(int ordinal);

  // "nvidia:0": the type's plugin name and the index.
  std::string toString() const;
  // The type's plugin name: "cpu", "nvidia", "ascend", ...
  static const char* typeName(Type type);

  bool operator==(const Device& other) const {
    return type_ == other.type_ && index_ == other.index_;
  }
  bool operator!=(const Device& other) const { return !(*this == other); }
  bool operator<(const Device& other) const {
    return type_ != other.type_ ? type_ < other.type_ : index_ < other.index_;
  }

 private:
  Type type_;
  Index index_;
};

INFINIRT_CXX_API std::ostream& operator<<(std::ostream& out, const Device& device);

}  // namespace infinirt

template <>
struct std::hash<infinirt::Device> {
  size_t operator()(const infinirt::Device& device) const noexcept {
    return std::hash<long long>()((static_cast<long long>(device.type()) << 32) ^
                                  static_cast<unsigned int>(device.index()));
  }
};

#endif  // INFINIRT_DEVICE_HPP_
