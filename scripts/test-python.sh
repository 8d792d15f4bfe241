#!/usr/bin/env bash
# The Python package's tests: builds the wheel once from an existing build tree (scripts/test.sh's,
# with scripts/build-wheel.sh: `pip wheel .` reusing the libraries already built there, then
# auditwheel repair, which carries spdlog, fmt and the other libraries it needs inside), installs it
# into a fresh virtual environment with nothing else of the project on the paths, and runs
# python/tests there with pytest; then the same with every other CPython 3.9+ here.
#   scripts/test-python.sh [build-dir]     (default: build)
# Needs PyPI (scikit-build-core, auditwheel, pytest, NumPy, and PyTorch for the first environment:
# python/tests/test_torch.py; INFINIRT_TEST_TORCH=0 leaves it out, and those tests are skipped).
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

# Runs the suite with interpreter $1 in a fresh environment holding the wheel alone (and what the
# tests use), away from the source tree.
run_suite() {
  local interpreter=$1 venv=$2
  rm -rf "$venv"
  "$interpreter" -m venv "$venv" &&
    "$venv/bin/pip" install -q "$wheel" pytest numpy &&
    if [ "${INFINIRT_TEST_TORCH:-1}" = 1 ] && [ "$venv" = "$work/venv" ]; then
      "$venv/bin/pip" install -q torch
    fi &&
    (cd "$work" && env -u LD_LIBRARY_PATH -u INFINIRT_PLUGIN_PATH -u PYTHONPATH \
      INFINIRT_TEST_WHEEL="$wheel" INFINIRT_TEST_SOURCE="$root" \
      "$venv/bin/python" -m pytest -q -p no:cacheprovider "$root/python/tests")
}

status=0
step "running python/tests against $(basename "$wheel") ($("$python" --version))"
run_suite "$python" "$work/venv" || status=$?

# Every other CPython here, 3.9 and later (on PATH, and pyenv's), runs the same suite on the same
# wheel: it carries no Python ABI.
# Each interpreter once, by the real path of its executable (pyenv's shims are scripts); older
# ones than 3.9 print nothing.
executable() {
  "$1" -c 'import os, sys; print(os.path.realpath(sys.executable) if sys.version_info >= (3, 9) else "")' \
    2>/dev/null || true
}
others=$( (which -a python3 2>/dev/null; ls -d "${PYENV_ROOT:-$HOME/.pyenv}"/versions/*/bin/python3 2>/dev/null) |
  while read -r candidate; do executable "$candidate"; done | grep . | sort -u)
for other in $others; do
  [ "$other" = "$(executable "$python")" ] && continue
  step "running python/tests on $other ($("$other" --version 2>&1))"
  if ! run_suite "$other" "$work/venv-other"; then
    echo "test-python: the wheel fails on $other" >&2
    status=1
  fi
done
exit "$status"
