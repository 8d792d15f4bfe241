"""InfiniOP's operators from Python, on NumPy arrays (host memory of the CPU device), against
NumPy's own answers."""

import math
import threading

import numpy as np
import pytest

import infinirt
from infinirt import _c_api, ops

rng = np.random.default_rng(3)


def rand(*shape):
    return rng.standard_normal(shape).astype(np.float32)


def test_every_operator_of_infiniop_has_its_python_function():
    # Named as InfiniCore's header for it: snake case of the C name (RMSNorm: rms_norm).
    for name, snake, *_ in _c_api.OPERATORS:
        assert snake.replace("_", "") == name.lower(), name
        assert callable(getattr(ops, snake)), name
        assert getattr(ops, snake).__name__ == snake


def test_gemm_against_numpy():
    a, b = rand(64, 48), rand(48, 32)
    c = np.zeros((64, 32), np.float32)
    ops.gemm(c, a, b)
    infinirt.synchronize()
    np.testing.assert_allclose(c, a @ b, rtol=1e-4, atol=1e-4)
    before = c.copy()
    ops.gemm(c, a, b, alpha=2.0, beta=1.0)
    infinirt.synchronize()
    np.testing.assert_allclose(c, 2 * (a @ b) + before, rtol=1e-4, atol=1e-4)


def test_elementwise_operators():
    a, b = rand(8, 16), rand(8, 16)
    out = np.empty_like(a)
    ops.add(out, a, b)
    infinirt.synchronize()
    np.testing.assert_allclose(out, a + b, rtol=1e-6)
    ops.mul(out, a, b)
    infinirt.synchronize()
    np.testing.assert_allclose(out, a * b, rtol=1e-6)
    ops.swiglu(out, a, b)
    infinirt.synchronize()
    np.testing.assert_allclose(out, a * b / (1 + np.exp(-b)), rtol=1e-5, atol=1e-6)


def test_sub_and_the_activations_against_numpy():
    a, b = rand(8, 16) * 4, rand(8, 16)
    out = np.empty_like(a)
    ops.sub(out, a, b)
    infinirt.synchronize()
    np.testing.assert_allclose(out, a - b, rtol=1e-6)
    x = a.astype(np.float64)
    erf = np.vectorize(math.erf)
    expected = {
        "relu": np.maximum(x, 0),
        "sigmoid": 1 / (1 + np.exp(-x)),
        "silu": x / (1 + np.exp(-x)),
        "gelu": 0.5 * x * (1 + erf(x / math.sqrt(2))),
        "gelutanh": 0.5 * x * (1 + np.tanh(math.sqrt(2 / math.pi) * (x + 0.044715 * x**3))),
    }
    for name, reference in expected.items():
        getattr(ops, name)(out, a)
        infinirt.synchronize()
        np.testing.assert_allclose(out, reference, rtol=1e-5, atol=1e-6, err_msg=name)


def test_norms_softmax_and_embedding_against_numpy():
    x, w, bias = rand(6, 40) + 2, rand(40), rand(40)
    mean = x.mean(-1, keepdims=True)
    std = np.sqrt(x.var(-1, keepdims=True) + 1e-5)
    out, standardized = np.empty_like(x), np.empty_like(x)
    deviation = np.empty(6, np.float32)
    for b in (bias, None):  # bias may be absent
        ops.layer_norm(out, standardized, deviation, x, w, b, eps=1e-5)
        infinirt.synchronize()
        expected = (x - mean) / std * w + (0 if b is None else b)
        np.testing.assert_allclose(out, expected, rtol=1e-4, atol=1e-5)
        np.testing.assert_allclose(deviation, std[:, 0], rtol=1e-5)
    a, residual = rand(6, 40), np.empty_like(x)
    ops.add_rms_norm(out, residual, a, x, w)
    infinirt.synchronize()
    s = a + x
    np.testing.assert_allclose(residual, s, rtol=1e-6)
    np.testing.assert_allclose(out, s * w / np.sqrt((s * s).mean(-1, keepdims=True) + 1e-6),
                               rtol=1e-5, atol=1e-6)
    for axis in (0, 1, -1):
        ops.softmax(out, x, axis=axis)
        ops.log_softmax(standardized, x, dim=axis)
        infinirt.synchronize()
        shifted = x - x.max(axis, keepdims=True)
        total = np.exp(shifted).sum(axis, keepdims=True)
        np.testing.assert_allclose(out, np.exp(shifted) / total, rtol=1e-5, atol=1e-7)
        np.testing.assert_allclose(standardized, shifted - np.log(total), rtol=1e-5, atol=1e-6)
    table, indices = rand(10, 8), np.array([[3, 0], [9, 3]], np.int64)
    rows = np.empty((2, 2, 8), np.float32)
    ops.embedding(rows, indices, table)
    infinirt.synchronize()
    np.testing.assert_array_equal(rows, table[indices])
    with pytest.raises(TypeError):
        ops.layer_norm(out, standardized, deviation, None, w, bias)  # only bias may be None


