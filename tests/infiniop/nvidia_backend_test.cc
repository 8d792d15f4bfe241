// The NVIDIA operator backend over the host-emulated CUDA Runtime and cuBLAS
// (tests/emulated_runtimes): the cuBLAS call Gemm makes (operands, transposes, leading dimensions,
// batch strides, types), on the InfiniRT stream's native stream; cuBLAS's statuses mapped to
// InfiniCore's; what the emulation cannot serve (the CUDA kernels) refused honestly; a Gemm
// captured into a graph, issued into the vendor's capture; a stream of another device refused. The
// numbers themselves are checked by gemm_test.cc, which CTest also runs over this emulation.
#include <dlfcn.h>

#include <cstdlib>
#include <string>

#include "emulated_cublas.h"
#include "infiniop_test_support.h"

namespace infiniop_test {
namespace {

// The emulated cuBLAS the backend opens (INFINIOP_NVIDIA_CUBLAS), for its records: opened here
// by the same path, it is the same instance.
struct EmulatedCublas {
  EmuCublasLastGemmFn last = nullptr;
  EmuCublasFailNextFn fail_next = nullptr;
};

EmulatedCublas OpenedCublas() {
  EmulatedCublas cublas;
  const char* path = std::getenv("INFINIOP_NVIDIA_CUBLAS");
  void* library = path != nullptr ? dlopen(path, RTLD_NOW | RTLD_LOCAL) : nullptr;
  if (library == nullptr) return cublas;
  cublas.last = reinterpret_cast<EmuCublasLastGemmFn>(dlsym(library, "emuCublasLastGemm"));
  cublas.fail_next = reinterpret_cast<EmuCublasFailNextFn>(dlsym(library, "emuCublasFailNext"));
  return cublas;
}

bool CublasIsAbsent() {
  const char* path = std::getenv("INFINIOP_NVIDIA_CUBLAS");
  return path != nullptr && std::string(path).find("nonexistent") != std::string::npos;
}

class NvidiaBackendTest : public InfiniopTest {
 public:
  void SetUp() override {
    InfiniopTest::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    ASSERT_EQ(device_type, INFINI_DEVICE_NVIDIA) << "run with INFINIOP_TEST_DEVICE=nvidia";
  }

  // Makes and runs a Gemm descriptor on c, a, b; the backend's answer.
  infiniStatus_t RunGemm(Tensor& c, Tensor& a, Tensor& b, float alpha = 1, float beta = 0) {
    infiniopGemmDescriptor_t desc = nullptr;
    const infiniStatus_t created =
        infiniopCreateGemmDescriptor(handle, &desc, c.desc(), a.desc(), b.desc());
    if (created != INFINI_STATUS_SUCCESS) return created;
    const infiniStatus_t ran =
        infiniopGemm(desc, nullptr, 0, c.data(), a.data(), b.data(), alpha, beta, stream);
    EXPECT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    EXPECT_EQ(infiniopDestroyGemmDescriptor(desc), INFINI_STATUS_SUCCESS);
    return ran;
  }

