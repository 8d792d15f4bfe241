"""What the Python binding adds on top of the C API, each number against its floor.

Four measurements, each made in the same run as its floor (the same C function called through
ctypes directly, with nothing of the binding around it):

  1. Stream.query() on an idle stream        vs  rt.StreamQuery(handle)      target <= 1.5x
  2. Event.query() on a completed event      vs  rt.EventQuery(handle)       target <= 1.5x
  3. Buffer.copy_from(array), 64 MiB, sync   vs  rt.Memcpy(ptr, data, n, 4)  target >= 0.95x
  4. Buffer(1 MiB) made and dropped          vs  the caching allocator's     (reported only)
                                                 Malloc + Free

Run it from the repository root, after `bash scripts/test-python.sh` built and installed the wheel:

    build/python-wheel/venv/bin/python bench/python_bench.py [--quick] [--json PATH]

It uses the installed package only (nothing from the source tree). It is a benchmark, not a test:
a missed target is reported in the table and the exit code stays 0.
"""

import argparse
import ctypes
import gc
import json
import platform
import statistics
import sys
import time

import numpy as np

import infinirt
from infinirt import _library
from infinirt._library import CONSTANTS, rt

MIB = 1 << 20
COPY_BYTES = 64 * MIB


def alternate(variant_a, variant_b, repetitions):
    """Runs a, b, a, b, ... `repetitions` times each, so that drift (clock, other load) touches
    both alike. Each variant returns its own measurement; returns the two lists of samples."""
    samples_a, samples_b = [], []
    gc.disable()  # no collection in the middle of a timed loop
    try:
        for _ in range(repetitions):
            samples_a.append(variant_a())
            samples_b.append(variant_b())
    finally:
        gc.enable()
    return samples_a, samples_b


def ns_per_call(calls, function, *argument):
    """A variant timing `calls` calls of `function()` or `function(argument)`. The loop is the
    same for the binding and for its floor, so its own cost is in both numbers alike."""
    loop = range(calls)

    def run():
        start = time.perf_counter_ns()
        if argument:
            (value,) = argument
            for _ in loop:
                function(value)
        else:
            for _ in loop:
                function()
        return (time.perf_counter_ns() - start) / calls

    return run


def gb_per_s(copy, nbytes, copies):
    """A variant timing `copies` synchronous copies of `nbytes`; the result in GB/s (10^9 B/s)."""

    def run():
        start = time.perf_counter_ns()
        for _ in range(copies):
            copy()
        return nbytes * copies / (time.perf_counter_ns() - start)  # bytes per ns = GB/s

    return run


def result(what, unit, samples, floor_samples, higher_is_better, target):
    """One row: medians of both, their ratio and whether it meets the target."""
    measured, floor = statistics.median(samples), statistics.median(floor_samples)
    ratio = measured / floor
    if target is None:  # reported only
        met, target_text = None, "-"
    else:
        met = ratio >= target if higher_is_better else ratio <= target
        target_text = (">= " if higher_is_better else "<= ") + f"{target}x"
    return {
        "what": what, "unit": unit, "measured": measured, "floor": floor, "ratio": ratio,
        "target": target_text, "met": met,
        "samples": samples, "floor_samples": floor_samples,
    }


