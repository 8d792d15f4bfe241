"""Loading the C libraries inside the package and turning the headers' lists into ctypes calls.

The functions, their types, the error codes and the structures' layouts come from ``_c_api``,
which the build writes from the headers themselves; nothing here repeats them.
"""

from __future__ import annotations

import ctypes
import os
import re
import struct
import threading
from typing import Any, Dict, List, Tuple

from . import _c_api

PACKAGE_DIR = os.path.dirname(os.path.abspath(__file__))
LIB_DIR = os.path.join(PACKAGE_DIR, "lib")


class UniqueId(ctypes.Structure):
    """``infinicclUniqueId``: the bytes one process of a job hands the others."""

    _fields_ = [("internal", ctypes.c_char * _c_api.CONSTANTS["INFINICCL_UNIQUE_ID_BYTES"])]


def _ipc_handle(name: str) -> Any:
    """``infinirtIpcMemHandle_t`` or ``infinirtIpcEventHandle_t``: 64 opaque bytes, passed by
    value (a name ending in _t that is not a pointer handle)."""
    return type(name, (ctypes.Structure,), {
        "_fields_": [("reserved", ctypes.c_char * _c_api.CONSTANTS["INFINIRT_IPC_HANDLE_SIZE"])]})


# The structures the C API passes by value, as ctypes structures made from the layout the build
# measured (every field listed, in order); a layout ctypes would not reproduce is refused.
_FIELD_TYPES: Dict[str, Any] = {
    "i": ctypes.c_int32,
    "I": ctypes.c_uint32,
    "q": ctypes.c_int64,
    "Q": ctypes.c_uint64,
    "P": ctypes.c_void_p,
}
_BY_VALUE = ("infinirtMemLocation", "infinirtPitchedPtr", "infinirtExtent")


def _by_value_struct(name: str) -> Any:
    size, fields = _c_api.STRUCTS[name]
    ordered = sorted(fields.items(), key=lambda item: item[1][0])
    made = type(name, (ctypes.Structure,), {
        "_fields_": [(field, _FIELD_TYPES[code]) for field, (_, code) in ordered]})
    offsets = [getattr(made, field).offset for field, _ in ordered]
    if ctypes.sizeof(made) != size or offsets != [offset for _, (offset, _) in ordered]:
        raise TypeError(f"ctypes does not lay out {name} as the C compiler does")
    return made


# C type spellings of the headers, as ctypes types. Pointers are all c_void_p (callers pass
# ctypes.byref or an address); handles are opaque pointers.
_SCALARS: Dict[str, Any] = {
    "void": None,
    "char": ctypes.c_byte,  # a flag (FlashAttention's is_causal): passed as an int
    "bool": ctypes.c_bool,  # TopK's largest and sorted
    "int": ctypes.c_int,
    "unsigned int": ctypes.c_uint,
    "long": ctypes.c_long,
    "size_t": ctypes.c_size_t,
    "unsigned long long": ctypes.c_ulonglong,
    "float": ctypes.c_float,
    "double": ctypes.c_double,
    "infinirtError_t": ctypes.c_int,
    "infinirtStreamAttrID": ctypes.c_int,  # a typedef of an enum
    "infiniStatus_t": ctypes.c_int,
    "infiniDevice_t": ctypes.c_int,
    "infiniDtype_t": ctypes.c_int,
    "infinicclReduceOp_t": ctypes.c_int,
    "infinicclUniqueId": UniqueId,
    "infinirtIpcMemHandle_t": _ipc_handle("infinirtIpcMemHandle_t"),
    "infinirtIpcEventHandle_t": _ipc_handle("infinirtIpcEventHandle_t"),
}
_SCALARS.update({name: _by_value_struct(name) for name in _BY_VALUE})
_HANDLE = re.compile(r"^(infinirt|infiniccl)\w*_t$")


def ctype_of(spelling: str) -> Any:
    """The ctypes type of a C type as the headers spell it ("const void*", "enum X", ...)."""
    text = " ".join(spelling.replace("*", " * ").split())
    if text == "const char *":
        return ctypes.c_char_p
    if "*" in text:
        return ctypes.c_void_p
    words = [w for w in text.split() if w not in ("const", "struct")]
    if words and words[0] == "enum":
        return ctypes.c_int
    base = " ".join(words)
    if base in _SCALARS:
        return _SCALARS[base]
    if _HANDLE.match(base):
        return ctypes.c_void_p
    raise TypeError(f"the binding does not know the C type {spelling!r}")


def parameter_types(params: str) -> List[Any]:
    """ctypes types of a parameter list: "(int* count, size_t size)" -> [c_void_p, c_size_t]."""
    inner = re.sub(r"INFINIRT_DV\([^)]*\)", "", params.strip()[1:-1]).strip()
    if inner in ("", "void"):
        return []
    types = []
    for parameter in inner.split(","):
        # The last word is the parameter's name; the rest its type.
        match = re.match(r"^(.*?)(\w+)\s*$", parameter.strip())
        if match is None:
            raise TypeError(f"cannot read the parameter {parameter!r}")
        types.append(ctype_of(match.group(1)))
    return types


def _bind(library: ctypes.CDLL, prefix: str, functions: List[Tuple[str, str, str]]) -> Dict[str, Any]:
    bound = {}
    for ret, name, params in functions:
        function = getattr(library, prefix + name)
        function.restype = ctype_of(ret)
        function.argtypes = parameter_types(params)
        bound[name] = function
    return bound


