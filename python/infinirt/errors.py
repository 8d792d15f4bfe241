"""InfiniRT's errors as Python exceptions.

Every failing call raises a subclass of :class:`Error`, one per error code of the C API, named
after it: ``infinirtErrorInvalidValue`` is :class:`InvalidValueError`. Each carries ``code`` (the
C API's number), ``name`` (``"infinirtErrorInvalidValue"``) and a message saying which call
failed and why.
"""

from __future__ import annotations

from typing import Dict, Type

from . import _library

__all__ = ["Error", "error_class"]


class Error(Exception):
    """A failed InfiniRT call: ``code`` and ``name`` are the C API's, ``call`` the function."""

    code: int = -1
    name: str = ""

    def __init__(self, message: str, call: str = "") -> None:
        super().__init__(message)
        self.call = call


_BY_CODE: Dict[int, Type[Error]] = {}


def _class_name(error_name: str) -> str:
    # "ErrorInvalidValue" -> "InvalidValueError"
    return error_name[len("Error"):] + "Error" if error_name.startswith("Error") else error_name


for _code, (_name, _text) in sorted(_library.ERROR_CODES.items()):
    if _code == _library.SUCCESS:
        continue
    _class = type(
        _class_name(_name),
        (Error,),
        {"code": _code, "name": "infinirt" + _name, "__doc__": f"{_text} (code {_code})."},
    )
    _BY_CODE[_code] = _class
    globals()[_class.__name__] = _class
    __all__.append(_class.__name__)


def error_class(code: int) -> Type[Error]:
    """The exception class of an error code (:class:`Error` itself for a code the C API lacks)."""
    return _BY_CODE.get(code, Error)


def raise_for(code: int, call: str, detail: str = "") -> None:
    """Raises the error of ``code`` from the C function ``call``, clearing the thread's last error
    (as the call's failure is now reported)."""
    _library.rt.GetLastError()
    cls = error_class(code)
    name, text = _library.ERROR_CODES.get(code, ("Error" + str(code), "unknown error code"))
    message = f"{call} failed: {text} (infinirt{name}, code {code})"
    if detail:
        message += f"; {detail}"
    error = cls(message, call)
    if cls is Error:
        error.code = code
        error.name = "infinirt" + name
    raise error


def check(code: int, call: str, detail: str = "") -> None:
    """Raises unless ``code`` is success."""
    if code != 0:
        raise_for(code, call, detail)


class StatusError(Error):
    """A failed call of InfiniOP or InfiniCCL, which answer InfiniCore's status codes: ``status``
    (and ``code``) is the number, ``name`` its name (``"INFINI_STATUS_BAD_PARAM"``)."""

    status: int = -1


_STATUS_NAMES = {value: (name, text) for name, value, text in _library._c_api.STATUSES}


def raise_status(cls: type, status: int, call: str, detail: str = "") -> None:
    """Raises ``cls`` (a StatusError) for an InfiniCore status from the C function ``call``."""
    name, text = _STATUS_NAMES.get(status, (str(status), "unknown status"))
    message = f"{call} failed: {text} (INFINI_STATUS_{name})"
    if detail:
        message += f": {detail}"
    error = cls(message, call)
    error.status = error.code = status
    error.name = "INFINI_STATUS_" + name
    raise error
