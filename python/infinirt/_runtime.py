"""Devices, streams, events, memory and graphs: the C API's objects as Python classes."""

from __future__ import annotations

import atexit
import ctypes
import itertools
import sys
import threading
import traceback
from dataclasses import dataclass
from typing import Any, Callable, Dict, List, Optional, Union

from . import _library
from ._library import rt
from .errors import Error, check, raise_for

__all__ = [
    "BackendInfo",
    "Buffer",
    "Device",
    "DeviceProperties",
    "Event",
    "Graph",
    "Stream",
    "backends",
    "current_stream",
    "device_count",
    "devices",
    "finalize",
    "get_device",
    "get_device_properties",
    "set_device",
    "synchronize",
]

_c_int = ctypes.c_int
_byref = ctypes.byref

# --- State shared by every object ------------------------------------------------------------


class _State(threading.local):
    """What one thread knows: whether it runs a host function of a stream (a runtime worker),
    and the stream a ``with stream:`` block made current."""

    in_host_function = False
    current_stream: Optional["Stream"] = None


_thread = _State()
# Incremented by finalize(): objects made before it are gone on the C side, and their handles and
# pointers must no longer be used.
_generation = 0
_exiting = False
# Releases that objects collected on a runtime worker thread could not do there (a free waits for
# the device's queued work, which includes the host function running on that thread).
_deferred: List[Callable[[], None]] = []
_deferred_lock = threading.Lock()


def _release(action: Callable[[], None]) -> None:
    """Runs a C release now, or later when on a runtime worker thread."""
    if _exiting:
        return
    if _thread.in_host_function:
        with _deferred_lock:
            _deferred.append(action)
        return
    action()


def _drain_deferred() -> None:
    if not _deferred:
        return
    with _deferred_lock:
        pending = list(_deferred)
        _deferred.clear()
    for action in pending:
        action()


def _check_alive(generation: int, what: str) -> None:
    if generation != _generation:
        raise Error(f"this {what} belongs to an InfiniRT that was finalised; it can no longer be used")


# --- Devices ---------------------------------------------------------------------------------


def device_count() -> int:
    """The number of devices of every backend together (0 when none: never an error)."""
    count = _c_int(0)
    code = rt.GetDeviceCount(_byref(count))
    if code != 0:
        rt.GetLastError()
        return 0
    return count.value


def get_device() -> int:
    """The calling thread's current device (a flat ordinal)."""
    device = _c_int(0)
    check(rt.GetDevice(_byref(device)), "infinirtGetDevice")
    return device.value


def set_device(device: Union[int, "Device"]) -> None:
    """Makes ``device`` (an ordinal or a :class:`Device`) the calling thread's current device."""
    check(rt.SetDevice(_ordinal(device)), "infinirtSetDevice", f"device {device!r}")


# Called after a wait with (device ordinal, stream handle or None for every stream of the device):
# what the waited-for work kept alive can be let go (the operators' tensors, infinirt.ops).
_synchronized_hooks: List[Callable[[int, Optional[int]], None]] = []


def _synchronized(device: int, stream: Optional[int]) -> None:
    for hook in _synchronized_hooks:
        hook(device, stream)


def synchronize(device: Union[int, "Device", None] = None) -> None:
    """Waits for all work queued on ``device`` (default: the current device), in every stream."""
    with _on_device(device):
        check(rt.DeviceSynchronize(), "infinirtDeviceSynchronize")
        if _synchronized_hooks:
            _synchronized(get_device(), None)


class DeviceProperties:
    """A device's properties, with the C structure's field names (``name``, ``totalGlobalMem``,
    ``major``, ``multiProcessorCount``, ``backendName``, ...)."""

    def __init__(self, fields: Dict[str, Any]) -> None:
        self.__dict__.update(fields)

    def __repr__(self) -> str:
        inner = ", ".join(f"{k}={v!r}" for k, v in self.__dict__.items())
        return f"DeviceProperties({inner})"


def get_device_properties(device: Union[int, "Device", None] = None) -> DeviceProperties:
    """The properties of ``device`` (default: the current device)."""
    ordinal = get_device() if device is None else _ordinal(device)
    raw = _library.new_struct("infinirtDeviceProp")
    check(rt.GetDeviceProperties(raw, ordinal), "infinirtGetDeviceProperties", f"device {ordinal}")
    return DeviceProperties(_library.read_struct("infinirtDeviceProp", raw))


