"""DLPack both ways: Buffers as DLPack tensors for NumPy, PyTorch and the like, and
:func:`from_dlpack` for their tensors.

A device maps to DLPack's device types by backend, as the vendor table (config/vendors.json)
says: the CPU backend is ``kDLCPU``; the CUDA-compatible runtimes are ``kDLCUDA``, a ROCm-derived
one ``kDLROCM``, with the device's index among its type as the id; the types DLPack has no code
for are ``kDLExtDev``. Pinned host memory is ``kDLCPU``: every consumer can read it.
"""

from __future__ import annotations

import ctypes
import threading
from typing import Any, Dict, Optional, Sequence, Tuple

from . import _library
from ._runtime import Buffer, Device, _c_int, get_device
from ._library import rt
from .errors import Error, check

# DLPack's device types (dlpack.h, DLDeviceType).
KDL_CPU = 1
KDL_CUDA = 2
KDL_CUDA_HOST = 3
KDL_ROCM = 10
KDL_ROCM_HOST = 11
KDL_EXT_DEV = 12

_DLPACK_TYPE_BY_NAME = {
    "kDLCPU": KDL_CPU, "kDLCUDA": KDL_CUDA, "kDLROCM": KDL_ROCM, "kDLExtDev": KDL_EXT_DEV,
}
# Each backend's DLPack device type, from the vendor table; and the backends of each device type
# whose devices can be named by their index among the type (not kDLExtDev's), in table order.
_DEVICE_TYPE_OF_BACKEND: Dict[str, int] = {
    name: _DLPACK_TYPE_BY_NAME[row[2]] for name, row in _library.VENDORS.items()
}
_BACKENDS_OF_DEVICE_TYPE: Dict[int, Tuple[str, ...]] = {
    dl_type: tuple(name for name, of in _DEVICE_TYPE_OF_BACKEND.items() if of == dl_type)
    for dl_type in (KDL_CUDA, KDL_ROCM)
}
_HOST_DEVICE_TYPES = (KDL_CPU, KDL_CUDA_HOST, KDL_ROCM_HOST)

# DLPack's type codes (DLDataTypeCode).
KDL_INT, KDL_UINT, KDL_FLOAT, KDL_BFLOAT, KDL_BOOL = 0, 1, 2, 4, 6


class DLDevice(ctypes.Structure):
    _fields_ = [("device_type", ctypes.c_int32), ("device_id", ctypes.c_int32)]


class DLDataType(ctypes.Structure):
    _fields_ = [("code", ctypes.c_uint8), ("bits", ctypes.c_uint8), ("lanes", ctypes.c_uint16)]


class DLTensor(ctypes.Structure):
    _fields_ = [
        ("data", ctypes.c_void_p),
        ("device", DLDevice),
        ("ndim", ctypes.c_int32),
        ("dtype", DLDataType),
        ("shape", ctypes.POINTER(ctypes.c_int64)),
        ("strides", ctypes.POINTER(ctypes.c_int64)),
        ("byte_offset", ctypes.c_uint64),
    ]


class DLManagedTensor(ctypes.Structure):
    pass


_DELETER = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensor))
DLManagedTensor._fields_ = [
    ("dl_tensor", DLTensor),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DELETER),
]

class DLPackVersion(ctypes.Structure):
    _fields_ = [("major", ctypes.c_uint32), ("minor", ctypes.c_uint32)]


class DLManagedTensorVersioned(ctypes.Structure):
    pass


_DELETER_VERSIONED = ctypes.CFUNCTYPE(None, ctypes.POINTER(DLManagedTensorVersioned))
DLManagedTensorVersioned._fields_ = [
    ("version", DLPackVersion),
    ("manager_ctx", ctypes.c_void_p),
    ("deleter", _DELETER_VERSIONED),
    ("flags", ctypes.c_uint64),
    ("dl_tensor", DLTensor),
]
DLPACK_VERSION = (1, 0)
DLPACK_FLAG_READ_ONLY = 1

