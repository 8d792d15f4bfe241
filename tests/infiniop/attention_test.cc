// The attention operators against a naive softmax(scale * q k^T) v computed in double on the host
// from the stored inputs: PagedCaching writing the keys and values of sequences of different
// lengths through block tables that are not in order, PagedAttention (decode) and
// PagedAttentionPrefill reading them back (grouped-query heads, ALiBi, causal bounds with history
// longer than the new tokens), FlashAttention (causal or not, total_kv_len shorter than the keys,
// strided queries), indices that do not fit (NaN rows, never a read out of bounds), and the
// refusals; KVCaching and Attention over contiguous caches. F16, BF16 and F32. Tolerances are
// infiniop_test.cc's, times 8 in F32 (a sum over the keys in float).
#include <algorithm>
#include <cmath>
#include <numeric>
#include <random>
#include <string>
#include <vector>

#include "infiniop_test_support.h"
#include "operator_probes.h"

namespace infiniop_test {
namespace {

const infiniDtype_t kAttentionDtypes[] = {INFINI_DTYPE_F16, INFINI_DTYPE_BF16, INFINI_DTYPE_F32};

void ExpectAttentionClose(infiniDtype_t dtype, double expected, double found, size_t index) {
  const double factor = dtype == INFINI_DTYPE_F32 ? 8 : 1;
  const double bound = Tolerance(dtype) * factor * std::max(1.0, std::fabs(expected));
  EXPECT_NEAR(found, expected, bound) << "element " << index << ", dtype " << dtype;
}

// softmax(scale * q . k_j + bias_j) weighted sum of v_j over the keys j < visible, in double;
// zeros when no key is visible.
std::vector<double> NaiveAttention(const std::vector<double>& q,
                                   const std::vector<std::vector<double>>& keys,
                                   const std::vector<std::vector<double>>& values, size_t visible,
                                   double scale, double slope, double position) {
  const size_t d = q.size();
  std::vector<double> out(d, 0.0);
  if (visible == 0) return out;
  std::vector<double> scores(visible);
  for (size_t j = 0; j < visible; ++j) {
    scores[j] = scale * std::inner_product(q.begin(), q.end(), keys[j].begin(), 0.0) +
                slope * (static_cast<double>(j) - position);
  }
  const double max = *std::max_element(scores.begin(), scores.end());
  double sum = 0;
  for (double& s : scores) sum += (s = std::exp(s - max));
  for (size_t j = 0; j < visible; ++j) {
    for (size_t k = 0; k < d; ++k) out[k] += scores[j] / sum * values[j][k];
  }
  return out;
}

// A paged layout: sequences' lengths, their block tables over a shuffled pool of blocks.
struct PagedSetup {
  size_t kv_heads = 2, heads = 6, head_size = 16, block_size = 4, blocks = 0;
  std::vector<size_t> lengths;
  size_t max_blocks = 0;
  std::vector<std::vector<int64_t>> tables;

  PagedSetup(std::vector<size_t> sequence_lengths, std::mt19937* random)
      : lengths(std::move(sequence_lengths)) {
    blocks = 3;  // spare blocks, unused
    for (size_t length : lengths) blocks += (length + block_size - 1) / block_size;
    std::vector<int64_t> pool(blocks);
    std::iota(pool.begin(), pool.end(), 0);
    std::shuffle(pool.begin(), pool.end(), *random);  // block tables not in order
    size_t next = 0;
    for (size_t length : lengths) {
      max_blocks = std::max(max_blocks, (length + block_size - 1) / block_size);
    }
    for (size_t length : lengths) {
      std::vector<int64_t> table(max_blocks, 0);
      for (size_t b = 0; b < (length + block_size - 1) / block_size; ++b) table[b] = pool[next++];
      tables.push_back(table);
    }
  }
  Layout CacheLayout() const {
    return Layout::Contiguous({blocks, kv_heads, block_size, head_size});
  }
  int64_t Slot(size_t seq, size_t position) const {
    return tables[seq][position / block_size] * static_cast<int64_t>(block_size) +
           static_cast<int64_t>(position % block_size);
  }
};

// Every sequence's keys and values [seq][position][kv head] -> head_size values, random, written
// into the caches with PagedCaching (all tokens of all sequences in one call).
struct PagedCaches {
  std::vector<std::vector<std::vector<std::vector<double>>>> k, v;  // [seq][pos][head][d]

