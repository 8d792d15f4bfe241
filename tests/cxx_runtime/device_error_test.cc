// infinirt::Device and infinirt::Error.
#include <gtest/gtest.h>

#include <sstream>
#include <string>
#include <unordered_set>

#include "error_of.h"
#include "infinirt/runtime.hpp"

namespace infinirt {
namespace {

using testing::ErrorOf;

TEST(DeviceTest, HasItsTypeAndIndexAndPrintsAsPluginColonIndex) {
  const Device device(INFINI_DEVICE_NVIDIA, 3);
  EXPECT_EQ(device.type(), INFINI_DEVICE_NVIDIA);
  EXPECT_EQ(device.index(), 3);
  EXPECT_EQ(device.toString(), "nvidia:3");
  std::ostringstream out;
  out << Device(INFINI_DEVICE_ASCEND, 0) << " " << Device();
  EXPECT_EQ(out.str(), "ascend:0 cpu:0");
}

TEST(DeviceTest, ComparesAndHashesByTypeThenIndex) {
  EXPECT_EQ(Device(INFINI_DEVICE_CPU, 0), Device());
  EXPECT_NE(Device(INFINI_DEVICE_NVIDIA, 0), Device(INFINI_DEVICE_NVIDIA, 1));
  EXPECT_NE(Device(INFINI_DEVICE_NVIDIA, 0), Device(INFINI_DEVICE_ASCEND, 0));
  EXPECT_LT(Device(INFINI_DEVICE_CPU, 5), Device(INFINI_DEVICE_NVIDIA, 0));
  EXPECT_LT(Device(INFINI_DEVICE_NVIDIA, 0), Device(INFINI_DEVICE_NVIDIA, 1));
  std::unordered_set<Device> set = {Device(INFINI_DEVICE_NVIDIA, 0),
                                    Device(INFINI_DEVICE_NVIDIA, 0),
                                    Device(INFINI_DEVICE_NVIDIA, 1), Device()};
  EXPECT_EQ(set.size(), 3u);
}

TEST(DeviceTest, AnUnknownTypeOrANegativeIndexIsRefused) {
  EXPECT_EQ(ErrorOf([] { Device(static_cast<infiniDevice_t>(INFINI_DEVICE_TYPE_COUNT), 0); }),
            infinirtErrorInvalidValue);
  EXPECT_EQ(ErrorOf([] { Device(static_cast<infiniDevice_t>(-1), 0); }), infinirtErrorInvalidValue);
  EXPECT_EQ(ErrorOf([] { Device(INFINI_DEVICE_CPU, -1); }), infinirtErrorInvalidDevice);
}

TEST(DeviceTest, OrdinalsAndDevicesConvertBothWays) {
  int count = 0;
  ASSERT_EQ(infinirtGetDeviceCount(&count), infinirtSuccess);
  ASSERT_GT(count, 0);
  for (int ordinal = 0; ordinal < count; ++ordinal) {
    const Device device = Device::fromOrdinal(ordinal);
    infiniDevice_t type;
    ASSERT_EQ(infinirtDeviceGetType(&type, ordinal), infinirtSuccess);
    EXPECT_EQ(device.type(), type);
    EXPECT_EQ(device.ordinal(), ordinal) << device;
  }
  EXPECT_EQ(ErrorOf([&] { Device::fromOrdinal(count); }), infinirtErrorInvalidDevice);
  // A device the process does not have: a value, until it is used.
  const Device absent(INFINI_DEVICE_CPU, 1000);
  EXPECT_EQ(ErrorOf([&] { absent.ordinal(); }), infinirtErrorInvalidDevice);
}

TEST(ErrorTest, CarriesTheCodeItsNameAndTheCallAndClearsTheLastError) {
  void* data = nullptr;
  try {
    INFINIRT_CHECK(infinirtMemcpy(&data, nullptr, 8, infinirtMemcpyHostToHost));
    FAIL() << "no infinirt::Error";
  } catch (const Error& error) {
    EXPECT_EQ(error.code(), infinirtErrorInvalidValue);
    EXPECT_STREQ(error.name(), "infinirtErrorInvalidValue");
    const std::string what = error.what();
    EXPECT_NE(what.find("infinirtMemcpy(&data, nullptr, 8, infinirtMemcpyHostToHost)"),
              std::string::npos)
        << what;
    EXPECT_NE(what.find("infinirtErrorInvalidValue"), std::string::npos) << what;
    EXPECT_NE(what.find(infinirtGetErrorString(infinirtErrorInvalidValue)), std::string::npos)
        << what;
  }
  EXPECT_EQ(infinirtGetLastError(), infinirtSuccess);
}

TEST(ErrorTest, IsAStdRuntimeErrorAndDescribesItsCallOnlyOnFailure) {
  int described = 0;
  auto describe = [&] {
    ++described;
    return std::string("the call");
  };
  check(infinirtSuccess, describe);
  EXPECT_EQ(described, 0);
  try {
    check(infinirtErrorNotSupported, describe);
    FAIL() << "no exception";
  } catch (const std::runtime_error& error) {
    EXPECT_EQ(std::string(error.what()).rfind("the call: infinirtErrorNotSupported", 0), 0u)
        << error.what();
  }
  EXPECT_EQ(described, 1);
}

}  // namespace
}  // namespace infinirt
