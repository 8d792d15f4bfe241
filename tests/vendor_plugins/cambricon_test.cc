// The Cambricon plugin where CNRT versions differ, over the emulated CNRT of 6.14.1 and of 6.0.2
// (VENDOR_TEST_VARIANT cambricon or cambricon_6_0): what 6.0.x lacks answers NotSupported
// without asking the runtime, and CNRT's error codes are translated.
#include <gtest/gtest.h>

#include <cstdlib>
#include <memory>
#include <string>
#include <vector>

#include "emulated_runtime.h"
#include "infinirt.h"
#include "vendor_test_support.h"

namespace infinirt::vendor_test {
namespace {

using infinirt::testing::EmulatedRuntime;

bool IsOlderRuntime() {
  const char* variant = std::getenv("VENDOR_TEST_VARIANT");
  return variant != nullptr && std::string(variant) == "cambricon_6_0";
}

class Cambricon : public ::testing::Test {
 protected:
  void SetUp() override {
    backend_ = LoadedVendorBackend();
    ASSERT_EQ(backend_.name, "cambricon");
    runtime_ = std::make_unique<EmulatedRuntime>(backend_.runtime_library);
    ASSERT_TRUE(runtime_->loaded());
    ASSERT_EQ(backend_.listing.runtimeVersion, IsOlderRuntime() ? 6000 : 6140);
    ASSERT_EQ(infinirtSetDevice(0), infinirtSuccess);
    runtime_->Reset();
  }
  void TearDown() override {
    runtime_->ClearFailures();
    infinirtGetLastError();
  }

  VendorBackend backend_;
  std::unique_ptr<EmulatedRuntime> runtime_;
};

// cnrtAttrComputeMode (0x09) exists from 6.14.1; before, the number is not asked at all.
TEST_F(Cambricon, ComputeModeIsNotAskedOfAnOlderRuntime) {
  int mode = -1;
  const infinirtError_t answer = infinirtDeviceGetAttribute(&mode, infinirtDevAttrComputeMode, 0);
  if (IsOlderRuntime()) {
    EXPECT_EQ(answer, infinirtErrorNotSupported);
    EXPECT_EQ(runtime_->Calls("cnrtDeviceGetAttribute"), 0);
  } else {
    EXPECT_EQ(answer, infinirtSuccess);
    EXPECT_EQ(mode, 0);  // default
    ASSERT_EQ(runtime_->LogOf("cnrtDeviceGetAttribute").size(), 1u);
    EXPECT_NE(runtime_->LogOf("cnrtDeviceGetAttribute")[0].find("9 0"), std::string::npos);
  }
  infinirtGetLastError();
}

// INTERPROCESS and the DISABLE_TIMING_ALL it needs came with 6.14.1.
TEST_F(Cambricon, InterprocessNotifiersAreNotAskedOfAnOlderRuntime) {
  infinirtEvent_t event = nullptr;
  const infinirtError_t answer =
      infinirtEventCreateWithFlags(&event, infinirtEventInterprocess | infinirtEventDisableTiming);
  if (IsOlderRuntime()) {
    EXPECT_EQ(answer, infinirtErrorNotSupported);
    EXPECT_EQ(runtime_->Calls("cnrtNotifierCreateWithFlags"), 0);
    infinirtGetLastError();
  } else {
    ASSERT_EQ(answer, infinirtSuccess);
    const std::vector<std::string> calls = runtime_->LogOf("cnrtNotifierCreateWithFlags");
    ASSERT_EQ(calls.size(), 1u);
    EXPECT_NE(calls[0].find("flags=14"), std::string::npos) << calls[0];  // 0x8 | 0x4 | 0x2
    EXPECT_EQ(infinirtEventDestroy(event), infinirtSuccess);
  }
  // Timing off alone is known to both.
  ASSERT_EQ(infinirtEventCreateWithFlags(&event, infinirtEventDisableTiming), infinirtSuccess);
  EXPECT_EQ(infinirtEventDestroy(event), infinirtSuccess);
}

// CNRT 6.14.1's codes (cnrt.h's cnrtRet_t), as a failing cnrtMemGetInfo returns them.
TEST_F(Cambricon, CnrtCodesAreTranslated) {
  struct Code {
    int cnrt;
    infinirtError_t expected;
  };
  const Code codes[] = {
      {100006, infinirtErrorInvalidValue},            // cnrtErrorArgsInvalid
      {100050, infinirtErrorNotSupported},            // cnrtErrorNotSupport
      {100100, infinirtErrorMemoryAllocation},        // cnrtErrorNoMem
      {100132, infinirtErrorLaunchFailure},           // cnrtErrorKernelTrap
      {100133, infinirtErrorLaunchFailure},           // cnrtErrorKernelUserTrap
      {100301, infinirtErrorSymbolNotFound},          // cnrtErrorNotFound
      {100302, infinirtErrorInvalidDeviceFunction},   // cnrtErrorInvalidKernel
      {100303, infinirtErrorUnsupportedPtxVersion},   // cnrtErrorUnsupportedKernelVersion
      {100400, infinirtErrorGraphExecUpdateFailure},  // cnrtErrorTaskTopoEntityUpdateFailure
      {632014, infinirtErrorNotReady},                // cnrtErrorBusy
      {999991, infinirtErrorUnknown},                 // cnrtErrorUnknown
  };
  for (const Code& code : codes) {
    SCOPED_TRACE(code.cnrt);
    runtime_->Fail("cnrtMemGetInfo", 0, code.cnrt);
    size_t free_bytes = 0, total_bytes = 0;
    EXPECT_EQ(infinirtMemGetInfo(&free_bytes, &total_bytes), code.expected);
    runtime_->ClearFailures();
    infinirtGetLastError();
  }
}

}  // namespace
}  // namespace infinirt::vendor_test
