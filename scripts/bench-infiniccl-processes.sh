#!/usr/bin/env bash
# Builds InfiniRT and measures InfiniCCL's AllReduce across 2 and 4 processes on this host
# against Gloo called directly on the same buffers (bench/infiniccl_process_bench.cc).
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFINIRT_BUILD_BENCH=ON >/dev/null
cmake --build build -j"$jobs" --target infiniccl_process_bench
for ranks in 2 4; do
  INFINIRT_BACKENDS=cpu INFINIRT_LOG_LEVEL=error \
    bash scripts/infiniccl-launch.sh -n "$ranks" --timeout 1200 -- ./build/bin/infiniccl_process_bench
  echo
done
