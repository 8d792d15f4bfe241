"""The cost of one small operator call from Python, against PyTorch and ONNX Runtime: ``add`` of
1,024 floats, ``rms_norm`` and ``causal_softmax`` of one row of 4,096, ``random_sample``'s arg max
over 32,000 scores; each call followed by its wait (``infinirt.synchronize()``; PyTorch's and ONNX
Runtime's calls return done). Median and 99th percentile of 5,000 calls, quiet and then with
three busy-looping processes (``--busy 3``).

    PYTHONPATH=build/python-dev python bench/python_call_cost.py [--busy N] [--calls N]

PyTorch and ONNX Runtime are optional (their columns say "-" without them).
"""

from __future__ import annotations

import argparse
import multiprocessing
import os
import sys
import time
from typing import Callable, Dict, List, Optional, Tuple

import numpy as np


def spin(stop) -> None:  # a busy process: no sleep, no system call
    while not stop.is_set():
        pass


def percentiles(call: Callable[[], None], calls: int) -> Tuple[float, float]:
    for _ in range(200):
        call()
    times = []
    for _ in range(calls):
        start = time.perf_counter()
        call()
        times.append(time.perf_counter() - start)
    times.sort()
    return times[len(times) // 2] * 1e6, times[int(len(times) * 0.99)] * 1e6


def ours() -> Dict[str, Callable[[], None]]:
    import infinirt
    from infinirt import ops

    a, b, c = np.ones(1024, np.float32), np.ones(1024, np.float32), np.empty(1024, np.float32)
    x, w, y = np.ones((1, 4096), np.float32), np.ones(4096, np.float32), np.empty((1, 4096), np.float32)
    scores, probs = np.ones((1, 4096), np.float32), np.empty((1, 4096), np.float32)
    logits, result = np.random.default_rng(0).random(32000).astype(np.float32), np.empty((), np.int64)

    def wait(call):
        def run():
            call()
            infinirt.synchronize()
        return run

    return {"add": wait(lambda: ops.add(c, a, b)),
            "rms_norm": wait(lambda: ops.rms_norm(y, x, w, 1e-6)),
            "causal_softmax": wait(lambda: ops.causal_softmax(probs, scores)),
            "random_sample": wait(lambda: ops.random_sample(result, logits, 0.0, 1.0, 1, 1.0))}


def pytorch() -> Optional[Dict[str, Callable[[], None]]]:
    try:
        import torch
    except ImportError:
        return None
    torch.set_num_threads(2)
    a, b, c = torch.ones(1024), torch.ones(1024), torch.empty(1024)
    x, w, y = torch.ones(1, 4096), torch.ones(4096), torch.empty(1, 4096)
    scores, probs = torch.ones(1, 4096), torch.empty(1, 4096)
    logits = torch.rand(32000)
    rms = getattr(torch.nn.functional, "rms_norm", None)
    return {"add": lambda: torch.add(a, b, out=c),
            "rms_norm": (lambda: rms(x, (4096,), w, 1e-6)) if rms else (lambda: None),
            "causal_softmax": lambda: torch.softmax(scores, -1, out=probs),
            "random_sample": lambda: torch.argmax(logits)}


def onnxruntime() -> Optional[Dict[str, Callable[[], None]]]:
    try:
        sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
        from onnx import helper
        from onnxruntime_ops import onnx_runner
    except ImportError:
        return None
    a, b, c = np.ones(1024, np.float32), np.ones(1024, np.float32), np.empty(1024, np.float32)
    x, w, y = np.ones((1, 4096), np.float32), np.ones(4096, np.float32), np.empty((1, 4096), np.float32)
    scores, probs = np.ones((1, 4096), np.float32), np.empty((1, 4096), np.float32)
    logits, result = np.random.default_rng(0).random(32000).astype(np.float32), np.empty((), np.int64)
    n = helper.make_node
    return {"add": onnx_runner([n("Add", ["a", "b"], ["c"])], {"a": a, "b": b}, {"c": c}, 2),
            "rms_norm": onnx_runner([n("SimplifiedLayerNormalization", ["x", "w"], ["y"],
                                       axis=-1, epsilon=1e-6)], {"x": x, "w": w}, {"y": y}, 2),
            "causal_softmax": onnx_runner([n("Softmax", ["x"], ["y"], axis=-1)], {"x": scores},
                                          {"y": probs}, 2),
            "random_sample": onnx_runner([n("ArgMax", ["x"], ["i"], axis=0, keepdims=0)],
                                         {"x": logits}, {"i": result}, 2)}


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--busy", type=int, default=0, help="busy-looping processes meanwhile")
    parser.add_argument("--calls", type=int, default=5000)
    args = parser.parse_args()
    stop = multiprocessing.Event()
    workers: List[multiprocessing.Process] = []
    for _ in range(args.busy):
        worker = multiprocessing.Process(target=spin, args=(stop,), daemon=True)
        worker.start()
        workers.append(worker)
    try:
        sides = {"infinirt": ours(), "PyTorch": pytorch(), "ONNX Runtime": onnxruntime()}
        print(f"| operator ({args.busy} busy processes) | " +
              " | ".join(f"{side} median / p99 (us)" for side in sides) + " |")
        print("| --- |" + " ---: |" * len(sides))
        for name in ("add", "rms_norm", "causal_softmax", "random_sample"):
            cells = []
            for calls in sides.values():
                if calls is None:
                    cells.append("-")
                    continue
                median, p99 = percentiles(calls[name], args.calls)
                cells.append(f"{median:.1f} / {p99:.1f}")
            print(f"| {name} | " + " | ".join(cells) + " |")
    finally:
        stop.set()
        for worker in workers:
            worker.join()
    return 0


if __name__ == "__main__":
    sys.exit(main())