class Device:
    """One device, by its flat ordinal (``Device(0)``) or by type and index among the devices of
    that type (``Device("cpu", 1)``). As a context manager it makes itself the current device and
    restores the previous one on leaving."""

    __slots__ = ("ordinal", "_previous")

    def __init__(self, device: Union[int, str, "Device"], index: Optional[int] = None) -> None:
        self._previous: List[int] = []
        if isinstance(device, Device):
            self.ordinal = device.ordinal
            return
        if isinstance(device, str):
            self.ordinal = _ordinal_of_type(device, 0 if index is None else index)
            return
        if isinstance(device, bool) or not isinstance(device, int):
            raise TypeError(f"a device is an ordinal or a type name, not {type(device).__name__}")
        if index is not None:
            raise TypeError("an index goes with a type name: Device('cpu', 1)")
        count = device_count()
        if not 0 <= device < count:
            raise ValueError(f"no device {device}: there are {count}")
        self.ordinal = device

    @property
    def type(self) -> str:
        """The backend's name: ``"cpu"``, ``"nvidia"``, ..."""
        return _library.DEVICE_TYPES[self._type_value()][2]

    @property
    def index(self) -> int:
        """The device's index among the devices of its type."""
        return self.properties().vendorDeviceIndex

    @property
    def name(self) -> str:
        return self.properties().name

    @property
    def total_memory(self) -> int:
        """Bytes of memory, as ``totalGlobalMem``."""
        return self.properties().totalGlobalMem

    def properties(self) -> DeviceProperties:
        return get_device_properties(self.ordinal)

    def synchronize(self) -> None:
        synchronize(self.ordinal)

    def _type_value(self) -> int:
        value = _c_int(0)
        check(rt.DeviceGetType(_byref(value), self.ordinal), "infinirtDeviceGetType")
        return value.value

    def __enter__(self) -> "Device":
        self._previous.append(get_device())
        set_device(self.ordinal)
        return self

    def __exit__(self, *exc: Any) -> None:
        set_device(self._previous.pop())

    def __eq__(self, other: object) -> bool:
        return isinstance(other, Device) and other.ordinal == self.ordinal

    def __hash__(self) -> int:
        return hash(self.ordinal)

    def __int__(self) -> int:
        return self.ordinal

    def __index__(self) -> int:
        return self.ordinal

    def __repr__(self) -> str:
        return f"Device({self.ordinal}: {self.type}:{self.index} {self.name!r})"


def devices() -> List[Device]:
    """Every device of every backend, in ordinal order."""
    return [Device(i) for i in range(device_count())]


def _ordinal(device: Union[int, Device]) -> int:
    if isinstance(device, Device):
        return device.ordinal
    if isinstance(device, bool) or not isinstance(device, int):
        raise TypeError(f"a device is an ordinal or a Device, not {type(device).__name__}")
    return device


def _ordinal_of_type(type_name: str, index: int) -> int:
    value = _library.DEVICE_TYPE_BY_PLUGIN.get(type_name.lower())
    if value is None:
        known = ", ".join(sorted(_library.DEVICE_TYPE_BY_PLUGIN))
        raise ValueError(f"no device type {type_name!r} (known: {known})")
    ordinal = _c_int(0)
    check(rt.DeviceGetOrdinal(_byref(ordinal), value, index), "infinirtDeviceGetOrdinal",
          f"device {type_name}:{index}")
    return ordinal.value


class _on_device:
    """Makes a device current for a block when one is given (None: leaves the current one)."""

    def __init__(self, device: Union[int, Device, None]) -> None:
        self.target = None if device is None else _ordinal(device)
        self.previous: Optional[int] = None

    def __enter__(self) -> None:
        if self.target is not None:
            self.previous = get_device()
            if self.previous != self.target:
                set_device(self.target)
            else:
                self.previous = None

    def __exit__(self, *exc: Any) -> None:
        if self.previous is not None:
            set_device(self.previous)


# --- Backends --------------------------------------------------------------------------------


@dataclass(frozen=True)
class BackendInfo:
    """One plugin InfiniRT considered, loaded or not, and why (as ``infinirt-info`` lists it)."""

    name: str
    status: str  # "Loaded", "NotFound", "RuntimeMissing", ...
    device_type: Optional[str]
    device_count: int
    path: str
    abi: Optional[str]
    runtime_version: Optional[int]
    runtime_library: str
    load_time_ms: float
    reason: str

    @property
    def loaded(self) -> bool:
        return self.status == "Loaded"


def backends() -> List[BackendInfo]:
    """Every backend considered at start-up, with the reason for each one not in use."""
    rt.Init()  # NoDevice is an answer, not an error, for the listing
    rt.GetLastError()
    count = _c_int(0)
    check(rt.GetBackendCount(_byref(count)), "infinirtGetBackendCount")
    listing = []
    for index in range(count.value):
        raw = _library.new_struct("infinirtBackendProp")
        check(rt.GetBackendProperties(raw, index), "infinirtGetBackendProperties")
        f = _library.read_struct("infinirtBackendProp", raw)
        known_type = f["deviceType"] in _library.DEVICE_TYPES
        listing.append(
            BackendInfo(
                name=f["name"],
                status=_library.BACKEND_STATUSES.get(f["status"], str(f["status"])),
                device_type=_library.DEVICE_TYPES[f["deviceType"]][2] if known_type else None,
                device_count=f["deviceCount"],
                path=f["path"],
                abi=f"{f['abiMajor']}.{f['abiMinor']}" if f["abiMajor"] >= 0 else None,
                runtime_version=f["runtimeVersion"] if f["runtimeVersion"] >= 0 else None,
                runtime_library=f["runtimeLibrary"],
                load_time_ms=f["loadTimeMs"],
                reason=f["reason"],
            )
        )
    return listing


