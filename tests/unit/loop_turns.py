"""How many turns of the event loop another task got while some work ran: work done in one long
step gives it none, work that yields between its pieces one a piece."""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable
from typing import TypeVar

T = TypeVar("T")


async def turns_while(work: Awaitable[T]) -> tuple[int, T]:
    """`work`'s result, and the turns a ticking task got while it ran."""
    turns = 0

    async def ticker() -> None:
        nonlocal turns
        while True:
            turns += 1
            await asyncio.sleep(0)

    task = asyncio.create_task(ticker())
    await asyncio.sleep(0)
    before = turns
    try:
        result = await work
    finally:
        task.cancel()
    return turns - before, result