def naive_attention(q, k, v, scale, visible):
    """softmax(scale * q k^T) v over the first visible[i] keys of each query row i."""
    scores = scale * q @ k.T
    for i, count in enumerate(visible):
        scores[i, count:] = -np.inf
    scores = np.exp(scores - scores.max(-1, keepdims=True))
    return (scores / scores.sum(-1, keepdims=True)) @ v


def test_flash_and_paged_attention_against_numpy():
    heads, kv_heads, q_len, kv_len, d = 4, 2, 3, 9, 8
    q = rand(1, heads, q_len, d)
    k, v = rand(1, kv_heads, kv_len, d), rand(1, kv_heads, kv_len, d)
    out = np.empty_like(q)
    ops.flash_attention(out, q, k, v, np.array([7], np.int64), scale=0.5, is_causal=1)
    infinirt.synchronize()
    for h in range(heads):
        g = h // (heads // kv_heads)
        visible = [7 - q_len + i + 1 for i in range(q_len)]  # causal, total_kv_len 7
        expected = naive_attention(q[0, h], k[0, g], v[0, g], 0.5, visible)
        np.testing.assert_allclose(out[0, h], expected, rtol=1e-5, atol=1e-6)
    # The same keys in a paged cache (blocks of 4, the table in reverse), then one decode query.
    blocks, block_size = 3, 4
    k_cache = np.zeros((blocks, kv_heads, block_size, d), np.float32)
    v_cache = np.zeros_like(k_cache)
    table = np.array([[2, 1, 0]], np.int64)
    slots = np.array([table[0, p // block_size] * block_size + p % block_size
                      for p in range(kv_len)], np.int64)
    ops.paged_caching(k_cache, v_cache, k[0].transpose(1, 0, 2), v[0].transpose(1, 0, 2), slots)
    query = rand(1, heads, d)
    decoded = np.empty_like(query)
    ops.paged_attention(decoded, query, k_cache, v_cache, table, np.array([kv_len], np.int64),
                        None, scale=0.5)  # no ALiBi slopes
    infinirt.synchronize()
    for h in range(heads):
        g = h // (heads // kv_heads)
        expected = naive_attention(query[0, h][None], k[0, g], v[0, g], 0.5, [kv_len])[0]
        np.testing.assert_allclose(decoded[0, h], expected, rtol=1e-5, atol=1e-6)


def test_rms_norm_and_causal_softmax():
    x, w = rand(4, 64), rand(64)
    y = np.empty_like(x)
    ops.rms_norm(y, x, w, epsilon=1e-5)
    infinirt.synchronize()
    np.testing.assert_allclose(y, x / np.sqrt((x * x).mean(-1, keepdims=True) + 1e-5) * w,
                               rtol=1e-5, atol=1e-6)
    scores = rand(2, 4, 4)
    probabilities = np.empty_like(scores)
    ops.causal_softmax(probabilities, scores)
    infinirt.synchronize()
    masked = np.where(np.tril(np.ones((4, 4), bool)), scores, -np.inf)
    expected = np.exp(masked - masked.max(-1, keepdims=True))
    expected /= expected.sum(-1, keepdims=True)
    np.testing.assert_allclose(probabilities, expected, rtol=1e-5, atol=1e-6)


def test_rearrange_takes_the_strides_of_a_view():
    source = rand(16, 8)
    target = np.empty((8, 16), np.float32)
    ops.rearrange(target, source.T)
    infinirt.synchronize()
    assert (target == source.T).all()


def test_random_sample_with_top_k_1_takes_the_largest():
    probabilities = np.array([0.1, 0.2, 0.6, 0.1], dtype=np.float32)
    result = np.zeros((), dtype=np.int64)
    ops.random_sample(result, probabilities, random_val=0.5, topp=1.0, topk=1, temperature=1.0)
    infinirt.synchronize()
    assert int(result) == 2


def test_operators_run_in_stream_order():
    stream = infinirt.Stream()
    gate = threading.Event()
    stream.launch_host_func(lambda: gate.wait(10))
    a = rand(32, 32)
    out = np.zeros_like(a)
    ops.add(out, a, a, stream=stream)
    assert (out == 0).all()  # queued behind the held host function
    gate.set()
    stream.synchronize()
    np.testing.assert_allclose(out, 2 * a)
    with stream:  # the current stream is the default
        ops.mul(out, a, a)
    stream.synchronize()
    np.testing.assert_allclose(out, a * a, rtol=1e-6)


def test_the_arrays_live_until_the_work_is_done():
    stream = infinirt.Stream()
    gate = threading.Event()
    stream.launch_host_func(lambda: gate.wait(10))
    out = np.zeros(1 << 16, np.float32)
    ops.add(out, np.ones(1 << 16, np.float32), np.ones(1 << 16, np.float32), stream=stream)
    import gc

    gc.collect()  # the inputs have no other reference
    gate.set()
    stream.synchronize()
    assert (out == 2).all()


def rope_reference(x, pos_ids, sin_table, cos_table, algo):
    """Each pair of a head rotated by the angle of its token's position: pairs (2i, 2i+1) for
    GPT-J (algo 0), (i, i + dhead/2) for GPT-NeoX (algo 1)."""
    half = x.shape[-1] // 2
    sin = sin_table[pos_ids][:, None, :]  # [seq, 1, half]: the same for every head
    cos = cos_table[pos_ids][:, None, :]
    if algo == 0:
        first, second = x[..., 0::2], x[..., 1::2]
    else:
        first, second = x[..., :half], x[..., half:]
    rotated_first = first * cos - second * sin
    rotated_second = first * sin + second * cos
    y = np.empty_like(x)
    if algo == 0:
        y[..., 0::2], y[..., 1::2] = rotated_first, rotated_second
    else:
        y[..., :half], y[..., half:] = rotated_first, rotated_second
    return y


@pytest.mark.parametrize("algo", [0, 1])
def test_rope_against_numpy(algo):
    seq, nhead, dhead, table_len = 6, 3, 16, 10
    x = rand(seq, nhead, dhead)
    pos_ids = np.array([9, 0, 3, 3, 7, 1], dtype=np.int32)  # any order, repeats allowed
    angles = rng.uniform(-np.pi, np.pi, (table_len, dhead // 2)).astype(np.float32)
    sin_table, cos_table = np.sin(angles), np.cos(angles)
    y = np.zeros_like(x)
    ops.rope(y, x, pos_ids, sin_table, cos_table, algo=algo)
    infinirt.synchronize()
    expected = rope_reference(x, pos_ids, sin_table, cos_table, algo)
    np.testing.assert_allclose(y, expected, rtol=1e-5, atol=1e-6)
    # The two pairings differ: a test of one cannot pass for the other.
    other = rope_reference(x, pos_ids, sin_table, cos_table, 1 - algo)
    assert not np.allclose(y, other, atol=1e-3)


def test_bad_input_is_refused_clearly():
    a = rand(4, 4)
    with pytest.raises(ops.OpError) as error:
        ops.add(np.empty((4, 5), np.float32), a, a)
    assert error.value.name.startswith("INFINI_STATUS_BAD_TENSOR")
    readonly = np.empty((4, 4), np.float32)
    readonly.flags.writeable = False
    # Refused by InfiniRT (DLPack 1.0 says read-only), or by NumPy before 2.1, which cannot say it
    # through the original DLPack structure and so does not export a read-only array.
    with pytest.raises((ValueError, BufferError), match="read-only|readonly"):
        ops.add(readonly, a, a)
    with pytest.raises(TypeError, match="DLPack"):
        ops.add([1, 2], a, a)
    with pytest.raises(ValueError, match="dtype"):
        ops.add(np.empty(4, np.complex64), np.empty(4, np.complex64), np.empty(4, np.complex64))
    with pytest.raises(TypeError):
        ops.add(a, a, a, stream="s")
    closed = infinirt.Stream()
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        ops.add(a.copy(), a, a, stream=closed)


def test_topk_and_mul_scalar_against_numpy():
    x = rand(6, 20)
    values = np.empty((6, 4), np.float32)
    indices = np.empty((6, 4), np.int64)
    # The call repeats Create's k, dim, largest and sorted: Python asks for them once.
    ops.topk(values, indices, x, 4, 1, largest=True, sorted=True)
    infinirt.synchronize()
    expected = np.argsort(-x, axis=1, kind="stable")[:, :4]
    np.testing.assert_array_equal(indices, expected)
    np.testing.assert_array_equal(values, np.take_along_axis(x, expected, axis=1))
    smallest = np.empty((2, 20), np.float32)
    smallest_at = np.empty((2, 20), np.int32)
    ops.topk(smallest, smallest_at, x, 2, 0, largest=False)
    infinirt.synchronize()
    np.testing.assert_array_equal(smallest_at, np.argsort(x, axis=0, kind="stable")[:2])

    y = np.empty_like(x, dtype=np.float64)
    ops.mul_scalar(y, x.astype(np.float64), 0.1)
    infinirt.synchronize()
    np.testing.assert_array_equal(y, x.astype(np.float64) * 0.1)


def test_routers_against_numpy():
    logits = rand(5, 64)
    values = np.empty((5, 6), np.float32)
    indices = np.empty((5, 6), np.int32)
    ops.topksoftmax(values, indices, logits, 6, 1)
    infinirt.synchronize()
    p = np.exp(logits - logits.max(axis=1, keepdims=True))
    p /= p.sum(axis=1, keepdims=True)
    chosen = np.argsort(-p, axis=1, kind="stable")[:, :6]
    np.testing.assert_array_equal(indices, chosen)
    picked = np.take_along_axis(p, chosen, axis=1)
    np.testing.assert_allclose(values, picked / picked.sum(axis=1, keepdims=True), rtol=1e-5)

    bias = (rand(64) / 8).astype(np.float32)
    weights = np.empty((5, 8), np.float32)
    experts = np.empty((5, 8), np.int32)
    ops.topkrouter(weights, experts, logits, bias, 2.5, 8)
    infinirt.synchronize()
    s = 1 / (1 + np.exp(-logits.astype(np.float64)))
    biased = s + bias
    groups = np.sort(biased.reshape(5, 8, 8), axis=2)[:, :, -2:].sum(axis=2)
    kept = np.argsort(-groups, axis=1, kind="stable")[:, :4]
    mask = np.zeros((5, 8), bool)
    np.put_along_axis(mask, kept, True, axis=1)
    masked = np.where(np.repeat(mask, 8, axis=1), biased, 0.0)
    chosen = np.argsort(-masked, axis=1, kind="stable")[:, :8]
    np.testing.assert_array_equal(experts, chosen)
    picked = np.take_along_axis(s, chosen, axis=1)
    np.testing.assert_allclose(weights, 2.5 * picked / picked.sum(axis=1, keepdims=True),
                               rtol=1e-5)

    # The outputs without descriptors are checked here, as C cannot.
    with pytest.raises(ValueError, match="contiguous \\[5, 6\\]"):
        ops.topksoftmax(np.empty((5, 5), np.float32), indices, logits, 6, 1)
    with pytest.raises(ValueError, match="must be I32"):
        ops.topksoftmax(values, np.empty((5, 6), np.int64), logits, 6, 1)
    with pytest.raises(ops.OpError) as error:
        ops.topksoftmax(np.empty((5, 33), np.float32), np.empty((5, 33), np.int32), logits, 33)
    assert error.value.name == "INFINI_STATUS_BAD_PARAM"
