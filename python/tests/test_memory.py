"""Buffers: device and pinned host memory, copies with every kind of host object, fills, and bad
input."""

import array

import numpy as np
import pytest

import infinirt


@pytest.mark.parametrize("pinned", [False, True])
def test_a_round_trip_through_a_buffer(pinned):
    data = bytes(range(256)) * 4
    buffer = infinirt.Buffer(len(data), pinned_host=pinned)
    assert buffer.nbytes == len(buffer) == 1024 and buffer.ptr != 0
    assert buffer.pinned_host is pinned
    buffer.copy_from(data)
    out = bytearray(len(data))
    buffer.copy_to(out)
    assert bytes(out) == data


def test_the_buffer_is_on_the_device_asked_for_or_the_current_one():
    assert infinirt.Buffer(8).device.ordinal == 0
    assert infinirt.Buffer(8, device=1).device.ordinal == 1
    assert infinirt.Buffer(8, device=infinirt.Device(1)).device.ordinal == 1
    with infinirt.Device(1):
        assert infinirt.Buffer(8).device.ordinal == 1
    assert infinirt.get_device() == 0  # allocating on device 1 did not move the thread


@pytest.mark.parametrize("make", [
    lambda n: bytes(n),
    lambda n: bytearray(n),
    lambda n: memoryview(bytearray(n)),
    lambda n: array.array("b", bytes(n)),
    lambda n: np.zeros(n, dtype=np.uint8),
    lambda n: np.zeros((n // 4,), dtype=np.float32),
])
def test_copies_take_any_object_of_the_buffer_protocol(make):
    source = make(64)
    buffer = infinirt.Buffer(64)
    buffer.fill(7)
    buffer.copy_from(source)
    out = np.empty(64, dtype=np.uint8)
    buffer.copy_to(out)
    assert (out == 0).all()


def test_copies_between_buffers_and_devices():
    a = infinirt.Buffer(32, device=0)
    b = infinirt.Buffer(32, device=1)
    a.copy_from(b"x" * 32)
    b.copy_from(a)
    out = bytearray(32)
    b.copy_to(out)
    assert out == bytearray(b"x" * 32)


def test_a_copy_on_a_stream_runs_in_its_order_and_holds_the_host_memory(stream):
    buffer = infinirt.Buffer(1 << 20)
    data = np.arange(1 << 18, dtype=np.float32)
    buffer.copy_from(data, stream=stream)
    del data  # the copy keeps it until it has run
    out = np.empty(1 << 18, dtype=np.float32)
    buffer.copy_to(out, stream=stream)
    stream.synchronize()
    assert (out == np.arange(1 << 18, dtype=np.float32)).all()


def test_fill(stream):
    buffer = infinirt.Buffer(16)
    buffer.fill(255)
    buffer.fill(3, stream=stream)
    stream.synchronize()
    out = bytearray(16)
    buffer.copy_to(out)
    assert out == bytearray([3] * 16)
    for bad in (256, -1, 1.0, True, "a"):
        with pytest.raises(ValueError):
            buffer.fill(bad)


def test_a_zero_byte_buffer():
    buffer = infinirt.Buffer(0)
    buffer.copy_from(b"")
    buffer.copy_to(bytearray())
    buffer.fill(0)


def test_bad_sizes_and_types_are_python_errors():
    with pytest.raises(ValueError, match="negative"):
        infinirt.Buffer(-1)
    with pytest.raises(TypeError):
        infinirt.Buffer(1.5)
    with pytest.raises(TypeError):
        infinirt.Buffer("8")
    buffer = infinirt.Buffer(8)
    with pytest.raises(ValueError, match="9 bytes"):
        buffer.copy_from(bytes(9))
    with pytest.raises(ValueError, match="9 bytes"):
        buffer.copy_to(bytearray(9))
    with pytest.raises(ValueError):
        buffer.copy_from(infinirt.Buffer(9))
    with pytest.raises(TypeError, match="buffer protocol"):
        buffer.copy_from(12)
    with pytest.raises(TypeError, match="writable"):
        buffer.copy_to(b"12345678")  # bytes are read-only
    with pytest.raises(TypeError, match="contiguous"):
        buffer.copy_from(np.zeros((4, 4), dtype=np.uint8)[:, ::2])
    with pytest.raises(TypeError):
        buffer.copy_from(b"1", stream="not a stream")


def test_a_closed_buffer_is_refused():
    buffer = infinirt.Buffer(8)
    buffer.close()
    buffer.close()
    with pytest.raises(ValueError, match="closed"):
        buffer.copy_from(b"1")
    with pytest.raises(ValueError, match="closed"):
        buffer.ptr
    with pytest.raises(ValueError, match="closed"):
        infinirt.Buffer(8).copy_from(buffer)


def test_structures_passed_by_value_reach_the_c_api_intact():
    """Every function of the C API is bound, those taking structures by value (3D memsets,
    managed-memory locations) included, and the structures arrive as the C compiler lays them
    out."""
    import ctypes

    from infinirt import _library

    rt = _library.rt
    Pitched = _library.ctype_of("struct infinirtPitchedPtr")
    Extent = _library.ctype_of("struct infinirtExtent")
    Location = _library.ctype_of("struct infinirtMemLocation")
    ptr, pitch = ctypes.c_void_p(), ctypes.c_size_t()
    assert rt.MallocPitch(ctypes.byref(ptr), ctypes.byref(pitch), 10, 6) == 0
    assert rt.Memset(ptr, 0, pitch.value * 6) == 0
    # A 10 x 3 x 2 box of value 7: rows 0-2 of two slices of 3 rows.
    assert rt.Memset3D(Pitched(ptr.value, pitch.value, 10, 3), 7, Extent(10, 3, 2)) == 0
    out = (ctypes.c_ubyte * (pitch.value * 6))()
    assert rt.Memcpy(out, ptr, len(out), 2) == 0
    rows = [bytes(out[r * pitch.value:r * pitch.value + pitch.value]) for r in range(6)]
    assert all(row[:10] == b"\x07" * 10 and row[10:] == bytes(pitch.value - 10) for row in rows)
    assert rt.Free(ptr) == 0

    managed = ctypes.c_void_p()
    assert rt.MallocManaged(ctypes.byref(managed), 64, 1) == 0
    assert rt.MemPrefetchAsync(managed, 64, Location(1, 0), 0, None) == 0  # device 0
    assert rt.MemPrefetchAsync(managed, 64, Location(1, 99), 0, None) != 0  # no device 99
    assert rt.GetLastError() != 0
    assert rt.Free(managed) == 0

    # IPC handles travel as 64 bytes by value: a handle this process made is refused here with
    # the error for "opened in the exporting process" (201), not misread as a pointer.
    MemHandle = _library.ctype_of("infinirtIpcMemHandle_t")
    assert ctypes.sizeof(MemHandle) == 64
    shared, opened = ctypes.c_void_p(), ctypes.c_void_p()
    handle = MemHandle()
    assert rt.Malloc(ctypes.byref(shared), 64) == 0
    answer = rt.IpcGetMemHandle(ctypes.byref(handle), shared)
    if answer == 0:  # the CPU backend's memory is shareable when configured so
        assert rt.IpcOpenMemHandle(ctypes.byref(opened), handle, 1) == 201
    assert rt.IpcOpenMemHandle(ctypes.byref(opened), MemHandle(), 1) in (1, 801)
    rt.GetLastError()
    assert rt.Free(shared) == 0
