"""A fixed-seed slice of `python -m bench fuzz`: hostile inputs to every public core function."""

from __future__ import annotations

import random

import core
from bench.fuzz import HOST_FUNCTIONS, TARGETS, run, valid_pointer

# The protocol functions; the answer-ui@1 parsers are fuzzed by the command, not yet here.
PROTOCOL = frozenset(name for name in core.__all__
                     if name[0].islower() and not getattr(core, name).__module__.startswith("core.answer."))


def test_a_fixed_seed_slice_finds_no_crash_echo_invalid_path_or_hang() -> None:
    tally, _ = run("core", seconds=60.0, seed=7, max_inputs=3_000, only=PROTOCOL)
    assert tally.inputs == 3_000
    assert tally.counts == {"crashes": 0, "echoes": 0, "invalid_paths": 0, "hangs": 0, "hostile_calls": 0}, (
        tally.examples)


def test_the_core_target_reaches_every_public_function() -> None:
    probes = TARGETS["core"](random.Random(0), None)
    labels = {next(probes)[0] for _ in range(3_000)}
    assert labels == {name for name in core.__all__ if name[0].islower()} | set(HOST_FUNCTIONS)


def test_the_pointer_judge_accepts_escapes_and_refuses_broken_ones() -> None:
    assert valid_pointer("") and valid_pointer("/a~0b/~1/0")
    assert not valid_pointer("a") and not valid_pointer("/a~") and not valid_pointer("/a~2")
    assert not valid_pointer("/\ud800") and not valid_pointer("/" + "x" * 512)
