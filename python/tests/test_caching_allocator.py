"""Device Buffers come from the caching allocator: its statistics and cache (memory_stats,
empty_cache, ...), reuse in stream order, streams recorded by the calls that use a Buffer, graph
capture keeping its memory, and the allocator's state across finalize."""

import threading

import numpy as np
import pytest

import infinirt
from infinirt import ccl

LARGE = 4 << 20  # a segment of its own: the addresses below are predictable


@pytest.fixture(autouse=True)
def empty():
    infinirt.synchronize()
    infinirt.empty_cache()
    yield


def held(stream):
    """Holds ``stream`` with a host function until the returned event is set."""
    gate = threading.Event()
    stream.launch_host_func(lambda: gate.wait(30))
    return gate


def test_a_buffer_is_counted_while_alive_and_its_memory_cached_after():
    before = infinirt.memory_stats()
    buffer = infinirt.Buffer(1000)
    during = infinirt.memory_stats()
    assert during["allocated_bytes.current"] - before["allocated_bytes.current"] == 1024
    assert during["requested_bytes.current"] - before["requested_bytes.current"] == 1000
    assert during["allocations.current"] - before["allocations.current"] == 1
    assert infinirt.memory_allocated() == during["allocated_bytes.current"]
    address = buffer.ptr
    buffer.close()
    assert infinirt.memory_allocated() == before["allocated_bytes.current"]
    assert infinirt.memory_reserved() > 0  # cached, not given back
    again = infinirt.Buffer(1000)
    assert again.ptr == address  # the same stream takes it back at once
    assert infinirt.memory_stats()["cache_hits"] > during["cache_hits"]


def test_empty_cache_and_peaks():
    infinirt.reset_peak_memory_stats()
    base = infinirt.memory_allocated()
    first, second = infinirt.Buffer(LARGE), infinirt.Buffer(LARGE)
    assert infinirt.max_memory_allocated() == base + 2 * LARGE
    reserved = infinirt.memory_reserved()
    first.close()
    infinirt.empty_cache()
    assert infinirt.memory_reserved() == reserved - LARGE
    assert infinirt.max_memory_reserved() >= reserved
    infinirt.reset_peak_memory_stats()
    assert infinirt.max_memory_allocated() == base + LARGE
    del second
    # Each device has its own allocator.
    on_1 = infinirt.Buffer(LARGE, device=1)
    assert infinirt.memory_allocated(1) >= LARGE
    assert infinirt.memory_allocated(infinirt.Device(1)) == infinirt.memory_allocated(1)
    del on_1


def test_a_collected_buffer_goes_back_to_the_cache():
    before = infinirt.memory_allocated()
    buffer = infinirt.Buffer(LARGE)
    address = buffer.ptr
    del buffer
    assert infinirt.memory_allocated() == before
    assert infinirt.Buffer(LARGE).ptr == address


def test_a_stream_that_used_a_buffer_passes_its_work_before_the_memory_is_reused():
    stream = infinirt.Stream(infinirt.Stream.NON_BLOCKING)
    gate = held(stream)
    buffer = infinirt.Buffer(LARGE)  # for the default stream
    address = buffer.ptr
    buffer.fill(1, stream=stream)  # queued behind the gate: the stream is recorded
    buffer.close()
    stats = infinirt.memory_stats()
    assert stats["active_bytes.current"] - stats["allocated_bytes.current"] == LARGE
    meanwhile = infinirt.Buffer(LARGE)
    assert meanwhile.ptr != address, "reused while the stream could still write it"
    gate.set()
    stream.synchronize()
    assert infinirt.Buffer(LARGE).ptr == address


def test_record_stream_for_work_of_other_libraries():
    stream = infinirt.Stream(infinirt.Stream.NON_BLOCKING)
    gate = held(stream)
    buffer = infinirt.Buffer(LARGE)
    address = buffer.ptr
    buffer.record_stream(stream)
    del buffer
    meanwhile = infinirt.Buffer(LARGE)
    assert meanwhile.ptr != address
    gate.set()
    stream.synchronize()
    with pytest.raises(TypeError, match="a stream is a Stream or None"):
        infinirt.Buffer(8).record_stream("stream")


