"""ops/redis/users.acl on a real redis-server: each user can do its job and nothing else.

The template is rendered by ops/redis/render-acl.sh (as compose does) with test passwords, and a
private redis-server loads it with --aclfile.
"""

from __future__ import annotations

import asyncio
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

import httpx
import pytest
import redis
import redis.asyncio as aioredis
from prometheus_client import CollectorRegistry

from config.settings import load_settings
from gateway.backend import SessionInfo
from gateway.identity import mint
from gateway.redis_backend import RedisBackend
from tests.gateway.sse import read_until
from workers.actions.rq_worker import WORKER_CLASS
from workers.client import Client
from workers.observability.metrics import Metrics
from workers.redisio.keys import Keys, partition_of
from workers.redisio.local_server import REDIS_BINARY, free_port
from workers.runtime.pool import WorkerPool
from workers.streams.tools import OPEN, PATCH

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]
PASSWORDS = {"admin": "admin-secret", "worker": "worker-secret", "producer": "producer-secret",
             "viewer": "viewer-secret", "gateway": "gateway-secret"}
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

    def async_client(self, user: str) -> aioredis.Redis:
        return aioredis.Redis.from_url(self.url(user))


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
                    ("SHUTDOWN",), ("MONITOR",), ("CLIENT", "KILL", "TYPE", "normal")]:
        _refused(worker, *command)
    assert worker.info("server")["redis_version"]  # RQ reads the server version
    # A pool ends its own dispatcher's blocking read when it leases a partition (workers/runtime/wake.py).
    assert worker.execute_command("CLIENT", "UNBLOCK", worker.client_id()) == 0
    assert worker.config_get("append*")["appendonly"] in ("yes", "no")  # IUI_DURABILITY=local checks it


def test_rq_workers_run_jobs_as_the_worker_user(acl_server: AclServer, tmp_path: Path) -> None:
    from rq import Queue

    queue = Queue("iui", connection=acl_server.client("worker"))
    job = queue.enqueue("os.getcwd")
    done = subprocess.run([sys.executable, "-m", "rq.cli", "worker", "--burst", "--url", acl_server.url("worker"),
                           "--worker-class", WORKER_CLASS, "iui"], cwd=tmp_path, capture_output=True, text=True,
                          timeout=60, check=False)
    assert done.returncode == 0, done.stdout[-2000:] + done.stderr[-2000:]
    job.refresh()
    assert job.get_status() == "finished" and job.return_value() == str(tmp_path)
    info = subprocess.run([sys.executable, "-m", "rq.cli", "info", "--url", acl_server.url("worker"), "--only-workers"],
                          capture_output=True, text=True, timeout=60, check=False)
    assert info.returncode == 0, info.stderr[-2000:]


# -- the gateway ---------------------------------------------------------------------------------

JWT_SECRET = "jwt-secret-of-the-acl-test-0123456789abcdef"


def _session_state(admin: redis.Redis, session: str) -> int:
    """A session's hashes and logs as the workers write them (for the ACL only the keys matter)."""
    p = partition_of(session, 4)
    admin.hset(KEYS.session(p, session), mapping={"owner": "alice demo", "epoch": "1", "ui:u1": "1"})
    admin.hset(KEYS.generations(p, session), "u1:1:checkpoint", '{"seq":1}')
    admin.hset(KEYS.operations(p, session), "r:op1", '{"operationId":"op1"}')
    admin.hset(KEYS.answers(p, session), "t:m1", "")
    admin.xadd(KEYS.frame_log(p, session), {"frame": '{"seq":1}'})
    admin.xadd(KEYS.receipt_log(p, session), {"receipt": "{}"})
    admin.xadd(KEYS.answer_log(p, session), {"event": "{}"})
    return p