  EmulatedCublas cublas = OpenedCublas();
};

Layout RowMajor(std::vector<size_t> shape) { return Layout::Contiguous(std::move(shape)); }

// [rows, cols] stored column by column.
Layout ColumnMajor(size_t rows, size_t cols) {
  return Layout{{rows, cols}, {1, static_cast<ptrdiff_t>(rows)}};
}

TEST_F(NvidiaBackendTest, TheNativeStreamIsTheVendorsAndTheCpuHasNone) {
  void* native = nullptr;
  EXPECT_EQ(infinirtStreamGetNativeHandle(&native, stream), infinirtSuccess);
  EXPECT_NE(native, nullptr);
  EXPECT_NE(native, static_cast<void*>(stream)) << "the vendor's handle, not InfiniRT's";
  EXPECT_EQ(infinirtStreamGetNativeHandle(&native, nullptr), infinirtSuccess);
  EXPECT_EQ(native, reinterpret_cast<void*>(0x1)) << "CUDA's cudaStreamLegacy";
  EXPECT_EQ(infinirtStreamGetNativeHandle(nullptr, stream), infinirtErrorInvalidValue);

  int cpu = -1;
  ASSERT_EQ(infinirtDeviceGetOrdinal(&cpu, INFINI_DEVICE_CPU, 0), infinirtSuccess);
  ASSERT_EQ(infinirtSetDevice(cpu), infinirtSuccess);
  infinirtStream_t cpu_stream = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&cpu_stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamGetNativeHandle(&native, cpu_stream), infinirtErrorNotSupported);
  EXPECT_EQ(infinirtStreamDestroy(cpu_stream), infinirtSuccess);
  EXPECT_EQ(infinirtStreamGetNativeHandle(&native, cpu_stream), infinirtErrorContextIsDestroyed);
  infinirtGetLastError();
}

TEST_F(NvidiaBackendTest, RowMajorGemmIsComputedTransposedOnTheNativeStream) {
  if (CublasIsAbsent()) GTEST_SKIP() << "this run has no cuBLAS";
  ASSERT_NE(cublas.last, nullptr) << "INFINIOP_NVIDIA_CUBLAS must name the emulated cuBLAS";
  Tensor c(RowMajor({2, 3}), INFINI_DTYPE_F32), a(RowMajor({2, 4}), INFINI_DTYPE_F32),
      b(RowMajor({4, 3}), INFINI_DTYPE_F32);
  ASSERT_EQ(RunGemm(c, a, b, 2.0f, 0.5f), INFINI_STATUS_SUCCESS);
  void* native = nullptr;
  ASSERT_EQ(infinirtStreamGetNativeHandle(&native, stream), infinirtSuccess);
  const EmuGemmCall call = cublas.last();
  EXPECT_EQ(call.stream, native);
  // c^T (3 x 2, ld 3) = b^T (3 x 4, ld 3) a^T (4 x 2, ld 4): b first, neither transposed.
  EXPECT_EQ(call.transa, 0);
  EXPECT_EQ(call.transb, 0);
  EXPECT_EQ(call.m, 3);
  EXPECT_EQ(call.n, 2);
  EXPECT_EQ(call.k, 4);
  EXPECT_EQ(call.a, b.data());
  EXPECT_EQ(call.lda, 3);
  EXPECT_EQ(call.b, a.data());
  EXPECT_EQ(call.ldb, 4);
  EXPECT_EQ(call.c, c.data());
  EXPECT_EQ(call.ldc, 3);
  EXPECT_EQ(call.batch, 1);
  EXPECT_EQ(call.alpha, 2.0);
  EXPECT_EQ(call.beta, 0.5);
  EXPECT_EQ(call.a_type, 0);         // CUDA_R_32F
  EXPECT_EQ(call.compute_type, 68);  // CUBLAS_COMPUTE_32F
  EXPECT_EQ(call.algo, -1);          // CUBLAS_GEMM_DEFAULT
}

TEST_F(NvidiaBackendTest, ColumnMajorGemmTransposesRowMajorOperands) {
  if (CublasIsAbsent()) GTEST_SKIP() << "this run has no cuBLAS";
  ASSERT_NE(cublas.last, nullptr);
  Tensor c(ColumnMajor(2, 3), INFINI_DTYPE_F64), a(RowMajor({2, 4}), INFINI_DTYPE_F64),
      b(ColumnMajor(4, 3), INFINI_DTYPE_F64);
  ASSERT_EQ(RunGemm(c, a, b), INFINI_STATUS_SUCCESS);
  const EmuGemmCall call = cublas.last();
  // c (2 x 3, ld 2) = a^T^T b: a is stored as a^T (4 x 2, ld 4), hence T.
  EXPECT_EQ(call.transa, 1);
  EXPECT_EQ(call.transb, 0);
  EXPECT_EQ(call.m, 2);
  EXPECT_EQ(call.n, 3);
  EXPECT_EQ(call.a, a.data());
  EXPECT_EQ(call.lda, 4);
  EXPECT_EQ(call.b, b.data());
  EXPECT_EQ(call.ldb, 4);
  EXPECT_EQ(call.ldc, 2);
  EXPECT_EQ(call.a_type, 1);         // CUDA_R_64F
  EXPECT_EQ(call.compute_type, 70);  // CUBLAS_COMPUTE_64F
}

TEST_F(NvidiaBackendTest, BatchedGemmBroadcastsAMatrixWithBatchStrideZero) {
  if (CublasIsAbsent()) GTEST_SKIP() << "this run has no cuBLAS";
  ASSERT_NE(cublas.last, nullptr);
  const std::pair<infiniDtype_t, int> types[] = {{INFINI_DTYPE_F16, 2}, {INFINI_DTYPE_BF16, 14}};
  for (const auto& [dtype, cuda_type] : types) {
    Tensor c(RowMajor({3, 2, 5}), dtype), a(RowMajor({2, 4}), dtype), b(RowMajor({3, 4, 5}), dtype);
    ASSERT_EQ(RunGemm(c, a, b), INFINI_STATUS_SUCCESS);
    const EmuGemmCall call = cublas.last();
    EXPECT_EQ(call.batch, 3);
    EXPECT_EQ(call.stride_a, 20) << "b's batch stride (b is cuBLAS's first operand)";
    EXPECT_EQ(call.stride_b, 0) << "a, broadcast";
    EXPECT_EQ(call.stride_c, 10);
    EXPECT_EQ(call.a_type, cuda_type);
    EXPECT_EQ(call.compute_type, 68) << "F16 and BF16 accumulate in F32";
  }
}

TEST_F(NvidiaBackendTest, CublasStatusesBecomeInfiniCoreStatuses) {
  if (CublasIsAbsent()) GTEST_SKIP() << "this run has no cuBLAS";
  ASSERT_NE(cublas.fail_next, nullptr);
  const std::pair<int, infiniStatus_t> mapping[] = {
      {7, INFINI_STATUS_BAD_PARAM},                          // INVALID_VALUE
      {8, INFINI_STATUS_DEVICE_ARCHITECTURE_NOT_SUPPORTED},  // ARCH_MISMATCH
      {13, INFINI_STATUS_INTERNAL_ERROR},                    // EXECUTION_FAILED
      {14, INFINI_STATUS_INTERNAL_ERROR},                    // INTERNAL_ERROR
      {15, INFINI_STATUS_NOT_IMPLEMENTED},                   // NOT_SUPPORTED
  };
  Tensor c(RowMajor({2, 2}), INFINI_DTYPE_F32), a(RowMajor({2, 2}), INFINI_DTYPE_F32),
      b(RowMajor({2, 2}), INFINI_DTYPE_F32);
  for (const auto& [cublas_status, expected] : mapping) {
    cublas.fail_next(cublas_status);
    EXPECT_EQ(RunGemm(c, a, b), expected) << "cuBLAS status " << cublas_status;
  }
  EXPECT_EQ(RunGemm(c, a, b), INFINI_STATUS_SUCCESS);
}

TEST_F(NvidiaBackendTest, WithoutCublasGemmIsNotImplemented) {
  if (!CublasIsAbsent()) GTEST_SKIP() << "this run has a cuBLAS";
  Tensor c(RowMajor({2, 2}), INFINI_DTYPE_F32), a(RowMajor({2, 2}), INFINI_DTYPE_F32),
      b(RowMajor({2, 2}), INFINI_DTYPE_F32);
  EXPECT_EQ(RunGemm(c, a, b), INFINI_STATUS_NOT_IMPLEMENTED);
}

TEST_F(NvidiaBackendTest, KernelOperatorsAreNotImplementedWhereTheRuntimeCannotLoadKernels) {
  // The emulated CUDA Runtime has no cudaLibraryLoadData: no kernel can run on it.
  Tensor c(RowMajor({4}), INFINI_DTYPE_F32), a(RowMajor({4}), INFINI_DTYPE_F32);
  infiniopAddDescriptor_t desc = nullptr;
  EXPECT_EQ(infiniopCreateAddDescriptor(handle, &desc, c.desc(), a.desc(), a.desc()),
            INFINI_STATUS_NOT_IMPLEMENTED);
}

// Captured, a Gemm is a node of InfiniRT's graph: instantiation issues the cuBLAS call once, on
// the stream the runtime plugin captures with the vendor's capture, so that the vendor's graph
// holds it and every launch runs it. The descriptor may be destroyed before the graph is.
TEST_F(NvidiaBackendTest, ACapturedGemmIsIssuedIntoTheVendorsCaptureWhenInstantiated) {
  if (CublasIsAbsent()) GTEST_SKIP() << "this run has no cuBLAS";
  ASSERT_NE(cublas.last, nullptr);
  Tensor c(RowMajor({2, 2}), INFINI_DTYPE_F32), a(RowMajor({2, 2}), INFINI_DTYPE_F32),
      b(RowMajor({2, 2}), INFINI_DTYPE_F32);
  const float b_values[] = {2, 1, 0, 3};  // b = [[2, 1], [0, 3]]
  for (size_t i = 0; i < 4; ++i) b.Set(i, b_values[i]);
  b.Upload(stream);
  infiniopGemmDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateGemmDescriptor(handle, &desc, c.desc(), a.desc(), b.desc()),
            INFINI_STATUS_SUCCESS);
  void* native = nullptr;
  ASSERT_EQ(infinirtStreamGetNativeHandle(&native, stream), infinirtSuccess);
  const int calls = cublas.last().calls;
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeRelaxed), infinirtSuccess);
  ASSERT_EQ(infiniopGemm(desc, nullptr, 0, c.data(), a.data(), b.data(), 1, 0, stream),
            INFINI_STATUS_SUCCESS);
  infinirtGraph_t graph = nullptr;
  ASSERT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtSuccess);
  EXPECT_EQ(cublas.last().calls, calls) << "recorded, not issued";
  EXPECT_EQ(infiniopDestroyGemmDescriptor(desc), INFINI_STATUS_SUCCESS);

  infinirtGraphExec_t exec = nullptr;
  ASSERT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtSuccess);
  EXPECT_EQ(cublas.last().calls, calls + 1);
  EXPECT_NE(cublas.last().stream, native) << "issued on the plugin's capture stream";
  for (int launch = 1; launch <= 3; ++launch) {
    SCOPED_TRACE("launch " + std::to_string(launch));
    for (size_t i = 0; i < 4; ++i) a.Set(i, static_cast<float>(launch * (i + 1)));
    a.Upload(stream);
    ASSERT_EQ(infinirtGraphLaunch(exec, stream), infinirtSuccess);
    c.Download(stream);
    ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    // a = launch * [[1, 2], [3, 4]]: a b = launch * [[2, 7], [6, 15]].
    const float expected[] = {2, 7, 6, 15};
    for (size_t i = 0; i < 4; ++i) EXPECT_EQ(c.At(i), launch * expected[i]) << "element " << i;
  }
  EXPECT_EQ(cublas.last().calls, calls + 1) << "the vendor's graph runs the call again";
  EXPECT_EQ(infinirtGraphExecDestroy(exec), infinirtSuccess);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
}