  PagedCaches(InfiniopTest* test, const PagedSetup& setup, infiniDtype_t dtype, Tensor* k_cache,
              Tensor* v_cache, std::mt19937* random) {
    const size_t tokens = std::accumulate(setup.lengths.begin(), setup.lengths.end(), size_t{0});
    const Layout token_layout = Layout::Contiguous({tokens, setup.kv_heads, setup.head_size});
    Tensor k_new(token_layout, dtype), v_new(token_layout, dtype),
        slots(Layout::Contiguous({tokens}), INFINI_DTYPE_I64);
    k_new.FillRandom(random, false);
    v_new.FillRandom(random, false);
    size_t token = 0;
    for (size_t s = 0; s < setup.lengths.size(); ++s) {
      k.emplace_back();
      v.emplace_back();
      for (size_t p = 0; p < setup.lengths[s]; ++p, ++token) {
        slots.Set(token, static_cast<double>(setup.Slot(s, p)));
        k[s].emplace_back();
        v[s].emplace_back();
        for (size_t h = 0; h < setup.kv_heads; ++h) {
          std::vector<double> key(setup.head_size), value(setup.head_size);
          for (size_t d = 0; d < setup.head_size; ++d) {
            key[d] = k_new.At((token * setup.kv_heads + h) * setup.head_size + d);
            value[d] = v_new.At((token * setup.kv_heads + h) * setup.head_size + d);
          }
          k[s][p].push_back(key);
          v[s][p].push_back(value);
        }
      }
    }
    k_new.Upload(test->stream);
    v_new.Upload(test->stream);
    slots.Upload(test->stream);
    infiniopPagedCachingDescriptor_t desc = nullptr;
    EXPECT_EQ(
        infiniopCreatePagedCachingDescriptor(test->handle, &desc, k_cache->desc(), v_cache->desc(),
                                             k_new.desc(), v_new.desc(), slots.desc()),
        INFINI_STATUS_SUCCESS);
    EXPECT_EQ(infiniopPagedCaching(desc, nullptr, 0, k_cache->data(), v_cache->data(), k_new.data(),
                                   v_new.data(), slots.data(), test->stream),
              INFINI_STATUS_SUCCESS);
    EXPECT_EQ(infinirtStreamSynchronize(test->stream), infinirtSuccess);
    EXPECT_EQ(infiniopDestroyPagedCachingDescriptor(desc), INFINI_STATUS_SUCCESS);
  }

