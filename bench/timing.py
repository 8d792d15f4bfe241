"""What the Python benchmarks share: the median time of a call."""

from __future__ import annotations

import statistics
import time
from typing import Callable


def median_seconds(call: Callable[[], object], min_time: float = 0.4, runs: int = 5) -> float:
    """The median over `runs` of the mean time of a call, each run repeating it for min_time
    seconds (after one call to warm up: page faults, caches, threads)."""
    call()
    results = []
    for _ in range(runs):
        iterations, start = 0, time.perf_counter()
        while True:
            call()
            iterations += 1
            elapsed = time.perf_counter() - start
            if elapsed >= min_time:
                break
        results.append(elapsed / iterations)
    return statistics.median(results)
