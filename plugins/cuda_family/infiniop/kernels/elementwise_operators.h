// The elementwise operators of the CUDA family's kernels, binary (c = op(a, b)) and unary
// (y = op(x)), of one shape and one dtype with any strides: each one's row in a table and the
// functor computing one element. A new such operator's CUDA kernel is this file alone:
// infiniop_kernels.cu instantiates a kernel per row and dtype, named
// infiniop_<snake name>_<dtype>, and family_plans.cc reads the same tables (without the functors:
// they are device code) to launch them.
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
  X(Sub, sub, SubOp, INFINIOP_CUDA_NUMBER_TYPES) \
  X(SwiGLU, swiglu, SwiGLUOp, INFINIOP_CUDA_FLOAT_TYPES)
#define INFINIOP_CUDA_UNARY_OPERATORS(X)                       \
  X(Relu, relu, ReluOp, INFINIOP_CUDA_FLOAT_TYPES)             \
  X(Sigmoid, sigmoid, SigmoidOp, INFINIOP_CUDA_FLOAT_TYPES)    \
  X(Silu, silu, SiluOp, INFINIOP_CUDA_FLOAT_TYPES)             \
  X(Gelu, gelu, GeluOp, INFINIOP_CUDA_FLOAT_TYPES)             \
  X(GeluTanh, gelutanh, GeluTanhOp, INFINIOP_CUDA_FLOAT_TYPES) \
  X(MulScalar, mul_scalar, MulScalarOp, INFINIOP_CUDA_FLOAT_TYPES)

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

struct SubOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return a - b;
  }
};

struct MulOp {
  template <class V>
  __device__ V operator()(V a, V b) const {
    return a * b;
  }
};

template <class V>
__device__ V Sigmoid(V x) {
  return V(1) / (V(1) + Exp(-x));
}

// up * silu(gate), silu(x) = x * sigmoid(x).
struct SwiGLUOp {
  template <class V>
  __device__ V operator()(V up, V gate) const {
    return Mul(up, Mul(gate, Sigmoid(gate)));
  }
};

// max(x, 0), NaN staying NaN.
struct ReluOp {
  template <class V>
  __device__ V operator()(V x) const {
    return x < V(0) ? V(0) : x;
  }
};

struct SigmoidOp {
  template <class V>
  __device__ V operator()(V x) const {
    return Sigmoid(x);
  }
};

struct SiluOp {
  template <class V>
  __device__ V operator()(V x) const {
    return Mul(x, Sigmoid(x));
  }
};

// x (1 + erf(x / sqrt 2)) / 2 through erfc, as the CPU computes it (neither side cancels).
struct GeluOp {
  template <class V>
  __device__ V operator()(V x) const {
    const V tail = Erfc((x < V(0) ? -x : x) * V(0.70710678118654752440));
    return x < V(0) ? Mul(Mul(V(0.5), x), tail) : Mul(x, V(1) - Mul(V(0.5), tail));
  }
};

// x * sigmoid(2u), u = sqrt(2 / pi) (x + 0.044715 x^3): x (1 + tanh(u)) / 2 without tanh.
struct GeluTanhOp {
  template <class V>
  __device__ V operator()(V x) const {
    const V cube = Mul(Mul(x, x), x);
    const V two_u = Mul(V(1.59576912160573071175), x + Mul(V(0.044715), cube));
    return Mul(x, Sigmoid(two_u));
  }
};

// x * alpha, alpha the call's (a double), rounded to the computing type first as the CPU does:
// float for F16, BF16 and F32, double for F64. A functor constructible from the KernelCall is made
// from each call's.
struct MulScalarOp {
  __device__ explicit MulScalarOp(const KernelCall& call) : alpha(call.alpha_f64) {}
  template <class V>
  __device__ V operator()(V x) const {
    return Mul(x, static_cast<V>(alpha));
  }
  double alpha;
};

}  // namespace infinirt::infiniop_cuda_family::kernels
#endif  // __CUDACC__

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_ELEMENTWISE_OPERATORS_H_
