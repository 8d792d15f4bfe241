// Gemm through oneDNN's matmul primitive (Debian's libdnnl-dev), for F32 and BF16 where the build
// has it: on processors with AVX-512 its kernels run F32 at about twice OpenBLAS's (Debian's 0.3.21
// reaches only its AVX2 kernels there), and BF16 in place, with AVX512-BF16 or AMX where the
// processor has them, where OpenBLAS would need float copies. alpha is a run-time output scale;
// beta is a sum post-op, which oneDNN 2 fixes when the primitive is made, so the primitives are
// kept per value of beta (0 and 1 in practice).
#include "cpu_onednn_gemm.h"

#if INFINIOP_CPU_HAS_ONEDNN

#include <cstring>
#include <mutex>
#include <oneapi/dnnl/dnnl.hpp>
#include <utility>
#include <vector>

namespace infinirt::infiniop_cpu {

namespace {

dnnl::memory::desc DescOf(const MatmulOperand& m, size_t batch, dnnl::memory::data_type type) {
  using dims = dnnl::memory::dims;
  const auto rows = static_cast<int64_t>(m.rows), cols = static_cast<int64_t>(m.cols);
  // A batch of one may carry any stride; oneDNN wants one that steps past the whole matrix.
  const int64_t span = (rows - 1) * m.row_stride + (cols - 1) * m.col_stride + 1;
  const int64_t batch_stride = batch > 1 ? m.batch_stride : span;
  return dnnl::memory::desc(dims{static_cast<int64_t>(batch), rows, cols}, type,
                            dims{batch_stride, m.row_stride, m.col_stride});
}

dnnl::engine& Engine() {
  static dnnl::engine* engine = new dnnl::engine(dnnl::engine::kind::cpu, 0);  // never destroyed:
  return *engine;  // a host function may run during exit
}

class OneDnnGemmPlan final : public Plan {
 public:
  OneDnnGemmPlan(const MatmulShape& shape, dnnl::memory::data_type type)
      : Plan(3, shape.m == 0 || shape.n == 0, true),
        a_(DescOf(shape.a, shape.a_batch, type)),
        b_(DescOf(shape.b, shape.b_batch, type)),
        c_(DescOf(shape.c, shape.batch, type)) {}

  // Makes the primitives for beta 0 and 1; false where oneDNN has only its reference kernels for
  // these layouts (then OpenBLAS serves them better).
  bool Prepare() {
    for (float beta : {0.0f, 1.0f}) {
      dnnl::matmul::primitive_desc pd = Describe(beta);
      if (std::strncmp(pd.impl_info_str(), "ref", 3) == 0) return false;
      primitives_.emplace_back(BitsOf(beta), dnnl::matmul(pd));
    }
    return true;
  }

  void Compute(const Buffers& buffers, const infiniopBackendRunParams& params) const override {
    dnnl::engine& engine = Engine();
    dnnl::stream stream(engine);
    dnnl::memory c(c_, engine, buffers[0]), a(a_, engine, buffers[1]), b(b_, engine, buffers[2]);
    float alpha = params.alpha;
    dnnl::memory scale({{1}, dnnl::memory::data_type::f32, {1}}, engine, &alpha);
    PrimitiveFor(params.beta)
        .execute(stream, {{DNNL_ARG_SRC, a},
                          {DNNL_ARG_WEIGHTS, b},
                          {DNNL_ARG_DST, c},
                          {DNNL_ARG_ATTR_OUTPUT_SCALES, scale}});
    stream.wait();
  }

 private:
  dnnl::matmul::primitive_desc Describe(float beta) const {
    dnnl::primitive_attr attr;
    attr.set_output_scales(0, {DNNL_RUNTIME_F32_VAL});
    if (beta != 0) {
      dnnl::post_ops sum;
      sum.append_sum(beta);
      attr.set_post_ops(sum);
    }
    return dnnl::matmul::primitive_desc(dnnl::matmul::desc(a_, b_, c_), attr, Engine());
  }

  dnnl::matmul PrimitiveFor(float beta) const {
    std::lock_guard<std::mutex> lock(mutex_);
    for (const auto& [bits, primitive] : primitives_) {
      if (bits == BitsOf(beta)) return primitive;
    }
    dnnl::matmul made(Describe(beta));
    if (primitives_.size() < kMaxPrimitives) primitives_.emplace_back(BitsOf(beta), made);
    return made;
  }

  // Primitives kept for other values of beta than 0 and 1; any further value makes its own.
  static constexpr size_t kMaxPrimitives = 8;

  dnnl::memory::desc a_, b_, c_;
  mutable std::mutex mutex_;
  mutable std::vector<std::pair<uint32_t, dnnl::matmul>> primitives_;
};

}  // namespace

bool MakeOneDnnGemmPlan(const MatmulShape& shape, infiniDtype_t dtype, PlanPtr* plan) {
  dnnl::memory::data_type type;
  switch (dtype) {
    case INFINI_DTYPE_F32:
      type = dnnl::memory::data_type::f32;
      break;
    case INFINI_DTYPE_BF16:
      type = dnnl::memory::data_type::bf16;
      break;
    default:
      return false;
  }
  try {
    auto made = std::make_shared<OneDnnGemmPlan>(shape, type);
    if (!made->Prepare()) return false;
    *plan = std::move(made);
    return true;
  } catch (const dnnl::error&) {  // layouts or types this oneDNN does not take
    return false;
  }
}

}  // namespace infinirt::infiniop_cpu

#endif  // INFINIOP_CPU_HAS_ONEDNN
