// InfiniCore's own infinicore.h and InfiniRT's headers in one program, in either order: each enum
// is declared once, with the same values. This file includes InfiniRT's first (C++);
// infinicore_first.c the other way round (C99). Compiling them is most of the test.
#include <gtest/gtest.h>
#include <infiniccl.h>
#include <infinirt.h>

#include "infinicore_double/infiniccl_as_published.h"
#include "infinicore_double/infinicore_as_published.h"

extern "C" int InfinicoreFirstStatus(void);
extern "C" int InfinicoreFirstDtype(void);
extern "C" int InfinicoreFirstDevice(void);
extern "C" int InfinicclFirstAvg(void);
extern "C" int InfinicclFirstRanks(infinicclComm_t comm);
extern "C" infiniStatus_t (*InfinicclFirstAllReduce(void))(void*, void*, size_t, infiniDtype_t,
                                                           infinicclReduceOp_t, infinicclComm_t,
                                                           infinirtStream_t);

namespace {

TEST(InfinicoreCoexistence, BothOrdersCompileAndAgreeOnTheValues) {
  EXPECT_EQ(InfinicoreFirstStatus(), INFINI_STATUS_BAD_TENSOR_STRIDES);
  EXPECT_EQ(InfinicoreFirstStatus(), 12);
  EXPECT_EQ(InfinicoreFirstDtype(), INFINI_DTYPE_BF16);
  EXPECT_EQ(InfinicoreFirstDtype(), 19);
  EXPECT_EQ(InfinicoreFirstDevice(), INFINI_DEVICE_HYGON);
  EXPECT_EQ(static_cast<int>(INFINI_DEVICE_TYPE_COUNT), 9);
}

// InfiniCore's infiniccl.h and InfiniRT's, in either order (infiniccl_first.c: InfiniCore's
// first; here InfiniRT's first, so InfiniCore's is skipped by its guard): one declaration of
// each, the same operators and functions.
TEST(InfinicoreCoexistence, InfinicclHeadersInEitherOrderDeclareTheSameThings) {
  EXPECT_EQ(InfinicclFirstAvg(), INFINICCL_AVG);
  EXPECT_EQ(InfinicclFirstAvg(), 4);
  EXPECT_EQ(InfinicclFirstAllReduce(), &infinicclAllReduce);
  EXPECT_EQ(InfinicclFirstRanks(nullptr), -1) << "a null communicator is refused";
#define CHECK_OP_(name, value, text) EXPECT_EQ(INFINICCL_##name, value) << #name;
  INFINICCL_REDUCE_OPS(CHECK_OP_)
#undef CHECK_OP_
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
