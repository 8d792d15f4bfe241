/*
 * The InfiniOP backend ABI: what an operator backend, libinfiniop_<plugin name>.so, exports for
 * libinfiniop.so. A backend serves one device type; it is found beside the runtime's plugins
 * (infinirtOpenExtensionLibrary) and computes with the public InfiniRT API only.
 *
 * libinfiniop validates every descriptor (shapes, strides, dtypes, with InfiniCore's status
 * codes) before a backend sees it: a backend's Create gets tensors that passed the operator's
 * rules, and answers INFINI_STATUS_NOT_IMPLEMENTED for an operator, or a combination of dtypes
 * and layouts, it does not implement. Valid C99 and C++17.
 *
 * Compatibility: the table starts with its size and ABI version; libinfiniop refuses a backend of
 * another major version and reads only the fields the backend's struct_size covers.
 */
#ifndef INFINIOP_BACKEND_H_
#define INFINIOP_BACKEND_H_

#include <stddef.h>
#ifndef __cplusplus
#include <stdbool.h>
#endif

#include "infinicore.h"
#include "infiniop/operator_types.h"
#include "infinirt.h"

#define INFINIOP_BACKEND_ABI_MAJOR 1
/* 1.1: Describe. 1.2: operators 9 to 28, the create parameters eps, axis, dim, scale,
 * is_causal and pos, absent (INFINIOP_IN_OPTIONAL) tensors, outputs after inputs (Attention's
 * caches). 1.3: operators 29 to 32, the create parameters k, largest and sorted, the run
 * parameters norm, routed_scaling_factor and alpha_f64, outputs without descriptors
 * (INFINIOP_OUT_UNDESCRIBED). */
#define INFINIOP_BACKEND_ABI_MINOR 3

/* The symbol every backend exports: infiniopBackendGetTable, an infiniopBackendGetTableFn. */
#define INFINIOP_BACKEND_ENTRY_SYMBOL "infiniopBackendGetTable"

