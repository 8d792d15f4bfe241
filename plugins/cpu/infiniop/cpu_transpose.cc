// Transposes of 4-byte elements in AVX2 registers (cpu_transpose.h).
#include "cpu_transpose.h"

#include <algorithm>
#include <cstdint>
#include <cstring>

#include "cpu_isa.h"

#if INFINIOP_CPU_HAS_X86_KERNELS
#include <immintrin.h>
#endif

namespace infinirt::infiniop_cpu {

namespace {

// Elements one by one: the edges that do not fill a 16 x 16 tile, or all of it where there are no
// AVX2 kernels.
void ScalarRange(const Transpose32& t, size_t y0, size_t y1, size_t x0, size_t x1) {
  const ptrdiff_t a_step = t.a_stride * 4, b_step = t.b_stride * 4;
  for (size_t y = y0; y < y1; ++y) {
    const char* a_row = t.a + static_cast<ptrdiff_t>(y) * a_step;
    for (size_t x = x0; x < x1; ++x) {
      std::memcpy(t.b + static_cast<ptrdiff_t>(x) * b_step + static_cast<ptrdiff_t>(y) * 4,
                  a_row + static_cast<ptrdiff_t>(x) * 4, 4);
    }
  }
}

void TransposeRowsScalar(const Transpose32& t, size_t first_row, size_t end_row) {
  ScalarRange(t, first_row, end_row, 0, t.a_cols);
}

}  // namespace

#if INFINIOP_CPU_HAS_X86_KERNELS

namespace {

constexpr size_t kChunk = 256;

// The 8 x 8 block at a transposed into b: 8 loads of a's rows, three rounds of shuffles, 8 stores
// of b's rows. The elements are moved as bit patterns (shuffles never change a float's bits).
INFINIOP_CPU_TARGET_AVX2 void Block8x8(const char* a, ptrdiff_t a_step, char* b, ptrdiff_t b_step) {
  __m256 r[8];
  for (int k = 0; k < 8; ++k)
    r[k] = _mm256_loadu_ps(reinterpret_cast<const float*>(a + k * a_step));
  __m256 t[8];
  for (int k = 0; k < 8; k += 2) {
    t[k] = _mm256_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm256_unpackhi_ps(r[k], r[k + 1]);
  }
  __m256 u[8];
  for (int k = 0; k < 8; k += 4) {
    u[k] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 1] = _mm256_shuffle_ps(t[k], t[k + 2], _MM_SHUFFLE(3, 2, 3, 2));
    u[k + 2] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(1, 0, 1, 0));
    u[k + 3] = _mm256_shuffle_ps(t[k + 1], t[k + 3], _MM_SHUFFLE(3, 2, 3, 2));
  }
  for (int k = 0; k < 4; ++k) {
    _mm256_storeu_ps(reinterpret_cast<float*>(b + k * b_step),
                     _mm256_permute2f128_ps(u[k], u[k + 4], 0x20));
    _mm256_storeu_ps(reinterpret_cast<float*>(b + (k + 4) * b_step),
                     _mm256_permute2f128_ps(u[k], u[k + 4], 0x31));
  }
}

// 16 x 16 tiles, so that each side touches whole 64-byte lines: the two blocks that fill the
// same 8 lines of b go one after the other.
INFINIOP_CPU_TARGET_AVX2 void Tile16x16(const char* a, ptrdiff_t a_step, char* b,
                                        ptrdiff_t b_step) {
  Block8x8(a, a_step, b, b_step);
  Block8x8(a + 8 * a_step, a_step, b + 32, b_step);
  Block8x8(a + 32, a_step, b + 8 * b_step, b_step);
  Block8x8(a + 8 * a_step + 32, a_step, b + 8 * b_step + 32, b_step);
}

// The 16 x 16 tile at a transposed into b in AVX-512 registers: each of a's rows and b's rows is
// one 64-byte load or store, so no line is read twice, whatever cache set the rows share. After two
// rounds of interleaving, u[4k + m] holds in 128-bit lane l the elements of a's rows 4k to 4k + 3
// in column 4l + m; two rounds of lane shuffles gather each column.
INFINIOP_CPU_BEGIN_AVX512_INTRINSICS

template <bool kStream>
INFINIOP_CPU_TARGET_AVX512 inline void StoreLine(char* line, __m512 value) {
  if (kStream) {
    _mm512_stream_ps(reinterpret_cast<float*>(line), value);
  } else {
    _mm512_storeu_ps(reinterpret_cast<float*>(line), value);
  }
}