# --- Host functions --------------------------------------------------------------------------

_HOST_FN = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
# Python callables queued as host functions, by the key passed as their user data. A call queued
# outside capture runs once and is forgotten; one recorded by a capture stays until its graph goes.
_host_calls: Dict[int, Callable[[], Any]] = {}
_once: Dict[int, bool] = {}
_host_keys = itertools.count(1)
_host_lock = threading.Lock()


def _run_host_function(key: Optional[int]) -> None:
    with _host_lock:
        function = _host_calls.get(key or 0)
        if _once.pop(key or 0, False):
            _host_calls.pop(key or 0, None)
    if function is None or _exiting:
        return
    _thread.in_host_function = True
    try:
        function()
    except BaseException:  # a host function cannot fail the stream: report, as CUDA's do
        sys.stderr.write("infinirt: a host function raised:\n")
        traceback.print_exc()
    finally:
        _thread.in_host_function = False


_host_trampoline = _HOST_FN(_run_host_function)
_HOST_TRAMPOLINE_ADDRESS = ctypes.cast(_host_trampoline, ctypes.c_void_p)


def _launch_host_function(stream: Optional[int], function: Callable[[], Any], once: bool) -> int:
    """Queues ``function`` on the stream of handle ``stream`` (None: the current device's default
    stream); the key it is known by."""
    key = next(_host_keys)
    with _host_lock:
        _host_calls[key] = function
        if once:
            _once[key] = True
    code = rt.LaunchHostFunc(stream, _HOST_TRAMPOLINE_ADDRESS, key)
    if code != 0:
        with _host_lock:
            _host_calls.pop(key, None)
            _once.pop(key, None)
        raise_for(code, "infinirtLaunchHostFunc")
    return key


def _forget_host_calls(keys: List[int]) -> None:
    with _host_lock:
        for key in keys:
            _host_calls.pop(key, None)


# --- Streams and events ----------------------------------------------------------------------


class Stream:
    """A queue of work on one device (``infinirtStreamCreateWithFlags``). Work queued on it runs
    in order; ``with stream:`` makes it the thread's current stream, which ``Event.record`` and
    the operators use when given no stream. Destroyed when collected or closed, after its work."""

    __slots__ = ("_handle", "_generation", "_device", "_previous", "_allocated_for",
                 "__weakref__")

    # Flags (infinirt.h's numbers): Stream(Stream.NON_BLOCKING) is not ordered with the default
    # stream.
    DEFAULT = _library.CONSTANTS["infinirtStreamDefault"]
    NON_BLOCKING = _library.CONSTANTS["infinirtStreamNonBlocking"]

    def __init__(self, flags: int = 0, device: Union[int, Device, None] = None) -> None:
        if not isinstance(flags, int) or flags < 0:
            raise ValueError(f"stream flags are a non-negative int, not {flags!r}")
        _drain_deferred()
        handle = ctypes.c_void_p()
        with _on_device(device):
            check(rt.StreamCreateWithFlags(_byref(handle), flags), "infinirtStreamCreateWithFlags",
                  f"flags {flags}")
            self._device = get_device()
        self._handle = handle.value
        self._generation = _generation
        self._previous: List[Optional[Stream]] = []
        self._allocated_for = False  # a Buffer was allocated for it (see close)

    @property
    def handle(self) -> int:
        """The ``infinirtStream_t`` as an integer (0 once closed)."""
        return self._handle or 0

    @property
    def device(self) -> Device:
        return Device(self._device)

    def query(self) -> bool:
        """True when all work queued so far has completed."""
        if self._handle is None:
            _closed("stream")
        code = rt.StreamQuery(self._handle)
        if code == 0:  # the common answer first, with nothing else on its path
            return True
        return _not_ready(code, "infinirtStreamQuery")

    def synchronize(self) -> None:
        """Waits for all work queued so far."""
        check(rt.StreamSynchronize(_stream_handle(self)), "infinirtStreamSynchronize")
        if _synchronized_hooks:
            _synchronized(self._device, self._handle)

    def wait_event(self, event: "Event") -> None:
        """Makes later work of this stream wait for ``event``'s recorded work."""
        if not isinstance(event, Event):
            raise TypeError(f"wait_event takes an Event, not {type(event).__name__}")
        check(rt.StreamWaitEvent(_stream_handle(self), _event_handle(event), 0),
              "infinirtStreamWaitEvent")

    def record_event(self, event: Optional["Event"] = None) -> "Event":
        """Records ``event`` (a new one when None) here and returns it."""
        event = Event() if event is None else event
        event.record(self)
        return event

    def launch_host_func(self, function: Callable[[], Any]) -> None:
        """Runs ``function()`` in stream order, on a runtime thread, after the work queued before
        it. It must not call InfiniRT (as in CUDA: such calls fail with NotPermittedError). An exception it
        raises is printed and does not stop the stream. Recorded into a graph when the stream
        captures: it then runs at each launch of the graph."""
        if not callable(function):
            raise TypeError(f"launch_host_func takes a callable, not {type(function).__name__}")
        capturing = self.is_capturing()
        key = _launch_host_function(_stream_handle(self), function, once=not capturing)
        if capturing:
            _Capture.record_host_call(self, key)

    def is_capturing(self) -> bool:
        """True while the stream captures into a graph."""
        status = _c_int(0)
        check(rt.StreamIsCapturing(_stream_handle(self), _byref(status)),
              "infinirtStreamIsCapturing")
        return status.value == _library.CONSTANTS["infinirtStreamCaptureStatusActive"]

    def capture(self, mode: str = "global") -> "_Capture":
        """A context manager capturing the work queued on this stream into a :class:`Graph`::

            with stream.capture() as graph:
                buffer.fill(0, stream=stream)
            graph.launch(stream)

        ``mode`` is CUDA's capture mode: "global", "thread_local" or "relaxed"."""
        return _Capture(self, mode)

    def close(self) -> None:
        """Destroys the stream now (its queued work still runs; when Buffers were allocated for
        it, the stream's work is waited for first, so that their memory can serve other
        streams)."""
        handle, self._handle = self._handle, None
        if handle and self._generation == _generation:
            if self._allocated_for:
                check(_library.allocator().ReleaseStream(handle),
                      "infinirtCachingAllocatorReleaseStream")
            code = rt.StreamDestroy(handle)
            if code != 0:
                raise_for(code, "infinirtStreamDestroy")

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle and self._generation == _generation:
            allocated_for = self._allocated_for
            _release(lambda: _destroy_stream(handle, allocated_for))

    def __enter__(self) -> "Stream":
        self._previous.append(_thread.current_stream)
        _thread.current_stream = self
        return self

    def __exit__(self, *exc: Any) -> None:
        _thread.current_stream = self._previous.pop()

    def __repr__(self) -> str:
        return f"Stream(handle={self.handle:#x}, device={self._device})"