#ifdef __cplusplus
extern "C" {
#endif

/* The operators: the one list. Everything an operator's interface has comes from its entry:
 * its public header (include/infiniop/ops/<snake name>.h) and C entry points, their checks, the
 * backend ABI's operator numbers, the Python binding infinirt.ops.<snake name>, the support table
 * and the tests' probes.
 *
 *   X(Name, snake_name, number, workspace, tensors, create_scalars, call_scalars, summary)
 *
 * Name        the public API's (infiniopCreate<Name>Descriptor, infiniop<Name>, ...);
 * snake_name  its header's and Python function's name;
 * number      its infiniopOperator_t value (never reused);
 * workspace   INFINIOP_WORKSPACE: the call takes a workspace, whose size
 *             infiniopGet<Name>WorkspaceSize answers from the backend; INFINIOP_NO_WORKSPACE:
 *             neither (InfiniCore's Rearrange);
 * tensors     (INFINIOP_OUT(name, dtype, probe shape) INFINIOP_IN(...) ...): the descriptors
 *             Create takes and the buffers the call passes, in InfiniCore's order (outputs first
 *             but for Attention, whose caches, written, come last). dtype: DATA
 *             for the operator's data type, or the fixed type the operator takes (I8, I32, I64,
 *             F32);
 *             the probe shape is a small valid shape, in parentheses, the tests probe with;
 * create_scalars, call_scalars
 *             (INFINIOP_SCALAR(C type, name, default) ...): what Create and the call take after
 *             the tensors; each fills the field of its name in infiniopBackendCreateParams or
 *             infiniopBackendRunParams (below), and the default is the Python binding's;
 * summary     what it computes, for its header and its Python docstring.
 *
 *             INFINIOP_IN_OPTIONAL(...) is an input that may be absent: a NULL descriptor at
 *             Create, then a NULL buffer at the call (LayerNorm's bias); a backend sees it with
 *             dtype INFINI_DTYPE_INVALID and ndim 0;
 *             INFINIOP_OUT_UNDESCRIBED(name, dtype, rows_of, cols_of, shape) is an output Create
 *             takes no descriptor for (InfiniCore's Topksoftmax and Topkrouter): the call's
 *             buffer, never NULL, holds a contiguous [rows of tensor rows_of, call scalar cols_of]
 *             of the fixed dtype; a backend sees it with that dtype and ndim 0;
 *             INFINIOP_SCALAR_AS(type, name, default, field) is a scalar kept in the field
 *             `field` (its own name's field has another operator's type);
 *             INFINIOP_SCALAR_AGAIN(type, name), among a call's scalars, repeats Create's scalar
 *             of that name (InfiniCore's TopK): a call passing another value is refused
 *             (INFINI_STATUS_BAD_PARAM), and a backend reads the value Create was given.
 *             A scalar whose value its field cannot hold (a size_t in an int field) is refused
 *             with INFINI_STATUS_BAD_PARAM.
 *
 * A user defines INFINIOP_OUT, INFINIOP_IN and INFINIOP_SCALAR before expanding the list (each
 * element expands to what that use needs) and undefines them after. The other kinds are
 * INFINIOP_IN, INFINIOP_OUT and INFINIOP_SCALAR (of default 0) unless a use redefines them (and
 * restores them after, as infiniopOperatorTensorOptional does). */
#define INFINIOP_IN_OPTIONAL(name, dtype, shape) INFINIOP_IN(name, dtype, shape)
#define INFINIOP_OUT_UNDESCRIBED(name, dtype, rows_of, cols_of, shape) \
  INFINIOP_OUT(name, dtype, shape)
#define INFINIOP_SCALAR_AS(type, name, default_value, field) \
  INFINIOP_SCALAR(type, name, default_value)
#define INFINIOP_SCALAR_AGAIN(type, name) INFINIOP_SCALAR(type, name, 0)
#define INFINIOP_OPERATORS(X)                                                                      \
  X(Add, add, 0, INFINIOP_WORKSPACE,                                                               \
    (INFINIOP_OUT(c, DATA, (4, 8)) INFINIOP_IN(a, DATA, (4, 8)) INFINIOP_IN(b, DATA, (4, 8))), (), \
    (), "c = a + b, elementwise; a stride of 0 broadcasts an input along a dimension.")            \
  X(Mul, mul, 1, INFINIOP_WORKSPACE,                                                               \
    (INFINIOP_OUT(c, DATA, (4, 8)) INFINIOP_IN(a, DATA, (4, 8)) INFINIOP_IN(b, DATA, (4, 8))), (), \
    (), "c = a * b, elementwise; a stride of 0 broadcasts an input along a dimension.")            \
  X(Gemm, gemm, 2, INFINIOP_WORKSPACE,                                                             \
    (INFINIOP_OUT(c, DATA, (4, 8)) INFINIOP_IN(a, DATA, (4, 16)) INFINIOP_IN(b, DATA, (16, 8))),   \
    (), (INFINIOP_SCALAR(float, alpha, 1.0f) INFINIOP_SCALAR(float, beta, 0.0f)),                  \
    "c = alpha * a @ b + beta * c, for matrices [rows, cols] or batches [batch, rows, cols] (a "   \
    "batch of 1 is broadcast); transposes are expressed by strides.")                              \
  X(RMSNorm, rms_norm, 3, INFINIOP_WORKSPACE,                                                      \
    (INFINIOP_OUT(y, DATA, (4, 8)) INFINIOP_IN(x, DATA, (4, 8)) INFINIOP_IN(w, DATA, (8))),        \
    (INFINIOP_SCALAR(float, epsilon, 1e-6f)), (),                                                  \
    "y = x * w / sqrt(mean(x^2) + epsilon), over the last dimension.")                             \
  X(RoPE, rope, 4, INFINIOP_WORKSPACE,                                                             \
    (INFINIOP_OUT(y, DATA, (4, 2, 8)) INFINIOP_IN(x, DATA, (4, 2, 8))                              \
         INFINIOP_IN(pos_ids, I32, (4)) INFINIOP_IN(sin_table, DATA, (16, 4))                      \
             INFINIOP_IN(cos_table, DATA, (16, 4))),                                               \
    (INFINIOP_SCALAR(infiniopRoPEAlgo_t, algo, INFINIOP_ROPE_ALGO_GPT_J)), (),                     \
    "rotary position embedding of x [seq, heads, dhead] by the rows pos_ids picks from the sin "   \
    "and cos tables [positions, dhead / 2]; algo: GPT-J's pairs of neighbours or GPT-NeoX's "      \
    "pairs across the halves.")                                                                    \
  X(SwiGLU, swiglu, 5, INFINIOP_WORKSPACE,                                                         \
    (INFINIOP_OUT(c, DATA, (4, 8)) INFINIOP_IN(a, DATA, (4, 8)) INFINIOP_IN(b, DATA, (4, 8))), (), \
    (), "c = a * b * sigmoid(b), elementwise (a: the \"up\" projection, b: the gate).")            \
  X(CausalSoftmax, causal_softmax, 6, INFINIOP_WORKSPACE,                                          \
    (INFINIOP_OUT(y, DATA, (4, 8)) INFINIOP_IN(x, DATA, (4, 8))), (), (),                          \
    "softmax over the last dimension of x [(batch,) seq_len, total_seq_len], row i seeing the "    \
    "columns j <= total_seq_len - seq_len + i (the others become 0).")                             \
  X(Rearrange, rearrange, 7, INFINIOP_NO_WORKSPACE,                                                \
    (INFINIOP_OUT(dst, DATA, (4, 8)) INFINIOP_IN(src, DATA, (4, 8))), (), (),                      \
    "dst = src, element by element, for any strides of the same shape and dtype.")                 \
  X(RandomSample, random_sample, 8, INFINIOP_WORKSPACE,                                            \
    (INFINIOP_OUT(result, I64, ()) INFINIOP_IN(probs, DATA, (32))), (),                            \
    (INFINIOP_SCALAR(float, random_val, 0.0f) INFINIOP_SCALAR(float, topp, 1.0f)                   \
         INFINIOP_SCALAR(int, topk, 1) INFINIOP_SCALAR(float, temperature, 1.0f)),                 \
    "one index drawn from the scores probs [voc] after temperature, top-k and top-p, with the "    \
    "caller's random value in [0, 1); the arg max when random_val, topp or temperature is 0 or "   \
    "topk is 1. result is a 0-dimensional integer tensor.")                                        \
  X(Sub, sub, 9, INFINIOP_WORKSPACE,                                                               \
    (INFINIOP_OUT(c, DATA, (4, 8)) INFINIOP_IN(a, DATA, (4, 8)) INFINIOP_IN(b, DATA, (4, 8))), (), \
    (), "c = a - b, elementwise; a stride of 0 broadcasts an input along a dimension.")            \
  X(Relu, relu, 10, INFINIOP_WORKSPACE,                                                            \
    (INFINIOP_OUT(y, DATA, (4, 8)) INFINIOP_IN(x, DATA, (4, 8))), (), (),                          \
    "y = max(x, 0), elementwise (NaN stays NaN).")                                                 \
  X(Sigmoid, sigmoid, 11, INFINIOP_WORKSPACE,                                                      \
    (INFINIOP_OUT(y, DATA, (4, 8)) INFINIOP_IN(x, DATA, (4, 8))), (), (),                          \
    "y = 1 / (1 + exp(-x)), elementwise.")                                                         \
  X(Silu, silu, 12, INFINIOP_WORKSPACE,                                                            \
    (INFINIOP_OUT(output, DATA, (4, 8)) INFINIOP_IN(input, DATA, (4, 8))), (), (),                 \
    "output = input * sigmoid(input), elementwise.")                                               \
  X(Gelu, gelu, 13, INFINIOP_WORKSPACE,                                                            \
    (INFINIOP_OUT(output, DATA, (4, 8)) INFINIOP_IN(input, DATA, (4, 8))), (), (),                 \
    "output = input * (1 + erf(input / sqrt(2))) / 2, elementwise (the exact GELU).")              \
  X(GeluTanh, gelutanh, 14, INFINIOP_WORKSPACE,                                                    \
    (INFINIOP_OUT(y, DATA, (4, 8)) INFINIOP_IN(x, DATA, (4, 8))), (), (),                          \
    "y = x * (1 + tanh(sqrt(2 / pi) * (x + 0.044715 * x^3))) / 2, elementwise (GELU's tanh "       \
    "form).")                                                                                      \
  X(LayerNorm, layer_norm, 15, INFINIOP_WORKSPACE,                                                 \
    (INFINIOP_OUT(output, DATA, (4, 8)) INFINIOP_OUT(input_standardization, DATA, (4, 8))          \
         INFINIOP_OUT(input_std_deviation, DATA, (4)) INFINIOP_IN(input, DATA, (4, 8))             \
             INFINIOP_IN(weight, DATA, (8)) INFINIOP_IN_OPTIONAL(bias, DATA, (8))),                \
    (INFINIOP_SCALAR(float, eps, 1e-5f)), (),                                                      \
    "over the last dimension of input, mean and biased variance; input_standardization = (input "  \
    "- "                                                                                           \
    "mean) / sqrt(variance + eps), output = input_standardization * weight + bias (bias may be "   \
    "NULL: none), input_std_deviation [input's leading dimensions] = sqrt(variance + eps).")       \
  X(AddRMSNorm, add_rms_norm, 16, INFINIOP_WORKSPACE,                                              \
    (INFINIOP_OUT(y, DATA, (4, 8)) INFINIOP_OUT(residual_out, DATA, (4, 8)) INFINIOP_IN(           \
        a, DATA, (4, 8)) INFINIOP_IN(b, DATA, (4, 8)) INFINIOP_IN(weight, DATA, (8))),             \
    (INFINIOP_SCALAR(float, epsilon, 1e-6f)), (),                                                  \
    "residual_out = a + b; y = (a + b) * weight / sqrt(mean((a + b)^2) + epsilon), over the last " \
    "dimension (the sum kept unrounded for y).")                                                   \
  X(Softmax, softmax, 17, INFINIOP_WORKSPACE,                                                      \
    (INFINIOP_OUT(y, DATA, (4, 8)) INFINIOP_IN(x, DATA, (4, 8))),                                  \
    (INFINIOP_SCALAR(int, axis, -1)), (),                                                          \
    "y = exp(x - max) / sum(exp(x - max)) along axis (negative: counted from the end).")           \
  X(LogSoftmax, log_softmax, 18, INFINIOP_WORKSPACE,                                               \
    (INFINIOP_OUT(output, DATA, (4, 8)) INFINIOP_IN(input, DATA, (4, 8))),                         \
    (INFINIOP_SCALAR(int, dim, -1)), (),                                                           \
    "output = input - max - log(sum(exp(input - max))) along dim (negative: counted from the "     \
    "end).")                                                                                       \
  X(Embedding, embedding, 19, INFINIOP_NO_WORKSPACE,                                               \
    (INFINIOP_OUT(output, DATA, (4, 8)) INFINIOP_IN(input, I64, (4))                               \
         INFINIOP_IN(weight, DATA, (16, 8))),                                                      \
    (), (),                                                                                        \
    "output[..., :] = weight[input[...], :]: the rows of weight [vocab, dim] that the indices "    \
    "(I32 or I64, any shape) pick; output is input's shape + [dim]. A row whose index is outside " \
    "[0, vocab) is set to NaN.")                                                                   \
  X(PagedCaching, paged_caching, 20, INFINIOP_WORKSPACE,                                           \
    (INFINIOP_OUT(k_cache, DATA, (4, 2, 4, 8)) INFINIOP_OUT(v_cache, DATA, (4, 2, 4, 8))           \
         INFINIOP_IN(k, DATA, (3, 2, 8)) INFINIOP_IN(v, DATA, (3, 2, 8))                           \
             INFINIOP_IN(slot_mapping, I64, (3))),                                                 \
    (), (),                                                                                        \
    "writes token t's k and v [tokens, kv_heads, head_size] into the caches [blocks, kv_heads, "   \
    "block_size, head_size] at slot_mapping[t] = block * block_size + offset (I32 or I64; "        \
    "negative: padding, skipped).")                                                                \
  X(PagedAttention, paged_attention, 21, INFINIOP_WORKSPACE,                                       \
    (INFINIOP_OUT(out, DATA, (2, 4, 8)) INFINIOP_IN(q, DATA, (2, 4, 8))                            \
         INFINIOP_IN(k_cache, DATA, (4, 2, 4, 8)) INFINIOP_IN(v_cache, DATA, (4, 2, 4, 8))         \
             INFINIOP_IN(block_tables, I64, (2, 2)) INFINIOP_IN(seq_lens, I64, (2))                \
                 INFINIOP_IN_OPTIONAL(alibi_slopes, F32, (4))),                                    \
    (INFINIOP_SCALAR(float, scale, 1.0f)), (),                                                     \
    "decode attention: each sequence's one query q [seqs, heads, head_size] over its seq_lens[i] " \
    "cached keys and values, found through block_tables [seqs, max_blocks]; q head h reads kv "    \
    "head h / (heads / kv_heads); scores scaled by scale, plus alibi_slopes[h] * (j - seq_len + "  \
    "1) when given.")                                                                              \
  X(PagedAttentionPrefill, paged_attention_prefill, 22, INFINIOP_WORKSPACE,                        \
    (INFINIOP_OUT(out, DATA, (3, 4, 8)) INFINIOP_IN(q, DATA, (3, 4, 8))                            \
         INFINIOP_IN(k_cache, DATA, (4, 2, 4, 8)) INFINIOP_IN(v_cache, DATA, (4, 2, 4, 8))         \
             INFINIOP_IN(block_tables, I64, (2, 2)) INFINIOP_IN(seq_lens, I64, (2)) INFINIOP_IN(   \
                 cum_seq_lens_q, I64, (3)) INFINIOP_IN_OPTIONAL(alibi_slopes, F32, (4))),          \
    (INFINIOP_SCALAR(float, scale, 1.0f)), (),                                                     \
    "prefill attention over paged caches: sequence i's new queries, rows cum_seq_lens_q[i] to "    \
    "cum_seq_lens_q[i + 1] - 1 of q [tokens, heads, head_size], attend causally to its "           \
    "seq_lens[i] "                                                                                 \
    "cached keys (its new ones already written by PagedCaching): query t sees keys 0 to "          \
    "seq_len - q_len + t.")                                                                        \
  X(FlashAttention, flash_attention, 23, INFINIOP_WORKSPACE,                                       \
    (INFINIOP_OUT(out, DATA, (1, 4, 3, 8)) INFINIOP_IN(q, DATA, (1, 4, 3, 8))                      \
         INFINIOP_IN(k, DATA, (1, 2, 5, 8)) INFINIOP_IN(v, DATA, (1, 2, 5, 8))                     \
             INFINIOP_IN(total_kv_len, I64, (1))),                                                 \
    (INFINIOP_SCALAR(float, scale, 1.0f) INFINIOP_SCALAR(char, is_causal, 0)), (),                 \
    "softmax(scale * q k^T) v for q, out [batch, heads, q_len, head_size] and k, v [batch, "       \
    "kv_heads, kv_len, head_size]: batch b sees its first total_kv_len[b] keys (I64), causally "   \
    "(query i sees keys up to total_kv_len - q_len + i) when is_causal; a query that sees no key " \
    "gives 0.")                                                                                    \
  X(SiluAndMul, silu_and_mul, 24, INFINIOP_WORKSPACE,                                              \
    (INFINIOP_OUT(y, DATA, (4, 8)) INFINIOP_IN(x, DATA, (4, 16))), (), (),                         \
    "y = silu(x[..., :d]) * x[..., d:] for x [..., 2d] and y [..., d] (the gate is the first "     \
    "half).")                                                                                      \
  X(KVCaching, kv_caching, 25, INFINIOP_WORKSPACE,                                                 \
    (INFINIOP_OUT(k_cache, DATA, (2, 2, 8, 8)) INFINIOP_OUT(v_cache, DATA, (2, 2, 8, 8))           \
         INFINIOP_IN(k, DATA, (2, 2, 3, 8)) INFINIOP_IN(v, DATA, (2, 2, 3, 8))                     \
             INFINIOP_IN(past_kv_lengths, I64, (2))),                                              \
    (), (),                                                                                        \
    "cache[b, h, past_kv_lengths[b] + s, :] = k[b, h, s, :] (and v's) for caches [batch, "         \
    "kv_heads, max_len, head_size] and k, v [batch, kv_heads, seq_len, head_size]; a batch "       \
    "whose past length leaves no room is not written.")                                            \
  X(Attention, attention, 26, INFINIOP_WORKSPACE,                                                  \
    (INFINIOP_OUT(out, DATA, (3, 4, 8)) INFINIOP_IN(q, DATA, (4, 3, 8))                            \
         INFINIOP_IN(k, DATA, (2, 3, 8)) INFINIOP_IN(v, DATA, (2, 3, 8))                           \
             INFINIOP_OUT(k_cache, DATA, (2, 8, 8)) INFINIOP_OUT(v_cache, DATA, (2, 8, 8))),       \
    (INFINIOP_SCALAR(size_t, pos, 0)), (),                                                         \
    "writes k and v [kv_heads, seq_len, head_size] into the caches [kv_heads, >= pos + seq_len, "  \
    "head_size] at pos, then out [seq_len, heads, head_size] = softmax(q k^T / sqrt(head_size)) "  \
    "v "                                                                                           \
    "for q [heads, seq_len, head_size] over the pos + seq_len cached keys, causally (query i "     \
    "sees "                                                                                        \
    "keys up to pos + i); q head h reads kv head h / (heads / kv_heads).")                         \
  X(DequantizeAWQ, dequantize_awq, 27, INFINIOP_WORKSPACE,                                         \
    (INFINIOP_OUT(out, DATA, (32, 16)) INFINIOP_IN(qweight, I32, (32, 2))                          \
         INFINIOP_IN(scales, DATA, (1, 16)) INFINIOP_IN(zeros, I32, (1, 2))),                      \
    (), (),                                                                                        \
    "out [K, N] = (q - z) * s from AWQ's 4-bit packing: qweight [K, N / 8] and zeros [K / G, N / " \
    "8] "                                                                                          \
    "hold eight unsigned nibbles per I32, logical column j of a pack in nibble [0, 4, 1, 5, 2, "   \
    "6, "                                                                                          \
    "3, 7][j]; scales [K / G, N]; G = K / scales' rows.")                                          \
  X(I8Gemm, i8_gemm, 28, INFINIOP_WORKSPACE,                                                       \
    (INFINIOP_OUT(out, DATA, (4, 8)) INFINIOP_IN_OPTIONAL(bias, DATA, (8))                         \
         INFINIOP_IN(x, I8, (4, 16)) INFINIOP_IN(x_scale, F32, (4))                                \
             INFINIOP_IN(weights, I8, (16, 8)) INFINIOP_IN(weights_scale, F32, (8))),              \
    (), (),                                                                                        \
    "out [M, N] = (x [M, K] @ weights [K, N], summed in int32) * x_scale[m] * weights_scale[n] "   \
    "+ bias[n] (bias may be NULL): int8 weights and activations with per-token and per-channel "   \
    "scales.")                                                                                     \
  X(TopK, topk, 29, INFINIOP_WORKSPACE,                                                            \
    (INFINIOP_OUT(values_output, DATA, (4, 2)) INFINIOP_OUT(indices_output, I64, (4, 2))           \
         INFINIOP_IN(input, DATA, (4, 8))),                                                        \
    (INFINIOP_SCALAR(size_t, k, 2) INFINIOP_SCALAR(size_t, dim, 1)                                 \
         INFINIOP_SCALAR(bool, largest, true) INFINIOP_SCALAR(bool, sorted, true)),                \
    (INFINIOP_SCALAR_AGAIN(size_t, k) INFINIOP_SCALAR_AGAIN(size_t, dim)                           \
         INFINIOP_SCALAR_AGAIN(bool, largest) INFINIOP_SCALAR_AGAIN(bool, sorted)),                \
    "the k largest (largest) or smallest elements of input along dim and their indices (I32 or "   \
    "I64), in order from the first (always, sorted or not); equal elements by index, NaN above "   \
    "every number. The call repeats Create's scalars.")                                            \
  X(Topksoftmax, topksoftmax, 30, INFINIOP_WORKSPACE,                                              \
    (INFINIOP_OUT_UNDESCRIBED(values, F32, x, topk, (4, 2))                                        \
         INFINIOP_OUT_UNDESCRIBED(indices, I32, x, topk, (4, 2)) INFINIOP_IN(x, DATA, (4, 8))),    \
    (), (INFINIOP_SCALAR(size_t, topk, 2) INFINIOP_SCALAR(int, norm, 0)),                          \
    "MoE routing: per row of x [tokens, experts], the topk (at most 32) largest of softmax(row), " \
    "largest first, into values and indices [tokens, topk] (F32, I32; no descriptors); norm: "     \
    "divided by their sum.")                                                                       \
  X(Topkrouter, topkrouter, 31, INFINIOP_WORKSPACE,                                                \
    (INFINIOP_OUT_UNDESCRIBED(values, F32, x, topk, (2, 8))                                        \
         INFINIOP_OUT_UNDESCRIBED(indices, I32, x, topk, (2, 8)) INFINIOP_IN(x, DATA, (2, 64))     \
             INFINIOP_IN(correction_bias, F32, (64))),                                             \
    (), (INFINIOP_SCALAR(float, routed_scaling_factor, 1.0f) INFINIOP_SCALAR(size_t, topk, 8)),    \
    "DeepSeek-V3's grouped routing of x [tokens, experts]: s = sigmoid(x), biased b = s + "        \
    "correction_bias; 8 groups of experts scored by the sum of their two largest b, the 4 best "   \
    "kept (b of the others taken as 0); the topk largest b, largest first, give indices and "      \
    "values = routed_scaling_factor * s / (sum of the chosen s + 1e-20) [tokens, topk] (I32, "     \
    "F32; no descriptors).")                                                                       \
  X(MulScalar, mul_scalar, 32, INFINIOP_WORKSPACE,                                                 \
    (INFINIOP_OUT(output, DATA, (4, 8)) INFINIOP_IN(input, DATA, (4, 8))), (),                     \
    (INFINIOP_SCALAR_AS(double, alpha, 1.0, alpha_f64)),                                           \
    "output = input * alpha, elementwise (alpha rounded to float for F16, BF16 and F32).")

/* Expands a parenthesised sequence of the list: INFINIOP_EXPAND tensors. */
#define INFINIOP_EXPAND(...) __VA_ARGS__
/* An entry's workspace rule, as a value. */
#define INFINIOP_WORKSPACE 1
#define INFINIOP_NO_WORKSPACE 0

#define INFINIOP_OPERATOR_ENUMERATOR_(name, snake, number, ...) INFINIOP_OPERATOR_##name = number,
typedef enum INFINIRT_ENUM_BASE {
  INFINIOP_OPERATORS(INFINIOP_OPERATOR_ENUMERATOR_) INFINIOP_OPERATOR_COUNT
} infiniopOperator_t;
#undef INFINIOP_OPERATOR_ENUMERATOR_

/* The tensors an operator takes, outputs first; 0 for a value that is no operator. */
static inline size_t infiniopOperatorTensorCount(infiniopOperator_t op) {
  switch (op) {
#define INFINIOP_OUT(name, dtype, shape) +1
#define INFINIOP_IN(name, dtype, shape) +1
#define INFINIOP_OPERATOR_TENSORS_(name, snake, number, workspace, tensors, ...) \
  case INFINIOP_OPERATOR_##name:                                                 \
    return 0 INFINIOP_EXPAND tensors;
    INFINIOP_OPERATORS(INFINIOP_OPERATOR_TENSORS_)
#undef INFINIOP_OPERATOR_TENSORS_
#undef INFINIOP_IN
#undef INFINIOP_OUT
    default:
      return 0;
  }
}

/* How many scalars an operator's call takes (infiniopBackendRunParams' fields it reads); 0 for a
 * value that is no operator. */
static inline size_t infiniopOperatorCallScalarCount(infiniopOperator_t op) {
  switch (op) {
#define INFINIOP_SCALAR(type, name, default_value) +1
#define INFINIOP_OPERATOR_CALL_SCALARS_(name, snake, number, workspace, tensors, create, call, \
                                        ...)                                                   \
  case INFINIOP_OPERATOR_##name:                                                               \
    return 0 INFINIOP_EXPAND call;
    INFINIOP_OPERATORS(INFINIOP_OPERATOR_CALL_SCALARS_)
#undef INFINIOP_OPERATOR_CALL_SCALARS_
#undef INFINIOP_SCALAR
    default:
      return 0;
  }
}

