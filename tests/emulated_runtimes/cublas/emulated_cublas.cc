// A host-emulated cuBLAS (tests only): libcublas.so.13 with cuBLAS's names, prototypes and numbers
// for what the CUDA-family operator backends call (handles, streams, cublasGemmStridedBatchedEx).
// It proves the backends' translation, not a vendor's library: the product is computed on the
// host, in double, in the column-major convention cuBLAS documents, and queued on the emulated
// runtime's stream (its <prefix>LaunchHostFunc), so that stream order holds as on a device.
//
// Built once per vendor whose backend is tested (CMakeLists.txt): EMU_BLAS_PREFIX names the
// functions (cublas, mcblas, mublas), EMU_BLAS_V2 keeps cuBLAS's _v2 suffixes, EMU_RUNTIME_PREFIX
// and EMU_RUNTIME_VARIABLE find the emulated runtime (already loaded by the vendor's runtime
// plugin). Other vendors' enum values are taken to be CUDA's, as their backends assume.
//
// For the tests: emuCublasLastGemm() returns the arguments of the last Gemm call,
// emuCublasFailNext(status) makes the next one answer status.
#include "emulated_cublas.h"

#include <dlfcn.h>
#include <stdlib.h>

#include <cstdint>
#include <cstring>
#include <memory>
#include <mutex>
#include <string>
#include <vector>

#define EMU_EXPORT extern "C" __attribute__((visibility("default")))

#ifndef EMU_BLAS_PREFIX
#define EMU_BLAS_PREFIX cublas
#define EMU_BLAS_V2
#define EMU_RUNTIME_PREFIX "cuda"
#define EMU_RUNTIME_VARIABLE "INFINIRT_NVIDIA_RUNTIME"
#endif
#define EMU_CONCAT_(a, b) a##b
#define EMU_CONCAT(a, b) EMU_CONCAT_(a, b)
#define EMU_BLAS(name) EMU_CONCAT(EMU_BLAS_PREFIX, name)
#ifdef EMU_BLAS_V2
#define EMU_BLAS_V2_NAME(name) EMU_CONCAT(EMU_BLAS(name), _v2)
#else
#define EMU_BLAS_V2_NAME(name) EMU_BLAS(name)
#endif

namespace {

constexpr int kSuccess = 0;
constexpr int kNotInitialized = 1;
constexpr int kInvalidValue = 7;
constexpr int kNotSupported = 15;
constexpr int kOpN = 0, kOpT = 1;
constexpr int kR32F = 0, kR64F = 1, kR16F = 2, kR16BF = 14;
constexpr int kCompute32F = 68, kCompute64F = 70;

struct Handle {
  void* stream = nullptr;
};

}  // namespace

