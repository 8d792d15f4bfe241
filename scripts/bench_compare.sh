#!/usr/bin/env bash
# Before and after a performance change, in the same run: builds the benchmarks of another
# revision (in a temporary worktree) and of this working tree, runs the two alternately
# (ROUNDS times each, default 2, so that drifts of a shared machine hit both), and prints each
# benchmark's median over all rounds, before and after, with the ratio after/before.
#
#   scripts/bench_compare.sh REVISION [benchmark arguments, e.g. --benchmark_filter=Init]
#
# The JSON of every run stays in build/bench-compare/.
set -euo pipefail
cd "$(dirname "$0")/.."

if [ $# -lt 1 ]; then
  echo "usage: $0 REVISION [benchmark arguments]" >&2
  exit 2
fi
revision="$1"
shift
rounds="${ROUNDS:-2}"

bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
scratch=$(mktemp -d)
cleanup() {
  git worktree remove --force "$scratch/source" >/dev/null 2>&1 || true
  rm -rf "$scratch"
}
trap cleanup EXIT
git worktree add --detach "$scratch/source" "$revision" >/dev/null

build_bench() {  # source directory, build directory, further CMake options
  cmake -S "$1" -B "$2" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFINIRT_BUILD_BENCH=ON "${@:3}" \
    >/dev/null
  cmake --build "$2" -j"$jobs" --target infinirt_bench >/dev/null
}
echo "building $revision and the working tree"
# The scratch tree needs nothing else; build/ keeps the options it has (as scripts/bench.sh).
build_bench "$scratch/source" "$scratch/build" -DINFINIRT_BUILD_TESTS=OFF \
  -DINFINIRT_BUILD_EXAMPLES=OFF
build_bench . build

out=build/bench-compare
rm -rf "$out"
mkdir -p "$out"
for round in $(seq "$rounds"); do
  for side in before after; do
    program=build/bin/infinirt_bench
    [ "$side" = before ] && program="$scratch/build/bin/infinirt_bench"
    echo "round $round: $side"
    INFINIRT_LOG_LEVEL=error "$program" --benchmark_out="$out/$side-$round.json" \
      --benchmark_out_format=json "$@" >/dev/null
  done
done

python3 - "$out" "$revision" <<'EOF'
import glob, json, statistics, sys

out, revision = sys.argv[1], sys.argv[2]

def times(side):
    """Benchmark name -> every repetition's real time in ns, over all rounds."""
    scale = {"ns": 1, "us": 1e3, "ms": 1e6, "s": 1e9}
    result = {}
    for path in sorted(glob.glob(f"{out}/{side}-*.json")):
        for run in json.load(open(path))["benchmarks"]:
            if run.get("run_type") == "aggregate" and run.get("aggregate_name") == "median":
                name = run["run_name"].removesuffix("/real_time")
                result.setdefault(name, []).append(run["real_time"] * scale[run["time_unit"]])
    return result

before, after = times("before"), times("after")
print(f"\n{'benchmark':58} {'before ns':>12} {'after ns':>12} {'after/before':>12}")
for name, values in after.items():
    if name not in before:
        continue
    b, a = statistics.median(before[name]), statistics.median(values)
    print(f"{name:58} {b:12.1f} {a:12.1f} {a / b:11.2f}x")
print(f"\nbefore: {revision}; after: the working tree; medians of the runs' medians")
EOF