// kStream: b's lines are written with non-temporal stores, which need b 64-byte aligned.
template <bool kStream>
INFINIOP_CPU_TARGET_AVX512 void Tile16x16Avx512(const char* a, ptrdiff_t a_step, char* b,
                                                ptrdiff_t b_step) {
  __m512 r[16];
  for (int k = 0; k < 16; ++k) {
    r[k] = _mm512_loadu_ps(reinterpret_cast<const float*>(a + k * a_step));
  }
  __m512 t[16];
  for (int k = 0; k < 16; k += 2) {
    t[k] = _mm512_unpacklo_ps(r[k], r[k + 1]);
    t[k + 1] = _mm512_unpackhi_ps(r[k], r[k + 1]);
  }
  __m512 u[16];
  for (int k = 0; k < 16; k += 4) {
    const __m512d t0 = _mm512_castps_pd(t[k]), t1 = _mm512_castps_pd(t[k + 1]);
    const __m512d t2 = _mm512_castps_pd(t[k + 2]), t3 = _mm512_castps_pd(t[k + 3]);
    u[k] = _mm512_castpd_ps(_mm512_unpacklo_pd(t0, t2));
    u[k + 1] = _mm512_castpd_ps(_mm512_unpackhi_pd(t0, t2));
    u[k + 2] = _mm512_castpd_ps(_mm512_unpacklo_pd(t1, t3));
    u[k + 3] = _mm512_castpd_ps(_mm512_unpackhi_pd(t1, t3));
  }
  for (int m = 0; m < 4; ++m) {
    const __m512 low_v = _mm512_shuffle_f32x4(u[m], u[4 + m], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 low_w = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], _MM_SHUFFLE(1, 0, 1, 0));
    const __m512 high_v = _mm512_shuffle_f32x4(u[m], u[4 + m], _MM_SHUFFLE(3, 2, 3, 2));
    const __m512 high_w = _mm512_shuffle_f32x4(u[8 + m], u[12 + m], _MM_SHUFFLE(3, 2, 3, 2));
    StoreLine<kStream>(b + m * b_step, _mm512_shuffle_f32x4(low_v, low_w, _MM_SHUFFLE(2, 0, 2, 0)));
    StoreLine<kStream>(b + (4 + m) * b_step,
                       _mm512_shuffle_f32x4(low_v, low_w, _MM_SHUFFLE(3, 1, 3, 1)));
    StoreLine<kStream>(b + (8 + m) * b_step,
                       _mm512_shuffle_f32x4(high_v, high_w, _MM_SHUFFLE(2, 0, 2, 0)));
    StoreLine<kStream>(b + (12 + m) * b_step,
                       _mm512_shuffle_f32x4(high_v, high_w, _MM_SHUFFLE(3, 1, 3, 1)));
  }
}

INFINIOP_CPU_END_AVX512_INTRINSICS

using TileFn = void (*)(const char* a, ptrdiff_t a_step, char* b, ptrdiff_t b_step);

// Rows first_row to end_row - 1 of a in 16 x 16 tiles, the edges one element at a time. Columns
// of a go in chunks of kChunk: the tiles of one chunk touch kChunk rows of b and the band's rows
// of a, few enough pages for the TLB to keep (a band's whole sweep of b, thousands of rows, missed
// it at every tile).
template <TileFn kTile>
[[gnu::always_inline]] inline void TileRows(const Transpose32& t, size_t first_row,
                                            size_t end_row) {
  const ptrdiff_t a_step = t.a_stride * 4, b_step = t.b_stride * 4;
  const size_t cols16 = t.a_cols / 16 * 16;
  const size_t rows16 = first_row + (end_row - first_row) / 16 * 16;
  for (size_t x0 = 0; x0 < cols16; x0 += kChunk) {
    const size_t x_end = std::min(cols16, x0 + kChunk);
    for (size_t y = first_row; y < rows16; y += 16) {
      const char* a = t.a + static_cast<ptrdiff_t>(y) * a_step;
      char* b = t.b + static_cast<ptrdiff_t>(y) * 4;
      for (size_t x = x0; x < x_end; x += 16) {
        kTile(a + static_cast<ptrdiff_t>(x) * 4, a_step, b + static_cast<ptrdiff_t>(x) * b_step,
              b_step);
      }
    }
  }
  ScalarRange(t, first_row, rows16, cols16, t.a_cols);
  ScalarRange(t, rows16, end_row, 0, t.a_cols);
}

INFINIOP_CPU_TARGET_AVX2 void TransposeRowsAvx2(const Transpose32& t, size_t first_row,
                                                size_t end_row) {
  TileRows<&Tile16x16>(t, first_row, end_row);
}

// Non-temporal stores where asked and b's tiles are 64-byte aligned; they are fenced before the
// band counts as done (a thread that sees it done must see the elements).
INFINIOP_CPU_TARGET_AVX512 void TransposeRowsAvx512(const Transpose32& t, size_t first_row,
                                                    size_t end_row) {
  const bool aligned =
      reinterpret_cast<uintptr_t>(t.b) % 64 == 0 && t.b_stride * 4 % 64 == 0 && first_row % 16 == 0;
  if (!t.streaming_stores || !aligned) {
    TileRows<&Tile16x16Avx512<false>>(t, first_row, end_row);
    return;
  }
  TileRows<&Tile16x16Avx512<true>>(t, first_row, end_row);
  _mm_sfence();
}

}  // namespace

#endif

void TransposeRows32(const Transpose32& t, size_t first_row, size_t end_row) {
  RunForIsa(INFINIOP_CPU_X86_ONLY(&TransposeRowsAvx512), INFINIOP_CPU_X86_ONLY(&TransposeRowsAvx2),
            &TransposeRowsScalar, t, first_row, end_row);
}

}  // namespace infinirt::infiniop_cpu
