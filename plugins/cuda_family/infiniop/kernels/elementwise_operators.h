// The binary elementwise operators of the CUDA family's kernels (c = op(a, b), one shape, one
// dtype, any strides): each one's row in the table and the functor computing one element. A new
// such operator's CUDA kernel is this file alone: infiniop_kernels.cu instantiates a kernel per
// row and dtype, named infiniop_<snake name>_<dtype>, and family_plans.cc reads the same table
// (without the functors: they are device code) to launch them.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_ELEMENTWISE_OPERATORS_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_ELEMENTWISE_OPERATORS_H_

// The dtypes a row has kernels for: Y(args..., <kernel-name suffix>, <dtype>) per dtype, the dtype
// both InfiniCore's INFINI_DTYPE_<dtype> and the kernels' element type.
#define INFINIOP_CUDA_FLOAT_TYPES(Y, ...) \
  Y(__VA_ARGS__, f16, F16)                \
  Y(__VA_ARGS__, bf16, BF16)              \
  Y(__VA_ARGS__, f32, F32)                \
  Y(__VA_ARGS__, f64, F64)
#define INFINIOP_CUDA_NUMBER_TYPES(Y, ...)  \
  INFINIOP_CUDA_FLOAT_TYPES(Y, __VA_ARGS__) \
  Y(__VA_ARGS__, i32, I32)                  \
  Y(__VA_ARGS__, i64, I64)

// X(operator name in INFINIOP_OPERATORS, its snake name, functor, dtypes).
#define INFINIOP_CUDA_BINARY_OPERATORS(X)        \
  X(Add, add, AddOp, INFINIOP_CUDA_NUMBER_TYPES) \
  X(Mul, mul, MulOp, INFINIOP_CUDA_NUMBER_TYPES) \
  X(SwiGLU, swiglu, SwiGLUOp, INFINIOP_CUDA_FLOAT_TYPES)

#ifdef __CUDACC__
// Each functor computes in its type's Value (float for F16 and BF16, unsigned for integers, so
// that they wrap), with infiniop_kernels.cu's helpers (Mul rounds a product on its own, as the CPU
// does).
namespace infinirt::infiniop_cuda_family::kernels {

struct AddOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return a + b;
  }
};

struct MulOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return a * b;
  }
};

// up * silu(gate), silu(x) = x * sigmoid(x).
struct SwiGLUOp {
  template <class V>
  __device__ V operator()(V up, V gate) const {
    const V sigmoid = V(1) / (V(1) + Exp(-gate));
    return Mul(up, Mul(gate, sigmoid));
  }
};

}  // namespace infinirt::infiniop_cuda_family::kernels
#endif  // __CUDACC__

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_ELEMENTWISE_OPERATORS_H_
