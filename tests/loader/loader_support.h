// Helpers for the loader scenarios: where the fake plugins are, the backend listing, captured
// log output, scoped environment changes and a device round trip.
#ifndef INFINIRT_TESTS_LOADER_LOADER_SUPPORT_H_
#define INFINIRT_TESTS_LOADER_LOADER_SUPPORT_H_

#include <gtest/gtest.h>
#include <limits.h>
#include <stdlib.h>

#include <initializer_list>
#include <optional>
#include <ostream>
#include <sstream>
#include <string>
#include <vector>

#include "infinirt.h"

// GoogleTest prints these by name in failure messages.
inline void PrintTo(infinirtError_t error, std::ostream* os) { *os << infinirtGetErrorName(error); }

inline const char* BackendStatusName(infinirtBackendStatus_t status) {
  switch (status) {
    case infinirtBackendLoaded:
      return "Loaded";
    case infinirtBackendNotFound:
      return "NotFound";
    case infinirtBackendDlopenFailed:
      return "DlopenFailed";
    case infinirtBackendNoEntryPoint:
      return "NoEntryPoint";
    case infinirtBackendAbiTooOld:
      return "AbiTooOld";
    case infinirtBackendAbiTooNew:
      return "AbiTooNew";
    case infinirtBackendBadTable:
      return "BadTable";
    case infinirtBackendRuntimeMissing:
      return "RuntimeMissing";
    case infinirtBackendInitFailed:
      return "InitFailed";
    case infinirtBackendFilteredOut:
      return "FilteredOut";
    case infinirtBackendDuplicate:
      return "Duplicate";
    case infinirtBackendInsecure:
      return "Insecure";
    case infinirtBackendUnknownDeviceType:
      return "UnknownDeviceType";
    case infinirtBackendNotBuilt:
      return "NotBuilt";
  }
  return "?";
}

inline void PrintTo(infinirtBackendStatus_t status, std::ostream* os) {
  *os << BackendStatusName(status) << " (" << static_cast<int>(status) << ")";
}

namespace infinirt::loader_test {

// ${CMAKE_BINARY_DIR}/tests/plugins/<scenario>, where tests/loader/CMakeLists.txt builds fakes.
inline std::string PluginDir(const std::string& scenario) {
  return std::string(FAKE_PLUGIN_ROOT) + "/" + scenario;
}

inline std::string PluginFile(const std::string& scenario, const std::string& file_name) {
  return PluginDir(scenario) + "/libinfinirt_" + file_name + ".so";
}

inline std::string CpuPlugin() { return CPU_PLUGIN; }

// The listing reports real paths.
inline std::string RealPath(const std::string& path) {
  char buffer[PATH_MAX];
  return realpath(path.c_str(), buffer) ? std::string(buffer) : path;
}

inline std::vector<infinirtBackendProp> Listing() {
  int count = 0;
  EXPECT_EQ(infinirtGetBackendCount(&count), infinirtSuccess);
  std::vector<infinirtBackendProp> listing(count);
  for (int i = 0; i < count; ++i) {
    EXPECT_EQ(infinirtGetBackendProperties(&listing[i], i), infinirtSuccess);
  }
  return listing;
}

// Every listing entry with that backend name, in listing order.
inline std::vector<infinirtBackendProp> EntriesNamed(const std::string& name) {
  std::vector<infinirtBackendProp> entries;
  for (const infinirtBackendProp& entry : Listing()) {
    if (name == entry.name) entries.push_back(entry);
  }
  return entries;
}

// The one listing entry with that name; fails the test and returns nothing otherwise.
inline std::optional<infinirtBackendProp> OnlyEntryNamed(const std::string& name) {
  const std::vector<infinirtBackendProp> entries = EntriesNamed(name);
  EXPECT_EQ(entries.size(), 1u) << "listing entries named '" << name << "'";
  if (entries.size() != 1) return std::nullopt;
  return entries[0];
}

// The device count, also when the runtime answers NoDevice (then 0).
inline int DeviceCount() {
  int count = -1;
  const infinirtError_t error = infinirtGetDeviceCount(&count);
  EXPECT_TRUE(error == infinirtSuccess || error == infinirtErrorNoDevice) << error;
  return count;
}

// Runs body with stderr (where the core's spdlog logger writes) captured; returns the text.
template <class Body>
std::string CaptureStderrOf(Body&& body) {
  testing::internal::CaptureStderr();
  body();
  return testing::internal::GetCapturedStderr();
}

// True when one line of text contains every part.
inline bool HasLineWith(const std::string& text, std::initializer_list<std::string> parts) {
  std::istringstream lines(text);
  std::string line;
  while (std::getline(lines, line)) {
    bool all = true;
    for (const std::string& part : parts) all = all && line.find(part) != std::string::npos;
    if (all) return true;
  }
  return false;
}

inline bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

// Sets (or, with nullopt, unsets) an environment variable until the end of the scope.
class ScopedEnv {
 public:
  ScopedEnv(const char* name, const std::optional<std::string>& value) : name_(name) {
    if (const char* old = getenv(name)) old_ = old;
    Apply(value);
  }
  ~ScopedEnv() { Apply(old_); }
  ScopedEnv(const ScopedEnv&) = delete;
  ScopedEnv& operator=(const ScopedEnv&) = delete;

