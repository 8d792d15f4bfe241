"""InfiniCCL from Python: collectives across the devices of one process or the processes of a job.

A job launched as torchrun launches one (``RANK``, ``WORLD_SIZE``, ``MASTER_ADDR``,
``MASTER_PORT``; or OpenMPI's variables)::

    import infinirt, infinirt.ccl as ccl
    comm = ccl.init_from_env()              # on the current device
    comm.all_reduce(buffer, "sum", dtype="float32")
    comm.synchronize()                      # or synchronize the stream passed

Buffers are :class:`infinirt.Buffer` (give ``dtype``, and ``count`` unless the whole buffer is
meant) or DLPack tensors wrapped by :func:`infinirt.from_dlpack` (their dtype and size are used).
Operations are queued on ``stream`` (default: the current stream, else the default stream) and
return at once. Failures raise :class:`CclError`, whose ``status`` is InfiniCore's status code.
"""

from __future__ import annotations

import ctypes
from typing import Any, Dict, List, Optional, Sequence, Tuple, Union

from . import _c_api, _library, _runtime
from ._dlpack import Tensor
from ._runtime import (Buffer, Device, Stream, _check_alive, _on_device, _ordinal,
                       _record_uses, _target_stream, _thread)
from .errors import StatusError, raise_status

__all__ = ["CclError", "Communicator", "OPS", "get_unique_id", "group", "init_all",
           "init_from_env", "init_rank"]

OPS: Dict[str, int] = {name.lower(): value for name, value in _c_api.REDUCE_OPS}
_dtype_code = _library.dtype_code


class CclError(StatusError):
    """A failed InfiniCCL call: ``status`` is InfiniCore's status code (``code`` too) and
    ``name`` its name (``"INFINI_STATUS_BAD_PARAM"``); the message says what InfiniCCL said."""


def _check(status: int, call: str) -> None:
    if status == 0:
        return
    said = (_library.ccl().GetLastError(None) or b"").decode("utf-8", "replace")
    raise_status(CclError, status, call, said)


def _op_code(op: Union[str, int]) -> int:
    if isinstance(op, str) and op.lower() in OPS:
        return OPS[op.lower()]
    raise ValueError(f"the reduction is one of {sorted(OPS)}, not {op!r}")


def _memory(data: Any, dtype: Optional[str], count: Optional[int],
            what: str) -> Tuple[int, int, int]:
    """Address, element count and dtype number of a Buffer or Tensor argument."""
    if isinstance(data, Tensor):
        if not data.is_contiguous():
            raise ValueError(f"{what}: the tensor is not contiguous")
        code, size = _dtype_code(data.dtype if dtype is None else dtype)
        elements = data.nbytes // size
        address = data.ptr
    elif isinstance(data, Buffer):
        code, size = _dtype_code("float32" if dtype is None else dtype)
        elements = data.nbytes // size
        address = data.ptr
    else:
        raise TypeError(f"{what} is a Buffer or a Tensor (infinirt.from_dlpack), "
                        f"not {type(data).__name__}")
    if count is not None:
        if isinstance(count, bool) or not isinstance(count, int) or count < 0:
            raise ValueError(f"count is a non-negative int, not {count!r}")
        if count > elements:
            raise ValueError(f"{what} holds {elements} elements, fewer than count {count}")
        elements = count
    return address, elements, code