  // Sequence s's keys (or values) of kv head h, by position.
  static std::vector<std::vector<double>> Of(
      const std::vector<std::vector<std::vector<std::vector<double>>>>& all, size_t s, size_t h) {
    std::vector<std::vector<double>> rows;
    for (const auto& position : all[s]) rows.push_back(position[h]);
    return rows;
  }
};

Tensor* Indices(std::vector<std::unique_ptr<Tensor>>* keep, const std::vector<size_t>& shape,
                const std::vector<int64_t>& values, infiniDtype_t dtype = INFINI_DTYPE_I64) {
  keep->push_back(std::make_unique<Tensor>(Layout::Contiguous(shape), dtype));
  for (size_t i = 0; i < values.size(); ++i) keep->back()->Set(i, static_cast<double>(values[i]));
  return keep->back().get();
}

TEST_F(InfiniopTest, PagedAttentionDecodesOverCachesWrittenByPagedCaching) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_PagedAttention)) {
    GTEST_SKIP() << "no PagedAttention on this device's operator backend";
  }
  std::mt19937 random(43);
  for (infiniDtype_t dtype : kAttentionDtypes) {
    for (bool alibi : {false, true}) {
      SCOPED_TRACE("dtype " + std::to_string(dtype) + (alibi ? ", ALiBi" : ""));
      const PagedSetup setup({5, 17, 1, 64}, &random);
      Tensor k_cache(setup.CacheLayout(), dtype), v_cache(setup.CacheLayout(), dtype);
      const PagedCaches caches(this, setup, dtype, &k_cache, &v_cache, &random);
      const size_t seqs = setup.lengths.size();
      const Layout q_layout = Layout::Contiguous({seqs, setup.heads, setup.head_size});
      Tensor q(q_layout, dtype), out(q_layout, dtype),
          slopes(Layout::Contiguous({setup.heads}), INFINI_DTYPE_F32);
      q.FillRandom(&random, false);
      for (size_t h = 0; h < setup.heads; ++h) slopes.Set(h, -0.1 * static_cast<double>(h + 1));
      std::vector<std::unique_ptr<Tensor>> keep;
      std::vector<int64_t> table_values, length_values;
      for (size_t s = 0; s < seqs; ++s) {
        table_values.insert(table_values.end(), setup.tables[s].begin(), setup.tables[s].end());
        length_values.push_back(static_cast<int64_t>(setup.lengths[s]));
      }
      Tensor* tables = Indices(&keep, {seqs, setup.max_blocks}, table_values);
      Tensor* lengths = Indices(&keep, {seqs}, length_values, INFINI_DTYPE_I32);
      for (Tensor* t : {&q, tables, lengths, &slopes}) t->Upload(stream);
      const float scale = 0.25f;
      infiniopPagedAttentionDescriptor_t desc = nullptr;
      ASSERT_EQ(infiniopCreatePagedAttentionDescriptor(
                    handle, &desc, out.desc(), q.desc(), k_cache.desc(), v_cache.desc(),
                    tables->desc(), lengths->desc(), alibi ? slopes.desc() : nullptr, scale),
                INFINI_STATUS_SUCCESS);
      size_t workspace = 0;
      ASSERT_EQ(infiniopGetPagedAttentionWorkspaceSize(desc, &workspace), INFINI_STATUS_SUCCESS);
      DeviceBuffer buffer(workspace);
      ASSERT_EQ(infiniopPagedAttention(desc, buffer.data(), workspace, out.data(), q.data(),
                                       k_cache.data(), v_cache.data(), tables->data(),
                                       lengths->data(), alibi ? slopes.data() : nullptr, stream),
                INFINI_STATUS_SUCCESS);
      out.Download(stream);
      ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
      EXPECT_EQ(infiniopDestroyPagedAttentionDescriptor(desc), INFINI_STATUS_SUCCESS);
      const size_t group = setup.heads / setup.kv_heads, d = setup.head_size;
      for (size_t s = 0; s < seqs; ++s) {
        for (size_t h = 0; h < setup.heads; ++h) {
          std::vector<double> query(d);
          for (size_t i = 0; i < d; ++i) query[i] = q.At((s * setup.heads + h) * d + i);
          const double slope = alibi ? slopes.At(h) : 0.0;
          const std::vector<double> expected =
              NaiveAttention(query, PagedCaches::Of(caches.k, s, h / group),
                             PagedCaches::Of(caches.v, s, h / group), setup.lengths[s], scale,
                             slope, static_cast<double>(setup.lengths[s]) - 1);
          for (size_t i = 0; i < d; ++i) {
            const size_t index = (s * setup.heads + h) * d + i;
            ExpectAttentionClose(dtype, Rounded(dtype, expected[i]), out.At(index), index);
          }
        }
      }
    }
  }
}

