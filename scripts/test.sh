#!/usr/bin/env bash
# Builds InfiniRT with its tests and runs the whole suite with CTest.
#   scripts/test.sh              regular build (build/)
#   scripts/test.sh --sanitize   AddressSanitizer + UndefinedBehaviorSanitizer (build-asan/)
set -euo pipefail
cd "$(dirname "$0")/.."

build_dir=build
cmake_args=(-DCMAKE_BUILD_TYPE=RelWithDebInfo)
case "${1:-}" in
  "") ;;
  --sanitize)
    build_dir=build-asan
    cmake_args+=(-DINFINIRT_SANITIZE=address,undefined)
    # Leak checking at exit is on. intercept_tls_get_addr=0 works around a bug of the sanitizer
    # runtime in GCC <= 13 (google/sanitizers#1322): it can misread a malloc'ed dynamic-TLS block
    # of a dlopen'ed library (the plugins' thread_local variables) as an old glibc TLS header,
    # and LeakSanitizer's tracer then crashes at exit ("Tracer caught signal 11") in a process
    # that leaked nothing.
    export ASAN_OPTIONS="${ASAN_OPTIONS:-detect_leaks=1:abort_on_error=1:intercept_tls_get_addr=0}"
    export UBSAN_OPTIONS="${UBSAN_OPTIONS:-print_stacktrace=1:halt_on_error=1}"
    ;;
  *) echo "usage: $0 [--sanitize]" >&2; exit 2 ;;
esac

bash scripts/install-deps.sh
jobs=$(nproc 2>/dev/null || echo 2)
cmake -S . -B "$build_dir" "${cmake_args[@]}" -DINFINIRT_BUILD_TESTS=ON >/dev/null
cmake --build "$build_dir" -j"$jobs"
ctest --test-dir "$build_dir" --output-on-failure -j"$jobs"