def _destroy_stream(handle: int, allocated_for: bool) -> None:
    """A collected stream's release (errors are dropped: nobody is left to tell)."""
    if allocated_for:
        _library.allocator().ReleaseStream(handle)
    rt.StreamDestroy(handle)
    rt.GetLastError()


def _not_ready(code: int, call: str) -> bool:
    """A query's answer other than success: False for NotReady, else the error raised."""
    if code == _library.NOT_READY:
        return False
    raise_for(code, call)
    return False


def _closed(what: str) -> None:
    raise ValueError(f"the {what} is closed")


def current_stream() -> Optional[Stream]:
    """The stream a ``with stream:`` block made current on this thread (None: the default)."""
    return _thread.current_stream


def _stream_handle(stream: Optional[Stream]) -> Optional[int]:
    if stream is None:
        return None
    if not isinstance(stream, Stream):
        raise TypeError(f"a stream is a Stream or None, not {type(stream).__name__}")
    if not stream._handle:
        _closed("stream")
    return stream._handle


def _target_stream(stream: Optional[Stream]) -> "tuple[Optional[Stream], Optional[int]]":
    """Where work given ``stream`` goes: it, else the thread's current stream, else the default
    stream (None); with its handle."""
    stream = _thread.current_stream if stream is None else stream
    return stream, _stream_handle(stream)


def _event_handle(event: "Event") -> int:
    if not event._handle:
        _closed("event")
    return event._handle


