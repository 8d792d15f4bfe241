// Gemm on CUDA-family devices: the vendor's cublasGemmStridedBatchedEx (under its names) on the
// InfiniRT stream's native stream. cuBLAS is column-major; a descriptor's matrices are row- or
// column-major each (one of their last two dimensions packed). A column-major c is computed as
// c = op(a) op(b); a row-major c as its transpose, c^T = op(b^T) op(a^T), which cuBLAS sees as a
// column-major n x m matrix.
#include <climits>
#include <mutex>
#include <string>
#include <unordered_map>
#include <vector>

#include "family_backend.h"
#include "infinirt.h"

namespace infinirt::infiniop_cuda_family {

namespace {

// A matrix as cuBLAS reads it: column-major with leading dimension ld, or row-major (which
// cuBLAS reads as the transpose) with ld its row stride.
struct MatrixView {
  bool column_major = true;
  long long ld = 1;
  long long rows = 0, cols = 0;
  long long batch = 1;
  long long batch_stride = 0;
};

// The view of a 2-D or 3-D tensor; false when neither of its last two dimensions is packed with
// a leading dimension cuBLAS accepts (at least the packed dimension's extent).
bool ViewOf(const infiniopBackendTensor& t, MatrixView* view) {
  const size_t last = t.ndim - 1;
  view->rows = static_cast<long long>(t.shape[last - 1]);
  view->cols = static_cast<long long>(t.shape[last]);
  view->batch = t.ndim == 3 ? static_cast<long long>(t.shape[0]) : 1;
  view->batch_stride = t.ndim == 3 && view->batch > 1 ? static_cast<long long>(t.strides[0]) : 0;
  const long long row_stride = t.strides[last - 1];
  const long long col_stride = t.strides[last];
  const long long rows = view->rows > 0 ? view->rows : 1;
  const long long cols = view->cols > 0 ? view->cols : 1;
  // A dimension of one element has no meaningful stride: any leading dimension serves.
  if ((view->rows <= 1 || row_stride == 1) && (view->cols <= 1 || col_stride >= rows)) {
    view->column_major = true;
    view->ld = view->cols <= 1 ? rows : col_stride;
    return true;
  }
  if ((view->cols <= 1 || col_stride == 1) && (view->rows <= 1 || row_stride >= cols)) {
    view->column_major = false;
    view->ld = view->rows <= 1 ? cols : row_stride;
    return true;
  }
  return false;
}

bool FitsInt(long long value) { return value >= 0 && value <= INT_MAX; }

bool DataTypes(infiniDtype_t dtype, GemmPlan* plan) {
  switch (dtype) {
    case INFINI_DTYPE_F16:
      plan->data_type = kCudaR16F;
      plan->compute_type = kCublasCompute32F;
      return true;
    case INFINI_DTYPE_BF16:
      plan->data_type = kCudaR16BF;
      plan->compute_type = kCublasCompute32F;
      return true;
    case INFINI_DTYPE_F32:
      plan->data_type = kCudaR32F;
      plan->compute_type = kCublasCompute32F;
      return true;
    case INFINI_DTYPE_F64:
      plan->data_type = kCudaR64F;
      plan->compute_type = kCublasCompute64F;
      plan->double_scalars = true;
      return true;
    default:
      return false;
  }
}

// cuBLAS's handles, per CUDA device, each used by one call at a time; never destroyed (a handle
// destroyed at exit could outlive the CUDA Runtime).
class HandlePool {
 public:
  void* Acquire(const CublasFunctions& cublas, int device) {
    {
      std::lock_guard<std::mutex> lock(mutex_);
      std::vector<void*>& idle = idle_[device];
      if (!idle.empty()) {
        void* handle = idle.back();
        idle.pop_back();
        return handle;
      }
    }
    void* handle = nullptr;  // made for the current device, the stream's
    if (cublas.cublasCreate_v2(&handle) != kCublasSuccess) return nullptr;
    return handle;
  }
  void Release(int device, void* handle) {
    std::lock_guard<std::mutex> lock(mutex_);
    idle_[device].push_back(handle);
  }

