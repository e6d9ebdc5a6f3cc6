"""`iui rq-worker`'s worker class: a stop never waits a minute for RQ's pub/sub thread."""

from __future__ import annotations

import signal
import subprocess
import sys
import threading
import time
from pathlib import Path

import pytest
import redis
from rq import Worker

from workers.actions.rq_worker import PUBSUB_WAIT_S, WORKER_CLASS, RQWorker
from workers.cli.actions import _worker_class

pytestmark = pytest.mark.integration
ROOT = Path(__file__).resolve().parents[2]


def stop_after_the_thread_read_its_unsubscribe(worker: Worker) -> float:
    """The order RQ's teardown loses on a busy machine: the pub/sub thread reads the UNSUBSCRIBE's
    answer before the stop, and waits for its next message.  Returns how long the stop then took
    (at most 10 s are waited)."""
    worker.subscribe()
    worker.pubsub.unsubscribe()
    deadline = time.monotonic() + 5
    while worker.pubsub.subscribed and time.monotonic() < deadline:
        time.sleep(0.01)  # the thread read the answer: it now waits for a subscription
    assert not worker.pubsub.subscribed
    time.sleep(0.2)
    started = time.monotonic()
    stopper = threading.Thread(target=worker.unsubscribe, daemon=True)  # what RQ's teardown calls
    stopper.start()
    stopper.join(10)
    return time.monotonic() - started


def test_a_stop_waits_at_most_a_second_for_the_pubsub_thread(redis_url: str) -> None:
    connection = redis.Redis.from_url(redis_url)
    took = stop_after_the_thread_read_its_unsubscribe(RQWorker(["iui"], connection=connection))
    assert took < PUBSUB_WAIT_S + 2, took  # RQ's own Worker: 60 s (its thread waits a minute per message)
    connection.close()


def test_iui_rq_worker_runs_the_class_unless_told_another() -> None:
    assert _worker_class([]) == ["--worker-class", WORKER_CLASS]
    assert _worker_class(["--burst"]) == ["--worker-class", WORKER_CLASS]
    for named in (["-w", "rq.Worker"], ["--worker-class", "rq.Worker"], ["--worker-class=rq.Worker"]):
        assert _worker_class(named) == []


def test_a_sigterm_ends_iui_rq_worker_promptly_each_time(redis_url: str, tmp_path: Path) -> None:
    # RQ's own worker took 60 s to exit after 2 of 10 SIGTERMs beside three busy processes.
    burners = [subprocess.Popen([sys.executable, "-c", "while True: pass"]) for _ in range(2)]
    try:
        for _ in range(4):
            worker = subprocess.Popen([sys.executable, "-m", "workers.cli", "rq-worker", "iui"], cwd=ROOT,
                                      env={"PATH": "/usr/bin:/bin", "IUI_REDIS_URL": redis_url,
                                           "PYTHONPATH": str(ROOT)},
                                      stdout=subprocess.PIPE, stderr=subprocess.STDOUT, text=True)
            time.sleep(2)  # started and subscribed
            assert worker.poll() is None, worker.communicate()[0][-2000:]
            started = time.monotonic()
            worker.send_signal(signal.SIGTERM)
            try:
                output = worker.communicate(timeout=15)[0]
            except subprocess.TimeoutExpired:
                worker.kill()
                raise AssertionError("iui rq-worker still running 15 s after its SIGTERM") from None
            assert time.monotonic() - started < 15 and worker.returncode == 0, output[-2000:]
    finally:
        for burner in burners:
            burner.kill()
            burner.wait()
