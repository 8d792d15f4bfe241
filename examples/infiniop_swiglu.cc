// InfiniOP: a handle for the current device, tensor descriptors, and a SwiGLU (c = a * silu(b))
// queued on a stream between the copies in and out, checked on the host.
#include <infiniop.h>
#include <infinirt.h>

#include <cmath>
#include <cstdio>
#include <vector>

#define CHECK_RT(call)                                               \
  do {                                                               \
    infinirtError_t status_ = (call);                                \
    if (status_ != infinirtSuccess) {                                \
      std::printf("%s: %s\n", #call, infinirtGetErrorName(status_)); \
      return 1;                                                      \
    }                                                                \
  } while (0)
#define CHECK_OP(call)                                                  \
  do {                                                                  \
    infiniStatus_t status_ = (call);                                    \
    if (status_ != INFINI_STATUS_SUCCESS) {                             \
      std::printf("%s: status %d\n", #call, static_cast<int>(status_)); \
      return 1;                                                         \
    }                                                                   \
  } while (0)

int main() {
  constexpr size_t kRows = 4, kCols = 1000;
  const size_t shape[] = {kRows, kCols};
  const size_t bytes = kRows * kCols * sizeof(float);
  std::vector<float> up(kRows * kCols), gate(kRows * kCols), out(kRows * kCols);
  for (size_t i = 0; i < up.size(); ++i) {
    up[i] = static_cast<float>(i % 7) - 3.0f;
    gate[i] = static_cast<float>(i % 11) / 4.0f - 1.0f;
  }

  infiniopHandle_t handle = nullptr;
  CHECK_OP(infiniopCreateHandle(&handle));    // on the current device (device 0 here)
  infiniopTensorDescriptor_t desc = nullptr;  // one descriptor serves c, a and b: same layout
  CHECK_OP(infiniopCreateTensorDescriptor(&desc, 2, shape, nullptr, INFINI_DTYPE_F32));
  infiniopSwiGLUDescriptor_t swiglu = nullptr;
  CHECK_OP(infiniopCreateSwiGLUDescriptor(handle, &swiglu, desc, desc, desc));
  size_t workspace_size = 0;
  CHECK_OP(infiniopGetSwiGLUWorkspaceSize(swiglu, &workspace_size));

  infinirtStream_t stream = nullptr;
  void *a = nullptr, *b = nullptr, *c = nullptr, *workspace = nullptr;
  CHECK_RT(infinirtStreamCreate(&stream));
  CHECK_RT(infinirtMalloc(&a, bytes));
  CHECK_RT(infinirtMalloc(&b, bytes));
  CHECK_RT(infinirtMalloc(&c, bytes));
  if (workspace_size > 0) CHECK_RT(infinirtMalloc(&workspace, workspace_size));
  CHECK_RT(infinirtMemcpyAsync(a, up.data(), bytes, infinirtMemcpyHostToDevice, stream));
  CHECK_RT(infinirtMemcpyAsync(b, gate.data(), bytes, infinirtMemcpyHostToDevice, stream));
  CHECK_OP(infiniopSwiGLU(swiglu, workspace, workspace_size, c, a, b, stream));
  CHECK_RT(infinirtMemcpyAsync(out.data(), c, bytes, infinirtMemcpyDeviceToHost, stream));
  CHECK_RT(infinirtStreamSynchronize(stream));

  int wrong = 0;
  for (size_t i = 0; i < out.size(); ++i) {
    const double expected = up[i] * gate[i] / (1.0 + std::exp(-static_cast<double>(gate[i])));
    if (std::fabs(out[i] - expected) > 1e-5 * std::fmax(1.0, std::fabs(expected))) ++wrong;
  }
  std::printf("SwiGLU of %zu x %zu floats on device 0: %d wrong\n", kRows, kCols, wrong);

  infiniopDestroySwiGLUDescriptor(swiglu);
  infiniopDestroyTensorDescriptor(desc);
  infiniopDestroyHandle(handle);
  infinirtFree(a);
  infinirtFree(b);
  infinirtFree(c);
  if (workspace != nullptr) infinirtFree(workspace);
  infinirtStreamDestroy(stream);
  return wrong == 0 ? 0 : 1;
}