def test_the_gateway_user_runs_every_redis_call_of_the_gateway(acl_server: AclServer, pool: WorkerPool) -> None:
    session = "s-gw-backend"
    admin = acl_server.client("admin")
    _session_state(admin, session)
    admin.script_flush()  # the first bounds() loads the script (SCRIPT LOAD), the second runs EVALSHA only

    async def scenario() -> None:
        backend = await RedisBackend.of(acl_server.async_client("gateway"), prefix="iui", partitions=1)
        try:
            assert backend.partitions == 4 and await backend.ping()  # HGETALL iui:meta, PING
            assert (await backend.session(session)) == SessionInfo("alice demo", 1)  # HMGET
            for _ in range(2):  # EVALSHA (SCRIPT LOAD after NOSCRIPT): XINFO STREAM and EXISTS of the three logs
                assert all(b.last is not None and not b.trimmed for b in (await backend.bounds(session)).values())
            # XRANGE of each log, in a MULTI with the owner record
            pages, life = await backend.read(session, dict.fromkeys(("frame", "receipt", "answer"), (0, 0)), 10)
            assert [len(entries) for entries in pages.values()] == [1, 1, 1]
            assert life == SessionInfo("alice demo", 1)
            snapshot = await backend.snapshot(session)  # HGETALL session, HMGET gen, HGETALL ops and answers
            assert snapshot.frames == ['{"seq":1}'] and snapshot.receipts == ['{"operationId":"op1"}']
            await backend.put_ticket("d" * 64, '{"session":"x"}', 60)  # SET EX
            assert await backend.take_ticket("d" * 64) == '{"session":"x"}'  # GETDEL
            assert await backend.take_ticket("d" * 64) is None
            subscription = await backend.subscription()  # PING on the pub/sub connection
            await subscription.subscribe(backend.channels(session))  # frames, receipts, answers
            await subscription.unsubscribe(backend.channels(session))
            await subscription.close()
            entry = {"session": "s-gw-call", "request": "r-1", "kind": "tool", "name": OPEN, "call": "c-1",
                     "body": json.dumps({"document": DOCUMENT}), "principal": "alice", "project": "demo"}
            reply = await backend.send(entry, 10)  # XADD, BLMOVE, LREM
            assert reply["ok"], reply
        finally:
            await backend.close()

    asyncio.run(scenario())
    gateway = acl_server.client("gateway")
    p = partition_of(session, 4)
    # `lag` reads XINFO GROUPS but treats any error as "no stream yet": checked here directly.
    assert [g[b"name"] for g in gateway.execute_command("XINFO", "GROUPS", KEYS.input(p))] == [b"workers"]
    assert gateway.execute_command("WAIT", 0, 10) == 0  # replica durability confirms a reply with WAIT
    assert admin.llen(KEYS.reply(partition_of("s-gw-call", 4), "s-gw-call", "r-1")) == 0  # LREM took its copy


def test_the_gateway_is_refused_everything_else(acl_server: AclServer, pool: WorkerPool) -> None:
    session = "s-gw-refused"
    admin = acl_server.client("admin")
    p = _session_state(admin, session)
    gateway = acl_server.client("gateway")
    for command in [
        ("HSET", KEYS.session(p, session), "owner", "mallory demo"), ("HDEL", KEYS.session(p, session), "owner"),
        ("HSET", KEYS.generations(p, session), "u1:2:checkpoint", "{}"),
        ("HSET", KEYS.operations(p, session), "a", "b"),
        ("HSET", KEYS.answers(p, session), "t:m2", ""), ("HSET", KEYS.meta, "partitions", "8"),
        ("XADD", KEYS.frame_log(p, session), "*", "frame", "{}"),  # a forged frame, receipt or answer
        ("XADD", KEYS.receipt_log(p, session), "*", "receipt", "{}"),
        ("XADD", KEYS.answer_log(p, session), "*", "event", "{}"),
        ("XTRIM", KEYS.frame_log(p, session), "MAXLEN", "0"), ("XDEL", KEYS.frame_log(p, session), "0-1"),
        ("DEL", KEYS.session(p, session)), ("DEL", KEYS.frame_log(p, session)), ("DEL", KEYS.input(p)),
        ("DEL", "iui:gw:ticket:" + "d" * 64), ("EXPIRE", KEYS.session(p, session), "1"),
        ("RPUSH", KEYS.reply(p, session, "r1"), "x"), ("XADD", KEYS.dead(p), "*", "a", "b"),
        ("XRANGE", KEYS.input(p), "-", "+"), ("XREADGROUP", "GROUP", "workers", "g", "STREAMS", KEYS.input(p), ">"),
        ("XACK", KEYS.input(p), "workers", "0-1"), ("XRANGE", KEYS.agent_inbox(p, session), "-", "+"),
        ("HGETALL", KEYS.lease(p)), ("GET", KEYS.epoch(p)), ("SET", KEYS.epoch(p), "99"),
        ("ZRANGE", KEYS.workers, 0, -1),
        ("GET", "iui:gw:ticket:" + "d" * 64), ("SET", "iui:gw:other", "1"),
        ("HGETALL", "other:meta"), ("HGETALL", "other:{p0}:s:x"), ("XRANGE", "other:{p0}:s:x:log", "-", "+"),
        ("XADD", "other:{p0}:in", "*", "a", "b"), ("GET", "rq:queues"),
        ("PUBLISH", KEYS.channel(p, session), "{}"), ("SPUBLISH", KEYS.channel(p, session), "{}"),
        ("FLUSHALL",), ("FLUSHDB",), ("CONFIG", "GET", "*"), ("CONFIG", "SET", "appendfsync", "no"), ("KEYS", "*"),
        ("SCAN", "0"), ("INFO",), ("ACL", "LIST"), ("EVAL", "return 1", "0"), ("SCRIPT", "FLUSH"),
        ("FUNCTION", "LIST"), ("SHUTDOWN",), ("MONITOR",), ("CLIENT", "KILL", "TYPE", "normal"),
    ]:
        _refused(gateway, *command)
    for subscribe in ("SUBSCRIBE", "SSUBSCRIBE", "PSUBSCRIBE"):
        _refused(gateway, subscribe, "rq:pubsub:w1")
    _refused(gateway, "PSUBSCRIBE", "iui:{p*}:frames:*")  # one session at a time, never every session


