"""The caching allocator's statistics and cache, as PyTorch's ``torch.cuda`` spells them:
``memory_stats()``, ``memory_allocated()``, ``empty_cache()``, ...

Device Buffers come from this allocator (one per device, shared with the C++ layer's Runtimes in
the same process); the numbers count its blocks and the segments it took from the device.
"""

from __future__ import annotations

import re
from typing import Dict, Union

from . import _library
from ._runtime import Device, _ordinal, get_device
from .errors import check

__all__ = [
    "empty_cache",
    "max_memory_allocated",
    "max_memory_reserved",
    "memory_allocated",
    "memory_reserved",
    "memory_stats",
    "reset_peak_memory_stats",
]


def _device(device: Union[int, Device, None]) -> int:
    return get_device() if device is None else _ordinal(device)


def _snake(name: str) -> str:
    """``allocatedBytes.current`` -> ``allocated_bytes.current``."""
    return re.sub(r"(?<=[a-z])([A-Z])", r"_\1", name).lower()


def memory_stats(device: Union[int, Device, None] = None) -> Dict[str, int]:
    """The caching allocator's statistics for ``device`` (default: the current device), all zero
    before its first allocation. Each of ``allocated_bytes``, ``reserved_bytes``,
    ``active_bytes``, ``inactive_split_bytes``, ``requested_bytes``, ``allocations``,
    ``segments``, ``active_blocks`` and ``inactive_split_blocks`` comes as ``.current``,
    ``.peak``, ``.allocated`` and ``.freed``; then the counters ``cache_hits``,
    ``cache_misses``, ``alloc_retries``, ``ooms``, ``device_allocs``, ``device_frees`` and
    ``kept_bytes``. Bytes are those of blocks (requests rounded up to 512), except
    ``requested_bytes``."""
    raw = _library.new_struct("infinirtAllocatorStats")
    ordinal = _device(device)
    check(_library.allocator().GetStats(raw, ordinal), "infinirtCachingAllocatorGetStats",
          f"device {ordinal}")
    return {_snake(name): value
            for name, value in _library.read_struct("infinirtAllocatorStats", raw).items()}


def memory_allocated(device: Union[int, Device, None] = None) -> int:
    """Bytes in the Buffers (and C++ Memory) the allocator handed out and that are not freed."""
    return memory_stats(device)["allocated_bytes.current"]


def max_memory_allocated(device: Union[int, Device, None] = None) -> int:
    """The highest ``memory_allocated`` since the start or ``reset_peak_memory_stats``."""
    return memory_stats(device)["allocated_bytes.peak"]


def memory_reserved(device: Union[int, Device, None] = None) -> int:
    """Bytes the allocator holds from the device: handed out or cached."""
    return memory_stats(device)["reserved_bytes.current"]


def max_memory_reserved(device: Union[int, Device, None] = None) -> int:
    """The highest ``memory_reserved`` since the start or ``reset_peak_memory_stats``."""
    return memory_stats(device)["reserved_bytes.peak"]


def reset_peak_memory_stats(device: Union[int, Device, None] = None) -> None:
    """Sets every peak to its current value."""
    ordinal = _device(device)
    check(_library.allocator().ResetPeakStats(ordinal), "infinirtCachingAllocatorResetPeakStats",
          f"device {ordinal}")


def empty_cache(device: Union[int, Device, None] = None) -> None:
    """Gives back to ``device`` (default: the current device) every cached segment no Buffer uses,
    so that other programs (or ``infinirtMalloc``) can have it. Buffers alive keep their memory."""
    ordinal = _device(device)
    check(_library.allocator().EmptyCache(ordinal), "infinirtCachingAllocatorEmptyCache",
          f"device {ordinal}")
