// A vendor runtime that is absent, incomplete or failing: the NVIDIA plugin still loads, says
// what went wrong in the backend listing and the log, contributes no device, and the CPU backend
// works. Each test is one scenario, run by its own CTest entry with the environment it needs
// (tests/vendor_plugins/CMakeLists.txt); run alone, a test whose scenario is not set up skips.
#include <dlfcn.h>
#include <gtest/gtest.h>

#include <cstdlib>
#include <string>

#include "infinirt.h"
#include "vendor_test_support.h"

namespace infinirt::vendor_test {
namespace {

bool Contains(const std::string& text, const std::string& part) {
  return text.find(part) != std::string::npos;
}

std::string Scenario() {
  const char* scenario = std::getenv("VENDOR_FAILURE_SCENARIO");
  return scenario ? scenario : "";
}

// Initialises with debug logging captured; returns the log.
std::string InitialiseCapturingLog() {
  ::testing::internal::CaptureStderr();
  EXPECT_EQ(infinirtInit(), infinirtSuccess);
  return ::testing::internal::GetCapturedStderr();
}

void ExpectTheCpuBackendWorks() {
  int count = 0;
  ASSERT_EQ(infinirtGetDeviceCount(&count), infinirtSuccess);
  ASSERT_GE(count, 1);
  infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
  ASSERT_EQ(infinirtDeviceGetType(&type, count - 1), infinirtSuccess);
  EXPECT_EQ(type, INFINI_DEVICE_CPU);
  ASSERT_EQ(infinirtSetDevice(count - 1), infinirtSuccess);
  void* memory = nullptr;
  ASSERT_EQ(infinirtMalloc(&memory, 128), infinirtSuccess);
  EXPECT_EQ(infinirtMemset(memory, 1, 128), infinirtSuccess);
  EXPECT_EQ(infinirtFree(memory), infinirtSuccess);
}

void ExpectNoNvidiaDevice() {
  int counts[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_EQ(infinirtGetAllDeviceCount(counts), infinirtSuccess);
  EXPECT_EQ(counts[INFINI_DEVICE_NVIDIA], 0);
}

#define REQUIRE_SCENARIO(name) \
  if (Scenario() != name) GTEST_SKIP() << "run by the CTest entry for scenario " name

TEST(VendorFailure, RuntimeMissing) {
  REQUIRE_SCENARIO("runtime_missing");
  const std::string log = InitialiseCapturingLog();
  const infinirtBackendProp nvidia = BackendListing("nvidia");
  EXPECT_EQ(nvidia.status, infinirtBackendRuntimeMissing);
  EXPECT_EQ(nvidia.deviceCount, 0);
  EXPECT_EQ(nvidia.runtimeVersion, -1);
  // What was looked for, where the list came from, and what dlopen answered.
  EXPECT_TRUE(Contains(nvidia.runtimeLibrary, "/nonexistent/libcudart.so.13"))
      << nvidia.runtimeLibrary;
  EXPECT_TRUE(Contains(nvidia.runtimeLibrary, "INFINIRT_NVIDIA_RUNTIME")) << nvidia.runtimeLibrary;
  EXPECT_TRUE(Contains(nvidia.reason, "cannot open shared object file")) << nvidia.reason;
  EXPECT_TRUE(Contains(log, "cannot open shared object file")) << log;
  ExpectNoNvidiaDevice();
  ExpectTheCpuBackendWorks();
}

TEST(VendorFailure, RuntimeLacksAFunction) {
  REQUIRE_SCENARIO("missing_symbol");
  const std::string log = InitialiseCapturingLog();
  const infinirtBackendProp nvidia = BackendListing("nvidia");
  EXPECT_EQ(nvidia.status, infinirtBackendInitFailed);
  EXPECT_TRUE(Contains(nvidia.reason, "lacks cudaMemsetAsync")) << nvidia.reason;
  EXPECT_TRUE(Contains(log, "lacks cudaMemsetAsync")) << log;
  EXPECT_TRUE(Contains(nvidia.runtimeLibrary, "nvidia_missing_symbol")) << nvidia.runtimeLibrary;
  ExpectNoNvidiaDevice();
  ExpectTheCpuBackendWorks();
}

TEST(VendorFailure, RuntimeInitialisationFails) {
  REQUIRE_SCENARIO("init_fails");
  const std::string log = InitialiseCapturingLog();
  const infinirtBackendProp nvidia = BackendListing("nvidia");
  EXPECT_EQ(nvidia.status, infinirtBackendInitFailed);
  const std::string expected = "cudaGetDeviceCount returned 3 (cudaErrorInitializationError)";
  EXPECT_TRUE(Contains(nvidia.reason, expected)) << nvidia.reason;
  EXPECT_TRUE(Contains(log, expected)) << log;
  // The runtime answered its version before its device count failed: the listing keeps it.
  EXPECT_EQ(nvidia.runtimeVersion, 12080) << "the emulated runtime's version";
  ExpectNoNvidiaDevice();
  ExpectTheCpuBackendWorks();
}

// The runtime says the driver is missing or too old (cudaErrorInsufficientDriver): the listing
// says which, from whether the driver library opens. Which one this machine shows depends on
// whether it has an NVIDIA driver; the driver_too_old scenario puts a stand-in on the path.
void ExpectDriverDiagnosis(const std::string& expected) {
  const std::string log = InitialiseCapturingLog();
  const infinirtBackendProp nvidia = BackendListing("nvidia");
  EXPECT_EQ(nvidia.status, infinirtBackendInitFailed);
  EXPECT_TRUE(Contains(nvidia.reason, expected)) << nvidia.reason;
  EXPECT_TRUE(
      Contains(nvidia.reason, "cudaGetDeviceCount returned 35 (cudaErrorInsufficientDriver)"))
      << nvidia.reason;
  EXPECT_TRUE(Contains(log, "its vendor runtime failed to initialise")) << log;
  ExpectNoNvidiaDevice();
  ExpectTheCpuBackendWorks();
}

TEST(VendorFailure, DriverNotFoundIsNamed) {
  REQUIRE_SCENARIO("driver_missing");
  void* driver = dlopen("libcuda.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (driver != nullptr) {
    dlclose(driver);
    ExpectDriverDiagnosis("driver too old for this runtime");  // this machine has a driver
  } else {
    ExpectDriverDiagnosis("driver not found (libcuda.so.1: ");
  }
}

TEST(VendorFailure, DriverTooOldIsNamed) {
  REQUIRE_SCENARIO("driver_too_old");
  ExpectDriverDiagnosis(
      "driver too old for this runtime: libcuda.so.1 supports version 11.8, the runtime is 12.8");
}

// The NVIDIA plugin loaded the emulated runtime (one device, version 12.8), and the CPU backend
// works beside it.
void ExpectTheEmulatedRuntimeInUse() {
  InitialiseCapturingLog();
  const infinirtBackendProp nvidia = BackendListing("nvidia");
  EXPECT_EQ(nvidia.status, infinirtBackendLoaded) << nvidia.reason;
  EXPECT_EQ(nvidia.deviceCount, 1);
  EXPECT_EQ(nvidia.runtimeVersion, 12080) << "the emulated runtime's version";
  EXPECT_TRUE(Contains(nvidia.runtimeLibrary, "emulated/nvidia/libcudart.so.13"))
      << nvidia.runtimeLibrary;
  ExpectTheCpuBackendWorks();
}

// Runtime names the dynamic loader cannot find: the core says so without the loader's search
// (where it can be sure), and the listing shows, for each, exactly what dlopen says of it.
TEST(VendorFailure, AbsentBareNamesAreReportedInTheLoadersWords) {
  REQUIRE_SCENARIO("runtime_bare_name_absent");
  InitialiseCapturingLog();
  const infinirtBackendProp nvidia = BackendListing("nvidia");
  EXPECT_EQ(nvidia.status, infinirtBackendRuntimeMissing);
  std::string expected = "vendor runtime not found: ";
  for (const char* name : {"libinfinirt_absent_runtime.so.1", "libinfinirt_absent_runtime.so"}) {
    ASSERT_EQ(dlopen(name, RTLD_NOW | RTLD_LOCAL), nullptr) << name << " exists";
    expected +=
        std::string(name == std::string("libinfinirt_absent_runtime.so") ? "; " : "") + dlerror();
  }
  EXPECT_EQ(nvidia.reason, expected);
  ExpectNoNvidiaDevice();
  ExpectTheCpuBackendWorks();
}

// A bare name found through LD_LIBRARY_PATH is opened: the core's shortcut never hides a file
// the loader would find.
TEST(VendorFailure, BareNameInTheLibraryPathIsOpened) {
  REQUIRE_SCENARIO("runtime_bare_name_in_library_path");
  ExpectTheEmulatedRuntimeInUse();
}

// Candidates are tried in order, a glob pattern by its matches: the missing file first, then
// the emulated runtime that the pattern matches; the incomplete runtime after it is never tried.
TEST(VendorFailure, GlobCandidateIsExpandedWhenReached) {
  REQUIRE_SCENARIO("runtime_glob");
  ExpectTheEmulatedRuntimeInUse();
}

// The runtime named by the config file (plugins.nvidia.runtime_library), not the environment.
TEST(VendorFailure, ConfigFileChoosesTheRuntime) {
  REQUIRE_SCENARIO("config_override");
  ExpectTheEmulatedRuntimeInUse();
}

TEST(VendorFailure, MalformedRuntimeOverrideInTheConfigFile) {
  REQUIRE_SCENARIO("config_malformed");
  InitialiseCapturingLog();
  const infinirtBackendProp nvidia = BackendListing("nvidia");
  EXPECT_EQ(nvidia.status, infinirtBackendRuntimeMissing);
  EXPECT_TRUE(Contains(nvidia.runtimeLibrary, "runtime_library must be a string or a list"))
      << nvidia.runtimeLibrary;
  ExpectTheCpuBackendWorks();
}

}  // namespace
}  // namespace infinirt::vendor_test
