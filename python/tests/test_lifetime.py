"""Objects dropped in any order, in threads, at interpreter exit and after finalize: no crash, no
leak, no hang."""

import gc
import random
import threading

import infinirt


def rss_bytes():
    with open("/proc/self/statm") as statm:
        pages = int(statm.read().split()[1])
    import resource

    return pages * resource.getpagesize()


def test_objects_dropped_in_any_order():
    rng = random.Random(7)
    for _ in range(50):
        stream = infinirt.Stream()
        objects = [stream, infinirt.Event(), infinirt.Buffer(4096), infinirt.Buffer(64, pinned_host=True)]
        objects[2].fill(1, stream=stream)
        objects[1].record(stream)
        rng.shuffle(objects)
        while objects:
            objects.pop()
            gc.collect(0)


def test_objects_made_and_dropped_in_threads():
    failures = []

    def work():
        try:
            for _ in range(200):
                stream = infinirt.Stream()
                buffer = infinirt.Buffer(256)
                buffer.fill(3, stream=stream)
                del stream  # before the buffer, with the fill maybe still queued
                out = bytearray(256)
                buffer.copy_to(out)
                assert out == bytearray([3] * 256)
        except BaseException as error:  # reported to the main thread
            failures.append(error)

    threads = [threading.Thread(target=work) for _ in range(4)]
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    assert failures == []


def test_no_leak_across_100000_allocate_and_drop_cycles():
    for _ in range(2000):  # warm up the allocators
        infinirt.Buffer(256)
    gc.collect()
    before = rss_bytes()
    for _ in range(100_000):
        infinirt.Buffer(256)
    gc.collect()
    grown = rss_bytes() - before
    assert grown < 8 << 20, f"RSS grew by {grown} bytes"


def test_the_last_reference_dropped_inside_a_host_function(stream):
    # Freeing waits for the device's queued work, which includes the host function running:
    # the free is deferred to a later call outside it instead of deadlocking.
    holder = {"buffer": infinirt.Buffer(1024)}
    stream.launch_host_func(lambda: holder.pop("buffer"))
    stream.synchronize()
    assert holder == {}
    infinirt.Buffer(8)  # runs the deferred free


def test_exit_with_queued_host_functions_and_live_objects(python):
    result = python(
        "import infinirt, time\n"
        "s = infinirt.Stream()\n"
        "b = infinirt.Buffer(1 << 20)\n"
        "e = infinirt.Event()\n"
        "for i in range(100):\n"
        "    s.launch_host_func(lambda i=i: time.sleep(0.001))\n"
        "b.fill(1, stream=s)\n"
        "e.record(s)\n"
        "s.launch_host_func(lambda: print('last host function ran', flush=True))\n"
    )
    assert result.returncode == 0, result.stderr
    assert "last host function ran" in result.stdout
    assert result.stderr == ""


def test_finalize_while_objects_are_alive(python):
    result = python(
        "import infinirt\n"
        "s = infinirt.Stream(); e = infinirt.Event(); b = infinirt.Buffer(64)\n"
        "with s.capture() as g:\n"
        "    b.fill(1, stream=s)\n"
        "infinirt.finalize()\n"
        "for name, call in [('copy', lambda: b.copy_from(b'x')), ('fill', lambda: b.fill(0)),\n"
        "                   ('ptr', lambda: b.ptr), ('graph', lambda: g.launch()),\n"
        "                   ('query', s.query), ('event', e.query)]:\n"
        "    try:\n"
        "        call()\n"
        "        print(name, 'no error')\n"
        "    except infinirt.Error as error:\n"
        "        print(name, 'Error')\n"
        "fresh = infinirt.Buffer(8); fresh.fill(2)\n"  # InfiniRT starts again
        "print('fresh buffer works')\n"
        "del s, e, b, g\n"
    )
    assert result.returncode == 0, result.stderr
    for name in ("copy", "fill", "ptr", "graph", "query", "event"):
        assert f"{name} Error" in result.stdout, result.stdout
    assert "fresh buffer works" in result.stdout