// cuBLAS refusing the call while the vendor captures it fails the instantiation.
TEST_F(NvidiaBackendTest, ACublasFailureWhileInstantiatingFailsTheInstantiation) {
  if (CublasIsAbsent()) GTEST_SKIP() << "this run has no cuBLAS";
  ASSERT_NE(cublas.fail_next, nullptr);
  Tensor c(RowMajor({2, 2}), INFINI_DTYPE_F32), a(RowMajor({2, 2}), INFINI_DTYPE_F32),
      b(RowMajor({2, 2}), INFINI_DTYPE_F32);
  infiniopGemmDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateGemmDescriptor(handle, &desc, c.desc(), a.desc(), b.desc()),
            INFINI_STATUS_SUCCESS);
  ASSERT_EQ(infinirtStreamBeginCapture(stream, infinirtStreamCaptureModeRelaxed), infinirtSuccess);
  ASSERT_EQ(infiniopGemm(desc, nullptr, 0, c.data(), a.data(), b.data(), 1, 0, stream),
            INFINI_STATUS_SUCCESS);
  infinirtGraph_t graph = nullptr;
  ASSERT_EQ(infinirtStreamEndCapture(stream, &graph), infinirtSuccess);
  cublas.fail_next(13);  // EXECUTION_FAILED
  infinirtGraphExec_t exec = nullptr;
  EXPECT_EQ(infinirtGraphInstantiate(&exec, graph, 0), infinirtErrorLaunchFailure);
  EXPECT_EQ(infinirtGetLastError(), infinirtErrorLaunchFailure);
  // The failure was the capture's only: the descriptor and the stream work on.
  EXPECT_EQ(RunGemm(c, a, b), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infinirtGraphDestroy(graph), infinirtSuccess);
  EXPECT_EQ(infiniopDestroyGemmDescriptor(desc), INFINI_STATUS_SUCCESS);
}

