"""Replies a crash cannot swallow, and the durability modes a reply is confirmed under."""

from __future__ import annotations

import signal
import socket
import subprocess
import tempfile
import threading
import time
from collections.abc import Iterator
from typing import Any

import pytest
import redis

from tests.integration.conftest import Runtime, example
from workers.client import Client, ClientError
from workers.redisio.connection import connect
from workers.redisio.durability import DurabilityUnmet
from workers.redisio.local_server import start_redis_server
from workers.runtime.pool import MetaMismatch, WorkerPool

pytestmark = pytest.mark.integration
OPEN = "intelligent_ui_open"


def _read_then_vanish(port: int, command: list[bytes]) -> None:
    """Send a blocking read and close the connection once Redis has answered it, unread."""
    with socket.create_connection(("127.0.0.1", port)) as sock:
        sock.sendall(b"".join([b"*%d\r\n" % len(command)] + [b"$%d\r\n%s\r\n" % (len(a), a) for a in command]))
        time.sleep(0.3)  # the reply is pushed meanwhile: Redis serves the read and writes the answer


def _port(url: str) -> int:
    return int(url.rsplit(":", 1)[1].split("/", 1)[0])


def test_a_reply_read_by_a_connection_that_broke_can_be_read_again(runtime: Runtime) -> None:
    runtime.start()
    key = runtime.client.keys.reply(runtime.client.partition("v"), "v", "r1")
    reader = threading.Thread(target=_read_then_vanish,
                              args=(_port(runtime.redis_url), [b"BLMOVE", key.encode(), key.encode(), b"LEFT",
                                                              b"RIGHT", b"5"]))
    reader.start()
    time.sleep(0.05)
    runtime.client.add(runtime.client.entry("v", OPEN, {"document": example("stream-initial.json")},
                                            call="open-v", request="r1"))
    reader.join()
    assert runtime.client.reply("v", "r1", timeout=5)["ok"]  # still there for the next read
    assert runtime.client.peek_reply("v", "r1") is None  # and taken by it


def test_a_popped_reply_is_lost_with_its_connection(runtime: Runtime) -> None:
    """The control: the same cut with BLPOP loses the reply (why replies are read with BLMOVE)."""
    runtime.start()
    key = runtime.client.keys.reply(runtime.client.partition("v"), "v", "r1")
    reader = threading.Thread(target=_read_then_vanish,
                              args=(_port(runtime.redis_url), [b"BLPOP", key.encode(), b"5"]))
    reader.start()
    time.sleep(0.05)
    runtime.client.add(runtime.client.entry("v", OPEN, {"document": example("stream-initial.json")},
                                            call="open-v", request="r1"))
    reader.join()
    with pytest.raises(ClientError):
        runtime.client.reply("v", "r1", timeout=0.5)


class _CutOnce:
    """A redis client whose first BLMOVE fails as a broken connection does (after the XADD went out)."""

    def __init__(self, inner: Any) -> None:
        self._inner = inner
        self.cut = False

    def blmove(self, *args: Any) -> Any:
        if not self.cut:
            self.cut = True
            raise redis.ConnectionError("connection reset by peer")
        return self._inner.blmove(*args)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._inner, name)


def test_a_call_whose_connection_broke_is_sent_again_and_applied_once(runtime: Runtime) -> None:
    runtime.start()
    flaky = _CutOnce(runtime.redis)
    client = Client(redis=flaky, prefix=runtime.settings.key_prefix)
    reply = client.call("once", OPEN, {"document": example("stream-initial.json")}, call="open-once",
                        request="open-once", timeout=10)
    assert flaky.cut and reply["ok"]
    time.sleep(0.3)
    second = runtime.client.peek_reply("once", "open-once")  # the resent entry's reply: from the ledger
    assert second is not None and second["result"] == reply["result"]
    assert runtime.log_length("once") == 1  # one frame: applied once
    assert len(runtime.redis.xrange(runtime.client.keys.input(runtime.client.partition("once")))) == 2


