"""A partition leased while the dispatcher's loop blocks is served at once, not after its block
time: `attach` ends the loop's idle sleep or blocking read (workers/runtime/wake.py)."""

from __future__ import annotations

import threading
import time

import pytest

from tests.integration.conftest import Runtime, example
from workers.redisio.connection import connect
from workers.runtime.wake import Waker

pytestmark = pytest.mark.integration
BLOCK_S = 5.0  # far beyond any wake-up: a read that ends well before it was woken


def blocked_read(redis_url: str, waker: Waker, results: list[float]) -> threading.Thread:
    """A thread that registers its connection with `waker` and blocks in XREAD for BLOCK_S."""
    client = connect(redis_url)
    connection = client.connection_pool.get_connection()
    connection.send_command("CLIENT", "ID")
    client_id = int(connection.read_response())

    def read() -> None:
        started = time.monotonic()
        assert waker.blocking(client_id, waker.epoch())
        connection.send_command("XREAD", "BLOCK", int(BLOCK_S * 1000), "STREAMS", "nothing-here", "$")
        assert connection.read_response() is None  # unblocked: answered as a timeout
        waker.unblocked()
        results.append(time.monotonic() - started)
        client.connection_pool.release(connection)

    thread = threading.Thread(target=read)
    thread.start()
    return thread


def test_wake_ends_a_blocking_read_at_once(redis_url: str) -> None:
    waker, results = Waker(redis=connect(redis_url)), []
    thread = blocked_read(redis_url, waker, results)
    time.sleep(0.2)  # the read is blocked in Redis by now
    waker.wake()
    thread.join(timeout=BLOCK_S + 2)
    assert results and results[0] < BLOCK_S / 2


def test_wake_retries_a_read_sent_but_not_yet_blocked(redis_url: str) -> None:
    waker, results = Waker(redis=connect(redis_url)), []
    thread = blocked_read(redis_url, waker, results)
    waker.wake()  # at once: the read may not have reached Redis yet
    thread.join(timeout=BLOCK_S + 2)
    assert results and results[0] < BLOCK_S / 2


def test_a_loop_woken_since_it_looked_does_not_block_and_an_idle_sleep_ends_early(redis_url: str) -> None:
    waker = Waker(redis=connect(redis_url))
    epoch = waker.epoch()
    waker.wake()  # an attach after the loop looked at the attached partitions
    assert waker.blocking(1, epoch) is False and waker.blocking(1, waker.epoch()) is True
    waker.unblocked()
    threading.Timer(0.1, waker.wake).start()
    started = time.monotonic()
    waker.sleep(BLOCK_S)
    assert time.monotonic() - started < BLOCK_S / 2


def test_a_waker_refused_client_unblock_reads_as_before_and_says_so_once(
        redis_url: str, caplog: pytest.LogCaptureFixture) -> None:
    admin = connect(redis_url)
    admin.execute_command("ACL", "SETUSER", "no-unblock", "on", ">pw", "~*", "&*", "+@all", "-client|unblock")
    try:
        waker = Waker(redis=connect(redis_url.replace("redis://", "redis://no-unblock:pw@")))
        with caplog.at_level("WARNING"):
            for _ in range(3):
                assert waker.blocking(12345, waker.epoch())
                waker.wake()  # no exception: the loop's read ends after its block time, as before
                waker.unblocked()
        assert sum("cannot wake the loop's blocking read" in r.getMessage() for r in caplog.records) == 1
    finally:
        admin.execute_command("ACL", "DELUSER", "no-unblock")


def test_a_pool_serves_its_first_calls_without_waiting_for_its_loops_block(runtime: Runtime) -> None:
    """The pool leases its partitions while its loop sleeps or blocks for up to 250 ms (nothing was
    readable yet): before, the first calls waited for that before their partitions' replays began."""
    runtime.start()
    client = runtime.client
    sessions = [next(f"wake-{p}-{n}" for n in range(1000) if client.partition(f"wake-{p}-{n}") == p)
                for p in range(runtime.settings.partitions)]
    started = time.monotonic()
    requests = [client.submit(session, "intelligent_ui_open", {"document": example("stream-initial.json")})
                for session in sessions]
    replies = [client.reply(session, request, timeout=10) for session, request in zip(sessions, requests, strict=True)]
    elapsed = time.monotonic() - started
    assert all(reply["ok"] for reply in replies)
    assert elapsed < 0.125, elapsed  # half a block time: the opens themselves take a few ms


def test_a_pool_that_may_not_ask_its_client_id_blocks_as_before_and_never_spins(redis_url: str) -> None:
    admin = connect(redis_url)
    admin.execute_command("ACL", "SETUSER", "no-client", "on", ">pw", "~*", "&*", "+@all", "-client|id",
                          "-client|unblock")
    runtime = Runtime(redis_url.replace("redis://", "redis://no-client:pw@"))
    try:
        runtime.start()
        assert runtime.call("wake-s", "intelligent_ui_open", {"document": example("stream-initial.json")})["ok"]
        time.sleep(0.3)  # the pool settles: idle from here on
        before = admin.info("commandstats").get("cmdstat_xreadgroup", {}).get("calls", 0)
        time.sleep(1.0)
        reads = admin.info("commandstats")["cmdstat_xreadgroup"]["calls"] - before
        assert reads <= 12, reads  # a blocking read per 250 ms (and the replays' own), not a busy loop
    finally:
        runtime.stop()
        admin.execute_command("ACL", "DELUSER", "no-client")
