"""The operators' functional form: given their inputs only (or out=), they make their outputs like
the first input (NumPy, PyTorch, infinirt.Tensor) and return them, with the same numbers as the
outputs-first call."""

import ctypes

import numpy as np
import pytest

import infinirt
from infinirt import _c_api, ops

rng = np.random.default_rng(11)


def f32(*shape):
    return rng.standard_normal(shape).astype(np.float32)


# Per operator: its inputs (NumPy) and scalars, for both forms.
CASES = {
    "add": lambda: ((f32(4, 6), f32(4, 6)), {}),
    "sub": lambda: ((f32(4, 6), f32(4, 6)), {}),
    "mul": lambda: ((f32(4, 6), f32(4, 6)), {}),
    "swiglu": lambda: ((f32(4, 6), f32(4, 6)), {}),
    "relu": lambda: ((f32(5, 7),), {}),
    "sigmoid": lambda: ((f32(5, 7),), {}),
    "silu": lambda: ((f32(5, 7),), {}),
    "gelu": lambda: ((f32(5, 7),), {}),
    "gelutanh": lambda: ((f32(5, 7),), {}),
    "mul_scalar": lambda: ((f32(5, 7),), {"alpha": 0.5}),
    "rearrange": lambda: ((f32(6, 4).T,), {}),
    "gemm": lambda: ((f32(4, 8), f32(8, 3)), {}),
    "rms_norm": lambda: ((f32(3, 16), f32(16)), {"epsilon": 1e-6}),
    "add_rms_norm": lambda: ((f32(3, 16), f32(3, 16), f32(16)), {"epsilon": 1e-6}),
    "layer_norm": lambda: ((f32(3, 16), f32(16), f32(16)), {"eps": 1e-5}),
    "softmax": lambda: ((f32(3, 9),), {"axis": -1}),
    "log_softmax": lambda: ((f32(3, 9),), {"dim": -1}),
    "causal_softmax": lambda: ((f32(4, 6),), {}),
    "embedding": lambda: ((np.array([3, 0, 7], np.int64), f32(10, 5)), {}),
    "silu_and_mul": lambda: ((f32(3, 8),), {}),
    "rope": lambda: ((f32(4, 2, 8), np.array([0, 3, 1, 2], np.int32), f32(5, 4), f32(5, 4)),
                     {"algo": 1}),
    "random_sample": lambda: ((f32(50),), {"random_val": 0.0, "topp": 1.0, "topk": 1,
                                           "temperature": 1.0}),
    "flash_attention": lambda: ((f32(1, 2, 3, 8), f32(1, 2, 5, 8), f32(1, 2, 5, 8),
                                 np.array([5], np.int64)), {"scale": 0.3, "is_causal": 1}),
    "topk": lambda: ((f32(4, 10),), {"k": 3, "dim": 1}),
    "topksoftmax": lambda: ((f32(4, 16),), {"topk": 3, "norm": 1}),
    "topkrouter": lambda: ((f32(3, 64), f32(64) / 8), {"routed_scaling_factor": 2.0, "topk": 8}),
}
# The operators that update outputs in part (caches): no functional form.
IN_PART = {"paged_caching", "kv_caching", "attention"}
# Those whose inputs need more set-up than CASES gives (checked through their rule only).
RULE_ONLY = {"paged_attention", "paged_attention_prefill", "dequantize_awq", "i8_gemm"}


def test_every_operator_has_a_functional_case_or_says_why_not():
    for entry in _c_api.OPERATORS:
        assert entry[1] in CASES or entry[1] in IN_PART or entry[1] in RULE_ONLY, entry[1]


def outputs_first(name, inputs, scalars, made):
    getattr(ops, name)(*made, *inputs, **scalars)
    infinirt.synchronize()


@pytest.mark.parametrize("name", sorted(CASES))
def test_the_functional_form_gives_the_outputs_first_forms_numbers(name):
    inputs, scalars = CASES[name]()
    result = getattr(ops, name)(*inputs, **scalars)
    infinirt.synchronize()
    results = result if isinstance(result, tuple) else (result,)
    expected = tuple(np.empty_like(r) for r in results)
    outputs_first(name, inputs, scalars, expected)
    for got, want in zip(results, expected):
        assert type(got) is np.ndarray
        np.testing.assert_array_equal(got, want)
    # out= takes the outputs and returns them.
    given = tuple(np.empty_like(r) for r in results)
    returned = getattr(ops, name)(*inputs, out=given if len(given) > 1 else given[0], **scalars)
    infinirt.synchronize()
    for got, want in zip(given, expected):
        np.testing.assert_array_equal(got, want)
    assert (returned if isinstance(returned, tuple) else (returned,))[0] is given[0]


def test_the_shapes_and_dtypes_of_made_outputs():
    x = f32(4, 10)
    values, indices = ops.topk(x, 3, 1)
    assert values.shape == (4, 3) and values.dtype == np.float32 and indices.dtype == np.int64
    weights, experts = ops.topksoftmax(f32(6, 16), 2, 0)
    assert weights.shape == (6, 2) and weights.dtype == np.float32 and experts.dtype == np.int32
    assert ops.gemm(f32(2, 4, 8), f32(8, 3)).shape == (2, 4, 3)
    output, standardized, deviation = ops.layer_norm(f32(2, 3, 16), f32(16), None, eps=1e-5)
    assert deviation.shape == (2, 3) and standardized.shape == (2, 3, 16)
    assert ops.embedding(np.array([[1, 2]], np.int32), f32(5, 7)).shape == (1, 2, 7)
    assert ops.random_sample(f32(20), 0.0, 1.0, 1, 1.0).shape == ()
    infinirt.synchronize()


def test_operators_that_update_in_part_refuse_the_functional_form():
    with pytest.raises(TypeError, match="in part"):
        ops.kv_caching(f32(1, 2, 3, 8), f32(1, 2, 3, 8), np.array([0], np.int64))


def test_an_infinirt_tensor_in_gives_an_infinirt_tensor_out():
    x = f32(3, 5)
    tensor = infinirt.from_dlpack(x)
    y = ops.relu(tensor)
    infinirt.synchronize()
    assert isinstance(y, infinirt.Tensor) and y.shape == (3, 5) and y.dtype == "float32"
    back = np.ctypeslib.as_array(ctypes.cast(y.ptr, ctypes.POINTER(ctypes.c_float)), shape=(3, 5))
    np.testing.assert_array_equal(back, np.maximum(x, 0))


def test_a_pytorch_tensor_in_gives_a_pytorch_tensor_out():
    torch = pytest.importorskip("torch", reason="PyTorch is not installed here")
    x = torch.randn(3, 5)
    y = ops.silu(x)
    infinirt.synchronize()
    assert isinstance(y, torch.Tensor) and y.shape == (3, 5) and y.dtype == torch.float32
    torch.testing.assert_close(y, torch.nn.functional.silu(x), rtol=1e-5, atol=1e-6)
