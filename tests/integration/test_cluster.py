"""The runtime on a real local Redis Cluster: 3 masters, one replica of the first master.

The tool flows, a hand-over between two pools and the sharded frame feed run on the cluster;
the last test SIGKILLs the master that has a replica under load, lets the replica take over
and checks that no request is answered twice and no frame log repeats a seq (it reports what
was lost: replication is asynchronous).  The tests share one cluster, flushed between tests;
the kill test runs last.
"""

from __future__ import annotations

import subprocess
import sys
import tempfile
import threading
import time
from collections import Counter
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import orjson
import pytest
import redis
from prometheus_client import CollectorRegistry

from config.settings import SettingsError, load_settings
from tests.integration.actions_support import VALUES, RQWorkers, actions_document, configure, plain_ref
from tests.integration.cluster_support import REDIS_CLI, REDIS_SERVER, LocalCluster
from tests.integration.conftest import FAST, Runtime, cursor_args, example
from workers.actions.rq_worker import WORKER_CLASS
from workers.client import AnswerClient, Client, ClientError
from workers.observability.metrics import Metrics
from workers.redisio.connection import TRANSIENT_ERRORS, connect, node_of
from workers.redisio.scripts import script_source
from workers.runtime.pool import WorkerPool

pytestmark = [pytest.mark.integration, pytest.mark.slow]
OPEN, PATCH, COMPLETE = "intelligent_ui_open", "intelligent_ui_patch", "intelligent_ui_complete"
PARTITIONS = 8
PACE_S = 0.02


def update(i: int) -> dict[str, Any]:
    return {"type": "update", "nodeId": "summary-card", "props": {"title": f"Summary {i}", "gap": "sm"}}


class ClusterRuntime(Runtime):
    """`Runtime` on the cluster: a `redis+cluster://` URL, RQ on the suite's plain redis-server."""

    def __init__(self, cluster_url: str, rq_url: str) -> None:
        self.redis_url = cluster_url
        self.rq_url = rq_url
        self.redis = connect(cluster_url)
        self.settings = load_settings(redis_url=cluster_url, rq_redis_url=rq_url, **{**FAST, "partitions": PARTITIONS})
        self.metrics = Metrics(registry=CollectorRegistry())
        self.pools: list[tuple[WorkerPool, threading.Thread]] = []
        self._client: Client | None = None

    def configure(self, **overrides: Any) -> ClusterRuntime:
        self.settings = load_settings(redis_url=self.redis_url, rq_redis_url=self.rq_url,
                                      **{**FAST, "partitions": PARTITIONS, **overrides})
        return self

    def start_pool(self) -> WorkerPool:
        pool = WorkerPool(settings=self.settings, redis=connect(self.redis_url), metrics=self.metrics)
        thread = threading.Thread(target=pool.run, daemon=True)
        thread.start()
        self.pools.append((pool, thread))
        return pool


@pytest.fixture(scope="module")
def cluster() -> Iterator[LocalCluster]:
    if REDIS_SERVER is None or REDIS_CLI is None:
        pytest.skip("redis-server or redis-cli is not installed: no local Redis Cluster")
    with tempfile.TemporaryDirectory() as directory:
        local = LocalCluster(Path(directory))
        try:
            yield local.start()
        finally:
            local.stop()


@pytest.fixture()
def crt(cluster: LocalCluster, redis_url: str) -> Iterator[ClusterRuntime]:
    rt = ClusterRuntime(cluster.url, redis_url)
    rt.redis.flushall(target_nodes=rt.redis.PRIMARIES)
    yield rt
    rt.stop()
    rt.redis.close()


def open_session(rt: Runtime, session: str) -> dict[str, Any]:
    reply = rt.call(session, OPEN, {"document": example("stream-initial.json")}, call=f"open-{session}")
    assert reply["ok"], reply
    frame: dict[str, Any] = reply["result"]["frame"]
    return frame


def sessions_on_every_master(rt: ClusterRuntime, count: int) -> list[str]:
    """Sessions spread so that every master holds the partitions of some of them."""
    sessions = [f"cl-{n}" for n in range(count)]
    nodes = {node_of(rt.redis, rt.client.keys.input(rt.client.partition(s))).name for s in sessions}
    assert len(nodes) == 3, nodes
    return sessions


def test_a_cluster_url_selects_sharded_publishing_and_rq_stays_on_a_plain_redis(crt: ClusterRuntime) -> None:
    assert "redis.call('SPUBLISH', channel, frame)" in script_source("commit", sharded=True)
    assert "redis.call('SPUBLISH'" not in script_source("commit")
    with pytest.raises(SettingsError, match=r"IUI_RQ_REDIS_URL: .*RQ does not support Redis Cluster"):
        load_settings(redis_url=crt.redis_url)
    with pytest.raises(SettingsError, match=r"IUI_RQ_REDIS_URL: .*plain Redis"):
        load_settings(redis_url=crt.rq_url, rq_redis_url=crt.redis_url)


