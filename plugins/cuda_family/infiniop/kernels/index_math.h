// The index arithmetic the kernels share with the host (compiled by nvcc for the kernels, by the
// host compiler for the plans and for tests/infiniop/family_index_math_test.cc, which checks it on
// the CPU): where a line of a LineLayout starts, the shared memory of an attention block, AWQ's
// nibble order, the selections' order keys and sort sizes. Plain functions of fixed-width integers,
// nothing of CUDA's headers.
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

// --- Selections (TopK, Topksoftmax, Topkrouter) -------------------------------------------------

// The order key of a floating value stored in `bits` (sign: its sign bit; infinity: its exponent
// all ones, the sign clear): keys ascend in the selection's order, the CPU's LargerFirst (largest)
// or SmallerFirst: larger first (smaller first), every NaN first (last) whatever its sign and
// payload, -0 the key of +0. Numbers' keys are within the storage's width; a NaN's key is 0
// (largest) or all of the storage's bits (smallest).
INFINIOP_HOST_DEVICE inline uint64_t SelectionKey(uint64_t bits, uint64_t sign, uint64_t infinity,
                                                  bool largest) {
  const uint64_t all = sign | (sign - 1);
  const uint64_t magnitude = bits & (sign - 1);
  if (magnitude > infinity) return largest ? 0 : all;
  if (magnitude == 0) bits = 0;
  const uint64_t ascending = (bits & sign) != 0 ? (~bits & all) : (bits | sign);
  return largest ? (~ascending & all) : ascending;
}

// The smallest power of two at least n (1 for n 0); n at most 2^63.
INFINIOP_HOST_DEVICE inline uint64_t NextPowerOfTwo(uint64_t n) {
  uint64_t power = 1;
  while (power < n) power <<= 1;
  return power;
}

// The bits of an index below `count` that a radix selection walks: a multiple of 8, at least 8.
INFINIOP_HOST_DEVICE inline int SelectionIndexBits(uint64_t count) {
  int bits = 8;
  while (bits < 64 && (count - 1) >> bits != 0) bits += 8;
  return bits;
}

// The candidates a block sorts to select the first k of n with room for `capacity`: all n when
// they fit, else the k the radix selection finds (k at most capacity).
INFINIOP_HOST_DEVICE inline uint64_t SelectionSortCount(uint64_t n, uint64_t k, uint64_t capacity) {
  return n <= capacity ? n : k;
}

// A radix selection's state: the digits of (key, index) chosen so far, 8 bits at a time from the
// key's top then the index's (part 0: the key, 1: the index), and how many of the candidates with
// that prefix are still to be taken.
struct SelectionPrefix {
  uint64_t prefix[2];
  uint64_t mask[2];
  uint64_t remaining;
};

constexpr int kSelectionDigitBits = 8;
constexpr int kSelectionDigits = 1 << kSelectionDigitBits;

// Where pass `pass` reads its digit: the part (0: key, 1: index) and the shift.
INFINIOP_HOST_DEVICE inline void SelectionDigitPlace(int pass, int key_bits, int index_bits,
                                                     int* part, int* shift) {
  const int key_passes = key_bits / kSelectionDigitBits;
  *part = pass < key_passes ? 0 : 1;
  *shift = pass < key_passes ? key_bits - kSelectionDigitBits * (pass + 1)
                             : index_bits - kSelectionDigitBits * (pass - key_passes + 1);
}

// Whether a candidate has the prefix chosen so far (the ones a pass counts).
INFINIOP_HOST_DEVICE inline bool MatchesPrefix(const SelectionPrefix& p, uint64_t key,
                                               uint64_t index) {
  return (key & p.mask[0]) == p.prefix[0] && (index & p.mask[1]) == p.prefix[1];
}

INFINIOP_HOST_DEVICE inline unsigned SelectionDigit(uint64_t key, uint64_t index, int part,
                                                    int shift) {
  return static_cast<unsigned>((part == 0 ? key : index) >> shift) & (kSelectionDigits - 1);
}

// After a pass counted the digits of the candidates with the prefix, chooses the digit holding the
// remaining-th of them: appends it to the prefix, leaves in `remaining` how many of its candidates
// are to be taken. True when that is all of them (the selection is complete).
INFINIOP_HOST_DEVICE inline bool ChooseSelectionDigit(const unsigned long long* histogram, int part,
                                                      int shift, SelectionPrefix* p) {
  uint64_t before = 0;
  for (int d = 0; d < kSelectionDigits; ++d) {
    const uint64_t count = histogram[d];
    if (before + count >= p->remaining) {
      p->prefix[part] |= static_cast<uint64_t>(d) << shift;
      p->mask[part] |= static_cast<uint64_t>(kSelectionDigits - 1) << shift;
      p->remaining -= before;
      return count == p->remaining;
    }
    before += count;
  }
  return false;  // fewer candidates than remaining: not for a selection of k <= n
}

// Whether (key, index) is among those selected: at or below the prefix, compared on its digits.
INFINIOP_HOST_DEVICE inline bool InSelection(const SelectionPrefix& p, uint64_t key,
                                             uint64_t index) {
  const uint64_t top = key & p.mask[0];
  return top < p.prefix[0] || (top == p.prefix[0] && (index & p.mask[1]) <= p.prefix[1]);
}

// The pair a bitonic sort's step (blocks of `span`, partners `stride` apart; both powers of two)
// compares for its i-th comparison, and whether it orders them ascending.
INFINIOP_HOST_DEVICE inline void BitonicPair(uint64_t i, uint64_t stride, uint64_t span,
                                             uint64_t* lo, uint64_t* hi, bool* ascending) {
  *lo = ((i & ~(stride - 1)) << 1) | (i & (stride - 1));
  *hi = *lo + stride;
  *ascending = (*lo & span) == 0;
}

}  // namespace infinirt::infiniop_cuda_family

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_INDEX_MATH_H_