/* Whether the operator's index-th tensor (outputs first) may be absent (INFINIOP_IN_OPTIONAL). */
static inline int infiniopOperatorTensorOptional(infiniopOperator_t op, size_t index) {
  const int* optional = NULL;
  size_t count = 0;
  switch (op) {
#undef INFINIOP_IN_OPTIONAL
#define INFINIOP_OUT(name, dtype, shape) 0,
#define INFINIOP_IN(name, dtype, shape) 0,
#define INFINIOP_IN_OPTIONAL(name, dtype, shape) 1,
#define INFINIOP_OPERATOR_OPTIONAL_(name, snake, number, workspace, tensors, ...) \
  case INFINIOP_OPERATOR_##name: {                                                \
    static const int flags[] = {INFINIOP_EXPAND tensors};                         \
    optional = flags;                                                             \
    count = sizeof flags / sizeof flags[0];                                       \
    break;                                                                        \
  }
    INFINIOP_OPERATORS(INFINIOP_OPERATOR_OPTIONAL_)
#undef INFINIOP_OPERATOR_OPTIONAL_
#undef INFINIOP_IN_OPTIONAL
#undef INFINIOP_IN
#undef INFINIOP_OUT
#define INFINIOP_IN_OPTIONAL(name, dtype, shape) INFINIOP_IN(name, dtype, shape)
    default:
      break;
  }
  return optional != NULL && index < count ? optional[index] : 0;
}