def _open(file_name: str) -> ctypes.CDLL:
    return ctypes.CDLL(os.path.join(LIB_DIR, file_name))


class _Functions:
    """A library's bound functions as attributes, and the library itself."""

    def __init__(self, library: ctypes.CDLL, prefix: str, functions: List[Tuple[str, str, str]]):
        self.library = library
        for name, function in _bind(library, prefix, functions).items():
            setattr(self, name, function)


# libinfinirt.so's functions, by the name after the prefix: rt.StreamQuery(...).
rt: Any = _Functions(_open("libinfinirt.so"), "infinirt", _c_api.RUNTIME_FUNCTIONS)

_opened: Dict[str, _Functions] = {}
_opened_lock = threading.Lock()


def _opened_once(file_name: str, prefix: str, functions: List[Tuple[str, str, str]]) -> Any:
    opened = _opened.get(file_name)  # the common case, without the lock (entries never change)
    if opened is not None:
        return opened
    with _opened_lock:
        if file_name not in _opened:
            _opened[file_name] = _Functions(_open(file_name), prefix, functions)
        return _opened[file_name]


def ccl() -> Any:
    """libinfiniccl.so's functions (opened on first use)."""
    return _opened_once("libinfiniccl.so", "infiniccl", _c_api.CCL_FUNCTIONS)


def allocator() -> Any:
    """The caching allocator's functions in libinfinirt_runtime.so (opened on first use):
    ``allocator().Malloc(...)`` is ``infinirtCachingAllocatorMalloc``."""
    return _opened_once("libinfinirt_runtime.so", "infinirtCachingAllocator",
                        _c_api.ALLOCATOR_FUNCTIONS)


def allocator_opened() -> bool:
    """Whether anything used the caching allocator in this process yet."""
    return "libinfinirt_runtime.so" in _opened


def op() -> Any:
    """libinfiniop.so's handle and tensor functions (opened on first use); ``op().library`` for
    the operators' own."""
    return _opened_once("libinfiniop.so", "infiniop", _c_api.OP_FUNCTIONS)


# --- Structures, read by the offsets the build measured -----------------------------------------


def new_struct(name: str) -> ctypes.Array:
    """A zeroed buffer the size of the C structure ``name``."""
    size = _c_api.STRUCTS[name][0]
    return ctypes.create_string_buffer(size)


def read_struct(name: str, raw: ctypes.Array) -> Dict[str, Any]:
    """The fields of ``name`` that the build listed, read from ``raw``; strings decoded."""
    fields = {}
    for field, (offset, code) in _c_api.STRUCTS[name][1].items():
        (value,) = struct.unpack_from("@" + code, raw, offset)
        if isinstance(value, bytes):
            value = value.split(b"\0", 1)[0].decode("utf-8", "replace")
        fields[field] = value
    return fields


# --- Constants and lists ---------------------------------------------------------------------

CONSTANTS: Dict[str, int] = dict(_c_api.CONSTANTS)
SUCCESS = 0
ERROR_CODES: Dict[int, Tuple[str, str]] = {
    value: (name, text) for name, value, text in _c_api.ERRORS
}
NOT_READY = next(value for name, value, _ in _c_api.ERRORS if name == "ErrorNotReady")
DEVICE_TYPES: Dict[int, Tuple[str, str, str]] = {
    value: (name, display, plugin) for name, value, display, plugin in _c_api.DEVICE_TYPES
}
DEVICE_TYPE_BY_PLUGIN: Dict[str, int] = {
    plugin: value for _, value, _, plugin in _c_api.DEVICE_TYPES
}
# The vendor table's rows (config/vendors.json), in its order: plugin name to (family, collective
# engine, DLPack device type name, has an operator backend).
VENDORS: Dict[str, Tuple[str, str, str, bool]] = {
    name: (family, engine, dlpack, operator_backend)
    for name, family, engine, dlpack, operator_backend in _c_api.VENDORS
}
# The plugins a build makes: every row but those of family "none" (a type without a plugin).
PLUGINS: Tuple[str, ...] = tuple(name for name, row in VENDORS.items() if row[0] != "none")
BACKEND_STATUSES: Dict[int, str] = {
    value: name[len("infinirtBackend"):]
    for name, value in _c_api.CONSTANTS.items()
    if name.startswith("infinirtBackend")
}


_DTYPE_CODES: Dict[str, Tuple[int, int]] = {name: (value, size) for name, value, size in _c_api.DTYPES}
# NumPy's and PyTorch's spellings of InfiniCore's dtypes.
_DTYPE_ALIASES = {
    "bool": "BOOL", "int8": "I8", "int16": "I16", "int32": "I32", "int64": "I64", "uint8": "U8",
    "uint16": "U16", "uint32": "U32", "uint64": "U64", "float16": "F16", "float32": "F32",
    "float64": "F64", "bfloat16": "BF16",
}


def dtype_code(dtype: str) -> Tuple[int, int]:
    """InfiniCore's dtype number and element size for a dtype's name ("float32" or "F32")."""
    name = _DTYPE_ALIASES.get(dtype, dtype)
    if name not in _DTYPE_CODES or _DTYPE_CODES[name][1] == 0:
        known = ", ".join(sorted(_DTYPE_ALIASES))
        raise ValueError(f"no dtype {dtype!r} (known: {known})")
    return _DTYPE_CODES[name]
