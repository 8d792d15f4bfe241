// Makes a device current for the calling thread for a scope, restoring the previous one.
#ifndef INFINIRT_RUNTIME_SCOPED_DEVICE_H_
#define INFINIRT_RUNTIME_SCOPED_DEVICE_H_

namespace infinirt::detail {

class ScopedDevice {
 public:
  explicit ScopedDevice(int ordinal);
  ~ScopedDevice();
  ScopedDevice(const ScopedDevice&) = delete;
  ScopedDevice& operator=(const ScopedDevice&) = delete;

 private:
  int previous_ = -1;
};

}  // namespace infinirt::detail

#endif  // INFINIRT_RUNTIME_SCOPED_DEVICE_H_