class Event:
    """A point in a stream's work (``infinirtEventCreateWithFlags``), for waiting and timing:
    ``start.elapsed_time(end)`` is the time between two recorded events in milliseconds."""

    __slots__ = ("_handle", "_generation")

    # Flags (infinirt.h's numbers), combined with |.
    DEFAULT = _library.CONSTANTS["infinirtEventDefault"]
    BLOCKING_SYNC = _library.CONSTANTS["infinirtEventBlockingSync"]
    DISABLE_TIMING = _library.CONSTANTS["infinirtEventDisableTiming"]

    def __init__(self, flags: int = 0) -> None:
        if not isinstance(flags, int) or flags < 0:
            raise ValueError(f"event flags are a non-negative int, not {flags!r}")
        _drain_deferred()
        handle = ctypes.c_void_p()
        check(rt.EventCreateWithFlags(_byref(handle), flags), "infinirtEventCreateWithFlags",
              f"flags {flags}")
        self._handle = handle.value
        self._generation = _generation

    @property
    def handle(self) -> int:
        return self._handle or 0

    def record(self, stream: Optional[Stream] = None) -> None:
        """Records the event on ``stream`` (default: the current stream, else the default stream)."""
        check(rt.EventRecord(_event_handle(self), _target_stream(stream)[1]), "infinirtEventRecord")

    def query(self) -> bool:
        """True when the recorded work has completed (or nothing was recorded)."""
        if self._handle is None:
            _closed("event")
        code = rt.EventQuery(self._handle)
        if code == 0:  # the common answer first, with nothing else on its path
            return True
        return _not_ready(code, "infinirtEventQuery")

    def synchronize(self) -> None:
        check(rt.EventSynchronize(_event_handle(self)), "infinirtEventSynchronize")

    def elapsed_time(self, end: "Event") -> float:
        """Milliseconds from this event to ``end``, both recorded and completed."""
        if not isinstance(end, Event):
            raise TypeError(f"elapsed_time takes an Event, not {type(end).__name__}")
        ms = ctypes.c_float(0)
        check(rt.EventElapsedTime(_byref(ms), _event_handle(self), _event_handle(end)),
              "infinirtEventElapsedTime")
        return ms.value

    def close(self) -> None:
        handle, self._handle = self._handle, None
        if handle and self._generation == _generation:
            check(rt.EventDestroy(handle), "infinirtEventDestroy")

    def __del__(self) -> None:
        handle = getattr(self, "_handle", None)
        if handle and self._generation == _generation:
            _release(lambda: (rt.EventDestroy(handle), rt.GetLastError()))

    def __repr__(self) -> str:
        return f"Event(handle={self.handle:#x})"


# --- Graphs ----------------------------------------------------------------------------------

_CAPTURE_MODES = {
    "global": _library.CONSTANTS["infinirtStreamCaptureModeGlobal"],
    "thread_local": _library.CONSTANTS["infinirtStreamCaptureModeThreadLocal"],
    "relaxed": _library.CONSTANTS["infinirtStreamCaptureModeRelaxed"],
}


class Graph:
    """Work captured from a stream, launched as a whole: ``graph.launch(stream)``. Instantiated
    on its first launch."""

    __slots__ = ("_graph", "_exec", "_generation", "_host_keys", "_held", "_launched_on",
                 "_pool")

    def __init__(self) -> None:
        self._graph: Optional[int] = None
        self._exec: Optional[int] = None
        self._generation = _generation
        self._host_keys: List[int] = []
        self._held: List[Any] = []  # host memory its copies read or write, held while it lives
        self._launched_on: Dict[Optional[int], Optional[Stream]] = {}
        # The caching allocator's pool of the Buffers allocated during the capture: their
        # addresses stay the graph's until it is closed.
        self._pool = 0

    def instantiate(self) -> None:
        """Prepares the graph for launching (done by the first launch otherwise)."""
        _check_alive(self._generation, "graph")
        if self._graph is None:
            raise Error("the graph is empty: its capture did not end")
        if self._exec is None:
            handle = ctypes.c_void_p()
            check(rt.GraphInstantiate(_byref(handle), self._graph, 0), "infinirtGraphInstantiate")
            self._exec = handle.value

    def launch(self, stream: Optional[Stream] = None) -> None:
        """Queues the graph's work on ``stream`` (default: the current stream, else the default)."""
        self.instantiate()
        stream, handle = _target_stream(stream)
        check(rt.GraphLaunch(self._exec, handle), "infinirtGraphLaunch")
        if self._held or self._pool:
            self._launched_on[handle] = stream

    def close(self) -> None:
        graph, graph_exec = self._graph, self._exec
        self._graph = self._exec = None
        if self._generation == _generation:
            # Host memory held for the graph's copies, and the memory of its pool, go only after
            # its launches have run.
            for handle in self._launched_on:
                rt.StreamSynchronize(handle)
            self._launched_on.clear()
            if graph_exec:
                rt.GraphExecDestroy(graph_exec)
            if graph:
                rt.GraphDestroy(graph)
            rt.GetLastError()
            if self._pool:
                _library.allocator().ReleasePool(self._pool)
        self._pool = 0
        _forget_host_calls(self._host_keys)
        self._host_keys = []
        for view in self._held:
            view.release()
        self._held = []

    def __del__(self) -> None:
        if (getattr(self, "_graph", None) or getattr(self, "_exec", None)
                or getattr(self, "_pool", 0)):
            _release(self.close)