def test_a_reply_read_takes_one_copy_and_leaves_another(runtime: Runtime) -> None:
    key = runtime.client.keys.reply(runtime.client.partition("two"), "two", "r")
    runtime.redis.rpush(key, b'{"ok":true,"request":"r"}', b'{"ok":true,"request":"r"}')
    assert runtime.client.reply("two", "r", timeout=1)["ok"]
    assert runtime.redis.llen(key) == 1  # a second reply stays visible (tests check "one reply each")


# -- durability -------------------------------------------------------------------------------


@pytest.fixture()
def fsync_always() -> Iterator[str]:
    """A private redis-server with `appendonly yes`, `appendfsync always`."""
    with tempfile.TemporaryDirectory() as directory:
        process, port = start_redis_server(directory, "--appendonly", "yes", "--appendfsync", "always")
        try:
            yield f"redis://127.0.0.1:{port}/0"
        finally:
            process.kill()
            process.wait()


def test_local_durability_refuses_a_server_that_does_not_fsync_every_write(runtime: Runtime) -> None:
    runtime.configure(durability="local")
    pool = WorkerPool(settings=runtime.settings, redis=connect(runtime.redis_url), metrics=runtime.metrics)
    with pytest.raises(DurabilityUnmet, match="appendonly no, appendfsync everysec"):
        pool.run()
    assert not any(runtime.redis.exists(runtime.client.keys.lease(p)) for p in range(runtime.settings.partitions))


def test_local_durability_serves_on_a_server_that_fsyncs_every_write(fsync_always: str) -> None:
    rt = Runtime(fsync_always).configure(durability="local").start()
    try:
        assert rt.call("d", OPEN, {"document": example("stream-initial.json")}, call="open-d")["ok"]
        assert rt.client.durability.meta == "local"
    finally:
        rt.stop()


def test_a_worker_refuses_a_deployment_of_another_durability(runtime: Runtime) -> None:
    runtime.start()
    runtime.stop()
    runtime.configure(durability="replica", durability_replicas=2)
    pool = WorkerPool(settings=runtime.settings, redis=connect(runtime.redis_url), metrics=runtime.metrics)
    with pytest.raises(MetaMismatch, match="durability=fast, configured replica:2"):
        pool.run()


def test_a_worker_refused_for_its_durability_writes_nothing_so_a_corrected_one_starts(runtime: Runtime) -> None:
    """`DurabilityUnmet` is found before `{prefix}:meta` is written: a `local` worker on a server
    that does not fsync every write must not lock the deployment to `local` (nor record P)."""
    runtime.configure(durability="local")
    pool = WorkerPool(settings=runtime.settings, redis=connect(runtime.redis_url), metrics=runtime.metrics)
    with pytest.raises(DurabilityUnmet):
        pool.run()
    assert runtime.redis.keys("*") == []
    runtime.configure(durability="fast").start()
    assert runtime.client.durability.meta == "fast"


def test_a_worker_refused_for_the_meta_does_not_rewrite_streaming(runtime: Runtime) -> None:
    runtime.start()
    runtime.stop()
    stored = runtime.redis.hgetall(runtime.client.keys.meta)
    for mismatch in ({"partitions": 8}, {"durability": "replica", "durability_replicas": 2}):
        runtime.configure(streaming_enabled=False, **mismatch)
        pool = WorkerPool(settings=runtime.settings, redis=connect(runtime.redis_url), metrics=runtime.metrics)
        with pytest.raises(MetaMismatch):
            pool.run()
        assert runtime.redis.hgetall(runtime.client.keys.meta) == stored  # streaming=1 still


