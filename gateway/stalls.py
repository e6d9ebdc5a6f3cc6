"""A client that takes no bytes of its event stream: the stream ends, counted and told in one line.

sse-starlette ends a stream whose send waited `IUI_GATEWAY_SEND_TIMEOUT_S` by raising its
`SendTimeoutError`.  Starlette's exception middleware then finds the gateway's handler of `OSError`
(Redis unavailable) for it, cannot use it on a started response and raises a `RuntimeError`, which
uvicorn logged as `Exception in ASGI application` with three chained tracebacks: about a hundred
lines at ERROR for each client that stopped reading, which is the client's doing, not a fault of
the gateway.  `StreamResponse` counts the drop (`iui_gateway_stalled_streams_total`), logs one line
at WARNING and raises `ClientStalled`, which no handler takes; uvicorn closes the connection as
before (the protocol aborts it once its last bytes waited as long, `gateway.protocol`), and
`QuietStalls` drops uvicorn's record of it.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from sse_starlette.sse import SendTimeoutError
from starlette.types import Receive, Scope, Send

from .acyclic import AcyclicEventSourceResponse

log = logging.getLogger(__name__)
UVICORN_LOGGER = "uvicorn.error"


class ClientStalled(Exception):
    """An event stream ended because its client took no bytes for the send timeout."""


class StreamResponse(AcyclicEventSourceResponse):
    """sse-starlette's response (its parts ending without a cycle, `gateway.acyclic`); a client
    that takes no bytes for `send_timeout` is `stalled()` (counted) and logged in one line, and the
    stream ends with `ClientStalled`."""

    def __init__(self, *args: Any, stalled: Callable[[], None], **options: Any) -> None:
        super().__init__(*args, **options)
        self._stalled = stalled

    async def __call__(self, scope: Scope, receive: Receive, send: Send) -> None:
        try:
            await super().__call__(scope, receive, send)
        except SendTimeoutError:
            self._stalled()
            log.warning("gateway: an event stream's client took no bytes for %g s; the stream ended",
                        self.send_timeout)
            raise ClientStalled from None


class QuietStalls(logging.Filter):
    """Drops uvicorn's `Exception in ASGI application` record of a `ClientStalled` (logged already)."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not (record.exc_info and isinstance(record.exc_info[1], ClientStalled))


QUIET_STALLS = QuietStalls()  # one instance: `addFilter` adds it once however many servers a process runs


def quiet_stalls() -> None:
    """Install `QuietStalls` on uvicorn's error logger (after uvicorn configured its logging)."""
    logging.getLogger(UVICORN_LOGGER).addFilter(QUIET_STALLS)
