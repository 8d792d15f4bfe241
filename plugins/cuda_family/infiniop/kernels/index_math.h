// The index arithmetic the kernels share with the host (compiled by nvcc for the kernels, by the
// host compiler for the plans and for tests/infiniop/family_index_math_test.cc, which checks it on
// the CPU): where a line of a LineLayout starts, the shared memory of an attention block, AWQ's
// nibble order. Plain functions of fixed-width integers, nothing of CUDA's headers.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_INDEX_MATH_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_INDEX_MATH_H_

#include <stdint.h>

#include "family_kernel_abi.h"

#if defined(__CUDACC__)
#define INFINIOP_HOST_DEVICE __host__ __device__
#else
#define INFINIOP_HOST_DEVICE
#endif

namespace infinirt::infiniop_cuda_family {

// The element offset of line `line`'s first element in tensor `tensor`: the line's outer
// coordinates (row-major over outer_shape, the last innermost) times the tensor's strides.
INFINIOP_HOST_DEVICE inline int64_t LineOffset(const LineLayout& layout, uint64_t line,
                                               int tensor) {
  int64_t offset = 0;
  for (int d = layout.outer_ndim - 1; d >= 0; --d) {
    const uint64_t size = layout.outer_shape[d];
    const uint64_t coordinate = line % size;
    line /= size;
    offset += static_cast<int64_t>(coordinate) * layout.outer_strides[tensor][d];
  }
  return offset;
}

// The elements between two keys of an attention block's key tile: one 32-bit word more than
// head_size's, so that the lanes of a warp, each reading its own key at the same element, fall in
// different banks (for an even head_size in F32, a multiple of 4 in F16 and BF16).
INFINIOP_HOST_DEVICE inline uint64_t AttentionKeyPitch(uint64_t head_size, uint64_t element_size) {
  return head_size + (element_size >= 4 ? 1 : 4 / element_size);
}

// The dynamic shared memory of an attention block of `warps` query rows: the rows (scaled) in
// float, then tile_keys keys (AttentionKeyPitch apart), then tile_keys values (head_size apart), in
// the storage's element size.
INFINIOP_HOST_DEVICE inline uint64_t AttentionQueryBytes(uint64_t warps, uint64_t head_size) {
  return warps * head_size * 4;
}
INFINIOP_HOST_DEVICE inline uint64_t AttentionKeyTileBytes(uint64_t tile_keys, uint64_t head_size,
                                                           uint64_t element_size) {
  return tile_keys * AttentionKeyPitch(head_size, element_size) * element_size;
}
INFINIOP_HOST_DEVICE inline uint64_t AttentionSharedBytes(uint64_t warps, uint64_t tile_keys,
                                                          uint64_t head_size,
                                                          uint64_t element_size) {
  return AttentionQueryBytes(warps, head_size) +
         AttentionKeyTileBytes(tile_keys, head_size, element_size) +
         tile_keys * head_size * element_size;
}

// The bit position, in a 32-bit AWQ pack, of logical column j (0 to 7): nibble 0, 4, 1, 5, 2, 6,
// 3, 7 for j = 0 to 7 (the even columns in the low half, the odd ones in the high half).
INFINIOP_HOST_DEVICE inline int AwqShift(int j) { return 4 * ((j & 1) * 4 + (j >> 1)); }

}  // namespace infinirt::infiniop_cuda_family

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_INDEX_MATH_H_