TEST_F(InfiniopTest, PagedAttentionPrefillIsCausalOverHistoryAndNewTokens) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_PagedAttentionPrefill)) {
    GTEST_SKIP() << "no PagedAttentionPrefill on this device's operator backend";
  }
  std::mt19937 random(47);
  for (infiniDtype_t dtype : kAttentionDtypes) {
    SCOPED_TRACE("dtype " + std::to_string(dtype));
    // Totals (history + new) and new tokens per sequence: one with no history, one all history
    // but 1, one long enough for several key blocks and query tasks.
    const std::vector<size_t> totals = {6, 9, 90}, news = {6, 1, 37};
    const PagedSetup setup(totals, &random);
    Tensor k_cache(setup.CacheLayout(), dtype), v_cache(setup.CacheLayout(), dtype);
    const PagedCaches caches(this, setup, dtype, &k_cache, &v_cache, &random);
    const size_t rows = std::accumulate(news.begin(), news.end(), size_t{0});
    const Layout q_layout = Layout::Contiguous({rows, setup.heads, setup.head_size});
    Tensor q(q_layout, dtype), out(q_layout, dtype);
    q.FillRandom(&random, false);
    std::vector<std::unique_ptr<Tensor>> keep;
    std::vector<int64_t> table_values, length_values, cum = {0};
    for (size_t s = 0; s < totals.size(); ++s) {
      table_values.insert(table_values.end(), setup.tables[s].begin(), setup.tables[s].end());
      length_values.push_back(static_cast<int64_t>(totals[s]));
      cum.push_back(cum.back() + static_cast<int64_t>(news[s]));
    }
    Tensor* tables = Indices(&keep, {totals.size(), setup.max_blocks}, table_values);
    Tensor* lengths = Indices(&keep, {totals.size()}, length_values);
    Tensor* cumulative = Indices(&keep, {cum.size()}, cum, INFINI_DTYPE_I32);
    for (Tensor* t : {&q, tables, lengths, cumulative}) t->Upload(stream);
    const float scale = 0.3f;
    infiniopPagedAttentionPrefillDescriptor_t desc = nullptr;
    ASSERT_EQ(infiniopCreatePagedAttentionPrefillDescriptor(
                  handle, &desc, out.desc(), q.desc(), k_cache.desc(), v_cache.desc(),
                  tables->desc(), lengths->desc(), cumulative->desc(), nullptr, scale),
              INFINI_STATUS_SUCCESS);
    ASSERT_EQ(infiniopPagedAttentionPrefill(desc, nullptr, 0, out.data(), q.data(), k_cache.data(),
                                            v_cache.data(), tables->data(), lengths->data(),
                                            cumulative->data(), nullptr, stream),
              INFINI_STATUS_SUCCESS);
    out.Download(stream);
    ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    EXPECT_EQ(infiniopDestroyPagedAttentionPrefillDescriptor(desc), INFINI_STATUS_SUCCESS);
    const size_t group = setup.heads / setup.kv_heads, d = setup.head_size;
    for (size_t s = 0; s < totals.size(); ++s) {
      for (size_t t = 0; t < news[s]; ++t) {
        const size_t row = static_cast<size_t>(cum[s]) + t;
        const size_t visible = totals[s] - news[s] + t + 1;
        for (size_t h = 0; h < setup.heads; ++h) {
          std::vector<double> query(d);
          for (size_t i = 0; i < d; ++i) query[i] = q.At((row * setup.heads + h) * d + i);
          const std::vector<double> expected =
              NaiveAttention(query, PagedCaches::Of(caches.k, s, h / group),
                             PagedCaches::Of(caches.v, s, h / group), visible, scale, 0, 0);
          for (size_t i = 0; i < d; ++i) {
            const size_t index = (row * setup.heads + h) * d + i;
            ExpectAttentionClose(dtype, Rounded(dtype, expected[i]), out.At(index), index);
          }
        }
      }
    }
  }
}

TEST_F(InfiniopTest, PagedAttentionMarksSequencesWhoseIndicesDoNotFitWithNaN) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_PagedAttention)) {
    GTEST_SKIP() << "no PagedAttention on this device's operator backend";
  }
  const Layout cache = Layout::Contiguous({3, 1, 4, 8}), q_layout = Layout::Contiguous({3, 2, 8});
  Tensor k_cache(cache, INFINI_DTYPE_F32), v_cache(cache, INFINI_DTYPE_F32),
      q(q_layout, INFINI_DTYPE_F32), out(q_layout, INFINI_DTYPE_F32);
  std::vector<std::unique_ptr<Tensor>> keep;
  // Sequence 0 fits; 1 names block 7 of 3; 2 is longer than its table (2 blocks of 4).
  Tensor* tables = Indices(&keep, {3, 2}, {0, 1, 2, 7, 0, 1});
  Tensor* lengths = Indices(&keep, {3}, {5, 5, 9});
  for (Tensor* t : {&k_cache, &v_cache, &q, tables, lengths}) t->Upload(stream);
  infiniopPagedAttentionDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreatePagedAttentionDescriptor(handle, &desc, out.desc(), q.desc(),
                                                   k_cache.desc(), v_cache.desc(), tables->desc(),
                                                   lengths->desc(), nullptr, 1.0f),
            INFINI_STATUS_SUCCESS);
  ASSERT_EQ(
      infiniopPagedAttention(desc, nullptr, 0, out.data(), q.data(), k_cache.data(), v_cache.data(),
                             tables->data(), lengths->data(), nullptr, stream),
      INFINI_STATUS_SUCCESS);
  out.Download(stream);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(infiniopDestroyPagedAttentionDescriptor(desc), INFINI_STATUS_SUCCESS);
  for (size_t i = 0; i < q_layout.Elements(); ++i) {
    EXPECT_EQ(std::isnan(out.At(i)), i >= 16) << "element " << i;
  }
}

