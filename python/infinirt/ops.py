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
import inspect
import threading
from typing import Any, Dict, List, Optional, Sequence, Tuple

from . import _c_api, _library, _runtime
from ._dlpack import Tensor, from_dlpack
from ._runtime import (Buffer, Device, Stream, _launch_host_function, _on_device,
                       _record_uses, _target_stream, get_device)
from .errors import StatusError, raise_status

class OpError(StatusError):
    """A failed InfiniOP call (``status``: InfiniCore's status code)."""


def _check(status: int, call: str, detail: str = "") -> None:
    if status != 0:
        raise_status(OpError, status, call, detail)


# A tensor of the list: (name, whether an output, whether it may be absent: None, and for an
# output Create takes no descriptor for, (its dtype's name, the tensor whose rows and the call
# scalar whose value make its shape), else None).
_TensorEntry = Tuple[str, bool, bool, Optional[Tuple[str, str, str]]]
# A scalar of the list: (name, default, whether the call repeats Create's scalar of that name).
_ScalarEntry = Tuple[str, Any, bool]


class _Operator:
    """One operator's C functions, bound from the generated list (_c_api.OPERATORS): its
    tensors, the scalars its Create and its call take after the tensors, whether the call takes
    a workspace."""

    def __init__(self, name: str, python_name: str, tensors: Sequence[_TensorEntry],
                 create_scalars: Sequence[_ScalarEntry], call_scalars: Sequence[_ScalarEntry],
                 workspace: bool, summary: str, create: str, call: str) -> None:
        library = _library.op().library
        self.name = name
        self.python_name = python_name
        self.tensor_names = [tensor for tensor, _, _, _ in tensors]
        self.optional = [optional for _, _, optional, _ in tensors]
        self.undescribed = [undescribed for _, _, _, undescribed in tensors]
        self.tensors = len(tensors)
        self.create_scalars = list(create_scalars)
        self.call_scalars = list(call_scalars)
        self.workspace = workspace
        self.summary = summary
        self.create = getattr(library, f"infiniopCreate{name}Descriptor")
        self.create.restype = ctypes.c_int
        self.create.argtypes = _library.parameter_types(create)
        self.call = getattr(library, f"infiniop{name}")
        self.call.restype = ctypes.c_int
        self.call.argtypes = _library.parameter_types(call)
        self.destroy = getattr(library, f"infiniopDestroy{name}Descriptor")
        self.destroy.restype = ctypes.c_int
        self.destroy.argtypes = [ctypes.c_void_p]
        if self.workspace:
            self.workspace_size = getattr(library, f"infiniopGet{name}WorkspaceSize")
            self.workspace_size.restype = ctypes.c_int
            self.workspace_size.argtypes = [ctypes.c_void_p, ctypes.c_void_p]


_bound: Dict[str, _Operator] = {}
_bound_lock = threading.Lock()


def _operator(name: str) -> _Operator:
    with _bound_lock:
        if not _bound:
            for entry in _c_api.OPERATORS:
                _bound[entry[0]] = _Operator(*entry)
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


def _check_undescribed(operator: _Operator, wrapped: Sequence[Optional[Tensor]],
                       call_values: Dict[str, Any]) -> None:
    """An output the C call takes without a descriptor, checked here as C cannot: contiguous, of
    its dtype, [rows of the tensor named, the value of the call scalar named]."""
    for i, undescribed in enumerate(operator.undescribed):
        if undescribed is None:
            continue
        dtype, rows_of, cols_of = undescribed
        tensor, source = wrapped[i], wrapped[operator.tensor_names.index(rows_of)]
        assert tensor is not None and source is not None
        rows = source.shape[0] if source.shape else 1
        expected = (rows, int(call_values[cols_of]))
        what = f"{operator.python_name}: {operator.tensor_names[i]}"
        if _library.dtype_code(tensor.dtype)[0] != _library.dtype_code(dtype)[0]:
            raise ValueError(f"{what} must be {dtype}, not {tensor.dtype}")
        if tuple(tensor.shape) != expected or not tensor.is_contiguous():
            raise ValueError(f"{what} must be a contiguous {list(expected)} ({rows_of}'s rows, "
                             f"{cols_of}), not {list(tensor.shape)}"
                             f"{'' if tensor.is_contiguous() else ' strided'}")