@pytest.fixture()
def with_replica() -> Iterator[tuple[str, subprocess.Popen[bytes]]]:
    """A master and one replica of it (private servers); yields the master's URL and the replica."""
    with tempfile.TemporaryDirectory() as master_dir, tempfile.TemporaryDirectory() as replica_dir:
        master, port = start_redis_server(master_dir)
        replica, _ = start_redis_server(replica_dir, "--replicaof", "127.0.0.1", str(port))
        url = f"redis://127.0.0.1:{port}/0"
        client = connect(url)
        deadline = time.monotonic() + 10
        while client.info("replication").get("connected_slaves", 0) < 1:
            assert time.monotonic() < deadline, "the replica did not connect"
            time.sleep(0.05)
        client.close()
        try:
            yield url, replica
        finally:
            for process in (replica, master):
                process.send_signal(signal.SIGCONT)
                process.kill()
                process.wait()


def test_replica_durability_confirms_a_reply_only_once_the_replica_holds_it(
        with_replica: tuple[str, subprocess.Popen[bytes]]) -> None:
    url, replica = with_replica
    rt = Runtime(url).configure(durability="replica", durability_replicas=1, durability_timeout_ms=200).start()
    try:
        assert rt.client.durability.meta == "replica:1"
        assert rt.call("rep", OPEN, {"document": example("stream-initial.json")}, call="open-rep")["ok"]
        replica.send_signal(signal.SIGSTOP)  # it acknowledges nothing while stopped
        request = rt.client.submit("rep2", OPEN, {"document": example("stream-initial.json")}, call="open-rep2")
        with pytest.raises(ClientError, match="no confirmed reply"):
            rt.client.reply("rep2", request, timeout=1.0)
        assert rt.client.peek_reply("rep2", request) is not None  # kept in Redis, unconfirmed
        replica.send_signal(signal.SIGCONT)
        assert rt.client.reply("rep2", request, timeout=10)["ok"]
    finally:
        rt.stop()


def test_a_reply_awaited_longer_than_the_clients_socket_timeout_is_still_read(runtime: Runtime) -> None:
    # an audit: a job waits up to IUI_JOB_START_TIMEOUT_S (30 s) for its `running` reply on a client
    # with redis-py 8's 5 s socket timeout: its one long BLMOVE failed at 5 s with TimeoutError
    from workers.redisio.replies import await_reply

    client = connect(runtime.redis_url, socket_timeout=1.0)
    pusher = connect(runtime.redis_url)
    timer = threading.Timer(2.5, lambda: pusher.rpush("late-reply", b"here"))
    timer.start()
    try:
        started = time.monotonic()
        assert await_reply(client, "late-reply", 4.0) == b"here"
        assert 2.4 < time.monotonic() - started < 3.5
        assert await_reply(client, "no-reply", 2.2) is None  # the whole wait, then None: no error
    finally:
        timer.cancel()
        client.close()
        pusher.close()


@pytest.mark.parametrize(("ids", "field"), [
    ({"session": ""}, "session"), ({"session": "a:b"}, "session"), ({"session": "s" * 129}, "session"),
    ({"request": ""}, "request"), ({"request": "r" * 300_000}, "request"), ({"request": "\ud800"}, "request"),
    ({"call": "c" * 257}, "call"), ({"call": "tab\there"}, "call"),
])
def test_an_id_no_reply_could_come_for_is_refused_before_anything_is_added(runtime: Runtime, ids: dict[str, str],
                                                                           field: str) -> None:
    # An audit: `submit("", ...)` and a request id of 300,000 characters were written, and `call`
    # then waited its whole timeout for a reply no worker could send.
    arguments = {"session": "s-ids", "request": None, "call": None, **ids}
    client = runtime.client
    added = lambda: sum(runtime.redis.xlen(client.keys.input(p)) for p in range(client.partitions))  # noqa: E731
    before = added()
    with pytest.raises(ClientError) as refused:
        client.submit(arguments["session"], OPEN, {}, call=arguments["call"], request=arguments["request"])
    message = str(refused.value)
    assert message.startswith(f"the {field} id must be ") and (not ids[field] or ids[field][:20] not in message)
    assert added() == before