class _Capture:
    """``with stream.capture() as graph:``: begins the capture on entry, ends it on leaving."""

    _active: Dict[int, "Graph"] = {}  # by stream handle, for the host functions recorded

    def __init__(self, stream: Stream, mode: str) -> None:
        if mode not in _CAPTURE_MODES:
            raise ValueError(f"capture mode is one of {sorted(_CAPTURE_MODES)}, not {mode!r}")
        self.stream = stream
        self.mode = _CAPTURE_MODES[mode]
        self.graph = Graph()

    @classmethod
    def record_host_call(cls, stream: Stream, key: int) -> None:
        graph = cls._active.get(stream.handle)
        if graph is not None:
            graph._host_keys.append(key)

    @classmethod
    def hold(cls, stream: Stream, view: Any) -> bool:
        """Keeps ``view`` for the life of the graph ``stream`` captures into (False: none)."""
        graph = cls._active.get(stream.handle)
        if graph is None:
            return False
        graph._held.append(view)
        return True

    def __enter__(self) -> Graph:
        handle = _stream_handle(self.stream)
        check(rt.StreamBeginCapture(handle, self.mode), "infinirtStreamBeginCapture")
        pool = ctypes.c_ulonglong(0)
        code = _library.allocator().BeginPin(handle, _byref(pool))
        if code != 0:
            rt.StreamEndCapture(handle, _byref(ctypes.c_void_p()))
            rt.GetLastError()
            raise_for(code, "infinirtCachingAllocatorBeginPin")
        self.graph._pool = pool.value
        _Capture._active[handle] = self.graph
        return self.graph

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        handle = self.stream._handle
        _Capture._active.pop(handle, None)
        _library.allocator().EndPin(handle)
        graph = ctypes.c_void_p()
        code = rt.StreamEndCapture(handle, _byref(graph))
        self.graph._graph = graph.value
        if exc_type is not None:  # the block failed: its exception, not the capture's
            rt.GetLastError()
            self.graph.close()
            return
        if code != 0:
            self.graph.close()
            raise_for(code, "infinirtStreamEndCapture")


# --- Memory ----------------------------------------------------------------------------------


class _PyBuffer(ctypes.Structure):
    # CPython's Py_buffer (part of the stable ABI since 3.11, and unchanged since 3.3).
    _fields_ = [
        ("buf", ctypes.c_void_p),
        ("obj", ctypes.py_object),
        ("len", ctypes.c_ssize_t),
        ("itemsize", ctypes.c_ssize_t),
        ("readonly", ctypes.c_int),
        ("ndim", ctypes.c_int),
        ("format", ctypes.c_char_p),
        ("shape", ctypes.c_void_p),
        ("strides", ctypes.c_void_p),
        ("suboffsets", ctypes.c_void_p),
        ("internal", ctypes.c_void_p),
    ]


_get_buffer = ctypes.pythonapi.PyObject_GetBuffer
_get_buffer.argtypes = [ctypes.py_object, ctypes.POINTER(_PyBuffer), ctypes.c_int]
_get_buffer.restype = ctypes.c_int
_release_buffer = ctypes.pythonapi.PyBuffer_Release
_release_buffer.argtypes = [ctypes.POINTER(_PyBuffer)]
_release_buffer.restype = None
_PYBUF_WRITABLE = 0x0001


class _HostView:
    """The memory of an object of the buffer protocol (bytes, bytearray, memoryview, NumPy),
    held until released: its address and length."""

    def __init__(self, obj: Any, writable: bool) -> None:
        self.view = _PyBuffer()
        try:
            _get_buffer(obj, _byref(self.view), _PYBUF_WRITABLE if writable else 0)
        except (BufferError, ValueError) as error:
            need = "writable, contiguous" if writable else "contiguous"
            raise TypeError(f"{type(obj).__name__} is not {need} memory: {error}") from None
        except TypeError:
            raise TypeError(
                f"expected a Buffer or an object of the buffer protocol (bytes, bytearray, "
                f"memoryview, a NumPy array), not {type(obj).__name__}"
            ) from None
        self.held = True

    @property
    def address(self) -> int:
        return self.view.buf or 0

    @property
    def nbytes(self) -> int:
        return self.view.len

    def release(self) -> None:
        if self.held:
            self.held = False
            _release_buffer(_byref(self.view))


