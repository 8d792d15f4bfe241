#!/usr/bin/env bash
# The Python package's tests: builds the wheel once from an existing build tree (scripts/test.sh's,
# with scripts/build-wheel.sh: `pip wheel .` reusing the libraries already built there, then
# auditwheel repair, which carries spdlog, fmt and the other libraries it needs inside), installs it
# into a fresh virtual environment with nothing else of the project on the paths, and runs
# python/tests there with pytest. Then installs it into every other CPython here and imports it.
#   scripts/test-python.sh [build-dir]     (default: build)
# Needs PyPI (scikit-build-core, auditwheel, pytest, NumPy).
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD
build_dir=$(realpath -m "${1:-build}")
work=$build_dir/python-wheel
python=/usr/bin/python3
[ -x "$python" ] || python=$(command -v python3)

step() { echo "test-python: $*"; }

# The wheel, from the build tree (its configuration and objects: nothing is recompiled).
step "building and repairing the wheel from $build_dir"
wheel=$(bash scripts/build-wheel.sh --build-dir "$build_dir" --out "$work/wheelhouse")

# A fresh environment with the wheel alone (and what the tests use), away from the source tree.
venv=$work/venv
rm -rf "$venv"
"$python" -m venv "$venv"
"$venv/bin/pip" install -q "$wheel" pytest numpy
step "running python/tests against $(basename "$wheel")"
status=0
(cd "$work" && env -u LD_LIBRARY_PATH -u INFINIRT_PLUGIN_PATH -u PYTHONPATH \
  INFINIRT_TEST_WHEEL="$wheel" INFINIRT_TEST_SOURCE="$root" \
  "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests") || status=$?

# Every other CPython here installs and imports the same wheel.
for other in $(which -a python3 2>/dev/null | sort -u); do
  [ "$(realpath "$other")" = "$(realpath "$python")" ] && continue
  version=$("$other" -c 'import sys; print("%d.%d" % sys.version_info[:2])')
  step "installing into $other (CPython $version)"
  rm -rf "$work/venv-other"
  if "$other" -m venv "$work/venv-other" &&
     "$work/venv-other/bin/pip" install -q --no-deps "$wheel" &&
     (cd "$work" && env -u LD_LIBRARY_PATH -u PYTHONPATH "$work/venv-other/bin/python" -c \
       'import infinirt; d = infinirt.devices(); print("imported", infinirt.__version__, len(d), "devices")'); then
    :
  else
    echo "test-python: the wheel does not install or import on $other" >&2
    status=1
  fi
done
exit "$status"