def test_a_buffer_is_allocated_for_the_current_stream_and_freed_into_it():
    stream = infinirt.Stream(infinirt.Stream.NON_BLOCKING)
    other = infinirt.Stream(infinirt.Stream.NON_BLOCKING)
    gate = held(stream)
    with stream:
        buffer = infinirt.Buffer(LARGE)
    address = buffer.ptr
    buffer.close()
    # Another stream takes it only once `stream` has passed the free.
    meanwhile = infinirt.Buffer(LARGE, stream=other)
    assert meanwhile.ptr != address
    gate.set()
    stream.close()  # waits for the stream's work: its blocks may then serve any stream
    assert infinirt.Buffer(LARGE, stream=other).ptr == address


def test_a_collective_records_its_stream_on_buffers_and_on_tensors_of_buffers():
    comms = ccl.init_all([0, 1])
    streams = [infinirt.Stream(infinirt.Stream.NON_BLOCKING, device=d)
               for d in (0, 1)]
    buffers = [infinirt.Buffer(LARGE, device=d) for d in (0, 1)]
    # (Exporting waits for the device's work: before the streams are held.)
    tensors = [infinirt.from_dlpack(buffers[0]), buffers[1]]
    gates = [held(s) for s in streams]
    with ccl.group():
        for comm, data, stream in zip(comms, tensors, streams):
            comm.all_reduce(data, dtype="float32", stream=stream)
    del tensors
    for device, buffer in enumerate(buffers):
        buffer.close()
        stats = infinirt.memory_stats(device)
        assert stats["active_bytes.current"] - stats["allocated_bytes.current"] == LARGE
    for gate in gates:  # both ranks at once: each one's all-reduce waits for the other's
        gate.set()
    for stream in streams:
        stream.synchronize()
    for comm in comms:
        comm.destroy()


def test_memory_allocated_during_capture_stays_the_graphs_until_it_is_closed():
    stream = infinirt.Stream()
    with stream.capture() as graph:
        scratch = infinirt.Buffer(LARGE, stream=stream)
        scratch.fill(3, stream=stream)
        address = scratch.ptr
        scratch.close()  # the graph's replays still write it
    meanwhile = infinirt.Buffer(LARGE, stream=stream)
    assert meanwhile.ptr != address
    graph.launch(stream)
    stream.synchronize()
    graph.close()
    assert infinirt.Buffer(LARGE, stream=stream).ptr == address


def test_zero_bytes_allocate_nothing():
    before = infinirt.memory_stats()["allocations.allocated"]
    buffer = infinirt.Buffer(0)
    assert buffer.ptr == 0
    buffer.close()
    assert infinirt.memory_stats()["allocations.allocated"] == before


def test_bad_input():
    with pytest.raises(infinirt.errors.InvalidDeviceError):
        infinirt.memory_stats(99)
    with pytest.raises(infinirt.errors.InvalidDeviceError):
        infinirt.empty_cache(-1)
    with pytest.raises(TypeError, match="a device is an ordinal or a Device"):
        infinirt.memory_allocated("cpu")
    with pytest.raises(TypeError, match="a stream is a Stream or None"):
        infinirt.Buffer(8, stream=3)
    on_0 = infinirt.Stream(device=0)
    with pytest.raises(ValueError, match="the stream is on device 0, the buffer on device 1"):
        infinirt.Buffer(8, device=1, stream=on_0)
    closed = infinirt.Stream()
    closed.close()
    with pytest.raises(ValueError, match="closed"):
        infinirt.Buffer(8, stream=closed)
    # A Buffer for a stream goes on the stream's device.
    on_1 = infinirt.Stream(device=1)
    assert infinirt.Buffer(8, stream=on_1).device.ordinal == 1


def test_finalize_gives_the_cache_back_and_buffers_alive_refuse_use():
    alive = infinirt.Buffer(LARGE)
    infinirt.Buffer(LARGE).close()
    assert infinirt.memory_reserved() >= 2 * LARGE
    infinirt.finalize()
    assert infinirt.memory_stats()["reserved_bytes.current"] == 0
    assert infinirt.memory_allocated() == 0
    with pytest.raises(infinirt.Error, match="finalised"):
        alive.fill(0)
    del alive  # nothing to free any more: no error, no crash
    fresh = infinirt.Buffer(64)
    fresh.copy_from(np.arange(16, dtype=np.float32))
    out = np.empty(16, dtype=np.float32)
    fresh.copy_to(out)
    assert (out == np.arange(16)).all()
