"""DLPack both ways, with NumPy: zero copies, proven by the pointers.

PyTorch speaks the same protocol; test_torch.py runs these round trips with it where it is
installed."""

import numpy as np
import pytest

import infinirt

# NumPy 2.1 and later ask producers for DLPack 1.0 (max_version), whose flags say "writable".
NUMPY_ASKS_FOR_DLPACK_1 = tuple(int(p) for p in np.__version__.split(".")[:2]) >= (2, 1)


def test_numpy_takes_a_buffer_without_a_copy():
    buffer = infinirt.Buffer(64)
    buffer.copy_from(np.arange(16, dtype=np.float32))
    view = np.from_dlpack(buffer)
    assert view.dtype == np.uint8 and view.shape == (64,)
    assert view.ctypes.data == buffer.ptr
    assert (view.view(np.float32) == np.arange(16, dtype=np.float32)).all()
    if not NUMPY_ASKS_FOR_DLPACK_1:
        # NumPy before 2.1 takes only the original DLPack structure, which cannot say the
        # memory is writable: it makes the array read-only.
        assert not view.flags.writeable
        return
    view[:4] = 0  # writes through: the same memory
    out = np.empty(64, dtype=np.uint8)
    buffer.copy_to(out)
    assert (out[:4] == 0).all()


def test_pinned_host_memory_too():
    buffer = infinirt.Buffer(32, pinned_host=True)
    assert np.from_dlpack(buffer).ctypes.data == buffer.ptr
    assert buffer.__dlpack_device__() == (1, 0)


def test_a_buffer_on_the_second_cpu_device_is_host_memory_for_dlpack():
    assert infinirt.Buffer(8, device=1).__dlpack_device__() == (1, 0)


def test_the_buffer_outlives_its_python_object_while_numpy_uses_it():
    buffer = infinirt.Buffer(1024)
    buffer.fill(42)
    view = np.from_dlpack(buffer)
    del buffer
    import gc

    gc.collect()
    assert (view == 42).all()


def test_queued_work_is_done_before_numpy_sees_the_memory(stream):
    buffer = infinirt.Buffer(1 << 22)
    buffer.fill(0)
    buffer.fill(1, stream=stream)
    view = np.from_dlpack(buffer)
    assert (view == 1).all()


def test_an_unused_capsule_frees_its_reference():
    import gc
    import weakref

    buffer = infinirt.Buffer(8)
    capsule = buffer.__dlpack__()
    alive = weakref.ref(buffer)
    del buffer, capsule
    gc.collect()
    assert alive() is None


def test_export_refuses_a_copy_another_device_and_a_stream_for_host_memory():
    buffer = infinirt.Buffer(8)
    with pytest.raises(BufferError):
        buffer.__dlpack__(copy=True)
    with pytest.raises(BufferError):
        buffer.__dlpack__(dl_device=(2, 0))
    with pytest.raises(BufferError):
        buffer.__dlpack__(stream=3)


def test_from_dlpack_wraps_numpy_without_a_copy():
    array = np.arange(12, dtype=np.float64).reshape(3, 4)
    tensor = infinirt.from_dlpack(array)
    assert tensor.ptr == array.ctypes.data
    assert tensor.shape == (3, 4) and tensor.strides == (4, 1)
    assert tensor.dtype == "float64" and tensor.itemsize == 8 and tensor.nbytes == 96
    assert tensor.device is None and tensor.dlpack_device == (1, 0)
    assert tensor.is_contiguous()
    buffer = infinirt.Buffer(96)
    buffer.copy_from(tensor.buffer)
    out = np.empty((3, 4))
    buffer.copy_to(out)
    assert (out == array).all()


def test_from_dlpack_keeps_strides_and_the_producer_alive():
    array = np.arange(16, dtype=np.int32).reshape(4, 4)[:, ::2]
    tensor = infinirt.from_dlpack(array)
    assert tensor.strides == (4, 2) and not tensor.is_contiguous()
    with pytest.raises(ValueError, match="contiguous"):
        tensor.buffer
    del array
    import gc

    gc.collect()
    values = np.ctypeslib.as_array(
        (np.ctypeslib.ctypes.c_int32 * 16).from_address(tensor.ptr))
    assert list(values[:4]) == [0, 1, 2, 3]


def test_bad_producers_are_refused():
    with pytest.raises(TypeError, match="DLPack"):
        infinirt.from_dlpack(b"bytes")

    class OnAGpu:
        def __dlpack_device__(self):
            return (2, 0)  # kDLCUDA: no NVIDIA device here

        def __dlpack__(self, stream=None):
            raise AssertionError("not to be called for a device InfiniRT lacks")

    with pytest.raises(infinirt.Error, match="not a device InfiniRT has"):
        infinirt.from_dlpack(OnAGpu())

    class Vulkan(OnAGpu):
        def __dlpack_device__(self):
            return (7, 0)

    with pytest.raises(infinirt.Error):
        infinirt.from_dlpack(Vulkan())
