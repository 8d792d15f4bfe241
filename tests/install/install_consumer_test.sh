#!/usr/bin/env bash
# usage: install_consumer_test.sh BUILD_DIR SCRATCH_DIR CONSUMER_SRC CMAKE PKG_CONFIG CC SANITIZE_FLAGS
#                                 CONFIGURED_PLUGIN_DIR EXAMPLES_SRC CXX
set -euo pipefail
build_dir=$1 scratch=$2 consumer_src=$3 cmake=$4 pkg_config=$5 cc=$6 sanitize_flags=$7
configured_plugin_dir=$8  # where the build would install plugins; the scratch prefix is elsewhere
examples_src=$9 cxx=${10}

rm -rf "$scratch"
prefix="$scratch/prefix"
"$cmake" --install "$build_dir" --prefix "$prefix" >/dev/null

# The layout promised by the docs.
for path in include/infinicore.h include/infinirt.h include/infinirt_plugin.h include/infiniop.h \
            include/infiniop/ops/gemm.h include/infiniop_backend.h include/infinirt/runtime.hpp \
            bin/infinirt-info bin/infinirt-selftest share/infinirt/infinirt.json; do
  [ -e "$prefix/$path" ] || { echo "missing from the install: $path"; exit 1; }
done
libdir=$(cd "$prefix" && ls -d lib* | head -n 1)
for path in "$libdir/libinfinirt.so" "$libdir/libinfinirt_runtime.so" \
            "$libdir/infinirt/libinfinirt_cpu.so" "$libdir/cmake/InfiniRT/InfiniRTConfig.cmake" \
            "$libdir/pkgconfig/infinirt.pc" "$libdir/pkgconfig/infinirt-runtime.pc" \
            "$libdir/libinfiniop.so" "$libdir/infinirt/libinfiniop_cpu.so" \
            "$libdir/pkgconfig/infiniop.pc" "$libdir/libinfiniccl.so" \
            "$libdir/infinirt/libinfiniccl_cpu.so" "$libdir/pkgconfig/infiniccl.pc"; do
  [ -e "$prefix/$path" ] || { echo "missing from the install: $path"; exit 1; }
done
# Every vendor plugin is built and installed by default, SDK or not (INFINIRT_TEST_VENDORS: the
# vendor plugins of config/vendors.json, separated by spaces).
[ -n "${INFINIRT_TEST_VENDORS:-}" ] || { echo "INFINIRT_TEST_VENDORS is not set"; exit 1; }
for vendor in $INFINIRT_TEST_VENDORS; do
  path="$libdir/infinirt/libinfinirt_$vendor.so"
  [ -e "$prefix/$path" ] || { echo "missing from the install: $path"; exit 1; }
done

# Nothing may lead the runtime back to the build tree.
unset INFINIRT_PLUGIN_PATH INFINIRT_CONFIG INFINIRT_BACKENDS INFINIRT_VISIBLE_DEVICES

echo "== infinirt-info -v from the install"
"$prefix/bin/infinirt-info" -v | tee "$scratch/info.txt"
grep -q "$prefix/$libdir/infinirt/libinfinirt_cpu.so" "$scratch/info.txt" ||
  { echo "infinirt-info did not load the installed CPU plugin"; exit 1; }
grep -q "$prefix/$libdir/infinirt/libinfinirt_ascend.so" "$scratch/info.txt" ||
  { echo "infinirt-info did not consider the installed Ascend plugin"; exit 1; }

echo "== infinirt-selftest from the install (the CPU backend, one area)"
"$prefix/bin/infinirt-selftest" --backend cpu --area devices >"$scratch/selftest.txt" 2>&1 ||
  { cat "$scratch/selftest.txt"; echo "infinirt-selftest failed from the install"; exit 1; }
grep -q "^PASSED: " "$scratch/selftest.txt" ||
  { cat "$scratch/selftest.txt"; echo "infinirt-selftest did not pass"; exit 1; }

