"""The Python package's tests run against the installed wheel only (scripts/test-python.sh
installs it into a fresh virtual environment): nothing of the source tree is imported."""

import os
import subprocess
import sys

import pytest

# Two CPU devices, for the tests of device switching and peer copies. Set before the package
# loads the runtime.
os.environ.setdefault("INFINIRT_CPU_DEVICES", "2")

import infinirt  # noqa: E402


def run_python(code: str, env=None, timeout: float = 120) -> subprocess.CompletedProcess:
    """Runs ``code`` in a new interpreter of this environment; its output and exit status."""
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([sys.executable, "-c", code], capture_output=True, text=True,
                          env=full_env, timeout=timeout)


@pytest.fixture
def stream():
    s = infinirt.Stream()
    yield s
    s.synchronize()


@pytest.fixture
def python():
    return run_python
