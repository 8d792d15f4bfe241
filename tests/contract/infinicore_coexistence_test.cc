// InfiniCore's own infinicore.h and InfiniRT's headers in one program, in either order: each enum
// is declared once, with the same values. This file includes InfiniRT's first (C++);
// infinicore_first.c the other way round (C99). Compiling them is most of the test.
#include <gtest/gtest.h>
#include <infinirt.h>

#include "infinicore_double/infinicore_as_published.h"

extern "C" int InfinicoreFirstStatus(void);
extern "C" int InfinicoreFirstDtype(void);
extern "C" int InfinicoreFirstDevice(void);

namespace {

TEST(InfinicoreCoexistence, BothOrdersCompileAndAgreeOnTheValues) {
  EXPECT_EQ(InfinicoreFirstStatus(), INFINI_STATUS_BAD_TENSOR_STRIDES);
  EXPECT_EQ(InfinicoreFirstStatus(), 12);
  EXPECT_EQ(InfinicoreFirstDtype(), INFINI_DTYPE_BF16);
  EXPECT_EQ(InfinicoreFirstDtype(), 19);
  EXPECT_EQ(InfinicoreFirstDevice(), INFINI_DEVICE_HYGON);
  EXPECT_EQ(static_cast<int>(INFINI_DEVICE_TYPE_COUNT), 9);
}

// InfiniRT's own lists agree with the enums, whoever declared them.
TEST(InfinicoreCoexistence, TheListsMatchTheEnums) {
#define CHECK_STATUS_(name, value, description) EXPECT_EQ(INFINI_STATUS_##name, value) << #name;
  INFINIRT_STATUS_LIST(CHECK_STATUS_)
#undef CHECK_STATUS_
#define CHECK_DTYPE_(name, value, size) EXPECT_EQ(INFINI_DTYPE_##name, value) << #name;
  INFINIRT_DTYPE_LIST(CHECK_DTYPE_)
#undef CHECK_DTYPE_
#define CHECK_DEVICE_(name, value, display, plugin) EXPECT_EQ(INFINI_DEVICE_##name, value) << #name;
  INFINIRT_DEVICE_TYPES(CHECK_DEVICE_)
#undef CHECK_DEVICE_
}

}  // namespace
