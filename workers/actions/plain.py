"""The parsed plain documents a worker keeps for host actions, within a share of `IUI_CACHE_BYTES`.

A reserve naming a plain document (one a native `intelligent_ui` call stored) is checked against
that document parsed.  Parsing it again for every request would cost a 256 KB document tens of
milliseconds, so the parsed document is kept by the digest of its stored text.  The cache was
each partition's own and counted documents, 256 of them: ~1.3 MB each at the document limit,
~330 MB a partition and ~21 GB for a worker holding 64 partitions (an audit).  Now one cache
serves every partition of the process, its entries estimated as the generation cache estimates a
checkpoint (`workers.sessions.cache.estimate`), within `1/PLAIN_SHARE` of `IUI_CACHE_BYTES`.
"""

from __future__ import annotations

from typing import Any

from core import parse_document

from ..sessions.cache import MISSING, GenerationCache, estimate
from ..wire.entry import loads

PLAIN_SHARE = 8  # parsed plain documents of at most 1/8 of IUI_CACHE_BYTES (as the cache estimates)
DEFAULT_BYTES = 64 * 1024 * 1024 // PLAIN_SHARE  # a handler built without the process's settings


class PlainDocuments:
    """Parsed plain documents by the digest of their stored text, least recently used out first."""

    def __init__(self, *, max_bytes: int = DEFAULT_BYTES) -> None:
        self._cache: GenerationCache[Any] = GenerationCache(max_bytes=max_bytes)

    def parsed(self, digest: str, text: str) -> Any:
        """The document `text` (stored under `digest`) parsed, once while it stays cached."""
        document = self._cache.get(digest)
        if document is MISSING:
            document = parse_document(loads(text))
            self._cache.put(digest, document, estimate(text))
        return document

    def __len__(self) -> int:
        return len(self._cache)

    @property
    def bytes(self) -> int:
        """The estimated bytes held."""
        return self._cache.bytes
