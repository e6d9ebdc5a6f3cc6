"""Client side of answer-ui@1: the answer tools and the answer-view-state@1 requests.

Example::

    answers = AnswerClient(client=Client(redis=r), principal="user-1", project="plant-7")
    answers.present_answer("s1", "msg-1", block)                 # a tool call of the agent
    answers.final_answer("s1", "msg-1", text, ["pressure-trend"])
    view = answers.get("s1", "msg-1", "pressure-trend")["result"]
    answers.put("s1", "msg-1", "pressure-trend", nodes, expected_revision=view["revision"],
                schema_digest=view["schema_digest"])

`principal` and `project` are entry fields, not body fields: only the trusted producer (the
browser gateway, holding producer credentials) sets them from its authenticated context.
"""

from __future__ import annotations

import uuid
from typing import Any

from ..redisio.client import RedisClient
from ..redisio.connection import add_entry, logged, stream_range
from ..wire.entry import loads
from .client import Client, ClientError


class AnswerClient:
    """Submits answer tool calls and view-state requests for one principal and project."""

    def __init__(self, *, client: Client, redis: RedisClient | None = None, principal: str = "",
                 project: str = "") -> None:
        self.client = client
        self._redis = redis if redis is not None else client._redis  # the client's own connection
        self.principal = principal
        self.project = project

    def tool(self, session: str, name: str, arguments: Any, *, call: str | None = None,
             timeout: float = 30.0) -> dict[str, Any]:
        """A `present_answer` / `final_answer` tool call, awaited."""
        return self.client.call(session, name, arguments, call=call, timeout=timeout)

    def present_answer(self, session: str, message_id: str, block: Any, **options: Any) -> dict[str, Any]:
        """Publish (or, in the same turn, replace) one block."""
        return self.tool(session, "present_answer", {"message_id": message_id, "block": block}, **options)

    def final_answer(self, session: str, message_id: str, answer: str, ui_block_ids: list[str],
                     **options: Any) -> dict[str, Any]:
        """Store the turn's final answer and close the turn."""
        return self.tool(session, "final_answer", {"message_id": message_id, "answer": answer,
                                                   "ui_block_ids": ui_block_ids}, **options)

    def view_entry(self, session: str, name: str, body: Any, *, request: str | None = None) -> dict[str, str]:
        """One `kind=view` request with the trusted principal and project."""
        request = request or uuid.uuid4().hex
        return self.client.entry(session, name, body, call=request, request=request, kind="view",
                                 principal=self.principal, project=self.project)

    def submit_view(self, session: str, name: str, body: Any, *, request: str | None = None) -> str:
        """XADD one `kind=view` request; returns its request id."""
        fields = self.view_entry(session, name, body, request=request)
        add_entry(self._redis, self.client.keys.input(self.client.partition(session)), fields)
        return fields["request"]

    def view(self, session: str, name: str, body: Any, *, timeout: float = 30.0) -> dict[str, Any]:
        """Submit one view request and await its reply (resent after a connection error)."""
        return self.client.send(self.view_entry(session, name, body), timeout=timeout)

    def get(self, session: str, message_id: str, block_id: str, **options: Any) -> dict[str, Any]:
        """The block's view state, revision and server-computed schema digest."""
        return self.view(session, "get", {"message_id": message_id, "block_id": block_id}, **options)

    def put(self, session: str, message_id: str, block_id: str, nodes: Any, *, expected_revision: int,
            schema_digest: str, request_id: str | None = None, timeout: float = 30.0) -> dict[str, Any]:
        """Replace the block's view state if its revision is still `expected_revision`."""
        body = {"message_id": message_id, "block_id": block_id, "schema_digest": schema_digest,
                "expected_revision": expected_revision, "request_id": request_id or f"put-{uuid.uuid4().hex}",
                "nodes": nodes}
        return self.view(session, "put", body, timeout=timeout)

    def delete_session(self, session: str, *, timeout: float = 30.0) -> dict[str, Any]:
        """Delete the session's answers and view states, leaving a tombstone."""
        return self.view(session, "delete_session", {}, timeout=timeout)

    def events(self, session: str) -> list[dict[str, Any]]:
        """The session's logged answer events (blocks and final answers), oldest first."""
        key = self.client.keys.answer_log(self.client.partition(session), session)
        return [loads(logged(fields, "event")) for _, fields in stream_range(self._redis.xrange(key))]


__all__ = ["AnswerClient", "ClientError"]
