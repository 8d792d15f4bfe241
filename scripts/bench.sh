#!/usr/bin/env bash
# Builds InfiniRT and runs the benchmarks (bench/), on the CPU backend. Prints Google
# Benchmark's table and the comparisons with their targets; writes the results as JSON to
# build/bench-results.json (or the file given as the first argument). Further arguments go to
# the benchmark program (e.g. --benchmark_filter=Dispatch).
set -euo pipefail
cd "$(dirname "$0")/.."

out="${1:-build/bench-results.json}"
[ $# -gt 0 ] && shift
bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFINIRT_BUILD_BENCH=ON >/dev/null
cmake --build build -j"$jobs" --target infinirt_bench
# Only the CPU backend's devices; the vendor plugins still load (the start-up benchmark
# measures them), and log nothing below errors.
INFINIRT_LOG_LEVEL=error ./build/bin/infinirt_bench --benchmark_out="$out" \
  --benchmark_out_format=json "$@"
echo "results: $out"
