"""A short slice of `python -m bench redis-kills`: Redis SIGKILLed under load, restarted on its AOF.

`local` (appendfsync always) must lose, duplicate and reorder nothing and leave nothing
pending; `fast` (appendfsync everysec) may lose recent acknowledged calls, never more.
"""

from __future__ import annotations

import pytest

from bench import redis_kills

pytestmark = [pytest.mark.integration, pytest.mark.slow]


@pytest.mark.parametrize("durability", ["local", "fast"])
def test_redis_killed_on_its_aof_under_load_keeps_each_mode_s_promise(
        durability: str, capsys: pytest.CaptureFixture[str]) -> None:
    status = redis_kills.main(["--durability", durability, "--seconds", "9", "--every", "3", "--sessions", "8",
                               "--partitions", "8"])
    out = capsys.readouterr().out
    assert status == 0, out
    assert "duplicated 0, reordered 0, stuck pending 0" in out
    if durability == "local":
        assert "lost 0," in out and " 0 generations rolled back" in out
