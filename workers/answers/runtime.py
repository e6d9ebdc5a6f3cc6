"""answer-ui@1 inside one partition owner: the answer tools and the view-state requests.

`PartitionConsumer` hands `PartitionAnswers.apply` every `kind=tool` entry named
`present_answer` / `final_answer` and every `kind=view` entry.  Each ends in one fenced script
that replies and XACKs: `answer.lua`, `view_put.lua`, `view_delete.lua`, or `reply.lua` for
reads, identical resends and conflicts.
"""

from __future__ import annotations

import time

from config.settings import Settings
from core import UI_VIEW_STATE_LIMITS

from ..observability.metrics import Metrics
from ..redisio.client import RedisClient
from ..redisio.keys import GROUP, Keys
from ..redisio.scripts import Scripts
from ..wire.entry import InputEntry, parse_body
from ..wire.names import ANSWER_TOOLS
from .scripts import AnswerLimits, AnswerScripts
from .tools import ANSWER_BODY_BYTES, AnswerHandler
from .views import VIEW_BODY_BYTES, ViewHandler

VIEW_KIND = "view"


def answer_limits(settings: Settings) -> AnswerLimits:
    """The bounds the answer scripts enforce, from the settings and the seed's fixed limits."""
    return AnswerLimits(log_max=settings.frame_log_max, log_max_bytes=settings.frame_log_max_bytes,
                        max_blocks=settings.max_answer_blocks_per_session,
                        max_turns=settings.max_answer_turns_per_session,
                        max_state_bytes=UI_VIEW_STATE_LIMITS["maxBlockStateBytes"],
                        max_session_bytes=UI_VIEW_STATE_LIMITS["maxSessionStateBytes"],
                        max_receipts=UI_VIEW_STATE_LIMITS["maxReceipts"],
                        max_receipt_bytes=UI_VIEW_STATE_LIMITS["maxReceiptBytes"],
                        reply_ttl_ms=settings.reply_ttl_s * 1000,
                        session_ttl_ms=settings.session_ttl_s * 1000)


def handles(entry: InputEntry) -> bool:
    """True for the entries `PartitionAnswers` owns."""
    return entry.kind == VIEW_KIND or (entry.kind == "tool" and entry.name in ANSWER_TOOLS)


class PartitionAnswers:
    """Answer tools and view-state requests of one partition under one lease (its fence)."""

    def __init__(self, *, redis: RedisClient, settings: Settings, keys: Keys, scripts: Scripts, metrics: Metrics,
                 partition: int, fence: str) -> None:
        self._keys = keys
        self._scripts = scripts
        self._metrics = metrics
        self._partition = partition
        self._fence = fence
        self._lease = keys.lease(partition)
        self._input = keys.input(partition)
        self._answer_scripts = AnswerScripts(redis=redis, group=GROUP, limits=answer_limits(settings))
        self._answers = AnswerHandler(redis=redis, settings=settings, keys=keys, partition=partition)
        self._views = ViewHandler(redis=redis, keys=keys, partition=partition)

    def apply(self, entry_id: str, entry: InputEntry, reply_key: str) -> str:
        """Decide and write one entry; returns the outcome label (raises `HostError` to reject)."""
        if entry.kind == VIEW_KIND:
            return self._view(entry_id, entry, reply_key)
        decision = self._answers.decide(entry, parse_body(entry.body, ANSWER_BODY_BYTES))
        if decision.plan is None:
            self._reply(entry_id, entry, reply_key, decision.reply)
            return "resent"
        self._answer_scripts.answer(self._lease, self._input, self._fence, entry_id, decision.plan)
        return "accepted"

    def _view(self, entry_id: str, entry: InputEntry, reply_key: str) -> str:
        decision = self._views.decide(entry, parse_body(entry.body, VIEW_BODY_BYTES))
        if decision.put is not None:
            self._answer_scripts.view_put(self._lease, self._input, self._fence, entry_id, decision.put)
            return "accepted"
        if decision.delete:
            k, p, s = self._keys, self._partition, entry.session
            self._answer_scripts.view_delete(self._lease, self._input, self._fence, entry_id, k.tombstone(p, s),
                                             reply_key, k.answer_keys(p, s), int(time.time() * 1000),
                                             decision.reply)
            return "accepted"
        self._reply(entry_id, entry, reply_key, decision.reply)
        if decision.rejected:
            self._metrics.rejections.labels(decision.rejected).inc()
            return "rejected"
        return "accepted"

    def _reply(self, entry_id: str, entry: InputEntry, reply_key: str, reply: str) -> None:
        k, p, s = self._keys, self._partition, entry.session
        self._scripts.reply(self._lease, self._input, self._fence, entry_id, reply_key, reply,
                            k.sliding_keys(p, s))
