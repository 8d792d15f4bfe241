// The selections of the CUDA family's kernels: TopK along any dimension, and the MoE routers
// Topksoftmax and Topkrouter, with the CPU backend's semantics (plugins/cpu/infiniop/
// cpu_routing.cc): larger first (smaller first for TopK's smallest), NaN above every number,
// equal values by index, so that the results are the CPU's whatever the order of the work.
//
// One block per line: each candidate gets an order key (SelectionKey, kernels/index_math.h); a
// line that fits the block's sort space is sorted whole by (key, index), a longer one first has
// its first k found by a radix selection on (key, index), 8 bits at a time from the key's top (a
// pass over the line each), stopping as soon as the chosen digit's candidates are all taken, and
// only those k are sorted. The sort is a bitonic sort of a power of two of entries, in shared
// memory or (TopK with k beyond the shared sort) in the block's slab of the workspace. Included by
// infiniop_kernels.cu after its helpers.
#ifndef INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_ROUTING_KERNELS_H_
#define INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_ROUTING_KERNELS_H_

#include "kernels/index_math.h"

namespace infinirt::infiniop_cuda_family::kernels {

// A candidate of a selection: its order key and its index. Entries ascend in the order.
struct SelectEntry {
  uint64_t key;
  uint64_t index;
};

__device__ inline bool EntryBefore(const SelectEntry& a, const SelectEntry& b) {
  return a.key < b.key || (a.key == b.key && a.index < b.index);
}

// The entry filling a sort's space beyond its candidates: after every candidate (whose index is
// below the line's length).
__device__ inline SelectEntry PaddingEntry() { return SelectEntry{UINT64_MAX, UINT64_MAX}; }

// The keys of each storage type's values.
__device__ inline uint64_t SelectionKeyOf(F16, uint16_t bits, bool largest) {
  return SelectionKey(bits, 0x8000u, 0x7c00u, largest);
}
__device__ inline uint64_t SelectionKeyOf(BF16, uint16_t bits, bool largest) {
  return SelectionKey(bits, 0x8000u, 0x7f80u, largest);
}
__device__ inline uint64_t SelectionKeyOf(F32, float value, bool largest) {
  return SelectionKey(__float_as_uint(value), 0x80000000u, 0x7f800000u, largest);
}
__device__ inline uint64_t SelectionKeyOf(F64, double value, bool largest) {
  return SelectionKey(static_cast<uint64_t>(__double_as_longlong(value)), 0x8000000000000000ull,
                      0x7ff0000000000000ull, largest);
}
__device__ inline uint64_t FloatSelectionKey(float value) {
  return SelectionKeyOf(F32(), value, /*largest=*/true);
}

// The block's shared state of a selection.
struct SelectShared {
  unsigned long long histogram[kSelectionDigits];
  SelectionPrefix selection;
  unsigned long long collected;
  int done;
};

// Sorts entries[0, size) ascending, size a power of two. The whole block calls it, the entries
// written before a barrier; it ends with one.
__device__ void BitonicSort(SelectEntry* entries, uint64_t size) {
  for (uint64_t span = 2; span <= size; span <<= 1) {
    for (uint64_t stride = span >> 1; stride > 0; stride >>= 1) {
      for (uint64_t i = threadIdx.x; i < size / 2; i += blockDim.x) {
        uint64_t lo, hi;
        bool ascending;
        BitonicPair(i, stride, span, &lo, &hi, &ascending);
        const SelectEntry a = entries[lo];
        const SelectEntry b = entries[hi];
        if (EntryBefore(b, a) == ascending) {
          entries[lo] = b;
          entries[hi] = a;
        }
      }
      __syncthreads();
    }
  }
}

// Counts a digit of each valid lane into the histogram: one atomic per distinct digit of the warp.
// All lanes of the warp call it.
__device__ inline void CountSelectDigit(unsigned digit, unsigned long long* histogram) {
  const unsigned peers = __match_any_sync(kFullMask, digit);
  if (digit != kNoDigit && (peers & LanesBelow()) == 0) {
    atomicAdd(&histogram[digit], static_cast<unsigned long long>(__popc(peers)));
  }
}

// Finds the first k (1 <= k <= n) of the n candidates (key_at(i): candidate i's key, of key_bits
// bits) as a prefix of (key, index) in s.selection: the candidates InSelection are exactly k.
// (key, index) is unique, so that the passes end with one candidate at the latest. The whole
// block calls it; it ends with a barrier.
template <class KeyAt>
__device__ void RadixSelect(uint64_t n, uint64_t k, int key_bits, const KeyAt& key_at,
                            SelectShared& s) {
  const int index_bits = SelectionIndexBits(n);
  const int passes = (key_bits + index_bits) / kSelectionDigitBits;
  if (threadIdx.x == 0) {
    s.selection = SelectionPrefix{{0, 0}, {0, 0}, k};
    s.done = 0;
  }
  for (int pass = 0; pass < passes; ++pass) {
    for (int d = threadIdx.x; d < kSelectionDigits; d += blockDim.x) s.histogram[d] = 0;
    __syncthreads();  // also publishes the previous pass's prefix
    int part, shift;
    SelectionDigitPlace(pass, key_bits, index_bits, &part, &shift);
    const SelectionPrefix selection = s.selection;
    for (uint64_t tile = 0; tile < n; tile += blockDim.x) {  // uniform bounds: whole warps
      const uint64_t i = tile + threadIdx.x;
      unsigned digit = kNoDigit;
      if (i < n) {
        const uint64_t key = key_at(i);
        if (MatchesPrefix(selection, key, i)) digit = SelectionDigit(key, i, part, shift);
      }
      CountSelectDigit(digit, s.histogram);
    }
    __syncthreads();
    if (threadIdx.x == 0) s.done = ChooseSelectionDigit(s.histogram, part, shift, &s.selection);
    __syncthreads();
    if (s.done) break;  // every thread reads it after the barrier, before the next pass writes it
  }
}

// The first k (1 <= k <= n) of n candidates in order, in entries[0, k): all n sorted when they fit
// in `capacity` entries (a power of two), else the k of RadixSelect sorted (k at most capacity).
// The whole block calls it; it ends with a barrier.
template <class KeyAt>
__device__ void SelectFirst(uint64_t n, uint64_t k, int key_bits, const KeyAt& key_at,
                            SelectEntry* entries, uint64_t capacity, SelectShared& s) {
  const bool whole = n <= capacity;
  const uint64_t count = SelectionSortCount(n, k, capacity);
  if (!whole) RadixSelect(n, k, key_bits, key_at, s);
  const SelectionPrefix selection = whole ? SelectionPrefix{} : s.selection;
  if (threadIdx.x == 0) s.collected = 0;
  __syncthreads();
  for (uint64_t i = threadIdx.x; i < n; i += blockDim.x) {
    const uint64_t key = key_at(i);
    if (whole) {
      entries[i] = SelectEntry{key, i};
    } else if (InSelection(selection, key, i)) {
      const unsigned long long at = atomicAdd(&s.collected, 1ull);
      if (at < count) entries[at] = SelectEntry{key, i};  // exactly k are selected
    }
  }
  const uint64_t size = NextPowerOfTwo(count);
  for (uint64_t i = count + threadIdx.x; i < size; i += blockDim.x) entries[i] = PaddingEntry();
  __syncthreads();
  BitonicSort(entries, size);
}

// --- TopK --------------------------------------------------------------------------------------

template <class Type>
struct LineKeys {
  const typename Type::Storage* line;
  int64_t step;
  bool largest;
  __device__ uint64_t operator()(uint64_t i) const {
    return SelectionKeyOf(Type(), line[static_cast<int64_t>(i) * step], largest);
  }
};

// Each line of input along dim: its first k into values_output (the elements as the CPU copies
// them: loaded and stored again) and indices_output. kWorkspace: the sort space is the block's slab
// of the workspace, else the launch's dynamic shared memory.
template <class Type, bool kWorkspace>
__device__ void TopK(const TopKArgs& args) {
  using S = typename Type::Storage;
  __shared__ SelectShared s;
  extern __shared__ SelectEntry topk_entries[];
  SelectEntry* entries = topk_entries;
  if constexpr (kWorkspace) {
    if (args.call.workspace == nullptr || args.call.workspace_size < args.workspace_needed) return;
    entries = reinterpret_cast<SelectEntry*>(static_cast<char*>(args.call.workspace) +
                                             blockIdx.x * args.slab_bytes);
  }
  const LineLayout& lines = args.lines;
  const uint64_t n = lines.length;
  const uint64_t k = args.k;
  S* values = static_cast<S*>(args.call.buffers[0]);
  void* indices = args.call.buffers[1];
  const S* input = static_cast<const S*>(args.call.buffers[2]);
  for (uint64_t line = blockIdx.x; line < lines.count; line += gridDim.x) {
    const S* in = input + LineOffset(lines, line, 2);
    const LineKeys<Type> keys{in, lines.steps[2], args.largest != 0};
    SelectFirst(n, k, static_cast<int>(sizeof(S)) * 8, keys, entries, args.sort_capacity, s);
    S* out = values + LineOffset(lines, line, 0);
    const int64_t at = LineOffset(lines, line, 1);
    for (uint64_t j = threadIdx.x; j < k; j += blockDim.x) {
      const uint64_t index = entries[j].index;
      const int64_t rank = static_cast<int64_t>(j);
      out[rank * lines.steps[0]] =
          Type::Store(Type::Load(in[static_cast<int64_t>(index) * lines.steps[2]]));
      if (args.index_dtype == INFINI_DTYPE_I32) {
        static_cast<int32_t*>(indices)[at + rank * lines.steps[1]] = static_cast<int32_t>(index);
      } else {
        static_cast<int64_t*>(indices)[at + rank * lines.steps[1]] = static_cast<int64_t>(index);
      }
    }
    __syncthreads();  // the entries and s are the next line's
  }
}

template <class Type>
__device__ void TopKShared(const TopKArgs& args) {
  TopK<Type, false>(args);
}
template <class Type>
__device__ void TopKWorkspace(const TopKArgs& args) {
  TopK<Type, true>(args);
}

// --- The routers -------------------------------------------------------------------------------

// exp in float as the CPU's std::exp rounds it: computed in double and rounded once, so that it is
// the correctly rounded value but in the rarest cases, as glibc's expf is (CUDA's expf may be 2
// ulps off, which could reorder close scores).
__device__ inline float RoundedExp(float x) {
  return static_cast<float>(exp(static_cast<double>(x)));
}

__device__ inline float RouterSigmoid(float x) {
  return __fdiv_rn(1.0f, __fadd_rn(1.0f, RoundedExp(-x)));
}

template <class Type>
struct ScoreKeys {
  const typename Type::Storage* row;
  __device__ uint64_t operator()(uint64_t e) const { return FloatSelectionKey(Type::Load(row[e])); }
};

// Whether the call's topk fits the sort space (the plan refuses the others at Run).
__device__ inline bool SortSpaceHolds(const RouterArgs& args, uint64_t topk) {
  return topk <= args.experts && (args.experts <= args.sort_capacity || topk <= args.sort_capacity);
}

// Topksoftmax: per row the topk largest scores, their softmax probabilities (divided by their sum
// when norm), as the CPU's SoftmaxRow computes them; the row's sum of exponentials is a block
// reduction (its rounding, not its order, may differ from the CPU's sequential sum).
template <class Type>
__device__ void Topksoftmax(const RouterArgs& args) {
  using S = typename Type::Storage;
  __shared__ SelectShared s;
  __shared__ float scratch[kWarpSize];
  __shared__ float chosen_sum;
  extern __shared__ SelectEntry router_entries[];
  if (args.call.topk <= 0) return;
  const uint64_t topk = static_cast<uint64_t>(args.call.topk);
  if (!SortSpaceHolds(args, topk)) return;
  const uint64_t experts = args.experts;
  float* values = static_cast<float*>(args.call.buffers[0]);
  int32_t* indices = static_cast<int32_t*>(args.call.buffers[1]);
  for (uint64_t row = blockIdx.x; row < args.tokens; row += gridDim.x) {
    const S* x =
        static_cast<const S*>(args.call.buffers[2]) + static_cast<int64_t>(row) * args.row_stride;
    float max = -Infinity<float>();  // std::max(max, score): a NaN score is never taken
    for (uint64_t e = threadIdx.x; e < experts; e += blockDim.x) {
      max = MaxOp()(max, Type::Load(x[e]));
    }
    max = BlockReduce(max, MaxOp(), -Infinity<float>(), scratch);
    float sum = 0;
    for (uint64_t e = threadIdx.x; e < experts; e += blockDim.x) {
      sum += RoundedExp(Type::Load(x[e]) - max);
    }
    sum = BlockReduce(sum, SumOp(), 0.0f, scratch);
    SelectFirst(experts, topk, 32, ScoreKeys<Type>{x}, router_entries, args.sort_capacity, s);
    float* out = values + row * topk;
    int32_t* out_indices = indices + row * topk;
    if (threadIdx.x == 0) {  // the CPU's order of adds
      float chosen = 0;
      for (uint64_t j = 0; j < topk; ++j) {
        chosen += __fdiv_rn(RoundedExp(Type::Load(x[router_entries[j].index]) - max), sum);
      }
      chosen_sum = chosen;
    }
    __syncthreads();
    for (uint64_t j = threadIdx.x; j < topk; j += blockDim.x) {
      const uint64_t index = router_entries[j].index;
      const float p = __fdiv_rn(RoundedExp(Type::Load(x[index]) - max), sum);
      out[j] = args.call.norm != 0 ? __fdiv_rn(p, chosen_sum) : p;
      out_indices[j] = static_cast<int32_t>(index);
    }
    __syncthreads();  // the entries and the shared values are the next row's
  }
}

constexpr int kRouterGroups = 8;      // Topkrouter's groups of experts
constexpr int kRouterKeptGroups = 4;  // the groups whose experts may be chosen

// Topkrouter's scores of a row: s = sigmoid(x), b = s + correction_bias, as the CPU rounds them.
template <class Type>
struct GroupedScores {
  const typename Type::Storage* x;
  const float* bias;
  int64_t bias_stride;
  __device__ float S(uint64_t e) const { return RouterSigmoid(Type::Load(x[e])); }
  __device__ float B(uint64_t e) const {
    return __fadd_rn(S(e), bias[static_cast<int64_t>(e) * bias_stride]);
  }
};

// The final choice's keys: b, or 0 for the experts of groups not kept.
template <class Type>
struct KeptKeys {
  GroupedScores<Type> scores;
  const int* kept;
  uint64_t group_size;
  __device__ uint64_t operator()(uint64_t e) const {
    return FloatSelectionKey(kept[e / group_size] ? scores.B(e) : 0.0f);
  }
};

// The better two of (a0, a1) and (b0, b1), each pair in order.
__device__ inline void MergeBestTwo(SelectEntry& a0, SelectEntry& a1, const SelectEntry& b0,
                                    const SelectEntry& b1) {
  if (EntryBefore(b0, a0)) {
    a1 = EntryBefore(a0, b1) ? a0 : b1;
    a0 = b0;
  } else if (EntryBefore(b0, a1)) {
    a1 = b0;
  }
}

__device__ inline SelectEntry ShuffleEntry(const SelectEntry& entry, int mask) {
  return SelectEntry{__shfl_xor_sync(kFullMask, entry.key, mask),
                     __shfl_xor_sync(kFullMask, entry.index, mask)};
}

// Topkrouter (DeepSeek-V3's choice), as the CPU's GroupedRow: the groups scored by the sum of
// their two largest b (a warp per group), the 4 best kept (ties: the lower group), the topk
// largest b of the kept groups' experts (the others' b read as 0), weighted by
// routed_scaling_factor * s / (their sum of s + 1e-20).
template <class Type>
__device__ void Topkrouter(const RouterArgs& args) {
  using S = typename Type::Storage;
  __shared__ SelectShared s;
  __shared__ float group_scores[kRouterGroups];
  __shared__ int kept[kRouterGroups];
  __shared__ float chosen_sum;
  extern __shared__ SelectEntry router_entries[];
  if (args.call.topk <= 0) return;
  const uint64_t topk = static_cast<uint64_t>(args.call.topk);
  if (!SortSpaceHolds(args, topk)) return;
  const uint64_t experts = args.experts;
  const uint64_t group_size = experts / kRouterGroups;
  const int warp = threadIdx.x / kWarpSize;
  const int lane = threadIdx.x % kWarpSize;
  const int warps = blockDim.x / kWarpSize;
  float* values = static_cast<float*>(args.call.buffers[0]);
  int32_t* indices = static_cast<int32_t*>(args.call.buffers[1]);
  for (uint64_t row = blockIdx.x; row < args.tokens; row += gridDim.x) {
    const GroupedScores<Type> scores{
        static_cast<const S*>(args.call.buffers[2]) + static_cast<int64_t>(row) * args.row_stride,
        static_cast<const float*>(args.call.buffers[3]), args.bias_stride};
    for (int g = warp; g < kRouterGroups; g += warps) {  // whole warps: the shuffles see all lanes
      SelectEntry best = PaddingEntry(), second = PaddingEntry();
      for (uint64_t m = lane; m < group_size; m += kWarpSize) {
        const uint64_t e = g * group_size + m;
        MergeBestTwo(best, second, SelectEntry{FloatSelectionKey(scores.B(e)), e}, PaddingEntry());
      }
      for (int mask = kWarpSize / 2; mask > 0; mask >>= 1) {
        const SelectEntry other_best = ShuffleEntry(best, mask);
        const SelectEntry other_second = ShuffleEntry(second, mask);
        MergeBestTwo(best, second, other_best, other_second);
      }
      // Groups have at least two experts: both are real.
      if (lane == 0) group_scores[g] = __fadd_rn(scores.B(best.index), scores.B(second.index));
    }
    __syncthreads();
    if (threadIdx.x < kRouterGroups) {  // a group is kept when fewer than 4 go before it
      const int g = threadIdx.x;
      const SelectEntry mine{FloatSelectionKey(group_scores[g]), static_cast<uint64_t>(g)};
      int before = 0;
      for (int other = 0; other < kRouterGroups; ++other) {
        before += EntryBefore(
            SelectEntry{FloatSelectionKey(group_scores[other]), static_cast<uint64_t>(other)},
            mine);
      }
      kept[g] = before < kRouterKeptGroups;
    }
    __syncthreads();
    SelectFirst(experts, topk, 32, KeptKeys<Type>{scores, kept, group_size}, router_entries,
                args.sort_capacity, s);
    if (threadIdx.x == 0) {  // the CPU's order of adds
      float chosen = 0;
      for (uint64_t j = 0; j < topk; ++j) chosen += scores.S(router_entries[j].index);
      chosen_sum = __fadd_rn(chosen, 1e-20f);
    }
    __syncthreads();
    float* out = values + row * topk;
    int32_t* out_indices = indices + row * topk;
    for (uint64_t j = threadIdx.x; j < topk; j += blockDim.x) {
      const uint64_t index = router_entries[j].index;
      out[j] = __fdiv_rn(__fmul_rn(args.call.routed_scaling_factor, scores.S(index)), chosen_sum);
      out_indices[j] = static_cast<int32_t>(index);
    }
    __syncthreads();  // the entries and the shared values are the next row's
  }
}

}  // namespace infinirt::infiniop_cuda_family::kernels

#endif  // INFINIRT_PLUGINS_CUDA_FAMILY_INFINIOP_KERNELS_ROUTING_KERNELS_H_