 private:
  void Apply(const std::optional<std::string>& value) {
    if (value) {
      setenv(name_.c_str(), value->c_str(), 1);
    } else {
      unsetenv(name_.c_str());
    }
  }
  std::string name_;
  std::optional<std::string> old_;
};

// Allocates two buffers on the device and copies host -> device -> device -> host.
inline void ExpectDeviceRoundTrip(int device) {
  SCOPED_TRACE("device " + std::to_string(device));
  ASSERT_EQ(infinirtSetDevice(device), infinirtSuccess);
  constexpr size_t kBytes = 4096;
  std::vector<unsigned char> in(kBytes), out(kBytes, 0);
  for (size_t i = 0; i < kBytes; ++i) in[i] = static_cast<unsigned char>(i * 31 + device);
  void* first = nullptr;
  void* second = nullptr;
  ASSERT_EQ(infinirtMalloc(&first, kBytes), infinirtSuccess);
  ASSERT_EQ(infinirtMalloc(&second, kBytes), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpy(first, in.data(), kBytes, infinirtMemcpyHostToDevice), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpy(second, first, kBytes, infinirtMemcpyDeviceToDevice), infinirtSuccess);
  EXPECT_EQ(infinirtMemcpy(out.data(), second, kBytes, infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  EXPECT_EQ(in, out);
  EXPECT_EQ(infinirtFree(first), infinirtSuccess);
  EXPECT_EQ(infinirtFree(second), infinirtSuccess);
}

// Asserts that the CPU plugin loaded beside a rejected one and that its device works.
// The CPU is the only device, and it works.
inline void ExpectOnlyTheCpuDevice() {
  ASSERT_EQ(infinirtInit(), infinirtSuccess);
  EXPECT_EQ(DeviceCount(), 1);
  infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
  EXPECT_EQ(infinirtDeviceGetType(&type, 0), infinirtSuccess);
  EXPECT_EQ(type, INFINI_DEVICE_CPU);
  ExpectDeviceRoundTrip(0);
}

inline void ExpectCpuStillWorks() {
  const auto cpu = OnlyEntryNamed("cpu");
  ASSERT_TRUE(cpu);
  EXPECT_EQ(cpu->status, infinirtBackendLoaded) << cpu->reason;
  EXPECT_EQ(cpu->deviceCount, 1);
  ExpectOnlyTheCpuDevice();
}

// Every test starts from, and leaves, a finalized runtime: its first call initialises it
// from the environment as the test has set it.
class RuntimeTest : public testing::Test {
 protected:
  void SetUp() override { ASSERT_EQ(infinirtFinalize(), infinirtSuccess); }
  void TearDown() override {
    infinirtSetDevice(0);  // the current device is per thread and outlives the runtime
    infinirtFinalize();
  }
};

}  // namespace infinirt::loader_test

#endif  // INFINIRT_TESTS_LOADER_LOADER_SUPPORT_H_
