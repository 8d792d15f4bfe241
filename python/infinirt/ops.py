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
import sys
import threading
from collections import OrderedDict, deque
from typing import Any, Callable, Deque, Dict, List, Optional, Sequence, Tuple

from . import _c_api, _library, _runtime
from ._dlpack import Tensor, from_dlpack
from ._runtime import (Buffer, Device, Stream, _Capture, _on_device, _record_uses,
                       _target_stream, get_device)
from ._library import rt
from .errors import StatusError, check, raise_for, raise_status

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
        self.has_undescribed = any(u is not None for u in self.undescribed)
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


class _Arg:
    """A tensor as a call uses it: its address, layout, InfiniCore dtype code, device (None:
    host memory), whether read-only, and what keeps its memory alive (the array itself, or the
    DLPack capsule's Tensor)."""

    __slots__ = ("ptr", "shape", "strides", "dtype", "code", "device", "readonly", "keep")

    def __init__(self, ptr: int, shape: Tuple[int, ...], strides: Tuple[int, ...], dtype: str,
                 code: int, device: Optional[int], readonly: bool, keep: Any) -> None:
        self.ptr, self.shape, self.strides, self.dtype = ptr, shape, strides, dtype
        self.code, self.device, self.readonly, self.keep = code, device, readonly, keep

    def is_contiguous(self) -> bool:
        expected = 1
        for extent, stride in zip(reversed(self.shape), reversed(self.strides)):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True


# NumPy's dtypes InfiniCore has, by NumPy dtype: (name, code, element size); None: not one of them.
_numpy_dtypes: Dict[Any, Optional[Tuple[str, int, int]]] = {}


def _numpy_dtype(dtype: Any) -> Optional[Tuple[str, int, int]]:
    known = _numpy_dtypes.get(dtype, False)
    if known is False:
        try:
            code, size = _library.dtype_code(dtype.name)
            known = (dtype.name, code, size) if size == dtype.itemsize else None
        except ValueError:
            known = None
        _numpy_dtypes[dtype] = known
    return known