/* The dtype of the operator's index-th tensor (outputs first) when Create takes no descriptor for
 * it (INFINIOP_OUT_UNDESCRIBED); INFINI_DTYPE_INVALID for a tensor with a descriptor. */
static inline infiniDtype_t infiniopOperatorUndescribedDtype(infiniopOperator_t op, size_t index) {
  const infiniDtype_t* dtypes = NULL;
  size_t count = 0;
  switch (op) {
#undef INFINIOP_OUT_UNDESCRIBED
#define INFINIOP_OUT(name, dtype, shape) INFINI_DTYPE_INVALID,
#define INFINIOP_IN(name, dtype, shape) INFINI_DTYPE_INVALID,
#define INFINIOP_OUT_UNDESCRIBED(name, dtype, rows_of, cols_of, shape) INFINI_DTYPE_##dtype,
#define INFINIOP_OPERATOR_UNDESCRIBED_(name, snake, number, workspace, tensors, ...) \
  case INFINIOP_OPERATOR_##name: {                                                   \
    static const infiniDtype_t fixed[] = {INFINIOP_EXPAND tensors};                  \
    dtypes = fixed;                                                                  \
    count = sizeof fixed / sizeof fixed[0];                                          \
    break;                                                                           \
  }
    INFINIOP_OPERATORS(INFINIOP_OPERATOR_UNDESCRIBED_)
#undef INFINIOP_OPERATOR_UNDESCRIBED_
#undef INFINIOP_OUT_UNDESCRIBED
#undef INFINIOP_IN
#undef INFINIOP_OUT
#define INFINIOP_OUT_UNDESCRIBED(name, dtype, rows_of, cols_of, shape) \
  INFINIOP_OUT(name, dtype, shape)
    default:
      break;
  }
  return dtypes != NULL && index < count ? dtypes[index] : INFINI_DTYPE_INVALID;
}

