#!/usr/bin/env bash
# Builds InfiniRT with its tests (and the benchmarks, so that CI checks they build; they are
# never run here) and runs the whole suite with CTest.
#   scripts/test.sh              regular build (build/), then the Python package built from it
#                                (scripts/test-python.sh)
#   scripts/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
#   scripts/test.sh --tsan       ThreadSanitizer (build-tsan/)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
# Line tables only (-g1): enough for every stack trace a failing test or a sanitizer prints, at
# two thirds of the compile time of full debug information; code generation is the same.
optimize="-O2"
cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
case "${1:-}" in
  "")
    # Built as the Python wheel builds it (one file per library, no versioned names), so that
    # scripts/test-python.sh makes the wheel from this build without relinking. The sanitizer
    # builds below keep the default versioned names, and run the same suite on them.
    cmake_args+=(-DINFINIRT_VERSIONED_LIBRARIES=OFF)
    ;;
  --sanitize)
    build_dir=build-asan
    cmake_args+=(-DINFINIRT_SANITIZE=address,undefined)
    # -O1, as the sanitizers' authors advise: UndefinedBehaviorSanitizer's checks make GCC's -O2
    # three times slower to compile (the heaviest test source: 83 s against 27 s at -O1 -g1).
    optimize="-O1"
    # The NVIDIA operator backend's CUDA kernels are device code: nothing for a sanitizer to
    # instrument, and no GPU here to run them. Built once, in the regular configuration.
    cmake_args+=(-DINFINIOP_NVIDIA_KERNELS=OFF)
    # Leak checking at exit is on. intercept_tls_get_addr=0 works around a bug of the sanitizer
    # runtime in GCC <= 13 (google/sanitizers#1322): it can misread a malloc'ed dynamic-TLS block
    # of a dlopen'ed library (the plugins' thread_local variables) as an old glibc TLS header,
    # and LeakSanitizer's tracer then crashes at exit ("Tracer caught signal 11") in a process
    # that leaked nothing. allocator_may_return_null=1: a request larger than memory returns
    # NULL as glibc's malloc does (tests/resource_limits checks InfiniRT's answer to that).
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0:allocator_may_return_null=1}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
    ;;
  --tsan)
    # ThreadSanitizer over the whole suite. halt_on_error: the first data race fails the test
    # that found it. second_deadlock_stack: both stacks of a lock-order inversion.
    # allocator_may_return_null: as for AddressSanitizer above.
    build_dir=build-tsan
    cmake_args+=(-DINFINIRT_SANITIZE=thread -DINFINIOP_NVIDIA_KERNELS=OFF)  # as above
    # oneDNN runs its threads on OpenMP's runtime, which is not built for ThreadSanitizer: every
    # barrier of it would read as a race. This build's Gemm goes through OpenBLAS alone.
    cmake_args+=(-DINFINIOP_CPU_ONEDNN=OFF)
    # suppressions: races ThreadSanitizer reports inside libraries it cannot see into, each
    # with its reason (tests/tsan.supp).
    export TSAN_OPTIONS="${TSAN_OPTIONS:-halt_on_error=1:second_deadlock_stack=1:allocator_may_return_null=1:suppressions=$PWD/tests/tsan.supp}"
    ;;
  *) echo "usage: $0 [--sanitize | --tsan]" >&2; exit 2 ;;
esac

cmake_args+=(-DCMAKE_C_FLAGS_RELWITHDEBINFO="$optimize -g1 -DNDEBUG"
             -DCMAKE_CXX_FLAGS_RELWITHDEBINFO="$optimize -g1 -DNDEBUG")
# The benchmarks build in the regular configuration, which checks that they compile; they never
# run under a sanitizer.
bench=ON
[ -n "${1:-}" ] && bench=OFF

bash scripts/install-deps.sh
# A compiler cache, where one is installed, makes rebuilds of unchanged files free.
if command -v ccache >/dev/null 2>&1; then
  cmake_args+=(-DCMAKE_C_COMPILER_LAUNCHER=ccache -DCMAKE_CXX_COMPILER_LAUNCHER=ccache)
fi
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$build_dir" "${cmake_args[@]}" -DINFINIRT_BUILD_TESTS=ON -DINFINIRT_BUILD_BENCH="$bench" >/dev/null
cmake --build "$build_dir" -j"$jobs"
# The model checks (label models) run Python on the build's libraries: under a sanitizer the
# interpreter would need the sanitizer's runtime preloaded, and they check numbers, which the
# regular build does. They run there only.
ctest_args=()
[ -n "${1:-}" ] && ctest_args+=(-LE models)
status=0
ctest --test-dir "$build_dir" --output-on-failure -j"$jobs" "${ctest_args[@]}" || status=$?
bash scripts/skipped_tests.sh "$build_dir"
if [ -z "${1:-}" ]; then
  bash scripts/test-python.sh "$build_dir" || status=$?
fi
exit "$status"
