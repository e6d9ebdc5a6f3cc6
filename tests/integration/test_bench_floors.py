"""The floors `bench workers` compares the worker with must answer every call they are sent.

A floor that stops answering (a script it never loaded, a changed commit signature) makes the
bench fail with "replies missing" only in a full run, long after the change that broke it.
"""

from __future__ import annotations

import pytest

from bench.minimum import minimum_floor
from bench.workers import floor

pytestmark = pytest.mark.integration


@pytest.mark.parametrize("batched", [False, True])
def test_the_commit_script_floor_answers_every_call(redis_url: str, batched: bool) -> None:
    assert floor(redis_url, 600, sessions=4, per_session=5, run=0, batched=batched) > 0


def test_the_contract_minimum_answers_every_call(redis_url: str) -> None:
    assert minimum_floor(redis_url, 600, sessions=4, per_session=5, run=0) > 0
