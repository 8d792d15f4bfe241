"""InfiniRT: one runtime API for AI accelerators, from Python.

The CUDA Runtime's model (devices, streams, events, memory, graph capture) over every backend
InfiniRT finds: the CPU backend everywhere, and each vendor's plugin where its runtime is
installed. The libraries, plugins and tools are inside this package; nothing else is needed.

    >>> import infinirt
    >>> stream = infinirt.Stream()
    >>> buffer = infinirt.Buffer(16)
    >>> buffer.copy_from(b"hello, infinirt!", stream=stream)
    >>> stream.synchronize()
"""

from __future__ import annotations

from . import ccl, errors, ops
from ._c_api import VERSION as __version__
from ._dlpack import Tensor, from_dlpack
from ._memory import (
    empty_cache,
    max_memory_allocated,
    max_memory_reserved,
    memory_allocated,
    memory_reserved,
    memory_stats,
    reset_peak_memory_stats,
)
from ._runtime import (
    BackendInfo,
    Buffer,
    Device,
    DeviceProperties,
    Event,
    Graph,
    Stream,
    backends,
    current_stream,
    device_count,
    devices,
    finalize,
    get_device,
    get_device_properties,
    set_device,
    synchronize,
)
from .errors import Error

__all__ = [
    "BackendInfo",
    "Buffer",
    "Device",
    "DeviceProperties",
    "Error",
    "Event",
    "Graph",
    "Stream",
    "Tensor",
    "__version__",
    "backends",
    "ccl",
    "current_stream",
    "device_count",
    "devices",
    "empty_cache",
    "errors",
    "finalize",
    "from_dlpack",
    "get_device",
    "get_device_properties",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "ops",
    "reset_peak_memory_stats",
    "set_device",
    "synchronize",
]
