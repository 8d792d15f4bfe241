#!/usr/bin/env bash
# Runs the tests that exercise a backend against one vendor's real runtime and hardware, on a
# machine that has them: infinirt-info, the conformance suite (the vendor alone), then the
# stress and bad-input tests, teardown at exit and the examples with the vendor's device as
# device 0 and the CPU backend's after it. CTest runs these on the CPU backend and on the
# emulated runtimes; this script is for the real thing.
#
#   bash scripts/hardware_check.sh <vendor> [build dir] [log dir]
#
# Left out, because they test what only the CPU backend provides: tests/stream_ordered and the
# pool-attribute test of bad_input (vendor memory pools are not wired: NotSupported), and the two
# stress tests that queue work on 10,000 streams behind one blocked host function (a vendor
# runtime may block the caller when its queues fill; CUDA does).
#
# The build dir (default: build) is a tree built with -DINFINIRT_BUILD_TESTS=ON, or a copy of
# its bin/, lib/ and tests/ executables taken to another machine (LD_LIBRARY_PATH then names
# its lib/). Every program's output goes to <log dir>/<name>.log (default: <build dir>/hardware-
# <vendor>); the summary lists each program as passed, FAILED or absent, and the conformance
# tests the vendor does not support (skips.tsv). Exit status 1 if any program failed.
# HARDWARE_CHECK_TIMEOUT=<seconds> caps each program's time limit (default: none below its own).
set -uo pipefail

vendor="${1:?usage: hardware_check.sh <vendor> [build dir] [log dir]}"
build="${2:-build}"
logs="${3:-$build/hardware-$vendor}"
mkdir -p "$logs"
export INFINIRT_BACKENDS="$vendor"
failed=0

# run <name> <seconds> <program> [args...]: one program, bounded in time, output to its log.
run() {
  local name="$1" seconds="$2" program="$3"
  shift 3
  if [ ! -x "$program" ]; then
    printf '%-44s absent (%s)\n' "$name" "$program"
    return
  fi
  local start=$SECONDS status
  [ "$seconds" -gt "${HARDWARE_CHECK_TIMEOUT:-$seconds}" ] && seconds=$HARDWARE_CHECK_TIMEOUT
  timeout --kill-after=10 "$seconds" "$program" "$@" >"$logs/$name.log" 2>&1
  status=$?
  if [ $status -eq 0 ]; then
    printf '%-44s passed (%ds)\n' "$name" $((SECONDS - start))
  else
    failed=1
    local why="exit status $status"
    [ $status -eq 124 ] && why="timed out after ${seconds}s"
    printf '%-44s FAILED: %s; see %s\n' "$name" "$why" "$logs/$name.log"
  fi
}

# The device must be there before anything else means something.
run infinirt-info 60 "$build/bin/infinirt-info"
run infinirt-info-json 60 "$build/bin/infinirt-info" --json
if ! grep -q "$vendor" "$logs/infinirt-info.log" 2>/dev/null; then
  echo "infinirt-info does not list $vendor; its output:" && cat "$logs/infinirt-info.log"
fi

INFINIRT_CONFORMANCE_SKIPS="$logs/skips.tsv" run conformance 600 "$build/tests/conformance_test"
export INFINIRT_BACKENDS="$vendor,cpu"  # accelerators come first: device 0 is still the vendor's
for test in smoke stress_stream_lifecycle stress_default_streams stress_concurrency \
  bad_input_null_out_pointer bad_input_device_argument bad_input_memory_argument \
  bad_input_handle bad_input_graph_handle bad_input_not_supported; do
  run "$test" 300 "$build/tests/${test}_test"
done
run stress_many_objects 300 "$build/tests/stress_many_objects_test" \
  --gtest_filter='-*ChainOfTenThousand*:*TenThousandStreamsDestroyedWithPendingWork*'
run bad_input_enum_value 300 "$build/tests/bad_input_enum_value_test" \
  --gtest_filter='-*MemPoolAttributes*'
run exit_teardown 60 "$build/tests/lifecycle_exit_teardown_test"
run exit_teardown_idle_thread 60 "$build/tests/lifecycle_exit_teardown_test" --idle-thread
# Threads calling across exit(), with the vendor runtime's own teardown in the race.
race_runs=100
race_failures=0
probe="$build/tests/lifecycle_exit_race_probe"
if [ ! -x "$probe" ]; then
  printf '%-44s absent (%s)\n' exit_race "$probe"
else
  for ((i = 0; i < race_runs; i++)); do
    timeout 30 "$probe" "$i" >>"$logs/exit_race.log" 2>&1 || race_failures=$((race_failures + 1))
  done
  if [ $race_failures -eq 0 ]; then
    printf '%-44s passed (%d runs)\n' exit_race $race_runs
  else
    failed=1
    printf '%-44s FAILED: %d of %d runs\n' exit_race $race_failures $race_runs
  fi
fi
PLUGIN_FILES="$build/lib/infinirt/libinfinirt_$vendor.so" \
  run plugin_lifecycle 120 "$build/tests/plugin_lifecycle_test" \
  --gtest_filter='EveryPlugin/*'
# The operators on the vendor's device, where it has an operator backend (graph capture left out:
# InfiniRT graphs cannot hold a vendor's kernels).
if [ -e "$build/lib/infinirt/libinfiniop_$vendor.so" ]; then
  INFINIOP_TEST_DEVICE="$vendor" run infiniop 300 "$build/tests/infiniop_test" \
    --gtest_filter='-*CapturedInAGraph*'
fi
run example_streams_and_events 60 "$build/bin/streams_and_events"
run example_graph_capture 60 "$build/bin/graph_capture"

if [ -s "$logs/skips.tsv" ]; then
  echo "conformance tests $vendor does not support (skipped):"
  sed 's/^/  /' "$logs/skips.tsv"
fi
exit $failed
