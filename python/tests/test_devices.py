"""Devices, their properties, the current device and the backend listing."""

import threading

import pytest

import infinirt
from infinirt._library import PLUGINS


def test_the_cpu_backend_gives_the_configured_devices():
    assert infinirt.device_count() == 2
    devices = infinirt.devices()
    assert [d.ordinal for d in devices] == [0, 1]
    assert all(d.type == "cpu" for d in devices)
    assert [d.index for d in devices] == [0, 1]
    assert all(d.total_memory > 0 and d.name for d in devices)


def test_properties_carry_the_c_structures_names():
    props = infinirt.get_device_properties(1)
    assert props.backendName == "cpu"
    assert props.vendorDeviceIndex == 1
    assert props.totalGlobalMem > 0
    assert props.multiProcessorCount >= 1
    assert "CPU" in props.name
    assert infinirt.get_device_properties().name == infinirt.get_device_properties(
        infinirt.get_device()).name


def test_a_device_by_type_and_index():
    assert infinirt.Device("cpu", 1).ordinal == 1
    assert infinirt.Device(infinirt.Device(1)) == infinirt.Device(1)
    with pytest.raises(ValueError, match="no device type"):
        infinirt.Device("tpu", 0)
    with pytest.raises(infinirt.Error):
        infinirt.Device("cpu", 7)


def test_bad_devices_are_refused_clearly():
    with pytest.raises(ValueError, match="no device 5"):
        infinirt.Device(5)
    with pytest.raises(ValueError):
        infinirt.Device(-1)
    with pytest.raises(TypeError):
        infinirt.Device(1.5)
    with pytest.raises(TypeError):
        infinirt.Device(True)
    with pytest.raises(infinirt.errors.InvalidDeviceError) as error:
        infinirt.set_device(9)
    assert error.value.code == 101 and "infinirtSetDevice" in str(error.value)


def test_device_as_a_context_manager_sets_and_restores_the_current_device():
    assert infinirt.get_device() == 0
    with infinirt.Device(1) as device:
        assert infinirt.get_device() == 1 == device.ordinal
        with infinirt.Device(0):
            assert infinirt.get_device() == 0
        assert infinirt.get_device() == 1
    assert infinirt.get_device() == 0


def test_the_previous_device_comes_back_after_an_exception():
    with pytest.raises(RuntimeError):
        with infinirt.Device(1):
            raise RuntimeError("inside")
    assert infinirt.get_device() == 0


def test_the_current_device_is_per_thread():
    seen = []

    def other():
        seen.append(infinirt.get_device())
        infinirt.set_device(1)
        seen.append(infinirt.get_device())

    with infinirt.Device(1):
        thread = threading.Thread(target=other)
        thread.start()
        thread.join()
    assert seen == [0, 1]
    assert infinirt.get_device() == 0


def test_the_backend_listing_gives_a_reason_for_each_one_not_loaded():
    listing = {b.name: b for b in infinirt.backends()}
    assert listing["cpu"].loaded and listing["cpu"].device_count == 2
    assert listing["cpu"].device_type == "cpu" and listing["cpu"].abi
    # Every vendor plugin of the vendor table (config/vendors.json).
    vendor_plugins = [name for name in PLUGINS if name != "cpu"]
    assert vendor_plugins
    for name in vendor_plugins:
        assert name in listing
        assert not listing[name].loaded
        assert listing[name].reason, name
    # Not loaded here: no vendor runtime on this machine.
    assert listing["ascend"].status == "RuntimeMissing"


def test_synchronize_waits_for_every_stream_of_the_device():
    stream = infinirt.Stream()
    gate = threading.Event()
    stream.launch_host_func(lambda: gate.wait(10))
    assert not stream.query()
    threading.Timer(0.1, gate.set).start()
    infinirt.synchronize()
    assert stream.query()


def test_device_synchronize_waits_for_that_device_only():
    on_1 = infinirt.Stream(device=1)
    on_0 = infinirt.Stream(device=0)
    assert on_1.device == infinirt.Device(1) and on_0.device == infinirt.Device(0)
    gate_0 = threading.Event()
    on_0.launch_host_func(lambda: gate_0.wait(10))  # device 0 stays busy throughout
    gate_1 = threading.Event()
    on_1.launch_host_func(lambda: gate_1.wait(10))
    threading.Timer(0.1, gate_1.set).start()
    infinirt.Device(1).synchronize()
    assert on_1.query()
    assert not on_0.query(), "device 1's synchronize waited for device 0 as well"
    assert infinirt.get_device() == 0  # the thread's current device is left alone
    gate_0.set()
    infinirt.Device(0).synchronize()
    assert on_0.query()


def test_a_stream_on_another_device_queues_work_there():
    stream = infinirt.Stream(device=1)
    assert stream.device.ordinal == 1 and infinirt.get_device() == 0
    buffer = infinirt.Buffer(16, stream=stream)  # on the stream's device
    assert buffer.device.ordinal == 1
    buffer.fill(5, stream=stream)
    out = bytearray(16)
    buffer.copy_to(out, stream=stream)
    stream.synchronize()
    assert out == bytearray([5] * 16)
    with pytest.raises(infinirt.errors.InvalidDeviceError):
        infinirt.Stream(device=99)
