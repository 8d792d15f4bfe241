"""What the Python benchmarks share: the median time of a call."""

from __future__ import annotations

import statistics
import time
from typing import Callable, Tuple


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


def paired_median_seconds(first: Callable[[], object], second: Callable[[], object],
                          min_time: float = 0.25, runs: int = 7,
                          settle: float = 0.05) -> Tuple[float, float]:
    """The median time of a call of each of two, measured in alternation: run r of `first`, then
    run r of `second`, and so on, so that both meet the same moments of a shared machine (other
    processes, the memory bus's load) rather than one a quiet minute and the other a busy one."""
    times: Tuple[list, list] = ([], [])
    for _ in range(runs):
        for side, call in enumerate((first, second)):
            # Calls untimed for a while first: the other side's threads may still be spinning for
            # work (ONNX Runtime's do for milliseconds), and would take this side's cores.
            settle_until = time.perf_counter() + settle
            while time.perf_counter() < settle_until:
                call()
            times[side].append(median_seconds(call, min_time=min_time, runs=1))
    return statistics.median(times[0]), statistics.median(times[1])

