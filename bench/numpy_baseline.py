"""NumPy doing what bench/infiniop_bench.cc measures InfiniOP doing, on the same shapes and dtypes
(ml_dtypes' bfloat16 for BF16), each the way a NumPy user would write it with output arrays
reused. Prints one JSON object: benchmark name -> median seconds per call over 5 runs.

Run by scripts/bench_numpy.sh, which compares it with InfiniOP's numbers."""

import json

import ml_dtypes
import numpy as np

from timing import median_seconds

MIB = 1 << 20


def gemm(n, dtype):
    a = np.ones((n, n), dtype=dtype)
    b = np.ones((n, n), dtype=dtype)
    c = np.empty((n, n), dtype=dtype)
    return lambda: np.matmul(a, b, out=c)


def add():
    count = 64 * MIB // 4
    a, b, c = (np.ones(count, dtype=np.float32) for _ in range(3))
    return lambda: np.add(a, b, out=c)


def swiglu():
    count = 64 * MIB // 4
    up, gate, out = (np.ones(count, dtype=np.float32) for _ in range(3))
    scratch = np.empty(count, dtype=np.float32)

    def call():
        np.negative(gate, out=scratch)
        np.exp(scratch, out=scratch)
        np.add(scratch, 1, out=scratch)
        np.divide(gate, scratch, out=scratch)
        np.multiply(up, scratch, out=out)

    return call


def rms_norm():
    rows, dim = 4096, 64 * MIB // 4 // 4096
    x = np.ones((rows, dim), dtype=np.float32)
    w = np.ones(dim, dtype=np.float32)
    y = np.empty_like(x)

    def call():
        scale = 1 / np.sqrt(np.mean(np.square(x), axis=1, keepdims=True) + 1e-6)
        np.multiply(x, w, out=y)
        np.multiply(y, scale, out=y)

    return call


def transpose():
    side = 4096
    src = np.ones((side, side), dtype=np.float32)
    dst = np.empty((side, side), dtype=np.float32)
    return lambda: np.copyto(dst, src.T)


def main():
    cases = {
        "InfiniOP/Gemm/F32/1024": gemm(1024, np.float32),
        "InfiniOP/Gemm/F32/4096": gemm(4096, np.float32),
        "InfiniOP/Gemm/F32/2048": gemm(2048, np.float32),
        "InfiniOP/Gemm/BF16/2048": gemm(2048, ml_dtypes.bfloat16),
        "InfiniOP/Gemm/F16/2048": gemm(2048, np.float16),
        "InfiniOP/Add/F32/64MiB": add(),
        "InfiniOP/SwiGLU/F32/64MiB": swiglu(),
        "InfiniOP/RMSNorm/F32/64MiB": rms_norm(),
        "InfiniOP/Rearrange/F32/64MiB/transpose": transpose(),
    }
    # F16 and BF16 products have no BLAS in NumPy: a few calls take minutes, so one run of one.
    slow = {"InfiniOP/Gemm/BF16/2048", "InfiniOP/Gemm/F16/2048"}
    results = {}
    for name, call in cases.items():
        results[name] = (median_seconds(call, min_time=0, runs=1) if name in slow
                         else median_seconds(call, min_time=0.5))
    print(json.dumps({"numpy": np.__version__, "ml_dtypes": ml_dtypes.__version__,
                      "seconds": results}))


if __name__ == "__main__":
    main()
