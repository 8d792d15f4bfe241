// The arguments of the NVIDIA operator backend's CUDA kernels, shared by the kernels (compiled by
// nvcc into the fatbin the backend carries) and the host code that launches them (compiled by the
// host compiler, without CUDA's headers). Every kernel is extern "C" and takes one struct by value,
// whose first member is a KernelCall; the host makes the rest of the struct when a descriptor is
// created and fills in the KernelCall at each call.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_KERNEL_ABI_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_KERNEL_ABI_H_

#include <stdint.h>

namespace infinirt::infiniop_cuda_family {

constexpr int kMaxBuffers = 8;

// What changes from call to call: the buffers in the order of the operator's public call (outputs
// first), the workspace, and the run parameters (RandomSample's).
struct KernelCall {
  void* buffers[kMaxBuffers];
  void* workspace;
  uint64_t workspace_size;
  float random_val;
  float topp;
  float temperature;
  int32_t topk;
};

// --- The kernels' argument structs ---------------------------------------------------------------
// Each starts with the KernelCall; the rest is made once, by MakeKernelPlan. Sizes and counts are
// in elements, strides in elements (0 and negative allowed), all 64-bit. Only fixed-width fields,
// so that the host compiler and nvcc lay them out alike.

// The most dimensions an elementwise call has once its layout is simplified.
constexpr int kMaxDims = 12;
// The most tensors of an elementwise kernel (a binary operator's c, a, b; Rearrange's dst, src).
constexpr int kMaxElementwiseTensors = 3;

// The binary operators of kernels/elementwise_operators.h (buffers c, a, b) and Rearrange (dst,
// src). ndim 0: every tensor is one contiguous run of `elements`; otherwise the merged shape (the
// last dimension innermost) and each tensor's strides along it.
struct ElementwiseArgs {
  KernelCall call;
  uint64_t elements;
  int32_t ndim;
  int32_t reserved;
  uint64_t shape[kMaxDims];
  int64_t strides[kMaxElementwiseTensors][kMaxDims];
};

// RMSNorm (y, x, w): rows = batch * nhead rows of dim elements, each row's elements contiguous;
// row r is (r / nhead, r % nhead).
struct RMSNormArgs {
  KernelCall call;
  uint64_t rows;
  uint64_t nhead;
  uint64_t dim;
  int64_t y_strides[2];  // batch, head
  int64_t x_strides[2];
  float epsilon;
  int32_t reserved;
};

// CausalSoftmax (y, x): rows = batch * seq_len rows of total_seq_len elements; row r is
// (r / seq_len, r % seq_len).
struct CausalSoftmaxArgs {
  KernelCall call;
  uint64_t rows;
  uint64_t seq_len;
  uint64_t total_seq_len;
  int64_t y_strides[3];  // batch, row, column
  int64_t x_strides[3];
};

// RoPE (y, x, pos_ids, sin_table, cos_table): one thread per rotated pair; pairs = batch *
// seq_len * nhead * half. pos_dtype: the infiniDtype_t of pos_ids (an integer dtype).
struct RoPEArgs {
  KernelCall call;
  uint64_t pairs;
  uint64_t seq_len;
  uint64_t nhead;
  uint64_t half;  // dhead / 2
  uint64_t table_len;
  int64_t y_strides[3];  // batch, token, head
  int64_t x_strides[3];
  int64_t pos_strides[2];  // batch, token
  int64_t sin_row_stride;
  int64_t cos_row_stride;
  int32_t pos_dtype;
  int32_t reserved;
};

// RandomSample (result, probs): one block. result_dtype: the infiniDtype_t of the 0-D result
// (I32, I64, U32 or U64). infiniop_random_sample_* sort the candidates in the launch's dynamic
// shared memory (12 bytes each) and use no workspace; infiniop_random_sample_large_* sort them in
// the workspace, laid out at the byte offsets below (workspace_needed bytes in all).
struct RandomSampleArgs {
  KernelCall call;
  uint64_t voc;
  int64_t stride;
  int32_t result_dtype;
  int32_t reserved;
  uint64_t keys_offset[2];     // voc uint64_t each
  uint64_t indices_offset[2];  // voc uint32_t each
  uint64_t workspace_needed;
};

}  // namespace infinirt::infiniop_cuda_family

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_FAMILY_KERNEL_ABI_H_
