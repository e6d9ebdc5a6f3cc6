"""A fixed-seed slice of `python -m bench fuzz`: hostile inputs to every public core function."""

from __future__ import annotations

import random

import core
from bench.fuzz import HOST_FUNCTIONS, TARGETS, run, valid_pointer

PUBLIC = frozenset(name for name in core.__all__ if name[0].islower())
ANSWER = frozenset(name for name in PUBLIC if getattr(core, name).__module__.startswith("core.answer."))
PROTOCOL = PUBLIC - ANSWER  # the stream, document, state and action functions


def test_a_fixed_seed_slice_finds_no_crash_echo_invalid_path_or_hang() -> None:
    tally, _ = run("core", seconds=60.0, seed=7, max_inputs=3_000, only=PROTOCOL)
    assert tally.inputs == 3_000
    assert tally.counts == {"crashes": 0, "echoes": 0, "invalid_paths": 0, "hangs": 0, "hostile_calls": 0}, (
        tally.examples)


def test_the_answer_ui_functions_slice_finds_no_crash_echo_invalid_path_or_hang() -> None:
    # mutated examples of blocks, final answers, report blocks and view states (bench/fuzz.py)
    tally, _ = run("core", seconds=60.0, seed=8, max_inputs=3_000, only=ANSWER)
    assert tally.inputs == 3_000
    assert tally.counts == {"crashes": 0, "echoes": 0, "invalid_paths": 0, "hangs": 0, "hostile_calls": 0}, (
        tally.examples)


def test_the_core_target_reaches_every_public_function() -> None:
    probes = TARGETS["core"](random.Random(0), None)
    labels = {next(probes)[0] for _ in range(3_000)}
    assert labels == PUBLIC | set(HOST_FUNCTIONS)


def test_the_pointer_judge_accepts_escapes_and_refuses_broken_ones() -> None:
    assert valid_pointer("") and valid_pointer("/a~0b/~1/0")
    assert not valid_pointer("a") and not valid_pointer("/a~") and not valid_pointer("/a~2")
    assert not valid_pointer("/\ud800") and not valid_pointer("/" + "x" * 512)