// FlashAttention's sizes: groups of query rows of several sizes (the CPU kernel scores a group
// of one or two rows key by key, larger ones in tiles), head sizes that are and are not whole
// vectors, key counts across and within blocks of 64.
struct FlashShape {
  size_t batch, heads, kv_heads, q_len, kv_len, d;
  std::vector<int64_t> totals;  // per batch
};

std::vector<FlashShape> FlashShapes() {
  return {
      {2, 4, 2, 5, 70, 8, {70, 7}},   // groups of 10 rows (2 heads x 5 tokens)
      {1, 2, 2, 1, 130, 128, {130}},  // a decode step without grouped heads: 1 row
      {1, 2, 1, 1, 65, 40, {65}},     // 2 rows, a last block of one key, d of 2.5 vectors
      {1, 3, 1, 3, 100, 40, {97}},    // 9 rows: tiles and the rows left over
  };
}

// FlashAttention of q [batch, heads, q_len, d] (given as a strided view of [batch, q_len, heads,
// d] when `strided_q`) over k, v [batch, kv_heads, kv_len, d] with total_kv_len per batch.
void CheckFlashAttention(InfiniopTest* test, infiniDtype_t dtype, bool causal, bool strided_q,
                         const FlashShape& shape, std::mt19937* random) {
  const size_t batch = shape.batch, heads = shape.heads, kv_heads = shape.kv_heads,
               q_len = shape.q_len, kv_len = shape.kv_len, d = shape.d;
  const std::vector<int64_t>& totals = shape.totals;
  const Layout q_layout =
      strided_q ? Layout{{batch, heads, q_len, d},
                         {static_cast<ptrdiff_t>(q_len * heads * d), static_cast<ptrdiff_t>(d),
                          static_cast<ptrdiff_t>(heads * d), 1}}
                : Layout::Contiguous({batch, heads, q_len, d});
  const Layout out_layout = Layout::Contiguous({batch, heads, q_len, d});
  const Layout kv_layout = Layout::Contiguous({batch, kv_heads, kv_len, d});
  Tensor q(q_layout, dtype), out(out_layout, dtype), k(kv_layout, dtype), v(kv_layout, dtype);
  q.FillRandom(random, false);
  k.FillRandom(random, false);
  v.FillRandom(random, false);
  std::vector<std::unique_ptr<Tensor>> keep;
  Tensor* lengths = Indices(&keep, {batch}, totals);
  for (Tensor* t : {&q, &k, &v, lengths}) t->Upload(test->stream);
  const float scale = 0.35f;
  infiniopFlashAttentionDescriptor_t desc = nullptr;
  ASSERT_EQ(
      infiniopCreateFlashAttentionDescriptor(test->handle, &desc, out.desc(), q.desc(), k.desc(),
                                             v.desc(), lengths->desc(), scale, causal ? 1 : 0),
      INFINI_STATUS_SUCCESS);
  ASSERT_EQ(infiniopFlashAttention(desc, nullptr, 0, out.data(), q.data(), k.data(), v.data(),
                                   lengths->data(), test->stream),
            INFINI_STATUS_SUCCESS);
  out.Download(test->stream);
  ASSERT_EQ(infinirtStreamSynchronize(test->stream), infinirtSuccess);
  EXPECT_EQ(infiniopDestroyFlashAttentionDescriptor(desc), INFINI_STATUS_SUCCESS);
  for (size_t b = 0; b < batch; ++b) {
    for (size_t h = 0; h < heads; ++h) {
      const size_t kh = h / (heads / kv_heads);
      std::vector<std::vector<double>> keys(kv_len, std::vector<double>(d)), values = keys;
      for (size_t j = 0; j < kv_len; ++j) {
        for (size_t i = 0; i < d; ++i) {
          keys[j][i] = k.At(((b * kv_heads + kh) * kv_len + j) * d + i);
          values[j][i] = v.At(((b * kv_heads + kh) * kv_len + j) * d + i);
        }
      }
      for (size_t t = 0; t < q_len; ++t) {
        std::vector<double> query(d);
        for (size_t i = 0; i < d; ++i) query[i] = q.At(((b * heads + h) * q_len + t) * d + i);
        const int64_t bound =
            causal ? totals[b] - static_cast<int64_t>(q_len) + static_cast<int64_t>(t) + 1
                   : totals[b];
        const size_t visible = static_cast<size_t>(std::clamp<int64_t>(bound, 0, totals[b]));
        const std::vector<double> expected =
            NaiveAttention(query, keys, values, visible, scale, 0, 0);
        for (size_t i = 0; i < d; ++i) {
          const size_t index = ((b * heads + h) * q_len + t) * d + i;
          ExpectAttentionClose(dtype, Rounded(dtype, expected[i]), out.At(index), index);
        }
      }
    }
  }
}