class Buffer:
    """Memory of a device (the current device when ``device`` is None) or pinned host memory
    (``pinned_host=True``, ``infinirtMallocHost``).

    Device memory comes from the caching allocator (:func:`memory_stats`, :func:`empty_cache`),
    for ``stream`` (default: the current stream when it is on that device, else the default
    stream). Freed when collected or closed, it goes back to the cache: later Buffers for the same
    stream reuse it at once (stream order makes that safe), other streams once that stream's work
    before the free is done. Work this Buffer's methods, the operators and the collectives queue
    on other streams is recorded (:meth:`record_stream`) and passes before the memory is reused;
    memory handed to another library through DLPack and used on its own streams is the caller's
    to record.

    ``copy_from``/``copy_to`` move bytes between it and another Buffer or any object of the buffer
    protocol; without a stream they return once the copy is done, with one they are queued on it.
    It is a DLPack producer (a 1-D uint8 tensor of ``nbytes``): ``numpy.from_dlpack(buffer)``
    shares host-reachable memory without a copy."""

    __slots__ = ("_ptr", "_nbytes", "_device", "_pinned", "_owner", "_generation", "_stream",
                 "_uses", "__weakref__")

    def __init__(self, nbytes: int, device: Union[int, Device, None] = None,
                 pinned_host: bool = False, stream: Optional[Stream] = None) -> None:
        if isinstance(nbytes, bool) or not isinstance(nbytes, int):
            raise TypeError(f"nbytes is an int, not {type(nbytes).__name__}")
        if nbytes < 0:
            raise ValueError(f"nbytes must not be negative, not {nbytes}")
        if _deferred:
            _drain_deferred()
        self._ptr: Optional[int] = None
        self._generation = _generation
        self._pinned = bool(pinned_host)
        self._owner: Any = None
        self._stream: Optional[int] = None  # the stream the memory was allocated for
        self._uses: Optional[List[Optional[int]]] = None  # other streams recorded
        if stream is not None:
            _stream_handle(stream)  # checked before anything is allocated
            if device is None:
                device = stream._device
        if device is None:  # the common case, kept short: no device to switch to
            self._ptr = self._allocate(nbytes, stream)
        else:
            with _on_device(device):
                self._ptr = self._allocate(nbytes, stream)
        self._nbytes = nbytes

    def _allocate(self, nbytes: int, stream: Optional[Stream]) -> int:
        """Memory of the current device: pinned host memory, or device memory from the caching
        allocator for ``stream`` or the current stream. Returns its address (0 for 0 bytes)."""
        self._device = device = get_device()
        pointer = ctypes.c_void_p()
        if self._pinned:
            check(rt.MallocHost(_byref(pointer), nbytes), "infinirtMallocHost", f"{nbytes} bytes")
            return pointer.value or 0
        if nbytes == 0:  # nothing to allocate (the address is 0)
            return 0
        if stream is None:
            current = _thread.current_stream
            if current is not None and current._handle and current._device == device:
                stream = current
        elif stream._device != device:
            raise ValueError(f"the stream is on device {stream._device}, the buffer on device "
                             f"{device}")
        handle = None if stream is None else stream._handle
        code = _library.allocator().Malloc(_byref(pointer), nbytes, handle)
        if code != 0:
            raise_for(code, "infinirtCachingAllocatorMalloc", f"{nbytes} bytes")
        self._stream = handle
        if stream is not None:
            stream._allocated_for = True
        return pointer.value or 0

    def _cached(self) -> bool:
        """Whether the memory is the caching allocator's (device memory allocated here)."""
        return bool(self._ptr) and not self._pinned and self._owner is None

    def _use(self, handle: Optional[int]) -> None:
        """Notes that work queued on the stream ``handle`` (None: the default stream) uses the
        memory: it passes before the memory is reused."""
        if not self._cached():
            _record_uses([self._owner], handle)  # a view of a Buffer (Tensor.buffer)
            return
        if handle == self._stream:
            return
        if self._uses is None:
            self._uses = []
        elif handle in self._uses:
            return
        check(_library.allocator().RecordStream(self._ptr, handle),
              "infinirtCachingAllocatorRecordStream")
        self._uses.append(handle)

    def record_stream(self, stream: Optional[Stream]) -> None:
        """Says that work queued on ``stream`` (None: the default stream) uses this memory, as
        PyTorch's ``Tensor.record_stream``: once the Buffer is freed, its memory is reused only
        after that work, as queued at the free, is done. Needed only for work queued by other
        libraries; InfiniRT's own calls record the streams they use."""
        self._alive()
        self._use(_stream_handle(stream))

    @classmethod
    def _wrap(cls, ptr: int, nbytes: int, device: int, owner: Any) -> "Buffer":
        """A Buffer over memory another library owns (kept alive by ``owner``); not freed here."""
        self = cls.__new__(cls)
        self._ptr = ptr
        self._nbytes = nbytes
        self._device = device
        self._pinned = False
        self._owner = owner
        self._generation = _generation
        self._stream = None
        self._uses = None
        return self

    @property
    def nbytes(self) -> int:
        return self._nbytes

    @property
    def ptr(self) -> int:
        """The address, as an integer."""
        self._alive()
        return self._ptr or 0

    @property
    def device(self) -> Device:
        """The device whose memory this is (for pinned host memory: the device current when it
        was allocated)."""
        return Device(self._device)

    @property
    def pinned_host(self) -> bool:
        return self._pinned

    def _alive(self) -> None:
        if self._ptr is None:
            raise ValueError("the buffer is closed")
        _check_alive(self._generation, "buffer")

    def copy_from(self, src: Any, stream: Optional[Stream] = None) -> None:
        """Copies all of ``src`` (a Buffer or an object of the buffer protocol) to the start of
        this buffer; it must fit."""
        self._copy(src, to_self=True, stream=stream)

    def copy_to(self, dst: Any, stream: Optional[Stream] = None) -> None:
        """Copies the start of this buffer into all of ``dst`` (a writable Buffer or an object of
        the buffer protocol); it must not be larger than this buffer."""
        self._copy(dst, to_self=False, stream=stream)

    def _copy(self, other: Any, to_self: bool, stream: Optional[Stream]) -> None:
        self._alive()
        handle = _stream_handle(stream)
        view = None
        if isinstance(other, Buffer):
            other._alive()
            address, nbytes = other._ptr or 0, other._nbytes
            if handle is not None:
                other._use(handle)
        else:
            view = _HostView(other, writable=not to_self)
            address, nbytes = view.address, view.nbytes
        try:
            if nbytes > self._nbytes:
                what = "the source" if to_self else "the destination"
                raise ValueError(f"{what} has {nbytes} bytes; the buffer only {self._nbytes}")
            dst, src = (self._ptr, address) if to_self else (address, self._ptr)
            kind = _library.CONSTANTS["infinirtMemcpyDefault"]
            if handle is None:
                code = rt.Memcpy(dst, src, nbytes, kind)
                if code != 0:
                    raise_for(code, "infinirtMemcpy", f"{nbytes} bytes")
                return
            self._use(handle)
            code = rt.MemcpyAsync(dst, src, nbytes, kind, handle)
            if code != 0:
                raise_for(code, "infinirtMemcpyAsync", f"{nbytes} bytes")
            if view is not None:  # the host memory stays held until the copy has run
                assert stream is not None
                if not _Capture.hold(stream, view):
                    stream.launch_host_func(view.release)
                view = None
        finally:
            if view is not None:
                view.release()

    def fill(self, byte: int, stream: Optional[Stream] = None) -> None:
        """Sets every byte to ``byte`` (0 to 255)."""
        self._alive()
        if isinstance(byte, bool) or not isinstance(byte, int) or not 0 <= byte <= 255:
            raise ValueError(f"fill takes a byte value 0 to 255, not {byte!r}")
        handle = _stream_handle(stream)
        self._use(handle)  # the default stream's memset may still run when it returns
        if handle is None:
            check(rt.Memset(self._ptr, byte, self._nbytes), "infinirtMemset")
        else:
            check(rt.MemsetAsync(self._ptr, byte, self._nbytes, handle), "infinirtMemsetAsync")

    def close(self) -> None:
        """Frees the memory now: device memory back to the cache (see the class), pinned host
        memory after the work queued on it."""
        pointer, self._ptr = self._ptr, None
        if pointer and self._owner is None and self._generation == _generation:
            if self._pinned:
                check(rt.FreeHost(pointer), "infinirtFreeHost")
            else:
                check(_library.allocator().Free(pointer), "infinirtCachingAllocatorFree")
        self._owner = None

    def __del__(self) -> None:
        pointer = getattr(self, "_ptr", None)
        if pointer and self._owner is None and self._generation == _generation:
            if self._pinned:
                _release(lambda: (rt.FreeHost(pointer), rt.GetLastError()))
            else:
                _release(lambda: _library.allocator().Free(pointer))

    def __len__(self) -> int:
        return self._nbytes

    def __repr__(self) -> str:
        where = "pinned host" if self._pinned else f"device {self._device}"
        return f"Buffer({self._nbytes} bytes, {where}, ptr={self._ptr or 0:#x})"

    # DLPack (see _dlpack.py)
    def __dlpack__(self, stream: Any = None, max_version: Any = None, dl_device: Any = None,
                   copy: Any = None) -> Any:
        from . import _dlpack

        self._alive()
        return _dlpack.export(self, stream=stream, max_version=max_version, dl_device=dl_device,
                              copy=copy)

    def __dlpack_device__(self) -> Any:
        from . import _dlpack

        return _dlpack.device_of(self)