def _numpy_arg(array: Any) -> Optional[_Arg]:
    """A NumPy array read directly (no DLPack capsule); None where DLPack must decide (a dtype
    InfiniCore lacks, strides that are not whole elements)."""
    known = _numpy_dtype(array.dtype)
    if known is None:
        return None
    name, code, size = known
    strides = []
    for stride in array.strides:
        if stride % size:
            return None
        strides.append(stride // size)
    return _Arg(array.__array_interface__["data"][0], array.shape, tuple(strides), name, code,
                None, not array.flags.writeable, array)


# NumPy's array type once NumPy is imported (by the caller: the package does not need it).
_NUMPY_TYPES: Tuple[type, ...] = ()


def _argument(value: Any, what: str) -> _Arg:
    global _NUMPY_TYPES
    if not _NUMPY_TYPES and "numpy" in sys.modules:
        _NUMPY_TYPES = (sys.modules["numpy"].ndarray,)
    if type(value) in _NUMPY_TYPES:
        arg = _numpy_arg(value)
        if arg is not None:
            return arg
    if isinstance(value, Tensor):
        tensor = value
    elif hasattr(value, "__dlpack__"):
        tensor = from_dlpack(value)
    else:
        raise TypeError(f"{what} is a DLPack tensor (NumPy, PyTorch, infinirt.from_dlpack), "
                        f"not {type(value).__name__}")
    code, _ = _library.dtype_code(tensor.dtype)
    return _Arg(tensor.ptr, tuple(tensor.shape), tuple(tensor.strides), tensor.dtype, code,
                tensor.device, tensor.readonly, tensor)


class _Descriptor:
    """An InfiniOP tensor descriptor for a tensor's shape, strides and dtype."""

    def __init__(self, arg: _Arg) -> None:
        ndim = len(arg.shape)
        shape = (ctypes.c_size_t * max(ndim, 1))(*arg.shape)
        strides = (ctypes.c_ssize_t * max(ndim, 1))(*arg.strides)
        handle = ctypes.c_void_p()
        _check(_library.op().CreateTensorDescriptor(ctypes.byref(handle), ndim, shape, strides,
                                                    arg.code), "infiniopCreateTensorDescriptor",
               f"shape {arg.shape}, dtype {arg.dtype}")
        self.handle = handle.value

    def __del__(self) -> None:
        if getattr(self, "handle", None):
            _library.op().DestroyTensorDescriptor(self.handle)


# Whether each device (by ordinal) is a CPU device: host memory counts as the current device then.
_cpu_devices: Dict[Tuple[int, int], bool] = {}


def _device_of(args: Sequence[_Arg], current: int) -> int:
    """The device of a call's tensors; `current`: the calling thread's current device."""
    device = args[0].device
    for arg in args:
        if arg.device != device:
            devices = sorted({str(a.device) for a in args})
            raise ValueError(f"the tensors are on several devices: {devices}")
    if device is not None:
        return device
    key = (_runtime._generation, current)
    is_cpu = _cpu_devices.get(key)
    if is_cpu is None:
        is_cpu = _cpu_devices[key] = Device(current).type == "cpu"
    if not is_cpu:
        raise ValueError("host memory given to an operator while the current device is not a "
                         "CPU device: copy the tensors to the device first")
    return current


def _check_undescribed(operator: _Operator, args: Sequence[Optional[_Arg]],
                       call_values: Dict[str, Any]) -> None:
    """An output the C call takes without a descriptor, checked here as C cannot: contiguous, of
    its dtype, [rows of the tensor named, the value of the call scalar named]."""
    for i, undescribed in enumerate(operator.undescribed):
        if undescribed is None:
            continue
        dtype, rows_of, cols_of = undescribed
        tensor, source = args[i], args[operator.tensor_names.index(rows_of)]
        assert tensor is not None and source is not None
        rows = source.shape[0] if source.shape else 1
        expected = (rows, int(call_values[cols_of]))
        what = f"{operator.python_name}: {operator.tensor_names[i]}"
        if tensor.code != _library.dtype_code(dtype)[0]:
            raise ValueError(f"{what} must be {dtype}, not {tensor.dtype}")
        if tuple(tensor.shape) != expected or not tensor.is_contiguous():
            raise ValueError(f"{what} must be a contiguous {list(expected)} ({rows_of}'s rows, "
                             f"{cols_of}), not {list(tensor.shape)}"
                             f"{'' if tensor.is_contiguous() else ' strided'}")


# --- Operator descriptors, cached -----------------------------------------------------------
#
# A call's operator descriptor depends only on the operator, the device, its tensors' shapes,
# strides and dtypes, and Create's scalars: it is made once for them and kept, per thread (a
# descriptor is never destroyed while its thread may be calling it), the least recently used
# destroyed beyond CACHE_SIZE. A finalised runtime's are dropped, not destroyed (finalize did).

CACHE_SIZE = 256


class _DescriptorCache(threading.local):
    def __init__(self) -> None:
        self.generation = _runtime._generation
        self.entries: "OrderedDict[Any, Tuple[int, int, _Operator]]" = OrderedDict()

    def evict(self, count: int) -> None:
        for _ in range(min(count, len(self.entries))):
            _, (handle, _, operator) = self.entries.popitem(last=False)
            if self.generation == _runtime._generation and not _runtime._exiting:
                operator.destroy(handle)  # queued work keeps what it needs

    def __del__(self) -> None:  # the thread ended
        try:
            self.evict(len(self.entries))
        except Exception:  # the interpreter may be going away
            pass


_descriptors = _DescriptorCache()


def cache_info() -> Dict[str, int]:
    """The calling thread's operator-descriptor cache: its entries and their limit."""
    return {"entries": len(_descriptors.entries), "limit": CACHE_SIZE}


def clear_cache() -> None:
    """Destroys the calling thread's cached operator descriptors."""
    _descriptors.evict(len(_descriptors.entries))


def _descriptor(operator: _Operator, device: int, args: Sequence[Optional[_Arg]],
                create_values: Sequence[Any]) -> Tuple[int, int]:
    """The operator descriptor for these tensors and scalars on `device`, and its workspace size:
    from the cache, else made (and kept)."""
    cache = _descriptors
    if cache.generation != _runtime._generation:  # finalize() ended the cached ones
        cache.entries.clear()
        cache.generation = _runtime._generation
    key = (operator.name, device, tuple(None if a is None else (a.shape, a.strides, a.code)
                                        for a in args), tuple(create_values))
    entry = cache.entries.get(key)
    if entry is not None:
        cache.entries.move_to_end(key)
        return entry[0], entry[1]
    handle, size = _new_descriptor(operator, device, args, create_values)
    if len(cache.entries) >= CACHE_SIZE:
        cache.evict(len(cache.entries) - CACHE_SIZE + 1)
    cache.entries[key] = (handle, size, operator)
    return handle, size


def _new_descriptor(operator: _Operator, device: int, args: Sequence[Optional[_Arg]],
                    create_values: Sequence[Any]) -> Tuple[int, int]:
    """A new operator descriptor for these tensors and scalars on `device`, and its workspace
    size."""
    # Descriptors for the tensors Create takes one for (an absent one: NULL).
    tensors = [None if a is None else _Descriptor(a)
               for a, undescribed in zip(args, operator.undescribed) if undescribed is None]
    handle = ctypes.c_void_p()
    with _on_device(device):
        _check(operator.create(_handle(device), ctypes.byref(handle),
                               *[None if t is None else t.handle for t in tensors],
                               *create_values),
               f"infiniopCreate{operator.name}Descriptor",
               ", ".join(f"{a.shape} {a.dtype}" for a in args if a is not None))
    size = ctypes.c_size_t(0)
    if operator.workspace:
        code = operator.workspace_size(handle.value, ctypes.byref(size))
        if code != 0:
            operator.destroy(handle.value)
            _check(code, f"infiniopGet{operator.name}WorkspaceSize")
    return handle.value, size.value


class _CapturedCall:
    """What a call captured into a graph needs for the graph's life: its own descriptor (a
    backend may keep the captured work in it) and its tensors. Held by the graph, released with
    it."""

    __slots__ = ("operator", "handle", "keep", "generation")

    def __init__(self, operator: _Operator, handle: int, keep: List[Any]) -> None:
        self.operator, self.handle, self.keep = operator, handle, keep
        self.generation = _runtime._generation

    def release(self) -> None:
        """Called by the graph's close, after its launches ran."""
        if self.handle and self.generation == _runtime._generation and not _runtime._exiting:
            self.operator.destroy(self.handle)
        self.handle = 0
        self.keep = []

    def __del__(self) -> None:
        self.release()


# --- Keeping the tensors alive while their work is queued -----------------------------------
#
# Per stream, the calls queued and not yet known to be done, oldest first: each with an event
# recorded after it and the objects that keep its tensors' memory. A call retires the entries
# whose events have completed (in order: a stream runs its work in order), so that no Python runs
# on the stream's thread. A stream being captured into a graph keeps the tensors with a host
# function instead (the graph's replays need them).

_MOST_PENDING = 4096  # beyond: the oldest call is waited for


class _Pending:
    def __init__(self) -> None:
        self.generation = _runtime._generation
        self.calls: Deque[Tuple[int, List[Any]]] = deque()
        self.free_events: List[int] = []


_pending: Dict[Tuple[int, Optional[int]], _Pending] = {}
_pending_lock = threading.Lock()


def _pending_of(device: int, stream: Optional[int]) -> _Pending:
    key = (device, stream)
    pending = _pending.get(key)
    if pending is None or pending.generation != _runtime._generation:
        pending = _pending[key] = _Pending()
    return pending


def _stream_done(device: int, stream: Optional[int]) -> None:
    """The stream's work so far is done: its kept calls are let go."""
    pending = _pending.get((device, stream))
    if pending is None or not pending.calls:
        return
    with _pending_lock:
        while pending.calls:
            pending.free_events.append(pending.calls.popleft()[0])


def _retire(pending: _Pending) -> None:
    calls = pending.calls
    while calls:
        event = calls[0][0]
        code = rt.EventQuery(event)
        if code != 0:
            if code == _library.NOT_READY:
                return
            raise_status(OpError, 1, "infiniopCall", f"infinirtEventQuery failed ({code})")
        calls.popleft()
        pending.free_events.append(event)


def _keep_until_done(device: int, stream: Optional[int], keep: List[Any]) -> None:
    """Keeps `keep` until the work queued so far on the stream is done."""
    with _pending_lock:
        pending = _pending_of(device, stream)
        _retire(pending)
        if len(pending.calls) >= _MOST_PENDING:
            rt.EventSynchronize(pending.calls[0][0])
            _retire(pending)
        if pending.free_events:
            event = pending.free_events.pop()
        else:
            handle = ctypes.c_void_p()
            check(rt.EventCreateWithFlags(ctypes.byref(handle),
                                          _runtime.Event.DISABLE_TIMING), "infinirtEventCreate")
            event = handle.value
        code = rt.EventRecord(event, stream)
        if code != 0:
            pending.free_events.append(event)
            raise_for(code, "infinirtEventRecord")
        pending.calls.append((event, keep))


def _all_done(device: int, stream: Optional[int]) -> None:
    """After a wait for every stream of `device` (stream None) or for one stream: the calls
    queued before it are done, with nothing to ask their events."""
    with _pending_lock:
        for (of_device, of_stream), pending in _pending.items():
            if of_device != device or (stream is not None and of_stream != stream):
                continue
            while pending.calls:
                pending.free_events.append(pending.calls.popleft()[0])


_runtime._synchronized_hooks.append(_all_done)


def _is_capturing(stream: Optional[int]) -> bool:
    status = ctypes.c_int(0)
    if rt.StreamIsCapturing(stream, ctypes.byref(status)) != 0:
        rt.GetLastError()
        return False
    return status.value != _CAPTURE_NONE


_CAPTURE_NONE = _library.CONSTANTS["infinirtStreamCaptureStatusNone"]


def _run(name: str, tensors: Sequence[Any], create_values: Sequence[Any],
         call_values: Sequence[Any], stream: Optional[Stream],
         named_call_values: Optional[Dict[str, Any]] = None) -> None:
    operator = _operator(name)
    if len(tensors) != operator.tensors:
        raise TypeError(f"{operator.python_name} takes {operator.tensors} tensors")
    # An absent tensor (None) is a NULL descriptor and a NULL buffer.
    args: List[Optional[_Arg]] = []
    for i, t in enumerate(tensors):
        if t is None:
            if not operator.optional[i]:
                raise TypeError(f"{operator.python_name}: {operator.tensor_names[i]} is None")
            args.append(None)
        else:
            args.append(_argument(t, f"tensor {i}"))
    present = [a for a in args if a is not None]
    if args[0].readonly:  # type: ignore[union-attr]
        raise ValueError(f"{operator.python_name}: the output tensor is read-only")
    if operator.has_undescribed:
        _check_undescribed(operator, args, named_call_values or {})
    current = get_device()
    device = _device_of(present, current)
    if device != current:  # the call and its stream's default are the tensors' device's
        with _on_device(device):
            _queue(operator, device, args, present, create_values, call_values, tensors, stream)
        return
    _queue(operator, device, args, present, create_values, call_values, tensors, stream)


def _queue(operator: _Operator, device: int, args: Sequence[Optional[_Arg]],
           present: Sequence[_Arg], create_values: Sequence[Any], call_values: Sequence[Any],
           tensors: Sequence[Any], stream: Optional[Stream]) -> None:
    """Queues the call on `stream` (None: the current stream, else the default one) of the
    current device, which is `device`."""
    name = operator.name
    stream, stream_handle = _target_stream(stream)
    # A Buffer (or a Tensor viewing one) records the stream, for its release; arrays have none.
    _record_uses([a.keep for a in present if not isinstance(a.keep, _NUMPY_TYPES)], stream_handle)
    capturing = stream is not None and _is_capturing(stream_handle)
    if capturing:  # a descriptor of its own, kept with the graph
        descriptor, workspace_size = _new_descriptor(operator, device, args, create_values)
    else:
        descriptor, workspace_size = _descriptor(operator, device, args, create_values)
    arguments: List[Any] = [descriptor]
    if operator.workspace:
        arguments += list(_workspace(device, stream_handle, workspace_size))
    arguments += [None if a is None else a.ptr for a in args]
    arguments += list(call_values)
    arguments.append(stream_handle)
    code = operator.call(*arguments)
    # The tensors' memory must outlive the queued work (and a graph's replays).
    keep = [a.keep for a in present]
    if capturing:
        captured = _CapturedCall(operator, descriptor, keep)
        _check(code, f"infiniop{name}")
        _Capture.hold(stream, captured)  # type: ignore[arg-type]
        return
    _check(code, f"infiniop{name}")
    # Done already (a small call on an idle stream runs in the caller): nothing to keep, and the
    # calls kept before on the stream are done too.
    if rt.StreamQuery(stream_handle) == 0:
        _stream_done(device, stream_handle)
        return
    _keep_until_done(device, stream_handle, keep)


# --- The operators: one function per entry of InfiniOP's list -------------------------------


def _scalar(value: Any, default: Any) -> Any:
    """A scalar passed as its C type is: the type of its default."""
    if isinstance(default, bool):
        return bool(value)
    return float(value) if isinstance(default, float) else int(value)


# --- The functional form: the outputs made, like the first input ----------------------------
#
# Called with its inputs only (``y = ops.gelu(x)``), or with ``out=`` (a tensor, or a tuple of
# the outputs in order), an operator makes (or takes) its outputs and returns them: one, or a
# tuple. Each output's shape and dtype follow from the inputs and scalars by the rule below; its
# type is the first input's (a NumPy array, a PyTorch tensor on the same device, an
# infinirt Tensor over a Buffer of the same device, from the caching allocator). The operators
# that update caches in part (PagedCaching, KVCaching, Attention) have no functional form.

# (shape, dtype name) per output, from the inputs (by name: an _Arg, or None) and the scalars.
_Rule = Callable[[Dict[str, Optional[_Arg]], Dict[str, Any]], List[Tuple[Tuple[int, ...], str]]]


def _like(name: str) -> _Rule:
    return lambda t, s: [(tuple(t[name].shape), t[name].dtype)]  # type: ignore[union-attr]


def _gemm_output(t: Dict[str, Optional[_Arg]], s: Dict[str, Any]) -> List[Tuple[Tuple[int, ...], str]]:
    a, b = t["a"], t["b"]
    assert a is not None and b is not None
    shape = (a.shape[-2], b.shape[-1])
    batches = [x.shape[0] for x in (a, b) if len(x.shape) == 3]
    return [((max(batches),) + shape if batches else shape, a.dtype)]


def _topk_outputs(t: Dict[str, Optional[_Arg]], s: Dict[str, Any]) -> List[Tuple[Tuple[int, ...], str]]:
    x = t["input"]
    assert x is not None
    shape = list(x.shape)
    if 0 <= int(s["dim"]) < len(shape):
        shape[int(s["dim"])] = int(s["k"])
    return [(tuple(shape), x.dtype), (tuple(shape), "int64")]


def _router_outputs(t: Dict[str, Optional[_Arg]], s: Dict[str, Any]) -> List[Tuple[Tuple[int, ...], str]]:
    x = t["x"]
    assert x is not None
    shape = (x.shape[0] if x.shape else 1, int(s["topk"]))
    return [(shape, "float32"), (shape, "int32")]


def _i8_gemm_output(t: Dict[str, Optional[_Arg]], s: Dict[str, Any]) -> List[Tuple[Tuple[int, ...], str]]:
    x, w, bias = t["x"], t["weights"], t["bias"]
    assert x is not None and w is not None
    return [((x.shape[0], w.shape[1]), bias.dtype if bias is not None else "float32")]


_OUTPUT_RULES: Dict[str, _Rule] = {
    "Add": _like("a"), "Mul": _like("a"), "Sub": _like("a"), "SwiGLU": _like("a"),
    "Gemm": _gemm_output,
    "RMSNorm": _like("x"), "RoPE": _like("x"), "CausalSoftmax": _like("x"),
    "Rearrange": _like("src"),
    "RandomSample": lambda t, s: [((), "int64")],
    "Relu": _like("x"), "Sigmoid": _like("x"), "Silu": _like("input"), "Gelu": _like("input"),
    "GeluTanh": _like("x"), "Softmax": _like("x"), "LogSoftmax": _like("input"),
    "MulScalar": _like("input"),
    "LayerNorm": lambda t, s: [(tuple(t["input"].shape), t["input"].dtype)] * 2 + [  # type: ignore
        (tuple(t["input"].shape[:-1]), t["input"].dtype)],  # type: ignore[union-attr]
    "AddRMSNorm": lambda t, s: [(tuple(t["a"].shape), t["a"].dtype)] * 2,  # type: ignore
    "Embedding": lambda t, s: [(tuple(t["input"].shape) + (t["weight"].shape[1],),  # type: ignore
                                t["weight"].dtype)],  # type: ignore[union-attr]
    "PagedAttention": _like("q"), "PagedAttentionPrefill": _like("q"),
    "FlashAttention": _like("q"),
    "SiluAndMul": lambda t, s: [(tuple(t["x"].shape[:-1]) + (t["x"].shape[-1] // 2,),  # type: ignore
                                 t["x"].dtype)],  # type: ignore[union-attr]
    "DequantizeAWQ": lambda t, s: [((t["qweight"].shape[0], t["qweight"].shape[1] * 8),  # type: ignore
                                    t["scales"].dtype)],  # type: ignore[union-attr]
    "I8Gemm": _i8_gemm_output,
    "TopK": _topk_outputs, "Topksoftmax": _router_outputs, "Topkrouter": _router_outputs,
}


def _tensor_like(value: Any) -> bool:
    return value is None or isinstance(value, Tensor) or hasattr(value, "__dlpack__")


def _allocate_like(first: Any, shape: Tuple[int, ...], dtype: str) -> Any:
    """A new contiguous tensor of the type (and device) of `first`."""
    numpy = sys.modules.get("numpy")
    if numpy is not None and isinstance(first, numpy.ndarray):
        same = first.dtype.name == dtype
        return numpy.empty(shape, dtype=first.dtype if same else numpy.dtype(dtype))
    torch = sys.modules.get("torch")
    if torch is not None and isinstance(first, torch.Tensor):
        return torch.empty(shape, dtype=getattr(torch, dtype), device=first.device)
    if isinstance(first, Tensor):
        from . import _dlpack
        code, size = _library.dtype_code(dtype)
        del code
        count = 1
        for extent in shape:
            count *= extent
        # Host memory in (device None): the CPU device's memory out, which is host memory too.
        device = first.device if first.device is not None else get_device()
        buffer = Buffer(max(count * size, 1), device=device)
        made = Tensor(buffer.ptr, tuple(shape), _dlpack._contiguous_strides(shape), dtype, size,
                      first.device, _dlpack.device_of(buffer), False, None, None)
        made._source = buffer
        return made
    raise TypeError(f"cannot make an output like a {type(first).__name__}: pass the outputs")


def _functional(name: str, python_name: str, tensors: Sequence[_TensorEntry], args: Tuple[Any, ...],
                kwargs: Dict[str, Any], run: Callable[..., None]) -> Any:
    """The functional call: outputs made from the rule (or `out`), then the outputs-first call."""
    rule = _OUTPUT_RULES.get(name)
    outputs = [entry[0] for entry in tensors if entry[1]]
    inputs = [entry[0] for entry in tensors if not entry[1]]
    if rule is None or any(tensors[i][1] for i in range(len(outputs), len(tensors))):
        raise TypeError(f"{python_name} updates its outputs in part: pass them first")
    out = kwargs.pop("out", None)
    given = list(args[:len(inputs)])
    rest = args[len(inputs):]
    # The scalars by name (defaults first), for the rules.
    scalars: Dict[str, Any] = {}
    operator = _operator(name)
    for scalar, default, again in (*operator.create_scalars, *operator.call_scalars):
        if not again:
            scalars[scalar] = default
    for scalar, value in zip([n for n in _scalar_names(operator)], rest):
        scalars[scalar] = value
    scalars.update({k: v for k, v in kwargs.items() if k != "stream"})
    if out is None:
        described = {n: (None if v is None else _argument(v, n)) for n, v in zip(inputs, given)}
        first = next(v for v in given if v is not None)
        made = [_allocate_like(first, shape, dtype) for shape, dtype in rule(described, scalars)]
    else:
        made = list(out) if isinstance(out, (tuple, list)) else [out]
        if len(made) != len(outputs):
            raise TypeError(f"{python_name} has {len(outputs)} outputs, out= gave {len(made)}")
    run(*made, *given, *rest, **kwargs)
    return made[0] if len(made) == 1 else tuple(made)


def _scalar_names(operator: _Operator) -> List[str]:
    return [scalar for scalar, _, again in (*operator.create_scalars, *operator.call_scalars)
            if not again]


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

    names = [p.name for p in parameters[:-1]]  # all but stream
    required = len(tensors)  # the tensors have no default
    tail_defaults = [p.default for p in parameters[required:-1]]
    tensor_count = len(tensors)
    create_index = {scalar: names.index(scalar) for scalar, _, _ in create_scalars}

    def values_of(args: Tuple[Any, ...], kwargs: Dict[str, Any]) -> Tuple[List[Any], Any]:
        """The parameters' values in order, and the stream: positional arguments read directly
        (the usual call), anything else through the signature."""
        if not kwargs and required <= len(args) <= len(names):
            return list(args) + tail_defaults[len(args) - required:], None
        if set(kwargs) <= {"stream"} and required <= len(args) <= len(names):
            return list(args) + tail_defaults[len(args) - required:], kwargs.get("stream")
        bound = signature.bind(*args, **kwargs)
        bound.apply_defaults()
        return [bound.arguments[n] for n in names], bound.arguments["stream"]

    output_count = sum(1 for entry in tensors if entry[1])
    input_count = tensor_count - output_count

    def operator(*args: Any, **kwargs: Any) -> Any:
        if "out" in kwargs or (args and _leading_tensors(args) == input_count):
            return _functional(name, python_name, tensors, args, kwargs, outputs_first)
        return outputs_first(*args, **kwargs)

    def outputs_first(*args: Any, **kwargs: Any) -> None:
        values, stream = values_of(args, kwargs)
        by_name = dict(zip(names, values)) if call_scalars else {}
        calls = [_scalar(values[create_index[scalar]] if again else by_name[scalar],
                         defaults[scalar] if again else default)
                 for scalar, default, again in call_scalars]
        _run(name, values[:tensor_count],
             [_scalar(values[create_index[scalar]], default)
              for scalar, default, _ in create_scalars],
             calls, stream,
             {scalar: value for (scalar, _, _), value in zip(call_scalars, calls)})

    def _leading_tensors(args: Tuple[Any, ...]) -> int:
        count = 0
        for value in args:
            if not _tensor_like(value) or count == tensor_count:
                break
            count += 1
        return count

    operator.__name__ = operator.__qualname__ = python_name
    operator.__signature__ = signature  # type: ignore[attr-defined]
    operator.__doc__ = (f"{name}: {summary} Outputs first; queued on ``stream``. Given its inputs "
                        f"only (or out=), it makes its outputs like the first input and returns "
                        f"them.")
    return operator


__all__ = ["OpError"]
for _entry in _c_api.OPERATORS:
    # (name, python name, tensors, create scalars, call scalars, workspace, summary, ...)
    globals()[_entry[1]] = _define(*_entry[:5], _entry[6])
    __all__.append(_entry[1])
del _entry