echo "== the relocated install searches its own plugin directory, not the configured one"
INFINIRT_LOG_LEVEL=debug "$prefix/bin/infinirt-info" >/dev/null 2>"$scratch/debug.txt"
if grep -E "loader: (searching directory )?$configured_plugin_dir( does not exist|:)" \
     "$scratch/debug.txt"; then
  echo "the relocated install searched $configured_plugin_dir"; exit 1
fi
grep -q "loader: not searching $configured_plugin_dir" "$scratch/debug.txt" ||
  { echo "the debug log does not say why $configured_plugin_dir is not searched"; exit 1; }

echo "== consumer built with find_package(InfiniRT)"
"$cmake" -S "$consumer_src" -B "$scratch/cmake-consumer" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_C_FLAGS="$sanitize_flags" -DCMAKE_EXE_LINKER_FLAGS="$sanitize_flags" >/dev/null
"$cmake" --build "$scratch/cmake-consumer" >/dev/null
"$scratch/cmake-consumer/consumer"

echo "== consumer built with pkg-config"
if [ -z "$pkg_config" ]; then
  echo "pkg-config is not installed"; exit 1
fi
export PKG_CONFIG_PATH="$prefix/$libdir/pkgconfig"
# shellcheck disable=SC2046,SC2086
"$cc" $sanitize_flags -o "$scratch/pc-consumer" "$consumer_src/main.c" \
  $("$pkg_config" --cflags --libs infinirt) -Wl,-rpath,"$("$pkg_config" --variable=libdir infinirt)"
"$scratch/pc-consumer"

echo "== the C++ layer's example built with pkg-config (infinirt-runtime)"
# shellcheck disable=SC2046,SC2086
"$cxx" -std=c++17 $sanitize_flags -o "$scratch/pc-cxx-consumer" "$examples_src/cxx_runtime.cc" \
  $("$pkg_config" --cflags --libs infinirt-runtime) \
  -Wl,-rpath,"$("$pkg_config" --variable=libdir infinirt-runtime)"
"$scratch/pc-cxx-consumer"

echo "== the InfiniOP example built with pkg-config (infiniop): it finds the installed CPU backend"
# shellcheck disable=SC2046,SC2086
"$cxx" -std=c++17 $sanitize_flags -o "$scratch/pc-infiniop-consumer" \
  "$examples_src/infiniop_swiglu.cc" $("$pkg_config" --cflags --libs infiniop) \
  -Wl,-rpath,"$("$pkg_config" --variable=libdir infiniop)"
"$scratch/pc-infiniop-consumer"

echo "== the InfiniCCL example built with pkg-config (infiniccl): 4 CPU devices in one process"
# shellcheck disable=SC2046,SC2086
"$cxx" -std=c++17 $sanitize_flags -o "$scratch/pc-infiniccl-consumer" \
  "$examples_src/allreduce.cc" $("$pkg_config" --cflags --libs infiniccl) \
  -Wl,-rpath,"$("$pkg_config" --variable=libdir infiniccl)"
INFINIRT_CPU_DEVICES=4 "$scratch/pc-infiniccl-consumer"

echo "== examples/ built on its own against the install (docs/install.md)"
"$cmake" -S "$examples_src" -B "$scratch/examples" -DCMAKE_PREFIX_PATH="$prefix" \
  -DCMAKE_CXX_COMPILER="$cxx" -DCMAKE_CXX_FLAGS="$sanitize_flags" \
  -DCMAKE_EXE_LINKER_FLAGS="$sanitize_flags" >/dev/null
"$cmake" --build "$scratch/examples" >/dev/null
"$scratch/examples/streams_and_events"
"$scratch/examples/graph_capture"
"$scratch/examples/cxx_runtime"   # find_package(InfiniRT) -> InfiniRT::runtime
"$scratch/examples/infiniop_swiglu"  # find_package(InfiniRT) -> InfiniRT::infiniop
"$scratch/examples/allreduce"        # find_package(InfiniRT) -> InfiniRT::infiniccl, 4 CPU devices
