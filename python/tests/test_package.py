"""The installed wheel: where it is, what it holds, its tools, and building C++ against it."""

import glob
import json
import os
import subprocess
import sys
import sysconfig
import textwrap

import pytest

import infinirt
from infinirt._library import LIB_DIR, PACKAGE_DIR, PLUGINS


def test_the_package_is_the_installed_one_not_the_source_tree():
    site = sysconfig.get_paths()["purelib"]
    assert os.path.realpath(PACKAGE_DIR).startswith(os.path.realpath(site)), PACKAGE_DIR
    assert "LD_LIBRARY_PATH" not in os.environ
    assert "INFINIRT_PLUGIN_PATH" not in os.environ


def wheel_plugins():
    return sorted(
        os.path.basename(p)[len("libinfinirt_"):-len(".so")]
        for p in glob.glob(os.path.join(LIB_DIR, "infinirt", "libinfinirt_*.so"))
    )


def test_the_wheel_holds_the_core_every_plugin_and_the_other_libraries():
    for library in ("libinfinirt.so", "libinfiniop.so", "libinfiniccl.so", "libinfinirt_runtime.so"):
        assert os.path.isfile(os.path.join(LIB_DIR, library)), library
    # Every plugin of the vendor table (config/vendors.json), as the generated _c_api lists them.
    assert "cpu" in PLUGINS and len(PLUGINS) > 1
    assert set(wheel_plugins()) >= set(PLUGINS)
    for header in ("infinirt.h", "infiniccl.h", "infiniop.h"):
        assert os.path.isfile(os.path.join(PACKAGE_DIR, "include", header)), header
    assert os.path.isfile(os.path.join(LIB_DIR, "cmake", "InfiniRT", "InfiniRTConfig.cmake"))
    assert os.path.isfile(os.path.join(PACKAGE_DIR, "py.typed"))
    # One file per library: no versioned copies (two copies of the core are two runtimes).
    assert not glob.glob(os.path.join(LIB_DIR, "libinfinirt.so.*"))


def test_the_plugins_load_from_inside_the_wheel():
    cpu = next(b for b in infinirt.backends() if b.name == "cpu")
    assert cpu.loaded and cpu.device_count >= 1
    assert os.path.realpath(cpu.path).startswith(os.path.realpath(LIB_DIR)), cpu.path


def test_the_plugin_path_variable_still_overrides(python, tmp_path):
    result = python(
        "import infinirt; print([(b.name, b.status) for b in infinirt.backends() if b.name == 'cpu'])",
        env={"INFINIRT_PLUGIN_PATH": str(tmp_path)},
    )
    assert result.returncode == 0, result.stderr
    assert "('cpu', 'NotFound')" in result.stdout