namespace {

std::mutex g_mutex;
EmuGemmCall g_last{};
int g_fail_next = kSuccess;

using LaunchHostFunc = int (*)(void*, void (*)(void*), void*);
using StreamIsCapturing = int (*)(void*, int*);

// A function of the emulated runtime (the instance the plugin loaded), e.g. "LaunchHostFunc".
void* RuntimeFunction(const char* name) {
  static void* runtime = [] {
    const char* path = getenv(EMU_RUNTIME_VARIABLE);
    return path != nullptr ? dlopen(path, RTLD_NOW | RTLD_LOCAL | RTLD_NOLOAD) : nullptr;
  }();
  return runtime != nullptr ? dlsym(runtime, (std::string(EMU_RUNTIME_PREFIX) + name).c_str())
                            : nullptr;
}

LaunchHostFunc RuntimeLaunchHostFunc() {
  static LaunchHostFunc launch =
      reinterpret_cast<LaunchHostFunc>(RuntimeFunction("LaunchHostFunc"));
  return launch;
}

// Whether the stream is being captured: a captured call runs at every launch of the graph, so its
// arguments are kept (until the library is unloaded) as a device kernel's are kept in the graph.
bool Capturing(void* stream) {
  static StreamIsCapturing is_capturing =
      reinterpret_cast<StreamIsCapturing>(RuntimeFunction("StreamIsCapturing"));
  int status = 0;
  return is_capturing != nullptr && is_capturing(stream, &status) == 0 && status != 0;
}
std::vector<std::unique_ptr<EmuGemmCall>> g_captured;  // under g_mutex

double LoadValue(int type, const void* base, long long index) {
  switch (type) {
    case kR64F:
      return static_cast<const double*>(base)[index];
    case kR32F:
      return static_cast<const float*>(base)[index];
    case kR16F:
      return static_cast<double>(static_cast<const _Float16*>(base)[index]);
    default: {  // kR16BF
      const uint32_t bits = static_cast<uint32_t>(static_cast<const uint16_t*>(base)[index]) << 16;
      float value;
      std::memcpy(&value, &bits, 4);
      return value;
    }
  }
}

void StoreValue(int type, void* base, long long index, double value) {
  switch (type) {
    case kR64F:
      static_cast<double*>(base)[index] = value;
      return;
    case kR32F:
      static_cast<float*>(base)[index] = static_cast<float>(value);
      return;
    case kR16F:
      static_cast<_Float16*>(base)[index] = static_cast<_Float16>(value);
      return;
    default: {  // kR16BF, rounded to nearest even
      const float single = static_cast<float>(value);
      uint32_t bits;
      std::memcpy(&bits, &single, 4);
      bits += 0x7fff + ((bits >> 16) & 1);
      static_cast<uint16_t*>(base)[index] = static_cast<uint16_t>(bits >> 16);
    }
  }
}

// Element (i, j) of op(X), X column-major with leading dimension ld.
double OpElement(int type, const void* x, int op, int ld, long long i, long long j) {
  return op == kOpN ? LoadValue(type, x, i + j * ld) : LoadValue(type, x, j + i * ld);
}

// C = alpha op(A) op(B) + beta C, batch by batch; beta 0 never reads C.
void Compute(const EmuGemmCall& g) {
  for (int batch = 0; batch < g.batch; ++batch) {
    const char* a = static_cast<const char*>(g.a);
    const char* b = static_cast<const char*>(g.b);
    char* c = static_cast<char*>(g.c);
    const size_t size = g.c_type == kR64F ? 8 : g.c_type == kR32F ? 4 : 2;
    const void* ab = a + static_cast<ptrdiff_t>(batch * g.stride_a * size);
    const void* bb = b + static_cast<ptrdiff_t>(batch * g.stride_b * size);
    void* cb = c + static_cast<ptrdiff_t>(batch * g.stride_c * size);
    for (long long i = 0; i < g.m; ++i) {
      for (long long j = 0; j < g.n; ++j) {
        double sum = 0;
        for (long long p = 0; p < g.k; ++p) {
          sum += OpElement(g.a_type, ab, g.transa, g.lda, i, p) *
                 OpElement(g.b_type, bb, g.transb, g.ldb, p, j);
        }
        const double old = g.beta == 0 ? 0 : LoadValue(g.c_type, cb, i + j * g.ldc);
        StoreValue(g.c_type, cb, i + j * g.ldc, g.alpha * sum + g.beta * old);
      }
    }
  }
}

void ComputeQueued(void* user_data) {
  std::unique_ptr<EmuGemmCall> call(static_cast<EmuGemmCall*>(user_data));
  Compute(*call);
}

void ComputeCaptured(void* user_data) { Compute(*static_cast<const EmuGemmCall*>(user_data)); }

bool KnownType(int type) {
  return type == kR32F || type == kR64F || type == kR16F || type == kR16BF;
}

// cuBLAS's argument rules for the column-major call.
bool Valid(const EmuGemmCall& g) {
  if ((g.transa != kOpN && g.transa != kOpT) || (g.transb != kOpN && g.transb != kOpT))
    return false;
  if (g.m < 0 || g.n < 0 || g.k < 0 || g.batch < 0) return false;
  const int a_rows = g.transa == kOpN ? g.m : g.k;
  const int b_rows = g.transb == kOpN ? g.k : g.n;
  auto at_least = [](int ld, int rows) { return ld >= (rows > 1 ? rows : 1); };
  return at_least(g.lda, a_rows) && at_least(g.ldb, b_rows) && at_least(g.ldc, g.m);
}

}  // namespace