def _record_uses(objects: List[Any], handle: Optional[int]) -> None:
    """Records the stream ``handle`` on every Buffer among ``objects``, and on the Buffer a
    Tensor of ``infinirt.from_dlpack`` views."""
    for item in objects:
        if not isinstance(item, Buffer):
            item = getattr(item, "_source", None)
        if isinstance(item, Buffer):
            item._use(handle)


# --- Life cycle ------------------------------------------------------------------------------


def finalize() -> None:
    """Waits for queued work, releases every object and unloads the plugins
    (``infinirtFinalize``). Objects made before it raise an error when used; calls made after it
    start InfiniRT again."""
    global _generation
    _drain_deferred()
    if _library.allocator_opened():  # the cache's memory ends with InfiniRT
        check(_library.allocator().FreeAll(), "infinirtCachingAllocatorFreeAll")
    check(rt.Finalize(), "infinirtFinalize")
    _generation += 1


def _at_exit() -> None:
    # Host functions written in Python must not run while the interpreter is being torn down:
    # wait for every device's queued work, then let nothing more call back into Python.
    global _exiting
    try:
        _drain_deferred()
        for ordinal in range(device_count()):
            if rt.SetDevice(ordinal) == 0:
                rt.DeviceSynchronize()
        rt.GetLastError()
    finally:
        _exiting = True


atexit.register(_at_exit)

