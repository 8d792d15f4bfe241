"""The operators' call path from Python: operator descriptors cached by layout (reused for equal
layouts only, bounded, the same results as without the cache), and tensors kept alive until their
queued work is done without a Python function running on the stream's thread."""

import gc
import subprocess
import sys
import threading
import tracemalloc

import numpy as np
import pytest

import infinirt
from infinirt import ops


@pytest.fixture(autouse=True)
def empty_cache():
    ops.clear_cache()
    yield
    ops.clear_cache()


def test_a_descriptor_is_reused_for_equal_layouts_only():
    a, b = np.ones((8, 16), np.float32), np.full((8, 16), 2.0, np.float32)
    c = np.empty_like(a)
    ops.add(c, a, b)
    ops.add(np.empty_like(a), a.copy(), b.copy())  # other arrays, the same layout
    assert ops.cache_info()["entries"] == 1
    ops.add(c[:, ::2], a[:, ::2], b[:, ::2])  # other strides
    assert ops.cache_info()["entries"] == 2
    ops.add(c.astype(np.float64), a.astype(np.float64), b.astype(np.float64))  # another dtype
    assert ops.cache_info()["entries"] == 3
    ops.rms_norm(c, a, np.ones(16, np.float32), 1e-6)
    ops.rms_norm(c, a, np.ones(16, np.float32), 1e-5)  # another Create scalar
    assert ops.cache_info()["entries"] == 5
    infinirt.synchronize()


def test_results_are_the_same_with_and_without_the_cache():
    rng = np.random.default_rng(5)
    x = rng.standard_normal((33, 40)).astype(np.float32)
    w = rng.standard_normal(40).astype(np.float32)
    cached, fresh = np.empty_like(x), np.empty_like(x)
    ops.rms_norm(cached, x, w, 1e-6)
    ops.rms_norm(cached, x, w, 1e-6)  # from the cache
    infinirt.synchronize()
    ops.clear_cache()
    ops.rms_norm(fresh, x, w, 1e-6)
    infinirt.synchronize()
    np.testing.assert_array_equal(cached, fresh)


def test_the_cache_is_bounded_and_evicts_the_least_recently_used(monkeypatch):
    monkeypatch.setattr(ops, "CACHE_SIZE", 4)
    for n in range(1, 11):
        x = np.ones(n, np.float32)
        ops.relu(np.empty_like(x), x)
        assert ops.cache_info()["entries"] == min(n, 4)
    infinirt.synchronize()


def test_many_shapes_do_not_leak():
    def shapes(count):
        for n in range(count):
            x = np.ones(1 + n % 300, np.float32)
            ops.sigmoid(np.empty_like(x), x)
        infinirt.synchronize()

    # Traced from the start, so that what the cache replaces counts as freed; the second round
    # of calls must end where the first did.
    tracemalloc.start()
    shapes(20000)
    gc.collect()
    before = tracemalloc.take_snapshot()
    shapes(20000)
    gc.collect()
    after = tracemalloc.take_snapshot()
    tracemalloc.stop()
    grown = sum(stat.size_diff for stat in after.compare_to(before, "filename"))
    assert grown < 64 * 1024, f"{grown} bytes more after 20,000 calls"
    assert ops.cache_info()["entries"] <= ops.CACHE_SIZE


def test_inputs_dropped_while_their_work_is_queued_are_kept_until_it_ran():
    stream = infinirt.Stream()
    gate = threading.Event()
    stream.launch_host_func(lambda: gate.wait(30))  # the stream is busy until the gate opens
    n = 1 << 20
    out = np.zeros(n, np.float32)
    a, b = np.full(n, 1.5, np.float32), np.full(n, 2.0, np.float32)
    ops.mul(out, a, b, stream=stream)
    del a, b
    gc.collect()
    scribble = [np.full(n, 7.0, np.float32) for _ in range(8)]  # may take the freed memory
    gate.set()
    stream.synchronize()
    assert np.all(out == 3.0)
    del scribble


def test_operators_from_several_threads_each_get_their_own_descriptors():
    errors = []

    def work(seed):
        try:
            rng = np.random.default_rng(seed)
            for _ in range(200):
                x = rng.standard_normal((4, 64)).astype(np.float32)
                y = np.empty_like(x)
                ops.silu(y, x)
                infinirt.synchronize()
                np.testing.assert_allclose(y, x / (1 + np.exp(-x)), rtol=1e-5, atol=1e-6)
        except Exception as error:  # reported by the main thread
            errors.append(error)

    threads = [threading.Thread(target=work, args=(seed,)) for seed in range(3)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert not errors, errors


def test_exit_with_work_queued_is_clean():
    program = (
        "import numpy as np, infinirt\n"
        "from infinirt import ops\n"
        "s = infinirt.Stream()\n"
        "x = np.ones(1 << 22, np.float32)\n"
        "for _ in range(20):\n"
        "    ops.gelu(np.empty_like(x), x, stream=s)\n"
        "print('queued')\n")
    done = subprocess.run([sys.executable, "-c", program], capture_output=True, text=True,
                          timeout=120)
    assert done.returncode == 0, done.stderr
    assert done.stdout.strip() == "queued"
    assert done.stderr == ""


def test_a_captured_operator_replays_with_its_tensors_kept_by_the_graph():
    stream = infinirt.Stream()
    n = 4096
    out = np.zeros(n, np.float32)
    a, b = np.full(n, 3.0, np.float32), np.full(n, 0.5, np.float32)
    with stream.capture() as graph:
        ops.mul(out, a, b, stream=stream)
    del a, b  # the graph keeps them
    gc.collect()
    ops.clear_cache()
    for _ in range(3):
        out[:] = 0
        graph.launch(stream)
        stream.synchronize()
        assert np.all(out == 1.5)
    graph.close()
