"""``python -m infinirt``: the listing of backends and devices, the self-test, and where the
package keeps its libraries, headers and CMake package for building C and C++ programs against
it."""

from __future__ import annotations

import argparse
import os
import sys
from typing import List, Optional

from ._library import LIB_DIR, PACKAGE_DIR

INFO_PROGRAM = os.path.join(PACKAGE_DIR, "bin", "infinirt-info")
SELFTEST_PROGRAM = os.path.join(PACKAGE_DIR, "bin", "infinirt-selftest")


def _run_program(program: str, argv: Optional[List[str]]) -> int:
    """Replaces this process with ``program`` of the package and the given arguments (the
    command line's when None)."""
    args = sys.argv[1:] if argv is None else argv
    sys.stdout.flush()
    os.execv(program, [program] + list(args))
    return 0  # not reached


def info_command(argv: Optional[List[str]] = None) -> int:
    """The ``infinirt-info`` console script: runs the program of that name inside the package
    with the given arguments (``--json``, ``--help``, ...)."""
    return _run_program(INFO_PROGRAM, argv)


def selftest_command(argv: Optional[List[str]] = None) -> int:
    """The ``infinirt-selftest`` console script: runs the program of that name inside the
    package (the conformance suite against every backend with a device; ``--json FILE``,
    ``--help``, ...). A package built without GoogleTest has no such program: says so."""
    if not os.path.isfile(SELFTEST_PROGRAM):
        print("infinirt-selftest: this package was built without it (GoogleTest was not found "
              "when it was built)", file=sys.stderr)
        return 2
    return _run_program(SELFTEST_PROGRAM, argv)


def main(argv: Optional[List[str]] = None) -> int:
    parser = argparse.ArgumentParser(
        prog="python -m infinirt",
        description="InfiniRT's backends and devices, and the paths to build against it.",
    )
    parser.add_argument("--version", action="store_true", help="print the version")
    parser.add_argument("--cmake-dir", action="store_true",
                        help="print the CMake package's directory (for -DInfiniRT_DIR=...)")
    parser.add_argument("--include-dir", action="store_true", help="print the headers' directory")
    parser.add_argument("--lib-dir", action="store_true", help="print the libraries' directory")
    sub = parser.add_subparsers(dest="command")
    sub.add_parser("info", help="list the backends and devices (as infinirt-info; its options, "
                   "e.g. --json, follow)")
    sub.add_parser("selftest", help="check InfiniRT on this machine's devices (as "
                   "infinirt-selftest; its options, e.g. --json FILE, follow)")
    given = sys.argv[1:] if argv is None else argv
    if given[:1] == ["info"]:  # everything after it is infinirt-info's
        return info_command(given[1:])
    if given[:1] == ["selftest"]:  # everything after it is infinirt-selftest's
        return selftest_command(given[1:])
    args = parser.parse_args(given)
    paths = {
        "cmake_dir": os.path.join(LIB_DIR, "cmake", "InfiniRT"),
        "include_dir": os.path.join(PACKAGE_DIR, "include"),
        "lib_dir": LIB_DIR,
    }
    if args.version:
        from . import __version__

        print(__version__)
        return 0
    for key, path in paths.items():
        if getattr(args, key):
            print(path)
            return 0
    parser.print_help()
    return 0


if __name__ == "__main__":
    sys.exit(main())
