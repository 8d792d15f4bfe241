#!/usr/bin/env bash
# docs/architecture.md's recipe "Adding a CUDA-family vendor", followed on a copy of the source
# tree: its tracked files copied into a scratch directory, a vendor added there with the three
# files the recipe names (its row of config/vendors.json, its spec, its emulated runtime), the
# public header's generated device type list refreshed (vendor_table --write), and CMake's
# configure step run on it (configuring only: nothing is built). Passes when exactly those files
# changed, the vendor table's checks pass on the copy, and the configured build has what the
# recipe says the build derives: the plugin and its emulated runtime, the vendor's tests, its
# place in the collective engine, the tools' and the Python package's lists.
#   add_vendor_recipe_test.sh <source root> <scratch dir> <cmake> <ctest> <vendor_table>
#                             <C compiler> <C++ compiler>
set -euo pipefail
source=$1 scratch=$2 cmake=$3 ctest=$4 vendor_table=$5 c_compiler=$6 cxx_compiler=$7
vendor=recipevendor  # a vendor no table has
VENDOR=RECIPEVENDOR
tree=$scratch/tree
build=$scratch/build

fail() {
  echo "recipe: $*" >&2
  exit 1
}
step() { echo "recipe: $*"; }

if ! git -C "$source" rev-parse --is-inside-work-tree >/dev/null 2>&1; then
  echo "recipe: $source is not a git work tree: its tracked files are unknown; skipped"
  exit 77
fi

# The tracked files as they are in the work tree (no build directory, nothing untracked), in a
# repository of their own, so that what the recipe changes is what `git status` lists.
copy_tracked_files() {
  rm -rf "$scratch"
  mkdir -p "$tree"
  (cd "$source" && git ls-files -z | tar --null --ignore-failed-read -T - -cf -) |
    tar -xf - -C "$tree"
  git -C "$tree" init -q
  git -C "$tree" add -A -f
  git -C "$tree" -c user.name=recipe -c user.email=recipe@localhost -c commit.gpgsign=false \
    commit -q -m copy
}

# 1. The vendor's row: a CUDA-family vendor with the next device type number, its runtime, its
# collectives through the NCCL engine, and one emulated runtime.
add_row() {
  cat >"$scratch/add_row.cmake" <<EOF
file(READ "$tree/config/vendors.json" table)
string(JSON rows LENGTH "\${table}" vendors)
string(JSON table SET "\${table}" vendors \${rows} [=[{
  "name": "$vendor",
  "device_type": {"enumerator": "$VENDOR", "value": 0, "display": "Recipe Vendor"},
  "family": "cuda_family",
  "operator_backend": false,
  "dlpack": "kDLExtDev",
  "runtime": {"env": "INFINIRT_${VENDOR}_RUNTIME", "candidates": ["librecipert.so"]},
  "collectives": {"engine": "nccl", "env": "INFINICCL_${VENDOR}_LIBRARY", "library": "RCCL",
                  "symbol_prefix": "rccl", "candidates": ["librecipeccl.so"]},
  "emulated": [{"variant": "$vendor", "library": "librecipert.so"}]
}]=])
string(JSON table SET "\${table}" vendors \${rows} device_type value \${rows})
file(WRITE "$tree/config/vendors.json" "\${table}\n")
EOF
  "$cmake" -P "$scratch/add_row.cmake"
}

# 2. Its spec: what distinguishes its runtime from CUDA's (plugins/moore/moore_spec.cc's shape).
add_spec() {
  mkdir -p "$tree/plugins/$vendor"
  cat >"$tree/plugins/$vendor/${vendor}_spec.cc" <<EOF
// A vendor of the recipe test (tests/tools/add_vendor_recipe_test.sh): recipe* names.
#include "cuda_family.h"

namespace infinirt::cuda_family {

const CudaFamilySpec& ThisVendor() {
  static const CudaFamilySpec spec = {
      "$vendor", INFINI_DEVICE_$VENDOR, "$vendor", "recipe", {{nullptr, nullptr}}, kCudaEnums,
      /*cuda_special_streams=*/false, /*cuda_error_numbers=*/false,
      /*attribute_numbers_verified=*/false, nullptr,
  };
  return spec;
}

}  // namespace infinirt::cuda_family
EOF
}

