"""`iui` client commands against a real redis-server: their own timeout, one line on failure."""

from __future__ import annotations

import time
from pathlib import Path

import pytest

from tests.integration.conftest import Runtime
from workers.cli import main

pytestmark = pytest.mark.integration
EXAMPLE = Path(__file__).resolve().parents[2] / "examples" / "stream-initial.json"


def submit(url: str, timeout: str) -> list[str]:
    return ["submit", "--redis-url", url, "--session", "s1", "--tool", "intelligent_ui_open",
            "--timeout", timeout, str(EXAMPLE)]


@pytest.mark.parametrize("timeout", [2.0, 6.0])  # 6 s outlasts redis-py's default 5 s socket timeout
def test_submit_without_a_worker_waits_its_whole_timeout_and_fails_in_one_line(
    runtime: Runtime, capsys: pytest.CaptureFixture[str], timeout: float
) -> None:
    runtime.redis.hset(runtime.client.keys.meta, mapping={"partitions": 4, "protocol": 1})
    started = time.monotonic()
    assert main(submit(runtime.redis_url, f"{timeout:g}")) == 1
    elapsed = time.monotonic() - started
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and err.startswith("iui: error: no reply to request ")
    assert err.rstrip().endswith(f"within {timeout:g} s")
    assert timeout - 0.2 <= elapsed < timeout + 1.5


def test_status_answers_within_its_timeout(runtime: Runtime, capsys: pytest.CaptureFixture[str]) -> None:
    runtime.start()
    assert main(["status", "--redis-url", runtime.redis_url, "--partitions", "4", "--timeout", "2"]) == 0
    assert capsys.readouterr().err == ""


def test_submit_with_a_partition_count_the_deployment_does_not_have_is_refused_in_one_line(
    runtime: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime.redis.hset(runtime.client.keys.meta, mapping={"partitions": 4, "protocol": 1})
    assert main([*submit(runtime.redis_url, "2"), "--partitions", "5"]) == 1
    err = capsys.readouterr().err
    assert err.count("\n") == 1 and "partitions=4, expected 5" in err
    assert runtime.redis.xlen(runtime.client.keys.input(0)) == 0  # nothing was submitted


def test_submit_with_a_session_no_reply_could_come_for_is_refused_at_once_in_one_line(
    runtime: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime.redis.hset(runtime.client.keys.meta, mapping={"partitions": 4, "protocol": 1})
    arguments = submit(runtime.redis_url, "20")
    arguments[arguments.index("s1")] = "a:b"
    started = time.monotonic()
    assert main(arguments) == 2  # it used to wait its whole timeout, then say no reply came
    err = capsys.readouterr().err
    assert time.monotonic() - started < 5 and err.count("\n") == 1
    assert err.startswith("iui: error: the session id must be ") and "a:b" not in err


def test_action_with_a_session_no_reply_could_come_for_is_refused_at_once_not_as_a_timeout(
    runtime: Runtime, capsys: pytest.CaptureFixture[str]
) -> None:
    runtime.redis.hset(runtime.client.keys.meta, mapping={"partitions": 4, "protocol": 1})
    started = time.monotonic()
    assert main(["action", "get", "op-1", "--redis-url", runtime.redis_url, "--session", "a b", "--timeout", "20"]) == 2
    err = capsys.readouterr().err
    assert time.monotonic() - started < 5 and err.count("\n") == 1
    assert err.startswith("iui: error: the session id must be ") and "no reply" not in err
