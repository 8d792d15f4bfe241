// The index arithmetic the CUDA family's kernels share with its plans (kernels/index_math.h),
// checked on the CPU where no kernel can run: each line of the LineLayout a plan makes (Softmax's,
// LayerNorm's, Embedding's) walks exactly the elements a naive walk over the tensor's coordinates
// finds, in the same order, for contiguous, transposed, broadcast and mergeable layouts; AWQ's
// nibble order; the attention plans' geometry within a block's limits (threads, shared memory,
// head size) and their refusals; the selections' order keys, their radix selection and bitonic
// sort run step by step on the CPU against a plain sort, and the TopK and router plans' choice of
// kernel, sort space and workspace, and their check of a call's topk.
#include <gtest/gtest.h>

#include <algorithm>
#include <cmath>
#include <cstdint>
#include <cstring>
#include <limits>
#include <numeric>
#include <random>
#include <string>
#include <utility>
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
using infinirt::infiniop_cuda_family::RouterArgs;
using infinirt::infiniop_cuda_family::TopKArgs;
namespace cf = infinirt::infiniop_cuda_family;

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

// --- Selections ---------------------------------------------------------------------------------

// The CPU's order (cpu_routing.cc): larger first (smaller first), NaN above every number, ties by
// index.
bool CpuBefore(double a, size_t ia, double b, size_t ib, bool largest) {
  const bool a_nan = std::isnan(a), b_nan = std::isnan(b);
  if (a_nan != b_nan) return largest ? a_nan : b_nan;
  if (!a_nan && a != b) return largest ? a > b : a < b;
  return ia < ib;
}

uint64_t F32Key(float value, bool largest) {
  uint32_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return cf::SelectionKey(bits, 0x80000000u, 0x7f800000u, largest);
}

uint64_t F64Key(double value, bool largest) {
  uint64_t bits;
  std::memcpy(&bits, &value, sizeof bits);
  return cf::SelectionKey(bits, 0x8000000000000000ull, 0x7ff0000000000000ull, largest);
}

// Whether the keys (with the indices as tie-break) order every pair as the CPU does.
template <class Key>
void ExpectKeysOrderAsTheCpu(const std::vector<double>& values, Key key, const char* what) {
  for (bool largest : {true, false}) {
    for (size_t i = 0; i < values.size(); ++i) {
      for (size_t j = 0; j < values.size(); ++j) {
        const uint64_t ki = key(values[i], largest), kj = key(values[j], largest);
        const bool keys_before = ki < kj || (ki == kj && i < j);
        EXPECT_EQ(keys_before, CpuBefore(values[i], i, values[j], j, largest))
            << what << ": " << values[i] << " (" << i << ") before " << values[j] << " (" << j
            << "), largest " << largest;
      }
    }
  }
}

std::vector<double> AwkwardValues() {
  const double inf = std::numeric_limits<double>::infinity();
  const double nan = std::numeric_limits<double>::quiet_NaN();
  return {0.0,   -0.0,   1.0,  -1.0,  2.5, -2.5, inf, -inf, nan,   -nan,
          1e-40, -1e-40, 3e38, -3e38, 0.5, 1.0,  nan, 0.0,  65504, -65504};
}