/* A tensor as a backend sees it: valid for the call it is passed to (copy what is kept). Its
 * buffer points at element (0, ..., 0), whatever the signs of the strides, and is aligned to its
 * element size. An output either is one of the inputs (in place, same layout) or overlaps none. */
typedef struct infiniopBackendTensor {
  infiniDtype_t dtype;
  size_t ndim;
  const size_t* shape;      /* ndim entries */
  const ptrdiff_t* strides; /* ndim entries, in elements */
} infiniopBackendTensor;

/* Parameters fixed when a descriptor is made, by the names of the operators' scalars (ABI 1.2
 * appended eps, axis, dim, scale, is_causal and pos). */
typedef struct infiniopBackendCreateParams {
  float epsilon;  /* RMSNorm's, AddRMSNorm's */
  int algo;       /* RoPE's infiniopRoPEAlgo_t */
  float eps;      /* LayerNorm's */
  int axis;       /* Softmax's */
  int dim;        /* LogSoftmax's */
  float scale;    /* the attention operators' */
  char is_causal; /* FlashAttention's */
  size_t pos;     /* Attention's */
  size_t k;       /* TopK's (its dim is in dim) */
  bool largest;   /* TopK's */
  bool sorted;    /* TopK's */
} infiniopBackendCreateParams;

