#include "scoped_device.h"

#include <string>

#include "infinirt/error.hpp"
#include "runtime_log.h"

namespace infinirt::detail {

ScopedDevice::ScopedDevice(int ordinal) {
  INFINIRT_CHECK(infinirtGetDevice(&previous_));
  if (previous_ != ordinal) {
    check(infinirtSetDevice(ordinal),
          [&] { return "infinirtSetDevice(" + std::to_string(ordinal) + ")"; });
  }
}

ScopedDevice::~ScopedDevice() {
  int now = -1;
  if (infinirtGetDevice(&now) == infinirtSuccess && now != previous_) {
    ReportIfFailed(infinirtSetDevice(previous_), "infinirtSetDevice (restoring the device)");
  }
}

}  // namespace infinirt::detail