_capsule_new = ctypes.pythonapi.PyCapsule_New
_capsule_new.restype = ctypes.py_object
_capsule_new.argtypes = [ctypes.c_void_p, ctypes.c_char_p, ctypes.c_void_p]
_capsule_pointer = ctypes.pythonapi.PyCapsule_GetPointer
_capsule_pointer.restype = ctypes.c_void_p
_capsule_pointer.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_is_valid = ctypes.pythonapi.PyCapsule_IsValid
_capsule_is_valid.restype = ctypes.c_int
_capsule_is_valid.argtypes = [ctypes.py_object, ctypes.c_char_p]
_capsule_set_name = ctypes.pythonapi.PyCapsule_SetName
_capsule_set_name.restype = ctypes.c_int
_capsule_set_name.argtypes = [ctypes.py_object, ctypes.c_char_p]

# The same, on a capsule that is being deallocated (given as an address; PYFUNCTYPE: called
# with the GIL held).
_raw_is_valid = ctypes.PYFUNCTYPE(ctypes.c_int, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_IsValid", ctypes.pythonapi))
_raw_pointer = ctypes.PYFUNCTYPE(ctypes.c_void_p, ctypes.c_void_p, ctypes.c_char_p)(
    ("PyCapsule_GetPointer", ctypes.pythonapi))

# The names live as long as the module: capsules keep pointers to them. A consumer that gives
# max_version (1, 0) or later gets a versioned tensor (whose flags say it is writable); an older
# one the original structure.
_NAME = b"dltensor"
_USED_NAME = b"used_dltensor"
_VERSIONED_NAME = b"dltensor_versioned"
_USED_VERSIONED_NAME = b"used_dltensor_versioned"

# --- Export ----------------------------------------------------------------------------------

# What an exported tensor needs alive until its consumer calls the deleter: the structure, its
# shape array and the Buffer, by the structure's address.
_exported: Dict[int, Tuple[Any, ...]] = {}
_exported_lock = threading.Lock()


def _delete_exported(managed: Any) -> None:
    address = ctypes.cast(managed, ctypes.c_void_p).value
    with _exported_lock:
        _exported.pop(address or 0, None)


_deleter = _DELETER(_delete_exported)
_deleter_versioned = _DELETER_VERSIONED(_delete_exported)


def _capsule_destructor(capsule: Optional[int]) -> None:
    # A capsule nobody consumed still owns its tensor. The capsule is being deallocated: it is
    # handled as a bare address, never as a Python object (whose reference count is 0).
    for name in (_NAME, _VERSIONED_NAME):
        if _raw_is_valid(capsule, name):
            address = _raw_pointer(capsule, name)
            with _exported_lock:
                _exported.pop(address or 0, None)


_DESTRUCTOR = ctypes.CFUNCTYPE(None, ctypes.c_void_p)
_destructor = _DESTRUCTOR(_capsule_destructor)


def device_of(buffer: Buffer) -> Tuple[int, int]:
    """``(DLPack device type, id)`` of a Buffer's memory."""
    if buffer.pinned_host:
        return (KDL_CPU, 0)
    device = Device(buffer._device)
    backend = device.type
    dl_type = _DEVICE_TYPE_OF_BACKEND.get(backend, KDL_EXT_DEV)
    return (dl_type, 0 if dl_type == KDL_CPU else device.index)


def export(buffer: Buffer, stream: Any = None, max_version: Any = None, dl_device: Any = None,
           copy: Any = None) -> Any:
    """The DLPack capsule of ``buffer``: a 1-D uint8 tensor of its bytes, the memory shared."""
    if copy:
        raise BufferError("a Buffer is shared through DLPack, never copied (copy=True)")
    device = device_of(buffer)
    if dl_device is not None and tuple(dl_device) != device:
        raise BufferError(f"the buffer is on DLPack device {device}, not {tuple(dl_device)}")
    if device[0] == KDL_CPU and stream is not None and stream != -1:
        raise BufferError("a stream is given only for device memory, not for host memory")
    # The consumer reads the memory at once (host memory) or on its own stream, which knows
    # nothing of InfiniRT's: the work queued on the buffer's device must be done first.
    with Device(buffer._device):
        check(rt.DeviceSynchronize(), "infinirtDeviceSynchronize")
    versioned = max_version is not None and tuple(max_version)[0] >= DLPACK_VERSION[0]
    managed: Any = DLManagedTensorVersioned() if versioned else DLManagedTensor()
    shape = (ctypes.c_int64 * 1)(buffer.nbytes)
    tensor = managed.dl_tensor
    tensor.data = buffer.ptr
    tensor.device = DLDevice(*device)
    tensor.ndim = 1
    tensor.dtype = DLDataType(KDL_UINT, 8, 1)
    tensor.shape = shape
    tensor.strides = None
    tensor.byte_offset = 0
    if versioned:
        managed.version = DLPackVersion(*DLPACK_VERSION)
        managed.flags = 0  # writable, not a copy
        managed.deleter = _deleter_versioned
    else:
        managed.deleter = _deleter
    address = ctypes.addressof(managed)
    with _exported_lock:
        _exported[address] = (managed, shape, buffer)
    name = _VERSIONED_NAME if versioned else _NAME
    return _capsule_new(address, name, ctypes.cast(_destructor, ctypes.c_void_p))


# --- Import ----------------------------------------------------------------------------------

_DTYPE_NAMES = {
    (KDL_INT, 8): "int8", (KDL_INT, 16): "int16", (KDL_INT, 32): "int32", (KDL_INT, 64): "int64",
    (KDL_UINT, 8): "uint8", (KDL_UINT, 16): "uint16", (KDL_UINT, 32): "uint32",
    (KDL_UINT, 64): "uint64", (KDL_FLOAT, 16): "float16", (KDL_FLOAT, 32): "float32",
    (KDL_FLOAT, 64): "float64", (KDL_BFLOAT, 16): "bfloat16", (KDL_BOOL, 8): "bool",
}


class Tensor:
    """Another library's tensor seen through DLPack (:func:`from_dlpack`): its memory, shape,
    strides (in elements) and dtype, on an InfiniRT device (``None`` for host memory InfiniRT does
    not own). ``buffer`` is a :class:`Buffer` over its bytes for copies. The producer's tensor
    stays alive as long as this object."""

    __slots__ = ("ptr", "shape", "strides", "dtype", "itemsize", "device", "dlpack_device",
                 "readonly", "_capsule", "_managed", "_source", "__weakref__")

    def __init__(self, ptr: int, shape: Tuple[int, ...], strides: Tuple[int, ...], dtype: str,
                 itemsize: int, device: Optional[int], dlpack_device: Tuple[int, int],
                 readonly: bool, capsule: Any, managed: Any) -> None:
        self.ptr = ptr
        self.shape = shape
        self.strides = strides
        self.dtype = dtype
        self.itemsize = itemsize
        self.device = device
        self.dlpack_device = dlpack_device
        self.readonly = readonly  # the producer said so (DLPack 1.0's flags)
        self._capsule = capsule
        self._managed = managed
        # The Buffer it views when it came from one: streams using the tensor are recorded there.
        self._source: Optional[Buffer] = None

    @property
    def ndim(self) -> int:
        return len(self.shape)

    @property
    def size(self) -> int:
        count = 1
        for extent in self.shape:
            count *= extent
        return count

    @property
    def nbytes(self) -> int:
        return self.size * self.itemsize

    def is_contiguous(self) -> bool:
        expected = 1
        for extent, stride in zip(reversed(self.shape), reversed(self.strides)):
            if extent != 1 and stride != expected:
                return False
            expected *= extent
        return True

    @property
    def buffer(self) -> Buffer:
        """A Buffer over the tensor's bytes (contiguous tensors only)."""
        if not self.is_contiguous():
            raise ValueError("the tensor is not contiguous: it has no single run of bytes")
        ordinal = self.device if self.device is not None else get_device()
        return Buffer._wrap(self.ptr, self.nbytes, ordinal, self)

    def __repr__(self) -> str:
        return (f"Tensor(shape={self.shape}, dtype={self.dtype}, device={self.device}, "
                f"dlpack_device={self.dlpack_device}, ptr={self.ptr:#x})")

    def __del__(self) -> None:
        managed = getattr(self, "_managed", None)
        if managed is not None and managed.contents.deleter:
            managed.contents.deleter(managed)
        self._managed = None


def _ordinal_for(dl_device: Tuple[int, int]) -> Optional[int]:
    """The InfiniRT device of a DLPack device (None for host memory)."""
    dl_type, dl_id = dl_device
    if dl_type in _HOST_DEVICE_TYPES:
        return None
    for backend in _BACKENDS_OF_DEVICE_TYPE.get(dl_type, ()):
        value = _library.DEVICE_TYPE_BY_PLUGIN[backend]
        ordinal = _c_int(-1)
        if rt.DeviceGetOrdinal(ctypes.byref(ordinal), value, dl_id) == 0:
            return ordinal.value
        rt.GetLastError()
    raise Error(f"DLPack device {dl_device} is not a device InfiniRT has here")


def from_dlpack(obj: Any, stream: Optional[int] = None) -> Tensor:
    """Wraps another library's tensor (anything with ``__dlpack__``: NumPy, PyTorch, CuPy) without
    a copy. ``stream`` is passed on to the producer (see the DLPack protocol)."""
    if not hasattr(obj, "__dlpack__") or not hasattr(obj, "__dlpack_device__"):
        raise TypeError(f"{type(obj).__name__} is not a DLPack producer (no __dlpack__)")
    dl_device = tuple(obj.__dlpack_device__())
    ordinal = _ordinal_for(dl_device)  # before taking the capsule: a refusal leaves obj as it was
    arguments = {} if stream is None else {"stream": stream}
    try:
        capsule = obj.__dlpack__(max_version=DLPACK_VERSION, **arguments)
    except TypeError:  # a producer older than DLPack 1.0's protocol
        capsule = obj.__dlpack__(**arguments)
    if _capsule_is_valid(capsule, _VERSIONED_NAME):
        address = _capsule_pointer(capsule, _VERSIONED_NAME)
        managed: Any = ctypes.cast(address, ctypes.POINTER(DLManagedTensorVersioned))
        used_name = _USED_VERSIONED_NAME
        readonly = bool(managed.contents.flags & DLPACK_FLAG_READ_ONLY)
    elif _capsule_is_valid(capsule, _NAME):
        address = _capsule_pointer(capsule, _NAME)
        managed = ctypes.cast(address, ctypes.POINTER(DLManagedTensor))
        used_name = _USED_NAME
        readonly = False
    else:
        raise TypeError("the producer's capsule is not an unused DLPack tensor")
    tensor = managed.contents.dl_tensor
    ndim = tensor.ndim
    shape = tuple(tensor.shape[i] for i in range(ndim))
    if tensor.strides:
        strides = tuple(tensor.strides[i] for i in range(ndim))
    else:
        strides = _contiguous_strides(shape)
    code, bits, lanes = tensor.dtype.code, tensor.dtype.bits, tensor.dtype.lanes
    dtype = _DTYPE_NAMES.get((code, bits), f"code{code}:{bits}") if lanes == 1 else f"vector{lanes}"
    _capsule_set_name(capsule, used_name)  # consumed: the deleter is now ours to call
    result = Tensor((tensor.data or 0) + tensor.byte_offset, shape, strides, dtype,
                    max(1, bits * lanes // 8), ordinal, (tensor.device.device_type,
                                                         tensor.device.device_id),
                    readonly, capsule, managed)
    if isinstance(obj, Buffer):
        result._source = obj
    return result


def _contiguous_strides(shape: Sequence[int]) -> Tuple[int, ...]:
    strides = []
    step = 1
    for extent in reversed(shape):
        strides.append(step)
        step *= extent
    return tuple(reversed(strides))
