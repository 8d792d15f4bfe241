// The quantized-weight operators' kernel bodies: DequantizeAWQ (a thread per pack of eight
// outputs) and I8Gemm (32 x 32 output tiles, int8 products summed in int32 by __dp4a). Included by
// infiniop_kernels.cu after its element types and helpers; the arguments are family_kernel_abi.h's,
// made by family_plans_model.cc. The semantics are the CPU's (cpu_quantized.cc).
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_QUANTIZED_KERNELS_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_QUANTIZED_KERNELS_H_

#include "kernels/index_math.h"

namespace infinirt::infiniop_cuda_family::kernels {

// --- DequantizeAWQ -----------------------------------------------------------------------------

// out[k, 8 p + j] = (q_j - z_j) * scales[g, 8 p + j] for the pack p of row k (g = k / group), q_j
// and z_j the nibbles of logical column j (AwqShift) of qweight[k, p] and zeros[g, p]; the
// difference in float times the scale, rounded once.
template <class Type>
__device__ void DequantizeAWQ(const DequantizeAWQArgs& args) {
  using S = typename Type::Storage;
  S* out = static_cast<S*>(args.call.buffers[0]);
  const int32_t* qweight = static_cast<const int32_t*>(args.call.buffers[1]);
  const S* scales = static_cast<const S*>(args.call.buffers[2]);
  const int32_t* zeros = static_cast<const int32_t*>(args.call.buffers[3]);
  for (uint64_t p = FirstIndex(); p < args.packs; p += GridStride()) {
    const int64_t k = static_cast<int64_t>(p / args.pack_columns);
    const int64_t pack = static_cast<int64_t>(p % args.pack_columns);
    const int64_t g = k / static_cast<int64_t>(args.group);
    const uint32_t q = static_cast<uint32_t>(
        qweight[k * args.qweight_strides[0] + pack * args.qweight_strides[1]]);
    const uint32_t z =
        static_cast<uint32_t>(zeros[g * args.zeros_strides[0] + pack * args.zeros_strides[1]]);
#pragma unroll
    for (int j = 0; j < 8; ++j) {
      const int shift = AwqShift(j);
      const float difference =
          static_cast<float>((q >> shift) & 0xFu) - static_cast<float>((z >> shift) & 0xFu);
      const int64_t n = pack * 8 + j;
      const float scale = static_cast<float>(
          Type::Load(scales[g * args.scales_strides[0] + n * args.scales_strides[1]]));
      out[k * args.out_strides[0] + n * args.out_strides[1]] = Type::Store(Mul(difference, scale));
    }
  }
}

// --- I8Gemm ------------------------------------------------------------------------------------

constexpr int kI8Tile = 32;             // outputs per block: kI8Tile x kI8Tile
constexpr int kI8Depth = 32;            // K per step, staged in shared memory
constexpr int kI8Pitch = kI8Depth + 4;  // bytes between the rows of a tile: 9 words, so that the
                                        // lanes' rows fall in different banks
constexpr int kI8Threads = 256;         // the plan's block: 8 warps
constexpr int kI8RowsPerThread = kI8Tile * kI8Tile / kI8Threads;  // 4

// Stages elements [first, first + kI8Tile) x [k0, k0 + kI8Depth) of a matrix, rows along `rows`
// and K along `depth` (element (r, k) at r * row_stride + k * depth_stride), into tile[r][k]; 0
// past the matrix. Consecutive threads take consecutive k where K is the unit stride, else
// consecutive r, so that they read neighbouring bytes.
__device__ inline void StageI8Tile(const int8_t* matrix, uint64_t rows, uint64_t depth,
                                   int64_t row_stride, int64_t depth_stride, uint64_t first,
                                   uint64_t k0, int8_t (*tile)[kI8Pitch]) {
  const bool depth_unit = depth_stride == 1;
  for (int e = threadIdx.x; e < kI8Tile * kI8Depth; e += blockDim.x) {
    const int r = depth_unit ? e / kI8Depth : e % kI8Tile;
    const int k = depth_unit ? e % kI8Depth : e / kI8Tile;
    const uint64_t row = first + r;
    const uint64_t kk = k0 + k;
    tile[r][k] = row < rows && kk < depth ? matrix[static_cast<int64_t>(row) * row_stride +
                                                   static_cast<int64_t>(kk) * depth_stride]
                                          : int8_t{0};
  }
}

// out[m, n] = (sum_k x[m, k] * w[k, n] in int32) * x_scale[m] * w_scale[n] + bias[n], each of the
// 256 threads computing 4 outputs of the block's tile: rows ty + 8 i, column tx.
template <class Type>
__device__ void I8Gemm(const I8GemmArgs& args) {
  using S = typename Type::Storage;
  __shared__ __align__(4) int8_t x_tile[kI8Tile][kI8Pitch];  // [row of out][k]
  __shared__ __align__(4) int8_t w_tile[kI8Tile][kI8Pitch];  // [column of out][k]
  const int8_t* x = static_cast<const int8_t*>(args.call.buffers[2]);
  const int8_t* w = static_cast<const int8_t*>(args.call.buffers[4]);
  const float* x_scale = static_cast<const float*>(args.call.buffers[3]);
  const float* w_scale = static_cast<const float*>(args.call.buffers[5]);
  const S* bias = args.has_bias ? static_cast<const S*>(args.call.buffers[1]) : nullptr;
  S* out = static_cast<S*>(args.call.buffers[0]);
  const int tx = threadIdx.x % kWarpSize;
  const int ty = threadIdx.x / kWarpSize;  // the same in a warp: its x_tile reads broadcast
  for (uint64_t mt = blockIdx.y; mt < args.m_tiles; mt += gridDim.y) {
    for (uint64_t nt = blockIdx.x; nt < args.n_tiles; nt += gridDim.x) {
      const uint64_t m0 = mt * kI8Tile;
      const uint64_t n0 = nt * kI8Tile;
      int32_t sums[kI8RowsPerThread] = {};
      for (uint64_t k0 = 0; k0 < args.k; k0 += kI8Depth) {
        __syncthreads();  // the previous step's tiles are consumed
        StageI8Tile(x, args.m, args.k, args.x_strides[0], args.x_strides[1], m0, k0, x_tile);
        // The weights [K, N] as rows of out's columns: (n, k) at n * w_strides[1] + k *
        // w_strides[0].
        StageI8Tile(w, args.n, args.k, args.w_strides[1], args.w_strides[0], n0, k0, w_tile);
        __syncthreads();
#pragma unroll
        for (int word = 0; word < kI8Depth / 4; ++word) {
          const int b = *reinterpret_cast<const int*>(&w_tile[tx][word * 4]);
#pragma unroll
          for (int i = 0; i < kI8RowsPerThread; ++i) {
            const int a = *reinterpret_cast<const int*>(&x_tile[ty + 8 * i][word * 4]);
            sums[i] = __dp4a(a, b, sums[i]);
          }
        }
      }
      const uint64_t n = n0 + tx;
#pragma unroll
      for (int i = 0; i < kI8RowsPerThread; ++i) {
        const uint64_t m = m0 + ty + 8 * i;
        if (m >= args.m || n >= args.n) continue;
        float value = Mul(Mul(static_cast<float>(sums[i]),
                              x_scale[static_cast<int64_t>(m) * args.x_scale_stride]),
                          w_scale[static_cast<int64_t>(n) * args.w_scale_stride]);
        if (bias != nullptr) {
          value += static_cast<float>(Type::Load(bias[static_cast<int64_t>(n) * args.bias_stride]));
        }
        out[static_cast<int64_t>(m) * args.out_strides[0] +
            static_cast<int64_t>(n) * args.out_strides[1]] = Type::Store(value);
      }
    }
  }
}

}  // namespace infinirt::infiniop_cuda_family::kernels

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_QUANTIZED_KERNELS_H_
