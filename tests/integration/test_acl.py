"""ops/redis/users.acl on a real redis-server: each user can do its job and nothing else.

The template is rendered by ops/redis/render-acl.sh (as compose does) with test passwords, and a
private redis-server loads it with --aclfile.
"""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys
import threading
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import pytest
import redis
from prometheus_client import CollectorRegistry

from config.settings import load_settings
from workers.client import Client
from workers.observability.metrics import Metrics
from workers.redisio.keys import Keys
from workers.redisio.local_server import REDIS_BINARY, free_port
from workers.runtime.pool import WorkerPool
from workers.streams.tools import OPEN, PATCH

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
PASSWORDS = {"admin": "admin-secret", "worker": "worker-secret", "producer": "producer-secret",
             "viewer": "viewer-secret"}
DOCUMENT = json.loads((ROOT / "examples" / "stream-initial.json").read_text("utf-8"))
MUTATION = json.loads((ROOT / "examples" / "stream-mutations.json").read_text("utf-8"))[0]
KEYS = Keys("iui")


class AclServer:
    """A redis-server that loaded the rendered users.acl."""

    def __init__(self, port: int) -> None:
        self.port = port

    def url(self, user: str) -> str:
        return f"redis://{user}:{PASSWORDS[user]}@127.0.0.1:{self.port}/0"

    def client(self, user: str) -> redis.Redis:
        return redis.Redis.from_url(self.url(user))


