"""The gateway's heap policy (`gateway/heap.py`): frozen every tick, collected whole every
FULL_EVERY_S or once FULL_AFTER_ENDED streams ended (an audit: streams frozen while open left their
reference cycles in the frozen heap until the ten-minute collection, 70 -> 138 MB over 2,200
streams cut within five minutes)."""

from __future__ import annotations

import asyncio
from types import SimpleNamespace

import pytest

from gateway import heap


def collections_after(monkeypatch: pytest.MonkeyPatch, ended_by_tick: list[int],
                      told: list[float] | None = None) -> list[int]:
    """The ticks (1-based) at which a whole collection ran, with `ended()` as given per tick (each
    collection's duration appended to `told`)."""
    calls: list[str] = []
    fake = SimpleNamespace(set_threshold=lambda *a: None, freeze=lambda: calls.append("freeze"),
                           unfreeze=lambda: calls.append("unfreeze"), collect=lambda: calls.append("collect"))
    monkeypatch.setattr(heap, "gc", fake)
    counts = iter([0, *ended_by_tick])
    durations = told if told is not None else []

    async def run() -> None:
        task = asyncio.create_task(heap.keep_heap(0.001, lambda: next(counts, ended_by_tick[-1]), durations.append))
        while calls.count("freeze") < len(ended_by_tick) + 1:
            await asyncio.sleep(0.001)
        task.cancel()

    asyncio.run(run())
    ticks, tick = [], 0
    for call in calls[1:]:  # after the first freeze
        if call == "freeze":
            tick += 1
        elif call == "collect":
            ticks.append(tick + 1)
    return ticks


def test_a_whole_collection_comes_once_enough_streams_ended(monkeypatch: pytest.MonkeyPatch) -> None:
    limit = heap.FULL_AFTER_ENDED
    ended = [10, limit - 1, limit, limit + 5, 2 * limit - 1, 2 * limit + 3, 2 * limit + 3]
    assert collections_after(monkeypatch, ended) == [3, 6]


def test_without_ended_streams_only_the_clock_collects(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setattr(heap, "FULL_EVERY_S", 0.0025)  # every third tick of 1 ms
    assert collections_after(monkeypatch, [0] * 7) == [3, 6]


def test_each_whole_collection_is_timed_for_its_metric(monkeypatch: pytest.MonkeyPatch) -> None:
    told: list[float] = []
    limit = heap.FULL_AFTER_ENDED
    assert collections_after(monkeypatch, [0, limit, limit, 2 * limit], told) == [2, 4]
    assert len(told) == 2 and all(0 <= seconds < 1 for seconds in told)  # `iui_gateway_full_collection_seconds`