TEST(FamilyIndexMath, SelectionKeysOrderAsTheCpu) {
  const std::vector<double> values = AwkwardValues();
  ExpectKeysOrderAsTheCpu(
      values, [](double v, bool largest) { return F32Key(static_cast<float>(v), largest); }, "F32");
  std::vector<double> doubles = values;
  doubles.push_back(1e-310);  // a double's denormal
  doubles.push_back(1.0 + 1e-15);
  ExpectKeysOrderAsTheCpu(doubles, F64Key, "F64");
  // NaNs of other signs and payloads are one NaN; a key stays within the storage's bits.
  uint32_t payload_nan = 0xffc01234u;
  float other_nan;
  std::memcpy(&other_nan, &payload_nan, sizeof other_nan);
  EXPECT_EQ(F32Key(other_nan, true), 0u);
  EXPECT_EQ(F32Key(other_nan, false), 0xffffffffu);
  EXPECT_EQ(F32Key(-0.0f, true), F32Key(0.0f, true));
  EXPECT_GT(F32Key(std::numeric_limits<float>::infinity(), true), 0u);
  EXPECT_LT(F32Key(std::numeric_limits<float>::infinity(), false), 0xffffffffu);
  // 16-bit storage: F16 bits and their values; BF16 as a float's top half.
  const std::vector<std::pair<uint16_t, double>> halves = {
      {0x3c00, 1.0}, {0xbc00, -1.0},    {0x7c00, INFINITY}, {0xfc00, -INFINITY}, {0x7e00, NAN},
      {0xfe01, NAN}, {0x0001, 5.96e-8}, {0x8001, -5.96e-8}, {0x8000, -0.0},      {0x0000, 0.0},
      {0x4000, 2.0}, {0x3800, 0.5},     {0x7bff, 65504.0},  {0x3c01, 1.000977}};
  for (bool largest : {true, false}) {
    for (size_t i = 0; i < halves.size(); ++i) {
      for (size_t j = 0; j < halves.size(); ++j) {
        const uint64_t ki = cf::SelectionKey(halves[i].first, 0x8000u, 0x7c00u, largest);
        const uint64_t kj = cf::SelectionKey(halves[j].first, 0x8000u, 0x7c00u, largest);
        EXPECT_LE(ki, 0xffffu);
        EXPECT_EQ(ki < kj || (ki == kj && i < j),
                  CpuBefore(halves[i].second, i, halves[j].second, j, largest))
            << "F16 " << i << ", " << j;
      }
    }
  }
  ExpectKeysOrderAsTheCpu(
      values,
      [](double v, bool largest) {
        const float f = static_cast<float>(v);
        uint32_t bits;
        std::memcpy(&bits, &f, sizeof bits);
        const uint32_t top = bits & 0xffff0000u;  // the value a BF16 holds
        float stored;
        std::memcpy(&stored, &top, sizeof stored);
        EXPECT_TRUE(std::isnan(stored) == std::isnan(f));
        return cf::SelectionKey(top >> 16, 0x8000u, 0x7f80u, largest);
      },
      "BF16");
}

TEST(FamilyIndexMath, SelectionSizes) {
  EXPECT_EQ(cf::NextPowerOfTwo(0), 1u);
  EXPECT_EQ(cf::NextPowerOfTwo(1), 1u);
  EXPECT_EQ(cf::NextPowerOfTwo(2), 2u);
  EXPECT_EQ(cf::NextPowerOfTwo(3), 4u);
  EXPECT_EQ(cf::NextPowerOfTwo(2048), 2048u);
  EXPECT_EQ(cf::NextPowerOfTwo(2049), 4096u);
  EXPECT_EQ(cf::NextPowerOfTwo((uint64_t{1} << 63) - 1), uint64_t{1} << 63);
  EXPECT_EQ(cf::SelectionIndexBits(1), 8);
  EXPECT_EQ(cf::SelectionIndexBits(256), 8);
  EXPECT_EQ(cf::SelectionIndexBits(257), 16);
  EXPECT_EQ(cf::SelectionIndexBits(65536), 16);
  EXPECT_EQ(cf::SelectionIndexBits(65537), 24);
  EXPECT_EQ(cf::SelectionIndexBits(UINT64_MAX), 64);
  EXPECT_EQ(cf::SelectionSortCount(100, 5, 128), 100u);
  EXPECT_EQ(cf::SelectionSortCount(5000, 5, 2048), 5u);
}