@pytest.fixture(scope="module")
def acl_server(tmp_path_factory: pytest.TempPathFactory) -> Iterator[AclServer]:
    if REDIS_BINARY is None or shutil.which("sha256sum") is None:
        pytest.skip("redis-server or sha256sum is not installed")
    directory = tmp_path_factory.mktemp("acl")
    env = {**os.environ, **{f"IUI_REDIS_{user.upper()}_PASSWORD": password for user, password in PASSWORDS.items()}}
    subprocess.run(["sh", str(ROOT / "ops" / "redis" / "render-acl.sh"), str(ROOT / "ops" / "redis" / "users.acl"),
                    str(directory / "users.acl")], env=env, check=True, timeout=30)
    assert "@" not in (directory / "users.acl").read_text().replace("+@all", "").replace("-@all", "") \
        .replace("-@dangerous", "")
    port = free_port()
    process = subprocess.Popen([REDIS_BINARY, "--port", str(port), "--bind", "127.0.0.1", "--save", "",
                                "--appendonly", "no", "--dir", str(directory), "--aclfile",
                                str(directory / "users.acl")], stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    server = AclServer(port)
    admin = server.client("admin")
    try:
        for _ in range(200):
            try:
                admin.ping()
                break
            except redis.ConnectionError:
                time.sleep(0.05)
        yield server
    finally:
        admin.close()
        process.kill()
        process.wait()


@pytest.fixture(scope="module")
def pool(acl_server: AclServer) -> Iterator[WorkerPool]:
    """A real worker pool connected as `worker`."""
    settings = load_settings(redis_url=acl_server.url("worker"), partitions=4, lease_ttl_ms=1_000,
                             lease_renew_ms=200, heartbeat_ms=100)
    worker = WorkerPool(settings=settings, redis=acl_server.client("worker"),
                        metrics=Metrics(registry=CollectorRegistry()))
    thread = threading.Thread(target=worker.run, daemon=True)
    thread.start()
    deadline = time.monotonic() + 10
    while len(worker.partitions) < 4 and time.monotonic() < deadline:
        time.sleep(0.05)
    assert worker.partitions == [0, 1, 2, 3]
    yield worker
    worker.stop()
    thread.join(timeout=15)


def _refused(client: redis.Redis, *command: Any) -> None:
    with pytest.raises(redis.exceptions.NoPermissionError):
        client.execute_command(*command)


def test_the_default_user_is_off(acl_server: AclServer) -> None:
    anonymous = redis.Redis(host="127.0.0.1", port=acl_server.port)
    with pytest.raises(redis.exceptions.AuthenticationError):
        anonymous.ping()


def test_the_worker_runs_the_pool_and_the_producer_gets_its_replies(acl_server: AclServer, pool: WorkerPool) -> None:
    producer = Client(redis=acl_server.client("producer"), prefix="iui")
    opened = producer.call("s-acl", OPEN, {"document": DOCUMENT}, call="call-1", timeout=10)
    assert opened["ok"], opened
    frame = opened["result"]["frame"]
    request = producer.submit("s-acl", PATCH, {"sourceCallId": "call-1", "generation": frame["generation"],
                                               "baseRevision": frame["revision"], "mutation": MUTATION})
    partition = producer.partition("s-acl")
    reply_key = KEYS.reply(partition, "s-acl", request)
    raw = acl_server.client("producer")
    deadline = time.monotonic() + 10
    while raw.llen(reply_key) == 0 and time.monotonic() < deadline:
        time.sleep(0.02)
    assert json.loads(raw.lindex(reply_key, 0))["ok"]  # LINDEX re-reads, LRANGE too, BLPOP consumes
    assert raw.lrange(reply_key, 0, -1) and raw.blpop([reply_key], timeout=1)
    assert raw.hgetall(KEYS.meta)[b"partitions"] == b"4"
    assert len(raw.xrange(KEYS.frame_log(partition, "s-acl"))) == 2


@pytest.mark.parametrize("user", ["producer", "viewer"])
def test_producers_and_viewers_follow_frames(acl_server: AclServer, pool: WorkerPool, user: str) -> None:
    writer = Client(redis=acl_server.client("producer"), prefix="iui")
    session = f"s-follow-{user}"
    follower = Client(redis=acl_server.client(user), prefix="iui")
    with follower.follow(session) as feed:  # SUBSCRIBE, then XRANGE of the frame log
        assert writer.call(session, OPEN, {"document": DOCUMENT}, call="c1", timeout=10)["ok"]
        states = list(feed.states(timeout=3, idle=0.5))
    assert states and states[-1].checkpoint["seq"] == 1
    pubsub = acl_server.client(user).pubsub()
    pubsub.psubscribe("iui:{p*}:frames:*")  # every session's frames, as a dashboard would
    pubsub.ssubscribe(KEYS.channel(0, session))  # sharded pub/sub, as followers do on a Redis Cluster
    pubsub.close()


def test_the_producer_is_refused_everything_else(acl_server: AclServer, pool: WorkerPool) -> None:
    producer = acl_server.client("producer")
    session, request = "s-acl", "r1"
    p = Client(redis=producer, prefix="iui").partition(session)
    for command in [
        ("HSET", KEYS.session(p, session), "generations", "9"),  # session state
        ("HSET", KEYS.generations(p, session), "x:1:checkpoint", "{}"),
        ("XADD", KEYS.frame_log(p, session), "*", "frame", "{}"),  # forged frame log entry
        ("HSET", KEYS.lease(p), "owner", "me"), ("SET", KEYS.epoch(p), "99"),  # leases
        ("DEL", KEYS.reply(p, session, request)), ("DEL", KEYS.input(p)),
        ("RPUSH", KEYS.reply(p, session, request), "x"),
        ("XADD", KEYS.dead(p), "*", "a", "b"), ("XADD", f"iui:{{p{p}}}:s:{session}:in", "*", "a", "b"),
        ("XRANGE", KEYS.input(p), "-", "+"), ("XREADGROUP", "GROUP", "workers", "p0", "STREAMS", KEYS.input(p), ">"),
        ("XACK", KEYS.input(p), "workers", "0-1"), ("XTRIM", KEYS.input(p), "MAXLEN", "0"),
        ("HSET", KEYS.meta, "partitions", "8"), ("ZADD", KEYS.workers, "1", "w"),
        ("PUBLISH", KEYS.channel(p, session), "{}"), ("SPUBLISH", KEYS.channel(p, session), "{}"),
        ("SET", "other", "1"), ("GET", "rq:queues"),
        ("FLUSHALL",), ("FLUSHDB",), ("CONFIG", "GET", "*"), ("KEYS", "*"), ("SCAN", "0"),
        ("EVAL", "return 1", "0"), ("SCRIPT", "LOAD", "return 1"), ("INFO",), ("ACL", "LIST"),
        ("SHUTDOWN",), ("MONITOR",), ("CLIENT", "KILL", "TYPE", "normal"),
    ]:
        _refused(producer, *command)
    _refused(producer, "SUBSCRIBE", "rq:pubsub:w1")
    _refused(producer, "SSUBSCRIBE", "rq:pubsub:w1")


def test_the_viewer_is_refused_everything_else(acl_server: AclServer, pool: WorkerPool) -> None:
    viewer = acl_server.client("viewer")
    session, p = "s-acl", 0
    for command in [
        ("XADD", KEYS.input(p), "*", "session", session), ("BLPOP", KEYS.reply(p, session, "r1"), "1"),
        ("LINDEX", KEYS.reply(p, session, "r1"), "0"), ("HGETALL", KEYS.session(p, session)),
        ("HGETALL", KEYS.lease(p)), ("XRANGE", KEYS.input(p), "-", "+"),
        ("XADD", KEYS.frame_log(p, session), "*", "a", "b"),
        ("DEL", KEYS.frame_log(p, session)), ("PUBLISH", KEYS.channel(p, session), "{}"),
        ("SPUBLISH", KEYS.channel(p, session), "{}"), ("FLUSHALL",),
        ("CONFIG", "GET", "*"), ("EVAL", "return 1", "0"), ("KEYS", "*"), ("INFO",),
    ]:
        _refused(viewer, *command)
    _refused(viewer, "SUBSCRIBE", "iui:{p0}:receipts:s-acl")
    _refused(viewer, "SSUBSCRIBE", "iui:{p0}:receipts:s-acl")


def test_the_worker_is_confined_to_the_runtime_and_rq_keys(acl_server: AclServer) -> None:
    worker = acl_server.client("worker")
    for command in [("SET", "other", "1"), ("GET", "session:x"), ("FLUSHALL",), ("FLUSHDB",),
                    ("CONFIG", "SET", "appendfsync", "no"), ("CONFIG", "RESETSTAT"), ("KEYS", "*"), ("ACL", "LIST"),
                    ("SHUTDOWN",), ("MONITOR",)]:
        _refused(worker, *command)
    assert worker.info("server")["redis_version"]  # RQ reads the server version
    assert worker.config_get("append*")["appendonly"] in ("yes", "no")  # IUI_DURABILITY=local checks it


def test_rq_workers_run_jobs_as_the_worker_user(acl_server: AclServer, tmp_path: Path) -> None:
    from rq import Queue

    queue = Queue("iui", connection=acl_server.client("worker"))
    job = queue.enqueue("os.getcwd")
    done = subprocess.run([sys.executable, "-m", "rq.cli", "worker", "--burst", "--url", acl_server.url("worker"),
                           "iui"], cwd=tmp_path, capture_output=True, text=True, timeout=60, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    job.refresh()
    assert job.get_status() == "finished" and job.return_value() == str(tmp_path)
    info = subprocess.run([sys.executable, "-m", "rq.cli", "info", "--url", acl_server.url("worker"), "--only-workers"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert info.returncode == 0, info.stderr[-2000:]