def test_open_patch_and_complete_run_on_every_master(crt: ClusterRuntime) -> None:
    crt.start(1)
    for session in sessions_on_every_master(crt, 6):
        frame = open_session(crt, session)
        for i in range(3):
            reply = crt.call(session, PATCH, {**cursor_args(frame), "mutation": update(i)}, call=f"{session}-p{i}")
            assert reply["ok"], reply
            frame = reply["result"]["frame"]
        reply = crt.call(session, COMPLETE, cursor_args(frame), call=f"{session}-done")
        assert reply["ok"], reply
        frames = [f for _, f in crt.client.frame_log(session)]
        assert [f["seq"] for f in frames] == [1, 2, 3, 4, 5]
        assert frames[-1]["type"] == "complete"
        assert crt.client.peek_reply(session, "nothing") is None


def test_a_stopped_pool_hands_its_partitions_to_the_other_without_loss(crt: ClusterRuntime) -> None:
    first = crt.start_pool()
    crt.start_pool()
    crt.wait_for_owners()
    sessions = sessions_on_every_master(crt, 6)
    frames = {s: open_session(crt, s) for s in sessions}
    requests: dict[str, list[str]] = {s: [] for s in sessions}
    for i in range(20):
        if i == 8:
            first.stop()  # hands its leases over mid-stream
        for s in sessions:
            args = {**cursor_args(frames[s]), "baseRevision": frames[s]["revision"] + i, "mutation": update(i)}
            requests[s].append(crt.client.submit(s, PATCH, args, call=f"{s}-p{i}"))
    for s in sessions:
        for request in requests[s]:
            assert crt.client.reply(s, request, timeout=20)["ok"]
            assert crt.client.peek_reply(s, request) is None
        assert [f["seq"] for _, f in crt.client.frame_log(s)] == list(range(1, 22))
    assert first.partitions == []


def test_the_frame_feed_follows_sharded_pub_sub(crt: ClusterRuntime) -> None:
    crt.start(1)
    for session in sessions_on_every_master(crt, 6)[:3]:
        frame = open_session(crt, session)
        with crt.client.follow(session) as feed:
            assert [s.checkpoint["seq"] for s in feed.catch_up()] == [1]
            for i in range(4):
                reply = crt.call(session, PATCH, {**cursor_args(frame), "mutation": update(i)}, call=f"{session}-{i}")
                frame = reply["result"]["frame"]
            seen = []
            deadline = time.monotonic() + 10
            while len(seen) < 4 and time.monotonic() < deadline:
                message = feed._pubsub.get_sharded_message(timeout=0.5)  # the channel itself, not the log
                if message is not None:
                    seen.append(orjson.loads(message["data"])["seq"])
                    assert feed.accept(orjson.loads(message["data"])) is not None
            assert seen == [2, 3, 4, 5]


def test_an_action_runs_as_an_rq_job_on_the_plain_redis_and_reports_to_the_cluster(
        crt: ClusterRuntime, tmp_path: Path) -> None:
    configure(crt, tmp_path).start(1)
    session = "cl-actions"
    assert crt.call(session, "intelligent_ui", {"document": actions_document()}, call="plain-1")["ok"]
    rq = RQWorkers(crt)
    environment = {**rq.environment(), "IUI_RQ_REDIS_URL": crt.rq_url}
    rq.processes.append(subprocess.Popen([sys.executable, "-m", "rq.cli", "worker", "--url", crt.rq_url, "--quiet",
                                          "--worker-class", WORKER_CLASS, "iui"], env=environment,
                                         start_new_session=True, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL))
    try:
        with crt.client.follow_receipts(session) as feed:  # SSUBSCRIBE: receipt.lua SPUBLISHes
            reply = crt.client.reserve(session, plain_ref("plain-1"), "noop", VALUES, timeout=10)
            assert reply["ok"], reply
            op = reply["result"]["receipt"]["operationId"]
            done = feed.wait_for(op, {"succeeded", "failed", "unknown"}, timeout=30)
        assert done["status"] == "succeeded", done
        assert [r["status"] for _, r in crt.client.receipt_log(session)] == ["queued", "running", "succeeded"]
        assert redis.Redis.from_url(crt.rq_url).keys("rq:*")  # RQ's keys are on the plain Redis
    finally:
        rq.stop()


def test_answer_events_are_published_on_the_sessions_shard(crt: ClusterRuntime) -> None:
    crt.start(1)
    session = "cl-answers"
    channel = crt.client.keys.answer_channel(crt.client.partition(session), session)
    pubsub = crt.redis.pubsub()
    pubsub.ssubscribe(channel)
    client = AnswerClient(client=crt.client, principal="user-1", project="project-1")
    block = example("answer-ui/final-answer.json")["published_blocks"][1]
    assert client.present_answer(session, "msg-1", block, call="call-1")["ok"]
    deadline, message = time.monotonic() + 5, None
    while message is None and time.monotonic() < deadline:
        message = pubsub.get_sharded_message(ignore_subscribe_messages=True, timeout=0.5)
    pubsub.close()
    assert message is not None and orjson.loads(message["data"])["block"] == block


# -- a master fail-over under load ---------------------------------------------------------------


