// The index arithmetic the CUDA family's kernels share with its plans (kernels/index_math.h),
// checked on the CPU where no kernel can run: each line of the LineLayout a plan makes (Softmax's,
// LayerNorm's, Embedding's) walks exactly the elements a naive walk over the tensor's coordinates
// finds, in the same order, for contiguous, transposed, broadcast and mergeable layouts; AWQ's
// nibble order; the attention plans' geometry within a block's limits (threads, shared memory,
// head size) and their refusals.
#include <gtest/gtest.h>

#include <cmath>
#include <cstdint>
#include <cstring>
#include <string>
#include <vector>

#include "family_kernel_abi.h"
#include "family_plans.h"
#include "kernels/index_math.h"
#include "operator_probes.h"

namespace infiniop_test {
namespace {

using infinirt::infiniop_cuda_family::AttentionSharedBytes;
using infinirt::infiniop_cuda_family::AwqShift;
using infinirt::infiniop_cuda_family::DenseAttentionArgs;
using infinirt::infiniop_cuda_family::DeviceLimits;
using infinirt::infiniop_cuda_family::EmbeddingArgs;
using infinirt::infiniop_cuda_family::KernelPlan;
using infinirt::infiniop_cuda_family::kMaxAttentionHeadSize;
using infinirt::infiniop_cuda_family::LayerNormArgs;
using infinirt::infiniop_cuda_family::LineArgs;
using infinirt::infiniop_cuda_family::LineLayout;
using infinirt::infiniop_cuda_family::LineOffset;
using infinirt::infiniop_cuda_family::MakeKernelPlan;
using infinirt::infiniop_cuda_family::PagedAttentionArgs;

ProbeTensor Strided(infiniDtype_t dtype, std::vector<size_t> shape,
                    std::vector<ptrdiff_t> strides) {
  return {dtype, std::move(shape), std::move(strides)};
}

// The plan of `op` on `tensors`; its status.
infiniStatus_t Plan(infiniopOperator_t op, const std::vector<ProbeTensor>& tensors,
                    const infiniopBackendCreateParams& params, KernelPlan* plan) {
  std::vector<infiniopBackendTensor> views;
  for (const ProbeTensor& t : tensors) {
    views.push_back({t.dtype, t.shape.size(), t.shape.data(), t.strides.data()});
  }
  return MakeKernelPlan(op, views.data(), views.size(), params, DeviceLimits{}, plan);
}

// The launch's argument struct.
template <class Args>
Args ArgsOf(const KernelPlan& plan, size_t launch = 0) {
  Args args;
  EXPECT_LT(launch, plan.launches.size());
  EXPECT_EQ(plan.launches[launch].args.size(), sizeof(Args));
  std::memcpy(&args, plan.launches[launch].args.data(), sizeof(Args));
  return args;
}

// The element offset in `t` of the element at `coordinates` of `shape` (t has `shape`'s dimensions
// but `skip`, when skip < shape.size()).
ptrdiff_t NaiveOffset(const ProbeTensor& t, const std::vector<size_t>& coordinates,
                      size_t skip = SIZE_MAX) {
  ptrdiff_t offset = 0;
  for (size_t d = 0, own = 0; d < coordinates.size(); ++d) {
    if (d == skip) continue;
    offset += static_cast<ptrdiff_t>(coordinates[d]) * t.strides[own++];
  }
  return offset;
}

// Checks that line l, element j of `lines` is, in each tensor, the element a row-major walk over
// `shape`'s dimensions but `axis` finds as its l-th, at coordinate j along the axis. tensors[t]
// lacks the axis where has_axis[t] is false (its offsets then ignore j).
void ExpectLinesWalkTheTensors(const LineLayout& lines, const std::vector<size_t>& shape,
                               size_t axis, const std::vector<ProbeTensor>& tensors,
                               const std::vector<bool>& has_axis) {
  size_t outer = 1;
  for (size_t d = 0; d < shape.size(); ++d) outer *= d == axis ? 1 : shape[d];
  ASSERT_EQ(lines.count, outer);
  ASSERT_EQ(lines.length, shape[axis]);
  ASSERT_LE(lines.outer_ndim, infinirt::infiniop_cuda_family::kMaxDims);
  std::vector<size_t> coordinates(shape.size(), 0);
  for (uint64_t line = 0; line < lines.count; ++line) {
    for (size_t j = 0; j < shape[axis]; ++j) {
      coordinates[axis] = j;
      for (size_t t = 0; t < tensors.size(); ++t) {
        const ptrdiff_t expected = has_axis[t] ? NaiveOffset(tensors[t], coordinates)
                                               : NaiveOffset(tensors[t], coordinates, axis);
        const int64_t found =
            LineOffset(lines, line, static_cast<int>(t)) + static_cast<int64_t>(j) * lines.steps[t];
        ASSERT_EQ(found, expected) << "line " << line << ", element " << j << ", tensor " << t;
      }
    }
    // The next outer coordinates, row-major, the axis skipped.
    for (size_t d = shape.size(); d-- > 0;) {
      if (d == axis) continue;
      if (++coordinates[d] < shape[d]) break;
      coordinates[d] = 0;
    }
  }
}

TEST(FamilyIndexMath, SoftmaxLinesWalkEveryLayoutAlongEveryAxis) {
  struct Case {
    const char* name;
    ProbeTensor y, x;
  };
  const infiniDtype_t f = INFINI_DTYPE_F32;
  const std::vector<Case> cases = {
      {"contiguous", Contiguous(f, {3, 5, 7}), Contiguous(f, {3, 5, 7})},
      {"strided x", Contiguous(f, {3, 5, 7}), Strided(f, {3, 5, 7}, {1, 42, 6})},
      {"transposed y", Strided(f, {3, 5, 7}, {1, 3, 15}), Contiguous(f, {3, 5, 7})},
      {"broadcast x", Contiguous(f, {4, 9}), Strided(f, {4, 9}, {0, 1})},
      {"dimensions of one element", Contiguous(f, {2, 1, 3, 1, 4}),
       Strided(f, {2, 1, 3, 1, 4}, {100, 7, 20, 3, 2})},
      {"mergeable outer dimensions", Contiguous(f, {2, 3, 4, 5}), Contiguous(f, {2, 3, 4, 5})},
      {"negative strides", Contiguous(f, {3, 4}), Strided(f, {3, 4}, {-4, -1})},
      {"1-D", Contiguous(f, {11}), Strided(f, {11}, {3})},
  };
  for (const Case& c : cases) {
    for (int axis = 0; axis < static_cast<int>(c.x.shape.size()); ++axis) {
      SCOPED_TRACE(std::string(c.name) + ", axis " + std::to_string(axis));
      infiniopBackendCreateParams params{};
      params.axis = axis;
      KernelPlan plan;
      ASSERT_EQ(Plan(INFINIOP_OPERATOR_Softmax, {c.y, c.x}, params, &plan), INFINI_STATUS_SUCCESS);
      const LineArgs args = ArgsOf<LineArgs>(plan);
      ExpectLinesWalkTheTensors(args.lines, c.x.shape, static_cast<size_t>(axis), {c.y, c.x},
                                {true, true});
    }
  }
}

TEST(FamilyIndexMath, MergedOuterDimensionsAreFewer) {
  KernelPlan plan;
  infiniopBackendCreateParams params{};
  params.axis = -1;
  const ProbeTensor t = Contiguous(INFINI_DTYPE_F16, {2, 3, 4, 5});
  ASSERT_EQ(Plan(INFINIOP_OPERATOR_Softmax, {t, t}, params, &plan), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(ArgsOf<LineArgs>(plan).lines.outer_ndim, 1);  // 2 x 3 x 4 rows of 5
  params.axis = 1;
  ASSERT_EQ(Plan(INFINIOP_OPERATOR_Softmax, {t, t}, params, &plan), INFINI_STATUS_SUCCESS);
  EXPECT_EQ(ArgsOf<LineArgs>(plan).lines.outer_ndim, 2);  // 2, then 4 x 5
}

TEST(FamilyIndexMath, LayerNormDeviationHasNoAxis) {
  const infiniDtype_t f = INFINI_DTYPE_BF16;
  const ProbeTensor input = Strided(f, {4, 3, 6}, {1, 4 * 6, 4}), output = Contiguous(f, {4, 3, 6}),
                    standardized = Strided(f, {4, 3, 6}, {18 * 2, 6 * 2, 2}),
                    deviation = Strided(f, {4, 3}, {1, 4}), weight = Contiguous(f, {6}),
                    bias = Contiguous(f, {6});
  KernelPlan plan;
  ASSERT_EQ(
      Plan(INFINIOP_OPERATOR_LayerNorm, {output, standardized, deviation, input, weight, bias},
           infiniopBackendCreateParams{}, &plan),
      INFINI_STATUS_SUCCESS);
  const LayerNormArgs args = ArgsOf<LayerNormArgs>(plan);
  ExpectLinesWalkTheTensors(args.lines, input.shape, 2, {output, standardized, deviation, input},
                            {true, true, false, true});
  EXPECT_EQ(args.has_bias, 1);
  // A 1-D input: one line, a 0-D deviation.
  const ProbeTensor line = Contiguous(f, {6}), scalar = Contiguous(f, {});
  ASSERT_EQ(Plan(INFINIOP_OPERATOR_LayerNorm, {line, line, scalar, line, weight, bias},
                 infiniopBackendCreateParams{}, &plan),
            INFINI_STATUS_SUCCESS);
  ExpectLinesWalkTheTensors(ArgsOf<LayerNormArgs>(plan).lines, line.shape, 0,
                            {line, line, scalar, line}, {true, true, false, true});
}

TEST(FamilyIndexMath, EmbeddingIndicesFollowTheOutputRows) {
  const ProbeTensor output = Strided(INFINI_DTYPE_F16, {2, 3, 13}, {13, 26, 1}),
                    input = Strided(INFINI_DTYPE_I32, {2, 3}, {1, 2}),
                    weight = Strided(INFINI_DTYPE_F16, {11, 13}, {1, 11});
  KernelPlan plan;
  ASSERT_EQ(Plan(INFINIOP_OPERATOR_Embedding, {output, input, weight},
                 infiniopBackendCreateParams{}, &plan),
            INFINI_STATUS_SUCCESS);
  const EmbeddingArgs args = ArgsOf<EmbeddingArgs>(plan);
  ExpectLinesWalkTheTensors(args.lines, output.shape, 2, {output, input}, {true, false});
  EXPECT_EQ(args.vocab, 11u);
  EXPECT_EQ(args.weight_strides[1], 11);
  EXPECT_EQ(args.index_dtype, INFINI_DTYPE_I32);
}

TEST(FamilyIndexMath, AwqShiftIsTheInterleavedNibbleOrder) {
  const int nibble[8] = {0, 4, 1, 5, 2, 6, 3, 7};
  for (int j = 0; j < 8; ++j) EXPECT_EQ(AwqShift(j), 4 * nibble[j]) << j;
}

// The paged and dense attention plans' blocks: at most 16 warps, a warp per (token, head) row, the
// kv head's whole group covered by its head chunks, the shared memory within 48 KiB, for head sizes
// up to kMaxAttentionHeadSize and groups from 1 to 64; a larger head refused.
TEST(FamilyIndexMath, AttentionBlocksFitTheirLimits) {
  for (infiniDtype_t dtype : {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32}) {
    const size_t element = dtype == INFINI_DTYPE_F32 ? 4 : 2;
    for (size_t head_size : {1, 8, 64, 80, 128, 256}) {
      for (size_t group : {1, 3, 8, 16, 64}) {
        SCOPED_TRACE("dtype " + std::to_string(dtype) + ", head_size " + std::to_string(head_size) +
                     ", group " + std::to_string(group));
        const size_t kv_heads = 2, heads = kv_heads * group;
        infiniopBackendCreateParams params{};
        params.scale = 0.5f;
        KernelPlan plan;
        ASSERT_EQ(Plan(INFINIOP_OPERATOR_FlashAttention,
                       {Contiguous(dtype, {2, heads, 37, head_size}),
                        Contiguous(dtype, {2, heads, 37, head_size}),
                        Contiguous(dtype, {2, kv_heads, 50, head_size}),
                        Contiguous(dtype, {2, kv_heads, 50, head_size}),
                        Contiguous(INFINI_DTYPE_I64, {2})},
                       params, &plan),
                  INFINI_STATUS_SUCCESS);
        const DenseAttentionArgs dense = ArgsOf<DenseAttentionArgs>(plan);
        const auto& tiling = dense.tiling;
        const unsigned warps = plan.launches[0].block[0] / 32;
        EXPECT_EQ(warps, tiling.tokens_per_block * tiling.heads_per_block);
        EXPECT_LE(warps, 16u);
        EXPECT_GE(uint64_t{tiling.head_chunks} * tiling.heads_per_block, group);
        EXPECT_LT(uint64_t{tiling.head_chunks - 1} * tiling.heads_per_block, group);
        EXPECT_EQ(plan.launches[0].grid[1], kv_heads * tiling.head_chunks);
        EXPECT_EQ(plan.launches[0].shared_bytes,
                  AttentionSharedBytes(warps, tiling.tile_keys, head_size, element));
        EXPECT_LE(plan.launches[0].shared_bytes, 48u * 1024);
        EXPECT_EQ(dense.token_tiles,
                  2 * ((37 + tiling.tokens_per_block - 1) / tiling.tokens_per_block));
        EXPECT_EQ(tiling.scale, 0.5f);
        // Decode: one token (sequence) a block.
        ASSERT_EQ(Plan(INFINIOP_OPERATOR_PagedAttention,
                       {Contiguous(dtype, {5, heads, head_size}),
                        Contiguous(dtype, {5, heads, head_size}),
                        Contiguous(dtype, {9, kv_heads, 16, head_size}),
                        Contiguous(dtype, {9, kv_heads, 16, head_size}),
                        Contiguous(INFINI_DTYPE_I64, {5, 3}), Contiguous(INFINI_DTYPE_I32, {5}),
                        ProbeTensor{INFINI_DTYPE_INVALID, {}, {}}},
                       params, &plan),
                  INFINI_STATUS_SUCCESS);
        const PagedAttentionArgs paged = ArgsOf<PagedAttentionArgs>(plan);
        EXPECT_EQ(paged.tiling.tokens_per_block, 1u);
        EXPECT_EQ(paged.token_tiles, 5u);
        EXPECT_EQ(paged.alibi_buffer, -1);
        EXPECT_EQ(paged.cum_buffer, -1);
        EXPECT_LE(plan.launches[0].shared_bytes, 48u * 1024);
      }
    }
  }
  const size_t too_large = kMaxAttentionHeadSize + 8;
  KernelPlan plan;
  EXPECT_EQ(
      Plan(INFINIOP_OPERATOR_FlashAttention,
           {Contiguous(INFINI_DTYPE_F16, {1, 2, 3, too_large}),
            Contiguous(INFINI_DTYPE_F16, {1, 2, 3, too_large}),
            Contiguous(INFINI_DTYPE_F16, {1, 2, 5, too_large}),
            Contiguous(INFINI_DTYPE_F16, {1, 2, 5, too_large}), Contiguous(INFINI_DTYPE_I64, {1})},
           infiniopBackendCreateParams{}, &plan),
      INFINI_STATUS_NOT_IMPLEMENTED);
}

// Attention: the cache write (at pos, batch 1), then the dense attention of the caches.
TEST(FamilyIndexMath, AttentionWritesTheCachesThenAttends) {
  const infiniDtype_t f = INFINI_DTYPE_F16;
  infiniopBackendCreateParams params{};
  params.pos = 5;
  KernelPlan plan;
  ASSERT_EQ(Plan(INFINIOP_OPERATOR_Attention,
                 {Contiguous(f, {4, 6, 8}), Contiguous(f, {6, 4, 8}), Contiguous(f, {2, 4, 8}),
                  Contiguous(f, {2, 4, 8}), Contiguous(f, {2, 12, 8}), Contiguous(f, {2, 12, 8})},
                 params, &plan),
            INFINI_STATUS_SUCCESS);
  ASSERT_EQ(plan.launches.size(), 2u);
  EXPECT_STREQ(plan.launches[0].kernel, "infiniop_kv_caching_2");
  EXPECT_STREQ(plan.launches[1].kernel, "infiniop_dense_attention_f16");
  const DenseAttentionArgs attend = ArgsOf<DenseAttentionArgs>(plan, 1);
  EXPECT_EQ(attend.fixed_total, 9u);
  EXPECT_EQ(attend.total_buffer, -1);
  EXPECT_EQ(attend.causal, 1);
  EXPECT_EQ(attend.kv_len, 12u);
  EXPECT_EQ(attend.out_strides[2], 6 * 8);  // out [seq, heads, d]: a token is a row of heads
  EXPECT_EQ(attend.q_strides[2], 8);        // q [heads, seq, d]
  EXPECT_FLOAT_EQ(attend.tiling.scale, 1.0f / std::sqrt(8.0f));
}

}  // namespace
}  // namespace infiniop_test