class Communicator:
    """One rank of a communicator. Destroyed when collected or by :meth:`destroy` (which waits for
    its queued work); :meth:`abort` ends it without waiting for the other ranks."""

    __slots__ = ("_comm", "_generation", "_device", "__weakref__")

    def __init__(self, handle: int) -> None:
        self._comm: Optional[int] = handle
        self._generation = _runtime._generation
        device = ctypes.c_int(0)
        _check(_library.ccl().CommDevice(handle, ctypes.byref(device)), "infinicclCommDevice")
        self._device = device.value

    def _handle(self) -> int:
        if self._comm is None:
            raise ValueError("the communicator is destroyed")
        _check_alive(self._generation, "communicator")
        return self._comm

    def _int(self, getter: Any, call: str) -> int:
        value = ctypes.c_int(0)
        _check(getter(self._handle(), ctypes.byref(value)), call)
        return value.value

    @property
    def size(self) -> int:
        """The number of ranks."""
        return self._int(_library.ccl().CommCount, "infinicclCommCount")

    @property
    def rank(self) -> int:
        return self._int(_library.ccl().CommUserRank, "infinicclCommUserRank")

    @property
    def device(self) -> Device:
        """The rank's device."""
        return Device(self._int(_library.ccl().CommDevice, "infinicclCommDevice"))

    @property
    def engine(self) -> str:
        """The engine its collectives run on: "cpu", "nccl", "cpu-staged", ..."""
        name = ctypes.c_char_p()
        _check(_library.ccl().CommGetEngine(self._handle(), ctypes.byref(name)),
               "infinicclCommGetEngine")
        return (name.value or b"").decode()

    def async_error(self) -> Optional[CclError]:
        """The failure of work queued earlier (a rank died, the timeout passed), or None."""
        status = ctypes.c_int(0)
        _check(_library.ccl().CommGetAsyncError(self._handle(), ctypes.byref(status)),
               "infinicclCommGetAsyncError")
        if status.value == 0:
            return None
        try:
            _check(status.value, "infinicclCommGetAsyncError")
        except CclError as error:
            return error
        return None

    def _issue(self, call: Any, name: str, *arguments: Any, stream: Optional[Stream],
               uses: Tuple[Any, ...]) -> None:
        """Queues a collective on ``stream``; without one, on the default stream of the rank's
        device (made current for the call: the default stream is the current device's).
        ``uses``: the Buffers and Tensors it reads or writes (the stream is recorded on them)."""
        handle = _target_stream(stream)[1]
        _record_uses(list(uses), handle)
        with _on_device(self._device if handle is None else None):
            _check(call(*arguments, self._handle(), handle), name)

    def all_reduce(self, send: Any, op: str = "sum", recv: Any = None, *,
                   dtype: Optional[str] = None, count: Optional[int] = None,
                   stream: Optional[Stream] = None) -> None:
        """``recv`` (default: ``send``, in place) of every rank = ``op`` over the ranks' ``send``;
        ``op`` is "sum", "prod", "max", "min" or "avg"."""
        source, elements, code = _memory(send, dtype, count, "send")
        target = source
        if recv is not None:
            target, room, _ = _memory(recv, dtype, None, "recv")
            if room < elements:
                raise ValueError(f"recv holds {room} elements, fewer than {elements}")
        self._issue(_library.ccl().AllReduce, "infinicclAllReduce", source, target, elements, code,
                    _op_code(op), stream=stream, uses=(send, recv))

    def broadcast(self, data: Any, root: int = 0, *, dtype: Optional[str] = None,
                  count: Optional[int] = None, stream: Optional[Stream] = None) -> None:
        """``data`` of every rank = ``data`` of ``root`` (in place)."""
        address, elements, code = _memory(data, dtype, count, "data")
        self._issue(_library.ccl().Broadcast, "infinicclBroadcast", address, address, elements,
                    code, root, stream=stream, uses=(data,))

    def all_gather(self, send: Any, recv: Any, *, dtype: Optional[str] = None,
                   count: Optional[int] = None, stream: Optional[Stream] = None) -> None:
        """``recv`` of every rank = the ranks' ``send`` one after the other, in rank order."""
        source, elements, code = _memory(send, dtype, count, "send")
        target, room, _ = _memory(recv, dtype, None, "recv")
        if room < elements * self.size:
            raise ValueError(f"recv holds {room} elements, fewer than {elements * self.size}")
        self._issue(_library.ccl().AllGather, "infinicclAllGather", source, target, elements, code,
                    stream=stream, uses=(send, recv))

    def send(self, data: Any, peer: int, *, dtype: Optional[str] = None,
             count: Optional[int] = None, stream: Optional[Stream] = None) -> None:
        address, elements, code = _memory(data, dtype, count, "data")
        self._issue(_library.ccl().Send, "infinicclSend", address, elements, code, peer,
                    stream=stream, uses=(data,))

    def recv(self, data: Any, peer: int, *, dtype: Optional[str] = None,
             count: Optional[int] = None, stream: Optional[Stream] = None) -> None:
        address, elements, code = _memory(data, dtype, count, "data")
        self._issue(_library.ccl().Recv, "infinicclRecv", address, elements, code, peer,
                    stream=stream, uses=(data,))

    def destroy(self) -> None:
        """Waits for the communicator's queued work and releases it."""
        comm, self._comm = self._comm, None
        if comm and self._generation == _runtime._generation:
            _check(_library.ccl().CommDestroy(comm), "infinicclCommDestroy")

    def abort(self) -> None:
        """Fails every waiting and later call of it, and releases it without waiting."""
        comm, self._comm = self._comm, None
        if comm and self._generation == _runtime._generation:
            _check(_library.ccl().CommAbort(comm), "infinicclCommAbort")

    def __del__(self) -> None:
        comm = getattr(self, "_comm", None)
        if comm and self._generation == _runtime._generation and not _thread.in_host_function:
            _library.ccl().CommDestroy(comm)

    def __repr__(self) -> str:
        if self._comm is None:
            return "Communicator(destroyed)"
        return f"Communicator(rank {self.rank} of {self.size}, {self.engine})"


