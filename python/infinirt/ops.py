"""InfiniOP from Python: its operators on DLPack tensors of any device InfiniRT knows.

    import numpy as np, infinirt
    a, b = np.ones((64, 32), np.float32), np.ones((32, 16), np.float32)
    c = np.empty((64, 16), np.float32)
    infinirt.ops.gemm(c, a, b)             # c = a @ b, in stream order
    infinirt.synchronize()

Tensors are anything with ``__dlpack__`` (NumPy arrays, PyTorch tensors) or tensors
:func:`infinirt.from_dlpack` made; outputs come first, as in InfiniOP. They must be on one
device: host memory counts as the current device when that is a CPU device. An operator is
queued on ``stream`` (default: the current stream, else the device's default stream) and returns
at once; synchronise before reading host memory. Failures raise :class:`OpError`, whose ``status``
is InfiniCore's status code.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _c_api, _library, _runtime
from ._dlpack import Tensor, from_dlpack
from ._runtime import (Buffer, Device, Stream, _launch_host_function, _on_device,
                       _record_uses, _target_stream, get_device)
from .errors import StatusError, raise_status

__all__ = ["OpError", "add", "causal_softmax", "gemm", "mul", "random_sample", "rearrange",
           "rms_norm", "rope", "swiglu"]


class OpError(StatusError):
    """A failed InfiniOP call (``status``: InfiniCore's status code)."""


def _check(status: int, call: str, detail: str = "") -> None:
    if status != 0:
        raise_status(OpError, status, call, detail)


# Each operator's Python name and the scalars its Create and its call take after the tensors, by
# name and default. The generated list (_c_api.OPERATORS) has the tensors and the parameter
# types; _operators() checks that these scalars account for the rest.
_SCALARS: Dict[str, Tuple[str, List[Tuple[str, Any]], List[Tuple[str, Any]]]] = {
    "Add": ("add", [], []),
    "Mul": ("mul", [], []),
    "Gemm": ("gemm", [], [("alpha", 1.0), ("beta", 0.0)]),
    "RMSNorm": ("rms_norm", [("epsilon", 1e-6)], []),
    "RoPE": ("rope", [("algo", 0)], []),
    "SwiGLU": ("swiglu", [], []),
    "CausalSoftmax": ("causal_softmax", [], []),
    "Rearrange": ("rearrange", [], []),
    "RandomSample": ("random_sample", [],
                     [("random_val", 0.0), ("topp", 1.0), ("topk", 1), ("temperature", 1.0)]),
}


class _Operator:
    """One operator's C functions, bound from the generated parameter lists."""

    def __init__(self, name: str, tensors: int, create: str, call: str) -> None:
        library = _library.op().library
        self.name = name
        self.tensors = tensors
        self.python_name, self.create_scalars, self.call_scalars = _SCALARS[name]
        self.create = getattr(library, f"infiniopCreate{name}Descriptor")
        self.create.restype = ctypes.c_int
        self.create.argtypes = _library.parameter_types(create)
        self.call = getattr(library, f"infiniop{name}")
        self.call.restype = ctypes.c_int
        self.call.argtypes = _library.parameter_types(call)
        self.destroy = getattr(library, f"infiniopDestroy{name}Descriptor")
        self.destroy.restype = ctypes.c_int
        self.destroy.argtypes = [ctypes.c_void_p]
        # A call is (descriptor, [workspace, size,] tensors..., scalars..., stream).
        workspace_params = len(self.call.argtypes) - 2 - tensors - len(self.call_scalars)
        if workspace_params not in (0, 2) or len(self.create.argtypes) != (
                2 + tensors + len(self.create_scalars)):
            raise TypeError(f"infinirt.ops does not match InfiniOP's {name}: its scalars changed")
        self.workspace = workspace_params == 2
        if self.workspace:
            self.workspace_size = getattr(library, f"infiniopGet{name}WorkspaceSize")
            self.workspace_size.restype = ctypes.c_int
            self.workspace_size.argtypes = [ctypes.c_void_p, ctypes.c_void_p]


_bound: Dict[str, _Operator] = {}
_bound_lock = threading.Lock()


def _operator(name: str) -> _Operator:
    with _bound_lock:
        if not _bound:
            for op_name, tensors, create, call in _c_api.OPERATORS:
                _bound[op_name] = _Operator(op_name, tensors, create, call)
        return _bound[name]


# --- Per device: the InfiniOP handle, and workspaces per stream -----------------------------

_handles: Dict[Tuple[int, int], int] = {}  # (generation, device) -> infiniopHandle_t
_workspaces: Dict[Tuple[int, int, Optional[int]], Buffer] = {}
_state_lock = threading.Lock()


def _handle(device: int) -> int:
    key = (_runtime._generation, device)
    with _state_lock:
        if key not in _handles:
            handle = ctypes.c_void_p()
            with _on_device(device):
                _check(_library.op().CreateHandle(ctypes.byref(handle)), "infiniopCreateHandle")
            _handles[key] = handle.value or 0
        return _handles[key]


def _workspace(device: int, stream: Optional[int], nbytes: int) -> Tuple[int, int]:
    """Workspace of at least ``nbytes`` for work on ``stream`` of ``device`` (kept, so that no
    free waits for the work; one per stream, so that streams never share one)."""
    if nbytes == 0:
        return 0, 0
    key = (_runtime._generation, device, stream)
    with _state_lock:
        buffer = _workspaces.get(key)
        if buffer is None or buffer.nbytes < nbytes:
            buffer = Buffer(nbytes, device=device)
            _workspaces[key] = buffer
        return buffer.ptr, buffer.nbytes


# --- Tensors ----------------------------------------------------------------------------------


class _Descriptor:
    """An InfiniOP tensor descriptor for a tensor's shape, strides and dtype."""

    def __init__(self, tensor: Tensor) -> None:
        code, _ = _library.dtype_code(tensor.dtype)
        ndim = len(tensor.shape)
        shape = (ctypes.c_size_t * max(ndim, 1))(*tensor.shape)
        strides = (ctypes.c_ssize_t * max(ndim, 1))(*tensor.strides)
        handle = ctypes.c_void_p()
        _check(_library.op().CreateTensorDescriptor(ctypes.byref(handle), ndim, shape, strides,
                                                    code), "infiniopCreateTensorDescriptor",
               f"shape {tensor.shape}, dtype {tensor.dtype}")
        self.handle = handle.value

    def __del__(self) -> None:
        if getattr(self, "handle", None):
            _library.op().DestroyTensorDescriptor(self.handle)


def _tensor(value: Any, what: str) -> Tensor:
    if isinstance(value, Tensor):
        return value
    if hasattr(value, "__dlpack__"):
        return from_dlpack(value)
    raise TypeError(f"{what} is a DLPack tensor (NumPy, PyTorch, infinirt.from_dlpack), "
                    f"not {type(value).__name__}")


def _device_of(tensors: Sequence[Tensor]) -> int:
    devices = {t.device for t in tensors}
    if len(devices) > 1:
        raise ValueError(f"the tensors are on several devices: {sorted(map(str, devices))}")
    device = devices.pop()
    if device is not None:
        return device
    current = get_device()
    if Device(current).type != "cpu":
        raise ValueError("host memory given to an operator while the current device is not a "
                         "CPU device: copy the tensors to the device first")
    return current


def _run(name: str, tensors: Sequence[Any], create_values: Sequence[Any],
         call_values: Sequence[Any], stream: Optional[Stream]) -> None:
    operator = _operator(name)
    if len(tensors) != operator.tensors:
        raise TypeError(f"{operator.python_name} takes {operator.tensors} tensors")
    wrapped = [_tensor(t, f"tensor {i}") for i, t in enumerate(tensors)]
    if wrapped[0].readonly:
        raise ValueError(f"{operator.python_name}: the output tensor is read-only")
    device = _device_of(wrapped)
    stream, stream_handle = _target_stream(stream)
    _record_uses(list(tensors), stream_handle)
    descriptors = [_Descriptor(t) for t in wrapped]
    descriptor = ctypes.c_void_p()
    with _on_device(device):
        _check(operator.create(_handle(device), ctypes.byref(descriptor),
                               *[d.handle for d in descriptors], *create_values),
               f"infiniopCreate{name}Descriptor",
               ", ".join(f"{t.shape} {t.dtype}" for t in wrapped))
        try:
            arguments: List[Any] = [descriptor.value]
            if operator.workspace:
                size = ctypes.c_size_t(0)
                _check(operator.workspace_size(descriptor.value, ctypes.byref(size)),
                       f"infiniopGet{name}WorkspaceSize")
                arguments += list(_workspace(device, stream_handle, size.value))
            arguments += [t.ptr for t in wrapped] + list(call_values) + [stream_handle]
            _check(operator.call(*arguments), f"infiniop{name}")
            # The tensors' memory must outlive the queued work: their producers are kept until
            # a host function after it lets them go.
            if stream is not None:
                stream.launch_host_func(wrapped.clear)
            else:
                _launch_host_function(None, wrapped.clear, once=True)
        finally:
            operator.destroy(descriptor.value)  # the queued work keeps what it needs


# --- The operators ---------------------------------------------------------------------------


def add(c: Any, a: Any, b: Any, *, stream: Optional[Stream] = None) -> None:
    """c = a + b, element by element (broadcast by zero strides)."""
    _run("Add", (c, a, b), (), (), stream)


def mul(c: Any, a: Any, b: Any, *, stream: Optional[Stream] = None) -> None:
    """c = a * b, element by element."""
    _run("Mul", (c, a, b), (), (), stream)


def gemm(c: Any, a: Any, b: Any, alpha: float = 1.0, beta: float = 0.0, *,
         stream: Optional[Stream] = None) -> None:
    """c = alpha * a @ b + beta * c (matrices, or batches of them)."""
    _run("Gemm", (c, a, b), (), (float(alpha), float(beta)), stream)


def rms_norm(y: Any, x: Any, w: Any, epsilon: float = 1e-6, *,
             stream: Optional[Stream] = None) -> None:
    """y = x / sqrt(mean(x^2) + epsilon) * w, over the last dimension."""
    _run("RMSNorm", (y, x, w), (float(epsilon),), (), stream)


def rope(y: Any, x: Any, pos_ids: Any, sin_table: Any, cos_table: Any, algo: int = 0, *,
         stream: Optional[Stream] = None) -> None:
    """Rotary position embedding; ``algo`` 0 is GPT-J's pairs, 1 GPT-NeoX's."""
    _run("RoPE", (y, x, pos_ids, sin_table, cos_table), (int(algo),), (), stream)


def swiglu(c: Any, a: Any, b: Any, *, stream: Optional[Stream] = None) -> None:
    """c = a * b * sigmoid(b) (InfiniCore's SwiGLU: b is the gate)."""
    _run("SwiGLU", (c, a, b), (), (), stream)


def causal_softmax(y: Any, x: Any, *, stream: Optional[Stream] = None) -> None:
    """Softmax over the last dimension with the causal mask."""
    _run("CausalSoftmax", (y, x), (), (), stream)


def rearrange(dst: Any, src: Any, *, stream: Optional[Stream] = None) -> None:
    """dst = src, from one layout (strides) to another."""
    _run("Rearrange", (dst, src), (), (), stream)


def random_sample(result: Any, probs: Any, random_val: float = 0.0, topp: float = 1.0,
                  topk: int = 1, temperature: float = 1.0, *,
                  stream: Optional[Stream] = None) -> None:
    """Samples an index from ``probs`` (top-k, top-p, temperature) into ``result``."""
    _run("RandomSample", (result, probs), (),
         (float(random_val), float(topp), int(topk), float(temperature)), stream)