# 3. Its emulated runtime: the CUDA-shaped emulation under its prefix.
add_emulated_runtime() {
  mkdir -p "$tree/tests/emulated_runtimes/$vendor"
  cat >"$tree/tests/emulated_runtimes/$vendor/CMakeLists.txt" <<EOF
# The recipe test's vendor, emulated: recipe* names.
infinirt_add_emulated_cuda_family($vendor PREFIX recipe DEFINITIONS EMU_INSTANTIATE_ARGS=3)
EOF
}

expect_changed_files() {
  local changed expected
  changed=$(git -C "$tree" status --porcelain --untracked-files=all | cut -c4- | sort)
  expected=$(printf '%s\n' config/vendors.json include/infinicore.h \
    "plugins/$vendor/${vendor}_spec.cc" "tests/emulated_runtimes/$vendor/CMakeLists.txt" | sort)
  [ "$changed" = "$expected" ] || fail "the recipe changed other files than it says:
$changed"
  step "3 files written ($(echo "$changed" | grep -v infinicore.h | tr '\n' ' ')), 1 regenerated (include/infinicore.h)"
}

expect_in() {  # expect_in <file> <text> <what it shows>
  grep -qF -- "$2" "$1" || fail "$3: no '$2' in $1"
}

expect_configured() {
  local targets tests
  targets=$("$cmake" --build "$build" --target help)
  for target in "infinirt_$vendor" "emulated_$vendor"; do
    grep -qw "$target" <<<"$targets" || fail "no target $target"
  done
  tests=$(cd "$build" && "$ctest" --show-only=json-v1)
  for test in "conformance_${vendor}_emulated" "vendor_support_$vendor" \
    "vendor_cuda_family_$vendor" "cxx_runtime_${vendor}_emulated"; do
    grep -qF "\"name\" : \"$test\"" <<<"$tests" || fail "no test $test"
  done
  grep -qF "INFINIRT_${VENDOR}_RUNTIME=$build/emulated/$vendor/librecipert.so" <<<"$tests" ||
    fail "the NCCL engine's tests do not run the vendor"
  expect_in "$build/generated/infinirt_vendor_table.h" "X($vendor, $VENDOR, cuda_family, nccl" \
    "the C++ table (engines, Python)"
  expect_in "$build/plugins/common/vendor_runtimes_data.h" "\"INFINIRT_${VENDOR}_RUNTIME\"" \
    "the plugins' runtime candidates"
  expect_in "$build/plugins/cuda_family/infiniccl/nccl_libraries_data.h" \
    "INFINI_DEVICE_$VENDOR, \"$vendor\"" "the NCCL engine's libraries"
  expect_in "$build/tools/vendor_environment.h" "INFINIRT_${VENDOR}_RUNTIME" "infinirt-info --help"
}

step "copying the tracked files of $source"
copy_tracked_files
step "adding $vendor: its row, its spec, its emulated runtime"
add_row
add_spec
add_emulated_runtime
"$vendor_table" --write "$tree" >/dev/null
expect_changed_files
"$vendor_table" --check "$tree"
"$vendor_table" --single-source "$tree"
step "configuring (no build)"
"$cmake" -S "$tree" -B "$build" -DCMAKE_BUILD_TYPE=RelWithDebInfo -DINFINIRT_BUILD_TESTS=ON \
  -DINFINIRT_BUILD_BENCH=ON -DCMAKE_C_COMPILER="$c_compiler" \
  -DCMAKE_CXX_COMPILER="$cxx_compiler" >"$scratch/configure.log" 2>&1 ||
  fail "configuring failed: $(tail -n 30 "$scratch/configure.log")"
expect_configured
step "configured: plugin, emulated runtime, tests, collectives and lists derived for $vendor"
rm -rf "$scratch"