TEST_F(InfiniopTest, FlashAttentionMatchesTheNaiveAttention) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_FlashAttention)) {
    GTEST_SKIP() << "no FlashAttention on this device's operator backend";
  }
  std::mt19937 random(53);
  for (infiniDtype_t dtype : kAttentionDtypes) {
    for (bool causal : {false, true}) {
      for (bool strided : {false, true}) {
        for (const FlashShape& shape : FlashShapes()) {
          SCOPED_TRACE("dtype " + std::to_string(dtype) + (causal ? ", causal" : "") +
                       (strided ? ", strided q" : "") + ", d " + std::to_string(shape.d) +
                       ", heads " + std::to_string(shape.heads) + "/" +
                       std::to_string(shape.kv_heads) + ", q_len " + std::to_string(shape.q_len));
          CheckFlashAttention(this, dtype, causal, strided, shape, &random);
        }
      }
    }
  }
}

TEST_F(InfiniopTest, KVCachingAppendsAfterEachBatchsPastAndSkipsABatchWithoutRoom) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_KVCaching)) {
    GTEST_SKIP() << "no KVCaching on this device's operator backend";
  }
  std::mt19937 random(61);
  const size_t batch = 3, kv_heads = 2, max_len = 10, seq = 3, d = 8;
  const Layout cache_layout = Layout::Contiguous({batch, kv_heads, max_len, d});
  Tensor k_cache(cache_layout, INFINI_DTYPE_F32), v_cache(cache_layout, INFINI_DTYPE_F32),
      k(Layout::Contiguous({batch, kv_heads, seq, d}), INFINI_DTYPE_F32),
      v(Layout{{batch, kv_heads, seq, d},
               {static_cast<ptrdiff_t>(kv_heads * seq * d * 2), static_cast<ptrdiff_t>(seq * d * 2),
                static_cast<ptrdiff_t>(d * 2), 2}},
        INFINI_DTYPE_F32);
  for (Tensor* t : {&k_cache, &v_cache, &k, &v}) t->FillRandom(&random, false);
  std::vector<double> k_before(cache_layout.Elements()), v_before(cache_layout.Elements());
  for (size_t i = 0; i < k_before.size(); ++i)
    k_before[i] = k_cache.At(i), v_before[i] = v_cache.At(i);
  std::vector<std::unique_ptr<Tensor>> keep;
  const std::vector<int64_t> past = {2, 7, 8};  // the last has no room for 3 tokens
  Tensor* lengths = Indices(&keep, {batch}, past);
  for (Tensor* t : {&k_cache, &v_cache, &k, &v, lengths}) t->Upload(stream);
  infiniopKVCachingDescriptor_t desc = nullptr;
  ASSERT_EQ(infiniopCreateKVCachingDescriptor(handle, &desc, k_cache.desc(), v_cache.desc(),
                                              k.desc(), v.desc(), lengths->desc()),
            INFINI_STATUS_SUCCESS);
  ASSERT_EQ(infiniopKVCaching(desc, nullptr, 0, k_cache.data(), v_cache.data(), k.data(), v.data(),
                              lengths->data(), stream),
            INFINI_STATUS_SUCCESS);
  k_cache.Download(stream);
  v_cache.Download(stream);
  ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
  EXPECT_EQ(infiniopDestroyKVCachingDescriptor(desc), INFINI_STATUS_SUCCESS);
  for (size_t b = 0; b < batch; ++b) {
    for (size_t h = 0; h < kv_heads; ++h) {
      for (size_t p = 0; p < max_len; ++p) {
        for (size_t i = 0; i < d; ++i) {
          const size_t index = ((b * kv_heads + h) * max_len + p) * d + i;
          const int64_t s = static_cast<int64_t>(p) - past[b];
          const bool written = b < 2 && s >= 0 && s < static_cast<int64_t>(seq);
          const size_t source = ((b * kv_heads + h) * seq + static_cast<size_t>(s)) * d + i;
          EXPECT_EQ(k_cache.At(index), written ? k.At(source) : k_before[index]) << index;
          EXPECT_EQ(v_cache.At(index), written ? v.At(source) : v_before[index]) << index;
        }
      }
    }
  }
}

