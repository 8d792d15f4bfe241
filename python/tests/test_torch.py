"""DLPack both ways with PyTorch's CPU tensors, and the operators on them.

scripts/test-python.sh installs PyTorch from PyPI into its first environment (with its CUDA
libraries, 5.4 GB, in about a minute here); with INFINIRT_TEST_TORCH=0 it does not, and these
tests are skipped (pytest says so)."""

import numpy as np
import pytest

import infinirt
from infinirt import ops

torch = pytest.importorskip("torch")


def test_torch_takes_a_buffer_without_a_copy_and_writes_through():
    buffer = infinirt.Buffer(64)
    buffer.copy_from(np.arange(16, dtype=np.float32))
    view = torch.from_dlpack(buffer)
    assert view.data_ptr() == buffer.ptr
    assert view.dtype == torch.uint8 and tuple(view.shape) == (64,)
    assert torch.equal(view.view(torch.float32), torch.arange(16, dtype=torch.float32))
    view[:4] = 0
    out = bytearray(64)
    buffer.copy_to(out)
    assert out[:4] == bytearray(4)


@pytest.mark.parametrize("dtype, name", [(torch.float32, "float32"), (torch.float16, "float16"),
                                         (torch.bfloat16, "bfloat16"), (torch.int64, "int64")])
def test_from_dlpack_wraps_a_torch_tensor_without_a_copy(dtype, name):
    tensor = torch.arange(24).to(dtype).reshape(2, 3, 4)[:, :, ::2]
    wrapped = infinirt.from_dlpack(tensor)
    assert wrapped.ptr == tensor.data_ptr()
    assert wrapped.shape == (2, 3, 2) and wrapped.strides == tuple(tensor.stride())
    assert wrapped.dtype == name and wrapped.device is None


def test_operators_take_torch_tensors():
    a, b = torch.randn(16, 8), torch.randn(8, 4)
    c = torch.zeros(16, 4)
    ops.gemm(c, a, b)
    infinirt.synchronize()
    torch.testing.assert_close(c, a @ b, rtol=1e-4, atol=1e-4)
    x, w = torch.randn(4, 32), torch.randn(32)
    y = torch.empty_like(x)
    ops.rms_norm(y, x, w, epsilon=1e-5)
    infinirt.synchronize()
    torch.testing.assert_close(y, x * torch.rsqrt(x.pow(2).mean(-1, keepdim=True) + 1e-5) * w,
                               rtol=1e-5, atol=1e-5)
