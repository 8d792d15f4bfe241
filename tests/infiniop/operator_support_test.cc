// The operator support table's source against the real thing: on the device the tests run on
// (the CPU here; an NVIDIA GPU with INFINIOP_TEST_DEVICE=nvidia), the backend's Describe answers
// what making the descriptor through the public API answers, for every operator and dtype probed.
#include <dlfcn.h>
#include <stdlib.h>

#include <vector>

#include "infiniop_test_support.h"
#include "operator_probes.h"

namespace infiniop_test {
namespace {

// Makes the probe's descriptor through the public API (and destroys it); its status.
infiniStatus_t CreateThroughTheApi(infiniopHandle_t handle, const Probe& probe) {
  std::vector<infiniopTensorDescriptor_t> t;
  for (const ProbeTensor& tensor : probe.tensors) {
    infiniopTensorDescriptor_t desc = nullptr;
    EXPECT_EQ(infiniopCreateTensorDescriptor(&desc, tensor.shape.size(), tensor.shape.data(),
                                             tensor.strides.data(), tensor.dtype),
              INFINI_STATUS_SUCCESS);
    t.push_back(desc);
  }
  InfiniopDescriptor* desc = nullptr;
  const infiniStatus_t status = CreateDescriptor(probe.op, handle, &desc, t);
  if (status == INFINI_STATUS_SUCCESS) {
    EXPECT_EQ(DestroyDescriptor(probe.op, desc), INFINI_STATUS_SUCCESS);
  }
  for (infiniopTensorDescriptor_t desc : t) infiniopDestroyTensorDescriptor(desc);
  return status;
}

TEST_F(InfiniopTest, DescribeAgreesWithCreateForEveryOperatorAndDtype) {
  infinirtBackendProp info{};
  ASSERT_EQ(infiniopGetBackendInfo(device_type, &info), INFINI_STATUS_SUCCESS);
  ASSERT_EQ(info.status, infinirtBackendLoaded);
  void* library = dlopen(info.path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD);
  ASSERT_NE(library, nullptr) << info.path;
  auto get_table =
      reinterpret_cast<infiniopBackendGetTableFn>(dlsym(library, INFINIOP_BACKEND_ENTRY_SYMBOL));
  ASSERT_NE(get_table, nullptr);
  const infiniopBackendTable& table = *get_table();
  ASSERT_NE(table.Describe, nullptr);
  // INFINIOP_TEST_GEMM_ONLY: the backend has no kernels (a CUDA-family vendor other than
  // NVIDIA), so Gemm is all it computes.
  const bool gemm_only = getenv("INFINIOP_TEST_GEMM_ONLY") != nullptr;
  int described = 0, described_besides_gemm = 0;
#define CHECK_OPERATOR_(name, ...)                                                               \
  for (infiniDtype_t dtype : ProbedDtypes()) {                                                  \
    const Probe probe = MakeProbe(INFINIOP_OPERATOR_##name, dtype);                             \
    const std::vector<infiniopBackendTensor> views = Views(probe);                              \
    char how[256] = "";                                                                         \
    const bool says = table.Describe(probe.op, views.data(), views.size(), &probe.params, how,  \
                                     sizeof how) == INFINI_STATUS_SUCCESS;                      \
    const bool makes = CreateThroughTheApi(handle, probe) == INFINI_STATUS_SUCCESS;             \
    EXPECT_EQ(says, makes) << #name << " on " << DtypeName(dtype) << ": Describe says " << says \
                           << " (" << how << ")";                                               \
    described += says;                                                                          \
    described_besides_gemm += says && probe.op != INFINIOP_OPERATOR_Gemm;                       \
  }
  INFINIOP_OPERATORS(CHECK_OPERATOR_)
#undef CHECK_OPERATOR_
  if (gemm_only) {
    EXPECT_GE(described, 3) << "Gemm in F16, F32 and BF16 at least";
    EXPECT_EQ(described_besides_gemm, 0) << "a backend without kernels computes only Gemm";
  } else {
    EXPECT_GT(described, 20) << "the probes find what the backend computes";
  }
  dlclose(library);
}

}  // namespace
}  // namespace infiniop_test