class Producer(threading.Thread):
    """Patches one session in turn (each call waits for its reply), through a master fail-over.

    A submit or a reply wait that meets the outage is retried (same call id, so a request
    entered twice is answered as a resend, never applied twice); a reply that is a conflict
    means an acknowledged patch was lost with the old master: the cursor is read again.
    """

    def __init__(self, rt: ClusterRuntime, session: str, frame: dict[str, Any], stop: threading.Event) -> None:
        super().__init__(daemon=True)
        self.rt, self.session, self.frame, self.stop_event = rt, session, frame, stop
        self.received: Counter[str] = Counter()  # request -> replies received
        self.replies: dict[str, dict[str, Any]] = {}  # request -> the reply received
        self.accepted: dict[str, dict[str, Any]] = {}  # request -> the frame its reply carried
        self.unanswered = 0  # requests given up after REPLY_WAIT_S (entered again under a new request id)
        self.conflicts: Counter[str] = Counter()  # error code -> rejected replies

    def run(self) -> None:
        i = 0
        while not self.stop_event.is_set():
            args = {**cursor_args(self.frame), "mutation": update(i)}
            call = f"p{i}-r{self.frame['revision']}"
            request = self._retry(lambda a=args, c=call: self.rt.client.submit(self.session, PATCH, a, call=c))
            reply = self._wait(request)
            if reply is None:
                self.unanswered += 1
                continue
            self.received[request] += 1
            self.replies[request] = reply
            if reply["ok"]:
                self.frame = reply["result"]["frame"]
                self.accepted[request] = self.frame
                i += 1
                time.sleep(PACE_S)  # stays below the 256 frames of a generation
            else:
                self.conflicts[reply["error"]["code"]] += 1
                self.frame = self._retry(lambda: self.rt.client.frame_log(self.session))[-1][1]

    def _retry(self, action: Any) -> Any:
        while True:
            try:
                return action()
            except TRANSIENT_ERRORS:
                time.sleep(0.1)

    def _wait(self, request: str, limit: float = 8.0) -> dict[str, Any] | None:
        deadline = time.monotonic() + limit
        while time.monotonic() < deadline:
            try:
                return self.rt.client.reply(self.session, request, timeout=1)
            except ClientError:
                continue
            except TRANSIENT_ERRORS:
                time.sleep(0.1)
        return None


def test_a_killed_master_fails_over_without_duplicated_replies_or_frames(crt: ClusterRuntime,
                                                                        cluster: LocalCluster) -> None:
    victim = cluster.masters[0]
    replica = cluster.replicas[0]
    assert cluster.master_of(replica) is victim
    crt.start(1)
    sessions = sessions_on_every_master(crt, 9)
    on_victim = [s for s in sessions
                 if node_of(crt.redis, crt.client.keys.input(crt.client.partition(s))).port == victim.port]
    assert on_victim
    stop = threading.Event()
    producers = [Producer(crt, s, open_session(crt, s), stop) for s in sessions]
    for producer in producers:
        producer.start()
    time.sleep(1.0)
    killed_at = time.monotonic()
    victim.kill()
    cluster.wait_promoted(replica)
    promoted_after = time.monotonic() - killed_at
    time.sleep(2.0)  # load on the new topology
    before = {p.session: len(p.accepted) for p in producers}
    time.sleep(1.5)
    stop.set()
    for producer in producers:
        producer.join(timeout=15)
    assert all(len(p.accepted) > before[p.session] for p in producers), "a session made no progress after fail-over"

    lost_acknowledged = left_behind = 0
    for producer in producers:
        assert all(count == 1 for count in producer.received.values())  # no request was answered twice
        frames = [f for _, f in crt.client.frame_log(producer.session)]
        seqs = [f["seq"] for f in frames]
        assert len(seqs) == len(set(seqs)) and seqs == sorted(seqs), producer.session  # no seq repeated
        by_seq = {f["seq"]: f for f in frames}
        lost_acknowledged += sum(1 for frame in producer.accepted.values() if by_seq.get(frame["seq"]) != frame)
        for request, reply in producer.replies.items():
            # A copy may stay behind (until its TTL) when the outage took the XADD's answer (the
            # producer entered the request again: answered from the ledger) or the LREM of the copy
            # a reader held (not replicated before the kill). It must be the very same answer: a
            # second application would carry another frame.
            key = crt.client.keys.reply(crt.client.partition(producer.session), producer.session, request)
            for copy in crt.redis.lrange(key, 0, -1):
                assert orjson.loads(copy) == reply, (producer.session, request)
                left_behind += 1
    accepted = sum(len(p.accepted) for p in producers)
    print(f"\nfail-over: replica promoted {promoted_after:.2f} s after SIGKILL; {accepted} patches acknowledged, "
          f"{lost_acknowledged} of them lost, {left_behind} identical copies of a reply left in reply lists, "
          f"{sum(p.unanswered for p in producers)} requests unanswered within 8 s, "
          f"rejections {sum((p.conflicts for p in producers), Counter())}; sessions on the killed master: "
          f"{len(on_victim)}")