// The kernels' selection, step by step on the CPU: RadixSelect's passes (a histogram of the
// candidates with the prefix, then ChooseSelectionDigit), the candidates InSelection collected,
// and BitonicSort's steps (each step's pairs are disjoint, so that running them one after another
// is the block's parallel step). The first k equal a plain sort's, for any k.
std::vector<size_t> SelectOnTheCpu(const std::vector<uint64_t>& keys, size_t k, int key_bits,
                                   size_t capacity) {
  const size_t n = keys.size();
  std::vector<std::pair<uint64_t, uint64_t>> entries;  // (key, index)
  if (n <= capacity) {
    for (size_t i = 0; i < n; ++i) entries.push_back({keys[i], i});
  } else {
    const int index_bits = cf::SelectionIndexBits(n);
    cf::SelectionPrefix p{{0, 0}, {0, 0}, k};
    bool done = false;
    for (int pass = 0; !done && pass < (key_bits + index_bits) / 8; ++pass) {
      int part, shift;
      cf::SelectionDigitPlace(pass, key_bits, index_bits, &part, &shift);
      unsigned long long histogram[cf::kSelectionDigits] = {};
      for (size_t i = 0; i < n; ++i) {
        if (cf::MatchesPrefix(p, keys[i], i)) {
          ++histogram[cf::SelectionDigit(keys[i], i, part, shift)];
        }
      }
      done = cf::ChooseSelectionDigit(histogram, part, shift, &p);
    }
    EXPECT_TRUE(done);
    for (size_t i = 0; i < n; ++i) {
      if (cf::InSelection(p, keys[i], i)) entries.push_back({keys[i], i});
    }
    EXPECT_EQ(entries.size(), k);
  }
  const uint64_t size = cf::NextPowerOfTwo(entries.size());
  entries.resize(size, {UINT64_MAX, UINT64_MAX});
  for (uint64_t span = 2; span <= size; span <<= 1) {
    for (uint64_t stride = span >> 1; stride > 0; stride >>= 1) {
      for (uint64_t i = 0; i < size / 2; ++i) {
        uint64_t lo, hi;
        bool ascending;
        cf::BitonicPair(i, stride, span, &lo, &hi, &ascending);
        if ((entries[hi] < entries[lo]) == ascending) std::swap(entries[lo], entries[hi]);
      }
    }
  }
  std::vector<size_t> first;
  for (size_t j = 0; j < std::min(k, entries.size()); ++j) first.push_back(entries[j].second);
  return first;
}

TEST(FamilyIndexMath, RadixSelectionAndBitonicSortGiveTheCpusFirstK) {
  std::mt19937 random(7);
  struct Case {
    size_t n, k, capacity;
    int distinct;  // values drawn from so many (ties), 0: any float
  };
  const Case cases[] = {{1, 1, 1, 0},        {7, 3, 8, 0},         {100, 100, 128, 0},
                        {3000, 1, 64, 0},    {3000, 64, 64, 0},    {3000, 50, 64, 0},
                        {3000, 3000, 64, 0}, {5000, 700, 1024, 3}, {70000, 9, 16, 2},
                        {600, 17, 32, 1},    {600, 17, 32, 40}};
  for (const Case& c : cases) {
    for (bool largest : {true, false}) {
      SCOPED_TRACE("n " + std::to_string(c.n) + ", k " + std::to_string(c.k) + ", distinct " +
                   std::to_string(c.distinct) + (largest ? ", largest" : ", smallest"));
      std::vector<double> values(c.n);
      std::normal_distribution<float> normal;
      std::uniform_int_distribution<int> pick(0, std::max(c.distinct, 1) - 1);
      for (size_t i = 0; i < c.n; ++i) {
        values[i] = c.distinct == 0 ? normal(random) : static_cast<double>(pick(random));
        if (i % 97 == 5) values[i] = std::numeric_limits<double>::quiet_NaN();
        if (i % 89 == 3) values[i] = i % 2 ? -0.0 : 0.0;
      }
      std::vector<uint64_t> keys(c.n);
      for (size_t i = 0; i < c.n; ++i) keys[i] = F32Key(static_cast<float>(values[i]), largest);
      std::vector<size_t> expected(c.n);
      std::iota(expected.begin(), expected.end(), size_t{0});
      std::sort(expected.begin(), expected.end(),
                [&](size_t a, size_t b) { return CpuBefore(values[a], a, values[b], b, largest); });
      expected.resize(c.k);
      EXPECT_EQ(SelectOnTheCpu(keys, c.k, 32, c.capacity), expected);
    }
  }
}