def test_a_script_the_gateway_loads_cannot_write(acl_server: AclServer) -> None:
    session = "s-gw-script"
    admin = acl_server.client("admin")
    p = _session_state(admin, session)
    gateway = acl_server.client("gateway")
    logs = [KEYS.frame_log(p, session), KEYS.receipt_log(p, session), KEYS.answer_log(p, session)]
    for body in ("redis.call('XADD', KEYS[1], '*', 'frame', '{}')", "redis.call('DEL', KEYS[1])",
                 "redis.call('XTRIM', KEYS[1], 'MAXLEN', 0)", "redis.call('PUBLISH', 'iui:{p0}:frames:x', 'x')"):
        sha = gateway.script_load(body)
        with pytest.raises(redis.exceptions.ResponseError, match="The user executing the script can't"):
            gateway.evalsha(sha, 3, *logs)
    assert [admin.xlen(key) for key in logs] == [1, 1, 1]
    _refused(gateway, "EVALSHA", gateway.script_load("return 1"), 1, KEYS.session(p, session))  # only the logs


def test_a_gateway_connected_as_the_gateway_user_serves_calls_streams_and_tickets(
        acl_server: AclServer, pool: WorkerPool, tmp_path: Path) -> None:
    (tmp_path / "redis-password").write_text(PASSWORDS["gateway"] + "\n")
    (tmp_path / "jwt-secret").write_text(JWT_SECRET + "\n")
    port = free_port()
    env = {**{k: v for k, v in os.environ.items() if not k.startswith("IUI_")},
           "IUI_REDIS_URL": f"redis://gateway@127.0.0.1:{acl_server.port}/0",
           "IUI_REDIS_PASSWORD_FILE": str(tmp_path / "redis-password"),
           "IUI_GATEWAY_JWT_SECRET_FILE": str(tmp_path / "jwt-secret"), "IUI_GATEWAY_PORT": str(port),
           "IUI_PARTITIONS": "4"}
    process = subprocess.Popen([sys.executable, "-m", "workers.cli", "gateway"], env=env,
                               stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
    try:
        with httpx.Client(base_url=f"http://127.0.0.1:{port}", timeout=15) as http:
            _ready(http, process)
            agent = {"authorization": "Bearer " + mint(secret=JWT_SECRET.encode(), principal="alice",
                                                       project="demo", role="agent", ttl_s=600)}
            viewer = {"authorization": "Bearer " + mint(secret=JWT_SECRET.encode(), principal="alice",
                                                        project="demo", role="viewer", ttl_s=600)}
            opened = http.post("/v1/sessions/s-gw-http/calls", headers=agent,
                               json={"tool": OPEN, "arguments": {"document": DOCUMENT}, "call": "open-1"})
            assert opened.status_code == 200, opened.text
            ticket = http.post("/v1/sessions/s-gw-http/tickets", headers=viewer)
            assert ticket.status_code == 200, ticket.text
            events = read_until(http, f"/v1/sessions/s-gw-http/events?ticket={ticket.json()['ticket']}", {}, 1)
            assert events[0].event == "frame" and events[0].json()["seq"] == 1
            assert http.get(f"/v1/sessions/s-gw-http/events?ticket={ticket.json()['ticket']}").status_code == 401
    finally:
        process.terminate()
        _, stderr = process.communicate(timeout=15)
    assert b"NOPERM" not in stderr and b"no permissions" not in stderr, stderr.decode()[-2000:]


def _ready(http: httpx.Client, process: subprocess.Popen[bytes]) -> None:
    deadline = time.monotonic() + 20
    while time.monotonic() < deadline:
        assert process.poll() is None, process.communicate()[1].decode()[-2000:]
        try:
            if http.get("/readyz", timeout=1).status_code == 200:
                return
        except httpx.TransportError:
            pass
        time.sleep(0.05)
    raise AssertionError("the gateway did not become ready")