EMU_EXPORT int EMU_BLAS_V2_NAME(Create)(void** handle) {
  if (handle == nullptr) return kInvalidValue;
  *handle = new Handle();
  return kSuccess;
}

EMU_EXPORT int EMU_BLAS_V2_NAME(Destroy)(void* handle) {
  if (handle == nullptr) return kNotInitialized;
  delete static_cast<Handle*>(handle);
  return kSuccess;
}

EMU_EXPORT int EMU_BLAS_V2_NAME(SetStream)(void* handle, void* stream) {
  if (handle == nullptr) return kNotInitialized;
  static_cast<Handle*>(handle)->stream = stream;
  return kSuccess;
}

EMU_EXPORT int EMU_BLAS(GemmStridedBatchedEx)(void* handle, int transa, int transb, int m, int n,
                                              int k, const void* alpha, const void* A, int Atype,
                                              int lda, long long strideA, const void* B, int Btype,
                                              int ldb, long long strideB, const void* beta, void* C,
                                              int Ctype, int ldc, long long strideC, int batchCount,
                                              int computeType, int algo) {
  if (handle == nullptr) return kNotInitialized;
  const bool doubles = computeType == kCompute64F;
  if (alpha == nullptr || beta == nullptr) return kInvalidValue;
  EmuGemmCall call{handle,
                   static_cast<Handle*>(handle)->stream,
                   transa,
                   transb,
                   m,
                   n,
                   k,
                   doubles ? *static_cast<const double*>(alpha) : *static_cast<const float*>(alpha),
                   doubles ? *static_cast<const double*>(beta) : *static_cast<const float*>(beta),
                   A,
                   Atype,
                   lda,
                   strideA,
                   B,
                   Btype,
                   ldb,
                   strideB,
                   C,
                   Ctype,
                   ldc,
                   strideC,
                   batchCount,
                   computeType,
                   algo,
                   0};
  {
    std::lock_guard<std::mutex> lock(g_mutex);
    call.calls = g_last.calls + 1;
    g_last = call;
    if (g_fail_next != kSuccess) {
      const int status = g_fail_next;
      g_fail_next = kSuccess;
      return status;
    }
  }
  if (!KnownType(Atype) || Btype != Atype || Ctype != Atype) return kNotSupported;
  if (computeType != (Atype == kR64F ? kCompute64F : kCompute32F)) return kNotSupported;
  if (!Valid(call)) return kInvalidValue;
  if (m == 0 || n == 0 || batchCount == 0) return kSuccess;
  const LaunchHostFunc launch = RuntimeLaunchHostFunc();
  if (launch == nullptr) return kNotInitialized;
  auto queued = std::make_unique<EmuGemmCall>(call);
  if (Capturing(call.stream)) {
    if (launch(call.stream, &ComputeCaptured, queued.get()) != 0) return kNotInitialized;
    std::lock_guard<std::mutex> lock(g_mutex);
    g_captured.push_back(std::move(queued));
    return kSuccess;
  }
  if (launch(call.stream, &ComputeQueued, queued.get()) != 0) return kNotInitialized;
  queued.release();  // the host function frees it
  return kSuccess;
}

EMU_EXPORT EmuGemmCall emuCublasLastGemm(void) {
  std::lock_guard<std::mutex> lock(g_mutex);
  return g_last;
}

EMU_EXPORT void emuCublasFailNext(int status) {
  std::lock_guard<std::mutex> lock(g_mutex);
  g_fail_next = status;
}
