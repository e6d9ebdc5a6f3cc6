"""A fixed-seed slice of the live-worker wire fuzzer (`python -m bench fuzz-wire` runs it long)."""

from __future__ import annotations

import pytest

from bench.fuzz_wire import FAILURES, run_wire

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("seed", [7, 11])
def test_hostile_entries_each_get_one_documented_reply_or_a_dead_letter(redis_url: str, seed: int) -> None:
    counts = run_wire(120, seed, redis_url=redis_url, batch=24, max_entries=192)
    assert counts["entries"] == 192
    assert counts["replies"] + counts["dead_letters"] >= 192
    assert {name: counts[name] for name in FAILURES} == dict.fromkeys(FAILURES, 0)