def test_python_m_infinirt_info_lists_every_plugin_of_the_wheel():
    result = subprocess.run([sys.executable, "-m", "infinirt", "info", "--json"],
                            capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    listing = json.loads(result.stdout)
    listed = {backend["name"] for backend in listing["backends"]}
    assert set(wheel_plugins()) <= listed, (wheel_plugins(), listed)
    text = subprocess.run([sys.executable, "-m", "infinirt", "info"], capture_output=True,
                          text=True, timeout=60)
    assert text.returncode == 0 and "cpu" in text.stdout


def test_the_infinirt_info_console_script_runs():
    script = os.path.join(os.path.dirname(sys.executable), "infinirt-info")
    assert os.path.isfile(script)
    result = subprocess.run([script], capture_output=True, text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    assert "cpu" in result.stdout


def test_the_infinirt_selftest_console_script_runs_on_the_cpu_backend(tmp_path):
    assert os.path.isfile(os.path.join(PACKAGE_DIR, "bin", "infinirt-selftest"))
    script = os.path.join(os.path.dirname(sys.executable), "infinirt-selftest")
    assert os.path.isfile(script)
    report = tmp_path / "report.json"
    result = subprocess.run([script, "--backend", "cpu", "--area", "devices", "--area", "memory",
                             "--json", str(report)], capture_output=True, text=True, timeout=300)
    assert result.returncode == 0, result.stdout + result.stderr
    assert "Results (passed/total)" in result.stdout
    backends = json.loads(report.read_text())["backends"]
    assert [backend["name"] for backend in backends] == ["cpu"]
    assert backends[0]["areas"]["devices"]["total"] > 0
    assert backends[0]["areas"]["devices"]["failed"] == 0
    listing = subprocess.run([sys.executable, "-m", "infinirt", "selftest", "--list"],
                             capture_output=True, text=True, timeout=60)
    assert listing.returncode == 0 and "cross-backend:" in listing.stdout


@pytest.mark.parametrize("flag,expected", [
    ("--cmake-dir", os.path.join("lib", "cmake", "InfiniRT")),
    ("--include-dir", "include"),
    ("--lib-dir", "lib"),
])
def test_python_m_infinirt_prints_the_paths(flag, expected):
    result = subprocess.run([sys.executable, "-m", "infinirt", flag], capture_output=True,
                            text=True, timeout=60)
    assert result.returncode == 0, result.stderr
    path = result.stdout.strip()
    assert path.endswith(expected) and os.path.isdir(path), path


def test_python_m_infinirt_version():
    result = subprocess.run([sys.executable, "-m", "infinirt", "--version"], capture_output=True,
                            text=True, timeout=60)
    assert result.stdout.strip() == infinirt.__version__


def test_the_wheel_serves_every_cpython_from_3_9():
    distribution = glob.glob(os.path.join(os.path.dirname(PACKAGE_DIR), "infinirt-*.dist-info"))
    assert len(distribution) == 1
    with open(os.path.join(distribution[0], "WHEEL")) as wheel:
        tags = [line.split(":", 1)[1].strip() for line in wheel if line.startswith("Tag:")]
    assert tags and all(tag.startswith("py3-none-manylinux") for tag in tags), tags
    with open(os.path.join(distribution[0], "METADATA")) as metadata:
        assert "Requires-Python: >=3.9" in metadata.read()


def test_a_cpp_program_builds_against_the_wheels_cmake_package(tmp_path):
    source = tmp_path / "src"
    source.mkdir()
    (source / "CMakeLists.txt").write_text(textwrap.dedent("""\
        cmake_minimum_required(VERSION 3.20)
        project(consumer LANGUAGES CXX)
        find_package(InfiniRT REQUIRED)
        add_executable(consumer main.cc)
        target_link_libraries(consumer PRIVATE InfiniRT::infinirt)
        """))
    (source / "main.cc").write_text(textwrap.dedent("""\
        #include <infinirt.h>
        #include <cstdio>
        #include <cstring>
        int main() {
          char in[] = "through the wheel", out[sizeof in] = "";
          void* device = nullptr;
          if (infinirtMalloc(&device, sizeof in) != infinirtSuccess) return 1;
          infinirtMemcpy(device, in, sizeof in, infinirtMemcpyHostToDevice);
          infinirtMemcpy(out, device, sizeof in, infinirtMemcpyDeviceToHost);
          infinirtFree(device);
          std::printf("%s\\n", out);
          return std::strcmp(in, out) == 0 ? 0 : 2;
        }
        """))
    cmake_dir = subprocess.run([sys.executable, "-m", "infinirt", "--cmake-dir"],
                               capture_output=True, text=True, check=True).stdout.strip()
    build = tmp_path / "build"
    subprocess.run(["cmake", "-S", str(source), "-B", str(build), f"-DInfiniRT_DIR={cmake_dir}"],
                   check=True, capture_output=True, timeout=300)
    subprocess.run(["cmake", "--build", str(build)], check=True, capture_output=True, timeout=300)
    run = subprocess.run([str(build / "consumer")], capture_output=True, text=True, timeout=60)
    assert run.returncode == 0, run.stderr
    assert run.stdout.strip() == "through the wheel"


def test_the_readmes_python_example_runs(python):
    # The source tree is read here only for the README's text: the example runs on the wheel.
    source = os.environ.get("INFINIRT_TEST_SOURCE")
    assert source, "scripts/test-python.sh sets INFINIRT_TEST_SOURCE"
    with open(os.path.join(source, "README.md")) as readme:
        text = readme.read()
    example = text.split("```python\n", 1)[1].split("```", 1)[0]
    result = python(example)
    assert result.returncode == 0, result.stderr
    assert "copied" in result.stdout and "[0. 1. 2. 3.]" in result.stdout


def test_the_benchmark_runs_and_reports_every_row(tmp_path):
    # A smoke run of bench/python_bench.py against the wheel (its numbers are not checked here: a
    # benchmark reports them, docs/python.md quotes them).
    source = os.environ.get("INFINIRT_TEST_SOURCE")
    assert source, "scripts/test-python.sh sets INFINIRT_TEST_SOURCE"
    report = tmp_path / "bench.json"
    run = subprocess.run([sys.executable, os.path.join(source, "bench", "python_bench.py"),
                          "--quick", "--json", str(report)],
                         capture_output=True, text=True, timeout=300)
    assert run.returncode == 0, run.stderr
    rows = json.loads(report.read_text())["results"]
    assert [row["what"] for row in rows] == [
        "Stream.query() (idle)", "Event.query() (completed)", "Buffer.copy_from(ndarray) 64 MiB",
        "Buffer(1 MiB) made and dropped"]
    assert all(row["measured"] > 0 and row["floor"] > 0 for row in rows)
