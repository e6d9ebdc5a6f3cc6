"""The client library: submit tool calls and requests, await their replies, follow a session.

`from workers.client import Client` is the public import path (see `workers.client.client`);
`AnswerClient` adds answer-ui@1 tools and view-state requests (`workers.client.answers`).
"""

from .answers import AnswerClient
from .client import Client, ClientError, FrameFeed, InvalidEntry, ReceiptFeed

__all__ = ["AnswerClient", "Client", "ClientError", "FrameFeed", "InvalidEntry", "ReceiptFeed"]
