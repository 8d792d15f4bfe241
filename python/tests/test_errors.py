"""Errors: one exception class per error code, with the code, its name and the failing call."""

import pytest

import infinirt
from infinirt import errors


def test_every_error_class_derives_from_error_and_carries_its_code():
    assert issubclass(errors.InvalidValueError, infinirt.Error)
    assert errors.InvalidValueError.code == 1
    assert errors.InvalidValueError.name == "infinirtErrorInvalidValue"
    assert errors.NotReadyError.code == 600
    assert errors.error_class(1) is errors.InvalidValueError
    assert errors.error_class(123456) is infinirt.Error


def test_a_failing_call_raises_its_class_with_the_message_of_the_call():
    event = infinirt.Event()
    stream = infinirt.Stream()
    stream.close()
    with pytest.raises(ValueError, match="closed"):
        event.record(stream)
    with pytest.raises(errors.InvalidResourceHandleError) as error:
        event.elapsed_time(infinirt.Event())
    assert error.value.code == 400
    assert error.value.name == "infinirtErrorInvalidResourceHandle"
    assert error.value.call == "infinirtEventElapsedTime"
    assert "infinirtEventElapsedTime failed" in str(error.value)


def test_a_reported_failure_does_not_linger_as_the_last_error():
    with pytest.raises(infinirt.Error):
        infinirt.set_device(99)
    # The next call does not see it: the failure was reported and cleared.
    infinirt.Buffer(8).fill(1)
    assert infinirt._library.rt.PeekAtLastError() == 0


def test_memory_exhaustion_is_a_memory_allocation_error():
    with pytest.raises(errors.MemoryAllocationError):
        infinirt.Buffer(1 << 62)
