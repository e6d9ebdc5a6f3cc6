"""`bench lua` and `bench frame-log` rewrite commit.lua's text into their variants: each must still
find the lines it replaces (bench lua's sliding expiry had drifted from commit.lua unnoticed, and
the bench exited saying so), and the variants must commit every call they are sent."""

from __future__ import annotations

import pytest

from bench import frame_log, lua
from workers.redisio.scripts import script_source, with_includes

pytestmark = pytest.mark.integration


def test_bench_lua_runs_its_three_commit_variants(capsys: pytest.CaptureFixture[str]) -> None:
    assert lua.main(["--calls", "20", "--pipeline", "10", "--rounds", "1"]) == 0
    printed = capsys.readouterr().out
    assert all(variant in printed for variant in ("evalsha", "commit_same", "commit_helpers"))


def test_bench_frame_log_commits_to_full_logs_with_the_trim_before_and_now(capsys: pytest.CaptureFixture[str]) -> None:
    assert frame_log.main(["--sessions", "2", "--log-max", "16", "--calls", "20", "--pipeline", "10",
                           "--rounds", "1"]) == 0
    printed = capsys.readouterr().out
    assert "small (1.3 KB)" in printed and "200 components (22 KB)" in printed and "before / now" in printed


def test_the_trim_before_is_the_shipped_commit_with_only_its_capped_append_replaced() -> None:
    before, shipped = frame_log.paged_commit(), script_source("commit")
    assert "'COUNT', 16" in before and "MINID" in before and "'MAXLEN', kept" not in before
    assert before.replace(frame_log.paged_piece(), "") == shipped.replace(with_includes("-- include: capped_log"), "")
    assert frame_log.paged_piece().startswith(with_includes("-- include: capped_log").split(frame_log.TRIM_STARTS)[0])