/* Parameters of each call, by the names of the operators' scalars (ABI 1.3 appended norm,
 * routed_scaling_factor and alpha_f64). */
typedef struct infiniopBackendRunParams {
  float alpha; /* Gemm's */
  float beta;  /* Gemm's */
  float random_val;
  float topp;
  int topk; /* RandomSample's, Topksoftmax's, Topkrouter's */
  float temperature;
  int norm;                    /* Topksoftmax's */
  float routed_scaling_factor; /* Topkrouter's */
  double alpha_f64;            /* MulScalar's alpha */
} infiniopBackendRunParams;

/* What a backend keeps for one descriptor. */
typedef struct infiniopBackendKernel* infiniopBackendKernel_t;

typedef struct infiniopBackendTable {
  size_t struct_size; /* sizeof(infiniopBackendTable) as the backend was built */
  int abi_major;      /* INFINIOP_BACKEND_ABI_MAJOR */
  int abi_minor;
  const char* name;           /* the runtime plugin's name: "cpu", "nvidia" */
  infiniDevice_t device_type; /* the device type it serves */

  /* Called once, after loading. On failure, why (a NUL-terminated line, at most why_size bytes
   * with the NUL) says what is missing: it is shown in the backend listing. */
  infiniStatus_t (*Initialize)(char* why, size_t why_size);

  /* A kernel for `op` on the device_index-th device of the type, for the tensors in the order
   * of the operator's public Create call (outputs first). *workspace_size: the bytes of
   * workspace each call needs. */
  infiniStatus_t (*Create)(infiniopOperator_t op, int device_index,
                           const infiniopBackendTensor* tensors, size_t tensor_count,
                           const infiniopBackendCreateParams* params,
                           infiniopBackendKernel_t* kernel, size_t* workspace_size);

  /* Queues the kernel's work on `stream` (of the kernel's device) for the buffers in the order
   * of the operator's public call (outputs first); returns once it is queued. */
  infiniStatus_t (*Run)(infiniopBackendKernel_t kernel, void* workspace, size_t workspace_size,
                        void* const* buffers, size_t buffer_count,
                        const infiniopBackendRunParams* params, infinirtStream_t stream);

  /* Releases the kernel. Work it queued may still be pending: the backend keeps what that work
   * needs until it is done. Work captured into a graph is the exception: the caller keeps the
   * descriptor until the graphs that captured it are destroyed, and the backend may release what
   * such work needs here. */
  infiniStatus_t (*Destroy)(infiniopBackendKernel_t kernel);

  /* ABI 1.1. What Create would answer for these tensors on a device where every library the
   * backend uses is present, without a device: SUCCESS, with how it computes them in how (a
   * NUL-terminated line of at most how_size bytes: "OpenBLAS cblas_sgemm", "CUDA kernels"), or
   * the status Create would refuse them with. The operator support table in the documentation is
   * generated from it. NULL: not described. */
  infiniStatus_t (*Describe)(infiniopOperator_t op, const infiniopBackendTensor* tensors,
                             size_t tensor_count, const infiniopBackendCreateParams* params,
                             char* how, size_t how_size);
} infiniopBackendTable;

typedef const infiniopBackendTable* (*infiniopBackendGetTableFn)(void);

#ifdef __cplusplus
} /* extern "C" */
#endif

#endif /* INFINIOP_BACKEND_H_ */
