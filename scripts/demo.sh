#!/usr/bin/env bash
# Builds InfiniRT and runs the examples and infinirt-info on the CPU backend.
set -euo pipefail
cd "$(dirname "$0")/.."

bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B build -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFINIRT_BUILD_TESTS=OFF \
  -DINFINIRT_BUILD_BENCH=OFF -DINFINIRT_BUILD_EXAMPLES=ON >/dev/null
cmake --build build -j"$jobs"

echo
echo "== infinirt-info"
./build/bin/infinirt-info
for example in build/bin/*; do
  # The benchmarks are there if scripts/bench.sh (or the test build) built them in this tree:
  # not examples.
  case "$(basename "$example")" in infinirt-info | infinirt_bench | infiniccl_process_bench) continue ;; esac
  echo
  echo "== $(basename "$example")"
  "$example"
done

echo
echo "== allreduce, as 4 processes (scripts/infiniccl-launch.sh)"
bash scripts/infiniccl-launch.sh -n 4 --timeout 120 -- build/bin/allreduce