TEST(FamilyIndexMath, TopKPlansPickTheirSortSpace) {
  infiniopBackendCreateParams params{};
  params.dim = 1;
  params.largest = true;
  const auto plan_of = [&](std::vector<size_t> in, size_t k, KernelPlan* plan) {
    std::vector<size_t> out = in;
    out[1] = k;
    params.k = k;
    return Plan(INFINIOP_OPERATOR_TopK,
                {Contiguous(INFINI_DTYPE_F16, out), Contiguous(INFINI_DTYPE_I32, out),
                 Contiguous(INFINI_DTYPE_F16, in)},
                params, plan);
  };
  KernelPlan whole, selected, workspace, nothing;
  ASSERT_EQ(plan_of({3, 1000, 2}, 4, &whole), INFINI_STATUS_SUCCESS);
  ASSERT_EQ(whole.launches.size(), 1u);
  EXPECT_STREQ(whole.launches[0].kernel, "infiniop_topk_f16");
  TopKArgs args = ArgsOf<TopKArgs>(whole);
  EXPECT_EQ(args.sort_capacity, 1024u);
  EXPECT_EQ(whole.launches[0].shared_bytes, 1024u * 16);
  EXPECT_EQ(whole.launches[0].block[0], 512u);
  EXPECT_EQ(args.lines.count, 6u);
  EXPECT_EQ(args.lines.length, 1000u);
  EXPECT_EQ(args.lines.steps[0], 2);  // values [3, 4, 2]: along dim 1
  EXPECT_EQ(args.lines.steps[2], 2);
  EXPECT_EQ(args.index_dtype, INFINI_DTYPE_I32);
  EXPECT_EQ(whole.workspace_size, 0u);

  ASSERT_EQ(plan_of({2, 100000}, 100, &selected), INFINI_STATUS_SUCCESS);
  EXPECT_STREQ(selected.launches[0].kernel, "infiniop_topk_f16");
  args = ArgsOf<TopKArgs>(selected);
  EXPECT_EQ(args.sort_capacity, 128u);
  EXPECT_EQ(selected.launches[0].shared_bytes, 128u * 16);
  EXPECT_EQ(selected.launches[0].block[0], 1024u);
  EXPECT_LE(selected.launches[0].shared_bytes + 4096, 48u * 1024);

  ASSERT_EQ(plan_of({5, 100000}, 3000, &workspace), INFINI_STATUS_SUCCESS);
  EXPECT_STREQ(workspace.launches[0].kernel, "infiniop_topk_workspace_f16");
  args = ArgsOf<TopKArgs>(workspace);
  EXPECT_EQ(args.sort_capacity, 4096u);
  EXPECT_EQ(args.slab_bytes, 4096u * 16);
  EXPECT_EQ(workspace.launches[0].shared_bytes, 0u);
  EXPECT_EQ(workspace.workspace_size, args.workspace_needed);
  EXPECT_EQ(args.workspace_needed, workspace.launches[0].grid[0] * args.slab_bytes);

  ASSERT_EQ(plan_of({3, 8}, 0, &nothing), INFINI_STATUS_SUCCESS);
  EXPECT_TRUE(nothing.launches.empty());
  params.dim = 2;
  EXPECT_EQ(plan_of({3, 8}, 2, &nothing), INFINI_STATUS_BAD_PARAM);
}

