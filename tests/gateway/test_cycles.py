"""A live gateway's ended streams and answered requests leave no reference cycle: the gateway's
heap policy freezes its heap every second (`gateway.heap`), and what a frozen cycle holds stays
until the next whole collection.  Each ended stream used to leave ~150 objects in cycles (anyio
kept its response's cancelled parts' errors with their frames; the transport and its protocol
held each other), so that collection had to come every 1,000 ended streams and stopped every
stream 0.2-0.3 s (`gateway.acyclic`).  The gateway runs as `iui gateway` does, with its collector
off and every collected object kept, and reports what a collection finds when signalled."""

from __future__ import annotations

import json
import signal
import sys
import time
from pathlib import Path

import httpx
import pytest

from tests.gateway.conftest import GatewayProcess, auth
from tests.gateway.test_events import Agent
from tests.integration.conftest import Runtime

pytestmark = pytest.mark.integration

# `iui gateway`, with a SIGUSR1 that collects and writes one line: the watched objects found in
# cycles since the last one (the first report holds what start-up left).
LAUNCHER = r"""
import collections, gc, json, signal, sys

def report(*_):
    gc.collect()
    found = collections.Counter(type(o).__qualname__ for o in gc.garbage
                                if type(o).__module__.startswith(("gateway.", "uvicorn.", "sse_starlette.", "anyio."))
                                or type(o).__name__ in ("CancelledError", "frame", "coroutine"))
    gc.garbage.clear()
    gc.set_debug(0)  # the cycles just kept are freed, not found again by the next report
    gc.collect()
    gc.set_debug(gc.DEBUG_SAVEALL)
    sys.stderr.write("CYCLES " + json.dumps(found) + "\n")
    sys.stderr.flush()

gc.disable()
gc.set_debug(gc.DEBUG_SAVEALL)
signal.signal(signal.SIGUSR1, report)
sys.argv = ["iui", "gateway"]
from workers.cli.main import main
sys.exit(main())
"""


def traffic(url: str) -> None:
    """Streams cut after their first event (native and AG-UI), and requests answered or refused."""
    with httpx.Client(base_url=url, timeout=10) as client:
        for _ in range(10):
            for path in ("/v1/sessions/s1/events", "/v1/sessions/s1/ag-ui"):
                with client.stream("GET", path, headers=auth("viewer")) as response:
                    assert response.status_code == 200
                    next(line for line in response.iter_lines() if line.startswith("data:"))
            assert client.get("/readyz").status_code == 200
            assert client.get("/v1/sessions/s1/events", headers={"authorization": "Bearer nope"}).status_code == 401
            assert client.get("/v1/sessions/none/events", headers=auth("viewer")).status_code == 404
            assert client.post("/v1/sessions/s1/calls", headers={**auth("agent"), "content-type": "application/json"},
                               content=b"{bad").status_code == 400


def reported(gateway: GatewayProcess, count: int) -> dict[str, int]:
    """Signal the gateway and read its `count`-th report."""
    assert gateway.process is not None and gateway.log is not None
    gateway.process.send_signal(signal.SIGUSR1)
    deadline = time.monotonic() + 10
    while time.monotonic() < deadline:
        reports = [line for line in gateway.log.read_text().splitlines() if line.startswith("CYCLES ")]
        if len(reports) >= count:
            found: dict[str, int] = json.loads(reports[count - 1][7:])
            return found
        time.sleep(0.05)
    raise AssertionError(f"no report from the gateway: {gateway.log.read_text()[-2000:]}")


def test_a_live_gateway_s_ended_streams_and_requests_leave_no_cyclic_garbage(redis_url: str, tmp_path: Path) -> None:
    runtime = Runtime(redis_url).configure(partitions=4).start()
    gateway = GatewayProcess(redis_url, log=tmp_path / "gateway.log", command=[sys.executable, "-c", LAUNCHER],
                             gc_freeze_s=0).start()
    try:
        Agent(runtime)
        traffic(gateway.url)  # first uses: lazy imports and caches
        time.sleep(0.5)
        reported(gateway, 1)  # what start-up and first uses left
        traffic(gateway.url)
        time.sleep(0.5)  # the gateway notices the last connections went
        assert reported(gateway, 2) == {}  # before: CancelledError, EventStream, Listener, ... 20 of each
    finally:
        gateway.stop()
        runtime.stop()