def _run(name: str, tensors: Sequence[Any], create_values: Sequence[Any],
         call_values: Sequence[Any], stream: Optional[Stream],
         named_call_values: Optional[Dict[str, Any]] = None) -> None:
    operator = _operator(name)
    if len(tensors) != operator.tensors:
        raise TypeError(f"{operator.python_name} takes {operator.tensors} tensors")
    for i, t in enumerate(tensors):
        if t is None and not operator.optional[i]:
            raise TypeError(f"{operator.python_name}: {operator.tensor_names[i]} is None")
    # An absent tensor (None) is a NULL descriptor and a NULL buffer.
    wrapped = [None if t is None else _tensor(t, f"tensor {i}") for i, t in enumerate(tensors)]
    present = [t for t in wrapped if t is not None]
    if wrapped[0].readonly:
        raise ValueError(f"{operator.python_name}: the output tensor is read-only")
    _check_undescribed(operator, wrapped, named_call_values or {})
    device = _device_of(present)
    stream, stream_handle = _target_stream(stream)
    _record_uses([t for t in tensors if t is not None], stream_handle)
    # Descriptors for the tensors Create takes one for (an absent one: NULL).
    descriptors = [None if t is None else _Descriptor(t)
                   for t, undescribed in zip(wrapped, operator.undescribed) if undescribed is None]
    descriptor = ctypes.c_void_p()
    with _on_device(device):
        _check(operator.create(_handle(device), ctypes.byref(descriptor),
                               *[None if d is None else d.handle for d in descriptors],
                               *create_values),
               f"infiniopCreate{name}Descriptor",
               ", ".join(f"{t.shape} {t.dtype}" for t in present))
        try:
            arguments: List[Any] = [descriptor.value]
            if operator.workspace:
                size = ctypes.c_size_t(0)
                _check(operator.workspace_size(descriptor.value, ctypes.byref(size)),
                       f"infiniopGet{name}WorkspaceSize")
                arguments += list(_workspace(device, stream_handle, size.value))
            arguments += [None if t is None else t.ptr for t in wrapped]
            arguments += list(call_values) + [stream_handle]
            _check(operator.call(*arguments), f"infiniop{name}")
            # The tensors' memory must outlive the queued work: their producers are kept until
            # a host function after it lets them go.
            if stream is not None:
                stream.launch_host_func(wrapped.clear)
            else:
                _launch_host_function(None, wrapped.clear, once=True)
        finally:
            operator.destroy(descriptor.value)  # the queued work keeps what it needs


# --- The operators: one function per entry of InfiniOP's list -------------------------------


def _scalar(value: Any, default: Any) -> Any:
    """A scalar passed as its C type is: the type of its default."""
    if isinstance(default, bool):
        return bool(value)
    return float(value) if isinstance(default, float) else int(value)


def _define(name: str, python_name: str, tensors: Sequence[_TensorEntry],
            create_scalars: Sequence[_ScalarEntry], call_scalars: Sequence[_ScalarEntry],
            summary: str) -> Any:
    """The function infinirt.ops.<python_name>(tensors..., scalars..., *, stream=None): a scalar
    the call repeats from Create is asked for once."""
    Parameter = inspect.Parameter
    parameters = [Parameter(entry[0], Parameter.POSITIONAL_OR_KEYWORD) for entry in tensors]
    parameters += [Parameter(scalar, Parameter.POSITIONAL_OR_KEYWORD, default=default)
                   for scalar, default, again in (*create_scalars, *call_scalars) if not again]
    parameters.append(Parameter("stream", Parameter.KEYWORD_ONLY, default=None))
    signature = inspect.Signature(parameters)
    defaults = {scalar: default for scalar, default, again in create_scalars}

    def operator(*args: Any, **kwargs: Any) -> None:
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        values = bound.arguments
        calls = [_scalar(values[scalar], defaults[scalar] if again else default)
                 for scalar, default, again in call_scalars]
        _run(name, [values[entry[0]] for entry in tensors],
             [_scalar(values[scalar], default) for scalar, default, _ in create_scalars],
             calls, values["stream"],
             {scalar: value for (scalar, _, _), value in zip(call_scalars, calls)})

    operator.__name__ = operator.__qualname__ = python_name
    operator.__signature__ = signature  # type: ignore[attr-defined]
    operator.__doc__ = f"{name}: {summary} Outputs first; queued on ``stream``."
    return operator


__all__ = ["OpError"]
for _entry in _c_api.OPERATORS:
    # (name, python name, tensors, create scalars, call scalars, workspace, summary, ...)
    globals()[_entry[1]] = _define(*_entry[:5], _entry[6])
    __all__.append(_entry[1])
del _entry
