// The shortest path through the runtime: the CPU backend loads and copies bytes.
#include <gtest/gtest.h>

#include <cstring>
#include <vector>

#include "infinirt.h"

TEST(Smoke, CpuBackendCopiesBytes) {
  int count = 0;
  ASSERT_EQ(infinirtGetDeviceCount(&count), infinirtSuccess);
  ASSERT_GE(count, 1);
  std::vector<unsigned char> in(4096), out(4096, 0);
  for (size_t i = 0; i < in.size(); ++i) in[i] = static_cast<unsigned char>(i * 7);
  void* device = nullptr;
  ASSERT_EQ(infinirtMalloc(&device, in.size()), infinirtSuccess);
  ASSERT_EQ(infinirtMemcpy(device, in.data(), in.size(), infinirtMemcpyHostToDevice),
            infinirtSuccess);
  ASSERT_EQ(infinirtMemcpy(out.data(), device, out.size(), infinirtMemcpyDeviceToHost),
            infinirtSuccess);
  EXPECT_EQ(in, out);
  EXPECT_EQ(infinirtFree(device), infinirtSuccess);
}
