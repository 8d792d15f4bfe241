// Transposes of 4-byte elements in vector registers, for Rearrange: the tiled copy's scalar loop
// moves one element per load and store, these move 16 x 16 tiles in 32 loads and stores (AVX-512)
// or 64 (AVX2).
#ifndef INFINIOP_CPU_TRANSPOSE_H_
#define INFINIOP_CPU_TRANSPOSE_H_

#include <stddef.h>

namespace infinirt::infiniop_cpu {

// A transpose of 4-byte elements: b[x][y] = a[y][x] for y < a_rows and x < a_cols, strides in
// elements (positive or negative; rows of a and of b each run contiguously).
struct Transpose32 {
  const char* a = nullptr;
  ptrdiff_t a_stride = 0;
  char* b = nullptr;
  ptrdiff_t b_stride = 0;
  size_t a_rows = 0;
  size_t a_cols = 0;
  // Write b with non-temporal stores (AVX-512, where b's tiles are 64-byte aligned): for a b too
  // large to stay in cache, they spare reading each line before it is overwritten, and made a
  // 4096 x 4096 transpose three times as fast.
  bool streaming_stores = false;
};

// The size of b from which a transpose asks for streaming stores: beyond what a core's cache holds,
// where a reader of b finds it in memory either way.
constexpr size_t kStreamingStoreBytes = size_t{4} << 20;

// The rows of a that one call of TransposeRows32 takes as a unit (the threads' grain).
constexpr size_t kTransposeBand = 64;

// Transposes rows first_row to end_row - 1 of a (into columns of b). Only where SelectedIsa() is
// at least Isa::kAvx2.
void TransposeRows32(const Transpose32& t, size_t first_row, size_t end_row);

}  // namespace infinirt::infiniop_cpu

#endif  // INFINIOP_CPU_TRANSPOSE_H_
