#!/usr/bin/env bash
# Builds the libFuzzer harnesses of tests/fuzz with clang, AddressSanitizer and
# UndefinedBehaviorSanitizer (build-fuzz/), and runs each for FUZZ_SECONDS (default 60) from
# the committed corpus. Fails on any crash, sanitizer report, leak or hang (an input running
# longer than 10 s), leaving the input under build-fuzz/artifacts/. The committed corpus is
# copied first, so the repository is never modified.
#   FUZZ_SECONDS=300 FUZZ_SEED=0 bash scripts/fuzz.sh     all harnesses, 5 minutes each, new seed
#   bash scripts/fuzz.sh config_fuzzer                     one harness
set -euo pipefail
cd "$(dirname "$0")/.."

seconds="${FUZZ_SECONDS:-60}"
# A fixed seed by default, so that a CI run explores the same inputs each time (a failure is
# reproducible, not luck); FUZZ_SEED=0 lets libFuzzer choose one.
seed="${FUZZ_SEED:-1}"
harnesses=("$@")
[ ${#harnesses[@]} -gt 0 ] || harnesses=(api_sequence_fuzzer config_fuzzer env_fuzzer)

bash scripts/install-deps.sh clang libclang-rt-14-dev
jobs=$(nproc 2>/dev/null || echo 2)
# Line tables only (-g1), as scripts/test.sh: enough for the reports, cheaper to compile.
CC=clang CXX=clang++ cmake -S . -B build-fuzz -DCMAKE_BUILD_TYPE=RelWithDebInfo \
  -DCMAKE_C_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="-O2 -g1 -DNDEBUG" \
  -DINFINIRT_FUZZ=ON -DINFINIRT_SANITIZE=address,undefined -DINFINIRT_BUILD_TESTS=OFF \
  -DINFINIRT_BUILD_EXAMPLES=OFF -DINFINIRT_BUILD_BENCH=OFF >/dev/null
cmake --build build-fuzz -j"$jobs" --target "${harnesses[@]}"

# intercept_tls_get_addr=0: see scripts/test.sh. allocator_may_return_null=1: a request larger
# than memory must reach InfiniRT's error path, as it does with glibc's malloc.
export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:intercept_tls_get_addr=0:allocator_may_return_null=1}"
export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
passed=0 failed=0
for harness in "${harnesses[@]}"; do
  name=${harness%_fuzzer}
  corpus=build-fuzz/corpus/$name
  mkdir -p "$corpus" build-fuzz/artifacts
  cp -f tests/fuzz/corpus/"$name"/* "$corpus"/ 2>/dev/null || true
  log=build-fuzz/$harness.log
  # The build writes a harness's dictionary when part of it comes from the build (env's backend
  # names, from config/vendors.json); the others are the committed ones.
  dict=build-fuzz/fuzz/$name.dict
  [ -f "$dict" ] || dict=tests/fuzz/$name.dict
  status=0
  "./build-fuzz/fuzz/$harness" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=4096 \
    -print_final_stats=1 -seed="$seed" -dict="$dict" \
    -artifact_prefix="build-fuzz/artifacts/$name-" "$corpus" >"$log" 2>&1 || status=$?
  runs=$(grep -o 'stat::number_of_executed_units: *[0-9]*' "$log" | grep -o '[0-9]*$' || echo "?")
  if [ "$status" -eq 0 ]; then
    passed=$((passed + 1))
    echo "fuzz: $harness: $runs executions in ${seconds} s, no crash, leak or hang"
  else
    failed=$((failed + 1))
    echo "fuzz: $harness: FAILED (exit $status) after $runs executions; the end of $log:"
    tail -n 60 "$log"
  fi
done
echo "fuzz: $passed passed, $failed failed"
[ "$failed" -eq 0 ]
