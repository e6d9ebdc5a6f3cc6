"""The worker's collector policy: thresholds, periodic freezes, and the freeze that spares a
young collection the long-lived states of cold sessions."""

from __future__ import annotations

import gc
from collections.abc import Iterator

import pytest

from workers.runtime.heap import RELIEVE_AT, THRESHOLDS, HeapPolicy


@pytest.fixture(autouse=True)
def collector() -> Iterator[None]:
    """Leave the collector as it was (thresholds, frozen objects) for the other tests."""
    thresholds = gc.get_threshold()
    yield
    gc.unfreeze()
    gc.set_threshold(*thresholds)


def young(count: int) -> list[list[int]]:
    """`count` new tracked containers, kept alive."""
    gc.collect()
    return [[i] for i in range(count)]


def test_start_sets_the_thresholds_and_freezes_what_start_up_allocated() -> None:
    HeapPolicy(every_s=1).start()
    assert gc.get_threshold() == THRESHOLDS
    assert gc.get_freeze_count() > 0 and gc.get_count()[0] < 100


def test_relieve_freezes_a_young_generation_past_its_bound_instead_of_collecting_it() -> None:
    policy = HeapPolicy(every_s=1)
    policy.start()
    kept = young(RELIEVE_AT + 1_000)
    frozen = gc.get_freeze_count()
    assert gc.get_count()[0] > RELIEVE_AT
    policy.relieve()
    assert gc.get_count()[0] < 100  # the young count starts again
    assert gc.get_freeze_count() >= frozen + len(kept)  # the containers are out of the collector's reach
    assert all(gc.is_tracked(item) for item in kept[:10])


def test_relieve_leaves_a_small_young_generation_alone() -> None:
    policy = HeapPolicy(every_s=1)
    policy.start()
    kept = young(RELIEVE_AT // 10)
    frozen = gc.get_freeze_count()
    policy.relieve()
    assert gc.get_freeze_count() == frozen and gc.get_count()[0] >= len(kept)


def test_with_the_policy_off_nothing_is_frozen_or_changed() -> None:
    thresholds = gc.get_threshold()
    policy = HeapPolicy(every_s=0)
    policy.start()
    kept = young(RELIEVE_AT + 1_000)
    policy.relieve()
    policy.maybe_freeze()
    assert gc.get_threshold() == thresholds and gc.get_freeze_count() == 0  # CPython collects as it does
    assert len(kept) == RELIEVE_AT + 1_000
