"""`python -m bench builds`: its interpreters are named and checked before any worker starts."""

from __future__ import annotations

import argparse
import sys

import pytest

from bench import builds


def test_a_build_is_label_equals_path_or_a_bare_path() -> None:
    assert builds.build(f"new={sys.executable}") == ("new", sys.executable)
    assert builds.build(sys.executable) == (sys.executable, sys.executable)


@pytest.mark.parametrize("spec", ["=", "new=", f"={sys.executable}", "new=/no/such/python", "/no/such/python"])
def test_a_build_that_is_not_an_executable_interpreter_is_refused(spec: str) -> None:
    with pytest.raises(argparse.ArgumentTypeError):
        builds.build(spec)


@pytest.mark.parametrize("argv", [
    ["--rounds", "0"], ["--sessions", "0"], ["--per-session", "241"],
    ["--python", f"a={sys.executable}", "--python", f"a={sys.executable}"],
])
def test_bounds_and_labels_are_checked_before_any_worker_starts(argv: list[str]) -> None:
    with pytest.raises(SystemExit):
        builds.main(argv)


def test_the_probe_names_the_core_this_interpreter_runs() -> None:
    import core

    assert builds.core_of(sys.executable) == ("compiled" if core.COMPILED else "pure")