def _verdict(met):
    return "reported" if met is None else "met" if met else "MISSED"


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n")[0])
    parser.add_argument("--quick", action="store_true", help="few iterations: a smoke run")
    parser.add_argument("--json", metavar="PATH", help="also write the results as JSON there")
    args = parser.parse_args()

    calls, repetitions, copies = (20_000, 3, 3) if args.quick else (200_000, 7, 30)
    rows = []

    # 1. Stream.query() on an idle stream. Both sides call the same bound ctypes function; the
    #    floor with the handle already an int, the binding through its method (attribute lookup
    #    of the handle, comparison of the code). The bound method is looked up once, as the
    #    floor's function is.
    stream = infinirt.Stream()
    stream.synchronize()
    assert stream.query() and rt.StreamQuery(stream.handle) == 0
    binding = ns_per_call(calls, stream.query)
    floor = ns_per_call(calls, rt.StreamQuery, stream.handle)
    binding(), floor()  # warm-up
    a, b = alternate(binding, floor, repetitions)
    rows.append(result("Stream.query() (idle)", "ns/call", a, b, False, 1.5))

    # 2. Event.query() on an event recorded on that stream and completed.
    event = infinirt.Event()
    event.record(stream)
    event.synchronize()
    assert event.query() and rt.EventQuery(event.handle) == 0
    binding = ns_per_call(calls, event.query)
    floor = ns_per_call(calls, rt.EventQuery, event.handle)
    binding(), floor()
    a, b = alternate(binding, floor, repetitions)
    rows.append(result("Event.query() (completed)", "ns/call", a, b, False, 1.5))

    # 3. A synchronous host-to-device copy of 64 MiB from a NumPy array. The floor is
    #    infinirtMemcpy with the addresses already in hand; the binding takes the array through
    #    the buffer protocol on every call. The array is filled first so that its pages exist.
    array = np.arange(COPY_BYTES, dtype=np.uint8)
    buffer = infinirt.Buffer(COPY_BYTES)
    dst, src, kind = buffer.ptr, array.ctypes.data, CONSTANTS["infinirtMemcpyDefault"]
    assert rt.Memcpy(dst, src, COPY_BYTES, kind) == 0
    binding = gb_per_s(lambda: buffer.copy_from(array), COPY_BYTES, copies)
    floor = gb_per_s(lambda: rt.Memcpy(dst, src, COPY_BYTES, kind), COPY_BYTES, copies)
    binding(), floor()  # warm-up: the device memory's pages, the caches
    a, b = alternate(binding, floor, repetitions)
    rows.append(result("Buffer.copy_from(ndarray) 64 MiB", "GB/s", a, b, True, 0.95))
    assert bytes(np.from_dlpack(buffer)[:16]) == bytes(array[:16])  # the copies did copy

    # 4. A Buffer of 1 MiB made and dropped (device memory from the caching allocator), against
    #    the allocator's own C functions called through ctypes: what the Python object costs.
    #    Reported, with no target: the object's creation and collection dominate.
    allocator = _library.allocator()
    pointer = ctypes.c_void_p()

    def allocate_and_free():
        allocator.Malloc(ctypes.byref(pointer), MIB, None)
        allocator.Free(pointer.value)

    binding = ns_per_call(calls // 10, lambda: infinirt.Buffer(MIB))
    floor = ns_per_call(calls // 10, allocate_and_free)
    binding(), floor()
    a, b = alternate(binding, floor, repetitions)
    rows.append(result("Buffer(1 MiB) made and dropped", "ns/call", a, b, False, None))

    # The table.
    device = infinirt.get_device_properties()
    print(f"infinirt {infinirt.__version__} from {infinirt.__file__}")
    print(f"Python {platform.python_version()}, NumPy {np.__version__}, device: {device.name}")
    print(f"per-call: {repetitions} x {calls} calls; copy: {repetitions} x {copies} copies; "
          f"medians, binding and floor alternated\n")
    header = f"{'what':<34} {'measured':>14} {'floor':>14} {'ratio':>7} {'target':>9}  result"
    print(header)
    print("-" * len(header))
    for row in rows:
        measured = f"{row['measured']:.1f} {row['unit']}"
        floor = f"{row['floor']:.1f} {row['unit']}"
        print(f"{row['what']:<34} {measured:>14} {floor:>14} {row['ratio']:>6.2f}x "
              f"{row['target']:>9}  {_verdict(row['met'])}")

    if args.json:
        report = {
            "infinirt": infinirt.__version__, "python": platform.python_version(),
            "numpy": np.__version__, "device": device.name, "quick": args.quick,
            "calls": calls, "repetitions": repetitions, "copies": copies,
            "copy_bytes": COPY_BYTES, "results": rows,
        }
        with open(args.json, "w") as out:
            json.dump(report, out, indent=2)
        print(f"\nwritten to {args.json}")
    return 0  # a benchmark: missed targets are in the table, not in the exit code


if __name__ == "__main__":
    sys.exit(main())
