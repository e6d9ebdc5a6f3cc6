"""Lua includes (`workers.redisio.scripts.with_includes`): a shared piece put where a script names
it, once per naming line, and nothing but a file of the scripts' own folder."""

from __future__ import annotations

import pytest

from workers.redisio.scripts import script_source, with_includes

PIECE = "local function capped_append("


def test_the_scripts_that_keep_a_log_hold_the_shared_piece_once_and_no_include_line() -> None:
    for name in ("commit", "answer"):
        source = script_source(name)
        assert source.count(PIECE) == 1
        assert not [line for line in source.splitlines() if line.startswith("-- include:")]
        assert script_source(name, sharded=True).count(PIECE) == 1


def test_an_include_is_replaced_only_as_a_whole_line() -> None:
    assert with_includes("-- include: capped_log\nreturn 1\n").startswith("-- capped_log: the capped append")
    for text in ("x = 1 -- include: capped_log", "--  include: capped_log", "-- include: capped_log.lua",
                 "-- include: ../lua/capped_log", "-- include: /etc/passwd"):
        assert with_includes(text) == text  # not a name of this folder: left as the comment it is


def test_an_include_of_a_missing_piece_fails_at_once() -> None:
    with pytest.raises(FileNotFoundError):
        with_includes("-- include: no_such_piece\n")