TEST_F(NvidiaBackendTest, ADescriptorRefusesAStreamOfAnotherDevice) {
  Tensor c(RowMajor({2, 2}), INFINI_DTYPE_F32), a(RowMajor({2, 2}), INFINI_DTYPE_F32);
  int cpu = -1;
  ASSERT_EQ(infinirtDeviceGetOrdinal(&cpu, INFINI_DEVICE_CPU, 0), infinirtSuccess);
  ASSERT_EQ(infinirtSetDevice(cpu), infinirtSuccess);
  infiniopHandle_t cpu_handle = nullptr;
  ASSERT_EQ(infiniopCreateHandle(&cpu_handle), INFINI_STATUS_SUCCESS);
  infiniopAddDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateAddDescriptor(cpu_handle, &desc, c.desc(), a.desc(), a.desc()),
            INFINI_STATUS_SUCCESS);
  // `stream` is the NVIDIA device's; NULL is the current device's (the CPU's, accepted).
  EXPECT_EQ(infiniopAdd(desc, nullptr, 0, c.data(), a.data(), a.data(), stream),
            INFINI_STATUS_BAD_PARAM);
  infinirtStream_t destroyed = nullptr;
  ASSERT_EQ(infinirtStreamCreate(&destroyed), infinirtSuccess);
  ASSERT_EQ(infinirtStreamDestroy(destroyed), infinirtSuccess);
  EXPECT_EQ(infiniopAdd(desc, nullptr, 0, c.data(), a.data(), a.data(), destroyed),
            INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(infiniopDestroyAddDescriptor(desc), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(infiniopDestroyHandle(cpu_handle), INFINI_STATUS_SUCCESS);
}

}  // namespace
}  // namespace infiniop_test