TEST_F(InfiniopTest, AttentionCachesTheNewTokensAndAttendsCausallyAfterPos) {
  if (VendorLacksOperator(handle, device_type, INFINIOP_OPERATOR_Attention)) {
    GTEST_SKIP() << "no Attention on this device's operator backend";
  }
  std::mt19937 random(67);
  const size_t heads = 6, kv_heads = 2, seq = 4, d = 8, pos = 5, cache_len = 12;
  for (infiniDtype_t dtype : kAttentionDtypes) {
    SCOPED_TRACE("dtype " + std::to_string(dtype));
    const Layout cache_layout = Layout::Contiguous({kv_heads, cache_len, d});
    Tensor out(Layout::Contiguous({seq, heads, d}), dtype),
        q(Layout::Contiguous({heads, seq, d}), dtype),
        k(Layout::Contiguous({kv_heads, seq, d}), dtype),
        v(Layout::Contiguous({kv_heads, seq, d}), dtype), k_cache(cache_layout, dtype),
        v_cache(cache_layout, dtype);
    for (Tensor* t : {&q, &k, &v, &k_cache, &v_cache}) t->FillRandom(&random, false);
    // The keys the attention reads: the cache's first pos, then the new ones.
    std::vector<std::vector<std::vector<double>>> keys(kv_heads), values(kv_heads);
    for (size_t h = 0; h < kv_heads; ++h) {
      for (size_t p = 0; p < pos + seq; ++p) {
        std::vector<double> key(d), value(d);
        for (size_t i = 0; i < d; ++i) {
          key[i] =
              p < pos ? k_cache.At((h * cache_len + p) * d + i) : k.At((h * seq + p - pos) * d + i);
          value[i] =
              p < pos ? v_cache.At((h * cache_len + p) * d + i) : v.At((h * seq + p - pos) * d + i);
        }
        keys[h].push_back(key);
        values[h].push_back(value);
      }
    }
    for (Tensor* t : {&q, &k, &v, &k_cache, &v_cache}) t->Upload(stream);
    infiniopAttentionDescriptor_t desc = nullptr;
    ASSERT_EQ(infiniopCreateAttentionDescriptor(handle, &desc, out.desc(), q.desc(), k.desc(),
                                                v.desc(), k_cache.desc(), v_cache.desc(), pos),
              INFINI_STATUS_SUCCESS);
    size_t workspace = 0;
    ASSERT_EQ(infiniopGetAttentionWorkspaceSize(desc, &workspace), INFINI_STATUS_SUCCESS);
    DeviceBuffer buffer(workspace);
    ASSERT_EQ(infiniopAttention(desc, buffer.data(), workspace, out.data(), q.data(), k.data(),
                                v.data(), k_cache.data(), v_cache.data(), stream),
              INFINI_STATUS_SUCCESS);
    out.Download(stream);
    k_cache.Download(stream);
    ASSERT_EQ(infinirtStreamSynchronize(stream), infinirtSuccess);
    EXPECT_EQ(infiniopDestroyAttentionDescriptor(desc), INFINI_STATUS_SUCCESS);
    for (size_t h = 0; h < kv_heads; ++h) {
      for (size_t p = pos; p < pos + seq; ++p) {
        for (size_t i = 0; i < d; ++i) {
          EXPECT_EQ(k_cache.At((h * cache_len + p) * d + i), keys[h][p][i]) << "cache row " << p;
        }
      }
    }
    const double scale = 1 / std::sqrt(static_cast<double>(d));
    for (size_t t = 0; t < seq; ++t) {
      for (size_t h = 0; h < heads; ++h) {
        std::vector<double> query(d);
        for (size_t i = 0; i < d; ++i) query[i] = q.At((h * seq + t) * d + i);
        const size_t kh = h / (heads / kv_heads);
        const std::vector<double> expected =
            NaiveAttention(query, keys[kh], values[kh], pos + t + 1, scale, 0, 0);
        for (size_t i = 0; i < d; ++i) {
          const size_t index = (t * heads + h) * d + i;
          ExpectAttentionClose(dtype, Rounded(dtype, expected[i]), out.At(index), index);
        }
      }
    }
    // A cache too short for pos + seq_len is refused.
    Tensor short_cache(Layout::Contiguous({kv_heads, pos + seq - 1, d}), dtype);
    infiniopAttentionDescriptor_t refused = nullptr;
    EXPECT_EQ(
        infiniopCreateAttentionDescriptor(handle, &refused, out.desc(), q.desc(), k.desc(),
                                          v.desc(), short_cache.desc(), short_cache.desc(), pos),
        INFINI_STATUS_BAD_PARAM);
  }
}

