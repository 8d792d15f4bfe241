"""Streams, events, host functions in stream order, and graph capture."""

import threading
import time

import pytest

import infinirt


def hold(stream):
    """Blocks ``stream`` until the returned event is set."""
    gate = threading.Event()
    stream.launch_host_func(lambda: gate.wait(10))
    return gate


def test_query_and_synchronize(stream):
    assert stream.query()
    gate = hold(stream)
    assert not stream.query()
    gate.set()
    stream.synchronize()
    assert stream.query()


def test_host_functions_written_in_python_run_in_stream_order(stream):
    order = []
    buffer = infinirt.Buffer(4)
    buffer.fill(0)
    for i in range(20):
        stream.launch_host_func(lambda i=i: order.append(i))
    buffer.fill(9, stream=stream)
    seen = bytearray(4)
    buffer.copy_to(seen, stream=stream)
    stream.launch_host_func(lambda: order.append(bytes(seen)))  # after the copy, in order
    stream.synchronize()
    assert order == list(range(20)) + [bytes([9] * 4)]


def test_a_host_function_may_not_call_infinirt(stream):
    failures = []

    def calls_infinirt():
        try:
            infinirt.Buffer(4).fill(0)
        except infinirt.Error as error:
            failures.append(error)

    stream.launch_host_func(calls_infinirt)
    stream.synchronize()
    assert len(failures) == 1 and isinstance(failures[0], infinirt.errors.NotPermittedError)


def test_a_host_function_that_raises_is_reported_and_the_stream_goes_on(stream, capfd):
    ran = []

    def fails():
        raise KeyError("on purpose")

    stream.launch_host_func(fails)
    stream.launch_host_func(lambda: ran.append(True))
    stream.synchronize()
    assert ran == [True]
    assert "KeyError" in capfd.readouterr().err


def test_launch_host_func_takes_a_callable(stream):
    with pytest.raises(TypeError):
        stream.launch_host_func(42)


def test_events_order_streams_and_time_work():
    producer, consumer = infinirt.Stream(), infinirt.Stream()
    gate = hold(producer)
    ready = producer.record_event()
    consumer.wait_event(ready)
    ran = []
    consumer.launch_host_func(lambda: ran.append(True))
    time.sleep(0.05)
    assert not ready.query() and not consumer.query() and ran == []
    gate.set()
    consumer.synchronize()
    assert ran == [True] and ready.query()

    start, end = infinirt.Event(), infinirt.Event()
    start.record(producer)
    producer.launch_host_func(lambda: time.sleep(0.02))
    end.record(producer)
    end.synchronize()
    assert 15.0 <= start.elapsed_time(end) < 5000.0


def test_wait_event_takes_an_event(stream):
    with pytest.raises(TypeError):
        stream.wait_event(stream)


def test_a_stream_made_current_is_the_default_of_event_record():
    stream = infinirt.Stream()
    assert infinirt.current_stream() is None
    with stream:
        assert infinirt.current_stream() is stream
        gate = hold(stream)
        event = infinirt.Event()
        event.record()  # on `stream`: not complete while it is held
        assert not event.query()
        gate.set()
        event.synchronize()
    assert infinirt.current_stream() is None


def test_flags_are_checked():
    with pytest.raises(ValueError):
        infinirt.Stream(flags=-1)
    with pytest.raises(infinirt.errors.InvalidValueError):
        infinirt.Stream(flags=0x100)
    with pytest.raises(infinirt.errors.InvalidValueError):
        infinirt.Event(flags=0x100)
    assert infinirt.Stream(flags=1).query()


def test_a_closed_stream_is_refused_not_crashed_on(stream):
    closed = infinirt.Stream()
    closed.close()
    closed.close()  # twice is fine
    with pytest.raises(ValueError, match="closed"):
        infinirt.Buffer(8).fill(0, stream=closed)
    for call in (closed.query, closed.synchronize, lambda: closed.launch_host_func(print),
                 lambda: infinirt.Event().record(closed), closed.is_capturing):
        with pytest.raises(ValueError, match="closed"):
            call()


def test_capture_and_replay(stream):
    buffer = infinirt.Buffer(64)
    buffer.fill(0)
    runs = []
    with stream.capture() as graph:
        buffer.fill(5, stream=stream)
        stream.launch_host_func(lambda: runs.append(len(runs)))
    assert not stream.is_capturing()
    assert runs == []  # captured, not run
    out = bytearray(64)
    for _ in range(3):
        graph.launch(stream)
    stream.synchronize()
    buffer.copy_to(out)
    assert out == bytearray([5] * 64)
    assert runs == [0, 1, 2]  # the Python host function runs at each launch
    graph.close()


def test_a_copy_from_host_memory_captured_reads_it_at_each_launch(stream):
    source = bytearray(b"a" * 16)
    buffer = infinirt.Buffer(16)
    with stream.capture() as graph:
        buffer.copy_from(source, stream=stream)
    source[:] = b"b" * 16
    graph.launch(stream)
    stream.synchronize()
    out = bytearray(16)
    buffer.copy_to(out)
    assert out == bytearray(b"b" * 16)


def test_a_failing_block_ends_the_capture_and_raises_its_own_exception(stream):
    with pytest.raises(ZeroDivisionError):
        with stream.capture():
            1 / 0
    assert not stream.is_capturing()
    with pytest.raises(ValueError):
        stream.capture(mode="sometimes")


def test_synchronising_inside_a_capture_is_an_error_the_capture_reports(stream):
    with pytest.raises(infinirt.Error):
        with stream.capture():
            stream.synchronize()
    assert not stream.is_capturing()
