// Bad device ordinals, backend indexes and device indexes. (Attribute and device-type values
// that are not enumerators: enum_value_test.cc.)
#include <gtest/gtest.h>

#include <climits>
#include <memory>

#include "bad_input_support.h"
#include "infinirt.h"

namespace infinirt::testing {
namespace {

class DeviceArgumentTest : public BadInputTest {
 protected:
  void SetUp() override {
    BadInputTest::SetUp();
    ASSERT_OK(infinirtGetDeviceCount(&device_count_));
    ASSERT_GE(device_count_, 1);
  }

  // Ordinals that name no device.
  std::vector<int> BadOrdinals() const {
    return {-1, -2, INT_MIN, device_count_, device_count_ + 1, INT_MAX};
  }

  int device_count_ = 0;
};

TEST_F(DeviceArgumentTest, SetDeviceRejectsBadOrdinalsAndKeepsTheCurrentDevice) {
  ASSERT_OK(infinirtSetDevice(0));
  for (int ordinal : BadOrdinals()) {
    SCOPED_TRACE(::testing::Message() << "device " << ordinal);
    EXPECT_ANSWER(infinirtSetDevice(ordinal), infinirtErrorInvalidDevice);
    int current = -1;
    EXPECT_OK(infinirtGetDevice(&current));
    EXPECT_EQ(current, 0);
  }
}

TEST_F(DeviceArgumentTest, GetDevicePropertiesRejectsBadOrdinals) {
  auto prop = std::make_unique<infinirtDeviceProp>();
  for (int ordinal : BadOrdinals()) {
    SCOPED_TRACE(::testing::Message() << "device " << ordinal);
    EXPECT_ANSWER(infinirtGetDeviceProperties(prop.get(), ordinal), infinirtErrorInvalidDevice);
  }
  EXPECT_ANSWER(infinirtGetDeviceProperties(prop.get(), device_count_ - 1), infinirtSuccess);
}

TEST_F(DeviceArgumentTest, DeviceGetAttributeRejectsBadOrdinals) {
  for (int ordinal : BadOrdinals()) {
    SCOPED_TRACE(::testing::Message() << "device " << ordinal);
    int value = -7;
    EXPECT_ANSWER(infinirtDeviceGetAttribute(&value, infinirtDevAttrWarpSize, ordinal),
                  infinirtErrorInvalidDevice);
  }
}

TEST_F(DeviceArgumentTest, DeviceGetTypeRejectsBadOrdinals) {
  for (int ordinal : BadOrdinals()) {
    SCOPED_TRACE(::testing::Message() << "device " << ordinal);
    infiniDevice_t type = INFINI_DEVICE_TYPE_COUNT;
    EXPECT_ANSWER(infinirtDeviceGetType(&type, ordinal), infinirtErrorInvalidDevice);
  }
}

TEST_F(DeviceArgumentTest, DeviceGetDefaultMemPoolRejectsBadOrdinals) {
  for (int ordinal : BadOrdinals()) {
    SCOPED_TRACE(::testing::Message() << "device " << ordinal);
    infinirtMemPool_t pool = nullptr;
    EXPECT_ANSWER(infinirtDeviceGetDefaultMemPool(&pool, ordinal), infinirtErrorInvalidDevice);
    EXPECT_EQ(pool, nullptr);
  }
  infinirtMemPool_t pool = nullptr;
  EXPECT_ANSWER(infinirtDeviceGetDefaultMemPool(&pool, device_count_ - 1), infinirtSuccess);
  EXPECT_NE(pool, nullptr);
}

TEST_F(DeviceArgumentTest, GetBackendPropertiesRejectsIndexesOutsideTheListing) {
  int backends = 0;
  ASSERT_OK(infinirtGetBackendCount(&backends));
  ASSERT_GE(backends, 1);
  auto prop = std::make_unique<infinirtBackendProp>();
  for (int index : {-1, INT_MIN, backends, backends + 1, INT_MAX}) {
    SCOPED_TRACE(::testing::Message() << "backend index " << index);
    EXPECT_ANSWER(infinirtGetBackendProperties(prop.get(), index), infinirtErrorInvalidValue);
  }
  EXPECT_ANSWER(infinirtGetBackendProperties(prop.get(), backends - 1), infinirtSuccess);
}

TEST_F(DeviceArgumentTest, DeviceGetOrdinalAnswersInvalidDeviceForAnIndexWithNoDevice) {
  int per_type[INFINI_DEVICE_TYPE_COUNT] = {};
  ASSERT_OK(infinirtGetAllDeviceCount(per_type));
  ASSERT_GE(per_type[INFINI_DEVICE_CPU], 1);
  for (int type = 0; type < INFINI_DEVICE_TYPE_COUNT; ++type) {
    for (int index : {-1, per_type[type], per_type[type] + 5}) {
      SCOPED_TRACE(::testing::Message() << "type " << type << " index " << index);
      int device = -7;
      EXPECT_ANSWER(infinirtDeviceGetOrdinal(&device, static_cast<infiniDevice_t>(type), index),
                    infinirtErrorInvalidDevice);
    }
  }
  int cpu = -1;
  EXPECT_ANSWER(infinirtDeviceGetOrdinal(&cpu, INFINI_DEVICE_CPU, 0), infinirtSuccess);
  EXPECT_GE(cpu, 0);
  EXPECT_LT(cpu, device_count_);
}

}  // namespace
}  // namespace infinirt::testing