TEST(FamilyIndexMath, RouterPlansCheckEachCallsTopk) {
  const auto plan_of = [](infiniopOperator_t op, std::vector<size_t> x, infiniDtype_t dtype,
                          KernelPlan* plan) {
    std::vector<ProbeTensor> tensors = {
        {INFINI_DTYPE_F32, {}, {}}, {INFINI_DTYPE_I32, {}, {}}, Contiguous(dtype, x)};
    if (op == INFINIOP_OPERATOR_Topkrouter) tensors.push_back(Contiguous(INFINI_DTYPE_F32, {x[1]}));
    return Plan(op, tensors, infiniopBackendCreateParams{}, plan);
  };
  infiniopBackendRunParams run{};
  KernelPlan softmax, router, many, empty;
  ASSERT_EQ(plan_of(INFINIOP_OPERATOR_Topksoftmax, {6, 40}, INFINI_DTYPE_BF16, &softmax),
            INFINI_STATUS_SUCCESS);
  EXPECT_STREQ(softmax.launches[0].kernel, "infiniop_topksoftmax_bf16");
  EXPECT_EQ(ArgsOf<RouterArgs>(softmax).sort_capacity, 64u);
  ASSERT_TRUE(softmax.check_run);
  for (int topk : {0, 1, 32}) {
    run.topk = topk;
    EXPECT_EQ(softmax.check_run(run), INFINI_STATUS_SUCCESS) << topk;
  }
  for (int topk : {-1, 33}) {
    run.topk = topk;
    EXPECT_EQ(softmax.check_run(run), INFINI_STATUS_BAD_PARAM) << topk;
  }
  ASSERT_EQ(plan_of(INFINIOP_OPERATOR_Topkrouter, {9, 256}, INFINI_DTYPE_F32, &router),
            INFINI_STATUS_SUCCESS);
  EXPECT_STREQ(router.launches[0].kernel, "infiniop_topkrouter_f32");
  run.topk = 128;
  EXPECT_EQ(router.check_run(run), INFINI_STATUS_SUCCESS);
  run.topk = 129;
  EXPECT_EQ(router.check_run(run), INFINI_STATUS_BAD_PARAM);
  // More experts than the shared sort: the row's first topk selected, sorted in what they need.
  ASSERT_EQ(plan_of(INFINIOP_OPERATOR_Topksoftmax, {2, 50000}, INFINI_DTYPE_F16, &many),
            INFINI_STATUS_SUCCESS);
  EXPECT_EQ(ArgsOf<RouterArgs>(many).sort_capacity, 32u);
  ASSERT_EQ(plan_of(INFINIOP_OPERATOR_Topkrouter, {2, 4096}, INFINI_DTYPE_F16, &many),
            INFINI_STATUS_SUCCESS);
  EXPECT_EQ(ArgsOf<RouterArgs>(many).sort_capacity, 2048u);
  EXPECT_EQ(plan_of(INFINIOP_OPERATOR_Topkrouter, {2, 4104}, INFINI_DTYPE_F16, &many),
            INFINI_STATUS_NOT_IMPLEMENTED);
  // No token: nothing launched, but the call's topk is still checked.
  ASSERT_EQ(plan_of(INFINIOP_OPERATOR_Topksoftmax, {0, 8}, INFINI_DTYPE_F32, &empty),
            INFINI_STATUS_SUCCESS);
  EXPECT_TRUE(empty.launches.empty());
  run.topk = 9;
  EXPECT_EQ(empty.check_run(run), INFINI_STATUS_BAD_PARAM);
  EXPECT_EQ(plan_of(INFINIOP_OPERATOR_Topksoftmax, {4, 8}, INFINI_DTYPE_F64, &empty),
            INFINI_STATUS_NOT_IMPLEMENTED);
}

TEST(FamilyIndexMath, MulScalarIsAnElementwiseKernel) {
  KernelPlan plan;
  ASSERT_EQ(
      Plan(INFINIOP_OPERATOR_MulScalar,
           {Contiguous(INFINI_DTYPE_BF16, {4, 9}), Strided(INFINI_DTYPE_BF16, {4, 9}, {0, 1})},
           infiniopBackendCreateParams{}, &plan),
      INFINI_STATUS_SUCCESS);
  ASSERT_EQ(plan.launches.size(), 1u);
  EXPECT_STREQ(plan.launches[0].kernel, "infiniop_mul_scalar_bf16");
  EXPECT_FALSE(plan.check_run);
  EXPECT_EQ(Plan(INFINIOP_OPERATOR_MulScalar,
                 {Contiguous(INFINI_DTYPE_I32, {4}), Contiguous(INFINI_DTYPE_I32, {4})},
                 infiniopBackendCreateParams{}, &plan),
            INFINI_STATUS_NOT_IMPLEMENTED);
}

}  // namespace
}  // namespace infiniop_test