 private:
  std::mutex mutex_;
  std::unordered_map<int, std::vector<void*>> idle_;
};

HandlePool& Handles() {
  static auto* pool = new HandlePool();
  return *pool;
}

infiniStatus_t StatusOfCublas(int status) {
  switch (status) {
    case kCublasSuccess:
      return INFINI_STATUS_SUCCESS;
    case 7:  // CUBLAS_STATUS_INVALID_VALUE
      return INFINI_STATUS_BAD_PARAM;
    case 8:  // CUBLAS_STATUS_ARCH_MISMATCH
      return INFINI_STATUS_DEVICE_ARCHITECTURE_NOT_SUPPORTED;
    case 15:  // CUBLAS_STATUS_NOT_SUPPORTED
      return INFINI_STATUS_NOT_IMPLEMENTED;
    default:
      return INFINI_STATUS_INTERNAL_ERROR;
  }
}

}  // namespace

infiniStatus_t MakeGemmPlan(const infiniopBackendTensor* tensors, GemmPlan* plan) {
  const infiniopBackendTensor& c = tensors[0];
  const infiniopBackendTensor& a = tensors[1];
  const infiniopBackendTensor& b = tensors[2];
  if (a.dtype != c.dtype || b.dtype != c.dtype || !DataTypes(c.dtype, plan)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  MatrixView cv, av, bv;
  if (!ViewOf(c, &cv) || !ViewOf(a, &av) || !ViewOf(b, &bv)) return INFINI_STATUS_NOT_IMPLEMENTED;
  const long long m = cv.rows, n = cv.cols, k = av.cols;
  plan->empty = m == 0 || n == 0 || cv.batch == 0;
  if (!FitsInt(m) || !FitsInt(n) || !FitsInt(k) || !FitsInt(cv.batch) || !FitsInt(av.ld) ||
      !FitsInt(bv.ld) || !FitsInt(cv.ld)) {
    return INFINI_STATUS_NOT_IMPLEMENTED;  // the _64 entry points would serve; not wired
  }
  plan->batch = static_cast<int>(cv.batch);
  plan->k = static_cast<int>(k);
  plan->ldc = static_cast<int>(cv.ld);
  plan->stride_c = cv.batch_stride;
  // The first operand of cuBLAS's product, then the second: for a column-major c, a then b; for
  // a row-major one (computed transposed), b then a. An operand stored the way cuBLAS reads it
  // for this product is passed as is (N), the other transposed (T).
  plan->swap_operands = !cv.column_major;
  const MatrixView& first = plan->swap_operands ? bv : av;
  const MatrixView& second = plan->swap_operands ? av : bv;
  plan->m = static_cast<int>(plan->swap_operands ? n : m);
  plan->n = static_cast<int>(plan->swap_operands ? m : n);
  plan->transa = first.column_major == cv.column_major ? kCublasOpN : kCublasOpT;
  plan->transb = second.column_major == cv.column_major ? kCublasOpN : kCublasOpT;
  plan->lda = static_cast<int>(first.ld);
  plan->ldb = static_cast<int>(second.ld);
  plan->stride_a = first.batch_stride;
  plan->stride_b = second.batch_stride;
  return INFINI_STATUS_SUCCESS;
}

infiniStatus_t RunGemm(const GemmPlan& plan, void* const* buffers,
                       const infiniopBackendRunParams& params, void* native_stream) {
  std::string why;
  const CublasFunctions* cublas = Cublas(&why);
  if (cublas == nullptr) {
    LogDebug("Gemm: " + why);
    return INFINI_STATUS_NOT_IMPLEMENTED;
  }
  int device = -1;
  if (Runtime().GetDevice(&device) != kCudaSuccess) return INFINI_STATUS_INTERNAL_ERROR;
  void* handle = Handles().Acquire(*cublas, device);
  if (handle == nullptr) {
    LogDebug("Gemm: cublasCreate_v2 failed");
    return INFINI_STATUS_INTERNAL_ERROR;
  }
  const void* first = plan.swap_operands ? buffers[2] : buffers[1];
  const void* second = plan.swap_operands ? buffers[1] : buffers[2];
  const double alpha64 = params.alpha, beta64 = params.beta;
  const float alpha32 = params.alpha, beta32 = params.beta;
  const void* alpha = plan.double_scalars ? static_cast<const void*>(&alpha64) : &alpha32;
  const void* beta = plan.double_scalars ? static_cast<const void*>(&beta64) : &beta32;
  int status = cublas->cublasSetStream_v2(handle, native_stream);
  if (status == kCublasSuccess) {
    status = cublas->cublasGemmStridedBatchedEx(
        handle, plan.transa, plan.transb, plan.m, plan.n, plan.k, alpha, first, plan.data_type,
        plan.lda, plan.stride_a, second, plan.data_type, plan.ldb, plan.stride_b, beta, buffers[0],
        plan.data_type, plan.ldc, plan.stride_c, plan.batch, plan.compute_type, kCublasGemmDefault);
  }
  Handles().Release(device, handle);
  if (status != kCublasSuccess) LogDebug("Gemm: cuBLAS status " + std::to_string(status));
  return StatusOfCublas(status);
}

}  // namespace infinirt::infiniop_cuda_family
