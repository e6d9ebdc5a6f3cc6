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


def collected(kept: list[list[int]]) -> int:
    """How many of `kept` the collector still examines (in one of its generations, not frozen).

    Counted by identity, not from `gc.get_freeze_count()`, which another thread's frozen objects
    dying or being frozen change at any time."""
    ids = {id(item) for item in kept}
    return sum(id(item) in ids for generation in range(3) for item in gc.get_objects(generation))


def test_start_sets_the_thresholds_and_freezes_what_start_up_allocated() -> None:
    HeapPolicy(every_s=1).start()
    assert gc.get_threshold() == THRESHOLDS
    assert gc.get_freeze_count() > 0 and gc.get_count()[0] < 100


def test_relieve_freezes_a_young_generation_past_its_bound_instead_of_collecting_it() -> None:
    policy = HeapPolicy(every_s=1)
    policy.start()
    kept = young(RELIEVE_AT + 1_000)
    assert gc.get_count()[0] > RELIEVE_AT and collected(kept) == len(kept)
    policy.relieve()
    assert gc.get_count()[0] < 100  # the young count starts again
    assert gc.get_freeze_count() >= len(kept) and collected(kept) == 0  # out of the collector's reach
    assert all(gc.is_tracked(item) for item in kept[:10])


def test_relieve_leaves_a_small_young_generation_alone() -> None:
    policy = HeapPolicy(every_s=1)
    policy.start()
    kept = young(RELIEVE_AT // 10)
    policy.relieve()
    assert collected(kept) == len(kept)  # nothing frozen: the collector still examines every one


def test_with_the_policy_off_nothing_is_frozen_or_changed() -> None:
    gc.set_threshold(1_000_000, 10, 10)  # the process's own thresholds, which let the young generation grow
    thresholds = gc.get_threshold()
    policy = HeapPolicy(every_s=0)
    policy.start()
    kept = young(RELIEVE_AT + 1_000)
    policy.relieve()
    policy.maybe_freeze()
    assert gc.get_threshold() == thresholds  # CPython collects as it does
    assert collected(kept) == len(kept) == RELIEVE_AT + 1_000  # and nothing was frozen