def _made(call: Any, name: str, *arguments: Any) -> Communicator:
    handle = ctypes.c_void_p()
    _check(call(ctypes.byref(handle), *arguments), name)
    return Communicator(handle.value or 0)


def init_from_env() -> Communicator:
    """This process's rank of a launched job (torchrun's or OpenMPI's variables), on the current
    device."""
    return _made(_library.ccl().CommInitFromEnv, "infinicclCommInitFromEnv")


def get_unique_id() -> bytes:
    """The id rank 0 makes and hands to the others (which pass it to :func:`init_rank`); it
    serves the job's rendezvous from this process until the ranks have joined."""
    unique = _library.UniqueId()
    _check(_library.ccl().GetUniqueId(ctypes.byref(unique)), "infinicclGetUniqueId")
    return ctypes.string_at(ctypes.addressof(unique), ctypes.sizeof(unique))


def init_rank(nranks: int, unique_id: bytes, rank: int) -> Communicator:
    """Rank ``rank`` of ``nranks``, joined through ``unique_id``, on the current device."""
    if not isinstance(unique_id, (bytes, bytearray)) or len(unique_id) != ctypes.sizeof(
            _library.UniqueId):
        raise ValueError("unique_id is the bytes get_unique_id returned")
    unique = _library.UniqueId.from_buffer_copy(bytes(unique_id))
    return _made(_library.ccl().CommInitRank, "infinicclCommInitRank", nranks, unique, rank)


def init_all(devices: Sequence[Union[int, Device]]) -> List[Communicator]:
    """One communicator per device, all of one type, ranks in the order given (flat ordinals or
    Devices): the ranks of one process. Their calls must be issued together, in a
    :func:`group`."""
    ordinals = [_ordinal(d) for d in devices]
    if not ordinals:
        raise ValueError("init_all needs at least one device")
    kinds = {Device(o).type for o in ordinals}
    if len(kinds) != 1:
        raise ValueError(f"the devices are of one type, not {sorted(kinds)}")
    type_value = _library.DEVICE_TYPE_BY_PLUGIN[kinds.pop()]
    indices = (ctypes.c_int * len(ordinals))(*[Device(o).index for o in ordinals])
    handles = (ctypes.c_void_p * len(ordinals))()
    _check(_library.ccl().CommInitAll(type_value, handles, len(ordinals), indices),
           "infinicclCommInitAll")
    return [Communicator(h or 0) for h in handles]


class group:
    """``with ccl.group():`` issues the calls made inside together at the end (GroupStart and
    GroupEnd), as the ranks of one process need. A block that raises still ends the group, which
    then waits for the calls of the ranks it lacks until the communicators' timeout."""

    def __enter__(self) -> "group":
        _check(_library.ccl().GroupStart(), "infinicclGroupStart")
        return self

    def __exit__(self, exc_type: Any, *exc: Any) -> None:
        status = _library.ccl().GroupEnd()
        if exc_type is None:
            _check(status, "infinicclGroupEnd")
