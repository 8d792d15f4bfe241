/*
 * The InfiniOP backend ABI: what an operator backend, libinfiniop_<plugin name>.so, exports for
 * libinfiniop.so. A backend serves one device type; it is found beside the runtime's plugins
 * (infinirtOpenExtensionLibrary) and computes with the public InfiniRT API only.
 *
 * libinfiniop validates every descriptor (shapes, strides, dtypes, with InfiniCore's status
 * codes) before a backend sees it: a backend's Create gets tensors that passed the operator's
 * rules, and answers INFINI_STATUS_NOT_IMPLEMENTED for an operator, or a combination of dtypes
 * and layouts, it does not implement. Valid C99 and C++17.
 *
 * Compatibility: the table starts with its size and ABI version; libinfiniop refuses a backend of
 * another major version and reads only the fields the backend's struct_size covers.
 */
#ifndef INFINIOP_BACKEND_H_
#define INFINIOP_BACKEND_H_

#include <stddef.h>

#include "infinicore.h"
#include "infinirt.h"

#define INFINIOP_BACKEND_ABI_MAJOR 1
#define INFINIOP_BACKEND_ABI_MINOR 1

/* The symbol every backend exports: infiniopBackendGetTable, an infiniopBackendGetTableFn. */
#define INFINIOP_BACKEND_ENTRY_SYMBOL "infiniopBackendGetTable"

#ifdef __cplusplus
extern "C" {
#endif

/* The operators: the one list. X(name, number, tensors): the name is the public API's
 * (infiniop<name>), the number the operator's infiniopOperator_t value, tensors how many tensor
 * descriptors its Create takes (and buffers its call passes). */
#define INFINIOP_OPERATORS(X) \
  X(Add, 0, 3)                \
  X(Mul, 1, 3)                \
  X(Gemm, 2, 3)               \
  X(RMSNorm, 3, 3)            \
  X(RoPE, 4, 5)               \
  X(SwiGLU, 5, 3)             \
  X(CausalSoftmax, 6, 2)      \
  X(Rearrange, 7, 2)          \
  X(RandomSample, 8, 2)

#define INFINIOP_OPERATOR_ENUMERATOR_(name, number, tensors) INFINIOP_OPERATOR_##name = number,
typedef enum INFINIRT_ENUM_BASE {
  INFINIOP_OPERATORS(INFINIOP_OPERATOR_ENUMERATOR_) INFINIOP_OPERATOR_COUNT
} infiniopOperator_t;
#undef INFINIOP_OPERATOR_ENUMERATOR_

/* The tensors an operator takes, outputs first; 0 for a value that is no operator. */
static inline size_t infiniopOperatorTensorCount(infiniopOperator_t op) {
  switch (op) {
#define INFINIOP_OPERATOR_TENSORS_(name, number, tensors) \
  case INFINIOP_OPERATOR_##name:                          \
    return tensors;
    INFINIOP_OPERATORS(INFINIOP_OPERATOR_TENSORS_)
#undef INFINIOP_OPERATOR_TENSORS_
    default:
      return 0;
  }
}

/* A tensor as a backend sees it: valid for the call it is passed to (copy what is kept). Its
 * buffer points at element (0, ..., 0), whatever the signs of the strides, and is aligned to its
 * element size. An output either is one of the inputs (in place, same layout) or overlaps none. */
typedef struct infiniopBackendTensor {
  infiniDtype_t dtype;
  size_t ndim;
  const size_t* shape;      /* ndim entries */
  const ptrdiff_t* strides; /* ndim entries, in elements */
} infiniopBackendTensor;

/* Parameters fixed when a descriptor is made: RMSNorm's epsilon, RoPE's algorithm. */
typedef struct infiniopBackendCreateParams {
  float epsilon;
  int rope_algo; /* infiniopRoPEAlgo_t */
} infiniopBackendCreateParams;

/* Parameters of each call: Gemm's alpha and beta, RandomSample's. */
typedef struct infiniopBackendRunParams {
  float alpha;
  float beta;
  float random_val;
  float topp;
  int topk;
  float temperature;
} infiniopBackendRunParams;

/* What a backend keeps for one descriptor. */
typedef struct infiniopBackendKernel* infiniopBackendKernel_t;

typedef struct infiniopBackendTable {
  size_t struct_size; /* sizeof(infiniopBackendTable) as the backend was built */
  int abi_major;      /* INFINIOP_BACKEND_ABI_MAJOR */
  int abi_minor;
  const char* name;           /* the runtime plugin's name: "cpu", "nvidia" */
  infiniDevice_t device_type; /* the device type it serves */

  /* Called once, after loading. On failure, why (a NUL-terminated line, at most why_size bytes
   * with the NUL) says what is missing: it is shown in the backend listing. */
  infiniStatus_t (*Initialize)(char* why, size_t why_size);

  /* A kernel for `op` on the device_index-th device of the type, for the tensors in the order
   * of the operator's public Create call (outputs first). *workspace_size: the bytes of
   * workspace each call needs. */
  infiniStatus_t (*Create)(infiniopOperator_t op, int device_index,
                           const infiniopBackendTensor* tensors, size_t tensor_count,
                           const infiniopBackendCreateParams* params,
                           infiniopBackendKernel_t* kernel, size_t* workspace_size);

  /* Queues the kernel's work on `stream` (of the kernel's device) for the buffers in the order
   * of the operator's public call (outputs first); returns once it is queued. */
  infiniStatus_t (*Run)(infiniopBackendKernel_t kernel, void* workspace, size_t workspace_size,
                        void* const* buffers, size_t buffer_count,
                        const infiniopBackendRunParams* params, infinirtStream_t stream);

  /* Releases the kernel. Work it queued may still be pending: the backend keeps what that work
   * needs until it is done. Work captured into a graph is the exception: the caller keeps the
   * descriptor until the graphs that captured it are destroyed, and the backend may release what
   * such work needs here. */
  infiniStatus_t (*Destroy)(infiniopBackendKernel_t kernel);

  /* ABI 1.1. What Create would answer for these tensors on a device where every library the
   * backend uses is present, without a device: SUCCESS, with how it computes them in how (a
   * NUL-terminated line of at most how_size bytes: "OpenBLAS cblas_sgemm", "CUDA kernels"), or
   * the status Create would refuse them with. The operator support table in the documentation is
   * generated from it. NULL: not described. */
  infiniStatus_t (*Describe)(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                             size_t tensor_count, const infiniopBackendCreateParams* params,
                             char* how, size_t how_size);
} infiniopBackendTable;

typedef const infiniopBackendTable* (*infiniopBackendGetTableFn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* INFINIOP_BACKEND_H_ */
