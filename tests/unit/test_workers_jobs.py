"""The RQ job of an operation: how long it may wait in its queue.

fakeredis stands in for RQ's Redis: this claims nothing of Redis, only what the job is enqueued with."""

from __future__ import annotations

import fakeredis
from rq.job import Job

from config.capabilities import load_catalog
from config.settings import Settings
from workers.actions.jobs import ENQUEUED, JobQueue


def _payload(op: str) -> dict[str, str]:
    return {"operationId": op, "capabilityId": "files.read"}


def test_a_queued_job_lives_no_longer_than_its_session() -> None:
    # An audit: jobs were enqueued with no queued TTL; with no RQ worker on their queue, the jobs of
    # sessions long expired stayed for ever.
    redis = fakeredis.FakeRedis()
    settings = Settings(session_ttl_s=600)
    queue = JobQueue(redis=redis, settings=settings, catalog=load_catalog(settings.capabilities))
    assert queue.enqueue(_payload("op-1")) == ENQUEUED
    assert Job.fetch("op-1", connection=redis).ttl == 600
    assert 0 < redis.ttl(b"rq:job:op-1") <= 600


def test_a_session_that_never_expires_leaves_its_job_unlimited() -> None:
    redis = fakeredis.FakeRedis()
    settings = Settings(session_ttl_s=0)
    queue = JobQueue(redis=redis, settings=settings, catalog=load_catalog(settings.capabilities))
    assert queue.enqueue(_payload("op-2")) == ENQUEUED
    assert Job.fetch("op-2", connection=redis).ttl is None
    assert redis.ttl(b"rq:job:op-2") == -1