TEST_F(InfiniopTest, AttentionOperatorsRefuseWhatDoesNotFit) {
  const Layout cache = Layout::Contiguous({3, 2, 4, 8});
  Tensor k_cache(cache, INFINI_DTYPE_F32), v_cache(cache, INFINI_DTYPE_F32),
      k_cache16(cache, INFINI_DTYPE_F16), q(Layout::Contiguous({2, 4, 8}), INFINI_DTYPE_F32),
      q3heads(Layout::Contiguous({2, 3, 8}), INFINI_DTYPE_F32),
      q_strided(Layout{{2, 4, 8}, {64, 16, 2}}, INFINI_DTYPE_F32),
      tables(Layout::Contiguous({2, 2}), INFINI_DTYPE_I64),
      lengths(Layout::Contiguous({2}), INFINI_DTYPE_I64),
      float_lengths(Layout::Contiguous({2}), INFINI_DTYPE_F32),
      cum(Layout::Contiguous({2}), INFINI_DTYPE_I64),
      slopes64(Layout::Contiguous({4}), INFINI_DTYPE_F64);
  InfiniopDescriptor* desc = nullptr;
  auto decode = [&](const Tensor& query, const Tensor& kc, const Tensor& lens,
                    const Tensor* alibi) {
    return infiniopCreatePagedAttentionDescriptor(
        handle, &desc, query.desc(), query.desc(), kc.desc(), v_cache.desc(), tables.desc(),
        lens.desc(), alibi ? alibi->desc() : nullptr, 1.0f);
  };
  EXPECT_EQ(decode(q, k_cache16, lengths, nullptr), INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(decode(q, k_cache, float_lengths, nullptr), INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(decode(q3heads, k_cache, lengths, nullptr), INFINI_STATUS_BAD_TENSOR_SHAPE);
  EXPECT_EQ(decode(q_strided, k_cache, lengths, nullptr), INFINI_STATUS_BAD_TENSOR_STRIDES);
  EXPECT_EQ(decode(q, k_cache, lengths, &slopes64), INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(infiniopCreatePagedAttentionPrefillDescriptor(
                handle, &desc, q.desc(), q.desc(), k_cache.desc(), v_cache.desc(), tables.desc(),
                lengths.desc(), cum.desc(), nullptr, 1.0f),
            INFINI_STATUS_BAD_PARAM);  // cum_seq_lens_q has seqs + 1 entries
  Tensor k(Layout::Contiguous({1, 3, 5, 8}), INFINI_DTYPE_F32),
      q4(Layout::Contiguous({1, 4, 2, 8}), INFINI_DTYPE_F32),
      total(Layout::Contiguous({1}), INFINI_DTYPE_I64),
      total32(Layout::Contiguous({1}), INFINI_DTYPE_I32);
  EXPECT_EQ(infiniopCreateFlashAttentionDescriptor(handle, &desc, q4.desc(), q4.desc(), k.desc(),
                                                   k.desc(), total.desc(), 1.0f, 0),
            INFINI_STATUS_BAD_TENSOR_SHAPE);  // 4 heads over 3 kv heads
  EXPECT_EQ(infiniopCreateFlashAttentionDescriptor(handle, &desc, q4.desc(), q4.desc(), q4.desc(),
                                                   q4.desc(), total32.desc(), 1.0f, 0),
            INFINI_STATUS_BAD_TENSOR_DTYPE);
  EXPECT_EQ(desc, nullptr);
}

}  // namespace
}  // namespace infiniop_test
