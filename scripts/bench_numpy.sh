#!/usr/bin/env bash
# InfiniOP on the CPU backend against NumPy doing the same (bench/numpy_baseline.py; ml_dtypes
# for BF16), one row per operator: both medians and how many times faster InfiniOP is. NumPy and
# ml_dtypes come from PyPI into a virtual environment under build/ (python3 and its venv module
# are needed). Runs after scripts/bench.sh has built the benchmarks, or builds them.
set -euo pipefail
cd "$(dirname "$0")/.."

venv=build/numpy-bench-venv
if [ ! -x "$venv/bin/python" ]; then
  python3 -m venv "$venv"
  "$venv/bin/pip" install --quiet numpy ml_dtypes
fi
if [ ! -x build/bin/infinirt_bench ]; then
  cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFINIRT_BUILD_BENCH=ON >/dev/null
  cmake --build build -j"$(nproc 2>/dev/null || echo 2)" --target infinirt_bench
fi
INFINIRT_LOG_LEVEL=error build/bin/infinirt_bench --benchmark_filter='InfiniOP/(Gemm|Add|SwiGLU|RMSNorm|Rearrange)' \
  --benchmark_out=build/infiniop-bench.json --benchmark_out_format=json >/dev/null
"$venv/bin/python" bench/numpy_baseline.py > build/numpy-bench.json
"$venv/bin/python" - <<'PY'
import json
infiniop = {}
for run in json.load(open("build/infiniop-bench.json"))["benchmarks"]:
    if run.get("aggregate_name") == "median":
        name = run["run_name"].removesuffix("/real_time")
        scale = {"ns": 1e-9, "us": 1e-6, "ms": 1e-3, "s": 1}[run["time_unit"]]
        infiniop[name] = run["real_time"] * scale
numpy = json.load(open("build/numpy-bench.json"))
print(f"NumPy {numpy['numpy']}, ml_dtypes {numpy['ml_dtypes']}")
print(f"{'operator':42} {'InfiniOP ms':>12} {'NumPy ms':>12} {'speed-up':>9}")
slower = 0
for name, seconds in numpy["seconds"].items():
    ours = infiniop.get(name)
    if ours is None:
        print(f"{name:42} {'-':>12} {seconds * 1e3:12.2f}")
        continue
    ratio = seconds / ours
    slower += ratio < 1
    print(f"{name:42} {ours * 1e3:12.2f} {seconds * 1e3:12.2f} {ratio:8.2f}x")
print(f"{slower} row(s) where NumPy is faster")
PY
